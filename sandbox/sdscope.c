/* SPDX-License-Identifier: MIT */
/*
 * The user's systemd over D-Bus: a delegated scope for warden (sdscope.h).
 */
#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cleanup.h"
#include "sdbus-util.h"
#include "sdscope.h"

#define MATCH_JOB_REMOVED                                                                \
	"type='signal',sender='org.freedesktop.systemd1',path='/org/freedesktop/systemd1'," \
	"interface='org.freedesktop.systemd1.Manager',member='JobRemoved'"

/* What failed, for *out_what: the step, and systemd's own words when it sent an error. */
static char failed_step[512];

static int fail(int r, const char *step)
{
	(void)snprintf(failed_step, sizeof(failed_step), "%s", step);
	return r;
}

/* Appends ": " and s, made printable ASCII ('?' for anything else) and cut to fit. */
static void append_text(struct sdbus_str s)
{
	size_t used = strlen(failed_step);
	if (used + 2 >= sizeof(failed_step))
		return;
	failed_step[used++] = ':';
	failed_step[used++] = ' ';
	for (size_t i = 0; i < s.len && used + 1 < sizeof(failed_step); i++) {
		unsigned char c = (unsigned char)s.p[i];
		failed_step[used++] = c >= 0x20 && c <= 0x7e ? (char)c : '?';
	}
	failed_step[used] = '\0';
}

int sbx_sd_find(struct sbx_sd_addr *out)
{
	static const struct {
		const char *name;
		bool bus;
	} socks[] = { { "bus", true }, { "systemd/private", false } };
	char rt[PATH_MAX];
	const char *env = secure_getenv("XDG_RUNTIME_DIR");
	if (env && env[0] == '/')
		(void)snprintf(rt, sizeof(rt), "%s", env);
	else
		(void)snprintf(rt, sizeof(rt), "/run/user/%u", (unsigned)geteuid());
	for (size_t i = 0; i < ELEMENTSOF(socks); i++) {
		struct sbx_sd_addr a = { .bus = socks[i].bus };
		struct stat st;
		int n = snprintf(a.path, sizeof(a.path), "%s/%s", rt, socks[i].name);
		if (n < 0 || (size_t)n >= sizeof(a.path))
			continue;
		if (stat(a.path, &st) == 0 && S_ISSOCK(st.st_mode) && st.st_uid == geteuid()) {
			*out = a;
			return 0;
		}
	}
	return -ENOENT;
}

/* ---- one connection ---------------------------------------------------------------------- */

struct conn {
	int fd;
	uint32_t serial;
	int64_t deadline_ms; /* CLOCK_MONOTONIC */
	uint8_t *buf;        /* the last message received (SDBUS_MSG_MAX) */
};

