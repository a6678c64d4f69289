/* SPDX-License-Identifier: MIT */
/*
 * `warden doctor [--json]`: can this host give the isolation the default policy needs? Each
 * check says ok or what is missing and what to do about it. Nothing is degraded silently.
 */
#include <cjson/cJSON.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cgroup.h"
#include "cleanup.h"
#include "changes.h"
#include "cli.h"
#include "config.h"
#include "host.h"
#include "log.h"
#include "policy.h"
#include "statefs.h"
#include "supervisor.h"

DEFINE_CLEANUP(cJSON *, cJSON_Delete)
DEFINE_CLEANUP(struct pol_policy *, pol_free)

enum status { ST_OK, ST_MISSING, ST_INFO };

struct check {
	const char *id;
	enum status status;
	bool required;
	char detail[640];
	const char *remedy;
};

static const char usage[] =
	"Usage: warden doctor [--json]\n"
	"\n"
	"Checks whether this host can give the isolation that warden's default policy needs,\n"
	"by trying each mechanism: user namespaces (as root and as an unprivileged user,\n"
	"including Ubuntu's AppArmor restriction), cgroups, seccomp filters, openat2,\n"
	"close_range, pidfd, clone3, the new mount API and idmapped mounts; it also reports the\n"
	"Landlock ABI. For every missing piece it says what to do.\n"
	"\n"
	"Exit status: 0 every required check passed; 1 one failed; 2 bad usage.\n";

static void set(struct check *c, const char *id, bool required, int r, const char *remedy,
		const char *ok_detail)
{
	c->id = id;
	c->required = required;
	c->status = r == 0 ? ST_OK : ST_MISSING;
	c->remedy = r == 0 ? NULL : remedy;
	if (r == 0)
		(void)snprintf(c->detail, sizeof(c->detail), "%s", ok_detail);
	else
		(void)snprintf(c->detail, sizeof(c->detail), "%s", strerror(-r));
}

/* c's detail, truncated to fit. */
__attribute__((format(printf, 2, 3))) static void detail(struct check *c, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	(void)vsnprintf(c->detail, sizeof(c->detail), fmt, ap);
	va_end(ap);
}

/*
 * Where this host's sandbox cgroups go, and why (sbx_cgroup_place, r its result), decided
 * before the cgroup probe: on v2 that probe may move doctor into a scope of its own.
 */
static void cgroup_placement(struct check *c, int r, const struct sbx_cg_place *pl)
{
	c->id = "cgroup.placement";
	c->required = false;
	c->status = ST_INFO;
	c->remedy = NULL;
	if (r < 0)
		detail(c, "unknown: /proc/self/cgroup: %s", strerror(-r));
	else if (pl->where == SBX_CG_V2_SCOPE)
		detail(c, "below a scope of its own that the user's systemd (%s) starts for it, "
			  "as %s (warden is in %s: %s)", pl->systemd, pl->why, pl->own, pl->mark);
	else if (pl->where == SBX_CG_V2_TOP || pl->where == SBX_CG_V2_OWN)
		detail(c, "%s/warden-*, as %s (warden is in %s: %s)", pl->base, pl->why, pl->own,
		       pl->mark);
	else if (pl->where == SBX_CG_V1)
		detail(c, "%s (warden is in %s)", pl->why, pl->own);
	else
		detail(c, "%s", pl->why);
}

/*
 * The root mount's propagation, from /proc/self/mountinfo (the kernel's text): its optional
 * fields (shared:N, master:N, propagate_from:N, unbindable), or none for a private mount.
 */
