/* SPDX-License-Identifier: MIT */
/*
 * policy: YAML to a validated struct pol_policy, and back (policy-print.c).
 *
 * Pure code: given bytes, it makes no syscalls and does no file I/O; a file named by `extends`
 * is fetched through a loader callback the caller supplies, and checking that host paths named
 * in binds exist lives in the supervisor. The parser can be unit-tested and fuzzed unprivileged.
 *
 * Schema: every section of policy/default.yaml is optional in a file. The embedded default is
 * parsed first; then the files named by `extends`, innermost first; then the file itself. Each
 * layer is laid over the one before it: a scalar a layer leaves out keeps the earlier value,
 * and a list a layer gives replaces the earlier list as a whole. Unknown keys, duplicate keys,
 * wrong node types, anchors, aliases, tags, directives, a second document and an empty
 * document are all errors. docs/policy.md is the reference.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "diag.h"

/* Parser limits: everything a user can write is bounded. */
#define POL_MAX_INPUT_BYTES (256u * 1024u) /* larger input: -E2BIG before any parsing */
#define POL_MAX_DEPTH 8        /* nested mappings/sequences; the top-level mapping is level 1 */
#define POL_MAX_LIST 256       /* entries in one sequence, keys in one mapping */
#define POL_MAX_STRING 4096    /* bytes in one scalar (key or value) */
#define POL_MAX_EVENTS 65536   /* libyaml events in one input */
#define POL_MAX_EXTENDS 8      /* policy files in one extends chain, counting the outermost */
#define POL_MAX_PATTERN_COMPONENTS 64 /* components in one filesystem.hide pattern */
#define POL_MAX_PATTERN_GLOBSTARS 4   /* "**" components in one filesystem.hide pattern */


enum pol_bind_mode {
	POL_BIND_RO = 0,
	POL_BIND_RW = 1,
};

struct pol_bind {
	char *src;      /* absolute, normalised host path (a relative one in the file is resolved) */
	char *dst;      /* absolute, normalised sandbox path */
	enum pol_bind_mode mode;
	bool optional;  /* a missing src is skipped instead of an error */
};

enum pol_seccomp_action {
	POL_SECCOMP_ERRNO = 0, /* unlisted syscalls fail with ENOSYS, forbidden ones EPERM */
	POL_SECCOMP_KILL = 1,  /* unlisted syscalls kill the process */
};

/* Named weakenings a policy may opt into; each is recorded in the run record. */
enum pol_unsafe {
	POL_UNSAFE_NO_CGROUP = 1u << 0,      /* "no-cgroup": start without a cgroup when none can be created */
	POL_UNSAFE_IO_URING = 1u << 1,       /* "io_uring": allow io_uring_* syscalls */
	POL_UNSAFE_BIND_HOST_ROOT = 1u << 2, /* "bind-host-root": a bind whose src is / */
	POL_UNSAFE_BIND_SOCKET = 1u << 3,    /* "bind-container-socket": a bind of a container
						 runtime socket (docker, containerd, podman) */
	POL_UNSAFE_BIND_KERNEL_FS = 1u << 4, /* "bind-kernel-fs": a bind from or onto /proc, /sys, /dev */
	POL_UNSAFE_WORKSPACE_ANYWHERE = 1u << 5, /* "workspace-anywhere": a workspace that is a
						    system directory, a home or above one */
};

/* workspace.mode: how the sandbox's writes reach the host's workspace. */
enum pol_ws_mode {
	POL_WS_CHANGES = 0, /* an overlay; the writes are a changeset applied after the run */
	POL_WS_DIRECT = 1,  /* live writes to the host tree, with the protect list read-only */
};

/* workspace.apply: what happens to a changeset when its run ends. */
enum pol_ws_apply {
	POL_WS_APPLY_SAFE = 0, /* apply what the rules allow, keep the rest pending */
	POL_WS_APPLY_NONE = 1, /* keep the whole changeset pending for review */
};

/* Namespaces, in this order everywhere (policy, records, audit). */
enum pol_ns {
	POL_NS_USER,
	POL_NS_PID,
	POL_NS_MOUNT,
	POL_NS_NET,
	POL_NS_UTS,
	POL_NS_IPC,
	POL_NS_CGROUP,
	POL_NS_N,
};

