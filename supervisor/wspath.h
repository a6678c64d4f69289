/* SPDX-License-Identifier: MIT */
/*
 * Where a workspace may be: it is bound read-write into the sandbox, so it must not be a tree
 * of the host's own (policy.h, pol_host_path_risk), the invoking user's home or a directory
 * above it, a path reached through a symlink, or a directory on a kernel pseudo filesystem.
 * The policy's `unsafe: [workspace-anywhere]` lifts all of it. docs/run.md has the rules.
 */
#pragma once

#include <stddef.h>
#include <stdint.h>

#include "fail.h"

/*
 * Opens path (borrowed; relative to the working directory unless absolute) as the workspace:
 * O_PATH | O_DIRECTORY | O_CLOEXEC through openat2 with RESOLVE_NO_SYMLINKS and
 * RESOLVE_NO_MAGICLINKS, so that no component of the path as given may be a symlink; with
 * POL_UNSAFE_WORKSPACE_ANYWHERE in unsafe, symlinks are followed as open() does. A path that
 * is exactly "/proc/self/fd/N" names a directory this process holds open (how `warden grade`
 * hands over a run folder's workspace) and is opened as "." beneath descriptor N.
 *
 * Returns the new descriptor (the caller owns it), or a negative errno with a one-line
 * reason that names path in f (err 0: the errno's text, where it helps, is in the reason):
 * -ELOOP when a symlink is in the way, -ENOSYS when the kernel has no openat2 (the run is
 * refused rather than opened without the check), or what openat2 failed with.
 */
int sup_open_workspace(const char *path, uint32_t unsafe, struct fail *f);

/*
 * Checks the workspace open at fd (borrowed), whose canonical path (from /proc/self/fd) is
 * abs_path, against the rules above but the symlink one (sup_open_workspace's): the path
 * rules of pol_host_path_risk, the real uid's home directory as /etc/passwd gives it and as
 * $HOME (secure_getenv) gives it, each lexically and resolved, and the filesystem type
 * (fstatfs). unsafe holds the policy's POL_UNSAFE_* bits; with POL_UNSAFE_WORKSPACE_ANYWHERE
 * nothing is checked.
 *
 * Returns 0 when the workspace may be used. Otherwise returns -EPERM, with a one-line reason
 * in f that names abs_path, the rule and the remedy (a project directory, or the policy's
 * `unsafe: [workspace-anywhere]`), or another negative errno when fstatfs fails (f says
 * so). f is written only on failure.
 */
int sup_check_workspace(int fd, const char *abs_path, uint32_t unsafe, struct fail *f);
