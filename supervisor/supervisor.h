/* SPDX-License-Identifier: MIT */
/*
 * Commands and helpers shared inside supervisor/.
 */
#pragma once

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "policy.h"

/*
 * Policy names (docs/profiles.md). `--policy ARG`, or WARDEN_POLICY when there is no --policy:
 *  - "default" is the embedded default, and so is no ARG and no (or an empty) WARDEN_POLICY;
 *  - an ARG with a '/' or ending in ".yaml" or ".yml" is a file, as the user wrote it;
 *  - anything else is a NAME, found as NAME.yaml in the first of these folders that has it:
 *    $XDG_CONFIG_HOME/warden/policies (or $HOME/.config/warden/policies),
 *    SUP_POLICY_ETC_DIR, and the installed profiles (WARDEN_PROFILES_DIR; for the warden of
 *    a build tree, the build's copy of the source tree's policy/profiles).
 * A NAME is never read from the current directory, which is usually the workspace, where a
 * sandbox could have written its own next policy.
 */
#define SUP_POLICY_ETC_DIR "/etc/warden/policies"
#define SUP_POLICY_N_DIRS 3
#define SUP_POLICY_NAME_MAX 64

/* True when arg is a NAME in the sense above (not "default", not a path). */
bool sup_policy_is_name(const char *arg);

/*
 * The folders a NAME is looked for in, in order, into dirs; their number (2 or 3: without
 * $XDG_CONFIG_HOME and $HOME there is no user folder) into *out_n. Returns 0, or
 * -ENAMETOOLONG (dirs then unusable).
 */
int sup_policy_dirs(char dirs[SUP_POLICY_N_DIRS][PATH_MAX], size_t *out_n);

/*
 * Resolves arg (NULL: WARDEN_POLICY, then "default") as above into out: "default" or a
 * file's path. Returns 0; or -errno with a one-line reason in why: -ENOENT for a NAME that is
 * in no folder (or is not a valid name), -EISDIR or -ENXIO for a NAME.yaml that is not a
 * regular file, another -errno for one that cannot be checked (never a reason to look in the
 * next folder), -ENAMETOOLONG. out is untouched on failure.
 */
int sup_policy_resolve(const char *arg, char *out, size_t out_len, char *why, size_t why_len);

/*
 * Loads a policy: path as sup_policy_resolve takes it (NULL: WARDEN_POLICY, else the
 * embedded default; "default": the embedded default; a NAME: looked up). Reads at most
 * POL_MAX_INPUT_BYTES from a regular file. On success stores the policy and a copy of its
 * source text (for the digest) and returns 0. Returns -EINVAL with *diag filled for a bad
 * policy, or another -errno for a policy that cannot be found or read (a lookup that failed
 * is logged, and diag->message says why).
 */
int sup_load_policy(const char *path, struct pol_policy **out, char **out_text,
		    size_t *out_len, struct pol_diag *diag);

/* True when warden runs in the initial user namespace (its uid_map is the identity map). */
bool sup_in_init_userns(void);

/*
 * Privilege is a fact about our capabilities (CAP_SYS_ADMIN, CAP_SETUID, CAP_SETGID
 * effective) in the initial user namespace, decided once. Never inferred from the euid.
 */
bool sup_decide_privileged(bool init_userns);

/*
 * Checks that every non-optional bind source of pol exists on this host (lstat; a symlink
 * counts). Returns 0, or -errno with a one-line reason in why.
 */
int sup_check_host_paths(const struct pol_policy *pol, char *why, size_t why_len);

/*
 * The pol_loader for `extends:` files (and a task's policy): a bounded read
 * (POL_MAX_INPUT_BYTES) of a regular file. ctx is unused.
 */
int sup_policy_loader(void *ctx, const char *abs_path, char **out_buf, size_t *out_len);

/* The monotonic clock in milliseconds (durations in records). */
uint64_t sup_mono_ms(void);

/* cJSON_AddNumberToObject, as a success flag. */
struct cJSON;
bool sup_json_add_num(struct cJSON *o, const char *k, double v);

/* "sha256:" and 64 lowercase hex digits of buf. */
void sup_digest_hex(const void *buf, size_t len, char out[72]);

/* UTC RFC 3339: 2026-11-29T12:00:00Z, or with millis 2026-11-29T12:00:00.123Z. */
struct timespec;
void sup_rfc3339(const struct timespec *ts, bool millis, char out[40]);

/*
 * Replaces dfd/name (dfd borrowed) with text atomically: a temporary file in the same folder
 * (O_EXCL | O_NOFOLLOW), fsync, rename, fsync of the folder. A name that exists as anything
 * but a regular file is refused (-EEXIST). Returns 0 or -errno; on failure the old file, if
 * any, is untouched and no temporary file is left.
 */
int sup_write_atomic(int dfd, const char *name, const char *text, size_t len);

/* sup_write_atomic of json printed (cJSON_Print) with a final newline. */
int sup_write_json_atomic(int dfd, const char *name, const struct cJSON *json);

int sup_cmd_run(int argc, char **argv);
int sup_cmd_doctor(int argc, char **argv);
int sup_cmd_policy(int argc, char **argv);
