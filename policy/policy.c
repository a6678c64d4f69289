/* SPDX-License-Identifier: MIT */
/*
 * The policy parser: YAML bytes to a validated struct pol_policy.
 *
 * Two passes over the bytes the caller hands us:
 *
 *  1. load (yaml-util.c, under pol_policy_limits): libyaml's event API builds a small tree of
 *     scalars, sequences and mappings. This pass owns every generic rule: exactly one
 *     document, no anchors, aliases, tags or directives, bounded nesting depth, list length,
 *     string length and event count, and no NUL byte inside a scalar. Nothing
 *     schema-specific happens here.
 *  2. apply: walks the tree against the schema tables below, validates every value and writes
 *     it into a struct pol_policy. Unknown keys, duplicate keys and wrong node types are
 *     errors; nothing is skipped or repaired. A tree can also come from another document:
 *     pol_parse_tree() applies a policy written inline in a task file (task.c).
 *
 * Layers: the embedded default is applied first, then the files the caller's file extends
 * (innermost first, fetched through the caller's loader), then the caller's file. A field a
 * layer leaves out keeps the earlier value and a list a layer gives replaces the earlier list.
 * Within a file, `extends` is followed first and `unsafe` is applied next, wherever they stand,
 * so every bind is judged against the weakenings the file ends up with. Rules that tie two
 * fields together (host id range, allow_create within protect, allow/deny overlap, seccomp
 * rules against the lists, binds against unsafe) are checked in each layer against the
 * merged values, so no layer can leave an inconsistent policy behind.
 *
 * Pure code: no file I/O, no syscalls, no global state. Every error fills struct pol_diag.
 */
#include <assert.h>
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cleanup.h"
#include "policy.h"
#include "str-util.h"
#include "yaml-util.h"

/* Defined in the policy-default.c that embed.py generates from default.yaml. */
extern const char pol_default_yaml_data[];
extern const size_t pol_default_yaml_len;

#define DEFAULT_NAME "<default>"

/* Value ranges the schema enforces. */
#define UID_MIN 1u
#define UID_MAX 65534u             /* 65535 is (uint16_t)-1, the historic "no id" */
#define HOST_ID_BASE_MIN 1000u     /* never a host system account */
#define HOST_ID_END_MAX UINT32_MAX /* base + count; the last id stays below (uid_t)-1 */
#define USER_NAME_MAX 32u
#define HOSTNAME_MAX 64u           /* HOST_NAME_MAX */
#define SYSCALL_NAME_MAX 64u
#define PIDS_MAX 4194304u          /* PID_MAX_LIMIT on 64-bit kernels */
#define NOFILE_MAX 2147483584u     /* the kernel's ceiling for fs.nr_open */
#define CPUS_MAX 8192u             /* largest CONFIG_NR_CPUS; a higher quota means nothing */
#define VALUE_MAX ((uint64_t)INT64_MAX) /* sizes and times stay clear of RLIM_INFINITY */
#define SECCOMP_ARGS 6u            /* syscall arguments a condition can name */

/* The generic limits of the policy language (see policy.h), for the tree loader. */
const struct pol_yaml_limits pol_policy_limits = {
	.max_depth = POL_MAX_DEPTH,
	.max_list = POL_MAX_LIST,
	.max_string = POL_MAX_STRING,
	.max_events = POL_MAX_EVENTS,
	.what = "policy",
	.root_expected = "a mapping of policy sections",
};

/* ------------------------------------------------------------------------------------------ */
/* Pass 2: tree to struct pol_policy                                                          */

static void binds_free(struct pol_bind *b, size_t n)
{
	if (!b)
		return;
	for (size_t i = 0; i < n; i++) {
		free(b[i].src);
		free(b[i].dst);
	}
	free(b);
}

/* ---- strings ---- */

static bool is_lower_name_char(char c, bool first)
{
	if ((c >= 'a' && c <= 'z') || c == '_')
		return true;
	return !first && ((c >= '0' && c <= '9') || c == '-');
}

static int fld_user_name(const struct pol_walker *w, void *target, const struct pol_field *f,
			 const char *label, const struct pol_node *v)
{
	static const char expected[] = "a name matching [a-z_][a-z0-9_-]{0,31}";
	struct pol_qbuf q;
	size_t len;
	int r = pol_want_scalar(w, label, v, expected);
	if (r < 0)
		return r;
	len = strlen(v->str);
	if (len == 0)
		return pol_fail(w, v, "%s '' is not a valid user name (expected %s)", label, expected);
	if (len > USER_NAME_MAX)
		return pol_fail(w, v, "%s '%s' is longer than %u characters (expected %s)", label,
				pol_quote(&q, v->str), USER_NAME_MAX, expected);
	for (size_t i = 0; i < len; i++)
		if (!is_lower_name_char(v->str[i], i == 0))
			return pol_fail(w, v, "%s '%s' is not a valid user name (expected %s)", label,
					pol_quote(&q, v->str), expected);
	return pol_replace_string(w, target, f->off, v->str);
}

static int fld_hostname(const struct pol_walker *w, void *target, const struct pol_field *f,
			const char *label, const struct pol_node *v)
{
	static const char expected[] = "1 to 64 characters of A-Z, a-z, 0-9, '-' and '.'";
	struct pol_qbuf q;
	size_t len;
	int r = pol_want_scalar(w, label, v, expected);
	if (r < 0)
		return r;
	len = strlen(v->str);
	if (len == 0)
		return pol_fail(w, v, "%s '' is not a valid hostname (expected %s)", label, expected);
	if (len > HOSTNAME_MAX)
		return pol_fail(w, v, "%s '%s' is longer than %u characters (expected %s)", label,
				pol_quote(&q, v->str), HOSTNAME_MAX, expected);
	for (size_t i = 0; i < len; i++) {
		char c = v->str[i];
		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
		      c == '-' || c == '.'))
			return pol_fail(w, v, "%s '%s' is not a valid hostname (expected %s)", label,
					pol_quote(&q, v->str), expected);
	}
	return pol_replace_string(w, target, f->off, v->str);
}

/*
 * A bind must never hide something the sandbox guarantees: the root, the private /tmp, the
 * workspace mount, and the synthetic /etc/passwd and /etc/group (with /etc as a whole). No
 * unsafe key lifts this. Binding below /tmp or /workspace is fine.
 */
static bool bind_dst_covers_guarantee(const char *dst)
{
	static const char *const exact[] = {
		"/", "/tmp", "/workspace", "/etc", "/etc/passwd", "/etc/group",
	};

	for (size_t i = 0; i < ELEMENTSOF(exact); i++)
		if (streq(dst, exact[i]))
			return true;
	return false;
}

/* The host's kernel interfaces: for binds (kernel_fs_of) and host paths (pol_host_path_risk). */
static const char *const kernel_trees[] = { "/proc", "/dev", "/sys" };

/* "/proc", "/dev" or "/sys" when path is one of them or below, else NULL. */
static const char *kernel_fs_of(const char *path)
{
	for (size_t i = 0; i < ELEMENTSOF(kernel_trees); i++)
		if (streq(path, kernel_trees[i]) || pol_path_is_under(path, kernel_trees[i]))
			return kernel_trees[i];
	return NULL;
}

/* True iff path is absolute and normalised: no empty, "." or ".." component, no trailing '/'. */
static bool host_path_normalised(const char *path)
{
	if (path[0] != '/')
		return false;
	if (path[1] == '\0')
		return true;
	for (const char *c = path + 1;;) {
		size_t n = strcspn(c, "/");
		if (n == 0 || (n == 1 && c[0] == '.') || (n == 2 && c[0] == '.' && c[1] == '.'))
			return false;
		if (c[n] == '\0')
			return true;
		c += n + 1;
	}
}

/* True iff the first top_len bytes of path (its first component with the '/') are tree. */
static bool top_is(const char *path, size_t top_len, const char *tree)
{
	return strlen(tree) == top_len && strncmp(path, tree, top_len) == 0;
}

/*
 * The host's own trees by their first component. A sandbox handed one of them (or "/", which
 * holds them all) as a bind source or a workspace gets the host's programs, configuration,
 * kernel interfaces or service sockets, so only a named weakening lets one through. See
 * policy.h.
 */
enum pol_host_path pol_host_path_risk(const char *path, size_t *out_top_len)
{
	static const char *const system_trees[] = { "/etc", "/usr", "/bin", "/sbin", "/boot" };
	static const char *const shared_tops[] = { "/var", "/home" };
	enum pol_host_path risk = POL_HOST_PATH_OK;
	size_t top;

	if (!path || strnlen(path, PATH_MAX) >= PATH_MAX || !host_path_normalised(path))
		return POL_HOST_PATH_INVALID;
	if (path[1] == '\0') {
		top = 1;
		risk = POL_HOST_PATH_ROOT;
	} else {
		top = 1 + strcspn(path + 1, "/");
		for (size_t i = 0; i < ELEMENTSOF(kernel_trees); i++)
			if (top_is(path, top, kernel_trees[i]))
				risk = POL_HOST_PATH_KERNEL;
		for (size_t i = 0; i < ELEMENTSOF(system_trees); i++)
			if (top_is(path, top, system_trees[i]))
				risk = POL_HOST_PATH_SYSTEM;
		/* /lib, /lib32, /lib64, /libx32 and whatever else a distribution names so. */
		if (strncmp(path, "/lib", 4) == 0)
			risk = POL_HOST_PATH_SYSTEM;
		if (top_is(path, top, "/run"))
			risk = POL_HOST_PATH_RUNTIME;
		for (size_t i = 0; i < ELEMENTSOF(shared_tops); i++)
			if (path[top] == '\0' && top_is(path, top, shared_tops[i]))
				risk = POL_HOST_PATH_SHARED;
	}
	if (out_top_len)
		*out_top_len = top;
	return risk;
}

