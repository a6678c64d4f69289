/* SPDX-License-Identifier: MIT */
/*
 * egress: the proxy that is a sandbox's only way out (docs/egress.md).
 *
 * The parent (the supervisor, in phase 2 of #16) makes a listening AF_UNIX stream socket,
 * whose every accepted connection is one client connection relayed byte for byte from
 * inside the sandbox, and a SOCK_SEQPACKET socketpair for reports; chooses a session key;
 * forks; and the child calls egr_proxy_main(), which confines itself, serves until the parent
 * closes its end, and returns the child's exit status. The parent reads the reports with an
 * egr_reader, treating every frame as untrusted, and never parses a byte of HTTP or TLS.
 *
 * The proxy's parts, each usable alone: request.h (the request parser), hello.h (the
 * ClientHello reader), match.h (allow and deny entries), host.h (names, addresses and their
 * classes), egress-limits.h (every limit).
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "egress-jail.h"
#include "egress-limits.h"
#include "host.h"
#include "match.h"
#include "wire-egress.h"
#include "wire.h"

/* No limit, for max_connections and max_bytes. */
#define EGR_UNLIMITED UINT64_MAX

struct egr_proxy_config {
	int listen_fd;  /* borrowed: a listening AF_UNIX SOCK_STREAM socket */
	int report_fd;  /* borrowed: the proxy's end of a SOCK_SEQPACKET socketpair */
	uint8_t key[WIRE_KEY_LEN];      /* the report channel's session key */
	const struct egr_rules *rules;  /* borrowed */
	uint64_t max_connections;       /* client connections accepted over the proxy's life */
	uint64_t max_bytes;             /* bytes relayed both ways, all connections together */
	struct sbx_egress_jail jail;    /* how to confine the proxy */
};

/* Exit statuses of the proxy process. */
enum egr_exit {
	EGR_EXIT_DONE = 0,     /* the parent closed the report channel (or wrote to it) */
	EGR_EXIT_CONFINE = 1,  /* confinement failed; FAILED was sent */
	EGR_EXIT_ERROR = 2,    /* the report channel or the listener failed */
};

/*
 * The proxy process's body: ignores SIGPIPE, confines the process (sbx_egress_jail_apply),
 * reports READY (or FAILED, and returns EGR_EXIT_CONFINE), then serves client connections
 * in one poll loop until the parent closes the report channel. Each connection is reported
 * in a CONN frame when it ends; a limit reached, in a LIMIT frame, once. Never returns to
 * serve anything else: the caller must _exit() with the result. Every descriptor the caller
 * does not want the proxy to hold must be closed before.
 */
int egr_proxy_main(const struct egr_proxy_config *cfg);

/*
 * Resolves host: an IP literal is its own address; a name goes to getaddrinfo(3). Stores at
 * most cap distinct addresses, canonical (host.h), in the resolver's order, and returns how
 * many (>= 1), or -ENOENT (no address), -EAGAIN (a temporary failure), -EIO (any other).
 */
int egr_resolve(const struct egr_host *host, struct egr_ip *out, size_t cap);

/* ---- the parent's side -------------------------------------------------------------------- */

/* One decoded report. */
struct egr_report {
	uint8_t type; /* enum wire_egress_type */
	struct wire_egress_conn conn;              /* CONN */
	uint8_t limit_which;                       /* LIMIT */
	uint64_t limit;                            /* LIMIT */
	uint32_t failed_err;                       /* FAILED */
	char failed_step[WIRE_EGRESS_MAX_STEP + 1]; /* FAILED */
};

/* The parent's reading state: the MAC, the next seq, what was seen. */
struct egr_reader {
	struct wire_mac *mac;
	uint64_t seq;
	bool ready;        /* READY seen */
	bool finished;     /* FAILED seen: nothing may follow */
	uint8_t limits;    /* bit per enum wire_egress_limit already reported */
};

/* Keys a reader with key (copied into the MAC). Returns 0 or -ENOMEM. */
int egr_reader_init(struct egr_reader *rd, const uint8_t key[WIRE_KEY_LEN]);

/* Releases the reader's MAC. NULL-safe, idempotent. */
void egr_reader_done(struct egr_reader *rd);

/*
 * Receives one frame from fd (borrowed, SOCK_SEQPACKET, blocking or not), authenticates it,
 * checks it is permitted now and decodes it into *out. Returns 0; -EAGAIN (non-blocking and
 * nothing there); -EPIPE (the proxy closed its end); -EBADMSG (truncated datagram, ancillary
 * data, bad MAC or layout); -EPROTO (authentic but out of order: anything before READY but
 * FAILED, a second READY or FAILED, anything after FAILED, a LIMIT twice); another -errno from
 * recvmsg. After any error but -EAGAIN the reader must not be used again. *out untouched on
 * failure.
 */
int egr_reader_recv(struct egr_reader *rd, int fd, struct egr_report *out);

/*
 * One line describing how a connection ended, for stderr: "denied evil.example:443 (not in
 * allow)", "allowed api.example.com:443 by *.example.com (1200 bytes up, 5300 down)". Writes
 * at most cap bytes, NUL-terminated, truncating. c must have been decoded (its strings are
 * validated).
 */
void egr_conn_describe(const struct wire_egress_conn *c, char *buf, size_t cap);
