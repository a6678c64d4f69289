/* SPDX-License-Identifier: MIT */
/*
 * gitindex: the strict reader of a git index file (.git/index) that a sandbox wrote, for the
 * one question the supervisor asks before copying it to the host: which entries carry a bit
 * that makes the host's git stop looking at the working tree file?
 *
 *  - assume-unchanged (CE_VALID, bit 0x8000 of the entry's 16-bit flags), and
 *  - skip-worktree (bit 0x4000 of the second 16-bit flags word, which exists in versions 3
 *    and 4 when bit 0x4000 of the first word is set).
 *
 * With either bit set, `git status` and `git diff` on the host do not report a change the
 * sandbox planted in that file. The caller lists those paths in the host's index and in the
 * sandbox's, and holds the new index back when pol_gitindex_newly_hidden() says it sets the
 * bits on a path the old one did not.
 *
 * Format (gitformat-index(5)), all numbers big-endian:
 *   "DIRC" | u32 version (2, 3, 4) | u32 n_entries | entries | extensions | checksum[20]
 *   entry: u32 ctime_s, ctime_ns, mtime_s, mtime_ns, dev, ino, mode, uid, gid, size |
 *          oid[20] | u16 flags | (v3+, when flags & 0x4000) u16 flags2 | name
 *   name, v2/v3: the path, then 1..8 NUL bytes padding the entry to a multiple of 8 bytes;
 *   name, v4:    varint N (bytes to strip from the end of the previous entry's path, as in
 *                OFS_DELTA offsets) | the NUL-terminated rest of the path; no padding.
 *   extension:   signature[4] | u32 size | size bytes
 *
 * Pure code: bytes in, a list out; no syscalls, no global state. Every byte is read through
 * wire's bounded cursor (struct wire_rd).
 *
 * What it checks, all of it, before it answers: the header; every entry's framing (the name
 * length field against the NUL-terminated name, zero padding, v4 strip lengths); the mode
 * (0100644, 0100755, 0120000, 0160000, or 040000 for a sparse directory entry); the flags
 * (no extended word in v2, no unknown bit in it); each path (not empty, relative, no empty,
 * ".", ".." or ".git" component, at most POL_GITINDEX_MAX_PATH bytes); the order git keeps
 * (by path as unsigned bytes, then by stage; no stage-0 entry beside stages of the same path);
 * extension framing; and that exactly 20 bytes of checksum end the file.
 *
 * Knowingly not done or not covered:
 *  - The trailing SHA-1 checksum is not verified (the tree has no SHA-1): a wrong one costs
 *    nothing here, since the host's git refuses an index whose checksum does not match.
 *  - SHA-1 repositories only. An index of a SHA-256 repository (extensions.objectFormat) has
 *    32-byte object names, which this reader would frame wrongly; the caller must check the
 *    host repository's object format (which the sandbox cannot change) first.
 *  - Extensions are opaque (signature, size, skipped), except for those that change which
 *    entries git sees, which are refused with -EPROTO: "link" (split index: the entries live
 *    in another file) and "EOIE"/"IEOT" (threaded loading: git would parse the entries from
 *    offsets the file states, not where this reader found them). Unknown mandatory
 *    extensions (signature not starting with 'A'..'Z'), which git itself refuses, are -EBADMSG.
 *  - The "FSMN" (fsmonitor) and "UNTR" (untracked cache) extensions can also make the host's
 *    git skip files, but only when the host enables core.fsmonitor or core.untrackedCache;
 *    they are skipped as opaque here.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#define POL_GITINDEX_MAX_BYTES (256u * 1024u * 1024u) /* the whole file */
#define POL_GITINDEX_MAX_ENTRIES 1000000u              /* the header's entry count */
#define POL_GITINDEX_MAX_PATH 4096u                    /* bytes of one path, without its NUL */
/* Bytes of the returned paths, NULs included: v4 prefix compression lets a 256 MiB file name
 * far more than 256 MiB of paths, so the output is bounded on its own. */
#define POL_GITINDEX_MAX_HIDDEN_BYTES (64u * 1024u * 1024u)

/*
 * Validates the whole index file of len bytes at buf (borrowed, untrusted; need not be
 * NUL-terminated) and lists the paths of the entries that carry assume-unchanged or
 * skip-worktree: each once (entries of several merge stages share a path), sorted by strcmp(),
 * so strictly increasing. A sparse directory entry is listed with its trailing '/'.
 *
 * On success stores a new array of *out_n new strings in *out_paths (NULL when *out_n is 0;
 * free both with pol_gitindex_paths_free()) and returns 0. On failure returns
 *   -EBADMSG  malformed, or breaking a rule above (one bad byte anywhere is enough),
 *   -EPROTO   well-formed, but a split index or threaded-loading tables (see above),
 *   -E2BIG    len over POL_GITINDEX_MAX_BYTES (nothing is read), or the paths to return over
 *             POL_GITINDEX_MAX_HIDDEN_BYTES,
 *   -ENOMEM   out of memory,
 * and leaves *out_paths and *out_n untouched. The whole file is checked before -EPROTO or the
 * second kind of -E2BIG is returned: -EBADMSG wins over both, and -EPROTO over -E2BIG.
 */
int pol_gitindex_hidden(const void *buf, size_t len, char ***out_paths, size_t *out_n);

/* Frees paths[0..n) and the array. NULL-safe (paths may be NULL when n is 0). Returns NULL. */
char **pol_gitindex_paths_free(char **paths, size_t n);

/*
 * Says whether new_paths holds a path that old_paths does not: whether the sandbox's index
 * hides a file that the host's index did not hide. Both lists are as pol_gitindex_hidden()
 * returns them (strictly increasing by strcmp(); either may be NULL when its count is 0) and
 * are borrowed.
 *
 * Returns 1 when there is such a path, storing the first one (borrowed from new_paths) in
 * *out_first when out_first is not NULL; 0 when there is none (*out_first untouched); -EINVAL
 * when either list is not strictly increasing or holds a NULL, which is the caller's bug, and
 * which the caller must treat like 1.
 */
int pol_gitindex_newly_hidden(char *const *old_paths, size_t n_old, char *const *new_paths,
			      size_t n_new, const char **out_first);
