/* SPDX-License-Identifier: MIT */
/*
 * policy: YAML to a validated struct pol_policy.
 *
 * Pure code: given bytes, it makes no syscalls and does no file I/O; checking that host paths
 * named in binds exist lives in the supervisor. The parser can be unit-tested and fuzzed
 * unprivileged.
 *
 * Schema: every section of policy/default.yaml is optional in a file. The embedded default is
 * parsed first and the file is laid over it: a scalar the file leaves out keeps the default's
 * value, and a list the file gives replaces the default's list as a whole. Unknown keys,
 * duplicate keys, wrong node types, anchors, aliases, tags, directives, a second document and
 * an empty document are all errors.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Parser limits: everything a user can write is bounded. */
#define POL_MAX_INPUT_BYTES (256u * 1024u) /* larger input: -E2BIG before any parsing */
#define POL_MAX_DEPTH 8        /* nested mappings/sequences; the top-level mapping is level 1 */
#define POL_MAX_LIST 256       /* entries in one sequence, keys in one mapping */
#define POL_MAX_STRING 4096    /* bytes in one scalar (key or value) */
#define POL_MAX_EVENTS 65536   /* libyaml events in one input */

/* A diagnostic: where and what. line and column are 1-based; 0 when unknown. */
struct pol_diag {
	char file[256];
	unsigned line;
	unsigned column;
	char message[512];
};

enum pol_bind_mode {
	POL_BIND_RO = 0,
	POL_BIND_RW = 1,
};

struct pol_bind {
	char *src;      /* absolute host path */
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
	POL_UNSAFE_NO_CGROUP = 1u << 0, /* start without a cgroup when none can be created */
	POL_UNSAFE_IO_URING = 1u << 1,  /* allow io_uring_* syscalls */
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
	char **protect;          /* workspace-relative paths kept read-only / uncreatable */
	size_t n_protect;
	char **allow_create;     /* protect entries that may be created when missing */
	size_t n_allow_create;

	/* env */
	char **env_set;          /* "NAME=value" */
	size_t n_env_set;
	char **env_pass;         /* host variable names passed through when set */
	size_t n_env_pass;

	/* seccomp */
	enum pol_seccomp_action seccomp_default;
	char **seccomp_allow;    /* extra syscall names to allow */
	size_t n_seccomp_allow;
	char **seccomp_deny;     /* syscall names to deny even if the base profile allows them */
	size_t n_seccomp_deny;

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
};

/*
 * Parses a policy from buf (len bytes, not necessarily NUL-terminated; borrowed) laid over the
 * embedded default. name (borrowed, may be NULL for "<input>") is used in diagnostics, e.g. the
 * file path. On success stores a new policy in *out (the caller owns it; free with pol_free) and
 * returns 0; *reterr is not touched. On failure returns -EINVAL (bad input), -E2BIG (input over
 * POL_MAX_INPUT_BYTES) or -ENOMEM, fills *reterr (when reterr is not NULL) with the file name,
 * the 1-based line and column of the offending node (0 when there is none, as for -E2BIG) and
 * a one-line message "what is wrong (expected ...)", and leaves *out untouched.
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
