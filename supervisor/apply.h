/* SPDX-License-Identifier: MIT */
/*
 * Applying a changeset: the only code that writes a sandbox's changes into the host's
 * workspace (docs/workspace.md, "Apply rules").
 *
 * The upper layer of a run's overlay is hostile input: the sandbox chose every name, type,
 * mode, link target and byte in it. It is read and applied in a child that runs as the
 * workspace's owner with no capability but CAP_DAC_READ_SEARCH (to read the upper layer,
 * which belongs to the sandbox's host id), under no_new_privs; every path is resolved
 * fd-relative with openat2(RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS).
 * What it did comes back as records through a pipe, decoded with the codec's bounded reader.
 * A second child, as the upper layer's owner, then removes what was applied from the layer,
 * so that what stays in the changeset is exactly what is still pending.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* What an entry of a changeset is. */
enum sup_chg_kind {
	SUP_CHG_ADDED = 1,   /* a file or symlink the host does not have */
	SUP_CHG_MODIFIED,    /* a file or symlink that replaces the host's */
	SUP_CHG_DELETED,     /* a path the sandbox removed */
	SUP_CHG_DIR,         /* a directory: created, or only holding other changes */
	SUP_CHG_SPECIAL,     /* a device, FIFO or socket: never applied */
	SUP_CHG_KIND_MAX = SUP_CHG_SPECIAL,
};

/* What became of it. */
enum sup_chg_verdict {
	SUP_CHG_APPLIED = 1, /* written to the host (or, in a dry run, would be) */
	SUP_CHG_HELD,        /* named by the hold rules: pending until --include names it */
	SUP_CHG_REFUSED,     /* unsafe or in conflict: pending, with the reason */
	SUP_CHG_VERDICT_MAX = SUP_CHG_REFUSED,
};

#define SUP_CHG_MAX_ENTRIES 1000000u  /* records one apply may report */
#define SUP_CHG_MAX_REASON 256u       /* bytes of one reason */
#define SUP_CHG_MAX_DEPTH 256u        /* directory levels walked */

struct sup_chg_entry {
	char *path;   /* workspace-relative, never empty, no NUL */
	enum sup_chg_kind kind;
	enum sup_chg_verdict verdict;
	char *reason; /* held or refused: why; else NULL */
};

struct sup_chg_report {
	struct sup_chg_entry *v;
	size_t n;
	size_t n_applied, n_held, n_refused;
};

struct sup_apply_spec {
	int upper_fd;             /* the changeset's upper layer, an O_RDONLY directory; borrowed */
	int ws_fd;                /* the host workspace, a directory; borrowed */
	char *const *hold;        /* workspace.hold patterns (filesystem.hide syntax) */
	size_t n_hold;
	char *const *include;     /* --include patterns: held paths they name are applied */
	size_t n_include;
	int64_t base_sec;         /* the run's start (CLOCK_REALTIME_COARSE): a host entry whose */
	int64_t base_nsec;        /* ctime is not before it changed since, and is a conflict */
	bool force;               /* apply conflicts anyway */
	bool dry_run;             /* report only; write nothing */
	bool privileged;          /* warden is root: switch to the owners below */
	uint32_t ws_uid, ws_gid;  /* the workspace's owner: the apply runs as them */
	uint32_t upper_uid, upper_gid; /* the upper layer's owner: the pruning runs as them */
};

/*
 * Applies the changeset described by spec (borrowed) to the workspace, in child processes
 * (see above), and stores what happened to each entry in *out (the caller frees it with
 * sup_chg_report_done). Returns 0 when the walk completed, whatever the verdicts; -EBADMSG
 * when the child's records were malformed; another -errno when a child could not run or
 * failed as a whole. *out is filled only on success.
 */
int sup_apply_run(const struct sup_apply_spec *spec, struct sup_chg_report *out);

/*
 * The three steps sup_apply_run takes, each in the calling process with the credentials it
 * has: sup_apply_run forks a child for the walk and one for the pruning and drops to the
 * owners first (spec->privileged, the uid and gid fields); a caller of these functions does
 * that privilege step itself, or runs them where it does not matter (the fuzz target,
 * fuzz/fuzz-apply.c, on scratch directories as whoever runs it). Nothing else differs.
 *
 * sup_apply_walk walks spec->upper_fd against spec->ws_fd (both borrowed), writes to the
 * workspace what the rules let through (nothing when spec->dry_run) and one record per entry
 * to out_fd (borrowed; a pipe, or any file the caller reads back). Returns 0 when the walk
 * completed, whatever the verdicts, or -errno (the records written so far stay written).
 *
 * sup_apply_read_records reads records from fd (borrowed) to its end through the codec's
 * bounded reader into *out (freed with sup_chg_report_done). Returns 0; -EBADMSG for a
 * malformed record; -E2BIG past SUP_CHG_MAX_ENTRIES; -ENOMEM, or -errno from read(2).
 * *out is filled only on success.
 *
 * sup_apply_prune removes rep's applied entries from the upper layer (spec->upper_fd), then
 * every directory above them that is left empty and not opaque, and clears the opaque marker
 * of an applied directory, so that what stays is what is pending. Returns 0, or -EIO when
 * some entry could not be removed (the others are removed all the same).
 */
