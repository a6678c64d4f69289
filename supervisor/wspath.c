/* SPDX-License-Identifier: MIT */
/*
 * Where a workspace may be (wspath.h). The sandbox gets the workspace read-write, so handing
 * it /etc, /usr, the host's root, the user's home (with its ssh keys, shell start-up files and
 * credentials) or a kernel interface would hand it the host. Each rule below refuses one way
 * of doing that; the path rules themselves are policy/'s pure pol_host_path_risk, the same
 * one that refuses a bind of '/'.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/magic.h>
#include <linux/openat2.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/statfs.h>
#include <unistd.h>

#include "cleanup.h"
#include "fail.h"
#include "io-util.h"
#include "policy.h"
#include "wspath.h"

/* Not in <linux/magic.h>: the kernel defines these beside the filesystems themselves. */
#ifndef CONFIGFS_MAGIC
#define CONFIGFS_MAGIC 0x62656570 /* fs/configfs/mount.c */
#endif
#ifndef MQUEUE_MAGIC
#define MQUEUE_MAGIC 0x19800202 /* ipc/mqueue.c */
#endif
#ifndef FUSE_CTL_SUPER_MAGIC
#define FUSE_CTL_SUPER_MAGIC 0x65735543 /* fs/fuse/control.c */
#endif

#define REMEDY "(expected a project directory, or unsafe: [workspace-anywhere] in the policy)"
#define REMEDY_HOME \
	"(expected a project directory inside the home, or unsafe: [workspace-anywhere] in the policy)"

/* Paths are shown at most this long (then elided), so that every reason fits one line. */
#define SHOWN_PATH_MAX 128

/* A path as it is shown in a reason: control bytes escaped, at most SHOWN_PATH_MAX bytes. */
struct shown {
	char s[SHOWN_PATH_MAX + 8];
};

static const char *show(struct shown *b, const char *path)
{
	size_t o = 0;
	for (const unsigned char *p = (const unsigned char *)path; *p; p++) {
		if (o + 4 > SHOWN_PATH_MAX) {
			memcpy(b->s + o, "...", 4);
			return b->s;
		}
		if (*p < 0x20 || *p == 0x7f)
			o += (size_t)snprintf(b->s + o, sizeof(b->s) - o, "\\x%02x", *p);
		else
			b->s[o++] = (char)*p;
	}
	b->s[o] = '\0';
	return b->s;
}

/*
 * The descriptor N when path is exactly "/proc/self/fd/N" (N decimal, no sign, no leading
 * zero), else -1. `warden grade` hands over the run folder's workspace this way, through the
 * descriptor it checked, so that the path is never resolved again.
 */
static int self_fd_of(const char *path)
{
	static const char prefix[] = "/proc/self/fd/";
	const char *d;
	long v = 0;

	if (strncmp(path, prefix, sizeof(prefix) - 1) != 0)
		return -1;
	d = path + sizeof(prefix) - 1;
	if (!*d || (d[0] == '0' && d[1]))
		return -1;
	for (; *d; d++) {
		if (*d < '0' || *d > '9')
			return -1;
		v = v * 10 + (*d - '0');
		if (v > INT_MAX)
			return -1;
	}
	return (int)v;
}

int sup_open_workspace(const char *path, uint32_t unsafe, struct fail *f)
{
	struct shown sp;
	if (unsafe & POL_UNSAFE_WORKSPACE_ANYWHERE) {
		int fd = open(path, O_PATH | O_DIRECTORY | O_CLOEXEC);
		if (fd < 0) {
			int r = -errno;
			return fail_refuse(f, r, "open workspace '%s': %s", show(&sp, path),
					   strerror(-r));
		}
		return fd;
	}
	/*
	 * A directory this process already holds open is taken as it is, like the working
	 * directory behind ".": the kernel resolved it when it was opened, and the checks of
	 * sup_check_workspace still judge its canonical path.
	 */
	int self_fd = self_fd_of(path);
	int fd = io_openat2(self_fd >= 0 ? self_fd : AT_FDCWD, self_fd >= 0 ? "." : path,
			    O_PATH | O_DIRECTORY, RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS);
	if (fd >= 0)
		return fd;
	int r = fd;
	if (r == -ELOOP)
		return fail_refuse(f, r,
				   "workspace '%s' is reached through a symbolic link, which could "
				   "point anywhere (expected a path without symlinks, as realpath "
				   "prints it, or unsafe: [workspace-anywhere] in the policy)",
				   show(&sp, path));
	if (r == -ENOSYS || r == -E2BIG)
		return fail_refuse(f, r,
				   "open workspace '%s' without following symlinks: the kernel has no "
				   "openat2 (expected Linux 5.6 or later, or unsafe: "
				   "[workspace-anywhere] in the policy)", show(&sp, path));
	return fail_refuse(f, r, "open workspace '%s': %s", show(&sp, path), strerror(-r));
}