static int64_t now_ms(void)
{
	struct timespec ts;
	(void)clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void conn_done(struct conn *c)
{
	if (c->fd >= 0)
		(void)close(c->fd);
	c->fd = -1;
	free(c->buf);
	c->buf = NULL;
}

static int send_all(struct conn *c, const void *p, size_t len)
{
	const char *b = p;
	while (len) {
		ssize_t n = send(c->fd, b, len, MSG_NOSIGNAL);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		b += n;
		len -= (size_t)n;
	}
	return 0;
}

/* Reads exactly len bytes before the deadline. */
static int recv_exact(struct conn *c, void *p, size_t len)
{
	char *b = p;
	while (len) {
		int64_t left = c->deadline_ms - now_ms();
		if (left <= 0)
			return -ETIMEDOUT;
		struct pollfd pfd = { .fd = c->fd, .events = POLLIN };
		int k = poll(&pfd, 1, left > INT_MAX ? INT_MAX : (int)left);
		if (k < 0 && errno == EINTR)
			continue;
		if (k < 0)
			return -errno;
		if (k == 0)
			return -ETIMEDOUT;
		ssize_t n = recv(c->fd, b, len, 0);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		if (n == 0)
			return -ECONNRESET;
		b += n;
		len -= (size_t)n;
	}
	return 0;
}

/* One message into c->buf, parsed; *out's views live until the next call. */
static int recv_msg(struct conn *c, struct sdbus_msg *out)
{
	size_t len;
	int r = recv_exact(c, c->buf, SDBUS_FIXED_LEN);
	if (r < 0)
		return r;
	r = sdbus_msg_length(c->buf, &len);
	if (r < 0)
		return r;
	if (len < SDBUS_FIXED_LEN)
		return -EBADMSG;
	r = recv_exact(c, c->buf + SDBUS_FIXED_LEN, len - SDBUS_FIXED_LEN);
	if (r < 0)
		return r;
	return sdbus_msg_parse(c->buf, len, out);
}

/* The authentication exchange's one answer: a line ending in "\r\n", read a byte at a time
 * so that nothing after it is consumed. */
static int recv_auth_line(struct conn *c)
{
	char line[SDBUS_AUTH_LINE_MAX + 2];
	size_t n = 0;
	for (;;) {
		if (n == sizeof(line))
			return -EBADMSG;
		int r = recv_exact(c, &line[n], 1);
		if (r < 0)
			return r;
		if (line[n++] == '\n')
			break;
	}
	if (n < 2 || line[n - 2] != '\r')
		return -EBADMSG;
	return sdbus_auth_reply(line, n - 2);
}

/* The error systemd (or the bus) answered, into failed_step, as an errno. */
static int remote_error(const struct sdbus_msg *m, const char *step)
{
	struct sdbus_str name, text;
	(void)fail(0, step);
	if (sdbus_read_error(m, &name, &text) < 0)
		return -EBADMSG;
	append_text(name);
	if (text.len)
		append_text(text);
	if (sdbus_str_is(name, "org.freedesktop.DBus.Error.AccessDenied"))
		return -EACCES;
	return -EREMOTEIO;
}

/* A start job being waited for: its unit, whether it ended, and how. */
struct job_wait {
	const char *unit;
	bool ended;
	bool done;
	char result[32];
};

/* Notes m when it is systemd's JobRemoved for jw's unit; anything else is dropped. */
static void note_job(struct job_wait *jw, const struct sdbus_msg *m)
{
	struct sdbus_str unit, result;
	if (sdbus_read_job_removed(m, &unit, &result) < 0 || !sdbus_str_is(unit, jw->unit))
		return;
	jw->ended = true;
	jw->done = sdbus_str_is(result, "done");
	size_t n = result.len < sizeof(jw->result) ? result.len : sizeof(jw->result) - 1;
	memcpy(jw->result, result.p, n);
	jw->result[n] = '\0';
}

/*
 * Sends the message msg[0..len) with serial and reads until its answer: 0 and *out (views into
 * c->buf) for a method return, -errno for an error. Signals on the way are looked at for jw's
 * job (when jw is not NULL) and otherwise dropped, as is anything else.
 */
static int call(struct conn *c, const uint8_t *msg, size_t len, uint32_t serial,
		struct job_wait *jw, const char *step, struct sdbus_msg *out)
{
	int r = send_all(c, msg, len);
	if (r < 0)
		return fail(r, step);
	for (unsigned i = 0; i < SBX_SD_MSGS_MAX; i++) {
		struct sdbus_msg m;
		r = recv_msg(c, &m);
		if (r < 0)
			return fail(r, step);
		if ((m.type == SDBUS_RETURN || m.type == SDBUS_ERROR) && m.reply_serial == serial) {
			if (m.type == SDBUS_ERROR)
				return remote_error(&m, step);
			*out = m;
			return 0;
		}
		if (jw)
			note_job(jw, &m);
	}
	return fail(-EPROTO, step);
}

/* The next serial: never 0. */
static uint32_t next_serial(struct conn *c)
{
	if (++c->serial == 0)
		c->serial = 1;
	return c->serial;
}

/*
 * Connects and authenticates as this user; on a message bus also says Hello and, when match
 * is not NULL, asks for the signals it matches. The peer must run as this user.
 */
static int conn_open(const struct sbx_sd_addr *a, const char *match, struct conn *c)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	uint8_t msg[512];
	size_t len;
	struct sdbus_msg m;
	int r;
	*c = (struct conn){ .fd = -1, .deadline_ms = now_ms() + SBX_SD_TIMEOUT_MS };
	c->buf = malloc(SDBUS_MSG_MAX);
	if (!c->buf)
		return fail(-ENOMEM, "allocate a buffer for systemd's answers");
	memcpy(sa.sun_path, a->path, sizeof(sa.sun_path));
	c->fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (c->fd < 0)
		return fail(-errno, "make a socket");
	if (connect(c->fd, (const struct sockaddr *)&sa, sizeof(sa)) < 0)
		return fail(-errno, a->bus ? "connect to the user's D-Bus ($XDG_RUNTIME_DIR/bus)"
					   : "connect to the user's systemd "
					     "($XDG_RUNTIME_DIR/systemd/private)");
	struct ucred cred;
	socklen_t cl = sizeof(cred);
	if (getsockopt(c->fd, SOL_SOCKET, SO_PEERCRED, &cred, &cl) < 0)
		return fail(-errno, "read the credentials of the user's systemd (SO_PEERCRED)");
	if (cred.uid != geteuid())
		return fail(-EPERM, "check the user's systemd: its socket is served by another user");

	/*
	 * The credentials byte, AUTH EXTERNAL with our uid (the server checks it against the
	 * socket's credentials) and BEGIN at once, before the answer, as libsystemd's own
	 * clients do: then the first message cannot reach the server in the same read as
	 * BEGIN. systemd 252 leaves a message read that way unanswered until something else
	 * wakes its connection (seen in the VM as a 30 s timeout). A refusal still ends here.
	 */
	char line[64];
	line[0] = '\0';
	r = sdbus_auth_line(geteuid(), line + 1, sizeof(line) - 8, &len);
	if (r >= 0) {
		memcpy(line + 1 + len, "BEGIN\r\n", 7);
		r = send_all(c, line, len + 8);
	}
	if (r >= 0)
		r = recv_auth_line(c);
	if (r < 0)
		return fail(r, "authenticate to the user's systemd (AUTH EXTERNAL)");
	if (!a->bus)
		return 0;
	uint32_t serial = next_serial(c);
	r = sdbus_build_hello(msg, sizeof(msg), serial, &len);
	if (r >= 0)
		r = call(c, msg, len, serial, NULL, "say Hello to the user's D-Bus", &m);
	if (r < 0 || !match)
		return r;
	serial = next_serial(c);
	r = sdbus_build_add_match(msg, sizeof(msg), serial, match, &len);
	if (r >= 0)
		r = call(c, msg, len, serial, NULL, "ask the user's D-Bus for systemd's JobRemoved", &m);
	return r;
}

