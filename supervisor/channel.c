/* SPDX-License-Identifier: MIT */
/*
 * Supervisor side of the worker protocol. docs/protocol.md is the normative description.
 */
#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <unistd.h>

#include "channel.h"
#include "io-util.h"
#include "log.h"
#include "str-util.h"

#define STATE_BIT(s) (1u << (s))

/* Dispatch flags */
#define F_ONCE 0x1u

struct dispatch {
	uint8_t type;
	uint32_t states;   /* STATE_BIT()s in which the frame is permitted */
	uint32_t flags;
	size_t min_len;
	size_t max_len;
	int (*handler)(struct sup_channel *ch, struct wire_rd *payload);
	int next; /* the state after a successful handler, or SUP_CHAN_KEEP */
};

#define SUP_CHAN_KEEP (-1)

/*
 * SO_PASSRIGHTS (Linux 6.16, asm-generic/socket.h): whether an AF_UNIX socket accepts
 * SCM_RIGHTS. The C library's headers may predate it; the number is the same on every
 * architecture that uses the generic socket options, x86 and arm64 among them.
 */
#ifndef SO_PASSRIGHTS
#define SO_PASSRIGHTS 83
#endif

/* Room for the most descriptors one message carries, and one more header besides. */
#define CONTROL_LEN (CMSG_SPACE(sizeof(int) * SUP_CHAN_MAX_FDS) + CMSG_SPACE(64))

int sup_channel_refuse_fds(int fd)
{
#ifdef WARDEN_TEST_HOOKS
	/* Only in warden-test: behave as on a kernel without the option, to test the fallback. */
	if (secure_getenv("WARDEN_TEST_NO_PASSRIGHTS"))
		return -ENOPROTOOPT;
#endif
	int off = 0;
	if (setsockopt(fd, SOL_SOCKET, SO_PASSRIGHTS, &off, sizeof(off)) < 0)
		return -errno;
	return 0;
}

/* Makes a socket's close abort the connection instead of waiting for its peer. */
static void close_without_linger(int fd)
{
	struct linger abort_now = { .l_onoff = 1, .l_linger = 0 };
	/* ENOTSOCK for anything but a socket, and nothing to do then. */
	(void)setsockopt(fd, SOL_SOCKET, SO_LINGER, &abort_now, sizeof(abort_now));
	(void)close(fd);
}

/*
 * Takes every descriptor in msg's SCM_RIGHTS headers into ch->parked. Closing one here could
 * block this process for as long as the sandbox likes (a socket lingering on a full send
 * queue); they are closed by sup_channel_release_fds once the sandbox is dead. The control
 * buffer holds one message's worth, SUP_CHAN_MAX_FDS, and a violation stops all reading, so
 * the array cannot overflow; should it, the extra descriptor is closed without lingering.
 */
static void park_fds(struct sup_channel *ch, struct msghdr *msg)
{
	for (struct cmsghdr *c = CMSG_FIRSTHDR(msg); c; c = CMSG_NXTHDR(msg, c)) {
		if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS ||
		    c->cmsg_len < CMSG_LEN(0))
			continue;
		size_t nfd = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
		for (size_t i = 0; i < nfd; i++) {
			int fd;
			memcpy(&fd, CMSG_DATA(c) + i * sizeof(int), sizeof(int));
			if (ch->n_parked < SUP_CHAN_MAX_FDS)
				ch->parked[ch->n_parked++] = fd;
			else
				close_without_linger(fd);
		}
	}
}

static void close_parked(struct sup_channel *ch)
{
	for (unsigned k = 0; k < ch->n_parked; k++)
		close_without_linger(ch->parked[k]);
	ch->n_parked = 0;
}

/* More messages than the channel's receive buffer can hold; only a bound on the drain. */
#define DRAIN_MAX 4096

