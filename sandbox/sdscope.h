/* SPDX-License-Identifier: MIT */
/*
 * The user's systemd, asked over D-Bus (sdbus-util.h) for the one thing warden needs from it
 * when run by a normal user: a cgroup delegated to warden. Two questions: is the unit whose
 * cgroup holds a process delegated (Delegate=yes), and: start a transient scope with
 * Delegate=yes holding this process. A client of its own rather than libsystemd's sd-bus,
 * which has no static library on Debian and so cannot be linked into the static supervisor.
 *
 * Where systemd is asked: $XDG_RUNTIME_DIR (when absolute, else /run/user/<euid>)/bus, the
 * user's message bus, else .../systemd/private, the user manager's own socket that
 * `systemctl --user` and `systemd-run --user` use when there is no bus (Debian without
 * dbus-user-session). Either must be a socket owned by this user, and the peer that answers
 * must run as this user (SO_PEERCRED), so no one else's process is ever believed.
 *
 * Every exchange is bounded: each message at most SDBUS_MSG_MAX bytes, at most
 * SBX_SD_MSGS_MAX messages read while waiting for one answer, and SBX_SD_TIMEOUT_MS in all.
 * What systemd answers is parsed by sdbus-util's reader alone.
 */
#pragma once

#include <stdbool.h>
#include <sys/types.h>
#include <sys/un.h>

#define SBX_SD_TIMEOUT_MS 30000
#define SBX_SD_MSGS_MAX 4096

struct sbx_sd_addr {
	char path[sizeof(((struct sockaddr_un *)0)->sun_path)];
	bool bus; /* a message bus (Hello first), else systemd's own socket (a direct connection) */
};

/*
 * Finds the user's systemd (above) without connecting to it. Returns 0 and fills *out, or
 * -ENOENT when neither socket exists as a socket owned by this user; *out untouched then.
 */
int sbx_sd_find(struct sbx_sd_addr *out);

/*
 * Asks systemd at a whether the unit whose cgroup holds pid has Delegate=yes: GetUnitByPID,
 * then the unit's Id and, for a scope or service, its Delegate property (other unit types
 * cannot be delegated: false). Returns 0 and sets *out, or -errno as sbx_sd_start_scope,
 * with *out_what as there; *out untouched on failure.
 */
int sbx_sd_delegated(const struct sbx_sd_addr *a, pid_t pid, bool *out, const char **out_what);

/*
 * Asks systemd at a to start the transient scope unit (a name ending in ".scope") holding
 * this process, with Delegate=yes, and waits until the start job has ended. Returns 0 when
 * it ended "done". On failure *out_what says which step failed, with systemd's own error
 * when it sent one (static storage, valid until the next call), and the result is -ENOENT
 * (no socket), -errno of socket(2)/connect(2), -EPERM (the peer is another user), -EACCES
 * (authentication refused, or systemd's AccessDenied), -ETIMEDOUT, -ECONNRESET (the peer
 * hung up), -EBADMSG/-EMSGSIZE (a malformed answer), -EREMOTEIO (systemd answered with
 * another error), -EPROTO (the job ended otherwise than "done", or an answer out of turn).
 */
int sbx_sd_start_scope(const struct sbx_sd_addr *a, const char *unit, const char **out_what);