/* ---- the questions ----------------------------------------------------------------------- */

/* A string answer of a Properties.Get ("v" holding "s" or "o"), or a GetUnitByPID ("o"). */
static int read_str_reply(const struct sdbus_msg *m, bool variant, char *out, size_t cap)
{
	struct sdbus_rd r;
	struct sdbus_str s;
	if (sdbus_body(m, variant ? "v" : "o", &r) < 0 ||
	    (variant && !sdbus_get_variant(&r, "s")) || !sdbus_get_str(&r, &s) ||
	    !sdbus_done(&r) || s.len >= cap)
		return -EBADMSG;
	memcpy(out, s.p, s.len);
	out[s.len] = '\0';
	return 0;
}

static bool ends_with(const char *s, const char *suffix)
{
	size_t n = strlen(s), k = strlen(suffix);
	return n >= k && strcmp(s + n - k, suffix) == 0;
}

int sbx_sd_delegated(const struct sbx_sd_addr *a, pid_t pid, bool *out, const char **out_what)
{
	_cleanup_(conn_done) struct conn c = { .fd = -1 };
	uint8_t msg[1024];
	size_t len;
	struct sdbus_msg m;
	char path[SDBUS_STR_MAX + 1], id[256];
	*out_what = failed_step;
	int r = conn_open(a, NULL, &c);
	if (r < 0)
		return r;
	uint32_t serial = next_serial(&c);
	r = sdbus_build_get_unit_by_pid(msg, sizeof(msg), serial, (uint32_t)pid, &len);
	if (r >= 0)
		r = call(&c, msg, len, serial, NULL, "ask systemd for warden's unit", &m);
	if (r >= 0 && read_str_reply(&m, false, path, sizeof(path)) < 0)
		r = fail(-EBADMSG, "read systemd's answer to GetUnitByPID");
	serial = next_serial(&c);
	if (r >= 0)
		r = sdbus_build_get_property(msg, sizeof(msg), serial, path,
					     "org.freedesktop.systemd1.Unit", "Id", &len);
	if (r >= 0)
		r = call(&c, msg, len, serial, NULL, "ask systemd for the name of warden's unit", &m);
	if (r >= 0 && read_str_reply(&m, true, id, sizeof(id)) < 0)
		r = fail(-EBADMSG, "read the name of warden's unit");
	if (r < 0)
		return r;
	const char *iface = ends_with(id, ".scope")     ? "org.freedesktop.systemd1.Scope"
			    : ends_with(id, ".service") ? "org.freedesktop.systemd1.Service"
							: NULL;
	if (!iface) {
		*out = false;
		return 0;
	}
	serial = next_serial(&c);
	r = sdbus_build_get_property(msg, sizeof(msg), serial, path, iface, "Delegate", &len);
	if (r >= 0)
		r = call(&c, msg, len, serial, NULL, "ask systemd whether warden's unit is delegated",
			 &m);
	if (r < 0)
		return r;
	struct sdbus_rd rd;
	bool d;
	if (sdbus_body(&m, "v", &rd) < 0 || !sdbus_get_variant(&rd, "b") ||
	    !sdbus_get_bool(&rd, &d) || !sdbus_done(&rd))
		return fail(-EBADMSG, "read systemd's Delegate property");
	*out = d;
	return 0;
}

