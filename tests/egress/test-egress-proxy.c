/* SPDX-License-Identifier: MIT */
/*
 * Integration test of the egress proxy (egress/proxy.c) as phase 2 will run it: the proxy
 * body in a child of its own, confined by sandbox/egress-jail.c, serving a listening unix
 * socket and reporting over a SOCK_SEQPACKET socketpair. Real upstreams listen on 127.0.0.1
 * (python3's http.server, and `openssl s_server` for TLS), listed explicitly. The proxy gets a
 * hosts file through a private mount namespace, so names such as allowed.test and
 * rebind.test resolve where the test wants. curl and `openssl s_client` drive it through a
 * TCP-to-unix-socket shim written here (the worker will relay the same way), and every
 * connection's CONN report is checked.
 *
 * Privileged (root): the proxy switches to uid 65534. Otherwise, or with EGRESS_TEST_USERNS=1,
 * the proxy runs in a user namespace of its own (for the hosts mount) and drops what it holds
 * there. Without root nor user namespaces the test is skipped (77) unless SBX_TEST_MUST_WORK=1.
 * The tools come from $CURL, $OPENSSL and $PYTHON3 (meson passes them).
 *
 * Nothing here is timed: each step waits for the event it needs (a port printed, a process
 * exiting, a report frame); a proxy that never reports makes the test hang until meson's
 * timeout fails it.
 */
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <sched.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <grp.h>
#include <unistd.h>

#include <cmocka.h>

#include "cleanup.h"
#include "egress.h"
#include "io-util.h"

/* A sanitized build of the proxy needs the jail's tests-only sanitizer allowance. */
#if defined(__SANITIZE_ADDRESS__)
#define SANITIZED true
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(undefined_behavior_sanitizer)
#define SANITIZED true
#endif
#endif
#ifndef SANITIZED
#define SANITIZED false
#endif

#define SKIP 77
#define NOBODY 65534u
#define SMALL_BODY "hello from upstream\n"
#define BIG_SIZE (1024u * 1024u)

/* ---- small process helpers ------------------------------------------------------------------ */

static const char *tool(const char *env, const char *fallback)
{
	const char *v = secure_getenv(env);
	return v && *v ? v : fallback;
}

/* Runs argv with a bare environment; its stdout into out (cap bytes, NUL-terminated). */
static int run(char *const argv[], char *out, size_t cap)
{
	int pfd[2];
	assert_int_equal(pipe2(pfd, O_CLOEXEC), 0);
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		char *envp[] = { "PATH=/usr/local/bin:/usr/bin:/bin", NULL };
		int devnull = open("/dev/null", O_RDWR);
		if (devnull < 0 || dup2(devnull, 0) < 0 || dup2(pfd[1], 1) < 0 || dup2(devnull, 2) < 0)
			_exit(126);
		execve(argv[0], argv, envp);
		_exit(127);
	}
	(void)close(pfd[1]);
	size_t got = 0;
	for (;;) {
		char tmp[4096];
		ssize_t n = read(pfd[0], tmp, sizeof(tmp));
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		for (ssize_t i = 0; i < n && got + 1 < cap; i++)
			out[got++] = tmp[i];
	}
	if (cap)
		out[got] = '\0';
	(void)close(pfd[0]);
	int status;
	while (waitpid(pid, &status, 0) < 0)
		assert_int_equal(errno, EINTR);
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

/* Starts argv with stdout on a pipe and reads its first line (a port). */
static pid_t start_server(char *const argv[], const char *prefix, uint16_t *out_port)
{
	int pfd[2];
	assert_int_equal(pipe2(pfd, O_CLOEXEC), 0);
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		int devnull = open("/dev/null", O_RDWR);
		if (devnull < 0 || dup2(devnull, 0) < 0 || dup2(pfd[1], 1) < 0 || dup2(devnull, 2) < 0)
			_exit(126);
		(void)prctl(PR_SET_PDEATHSIG, SIGKILL);
		execv(argv[0], argv);
		_exit(127);
	}
	(void)close(pfd[1]);
	char line[256];
	size_t n = 0;
	for (;;) {
		char ch;
		ssize_t k = read(pfd[0], &ch, 1);
		if (k < 0 && errno == EINTR)
			continue;
		assert_true(k == 1);
		if (ch == '\n') {
			line[n] = '\0';
			if (strncmp(line, prefix, strlen(prefix)) == 0)
				break;
			n = 0;
			continue;
		}
		if (n + 1 < sizeof(line))
			line[n++] = ch;
	}
	/* The rest of its output is not ours to read; keep the pipe from filling. */
	if (fork() == 0) {
		char sink[4096];
		while (read(pfd[0], sink, sizeof(sink)) > 0)
			;
		_exit(0);
	}
	(void)close(pfd[0]);
	const char *num = strrchr(line, ':');
	num = num ? num + 1 : line + strlen(prefix);
	long port = strtol(num, NULL, 10);
	assert_true(port > 0 && port < 65536);
	*out_port = (uint16_t)port;
	return pid;
}

static void stop(pid_t *pid)
{
	if (*pid > 0) {
		(void)kill(*pid, SIGKILL);
		(void)waitpid(*pid, NULL, 0);
		*pid = -1;
	}
}

/* ---- the shim: TCP on 127.0.0.1 to the proxy's unix socket, byte for byte ---------------------- */

