/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cleanup.h"
#include "io-util.h"
#include "supervisor.h"

/* pol_loader for `extends:` files: the same bounded read of a regular file. */
int sup_policy_loader(void *ctx, const char *abs_path, char **out_buf, size_t *out_len)
{
	(void)ctx;
	_cleanup_close_ int fd = open(abs_path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
	if (fd < 0)
		return -errno;
	return io_read_alloc(fd, POL_MAX_INPUT_BYTES, out_buf, out_len);
}

int sup_load_policy(const char *path, struct pol_policy **out, char **out_text,
		    size_t *out_len, struct pol_diag *diag)
{
	memset(diag, 0, sizeof(*diag));
	_cleanup_free_ char *text = NULL;
	_cleanup_free_ char *abs = NULL;
	size_t len = 0;
	if (!path || strcmp(path, "default") == 0) {
		const char *def = pol_default_yaml(&len);
		text = malloc(len + 1);
		if (!text)
			return -ENOMEM;
		memcpy(text, def, len);
		text[len] = '\0';
	} else {
		_cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
		if (fd < 0)
			return -errno;
		int r = io_read_alloc(fd, POL_MAX_INPUT_BYTES, &text, &len);
		if (r < 0)
			return r;
		/* Relative extends and bind sources resolve against the file's real directory. */
		abs = realpath(path, NULL);
		if (!abs)
			return -errno;
	}
	int r = abs ? pol_parse_file(abs, text, len, sup_policy_loader, NULL, out, diag)
		    : pol_parse("<default>", text, len, out, diag);
	if (r < 0)
		return r;
	*out_text = TAKE_PTR(text);
	*out_len = len;
	return 0;
}

int sup_check_host_paths(const struct pol_policy *pol, char *why, size_t why_len)
{
	for (size_t i = 0; i < pol->n_binds; i++) {
		const struct pol_bind *b = &pol->binds[i];
		struct stat st;
		if (lstat(b->src, &st) == 0 || b->optional)
			continue;
		int r = -errno;
		(void)snprintf(why, why_len, "filesystem.binds[%zu].src '%s': %s (mark it optional: "
			       "true if it may be missing)", i, b->src, strerror(-r));
		return r;
	}
	return 0;
}
