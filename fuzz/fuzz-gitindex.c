/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer target for the reader of a sandbox-written git index (.git/index), which the
 * supervisor runs before it copies the index to the host.
 *
 * Target functions: pol_gitindex_hidden(), pol_gitindex_newly_hidden() and
 * pol_gitindex_paths_free() (supervisor/gitindex.c).
 *
 * Input: the bytes of an index file. Inputs over POL_GITINDEX_MAX_BYTES are checked to be
 * refused with -E2BIG before anything is read, then kept out of the corpus. No time, no
 * randomness, no global state. The seed corpus is tests/gitindex/'s fixtures, written by git.
 *
 * Beyond "no crash, no leak, no UB", it checks the reader's contract on every input:
 *  - it returns 0, -EBADMSG, -EPROTO or -E2BIG; -ENOMEM cannot happen here, and -E2BIG only
 *    from an input large enough to name more than POL_GITINDEX_MAX_HIDDEN_BYTES of paths;
 *  - on failure both outputs are untouched;
 *  - on success the list is NULL exactly when empty, holds no more paths than the header has
 *    entries, and each path is valid by a check written here independently of the reader's
 *    (non-empty, relative, at most POL_GITINDEX_MAX_PATH bytes, no empty, ".", ".." or ".git"
 *    component, a trailing '/' only as the last byte), strictly increasing by strcmp();
 *  - the answer is the same on a second call, and does not depend on the last 20 bytes (the
 *    checksum, which is not verified);
 *  - pol_gitindex_newly_hidden() finds nothing new in a list against itself, or in an empty
 *    list against it, and finds the first path when the old list is empty.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz-util.h"
#include "gitindex.h"

#define SENTINEL_PATHS ((char **)(uintptr_t)0x5a5a5a5a)
#define SENTINEL_N ((size_t)0x5a5a5a5a)
/* The least input for one entry: 62 fixed bytes, a v4 strip byte and a NUL (v4). */
#define MIN_ENTRY_BYTES 64u
#define HEADER_AND_SUM 32u

static bool component_ok(const char *c, size_t n)
{
	if (n == 0 || (n == 1 && c[0] == '.') || (n == 2 && c[0] == '.' && c[1] == '.'))
		return false;
	if (n == 4 && c[0] == '.' && strchr("gG", c[1]) && strchr("iI", c[2]) &&
	    strchr("tT", c[3]))
		return false;
	return true;
}

static void check_path(const char *p)
{
	size_t len = strlen(p);
	CHECK(len > 0 && len <= POL_GITINDEX_MAX_PATH);
	if (p[len - 1] == '/')
		len--; /* a sparse directory entry */
	CHECK(len > 0);
	size_t start = 0;
	for (size_t i = 0; i <= len; i++) {
		if (i == len || p[i] == '/') {
			CHECK(component_ok(p + start, i - start));
			start = i + 1;
		}
	}
}

/* Parses data and checks what the contract says of any one result; returns the error. */
static int parse(const uint8_t *data, size_t size, char ***out_paths, size_t *out_n)
{
	char **paths = SENTINEL_PATHS;
	size_t n = SENTINEL_N;
	int r = pol_gitindex_hidden(data, size, &paths, &n);
	CHECK(r == 0 || r == -EBADMSG || r == -EPROTO || r == -E2BIG);
	if (r == -E2BIG)
		CHECK(size >= HEADER_AND_SUM +
		      (POL_GITINDEX_MAX_HIDDEN_BYTES / (POL_GITINDEX_MAX_PATH + 1)) * MIN_ENTRY_BYTES);
	if (r < 0) {
		CHECK(paths == SENTINEL_PATHS && n == SENTINEL_N);
		return r;
	}
	CHECK((paths == NULL) == (n == 0));
	CHECK(size >= HEADER_AND_SUM && n <= (size - HEADER_AND_SUM) / MIN_ENTRY_BYTES);
	uint32_t n_entries = (uint32_t)data[8] << 24 | (uint32_t)data[9] << 16 |
			     (uint32_t)data[10] << 8 | data[11];
	CHECK(n <= n_entries);
	for (size_t i = 0; i < n; i++) {
		CHECK(paths[i]);
		check_path(paths[i]);
		if (i > 0)
			CHECK(strcmp(paths[i - 1], paths[i]) < 0);
	}
	*out_paths = paths;
	*out_n = n;
	return 0;
}

/* a and b are the same list. */
static bool same(char **a, size_t n_a, char **b, size_t n_b)
{
	if (n_a != n_b)
		return false;
	for (size_t i = 0; i < n_a; i++)
		if (strcmp(a[i], b[i]) != 0)
			return false;
	return true;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size > POL_GITINDEX_MAX_BYTES) {
		char **paths = SENTINEL_PATHS;
		size_t n = SENTINEL_N;
		CHECK(pol_gitindex_hidden(data, size, &paths, &n) == -E2BIG);
		CHECK(paths == SENTINEL_PATHS && n == SENTINEL_N);
		return -1; /* keep it out of the corpus */
	}

	char **paths = NULL, **again = NULL;
	size_t n = 0, n_again = 0;
	int r = parse(data, size, &paths, &n);
	CHECK(parse(data, size, &again, &n_again) == r);
	if (r == 0) {
		CHECK(same(paths, n, again, n_again));
		again = pol_gitindex_paths_free(again, n_again);
	}

	/* The checksum is not read: another one changes nothing. */
	if (size >= 20) {
		uint8_t *copy = malloc(size);
		CHECK(copy);
		memcpy(copy, data, size);
		for (size_t i = size - 20; i < size; i++)
			copy[i] = (uint8_t)~copy[i];
		n_again = 0;
		CHECK(parse(copy, size, &again, &n_again) == r);
		if (r == 0) {
			CHECK(same(paths, n, again, n_again));
			again = pol_gitindex_paths_free(again, n_again);
		}
		free(copy);
	}
	if (r < 0)
		return 0;

	const char *first = NULL;
	CHECK(pol_gitindex_newly_hidden(paths, n, paths, n, &first) == 0 && !first);
	CHECK(pol_gitindex_newly_hidden(paths, n, NULL, 0, &first) == 0 && !first);
	CHECK(pol_gitindex_newly_hidden(NULL, 0, paths, n, &first) == (n > 0));
	CHECK(n == 0 || first == paths[0]);
	if (n > 1) {
		/* Without its first path, the list hides nothing new; with it, the old one does. */
		CHECK(pol_gitindex_newly_hidden(paths, n, paths + 1, n - 1, NULL) == 0);
		first = NULL;
		CHECK(pol_gitindex_newly_hidden(paths + 1, n - 1, paths, n, &first) == 1);
		CHECK(first == paths[0]);
	}
	pol_gitindex_paths_free(paths, n);
	return 0;
}