static void shim_relay(int a, int b)
{
	uint8_t buf[2][65536];
	size_t len[2] = { 0, 0 };
	bool eof[2] = { false, false }, shut[2] = { false, false };
	int from[2] = { a, b }, to[2] = { b, a };
	while (!(shut[0] && shut[1])) {
		struct pollfd pfd[4];
		for (int d = 0; d < 2; d++) {
			pfd[d] = (struct pollfd){ .fd = !eof[d] && len[d] == 0 ? from[d] : -1,
						  .events = POLLIN };
			pfd[2 + d] = (struct pollfd){ .fd = len[d] ? to[d] : -1, .events = POLLOUT };
		}
		if (poll(pfd, 4, -1) < 0) {
			if (errno == EINTR)
				continue;
			return;
		}
		for (int d = 0; d < 2; d++) {
			if (pfd[d].revents) {
				ssize_t n = read(from[d], buf[d], sizeof(buf[d]));
				if (n <= 0)
					eof[d] = true;
				else
					len[d] = (size_t)n;
			}
			if (pfd[2 + d].revents) {
				ssize_t n = send(to[d], buf[d], len[d], MSG_NOSIGNAL);
				if (n <= 0) {
					/* That side is gone; the other direction goes on. */
					len[d] = 0;
					eof[d] = true;
				} else {
					memmove(buf[d], buf[d] + n, len[d] - (size_t)n);
					len[d] -= (size_t)n;
				}
			}
			if (eof[d] && len[d] == 0 && !shut[d]) {
				(void)shutdown(to[d], SHUT_WR);
				shut[d] = true;
			}
		}
	}
}

/* A unix socket address for path, which must fit. */
static struct sockaddr_un unix_addr(const char *path)
{
	struct sockaddr_un sun = { .sun_family = AF_UNIX };
	size_t n = strlen(path);
	assert_true(n < sizeof(sun.sun_path));
	memcpy(sun.sun_path, path, n + 1);
	return sun;
}

static pid_t shim_start(const char *unix_path, uint16_t *out_port)
{
	int l = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	assert_true(l >= 0);
	struct sockaddr_in sin = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t len = sizeof(sin);
	assert_int_equal(bind(l, (struct sockaddr *)&sin, sizeof(sin)), 0);
	assert_int_equal(listen(l, 64), 0);
	assert_int_equal(getsockname(l, (struct sockaddr *)&sin, &len), 0);
	*out_port = ntohs(sin.sin_port);
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		(void)prctl(PR_SET_PDEATHSIG, SIGKILL);
		(void)signal(SIGCHLD, SIG_IGN); /* reaps the relays */
		for (;;) {
			int c = accept4(l, NULL, NULL, SOCK_CLOEXEC);
			if (c < 0)
				continue;
			if (fork() == 0) {
				struct sockaddr_un sun = unix_addr(unix_path);
				int u = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
				if (u < 0 || connect(u, (struct sockaddr *)&sun, sizeof(sun)) < 0)
					_exit(1);
				shim_relay(c, u);
				_exit(0);
			}
			(void)close(c);
		}
	}
	(void)close(l);
	return pid;
}

/* ---- fixture ---------------------------------------------------------------------------------- */

struct proxy_inst {
	pid_t pid;
	pid_t shim;
	uint16_t shim_port;
	int report;
	struct egr_reader rd;
	struct egr_rules rules;
	char sock[256];
};

static struct {
	bool userns;
	char dir[64];
	char hosts[128];
	char cert[128];
	pid_t http, tls;
	uint16_t http_port, tls_port;
	struct proxy_inst main;
} fx = { .http = -1, .tls = -1 };

static void write_file(const char *path, const void *data, size_t len, mode_t mode)
{
	_cleanup_close_ int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode);
	assert_true(fd >= 0);
	assert_int_equal(io_write_all(fd, data, len), 0);
	assert_int_equal(fchmod(fd, mode), 0);
}

static int write_proc(const char *path, const char *text)
{
	_cleanup_close_ int fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	return io_write_all(fd, text, strlen(text));
}

/*
 * In the proxy's child: a mount namespace where /etc/hosts is the test's (and, in userns
 * mode, a user namespace for it, with the ids it maps to taken on).
 */
static int hosts_namespace(void)
{
	if (fx.userns) {
		/* As root, become the unprivileged user that runs warden in this mode first. */
		if (geteuid() == 0) {
			gid_t g = NOBODY;
			if (setgroups(1, &g) < 0 || setresgid(NOBODY, NOBODY, NOBODY) < 0 ||
			    setresuid(NOBODY, NOBODY, NOBODY) < 0)
				return -EPERM;
			/* The id change made it non-dumpable: /proc/self would be root's. */
			if (prctl(PR_SET_DUMPABLE, 1, 0, 0, 0) < 0)
				return -errno;
		}
		unsigned out_uid = geteuid(), out_gid = getegid();
		char map[64];
		if (unshare(CLONE_NEWUSER | CLONE_NEWNS) < 0)
			return -errno;
		(void)snprintf(map, sizeof(map), "0 %u 1\n", out_uid);
		if (write_proc("/proc/self/setgroups", "deny") < 0 ||
		    write_proc("/proc/self/uid_map", map) < 0)
			return -EPERM;
		(void)snprintf(map, sizeof(map), "0 %u 1\n", out_gid);
		if (write_proc("/proc/self/gid_map", map) < 0 || setresgid(0, 0, 0) < 0 ||
		    setresuid(0, 0, 0) < 0)
			return -EPERM;
	} else if (unshare(CLONE_NEWNS) < 0) {
		return -errno;
	}
	/* Private first: a bind on a shared / would show on the host too. */
	if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0)
		return -errno;
	if (mount(fx.hosts, "/etc/hosts", NULL, MS_BIND, NULL) < 0)
		return -errno;
	return 0;
}

