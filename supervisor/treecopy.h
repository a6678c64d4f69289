/* SPDX-License-Identifier: MIT */
/*
 * treecopy: a bounded copy of a host directory tree into an empty directory, walked from
 * directory descriptors without following a symlink. Regular files, folders and symlinks are
 * copied (a symlink as its text, never resolved); ownership is the copier's; permission bits
 * are kept without set-uid, set-gid and sticky.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct sup_copy_limits {
	const char *what;        /* what is copied, for messages ("template", "workspace") */
	uint64_t max_entries;    /* files, folders and links in all */
	uint64_t max_bytes;      /* bytes of regular files in all */
	unsigned max_depth;      /* folders inside folders */
	bool keep_times;         /* access and modification times are copied too */
	bool skip_special;       /* FIFOs, sockets and devices are left out; else an error */
};

struct sup_copy_stats {
	uint64_t entries, bytes, skipped;
};

/*
 * Copies the entries of the folder src (borrowed) into the folder dst (borrowed). Stops at
 * the first problem, with -errno and one line in why that names the entry; what was copied
 * so far stays. An entry that changes type while it is copied, or the folder dst met inside
 * src, is an error.
 */
int sup_copy_tree(int src, int dst, const struct sup_copy_limits *lim,
		  struct sup_copy_stats *stats, char *why, size_t why_len);