/* The path rules: the host's own trees (policy.h). */
static int check_tree(const char *ws, struct fail *f)
{
	struct shown sp, st;
	char tree[NAME_MAX + 2];
	size_t top = 0;
	enum pol_host_path risk = pol_host_path_risk(ws, &top);
	const bool whole = risk != POL_HOST_PATH_INVALID && ws[top] == '\0';
	const char *what = NULL;

	switch (risk) {
	case POL_HOST_PATH_OK:
		return 0;
	case POL_HOST_PATH_INVALID:
		return fail_refuse(f, -EPERM, "workspace '%s' has no normalised absolute path to "
				   "check " REMEDY, show(&sp, ws));
	case POL_HOST_PATH_ROOT:
		return fail_refuse(f, -EPERM, "workspace '/' is the host's root directory, which "
				   "holds every system directory " REMEDY);
	case POL_HOST_PATH_SYSTEM:
		what = "a system directory";
		break;
	case POL_HOST_PATH_KERNEL:
		what = "a kernel interface of the host";
		break;
	case POL_HOST_PATH_RUNTIME:
		what = "the host's runtime state and service sockets";
		break;
	case POL_HOST_PATH_SHARED:
		what = "which every service or user shares";
		break;
	}
	if (!what)
		what = "a host directory";
	(void)snprintf(tree, sizeof(tree), "%.*s", (int)top, ws);
	return fail_refuse(f, -EPERM, "workspace '%s' %s %s, %s " REMEDY, show(&sp, ws),
			   whole ? "is" : "lies under", show(&st, tree), what);
}

/*
 * Copies path to out (PATH_MAX bytes) without empty and "." components and a trailing '/'.
 * Returns false for a path that is not absolute, has a ".." component (only resolving it can
 * tell where it leads) or does not fit.
 */
static bool clean_path(const char *path, char out[PATH_MAX])
{
	size_t o = 0;
	if (path[0] != '/')
		return false;
	for (const char *c = path; *c;) {
		while (*c == '/')
			c++;
		size_t n = strcspn(c, "/");
		if (n == 0 || (n == 1 && c[0] == '.')) {
			c += n;
			continue;
		}
		if (n == 2 && c[0] == '.' && c[1] == '.')
			return false;
		if (o + 1 + n >= PATH_MAX)
			return false;
		out[o++] = '/';
		memcpy(out + o, c, n);
		o += n;
		c += n;
	}
	if (o == 0)
		out[o++] = '/';
	out[o] = '\0';
	return true;
}

/* True iff ws (canonical) is home or a directory above it (home absolute and clean). */
static bool holds_home(const char *ws, const char *home)
{
	size_t n = strlen(ws);
	if (strcmp(ws, "/") == 0)
		return true;
	return strncmp(home, ws, n) == 0 && (home[n] == '\0' || home[n] == '/');
}

/*
 * Refuses ws when it is home (a path from `from`, uid's home) or above it, judged on home as
 * written (cleaned) and on home resolved (realpath), since ws is canonical and home may lead
 * through a symlink (/home -> /var/home). A home that is relative or empty is not one.
 */
static int check_home(const char *ws, const char *home, const char *from, uid_t uid,
		      struct fail *f)
{
	char clean[PATH_MAX], real[PATH_MAX];
	const char *hit = NULL;
	struct shown sw, sh;

	if (!home || home[0] != '/')
		return 0;
	if (clean_path(home, clean) && holds_home(ws, clean))
		hit = clean;
	else if (realpath(home, real) && holds_home(ws, real))
		hit = real;
	if (!hit)
		return 0;
	if (strcmp(ws, hit) == 0)
		return fail_refuse(f, -EPERM, "workspace '%s' is the home directory of uid %u (from "
				   "%s) " REMEDY_HOME, show(&sw, ws), (unsigned)uid, from);
	return fail_refuse(f, -EPERM, "workspace '%s' holds %s, the home directory of uid %u "
			   "(from %s) " REMEDY_HOME, show(&sw, ws), show(&sh, hit), (unsigned)uid,
			   from);
}

