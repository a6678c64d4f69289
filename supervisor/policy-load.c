/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cleanup.h"
#include "config.h"
#include "io-util.h"
#include "log.h"
#include "supervisor.h"

/* pol_loader for `extends:` files: the same bounded read of a regular file. */
int sup_policy_loader(void *ctx, const char *abs_path, char **out_buf, size_t *out_len)
{
	(void)ctx;
	_cleanup_close_ int fd = open(abs_path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	if (fd < 0)
		return -errno;
	return io_read_alloc(fd, POL_MAX_INPUT_BYTES, out_buf, out_len);
}

/* True when s ends with suffix. */
static bool ends_with(const char *s, const char *suffix)
{
	size_t n = strlen(s), k = strlen(suffix);
	return n >= k && strcmp(s + n - k, suffix) == 0;
}

bool sup_policy_is_name(const char *arg)
{
	return strchr(arg, '/') == NULL && !ends_with(arg, ".yaml") && !ends_with(arg, ".yml") &&
	       strcmp(arg, "default") != 0;
}

/* A policy name: 1..SUP_POLICY_NAME_MAX of A-Z a-z 0-9 . _ -, not starting with . or -. */
static bool name_ok(const char *name)
{
	size_t n = strlen(name);
	if (n == 0 || n > SUP_POLICY_NAME_MAX || name[0] == '.' || name[0] == '-')
		return false;
	return strspn(name, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789._-") ==
	       n;
}

/*
 * The installed profiles, or, for the warden built in a build tree (the folder of
 * /proc/self/exe is the build folder, as for the worker), the copy of the source tree's that
 * the build keeps in policy/profiles.
 */
static void profiles_dir(char *out, size_t len)
{
	char exe[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (n > 0) {
		exe[n] = '\0';
		char *slash = strrchr(exe, '/');
		if (slash) {
			*slash = '\0';
			if (strcmp(exe, WARDEN_BUILD_DIR) == 0) {
				(void)snprintf(out, len, "%s/policy/profiles", WARDEN_BUILD_DIR);
				return;
			}
		}
	}
	(void)snprintf(out, len, "%s", WARDEN_PROFILES_DIR);
}

int sup_policy_dirs(char dirs[SUP_POLICY_N_DIRS][PATH_MAX], size_t *out_n)
{
	size_t n = 0;
	/* XDG: $XDG_CONFIG_HOME when it is absolute (the specification ignores any other), else
	 * $HOME/.config; neither set, no user folder. */
	const char *xdg = secure_getenv("XDG_CONFIG_HOME");
	const char *home = secure_getenv("HOME");
	int w = -1;
	if (xdg && xdg[0] == '/')
		w = snprintf(dirs[n], PATH_MAX, "%s/warden/policies", xdg);
	else if (home && home[0] == '/')
		w = snprintf(dirs[n], PATH_MAX, "%s/.config/warden/policies", home);
	if (w >= PATH_MAX)
		return -ENAMETOOLONG;
	if (w > 0)
		n++;
	(void)snprintf(dirs[n++], PATH_MAX, "%s", SUP_POLICY_ETC_DIR);
	profiles_dir(dirs[n++], PATH_MAX);
	*out_n = n;
	return 0;
}

int sup_policy_resolve(const char *arg, char *out, size_t out_len, char *why, size_t why_len)
{
	const char *from = "--policy";
	if (!arg) {
		arg = secure_getenv("WARDEN_POLICY");
		from = "WARDEN_POLICY";
		if (arg && !arg[0])
			arg = NULL; /* WARDEN_POLICY= is no choice at all */
	}
	if (!arg)
		arg = "default";
	if (!sup_policy_is_name(arg)) {
		/* "default" (the embedded one), or a file named as a path by the user. */
		if ((size_t)snprintf(out, out_len, "%s", arg) >= out_len) {
			(void)snprintf(why, why_len, "%s '%.64s...': the path is too long", from, arg);
			return -ENAMETOOLONG;
		}
		return 0;
	}
	if (!name_ok(arg)) {
		(void)snprintf(why, why_len, "%s '%.80s' is not a policy name (expected 1 to %d of "
			       "A-Z a-z 0-9 . _ -, not starting with . or -; or a file: a path with a "
			       "/ or a name ending in .yaml)", from, arg, SUP_POLICY_NAME_MAX);
		return -ENOENT;
	}
	char dirs[SUP_POLICY_N_DIRS][PATH_MAX];
	size_t n = 0;
	int r = sup_policy_dirs(dirs, &n);
	if (r < 0) {
		(void)snprintf(why, why_len, "%s '%s': $XDG_CONFIG_HOME or $HOME is too long", from,
			       arg);
		return r;
	}
	char searched[3 * PATH_MAX] = "";
	size_t used = 0;
	for (size_t i = 0; i < n; i++) {
		char path[PATH_MAX + 80];
		(void)snprintf(path, sizeof(path), "%s/%s.yaml", dirs[i], arg);
		struct stat st;
		/* The first folder that has the name decides; an entry that cannot be checked is
		 * an error, never a reason to fall through to the next folder's policy. */
		if (stat(path, &st) == 0) {
			if (!S_ISREG(st.st_mode)) {
				(void)snprintf(why, why_len, "%s '%s': '%s' is not a regular file", from,
					       arg, path);
				return S_ISDIR(st.st_mode) ? -EISDIR : -ENXIO;
			}
			if ((size_t)snprintf(out, out_len, "%s", path) >= out_len) {
				(void)snprintf(why, why_len, "%s '%s': '%s' is too long", from, arg,
					       path);
				return -ENAMETOOLONG;
			}
			return 0;
		}
		if (errno != ENOENT && errno != ENOTDIR) {
			r = -errno;
			(void)snprintf(why, why_len, "%s '%s': '%s': %s", from, arg, path,
				       strerror(-r));
			return r;
		}
		int k = snprintf(searched + used, sizeof(searched) - used, "%s%s", i ? ", " : "",
				 dirs[i]);
		if (k > 0 && (size_t)k < sizeof(searched) - used)
			used += (size_t)k;
	}
	struct stat st;
	bool here = lstat(arg, &st) == 0;
	(void)snprintf(why, why_len, "%s '%s': no %s.yaml in %s%s%s%s", from, arg, arg, searched,
		       here ? " (a name is never a file of the current directory: to use that "
			      "file, write ./" : "",
		       here ? arg : "", here ? ")" : "");
	return -ENOENT;
}

int sup_load_policy(const char *path, struct pol_policy **out, char **out_text,
		    size_t *out_len, struct pol_diag *diag)
{
	memset(diag, 0, sizeof(*diag));
	_cleanup_free_ char *text = NULL;
	_cleanup_free_ char *abs = NULL;
	size_t len = 0;
	char file[PATH_MAX];
	int r = sup_policy_resolve(path, file, sizeof(file), diag->message, sizeof(diag->message));
	if (r < 0)
		return r; /* the caller reports diag->message */
	if (strcmp(file, "default") == 0) {
		const char *def = pol_default_yaml(&len);
		text = malloc(len + 1);
		if (!text)
			return -ENOMEM;
		memcpy(text, def, len);
		text[len] = '\0';
	} else {
		_cleanup_close_ int fd = open(file, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
		if (fd < 0)
			return -errno;
		r = io_read_alloc(fd, POL_MAX_INPUT_BYTES, &text, &len);
		if (r == -EINVAL) {
			(void)snprintf(diag->message, sizeof(diag->message),
				       "policy '%.200s' is not a regular file", file);
			return -ENXIO;
		}
		if (r < 0)
			return r;
		/* Relative extends and bind sources resolve against the file's real directory. */
		abs = realpath(file, NULL);
		if (!abs)
			return -errno;
	}
	r = abs ? pol_parse_file(abs, text, len, sup_policy_loader, NULL, out, diag)
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
