/* SPDX-License-Identifier: MIT */
/*
 * Unit tests for the supervisor's channel (supervisor/channel.c): a real SOCK_SEQPACKET
 * socketpair with a fake worker on the other end that reads the key packet, keys its own
 * wire_mac and sends frames with wire_seal. Covers the happy path and every violation, each
 * with its exact return code, reason and frame type, and checks that after a violation the
 * channel reads nothing more.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <limits.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cmocka.h>

#include "channel.h"
#include "cleanup.h"
#include "identity.h"
#include "wire.h"

#define REASON_MAC "malformed frame or bad MAC"
#define REASON_SEQ "wrong sequence number (replayed, reordered or dropped)"
#define REASON_TYPE "unknown or unpermitted frame type"
#define REASON_STATE "frame not permitted in this state"
#define REASON_LENGTH "payload length out of range"
#define REASON_CONTENT "frame content not permitted now"
#define REASON_PAYLOAD "malformed payload"
#define REASON_ANCILLARY "unexpected ancillary data"
#define REASON_OVERSIZE "oversize frame"

#define HELLO_LEN (WIRE_NONCE_LEN + 82)
#define EXITED_LEN 29

struct fixture {
	struct sup_channel ch;
	int sup_fd;
	int wrk_fd;
	struct wire_mac *mac; /* the worker's copy of the session key */
	uint64_t send_seq;    /* worker -> supervisor */
	uint64_t recv_seq;    /* supervisor -> worker */
	uint8_t nonce[WIRE_NONCE_LEN];
	const void *param;    /* the test case's initial state, if any */
};

static uint8_t frame_buf[WIRE_MAX_FRAME + 16];

static const struct wire_identity worker_identity = {
	.pid = 1, .uid = { 1000, 1000, 1000, 1000 }, .gid = { 1000, 1000, 1000, 1000 },
	.no_new_privs = 1, .seccomp = 2, .seccomp_filters = 1,
};

static const struct wire_exited exit_code_7 = {
	.how = WIRE_EXIT_CODE, .code = 7, .utime_usec = 1500, .stime_usec = 250,
	.maxrss_kib = 4096,
};

static const struct wire_exited exit_not_found = {
	.how = WIRE_EXIT_NOT_FOUND, .code = ENOENT,
};

/* Receives one datagram on the worker's end (which must have one queued). */
static size_t wrk_recv(struct fixture *f, uint8_t *buf, size_t cap)
{
	ssize_t n = recv(f->wrk_fd, buf, cap, MSG_DONTWAIT);
	assert_true(n >= 0);
	return (size_t)n;
}

/* Receives and authenticates one frame from the supervisor; returns its payload length. */
static size_t wrk_recv_frame(struct fixture *f, uint8_t type, uint8_t *payload, size_t cap)
{
	size_t n = wrk_recv(f, frame_buf, sizeof(frame_buf));
	struct wire_hdr h;
	struct wire_rd p;
	assert_int_equal(wire_open(f->mac, WIRE_DIR_TO_WORKER, f->recv_seq, frame_buf, n, &h, &p),
			 0);
	assert_int_equal(h.type, type);
	assert_true(p.len <= cap);
	assert_true(wire_get_bytes(&p, payload, p.len));
	f->recv_seq++;
	return h.payload_len;
}

static int setup(void **state)
{
	struct fixture *f = calloc(1, sizeof(*f));
	assert_non_null(f);
	f->param = *state;
	int sv[2];
	assert_int_equal(socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv), 0);
	f->sup_fd = sv[0];
	f->wrk_fd = sv[1];
	int sndbuf = 4 * WIRE_MAX_FRAME;
	assert_int_equal(setsockopt(f->wrk_fd, SOL_SOCKET, SO_SNDBUF, &sndbuf, sizeof(sndbuf)), 0);

	assert_int_equal(sup_channel_start(&f->ch, f->sup_fd), 0);
	assert_int_equal(f->ch.state, SUP_CHAN_HANDSHAKE);
	assert_false(f->ch.violated);
	assert_int_equal(f->ch.violation_type, -1);

	/* The key packet: exactly "WKEY" + key, unframed. */
	uint8_t pkt[WIRE_KEY_PACKET_LEN + 1];
	assert_int_equal(wrk_recv(f, pkt, sizeof(pkt)), WIRE_KEY_PACKET_LEN);
	assert_memory_equal(pkt, WIRE_KEY_MAGIC, 4);
	f->mac = wire_mac_new(pkt + 4);
	assert_non_null(f->mac);
	explicit_bzero(pkt, sizeof(pkt));

	/* CHALLENGE, seq 0: the nonce the channel keeps. */
	assert_int_equal(wrk_recv_frame(f, WIRE_CHALLENGE, f->nonce, sizeof(f->nonce)),
			 WIRE_NONCE_LEN);
	assert_memory_equal(f->nonce, f->ch.nonce, WIRE_NONCE_LEN);
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *f = *state;
	sup_channel_done(&f->ch);
	sup_channel_done(&f->ch); /* safe twice */
	if (f->sup_fd >= 0)
		(void)close(f->sup_fd);
	if (f->wrk_fd >= 0)
		(void)close(f->wrk_fd);
	wire_mac_free(f->mac);
	free(f);
	return 0;
}

/* ---- the fake worker ------------------------------------------------------------------------ */

static void wrk_send_raw(struct fixture *f, const void *buf, size_t len)
{
	ssize_t n = send(f->wrk_fd, buf, len, MSG_NOSIGNAL);
	assert_int_equal(n, (ssize_t)len);
}

/* Seals with the worker's key at seq into frame_buf; returns the frame length. */
static size_t wrk_seal(struct fixture *f, enum wire_dir dir, uint8_t type, uint64_t seq,
		       const void *payload, size_t len)
{
	int n = wire_seal(f->mac, dir, type, seq, payload, len, frame_buf, sizeof(frame_buf));
	assert_true(n > 0);
	return (size_t)n;
}

/* Sends one authentic frame at the next sequence number. */
static void wrk_send(struct fixture *f, uint8_t type, const void *payload, size_t len)
{
	size_t n = wrk_seal(f, WIRE_DIR_TO_SUPERVISOR, type, f->send_seq, payload, len);
	wrk_send_raw(f, frame_buf, n);
	f->send_seq++;
}

static size_t hello_payload(const struct fixture *f, uint8_t out[HELLO_LEN])
{
	struct wire_wr w;
	wire_wr_init(&w, out, HELLO_LEN);
	assert_true(wire_put_bytes(&w, f->nonce, WIRE_NONCE_LEN));
	assert_true(wire_put_identity(&w, &worker_identity));
	assert_int_equal(w.len, HELLO_LEN);
	return w.len;
}

static size_t exited_payload(const struct wire_exited *e, uint8_t out[EXITED_LEN])
{
	struct wire_wr w;
	wire_wr_init(&w, out, EXITED_LEN);
	assert_true(wire_put_exited(&w, e));
	assert_int_equal(w.len, EXITED_LEN);
	return w.len;
}

/*
 * A payload that is valid for type on its own, so only state and sequence decide: HELLO with
 * the right nonce, STARTED pid 2, EXITED consistent with have_started, otherwise empty.
 */
static size_t valid_payload(const struct fixture *f, uint8_t type, uint8_t *out)
{
	struct wire_wr w;
	switch (type) {
	case WIRE_HELLO:
		return hello_payload(f, out);
	case WIRE_STARTED:
		wire_wr_init(&w, out, 4);
		assert_true(wire_put_u32(&w, 2));
		return w.len;
	case WIRE_EXITED:
		return exited_payload(f->ch.have_started ? &exit_code_7 : &exit_not_found, out);
	default:
		return 0;
	}
}

