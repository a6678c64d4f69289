/* SPDX-License-Identifier: MIT */
/*
 * The request parser (request.h). The head is read line by line through the bounded reader;
 * each line is split into views with explicit lengths, never scanned for a NUL, and nothing
 * of it is used until the whole head has parsed.
 */
#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "request.h"
#include "wire-egress.h"
#include "wire-text.h"

#define IPV6_AUTHORITY_MAX 47u /* [ + 45 + ] */

/* ---- byte classes (RFC 9110 section 5.6.2, 5.5) ----------------------------------------- */

static bool is_alnum(uint8_t b)
{
	return (b >= 'a' && b <= 'z') || (b >= 'A' && b <= 'Z') || (b >= '0' && b <= '9');
}

static bool is_digit(uint8_t b)
{
	return b >= '0' && b <= '9';
}

static bool tchar(uint8_t b)
{
	return is_alnum(b) || (b && strchr("!#$%&'*+-.^_`|~", b));
}

static bool vchar(uint8_t b)
{
	return b > 0x20 && b < 0x7f;
}

/* What a line may hold: HTAB, SP, visible ASCII and obs-text; no other control byte. */
static bool line_byte(uint8_t b)
{
	return b == '\t' || (b >= 0x20 && b != 0x7f);
}

static bool ows(uint8_t b)
{
	return b == ' ' || b == '\t';
}

static bool not_colon(uint8_t b)
{
	return b != ':';
}

static bool authority_byte(uint8_t b)
{
	return vchar(b) && b != '/' && b != '?' && b != '#';
}

static bool not_at(uint8_t b)
{
	return b != '@';
}

static bool not_hash(uint8_t b)
{
	return b != '#';
}

/* ---- lines --------------------------------------------------------------------------------- */

/*
 * The next line without its CRLF. more: whether bytes beyond r could still arrive within the
 * head limit. -EAGAIN when the line is not complete yet, -E2BIG when it cannot be.
 */
static int take_line(struct wire_rd *r, bool more, struct wire_rd *out)
{
	struct wire_rd line;
	if (!wire_get_until(r, '\n', EGR_MAX_LINE + 1, &line)) {
		if (r->len > EGR_MAX_LINE + 1)
			return -E2BIG;
		return more ? -EAGAIN : -E2BIG;
	}
	struct wire_rd body, cr = line;
	if (line.len == 0 || !wire_get_view(&cr, line.len - 1, &body) || !wire_eq_ci(&cr, "\r", 1))
		return -EBADMSG; /* a bare LF */
	if (!wire_all(&body, line_byte))
		return -EBADMSG;
	*out = body;
	return 0;
}

/* ---- targets ------------------------------------------------------------------------------- */

/*
 * host[:port] or [v6][:port], all of a. The port, when present, is 1..65535 in decimal without
 * a leading zero. Outputs written only on success.
 */
static int parse_authority(const struct wire_rd *a, struct egr_host *out_host, uint16_t *out_port,
			   bool *out_has_port)
{
	struct wire_rd t = *a, h;
	uint8_t first;
	if (!wire_peek_u8(&t, &first))
		return -EBADMSG;
	if (first == '[') {
		struct wire_rd whole = t, inside;
		if (!wire_get_until(&t, ']', IPV6_AUTHORITY_MAX, &inside) ||
		    !wire_get_view(&whole, inside.len + 1, &h))
			return -EBADMSG;
	} else if (!wire_get_while(&t, not_colon, EGR_MAX_HOST + 1, &h)) {
		return -EBADMSG;
	}
	struct egr_host host;
	if (egr_host_parse(&h, &host) < 0)
		return -EBADMSG;

	uint16_t port = 0;
	bool has_port = !wire_done(&t);
	if (has_port) {
		struct wire_rd digits;
		uint8_t d0;
		if (!wire_get_lit(&t, ":", 1, false) || !wire_get_while(&t, is_digit, 5, &digits) ||
		    !wire_done(&t) || !wire_peek_u8(&digits, &d0) || d0 == '0')
			return -EBADMSG;
		uint32_t v = 0;
		uint8_t d;
		while (wire_get_u8(&digits, &d))
			v = v * 10 + (uint32_t)(d - '0');
		if (v > 65535)
			return -EBADMSG;
		port = (uint16_t)v;
	}
	*out_host = host;
	*out_port = port;
	*out_has_port = has_port;
	return 0;
}

