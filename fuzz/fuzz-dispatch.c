/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer target for the supervisor's frame dispatcher, driven through a fake session.
 *
 * Target functions (supervisor/channel.c): sup_channel_recv() with its dispatch table and
 * handlers, sup_channel_send_go(), sup_channel_start() and sup_channel_done(); through them
 * wire_open(), wire_get_identity() and wire_get_exited().
 *
 * Each input is one session over a fresh SOCK_SEQPACKET socketpair. sup_channel_start() keys
 * the channel from getrandom(); for determinism its MAC is then replaced by one keyed with a
 * fixed key and its nonce by fixed bytes, and the key packet and CHALLENGE it sent are read
 * and discarded. The input is a list of records, each one datagram from the "worker":
 *
 *   u8 flags | u16 len (big-endian) | body[len]
 *
 *   flags bit 0  SEAL     body is u8 type | payload, sealed with the fixed key at the seq the
 *                         channel expects; otherwise body is sent as it is
 *         bit 1  BAD_SEQ  (sealed) use the expected seq + 1
 *         bit 2  REFLECT  (sealed) MAC for the supervisor-to-worker direction
 *         bit 3  NONCE    (sealed) put the session nonce in front of the payload
 *         bit 4  FD       attach 1 << (bits 6..7) descriptors for /dev/null (SCM_RIGHTS)
 *         bit 5  OVERSIZE ignore body; send WIRE_MAX_FRAME + 1 + (len & 1) zero bytes
 *
 * After each datagram it calls sup_channel_recv() and checks the result against a small
 * model of docs/protocol.md (codec result, permitted type and state, exact payload length,
 * handler checks), the recorded state and fields, that no received fd stays open, and that
 * after a violation the channel refuses to read. It sends GO whenever the state becomes
 * ATTESTED and authenticates it on the worker's end. It stops at the first violation or
 * close. Everything is closed before returning: no fd or memory outlives an input.
 *
 * Inputs over DISPATCH_MAX_INPUT are rejected first; records after MAX_RECORDS are ignored.
 * No time and no randomness reach the code under test.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "channel.h"
#include "fuzz-util.h"
#include "fuzz-wire.h"
#include "wire.h"

#define MAX_RECORDS 16u
#define DISPATCH_MAX_INPUT (MAX_RECORDS * (3u + 65535u))
#define HELLO_LEN (WIRE_NONCE_LEN + FUZZ_IDENTITY_LEN)

#define REC_SEAL 0x01u
#define REC_BAD_SEQ 0x02u
#define REC_REFLECT 0x04u
#define REC_NONCE 0x08u
#define REC_FD 0x10u
#define REC_OVERSIZE 0x20u

static const uint8_t fuzz_key[WIRE_KEY_LEN] = {
	0x64, 0x69, 0x73, 0x70, 0x61, 0x74, 0x63, 0x68, 0x2d, 0x6b, 0x65, 0x79, 0x00, 0x01, 0x02, 0x03,
	0x04, 0x05, 0x06, 0x07, 0x08, 0x09, 0x0a, 0x0b, 0x0c, 0x0d, 0x0e, 0x0f, 0x10, 0x11, 0x12, 0x13,
};

/* The fixed CHALLENGE nonce: 0x4e, 0x4f, ... */
static void fixed_nonce(uint8_t nonce[WIRE_NONCE_LEN])
{
	for (size_t i = 0; i < WIRE_NONCE_LEN; i++)
		nonce[i] = (uint8_t)(0x4e + i);
}

static uint8_t payload_buf[WIRE_NONCE_LEN + 65535];
static uint8_t send_buf[WIRE_MAX_FRAME + 2];
static uint8_t recv_buf[WIRE_MAX_FRAME + 1];

static unsigned count_open_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	CHECK(d);
	unsigned n = 0;
	struct dirent *de;
	while ((de = readdir(d)))
		n += de->d_name[0] != '.';
	CHECK(closedir(d) == 0);
	return n;
}

