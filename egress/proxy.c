/* SPDX-License-Identifier: MIT */
/*
 * The egress proxy's process body (egress.h): one poll loop over the listener, the report
 * channel and every client connection's two sockets.
 *
 * A connection goes through these states, each waiting for one thing:
 *
 *   HEAD ------> CONNECTING ---(HTTP)----> FORWARD --> RELAY
 *     |              |  \--(CONNECT)--> REPLY "200" --> HELLO --> FORWARD --> RELAY
 *     |              |
 *     +--------------+--> REPLY 4xx/5xx --> DRAIN --> end
 *
 *   HEAD        reading the request head from the client (request.h decides when it is whole)
 *   CONNECTING  a non-blocking connect to the next checked address
 *   REPLY       writing a response to the client: "200" for CONNECT, or an error and the end
 *   HELLO       CONNECT only: reading the ClientHello (hello.h) and checking its name
 *   FORWARD     writing the forwarded head (HTTP) or the ClientHello (CONNECT) upstream
 *   RELAY       splicing bytes both ways through a pipe per direction
 *   DRAIN       after an error reply and a half-close, reading and dropping what the client
 *               still sends (at most EGR_MAX_DRAIN bytes) until it closes: closing a socket
 *               with unread bytes would reset the connection and lose the reply
 *
 * The decision (match.h) and the resolution happen between HEAD and CONNECTING, in that
 * order, so that a denied name is never looked up; every address is checked before the
 * first connect, and only checked addresses are connected to.
 *
 * Bytes count against max_bytes when they are committed to a peer: when a head or
 * ClientHello is queued upstream, and when the relay moves them into a pipe. So the total
 * never exceeds the limit; one more byte waiting after it is spent ends every connection.
 */
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "cleanup.h"
#include "egress.h"
#include "hello.h"
#include "request.h"

_Static_assert(EGR_MAX_HOST == WIRE_EGRESS_MAX_HOST, "a host must fit a CONN frame");
_Static_assert(EGR_MAX_RULE_TEXT == WIRE_EGRESS_MAX_RULE, "a rule must fit a CONN frame");

#define IN_CAP (EGR_HELLO_BUF > EGR_MAX_HEAD ? EGR_HELLO_BUF : EGR_MAX_HEAD)
#define REPORT_FRAME_CAP (WIRE_HEADER_LEN + WIRE_EGRESS_CONN_MAX_LEN + WIRE_MAC_LEN)

enum conn_state {
	ST_HEAD,
	ST_CONNECTING,
	ST_REPLY,
	ST_HELLO,
	ST_FORWARD,
	ST_RELAY,
	ST_DRAIN,
};

/* One direction of the relay: src to dst through a pipe. */
struct relay_dir {
	int pipe[2];
	size_t fill;    /* bytes in the pipe */
	size_t cap;     /* the pipe's capacity */
	bool eof;       /* src said end of stream */
	bool shut;      /* dst was shut down for writing */
};

struct conn {
	int client;
	int upstream;
	enum conn_state st;
	bool close_after_reply;  /* REPLY then end (an error), else REPLY then HELLO */
	bool forward_committed;  /* FORWARD's bytes were committed against max_bytes */
	struct egr_request req;
	struct wire_egress_conn rep; /* the report, filled as things are decided */
	uint64_t start_mono;
	struct egr_ip addrs[EGR_MAX_ADDRS];
	size_t n_addrs, next_addr;
	struct relay_dir up;     /* client to upstream */
	struct relay_dir down;   /* upstream to client */
	size_t in_len, in_off;   /* client bytes held in in[]; in_off: first not yet forwarded */
	size_t out_len, out_off; /* bytes queued in out[] for the peer the state names */
	size_t drained;          /* DRAIN: bytes dropped so far */
	uint8_t in[IN_CAP];
	uint8_t out[EGR_MAX_FWD];
};

struct proxy {
	const struct egr_proxy_config *cfg;
	struct wire_mac *mac;
	uint64_t seq;
	uint64_t n_accepted;
	uint64_t bytes_used;        /* committed against max_bytes */
	bool bytes_exhausted;
	uint8_t limits_sent;        /* bit per enum wire_egress_limit */
	struct conn *conns[EGR_MAX_ACTIVE];
	size_t n_active;
};