/* Closes every descriptor from 3 on but a and b. */
static void close_except(int a, int b)
{
	int lo = a < b ? a : b, hi = a < b ? b : a;
	if (lo > 3)
		(void)close_range(3, (unsigned)lo - 1, 0);
	if (hi > lo + 1)
		(void)close_range((unsigned)lo + 1, (unsigned)hi - 1, 0);
	(void)close_range((unsigned)hi + 1, ~0u, 0);
}

/* "%u" in an entry is the HTTP upstream's port, "%t" the TLS one's. */
static void add_rules(struct egr_rules *rules, bool deny, const char *const *list)
{
	for (size_t i = 0; list && list[i]; i++) {
		char buf[128];
		const char *e = list[i];
		size_t n = 0;
		for (; *e && n + 8 < sizeof(buf); e++) {
			if (e[0] == '%' && (e[1] == 'u' || e[1] == 't')) {
				n += (size_t)snprintf(buf + n, sizeof(buf) - n, "%u",
						      e[1] == 'u' ? fx.http_port : fx.tls_port);
				e++;
			} else {
				buf[n++] = *e;
			}
		}
		buf[n] = '\0';
		int r = egr_rules_add(rules, deny, buf, n);
		if (r < 0)
			fprintf(stderr, "entry '%s': %s\n", buf, strerror(-r));
		assert_int_equal(r, 0);
	}
}

static void next_report(struct proxy_inst *pi, struct egr_report *rep)
{
	int r = egr_reader_recv(&pi->rd, pi->report, rep);
	if (r < 0)
		fprintf(stderr, "report: %s\n", strerror(-r));
	assert_int_equal(r, 0);
}

static void proxy_start(struct proxy_inst *pi, const char *name, const char *const *allow,
			const char *const *deny, uint64_t max_conn, uint64_t max_bytes)
{
	memset(pi, 0, sizeof(*pi));
	add_rules(&pi->rules, false, allow);
	add_rules(&pi->rules, true, deny);
	struct egr_proxy_config cfg = {
		.rules = &pi->rules,
		.max_connections = max_conn,
		.max_bytes = max_bytes,
		.jail = {
			.privileged = !fx.userns,
			.uid = NOBODY,
			.gid = NOBODY,
			.parent = getpid(),
			.sanitizer_runtime = SANITIZED,
		},
	};
	assert_int_equal(io_fill_random(cfg.key, sizeof(cfg.key)), 0);
	assert_int_equal(egr_reader_init(&pi->rd, cfg.key), 0);

	(void)snprintf(pi->sock, sizeof(pi->sock), "%s/%s.sock", fx.dir, name);
	int l = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	assert_true(l >= 0);
	struct sockaddr_un sun = unix_addr(pi->sock);
	assert_int_equal(bind(l, (struct sockaddr *)&sun, sizeof(sun)), 0);
	assert_int_equal(listen(l, 64), 0);
	int sp[2];
	assert_int_equal(socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sp), 0);

	pi->pid = fork();
	assert_true(pi->pid >= 0);
	if (pi->pid == 0) {
		close_except(l, sp[1]);
		int r = hosts_namespace();
		if (r < 0) {
			fprintf(stderr, "proxy child: hosts namespace: %s\n", strerror(-r));
			_exit(3);
		}
		cfg.listen_fd = l;
		cfg.report_fd = sp[1];
		_exit(egr_proxy_main(&cfg));
	}
	explicit_bzero(cfg.key, sizeof(cfg.key));
	(void)close(l);
	(void)close(sp[1]);
	pi->report = sp[0];
	struct egr_report rep;
	int r = egr_reader_recv(&pi->rd, pi->report, &rep);
	if (r == 0 && rep.type == WIRE_EGRESS_FAILED)
		fprintf(stderr, "proxy failed to confine itself: %s: %s\n", rep.failed_step,
			strerror((int)rep.failed_err));
	assert_int_equal(r, 0);
	assert_int_equal(rep.type, WIRE_EGRESS_READY);
	pi->shim = shim_start(pi->sock, &pi->shim_port);
}

/* Closes the report channel: the proxy must exit 0. Returns its wait status. */
static int proxy_stop(struct proxy_inst *pi)
{
	int status = -1;
	stop(&pi->shim);
	if (pi->report >= 0) {
		(void)close(pi->report);
		pi->report = -1;
	}
	if (pi->pid > 0) {
		while (waitpid(pi->pid, &status, 0) < 0 && errno == EINTR)
			;
		pi->pid = -1;
	}
	egr_reader_done(&pi->rd);
	egr_rules_done(&pi->rules);
	if (status != -1 && !WIFEXITED(status))
		fprintf(stderr, "proxy killed by signal %d\n", WTERMSIG(status));
	return status;
}

static const char *const main_allow[] = {
	"allowed.test:%u", "127.0.0.1:%u", "tls.test:%t", "127.0.0.1:%t", "*.wild.test:%u",
	"rebind.test:9", "metadata.test", "mixed.test", NULL,
};
static const char *const main_deny[] = { "bad.wild.test", NULL };