static bool send_datagram(int fd, const uint8_t *buf, size_t len, unsigned n_fds)
{
	int fds[8];
	union {
		struct cmsghdr align;
		char buf[CMSG_SPACE(sizeof(fds))];
	} control;
	struct iovec iov = { .iov_base = (void *)(uintptr_t)buf, .iov_len = len };
	struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1 };
	CHECK(n_fds <= 8);
	for (unsigned i = 0; i < n_fds; i++) {
		fds[i] = open("/dev/null", O_RDONLY | O_CLOEXEC);
		CHECK(fds[i] >= 0);
	}
	if (n_fds) {
		memset(&control, 0, sizeof(control));
		msg.msg_control = control.buf;
		msg.msg_controllen = CMSG_SPACE(sizeof(int) * n_fds);
		struct cmsghdr *c = CMSG_FIRSTHDR(&msg);
		c->cmsg_level = SOL_SOCKET;
		c->cmsg_type = SCM_RIGHTS;
		c->cmsg_len = CMSG_LEN(sizeof(int) * n_fds);
		memcpy(CMSG_DATA(c), fds, sizeof(int) * n_fds);
	}
	ssize_t n;
	do
		n = sendmsg(fd, &msg, MSG_NOSIGNAL | MSG_DONTWAIT);
	while (n < 0 && errno == EINTR);
	for (unsigned i = 0; i < n_fds; i++)
		CHECK(close(fds[i]) == 0);
	return n >= 0 && (size_t)n == len;
}

/* Reads GO on the worker's end and authenticates it. */
static void expect_go(int wrk_fd, struct wire_mac *mac, uint64_t seq)
{
	ssize_t n = recv(wrk_fd, recv_buf, sizeof(recv_buf), MSG_DONTWAIT);
	CHECK(n > 0);
	struct wire_hdr h;
	struct wire_rd p;
	CHECK(wire_open(mac, WIRE_DIR_TO_WORKER, seq, recv_buf, (size_t)n, &h, &p) == 0);
	CHECK(h.type == WIRE_GO && p.len == 0);
}

/* The states in which docs/protocol.md permits each worker frame type, and what follows. */
static bool permitted(uint8_t type, enum sup_chan_state s, enum sup_chan_state *next,
		      size_t *min, size_t *max)
{
	bool after_go = s == SUP_CHAN_GO_SENT || s == SUP_CHAN_READY || s == SUP_CHAN_RUNNING;
	switch (type) {
	case WIRE_HELLO:
		*next = SUP_CHAN_ATTESTED;
		*min = *max = HELLO_LEN;
		return s == SUP_CHAN_HANDSHAKE;
	case WIRE_READY:
		*next = SUP_CHAN_READY;
		*min = *max = 0;
		return s == SUP_CHAN_GO_SENT;
	case WIRE_STARTED:
		*next = SUP_CHAN_RUNNING;
		*min = *max = 4;
		return s == SUP_CHAN_READY;
	case WIRE_EXITED:
		*next = SUP_CHAN_DONE;
		*min = *max = FUZZ_EXITED_LEN;
		return s == SUP_CHAN_READY || s == SUP_CHAN_RUNNING;
	case WIRE_EVENT:
		*next = s;
		*min = 1 + 4;
		*max = 1 + 4 + WIRE_MAX_EVENT_TEXT;
		return after_go;
	case WIRE_ERROR:
		/* before STARTED only: a command that started ends in EXITED (#15) */
		*next = SUP_CHAN_FAILED;
		*min = 4 + 4;
		*max = 4 + 4 + WIRE_MAX_ERROR_TEXT;
		return s == SUP_CHAN_GO_SENT || s == SUP_CHAN_READY;
	default: /* RESULT included: no state of a run permits it */
		return false;
	}
}