/*
 * Container runtime sockets: whoever can connect to one can start a privileged container, so
 * handing one to the sandbox is handing it the host. A read-only bind does not help (connect()
 * needs no write access to the mount). Directories that hold one of the well-known sockets are
 * refused too, lexically; "/" is bind-host-root's business.
 */
static const char *const runtime_sockets[] = {
	"/run/docker.sock",
	"/var/run/docker.sock",
	"/run/containerd/containerd.sock",
	"/var/run/containerd/containerd.sock",
	"/run/podman/podman.sock",
	"/var/run/podman/podman.sock",
	"/run/crio/crio.sock",
	"/var/run/crio/crio.sock",
};

static bool has_suffix(const char *s, const char *suffix)
{
	size_t n = strlen(s), k = strlen(suffix);
	return n >= k && streq(s + n - k, suffix);
}

static bool is_runtime_socket(const char *src)
{
	static const char *const suffixes[] = {
		"docker.sock", "containerd.sock", "podman.sock", "crio.sock",
	};

	for (size_t i = 0; i < ELEMENTSOF(runtime_sockets); i++)
		if (streq(src, runtime_sockets[i]))
			return true;
	for (size_t i = 0; i < ELEMENTSOF(suffixes); i++)
		if (has_suffix(src, suffixes[i]))
			return true;
	return false;
}

/* The first well-known runtime socket below the directory src, or NULL. */
static const char *runtime_socket_below(const char *src)
{
	if (streq(src, "/"))
		return NULL;
	for (size_t i = 0; i < ELEMENTSOF(runtime_sockets); i++)
		if (pol_path_is_under(runtime_sockets[i], src))
			return runtime_sockets[i];
	return NULL;
}

/* What a bind needs from unsafe, in the order the checks run. */
enum bind_risk {
	RISK_NONE,
	RISK_HOST_ROOT,    /* src is / */
	RISK_KERNEL_SRC,   /* src is /proc, /dev, /sys or below */
	RISK_SOCKET,       /* src is a container runtime socket */
	RISK_SOCKET_DIR,   /* src holds a well-known runtime socket */
	RISK_KERNEL_DST,   /* dst is /proc, /dev, /sys or below */
};

/* The first risk of b that unsafe does not allow; *out_detail names the tree or socket. */
static enum bind_risk bind_risk(const struct pol_bind *b, uint32_t unsafe, const char **out_detail)
{
	const char *d;

	*out_detail = NULL;
	if (pol_host_path_risk(b->src, NULL) == POL_HOST_PATH_ROOT &&
	    !(unsafe & POL_UNSAFE_BIND_HOST_ROOT))
		return RISK_HOST_ROOT;
	if ((d = kernel_fs_of(b->src)) && !(unsafe & POL_UNSAFE_BIND_KERNEL_FS)) {
		*out_detail = d;
		return RISK_KERNEL_SRC;
	}
	if (!(unsafe & POL_UNSAFE_BIND_SOCKET)) {
		if (is_runtime_socket(b->src))
			return RISK_SOCKET;
		if ((d = runtime_socket_below(b->src))) {
			*out_detail = d;
			return RISK_SOCKET_DIR;
		}
	}
	if ((d = kernel_fs_of(b->dst)) && !(unsafe & POL_UNSAFE_BIND_KERNEL_FS)) {
		*out_detail = d;
		return RISK_KERNEL_DST;
	}
	return RISK_NONE;
}

static uint32_t bind_risk_bit(enum bind_risk risk)
{
	switch (risk) {
	case RISK_HOST_ROOT:
		return POL_UNSAFE_BIND_HOST_ROOT;
	case RISK_KERNEL_SRC:
	case RISK_KERNEL_DST:
		return POL_UNSAFE_BIND_KERNEL_FS;
	case RISK_SOCKET:
	case RISK_SOCKET_DIR:
		return POL_UNSAFE_BIND_SOCKET;
	case RISK_NONE:
		break;
	}
	return 0;
}

/* Refuses bind b (binds[index], from the mapping item) unless unsafe allows all it needs. */
static int check_bind_risk(const struct pol_walker *w, const char *label, const struct pol_node *item,
			   const struct pol_bind *b, uint32_t unsafe)
{
	const struct pol_node *src = pol_map_get(item, "src"), *dst = pol_map_get(item, "dst");
	const char *detail;
	struct pol_qbuf q;

	assert(src && dst);
	switch (bind_risk(b, unsafe, &detail)) {
	case RISK_NONE:
		return 0;
	case RISK_HOST_ROOT:
		return pol_fail(w, src,
				"%s.src '/' would expose the whole host (expected a narrower path, or unsafe: [bind-host-root])",
				label);
	case RISK_KERNEL_SRC:
		return pol_fail(w, src,
				"%s.src '%s' would expose the host's %s (expected a path outside /proc, /dev and /sys, or unsafe: [bind-kernel-fs])",
				label, pol_quote(&q, b->src), detail);
	case RISK_SOCKET:
		return pol_fail(w, src,
				"%s.src '%s' is a container runtime socket, which controls the host (expected another path, or unsafe: [bind-container-socket])",
				label, pol_quote(&q, b->src));
	case RISK_SOCKET_DIR:
		return pol_fail(w, src,
				"%s.src '%s' holds the container runtime socket %s (expected a narrower path, or unsafe: [bind-container-socket])",
				label, pol_quote(&q, b->src), detail);
	case RISK_KERNEL_DST:
		return pol_fail(w, dst,
				"%s.dst '%s': bind target would cover a guarantee, the sandbox's own %s (expected a path outside /proc, /dev and /sys, or unsafe: [bind-kernel-fs])",
				label, pol_quote(&q, b->dst), detail);
	}
	return pol_fail(w, item, "%s is not allowed (expected a safe bind)", label);
}

static int fld_bind_src(const struct pol_walker *w, void *target, const struct pol_field *f,
			const char *label, const struct pol_node *v)
{
	char *resolved = NULL;
	int r = pol_want_scalar(w, label, v, "an absolute path, or one relative to the policy file");
	if (r < 0)
		return r;
	if (v->str[0] != '/') {
		r = pol_resolve_relative(w, label, v, &resolved);
		if (r < 0)
			return r;
		char **slot = POL_FIELD_PTR(target, f->off, char *);
		free(*slot);
		*slot = resolved;
		return 0;
	}
	r = pol_check_abs_path(w, label, v);
	if (r < 0)
		return r;
	return pol_replace_string(w, target, f->off, v->str);
}

static int fld_bind_dst(const struct pol_walker *w, void *target, const struct pol_field *f,
			const char *label, const struct pol_node *v)
{
	struct pol_qbuf q;
	int r = pol_check_abs_path(w, label, v);
	if (r < 0)
		return r;
	if (bind_dst_covers_guarantee(v->str))
		return pol_fail(w, v,
				"%s '%s': bind target would cover a guarantee (expected a path other than /, /tmp, /workspace, /etc, /etc/passwd and /etc/group)",
				label, pol_quote(&q, v->str));
	return pol_replace_string(w, target, f->off, v->str);
}

static int fld_bind_mode(const struct pol_walker *w, void *target, const struct pol_field *f,
			 const char *label, const struct pol_node *v)
{
	static const char *const names[] = { [POL_BIND_RO] = "ro", [POL_BIND_RW] = "rw" };
	size_t i;
	int r = pol_want_word(w, label, v, names, ELEMENTSOF(names), "bind mode", "ro or rw", &i);
	if (r < 0)
		return r;
	*POL_FIELD_PTR(target, f->off, enum pol_bind_mode) = (enum pol_bind_mode)i;
	return 0;
}

/* ---- list entries ---- */

static int check_etc_entry(const struct pol_walker *w, const char *label, const struct pol_node *item)
{
	struct pol_qbuf q;
	int r = pol_check_rel_path(w, label, item);
	if (r < 0)
		return r;
	/* The sandbox writes its own passwd and group; a host copy must not replace them. */
	if (streq(item->str, "passwd") || streq(item->str, "group"))
		return pol_fail(w, item,
				"%s '%s' would cover a guarantee (expected an entry other than passwd and group, which are synthetic)",
				label, pol_quote(&q, item->str));
	return 0;
}

static int check_env_set(const struct pol_walker *w, const char *label, const struct pol_node *item)
{
	static const char expected[] = "NAME=value with NAME matching [A-Za-z_][A-Za-z0-9_]*";
	struct pol_qbuf q;
	const char *eq;
	int r = pol_want_scalar(w, label, item, expected);
	if (r < 0)
		return r;
	eq = strchr(item->str, '=');
	if (!eq)
		return pol_fail(w, item, "%s '%s' has no '=' (expected %s)", label, pol_quote(&q, item->str),
				expected);
	if (!pol_is_env_name(item->str, (size_t)(eq - item->str)))
		return pol_fail(w, item, "%s '%s' has an invalid variable name (expected %s)", label,
				pol_quote(&q, item->str), expected);
	return 0;
}

