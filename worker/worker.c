/* SPDX-License-Identifier: MIT */
/*
 * warden-worker: the supervisor's agent inside the sandbox, pid 1 of its pid namespace.
 *
 * It starts with every isolation step already applied (namespaces, filesystem, no
 * capabilities, no_new_privs, seccomp). It receives the session key on fd 3, proves that it
 * holds it, reports its identity, waits for GO, runs the command in a new session with only
 * fds 0-2, reaps every process reparented to it, and reports how the command ended. It links
 * wire/ only, never supervisor code.
 *
 * Usage (by the supervisor only): warden-worker CMD [ARGS...]
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/close_range.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "wire.h"
#include "worker-util.h"

#define CHANNEL_FD 3

struct session {
	struct wire_mac *mac;
	uint64_t send_seq;
	uint64_t recv_seq;
};

static int send_frame(struct session *s, uint8_t type, const void *payload, size_t len)
{
	static uint8_t frame[WIRE_MAX_FRAME];
	int n = wire_seal(s->mac, WIRE_DIR_TO_SUPERVISOR, type, s->send_seq, payload, len, frame,
			  sizeof(frame));
	if (n < 0)
		return n;
	ssize_t sent;
	do
		sent = send(CHANNEL_FD, frame, (size_t)n, MSG_NOSIGNAL);
	while (sent < 0 && errno == EINTR);
	if (sent < 0)
		return -errno;
	if (sent != n)
		return -EIO;
	s->send_seq++;
	return 0;
}

/*
 * Receives one authenticated frame of the expected type (or of want_alt when it is not 0);
 * anything else is fatal. *out_type (when not NULL) receives the type.
 */
static int recv_frame2(struct session *s, uint8_t want_type, uint8_t want_alt, uint8_t *buf,
		       size_t cap, struct wire_rd *out_payload, uint8_t *out_type)
{
	ssize_t n;
	do
		n = recv(CHANNEL_FD, buf, cap, MSG_TRUNC);
	while (n < 0 && errno == EINTR);
	if (n < 0)
		return -errno;
	if (n == 0)
		return -ECONNRESET;
	if ((size_t)n > cap)
		return -EBADMSG;
	struct wire_hdr h;
	int r = wire_open(s->mac, WIRE_DIR_TO_WORKER, s->recv_seq, buf, (size_t)n, &h, out_payload);
	if (r < 0)
		return r;
	if (h.type != want_type && (!want_alt || h.type != want_alt))
		return -EPROTO;
	s->recv_seq++;
	if (out_type)
		*out_type = h.type;
	return 0;
}

static int recv_frame(struct session *s, uint8_t want_type, uint8_t *buf, size_t cap,
		      struct wire_rd *out_payload)
{
	return recv_frame2(s, want_type, 0, buf, cap, out_payload, NULL);
}

static int receive_key(struct session *s)
{
	uint8_t pkt[WIRE_KEY_PACKET_LEN + 1];
	ssize_t n;
	do
		n = recv(CHANNEL_FD, pkt, sizeof(pkt), MSG_TRUNC);
	while (n < 0 && errno == EINTR);
	if (n < 0)
		return -errno;
	/* The magic is public; the constant-time compare is only for uniformity. */
	if (n != WIRE_KEY_PACKET_LEN || !wire_equal_ct(pkt, WIRE_KEY_MAGIC, 4))
		return -EBADMSG;
	s->mac = wire_mac_new(pkt + 4);
	explicit_bzero(pkt, sizeof(pkt));
	return s->mac ? 0 : -ENOMEM;
}

static int handshake(struct session *s)
{
	uint8_t buf[WIRE_HEADER_LEN + WIRE_NONCE_LEN + WIRE_MAC_LEN];
	struct wire_rd payload;
	int r = recv_frame(s, WIRE_CHALLENGE, buf, sizeof(buf), &payload);
	if (r < 0)
		return r;
	uint8_t nonce[WIRE_NONCE_LEN];
	if (!wire_get_bytes(&payload, nonce, sizeof(nonce)) || !wire_done(&payload))
		return -EBADMSG;

	struct wire_identity id;
	r = wrk_read_identity("/proc/self/status", &id);
	if (r < 0)
		return r;
	uint8_t out[256];
	struct wire_wr w;
	wire_wr_init(&w, out, sizeof(out));
	if (!wire_put_bytes(&w, nonce, sizeof(nonce)) || !wire_put_identity(&w, &id))
		return -EMSGSIZE;
	return send_frame(s, WIRE_HELLO, out, w.len);
}