static void wrk_send_valid(struct fixture *f, uint8_t type)
{
	uint8_t payload[HELLO_LEN];
	wrk_send(f, type, payload, valid_payload(f, type, payload));
}

static void expect_ok(struct fixture *f, enum sup_chan_state want)
{
	int r = sup_channel_recv(&f->ch);
	if (r != 0)
		print_error("recv %d: %s\n", r, f->ch.violation_reason);
	assert_int_equal(r, 0);
	assert_false(f->ch.violated);
	assert_int_equal(f->ch.state, want);
	assert_true(f->ch.recv_seq == f->send_seq);
}

/* The worker closes its end: the next read reports the close, and it is no violation. */
static void wrk_close_expect_reset(struct fixture *f)
{
	assert_int_equal(close(f->wrk_fd), 0);
	f->wrk_fd = -1;
	assert_int_equal(sup_channel_recv(&f->ch), -ECONNRESET);
	assert_false(f->ch.violated);
}

static void wrk_expect_go(struct fixture *f)
{
	uint8_t none[1];
	assert_int_equal(wrk_recv_frame(f, WIRE_GO, none, 0), 0);
}

/* Drives a well-behaved session up to (and including) state want. */
static void drive_to(struct fixture *f, enum sup_chan_state want)
{
	if (want >= SUP_CHAN_ATTESTED) {
		wrk_send_valid(f, WIRE_HELLO);
		expect_ok(f, SUP_CHAN_ATTESTED);
	}
	if (want >= SUP_CHAN_GO_SENT) {
		assert_int_equal(sup_channel_send_go(&f->ch), 0);
		assert_int_equal(f->ch.state, SUP_CHAN_GO_SENT);
		wrk_expect_go(f);
	}
	if (want >= SUP_CHAN_READY) {
		wrk_send_valid(f, WIRE_READY);
		expect_ok(f, SUP_CHAN_READY);
	}
	if (want >= SUP_CHAN_RUNNING) {
		wrk_send_valid(f, WIRE_STARTED);
		expect_ok(f, SUP_CHAN_RUNNING);
	}
	if (want >= SUP_CHAN_DONE) {
		wrk_send_valid(f, WIRE_EXITED);
		expect_ok(f, SUP_CHAN_DONE);
	}
}

/* Bytes queued for the supervisor: the next datagram's length, or -1 when none. */
static ssize_t sup_queued(const struct fixture *f)
{
	uint8_t b;
	ssize_t n = recv(f->sup_fd, &b, 1, MSG_PEEK | MSG_DONTWAIT | MSG_TRUNC);
	if (n < 0)
		assert_int_equal(errno, EAGAIN);
	return n;
}

/*
 * Asserts the recorded violation, then that the channel is finished: a further recv returns
 * -EPROTO without reading the next (perfectly valid) frame, and the record stays the first one.
 */
static void assert_violation(struct fixture *f, int r, int err, int type, const char *reason)
{
	if (r != err || strcmp(f->ch.violation_reason, reason) != 0)
		print_error("got %d '%s' (type %d), wanted %d '%s' (type %d)\n", r,
			    f->ch.violation_reason, f->ch.violation_type, err, reason, type);
	assert_int_equal(r, err);
	assert_true(f->ch.violated);
	assert_int_equal(f->ch.violation_type, type);
	assert_string_equal(f->ch.violation_reason, reason);
	assert_true(f->ch.violation_frame == f->ch.recv_seq + 1);

	/* The offending datagram was consumed; nothing else is queued. */
	assert_int_equal(sup_queued(f), -1);
	enum sup_chan_state state = f->ch.state;
	uint64_t recv_seq = f->ch.recv_seq;
	size_t n = wrk_seal(f, WIRE_DIR_TO_SUPERVISOR, WIRE_READY, recv_seq, NULL, 0);
	wrk_send_raw(f, frame_buf, n);
	assert_int_equal(sup_channel_recv(&f->ch), -EPROTO);
	assert_int_equal(sup_queued(f), (ssize_t)n); /* still there: not read */
	assert_int_equal(sup_channel_recv(&f->ch), -EPROTO);
	assert_int_equal(f->ch.state, state);
	assert_true(f->ch.recv_seq == recv_seq);
	assert_int_equal(f->ch.violation_type, type);
	assert_string_equal(f->ch.violation_reason, reason);
}

static unsigned count_open_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	assert_non_null(d);
	unsigned n = 0;
	struct dirent *de;
	while ((de = readdir(d)))
		n += de->d_name[0] != '.';
	assert_int_equal(closedir(d), 0);
	return n;
}

#ifndef SO_PASSRIGHTS
#define SO_PASSRIGHTS 83
#endif

/*
 * Sends frame_buf[0..len) with n_fds descriptors attached: fds when not NULL, else new ones for
 * /dev/null; closes the ones it opened. Returns what sendmsg returned, or -errno.
 */
static ssize_t wrk_sendmsg_fds(struct fixture *f, size_t len, const int *fds, unsigned n_fds)
{
	static int own[SUP_CHAN_MAX_FDS];
	assert_true(n_fds >= 1 && n_fds <= SUP_CHAN_MAX_FDS);
	for (unsigned i = 0; !fds && i < n_fds; i++) {
		own[i] = open("/dev/null", O_RDONLY | O_CLOEXEC);
		assert_true(own[i] >= 0);
	}
	static union {
		struct cmsghdr align;
		char buf[CMSG_SPACE(sizeof(int) * SUP_CHAN_MAX_FDS)];
	} control;
	memset(&control, 0, sizeof(control));
	struct iovec iov = { .iov_base = frame_buf, .iov_len = len };
	struct msghdr msg = {
		.msg_iov = &iov,
		.msg_iovlen = 1,
		.msg_control = control.buf,
		.msg_controllen = CMSG_SPACE(sizeof(int) * n_fds),
	};
	struct cmsghdr *c = CMSG_FIRSTHDR(&msg);
	c->cmsg_level = SOL_SOCKET;
	c->cmsg_type = SCM_RIGHTS;
	c->cmsg_len = CMSG_LEN(sizeof(int) * n_fds);
	memcpy(CMSG_DATA(c), fds ? fds : own, sizeof(int) * n_fds);
	ssize_t n = sendmsg(f->wrk_fd, &msg, MSG_NOSIGNAL);
	if (n < 0)
		n = -errno;
	for (unsigned i = 0; !fds && i < n_fds; i++)
		assert_int_equal(close(own[i]), 0);
	return n;
}

/* wrk_sendmsg_fds with new /dev/null descriptors, which must be sent. */
static void wrk_send_with_fds(struct fixture *f, size_t len, unsigned n_fds)
{
	assert_int_equal(wrk_sendmsg_fds(f, len, NULL, n_fds), (ssize_t)len);
}

/*
 * What a kernel without SO_PASSRIGHTS does: the supervisor's end accepts descriptors again
 * (the option's default), so that the fallback can be tested here.
 */
static void accept_fds(struct fixture *f)
{
	int on = 1;
	if (setsockopt(f->sup_fd, SOL_SOCKET, SO_PASSRIGHTS, &on, sizeof(on)) < 0)
		assert_int_equal(errno, ENOPROTOOPT); /* already so */
}

/* ---- the happy path ------------------------------------------------------------------------- */