static int group_setup(void **state)
{
	(void)state;
	bool root = geteuid() == 0;
	const char *force = secure_getenv("EGRESS_TEST_USERNS");
	fx.userns = !root || (force && strcmp(force, "1") == 0);
	const char *curl = tool("CURL", "/usr/bin/curl"), *openssl = tool("OPENSSL", "/usr/bin/openssl");
	const char *python = tool("PYTHON3", "/usr/bin/python3");
	if (access(curl, X_OK) < 0 || access(openssl, X_OK) < 0 || access(python, X_OK) < 0) {
		fprintf(stderr, "skip: needs curl, openssl and python3\n");
		exit(SKIP);
	}
	if (fx.userns) {
		/* Can this process make a user namespace at all? */
		pid_t pid = fork();
		if (pid == 0)
			_exit(unshare(CLONE_NEWUSER | CLONE_NEWNS) == 0 ? 0 : 1);
		int status;
		(void)waitpid(pid, &status, 0);
		if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
			const char *must = secure_getenv("SBX_TEST_MUST_WORK");
			fprintf(stderr, "skip: no root and no user namespaces\n");
			exit(must && strcmp(must, "1") == 0 ? 1 : SKIP);
		}
	}

	(void)snprintf(fx.dir, sizeof(fx.dir), "/tmp/warden-egress-XXXXXX");
	assert_non_null(mkdtemp(fx.dir));
	assert_int_equal(chmod(fx.dir, 0755), 0);
	char path[256];
	(void)snprintf(path, sizeof(path), "%s/www", fx.dir);
	assert_int_equal(mkdir(path, 0755), 0);
	(void)snprintf(path, sizeof(path), "%s/www/small.txt", fx.dir);
	write_file(path, SMALL_BODY, strlen(SMALL_BODY), 0644);
	_cleanup_free_ uint8_t *big = malloc(BIG_SIZE);
	assert_non_null(big);
	for (size_t i = 0; i < BIG_SIZE; i++)
		big[i] = (uint8_t)(i * 7 + 3);
	(void)snprintf(path, sizeof(path), "%s/www/big.bin", fx.dir);
	write_file(path, big, BIG_SIZE, 0644);

	static const char hosts[] =
		"127.0.0.1 allowed.test tls.test other.test a.wild.test wild.test evil-wild.test\n"
		"127.0.0.1 bad.wild.test rebind.test\n"
		"169.254.169.254 metadata.test\n"
		"8.8.8.8 mixed.test\n"
		"10.0.0.1 mixed.test\n";
	(void)snprintf(fx.hosts, sizeof(fx.hosts), "%s/hosts", fx.dir);
	write_file(fx.hosts, hosts, strlen(hosts), 0644);

	/* A certificate for tls.test, so the handshake is real and verified. */
	char key[128], subj[] = "/CN=tls.test", san[] = "subjectAltName=DNS:tls.test";
	(void)snprintf(key, sizeof(key), "%s/key.pem", fx.dir);
	(void)snprintf(fx.cert, sizeof(fx.cert), "%s/cert.pem", fx.dir);
	char out[4096];
	char *req[] = { (char *)openssl, "req", "-x509", "-newkey", "rsa:2048", "-nodes",
			"-keyout", key, "-out", fx.cert, "-subj", subj, "-addext", san, "-days", "2",
			NULL };
	assert_int_equal(run(req, out, sizeof(out)), 0);

	(void)snprintf(path, sizeof(path), "%s/www", fx.dir);
	char script[256];
	(void)snprintf(script, sizeof(script), "%s/upstream.py", EGRESS_TEST_DIR);
	char *http[] = { (char *)python, script, path, NULL };
	fx.http = start_server(http, "", &fx.http_port);
	char accept_arg[] = "127.0.0.1:0";
	char *tls[] = { (char *)openssl, "s_server", "-accept", accept_arg, "-cert", fx.cert,
			"-key", key, "-www", NULL };
	fx.tls = start_server(tls, "ACCEPT", &fx.tls_port);

	proxy_start(&fx.main, "main", main_allow, main_deny, EGR_UNLIMITED, EGR_UNLIMITED);
	return 0;
}

static int group_teardown(void **state)
{
	(void)state;
	(void)proxy_stop(&fx.main);
	stop(&fx.http);
	stop(&fx.tls);
	char *rm[] = { "/bin/rm", "-rf", fx.dir, NULL };
	char out[64];
	(void)run(rm, out, sizeof(out));
	return 0;
}

/* ---- clients ---------------------------------------------------------------------------------- */

/*
 * curl through pi's shim: returns curl's status; code gets the HTTP code (for https://, the
 * proxy's answer to CONNECT when that was not 200), body the body.
 */