static void root_propagation(struct check *c)
{
	c->id = "mount.propagation";
	c->required = false;
	c->status = ST_INFO;
	c->remedy = NULL;
	_cleanup_fclose_ FILE *f = fopen("/proc/self/mountinfo", "re");
	_cleanup_free_ char *line = NULL;
	size_t cap = 0;
	char tags[128] = "";
	bool found = false;
	while (f && getline(&line, &cap, f) > 0) {
		/* id parent maj:min root mountpoint options [optional...] - fstype source opts */
		char *save = NULL, *tok = strtok_r(line, " \n", &save);
		for (int i = 1; tok && i < 5; i++)
			tok = strtok_r(NULL, " \n", &save);
		if (!tok || strcmp(tok, "/") != 0)
			continue;
		found = true; /* the last mount on / is the one in view */
		tags[0] = '\0';
		(void)strtok_r(NULL, " \n", &save); /* the mount options */
		size_t used = 0;
		while ((tok = strtok_r(NULL, " \n", &save)) && strcmp(tok, "-") != 0) {
			int k = snprintf(tags + used, sizeof(tags) - used, "%s%s", used ? " " : "",
					 tok);
			if (k < 0 || (size_t)k >= sizeof(tags) - used)
				break;
			used += (size_t)k;
		}
	}
	if (!found)
		detail(c, "unknown: no mount on / in /proc/self/mountinfo");
	else if (!strncmp(tags, "shared:", 7))
		detail(c, "the root mount is shared (%s), systemd's default: mounts on it "
			  "propagate to its peers, so warden makes every mount tree it mounts on "
			  "private first", tags);
	else
		detail(c, "the root mount is %s%s%s", tags[0] ? "not shared (" : "private", tags,
		       tags[0] ? ")" : "");
}

static const struct cli_option doctor_options[] = {
	{ "json", CLI_LONG, false },
	{ NULL, 0, false },
};

static const struct cli_command doctor_command = {
	.name = "doctor",
	.help = usage,
	.options = doctor_options,
	.usage_exit = CLI_EXIT_USAGE,
};