/* ---- headers ------------------------------------------------------------------------------- */

/* Header fields a proxy consumes or must not pass on (hop-by-hop, RFC 9110 section 7.6.1). */
static const char *const dropped_fields[] = {
	"connection", "proxy-connection", "keep-alive", "proxy-authorization",
	"proxy-authenticate", "upgrade", "te", "trailer", "host",
};

static bool field_is(const struct wire_rd *name, const char *s)
{
	return wire_eq_ci(name, s, strlen(s));
}

static bool field_dropped(const struct wire_rd *name)
{
	for (size_t i = 0; i < sizeof(dropped_fields) / sizeof(dropped_fields[0]); i++)
		if (field_is(name, dropped_fields[i]))
			return true;
	return false;
}

static bool put_view(struct wire_wr *w, const struct wire_rd *v)
{
	return wire_put_bytes(w, v->p, v->len);
}

static bool put_text(struct wire_wr *w, const char *s)
{
	return wire_put_bytes(w, s, strlen(s));
}

/* Writes host[:port] as an authority: IPv6 in brackets, the port unless it is the default. */
static bool put_authority(struct wire_wr *w, const struct egr_host *h, uint16_t port,
			  uint16_t default_port)
{
	bool ok = true;
	if (h->type == EGR_HOST_IPV6)
		ok = put_text(w, "[") && wire_put_bytes(w, h->text, h->text_len) && put_text(w, "]");
	else
		ok = wire_put_bytes(w, h->text, h->text_len);
	if (ok && port != default_port) {
		char digits[6];
		size_t n = 0;
		char rev[6];
		for (unsigned v = port; v; v /= 10)
			rev[n++] = (char)('0' + v % 10);
		for (size_t i = 0; i < n; i++)
			digits[i] = rev[n - 1 - i];
		ok = put_text(w, ":") && wire_put_bytes(w, digits, n);
	}
	return ok;
}

/* What the header lines said, for the checks made once they are all read. */
struct head_state {
	unsigned n_host, n_length, n_encoding;
};

/*
 * One header line of a request to (host, port): checks it, and for HTTP copies it to w unless
 * it is dropped.
 */
static int parse_field(struct wire_rd line, const struct egr_request *req, bool http10,
		       struct head_state *st, struct wire_wr *w)
{
	struct wire_rd name, value;
	uint8_t first;
	if (wire_peek_u8(&line, &first) && ows(first))
		return -EBADMSG; /* obsolete line folding */
	if (!wire_get_while(&line, tchar, EGR_MAX_FIELD_NAME, &name) || name.len == 0 ||
	    !wire_get_lit(&line, ":", 1, false))
		return -EBADMSG;
	if (!wire_get_while(&line, ows, EGR_MAX_LINE, &value))
		return -EBADMSG;
	value = line;
	wire_trim_end(&value, ows);
	bool connect = req->kind == WIRE_EGRESS_KIND_CONNECT;

	if (field_is(&name, "host")) {
		struct egr_host h;
		uint16_t port;
		bool has_port;
		uint16_t default_port = connect ? 443 : 80;
		if (++st->n_host > 1 || parse_authority(&value, &h, &port, &has_port) < 0 ||
		    !egr_host_equal(&h, &req->host) || (has_port ? port : default_port) != req->port)
			return -EBADMSG;
	} else if (field_is(&name, "content-length")) {
		struct wire_rd v = value, digits;
		if (connect || ++st->n_length > 1 ||
		    !wire_get_while(&v, is_digit, EGR_MAX_CONTENT_LENGTH_DIGITS, &digits) ||
		    digits.len == 0 || !wire_done(&v))
			return -EBADMSG;
	} else if (field_is(&name, "transfer-encoding")) {
		if (connect || http10 || ++st->n_encoding > 1 || !wire_eq_ci(&value, "chunked", 7))
			return -EBADMSG;
	}
	if (connect || field_dropped(&name))
		return 0;
	bool ok = put_view(w, &name) && put_text(w, ": ") && put_view(w, &value) &&
		  put_text(w, "\r\n");
	return ok ? 0 : -ENOBUFS;
}