static void test_happy_path(void **state)
{
	struct fixture *f = *state;
	wrk_send_valid(f, WIRE_HELLO);
	expect_ok(f, SUP_CHAN_ATTESTED);
	assert_true(f->ch.have_identity);
	assert_int_equal(f->ch.claimed.pid, 1);
	assert_int_equal(f->ch.claimed.uid[2], 1000);
	assert_int_equal(f->ch.claimed.no_new_privs, 1);
	assert_int_equal(f->ch.claimed.seccomp, 2);
	assert_int_equal(f->ch.claimed.seccomp_filters, 1);

	assert_int_equal(sup_channel_send_go(&f->ch), 0);
	assert_int_equal(f->ch.state, SUP_CHAN_GO_SENT);
	wrk_expect_go(f);
	assert_int_equal(sup_channel_send_go(&f->ch), -EPROTO); /* once */

	wrk_send_valid(f, WIRE_READY);
	expect_ok(f, SUP_CHAN_READY);

	uint8_t pid[4] = { 0x00, 0x00, 0x01, 0x02 };
	wrk_send(f, WIRE_STARTED, pid, sizeof(pid));
	expect_ok(f, SUP_CHAN_RUNNING);
	assert_true(f->ch.have_started);
	assert_int_equal(f->ch.command_pid, 0x102);

	wrk_send_valid(f, WIRE_EXITED);
	expect_ok(f, SUP_CHAN_DONE);
	assert_true(f->ch.have_exited);
	assert_int_equal(f->ch.exited.how, WIRE_EXIT_CODE);
	assert_int_equal(f->ch.exited.code, 7);
	assert_true(f->ch.exited.utime_usec == 1500);
	assert_true(f->ch.exited.stime_usec == 250);
	assert_true(f->ch.exited.maxrss_kib == 4096);
	assert_true(f->ch.recv_seq == 4);
	assert_true(f->ch.send_seq == 2);

	/* The worker exits: the channel reports the close, and it is no violation. */
	wrk_close_expect_reset(f);
	assert_int_equal(f->ch.state, SUP_CHAN_DONE);
}

/* exec fails: READY then EXITED(NOT_FOUND) without STARTED is a complete session. */
static void test_exec_failure_path(void **state)
{
	struct fixture *f = *state;
	drive_to(f, SUP_CHAN_READY);
	wrk_send_valid(f, WIRE_EXITED);
	expect_ok(f, SUP_CHAN_DONE);
	assert_false(f->ch.have_started);
	assert_int_equal(f->ch.exited.how, WIRE_EXIT_NOT_FOUND);
	assert_int_equal(f->ch.exited.code, ENOENT);
}

static void test_nothing_queued(void **state)
{
	struct fixture *f = *state;
	assert_int_equal(sup_channel_recv(&f->ch), -EAGAIN);
	assert_false(f->ch.violated);
}

static void test_send_go_before_hello(void **state)
{
	struct fixture *f = *state;
	assert_int_equal(sup_channel_send_go(&f->ch), -EPROTO);
	assert_int_equal(f->ch.state, SUP_CHAN_HANDSHAKE);
	uint8_t b;
	assert_int_equal(recv(f->wrk_fd, &b, 1, MSG_DONTWAIT), -1);
	assert_int_equal(errno, EAGAIN);
}

/* ---- authentication and sequence ----------------------------------------------------------- */

static void test_forged_mac(void **state)
{
	struct fixture *f = *state;
	uint8_t key[WIRE_KEY_LEN];
	memset(key, 0x42, sizeof(key));
	struct wire_mac *forger = wire_mac_new(key);
	assert_non_null(forger);
	uint8_t payload[HELLO_LEN];
	int n = wire_seal(forger, WIRE_DIR_TO_SUPERVISOR, WIRE_HELLO, 0, payload,
			  hello_payload(f, payload), frame_buf, sizeof(frame_buf));
	wire_mac_free(forger);
	assert_true(n > 0);
	wrk_send_raw(f, frame_buf, (size_t)n);
	assert_violation(f, sup_channel_recv(&f->ch), -EBADMSG, -1, REASON_MAC);
	assert_false(f->ch.have_identity);
	assert_int_equal(f->ch.state, SUP_CHAN_HANDSHAKE);
}

/* A valid frame with one bit of its MAC flipped. */
static void test_corrupted_mac(void **state)
{
	struct fixture *f = *state;
	uint8_t payload[HELLO_LEN];
	size_t n = wrk_seal(f, WIRE_DIR_TO_SUPERVISOR, WIRE_HELLO, 0, payload,
			    hello_payload(f, payload));
	frame_buf[n - 1] ^= 0x01;
	wrk_send_raw(f, frame_buf, n);
	assert_violation(f, sup_channel_recv(&f->ch), -EBADMSG, -1, REASON_MAC);
}

/* A frame MACed for the other direction (a reflected supervisor frame). */
static void test_reflected_frame(void **state)
{
	struct fixture *f = *state;
	uint8_t payload[HELLO_LEN];
	size_t n = wrk_seal(f, WIRE_DIR_TO_WORKER, WIRE_HELLO, 0, payload,
			    hello_payload(f, payload));
	wrk_send_raw(f, frame_buf, n);
	assert_violation(f, sup_channel_recv(&f->ch), -EBADMSG, -1, REASON_MAC);
}

static void test_replayed_frame(void **state)
{
	struct fixture *f = *state;
	drive_to(f, SUP_CHAN_GO_SENT);
	size_t n = wrk_seal(f, WIRE_DIR_TO_SUPERVISOR, WIRE_READY, f->send_seq, NULL, 0);
	wrk_send_raw(f, frame_buf, n);
	f->send_seq++;
	expect_ok(f, SUP_CHAN_READY);
	wrk_send_raw(f, frame_buf, n); /* the same bytes again */
	assert_violation(f, sup_channel_recv(&f->ch), -EPROTO, -1, REASON_SEQ);
	assert_true(f->ch.violation_frame == 3);
	assert_int_equal(f->ch.state, SUP_CHAN_READY);
}

static void test_replayed_hello(void **state)
{
	struct fixture *f = *state;
	uint8_t payload[HELLO_LEN];
	size_t n = wrk_seal(f, WIRE_DIR_TO_SUPERVISOR, WIRE_HELLO, 0, payload,
			    hello_payload(f, payload));
	wrk_send_raw(f, frame_buf, n);
	f->send_seq++;
	expect_ok(f, SUP_CHAN_ATTESTED);
	wrk_send_raw(f, frame_buf, n);
	assert_violation(f, sup_channel_recv(&f->ch), -EPROTO, -1, REASON_SEQ);
}

/* A frame that skips a sequence number (reordered or dropped). */
static void test_reordered_frame(void **state)
{
	struct fixture *f = *state;
	drive_to(f, SUP_CHAN_READY);
	uint8_t pid[4] = { 0, 0, 0, 2 };
	size_t n = wrk_seal(f, WIRE_DIR_TO_SUPERVISOR, WIRE_STARTED, f->send_seq + 1, pid,
			    sizeof(pid));
	wrk_send_raw(f, frame_buf, n);
	assert_violation(f, sup_channel_recv(&f->ch), -EPROTO, -1, REASON_SEQ);
	assert_false(f->ch.have_started);
}

/* ---- types and states ----------------------------------------------------------------------- */