/* What sup_channel_recv must return for an authentic frame at the right seq. */
static int model(const struct sup_channel *ch, const struct wire_hdr *h, struct wire_rd p)
{
	enum sup_chan_state next;
	size_t min, max;
	if (!permitted(h->type, ch->state, &next, &min, &max))
		return -EPROTO;
	if (p.len < min || p.len > max)
		return -EBADMSG;
	switch (h->type) {
	case WIRE_EVENT: {
		if (ch->n_events >= WIRE_MAX_EVENTS)
			return -EPROTO;
		uint8_t level;
		char *text = NULL;
		int r = wire_get_event(&p, &level, &text);
		free(text);
		return r;
	}
	case WIRE_ERROR: {
		uint32_t code;
		char *what = NULL;
		int r = wire_get_error(&p, &code, &what);
		free(what);
		return r;
	}
	case WIRE_HELLO: {
		uint8_t nonce[WIRE_NONCE_LEN];
		struct wire_identity id;
		CHECK(wire_get_bytes(&p, nonce, sizeof(nonce)));
		if (memcmp(nonce, ch->nonce, sizeof(nonce)) != 0)
			return -EPROTO;
		return wire_get_identity(&p, &id);
	}
	case WIRE_STARTED: {
		uint32_t pid;
		CHECK(wire_get_u32(&p, &pid));
		return pid >= 2 ? 0 : -EBADMSG;
	}
	case WIRE_EXITED: {
		struct wire_exited e;
		int r = wire_get_exited(&p, &e);
		if (r < 0)
			return r;
		bool exec_failure = e.how == WIRE_EXIT_NOT_FOUND || e.how == WIRE_EXIT_NOT_EXEC;
		return exec_failure == ch->have_started ? -EPROTO : 0;
	}
	default:
		return 0;
	}
}

/* After an accepted frame: the channel recorded exactly what the frame said. */
static void check_accepted(const struct sup_channel *ch, const struct wire_hdr *h,
			   struct wire_rd p)
{
	switch (h->type) {
	case WIRE_HELLO: {
		struct wire_identity id;
		struct wire_rd q;
		CHECK(wire_get_view(&p, WIRE_NONCE_LEN, &q));
		CHECK(wire_get_identity(&p, &id) == 0 && ch->have_identity);
		CHECK(ch->claimed.pid == id.pid && ch->claimed.cap_eff == id.cap_eff &&
		      ch->claimed.no_new_privs == id.no_new_privs &&
		      ch->claimed.seccomp == id.seccomp);
		break;
	}
	case WIRE_STARTED: {
		uint32_t pid;
		CHECK(wire_get_u32(&p, &pid) && ch->have_started && ch->command_pid == pid);
		break;
	}
	case WIRE_EXITED: {
		struct wire_exited e;
		CHECK(wire_get_exited(&p, &e) == 0 && ch->have_exited);
		CHECK(ch->exited.how == e.how && ch->exited.code == e.code &&
		      ch->exited.maxrss_kib == e.maxrss_kib);
		break;
	}
	default:
		break;
	}
}

