/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cleanup.h"
#include "io-util.h"
#include "identity.h"

const char *const sup_ns_names[SUP_N_NS] = { "user", "pid", "mnt", "net", "uts", "ipc", "cgroup" };

/*
 * Reads /proc/<pid>/status whole into a new buffer (*out, caller frees). A status longer than
 * the kernel can print is -E2BIG: too long for us, our failure, not the sandbox's.
 */
static int read_status(pid_t pid, char **out, size_t *out_len)
{
	char path[64];
	(void)snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	_cleanup_free_ char *buf = malloc(WIRE_STATUS_MAX_BYTES + 1);
	if (!buf)
		return -ENOMEM;
	int n = io_read_at(AT_FDCWD, path, buf, WIRE_STATUS_MAX_BYTES + 1);
	if (n == -EFBIG)
		return -E2BIG;
	if (n < 0)
		return n;
	*out_len = (size_t)n;
	*out = TAKE_PTR(buf);
	return 0;
}

static int ns_inode(const char *proc, const char *name, uint64_t *out)
{
	char path[64];
	struct stat st;
	(void)snprintf(path, sizeof(path), "/proc/%s/ns/%s", proc, name);
	if (stat(path, &st) < 0)
		return -errno;
	*out = (uint64_t)st.st_ino;
	return 0;
}

static int fail(struct sup_identity *out, const char *what)
{
	if (out->held) {
		out->held = false;
		(void)snprintf(out->failure, sizeof(out->failure), "%s", what);
	}
	return -EPERM;
}

int sup_check_identity(pid_t pid, const struct sup_expect *want, const struct wire_identity *claimed,
		       struct sup_identity *out)
{
	memset(out, 0, sizeof(*out));
	_cleanup_free_ char *buf = NULL;
	size_t len = 0;
	int r = read_status(pid, &buf, &len);
	if (r < 0)
		return r;
	uint64_t ns_self[SUP_N_NS], ns_worker[SUP_N_NS];
	char self_pid[16];
	(void)snprintf(self_pid, sizeof(self_pid), "%d", (int)pid);
	for (int i = 0; i < SUP_N_NS; i++) {
		r = ns_inode("self", sup_ns_names[i], &ns_self[i]);
		if (r >= 0)
			r = ns_inode(self_pid, sup_ns_names[i], &ns_worker[i]);
		if (r < 0)
			return r;
	}
	return sup_judge_identity(buf, len, ns_self, ns_worker, want, claimed, out);
}

int sup_judge_identity(const char *status, size_t len, const uint64_t ns_self[SUP_N_NS],
		       const uint64_t ns_worker[SUP_N_NS], const struct sup_expect *want,
		       const struct wire_identity *claimed, struct sup_identity *out)
{
	memset(out, 0, sizeof(*out));
	int r = wire_parse_status(status, len, &out->kernel, &out->nspid_depth);
	if (r < 0)
		return r;
	memcpy(out->ns_self, ns_self, sizeof(out->ns_self));
	memcpy(out->ns_worker, ns_worker, sizeof(out->ns_worker));
	out->checked = true;
	out->held = true;

	const struct wire_identity *k = &out->kernel;
	for (int i = 0; i < 4; i++) {
		if ((want->init_userns && k->uid[i] == 0) || k->uid[i] != want->host_uid)
			(void)fail(out, "uid is not the sandbox's host uid");
		if ((want->init_userns && k->gid[i] == 0) || k->gid[i] != want->host_gid)
			(void)fail(out, "gid is not the sandbox's host gid");
	}
	if (k->cap_inh != want->caps || k->cap_prm != want->caps || k->cap_eff != want->caps ||
	    k->cap_bnd != want->caps || k->cap_amb != want->caps)
		(void)fail(out, want->caps ? "a capability set differs from the policy's keep list"
					   : "a capability set is not empty");
	if (k->no_new_privs != 1)
		(void)fail(out, "no_new_privs is not set");
	if (k->seccomp != 2 || k->seccomp_filters < 1)
		(void)fail(out, "no seccomp filter is installed");
	if (out->nspid_depth < 2)
		(void)fail(out, "the pid namespace is not nested");
	/*
	 * The worker is the first process of its own pid namespace, its innermost NSpid value 1:
	 * pid 1 is the one whose exit takes every other process there with it.
	 */
	if (k->pid != 1)
		(void)fail(out, "the worker is not pid 1 of its pid namespace");
	for (int i = 0; i < SUP_N_NS; i++) {
		bool separate = out->ns_self[i] != out->ns_worker[i];
		if (want->ns_new[i] && !separate)
			(void)fail(out, "a namespace is shared with the supervisor");
		if (!want->ns_new[i] && separate)
			(void)fail(out, "a namespace the policy shares is not the supervisor's");
	}

	/* The claim, from inside: same facts, inside ids, pid 1. */
	if (claimed) {
		for (int i = 0; i < 4; i++)
			if (claimed->uid[i] != want->inside_uid || claimed->gid[i] != want->inside_gid)
				(void)fail(out, "claimed ids differ from the kernel's");
		if (claimed->pid != 1 || claimed->cap_inh != k->cap_inh ||
		    claimed->cap_prm != k->cap_prm || claimed->cap_eff != k->cap_eff ||
		    claimed->cap_bnd != k->cap_bnd || claimed->cap_amb != k->cap_amb ||
		    claimed->no_new_privs != k->no_new_privs || claimed->seccomp != k->seccomp ||
		    claimed->seccomp_filters != k->seccomp_filters)
			(void)fail(out, "claimed identity differs from the kernel's");
	}
	return out->held ? 0 : -EPERM;
}
