/* SPDX-License-Identifier: MIT */
/*
 * The ClientHello reader (hello.h). Records are unwrapped into one bounded buffer through the
 * writer, and the message is then read field by field with sub-cursors (RFC 8446 section
 * 4.1.2, RFC 6066 section 3): every vector's length is checked against what encloses it, and
 * a field that ends early or leaves bytes over rejects the whole message.
 */
#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "hello.h"
#include "wire-text.h"

#define TLS_CONTENT_HANDSHAKE 22u
#define TLS_HANDSHAKE_CLIENT_HELLO 1u
#define TLS_EXT_SERVER_NAME 0u
#define TLS_SNI_HOST_NAME 0u
#define TLS_RANDOM_LEN 32u
#define TLS_MAX_SESSION_ID 32u

/* A vector with a one- or two-byte length, as a sub-cursor. */
static bool get_vec8(struct wire_rd *r, struct wire_rd *out)
{
	struct wire_rd save = *r;
	uint8_t n;
	if (!wire_get_u8(r, &n) || !wire_get_view(r, n, out)) {
		*r = save;
		return false;
	}
	return true;
}

static bool get_vec16(struct wire_rd *r, struct wire_rd *out)
{
	struct wire_rd save = *r;
	uint16_t n;
	if (!wire_get_u16(r, &n) || !wire_get_view(r, n, out)) {
		*r = save;
		return false;
	}
	return true;
}

/* server_name extension data: one host_name entry, a DNS name. */
static int read_server_name(struct wire_rd data, struct egr_host *out)
{
	struct wire_rd list, name;
	uint8_t type;
	if (!get_vec16(&data, &list) || !wire_done(&data) || list.len == 0)
		return -EBADMSG;
	if (!wire_get_u8(&list, &type) || type != TLS_SNI_HOST_NAME || !get_vec16(&list, &name) ||
	    !wire_done(&list))
		return -EBADMSG;
	struct egr_host h;
	if (name.len == 0 || egr_host_parse(&name, &h) < 0 || h.type != EGR_HOST_NAME)
		return -EBADMSG;
	*out = h;
	return 0;
}

/* The ClientHello body, all of body. */
static int read_client_hello(struct wire_rd body, struct egr_host *out_sni, bool *out_has_sni)
{
	uint16_t version;
	struct wire_rd random, session, suites, compression, exts;
	if (!wire_get_u16(&body, &version) || (version >> 8) != 3 ||
	    !wire_get_view(&body, TLS_RANDOM_LEN, &random) || !get_vec8(&body, &session) ||
	    session.len > TLS_MAX_SESSION_ID || !get_vec16(&body, &suites) || suites.len == 0 ||
	    suites.len % 2 != 0 || !get_vec8(&body, &compression) || compression.len == 0)
		return -EBADMSG;
	if (wire_done(&body)) {
		/* No extensions at all (TLS 1.0 style): no name either. */
		*out_has_sni = false;
		return 0;
	}
	if (!get_vec16(&body, &exts) || !wire_done(&body))
		return -EBADMSG;

	uint16_t seen[EGR_MAX_HELLO_EXTS];
	size_t n_seen = 0;
	bool has_sni = false;
	struct egr_host sni;
	while (!wire_done(&exts)) {
		uint16_t type;
		struct wire_rd data;
		if (!wire_get_u16(&exts, &type) || !get_vec16(&exts, &data) ||
		    n_seen == EGR_MAX_HELLO_EXTS)
			return -EBADMSG;
		for (size_t i = 0; i < n_seen; i++)
			if (seen[i] == type)
				return -EBADMSG; /* RFC 8446: no extension type twice */
		seen[n_seen++] = type;
		if (type == TLS_EXT_SERVER_NAME) {
			int r = read_server_name(data, &sni);
			if (r < 0)
				return r;
			has_sni = true;
		}
	}
	if (has_sni)
		*out_sni = sni;
	*out_has_sni = has_sni;
	return 0;
}

int egr_hello_sni(const uint8_t *buf, size_t len, struct egr_host *out_sni, bool *out_has_sni)
{
	bool capped = len >= EGR_HELLO_BUF;
	struct wire_rd r;
	wire_rd_init(&r, buf, capped ? EGR_HELLO_BUF : len);
	int incomplete = capped ? -E2BIG : -EAGAIN;

	/* The handshake bytes, unwrapped from their records: 4-byte header and the message. */
	uint8_t msg[4 + EGR_MAX_HELLO];
	struct wire_wr w;
	wire_wr_init(&w, msg, sizeof(msg));
	for (unsigned n = 0; n < EGR_MAX_HELLO_RECORDS; n++) {
		uint8_t type;
		uint16_t version, frag_len;
		struct wire_rd frag;
		if (r.len < EGR_TLS_RECORD_HEADER)
			return incomplete;
		if (!wire_get_u8(&r, &type) || type != TLS_CONTENT_HANDSHAKE ||
		    !wire_get_u16(&r, &version) || (version >> 8) != 3 ||
		    !wire_get_u16(&r, &frag_len) || frag_len == 0 ||
		    frag_len > EGR_TLS_MAX_FRAGMENT)
			return -EBADMSG;
		if (!wire_get_view(&r, frag_len, &frag))
			return incomplete;
		if (!wire_put_bytes(&w, frag.p, frag.len))
			return -E2BIG;

		struct wire_rd m, body;
		uint8_t hs_type;
		uint32_t hs_len;
		wire_rd_init(&m, msg, w.len);
		if (w.len < 4)
			continue;
		if (!wire_get_u8(&m, &hs_type) || hs_type != TLS_HANDSHAKE_CLIENT_HELLO ||
		    !wire_get_u24(&m, &hs_len))
			return -EBADMSG;
		if (hs_len > EGR_MAX_HELLO)
			return -E2BIG;
		if (m.len < hs_len)
			continue;
		/* A client's first flight holds the ClientHello and nothing else. */
		if (m.len > hs_len || !wire_get_view(&m, hs_len, &body))
			return -EBADMSG;
		return read_client_hello(body, out_sni, out_has_sni);
	}
	return -E2BIG;
}