int sup_cmd_doctor(int argc, char **argv)
{
	bool json = false;
	_cleanup_(cli_done) struct cli cli = { 0 };
	int go = cli_parse_flag(&cli, &doctor_command, argc, argv, &json);
	if (go <= 0)
		return go < 0 ? 1 : cli.exit_code;

	size_t len;
	const char *text = pol_default_yaml(&len);
	_cleanup_(pol_freep) struct pol_policy *pol = NULL;
	struct pol_diag diag;
	if (pol_parse("<default>", text, len, &pol, &diag) < 0) {
		log_error("the embedded default policy does not parse: %s", diag.message);
		return 1;
	}
	bool init = sup_in_init_userns();
	bool priv = sup_decide_privileged(init);
	char cwd[4096];
	if (!getcwd(cwd, sizeof(cwd)))
		(void)snprintf(cwd, sizeof(cwd), "/tmp");

	/* Before the probe, which may move this process into a scope of its own. */
	struct sbx_cg_place place;
	int place_r = sbx_cgroup_place(&place);
	struct sbx_host_facts f;
	sbx_host_probe(pol, priv, cwd, &f);

	struct check checks[20];
	size_t n = 0;
	char buf[200];

	set(&checks[n++], "userns.root", priv, priv ? f.userns_root : 0,
	    "enable user namespaces: sysctl user.max_user_namespaces=15000",
	    priv ? "root can map a sandbox user to an unprivileged host id"
		 : "not probed: warden is not running with root privileges");
	if (!priv)
		checks[n - 1].status = ST_INFO;

	const char *unpriv_remedy =
		f.apparmor_restrict == 1
			? "Ubuntu's AppArmor restricts unprivileged user namespaces: run warden as "
			  "root, or 'sysctl kernel.apparmor_restrict_unprivileged_userns=0'"
		: f.unpriv_userns_clone == 0
			? "sysctl kernel.unprivileged_userns_clone=1, or run warden as root"
			: "allow unprivileged user namespaces (user.max_user_namespaces > 0), or "
			  "run warden as root";
	set(&checks[n++], "userns.unprivileged", !priv, f.userns_unpriv, unpriv_remedy,
	    "an unprivileged user can create a user namespace and map itself");
	if (f.userns_unpriv < 0) {
		(void)snprintf(buf, sizeof(buf), "%s: %s", f.userns_unpriv_step,
			       strerror(-f.userns_unpriv));
		(void)snprintf(checks[n - 1].detail, sizeof(checks[n - 1].detail), "%s", buf);
	}

	const char *cgroup_remedy =
		f.cgroup_version == 1
			? (priv ? "mount the v1 memory, pids, cpu and cpuacct hierarchies, or "
				  "accept no cgroup with 'unsafe: [no-cgroup]' in the policy "
				  "(recorded)"
				: "cgroup v1 cannot be delegated to a normal user: run warden as "
				  "root, or accept no cgroup with 'unsafe: [no-cgroup]' in the "
				  "policy (recorded)")
		: priv ? "start warden alone in a cgroup delegated to it (systemd-run --scope -p "
			 "Delegate=yes -- warden ...) or with a writable /sys/fs/cgroup, or opt "
			 "out with 'unsafe: [no-cgroup]' (recorded)"
		       : "let warden ask your systemd for a delegated scope (it needs your "
			 "user manager running, as in a login session or after 'loginctl "
			 "enable-linger', and its socket in $XDG_RUNTIME_DIR), or run warden in "
			 "one yourself (systemd-run --user --scope -p Delegate=yes -- warden ...), "
			 "or as root, or opt out with 'unsafe: [no-cgroup]' (recorded)";
	set(&checks[n++], "cgroup", true, f.cgroup_create, cgroup_remedy, "");
	struct sbx_cg_place after;
	bool moved = place_r == 0 && place.where == SBX_CG_V2_SCOPE &&
		     sbx_cgroup_place(&after) == 0 && strcmp(after.own, place.own) != 0;
	if (f.cgroup_create == 0)
		(void)snprintf(checks[n - 1].detail, sizeof(checks[n - 1].detail),
			       "cgroup v%d: a sandbox cgroup with memory and pids limits was created "
			       "and removed%s%.400s%s", f.cgroup_version,
			       moved ? ", below the scope the user's systemd started for warden ("
				     : "", moved ? after.own : "", moved ? ")" : "");
	else
		(void)snprintf(checks[n - 1].detail, sizeof(checks[n - 1].detail),
			       "cgroup v%d: %.400s: %s", f.cgroup_version, f.cgroup_step,
			       strerror(-f.cgroup_create));
	cgroup_placement(&checks[n++], place_r, &place);
	root_propagation(&checks[n++]);

	set(&checks[n++], "seccomp.filter", true, f.seccomp_filter,
	    "a kernel built with CONFIG_SECCOMP_FILTER", "a seccomp filter can be installed");
	set(&checks[n++], "openat2", true, f.openat2, "Linux 5.6 or later",
	    "fd-relative resolution with RESOLVE_BENEATH");
	set(&checks[n++], "close_range", true, f.close_range, "Linux 5.9 or later",
	    "available");
	set(&checks[n++], "pidfd", true, f.pidfd, "Linux 5.3 or later (pidfd_open)",
	    "available");
	set(&checks[n++], "clone3", false, f.clone3,
	    "optional: warden falls back to clone with CLONE_PIDFD", "available");
	set(&checks[n++], "mount-api", true, f.mount_api,
	    "Linux 5.12 or later (open_tree, move_mount, fsopen, mount_setattr)", "available");
	char fs[24];
	{
		_cleanup_close_ int d = open(cwd, O_PATH | O_DIRECTORY | O_CLOEXEC);
		(void)snprintf(fs, sizeof(fs), "unknown");
		if (d >= 0)
			(void)sbx_fs_name(d, fs, sizeof(fs));
	}
	set(&checks[n++], "idmapped-mounts", priv, priv ? f.idmap_mounts : 0,
	    "a filesystem that supports idmapped mounts for the workspace (ext4, xfs, btrfs, "
	    "tmpfs on Linux 6.3+)", "");
	struct check *im = &checks[n - 1];
	if (!priv) {
		im->status = ST_INFO;
		(void)snprintf(im->detail, sizeof(im->detail),
			       "not needed: unprivileged runs map the sandbox user to you");
	} else if (f.idmap_mounts == 0) {
		(void)snprintf(im->detail, sizeof(im->detail),
			       "the current directory's filesystem (%s) supports them", fs);
	} else if (f.idmap_mounts == -EINVAL) {
		/* Not a missing feature: the workspace fallback of docs/workspace.md applies. */
		im->status = ST_INFO;
		im->remedy = NULL;
		(void)snprintf(im->detail, sizeof(im->detail),
			       "the current directory's filesystem (%s) cannot be idmapped: mode "
			       "changes copies such a workspace; mode direct runs the sandbox as its "
			       "owner, never as root", fs);
	} else {
		(void)snprintf(im->detail, sizeof(im->detail), "the current directory's filesystem "
			       "(%s): %s", fs, strerror(-f.idmap_mounts));
	}
	/* Where changesets go (supervisor/changes.c): the nearest folder that exists. */
	char state[4096];
	int named = sup_changes_state_path(priv, state, sizeof(state));
	if (named < 0)
		(void)snprintf(state, sizeof(state), "(none: set XDG_STATE_HOME or HOME)");
	char want[sizeof(state)];
	(void)snprintf(want, sizeof(want), "%s", state);
	int sfd = -1;
	for (char *slash; (sfd = open(state, O_PATH | O_DIRECTORY | O_CLOEXEC)) < 0 &&
			  (slash = strrchr(state, '/')) && slash != state;)
		*slash = '\0';
	char sfs[24] = "unknown";
	int holds = named < 0 ? named : sfd >= 0 ? sbx_fs_holds_upper(sfd) : -ENOENT;
	if (sfd >= 0) {
		(void)sbx_fs_name(sfd, sfs, sizeof(sfs));
		(void)close(sfd);
	}
	set(&checks[n++], "changes-state", true, holds < 0 ? holds : holds ? 0 : (priv ? 0 : -EXDEV),
	    "set XDG_STATE_HOME to a directory on ext4, xfs, btrfs or tmpfs, or use "
	    "--workspace-mode direct", "");
	if (holds >= 0)
		(void)snprintf(checks[n - 1].detail, sizeof(checks[n - 1].detail),
			       holds > 0 ? "changesets go to %.160s (%s)"
			       : priv ? "changesets go to a tmpfs warden mounts on %.120s: %s cannot "
					"hold an overlay's upper layer (they last until this machine or "
					"container stops)"
				      : "%.160s is on %s, which cannot hold an overlay's upper layer",
			       want, sfs);
	if (holds == 0 && priv)
		checks[n - 1].status = ST_INFO;
	if (named < 0)
		(void)snprintf(checks[n - 1].detail, sizeof(checks[n - 1].detail),
			       "no state directory: neither XDG_STATE_HOME nor HOME is set");

	checks[n].id = "landlock";
	checks[n].required = false;
	checks[n].status = ST_INFO;
	checks[n].remedy = NULL;
	if (f.landlock_abi > 0)
		(void)snprintf(checks[n].detail, sizeof(checks[n].detail),
			       "ABI %d (not used by warden yet)", f.landlock_abi);
	else
		(void)snprintf(checks[n].detail, sizeof(checks[n].detail),
			       "unavailable: %s (not used by warden yet)", strerror(-f.landlock_abi));
	n++;

	bool all_ok = true;
	for (size_t i = 0; i < n; i++)
		if (checks[i].required && checks[i].status == ST_MISSING)
			all_ok = false;

	static const char *const names[] = { "ok", "missing", "info" };
	if (json) {
		_cleanup_(cJSON_Deletep) cJSON *root = cJSON_CreateObject();
		cJSON *arr = root ? cJSON_AddArrayToObject(root, "checks") : NULL;
		bool ok = arr && cJSON_AddStringToObject(root, "warden_version", WARDEN_VERSION) &&
			  cJSON_AddStringToObject(root, "mode",
						  priv ? "privileged" : "unprivileged") &&
			  cJSON_AddBoolToObject(root, "ready", all_ok);
		for (size_t i = 0; ok && i < n; i++) {
			cJSON *o = cJSON_CreateObject();
			ok = o && cJSON_AddItemToArray(arr, o) &&
			     cJSON_AddStringToObject(o, "id", checks[i].id) &&
			     cJSON_AddStringToObject(o, "status", names[checks[i].status]) &&
			     cJSON_AddBoolToObject(o, "required", checks[i].required) &&
			     cJSON_AddStringToObject(o, "detail", checks[i].detail) &&
			     (checks[i].remedy
				      ? cJSON_AddStringToObject(o, "remedy", checks[i].remedy) != NULL
				      : cJSON_AddNullToObject(o, "remedy") != NULL);
		}
		_cleanup_free_ char *out = ok ? cJSON_Print(root) : NULL;
		if (!out) {
			log_error("out of memory");
			return 1;
		}
		(void)puts(out);
	} else {
		(void)printf("warden %s doctor (%s mode)\n\n", WARDEN_VERSION,
			     priv ? "privileged" : "unprivileged");
		for (size_t i = 0; i < n; i++) {
			(void)printf("  %-8s %-20s %s%s\n", names[checks[i].status], checks[i].id,
				     checks[i].detail, checks[i].required ? "" : " (optional)");
			if (checks[i].remedy && checks[i].status == ST_MISSING)
				(void)printf("  %-8s %-20s -> %s\n", "", "", checks[i].remedy);
		}
		(void)printf("\n%s\n", all_ok ? "This host can run warden's default policy."
					      : "This host cannot run warden's default policy yet.");
	}
	return all_ok ? 0 : 1;
}
