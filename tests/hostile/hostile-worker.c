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
 *   pass-fd          a datagram with an fd attached (SCM_RIGHTS), before anything else
 *   silent           never answers CHALLENGE
 *   flood            after GO, a flood of EVENT frames
 *   quit             exits without a word after the key
 *   linger-fd        as pass-fd, with a TCP socket whose peer never reads, a full send queue
 *                    and SO_LINGER {1, INT_MAX}: its last close() blocks
 *   many-fds         as linger-fd, with the most fds one message may carry (253), the
 *                    lingering socket last, beyond any small control buffer
 *   silent-after-go  a correct HELLO, then nothing after GO
 *   event-after-exit a correct session, then an EVENT after EXITED
 *   empty-after-exit a correct session, then an empty datagram after EXITED
 *   silent-after-exit a correct session, then neither exits nor closes the channel
 *   error-after-start READY, STARTED, then ERROR
 *   lie-exit         a correct session that reports exit status 0, then exits with status 3
 *   crash-exit       a correct session, then a fault (SIGSEGV) instead of exit 0
 *   huge-usage       a correct session whose EXITED claims 2^64-1 for every resource
 *
 * pass-fd, linger-fd and many-fds: when the supervisor's end refuses descriptors
 * (SO_PASSRIGHTS off), sendmsg fails with EPERM; the worker then prints
 * "hostile: fd passing refused: EPERM" on stderr and goes on as the honest worker.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "wire.h"
#include "worker-util.h"

#define CHANNEL_FD 3

/* Where crash-exit writes: 0, read through a volatile so the compiler keeps the write. */
static volatile uintptr_t crash_address;

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

static void send_exited(const struct wire_exited *e)
{
	uint8_t buf[64];
	struct wire_wr w;
	wire_wr_init(&w, buf, sizeof(buf));
	(void)wire_put_exited(&w, e);
	send_frame(WIRE_EXITED, buf, w.len);
}

/* After HELLO: GO, READY, STARTED and EXITED with e, as the real worker would. */
static void honest_run_with(const struct wire_exited *e)
{
	if (recv_frame(WIRE_GO) < 0)
		_exit(125);
	send_frame(WIRE_READY, NULL, 0);
	uint8_t pid[4] = { 0, 0, 0, 2 };
	send_frame(WIRE_STARTED, pid, sizeof(pid));
	send_exited(e);
}

static void honest_run(void)
{
	const struct wire_exited e = { .how = WIRE_EXIT_CODE, .code = 0 };
	honest_run_with(&e);
}

/*
 * A TCP connection on the sandbox's own loopback whose receiving end never reads: the
 * client's send queue is filled and it lingers as long as the kernel allows, so the last
 * close() of it waits until the queue drains, which never happens. The listener and the
 * accepted end stay open here. Returns the client's fd, or -1.
 */
static int lingering_socket(void)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t alen = sizeof(a);
	int l = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (l < 0 || bind(l, (struct sockaddr *)&a, sizeof(a)) < 0 || listen(l, 1) < 0 ||
	    getsockname(l, (struct sockaddr *)&a, &alen) < 0)
		return -1;
	int c = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (c < 0 || connect(c, (struct sockaddr *)&a, sizeof(a)) < 0)
		return -1;
	if (accept4(l, NULL, NULL, SOCK_CLOEXEC) < 0)
		return -1;
	static char junk[65536];
	while (send(c, junk, sizeof(junk), MSG_DONTWAIT | MSG_NOSIGNAL) > 0)
		;
	struct linger lg = { .l_onoff = 1, .l_linger = INT_MAX };
	if (setsockopt(c, SOL_SOCKET, SO_LINGER, &lg, sizeof(lg)) < 0)
		return -1;
	return c;
}

/*
 * Sends frame (n bytes) with the n_fds descriptors of fds attached. Returns 0 when sent, or
 * -errno.
 */
static int send_with_fds(const uint8_t *frame, size_t n, const int *fds, size_t n_fds)
{
	static union {
		struct cmsghdr align;
		char buf[CMSG_SPACE(sizeof(int) * 253)];
	} control;
	if (n_fds > 253)
		return -E2BIG;
	memset(&control, 0, sizeof(control));
	struct iovec iov = { .iov_base = (void *)frame, .iov_len = n };
	struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = control.buf,
			      .msg_controllen = CMSG_SPACE(sizeof(int) * n_fds) };
	struct cmsghdr *c = CMSG_FIRSTHDR(&msg);
	c->cmsg_level = SOL_SOCKET;
	c->cmsg_type = SCM_RIGHTS;
	c->cmsg_len = CMSG_LEN(sizeof(int) * n_fds);
	memcpy(CMSG_DATA(c), fds, sizeof(int) * n_fds);
	return sendmsg(CHANNEL_FD, &msg, MSG_NOSIGNAL) < 0 ? -errno : 0;
}

