/* SPDX-License-Identifier: MIT */
/*
 * Filesystems under warden's own state: what a directory's filesystem is called, whether it
 * can hold an overlay's upper layer, and the tmpfs that stands in for one that cannot.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>

/* The name of the filesystem fd lies on ("ext4", "overlayfs", ... or "0x<magic>"), in buf. */
const char *sbx_fs_name(int fd, char *buf, size_t len);

/*
 * 1 when the filesystem fd lies on can be an overlay's upper layer, 0 when it is one the
 * kernel refuses there (overlayfs itself, network and FUSE filesystems), -errno on error.
 */
int sbx_fs_holds_upper(int fd);

/*
 * Mounts a fresh tmpfs (mode 0700, owned by the caller) on the directory dir_fd, in the
 * caller's mount namespace, made private. For a state directory whose own filesystem cannot
 * hold an upper layer. Returns 0 or -errno.
 */
int sbx_state_tmpfs(int dir_fd);
