/* SPDX-License-Identifier: MIT */
/*
 * Changesets: where a run in workspace mode "changes" keeps what its sandbox wrote, and the
 * commands that list, show, apply and discard them (docs/workspace.md).
 *
 * The state directory is /var/lib/warden/changes as root, else $XDG_STATE_HOME/warden/changes
 * (default ~/.local/state/warden/changes); it and warden's folder above it are 0700 and ours.
 * A changeset is <id>/ (0700, ours) holding meta.json, written only by warden, and layer/
 * (0700, the sandbox's host id) with the overlay's upper/ and work/ folders. The run holds
 * an flock on <id>/ while its sandbox lives; nothing applies or discards a locked changeset.
 */
#pragma once

#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <time.h>

#include "apply.h"
#include "fail.h"

#define SUP_CHANGES_ID_LEN 32

struct pol_policy;

/* A changeset being made by a run. */
struct sup_changeset {
	char id[SUP_CHANGES_ID_LEN];
	int dir_fd;                  /* <id>/, locked (flock, exclusive) while the run lives */
	int layer_fd;                /* <id>/layer, O_PATH */
	char layer_path[PATH_MAX];   /* its path, for the sandbox's child to re-resolve */
	struct timespec base;        /* CLOCK_REALTIME_COARSE when it was made, then when the
					run let its command go (host changes from then on conflict) */
	uint32_t upper_uid, upper_gid;
};

/* The state directory's changes/ folder that a run would use, in out; 0 or -errno. */
int sup_changes_state_path(bool privileged, char *out, size_t len);

void sup_changeset_init(struct sup_changeset *cs);
/* Closes what cs holds (the lock goes with it). The changeset stays on disk. */
void sup_changeset_done(struct sup_changeset *cs);

/*
 * Makes a new changeset in the state directory (created if missing) for the workspace ws_fd
 * (borrowed; ws_path its canonical path) whose layer belongs to upper_uid/upper_gid, and
 * writes its meta.json (state "running"). argv and pol are recorded. Returns 0 with *out
 * filled, or -errno with what failed in f.
 */
int sup_changeset_create(bool privileged, int ws_fd, const char *ws_path, uint32_t upper_uid,
			 uint32_t upper_gid, const struct pol_policy *pol, char *const *argv,
			 struct sup_changeset *out, struct fail *f);

/*
 * A scratch layer: the same layer/ (upper/ and work/ for the sandbox's host id) in a locked
 * folder .scratch-<random> of the state directory, with no meta.json, never listed, applied
 * or kept: the overlay for a command whose writes must vanish (eval's command criteria). On
 * disk rather than on a tmpfs, whose user xattrs overlayfs needs in a user namespace and
 * which Linux has only from 6.6. Scratch folders that no run holds any more (a killed
 * supervisor's) are removed when the next one is made. Returns 0 or -errno with f filled.
 */
int sup_changeset_create_scratch(bool privileged, uint32_t upper_uid, uint32_t upper_gid,
				 struct sup_changeset *out, struct fail *f);

/* Removes cs's folder, whatever it holds (a scratch layer at the end of its run). 0 or -errno. */
int sup_changeset_discard(struct sup_changeset *cs, bool privileged);

/* Bounds of sup_changeset_snapshot's copy. */
#define SUP_SNAPSHOT_MAX_ENTRIES 200000u
#define SUP_SNAPSHOT_MAX_BYTES (8ull << 30)
#define SUP_SNAPSHOT_MAX_DEPTH 128u

/*
 * For a workspace on a filesystem that cannot be idmapped: copies it (treecopy.h: files,
 * folders and symlinks, times kept, special files left out, set-id bits dropped, owned by
 * warden) into <id>/lower, which then stands for it as the overlay's lower layer, idmapped
 * on the changeset's filesystem. Returns the fd of lower/ or -errno with the whole reason
 * in f (err 0). sup_changeset_finish removes the copy.
 */
struct sup_copy_stats;
int sup_changeset_snapshot(struct sup_changeset *cs, int ws_fd, struct sup_copy_stats *stats,
			   struct fail *f);

/*
 * At the end of the run: with apply, applies the changeset's safe part (the rules in apply.h,
 * the policy's hold list) and reports in *rep; then records what is still pending in
 * meta.json, or removes the changeset when nothing is. Returns 0 or -errno.
 */
int sup_changeset_finish(struct sup_changeset *cs, bool privileged, int ws_fd, bool apply,
			 const struct pol_policy *pol, struct sup_chg_report *rep, bool *out_kept);

/* The commands. Exit codes in docs/workspace.md: 0 done, 1 something pending or refused,
 * 2 bad usage or no such changeset, 3 locked (its run is still going). */
int sup_cmd_changes(int argc, char **argv);
int sup_cmd_diff(int argc, char **argv);
int sup_cmd_apply(int argc, char **argv);
int sup_cmd_discard(int argc, char **argv);