/* Every type the supervisor does not accept from a worker, sent authentic at seq 0. */
static void test_unknown_type(void **state)
{
	static const uint8_t types[] = { 0, 1, WIRE_CHALLENGE, WIRE_GO, WIRE_AUDIT, 8, 19, 0x83,
					 0xff };
	for (size_t i = 0; i < sizeof(types); i++) {
		struct fixture *f = *state;
		wrk_send(f, types[i], NULL, 0);
		assert_violation(f, sup_channel_recv(&f->ch), -EPROTO, types[i], REASON_TYPE);
		assert_int_equal(teardown(state), 0);
		*state = NULL;
		assert_int_equal(setup(state), 0);
	}
}

/* EVENT, ERROR and RESULT are known types: before GO they are out of state. */
static void test_reports_before_go(void **state)
{
	static const uint8_t types[] = { WIRE_EVENT, WIRE_ERROR, WIRE_RESULT };
	static const uint8_t payloads[][12] = {
		{ 1, 0, 0, 0, 0 },
		{ 0, 0, 0, 5, 0, 0, 0, 0 },
		{ 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0 },
	};
	static const size_t lens[] = { 5, 8, 12 };
	for (size_t i = 0; i < sizeof(types); i++) {
		struct fixture *f = *state;
		wrk_send(f, types[i], payloads[i], lens[i]);
		assert_violation(f, sup_channel_recv(&f->ch), -EPROTO, types[i], REASON_STATE);
		assert_int_equal(teardown(state), 0);
		*state = NULL;
		assert_int_equal(setup(state), 0);
	}
}

/* EVENT after GO is accepted and keeps the state; the text may be anything but NUL. */
static void test_event_after_go(void **state)
{
	struct fixture *f = *state;
	drive_to(f, SUP_CHAN_GO_SENT);
	uint8_t event[] = { 1, 0, 0, 0, 4, 'h', '\n', 0x1b, 'i' };
	wrk_send(f, WIRE_EVENT, event, sizeof(event));
	assert_int_equal(sup_channel_recv(&f->ch), 0);
	assert_int_equal(f->ch.state, SUP_CHAN_GO_SENT);
	assert_int_equal(f->ch.n_events, 1);
}

/* EVENT level over 3, a NUL in the text, or trailing bytes: malformed. */
static void test_event_malformed(void **state)
{
	static const uint8_t bad[][8] = {
		{ 4, 0, 0, 0, 1, 'x' },
		{ 1, 0, 0, 0, 2, 'x', 0 },
		{ 1, 0, 0, 0, 1, 'x', 'y' },
	};
	static const size_t lens[] = { 6, 7, 7 };
	for (size_t i = 0; i < 3; i++) {
		struct fixture *f = *state;
		drive_to(f, SUP_CHAN_GO_SENT);
		wrk_send(f, WIRE_EVENT, bad[i], lens[i]);
		assert_violation(f, sup_channel_recv(&f->ch), -EBADMSG, WIRE_EVENT, REASON_PAYLOAD);
		assert_int_equal(teardown(state), 0);
		*state = NULL;
		assert_int_equal(setup(state), 0);
	}
}

/* More than WIRE_MAX_EVENTS EVENT frames: a flood, a violation. */
static void test_event_flood(void **state)
{
	struct fixture *f = *state;
	drive_to(f, SUP_CHAN_READY);
	uint8_t event[] = { 0, 0, 0, 0, 1, 'x' };
	for (unsigned i = 0; i < WIRE_MAX_EVENTS; i++) {
		wrk_send(f, WIRE_EVENT, event, sizeof(event));
		assert_int_equal(sup_channel_recv(&f->ch), 0);
	}
	wrk_send(f, WIRE_EVENT, event, sizeof(event));
	assert_violation(f, sup_channel_recv(&f->ch), -EPROTO, WIRE_EVENT, "too many EVENT frames");
}

/* ERROR after GO: the session ends in FAILED, with the code and the text escaped. */
static void test_error_after_go(void **state)
{
	struct fixture *f = *state;
	drive_to(f, SUP_CHAN_GO_SENT);
	uint8_t err[] = { 0, 0, 0, 11, 0, 0, 0, 3, 'a', '\'', 'b' };
	wrk_send(f, WIRE_ERROR, err, sizeof(err));
	assert_int_equal(sup_channel_recv(&f->ch), 0);
	assert_int_equal(f->ch.state, SUP_CHAN_FAILED);
	assert_true(f->ch.have_error);
	assert_int_equal(f->ch.error_code, 11);
	assert_string_equal(f->ch.error_what, "a\\x27b");
	/* nothing is permitted after it */
	wrk_send(f, WIRE_EVENT, (const uint8_t[]){ 0, 0, 0, 0, 0 }, 5);
	assert_violation(f, sup_channel_recv(&f->ch), -EPROTO, WIRE_EVENT, REASON_STATE);
}

/* ERROR with code 0 or over 4095: malformed. */
static void test_error_bad_code(void **state)
{
	struct fixture *f = *state;
	drive_to(f, SUP_CHAN_READY);
	uint8_t err[] = { 0, 0, 0x10, 0, 0, 0, 0, 0 };
	wrk_send(f, WIRE_ERROR, err, sizeof(err));
	assert_violation(f, sup_channel_recv(&f->ch), -EBADMSG, WIRE_ERROR, REASON_PAYLOAD);
}

/* Audit: PROBE frames are collected (escaped), then EXITED(code 0) ends the session. */
static void test_audit_session(void **state)
{
	struct fixture *f = *state;
	drive_to(f, SUP_CHAN_ATTESTED);
	assert_int_equal(sup_channel_send_audit(&f->ch, 4242), 0);
	assert_int_equal(f->ch.state, SUP_CHAN_AUDITING);
	assert_int_equal(sup_channel_send_go(&f->ch), -EPROTO);
	/* the worker side reads AUDIT and its port */
	uint8_t buf[WIRE_MAX_FRAME];
	ssize_t n = recv(f->wrk_fd, buf, sizeof(buf), 0);
	assert_true(n > 0);
	struct wire_hdr h;
	struct wire_rd p;
	assert_int_equal(wire_open(f->mac, WIRE_DIR_TO_WORKER, f->recv_seq, buf, (size_t)n, &h, &p), 0);
	uint16_t port = 0;
	assert_int_equal(h.type, WIRE_AUDIT);
	assert_true(wire_get_u16(&p, &port) && wire_done(&p));
	assert_int_equal(port, 4242);

	uint8_t pl[64];
	struct wire_wr w;
	wire_wr_init(&w, pl, sizeof(pl));
	assert_true(wire_put_probe(&w, "ptrace", EPERM, "x\ty", 3));
	wrk_send(f, WIRE_PROBE, pl, w.len);
	assert_int_equal(sup_channel_recv(&f->ch), 0);
	assert_int_equal(f->ch.n_probes, 1);
	assert_string_equal(f->ch.probes[0].id, "ptrace");
	assert_int_equal(f->ch.probes[0].err, EPERM);
	assert_string_equal(f->ch.probes[0].detail, "x\\x09y");

	struct wire_exited e = { .how = WIRE_EXIT_CODE, .code = 0 };
	wire_wr_init(&w, pl, sizeof(pl));
	assert_true(wire_put_exited(&w, &e));
	wrk_send(f, WIRE_EXITED, pl, w.len);
	assert_int_equal(sup_channel_recv(&f->ch), 0);
	assert_int_equal(f->ch.state, SUP_CHAN_DONE);
}

