/* SPDX-License-Identifier: MIT */
/*
 * The egress channel's payloads (wire-egress.h): encoders for the proxy, decoders that the
 * parent runs on what a proxy that parses hostile input all day sent it.
 */
#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "wire-egress.h"
#include "wire-text.h"

static bool host_byte(uint8_t b)
{
	return (b >= 'a' && b <= 'z') || (b >= '0' && b <= '9') || b == '.' || b == '_' ||
	       b == '-' || b == ':';
}

static bool rule_byte(uint8_t b)
{
	return host_byte(b) || b == '*' || b == '[' || b == ']' || b == '/';
}

static bool step_byte(uint8_t b)
{
	return b >= 0x20 && b <= 0x7e;
}

/*
 * A str field into out[max + 1]: at most max bytes, each satisfying pred, NUL-terminated.
 * r and out untouched on failure.
 */
static bool get_text(struct wire_rd *r, size_t max, bool (*pred)(uint8_t b), char *out)
{
	struct wire_rd save = *r, body;
	if (!wire_get_sub(r, &body) || body.len > max || !wire_all(&body, pred)) {
		*r = save;
		return false;
	}
	size_t n = body.len;
	if (!wire_get_bytes(&body, out, n)) {
		*r = save;
		return false;
	}
	out[n] = '\0';
	return true;
}

bool wire_put_egress_conn(struct wire_wr *w, const struct wire_egress_conn *c)
{
	size_t host_len = strnlen(c->host, sizeof(c->host));
	size_t rule_len = strnlen(c->rule, sizeof(c->rule));
	return wire_put_u64(w, c->start_usec) && wire_put_u64(w, c->duration_usec) &&
	       wire_put_u8(w, c->kind) &&
	       wire_put_str(w, c->host, host_len, WIRE_EGRESS_MAX_HOST) &&
	       wire_put_u16(w, c->port) && wire_put_u8(w, c->family) &&
	       wire_put_bytes(w, c->addr, sizeof(c->addr)) && wire_put_u8(w, c->verdict) &&
	       wire_put_u8(w, c->reason) &&
	       wire_put_str(w, c->rule, rule_len, WIRE_EGRESS_MAX_RULE) &&
	       wire_put_u64(w, c->bytes_up) && wire_put_u64(w, c->bytes_down);
}

/* Which verdicts each reason may carry (bit v set: verdict v allowed). */
static const uint8_t reason_verdicts[WIRE_EGRESS_REASON_MAX + 1] = {
	[WIRE_EGRESS_OK] = 1u << WIRE_EGRESS_ALLOWED,
	[WIRE_EGRESS_DENY_RULE] = 1u << WIRE_EGRESS_DENIED,
	[WIRE_EGRESS_NOT_ALLOWED] = 1u << WIRE_EGRESS_DENIED,
	[WIRE_EGRESS_ADDRESS] = 1u << WIRE_EGRESS_DENIED,
	[WIRE_EGRESS_SNI] = 1u << WIRE_EGRESS_DENIED,
	[WIRE_EGRESS_BAD_REQUEST] = 1u << WIRE_EGRESS_UNDECIDED,
	[WIRE_EGRESS_RESOLVE] = 1u << WIRE_EGRESS_ALLOWED,
	[WIRE_EGRESS_UPSTREAM] = 1u << WIRE_EGRESS_ALLOWED,
	[WIRE_EGRESS_MAX_CONNECTIONS] = 1u << WIRE_EGRESS_UNDECIDED,
	[WIRE_EGRESS_MAX_BYTES] = 1u << WIRE_EGRESS_ALLOWED | 1u << WIRE_EGRESS_UNDECIDED,
	[WIRE_EGRESS_INCOMPLETE] = 1u << WIRE_EGRESS_UNDECIDED,
	[WIRE_EGRESS_ERROR] = 1u << WIRE_EGRESS_UNDECIDED | 1u << WIRE_EGRESS_ALLOWED |
			      1u << WIRE_EGRESS_DENIED,
};

static bool conn_consistent(const struct wire_egress_conn *c)
{
	if (c->kind > WIRE_EGRESS_KIND_HTTP || c->verdict > WIRE_EGRESS_DENIED ||
	    c->reason < 1 || c->reason > WIRE_EGRESS_REASON_MAX)
		return false;
	if (!(reason_verdicts[c->reason] & (1u << c->verdict)))
		return false;
	bool has_host = c->host[0] != '\0';
	if (c->kind == WIRE_EGRESS_KIND_NONE ? (has_host || c->port != 0)
					     : (!has_host || c->port == 0))
		return false;
	/* Without a request there is nothing to decide. */
	if (c->kind == WIRE_EGRESS_KIND_NONE && c->verdict != WIRE_EGRESS_UNDECIDED)
		return false;
	size_t used;
	switch (c->family) {
	case 0:
		used = 0;
		break;
	case 4:
		used = 4;
		break;
	case 6:
		used = 16;
		break;
	default:
		return false;
	}
	for (size_t i = used; i < sizeof(c->addr); i++)
		if (c->addr[i] != 0)
			return false;
	return true;
}

int wire_get_egress_conn(struct wire_rd *r, struct wire_egress_conn *out)
{
	struct wire_egress_conn c;
	memset(&c, 0, sizeof(c));
	bool ok = wire_get_u64(r, &c.start_usec) && wire_get_u64(r, &c.duration_usec) &&
		  wire_get_u8(r, &c.kind) &&
		  get_text(r, WIRE_EGRESS_MAX_HOST, host_byte, c.host) &&
		  wire_get_u16(r, &c.port) && wire_get_u8(r, &c.family) &&
		  wire_get_bytes(r, c.addr, sizeof(c.addr)) && wire_get_u8(r, &c.verdict) &&
		  wire_get_u8(r, &c.reason) &&
		  get_text(r, WIRE_EGRESS_MAX_RULE, rule_byte, c.rule) &&
		  wire_get_u64(r, &c.bytes_up) && wire_get_u64(r, &c.bytes_down) && wire_done(r);
	if (!ok || !conn_consistent(&c))
		return -EBADMSG;
	*out = c;
	return 0;
}

bool wire_put_egress_limit(struct wire_wr *w, uint8_t which, uint64_t limit)
{
	return wire_put_u8(w, which) && wire_put_u64(w, limit);
}

int wire_get_egress_limit(struct wire_rd *r, uint8_t *out_which, uint64_t *out_limit)
{
	uint8_t which;
	uint64_t limit;
	if (!wire_get_u8(r, &which) || !wire_get_u64(r, &limit) || !wire_done(r))
		return -EBADMSG;
	if (which != WIRE_EGRESS_LIMIT_CONNECTIONS && which != WIRE_EGRESS_LIMIT_BYTES)
		return -EBADMSG;
	*out_which = which;
	*out_limit = limit;
	return 0;
}

bool wire_put_egress_failed(struct wire_wr *w, uint32_t err, const char *step, size_t len)
{
	return wire_put_u32(w, err) && wire_put_str(w, step, len, WIRE_EGRESS_MAX_STEP);
}

int wire_get_egress_failed(struct wire_rd *r, uint32_t *out_err,
			   char out_step[WIRE_EGRESS_MAX_STEP + 1])
{
	uint32_t err;
	char step[WIRE_EGRESS_MAX_STEP + 1];
	if (!wire_get_u32(r, &err) || err < 1 || err > 4095 ||
	    !get_text(r, WIRE_EGRESS_MAX_STEP, step_byte, step) || !step[0] || !wire_done(r))
		return -EBADMSG;
	*out_err = err;
	memcpy(out_step, step, sizeof(step));
	return 0;
}
