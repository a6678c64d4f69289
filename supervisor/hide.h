/* SPDX-License-Identifier: MIT */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#define SUP_HIDE_MAX_DEPTH 64        /* directory levels walked, and pattern components */
#define SUP_HIDE_MAX_VISIT 200000u   /* directory entries looked at */
#define SUP_HIDE_MAX_MATCHES 4096u   /* paths hidden */

/*
 * True when the workspace-relative path matches pattern: components are compared one by one
 * with fnmatch(3) (flags 0, so '*' also matches a leading dot), and a component "**" matches
 * any number of components, none included.
 */
bool sup_hide_match(const char *pattern, const char *path);

/*
 * Walks the workspace (workspace_fd, borrowed) and collects the relative paths of everything
 * that matches one of the n patterns: a matching directory is collected whole and not entered;
 * symlinks are neither followed nor collected; other filesystems below the workspace are not
 * entered. On success stores a NULL-terminated list (free with sup_hide_free) and its length.
 * Returns 0, -E2BIG when the workspace or the match count is over the bounds above, -ELOOP
 * when it is deeper than SUP_HIDE_MAX_DEPTH, or another -errno. Outputs untouched on failure.
 */
int sup_hide_expand(int workspace_fd, char *const *patterns, size_t n, char ***out,
		    size_t *out_n);

/* Frees a list from sup_hide_expand. NULL-safe. */
void sup_hide_free(char **list);