/* An audit that ends with anything but EXITED(code 0), or too many PROBEs: violations. */
static void test_audit_violations(void **state)
{
	struct fixture *f = *state;
	drive_to(f, SUP_CHAN_ATTESTED);
	assert_int_equal(sup_channel_send_audit(&f->ch, 1), 0);
	uint8_t pl[64];
	struct wire_wr w;
	wire_wr_init(&w, pl, sizeof(pl));
	assert_true(wire_put_probe(&w, "p", 0, "", 0));
	for (unsigned i = 0; i < WIRE_MAX_PROBES; i++) {
		wrk_send(f, WIRE_PROBE, pl, w.len);
		assert_int_equal(sup_channel_recv(&f->ch), 0);
	}
	wrk_send(f, WIRE_PROBE, pl, w.len);
	assert_violation(f, sup_channel_recv(&f->ch), -EPROTO, WIRE_PROBE, "too many PROBE frames");
}

static void test_audit_exit_code(void **state)
{
	struct fixture *f = *state;
	drive_to(f, SUP_CHAN_ATTESTED);
	assert_int_equal(sup_channel_send_audit(&f->ch, 1), 0);
	struct wire_exited e = { .how = WIRE_EXIT_CODE, .code = 3 };
	uint8_t pl[64];
	struct wire_wr w;
	wire_wr_init(&w, pl, sizeof(pl));
	assert_true(wire_put_exited(&w, &e));
	wrk_send(f, WIRE_EXITED, pl, w.len);
	assert_violation(f, sup_channel_recv(&f->ch), -EPROTO, WIRE_EXITED, REASON_CONTENT);
}

/* PROBE outside an audit: not permitted. */
static void test_probe_in_run(void **state)
{
	struct fixture *f = *state;
	drive_to(f, SUP_CHAN_RUNNING);
	uint8_t pl[64];
	struct wire_wr w;
	wire_wr_init(&w, pl, sizeof(pl));
	assert_true(wire_put_probe(&w, "p", 0, "", 0));
	wrk_send(f, WIRE_PROBE, pl, w.len);
	assert_violation(f, sup_channel_recv(&f->ch), -EPROTO, WIRE_PROBE, REASON_STATE);
}

/* RESULT is never permitted during a run, even well-formed. */
static void test_result_in_run(void **state)
{
	struct fixture *f = *state;
	drive_to(f, SUP_CHAN_RUNNING);
	uint8_t res[] = { 0, 0, 0, 1, 'c', 0, 0, 3, 0xe8, 0, 0, 0, 0 };
	wrk_send(f, WIRE_RESULT, res, sizeof(res));
	assert_violation(f, sup_channel_recv(&f->ch), -EPROTO, WIRE_RESULT, REASON_STATE);
}

struct state_case {
	enum sup_chan_state at;
	uint8_t type;
};

static struct state_case ready_before_go = { SUP_CHAN_ATTESTED, WIRE_READY };
static struct state_case ready_before_hello = { SUP_CHAN_HANDSHAKE, WIRE_READY };
static struct state_case hello_twice = { SUP_CHAN_ATTESTED, WIRE_HELLO };
static struct state_case hello_after_go = { SUP_CHAN_GO_SENT, WIRE_HELLO };
static struct state_case started_before_hello = { SUP_CHAN_HANDSHAKE, WIRE_STARTED };
static struct state_case started_before_ready = { SUP_CHAN_GO_SENT, WIRE_STARTED };
static struct state_case exited_before_go = { SUP_CHAN_ATTESTED, WIRE_EXITED };
static struct state_case exited_before_ready = { SUP_CHAN_GO_SENT, WIRE_EXITED };
static struct state_case ready_twice = { SUP_CHAN_READY, WIRE_READY };
static struct state_case started_twice = { SUP_CHAN_RUNNING, WIRE_STARTED };
static struct state_case exited_twice = { SUP_CHAN_DONE, WIRE_EXITED };
static struct state_case ready_after_done = { SUP_CHAN_DONE, WIRE_READY };
/* ERROR says the command could not start: once STARTED said it did, it is a violation. */
static struct state_case error_after_started = { SUP_CHAN_RUNNING, WIRE_ERROR };
static struct state_case error_after_done = { SUP_CHAN_DONE, WIRE_ERROR };
static struct state_case event_after_done = { SUP_CHAN_DONE, WIRE_EVENT };

/* An authentic, well-formed frame at the right seq, in a state that does not permit it. */
static void test_not_permitted_in_state(void **state)
{
	struct fixture *f = *state;
	const struct state_case *c = f->param;
	drive_to(f, c->at);
	wrk_send_valid(f, c->type);
	assert_violation(f, sup_channel_recv(&f->ch), -EPROTO, c->type, REASON_STATE);
	assert_int_equal(f->ch.state, c->at);
}

static void test_wrong_nonce(void **state)
{
	struct fixture *f = *state;
	uint8_t payload[HELLO_LEN];
	size_t n = hello_payload(f, payload);
	payload[WIRE_NONCE_LEN - 1] ^= 0x01;
	wrk_send(f, WIRE_HELLO, payload, n);
	assert_violation(f, sup_channel_recv(&f->ch), -EPROTO, WIRE_HELLO, REASON_CONTENT);
	assert_false(f->ch.have_identity);
	assert_int_equal(f->ch.state, SUP_CHAN_HANDSHAKE);
}

static void test_hello_bad_identity(void **state)
{
	struct fixture *f = *state;
	uint8_t payload[HELLO_LEN];
	size_t n = hello_payload(f, payload);
	payload[HELLO_LEN - 6] = 2; /* NoNewPrivs */
	wrk_send(f, WIRE_HELLO, payload, n);
	assert_violation(f, sup_channel_recv(&f->ch), -EBADMSG, WIRE_HELLO, REASON_PAYLOAD);
	assert_false(f->ch.have_identity);
}

static void test_started_pid_below_2(void **state)
{
	struct fixture *f = *state;
	drive_to(f, SUP_CHAN_READY);
	uint8_t pid[4] = { 0, 0, 0, 1 };
	wrk_send(f, WIRE_STARTED, pid, sizeof(pid));
	assert_violation(f, sup_channel_recv(&f->ch), -EBADMSG, WIRE_STARTED, REASON_PAYLOAD);
	assert_false(f->ch.have_started);
}

static void test_exited_unknown_how(void **state)
{
	struct fixture *f = *state;
	drive_to(f, SUP_CHAN_RUNNING);
	uint8_t payload[EXITED_LEN];
	exited_payload(&exit_code_7, payload);
	payload[0] = 5;
	wrk_send(f, WIRE_EXITED, payload, sizeof(payload));
	assert_violation(f, sup_channel_recv(&f->ch), -EBADMSG, WIRE_EXITED, REASON_PAYLOAD);
	assert_false(f->ch.have_exited);
}

static void test_exited_not_found_after_started(void **state)
{
	struct fixture *f = *state;
	drive_to(f, SUP_CHAN_RUNNING);
	uint8_t payload[EXITED_LEN];
	wrk_send(f, WIRE_EXITED, payload, exited_payload(&exit_not_found, payload));
	assert_violation(f, sup_channel_recv(&f->ch), -EPROTO, WIRE_EXITED, REASON_CONTENT);
	assert_false(f->ch.have_exited);
	assert_int_equal(f->ch.state, SUP_CHAN_RUNNING);
}

static void test_exited_code_without_started(void **state)
{
	struct fixture *f = *state;
	drive_to(f, SUP_CHAN_READY);
	uint8_t payload[EXITED_LEN];
	wrk_send(f, WIRE_EXITED, payload, exited_payload(&exit_code_7, payload));
	assert_violation(f, sup_channel_recv(&f->ch), -EPROTO, WIRE_EXITED, REASON_CONTENT);
	assert_false(f->ch.have_exited);
}