/* GO (empty) runs the command; AUDIT (u16 port) runs the probes. Returns 0 or 1 (audit). */
static int wait_go(struct session *s, uint16_t *out_port)
{
	uint8_t buf[WIRE_HEADER_LEN + 2 + WIRE_MAC_LEN];
	struct wire_rd payload;
	uint8_t type = 0;
	int r = recv_frame2(s, WIRE_GO, WIRE_AUDIT, buf, sizeof(buf), &payload, &type);
	if (r < 0)
		return r;
	if (type == WIRE_AUDIT) {
		if (!wire_get_u16(&payload, out_port) || !wire_done(&payload))
			return -EBADMSG;
		return 1;
	}
	return wire_done(&payload) ? 0 : -EBADMSG;
}

static int send_probe(void *ctx, const uint8_t *payload, size_t len)
{
	return send_frame(ctx, WIRE_PROBE, payload, len);
}

_Noreturn static void exec_command(char **argv, int report_fd)
{
	/* A new session: no controlling terminal, so TIOCSTI has nothing to inject into. */
	if (setsid() < 0)
		goto fail;
	sigset_t none;
	sigemptyset(&none);
	if (sigprocmask(SIG_SETMASK, &none, NULL) < 0)
		goto fail;
	/* Only 0, 1 and 2 reach the command; the report pipe is close-on-exec. */
	if (syscall(SYS_close_range, 3, ~0U, CLOSE_RANGE_CLOEXEC) < 0)
		goto fail;
	execvp(argv[0], argv);
fail:;
	int err = errno;
	(void)!write(report_fd, &err, sizeof(err));
	_exit(127);
}

static int send_exited(struct session *s, const struct wire_exited *e)
{
	uint8_t out[64];
	struct wire_wr w;
	wire_wr_init(&w, out, sizeof(out));
	if (!wire_put_exited(&w, e))
		return -EMSGSIZE;
	return send_frame(s, WIRE_EXITED, out, w.len);
}

static uint64_t tv_usec(const struct timeval *tv)
{
	return (uint64_t)tv->tv_sec * 1000000u + (uint64_t)tv->tv_usec;
}

/* Starts the command; returns its pid, or -errno; *out_exec_err is set when exec failed. */
static pid_t start_command(char **argv, int *out_exec_err)
{
	int p[2];
	if (pipe2(p, O_CLOEXEC) < 0)
		return -errno;
	pid_t pid = fork();
	if (pid < 0) {
		int r = -errno;
		(void)close(p[0]);
		(void)close(p[1]);
		return r;
	}
	if (pid == 0) {
		(void)close(p[0]);
		exec_command(argv, p[1]);
	}
	(void)close(p[1]);
	int err = 0;
	ssize_t n;
	do
		n = read(p[0], &err, sizeof(err));
	while (n < 0 && errno == EINTR);
	(void)close(p[0]);
	*out_exec_err = n == (ssize_t)sizeof(err) ? (err > 0 ? err : EIO) : 0;
	return pid;
}