static int curl(struct proxy_inst *pi, const char *url, char *code, size_t code_cap, char *body,
		size_t body_cap)
{
	char proxy[64], out_path[256];
	(void)snprintf(proxy, sizeof(proxy), "http://127.0.0.1:%u", pi->shim_port);
	(void)snprintf(out_path, sizeof(out_path), "%s/curl.out", fx.dir);
	(void)unlink(out_path);
	char *argv[] = { (char *)tool("CURL", "/usr/bin/curl"), "-sS", "--proxy", proxy,
			 "--noproxy", "", "--cacert", fx.cert, "-o", out_path, "-w",
			 "%{http_connect} %{http_code}", (char *)url, NULL };
	char codes[64];
	int status = run(argv, codes, sizeof(codes));
	/* "CONNECT-code HTTP-code": the tunnel's answer counts when it was a refusal. */
	char *space = strchr(codes, ' ');
	assert_non_null(space);
	*space = '\0';
	bool tunnel_refused = strcmp(codes, "000") != 0 && strcmp(codes, "200") != 0;
	const char *pick = tunnel_refused ? codes : space + 1;
	size_t n = strlen(pick);
	assert_true(n < code_cap);
	memcpy(code, pick, n + 1);
	if (body_cap) {
		body[0] = '\0';
		_cleanup_close_ int fd = open(out_path, O_RDONLY | O_CLOEXEC);
		if (fd >= 0)
			(void)io_read_fd(fd, body, body_cap);
	}
	return status;
}

/*
 * Sends raw bytes through pi's shim, half-closes, then reads the answer until the proxy
 * closes.
 */
static void raw(struct proxy_inst *pi, const void *data, size_t len, char *answer, size_t cap)
{
	_cleanup_close_ int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	assert_true(fd >= 0);
	struct sockaddr_in sin = { .sin_family = AF_INET, .sin_port = htons(pi->shim_port),
				   .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	assert_int_equal(connect(fd, (struct sockaddr *)&sin, sizeof(sin)), 0);
	/* The proxy may answer and close before reading it all: that is fine. Then the end of
	 * the request: what a client that sent everything and waits looks like. */
	(void)io_write_all(fd, data, len);
	(void)shutdown(fd, SHUT_WR);
	size_t got = 0;
	for (;;) {
		char tmp[4096];
		ssize_t n = read(fd, tmp, sizeof(tmp));
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		for (ssize_t i = 0; i < n && got + 1 < cap; i++)
			answer[got++] = tmp[i];
	}
	answer[got] = '\0';
}

/* The next report must be a CONN with this verdict, reason and target. */
static struct wire_egress_conn expect_conn(struct proxy_inst *pi, uint8_t verdict,
					   uint8_t reason, const char *host, uint16_t port)
{
	struct egr_report rep;
	next_report(pi, &rep);
	assert_int_equal(rep.type, WIRE_EGRESS_CONN);
	char line[512];
	egr_conn_describe(&rep.conn, line, sizeof(line));
	if (rep.conn.verdict != verdict || rep.conn.reason != reason ||
	    strcmp(rep.conn.host, host) != 0 || rep.conn.port != port)
		fprintf(stderr, "got: %s\n", line);
	assert_int_equal(rep.conn.verdict, verdict);
	assert_int_equal(rep.conn.reason, reason);
	assert_string_equal(rep.conn.host, host);
	assert_int_equal(rep.conn.port, port);
	return rep.conn;
}

static void expect_addr(const struct wire_egress_conn *c, uint8_t a, uint8_t b, uint8_t cc,
			uint8_t d)
{
	assert_int_equal(c->family, 4);
	uint8_t want[4] = { a, b, cc, d };
	assert_memory_equal(c->addr, want, 4);
}

/* ---- tests ------------------------------------------------------------------------------------ */

static void test_confined(void **state)
{
	(void)state;
	char path[64], status[4096];
	(void)snprintf(path, sizeof(path), "/proc/%d/status", (int)fx.main.pid);
	_cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC);
	assert_true(fd >= 0);
	assert_true(io_read_fd(fd, status, sizeof(status)) > 0);
	char uid_line[64];
	(void)snprintf(uid_line, sizeof(uid_line), "\nUid:\t%u\t%u\t%u\t%u\n",
		       fx.userns && geteuid() != 0 ? geteuid() : NOBODY,
		       fx.userns && geteuid() != 0 ? geteuid() : NOBODY,
		       fx.userns && geteuid() != 0 ? geteuid() : NOBODY,
		       fx.userns && geteuid() != 0 ? geteuid() : NOBODY);
	if (!strstr(status, uid_line))
		fprintf(stderr, "%s", status);
	assert_non_null(strstr(status, uid_line));
	assert_non_null(strstr(status, "\nCapInh:\t0000000000000000\n"));
	assert_non_null(strstr(status, "\nCapPrm:\t0000000000000000\n"));
	assert_non_null(strstr(status, "\nCapEff:\t0000000000000000\n"));
	assert_non_null(strstr(status, "\nCapAmb:\t0000000000000000\n"));
	assert_non_null(strstr(status, "\nNoNewPrivs:\t1\n"));
	assert_non_null(strstr(status, "\nSeccomp:\t2\n"));
}

static void test_allowed_http(void **state)
{
	(void)state;
	char url[128], code[16], body[256];
	(void)snprintf(url, sizeof(url), "http://allowed.test:%u/small.txt", fx.http_port);
	assert_int_equal(curl(&fx.main, url, code, sizeof(code), body, sizeof(body)), 0);
	assert_string_equal(code, "200");
	assert_string_equal(body, SMALL_BODY);
	struct wire_egress_conn c = expect_conn(&fx.main, WIRE_EGRESS_ALLOWED, WIRE_EGRESS_OK,
						"allowed.test", fx.http_port);
	char rule[64];
	(void)snprintf(rule, sizeof(rule), "allowed.test:%u", fx.http_port);
	assert_string_equal(c.rule, rule);
	assert_int_equal(c.kind, WIRE_EGRESS_KIND_HTTP);
	expect_addr(&c, 127, 0, 0, 1);
	assert_true(c.bytes_up > 0);
	assert_true(c.bytes_down > strlen(SMALL_BODY));
}

