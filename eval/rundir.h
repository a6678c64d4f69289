/* SPDX-License-Identifier: MIT */
/*
 * rundir: the folder of one evaluation run, and the workspace inside it (docs/eval.md).
 *
 *   OUT/<task_id>-<YYYYMMDDTHHMMSSZ>-<8 hex>/       (0700, warden's)
 *     record.json  agent.stdout  agent.stderr  setup.log  changes.log  grade.log
 *     workspace/                                     (the workspace's owner's, never root's)
 *
 * Everything here is fd-relative and never follows a symlink it did not expect: a template
 * is copied with symlinks recreated as links (never followed), and a run folder handed to
 * `warden grade` is opened so that a symlinked folder, record or workspace is refused.
 *
 * What runs as root stays outside the workspace: the template is copied, and the workspace
 * later scrubbed, by a child that has become the workspace's owner (sup_rundir_fill,
 * sup_rundir_scrub), so that nothing in the workspace is root's.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include "task.h"

/*
 * The owner of a run folder's workspace when warden runs privileged: uid and gid 65534
 * (nobody, nogroup), not root and outside every sandbox's host id range as the default policy
 * has it. The idmapped mount maps it to each sandbox's own id, so that what a phase writes
 * lands as this id on the host. Unprivileged, the workspace is the user's own.
 */
#define SUP_RUNDIR_OWNER 65534u

/* Bounds on copying a template: a template is the task author's, but a huge one is a mistake. */
#define SUP_RUNDIR_MAX_ENTRIES 100000u   /* files, folders and links in all */
#define SUP_RUNDIR_MAX_DEPTH 64u         /* folders inside folders */
#define SUP_RUNDIR_MAX_BYTES (4ull << 30) /* bytes of regular files in all */

/*
 * Creates OUT/<task_id>-<UTC time of now>-<8 random hex digits>/ (mode 0700) and its empty
 * workspace/ (mode 0755). out_dir is created if missing (one level, mode 0755); the run
 * folder must not exist (O_EXCL semantics through mkdir). On success stores an O_DIRECTORY
 * fd of the run folder (close-on-exec) in *out_dirfd, its path (out_dir/name) in path
 * (path_len bytes) and returns 0; else -errno, with why filled.
 */
int sup_rundir_create(const char *out_dir, const char *task_id, const struct timespec *now,
		      char *path, size_t path_len, int *out_dirfd, char *why, size_t why_len);

/*
 * Copies the folder template_path into the directory ws_fd (borrowed): folders, regular
 * files (content, and permission bits without setuid, setgid or sticky) and symlinks (as
 * links with the same target, never followed). Anything else (FIFO, socket, device) is
 * refused: -EINVAL with its path in why. The template itself must be a directory and not a
 * symlink. Bounded by the SUP_RUNDIR_MAX_* limits (-E2BIG). Returns 0 or -errno with why.
 */
int sup_rundir_copy_template(const char *template_path, int ws_fd, char *why, size_t why_len);

/*
 * Writes the task's inline files into ws_fd (borrowed), in order: parent folders are created
 * as needed (0755), an existing folder is entered only if it is a real folder (never through
 * a symlink), and each file replaces what the template put at its path only if that is a
 * regular file. Mode is exactly files[i].mode. Returns 0 or -errno with why.
 */
int sup_rundir_write_files(int ws_fd, const struct pol_task_file *files, size_t n, char *why,
			   size_t why_len);

/*
 * Makes the empty workspace ws_fd (borrowed) its owner's and fills it: privileged, ws_fd is
 * given to uid:gid first; then a child process that has become uid:gid (privileged: with
 * only CAP_DAC_READ_SEARCH and CAP_DAC_OVERRIDE, so that it reads a template only root may
 * read, as root did; unprivileged: the user, with no_new_privs) copies template_path (when
 * not NULL, sup_rundir_copy_template) and writes the n inline files (sup_rundir_write_files)
 * into ws_fd. Everything it makes is uid:gid's. Returns 0 or -errno with why.
 */
int sup_rundir_fill(int ws_fd, bool privileged, uint32_t uid, uint32_t gid,
		    const char *template_path, const struct pol_task_file *files, size_t n,
		    char *why, size_t why_len);

/* Folders the scrub descends at most; deeper is refused (as the apply refuses deeper). */
#define SUP_RUNDIR_SCRUB_MAX_DEPTH 256u

/*
 * Makes the workspace ws_fd (borrowed) safe for host tools (docs/eval.md, "The run folder"):
 * clears the set-user-ID, set-group-ID and sticky bits of every file and folder in it, the
 * workspace itself included, and removes every FIFO, socket and device node. Symlinks are
 * left as they are and never followed. It runs in a child that has become the workspace's
 * owner (privileged: with only CAP_DAC_READ_SEARCH and CAP_DAC_OVERRIDE, so that a folder
 * made unreadable or unwritable hides nothing; unprivileged: the user, with no_new_privs) and
 * resolves every entry beneath ws_fd with openat2(RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS |
 * RESOLVE_NO_MAGICLINKS | RESOLVE_NO_XDEV). The child writes one line for each entry it
 * changed to log_fd (borrowed; -1 for none), names escaped. Returns how many entries it
 * changed, or -errno with why (then the workspace may be half scrubbed: the caller must set
 * it aside).
 */
int sup_rundir_scrub(int ws_fd, bool privileged, int log_fd, char *why, size_t why_len);

/*
 * Opens a run folder for `warden grade`. path itself must be a directory and not a symlink
 * (O_NOFOLLOW on its last component); inside it, record.json must be a regular file and
 * workspace/ a directory, neither a symlink. On success stores an O_DIRECTORY fd of the run
 * folder in *out_dirfd and returns 0; else -errno with why ("record.json is a symlink").
 */
int sup_rundir_open(const char *path, int *out_dirfd, char *why, size_t why_len);