static int check_syscall(const struct pol_walker *w, const char *label, const struct pol_node *item)
{
	static const char expected[] = "a syscall name matching [a-z0-9_]+";
	struct pol_qbuf q;
	size_t len;
	int r = pol_want_scalar(w, label, item, expected);
	if (r < 0)
		return r;
	len = strlen(item->str);
	if (len == 0)
		return pol_fail(w, item, "%s '' is not a syscall name (expected %s)", label, expected);
	if (len > SYSCALL_NAME_MAX)
		return pol_fail(w, item, "%s '%s' is longer than %u characters (expected %s)", label,
				pol_quote(&q, item->str), SYSCALL_NAME_MAX, expected);
	for (size_t i = 0; i < len; i++) {
		char c = item->str[i];
		if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_'))
			return pol_fail(w, item, "%s '%s' is not a syscall name (expected %s)", label,
					pol_quote(&q, item->str), expected);
	}
	return 0;
}

static const struct {
	const char *name;
	uint32_t bit;
} unsafe_names[] = {
	{ "no-cgroup", POL_UNSAFE_NO_CGROUP },
	{ "io_uring", POL_UNSAFE_IO_URING },
	{ "bind-host-root", POL_UNSAFE_BIND_HOST_ROOT },
	{ "bind-container-socket", POL_UNSAFE_BIND_SOCKET },
	{ "bind-kernel-fs", POL_UNSAFE_BIND_KERNEL_FS },
	{ "workspace-anywhere", POL_UNSAFE_WORKSPACE_ANYWHERE },
};

#define UNSAFE_EXPECTED "one of: no-cgroup, io_uring, bind-host-root, bind-container-socket, bind-kernel-fs, workspace-anywhere"

static int check_unsafe(const struct pol_walker *w, const char *label, const struct pol_node *item)
{
	struct pol_qbuf q;
	int r = pol_want_scalar(w, label, item, UNSAFE_EXPECTED);
	if (r < 0)
		return r;
	for (size_t i = 0; i < ELEMENTSOF(unsafe_names); i++)
		if (streq(item->str, unsafe_names[i].name))
			return 0;
	return pol_fail(w, item, "%s '%s' is not a known weakening (expected %s)", label,
			pol_quote(&q, item->str), UNSAFE_EXPECTED);
}

/*
 * Linux capability names (without CAP_, lower case) up to CAP_CHECKPOINT_RESTORE. A refused
 * one would undo a guarantee even inside the sandbox's user namespace: it reaches the host
 * kernel (module, rawio, boot, time, syslog, bpf, perfmon, mac_*), escapes the mount or
 * process isolation (sys_admin, sys_chroot, sys_ptrace, dac_read_search's open_by_handle_at),
 * re-grants capabilities (setpcap, setfcap), defeats file protections (linux_immutable),
 * changes what the host audits or keeps awake (audit_control, block_suspend, wake_alarm), or
 * reconfigures the network the sandbox is confined to (net_admin).
 */
static const struct {
	const char *name;
	bool refused;
} cap_names[] = {
	{ "chown", false },           { "dac_override", false },    { "dac_read_search", true },
	{ "fowner", false },          { "fsetid", false },          { "kill", false },
	{ "setgid", false },          { "setuid", false },          { "setpcap", true },
	{ "linux_immutable", true },  { "net_bind_service", false }, { "net_broadcast", false },
	{ "net_admin", true },        { "net_raw", false },         { "ipc_lock", false },
	{ "ipc_owner", false },       { "sys_module", true },       { "sys_rawio", true },
	{ "sys_chroot", true },       { "sys_ptrace", true },       { "sys_pacct", false },
	{ "sys_admin", true },        { "sys_boot", true },         { "sys_nice", false },
	{ "sys_resource", false },    { "sys_time", true },         { "sys_tty_config", false },
	{ "mknod", false },           { "lease", false },           { "audit_write", false },
	{ "audit_control", true },    { "setfcap", true },          { "mac_override", true },
	{ "mac_admin", true },        { "syslog", true },           { "wake_alarm", true },
	{ "block_suspend", true },    { "audit_read", false },      { "perfmon", true },
	{ "bpf", true },              { "checkpoint_restore", false },
};

/* "one of: chown, dac_override, ..." listing the capabilities a policy may keep. */
static void allowed_caps(char *buf, size_t size)
{
	size_t o = 0;
	int k = snprintf(buf, size, "one of:");

	if (k < 0)
		return;
	o = (size_t)k;
	for (size_t i = 0; i < ELEMENTSOF(cap_names) && o < size; i++) {
		if (cap_names[i].refused)
			continue;
		k = snprintf(buf + o, size - o, "%s %s", o > 7 ? "," : "", cap_names[i].name);
		if (k < 0)
			break;
		o += (size_t)k;
	}
}

static int check_cap(const struct pol_walker *w, const char *label, const struct pol_node *item)
{
	char allowed[320];
	struct pol_qbuf q;
	int r;

	allowed_caps(allowed, sizeof(allowed));
	r = pol_want_scalar(w, label, item, allowed);
	if (r < 0)
		return r;
	for (size_t i = 0; i < ELEMENTSOF(cap_names); i++) {
		if (!streq(item->str, cap_names[i].name))
			continue;
		if (cap_names[i].refused)
			return pol_fail(w, item, "%s '%s' would undo the sandbox (expected %s)", label,
					cap_names[i].name, allowed);
		return 0;
	}
	return pol_fail(w, item,
			"%s '%s' is not a Linux capability name (expected a lower-case name without CAP_, %s)",
			label, pol_quote(&q, item->str), allowed);
}

/*
 * A filesystem.protect entry: a relative path normalised like allow_create's, which may end in
 * one '/' to say that it names a directory (a missing one is then covered by an empty directory
 * rather than an empty file). The entry is stored as written, '/' included.
 */
static int check_protect(const struct pol_walker *w, const char *label, const struct pol_node *item)
{
	char body[PATH_MAX];
	size_t len;
	int r = pol_want_scalar(w, label, item, "a relative path");
	if (r < 0)
		return r;
	len = strlen(item->str);
	/* Anything but "name/" gets the ordinary checks (and their messages). */
	if (len < 2 || len >= PATH_MAX || item->str[0] == '/' || item->str[len - 1] != '/')
		return pol_check_rel_path(w, label, item);
	memcpy(body, item->str, len - 1);
	body[len - 1] = '\0';
	return pol_path_flaw_fail(w, label, item, pol_path_flaw(body));
}

/* True when protect has s, with or without the trailing '/' that marks a directory. */
static bool protect_has(const struct pol_policy *p, const char *s)
{
	size_t len = strlen(s);
	for (size_t i = 0; i < p->n_protect; i++)
		if (strncmp(p->protect[i], s, len) == 0 &&
		    (p->protect[i][len] == '\0' || streq(&p->protect[i][len], "/")))
			return true;
	return false;
}

/*
 * A filesystem.hide pattern: workspace-relative and normalised like protect, with fnmatch(3)
 * wildcards (*, ?, [...]) inside a component and "**" (any number of directories) as a whole
 * component. Backslash escapes are refused so that a pattern means the same to every reader.
 * The component and "**" bounds keep matching cheap and let the matcher split any pattern.
 */
static int check_hide(const struct pol_walker *w, const char *label, const struct pol_node *item)
{
	static const char expected[] = "a workspace-relative pattern like **/.env or secrets/*.pem";
	struct pol_qbuf q;
	size_t len, n_comp = 0, n_globstar = 0;
	bool prev_globstar = false;
	int r = pol_want_scalar(w, label, item, expected);
	if (r < 0)
		return r;
	len = strlen(item->str);
	if (item->str[0] == '/')
		return pol_fail(w, item, "%s '%s' is absolute (expected a relative pattern without leading /)",
				label, pol_quote(&q, item->str));
	if (len >= PATH_MAX)
		return pol_fail(w, item, "%s is %zu bytes long (expected less than %d)", label, len, PATH_MAX);
	r = pol_path_flaw_fail(w, label, item, pol_path_flaw(item->str));
	if (r < 0)
		return r;
	if (strchr(item->str, '\\'))
		return pol_fail(w, item, "%s '%s' has a backslash (expected a pattern without escapes)",
				label, pol_quote(&q, item->str));

	for (const char *c = item->str;;) {
		const char *slash = strchr(c, '/');
		size_t clen = slash ? (size_t)(slash - c) : strlen(c);
		bool globstar = clen == 2 && c[0] == '*' && c[1] == '*';

		if (++n_comp > POL_MAX_PATTERN_COMPONENTS)
			return pol_fail(w, item, "%s has more than %u components (expected at most %u)",
					label, (unsigned)POL_MAX_PATTERN_COMPONENTS,
					(unsigned)POL_MAX_PATTERN_COMPONENTS);
		if (globstar) {
			if (prev_globstar)
				return pol_fail(w, item, "%s '%s' has ** twice in a row (expected one ** where any number of directories may be)",
						label, pol_quote(&q, item->str));
			if (++n_globstar > POL_MAX_PATTERN_GLOBSTARS)
				return pol_fail(w, item, "%s '%s' has more than %u ** components (expected at most %u)",
						label, pol_quote(&q, item->str),
						(unsigned)POL_MAX_PATTERN_GLOBSTARS,
						(unsigned)POL_MAX_PATTERN_GLOBSTARS);
		}
		prev_globstar = globstar;
		for (size_t i = 0; i < clen && !globstar; i++) {
			size_t j = i + 1;
			if (c[i] == '*' && i + 1 < clen && c[i + 1] == '*')
				return pol_fail(w, item, "%s '%s' has ** inside a component (expected ** only as a whole component, like **/.env)",
						label, pol_quote(&q, item->str));
			if (c[i] != '[')
				continue;
			/* [!...] and [^...] negate; a ']' right after the opening is a literal */
			if (j < clen && (c[j] == '!' || c[j] == '^'))
				j++;
			if (j < clen && c[j] == ']')
				j++;
			while (j < clen && c[j] != ']')
				j++;
			if (j >= clen)
				return pol_fail(w, item, "%s '%s' has an unbalanced '[' (expected a character class closed by ] within its component)",
						label, pol_quote(&q, item->str));
			i = j;
		}
		if (!slash)
			break;
		c = slash + 1;
	}
	return 0;
}