static void test_allowed_tls(void **state)
{
	(void)state;
	char url[128], code[16], body[8192];
	(void)snprintf(url, sizeof(url), "https://TLS.test:%u/", fx.tls_port);
	int r = curl(&fx.main, url, code, sizeof(code), body, sizeof(body));
	assert_int_equal(r, 0);
	assert_string_equal(code, "200");
	struct wire_egress_conn c = expect_conn(&fx.main, WIRE_EGRESS_ALLOWED, WIRE_EGRESS_OK,
						"tls.test", fx.tls_port);
	assert_int_equal(c.kind, WIRE_EGRESS_KIND_CONNECT);
	expect_addr(&c, 127, 0, 0, 1);
	/* A handshake each way and a page: far more than the ClientHello. */
	assert_true(c.bytes_up > 200 && c.bytes_down > 1000);
}

/* A request that must be refused with this HTTP code, reported as given. */
static struct wire_egress_conn expect_refused(const char *url, const char *http_code,
					      uint8_t verdict, uint8_t reason, const char *host,
					      uint16_t port)
{
	char code[16], body[512];
	(void)curl(&fx.main, url, code, sizeof(code), body, sizeof(body));
	if (strcmp(code, http_code) != 0)
		fprintf(stderr, "%s: HTTP %s: %s\n", url, code, body);
	assert_string_equal(code, http_code);
	/* curl keeps no body of a refused CONNECT. */
	if (strncmp(url, "https:", 6) != 0)
		assert_non_null(strstr(body, "warden: "));
	struct wire_egress_conn c = expect_conn(&fx.main, verdict, reason, host, port);
	assert_int_equal(c.bytes_up, 0);
	assert_int_equal(c.bytes_down, 0);
	return c;
}

static void test_denied(void **state)
{
	(void)state;
	char url[128];
	(void)snprintf(url, sizeof(url), "http://denied.test:%u/small.txt", fx.http_port);
	struct wire_egress_conn c = expect_refused(url, "403", WIRE_EGRESS_DENIED,
						   WIRE_EGRESS_NOT_ALLOWED, "denied.test",
						   fx.http_port);
	assert_string_equal(c.rule, "");
	assert_int_equal(c.family, 0); /* never resolved */
	(void)snprintf(url, sizeof(url), "https://denied.test:%u/", fx.tls_port);
	(void)expect_refused(url, "403", WIRE_EGRESS_DENIED, WIRE_EGRESS_NOT_ALLOWED,
			     "denied.test", fx.tls_port);
	/* An allowed name on a port it is not allowed on. */
	(void)snprintf(url, sizeof(url), "http://allowed.test:%u/", fx.tls_port);
	(void)expect_refused(url, "403", WIRE_EGRESS_DENIED, WIRE_EGRESS_NOT_ALLOWED,
			     "allowed.test", fx.tls_port);
}

static void test_wildcard(void **state)
{
	(void)state;
	char url[128], code[16], body[256];
	(void)snprintf(url, sizeof(url), "http://a.wild.test:%u/small.txt", fx.http_port);
	assert_int_equal(curl(&fx.main, url, code, sizeof(code), body, sizeof(body)), 0);
	assert_string_equal(code, "200");
	struct wire_egress_conn c = expect_conn(&fx.main, WIRE_EGRESS_ALLOWED, WIRE_EGRESS_OK,
						"a.wild.test", fx.http_port);
	char rule[64];
	(void)snprintf(rule, sizeof(rule), "*.wild.test:%u", fx.http_port);
	assert_string_equal(c.rule, rule);

	(void)snprintf(url, sizeof(url), "http://wild.test:%u/", fx.http_port);
	(void)expect_refused(url, "403", WIRE_EGRESS_DENIED, WIRE_EGRESS_NOT_ALLOWED, "wild.test",
			     fx.http_port);
	(void)snprintf(url, sizeof(url), "http://evil-wild.test:%u/", fx.http_port);
	(void)expect_refused(url, "403", WIRE_EGRESS_DENIED, WIRE_EGRESS_NOT_ALLOWED,
			     "evil-wild.test", fx.http_port);
	(void)snprintf(url, sizeof(url), "http://bad.wild.test:%u/", fx.http_port);
	c = expect_refused(url, "403", WIRE_EGRESS_DENIED, WIRE_EGRESS_DENY_RULE, "bad.wild.test",
			   fx.http_port);
	assert_string_equal(c.rule, "bad.wild.test");
}

static void test_ip_literal(void **state)
{
	(void)state;
	char url[128], code[16], body[256];
	(void)snprintf(url, sizeof(url), "http://127.0.0.1:%u/small.txt", fx.http_port);
	assert_int_equal(curl(&fx.main, url, code, sizeof(code), body, sizeof(body)), 0);
	assert_string_equal(code, "200");
	assert_string_equal(body, SMALL_BODY);
	struct wire_egress_conn c = expect_conn(&fx.main, WIRE_EGRESS_ALLOWED, WIRE_EGRESS_OK,
						"127.0.0.1", fx.http_port);
	char rule[64];
	(void)snprintf(rule, sizeof(rule), "127.0.0.1:%u", fx.http_port);
	assert_string_equal(c.rule, rule);

	(void)snprintf(url, sizeof(url), "http://127.0.0.2:%u/", fx.http_port);
	(void)expect_refused(url, "403", WIRE_EGRESS_DENIED, WIRE_EGRESS_NOT_ALLOWED, "127.0.0.2",
			     fx.http_port);
	(void)snprintf(url, sizeof(url), "http://[::1]:%u/", fx.http_port);
	(void)expect_refused(url, "403", WIRE_EGRESS_DENIED, WIRE_EGRESS_NOT_ALLOWED, "::1",
			     fx.http_port);
	(void)snprintf(url, sizeof(url), "http://[::ffff:127.0.0.1]:%u/small.txt", fx.http_port);
	assert_int_equal(curl(&fx.main, url, code, sizeof(code), body, sizeof(body)), 0);
	assert_string_equal(code, "200");
	(void)expect_conn(&fx.main, WIRE_EGRESS_ALLOWED, WIRE_EGRESS_OK, "127.0.0.1", fx.http_port);
}