/* ---- lengths -------------------------------------------------------------------------------- */

struct length_case {
	enum sup_chan_state at;
	uint8_t type;
	int delta; /* bytes added to (or, negative, cut from) a valid payload */
};

static struct length_case hello_truncated = { SUP_CHAN_HANDSHAKE, WIRE_HELLO, -1 };
static struct length_case hello_nonce_only = { SUP_CHAN_HANDSHAKE, WIRE_HELLO, -82 };
static struct length_case hello_empty = { SUP_CHAN_HANDSHAKE, WIRE_HELLO, -HELLO_LEN };
static struct length_case hello_trailing = { SUP_CHAN_HANDSHAKE, WIRE_HELLO, 1 };
static struct length_case ready_trailing = { SUP_CHAN_GO_SENT, WIRE_READY, 1 };
static struct length_case started_truncated = { SUP_CHAN_READY, WIRE_STARTED, -1 };
static struct length_case started_trailing = { SUP_CHAN_READY, WIRE_STARTED, 1 };
static struct length_case exited_truncated = { SUP_CHAN_RUNNING, WIRE_EXITED, -1 };
static struct length_case exited_trailing = { SUP_CHAN_RUNNING, WIRE_EXITED, 1 };

static void test_payload_length(void **state)
{
	struct fixture *f = *state;
	const struct length_case *c = f->param;
	drive_to(f, c->at);
	uint8_t payload[HELLO_LEN + 1];
	memset(payload, 0, sizeof(payload));
	size_t n = valid_payload(f, c->type, payload);
	wrk_send(f, c->type, payload, (size_t)((ptrdiff_t)n + c->delta));
	assert_violation(f, sup_channel_recv(&f->ch), -EBADMSG, c->type, REASON_LENGTH);
	assert_int_equal(f->ch.state, c->at);
}

/* Over WIRE_MAX_FRAME + 1 bytes the kernel truncates the datagram: MSG_TRUNC. */
static void test_oversize_datagram(void **state)
{
	struct fixture *f = *state;
	memset(frame_buf, 0, sizeof(frame_buf));
	wrk_send_raw(f, frame_buf, WIRE_MAX_FRAME + 2);
	assert_violation(f, sup_channel_recv(&f->ch), -EBADMSG, -1, REASON_OVERSIZE);
}

/* Exactly one byte over WIRE_MAX_FRAME fits the buffer; wire_open rejects it. */
static void test_datagram_one_over_max(void **state)
{
	struct fixture *f = *state;
	memset(frame_buf, 0, sizeof(frame_buf));
	wrk_send_raw(f, frame_buf, WIRE_MAX_FRAME + 1);
	assert_violation(f, sup_channel_recv(&f->ch), -EBADMSG, -1, REASON_MAC);
}

static void test_runt_datagram(void **state)
{
	struct fixture *f = *state;
	wrk_send_raw(f, "W", 1);
	assert_violation(f, sup_channel_recv(&f->ch), -EBADMSG, -1, REASON_MAC);
}

/* ---- ancillary data ------------------------------------------------------------------------- */

/*
 * The channel refuses descriptors at the socket (SO_PASSRIGHTS off): the sender gets EPERM,
 * nothing reaches the supervisor, and nothing is a violation. Skipped on a kernel without the
 * option (before Linux 6.16), where the tests below cover what happens instead.
 */
static void test_scm_rights_refused(void **state)
{
	struct fixture *f = *state;
	int v = 1;
	socklen_t vlen = sizeof(v);
	if (getsockopt(f->sup_fd, SOL_SOCKET, SO_PASSRIGHTS, &v, &vlen) < 0) {
		assert_int_equal(errno, ENOPROTOOPT);
		skip();
	}
	assert_int_equal(v, 0);
	unsigned before = count_open_fds();
	uint8_t payload[HELLO_LEN];
	size_t n = wrk_seal(f, WIRE_DIR_TO_SUPERVISOR, WIRE_HELLO, 0, payload,
			    hello_payload(f, payload));
	assert_int_equal(wrk_sendmsg_fds(f, n, NULL, 1), -EPERM);
	assert_int_equal(wrk_sendmsg_fds(f, n, NULL, SUP_CHAN_MAX_FDS), -EPERM);
	assert_int_equal(wrk_sendmsg_fds(f, 0, NULL, 1), -EPERM);
	assert_int_equal(sup_channel_recv(&f->ch), -EAGAIN);
	assert_false(f->ch.violated);
	assert_int_equal(count_open_fds(), before);
	/* The same frame without the descriptor is fine. */
	wrk_send_raw(f, frame_buf, n);
	f->send_seq++;
	expect_ok(f, SUP_CHAN_ATTESTED);
}

/* sup_channel_refuse_fds on a socket that is not AF_UNIX fails, and says why. */
static void test_refuse_fds_not_unix(void **state)
{
	(void)state;
	int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	assert_true(fd >= 0);
	int r = sup_channel_refuse_fds(fd);
	assert_true(r < 0);
	assert_int_equal(close(fd), 0);
}

/*
 * Where descriptors do arrive: a valid HELLO carrying one is a violation, and the descriptor
 * stays open, parked, until sup_channel_release_fds closes it.
 */
static void test_scm_rights_parked(void **state)
{
	struct fixture *f = *state;
	accept_fds(f);
	unsigned before = count_open_fds();
	uint8_t payload[HELLO_LEN];
	size_t n = wrk_seal(f, WIRE_DIR_TO_SUPERVISOR, WIRE_HELLO, 0, payload,
			    hello_payload(f, payload));
	wrk_send_with_fds(f, n, 1);
	assert_int_equal(count_open_fds(), before); /* in flight, not in our table */
	assert_violation(f, sup_channel_recv(&f->ch), -EBADMSG, -1, REASON_ANCILLARY);
	assert_int_equal(f->ch.n_parked, 1);
	assert_int_equal(count_open_fds(), before + 1);
	assert_false(f->ch.have_identity);
	sup_channel_release_fds(&f->ch);
	assert_int_equal(f->ch.n_parked, 0);
	assert_int_equal(count_open_fds(), before);
}

/*
 * The most descriptors the kernel attaches to one message: every one of them arrives (none is
 * dropped, so closed, by the kernel for want of control buffer: MSG_CTRUNC), parked.
 */
static void test_scm_rights_max(void **state)
{
	struct fixture *f = *state;
	drive_to(f, SUP_CHAN_GO_SENT);
	accept_fds(f);
	unsigned before = count_open_fds();
	size_t n = wrk_seal(f, WIRE_DIR_TO_SUPERVISOR, WIRE_READY, f->send_seq, NULL, 0);
	wrk_send_with_fds(f, n, SUP_CHAN_MAX_FDS);
	assert_violation(f, sup_channel_recv(&f->ch), -EBADMSG, -1, REASON_ANCILLARY);
	assert_int_equal(f->ch.n_parked, SUP_CHAN_MAX_FDS);
	assert_int_equal(count_open_fds(), before + SUP_CHAN_MAX_FDS);
	assert_int_equal(f->ch.state, SUP_CHAN_GO_SENT);
	sup_channel_done(&f->ch);
	assert_int_equal(count_open_fds(), before);
}

/*
 * A zero-length datagram carrying an fd: still ancillary data on a type that declares none, so
 * a violation, not a close; the fd is parked.
 */