int sup_apply_walk(const struct sup_apply_spec *spec, int out_fd);
int sup_apply_read_records(int fd, struct sup_chg_report *out);
int sup_apply_prune(const struct sup_apply_spec *spec, const struct sup_chg_report *rep);

/* Frees what a report owns and zeroes it. NULL-safe. */
void sup_chg_report_done(struct sup_chg_report *r);

/* What `warden diff` shows of one file (sup_apply_diff). */
enum sup_diff_status {
	SUP_DIFF_TEXT = 1,   /* text holds the hunks (none: the same bytes) */
	SUP_DIFF_BINARY,     /* a side holds a NUL byte */
	SUP_DIFF_TOO_LARGE,  /* a side over SUP_TEXTDIFF_MAX_BYTES or _MAX_LINES, or the diffs
				of the whole changeset over SUP_DIFF_MAX_TOTAL */
	SUP_DIFF_UNREADABLE, /* a side could not be read: err */
	SUP_DIFF_STATUS_MAX = SUP_DIFF_UNREADABLE,
};

#define SUP_DIFF_MAX_TOTAL (64u << 20) /* bytes of hunks for one changeset */

struct sup_file_diff {
	size_t index;             /* the entry of the report it belongs to */
	enum sup_diff_status status;
	bool old_file, new_file;  /* a regular file on the host (a/), in the changeset (b/) */
	uint32_t old_mode;        /* the host file's permission bits */
	uint32_t new_mode;        /* the changeset file's, as the apply would set them */
	int err;                  /* SUP_DIFF_UNREADABLE: -errno */
	char *text;               /* SUP_DIFF_TEXT: the hunks (textdiff.h), any bytes: the sandbox
				     chose them, so they are escaped before they are shown */
	size_t text_len;
};

struct sup_diff_list {
	struct sup_file_diff *v;
	size_t n;
};

/*
 * The diffs of rep's (borrowed; a dry run's report of spec) added, modified and deleted
 * entries whose host or changeset side is a regular file: the host's file (ws_fd) against
 * the changeset's (upper_fd), or /dev/null where a side has none. Computed in a child like
 * the walk's (the workspace's owner, no capability but CAP_DAC_READ_SEARCH, no_new_privs),
 * since both sides may be bytes the sandbox wrote, and read back through the codec's bounded
 * reader. Stores them in report order in *out (freed with sup_diff_list_done) and returns 0;
 * -EBADMSG when the child's records are malformed; another -errno when the child could not
 * run or failed. *out is filled only on success.
 */
int sup_apply_diff(const struct sup_apply_spec *spec, const struct sup_chg_report *rep,
		   struct sup_diff_list *out);

/*
 * sup_apply_diff's two steps, in the calling process with its credentials (see
 * sup_apply_walk): sup_apply_diff_write writes the records of rep's diffs to out_fd
 * (borrowed) and returns 0 or -errno; sup_apply_diff_read reads them from fd to its end
 * through the bounded reader, for a report of n_entries entries, into *out (filled only on
 * success) and returns 0, -EBADMSG for a malformed record, -ENOMEM or -errno.
 */
int sup_apply_diff_write(const struct sup_apply_spec *spec, const struct sup_chg_report *rep,
			 int out_fd);
int sup_apply_diff_read(int fd, size_t n_entries, struct sup_diff_list *out);

/* Frees what a diff list owns and zeroes it. NULL-safe. */
void sup_diff_list_done(struct sup_diff_list *l);

/* Names for records and --json ("added", "applied", ...), or "?" for an unknown value. */
const char *sup_chg_kind_name(enum sup_chg_kind k);
const char *sup_chg_verdict_name(enum sup_chg_verdict v);

/*
 * True when a symlink at a workspace path `depth` directories deep with this target stays
 * inside the workspace whatever lies on the way: relative, with ".." only as its leading
 * components and never climbing above the workspace. Pure; exposed for the unit tests.
 */
bool sup_link_stays_inside(const char *target, unsigned depth);

/*
 * The mode a file or directory gets on the host: the permission bits of `mode` without
 * set-user-ID, set-group-ID and sticky, and without group or world write unless the host's
 * entry already had that bit (host_mode; -1 when there was none). Pure; for the unit tests.
 */
unsigned sup_apply_mode(unsigned mode, int host_mode);
