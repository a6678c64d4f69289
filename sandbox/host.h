/* SPDX-License-Identifier: MIT */
/*
 * Host facts: what this kernel and machine can give a sandbox, found by trying (feature
 * probes), never by comparing kernel versions. Used by `warden doctor` and recorded in run
 * records.
 */
#pragma once

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

struct pol_policy;

struct sbx_host_facts {
	/* user namespaces */
	int userns_root;          /* 0 works; otherwise -errno of the failing step */
	int userns_unpriv;        /* same, for an unprivileged uid (probed as 65534 when root) */
	char userns_unpriv_step[64];
	int apparmor_restrict;    /* kernel.apparmor_restrict_unprivileged_userns: 0/1, -1 absent */
	int unpriv_userns_clone;  /* kernel.unprivileged_userns_clone: 0/1, -1 absent */
	long max_user_namespaces; /* user.max_user_namespaces, -1 unreadable */

	/* cgroups */
	int cgroup_version;       /* 2, 1, or 0 when none is mounted */
	int cgroup_create;        /* 0 when a sandbox cgroup with limits could be made and removed */
	char cgroup_step[512];    /* what failed (systemd's own error text included) */

	/* kernel interfaces */
	int seccomp_filter;       /* 0 supported */
	int landlock_abi;         /* ABI version >= 1, or -errno */
	int openat2;              /* 0 present, -ENOSYS absent */
	int close_range;
	int pidfd;
	int clone3;
	int mount_api;            /* open_tree, fsopen, mount_setattr */
	int idmap_mounts;         /* 0 when an idmapped mount of the probe directory works (root) */
};

/*
 * Probes the host. probe_dir is a directory on the filesystem workspaces usually live on (for
 * the idmapped-mount probe). Privileged probes (root user namespace mappings, cgroup creation,
 * idmapped mounts) run only when privileged is true. Never fails: every fact holds its own
 * result.
 */
void sbx_host_probe(const struct pol_policy *pol, bool privileged, const char *probe_dir,
		    struct sbx_host_facts *out);

/*
 * The cheap subset, for every run record: sysctls, the cgroup version, and the syscall
 * presence probes; no child processes, no cgroup or mount is created (those fields are left
 * 0, and cgroup_create, the userns fields and idmap_mounts are -EAGAIN, "not probed").
 */
void sbx_host_probe_cheap(struct sbx_host_facts *out);