void sup_channel_release_fds(struct sup_channel *ch)
{
	close_parked(ch);
	/* What the dead worker left queued: received, so that closing the channel drops nothing. */
	for (unsigned i = 0; ch->started && i < DRAIN_MAX; i++) {
		uint8_t byte;
		struct iovec iov = { .iov_base = &byte, .iov_len = 1 };
		union {
			struct cmsghdr align;
			char buf[CONTROL_LEN];
		} control;
		struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = control.buf,
				      .msg_controllen = sizeof(control.buf) };
		ssize_t n = recvmsg(ch->fd, &msg, MSG_DONTWAIT | MSG_CMSG_CLOEXEC);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 || (n == 0 && msg.msg_controllen == 0 && sup_channel_peer_closed(ch)))
			break;
		park_fds(ch, &msg);
		close_parked(ch);
	}
}

bool sup_channel_peer_closed(const struct sup_channel *ch)
{
	struct pollfd p = { .fd = ch->fd, .events = POLLIN };
	int n;
	do
		n = poll(&p, 1, 0);
	while (n < 0 && errno == EINTR);
	return n > 0 && (p.revents & POLLHUP);
}

static int send_all(int fd, const void *buf, size_t len)
{
	ssize_t n;
	do
		n = send(fd, buf, len, MSG_NOSIGNAL);
	while (n < 0 && errno == EINTR);
	if (n < 0)
		return -errno;
	return (size_t)n == len ? 0 : -EIO;
}

static int send_frame(struct sup_channel *ch, uint8_t type, const void *payload, size_t len)
{
	uint8_t frame[WIRE_HEADER_LEN + WIRE_NONCE_LEN + WIRE_MAC_LEN];
	int n = wire_seal(ch->mac, WIRE_DIR_TO_WORKER, type, ch->send_seq, payload, len, frame,
			  sizeof(frame));
	if (n < 0)
		return n;
	int r = send_all(ch->fd, frame, (size_t)n);
	if (r < 0)
		return r;
	ch->send_seq++;
	return 0;
}

int sup_channel_start(struct sup_channel *ch, int fd)
{
	memset(ch, 0, sizeof(*ch));
	ch->fd = fd;
	ch->violation_type = -1;

	uint8_t pkt[WIRE_KEY_PACKET_LEN];
	memcpy(pkt, WIRE_KEY_MAGIC, 4);
	ch->started = true;
	int r = sup_channel_refuse_fds(fd);
	if (r == -ENOPROTOOPT)
		r = 0;
	if (r >= 0)
		r = io_fill_random(pkt + 4, WIRE_KEY_LEN);
	if (r >= 0) {
		ch->mac = wire_mac_new(pkt + 4);
		if (!ch->mac)
			r = -ENOMEM;
	}
	if (r >= 0)
		r = send_all(fd, pkt, sizeof(pkt));
	/* The key now lives only in the MAC context (and the worker). */
	explicit_bzero(pkt, sizeof(pkt));
	if (r >= 0)
		r = io_fill_random(ch->nonce, sizeof(ch->nonce));
	if (r >= 0)
		r = send_frame(ch, WIRE_CHALLENGE, ch->nonce, sizeof(ch->nonce));
	/* Not sup_channel_done: the sandbox may still live, and the channel is not drained yet. */
	if (r < 0)
		ch->mac = wire_mac_free(ch->mac);
	ch->state = SUP_CHAN_HANDSHAKE;
	return r;
}

void sup_channel_done(struct sup_channel *ch)
{
	sup_channel_release_fds(ch);
	ch->started = false;
	ch->mac = wire_mac_free(ch->mac);
	free(ch->probes);
	ch->probes = NULL;
	ch->n_probes = 0;
}

int sup_channel_send_audit(struct sup_channel *ch, uint16_t port)
{
	if (ch->violated || ch->state != SUP_CHAN_ATTESTED)
		return -EPROTO;
	uint8_t pl[2];
	struct wire_wr w;
	wire_wr_init(&w, pl, sizeof(pl));
	(void)wire_put_u16(&w, port);
	int r = send_frame(ch, WIRE_AUDIT, pl, w.len);
	if (r < 0)
		return r;
	ch->state = SUP_CHAN_AUDITING;
	return 0;
}

int sup_channel_send_go(struct sup_channel *ch)
{
	if (ch->violated || ch->state != SUP_CHAN_ATTESTED)
		return -EPROTO;
	int r = send_frame(ch, WIRE_GO, NULL, 0);
	if (r < 0)
		return r;
	ch->state = SUP_CHAN_GO_SENT;
	return 0;
}

