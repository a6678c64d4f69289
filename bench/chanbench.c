/* SPDX-License-Identifier: MIT */
/*
 * bench-chanbench: what authenticating the supervisor-worker channel costs.
 *
 *   bench-chanbench [-k REPEATS] [-s SCALE] [-p none|same|split] [-m]
 *
 * Two processes (fork) over a SOCK_SEQPACKET socketpair, the channel's transport:
 *
 * - one-way, for 64 B, 4 KiB and 64 KiB payloads: the sender seals frame after frame with
 *   wire_seal() and sends each; the receiver recv()s each, wire_open()s it with the expected
 *   sequence number and checks the payload length. "raw" sends datagrams of the same length
 *   as the sealed frames (header + payload + MAC) from a prepared buffer and the receiver
 *   checks only their length, so auth/raw isolates the cost of sealing and opening.
 * - round trip, 64 B payload: ping-pong, each side opening what it receives and sealing its
 *   answer (supervisor-to-worker one way, worker-to-supervisor back), against raw echo.
 *
 * Every test uses a fixed frame count, sized for about one second per measurement on a
 * current x86-64 core (SCALE multiplies the counts). Each test is measured REPEATS times
 * (default 3), alternating auth and raw, and the median is reported. Timing is taken on the
 * receiving (one-way) or initiating (round trip) side, from the start signal to the last
 * frame. MB/s counts payload bytes only, 1 MB = 10^6 bytes.
 *
 * -p places the two processes: "none" (default) leaves it to the scheduler, as for warden's
 * supervisor and worker; "same" pins both to one CPU, so every handoff is a plain context
 * switch and the ratio shows CPU cost alone; "split" pins them to two different CPUs, so
 * every wake-up crosses CPUs (an IPI, and on a VM without halt polling a VM exit).
 *
 * -m prints tab-separated lines for scripts instead of the table:
 *   oneway  PAYLOAD_BYTES  FRAMES  AUTH_FPS  AUTH_MBPS  RAW_FPS  RAW_MBPS  AUTH/RAW(fps)
 *   rtt     PAYLOAD_BYTES  ROUNDS  AUTH_US   RAW_US    AUTH/RAW(latency)
 * Exits 1 if a frame fails to authenticate or arrives out of order.
 */
#include <errno.h>
#include <getopt.h>
#include <sched.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "wire.h"

#define CB_MAX_REPEATS 15

struct oneway_test {
	size_t payload_len;
	uint64_t frames;
};

/* Counts for about one second per measurement; see the header comment. */
static const struct oneway_test oneway_tests[] = {
	{ 64, 600000 },
	{ 4096, 200000 },
	{ 65536, 15000 },
};
#define RTT_PAYLOAD 64
#define RTT_ROUNDS 20000

static uint8_t key[WIRE_KEY_LEN];
static uint8_t payload[WIRE_MAX_PAYLOAD];

enum placement { PLACE_NONE, PLACE_SAME, PLACE_SPLIT };
static enum placement placement = PLACE_NONE;
static int cpu_a = -1, cpu_b = -1; /* the measuring side's CPU, the peer's CPU */

/* Pins the calling process to cpu; -1 leaves it alone. */
static int pin(int cpu)
{
	if (cpu < 0)
		return 0;
	cpu_set_t set;
	CPU_ZERO(&set);
	CPU_SET((size_t)cpu, &set);
	return sched_setaffinity(0, sizeof(set), &set) < 0 ? -errno : 0;
}

/* Chooses the CPUs for placement from the ones we may run on. */
static int choose_cpus(void)
{
	cpu_set_t set;
	if (placement == PLACE_NONE)
		return 0;
	if (sched_getaffinity(0, sizeof(set), &set) < 0)
		return -errno;
	for (int i = 0; i < CPU_SETSIZE; i++) {
		if (!CPU_ISSET((size_t)i, &set))
			continue;
		if (cpu_a < 0)
			cpu_a = i;
		else if (cpu_b < 0)
			cpu_b = i;
	}
	if (placement == PLACE_SAME)
		cpu_b = cpu_a;
	return cpu_a >= 0 && cpu_b >= 0 ? 0 : -ENXIO;
}

