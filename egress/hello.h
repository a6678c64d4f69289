/* SPDX-License-Identifier: MIT */
/*
 * The TLS ClientHello reader: the first bytes a client sends into a CONNECT tunnel, as hostile
 * input, for the server name it asks for (SNI, RFC 6066). Pure: no syscalls.
 * fuzz/fuzz-egress-hello.c is its libFuzzer target.
 *
 * The bytes must be TLS handshake records (content type 22, version 3.x, 1..16384 bytes each,
 * at most EGR_MAX_HELLO_RECORDS of them) that carry exactly one handshake message, a
 * ClientHello of at most EGR_MAX_HELLO bytes, and nothing after it. Its fields are read in
 * order with every length checked against what encloses it: legacy version, random, session
 * id (0..32), cipher suites (an even, non-zero length), compression methods (1..255), and
 * optionally extensions, none of which may appear twice. A server_name extension must hold
 * exactly one host_name entry, which must be a DNS name (host.h; RFC 6066 forbids address
 * literals there).
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "host.h"

/*
 * Reads the ClientHello at the start of buf (len bytes, borrowed). Returns:
 *   0          a whole, valid ClientHello: *out_has_sni tells whether it named a server, and
 *              if it did *out_sni is that name (canonical, host.h);
 *   -EAGAIN    valid so far but incomplete, within the limits;
 *   -EBADMSG   not a ClientHello, or malformed;
 *   -E2BIG     over a limit (message size, record count, EGR_HELLO_BUF bytes buffered).
 * Outputs untouched on failure.
 */
int egr_hello_sni(const uint8_t *buf, size_t len, struct egr_host *out_sni, bool *out_has_sni);