/* network modes */
enum pol_network {
	POL_NET_NONE = 0, /* a new network namespace with only lo, up */
};

/* A seccomp argument condition, compared on the argument's full 64 bits (masked_eq: (arg & mask) == value). */
enum pol_cmp_op {
	POL_CMP_EQ, POL_CMP_NE, POL_CMP_LT, POL_CMP_LE, POL_CMP_GT, POL_CMP_GE, POL_CMP_MASKED_EQ,
};

struct pol_arg_cond {
	uint8_t index;     /* 0..5 */
	enum pol_cmp_op op;
	uint64_t value;
	uint64_t mask;     /* masked_eq only */
};

/* A seccomp rule with argument conditions: all conditions must hold (at most one per argument). */
struct pol_syscall_rule {
	char *name;        /* [a-z0-9_]{1,64}; whether libseccomp knows it is checked by sandbox/ */
	bool allow;        /* true: allow when the conditions hold; false: deny (EPERM or kill) */
	struct pol_arg_cond conds[6];
	size_t n_conds;    /* 1..6 */
};

/*
 * A parsed policy. Every string is owned by the struct and freed by pol_free(). Every char **
 * list is also NULL-terminated (list[n] == NULL), so env_set can be handed to execve(); binds is
 * a plain array of n_binds entries. A list may be NULL when it holds nothing.
 */
struct pol_policy {
	/* user */
	uint32_t uid;            /* uid inside the sandbox, never 0 */
	uint32_t gid;            /* gid inside the sandbox, never 0 */
	char *user_name;         /* name written to the synthetic /etc/passwd */
	uint32_t host_id_base;   /* root mode: first host uid/gid handed to sandboxes */
	uint32_t host_id_count;  /* root mode: how many host ids the range holds */

	char *hostname;

	/* filesystem */
	struct pol_bind *binds;  /* read-only or read-write host binds, in order */
	size_t n_binds;
	char **etc_files;        /* host /etc entries bound read-only when present */
	size_t n_etc_files;
	char **protect;          /* workspace-relative paths kept read-only / uncreatable;
				    a trailing '/' (kept) marks a directory */
	size_t n_protect;
	char **allow_create;     /* protect entries that may be created when missing */
	size_t n_allow_create;
	char **hide;             /* workspace-relative paths or globs masked (unreadable) at start */
	size_t n_hide;

	/* namespaces: true = a new one (the default for all); false = shared with the host */
	bool namespaces[POL_NS_N];

	/* capabilities kept inside the sandbox (names without CAP_, lower case); empty by default */
	char **caps_keep;
	size_t n_caps_keep;

	enum pol_network network;

	/* workspace */
	enum pol_ws_mode ws_mode;
	enum pol_ws_apply ws_apply;
	char **hold;             /* changes mode: patterns applied only when named (--include) */
	size_t n_hold;

	/* env */
	char **env_set;          /* "NAME=value" */
	size_t n_env_set;
	char **env_pass;         /* host variable names passed through when set */
	size_t n_env_pass;

	/* seccomp */
	char *seccomp_profile;   /* named base profile; only "default" exists */
	enum pol_seccomp_action seccomp_default;
	char **seccomp_allow;    /* extra syscall names to allow */
	size_t n_seccomp_allow;
	char **seccomp_deny;     /* syscall names to deny even if the base profile allows them */
	size_t n_seccomp_deny;
	struct pol_syscall_rule *seccomp_rules; /* rules with argument conditions, in order */
	size_t n_seccomp_rules;

	/* limits; 0 means "no limit" only where the field says so */
	uint64_t memory_bytes;   /* cgroup memory limit, required > 0 */
	uint64_t pids;           /* cgroup pids limit, required > 0 */
	uint64_t cpu_millicpus;  /* cgroup cpu quota in 1/1000 CPU; 0 = none */
	uint64_t nofile;         /* RLIMIT_NOFILE */
	uint64_t nproc;          /* RLIMIT_NPROC; 0 = same as pids */
	uint64_t fsize_bytes;    /* RLIMIT_FSIZE */
	uint64_t tmp_bytes;      /* size of the /tmp and home tmpfs */
	uint64_t wall_ms;        /* wall-clock limit; 0 = none */
	uint64_t output_bytes;   /* cap on captured output; 0 = none */