static void test_refused_addresses(void **state)
{
	(void)state;
	/* Allowed by name, resolving to loopback that is not listed for that port. */
	struct wire_egress_conn c = expect_refused("http://rebind.test:9/", "403",
						   WIRE_EGRESS_DENIED, WIRE_EGRESS_ADDRESS,
						   "rebind.test", 9);
	expect_addr(&c, 127, 0, 0, 1);
	c = expect_refused("http://metadata.test/latest/meta-data/", "403", WIRE_EGRESS_DENIED,
			   WIRE_EGRESS_ADDRESS, "metadata.test", 80);
	expect_addr(&c, 169, 254, 169, 254);
	/* One public and one private address: refused whole, naming the private one. */
	c = expect_refused("http://mixed.test/", "403", WIRE_EGRESS_DENIED, WIRE_EGRESS_ADDRESS,
			   "mixed.test", 80);
	expect_addr(&c, 10, 0, 0, 1);
}

static void test_sni_mismatch(void **state)
{
	(void)state;
	char proxy[64], connect_to[128], out[8192];
	(void)snprintf(proxy, sizeof(proxy), "127.0.0.1:%u", fx.main.shim_port);
	(void)snprintf(connect_to, sizeof(connect_to), "tls.test:%u", fx.tls_port);
	char *argv[] = { (char *)tool("OPENSSL", "/usr/bin/openssl"), "s_client", "-proxy", proxy,
			 "-connect", connect_to, "-servername", "other.test", NULL };
	assert_int_not_equal(run(argv, out, sizeof(out)), 0);
	struct wire_egress_conn c = expect_conn(&fx.main, WIRE_EGRESS_DENIED, WIRE_EGRESS_SNI,
						"tls.test", fx.tls_port);
	assert_int_equal(c.bytes_up, 0); /* the ClientHello never left */
	assert_int_equal(c.bytes_down, 0);

	/* A tunnel that does not start with TLS at all. */
	char req[256], answer[1024];
	int n = snprintf(req, sizeof(req), "CONNECT tls.test:%u HTTP/1.1\r\n\r\nSSH-2.0-x\r\n",
			 fx.tls_port);
	raw(&fx.main, req, (size_t)n, answer, sizeof(answer));
	assert_non_null(strstr(answer, "HTTP/1.1 200 "));
	(void)expect_conn(&fx.main, WIRE_EGRESS_DENIED, WIRE_EGRESS_SNI, "tls.test", fx.tls_port);
}

/* A raw request that must get a 400 and be reported as a bad request. */
static void expect_bad(const void *req, size_t len)
{
	char answer[1024];
	raw(&fx.main, req, len, answer, sizeof(answer));
	if (strncmp(answer, "HTTP/1.1 400 ", 13) != 0)
		fprintf(stderr, "answer: %s\n", answer);
	assert_int_equal(strncmp(answer, "HTTP/1.1 400 ", 13), 0);
	struct egr_report rep;
	next_report(&fx.main, &rep);
	assert_int_equal(rep.type, WIRE_EGRESS_CONN);
	assert_int_equal(rep.conn.verdict, WIRE_EGRESS_UNDECIDED);
	assert_int_equal(rep.conn.reason, WIRE_EGRESS_BAD_REQUEST);
	assert_int_equal(rep.conn.kind, WIRE_EGRESS_KIND_NONE);
}

static void test_bad_requests(void **state)
{
	(void)state;
	/* Oversized: one header line past EGR_MAX_LINE. */
	size_t len = EGR_MAX_LINE + 200;
	_cleanup_free_ char *big = malloc(len);
	assert_non_null(big);
	int n = snprintf(big, len, "GET http://allowed.test:%u/ HTTP/1.1\r\nX: ", fx.http_port);
	memset(big + n, 'a', len - (size_t)n);
	expect_bad(big, len);
	/* Malformed: origin-form, bare LF, a Host elsewhere, smuggling framing. */
	static const char origin[] = "GET /small.txt HTTP/1.1\r\nHost: allowed.test\r\n\r\n";
	expect_bad(origin, sizeof(origin) - 1);
	static const char lf[] = "GET http://allowed.test/ HTTP/1.1\n\n";
	expect_bad(lf, sizeof(lf) - 1);
	char req[256];
	n = snprintf(req, sizeof(req),
		     "GET http://allowed.test:%u/ HTTP/1.1\r\nHost: denied.test\r\n\r\n",
		     fx.http_port);
	expect_bad(req, (size_t)n);
	n = snprintf(req, sizeof(req),
		     "POST http://allowed.test:%u/ HTTP/1.1\r\nContent-Length: 4\r\n"
		     "Transfer-Encoding: chunked\r\n\r\n",
		     fx.http_port);
	expect_bad(req, (size_t)n);
	static const char binary[] = "\x16\x03\x01\x00\x05hello\r\n\r\n";
	expect_bad(binary, sizeof(binary) - 1);
}

