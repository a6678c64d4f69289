/* SPDX-License-Identifier: MIT */
/*
 * rundir: the folder of one evaluation run, and the workspace inside it (docs/eval.md).
 *
 *   OUT/<task_id>-<YYYYMMDDTHHMMSSZ>-<8 hex>/
 *     record.json  agent.stdout  agent.stderr  grade.log  workspace/
 *
 * Everything here is fd-relative and never follows a symlink it did not expect: a template
 * is copied with symlinks recreated as links (never followed), and a run folder handed to
 * `warden grade` is opened so that a symlinked folder, record or workspace is refused.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <time.h>

#include "task.h"

/* Bounds on copying a template: a template is the task author's, but a huge one is a mistake. */
#define SUP_RUNDIR_MAX_ENTRIES 100000u   /* files, folders and links in all */
#define SUP_RUNDIR_MAX_DEPTH 64u         /* folders inside folders */
#define SUP_RUNDIR_MAX_BYTES (4ull << 30) /* bytes of regular files in all */

/*
 * Creates OUT/<task_id>-<UTC time of now>-<8 random hex digits>/ (mode 0755) and its empty
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
 * Opens a run folder for `warden grade`. path itself must be a directory and not a symlink
 * (O_NOFOLLOW on its last component); inside it, record.json must be a regular file and
 * workspace/ a directory, neither a symlink. On success stores an O_DIRECTORY fd of the run
 * folder in *out_dirfd and returns 0; else -errno with why ("record.json is a symlink").
 */
int sup_rundir_open(const char *path, int *out_dirfd, char *why, size_t why_len);
