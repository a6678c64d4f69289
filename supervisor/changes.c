/* SPDX-License-Identifier: MIT */
/*
 * Changesets (changes.h): the state directory, a run's changeset from creation to its end,
 * and `warden changes | diff | apply | discard`.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "changes.h"
#include "channel.h"
#include "cleanup.h"
#include "cli.h"
#include "io-util.h"
#include "log.h"
#include "policy.h"
#include "statefs.h"
#include "supervisor.h"
#include "textdiff.h"
#include "treecopy.h"
#include "wspath.h"

DEFINE_CLEANUP(cJSON *, cJSON_Delete)

#define META "meta.json"
#define META_MAX (4u << 20) /* a meta.json is warden's own; this only bounds a damaged one */

#define EXIT_DONE 0
#define EXIT_PENDING 1
#define EXIT_USAGE 2
#define EXIT_LOCKED 3

void sup_changeset_init(struct sup_changeset *cs)
{
	memset(cs, 0, sizeof(*cs));
	cs->dir_fd = cs->layer_fd = -1;
}

void sup_changeset_done(struct sup_changeset *cs)
{
	if (cs->dir_fd >= 0)
		(void)close(cs->dir_fd);
	if (cs->layer_fd >= 0)
		(void)close(cs->layer_fd);
	cs->dir_fd = cs->layer_fd = -1;
}

/* mkdir of one component, 0700; an existing one must be a directory of ours, private. */
static int private_dir(int parent, const char *name, bool create, int *out_fd)
{
	if (create && mkdirat(parent, name, 0700) < 0 && errno != EEXIST)
		return -errno;
	_cleanup_close_ int fd = openat(parent, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW |
							 O_CLOEXEC);
	if (fd < 0)
		return -errno;
	struct stat st;
	if (fstat(fd, &st) < 0)
		return -errno;
	if (st.st_uid != geteuid() || (st.st_mode & 077))
		return -EPERM;
	*out_fd = TAKE_FD(fd);
	return 0;
}

/*
 * Makes sure changes/ (*c, in warden/ w) can hold overlay upper layers. On a filesystem that
 * cannot (a container's overlayfs root), root mounts a private tmpfs there once, under an
 * flock on w so that concurrent runs agree; its changesets then last as long as that mount
 * (until the container or the machine stops). Without root, -EXDEV: the caller names the
 * remedy.
 */
static int upper_capable(int w, int *c, bool privileged)
{
	int r = sbx_fs_holds_upper(*c);
	if (r != 0)
		return r < 0 ? r : 0;
	if (!privileged)
		return -EXDEV;
	if (flock(w, LOCK_EX) < 0)
		return -errno;
	_cleanup_close_ int again = -1;
	r = private_dir(w, "changes", false, &again);
	if (r >= 0 && (r = sbx_fs_holds_upper(again)) == 0) {
		r = sbx_state_tmpfs(again);
		if (r >= 0) {
			(void)close(TAKE_FD(again));
			r = private_dir(w, "changes", false, &again);
		}
	}
	(void)flock(w, LOCK_UN);
	if (r < 0)
		return r;
	(void)close(*c);
	*c = TAKE_FD(again);
	return 0;
}

/*
 * The state directory's changes/ folder: path in out, fd in *out_fd. Folders above warden's
 * own (/var/lib, ~/.local/state) are made 0700 when missing and otherwise left as they are.
 */
/* The folder that holds warden/ (see changes.h); -ENOENT when there is none to name. */
static int state_base(bool privileged, char *base, size_t len)
{
	const char *xdg = secure_getenv("XDG_STATE_HOME");
	const char *home = secure_getenv("HOME");
	int n;
	if (privileged)
		n = snprintf(base, len, "/var/lib");
	else if (xdg && xdg[0] == '/')
		n = snprintf(base, len, "%s", xdg);
	else if (home && home[0] == '/')
		n = snprintf(base, len, "%s/.local/state", home);
	else
		return -ENOENT;
	return n < 0 || (size_t)n >= len ? -ENAMETOOLONG : 0;
}

int sup_changes_state_path(bool privileged, char *out, size_t len)
{
	char base[PATH_MAX];
	int r = state_base(privileged, base, sizeof(base));
	if (r < 0)
		return r;
	int n = snprintf(out, len, "%s/warden/changes", base);
	return n < 0 || (size_t)n >= len ? -ENAMETOOLONG : 0;
}

