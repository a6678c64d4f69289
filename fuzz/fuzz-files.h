/* SPDX-License-Identifier: MIT */
/*
 * Shared by the policy and task fuzz targets: an input is split at SPLIT into pieces; piece 0
 * is the file under test and piece N (N >= 1) is served as /f/inN.yaml by an in-memory
 * loader, beside a target's own fixed files. Header-only, for fuzz targets only.
 */
#pragma once

#include <errno.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define FUZZ_SPLIT "\n#%file\n"
#define FUZZ_MAX_PIECES 8

struct fuzz_piece {
	const uint8_t *p;
	size_t len;
};

struct fuzz_pieces {
	struct fuzz_piece v[FUZZ_MAX_PIECES];
	size_t n;
};

struct fuzz_file {
	const char *path;
	const char *text;
};

static inline void fuzz_split_input(const uint8_t *data, size_t size, struct fuzz_pieces *out)
{
	size_t k = strlen(FUZZ_SPLIT), start = 0;

	out->n = 0;
	for (size_t i = 0; i + k <= size && out->n + 1 < FUZZ_MAX_PIECES; i++) {
		if (memcmp(data + i, FUZZ_SPLIT, k))
			continue;
		out->v[out->n++] = (struct fuzz_piece){ data + start, i - start };
		start = i + k;
		i = start - 1;
	}
	out->v[out->n++] = (struct fuzz_piece){ data + start, size - start };
}

static inline int fuzz_serve(const void *src, size_t len, char **out_buf, size_t *out_len)
{
	char *b = malloc(len ? len : 1);
	if (!b)
		return -ENOMEM;
	if (len)
		memcpy(b, src, len);
	*out_buf = b;
	*out_len = len;
	return 0;
}

/*
 * A pol_loader body: abs_path must be absolute (the parsers promise it; a violation aborts);
 * serves the fixed files, then /f/inN.yaml from the pieces, else -ENOENT.
 */
static inline int fuzz_files_load(const struct fuzz_file *fixed, size_t n_fixed,
				  const struct fuzz_pieces *pcs, const char *abs_path,
				  char **out_buf, size_t *out_len)
{
	unsigned n;
	int end = 0;

	if (!abs_path || abs_path[0] != '/' || strlen(abs_path) >= PATH_MAX)
		abort();
	for (size_t i = 0; i < n_fixed; i++)
		if (!strcmp(abs_path, fixed[i].path))
			return fuzz_serve(fixed[i].text, strlen(fixed[i].text), out_buf, out_len);
	if (sscanf(abs_path, "/f/in%u.yaml%n", &n, &end) == 1 && abs_path[end] == '\0' && n >= 1 &&
	    n < pcs->n)
		return fuzz_serve(pcs->v[n].p, pcs->v[n].len, out_buf, out_len);
	return -ENOENT;
}