void sup_channel_violation(struct sup_channel *ch, int type, const char *reason)
{
	if (ch->violated)
		return;
	ch->violated = true;
	ch->violation_frame = ch->recv_seq + 1;
	ch->violation_type = type;
	(void)snprintf(ch->violation_reason, sizeof(ch->violation_reason), "%s", reason);
}

/*
 * HELLO: nonce[32] | identity (wire_get_identity layout). Permitted once, in HANDSHAKE.
 * The nonce must be the one we sent; the MAC over it proves the worker holds the key.
 */
static int on_hello(struct sup_channel *ch, struct wire_rd *p)
{
	uint8_t nonce[WIRE_NONCE_LEN];
	struct wire_identity id;
	if (!wire_get_bytes(p, nonce, sizeof(nonce)))
		return -EBADMSG;
	if (!wire_equal_ct(nonce, ch->nonce, sizeof(nonce)))
		return -EPROTO;
	int r = wire_get_identity(p, &id);
	if (r < 0)
		return r;
	ch->claimed = id;
	ch->have_identity = true;
	return 0;
}

/* READY: empty. Permitted once, after GO. */
static int on_ready(struct sup_channel *ch, struct wire_rd *p)
{
	(void)ch;
	return wire_done(p) ? 0 : -EBADMSG;
}

/* STARTED: u32 pid (inside the sandbox, >= 2). Permitted once, after READY. */
static int on_started(struct sup_channel *ch, struct wire_rd *p)
{
	uint32_t pid;
	if (!wire_get_u32(p, &pid) || !wire_done(p) || pid < 2)
		return -EBADMSG;
	ch->command_pid = pid;
	ch->have_started = true;
	return 0;
}

/*
 * EXITED: see wire_get_exited. Permitted once, after READY or STARTED, or at the end of an
 * audit (then only how 1 with code 0).
 */
static int on_exited(struct sup_channel *ch, struct wire_rd *p)
{
	struct wire_exited e;
	int r = wire_get_exited(p, &e);
	if (r < 0)
		return r;
	if (ch->state == SUP_CHAN_AUDITING) {
		if (e.how != WIRE_EXIT_CODE || e.code != 0)
			return -EPROTO;
		ch->exited = e;
		ch->have_exited = true;
		return 0;
	}
	/* An exec failure comes without STARTED; a real exit only after it. */
	bool exec_failure = e.how == WIRE_EXIT_NOT_FOUND || e.how == WIRE_EXIT_NOT_EXEC;
	if (exec_failure == ch->have_started)
		return -EPROTO;
	ch->exited = e;
	ch->have_exited = true;
	return 0;
}

void sup_escape(const char *in, char *out, size_t size)
{
	(void)str_escape(in, out, size, false);
}

/*
 * EVENT: u8 level (0..3) | str text (<= WIRE_MAX_EVENT_TEXT). Permitted after GO, at most
 * WIRE_MAX_EVENTS times a session. The text is escaped, quoted and tagged with the worker's pid;
 * it is never a format string.
 */
static int on_event(struct sup_channel *ch, struct wire_rd *p)
{
	if (ch->n_events >= WIRE_MAX_EVENTS)
		return -EPROTO;
	uint8_t level;
	char *text = NULL;
	int r = wire_get_event(p, &level, &text);
	if (r < 0)
		return r;
	char esc[WIRE_MAX_EVENT_TEXT * 4 + 1];
	sup_escape(text, esc, sizeof(esc));
	free(text);
	ch->n_events++;
	enum log_level lv = level >= 2 ? LOG_LEVEL_QUIET : level == 1 ? LOG_LEVEL_NORMAL
								   : LOG_LEVEL_VERBOSE;
	sup_log(lv, "worker[%d]: '%s'", ch->peer_pid, esc);
	return 0;
}

/*
 * ERROR: u32 code (errno 1..4095) | str what (<= WIRE_MAX_ERROR_TEXT). Permitted once after
 * GO and before STARTED (a command that started ends in EXITED): the worker could not start
 * the command. Ends the session.
 */