static const struct pol_field bind_fields[] = {
	{ .key = "src", .fn = fld_bind_src, .off = offsetof(struct pol_bind, src) },
	{ .key = "dst", .fn = fld_bind_dst, .off = offsetof(struct pol_bind, dst) },
	{ .key = "mode", .fn = fld_bind_mode, .off = offsetof(struct pol_bind, mode) },
	{ .key = "optional", .fn = pol_fld_bool, .off = offsetof(struct pol_bind, optional) },
};

/*
 * filesystem.binds. Each bind is checked against p->unsafe, which already holds this file's
 * final weakenings (apply_file applies unsafe before the rest of the file).
 */
static int fld_binds(const struct pol_walker *w, void *target, const struct pol_field *f,
		     const char *label, const struct pol_node *v)
{
	struct pol_policy *p = target;
	struct pol_bind *binds = NULL;
	size_t n = 0;
	int r = pol_want_seq(w, label, v);
	if (r < 0)
		return r;
	(void)f;

	binds = calloc(v->n_kids ? v->n_kids : 1, sizeof(*binds));
	if (!binds)
		return pol_walk_enomem(w);
	for (; n < v->n_kids; n++) {
		const struct pol_node *item = v->kids[n];
		char item_label[POL_LABEL_MAX];
		struct pol_bind *b = &binds[n];
		struct pol_qbuf q;

		(void)snprintf(item_label, sizeof(item_label), "%s[%zu]", label, n);
		b->mode = POL_BIND_RO; /* the safe default when mode is left out */
		r = pol_walk_map(w, b, item_label, item, bind_fields, ELEMENTSOF(bind_fields));
		if (r >= 0 && (!b->src || !b->dst))
			r = pol_fail(w, item, "%s has no %s (expected a mapping with src and dst)",
				     item_label, b->src ? "dst" : "src");
		if (r >= 0)
			r = check_bind_risk(w, item_label, item, b, p->unsafe);
		for (size_t j = 0; r >= 0 && j < n; j++)
			if (streq(binds[j].dst, b->dst))
				r = pol_fail(w, item,
					     "%s binds '%s' again (expected each dst once; first at line %u)",
					     item_label, pol_quote(&q, b->dst), v->kids[j]->line);
		if (r < 0) {
			binds_free(binds, n + 1);
			return r;
		}
	}

	binds_free(p->binds, p->n_binds);
	p->binds = binds;
	p->n_binds = n;
	return 0;
}

/* A list held outside struct pol_policy, so pol_fld_str_list can fill it. */
struct strv_tmp {
	char **v;
	size_t n;
};

static int fld_unsafe(const struct pol_walker *w, void *target, const struct pol_field *f,
		      const char *label, const struct pol_node *v)
{
	struct pol_policy *p = target;
	struct strv_tmp tmp = { NULL, 0 };
	struct pol_field lf = *f;
	uint32_t bits = 0;
	int r;

	/* Validate and reject duplicates with the generic list code, then keep only the bits. */
	lf.off = offsetof(struct strv_tmp, v);
	lf.n_off = offsetof(struct strv_tmp, n);
	r = pol_fld_str_list(w, &tmp, &lf, label, v);
	if (r < 0)
		return r;
	for (size_t i = 0; i < tmp.n; i++)
		for (size_t j = 0; j < ELEMENTSOF(unsafe_names); j++)
			if (streq(tmp.v[i], unsafe_names[j].name))
				bits |= unsafe_names[j].bit;
	pol_strv_free(tmp.v, tmp.n);
	p->unsafe = bits;
	return 0;
}

static const struct pol_field unsafe_field = {
	.key = "unsafe", .fn = fld_unsafe, .check = check_unsafe,
};

/* extends and unsafe are applied by apply_file before the rest of their file. */
static int fld_applied_early(const struct pol_walker *w, void *target, const struct pol_field *f,
			     const char *label, const struct pol_node *v)
{
	(void)w, (void)target, (void)f, (void)label, (void)v;
	return 0;
}

/* ---- sections ---- */

static const struct pol_field host_id_fields[] = {
	{ .key = "base", .fn = pol_fld_number, .off = offsetof(struct pol_policy, host_id_base),
	  .unit = POL_UNIT_U32, .min = HOST_ID_BASE_MIN, .max = UINT32_MAX - 1 },
	{ .key = "count", .fn = pol_fld_number, .off = offsetof(struct pol_policy, host_id_count),
	  .unit = POL_UNIT_U32, .min = 1, .max = UINT32_MAX - HOST_ID_BASE_MIN },
};

static int fld_host_ids(const struct pol_walker *w, void *target, const struct pol_field *f,
			const char *label, const struct pol_node *v)
{
	const struct pol_policy *p = target;
	int r = pol_walk_map(w, target, label, v, host_id_fields, ELEMENTSOF(host_id_fields));
	if (r < 0)
		return r;
	(void)f;
	/* Checked on the merged values: a file may change base or count alone. */
	if ((uint64_t)p->host_id_base + p->host_id_count > HOST_ID_END_MAX)
		return pol_fail(w, v,
				"%s base %" PRIu32 " + count %" PRIu32 " overflows (expected base + count <= %" PRIu32 ")",
				label, p->host_id_base, p->host_id_count, (uint32_t)HOST_ID_END_MAX);
	return 0;
}

static const struct pol_field user_fields[] = {
	{ .key = "uid", .fn = pol_fld_number, .off = offsetof(struct pol_policy, uid),
	  .unit = POL_UNIT_U32, .min = UID_MIN, .max = UID_MAX },
	{ .key = "gid", .fn = pol_fld_number, .off = offsetof(struct pol_policy, gid),
	  .unit = POL_UNIT_U32, .min = UID_MIN, .max = UID_MAX },
	{ .key = "name", .fn = fld_user_name, .off = offsetof(struct pol_policy, user_name) },
	{ .key = "host_ids", .fn = fld_host_ids },
};

static int fld_user(const struct pol_walker *w, void *target, const struct pol_field *f,
		    const char *label, const struct pol_node *v)
{
	(void)f;
	return pol_walk_map(w, target, label, v, user_fields, ELEMENTSOF(user_fields));
}

