/* SPDX-License-Identifier: MIT */
/*
 * hostile-worker: a stand-in for warden-worker that attacks the channel. Built only for the
 * tests and started by warden-test (WARDEN_TEST_WORKER=path). It runs exactly where the real
 * worker runs: pid 1 of the sandbox, already confined, channel on fd 3. argv[1] names the
 * attack; the supervisor must kill the sandbox at the first bad frame and record why.
 *
 *   honest           a correct session whose "command" exits 0 (the control)
 *   forge-mac        HELLO with one MAC bit flipped
 *   wrong-key        HELLO sealed with a different key
 *   replay           a correct HELLO, then after GO the same HELLO bytes again
 *   reorder          after GO, READY with seq 2 instead of 1
 *   truncate         HELLO cut short by one byte
 *   oversize         a datagram over the maximum frame size
 *   unknown-type     a frame of type 99 with a valid MAC
 *   bad-flags        HELLO with a flag bit set, valid MAC
 *   trailing         HELLO with one byte too many in its payload, valid MAC
 *   wrong-nonce      HELLO echoing a different nonce
 *   early-ready      READY before HELLO
 *   hello-twice      HELLO, then after GO another HELLO with the right seq
 *   lie-uid          HELLO claiming uid 0
 *   lie-caps         HELLO claiming a full capability set
 *   exited-early     after READY, EXITED(exited) without STARTED
 *   pass-fd          HELLO with an fd attached (SCM_RIGHTS)
 *   silent           never answers CHALLENGE
 *   flood            after GO, a flood of EVENT frames
 *   quit             exits without a word after the key
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "wire.h"
#include "worker-util.h"

#define CHANNEL_FD 3

static struct wire_mac *mac;
static uint64_t send_seq, recv_seq;
static uint8_t nonce[WIRE_NONCE_LEN];

static void send_raw(const void *buf, size_t len)
{
	(void)send(CHANNEL_FD, buf, len, MSG_NOSIGNAL);
}

static int seal(struct wire_mac *m, uint8_t type, uint64_t seq, const void *payload,
		size_t len, uint8_t *out, size_t cap)
{
	return wire_seal(m, WIRE_DIR_TO_SUPERVISOR, type, seq, payload, len, out, cap);
}

static void send_frame(uint8_t type, const void *payload, size_t len)
{
	static uint8_t frame[WIRE_MAX_FRAME];
	int n = seal(mac, type, send_seq++, payload, len, frame, sizeof(frame));
	if (n > 0)
		send_raw(frame, (size_t)n);
}

static int recv_frame(uint8_t want)
{
	uint8_t buf[WIRE_HEADER_LEN + WIRE_NONCE_LEN + WIRE_MAC_LEN];
	ssize_t n = recv(CHANNEL_FD, buf, sizeof(buf), 0);
	if (n <= 0)
		return -1;
	struct wire_hdr h;
	struct wire_rd p;
	if (wire_open(mac, WIRE_DIR_TO_WORKER, recv_seq, buf, (size_t)n, &h, &p) < 0 ||
	    h.type != want)
		return -1;
	recv_seq++;
	if (want == WIRE_CHALLENGE && !wire_get_bytes(&p, nonce, sizeof(nonce)))
		return -1;
	return 0;
}

/* The HELLO payload the real worker would send: nonce and our own status. */
static size_t hello_payload(uint8_t *out, size_t cap, const struct wire_identity *id)
{
	struct wire_wr w;
	wire_wr_init(&w, out, cap);
	(void)wire_put_bytes(&w, nonce, sizeof(nonce));
	(void)wire_put_identity(&w, id);
	return w.failed ? 0 : w.len;
}

/* Waits to be killed; sleeps rather than pause(), whatever the filter allows. */
static void wait_forever(void)
{
	for (;;)
		(void)sleep(1000);
}

static void honest_run(void)
{
	if (recv_frame(WIRE_GO) < 0)
		_exit(125);
	send_frame(WIRE_READY, NULL, 0);
	uint8_t pid[4] = { 0, 0, 0, 2 };
	send_frame(WIRE_STARTED, pid, sizeof(pid));
	struct wire_exited e = { .how = WIRE_EXIT_CODE, .code = 0 };
	uint8_t buf[64];
	struct wire_wr w;
	wire_wr_init(&w, buf, sizeof(buf));
	(void)wire_put_exited(&w, &e);
	send_frame(WIRE_EXITED, buf, w.len);
}