static double mono_s(void)
{
	struct timespec ts;
	(void)clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static size_t frame_len(size_t len)
{
	return WIRE_HEADER_LEN + len + WIRE_MAC_LEN;
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

/* One datagram; returns its full length (MSG_TRUNC), 0 at end of stream, or -errno. */
static ssize_t recv_one(int fd, void *buf, size_t cap)
{
	ssize_t n;
	do
		n = recv(fd, buf, cap, MSG_TRUNC);
	while (n < 0 && errno == EINTR);
	return n < 0 ? -errno : n;
}

/* Checks that datagram n of len bytes is frame seq with a payload of payload_len bytes. */
static int check_frame(struct wire_mac *mac, enum wire_dir dir, uint64_t seq, const uint8_t *buf,
		       ssize_t n, size_t payload_len)
{
	if (n < 0)
		return (int)n;
	if ((size_t)n != frame_len(payload_len))
		return -EBADMSG;
	if (!mac)
		return 0;
	struct wire_hdr h;
	struct wire_rd pl;
	int r = wire_open(mac, dir, seq, buf, (size_t)n, &h, &pl);
	if (r < 0)
		return r;
	if (h.seq != seq || pl.len != payload_len)
		return -EBADMSG;
	return 0;
}

/* Fills buf with the frame to send: sealed when mac is set, else the prepared raw bytes. */
static ssize_t make_frame(struct wire_mac *mac, enum wire_dir dir, uint64_t seq,
			  size_t payload_len, uint8_t *buf, size_t cap)
{
	if (!mac)
		return (ssize_t)frame_len(payload_len);
	return wire_seal(mac, dir, WIRE_EVENT, seq, payload, payload_len, buf, cap);
}

struct peer {
	pid_t pid;
	int fd;
};

/* Forks the other side; in the child runs fn and _exits with its result. */
static int start_peer(bool auth, size_t payload_len, uint64_t count,
		      int (*fn)(int fd, struct wire_mac *mac, size_t payload_len, uint64_t count),
		      struct peer *out)
{
	int sv[2];
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0)
		return -errno;
	pid_t pid = fork();
	if (pid < 0) {
		int r = -errno;
		(void)close(sv[0]);
		(void)close(sv[1]);
		return r;
	}
	if (pid == 0) {
		(void)close(sv[0]);
		if (pin(cpu_b) < 0)
			_exit(2);
		struct wire_mac *mac = auth ? wire_mac_new(key) : NULL;
		if (auth && !mac)
			_exit(2);
		int r = fn(sv[1], mac, payload_len, count);
		mac = wire_mac_free(mac);
		_exit(r < 0 ? 1 : 0);
	}
	(void)close(sv[1]);
	out->pid = pid;
	out->fd = sv[0];
	return 0;
}

static int finish_peer(struct peer *p)
{
	(void)close(p->fd);
	int status;
	while (waitpid(p->pid, &status, 0) < 0)
		if (errno != EINTR)
			return -errno;
	return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : -EPROTO;
}

/* The one-way sender: waits for the start byte, then sends count frames. */
static int oneway_sender(int fd, struct wire_mac *mac, size_t payload_len, uint64_t count)
{
	static uint8_t buf[WIRE_MAX_FRAME];
	if (!mac)
		memcpy(buf + WIRE_HEADER_LEN, payload, payload_len);
	char go;
	if (recv_one(fd, &go, 1) != 1)
		return -EIO;
	for (uint64_t i = 0; i < count; i++) {
		ssize_t n = make_frame(mac, WIRE_DIR_TO_SUPERVISOR, i, payload_len, buf, sizeof(buf));
		if (n < 0)
			return (int)n;
		int r = send_all(fd, buf, (size_t)n);
		if (r < 0)
			return r;
	}
	return 0;
}

/* Seconds to receive count frames of payload_len bytes, or a negative errno. */
static int run_oneway(bool auth, size_t payload_len, uint64_t count, double *out_sec)
{
	static uint8_t buf[WIRE_MAX_FRAME + 1];
	struct wire_mac *mac = auth ? wire_mac_new(key) : NULL;
	if (auth && !mac)
		return -ENOMEM;
	struct peer p;
	int r = start_peer(auth, payload_len, count, oneway_sender, &p);
	if (r < 0) {
		mac = wire_mac_free(mac);
		return r;
	}
	double t0 = mono_s();
	r = send_all(p.fd, "g", 1);
	for (uint64_t i = 0; i < count && r >= 0; i++)
		r = check_frame(mac, WIRE_DIR_TO_SUPERVISOR, i, buf,
				recv_one(p.fd, buf, sizeof(buf)), payload_len);
	double t1 = mono_s();
	int r2 = finish_peer(&p);
	mac = wire_mac_free(mac);
	if (r < 0)
		return r;
	if (r2 < 0)
		return r2;
	*out_sec = t1 - t0;
	return 0;
}

/* The round-trip responder: opens each ping and answers it, count times. */
static int rtt_responder(int fd, struct wire_mac *mac, size_t payload_len, uint64_t count)
{
	static uint8_t in[WIRE_MAX_FRAME + 1], out[WIRE_MAX_FRAME];
	if (!mac)
		memcpy(out + WIRE_HEADER_LEN, payload, payload_len);
	for (uint64_t i = 0; i < count; i++) {
		int r = check_frame(mac, WIRE_DIR_TO_WORKER, i, in, recv_one(fd, in, sizeof(in)),
				    payload_len);
		if (r < 0)
			return r;
		ssize_t n = make_frame(mac, WIRE_DIR_TO_SUPERVISOR, i, payload_len, out, sizeof(out));
		if (n < 0)
			return (int)n;
		r = send_all(fd, out, (size_t)n);
		if (r < 0)
			return r;
	}
	return 0;
}

/* Seconds for count round trips, or a negative errno. */
static int run_rtt(bool auth, size_t payload_len, uint64_t count, double *out_sec)
{
	static uint8_t in[WIRE_MAX_FRAME + 1], out[WIRE_MAX_FRAME];
	struct wire_mac *mac = auth ? wire_mac_new(key) : NULL;
	if (auth && !mac)
		return -ENOMEM;
	if (!mac)
		memcpy(out + WIRE_HEADER_LEN, payload, payload_len);
	struct peer p;
	int r = start_peer(auth, payload_len, count, rtt_responder, &p);
	if (r < 0) {
		mac = wire_mac_free(mac);
		return r;
	}
	double t0 = mono_s();
	for (uint64_t i = 0; i < count && r >= 0; i++) {
		ssize_t n = make_frame(mac, WIRE_DIR_TO_WORKER, i, payload_len, out, sizeof(out));
		r = n < 0 ? (int)n : send_all(p.fd, out, (size_t)n);
		if (r >= 0)
			r = check_frame(mac, WIRE_DIR_TO_SUPERVISOR, i, in,
					recv_one(p.fd, in, sizeof(in)), payload_len);
	}
	double t1 = mono_s();
	int r2 = finish_peer(&p);
	mac = wire_mac_free(mac);
	if (r < 0)
		return r;
	if (r2 < 0)
		return r2;
	*out_sec = t1 - t0;
	return 0;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

static double median(double *v, size_t n)
{
	qsort(v, n, sizeof(*v), cmp_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* Median seconds of repeats runs each of auth and raw, alternating. */
static int measure(int (*fn)(bool auth, size_t payload_len, uint64_t count, double *out_sec),
		   size_t payload_len, uint64_t count, unsigned repeats,
		   double *out_auth, double *out_raw)
{
	double a[CB_MAX_REPEATS], b[CB_MAX_REPEATS];
	for (unsigned i = 0; i < repeats; i++) {
		int r = fn(true, payload_len, count, &a[i]);
		if (r >= 0)
			r = fn(false, payload_len, count, &b[i]);
		if (r < 0)
			return r;
	}
	*out_auth = median(a, repeats);
	*out_raw = median(b, repeats);
	return 0;
}

static void size_name(size_t n, char *out, size_t len)
{
	if (n >= 1024 && n % 1024 == 0)
		(void)snprintf(out, len, "%zu KiB", n / 1024);
	else
		(void)snprintf(out, len, "%zu B", n);
}

static void usage(FILE *f)
{
	fprintf(f, "usage: bench-chanbench [-k REPEATS (1..%d)] [-s SCALE] [-p none|same|split] "
		   "[-m]\n", CB_MAX_REPEATS);
}

int main(int argc, char **argv)
{
	unsigned repeats = 3;
	double scale = 1.0;
	bool machine = false;
	int opt;
	while ((opt = getopt(argc, argv, "k:s:p:mh")) != -1) {
		char *end = NULL;
		switch (opt) {
		case 'k': {
			long v = strtol(optarg, &end, 10);
			if (!end || *end || end == optarg || v < 1 || v > CB_MAX_REPEATS) {
				usage(stderr);
				return 2;
			}
			repeats = (unsigned)v;
			break;
		}
		case 's':
			scale = strtod(optarg, &end);
			if (!end || *end || end == optarg || !(scale > 0 && scale <= 100)) {
				usage(stderr);
				return 2;
			}
			break;
		case 'm':
			machine = true;
			break;
		case 'p':
			if (strcmp(optarg, "none") == 0)
				placement = PLACE_NONE;
			else if (strcmp(optarg, "same") == 0)
				placement = PLACE_SAME;
			else if (strcmp(optarg, "split") == 0)
				placement = PLACE_SPLIT;
			else {
				usage(stderr);
				return 2;
			}
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (getrandom(key, sizeof(key), 0) != (ssize_t)sizeof(key) ||
	    getrandom(payload, sizeof(payload), 0) != (ssize_t)sizeof(payload)) {
		perror("bench-chanbench: getrandom");
		return 2;
	}
	int r = choose_cpus();
	if (r >= 0)
		r = pin(cpu_a);
	if (r < 0) {
		fprintf(stderr, "bench-chanbench: place on CPUs: %s\n", strerror(-r));
		return 2;
	}

	if (!machine) {
		printf("HMAC-SHA-256 frames (wire_seal/wire_open) vs raw datagrams of the same size\n"
		       "SOCK_SEQPACKET socketpair between two processes; median of %u runs each; "
		       "MB = 10^6 payload bytes\nplacement: ",
		       repeats);
		switch (placement) {
		case PLACE_NONE:
			printf("left to the scheduler\n\n");
			break;
		case PLACE_SAME:
			printf("both on CPU %d\n\n", cpu_a);
			break;
		case PLACE_SPLIT:
			printf("on CPUs %d and %d\n\n", cpu_a, cpu_b);
			break;
		}
		printf("%-10s %8s %9s %14s %10s %14s %10s %9s\n", "test", "payload", "frames",
		       "auth frames/s", "auth MB/s", "raw frames/s", "raw MB/s", "auth/raw");
	}
	for (size_t i = 0; i < sizeof(oneway_tests) / sizeof(oneway_tests[0]); i++) {
		const struct oneway_test *t = &oneway_tests[i];
		uint64_t count = (uint64_t)((double)t->frames * scale);
		if (count == 0)
			count = 1;
		double sa, sr;
		r = measure(run_oneway, t->payload_len, count, repeats, &sa, &sr);
		if (r < 0) {
			fprintf(stderr, "bench-chanbench: one-way %zu B: %s\n", t->payload_len,
				strerror(-r));
			return 1;
		}
		double fa = (double)count / sa, fr = (double)count / sr;
		double ma = fa * (double)t->payload_len / 1e6, mr = fr * (double)t->payload_len / 1e6;
		if (machine) {
			printf("oneway\t%zu\t%llu\t%.0f\t%.1f\t%.0f\t%.1f\t%.3f\n", t->payload_len,
			       (unsigned long long)count, fa, ma, fr, mr, fa / fr);
		} else {
			char sz[32];
			size_name(t->payload_len, sz, sizeof(sz));
			printf("%-10s %8s %9llu %14.0f %10.1f %14.0f %10.1f %8.2fx\n", "one-way", sz,
			       (unsigned long long)count, fa, ma, fr, mr, fa / fr);
		}
		(void)fflush(stdout);
	}

	uint64_t rounds = (uint64_t)((double)RTT_ROUNDS * scale);
	if (rounds == 0)
		rounds = 1;
	double sa, sr;
	r = measure(run_rtt, RTT_PAYLOAD, rounds, repeats, &sa, &sr);
	if (r < 0) {
		fprintf(stderr, "bench-chanbench: round trip: %s\n", strerror(-r));
		return 1;
	}
	double ua = sa / (double)rounds * 1e6, ur = sr / (double)rounds * 1e6;
	if (machine) {
		printf("rtt\t%d\t%llu\t%.2f\t%.2f\t%.3f\n", RTT_PAYLOAD, (unsigned long long)rounds,
		       ua, ur, ua / ur);
	} else {
		printf("\n%-10s %8s %9s %14s %10s %14s %10s %9s\n", "test", "payload", "rounds",
		       "auth us/rt", "", "raw us/rt", "", "auth/raw");
		printf("%-10s %8s %9llu %14.2f %10s %14.2f %10s %8.2fx\n", "round-trip", "64 B",
		       (unsigned long long)rounds, ua, "", ur, "", ua / ur);
	}
	return 0;
}