/* ---- the request line ----------------------------------------------------------------------- */

/*
 * Parses the request line into req (kind, host, port) and, for HTTP, writes the forwarded
 * request line and Host line to w.
 */
static int parse_request_line(struct wire_rd line, struct egr_request *req, bool *out_http10,
			      struct wire_wr *w)
{
	struct wire_rd method, target, version;
	if (!wire_get_while(&line, tchar, EGR_MAX_METHOD, &method) || method.len == 0 ||
	    !wire_get_lit(&line, " ", 1, false) ||
	    !wire_get_until(&line, ' ', EGR_MAX_LINE, &target) || target.len == 0 ||
	    !wire_all(&target, vchar))
		return -EBADMSG;
	version = line;
	bool http10;
	struct wire_rd v11 = version, v10 = version, m = method;
	if (wire_get_lit(&v11, "HTTP/1.1", 8, false) && wire_done(&v11))
		http10 = false;
	else if (wire_get_lit(&v10, "HTTP/1.0", 8, false) && wire_done(&v10))
		http10 = true;
	else
		return -EBADMSG;

	bool has_port;
	/* Methods are case-sensitive: only "CONNECT" is CONNECT. */
	if (wire_get_lit(&m, "CONNECT", 7, false) && wire_done(&m)) {
		if (parse_authority(&target, &req->host, &req->port, &has_port) < 0 || !has_port)
			return -EBADMSG;
		req->kind = WIRE_EGRESS_KIND_CONNECT;
		*out_http10 = http10;
		return 0;
	}

	struct wire_rd authority, path;
	if (!wire_get_lit(&target, "http://", 7, true) ||
	    !wire_get_while(&target, authority_byte, EGR_MAX_LINE, &authority) ||
	    authority.len == 0 || !wire_all(&authority, not_at))
		return -EBADMSG;
	path = target;
	if (!wire_all(&path, not_hash))
		return -EBADMSG;
	if (parse_authority(&authority, &req->host, &req->port, &has_port) < 0)
		return -EBADMSG;
	if (!has_port)
		req->port = 80;
	req->kind = WIRE_EGRESS_KIND_HTTP;
	*out_http10 = http10;

	uint8_t first = 0;
	bool slash = wire_peek_u8(&path, &first) && first == '/';
	bool ok = put_view(w, &method) && put_text(w, " ") && (slash || put_text(w, "/")) &&
		  put_view(w, &path) && put_text(w, " ") && put_view(w, &version) &&
		  put_text(w, "\r\nHost: ") && put_authority(w, &req->host, req->port, 80) &&
		  put_text(w, "\r\n");
	return ok ? 0 : -ENOBUFS;
}

int egr_request_parse(const uint8_t *buf, size_t len, struct egr_request *out, uint8_t *fwd,
		      size_t fwd_cap)
{
	struct wire_rd all;
	bool more = len < EGR_MAX_HEAD;
	wire_rd_init(&all, buf, more ? len : EGR_MAX_HEAD);
	size_t window = all.len;

	struct wire_wr w;
	wire_wr_init(&w, fwd, fwd ? fwd_cap : 0);
	struct egr_request req;
	memset(&req, 0, sizeof(req));
	struct wire_rd line;
	bool http10 = false;
	int r = take_line(&all, more, &line);
	if (r < 0)
		return r;
	r = parse_request_line(line, &req, &http10, &w);
	if (r < 0)
		return r;

	struct head_state st = { 0 };
	for (unsigned n = 0;; n++) {
		r = take_line(&all, more, &line);
		if (r < 0)
			return r;
		if (line.len == 0)
			break;
		if (n == EGR_MAX_HEADERS)
			return -E2BIG;
		r = parse_field(line, &req, http10, &st, &w);
		if (r < 0)
			return r;
	}
	if (st.n_length && st.n_encoding)
		return -EBADMSG;
	if (req.kind == WIRE_EGRESS_KIND_HTTP) {
		if (!put_text(&w, "Connection: close\r\n\r\n"))
			return -ENOBUFS;
		req.fwd_len = w.len;
	}
	req.head_len = window - all.len;
	*out = req;
	return 0;
}
