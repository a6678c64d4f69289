/* SPDX-License-Identifier: MIT */
/*
 * filesystem.hide: expanding the policy's workspace patterns into the paths that exist at
 * start. The walk is fd-relative, never follows a symlink, stays on the workspace's own
 * filesystem, and is bounded; a workspace too large to expand refuses the run rather than
 * leaving a secret unhidden.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cleanup.h"
#include "hide.h"

/* Matches path components [pi..] of pat against [si..] of path; "**" spans 0..n components. */
static bool match_from(char *const *pat, size_t np, char *const *path, size_t ns)
{
	if (np == 0)
		return ns == 0;
	if (strcmp(pat[0], "**") == 0) {
		for (size_t skip = 0; skip <= ns; skip++)
			if (match_from(pat + 1, np - 1, path + skip, ns - skip))
				return true;
		return false;
	}
	if (ns == 0)
		return false;
	if (fnmatch(pat[0], path[0], 0) != 0)
		return false;
	return match_from(pat + 1, np - 1, path + 1, ns - 1);
}

/* Splits s (modified in place) at '/' into at most max components. Returns the count or -1. */
static int split(char *s, char **out, size_t max)
{
	size_t n = 0;
	for (char *save = NULL, *t = strtok_r(s, "/", &save); t; t = strtok_r(NULL, "/", &save)) {
		if (n == max)
			return -1;
		out[n++] = t;
	}
	return (int)n;
}

bool sup_hide_match(const char *pattern, const char *path)
{
	char pbuf[PATH_MAX], sbuf[PATH_MAX];
	char *pc[SUP_HIDE_MAX_DEPTH + 1], *sc[SUP_HIDE_MAX_DEPTH + 1];
	size_t pl = strlen(pattern), sl = strlen(path);
	if (pl >= sizeof(pbuf) || sl >= sizeof(sbuf))
		return false;
	memcpy(pbuf, pattern, pl + 1);
	memcpy(sbuf, path, sl + 1);
	int np = split(pbuf, pc, SUP_HIDE_MAX_DEPTH + 1);
	int ns = split(sbuf, sc, SUP_HIDE_MAX_DEPTH + 1);
	if (np <= 0 || ns <= 0)
		return false;
	return match_from(pc, (size_t)np, sc, (size_t)ns);
}

struct walk {
	char *const *patterns;
	size_t n_patterns;
	char **found;
	size_t n_found;
	size_t visited;
	dev_t dev;
};

static bool matches_any(const struct walk *w, const char *rel)
{
	for (size_t i = 0; i < w->n_patterns; i++)
		if (sup_hide_match(w->patterns[i], rel))
			return true;
	return false;
}

static int add_found(struct walk *w, const char *rel)
{
	if (w->n_found >= SUP_HIDE_MAX_MATCHES)
		return -E2BIG;
	char *copy = strdup(rel);
	if (!copy)
		return -ENOMEM;
	char **grown = reallocarray(w->found, w->n_found + 2, sizeof(char *));
	if (!grown) {
		free(copy);
		return -ENOMEM;
	}
	grown[w->n_found++] = copy;
	grown[w->n_found] = NULL;
	w->found = grown;
	return 0;
}

/* Walks the directory dfd (owned by the caller) whose workspace-relative path is rel. */
static int walk_dir(struct walk *w, int dfd, const char *rel, unsigned depth)
{
	if (depth > SUP_HIDE_MAX_DEPTH)
		return -ELOOP;
	int dup = fcntl(dfd, F_DUPFD_CLOEXEC, 3);
	if (dup < 0)
		return -errno;
	DIR *d = fdopendir(dup);
	if (!d) {
		int r = -errno;
		(void)close(dup);
		return r;
	}
	int r = 0;
	struct dirent *de;
	while (r >= 0 && (de = readdir(d))) {
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		if (++w->visited > SUP_HIDE_MAX_VISIT) {
			r = -E2BIG;
			break;
		}
		char child[PATH_MAX];
		int len = *rel ? snprintf(child, sizeof(child), "%s/%s", rel, de->d_name)
			       : snprintf(child, sizeof(child), "%s", de->d_name);
		if (len < 0 || (size_t)len >= sizeof(child)) {
			r = -ENAMETOOLONG;
			break;
		}
		struct stat st;
		if (fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0) {
			r = errno == ENOENT ? 0 : -errno; /* gone meanwhile: nothing to hide */
			continue;
		}
		if (S_ISLNK(st.st_mode))
			continue; /* never followed; what it points to is matched on its own */
		if (matches_any(w, child)) {
			r = add_found(w, child);
			continue; /* a hidden directory is hidden whole: no need to look inside */
		}
		if (!S_ISDIR(st.st_mode) || st.st_dev != w->dev)
			continue;
		int sub = openat(dirfd(d), de->d_name,
				 O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (sub < 0) {
			r = errno == ENOENT ? 0 : -errno;
			continue;
		}
		r = walk_dir(w, sub, child, depth + 1);
		(void)close(sub);
	}
	(void)closedir(d);
	return r;
}

int sup_hide_expand(int workspace_fd, char *const *patterns, size_t n, char ***out,
		    size_t *out_n)
{
	if (n == 0) {
		*out = NULL;
		*out_n = 0;
		return 0;
	}
	_cleanup_close_ int root = openat(workspace_fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (root < 0)
		return -errno;
	struct stat st;
	if (fstat(root, &st) < 0)
		return -errno;
	struct walk w = { .patterns = patterns, .n_patterns = n, .dev = st.st_dev };
	int r = walk_dir(&w, root, "", 0);
	if (r < 0) {
		sup_hide_free(w.found);
		return r;
	}
	*out = w.found;
	*out_n = w.n_found;
	return 0;
}

void sup_hide_free(char **list)
{
	for (size_t i = 0; list && list[i]; i++)
		free(list[i]);
	free(list);
}