/* ---- time ------------------------------------------------------------------------------------ */

static uint64_t clock_usec(clockid_t id)
{
	struct timespec ts;
	if (clock_gettime(id, &ts) < 0)
		return 0;
	return (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
}

/* ---- reports --------------------------------------------------------------------------------- */

static int report_frame(struct proxy *p, uint8_t type, const void *payload, size_t len)
{
	uint8_t frame[REPORT_FRAME_CAP];
	int n = wire_seal(p->mac, WIRE_DIR_TO_SUPERVISOR, type, p->seq, payload, len, frame,
			  sizeof(frame));
	if (n < 0)
		return n;
	for (;;) {
		ssize_t k = send(p->cfg->report_fd, frame, (size_t)n, MSG_NOSIGNAL);
		if (k < 0 && errno == EINTR)
			continue;
		if (k < 0)
			return -errno;
		if (k != n)
			return -EIO;
		break;
	}
	p->seq++;
	return 0;
}

static int report_limit(struct proxy *p, uint8_t which, uint64_t limit)
{
	if (p->limits_sent & (1u << which))
		return 0;
	p->limits_sent |= (uint8_t)(1u << which);
	uint8_t buf[16];
	struct wire_wr w;
	wire_wr_init(&w, buf, sizeof(buf));
	if (!wire_put_egress_limit(&w, which, limit))
		return -EIO;
	return report_frame(p, WIRE_EGRESS_LIMIT, buf, w.len);
}

static int report_conn(struct proxy *p, struct wire_egress_conn *rep, uint64_t start_mono)
{
	uint64_t now = clock_usec(CLOCK_MONOTONIC);
	rep->duration_usec = now > start_mono ? now - start_mono : 0;
	uint8_t buf[WIRE_EGRESS_CONN_MAX_LEN];
	struct wire_wr w;
	wire_wr_init(&w, buf, sizeof(buf));
	if (!wire_put_egress_conn(&w, rep))
		return -EIO;
	return report_frame(p, WIRE_EGRESS_CONN, buf, w.len);
}

/* ---- connections: bookkeeping ------------------------------------------------------------------ */

static void close_fd(int *fd)
{
	if (*fd >= 0) {
		(void)close(*fd);
		*fd = -1;
	}
}

static void dir_close(struct relay_dir *d)
{
	close_fd(&d->pipe[0]);
	close_fd(&d->pipe[1]);
}

/* Ends c: reports it with the reason given (unless 0: as already set), closes, frees. */
static int conn_end(struct proxy *p, size_t slot, uint8_t reason)
{
	struct conn *c = p->conns[slot];
	if (reason)
		c->rep.reason = reason;
	int r = report_conn(p, &c->rep, c->start_mono);
	close_fd(&c->client);
	close_fd(&c->upstream);
	dir_close(&c->up);
	dir_close(&c->down);
	free(c);
	p->conns[slot] = p->conns[--p->n_active];
	p->conns[p->n_active] = NULL;
	return r;
}

/* Sets the report's host and port from the parsed request. */
static void rep_set_request(struct conn *c)
{
	c->rep.kind = c->req.kind;
	memcpy(c->rep.host, c->req.host.text, c->req.host.text_len + 1);
	c->rep.port = c->req.port;
}

static void rep_set_addr(struct conn *c, const struct egr_ip *ip)
{
	c->rep.family = ip->family;
	memset(c->rep.addr, 0, sizeof(c->rep.addr));
	memcpy(c->rep.addr, ip->b, ip->family == 4 ? 4 : 16);
}

static void rep_set_rule(struct conn *c, const struct egr_rule *rule)
{
	if (rule)
		memcpy(c->rep.rule, rule->text, strlen(rule->text) + 1);
	else
		c->rep.rule[0] = '\0';
}

static const char *reason_text(uint8_t reason)
{
	switch (reason) {
	case WIRE_EGRESS_DENY_RULE:
		return "matches a deny entry";
	case WIRE_EGRESS_NOT_ALLOWED:
		return "not in allow";
	case WIRE_EGRESS_ADDRESS:
		return "resolves to an address that is not allowed";
	case WIRE_EGRESS_SNI:
		return "TLS server name is not the CONNECT host";
	case WIRE_EGRESS_RESOLVE:
		return "the name does not resolve";
	case WIRE_EGRESS_UPSTREAM:
		return "no address accepted the connection";
	case WIRE_EGRESS_MAX_CONNECTIONS:
		return "max_connections reached";
	case WIRE_EGRESS_MAX_BYTES:
		return "max_bytes reached";
	default:
		return "bad request";
	}
}

/*
 * Queues an error response for the client and makes c end after writing it, with verdict
 * and reason. The body names the host (canonical text, so plain) and why.
 */
static void conn_fail(struct conn *c, const char *status, uint8_t verdict, uint8_t reason)
{
	char body[EGR_MAX_HOST + 128];
	if (c->rep.kind != WIRE_EGRESS_KIND_NONE)
		(void)snprintf(body, sizeof(body), "warden: %s:%u: %s\n", c->rep.host, c->rep.port,
			       reason_text(reason));
	else
		(void)snprintf(body, sizeof(body), "warden: %s\n", reason_text(reason));
	int n = snprintf((char *)c->out, sizeof(c->out),
			 "HTTP/1.1 %s\r\nConnection: close\r\nContent-Type: text/plain\r\n"
			 "Content-Length: %zu\r\n\r\n%s",
			 status, strlen(body), body);
	c->out_len = n > 0 && (size_t)n < sizeof(c->out) ? (size_t)n : 0;
	c->out_off = 0;
	c->rep.verdict = verdict;
	c->rep.reason = reason;
	c->close_after_reply = true;
	c->st = ST_REPLY;
	close_fd(&c->upstream);
}

/* ---- limits ------------------------------------------------------------------------------------ */

/* Commits n more bytes against max_bytes. False when they do not fit. */
static bool bytes_commit(struct proxy *p, size_t n)
{
	uint64_t max = p->cfg->max_bytes;
	if (p->bytes_used > max || n > max - p->bytes_used)
		return false;
	p->bytes_used += n;
	return true;
}

static uint64_t bytes_left(const struct proxy *p)
{
	return p->bytes_used >= p->cfg->max_bytes ? 0 : p->cfg->max_bytes - p->bytes_used;
}

/* max_bytes is spent and more was asked for: report it and end every connection. */
static int bytes_exhausted(struct proxy *p)
{
	p->bytes_exhausted = true;
	int r = report_limit(p, WIRE_EGRESS_LIMIT_BYTES, p->cfg->max_bytes);
	while (r == 0 && p->n_active) {
		struct conn *c = p->conns[p->n_active - 1];
		/* A denial stays a denial; anything allowed or undecided was cut by the limit. */
		uint8_t reason = c->rep.verdict == WIRE_EGRESS_DENIED ? 0 : WIRE_EGRESS_MAX_BYTES;
		r = conn_end(p, p->n_active - 1, reason);
	}
	return r;
}

/* ---- accepting -------------------------------------------------------------------------------- */

static int on_accept(struct proxy *p)
{
	int fd = accept4(p->cfg->listen_fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
	if (fd < 0) {
		/* The client may have gone already, or fds ran short: not the listener's fault. */
		if (errno == EAGAIN || errno == EINTR || errno == ECONNABORTED || errno == EMFILE ||
		    errno == ENFILE || errno == ENOBUFS || errno == ENOMEM)
			return 0;
		return -errno;
	}
	/* Refused at the door, with a slot all the same: the reply must get out whole. */
	uint8_t refuse = 0;
	if (p->bytes_exhausted) {
		refuse = WIRE_EGRESS_MAX_BYTES;
	} else if (p->n_accepted >= p->cfg->max_connections) {
		int r = report_limit(p, WIRE_EGRESS_LIMIT_CONNECTIONS, p->cfg->max_connections);
		if (r < 0) {
			(void)close(fd);
			return r;
		}
		refuse = WIRE_EGRESS_MAX_CONNECTIONS;
	} else {
		p->n_accepted++;
	}
	struct conn *c = calloc(1, sizeof(*c));
	if (!c) {
		(void)close(fd);
		return 0; /* the client sees a close; nothing was decided */
	}
	c->client = fd;
	c->upstream = -1;
	c->up.pipe[0] = c->up.pipe[1] = c->down.pipe[0] = c->down.pipe[1] = -1;
	c->st = ST_HEAD;
	c->start_mono = clock_usec(CLOCK_MONOTONIC);
	c->rep.start_usec = clock_usec(CLOCK_REALTIME);
	c->rep.verdict = WIRE_EGRESS_UNDECIDED;
	c->rep.reason = WIRE_EGRESS_INCOMPLETE;
	p->conns[p->n_active++] = c;
	if (refuse)
		conn_fail(c, "503 Service Unavailable", WIRE_EGRESS_UNDECIDED, refuse);
	return 0;
}

/* ---- deciding and connecting ------------------------------------------------------------------ */

/* Starts a connect to the next address; moves on until one is under way or none is left. */
static void connect_next(struct conn *c)
{
	close_fd(&c->upstream);
	while (c->next_addr < c->n_addrs) {
		const struct egr_ip *ip = &c->addrs[c->next_addr++];
		struct sockaddr_storage ss;
		socklen_t len;
		memset(&ss, 0, sizeof(ss));
		if (ip->family == 4) {
			struct sockaddr_in *sin = (struct sockaddr_in *)&ss;
			sin->sin_family = AF_INET;
			sin->sin_port = htons(c->req.port);
			memcpy(&sin->sin_addr, ip->b, 4);
			len = sizeof(*sin);
		} else {
			struct sockaddr_in6 *sin6 = (struct sockaddr_in6 *)&ss;
			sin6->sin6_family = AF_INET6;
			sin6->sin6_port = htons(c->req.port);
			memcpy(&sin6->sin6_addr, ip->b, 16);
			len = sizeof(*sin6);
		}
		int fd = socket(ss.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
		if (fd < 0)
			continue;
		rep_set_addr(c, ip);
		if (connect(fd, (struct sockaddr *)&ss, len) == 0 || errno == EINPROGRESS) {
			c->upstream = fd;
			c->st = ST_CONNECTING;
			return;
		}
		(void)close(fd);
	}
	conn_fail(c, "502 Bad Gateway", WIRE_EGRESS_ALLOWED, WIRE_EGRESS_UPSTREAM);
}

/* The head is whole: decide, resolve, check every address, start connecting. */
static void decide(struct proxy *p, struct conn *c)
{
	rep_set_request(c);
	struct egr_verdict v;
	egr_rules_match(p->cfg->rules, &c->req.host, c->req.port, &v);
	rep_set_rule(c, v.rule);
	if (v.verdict != WIRE_EGRESS_ALLOWED) {
		conn_fail(c, "403 Forbidden", v.verdict, v.reason);
		return;
	}
	c->rep.verdict = WIRE_EGRESS_ALLOWED;
	c->rep.reason = WIRE_EGRESS_OK;

	int n = egr_resolve(&c->req.host, c->addrs, EGR_MAX_ADDRS);
	if (n < 0) {
		conn_fail(c, "502 Bad Gateway", WIRE_EGRESS_ALLOWED, WIRE_EGRESS_RESOLVE);
		return;
	}
	c->n_addrs = (size_t)n;
	/* Every address must pass, not just the first: a name that also points inside is refused. */
	for (size_t i = 0; i < c->n_addrs; i++) {
		struct egr_verdict av;
		egr_rules_check_addr(p->cfg->rules, &c->addrs[i], c->req.port, &av, NULL);
		if (av.verdict != WIRE_EGRESS_ALLOWED) {
			rep_set_addr(c, &c->addrs[i]);
			rep_set_rule(c, av.rule);
			conn_fail(c, "403 Forbidden", WIRE_EGRESS_DENIED, av.reason);
			return;
		}
	}
	c->next_addr = 0;
	connect_next(c);
}

static void on_connected(struct proxy *p, struct conn *c)
{
	int err = 0;
	socklen_t len = sizeof(err);
	if (getsockopt(c->upstream, SOL_SOCKET, SO_ERROR, &err, &len) < 0)
		err = errno;
	if (err == EINPROGRESS || err == EALREADY)
		return;
	if (err != 0) {
		connect_next(c);
		return;
	}
	(void)p;
	if (c->req.kind == WIRE_EGRESS_KIND_HTTP) {
		c->st = ST_FORWARD;
		return;
	}
	static const char ok[] = "HTTP/1.1 200 Connection established\r\n\r\n";
	memcpy(c->out, ok, sizeof(ok) - 1);
	c->out_len = sizeof(ok) - 1;
	c->out_off = 0;
	c->close_after_reply = false;
	c->st = ST_REPLY;
}

/* ---- reading from the client -------------------------------------------------------------------- */

/* Reads what the client has into in[], up to cap. 1: got bytes; 0: end of stream; <0 error. */
static int read_client(struct conn *c, size_t cap)
{
	if (c->in_len >= cap)
		return -ENOBUFS;
	ssize_t n = recv(c->client, c->in + c->in_len, cap - c->in_len, 0);
	if (n < 0)
		return errno == EAGAIN || errno == EINTR ? -EAGAIN : -errno;
	if (n == 0)
		return 0;
	c->in_len += (size_t)n;
	return 1;
}

static void on_head(struct proxy *p, struct conn *c)
{
	int r = read_client(c, IN_CAP);
	if (r == -EAGAIN)
		return;
	if (r <= 0) {
		c->st = ST_REPLY; /* nothing to write: ends at once */
		c->out_len = c->out_off = 0;
		c->close_after_reply = true;
		return;
	}
	r = egr_request_parse(c->in, c->in_len, &c->req, c->out, sizeof(c->out));
	if (r == -EAGAIN)
		return;
	if (r < 0) {
		conn_fail(c, "400 Bad Request", WIRE_EGRESS_UNDECIDED, WIRE_EGRESS_BAD_REQUEST);
		return;
	}
	c->out_len = c->req.fwd_len;
	c->out_off = 0;
	c->in_off = c->req.head_len;
	if (c->req.kind == WIRE_EGRESS_KIND_CONNECT) {
		/* What followed the head is the start of the ClientHello. */
		memmove(c->in, c->in + c->in_off, c->in_len - c->in_off);
		c->in_len -= c->in_off;
		c->in_off = 0;
	}
	decide(p, c);
}

/* Checks the ClientHello in in[] against the CONNECT host; 1 when it is whole and right. */
static int check_hello(struct conn *c)
{
	struct egr_host sni;
	bool has_sni = false;
	int r = egr_hello_sni(c->in, c->in_len, &sni, &has_sni);
	if (r == -EAGAIN)
		return 0;
	/* A name must be asked for by that name; an address, by none (RFC 6066). */
	bool ok = r == 0 && (c->req.host.type == EGR_HOST_NAME
				     ? has_sni && egr_host_equal(&sni, &c->req.host)
				     : !has_sni);
	if (!ok) {
		c->rep.verdict = WIRE_EGRESS_DENIED;
		c->rep.reason = WIRE_EGRESS_SNI;
		c->rep.rule[0] = '\0'; /* no entry decided this */
		return -EPERM;
	}
	return 1;
}

static int on_hello(struct proxy *p, size_t slot)
{
	struct conn *c = p->conns[slot];
	int r = read_client(c, EGR_HELLO_BUF);
	if (r == -EAGAIN)
		return 0;
	if (r == 0 || (r < 0 && r != -ENOBUFS)) {
		/* The client left before a whole ClientHello: not an SNI verdict. */
		c->rep.reason = WIRE_EGRESS_OK;
		return conn_end(p, slot, 0);
	}
	r = check_hello(c);
	if (r < 0)
		return conn_end(p, slot, 0);
	if (r > 0)
		c->st = ST_FORWARD;
	return 0;
}

/* ---- writing --------------------------------------------------------------------------------- */

/* Writes buf[*off..len] to fd; true when all of it is out. *err set on a hard failure. */
static bool write_some(int fd, const uint8_t *buf, size_t len, size_t *off, int *err)
{
	while (*off < len) {
		ssize_t n = send(fd, buf + *off, len - *off, MSG_NOSIGNAL);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			if (errno != EAGAIN)
				*err = -errno;
			return false;
		}
		*off += (size_t)n;
	}
	return true;
}

static int open_pipe(struct relay_dir *d)
{
	if (pipe2(d->pipe, O_NONBLOCK | O_CLOEXEC) < 0)
		return -errno;
	int cap = fcntl(d->pipe[0], F_GETPIPE_SZ);
	if (cap <= 0)
		return -EIO;
	d->cap = (size_t)cap;
	return 0;
}

static int on_reply(struct proxy *p, size_t slot)
{
	struct conn *c = p->conns[slot];
	int err = 0;
	bool done = write_some(c->client, c->out, c->out_len, &c->out_off, &err);
	if (err < 0 && !c->close_after_reply)
		return conn_end(p, slot, WIRE_EGRESS_OK); /* the client left after the 200 */
	if (!done && err == 0)
		return 0;
	if (c->close_after_reply) {
		if (err < 0 || shutdown(c->client, SHUT_WR) < 0)
			return conn_end(p, slot, 0);
		c->st = ST_DRAIN;
		return 0;
	}
	c->st = ST_HELLO;
	c->out_len = c->out_off = 0;
	/* The ClientHello may be here already. */
	int r = check_hello(c);
	if (r < 0)
		return conn_end(p, slot, 0);
	if (r > 0)
		c->st = ST_FORWARD;
	return 0;
}

/* Writes the head or ClientHello upstream: out[] first (HTTP's head), then in[in_off..]. */
static int on_forward(struct proxy *p, size_t slot)
{
	struct conn *c = p->conns[slot];
	/* Committed whole, before the first byte goes: it is one request. */
	if (!c->forward_committed) {
		size_t n = (c->out_len - c->out_off) + (c->in_len - c->in_off);
		if (!bytes_commit(p, n))
			return bytes_exhausted(p);
		c->forward_committed = true;
	}
	int err = 0;
	size_t before = c->out_off + c->in_off;
	bool done = write_some(c->upstream, c->out, c->out_len, &c->out_off, &err) &&
		    write_some(c->upstream, c->in, c->in_len, &c->in_off, &err);
	c->rep.bytes_up += (c->out_off + c->in_off) - before;
	if (err < 0)
		return conn_end(p, slot, WIRE_EGRESS_OK);
	if (!done)
		return 0;
	int r = open_pipe(&c->up);
	if (r == 0)
		r = open_pipe(&c->down);
	if (r < 0)
		return conn_end(p, slot, WIRE_EGRESS_ERROR);
	c->st = ST_RELAY;
	return 0;
}

/* Drops what the client still sends, until it closes or EGR_MAX_DRAIN bytes went. */
static int on_drain(struct proxy *p, size_t slot)
{
	struct conn *c = p->conns[slot];
	uint8_t sink[4096];
	ssize_t n = recv(c->client, sink, sizeof(sink), 0);
	if (n < 0 && (errno == EAGAIN || errno == EINTR))
		return 0;
	if (n > 0) {
		c->drained += (size_t)n;
		if (c->drained <= EGR_MAX_DRAIN)
			return 0;
	}
	return conn_end(p, slot, 0);
}

/* ---- the relay ------------------------------------------------------------------------------- */

static bool dir_wants_read(const struct proxy *p, const struct relay_dir *d)
{
	return !d->eof && d->fill < d->cap && !p->bytes_exhausted;
}

/*
 * Moves what src has into the pipe, within max_bytes. 0, or 1 when max_bytes is spent and src
 * has more, or -errno.
 */
static int dir_fill(struct proxy *p, struct relay_dir *d, int src)
{
	uint64_t left = bytes_left(p);
	if (left == 0) {
		/* Spent: is there more, or just the end? */
		uint8_t b;
		ssize_t n = recv(src, &b, 1, MSG_PEEK | MSG_DONTWAIT);
		if (n > 0)
			return 1;
		if (n == 0)
			d->eof = true;
		return n < 0 && errno != EAGAIN && errno != EINTR ? -errno : 0;
	}
	size_t want = d->cap - d->fill;
	if (want > left)
		want = (size_t)left;
	ssize_t n = splice(src, NULL, d->pipe[1], NULL, want, SPLICE_F_MOVE | SPLICE_F_NONBLOCK);
	if (n < 0)
		return errno == EAGAIN || errno == EINTR ? 0 : -errno;
	if (n == 0) {
		d->eof = true;
		return 0;
	}
	d->fill += (size_t)n;
	p->bytes_used += (uint64_t)n;
	return 0;
}

/* Moves what the pipe holds to dst; adds it to *count. 0 or -errno. */
static int dir_drain(struct relay_dir *d, int dst, uint64_t *count)
{
	ssize_t n = splice(d->pipe[0], NULL, dst, NULL, d->fill, SPLICE_F_MOVE | SPLICE_F_NONBLOCK);
	if (n < 0)
		return errno == EAGAIN || errno == EINTR ? 0 : -errno;
	d->fill -= (size_t)n;
	*count += (uint64_t)n;
	return 0;
}

/* Half-closes dst once src ended and the pipe is empty. */
static void dir_finish(struct relay_dir *d, int dst)
{
	if (d->eof && d->fill == 0 && !d->shut) {
		(void)shutdown(dst, SHUT_WR);
		d->shut = true;
	}
}

static int on_relay(struct proxy *p, size_t slot, short client_ev, short up_ev)
{
	struct conn *c = p->conns[slot];
	int r = 0;
	bool spent = false;
	if ((client_ev & (POLLIN | POLLHUP | POLLERR)) && dir_wants_read(p, &c->up)) {
		r = dir_fill(p, &c->up, c->client);
		spent = r > 0;
	}
	if (r >= 0 && (up_ev & (POLLIN | POLLHUP | POLLERR)) && dir_wants_read(p, &c->down)) {
		r = dir_fill(p, &c->down, c->upstream);
		spent = spent || r > 0;
	}
	if (r >= 0 && c->up.fill && (up_ev & (POLLOUT | POLLERR)))
		r = dir_drain(&c->up, c->upstream, &c->rep.bytes_up);
	if (r >= 0 && c->down.fill && (client_ev & (POLLOUT | POLLERR)))
		r = dir_drain(&c->down, c->client, &c->rep.bytes_down);
	if (r < 0)
		return conn_end(p, slot, WIRE_EGRESS_OK); /* a side reset or failed */
	dir_finish(&c->up, c->upstream);
	dir_finish(&c->down, c->client);
	if (c->up.shut && c->down.shut)
		return conn_end(p, slot, WIRE_EGRESS_OK);
	if (spent)
		return bytes_exhausted(p);
	return 0;
}

/* ---- the loop -------------------------------------------------------------------------------- */

/* The events c waits for on its client and upstream sockets (0: none; the fd is left out). */
static void conn_events(const struct proxy *p, const struct conn *c, short *client, short *up)
{
	*client = *up = 0;
	switch (c->st) {
	case ST_HEAD:
	case ST_HELLO:
	case ST_DRAIN:
		*client = POLLIN;
		break;
	case ST_CONNECTING:
	case ST_FORWARD:
		*up = POLLOUT;
		break;
	case ST_REPLY:
		*client = POLLOUT;
		break;
	case ST_RELAY:
		if (dir_wants_read(p, &c->up))
			*client |= POLLIN;
		if (c->down.fill)
			*client |= POLLOUT;
		if (dir_wants_read(p, &c->down))
			*up |= POLLIN;
		if (c->up.fill)
			*up |= POLLOUT;
		break;
	}
}

/* Handles the events of the connection in slot (it may end, and the slot be reused). */
static int conn_step(struct proxy *p, size_t slot, short client_ev, short up_ev)
{
	struct conn *c = p->conns[slot];
	switch (c->st) {
	case ST_HEAD:
		on_head(p, c);
		/* A decision may have queued a reply that can be written now. */
		if (c->st == ST_REPLY)
			return on_reply(p, slot);
		return 0;
	case ST_CONNECTING:
		on_connected(p, c);
		return c->st == ST_REPLY ? on_reply(p, slot) : 0;
	case ST_REPLY:
		return on_reply(p, slot);
	case ST_HELLO:
		return on_hello(p, slot);
	case ST_FORWARD:
		return on_forward(p, slot);
	case ST_RELAY:
		return on_relay(p, slot, client_ev, up_ev);
	case ST_DRAIN:
		return on_drain(p, slot);
	}
	return 0;
}

static int serve(struct proxy *p)
{
	struct pollfd pfd[2 + 2 * EGR_MAX_ACTIVE];
	struct conn *polled[EGR_MAX_ACTIVE];
	for (;;) {
		size_t n_conns = p->n_active;
		pfd[0] = (struct pollfd){ .fd = p->cfg->report_fd, .events = POLLIN };
		pfd[1] = (struct pollfd){ .fd = n_conns < EGR_MAX_ACTIVE ? p->cfg->listen_fd : -1,
					  .events = POLLIN };
		for (size_t i = 0; i < n_conns; i++) {
			const struct conn *c = p->conns[i];
			short ce, ue;
			conn_events(p, c, &ce, &ue);
			polled[i] = p->conns[i];
			pfd[2 + 2 * i] = (struct pollfd){ .fd = ce ? c->client : -1, .events = ce };
			pfd[3 + 2 * i] = (struct pollfd){ .fd = ue ? c->upstream : -1, .events = ue };
		}
		int n = poll(pfd, 2 + 2 * n_conns, -1);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		/* The parent closed its end, or spoke: either way, stop. */
		if (pfd[0].revents)
			return 0;
		/* Connections first, in the order polled; a step may end and move others. */
		for (size_t i = 0; i < n_conns; i++) {
			short ce = pfd[2 + 2 * i].revents, ue = pfd[3 + 2 * i].revents;
			if (!ce && !ue)
				continue;
			size_t slot = p->n_active;
			for (size_t s = 0; s < p->n_active; s++)
				if (p->conns[s] == polled[i])
					slot = s;
			if (slot == p->n_active)
				continue; /* ended meanwhile */
			int r = conn_step(p, slot, ce, ue);
			if (r < 0)
				return r;
		}
		if (pfd[1].revents & POLLIN) {
			int r = on_accept(p);
			if (r < 0)
				return r;
		} else if (pfd[1].revents & (POLLERR | POLLNVAL)) {
			return -EIO;
		}
	}
}

int egr_proxy_main(const struct egr_proxy_config *cfg)
{
	struct proxy p;
	memset(&p, 0, sizeof(p));
	p.cfg = cfg;
	/* A peer that closes must be an error return from send or splice, not a signal. */
	if (signal(SIGPIPE, SIG_IGN) == SIG_ERR)
		return EGR_EXIT_ERROR;
	p.mac = wire_mac_new(cfg->key);
	if (!p.mac)
		return EGR_EXIT_ERROR;

	char step[WIRE_EGRESS_MAX_STEP + 1] = "";
	int r = sbx_egress_jail_apply(&cfg->jail, step, sizeof(step));
	if (r < 0) {
		uint8_t buf[8 + WIRE_EGRESS_MAX_STEP];
		struct wire_wr w;
		wire_wr_init(&w, buf, sizeof(buf));
		uint32_t err = r < -4095 ? EIO : (uint32_t)-r;
		if (!step[0])
			(void)snprintf(step, sizeof(step), "confine the proxy");
		if (wire_put_egress_failed(&w, err, step, strlen(step)))
			(void)report_frame(&p, WIRE_EGRESS_FAILED, buf, w.len);
		wire_mac_free(p.mac);
		return EGR_EXIT_CONFINE;
	}
	r = report_frame(&p, WIRE_EGRESS_READY, NULL, 0);
	if (r == 0)
		r = serve(&p);
	while (p.n_active) {
		struct conn *c = p.conns[--p.n_active];
		close_fd(&c->client);
		close_fd(&c->upstream);
		dir_close(&c->up);
		dir_close(&c->down);
		free(c);
	}
	wire_mac_free(p.mac);
	if (r == -EPIPE || r == -ECONNRESET)
		return EGR_EXIT_DONE; /* the parent is gone: nobody to serve */
	return r < 0 ? EGR_EXIT_ERROR : EGR_EXIT_DONE;
}
