/* SPDX-License-Identifier: MIT */
/*
 * Supervisor side of the worker protocol. docs/protocol.md is the normative description.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <unistd.h>

#include "channel.h"

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
	enum sup_chan_state next; /* the state after a successful handler */
};

static int fill_random(void *buf, size_t len)
{
	size_t got = 0;
	while (got < len) {
		ssize_t n = getrandom((char *)buf + got, len - got, 0);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		got += (size_t)n;
	}
	return 0;
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
	int r = fill_random(pkt + 4, WIRE_KEY_LEN);
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
		r = fill_random(ch->nonce, sizeof(ch->nonce));
	if (r >= 0)
		r = send_frame(ch, WIRE_CHALLENGE, ch->nonce, sizeof(ch->nonce));
	if (r < 0)
		sup_channel_done(ch);
	ch->state = SUP_CHAN_HANDSHAKE;
	return r;
}

void sup_channel_done(struct sup_channel *ch)
{
	ch->mac = wire_mac_free(ch->mac);
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

/* EXITED: see wire_get_exited. Permitted once, after READY or STARTED. */
static int on_exited(struct sup_channel *ch, struct wire_rd *p)
{
	struct wire_exited e;
	int r = wire_get_exited(p, &e);
	if (r < 0)
		return r;
	/* An exec failure comes without STARTED; a real exit only after it. */
	bool exec_failure = e.how == WIRE_EXIT_NOT_FOUND || e.how == WIRE_EXIT_NOT_EXEC;
	if (exec_failure == ch->have_started)
		return -EPROTO;
	ch->exited = e;
	ch->have_exited = true;
	return 0;
}

static const struct dispatch table[] = {
	{ WIRE_HELLO, STATE_BIT(SUP_CHAN_HANDSHAKE), F_ONCE, WIRE_NONCE_LEN + 4 + 32 + 40 + 6,
	  WIRE_NONCE_LEN + 4 + 32 + 40 + 6, on_hello, SUP_CHAN_ATTESTED },
	{ WIRE_READY, STATE_BIT(SUP_CHAN_GO_SENT), F_ONCE, 0, 0, on_ready, SUP_CHAN_READY },
	{ WIRE_STARTED, STATE_BIT(SUP_CHAN_READY), F_ONCE, 4, 4, on_started, SUP_CHAN_RUNNING },
	{ WIRE_EXITED, STATE_BIT(SUP_CHAN_READY) | STATE_BIT(SUP_CHAN_RUNNING), F_ONCE, 29, 29,
	  on_exited, SUP_CHAN_DONE },
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
		char buf[CMSG_SPACE(sizeof(int) * 4)];
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
	 * No frame type declares an fd: any ancillary data is a violation, and the fds are
	 * closed. This comes first, so an empty datagram cannot smuggle fds in as a "close".
	 */
	if (msg.msg_controllen > 0) {
		for (struct cmsghdr *c = CMSG_FIRSTHDR(&msg); c; c = CMSG_NXTHDR(&msg, c)) {
			if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS) {
				size_t nfd = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
				for (size_t i = 0; i < nfd; i++) {
					int fd;
					memcpy(&fd, CMSG_DATA(c) + i * sizeof(int), sizeof(int));
					(void)close(fd);
				}
			}
		}
		return violation(ch, -1, -EBADMSG, "unexpected ancillary data");
	}
	if (msg.msg_flags & (MSG_TRUNC | MSG_CTRUNC))
		return violation(ch, -1, -EBADMSG, "oversize frame");
	/*
	 * End of file. (An empty datagram reads the same; a worker that sends one only ends its
	 * own session early, which the caller treats as a violation before EXITED.)
	 */
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
	if (r < 0)
		return violation(ch, h.type, r,
				 r == -EPROTO ? "frame content not permitted now" : "malformed payload");
	if (d->flags & F_ONCE)
		ch->used_once |= 1u << (h.type & 31u);
	ch->recv_seq++;
	ch->state = d->next;
	return 0;
}