/* Reaps until the command exits; returns how it ended. Other children are reaped silently. */
static int supervise(pid_t cmd, int sigfd, struct wire_exited *out)
{
	for (;;) {
		struct pollfd pfd[2] = {
			{ .fd = sigfd, .events = POLLIN },
			{ .fd = CHANNEL_FD, .events = POLLIN },
		};
		int n = poll(pfd, 2, -1);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		if (pfd[1].revents & (POLLHUP | POLLERR | POLLIN))
			return -ECONNRESET; /* the supervisor left or spoke out of turn */
		if (pfd[0].revents & POLLIN) {
			struct signalfd_siginfo si;
			(void)!read(sigfd, &si, sizeof(si));
		}
		for (;;) {
			int status;
			struct rusage ru;
			pid_t pid = wait4(-1, &status, WNOHANG, &ru);
			if (pid <= 0)
				break;
			if (pid != cmd)
				continue;
			memset(out, 0, sizeof(*out));
			if (WIFSIGNALED(status)) {
				out->how = WIRE_EXIT_SIGNAL;
				out->code = WTERMSIG(status);
			} else {
				out->how = WIRE_EXIT_CODE;
				out->code = WEXITSTATUS(status);
			}
			out->utime_usec = tv_usec(&ru.ru_utime);
			out->stime_usec = tv_usec(&ru.ru_stime);
			out->maxrss_kib = (uint64_t)ru.ru_maxrss;
			return 0;
		}
	}
}

int main(int argc, char **argv)
{
	struct session s = { 0 };
	int r;

	/* Nothing in the sandbox may read our memory or our fds through /proc or ptrace. */
	if (prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) < 0)
		return 125;
	if (argc < 2)
		return 125;

	/*
	 * SIGCHLD must not be ignored, whatever we inherited: the kernel would reap the command
	 * unseen and send no signal to wake us, and the command would inherit it too.
	 */
	struct sigaction dfl = { .sa_handler = SIG_DFL };
	if (sigemptyset(&dfl.sa_mask) < 0 || sigaction(SIGCHLD, &dfl, NULL) < 0)
		return 125;
	sigset_t mask;
	sigemptyset(&mask);
	sigaddset(&mask, SIGCHLD);
	if (sigprocmask(SIG_BLOCK, &mask, NULL) < 0)
		return 125;
	int sigfd = signalfd(-1, &mask, SFD_CLOEXEC);
	if (sigfd < 0)
		return 125;

	uint16_t port = 0;
	r = receive_key(&s);
	if (r >= 0)
		r = handshake(&s);
	if (r >= 0)
		r = wait_go(&s, &port);
	if (r == 1) {
		/* Audit: probes instead of the command, then an EXITED that says "done". */
		struct wire_exited done = { .how = WIRE_EXIT_CODE, .code = 0 };
		r = wrk_audit(port, send_probe, &s);
		if (r >= 0)
			r = send_exited(&s, &done);
		s.mac = wire_mac_free(s.mac);
		return r < 0 ? 125 : 0;
	}
	if (r >= 0)
		r = send_frame(&s, WIRE_READY, NULL, 0);
	if (r < 0) {
		s.mac = wire_mac_free(s.mac);
		return 125;
	}

	int exec_err = 0;
	pid_t cmd = start_command(argv + 1, &exec_err);
	struct wire_exited e = { 0 };
	if (cmd < 0) {
		/* We could not even fork: say so with ERROR, which ends the session. */
		static const char what[] = "fork the command";
		uint8_t pl[64];
		struct wire_wr w;
		wire_wr_init(&w, pl, sizeof(pl));
		(void)wire_put_error(&w, (uint32_t)-cmd, what, sizeof(what) - 1);
		r = send_frame(&s, WIRE_ERROR, pl, w.len);
		s.mac = wire_mac_free(s.mac);
		return r < 0 ? 125 : 0;
	}
	if (exec_err) {
		e.how = exec_err == ENOENT ? WIRE_EXIT_NOT_FOUND : WIRE_EXIT_NOT_EXEC;
		e.code = exec_err;
		(void)waitpid(cmd, NULL, 0);
	} else {
		uint8_t pl[4];
		struct wire_wr w;
		wire_wr_init(&w, pl, sizeof(pl));
		(void)wire_put_u32(&w, (uint32_t)cmd);
		r = send_frame(&s, WIRE_STARTED, pl, w.len);
		if (r >= 0)
			r = supervise(cmd, sigfd, &e);
	}
	if (r >= 0)
		r = send_exited(&s, &e);
	s.mac = wire_mac_free(s.mac);
	/* Exiting as pid 1 makes the kernel kill everything left in the namespace. */
	return r < 0 ? 125 : 0;
}