static int on_error(struct sup_channel *ch, struct wire_rd *p)
{
	uint32_t code;
	char *what = NULL;
	int r = wire_get_error(p, &code, &what);
	if (r < 0)
		return r;
	sup_escape(what, ch->error_what, sizeof(ch->error_what));
	free(what);
	ch->error_code = code;
	ch->have_error = true;
	return 0;
}

/* PROBE: str id (1..32) | u32 err (0..4095) | str detail (<= 256). Audit only, 128 at most. */
static int on_probe(struct sup_channel *ch, struct wire_rd *p)
{
	if (ch->n_probes >= WIRE_MAX_PROBES)
		return -EPROTO;
	if (!ch->probes) {
		ch->probes = calloc(WIRE_MAX_PROBES, sizeof(*ch->probes));
		if (!ch->probes)
			return -ENOMEM;
	}
	char *id = NULL, *detail = NULL;
	uint32_t err;
	int r = wire_get_probe(p, &id, &err, &detail);
	if (r < 0)
		return r;
	struct sup_probe *pr = &ch->probes[ch->n_probes++];
	sup_escape(id, pr->id, sizeof(pr->id));
	sup_escape(detail, pr->detail, sizeof(pr->detail));
	pr->err = err;
	free(id);
	free(detail);
	return 0;
}

/*
 * RESULT: str name | u32 score_millis (0..1000) | str detail. Evaluation grading only; no
 * state of `warden run` permits it, so here it is always a violation.
 */
static int on_result(struct sup_channel *ch, struct wire_rd *p)
{
	(void)ch;
	char *name = NULL, *detail = NULL;
	uint32_t score;
	int r = wire_get_result(p, &name, &score, &detail);
	free(name);
	free(detail);
	return r < 0 ? r : -EPROTO;
}

static const struct dispatch table[] = {
	{ WIRE_HELLO, STATE_BIT(SUP_CHAN_HANDSHAKE), F_ONCE, WIRE_NONCE_LEN + 4 + 32 + 40 + 6,
	  WIRE_NONCE_LEN + 4 + 32 + 40 + 6, on_hello, SUP_CHAN_ATTESTED },
	{ WIRE_READY, STATE_BIT(SUP_CHAN_GO_SENT), F_ONCE, 0, 0, on_ready, SUP_CHAN_READY },
	{ WIRE_STARTED, STATE_BIT(SUP_CHAN_READY), F_ONCE, 4, 4, on_started, SUP_CHAN_RUNNING },
	{ WIRE_EXITED,
	  STATE_BIT(SUP_CHAN_READY) | STATE_BIT(SUP_CHAN_RUNNING) | STATE_BIT(SUP_CHAN_AUDITING),
	  F_ONCE, 29, 29, on_exited, SUP_CHAN_DONE },
	{ WIRE_PROBE, STATE_BIT(SUP_CHAN_AUDITING), 0, 4 + 1 + 4 + 4,
	  4 + WIRE_MAX_PROBE_ID + 4 + 4 + WIRE_MAX_PROBE_TEXT, on_probe, SUP_CHAN_KEEP },
	/* EVENT keeps the state it arrives in (next = SUP_CHAN_N_KEEP). */
	{ WIRE_EVENT, STATE_BIT(SUP_CHAN_GO_SENT) | STATE_BIT(SUP_CHAN_READY) |
			      STATE_BIT(SUP_CHAN_RUNNING),
	  0, 1 + 4, 1 + 4 + WIRE_MAX_EVENT_TEXT, on_event, SUP_CHAN_KEEP },
	{ WIRE_ERROR, STATE_BIT(SUP_CHAN_GO_SENT) | STATE_BIT(SUP_CHAN_READY),
	  F_ONCE, 4 + 4, 4 + 4 + WIRE_MAX_ERROR_TEXT, on_error, SUP_CHAN_FAILED },
	{ WIRE_RESULT, 0, 0, 4 + 4 + 4, 4 + WIRE_MAX_RESULT_NAME + 4 + 4 + WIRE_MAX_RESULT_TEXT,
	  on_result, SUP_CHAN_KEEP },
};