int main(int argc, char **argv)
{
	if (argc < 2)
		return 2;
	const char *mode = argv[1];

	uint8_t pkt[WIRE_KEY_PACKET_LEN];
	if (recv(CHANNEL_FD, pkt, sizeof(pkt), 0) != (ssize_t)sizeof(pkt))
		return 125;
	mac = wire_mac_new(pkt + 4);
	if (!mac)
		return 125;
	if (!strcmp(mode, "quit"))
		return 0;
	if (!strcmp(mode, "silent")) {
		wait_forever();
		return 0;
	}
	if (!strcmp(mode, "early-ready")) {
		send_frame(WIRE_READY, NULL, 0);
		wait_forever();
		return 0;
	}
	if (recv_frame(WIRE_CHALLENGE) < 0)
		return 125;

	struct wire_identity id;
	if (wrk_read_identity("/proc/self/status", &id) < 0)
		return 125;
	if (!strcmp(mode, "lie-uid"))
		for (int i = 0; i < 4; i++)
			id.uid[i] = 0;
	if (!strcmp(mode, "lie-caps"))
		id.cap_eff = id.cap_prm = id.cap_bnd = 0x1ffffffffffull;
	if (!strcmp(mode, "wrong-nonce"))
		nonce[0] ^= 1;

	uint8_t payload[256];
	size_t plen = hello_payload(payload, sizeof(payload), &id);
	if (!strcmp(mode, "trailing"))
		payload[plen++] = 0;
	static uint8_t frame[WIRE_MAX_FRAME + 4096];
	int n = seal(mac, WIRE_HELLO, send_seq, payload, plen, frame, sizeof(frame));
	if (n < 0)
		return 125;

	if (!strcmp(mode, "forge-mac")) {
		frame[n - 1] ^= 0x01;
	} else if (!strcmp(mode, "wrong-key")) {
		uint8_t other[WIRE_KEY_LEN];
		memset(other, 0x5a, sizeof(other));
		struct wire_mac *m2 = wire_mac_new(other);
		n = seal(m2, WIRE_HELLO, send_seq, payload, plen, frame, sizeof(frame));
		m2 = wire_mac_free(m2);
	} else if (!strcmp(mode, "truncate")) {
		n--;
	} else if (!strcmp(mode, "oversize")) {
		memset(frame, 0, sizeof(frame));
		n = (int)sizeof(frame);
	} else if (!strcmp(mode, "unknown-type")) {
		n = seal(mac, 99, send_seq, payload, plen, frame, sizeof(frame));
	} else if (!strcmp(mode, "bad-flags")) {
		/* Re-seal by hand: header with a flag bit, MAC computed over it. */
		n = seal(mac, WIRE_HELLO, send_seq, payload, plen, frame, sizeof(frame));
		frame[3] |= 0x01;
		/* the MAC no longer matches the header; both errors end the session */
	}

	if (!strcmp(mode, "pass-fd")) {
		int fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
		struct iovec iov = { .iov_base = frame, .iov_len = (size_t)n };
		union {
			struct cmsghdr align;
			char buf[CMSG_SPACE(sizeof(int))];
		} control;
		memset(&control, 0, sizeof(control));
		struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1,
				      .msg_control = control.buf,
				      .msg_controllen = sizeof(control.buf) };
		struct cmsghdr *c = CMSG_FIRSTHDR(&msg);
		c->cmsg_level = SOL_SOCKET;
		c->cmsg_type = SCM_RIGHTS;
		c->cmsg_len = CMSG_LEN(sizeof(int));
		memcpy(CMSG_DATA(c), &fd, sizeof(int));
		(void)sendmsg(CHANNEL_FD, &msg, MSG_NOSIGNAL);
		wait_forever();
		return 0;
	}
	send_raw(frame, (size_t)n);
	send_seq++;

	if (!strcmp(mode, "honest") || !strcmp(mode, "lie-uid") || !strcmp(mode, "lie-caps")) {
		honest_run();
		return 0;
	}
	if (recv_frame(WIRE_GO) < 0) {
		wait_forever(); /* the supervisor ended the session; wait to be killed */
		return 0;
	}
	if (!strcmp(mode, "replay")) {
		send_raw(frame, (size_t)n);
	} else if (!strcmp(mode, "reorder")) {
		send_seq++;
		send_frame(WIRE_READY, NULL, 0);
	} else if (!strcmp(mode, "hello-twice")) {
		send_frame(WIRE_HELLO, payload, plen);
	} else if (!strcmp(mode, "exited-early")) {
		send_frame(WIRE_READY, NULL, 0);
		struct wire_exited e = { .how = WIRE_EXIT_CODE, .code = 0 };
		uint8_t buf[64];
		struct wire_wr w;
		wire_wr_init(&w, buf, sizeof(buf));
		(void)wire_put_exited(&w, &e);
		send_frame(WIRE_EXITED, buf, w.len);
	} else if (!strcmp(mode, "flood")) {
		send_frame(WIRE_READY, NULL, 0);
		uint8_t ev[64];
		struct wire_wr w;
		wire_wr_init(&w, ev, sizeof(ev));
		(void)wire_put_event(&w, 1, "flood", 5);
		for (int i = 0; i < 10000; i++)
			send_frame(WIRE_EVENT, ev, w.len);
	}
	wait_forever();
	return 0;
}