static void test_client_leaves_early(void **state)
{
	(void)state;
	char answer[64];
	static const char part[] = "GET http://allowed.test/ HTTP/1.1\r\nHost: allo";
	raw(&fx.main, part, sizeof(part) - 1, answer, sizeof(answer));
	assert_string_equal(answer, "");
	struct egr_report rep;
	next_report(&fx.main, &rep);
	assert_int_equal(rep.type, WIRE_EGRESS_CONN);
	assert_int_equal(rep.conn.kind, WIRE_EGRESS_KIND_NONE);
	assert_int_equal(rep.conn.verdict, WIRE_EGRESS_UNDECIDED);
	assert_int_equal(rep.conn.reason, WIRE_EGRESS_INCOMPLETE);
}

static const char *const cap_allow[] = { "allowed.test:%u", "127.0.0.1:%u", NULL };

static void test_byte_cap(void **state)
{
	(void)state;
	struct proxy_inst pi;
	const uint64_t max = 200000;
	proxy_start(&pi, "bytes", cap_allow, NULL, EGR_UNLIMITED, max);
	char url[128], code[16], body[64];
	(void)snprintf(url, sizeof(url), "http://allowed.test:%u/big.bin", fx.http_port);
	assert_int_not_equal(curl(&pi, url, code, sizeof(code), body, 0), 0);
	struct egr_report rep;
	next_report(&pi, &rep);
	assert_int_equal(rep.type, WIRE_EGRESS_LIMIT);
	assert_int_equal(rep.limit_which, WIRE_EGRESS_LIMIT_BYTES);
	assert_int_equal(rep.limit, max);
	struct wire_egress_conn c = expect_conn(&pi, WIRE_EGRESS_ALLOWED, WIRE_EGRESS_MAX_BYTES,
						"allowed.test", fx.http_port);
	assert_true(c.bytes_up + c.bytes_down <= max);
	assert_true(c.bytes_down > max / 2);
	/* Spent: the next client is refused at the door. */
	(void)snprintf(url, sizeof(url), "http://allowed.test:%u/small.txt", fx.http_port);
	assert_int_equal(curl(&pi, url, code, sizeof(code), body, 0), 0);
	assert_string_equal(code, "503");
	next_report(&pi, &rep);
	assert_int_equal(rep.type, WIRE_EGRESS_CONN);
	assert_int_equal(rep.conn.reason, WIRE_EGRESS_MAX_BYTES);
	assert_int_equal(rep.conn.verdict, WIRE_EGRESS_UNDECIDED);
	/* Closing the report channel ends the proxy, cleanly. */
	int status = proxy_stop(&pi);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), EGR_EXIT_DONE);
}

static void test_connection_cap(void **state)
{
	(void)state;
	struct proxy_inst pi;
	proxy_start(&pi, "conns", cap_allow, NULL, 2, EGR_UNLIMITED);
	char url[128], code[16], body[64];
	(void)snprintf(url, sizeof(url), "http://allowed.test:%u/small.txt", fx.http_port);
	for (int i = 0; i < 2; i++) {
		assert_int_equal(curl(&pi, url, code, sizeof(code), body, 0), 0);
		assert_string_equal(code, "200");
		(void)expect_conn(&pi, WIRE_EGRESS_ALLOWED, WIRE_EGRESS_OK, "allowed.test",
				  fx.http_port);
	}
	assert_int_equal(curl(&pi, url, code, sizeof(code), body, 0), 0);
	assert_string_equal(code, "503");
	struct egr_report rep;
	next_report(&pi, &rep);
	assert_int_equal(rep.type, WIRE_EGRESS_LIMIT);
	assert_int_equal(rep.limit_which, WIRE_EGRESS_LIMIT_CONNECTIONS);
	assert_int_equal(rep.limit, 2);
	next_report(&pi, &rep);
	assert_int_equal(rep.type, WIRE_EGRESS_CONN);
	assert_int_equal(rep.conn.reason, WIRE_EGRESS_MAX_CONNECTIONS);
	/* The LIMIT frame comes once; the next refusal is a CONN alone. */
	assert_int_equal(curl(&pi, url, code, sizeof(code), body, 0), 0);
	assert_string_equal(code, "503");
	next_report(&pi, &rep);
	assert_int_equal(rep.type, WIRE_EGRESS_CONN);
	assert_int_equal(rep.conn.reason, WIRE_EGRESS_MAX_CONNECTIONS);
	int status = proxy_stop(&pi);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), EGR_EXIT_DONE);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_confined),
		cmocka_unit_test(test_allowed_http),
		cmocka_unit_test(test_allowed_tls),
		cmocka_unit_test(test_denied),
		cmocka_unit_test(test_wildcard),
		cmocka_unit_test(test_ip_literal),
		cmocka_unit_test(test_refused_addresses),
		cmocka_unit_test(test_sni_mismatch),
		cmocka_unit_test(test_bad_requests),
		cmocka_unit_test(test_client_leaves_early),
		cmocka_unit_test(test_byte_cap),
		cmocka_unit_test(test_connection_cap),
	};
	return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