const char *sup_frame_name(int type)
{
	switch (type) {
	case WIRE_CHALLENGE:
		return "CHALLENGE";
	case WIRE_GO:
		return "GO";
	case WIRE_HELLO:
		return "HELLO";
	case WIRE_READY:
		return "READY";
	case WIRE_STARTED:
		return "STARTED";
	case WIRE_EXITED:
		return "EXITED";
	case WIRE_EVENT:
		return "EVENT";
	case WIRE_RESULT:
		return "RESULT";
	case WIRE_ERROR:
		return "ERROR";
	case WIRE_AUDIT:
		return "AUDIT";
	case WIRE_PROBE:
		return "PROBE";
	default:
		return "unknown";
	}
}

static int violation(struct sup_channel *ch, int type, int err, const char *why)
{
	sup_channel_violation(ch, type, why);
	return err;
}

int sup_channel_recv(struct sup_channel *ch)
{
	static uint8_t buf[WIRE_MAX_FRAME + 1];
	if (ch->violated)
		return -EPROTO;

	struct iovec iov = { .iov_base = buf, .iov_len = sizeof(buf) };
	union {
		struct cmsghdr align;
		char buf[CONTROL_LEN];
	} control;
	struct msghdr msg = {
		.msg_iov = &iov,
		.msg_iovlen = 1,
		.msg_control = control.buf,
		.msg_controllen = sizeof(control.buf),
	};
	ssize_t n;
	do
		n = recvmsg(ch->fd, &msg, MSG_CMSG_CLOEXEC | MSG_DONTWAIT);
	while (n < 0 && errno == EINTR);
	if (n < 0)
		return -errno;
	/*
	 * No frame type declares an fd: any ancillary data is a violation. This comes first, so
	 * an empty datagram cannot smuggle fds in as a "close". The fds are parked, not closed
	 * (park_fds says why).
	 */
	if (msg.msg_controllen > 0) {
		park_fds(ch, &msg);
		return violation(ch, -1, -EBADMSG, "unexpected ancillary data");
	}
	if (msg.msg_flags & (MSG_TRUNC | MSG_CTRUNC))
		return violation(ch, -1, -EBADMSG, "oversize frame");
	/* End of file, or an empty datagram: the caller tells them apart (peer_closed). */
	if (n == 0)
		return -ECONNRESET;

	struct wire_hdr h;
	struct wire_rd payload;
	int r = wire_open(ch->mac, WIRE_DIR_TO_SUPERVISOR, ch->recv_seq, buf, (size_t)n, &h,
			  &payload);
	if (r == -EPROTO)
		return violation(ch, -1, r, "wrong sequence number (replayed, reordered or dropped)");
	if (r < 0)
		return violation(ch, -1, r, "malformed frame or bad MAC");

	const struct dispatch *d = NULL;
	for (size_t i = 0; i < sizeof(table) / sizeof(table[0]); i++)
		if (table[i].type == h.type)
			d = &table[i];
	if (!d)
		return violation(ch, h.type, -EPROTO, "unknown or unpermitted frame type");
	if (!(d->states & STATE_BIT(ch->state)))
		return violation(ch, h.type, -EPROTO, "frame not permitted in this state");
	if ((d->flags & F_ONCE) && (ch->used_once & (1u << (h.type & 31u))))
		return violation(ch, h.type, -EPROTO, "frame permitted only once");
	if (payload.len < d->min_len || payload.len > d->max_len)
		return violation(ch, h.type, -EBADMSG, "payload length out of range");
	r = d->handler(ch, &payload);
	/* Our own failure (no memory for a copy): not the worker's doing, and no violation. */
	if (r < 0 && r != -EBADMSG && r != -EPROTO)
		return r;
	if (r < 0) {
		const char *why = r != -EPROTO		   ? "malformed payload"
				  : h.type == WIRE_EVENT ? "too many EVENT frames"
				  : h.type == WIRE_PROBE ? "too many PROBE frames"
							 : "frame content not permitted now";
		return violation(ch, h.type, r, why);
	}
	if (d->flags & F_ONCE)
		ch->used_once |= 1u << (h.type & 31u);
	ch->recv_seq++;
	if (d->next != SUP_CHAN_KEEP)
		ch->state = (enum sup_chan_state)d->next;
	return 0;
}