static void test_scm_rights_empty_datagram(void **state)
{
	struct fixture *f = *state;
	accept_fds(f);
	unsigned before = count_open_fds();
	wrk_send_with_fds(f, 0, 1);
	int r = sup_channel_recv(&f->ch);
	assert_violation(f, r, -EBADMSG, -1, REASON_ANCILLARY);
	assert_int_equal(count_open_fds(), before + 1);
	sup_channel_release_fds(&f->ch);
	assert_int_equal(count_open_fds(), before);
}

/* What is still queued behind the violation is received and closed by the release too. */
static void test_release_drains_queue(void **state)
{
	struct fixture *f = *state;
	accept_fds(f);
	unsigned before = count_open_fds();
	wrk_send_with_fds(f, 0, 1);
	wrk_send_with_fds(f, 1, 5);
	wrk_send_raw(f, "x", 1);
	wrk_send_with_fds(f, 0, 2);
	/* (not assert_violation: it wants nothing queued behind the violation) */
	assert_int_equal(sup_channel_recv(&f->ch), -EBADMSG);
	assert_string_equal(f->ch.violation_reason, REASON_ANCILLARY);
	assert_int_equal(sup_channel_recv(&f->ch), -EPROTO); /* reads nothing more */
	assert_int_equal(count_open_fds(), before + 1);
	sup_channel_release_fds(&f->ch);
	assert_int_equal(count_open_fds(), before);
	uint8_t byte;
	assert_int_equal(recv(f->sup_fd, &byte, 1, MSG_DONTWAIT), -1);
	assert_int_equal(errno, EAGAIN);
}

/*
 * A TCP socket whose last close() would wait for its peer (a full send queue the peer never
 * reads, SO_LINGER on for as long as the kernel allows), sent as the sandbox's worker could:
 * the release closes it without waiting, even with the peer still open. A regression hangs
 * here until meson's timeout.
 */
static void test_release_lingering_socket(void **state)
{
	struct fixture *f = *state;
	accept_fds(f);
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t alen = sizeof(a);
	int l = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	assert_true(l >= 0);
	assert_int_equal(bind(l, (struct sockaddr *)&a, sizeof(a)), 0);
	assert_int_equal(listen(l, 1), 0);
	assert_int_equal(getsockname(l, (struct sockaddr *)&a, &alen), 0);
	int c = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	assert_true(c >= 0);
	assert_int_equal(connect(c, (struct sockaddr *)&a, sizeof(a)), 0);
	int peer = accept4(l, NULL, NULL, SOCK_CLOEXEC);
	assert_true(peer >= 0);
	static char junk[65536];
	while (send(c, junk, sizeof(junk), MSG_DONTWAIT | MSG_NOSIGNAL) > 0)
		;
	struct linger lg = { .l_onoff = 1, .l_linger = INT_MAX };
	assert_int_equal(setsockopt(c, SOL_SOCKET, SO_LINGER, &lg, sizeof(lg)), 0);

	unsigned before = count_open_fds();
	assert_int_equal(wrk_sendmsg_fds(f, 1, &c, 1), 1);
	assert_int_equal(close(c), 0); /* the parked copy is the last one now */
	assert_violation(f, sup_channel_recv(&f->ch), -EBADMSG, -1, REASON_ANCILLARY);
	assert_int_equal(f->ch.n_parked, 1);
	sup_channel_release_fds(&f->ch);
	assert_int_equal(count_open_fds(), before - 1);
	assert_int_equal(close(peer), 0);
	assert_int_equal(close(l), 0);
}

/* An empty datagram and the worker's close read the same; peer_closed tells them apart. */
static void test_empty_datagram_not_close(void **state)
{
	struct fixture *f = *state;
	drive_to(f, SUP_CHAN_DONE);
	wrk_send_raw(f, "", 0);
	assert_int_equal(sup_channel_recv(&f->ch), -ECONNRESET);
	assert_false(sup_channel_peer_closed(&f->ch));
	assert_int_equal(close(f->wrk_fd), 0);
	f->wrk_fd = -1;
	assert_true(sup_channel_peer_closed(&f->ch));
	assert_int_equal(sup_channel_recv(&f->ch), -ECONNRESET);
}

/* ---- closing -------------------------------------------------------------------------------- */

static void test_closed_channel(void **state)
{
	struct fixture *f = *state;
	wrk_close_expect_reset(f);
	assert_int_equal(sup_channel_recv(&f->ch), -ECONNRESET);
	assert_int_equal(f->ch.state, SUP_CHAN_HANDSHAKE);
}

static void test_closed_mid_session(void **state)
{
	struct fixture *f = *state;
	drive_to(f, SUP_CHAN_RUNNING);
	wrk_close_expect_reset(f);
	assert_int_equal(f->ch.state, SUP_CHAN_RUNNING);
}

/* An externally detected violation (e.g. a silent worker) also ends reading. */
static void test_external_violation(void **state)
{
	struct fixture *f = *state;
	drive_to(f, SUP_CHAN_ATTESTED);
	sup_channel_violation(&f->ch, -1, "worker silent past its deadline");
	sup_channel_violation(&f->ch, 5, "second one is ignored");
	assert_violation(f, -EPROTO, -EPROTO, -1, "worker silent past its deadline");
	assert_true(f->ch.violation_frame == 2);
}

static void test_frame_names(void **state)
{
	(void)state;
	assert_string_equal(sup_frame_name(WIRE_HELLO), "HELLO");
	assert_string_equal(sup_frame_name(WIRE_EXITED), "EXITED");
	assert_string_equal(sup_frame_name(WIRE_GO), "GO");
	assert_string_equal(sup_frame_name(-1), "unknown");
	assert_string_equal(sup_frame_name(0x83), "unknown");
}

/* ---- attestation: the kernel's status of the worker ---------------------------------------- */

#define JUDGE_HOST_ID 2000000123u

/*
 * A status file as the kernel prints it for a worker under the default policy, with nspid as
 * its NSpid values and groups (may be "") as its Groups. Caller frees.
 */
static char *worker_status(const char *nspid, const char *groups)
{
	static const char fmt[] =
		"Name:\twarden-worker\nUmask:\t0022\nState:\tS (sleeping)\nTgid:\t4242\n"
		"Ngid:\t0\nPid:\t4242\nPPid:\t4200\nTracerPid:\t0\n"
		"Uid:\t%1$u\t%1$u\t%1$u\t%1$u\nGid:\t%1$u\t%1$u\t%1$u\t%1$u\nFDSize:\t64\n"
		"Groups:\t%2$s\nNStgid:\t%3$s\nNSpid:\t%3$s\nNSpgid:\t%3$s\nNSsid:\t%3$s\n"
		"CapInh:\t0000000000000000\nCapPrm:\t0000000000000000\n"
		"CapEff:\t0000000000000000\nCapBnd:\t0000000000000000\n"
		"CapAmb:\t0000000000000000\nNoNewPrivs:\t1\nSeccomp:\t2\n"
		"Seccomp_filters:\t1\nCpus_allowed_list:\t0-3\n";
	char *text = NULL;
	assert_true(asprintf(&text, fmt, JUDGE_HOST_ID, groups, nspid) > 0);
	return text;
}