int sbx_sd_start_scope(const struct sbx_sd_addr *a, const char *unit, const char **out_what)
{
	_cleanup_(conn_done) struct conn c = { .fd = -1 };
	uint8_t msg[1024];
	size_t len;
	struct sdbus_msg m;
	char desc[64];
	struct job_wait jw = { .unit = unit };
	*out_what = failed_step;
	int r = conn_open(a, MATCH_JOB_REMOVED, &c);
	if (r < 0)
		return r;
	(void)snprintf(desc, sizeof(desc), "warden supervisor (pid %d)", (int)getpid());
	uint32_t serial = next_serial(&c);
	r = sdbus_build_start_scope(msg, sizeof(msg), serial, unit, (uint32_t)getpid(), desc,
				    &len);
	if (r < 0)
		return fail(r, "write the request for a delegated scope");
	r = call(&c, msg, len, serial, &jw, "ask the user's systemd for a delegated scope", &m);
	if (r < 0)
		return r;
	/* The job ends after the answer (systemd runs it later); wait for it, bounded alike. */
	for (unsigned i = 0; !jw.ended && i < SBX_SD_MSGS_MAX; i++) {
		r = recv_msg(&c, &m);
		if (r < 0)
			return fail(r, "wait for systemd to start the delegated scope");
		note_job(&jw, &m);
	}
	if (!jw.ended)
		return fail(-EPROTO, "wait for systemd to start the delegated scope");
	if (!jw.done) {
		(void)fail(0, "start the delegated scope: systemd's job ended");
		append_text((struct sdbus_str){ jw.result, strlen(jw.result) });
		return -EPROTO;
	}
	return 0;
}