static void session(int wrk_fd, struct sup_channel *ch, struct wire_mac *mac,
		    const uint8_t *data, size_t size)
{
	uint64_t go_seq = 1;
	for (unsigned rec = 0; rec < MAX_RECORDS && size >= 3; rec++) {
		uint8_t flags = data[0];
		size_t len = ((size_t)data[1] << 8) | data[2];
		if (len > size - 3)
			len = size - 3;
		const uint8_t *body = data + 3;
		data += 3 + len;
		size -= 3 + len;

		/* Build the datagram. */
		const uint8_t *dgram = body;
		size_t dgram_len = len;
		if (flags & REC_OVERSIZE) {
			dgram_len = WIRE_MAX_FRAME + 1 + (len & 1);
			memset(send_buf, 0, dgram_len);
			dgram = send_buf;
		} else if ((flags & REC_SEAL) && len >= 1) {
			size_t plen = 0;
			if (flags & REC_NONCE) {
				memcpy(payload_buf, ch->nonce, WIRE_NONCE_LEN);
				plen = WIRE_NONCE_LEN;
			}
			memcpy(payload_buf + plen, body + 1, len - 1);
			plen += len - 1;
			uint64_t seq = ch->recv_seq + ((flags & REC_BAD_SEQ) ? 1 : 0);
			enum wire_dir dir = (flags & REC_REFLECT) ? WIRE_DIR_TO_WORKER :
								    WIRE_DIR_TO_SUPERVISOR;
			int n = wire_seal(mac, dir, body[0], seq, payload_buf, plen, send_buf,
					  sizeof(send_buf));
			if (n < 0) {
				CHECK(n == -EMSGSIZE && plen > WIRE_MAX_PAYLOAD);
				continue;
			}
			dgram = send_buf;
			dgram_len = (size_t)n;
		}
		unsigned n_fds = (flags & REC_FD) ? 1u << (flags >> 6) : 0;

		const enum sup_chan_state state = ch->state;
		const uint64_t recv_seq = ch->recv_seq;
		const bool had_started = ch->have_started;
		unsigned fds_before = n_fds ? count_open_fds() : 0;
		if (!send_datagram(wrk_fd, dgram, dgram_len, n_fds))
			return;

		/* What the model says, from the channel as it is before the frame. */
		int want;
		bool authentic = false;
		struct wire_hdr h;
		struct wire_rd p;
		if (dgram_len == 0 && !n_fds) {
			want = -ECONNRESET;
		} else if (n_fds || dgram_len > WIRE_MAX_FRAME) {
			want = -EBADMSG;
		} else {
			want = wire_open(mac, WIRE_DIR_TO_SUPERVISOR, recv_seq, dgram, dgram_len, &h,
					 &p);
			if (want == 0) {
				authentic = true;
				want = model(ch, &h, p);
			}
		}

		int r = sup_channel_recv(ch);
		if (n_fds) {
			/* Only where the kernel lacks SO_PASSRIGHTS: the fds are parked (#15). */
			CHECK(ch->n_parked == n_fds && count_open_fds() == fds_before + n_fds);
			CHECK(r == -EBADMSG);
			CHECK(!strcmp(ch->violation_reason, "unexpected ancillary data"));
			sup_channel_release_fds(ch);
			CHECK(count_open_fds() == fds_before);
		}
		CHECK(r == want);

		if (r == -ECONNRESET) {
			CHECK(!ch->violated && ch->state == state);
			return;
		}
		if (r < 0) {
			CHECK(ch->violated && ch->violation_reason[0]);
			CHECK(memchr(ch->violation_reason, '\0', sizeof(ch->violation_reason)));
			CHECK(ch->violation_frame == recv_seq + 1);
			CHECK(ch->violation_type == (authentic ? h.type : -1));
			CHECK(ch->state == state && ch->recv_seq == recv_seq);
			CHECK(ch->have_started == had_started);
			CHECK(sup_channel_recv(ch) == -EPROTO);
			return;
		}

		/* Accepted. */
		enum sup_chan_state next;
		size_t pmin, pmax;
		CHECK(authentic && permitted(h.type, state, &next, &pmin, &pmax));
		CHECK(!ch->violated && ch->state == next && ch->recv_seq == recv_seq + 1);
		check_accepted(ch, &h, p);
		if (ch->state == SUP_CHAN_ATTESTED) {
			CHECK(sup_channel_send_go(ch) == 0 && ch->state == SUP_CHAN_GO_SENT);
			expect_go(wrk_fd, mac, go_seq++);
			CHECK(sup_channel_send_go(ch) == -EPROTO);
		}
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size > DISPATCH_MAX_INPUT)
		return -1; /* keep it out of the corpus */

	int sv[2];
	CHECK(socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) == 0);
	int sndbuf = 4 * WIRE_MAX_FRAME;
	(void)setsockopt(sv[1], SOL_SOCKET, SO_SNDBUF, &sndbuf, sizeof(sndbuf));

	struct sup_channel ch;
	CHECK(sup_channel_start(&ch, sv[0]) == 0);
	/* Discard the random key packet and CHALLENGE; rekey both ends with the fixed key. */
	CHECK(recv(sv[1], recv_buf, sizeof(recv_buf), MSG_DONTWAIT) == WIRE_KEY_PACKET_LEN);
	CHECK(recv(sv[1], recv_buf, sizeof(recv_buf), MSG_DONTWAIT) ==
	      WIRE_HEADER_LEN + WIRE_NONCE_LEN + WIRE_MAC_LEN);
	wire_mac_free(ch.mac);
	ch.mac = wire_mac_new(fuzz_key);
	CHECK(ch.mac);
	fixed_nonce(ch.nonce);
	struct wire_mac *mac = wire_mac_new(fuzz_key);
	CHECK(mac);

	session(sv[1], &ch, mac, data, size);

	sup_channel_done(&ch);
	wire_mac_free(mac);
	CHECK(close(sv[0]) == 0);
	CHECK(close(sv[1]) == 0);
	return 0;
}