static int state_root(bool privileged, bool create, int *out_fd, char *out, size_t out_len)
{
	char base[PATH_MAX];
	int r = state_base(privileged, base, sizeof(base));
	if (r < 0)
		return r;
	if (create) {
		/* mkdir -p of base, every new component private */
		char buf[PATH_MAX];
		(void)snprintf(buf, sizeof(buf), "%s", base);
		for (char *p = buf + 1;; p++) {
			if (*p != '/' && *p)
				continue;
			char saved = *p;
			*p = '\0';
			if (mkdir(buf, 0700) < 0 && errno != EEXIST)
				return -errno;
			*p = saved;
			if (!saved)
				break;
		}
	}
	_cleanup_close_ int b = open(base, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (b < 0)
		return -errno;
	_cleanup_close_ int w = -1;
	r = private_dir(b, "warden", create, &w);
	if (r < 0)
		return r;
	_cleanup_close_ int c = -1;
	r = private_dir(w, "changes", create, &c);
	if (r < 0)
		return r;
	int n = snprintf(out, out_len, "%s/warden/changes", base);
	if (n < 0 || (size_t)n >= out_len)
		return -ENAMETOOLONG;
	if (create) {
		r = upper_capable(w, &c, privileged);
		if (r < 0)
			return r;
	}
	*out_fd = TAKE_FD(c);
	return 0;
}

static bool valid_id(const char *id)
{
	size_t n = strlen(id);
	if (n == 0 || n >= SUP_CHANGES_ID_LEN)
		return false;
	for (size_t i = 0; i < n; i++)
		if (!((id[i] >= '0' && id[i] <= '9') || (id[i] >= 'a' && id[i] <= 'f') ||
		      id[i] == '-'))
			return false;
	return true;
}

static cJSON *strv_json(char *const *v, size_t n)
{
	cJSON *a = cJSON_CreateArray();
	for (size_t i = 0; a && v && i < n && v[i]; i++) {
		cJSON *s = cJSON_CreateString(v[i]);
		if (!s) {
			cJSON_Delete(a);
			return NULL;
		}
		cJSON_AddItemToArray(a, s);
	}
	return a;
}

/*
 * In the locked folder cs->dir_fd (named cs->id in root_path): layer/ with upper/ and work/,
 * which belong to the sandbox's host id, since overlayfs writes as it. Sets cs->layer_fd and
 * cs->layer_path. 0 or -errno.
 */
static int make_layer(struct sup_changeset *cs, bool privileged, const char *root_path)
{
	if (mkdirat(cs->dir_fd, "layer", 0700) < 0 ||
	    (cs->layer_fd = openat(cs->dir_fd, "layer", O_RDONLY | O_DIRECTORY | O_NOFOLLOW |
							     O_CLOEXEC)) < 0 ||
	    mkdirat(cs->layer_fd, "upper", 0700) < 0 || mkdirat(cs->layer_fd, "work", 0700) < 0)
		return -errno;
	if (privileged &&
	    (fchownat(cs->layer_fd, "upper", cs->upper_uid, cs->upper_gid, AT_SYMLINK_NOFOLLOW) < 0 ||
	     fchownat(cs->layer_fd, "work", cs->upper_uid, cs->upper_gid, AT_SYMLINK_NOFOLLOW) < 0 ||
	     fchown(cs->layer_fd, cs->upper_uid, cs->upper_gid) < 0))
		return -errno;
	int n = snprintf(cs->layer_path, sizeof(cs->layer_path), "%s/%s/layer", root_path, cs->id);
	return n < 0 || (size_t)n >= sizeof(cs->layer_path) ? -ENAMETOOLONG : 0;
}

static int remove_tree(int dfd, const char *name);

/*
 * Opens (making it) the changes/ folder a new changeset or scratch layer goes in: *root and
 * root_path (PATH_MAX bytes). 0, or -errno with the reason and its remedy in f.
 */
static int open_state_for_layer(bool privileged, bool scratch, int *root, char *root_path,
				struct fail *f)
{
	int r = state_root(privileged, true, root, root_path, PATH_MAX);
	if (r >= 0)
		return 0;
	const char *direct = r == -EPERM || scratch ? "" : ", or run with --workspace-mode direct";
	return fail_set(f, r, "open warden's state directory for %s%s%s%s",
			scratch ? "a scratch layer" : "the changeset",
			r == -EPERM ? " (it must be ours and mode 0700"
			: r == -EXDEV ? ": its filesystem cannot hold an overlay's upper layer (set "
					"XDG_STATE_HOME to a directory on ext4, xfs, btrfs or tmpfs"
			: " (set XDG_STATE_HOME or HOME",
			direct, ")");
}

/*
 * Makes root/cs->id (0700), locks it (cs->dir_fd) and makes its layer (make_layer). On
 * failure nothing of it is left. 0 or -errno.
 */
static int make_locked_layer(int root, const char *root_path, bool privileged,
			     struct sup_changeset *cs)
{
	if (mkdirat(root, cs->id, 0700) < 0)
		return -errno;
	int r = 0;
	cs->dir_fd = openat(root, cs->id, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (cs->dir_fd < 0 || flock(cs->dir_fd, LOCK_EX | LOCK_NB) < 0)
		r = -errno;
	if (r >= 0)
		r = make_layer(cs, privileged, root_path);
	if (r < 0) {
		(void)remove_tree(root, cs->id);
		sup_changeset_done(cs);
	}
	return r;
}

int sup_changeset_create(bool privileged, int ws_fd, const char *ws_path, uint32_t upper_uid,
			 uint32_t upper_gid, const struct pol_policy *pol, char *const *argv,
			 struct sup_changeset *out, struct fail *f)
{
	char root_path[PATH_MAX];
	_cleanup_close_ int root = -1;
	int r = open_state_for_layer(privileged, false, &root, root_path, f);
	if (r < 0)
		return r;
	struct sup_changeset cs;
	sup_changeset_init(&cs);
	(void)clock_gettime(CLOCK_REALTIME_COARSE, &cs.base);
	struct tm tm;
	(void)gmtime_r(&cs.base.tv_sec, &tm);
	uint32_t rnd = 0;
	(void)io_fill_random(&rnd, sizeof(rnd));
	int n = snprintf(cs.id, sizeof(cs.id), "%04d%02d%02d-%02d%02d%02d-%06x",
			 tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min,
			 tm.tm_sec, (unsigned)(rnd & 0xffffff));
	if (n < 0 || (size_t)n >= sizeof(cs.id))
		return fail_set(f, -EOVERFLOW, "create the changeset in %s", root_path);
	cs.upper_uid = upper_uid;
	cs.upper_gid = upper_gid;
	r = make_locked_layer(root, root_path, privileged, &cs);
	if (r < 0)
		return fail_set(f, r, "create the changeset in %s", root_path);

	struct stat ws;
	_cleanup_(cJSON_Deletep) cJSON *meta = cJSON_CreateObject();
	if (r >= 0 && fstat(ws_fd, &ws) < 0)
		r = -errno;
	char created[40];
	sup_rfc3339(&cs.base, false, created);
	if (r >= 0 &&
	    (!meta || !cJSON_AddStringToObject(meta, "id", cs.id) ||
	     !cJSON_AddStringToObject(meta, "state", "running") ||
	     !cJSON_AddStringToObject(meta, "created", created) ||
	     !cJSON_AddStringToObject(meta, "workspace", ws_path) ||
	     !sup_json_add_num(meta, "workspace_dev", (double)ws.st_dev) ||
	     !sup_json_add_num(meta, "workspace_ino", (double)ws.st_ino) ||
	     !sup_json_add_num(meta, "owner_uid", ws.st_uid) ||
	     !sup_json_add_num(meta, "owner_gid", ws.st_gid) ||
	     !sup_json_add_num(meta, "upper_uid", upper_uid) ||
	     !sup_json_add_num(meta, "upper_gid", upper_gid) ||
	     !sup_json_add_num(meta, "base_sec", (double)cs.base.tv_sec) ||
	     !sup_json_add_num(meta, "base_nsec", (double)cs.base.tv_nsec) ||
	     !cJSON_AddItemToObject(meta, "command", strv_json(argv, SIZE_MAX)) ||
	     !cJSON_AddItemToObject(meta, "hold", strv_json(pol->hold, pol->n_hold))))
		r = -ENOMEM;
	if (r >= 0)
		r = sup_write_json_atomic(cs.dir_fd, META, meta);
	if (r < 0) {
		sup_changeset_done(&cs);
		return fail_set(f, r, "create the changeset in %s", root_path);
	}
	*out = cs;
	return 0;
}

int sup_changeset_snapshot(struct sup_changeset *cs, int ws_fd, struct sup_copy_stats *stats,
			   struct fail *f)
{
	static const struct sup_copy_limits lim = {
		.what = "workspace",
		.max_entries = SUP_SNAPSHOT_MAX_ENTRIES,
		.max_bytes = SUP_SNAPSHOT_MAX_BYTES,
		.max_depth = SUP_SNAPSHOT_MAX_DEPTH,
		.keep_times = true,
		.skip_special = true,
	};
	static const char what[] = "copy the workspace into the changeset";
	if (mkdirat(cs->dir_fd, "lower", 0700) < 0)
		return fail_refuse(f, -errno, "%s", what);
	_cleanup_close_ int lower = openat(cs->dir_fd, "lower", O_RDONLY | O_DIRECTORY |
								O_NOFOLLOW | O_CLOEXEC);
	if (lower < 0)
		return fail_refuse(f, -errno, "%s", what);
	/* sup_copy_tree (shared with eval/rundir.c) says why in a buffer of its own. */
	char why[FAIL_WHAT_MAX];
	(void)snprintf(why, sizeof(why), "%s", what);
	int r = sup_copy_tree(ws_fd, lower, &lim, stats, why, sizeof(why));
	if (r == -E2BIG)
		return fail_refuse(f, r, "%s; a workspace that cannot be idmapped is copied, up to %u "
				   "entries and %llu GiB: move it to ext4, xfs, btrfs or tmpfs", why,
				   SUP_SNAPSHOT_MAX_ENTRIES, SUP_SNAPSHOT_MAX_BYTES >> 30);
	if (r < 0)
		return fail_refuse(f, r, "%s", why);
	return TAKE_FD(lower);
}

/* ------------------------------------------------------------------------------------------ */
/* Reading a changeset back                                                                   */

struct loaded {
	char id[SUP_CHANGES_ID_LEN];
	int dir_fd;
	cJSON *meta;
	bool locked;        /* by us (exclusive), for apply and discard */
	bool busy;          /* its run still holds it */
};

static void loaded_done(struct loaded *l)
{
	if (l->dir_fd >= 0)
		(void)close(l->dir_fd);
	cJSON_Delete(l->meta);
	l->dir_fd = -1;
	l->meta = NULL;
}

/* A changeset's meta.json, as a JSON object (the caller frees it). 0 or -errno. */
static int read_meta(int dir_fd, cJSON **out)
{
	_cleanup_close_ int fd = openat(dir_fd, META, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	_cleanup_free_ char *buf = malloc(META_MAX);
	int n = fd < 0 ? -errno : !buf ? -ENOMEM : io_read_fd(fd, buf, META_MAX);
	if (n < 0)
		return n;
	cJSON *meta = cJSON_ParseWithLength(buf, (size_t)n);
	if (!cJSON_IsObject(meta)) {
		cJSON_Delete(meta);
		return -EBADMSG;
	}
	*out = meta;
	return 0;
}

static int load(int root, const char *id, bool lock, struct loaded *out)
{
	struct loaded l = { .dir_fd = -1 };
	if (!valid_id(id))
		return -EINVAL;
	(void)snprintf(l.id, sizeof(l.id), "%s", id);
	l.dir_fd = openat(root, id, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (l.dir_fd < 0)
		return -errno;
	if (flock(l.dir_fd, LOCK_EX | LOCK_NB) == 0) {
		if (!lock)
			(void)flock(l.dir_fd, LOCK_UN);
		l.locked = lock;
	} else {
		l.busy = true;
	}
	int r = read_meta(l.dir_fd, &l.meta);
	if (r < 0) {
		loaded_done(&l);
		return r;
	}
	*out = l;
	return 0;
}

static const char *meta_str(const cJSON *m, const char *k)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(m, k);
	return cJSON_IsString(v) ? v->valuestring : NULL;
}

static bool meta_num(const cJSON *m, const char *k, double *out)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(m, k);
	if (!cJSON_IsNumber(v))
		return false;
	*out = v->valuedouble;
	return true;
}

/*
 * Removing a tree the sandbox wrote, however deep: the walk goes at most RM_DEPTH_MAX folders
 * down (one descriptor each), and a folder deeper than that is first renamed to the top of
 * the tree being removed, where a later pass takes it. Every pass removes or lifts what it
 * reaches, so the passes end.
 */
#define RM_DEPTH_MAX 48u

struct rm_walk {
	int top;         /* the folder being emptied (borrowed) */
	unsigned lifted; /* folders renamed to the top, in all passes */
};

/* Removes dfd/name below w->top, lifting a folder at RM_DEPTH_MAX. 0 or -errno. */
static int rm_entry(struct rm_walk *w, int dfd, const char *name, unsigned depth)
{
	struct stat st;
	if (fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
		return errno == ENOENT ? 0 : -errno;
	if (!S_ISDIR(st.st_mode))
		return unlinkat(dfd, name, 0) < 0 ? -errno : 0;
	if (depth >= RM_DEPTH_MAX) {
		for (;;) {
			char lifted[32];
			(void)snprintf(lifted, sizeof(lifted), ".warden-rm-%u", w->lifted++);
			if (renameat2(dfd, name, w->top, lifted, RENAME_NOREPLACE) == 0)
				return 0;
			if (errno != EEXIST)
				return -errno;
		}
	}
	if (fchmodat(dfd, name, 0700, 0) < 0) /* a folder the sandbox made unreadable */
		log_debug("chmod '%s' before removing it: %m", name);
	int fd = io_openat2(dfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW,
			    RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_XDEV);
	if (fd < 0)
		return fd;
	DIR *d = fdopendir(fd);
	if (!d) {
		(void)close(fd);
		return -errno;
	}
	int r = 0;
	struct dirent *de;
	while (r >= 0 && (errno = 0, de = readdir(d))) {
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		r = rm_entry(w, dirfd(d), de->d_name, depth + 1);
	}
	if (r >= 0 && errno)
		r = -errno;
	(void)closedir(d);
	/* A lifted folder left this one: it may be empty now, or a later pass comes back. */
	if (r >= 0 && unlinkat(dfd, name, AT_REMOVEDIR) < 0 && errno != ENOTEMPTY)
		r = -errno;
	return r;
}

/* Removes dfd/name and everything below it, never following a symlink or leaving the fs. */
static int remove_tree(int dfd, const char *name)
{
	struct stat st;
	if (fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
		return errno == ENOENT ? 0 : -errno;
	if (!S_ISDIR(st.st_mode))
		return unlinkat(dfd, name, 0) < 0 ? -errno : 0;
	if (fchmodat(dfd, name, 0700, 0) < 0)
		log_debug("chmod '%s' before removing it: %m", name);
	_cleanup_close_ int top = io_openat2(dfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW,
					     RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS |
						     RESOLVE_NO_XDEV);
	if (top < 0)
		return top;
	struct rm_walk w = { .top = top };
	for (;;) {
		unsigned before = w.lifted;
		DIR *d = io_dir_stream(top);
		if (!d)
			return -errno;
		rewinddir(d);
		int r = 0;
		bool any = false;
		struct dirent *de;
		while (r >= 0 && (errno = 0, de = readdir(d))) {
			if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
				continue;
			any = true;
			r = rm_entry(&w, top, de->d_name, 1);
		}
		if (r >= 0 && errno)
			r = -errno;
		(void)closedir(d);
		if (r < 0)
			return r;
		if (!any || w.lifted == before)
			break; /* this pass lifted nothing: what it reached is gone */
	}
	return unlinkat(dfd, name, AT_REMOVEDIR) < 0 ? -errno : 0;
}

/*
 * The meta's state and pending counts after an apply ("pending" when anything is left) and,
 * from the run itself, base: the moment its command was let go.
 */
static int update_meta(int dir_fd, cJSON *meta, const struct sup_chg_report *rep,
		       const struct timespec *base)
{
	cJSON_DeleteItemFromObjectCaseSensitive(meta, "state");
	cJSON_DeleteItemFromObjectCaseSensitive(meta, "pending");
	if (base) {
		cJSON_DeleteItemFromObjectCaseSensitive(meta, "base_sec");
		cJSON_DeleteItemFromObjectCaseSensitive(meta, "base_nsec");
		if (!sup_json_add_num(meta, "base_sec", (double)base->tv_sec) ||
		    !sup_json_add_num(meta, "base_nsec", (double)base->tv_nsec))
			return -ENOMEM;
	}
	cJSON *p = cJSON_CreateObject();
	if (!p || !cJSON_AddItemToObject(meta, "pending", p) ||
	    !cJSON_AddStringToObject(meta, "state", "pending") ||
	    !sup_json_add_num(p, "held", (double)rep->n_held) ||
	    !sup_json_add_num(p, "refused", (double)rep->n_refused))
		return -ENOMEM;
	return sup_write_json_atomic(dir_fd, META, meta);
}

/* The workspace the meta names, only if it is still the same directory reached without a symlink. */
static int open_workspace(const cJSON *meta, int *out_fd)
{
	const char *path = meta_str(meta, "workspace");
	double dev, ino;
	if (!path || path[0] != '/' || !meta_num(meta, "workspace_dev", &dev) ||
	    !meta_num(meta, "workspace_ino", &ino))
		return -EBADMSG;
	_cleanup_close_ int fd = sup_open_workspace(path, 0, NULL);
	if (fd < 0)
		return fd;
	struct stat st;
	if (fstat(fd, &st) < 0)
		return -errno;
	if ((double)st.st_dev != dev || (double)st.st_ino != ino)
		return -ESTALE;
	*out_fd = TAKE_FD(fd);
	return 0;
}

/* Fills the parts of an apply spec that the meta gives. hold points into meta. */
static int spec_from_meta(const cJSON *meta, bool privileged, struct sup_apply_spec *s,
			  char ***out_hold)
{
	double v[6];
	static const char *const keys[] = { "owner_uid", "owner_gid", "upper_uid",
					    "upper_gid", "base_sec", "base_nsec" };
	for (size_t i = 0; i < ELEMENTSOF(keys); i++)
		if (!meta_num(meta, keys[i], &v[i]) || v[i] < 0 || v[i] > 9.0e15)
			return -EBADMSG;
	s->ws_uid = (uint32_t)v[0];
	s->ws_gid = (uint32_t)v[1];
	s->upper_uid = (uint32_t)v[2];
	s->upper_gid = (uint32_t)v[3];
	s->base_sec = (int64_t)v[4];
	s->base_nsec = (int64_t)v[5];
	s->privileged = privileged;
	const cJSON *hold = cJSON_GetObjectItemCaseSensitive(meta, "hold");
	int n = cJSON_GetArraySize(hold);
	char **h = calloc((size_t)n + 1, sizeof(char *));
	if (!h)
		return -ENOMEM;
	int i = 0;
	const cJSON *it;
	cJSON_ArrayForEach(it, hold) {
		if (!cJSON_IsString(it) || i >= n) {
			free(h);
			return -EBADMSG;
		}
		h[i++] = it->valuestring;
	}
	s->hold = h;
	s->n_hold = (size_t)i;
	*out_hold = h;
	return 0;
}

/* ------------------------------------------------------------------------------------------ */
/* The end of a run                                                                           */

static void print_pending(const char *id, const struct sup_chg_report *rep)
{
	for (size_t i = 0; i < rep->n; i++) {
		const struct sup_chg_entry *e = &rep->v[i];
		if (e->verdict == SUP_CHG_APPLIED)
			continue;
		/* The sandbox named it: no byte of it reaches the terminal unescaped. */
		char q[PATH_MAX * 4 + 1];
		sup_escape(e->path, q, sizeof(q));
		if (e->verdict == SUP_CHG_HELD)
			log_info("held %s '%s' (%s): warden apply %s --include '%s'",
				 sup_chg_kind_name(e->kind), q, e->reason ? e->reason : "", id, q);
		else
			log_info("refused %s '%s': %s", sup_chg_kind_name(e->kind), q,
				 e->reason ? e->reason : "");
	}
}

static int finish_layer(struct sup_changeset *cs, bool privileged, int ws_fd, bool apply,
			const struct pol_policy *pol, struct sup_chg_report *rep, bool *out_kept);

int sup_changeset_finish(struct sup_changeset *cs, bool privileged, int ws_fd, bool apply,
			 const struct pol_policy *pol, struct sup_chg_report *rep, bool *out_kept)
{
	int r = finish_layer(cs, privileged, ws_fd, apply, pol, rep, out_kept);
	/* A changeset that could not be finished stays pending: durable like a kept one. */
	if (r < 0 && syncfs(cs->layer_fd) < 0)
		log_debug("sync the layer of changeset %s: %m", cs->id);
	return r;
}

static int finish_layer(struct sup_changeset *cs, bool privileged, int ws_fd, bool apply,
			const struct pol_policy *pol, struct sup_chg_report *rep, bool *out_kept)
{
	_cleanup_close_ int upper = openat(cs->layer_fd, "upper", O_RDONLY | O_DIRECTORY |
								  O_NOFOLLOW | O_CLOEXEC);
	if (upper < 0)
		return -errno;
	struct stat ws;
	if (fstat(ws_fd, &ws) < 0)
		return -errno;
	struct sup_apply_spec spec = {
		.upper_fd = upper,
		.ws_fd = ws_fd,
		.hold = pol->hold,
		.n_hold = pol->n_hold,
		.base_sec = cs->base.tv_sec,
		.base_nsec = cs->base.tv_nsec,
		.dry_run = !apply,
		.privileged = privileged,
		.ws_uid = ws.st_uid,
		.ws_gid = ws.st_gid,
		.upper_uid = cs->upper_uid,
		.upper_gid = cs->upper_gid,
	};
	int r = sup_apply_run(&spec, rep);
	if (r < 0)
		return r;
	/* The work folder is overlayfs's scratch space, lower/ a copy of the workspace (when it
	 * could not be idmapped): nothing in either is a change. */
	(void)remove_tree(cs->layer_fd, "work");
	(void)remove_tree(cs->dir_fd, "lower");
	/* An empty changeset (the run made no change, or never started) is never kept. */
	bool left = rep->n_held || rep->n_refused || (!apply && rep->n);
	if (left) {
		/* The layer was mounted volatile (sandbox/mount.c): make it durable now. */
		if (syncfs(cs->layer_fd) < 0)
			return -errno;
		print_pending(cs->id, rep);
		_cleanup_(cJSON_Deletep) cJSON *meta = NULL;
		r = read_meta(cs->dir_fd, &meta);
		if (r < 0)
			return r;
		r = update_meta(cs->dir_fd, meta, rep, &cs->base);
		if (r < 0)
			return r;
		log_info("changeset %s keeps %zu held and %zu refused path(s)%s: warden diff %s",
			 cs->id, rep->n_held, rep->n_refused, apply ? "" : " and everything else",
			 cs->id);
	} else {
		char root_path[PATH_MAX];
		_cleanup_close_ int root = -1;
		r = state_root(privileged, false, &root, root_path, sizeof(root_path));
		if (r >= 0)
			r = remove_tree(root, cs->id);
		if (r < 0)
			return r;
	}
	*out_kept = left;
	return 0;
}

/* ------------------------------------------------------------------------------------------ */
/* Scratch layers                                                                             */

#define SCRATCH_PREFIX ".scratch-"

/* Removes the scratch layers in root that no run holds (their run was killed). */
static void sweep_scratch(int root)
{
	DIR *d = io_dir_stream(root);
	if (!d)
		return;
	struct dirent *de;
	while ((de = readdir(d))) {
		if (strncmp(de->d_name, SCRATCH_PREFIX, strlen(SCRATCH_PREFIX)) != 0)
			continue;
		_cleanup_close_ int fd = openat(root, de->d_name, O_RDONLY | O_DIRECTORY |
								 O_NOFOLLOW | O_CLOEXEC);
		if (fd < 0 || flock(fd, LOCK_EX | LOCK_NB) < 0)
			continue; /* a live run's */
		int r = remove_tree(root, de->d_name);
		if (r < 0)
			log_debug("remove stale scratch layer %s: %s", de->d_name, strerror(-r));
	}
	(void)closedir(d);
}

int sup_changeset_create_scratch(bool privileged, uint32_t upper_uid, uint32_t upper_gid,
				 struct sup_changeset *out, struct fail *f)
{
	char root_path[PATH_MAX];
	_cleanup_close_ int root = -1;
	int r = open_state_for_layer(privileged, true, &root, root_path, f);
	if (r < 0)
		return r;
	sweep_scratch(root);
	struct sup_changeset cs;
	sup_changeset_init(&cs);
	cs.upper_uid = upper_uid;
	cs.upper_gid = upper_gid;
	(void)clock_gettime(CLOCK_REALTIME_COARSE, &cs.base);
	uint64_t rnd = 0;
	r = io_fill_random(&rnd, sizeof(rnd));
	int n = snprintf(cs.id, sizeof(cs.id), SCRATCH_PREFIX "%016" PRIx64, rnd);
	if (r >= 0 && (n < 0 || (size_t)n >= sizeof(cs.id)))
		r = -EOVERFLOW;
	if (r >= 0)
		r = make_locked_layer(root, root_path, privileged, &cs);
	if (r < 0)
		return fail_set(f, r, "create a scratch layer in %s", root_path);
	*out = cs;
	return 0;
}

int sup_changeset_discard(struct sup_changeset *cs, bool privileged)
{
	char root_path[PATH_MAX];
	_cleanup_close_ int root = -1;
	int r = state_root(privileged, false, &root, root_path, sizeof(root_path));
	if (r >= 0)
		r = remove_tree(root, cs->id);
	return r;
}

/* ------------------------------------------------------------------------------------------ */
/* Commands                                                                                   */

static const char usage_changes[] =
	"Usage: warden changes [--json]\n"
	"       warden diff ID [--stat] [--json]\n"
	"       warden apply ID [--include GLOB]... [--dry-run] [--force] [--json]\n"
	"       warden discard ID\n"
	"\n"
	"A run in workspace mode 'changes' (the default) writes to an overlay, never to the\n"
	"host's workspace. When it ends, warden applies the safe part of what it wrote and keeps\n"
	"the rest, the held and refused paths, as a pending changeset (docs/workspace.md).\n"
	"\n"
	"  changes          list the pending changesets\n"
	"  diff ID          show what a changeset would do: each path, what it is, and whether\n"
	"                   it would be applied, is held or refused, and why; then, unless\n"
	"                   --stat, a unified diff of each file added, modified or deleted\n"
	"  apply ID         apply it under the same rules; --include GLOB also applies held\n"
	"                   paths it names; --force also overwrites paths that changed on the\n"
	"                   host since the run started; --dry-run only reports\n"
	"  discard ID       delete the changeset\n"
	"\n"
	"Exit status: 0 done (nothing left pending), 1 something is still held or refused,\n"
	"2 bad usage or no such changeset, 3 the changeset's run is still going, 4 failure.\n";

enum {
	OPT_JSON = CLI_LONG,
	OPT_STAT,
	OPT_INCLUDE,
	OPT_DRY_RUN,
	OPT_FORCE,
};

static const struct cli_option changes_options[] = {
	{ "json", OPT_JSON, false },
	{ NULL, 0, false },
};

static const struct cli_command changes_command = {
	.name = "changes",
	.help = usage_changes,
	.options = changes_options,
	.usage_exit = EXIT_USAGE,
};

static const struct cli_option diff_options[] = {
	{ "stat", OPT_STAT, false },
	{ "json", OPT_JSON, false },
	{ NULL, 0, false },
};

static const struct cli_command diff_command = {
	.name = "diff",
	.help = usage_changes,
	.options = diff_options,
	.min_operands = 1,
	.max_operands = 1,
	.operands = "ID",
	.usage_exit = EXIT_USAGE,
};

static const struct cli_option apply_options[] = {
	{ "include", OPT_INCLUDE, true },
	{ "dry-run", OPT_DRY_RUN, false },
	{ "force", OPT_FORCE, false },
	{ "json", OPT_JSON, false },
	{ NULL, 0, false },
};

static const struct cli_command apply_command = {
	.name = "apply",
	.help = usage_changes,
	.options = apply_options,
	.min_operands = 1,
	.max_operands = 1,
	.operands = "ID",
	.usage_exit = EXIT_USAGE,
};

static const struct cli_command discard_command = {
	.name = "discard",
	.help = usage_changes,
	.min_operands = 1,
	.max_operands = 1,
	.operands = "ID",
	.usage_exit = EXIT_USAGE,
};

static int open_root_for_cmd(int *out_fd)
{
	char path[PATH_MAX];
	bool privileged = sup_decide_privileged(sup_in_init_userns());
	int r = state_root(privileged, false, out_fd, path, sizeof(path));
	if (r == -ENOENT)
		return r;
	if (r < 0)
		return log_errno(r, "open the state directory");
	return 0;
}

int sup_cmd_changes(int argc, char **argv)
{
	bool json = false;
	_cleanup_(cli_done) struct cli cli = { 0 };
	int go = cli_parse_flag(&cli, &changes_command, argc, argv, &json);
	if (go <= 0)
		return go < 0 ? 4 : cli.exit_code;
	_cleanup_(cJSON_Deletep) cJSON *list = cJSON_CreateArray();
	_cleanup_close_ int root = -1;
	int r = open_root_for_cmd(&root);
	if (r < 0 && r != -ENOENT)
		return 4;
	DIR *d = root >= 0 ? io_dir_stream(root) : NULL;
	struct dirent *de;
	while (d && list && (de = readdir(d))) {
		struct loaded l;
		if (de->d_name[0] == '.' || load(root, de->d_name, false, &l) < 0)
			continue;
		const char *state = l.busy ? "running" : meta_str(l.meta, "state");
		if (state && !strcmp(state, "running") && !l.busy)
			state = "interrupted";
		cJSON *o = cJSON_CreateObject();
		const cJSON *pending = cJSON_GetObjectItemCaseSensitive(l.meta, "pending");
		double held = -1, refused = -1;
		(void)meta_num(pending, "held", &held);
		(void)meta_num(pending, "refused", &refused);
		if (o) {
			cJSON_AddItemToArray(list, o);
			(void)cJSON_AddStringToObject(o, "id", l.id);
			(void)cJSON_AddStringToObject(o, "state", state ? state : "?");
			(void)cJSON_AddStringToObject(o, "created", meta_str(l.meta, "created") ?: "?");
			(void)cJSON_AddStringToObject(o, "workspace", meta_str(l.meta, "workspace") ?: "?");
			if (held >= 0)
				(void)sup_json_add_num(o, "held", held);
			if (refused >= 0)
				(void)sup_json_add_num(o, "refused", refused);
		}
		if (!json) {
			char counts[64] = "";
			if (held >= 0 && refused >= 0)
				(void)snprintf(counts, sizeof(counts), "%.0f held, %.0f refused", held,
					       refused);
			(void)printf("%-24s %-11s %s  %-24s %s\n", l.id, state ? state : "?",
				     meta_str(l.meta, "created") ?: "?", counts,
				     meta_str(l.meta, "workspace") ?: "?");
		}
		loaded_done(&l);
	}
	if (d)
		(void)closedir(d);
	if (json) {
		_cleanup_free_ char *text = list ? cJSON_Print(list) : NULL;
		if (!text)
			return 4;
		(void)puts(text);
	}
	return EXIT_DONE;
}

/*
 * Common to diff and apply: loads ID, fills the spec, runs the walk; with diffs (a dry run
 * only), also the diffs of its files.
 */
static int walk_changeset(const char *id, bool apply, char *const *include, size_t n_include,
			  bool force, struct sup_chg_report *rep, struct sup_diff_list *diffs,
			  int *out_code)
{
	_cleanup_close_ int root = -1;
	int r = open_root_for_cmd(&root);
	if (r < 0) {
		if (r == -ENOENT)
			log_error("no changeset '%s' (there are none)", id);
		*out_code = r == -ENOENT ? EXIT_USAGE : 4;
		return r;
	}
	struct loaded l;
	r = load(root, id, apply, &l);
	if (r < 0) {
		*out_code = r == -ENOENT || r == -EINVAL ? EXIT_USAGE : 4;
		return log_errno(r, "changeset '%s'", id);
	}
	if (apply && l.busy) {
		loaded_done(&l);
		log_error("changeset '%s' belongs to a run that is still going", id);
		*out_code = EXIT_LOCKED;
		return -EBUSY;
	}
	bool privileged = sup_decide_privileged(sup_in_init_userns());
	struct sup_apply_spec spec = { .include = include, .n_include = n_include,
				       .force = force, .dry_run = !apply };
	_cleanup_free_ char **hold = NULL;
	_cleanup_close_ int ws = -1;
	_cleanup_close_ int upper = -1;
	r = spec_from_meta(l.meta, privileged, &spec, &hold);
	if (r >= 0)
		r = open_workspace(l.meta, &ws);
	if (r == -ESTALE || r == -ENOENT || r == -ELOOP)
		log_error("changeset '%s': its workspace '%s' is gone, moved or reached through a symlink",
			  id, meta_str(l.meta, "workspace") ?: "?");
	if (r >= 0) {
		upper = io_openat2(l.dir_fd, "layer/upper", O_RDONLY | O_DIRECTORY | O_NOFOLLOW,
				   RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS);
		r = upper < 0 ? upper : 0;
	}
	if (r >= 0) {
		spec.upper_fd = upper;
		spec.ws_fd = ws;
		r = sup_apply_run(&spec, rep);
	}
	if (r >= 0 && diffs && !apply) {
		r = sup_apply_diff(&spec, rep, diffs);
		if (r < 0) {
			sup_chg_report_done(rep);
			log_error("changeset '%s': could not compute its diff: %s", id, strerror(-r));
		}
	}
	if (r >= 0 && apply) {
		if (rep->n_held || rep->n_refused)
			r = update_meta(l.dir_fd, l.meta, rep, NULL);
		else
			r = remove_tree(root, l.id);
	}
	loaded_done(&l);
	if (r < 0) {
		*out_code = 4;
		return log_errno(r, "changeset '%s'", id);
	}
	*out_code = rep->n_held || rep->n_refused ? EXIT_PENDING : EXIT_DONE;
	return 0;
}

/*
 * One file's diff as `warden diff` shows it: mode lines as git writes them, the --- and +++
 * headers and the hunks (textdiff.h), or one line that says why there are none. The path
 * goes through sup_escape and the hunks through sup_textdiff_escape: the sandbox chose both,
 * and no byte of them reaches a terminal raw. A new string (the caller frees it), or NULL.
 */
static char *render_diff(const struct sup_chg_entry *e, const struct sup_file_diff *d)
{
	char q[PATH_MAX * 4 + 1];
	sup_escape(e->path, q, sizeof(q));
	_cleanup_free_ char *a = NULL, *b = NULL, *hunks = NULL;
	size_t hunks_len = 0;
	if (asprintf(&a, "%s%s", d->old_file ? "a/" : "", d->old_file ? q : "/dev/null") < 0) {
		a = NULL; /* asprintf leaves it undefined */
		return NULL;
	}
	if (asprintf(&b, "%s%s", d->new_file ? "b/" : "", d->new_file ? q : "/dev/null") < 0) {
		b = NULL;
		return NULL;
	}
	if (d->status == SUP_DIFF_TEXT &&
	    sup_textdiff_escape(d->text, d->text_len, &hunks, &hunks_len) < 0)
		return NULL;
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	if (!f)
		return NULL;
	if (d->status != SUP_DIFF_UNREADABLE) {
		if (d->old_file && d->new_file && d->old_mode != d->new_mode)
			(void)fprintf(f, "old mode %04o\nnew mode %04o\n", d->old_mode, d->new_mode);
		else if (!d->old_file)
			(void)fprintf(f, "new file mode %04o\n", d->new_mode);
		else if (!d->new_file)
			(void)fprintf(f, "deleted file mode %04o\n", d->old_mode);
	}
	switch (d->status) {
	case SUP_DIFF_TEXT:
		if (hunks_len || !d->old_file || !d->new_file)
			(void)fprintf(f, "--- %s\n+++ %s\n%s", a, b, hunks);
		break;
	case SUP_DIFF_BINARY:
		(void)fprintf(f, "Binary files %s and %s differ\n", a, b);
		break;
	case SUP_DIFF_TOO_LARGE:
		(void)fprintf(f, "Files %s and %s are too large to show (over %u KiB or %u lines)\n",
			      a, b, SUP_TEXTDIFF_MAX_BYTES >> 10, SUP_TEXTDIFF_MAX_LINES);
		break;
	case SUP_DIFF_UNREADABLE:
		(void)fprintf(f, "Files %s and %s could not be read: %s\n", a, b, strerror(-d->err));
		break;
	}
	if (fclose(f) != 0) {
		free(buf);
		return NULL;
	}
	return buf;
}

/* The diff of entry i, when diffs has one; *at walks diffs in step with the entries. */
static const struct sup_file_diff *diff_for(const struct sup_diff_list *diffs, size_t i,
					    size_t *at)
{
	if (!diffs || *at >= diffs->n || diffs->v[*at].index != i)
		return NULL;
	return &diffs->v[(*at)++];
}

/* Prints the report; diffs (may be NULL) in full unless stat_only. 0, or -ENOMEM. */
static int print_report(const struct sup_chg_report *rep, bool json, bool stat_only, bool dry,
			const struct sup_diff_list *diffs)
{
	size_t at = 0;
	if (stat_only)
		diffs = NULL;
	if (json) {
		_cleanup_(cJSON_Deletep) cJSON *a = cJSON_CreateArray();
		for (size_t i = 0; a && i < rep->n; i++) {
			cJSON *o = cJSON_CreateObject();
			if (!o)
				return -ENOMEM;
			cJSON_AddItemToArray(a, o);
			(void)cJSON_AddStringToObject(o, "path", rep->v[i].path);
			(void)cJSON_AddStringToObject(o, "kind", sup_chg_kind_name(rep->v[i].kind));
			(void)cJSON_AddStringToObject(o, "verdict",
						      sup_chg_verdict_name(rep->v[i].verdict));
			if (rep->v[i].reason)
				(void)cJSON_AddStringToObject(o, "reason", rep->v[i].reason);
			const struct sup_file_diff *d = diff_for(diffs, i, &at);
			if (d) {
				_cleanup_free_ char *text = render_diff(&rep->v[i], d);
				if (!text || !cJSON_AddStringToObject(o, "diff", text))
					return -ENOMEM;
			}
		}
		_cleanup_free_ char *text = a ? cJSON_Print(a) : NULL;
		if (!text)
			return -ENOMEM;
		(void)puts(text);
		return 0;
	}
	if (!stat_only) {
		for (size_t i = 0; i < rep->n; i++) {
			const struct sup_chg_entry *e = &rep->v[i];
			(void)printf("%-8s %-9s ", e->verdict == SUP_CHG_APPLIED && dry ? "apply"
						   : sup_chg_verdict_name(e->verdict),
				     sup_chg_kind_name(e->kind));
			char q[PATH_MAX * 4 + 1];
			sup_escape(e->path, q, sizeof(q));
			(void)printf("%s%s%s%s\n", q, e->reason ? "  (" : "", e->reason ? e->reason : "",
				     e->reason ? ")" : "");
		}
	}
	for (size_t i = 0; diffs && i < rep->n; i++) {
		const struct sup_file_diff *d = diff_for(diffs, i, &at);
		if (!d)
			continue;
		_cleanup_free_ char *text = render_diff(&rep->v[i], d);
		if (!text)
			return -ENOMEM;
		(void)printf("%s%s", i == diffs->v[0].index ? "\n" : "", text);
	}
	if (diffs && diffs->n)
		(void)putchar('\n');
	(void)printf("%zu %s, %zu held, %zu refused\n", rep->n_applied,
		     dry ? "to apply" : "applied", rep->n_held, rep->n_refused);
	return 0;
}

int sup_cmd_diff(int argc, char **argv)
{
	bool json = false, stat_only = false;
	_cleanup_(cli_done) struct cli cli = { 0 };
	if (cli_start(&cli, &diff_command, argc, argv) < 0)
		return 4;
	int key;
	while ((key = cli_next(&cli)) > 0) {
		if (key == OPT_STAT)
			stat_only = true;
		else
			json = true; /* OPT_JSON */
	}
	if (key == CLI_STOP)
		return cli.exit_code;
	const char *id = cli.operands[0];
	struct sup_chg_report rep = { 0 };
	struct sup_diff_list diffs = { 0 };
	int code;
	if (walk_changeset(id, false, NULL, 0, false, &rep, stat_only ? NULL : &diffs,
			   &code) < 0)
		return code;
	int r = print_report(&rep, json, stat_only, true, &diffs);
	sup_diff_list_done(&diffs);
	sup_chg_report_done(&rep);
	if (r < 0) {
		log_errno(r, "show changeset '%s'", id);
		return 4;
	}
	return EXIT_DONE;
}

int sup_cmd_apply(int argc, char **argv)
{
	_cleanup_free_ char **include = calloc((size_t)argc + 1, sizeof(char *));
	size_t n_include = 0;
	bool dry = false, force = false, json = false;
	if (!include)
		return 4;
	_cleanup_(cli_done) struct cli cli = { 0 };
	if (cli_start(&cli, &apply_command, argc, argv) < 0)
		return 4;
	int key;
	while ((key = cli_next(&cli)) > 0) {
		switch (key) {
		case OPT_INCLUDE:
			if (!cli.arg[0] || cli.arg[0] == '/')
				return cli_usage(&apply_command, "--include '%s': expected a "
						 "workspace-relative pattern", cli.arg);
			include[n_include++] = (char *)cli.arg;
			break;
		case OPT_DRY_RUN:
			dry = true;
			break;
		case OPT_FORCE:
			force = true;
			break;
		default: /* OPT_JSON */
			json = true;
			break;
		}
	}
	if (key == CLI_STOP)
		return cli.exit_code;
	const char *id = cli.operands[0];
	struct sup_chg_report rep = { 0 };
	int code;
	if (walk_changeset(id, !dry, include, n_include, force, &rep, NULL, &code) < 0)
		return code;
	int r = print_report(&rep, json, false, dry, NULL);
	sup_chg_report_done(&rep);
	if (r < 0) {
		log_errno(r, "show changeset '%s'", id);
		return 4;
	}
	return code;
}

int sup_cmd_discard(int argc, char **argv)
{
	_cleanup_(cli_done) struct cli cli = { 0 };
	if (cli_start(&cli, &discard_command, argc, argv) < 0)
		return 4;
	if (cli_next(&cli) == CLI_STOP)
		return cli.exit_code;
	const char *id = cli.operands[0];
	_cleanup_close_ int root = -1;
	int r = open_root_for_cmd(&root);
	if (r < 0) {
		log_error("no changeset '%s'", id);
		return r == -ENOENT ? EXIT_USAGE : 4;
	}
	struct loaded l;
	r = load(root, id, true, &l);
	if (r < 0 && r != -EBADMSG) {
		log_errno(r, "changeset '%s'", id);
		return r == -ENOENT || r == -EINVAL ? EXIT_USAGE : 4;
	}
	if (r >= 0 && l.busy) {
		loaded_done(&l);
		log_error("changeset '%s' belongs to a run that is still going", id);
		return EXIT_LOCKED;
	}
	if (r >= 0)
		loaded_done(&l);
	r = remove_tree(root, id);
	if (r < 0) {
		log_errno(r, "remove changeset '%s'", id);
		return 4;
	}
	return EXIT_DONE;
}