/*
 * pass-fd, linger-fd, many-fds: a one-byte datagram with descriptors attached, sent as soon as
 * the worker runs, before the supervisor reads the channel at all, and our own copy closed at
 * once, so that the supervisor's is the last reference. Sent, the supervisor must end the
 * session: wait to be killed. Refused, say so and carry on with an honest session.
 */
static void attack_with_fds(const char *mode)
{
	static int fds[253];
	size_t n_fds = 1;
	int sock = -1;
	if (!strcmp(mode, "pass-fd")) {
		fds[0] = open("/dev/null", O_RDONLY | O_CLOEXEC);
	} else {
		sock = lingering_socket();
		if (sock < 0) {
			fprintf(stderr, "hostile: lingering socket: %s\n", strerror(errno));
			_exit(125);
		}
		if (!strcmp(mode, "many-fds")) {
			for (n_fds = 0; n_fds < 252; n_fds++)
				fds[n_fds] = open("/dev/null", O_RDONLY | O_CLOEXEC);
		} else {
			n_fds = 0;
		}
		fds[n_fds++] = sock;
	}
	int r = send_with_fds((const uint8_t *)"x", 1, fds, n_fds);
	if (r == 0) {
		if (sock >= 0)
			(void)close(sock);
		wait_forever();
	}
	if (r != -EPERM) {
		fprintf(stderr, "hostile: sendmsg with fds: %s\n", strerror(-r));
		_exit(125);
	}
	fprintf(stderr, "hostile: fd passing refused: EPERM\n");
	/* Our own exit must not wait on the socket either. */
	struct linger off = { 0 };
	if (sock >= 0)
		(void)setsockopt(sock, SOL_SOCKET, SO_LINGER, &off, sizeof(off));
}

int main(int argc, char **argv)
{
	if (argc < 2)
		return 2;
	const char *mode = argv[1];
	if (!strcmp(mode, "pass-fd") || !strcmp(mode, "linger-fd") || !strcmp(mode, "many-fds"))
		attack_with_fds(mode);

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

	send_raw(frame, (size_t)n);
	send_seq++;

	if (!strcmp(mode, "honest") || !strcmp(mode, "lie-uid") || !strcmp(mode, "lie-caps") ||
	    !strcmp(mode, "pass-fd") || !strcmp(mode, "linger-fd") || !strcmp(mode, "many-fds")) {
		honest_run();
		return 0;
	}
	if (!strcmp(mode, "lie-exit")) {
		honest_run();
		return 3;
	}
	if (!strcmp(mode, "crash-exit")) {
		honest_run();
		/* A fault: its SIGSEGV is forced even on pid 1, which could not send it itself. */
		*(volatile int *)(uintptr_t)crash_address = 0;
		return 0;
	}
	if (!strcmp(mode, "huge-usage")) {
		const struct wire_exited e = { .how = WIRE_EXIT_CODE, .code = 0,
					       .utime_usec = UINT64_MAX, .stime_usec = UINT64_MAX,
					       .maxrss_kib = UINT64_MAX };
		honest_run_with(&e);
		return 0;
	}
	if (!strcmp(mode, "event-after-exit") || !strcmp(mode, "empty-after-exit") ||
	    !strcmp(mode, "silent-after-exit")) {
		honest_run();
		if (!strcmp(mode, "event-after-exit")) {
			uint8_t ev[64];
			struct wire_wr w;
			wire_wr_init(&w, ev, sizeof(ev));
			(void)wire_put_event(&w, 2, "after EXITED", 12);
			send_frame(WIRE_EVENT, ev, w.len);
		} else if (!strcmp(mode, "empty-after-exit")) {
			send_raw("", 0);
		}
		wait_forever();
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
	} else if (!strcmp(mode, "error-after-start")) {
		send_frame(WIRE_READY, NULL, 0);
		uint8_t pid[4] = { 0, 0, 0, 2 };
		send_frame(WIRE_STARTED, pid, sizeof(pid));
		uint8_t pl[64];
		struct wire_wr w;
		wire_wr_init(&w, pl, sizeof(pl));
		(void)wire_put_error(&w, ENOMEM, "late error", 10);
		send_frame(WIRE_ERROR, pl, w.len);
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
