/* SPDX-License-Identifier: MIT */
/*
 * Unified diffs of text, for `warden diff` (docs/workspace.md), and the escaping that makes
 * their bytes safe to print. Pure: no syscalls, no state; every size is bounded below.
 *
 * The diff is computed in the apply's unprivileged child (supervisor/apply.c), never in root,
 * since both sides may be bytes the sandbox wrote. The escaping runs where the text is shown.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#define SUP_TEXTDIFF_MAX_BYTES (1u << 20) /* a side larger than this is not diffed */
#define SUP_TEXTDIFF_MAX_LINES 65536u     /* nor one with more lines than this */
#define SUP_TEXTDIFF_MAX_EDITS 1024u      /* past this many, a region is shown replaced whole */
#define SUP_TEXTDIFF_MAX_OUT (4u << 20)   /* bytes of one file's hunks */
#define SUP_TEXTDIFF_CONTEXT 3u           /* lines of context around a change */

/* True when the len bytes at p are text: no NUL byte among them. */
bool sup_textdiff_is_text(const char *p, size_t len);

/*
 * The hunks of a unified diff (the lines from the first "@@" on, as `diff -u` prints them)
 * from a (old, a_len bytes) to b (new, b_len bytes), with `context` lines of context; both
 * borrowed, any bytes. Lines end at '\n'; a last line without one is followed by the line
 * "\ No newline at end of file". Where the shortest edit needs more than
 * SUP_TEXTDIFF_MAX_EDITS changed lines, the lines between the common start and end are
 * shown removed and added whole (still a correct diff, only not the smallest).
 *
 * On success stores a new buffer (the caller frees it; NULL when the sides are equal) in
 * *out and its length in *out_len, and returns 0. Returns -E2BIG when a side is over
 * SUP_TEXTDIFF_MAX_BYTES or SUP_TEXTDIFF_MAX_LINES, or the hunks over SUP_TEXTDIFF_MAX_OUT;
 * -ENOMEM. Outputs untouched on failure.
 */
int sup_textdiff(const char *a, size_t a_len, const char *b, size_t b_len, unsigned context,
		 char **out, size_t *out_len);

/*
 * Copies in (len bytes, any bytes, borrowed) to a new NUL-terminated string that is safe on
 * a terminal and valid UTF-8: newline, tab and printable ASCII stay as they are, and so do
 * well-formed UTF-8 sequences of printable characters; every other byte (controls, DEL, a
 * malformed or overlong sequence, and the characters that change how text around them is
 * shown or are invisible: bidirectional controls, zero-width and format characters, tags,
 * noncharacters) becomes "\xHH", one per byte. Stores it in *out (the caller frees it) and
 * its length in *out_len; returns 0 or -ENOMEM (outputs untouched).
 */
int sup_textdiff_escape(const char *in, size_t len, char **out, size_t *out_len);