/*
 * The home rule for every /etc/passwd entry of uid (a uid listed twice has two homes), read
 * directly: warden is linked statically, where getpwuid's NSS modules cannot load. An entry
 * that is not seven ':'-separated fields with a decimal uid is skipped. /etc/passwd is the
 * host's own root-owned file, so its lines are read whole.
 */
static int check_passwd_homes(const char *ws, uid_t uid, struct fail *f)
{
	_cleanup_fclose_ FILE *pw = fopen("/etc/passwd", "re");
	_cleanup_free_ char *line = NULL;
	size_t cap = 0;
	ssize_t n;

	if (!pw)
		return 0; /* no passwd file: $HOME is the only home there is */
	while ((n = getline(&line, &cap, pw)) > 0) {
		char *field[7], *p = line;
		size_t k = 0;
		if (line[n - 1] == '\n')
			line[n - 1] = '\0';
		for (; k < 7 && p; k++) {
			field[k] = p;
			p = strchr(p, ':');
			if (p)
				*p++ = '\0';
		}
		if (k != 7 || p || field[2][0] < '0' || field[2][0] > '9')
			continue;
		char *end = NULL;
		errno = 0;
		unsigned long id = strtoul(field[2], &end, 10);
		if (errno || *end || id != (unsigned long)uid)
			continue;
		int r = check_home(ws, field[5], "/etc/passwd", uid, f);
		if (r < 0)
			return r;
	}
	return 0;
}

/* Kernel pseudo filesystems: a directory on one is an interface to the kernel, not storage. */
static const char *pseudo_fs_name(unsigned long type)
{
	static const struct {
		unsigned long magic;
		const char *name;
	} fs[] = {
		{ PROC_SUPER_MAGIC, "proc" },
		{ SYSFS_MAGIC, "sysfs" },
		{ DEVPTS_SUPER_MAGIC, "devpts" },
		{ CGROUP_SUPER_MAGIC, "cgroup" },
		{ CGROUP2_SUPER_MAGIC, "cgroup2" },
		{ DEBUGFS_MAGIC, "debugfs" },
		{ TRACEFS_MAGIC, "tracefs" },
		{ SECURITYFS_MAGIC, "securityfs" },
		{ BPF_FS_MAGIC, "bpf" },
		{ PSTOREFS_MAGIC, "pstore" },
		{ CONFIGFS_MAGIC, "configfs" },
		{ EFIVARFS_MAGIC, "efivarfs" },
		{ MQUEUE_MAGIC, "mqueue" },
		{ BINFMTFS_MAGIC, "binfmt_misc" },
		{ SELINUX_MAGIC, "selinuxfs" },
		{ SMACK_MAGIC, "smackfs" },
		{ AAFS_MAGIC, "apparmorfs" },
		{ RDTGROUP_SUPER_MAGIC, "resctrl" },
		{ BINDERFS_SUPER_MAGIC, "binder" },
		{ FUSE_CTL_SUPER_MAGIC, "fusectl" },
		{ NSFS_MAGIC, "nsfs" },
		{ OPENPROM_SUPER_MAGIC, "openpromfs" },
		{ USBDEVICE_SUPER_MAGIC, "usbfs" },
	};

	for (size_t i = 0; i < ELEMENTSOF(fs); i++)
		if (fs[i].magic == type)
			return fs[i].name;
	return NULL;
}

int sup_check_workspace(int fd, const char *abs_path, uint32_t unsafe, struct fail *f)
{
	struct shown sp;
	struct statfs sfs;
	int r;

	if (unsafe & POL_UNSAFE_WORKSPACE_ANYWHERE)
		return 0;
	r = check_tree(abs_path, f);
	if (r == 0)
		r = check_passwd_homes(abs_path, getuid(), f);
	if (r == 0)
		r = check_home(abs_path, secure_getenv("HOME"), "$HOME", getuid(), f);
	if (r < 0)
		return r;
	if (fstatfs(fd, &sfs) < 0) {
		r = -errno;
		return fail_refuse(f, r, "workspace '%s': find its filesystem type: %s",
				   show(&sp, abs_path), strerror(-r));
	}
	const char *name = pseudo_fs_name((unsigned long)sfs.f_type);
	if (!name)
		return 0;
	return fail_refuse(f, -EPERM, "workspace '%s' is on a %s filesystem, an interface to the "
			   "kernel rather than storage " REMEDY, show(&sp, abs_path), name);
}