#define STR_LIST(k, member, checker)                                            \
	{ .key = (k), .fn = pol_fld_str_list, .off = offsetof(struct pol_policy, member), \
	  .n_off = offsetof(struct pol_policy, n_##member), .check = (checker) }

static const struct pol_field filesystem_fields[] = {
	{ .key = "binds", .fn = fld_binds },
	{ .key = "etc", .fn = pol_fld_str_list, .off = offsetof(struct pol_policy, etc_files),
	  .n_off = offsetof(struct pol_policy, n_etc_files), .check = check_etc_entry },
	STR_LIST("protect", protect, check_protect),
	STR_LIST("allow_create", allow_create, pol_check_rel_path),
	STR_LIST("hide", hide, check_hide),
};

static int fld_filesystem(const struct pol_walker *w, void *target, const struct pol_field *f,
			  const char *label, const struct pol_node *v)
{
	const struct pol_policy *p = target;
	const struct pol_node *ac, *pr;
	struct pol_qbuf q;
	int r = pol_walk_map(w, target, label, v, filesystem_fields, ELEMENTSOF(filesystem_fields));
	if (r < 0)
		return r;
	(void)f;

	/*
	 * allow_create only relaxes "uncreatable" to "creatable" for a protected path; an entry
	 * outside protect would be meaningless and is most likely a typo.
	 */
	ac = pol_map_get(v, "allow_create");
	pr = pol_map_get(v, "protect");
	for (size_t i = 0; i < p->n_allow_create; i++) {
		if (protect_has(p, p->allow_create[i]))
			continue;
		if (ac) {
			assert(ac->kind == POL_NODE_SEQ && ac->n_kids == p->n_allow_create);
			return pol_fail(w, ac->kids[i],
					"%s.allow_create[%zu] '%s' is not in %s.protect (expected every allow_create entry to be protected too)",
					label, i, pol_quote(&q, p->allow_create[i]), label);
		}
		return pol_fail(w, pr ? pr : v,
				"%s.protect leaves out '%s', which %s.allow_create names (expected every allow_create entry to be protected too)",
				label, pol_quote(&q, p->allow_create[i]), label);
	}
	return 0;
}

#define NAMESPACE(k, ns, lock)                                                          \
	{ .key = (k), .fn = pol_fld_bool, .off = offsetof(struct pol_policy, namespaces) +     \
	  (size_t)(ns) * sizeof(bool), .locked = (lock) }

/*
 * user, pid and mount are what every other guarantee stands on (uid mapping, no signals or
 * ptrace to host processes, the whole filesystem view), so they cannot be turned off.
 */
static const struct pol_field namespace_fields[] = {
	NAMESPACE("user", POL_NS_USER, true),
	NAMESPACE("pid", POL_NS_PID, true),
	NAMESPACE("mount", POL_NS_MOUNT, true),
	NAMESPACE("net", POL_NS_NET, false),
	NAMESPACE("uts", POL_NS_UTS, false),
	NAMESPACE("ipc", POL_NS_IPC, false),
	NAMESPACE("cgroup", POL_NS_CGROUP, false),
};

static int fld_namespaces(const struct pol_walker *w, void *target, const struct pol_field *f,
			  const char *label, const struct pol_node *v)
{
	(void)f;
	return pol_walk_map(w, target, label, v, namespace_fields, ELEMENTSOF(namespace_fields));
}

static const struct pol_field capability_fields[] = {
	STR_LIST("keep", caps_keep, check_cap),
};

static int fld_capabilities(const struct pol_walker *w, void *target, const struct pol_field *f,
			    const char *label, const struct pol_node *v)
{
	(void)f;
	return pol_walk_map(w, target, label, v, capability_fields, ELEMENTSOF(capability_fields));
}

static const char *const ws_mode_names[] = { [POL_WS_CHANGES] = "changes",
					      [POL_WS_DIRECT] = "direct" };
static const char *const ws_apply_names[] = { [POL_WS_APPLY_SAFE] = "safe",
					       [POL_WS_APPLY_NONE] = "none" };

static int fld_ws_mode(const struct pol_walker *w, void *target, const struct pol_field *f,
		       const char *label, const struct pol_node *v)
{
	size_t i;
	int r = pol_want_word(w, label, v, ws_mode_names, ELEMENTSOF(ws_mode_names),
			      "workspace mode", "changes or direct", &i);
	if (r < 0)
		return r;
	*POL_FIELD_PTR(target, f->off, enum pol_ws_mode) = (enum pol_ws_mode)i;
	return 0;
}

static int fld_ws_apply(const struct pol_walker *w, void *target, const struct pol_field *f,
			const char *label, const struct pol_node *v)
{
	size_t i;
	int r = pol_want_word(w, label, v, ws_apply_names, ELEMENTSOF(ws_apply_names),
			      "rule for applying", "safe or none", &i);
	if (r < 0)
		return r;
	*POL_FIELD_PTR(target, f->off, enum pol_ws_apply) = (enum pol_ws_apply)i;
	return 0;
}

/* workspace.hold patterns have the syntax of filesystem.hide. */
static const struct pol_field workspace_fields[] = {
	{ .key = "mode", .fn = fld_ws_mode, .off = offsetof(struct pol_policy, ws_mode) },
	{ .key = "apply", .fn = fld_ws_apply, .off = offsetof(struct pol_policy, ws_apply) },
	STR_LIST("hold", hold, check_hide),
};

static int fld_workspace(const struct pol_walker *w, void *target, const struct pol_field *f,
			 const char *label, const struct pol_node *v)
{
	(void)f;
	return pol_walk_map(w, target, label, v, workspace_fields, ELEMENTSOF(workspace_fields));
}

static int fld_network(const struct pol_walker *w, void *target, const struct pol_field *f,
		       const char *label, const struct pol_node *v)
{
	static const char *const names[] = { [POL_NET_NONE] = "none" };
	size_t i;
	int r = pol_want_word(w, label, v, names, ELEMENTSOF(names), "network mode", "none", &i);
	if (r < 0)
		return r;
	*POL_FIELD_PTR(target, f->off, enum pol_network) = (enum pol_network)i;
	return 0;
}

static const struct pol_field env_fields[] = {
	{ .key = "set", .fn = pol_fld_str_list, .off = offsetof(struct pol_policy, env_set),
	  .n_off = offsetof(struct pol_policy, n_env_set), .check = check_env_set,
	  .dup_by_name = true },
	STR_LIST("pass", env_pass, pol_check_env_name),
};

static int fld_env(const struct pol_walker *w, void *target, const struct pol_field *f,
		   const char *label, const struct pol_node *v)
{
	(void)f;
	return pol_walk_map(w, target, label, v, env_fields, ELEMENTSOF(env_fields));
}

static int fld_seccomp_default(const struct pol_walker *w, void *target, const struct pol_field *f,
			       const char *label, const struct pol_node *v)
{
	static const char *const names[] = { [POL_SECCOMP_ERRNO] = "errno",
					     [POL_SECCOMP_KILL] = "kill" };
	size_t i;
	int r = pol_want_word(w, label, v, names, ELEMENTSOF(names), "seccomp action",
			      "errno or kill", &i);
	if (r < 0)
		return r;
	*POL_FIELD_PTR(target, f->off, enum pol_seccomp_action) = (enum pol_seccomp_action)i;
	return 0;
}

static int fld_seccomp_profile(const struct pol_walker *w, void *target, const struct pol_field *f,
			       const char *label, const struct pol_node *v)
{
	static const char *const names[] = { "default" };
	size_t i;
	int r = pol_want_word(w, label, v, names, ELEMENTSOF(names), "seccomp profile", "default",
			      &i);
	if (r < 0)
		return r;
	return pol_replace_string(w, target, f->off, v->str);
}

/* ---- seccomp.rules ---- */

static const struct {
	const char *name;
	enum pol_cmp_op op;
} cmp_ops[] = {
	{ "eq", POL_CMP_EQ }, { "ne", POL_CMP_NE }, { "lt", POL_CMP_LT }, { "le", POL_CMP_LE },
	{ "gt", POL_CMP_GT }, { "ge", POL_CMP_GE }, { "masked_eq", POL_CMP_MASKED_EQ },
};

#define CMP_OPS_EXPECTED "one of: eq, ne, lt, le, gt, ge, masked_eq"

static int fld_cmp_op(const struct pol_walker *w, void *target, const struct pol_field *f,
		      const char *label, const struct pol_node *v)
{
	const char *names[ELEMENTSOF(cmp_ops)];
	for (size_t k = 0; k < ELEMENTSOF(cmp_ops); k++)
		names[k] = cmp_ops[k].name;
	size_t i;
	int r = pol_want_word(w, label, v, names, ELEMENTSOF(names), "comparison", CMP_OPS_EXPECTED,
			      &i);
	if (r < 0)
		return r;
	*POL_FIELD_PTR(target, f->off, enum pol_cmp_op) = cmp_ops[i].op;
	return 0;
}

static int hex_value(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/* A 64-bit argument value: decimal (no leading zeros) or 0x followed by hex digits. */
static int parse_flags(const char *s, uint64_t *out)
{
	uint64_t v = 0;
	size_t i = 2;

	if (s[0] != '0' || s[1] != 'x')
		return pol_parse_count(s, out);
	if (!s[i])
		return -EINVAL;
	for (; s[i]; i++) {
		int d = hex_value(s[i]);
		if (d < 0)
			return -EINVAL;
		if (v >> 60)
			return -ERANGE;
		v = v << 4 | (uint64_t)d;
	}
	*out = v;
	return 0;
}

static int fld_flags(const struct pol_walker *w, void *target, const struct pol_field *f,
		     const char *label, const struct pol_node *v)
{
	static const char expected[] = "a decimal integer or 0x and hex digits, like 0x800";
	struct pol_qbuf q;
	uint64_t val = 0;
	int r = pol_want_plain(w, label, v, expected);
	if (r < 0)
		return r;
	r = parse_flags(v->str, &val);
	if (r == -ERANGE)
		return pol_fail(w, v, "%s '%s' overflows (expected at most 0xffffffffffffffff)", label,
				pol_quote(&q, v->str));
	if (r < 0)
		return pol_fail(w, v, "%s '%s' is not a valid number (expected %s)", label,
				pol_quote(&q, v->str), expected);
	*POL_FIELD_PTR(target, f->off, uint64_t) = val;
	return 0;
}

/* One entry of args while it is read; index is wider than struct pol_arg_cond's. */
struct arg_tmp {
	uint64_t index;
	enum pol_cmp_op op;
	uint64_t value;
	uint64_t mask;
};

static const struct pol_field arg_fields[] = {
	{ .key = "index", .fn = pol_fld_number, .off = offsetof(struct arg_tmp, index),
	  .unit = POL_UNIT_COUNT, .min = 0, .max = SECCOMP_ARGS - 1 },
	{ .key = "op", .fn = fld_cmp_op, .off = offsetof(struct arg_tmp, op) },
	{ .key = "value", .fn = fld_flags, .off = offsetof(struct arg_tmp, value) },
	{ .key = "mask", .fn = fld_flags, .off = offsetof(struct arg_tmp, mask) },
};

static int read_arg(const struct pol_walker *w, const char *label, const struct pol_node *item,
		    const struct pol_syscall_rule *rule, struct pol_arg_cond *out)
{
	static const char *const required[] = { "index", "op", "value" };
	const struct pol_node *mask = pol_map_get(item, "mask");
	struct arg_tmp a = { 0 };
	int r = pol_walk_map(w, &a, label, item, arg_fields, ELEMENTSOF(arg_fields));
	if (r < 0)
		return r;
	for (size_t i = 0; i < ELEMENTSOF(required); i++)
		if (!pol_map_get(item, required[i]))
			return pol_fail(w, item, "%s has no %s (expected a mapping with index, op and value)",
					label, required[i]);
	if (a.op == POL_CMP_MASKED_EQ && !mask)
		return pol_fail(w, item, "%s has op masked_eq but no mask (expected a mask for masked_eq)",
				label);
	if (a.op != POL_CMP_MASKED_EQ && mask)
		return pol_fail(w, mask, "%s.mask is set, but op is %s (expected a mask only with masked_eq)",
				label, pol_cmp_op_name(a.op));
	/* A masked_eq whose value has bits outside the mask can never hold: surely a mistake. */
	if (a.op == POL_CMP_MASKED_EQ && (a.value & ~a.mask))
		return pol_fail(w, pol_map_get(item, "value"),
				"%s.value 0x%" PRIx64 " has bits outside mask 0x%" PRIx64 " (expected value & ~mask == 0; the condition could never hold)",
				label, a.value, a.mask);
	for (size_t j = 0; j < rule->n_conds; j++)
		if (rule->conds[j].index == a.index)
			return pol_fail(w, pol_map_get(item, "index"),
					"%s.index %" PRIu64 " repeats args[%zu] (expected at most one condition per argument)",
					label, a.index, j);
	out->index = (uint8_t)a.index;
	out->op = a.op;
	out->value = a.value;
	out->mask = a.op == POL_CMP_MASKED_EQ ? a.mask : 0;
	return 0;
}

static int fld_rule_args(const struct pol_walker *w, void *target, const struct pol_field *f,
			 const char *label, const struct pol_node *v)
{
	struct pol_syscall_rule *rule = target;
	int r = pol_want_seq(w, label, v);
	if (r < 0)
		return r;
	(void)f;
	if (v->n_kids == 0)
		return pol_fail(w, v,
				"%s is empty (expected 1 to 6 conditions; use seccomp.allow or seccomp.deny for a whole syscall)",
				label);
	rule->n_conds = 0;
	for (size_t i = 0; i < v->n_kids; i++) {
		char item_label[POL_LABEL_MAX];

		(void)snprintf(item_label, sizeof(item_label), "%s[%zu]", label, i);
		if (i >= SECCOMP_ARGS)
			return pol_fail(w, v->kids[i],
					"%s is a condition too many (expected at most %u, one per argument)",
					item_label, SECCOMP_ARGS);
		r = read_arg(w, item_label, v->kids[i], rule, &rule->conds[i]);
		if (r < 0)
			return r;
		rule->n_conds = i + 1;
	}
	return 0;
}

static int fld_rule_syscall(const struct pol_walker *w, void *target, const struct pol_field *f,
			    const char *label, const struct pol_node *v)
{
	int r = check_syscall(w, label, v);
	if (r < 0)
		return r;
	return pol_replace_string(w, target, f->off, v->str);
}

static int fld_rule_action(const struct pol_walker *w, void *target, const struct pol_field *f,
			   const char *label, const struct pol_node *v)
{
	static const char *const names[] = { "deny", "allow" }; /* index 1 = allow */
	size_t i;
	int r = pol_want_word(w, label, v, names, ELEMENTSOF(names), "rule action", "allow or deny",
			      &i);
	if (r < 0)
		return r;
	*POL_FIELD_PTR(target, f->off, bool) = i == 1;
	return 0;
}

static const struct pol_field rule_fields[] = {
	{ .key = "syscall", .fn = fld_rule_syscall, .off = offsetof(struct pol_syscall_rule, name) },
	{ .key = "action", .fn = fld_rule_action, .off = offsetof(struct pol_syscall_rule, allow) },
	{ .key = "args", .fn = fld_rule_args },
};

static void rules_free(struct pol_syscall_rule *rules, size_t n)
{
	if (!rules)
		return;
	for (size_t i = 0; i < n; i++)
		free(rules[i].name);
	free(rules);
}

static int fld_seccomp_rules(const struct pol_walker *w, void *target, const struct pol_field *f,
			     const char *label, const struct pol_node *v)
{
	static const char *const required[] = { "syscall", "action", "args" };
	struct pol_policy *p = target;
	struct pol_syscall_rule *rules = NULL;
	size_t n = 0;
	int r = pol_want_seq(w, label, v);
	if (r < 0)
		return r;
	(void)f;

	rules = calloc(v->n_kids ? v->n_kids : 1, sizeof(*rules));
	if (!rules)
		return pol_walk_enomem(w);
	for (; n < v->n_kids; n++) {
		const struct pol_node *item = v->kids[n];
		struct pol_syscall_rule *rule = &rules[n];
		char item_label[POL_LABEL_MAX];
		struct pol_qbuf q;

		(void)snprintf(item_label, sizeof(item_label), "%s[%zu]", label, n);
		r = pol_walk_map(w, rule, item_label, item, rule_fields, ELEMENTSOF(rule_fields));
		for (size_t i = 0; r >= 0 && i < ELEMENTSOF(required); i++)
			if (!pol_map_get(item, required[i]))
				r = pol_fail(w, item,
					     "%s has no %s (expected a mapping with syscall, action and args)",
					     item_label, required[i]);
		/* One deny rule, or any number of allow rules, per syscall: never both. */
		for (size_t j = 0; r >= 0 && j < n; j++) {
			if (!streq(rules[j].name, rule->name))
				continue;
			if (rules[j].allow != rule->allow)
				r = pol_fail(w, pol_map_get(item, "syscall"),
					     "%s %s '%s', which %s[%zu] %s (expected either allow rules or one deny rule per syscall)",
					     item_label, rule->allow ? "allows" : "denies",
					     pol_quote(&q, rule->name), label, j,
					     rules[j].allow ? "allows" : "denies");
			else if (!rule->allow)
				r = pol_fail(w, pol_map_get(item, "syscall"),
					     "%s is a second deny rule for '%s' (expected one deny rule per syscall; first is %s[%zu])",
					     item_label, pol_quote(&q, rule->name), label, j);
		}
		if (r < 0) {
			rules_free(rules, n + 1);
			return r;
		}
	}

	rules_free(p->seccomp_rules, p->n_seccomp_rules);
	p->seccomp_rules = rules;
	p->n_seccomp_rules = n;
	return 0;
}

static const struct pol_field seccomp_fields[] = {
	{ .key = "profile", .fn = fld_seccomp_profile,
	  .off = offsetof(struct pol_policy, seccomp_profile) },
	{ .key = "default_action", .fn = fld_seccomp_default,
	  .off = offsetof(struct pol_policy, seccomp_default) },
	STR_LIST("allow", seccomp_allow, check_syscall),
	STR_LIST("deny", seccomp_deny, check_syscall),
	{ .key = "rules", .fn = fld_seccomp_rules },
};

/*
 * A rule that contradicts a list, or could change nothing: an allow rule for a syscall that
 * seccomp.allow already allows outright or seccomp.deny denies, a deny rule for one that
 * seccomp.deny already denies. Reported at the rule when this layer wrote the rules, else at
 * the list entry this layer wrote.
 */
static int check_rules_against_lists(const struct pol_walker *w, const struct pol_policy *p,
				     const char *label, const struct pol_node *v)
{
	const struct pol_node *rules = pol_map_get(v, "rules");

	for (size_t i = 0; i < p->n_seccomp_rules; i++) {
		const struct pol_syscall_rule *rule = &p->seccomp_rules[i];
		char *const *list = rule->allow ? p->seccomp_allow : p->seccomp_deny;
		size_t n_list = rule->allow ? p->n_seccomp_allow : p->n_seccomp_deny;
		const char *list_key = rule->allow ? "allow" : "deny";
		const char *what = rule->allow ? "allows" : "denies";
		const char *expected = "expected a rule that changes something";
		struct pol_qbuf q;

		if (rule->allow && pol_strv_contains(p->seccomp_deny, p->n_seccomp_deny, rule->name)) {
			list = p->seccomp_deny;
			n_list = p->n_seccomp_deny;
			list_key = "deny";
			what = "denies";
			expected = "expected a syscall either in seccomp.deny or in allow rules";
		}
		for (size_t j = 0; j < n_list; j++) {
			const struct pol_node *lst = pol_map_get(v, list_key);
			if (!streq(list[j], rule->name))
				continue;
			if (rules)
				return pol_fail(w, pol_map_get(rules->kids[i], "syscall"),
						"%s.rules[%zu] %s '%s', which %s.%s %s without conditions (%s)",
						label, i, rule->allow ? "allows" : "denies",
						pol_quote(&q, rule->name), label, list_key, what, expected);
			return pol_fail(w, lst ? lst->kids[j] : v,
					"%s.%s[%zu] '%s' %s what %s.rules[%zu] %s (%s)", label,
					list_key, j, pol_quote(&q, list[j]),
					streq(list_key, "allow") ? "allows" : "denies", label, i,
					rule->allow ? "allows under conditions" : "denies under conditions",
					expected);
		}
	}
	return 0;
}

static int fld_seccomp(const struct pol_walker *w, void *target, const struct pol_field *f,
		       const char *label, const struct pol_node *v)
{
	const struct pol_policy *p = target;
	const struct pol_node *allow, *deny;
	struct pol_qbuf q;
	int r = pol_walk_map(w, target, label, v, seccomp_fields, ELEMENTSOF(seccomp_fields));
	if (r < 0)
		return r;
	(void)f;

	/* A syscall in both lists has no clear meaning; refuse it rather than pick a winner. */
	allow = pol_map_get(v, "allow");
	deny = pol_map_get(v, "deny");
	for (size_t i = 0; i < p->n_seccomp_deny; i++) {
		for (size_t j = 0; j < p->n_seccomp_allow; j++) {
			if (!streq(p->seccomp_deny[i], p->seccomp_allow[j]))
				continue;
			if (deny)
				return pol_fail(w, deny->kids[i],
						"%s.deny[%zu] '%s' is also in %s.allow (expected a syscall in at most one list)",
						label, i, pol_quote(&q, p->seccomp_deny[i]), label);
			return pol_fail(w, allow ? allow->kids[j] : v,
					"%s.allow[%zu] '%s' is also in %s.deny (expected a syscall in at most one list)",
					label, j, pol_quote(&q, p->seccomp_allow[j]), label);
		}
	}
	return check_rules_against_lists(w, p, label, v);
}

#define LIMIT(k, member, u, lo, hi)                                                     \
	{ .key = (k), .fn = pol_fld_number, .off = offsetof(struct pol_policy, member), .unit = (u), \
	  .min = (lo), .max = (hi) }

/*
 * 0 means "none" only for cpu, wall, output and nproc. Everything else must be positive:
 * memory and pids because a cgroup without them is no limit, tmpfs because the kernel reads
 * size=0 as "unbounded", and nofile and fsize because 0 leaves a process that cannot work.
 */
static const struct pol_field limit_fields[] = {
	LIMIT("memory", memory_bytes, POL_UNIT_SIZE, 1, VALUE_MAX),
	LIMIT("pids", pids, POL_UNIT_COUNT, 1, PIDS_MAX),
	LIMIT("cpu", cpu_millicpus, POL_UNIT_CPU, 0, (uint64_t)CPUS_MAX * 1000u),
	LIMIT("nofile", nofile, POL_UNIT_COUNT, 1, NOFILE_MAX),
	LIMIT("nproc", nproc, POL_UNIT_COUNT, 0, PIDS_MAX),
	LIMIT("fsize", fsize_bytes, POL_UNIT_SIZE, 1, VALUE_MAX),
	LIMIT("tmpfs", tmp_bytes, POL_UNIT_SIZE, 1, VALUE_MAX),
	LIMIT("wall", wall_ms, POL_UNIT_TIME, 0, VALUE_MAX),
	LIMIT("output", output_bytes, POL_UNIT_SIZE, 0, VALUE_MAX),
};

static int fld_limits(const struct pol_walker *w, void *target, const struct pol_field *f,
		      const char *label, const struct pol_node *v)
{
	(void)f;
	return pol_walk_map(w, target, label, v, limit_fields, ELEMENTSOF(limit_fields));
}

static const struct pol_field root_fields[] = {
	{ .key = "extends", .fn = fld_applied_early },
	{ .key = "user", .fn = fld_user },
	{ .key = "hostname", .fn = fld_hostname, .off = offsetof(struct pol_policy, hostname) },
	{ .key = "filesystem", .fn = fld_filesystem },
	{ .key = "workspace", .fn = fld_workspace },
	{ .key = "namespaces", .fn = fld_namespaces },
	{ .key = "capabilities", .fn = fld_capabilities },
	{ .key = "network", .fn = fld_network, .off = offsetof(struct pol_policy, network) },
	{ .key = "env", .fn = fld_env },
	{ .key = "seccomp", .fn = fld_seccomp },
	{ .key = "limits", .fn = fld_limits },
	{ .key = "unsafe", .fn = fld_applied_early },
};

/* ------------------------------------------------------------------------------------------ */
/* Layers: the default, what a file extends, the file                                         */

struct parse_ctx {
	struct pol_policy *p;
	pol_loader load;      /* NULL: only "extends: default" */
	void *load_ctx;
	const char *stack[POL_MAX_EXTENDS + 1]; /* files being applied, outermost first */
	size_t depth;
	struct pol_diag *diag;
};

static int apply_file(struct parse_ctx *pc, const char *name, const void *buf, size_t len,
		      bool record);

/*
 * The value of the top-level key in root, refusing a second one there (pol_walk_map would, but
 * only after this key has been acted on).
 */
static int root_key(const struct pol_walker *w, const struct pol_node *root, const char *key,
		    const struct pol_node **out)
{
	const struct pol_node *first = NULL;

	*out = NULL;
	for (size_t i = 0; i + 1 < root->n_kids; i += 2) {
		const struct pol_node *k = root->kids[i];
		if (k->kind != POL_NODE_SCALAR || !streq(k->str, key))
			continue;
		if (first)
			return pol_fail(w, k,
					"duplicate key '%s' in the top level (expected each key once; first at line %u)",
					key, first->line);
		first = k;
		*out = root->kids[i + 1];
	}
	return 0;
}

/* Appends " -> " and s (escaped, capped) to buf. */
static void chain_append(char *buf, size_t size, const char *s)
{
	struct pol_qbuf q;
	size_t o = strlen(buf);

	if (o < size)
		(void)snprintf(buf + o, size - o, "%s%s", o ? " -> " : "", pol_quote(&q, s));
}

static int loader_failed(const struct pol_walker *w, const struct pol_node *v, const char *abs_path,
			 int err)
{
	char buf[128];
	const char *msg;
	struct pol_qbuf q, qa;

	if (err == -ENOMEM)
		return pol_walk_enomem(w);
	if (err == -E2BIG) {
		pol_walk_diag(w, v, "extends '%s': '%s' is over %u bytes (expected at most %u bytes)",
			      pol_quote(&q, v->str), pol_quote(&qa, abs_path), (unsigned)POL_MAX_INPUT_BYTES,
			      (unsigned)POL_MAX_INPUT_BYTES);
		return -E2BIG;
	}
	msg = strerror_r(err < 0 ? -err : EIO, buf, sizeof(buf)); /* the GNU one: no errno juggling */
	return pol_fail(w, v, "extends '%s': '%s' cannot be read: %s (expected a readable policy file)",
			pol_quote(&q, v->str), pol_quote(&qa, abs_path), msg);
}

/* Follows the extends value v of the file w names: applies that file and what it extends. */
static int apply_extends(struct parse_ctx *pc, const struct pol_walker *w, const struct pol_node *v)
{
	static const char expected[] = "default or the path of a policy file";
	_cleanup_free_ char *abs_path = NULL;
	_cleanup_free_ char *buf = NULL;
	size_t len = 0;
	struct pol_qbuf q;
	int r = pol_want_scalar(w, "extends", v, expected);
	if (r < 0)
		return r;

	/* The embedded default is every policy's first layer already. */
	if (streq(v->str, "default"))
		return 0;
	if (!pc->load)
		return pol_fail(w, v,
				"extends '%s' names a file, and this policy is parsed without file access (expected default)",
				pol_quote(&q, v->str));
	if (v->str[0] == '/') {
		r = pol_check_abs_path(w, "extends", v);
		if (r >= 0)
			r = pol_dup_string(w, v->str, &abs_path);
	} else {
		r = pol_resolve_relative(w, "extends", v, &abs_path);
	}
	if (r < 0)
		return r;

	for (size_t i = 0; i < pc->depth; i++) {
		char chain[400] = "";
		if (!streq(pc->stack[i], abs_path))
			continue;
		for (size_t j = i; j < pc->depth; j++)
			chain_append(chain, sizeof(chain), pc->stack[j]);
		chain_append(chain, sizeof(chain), abs_path);
		return pol_fail(w, v, "extends cycle: %s (expected a chain of files that ends at default)",
				chain);
	}
	if (pc->depth >= POL_MAX_EXTENDS)
		return pol_fail(w, v,
				"extends '%s' makes a chain of more than %u files (expected at most %u policy files, counting the first)",
				pol_quote(&q, v->str), (unsigned)POL_MAX_EXTENDS, (unsigned)POL_MAX_EXTENDS);

	r = pc->load(pc->load_ctx, abs_path, &buf, &len);
	if (r < 0)
		return loader_failed(w, v, abs_path, r);
	if (len > POL_MAX_INPUT_BYTES)
		return loader_failed(w, v, abs_path, -E2BIG);
	if (!buf && len > 0)
		return loader_failed(w, v, abs_path, -EIO);
	return apply_file(pc, abs_path, buf, len, true);
}

/*
 * A file that changes unsafe but not the binds must not take away a weakening an inherited
 * bind needs. (A file that gives binds had each one checked against its final unsafe.)
 */
static int check_inherited_binds(const struct pol_walker *w, const struct pol_policy *p,
				 const struct pol_node *unsafe)
{
	for (size_t i = 0; i < p->n_binds; i++) {
		const char *detail;
		enum bind_risk risk = bind_risk(&p->binds[i], p->unsafe, &detail);
		struct pol_qbuf qs, qd;
		const char *key;

		if (risk == RISK_NONE)
			continue;
		key = pol_unsafe_name(bind_risk_bit(risk));
		return pol_fail(w, unsafe,
				"unsafe leaves out %s, which filesystem.binds[%zu] (src '%s', dst '%s') needs (expected unsafe to name %s while that bind is in effect)",
				key, i, pol_quote(&qs, p->binds[i].src), pol_quote(&qd, p->binds[i].dst), key);
	}
	return 0;
}

/*
 * Lays the policy document root (a tree of the file name) over pc->p: first what it extends,
 * then its unsafe list, then the rest in document order. what names the kind of file in
 * messages ("policy", or "task" for a policy inline in a task file). record adds name to
 * ->sources once applied. On failure pc->p is half-updated and must be discarded.
 */
static int apply_root(struct parse_ctx *pc, const char *name, const char *what,
		      const struct pol_node *root, bool record)
{
	_cleanup_free_ char *dir = NULL;
	const struct pol_node *extends, *unsafe;
	int r;

	if (pol_dir_of(name, &dir) < 0) {
		pol_diag_set(pc->diag, name, 0, 0, "out of memory (expected to parse the policy)");
		return -ENOMEM;
	}
	const struct pol_walker w = { .name = name, .dir = dir, .what = what, .diag = pc->diag };

	if (root->kind != POL_NODE_MAP)
		return pol_fail(&w, root, "document is %s (expected a mapping of policy sections)",
				pol_describe(root));
	r = root_key(&w, root, "extends", &extends);
	if (r >= 0)
		r = root_key(&w, root, "unsafe", &unsafe);
	if (r < 0)
		return r;

	assert(pc->depth < ELEMENTSOF(pc->stack));
	pc->stack[pc->depth++] = name;
	if (extends)
		r = apply_extends(pc, &w, extends);
	pc->depth--;
	if (r < 0)
		return r;

	if (unsafe) {
		r = fld_unsafe(&w, pc->p, &unsafe_field, "unsafe", unsafe);
		if (r < 0)
			return r;
	}
	r = pol_walk_map(&w, pc->p, "", root, root_fields, ELEMENTSOF(root_fields));
	if (r < 0)
		return r;
	if (unsafe && !pol_map_get(pol_map_get(root, "filesystem"), "binds")) {
		r = check_inherited_binds(&w, pc->p, unsafe);
		if (r < 0)
			return r;
	}
	if (record && strv_push(&pc->p->sources, &pc->p->n_sources, name) < 0)
		return pol_walk_enomem(&w);
	return 0;
}

/* Parses buf (the policy file name) and lays it over pc->p, like apply_root. */
static int apply_file(struct parse_ctx *pc, const char *name, const void *buf, size_t len,
		      bool record)
{
	_cleanup_(pol_node_freep) struct pol_node *root = NULL;
	int r = pol_yaml_load(name, buf, len, &pol_policy_limits, &root, pc->diag);
	if (r < 0)
		return r;
	return apply_root(pc, name, "policy", root, record);
}

/* ------------------------------------------------------------------------------------------ */
/* Public interface                                                                           */

/* Frees p and everything it owns; NULL-safe; returns NULL. See policy.h. */
struct pol_policy *pol_free(struct pol_policy *p)
{
	if (!p)
		return NULL;
	free(p->user_name);
	free(p->hostname);
	binds_free(p->binds, p->n_binds);
	pol_strv_free(p->etc_files, p->n_etc_files);
	pol_strv_free(p->protect, p->n_protect);
	pol_strv_free(p->allow_create, p->n_allow_create);
	pol_strv_free(p->hide, p->n_hide);
	pol_strv_free(p->hold, p->n_hold);
	pol_strv_free(p->caps_keep, p->n_caps_keep);
	pol_strv_free(p->env_set, p->n_env_set);
	pol_strv_free(p->env_pass, p->n_env_pass);
	free(p->seccomp_profile);
	pol_strv_free(p->seccomp_allow, p->n_seccomp_allow);
	pol_strv_free(p->seccomp_deny, p->n_seccomp_deny);
	rules_free(p->seccomp_rules, p->n_seccomp_rules);
	pol_strv_free(p->sources, p->n_sources);
	free(p);
	return NULL;
}
DEFINE_CLEANUP(struct pol_policy *, pol_free)

/*
 * Returns the embedded default's text (static, NUL-terminated) and its length without the NUL
 * in *out_len when out_len is not NULL. See policy.h.
 */
const char *pol_default_yaml(size_t *out_len)
{
	if (out_len)
		*out_len = pol_default_yaml_len;
	return pol_default_yaml_data;
}

/*
 * The layers for the file name: the embedded default, then either buf (len bytes) or, when
 * root is not NULL, the tree root. Stores the policy in *out on success.
 */
static int parse_layers(const char *name, const char *what, const void *buf, size_t len,
			const struct pol_node *root, pol_loader load, void *ctx,
			struct pol_policy **out, struct pol_diag *reterr)
{
	_cleanup_(pol_freep) struct pol_policy *p = NULL;
	struct parse_ctx pc = { .diag = reterr };
	int r;

	p = calloc(1, sizeof(*p));
	if (!p) {
		pol_diag_set(reterr, name, 0, 0, "out of memory (expected to parse the policy)");
		return -ENOMEM;
	}
	pc.p = p;

	/* The default must parse; if it ever does not, report it under its own name. */
	r = apply_file(&pc, DEFAULT_NAME, pol_default_yaml_data, pol_default_yaml_len, true);
	if (r < 0)
		return r;
	pc.load = load;
	pc.load_ctx = ctx;
	/* The default handed in as a file (warden policy show default) is one layer, not two. */
	if (root)
		r = apply_root(&pc, name, what, root, !streq(name, DEFAULT_NAME));
	else
		r = apply_file(&pc, name, buf, len, !streq(name, DEFAULT_NAME));
	if (r < 0)
		return r;

	*out = TAKE_PTR(p);
	return 0;
}

/*
 * Parses the file path (buf, len bytes, borrowed) over the embedded default, following
 * extends through load. On success stores a new policy that the caller owns in *out and
 * returns 0. On failure returns -EINVAL, -E2BIG or -ENOMEM, fills *reterr when it is not
 * NULL, and leaves *out untouched. See policy.h.
 */
int pol_parse_file(const char *path, const void *buf, size_t len, pol_loader load, void *ctx,
		   struct pol_policy **out, struct pol_diag *reterr)
{
	const char *name = path ? path : "<input>";

	assert(out);
	if (len > POL_MAX_INPUT_BYTES) {
		pol_diag_set(reterr, name, 0, 0, "input is %zu bytes (expected at most %u bytes)", len,
			     (unsigned)POL_MAX_INPUT_BYTES);
		return -E2BIG;
	}
	if (!buf && len > 0) {
		pol_diag_set(reterr, name, 0, 0, "no input buffer (expected bytes)");
		return -EINVAL;
	}
	return parse_layers(name, "policy", buf, len, NULL, load, ctx, out, reterr);
}

/*
 * pol_parse_file for a policy mapping inside another document (a task file): root is
 * borrowed; its nodes keep name's lines and columns. See yaml-util.h.
 */
int pol_parse_tree(const char *name, const char *what, const struct pol_node *root,
		   pol_loader load, void *ctx, struct pol_policy **out, struct pol_diag *reterr)
{
	int r;

	assert(root && out);
	if (!name)
		name = "<input>";
	r = pol_yaml_check_bounds(name, root, &pol_policy_limits, reterr);
	if (r < 0)
		return r;
	return parse_layers(name, what ? what : "policy", NULL, 0, root, load, ctx, out, reterr);
}

/* pol_parse_file without a loader. See policy.h. */
int pol_parse(const char *name, const void *buf, size_t len, struct pol_policy **out,
	      struct pol_diag *reterr)
{
	return pol_parse_file(name, buf, len, NULL, NULL, out, reterr);
}

/* Names as the policy language spells them, or NULL. See policy.h. */
const char *pol_unsafe_name(uint32_t bit)
{
	for (size_t i = 0; i < ELEMENTSOF(unsafe_names); i++)
		if (unsafe_names[i].bit == bit)
			return unsafe_names[i].name;
	return NULL;
}

const char *pol_ns_name(enum pol_ns ns)
{
	for (size_t i = 0; i < ELEMENTSOF(namespace_fields); i++)
		if (namespace_fields[i].off == offsetof(struct pol_policy, namespaces) +
						   (size_t)ns * sizeof(bool))
			return namespace_fields[i].key;
	return NULL;
}

const char *pol_cmp_op_name(enum pol_cmp_op op)
{
	for (size_t i = 0; i < ELEMENTSOF(cmp_ops); i++)
		if (cmp_ops[i].op == op)
			return cmp_ops[i].name;
	return NULL;
}

const char *pol_ws_mode_name(enum pol_ws_mode m)
{
	return (size_t)m < ELEMENTSOF(ws_mode_names) ? ws_mode_names[m] : NULL;
}

const char *pol_ws_apply_name(enum pol_ws_apply a)
{
	return (size_t)a < ELEMENTSOF(ws_apply_names) ? ws_apply_names[a] : NULL;
}

const char *pol_network_name(enum pol_network net)
{
	switch (net) {
	case POL_NET_NONE:
		return "none";
	}
	return NULL;
}
