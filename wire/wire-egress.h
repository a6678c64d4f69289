/* SPDX-License-Identifier: MIT */
/*
 * The egress channel: frames from the egress proxy (egress/) to the process that forked it.
 * The frames are the codec's own (wire.h: header, payload, HMAC-SHA-256), on a SOCK_SEQPACKET
 * socketpair of their own, under a session key of their own that the parent chose before the
 * fork. Only the proxy sends, with direction WIRE_DIR_TO_SUPERVISOR and seq counting from 0.
 * The parent treats every frame as untrusted: the proxy parses hostile bytes all day.
 *
 * docs/egress.md ("The report channel") is the normative description; change both together.
 *
 * Payloads (big-endian; `str` is a u32 length and that many bytes, as in wire.h):
 *   READY   (empty)         the proxy is confined and accepting; first frame, once
 *   FAILED  u32 err | str step
 *                           the proxy could not confine itself; instead of READY, once, last
 *   CONN    u64 start_usec | u64 duration_usec | u8 kind | str host | u16 port | u8 family |
 *           addr[16] | u8 verdict | u8 reason | str rule | u64 bytes_up | u64 bytes_down
 *                           one client connection, when it ended; after READY
 *   LIMIT   u8 which | u64 limit
 *                           a limit was reached (once per limit); after READY
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "wire.h"

/* Report types, proxy to parent: odd like every report, apart from the worker's numbers. */
enum wire_egress_type {
	WIRE_EGRESS_READY = 33,
	WIRE_EGRESS_CONN = 35,
	WIRE_EGRESS_LIMIT = 37,
	WIRE_EGRESS_FAILED = 39,
};

#define WIRE_EGRESS_MAX_HOST 253u /* a DNS name without its trailing dot; IPv6 text is shorter */
#define WIRE_EGRESS_MAX_RULE 300u /* an allow or deny entry as the proxy prints it */
#define WIRE_EGRESS_MAX_STEP 120u /* FAILED step */
#define WIRE_EGRESS_CONN_MIN_LEN (8 + 8 + 1 + 4 + 2 + 1 + 16 + 1 + 1 + 4 + 8 + 8)
#define WIRE_EGRESS_CONN_MAX_LEN (WIRE_EGRESS_CONN_MIN_LEN + WIRE_EGRESS_MAX_HOST + WIRE_EGRESS_MAX_RULE)

/* What the client asked for. */
enum wire_egress_kind {
	WIRE_EGRESS_KIND_NONE = 0,    /* no request was parsed */
	WIRE_EGRESS_KIND_CONNECT = 1, /* CONNECT host:port (a TLS tunnel) */
	WIRE_EGRESS_KIND_HTTP = 2,    /* an absolute-form HTTP/1.x request */
};

/* The policy's answer. */
enum wire_egress_verdict {
	WIRE_EGRESS_UNDECIDED = 0, /* refused before the rules were asked */
	WIRE_EGRESS_ALLOWED = 1,
	WIRE_EGRESS_DENIED = 2,
};

/* Why, or how the connection ended. The verdicts each reason may carry are in parentheses. */
enum wire_egress_reason {
	WIRE_EGRESS_OK = 1,              /* (allowed) relayed until a side closed */
	WIRE_EGRESS_DENY_RULE = 2,       /* (denied) a deny entry matched the host or an address */
	WIRE_EGRESS_NOT_ALLOWED = 3,     /* (denied) no allow entry matched */
	WIRE_EGRESS_ADDRESS = 4,         /* (denied) resolved to a refused address not listed */
	WIRE_EGRESS_SNI = 5,             /* (denied) no ClientHello, or its SNI is not the host */
	WIRE_EGRESS_BAD_REQUEST = 6,     /* (undecided) malformed or oversized request */
	WIRE_EGRESS_RESOLVE = 7,         /* (allowed) the name did not resolve */
	WIRE_EGRESS_UPSTREAM = 8,        /* (allowed) no checked address accepted a connection */
	WIRE_EGRESS_MAX_CONNECTIONS = 9, /* (undecided) refused: max_connections reached */
	WIRE_EGRESS_MAX_BYTES = 10,      /* (allowed) cut, or (undecided) refused: max_bytes */
	WIRE_EGRESS_INCOMPLETE = 11,     /* (undecided) the client left before a whole request */
	WIRE_EGRESS_ERROR = 12,          /* (any) the proxy failed (out of memory, I/O) */
};
#define WIRE_EGRESS_REASON_MAX 12u

/* Which limit a LIMIT frame reports. */
enum wire_egress_limit {
	WIRE_EGRESS_LIMIT_CONNECTIONS = 1,
	WIRE_EGRESS_LIMIT_BYTES = 2,
};

/* One connection, as CONN carries it. Strings are NUL-terminated and validated. */
struct wire_egress_conn {
	uint64_t start_usec;    /* CLOCK_REALTIME when the client connected, microseconds */
	uint64_t duration_usec; /* CLOCK_MONOTONIC from connect to close */
	uint8_t kind;           /* enum wire_egress_kind */
	char host[WIRE_EGRESS_MAX_HOST + 1]; /* lower case; IPv6 without brackets; "" for NONE */
	uint16_t port;          /* 0 only for NONE */
	uint8_t family;         /* 0 (no address), 4 or 6 */
	uint8_t addr[16];       /* IPv4 in the first 4 bytes; unused bytes are zero */
	uint8_t verdict;        /* enum wire_egress_verdict */
	uint8_t reason;         /* enum wire_egress_reason */
	char rule[WIRE_EGRESS_MAX_RULE + 1]; /* the deciding entry, "" when none */
	uint64_t bytes_up;      /* sent upstream, the forwarded request head included */
	uint64_t bytes_down;    /* sent to the client from upstream */
};

/*
 * Encodes c as a CONN payload into w. Fails (the writer's sticky failure) when a string is
 * over its limit. Does not validate the rest: the decoder does, on the other side.
 */
bool wire_put_egress_conn(struct wire_wr *w, const struct wire_egress_conn *c);

/*
 * Decodes a CONN payload, all of r. Besides the layout, it checks: kind, verdict, reason and
 * family in range and consistent (a reason only with the verdicts above; NONE with an empty
 * host and port 0, any other kind with a host and a non-zero port); host only of
 * [a-z0-9._:-]; rule only of [a-z0-9._:*\[\]/-]; the address bytes a family does not use
 * zero. Returns 0 or -EBADMSG; *out untouched on failure.
 */
int wire_get_egress_conn(struct wire_rd *r, struct wire_egress_conn *out);

/* LIMIT: which (enum wire_egress_limit) and the limit's value. */
bool wire_put_egress_limit(struct wire_wr *w, uint8_t which, uint64_t limit);
int wire_get_egress_limit(struct wire_rd *r, uint8_t *out_which, uint64_t *out_limit);

/*
 * FAILED: err is an errno (1..4095), step the name of the confinement step that failed
 * (1..WIRE_EGRESS_MAX_STEP bytes of printable ASCII). The decoder stores step into
 * out_step[WIRE_EGRESS_MAX_STEP + 1], NUL-terminated.
 */
bool wire_put_egress_failed(struct wire_wr *w, uint32_t err, const char *step, size_t len);
int wire_get_egress_failed(struct wire_rd *r, uint32_t *out_err,
			   char out_step[WIRE_EGRESS_MAX_STEP + 1]);