/* Judges text as the supervisor judges a worker of the default policy; returns the verdict. */
static int judge(const char *text, struct sup_identity *out)
{
	struct sup_expect want = { .init_userns = true, .host_uid = JUDGE_HOST_ID,
				   .host_gid = JUDGE_HOST_ID, .inside_uid = 1000,
				   .inside_gid = 1000 };
	uint64_t self[SUP_N_NS], worker[SUP_N_NS];
	for (int i = 0; i < SUP_N_NS; i++) {
		want.ns_new[i] = true;
		self[i] = 4026531835u + (uint64_t)i;
		worker[i] = 4026532000u + (uint64_t)i;
	}
	return sup_judge_identity(text, strlen(text), self, worker, &want, &worker_identity, out);
}

static void test_judge_worker(void **state)
{
	(void)state;
	_cleanup_free_ char *text = worker_status("4242\t1", "");
	struct sup_identity id;
	assert_int_equal(judge(text, &id), 0);
	assert_true(id.checked && id.held);
	assert_int_equal(id.nspid_depth, 2);
	assert_int_equal(id.kernel.pid, 1);
}

/* The worker must be pid 1 of its own pid namespace: the innermost NSpid value. */
static void test_judge_not_pid_1(void **state)
{
	(void)state;
	_cleanup_free_ char *text = worker_status("4242\t7", "");
	struct sup_identity id;
	assert_int_equal(judge(text, &id), -EPERM);
	assert_true(id.checked);
	assert_false(id.held);
	assert_string_equal(id.failure, "the worker is not pid 1 of its pid namespace");
	free(text);
	/* The innermost value is what counts, at any depth. */
	text = worker_status("4242\t1\t9", "");
	assert_int_equal(judge(text, &id), -EPERM);
	assert_string_equal(id.failure, "the worker is not pid 1 of its pid namespace");
}

/*
 * Lines the supervisor does not parse may be as long as the kernel makes them: a caller with
 * many supplementary groups (their ids are the host's in unprivileged mode), up to NGROUPS_MAX,
 * is no reason to refuse the worker.
 */
static void test_judge_long_groups(void **state)
{
	(void)state;
	static const unsigned counts[] = { 60, 1000, 65536 };
	for (size_t c = 0; c < sizeof(counts) / sizeof(counts[0]); c++) {
		size_t cap = (size_t)counts[c] * 11 + 1, len = 0;
		_cleanup_free_ char *groups = malloc(cap);
		assert_non_null(groups);
		for (unsigned i = 0; i < counts[c]; i++)
			len += (size_t)snprintf(groups + len, cap - len, "%u ", 1000000000u + i);
		_cleanup_free_ char *text = worker_status("4242\t1", groups);
		assert_true(strlen(text) <= WIRE_STATUS_MAX_BYTES);
		struct sup_identity id;
		assert_int_equal(judge(text, &id), 0);
		assert_true(id.held);
	}
}

/* ---- main ----------------------------------------------------------------------------------- */

#define CHAN_TEST(fn) cmocka_unit_test_setup_teardown(fn, setup, teardown)
#define CASE_TEST(name, fn, c) { name, fn, setup, teardown, &(c) }

int main(void)
{
	const struct CMUnitTest tests[] = {
		CHAN_TEST(test_happy_path),
		CHAN_TEST(test_exec_failure_path),
		CHAN_TEST(test_nothing_queued),
		CHAN_TEST(test_send_go_before_hello),
		CHAN_TEST(test_forged_mac),
		CHAN_TEST(test_corrupted_mac),
		CHAN_TEST(test_reflected_frame),
		CHAN_TEST(test_replayed_frame),
		CHAN_TEST(test_replayed_hello),
		CHAN_TEST(test_reordered_frame),
		CHAN_TEST(test_unknown_type),
		CHAN_TEST(test_reports_before_go),
		CHAN_TEST(test_event_after_go),
		CHAN_TEST(test_event_malformed),
		CHAN_TEST(test_event_flood),
		CHAN_TEST(test_error_after_go),
		CHAN_TEST(test_error_bad_code),
		CHAN_TEST(test_result_in_run),
		CHAN_TEST(test_audit_session),
		CHAN_TEST(test_audit_violations),
		CHAN_TEST(test_audit_exit_code),
		CHAN_TEST(test_probe_in_run),
		CASE_TEST("READY before GO", test_not_permitted_in_state, ready_before_go),
		CASE_TEST("READY before HELLO", test_not_permitted_in_state, ready_before_hello),
		CASE_TEST("HELLO twice", test_not_permitted_in_state, hello_twice),
		CASE_TEST("HELLO after GO", test_not_permitted_in_state, hello_after_go),
		CASE_TEST("STARTED before HELLO", test_not_permitted_in_state, started_before_hello),
		CASE_TEST("STARTED before READY", test_not_permitted_in_state, started_before_ready),
		CASE_TEST("EXITED before GO", test_not_permitted_in_state, exited_before_go),
		CASE_TEST("EXITED before READY", test_not_permitted_in_state, exited_before_ready),
		CASE_TEST("READY twice", test_not_permitted_in_state, ready_twice),
		CASE_TEST("STARTED twice", test_not_permitted_in_state, started_twice),
		CASE_TEST("EXITED twice", test_not_permitted_in_state, exited_twice),
		CASE_TEST("READY after DONE", test_not_permitted_in_state, ready_after_done),
		CASE_TEST("ERROR after STARTED", test_not_permitted_in_state, error_after_started),
		CASE_TEST("ERROR after DONE", test_not_permitted_in_state, error_after_done),
		CASE_TEST("EVENT after DONE", test_not_permitted_in_state, event_after_done),
		CHAN_TEST(test_wrong_nonce),
		CHAN_TEST(test_hello_bad_identity),
		CHAN_TEST(test_started_pid_below_2),
		CHAN_TEST(test_exited_unknown_how),
		CHAN_TEST(test_exited_not_found_after_started),
		CHAN_TEST(test_exited_code_without_started),
		CASE_TEST("HELLO truncated", test_payload_length, hello_truncated),
		CASE_TEST("HELLO nonce only", test_payload_length, hello_nonce_only),
		CASE_TEST("HELLO empty", test_payload_length, hello_empty),
		CASE_TEST("HELLO trailing byte", test_payload_length, hello_trailing),
		CASE_TEST("READY trailing byte", test_payload_length, ready_trailing),
		CASE_TEST("STARTED truncated", test_payload_length, started_truncated),
		CASE_TEST("STARTED trailing byte", test_payload_length, started_trailing),
		CASE_TEST("EXITED truncated", test_payload_length, exited_truncated),
		CASE_TEST("EXITED trailing byte", test_payload_length, exited_trailing),
		CHAN_TEST(test_oversize_datagram),
		CHAN_TEST(test_datagram_one_over_max),
		CHAN_TEST(test_runt_datagram),
		CHAN_TEST(test_scm_rights_refused),
		cmocka_unit_test(test_refuse_fds_not_unix),
		CHAN_TEST(test_scm_rights_parked),
		CHAN_TEST(test_scm_rights_max),
		CHAN_TEST(test_scm_rights_empty_datagram),
		CHAN_TEST(test_release_drains_queue),
		CHAN_TEST(test_release_lingering_socket),
		CHAN_TEST(test_empty_datagram_not_close),
		CHAN_TEST(test_closed_channel),
		CHAN_TEST(test_closed_mid_session),
		CHAN_TEST(test_external_violation),
		cmocka_unit_test(test_frame_names),
		cmocka_unit_test(test_judge_worker),
		cmocka_unit_test(test_judge_not_pid_1),
		cmocka_unit_test(test_judge_long_groups),
	};
	return cmocka_run_group_tests_name("channel", tests, NULL, NULL);
}
