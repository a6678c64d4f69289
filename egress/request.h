/* SPDX-License-Identifier: MIT */
/*
 * The egress proxy's request parser: the head of one HTTP/1.x proxy request, as hostile input.
 * Pure: no syscalls. fuzz/fuzz-egress-request.c is its libFuzzer target.
 *
 * Accepted, and nothing else:
 *   CONNECT host:port HTTP/1.x            (authority-form; the port is required)
 *   METHOD http://host[:port][/path][?query] HTTP/1.x   (absolute-form, port 80 by default)
 * followed by header lines and an empty line, every line ending in CRLF. host is a name, a
 * dotted quad or a bracketed IPv6 address (host.h). Refused: origin- and asterisk-form
 * targets, other schemes, user information ("user@host"), fragments, bare LF line ends,
 * control bytes, obsolete line folding, whitespace before a field's colon, a Host header that
 * names another host or port than the target (or appears twice), two Content-Length or
 * Transfer-Encoding headers, both at once, a Transfer-Encoding other than "chunked" or on
 * HTTP/1.0, and any body framing on CONNECT.
 *
 * For an HTTP request the parser also writes the head to send upstream: the request line in
 * origin-form, a Host line naming the target, the client's header lines minus the hop-by-hop
 * ones (Connection, Proxy-Connection, Keep-Alive, Proxy-Authorization, Proxy-Authenticate,
 * Upgrade, TE, Trailer, Host), and "Connection: close", so the upstream server answers this
 * one request and nothing pipelined behind it.
 */
#pragma once

#include <stddef.h>
#include <stdint.h>

#include "host.h"

struct egr_request {
	uint8_t kind;         /* WIRE_EGRESS_KIND_CONNECT or WIRE_EGRESS_KIND_HTTP */
	struct egr_host host; /* the target's host */
	uint16_t port;        /* the target's port, never 0 */
	size_t head_len;      /* bytes of buf the head takes, through its empty line */
	size_t fwd_len;       /* bytes of the forwarded head in fwd (HTTP); 0 for CONNECT */
};

/*
 * Parses the request head at the start of buf (len bytes, borrowed; bytes after the head are
 * not looked at). For an HTTP request writes the forwarded head into fwd (fwd_cap bytes;
 * EGR_MAX_FWD always suffices). Returns:
 *   0          a whole, valid head: *out is filled;
 *   -EAGAIN    valid so far but incomplete, and more bytes could still fit the limits;
 *   -EBADMSG   malformed or refused (the list above);
 *   -E2BIG     over a limit of egress-limits.h (line, header count, head size);
 *   -ENOBUFS   fwd_cap too small (a caller's bug).
 * *out is untouched, and fwd's content undefined, on failure.
 */
int egr_request_parse(const uint8_t *buf, size_t len, struct egr_request *out, uint8_t *fwd,
		      size_t fwd_cap);