	uint32_t unsafe;         /* enum pol_unsafe bits */

	/* Where the policy came from: the file (or "<default>") and what it extends, outermost last. */
	char **sources;
	size_t n_sources;
};

/*
 * Fetches the policy file at abs_path (an absolute, normalised path the parser built from an
 * `extends` value) for pol_parse_file. On success stores a malloc()ed buffer in *out_buf (the
 * parser takes ownership and frees it with free(); it may be NULL when *out_len is 0) and its
 * length in *out_len, and returns 0. On failure returns a negative errno (-ENOENT, -EACCES,
 * -E2BIG for a file over POL_MAX_INPUT_BYTES, -ENOMEM, ...) and leaves the outputs alone; the
 * parser then reports the error at the `extends` value. ctx is the caller's, passed through.
 */
typedef int (*pol_loader)(void *ctx, const char *abs_path, char **out_buf, size_t *out_len);

/*
 * Parses the policy file at path from buf (len bytes, not necessarily NUL-terminated; both
 * borrowed): the embedded default first, then what the file extends (recursively, through
 * load), then the file. path names the file in diagnostics and in ->sources; when it is an
 * absolute path, relative `extends` values and relative bind sources resolve against its
 * directory (pure string work: `.` components are dropped, `..` is refused). path may be NULL
 * ("<input>"); load may be NULL, and then only `extends: default` is accepted.
 *
 * On success stores a new policy in *out (the caller owns it; free with pol_free) and returns
 * 0; *reterr is not touched. On failure returns -EINVAL (bad input, including an extended file
 * that is bad, missing or unreadable), -E2BIG (input, or an extended file, over
 * POL_MAX_INPUT_BYTES) or -ENOMEM; fills *reterr (when reterr is not NULL) with the file the
 * error is in (for an extended file, its absolute path), the 1-based line and column of the
 * offending node (0 when there is none, as for an oversized input) and a one-line message
 * "what is wrong (expected ...)"; and leaves *out untouched.
 */
int pol_parse_file(const char *path, const void *buf, size_t len, pol_loader load, void *ctx,
		   struct pol_policy **out, struct pol_diag *reterr);

/*
 * pol_parse_file(name, buf, len, NULL, NULL, out, reterr): the same contract, without file
 * access. name (borrowed, may be NULL for "<input>") is used in diagnostics, e.g. the file path.
 */
int pol_parse(const char *name, const void *buf, size_t len, struct pol_policy **out,
	      struct pol_diag *reterr);

/*
 * Returns the embedded default policy's YAML text (static storage, NUL-terminated) and stores its
 * length without the NUL in *out_len when out_len is not NULL. Cannot fail.
 */
const char *pol_default_yaml(size_t *out_len);

/* Frees a policy and everything it owns. NULL-safe. Returns NULL. */
struct pol_policy *pol_free(struct pol_policy *p);

/*
 * Names as the policy language spells them (static strings), or NULL for a value that has
 * none: pol_unsafe_name takes one POL_UNSAFE_* bit ("bind-kernel-fs"), pol_ns_name a namespace
 * ("cgroup"), pol_cmp_op_name an operator ("masked_eq"), pol_network_name a mode ("none"),
 * pol_ws_mode_name a workspace mode ("changes"), pol_ws_apply_name an apply rule ("safe").
 */
const char *pol_unsafe_name(uint32_t bit);
const char *pol_ns_name(enum pol_ns ns);
const char *pol_cmp_op_name(enum pol_cmp_op op);
const char *pol_network_name(enum pol_network net);
const char *pol_ws_mode_name(enum pol_ws_mode m);
const char *pol_ws_apply_name(enum pol_ws_apply a);

