/* SPDX-License-Identifier: MIT */
/*
 * Filesystem facts for the workspace and the changeset state, and the state tmpfs. A
 * changeset's upper layer must lie on a filesystem that overlayfs accepts as upper (it needs
 * whiteouts, xattrs and O_TMPFILE); a container's root is overlayfs, which is not one.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/magic.h>
#include <stdio.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/statfs.h>
#include <unistd.h>

#include "cleanup.h"
#include "sandbox.h"
#include "statefs.h"

#ifndef XFS_SUPER_MAGIC
#define XFS_SUPER_MAGIC 0x58465342
#endif
#ifndef ZFS_SUPER_MAGIC
#define ZFS_SUPER_MAGIC 0x2fc12fc1
#endif
#ifndef FUSE_SUPER_MAGIC
#define FUSE_SUPER_MAGIC 0x65735546
#endif
#ifndef CIFS_SUPER_MAGIC
#define CIFS_SUPER_MAGIC 0xff534d42
#endif
#ifndef SMB2_SUPER_MAGIC
#define SMB2_SUPER_MAGIC 0xfe534d42
#endif
#ifndef BCACHEFS_SUPER_MAGIC
#define BCACHEFS_SUPER_MAGIC 0xca451a4e
#endif

static const struct {
	unsigned long magic;
	const char *name;
	bool upper;        /* overlayfs takes it as an upper layer */
} known[] = {
	{ EXT4_SUPER_MAGIC, "ext4", true }, /* ext2 and ext3 share the magic */
	{ XFS_SUPER_MAGIC, "xfs", true },
	{ BTRFS_SUPER_MAGIC, "btrfs", true },
	{ TMPFS_MAGIC, "tmpfs", true },
	{ F2FS_SUPER_MAGIC, "f2fs", true },
	{ BCACHEFS_SUPER_MAGIC, "bcachefs", true },
	{ ZFS_SUPER_MAGIC, "zfs", true },
	{ OVERLAYFS_SUPER_MAGIC, "overlayfs", false },
	{ NFS_SUPER_MAGIC, "nfs", false },
	{ FUSE_SUPER_MAGIC, "fuse", false },
	{ V9FS_MAGIC, "9p", false },
	{ CIFS_SUPER_MAGIC, "cifs", false },
	{ SMB2_SUPER_MAGIC, "smb2", false },
	{ MSDOS_SUPER_MAGIC, "vfat", false },
	{ ECRYPTFS_SUPER_MAGIC, "ecryptfs", false },
};

const char *sbx_fs_name(int fd, char *buf, size_t len)
{
	struct statfs sf;
	if (fstatfs(fd, &sf) < 0) {
		(void)snprintf(buf, len, "unknown");
		return buf;
	}
	for (size_t i = 0; i < ELEMENTSOF(known); i++)
		if ((unsigned long)sf.f_type == known[i].magic) {
			(void)snprintf(buf, len, "%s", known[i].name);
			return buf;
		}
	(void)snprintf(buf, len, "0x%lx", (unsigned long)sf.f_type);
	return buf;
}

int sbx_fs_holds_upper(int fd)
{
	struct statfs sf;
	if (fstatfs(fd, &sf) < 0)
		return -errno;
	for (size_t i = 0; i < ELEMENTSOF(known); i++)
		if ((unsigned long)sf.f_type == known[i].magic)
			return known[i].upper;
	return 1; /* unknown: let the overlay mount itself say */
}

int sbx_state_tmpfs(int dir_fd)
{
	_cleanup_close_ int fs = fsopen("tmpfs", FSOPEN_CLOEXEC);
	if (fs < 0)
		return -errno;
	char owner[32];
	(void)snprintf(owner, sizeof(owner), "%u", (unsigned)geteuid());
	if (fsconfig(fs, FSCONFIG_SET_STRING, "mode", "0700", 0) < 0 ||
	    fsconfig(fs, FSCONFIG_SET_STRING, "uid", owner, 0) < 0 ||
	    fsconfig(fs, FSCONFIG_CMD_CREATE, NULL, NULL, 0) < 0)
		return -errno;
	/* Not noexec: a workspace's copy below it is the lower layer of the sandbox's /workspace. */
	_cleanup_close_ int mnt = fsmount(fs, FSMOUNT_CLOEXEC, MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV);
	if (mnt < 0)
		return -errno;
	struct mount_attr attr = { .propagation = MS_PRIVATE };
	if (mount_setattr(mnt, "", AT_EMPTY_PATH, &attr, sizeof(attr)) < 0)
		return -errno;
	if (move_mount(mnt, "", dir_fd, "",
		       MOVE_MOUNT_F_EMPTY_PATH | MOVE_MOUNT_T_EMPTY_PATH) < 0)
		return -errno;
	return 0;
}