/* What a host path is to the rules that keep the host's own trees out of a sandbox. */
enum pol_host_path {
	POL_HOST_PATH_OK = 0,   /* none of the below: a project, /tmp/x, /home/u/proj, /var/tmp/x */
	POL_HOST_PATH_INVALID,  /* not absolute and normalised ("", "etc", "/a//b", "/a/", "/a/..") */
	POL_HOST_PATH_ROOT,     /* "/" itself, which holds every tree below */
	POL_HOST_PATH_SYSTEM,   /* /etc, /usr, /bin, /sbin, /boot or any top-level /lib* name, or below */
	POL_HOST_PATH_KERNEL,   /* /proc, /sys or /dev, or below */
	POL_HOST_PATH_RUNTIME,  /* /run or below: the sockets and state of running services */
	POL_HOST_PATH_SHARED,   /* /var or /home itself (what lies below them is OK) */
};

/*
 * Classifies path (borrowed; an absolute, normalised host path: no empty, "." or ".."
 * component, no trailing '/') by its first component. Pure string work: symlinks, mounts and
 * filesystem types are the caller's business. The trees are all top-level, so "/" is the only
 * path that contains one without being in it. "/lib*" means any top-level name that starts
 * with "lib" (/lib, /lib32, /lib64, /libx32, Debian's /lib.usr-is-merged, /libfoo); other near
 * misses (/usr2, /etcetera, /runner, /homes) are OK.
 *
 * The policy parser refuses a bind whose src is POL_HOST_PATH_ROOT (unsafe: bind-host-root),
 * and the supervisor refuses a workspace in any class but OK (unsafe: workspace-anywhere).
 *
 * Returns the class. For every class but POL_HOST_PATH_INVALID, stores in *out_top_len (when
 * not NULL) the length of the tree that decided it, path's first component with its '/' (1
 * for "/", 4 for "/etc/ssl", 6 for "/lib64"); for POL_HOST_PATH_INVALID it is left alone.
 */
enum pol_host_path pol_host_path_risk(const char *path, size_t *out_top_len);

/*
 * policy-print.c: the effective policy as text.
 *
 * pol_to_json: a JSON object whose keys follow the YAML sections in order (user, hostname,
 * filesystem, workspace, namespaces, capabilities, network, env, seccomp, limits, unsafe,
 * sources). Limits
 * carry their unit in the key (memory_bytes, wall_ms, cpu_millicpus, ...); every integer is
 * printed exactly, as a JSON number.
 *
 * pol_to_yaml: a complete policy document (every section, every field; sizes in bytes, times
 * with an ms suffix) that pol_parse accepts and that gives back an equal policy (pol_equal)
 * whenever the text stays within POL_MAX_INPUT_BYTES (only a policy near every list and
 * string limit at once comes close). ->sources is written as a leading comment only.
 *
 * Both take p borrowed (normally a policy from pol_parse), store a NUL-terminated malloc()ed
 * string the caller frees with free() in *out and return 0; or return -ENOMEM, or -EINVAL when
 * p holds something the language cannot spell (a NULL string, an unknown enum, a string that
 * is not UTF-8), and leave *out untouched.
 */
int pol_to_json(const struct pol_policy *p, char **out);
int pol_to_yaml(const struct pol_policy *p, char **out);

/*
 * True iff a and b (borrowed, not NULL) describe the same effective policy: every field and
 * list entry, in order. ->sources is not compared (it records where a policy came from, not
 * what it does).
 */
bool pol_equal(const struct pol_policy *a, const struct pol_policy *b);

/* For parsers that embed a policy (a task file, eval/task.c). */

/* The limits a policy file is loaded under (POL_MAX_*). */
struct pol_yaml_limits;
extern const struct pol_yaml_limits pol_policy_limits;

/*
 * pol_parse_file for a policy that is already a tree: root (borrowed), a mapping inside a
 * larger document named name (the task file), is checked against pol_policy_limits, then laid
 * over the embedded default like a policy file of that name; `extends` and relative bind
 * sources resolve against name's directory, and `what` ("task") names that file in messages.
 * Errors inside root keep name's line and column. Same results and ownership as pol_parse_file.
 */
struct pol_node;
int pol_parse_tree(const char *name, const char *what, const struct pol_node *root,
		   pol_loader load, void *ctx, struct pol_policy **out, struct pol_diag *reterr);
