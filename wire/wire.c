/* SPDX-License-Identifier: MIT */
/*
 * The frame codec: one bounded reader, one writer, HMAC-SHA-256 frames.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "sha256.h"
#include "wire.h"

/* ---- reader ------------------------------------------------------------------------------ */

void wire_rd_init(struct wire_rd *r, const void *p, size_t len)
{
	r->p = p;
	r->len = len;
}

/* The one place that advances over untrusted bytes: checks n <= len first. */
static bool rd_take(struct wire_rd *r, size_t n, const uint8_t **out)
{
	if (n > r->len)
		return false;
	*out = r->p;
	r->p += n;
	r->len -= n;
	return true;
}

static bool rd_be(struct wire_rd *r, size_t n, uint64_t *out)
{
	const uint8_t *b;
	if (!rd_take(r, n, &b))
		return false;
	uint64_t v = 0;
	for (size_t i = 0; i < n; i++)
		v = (v << 8) | b[i];
	*out = v;
	return true;
}

bool wire_get_u8(struct wire_rd *r, uint8_t *out)
{
	uint64_t v;
	if (!rd_be(r, 1, &v))
		return false;
	*out = (uint8_t)v;
	return true;
}

bool wire_get_u16(struct wire_rd *r, uint16_t *out)
{
	uint64_t v;
	if (!rd_be(r, 2, &v))
		return false;
	*out = (uint16_t)v;
	return true;
}

bool wire_get_u32(struct wire_rd *r, uint32_t *out)
{
	uint64_t v;
	if (!rd_be(r, 4, &v))
		return false;
	*out = (uint32_t)v;
	return true;
}

bool wire_get_u64(struct wire_rd *r, uint64_t *out)
{
	return rd_be(r, 8, out);
}

bool wire_get_bytes(struct wire_rd *r, void *out, size_t n)
{
	const uint8_t *b;
	if (!rd_take(r, n, &b))
		return false;
	if (n)
		memcpy(out, b, n);
	return true;
}

bool wire_get_view(struct wire_rd *r, size_t n, struct wire_rd *out)
{
	const uint8_t *b;
	if (!rd_take(r, n, &b))
		return false;
	wire_rd_init(out, b, n);
	return true;
}

bool wire_get_sub(struct wire_rd *r, struct wire_rd *out)
{
	struct wire_rd save = *r;
	uint32_t n;
	if (!wire_get_u32(r, &n) || !wire_get_view(r, n, out)) {
		*r = save;
		return false;
	}
	return true;
}

/*
 * wire_get_str, telling a malformed field (-EBADMSG) from a copy that could not be allocated
 * (-ENOMEM): the payload decoders below return that difference, so that a receiver never
 * blames its own shortage of memory on the peer.
 */
static int get_str(struct wire_rd *r, size_t max, char **out)
{
	struct wire_rd save = *r, body;
	if (!wire_get_sub(r, &body) || body.len > max || memchr(body.p, 0, body.len)) {
		*r = save;
		return -EBADMSG;
	}
	char *s = malloc(body.len + 1);
	if (!s) {
		*r = save;
		return -ENOMEM;
	}
	if (body.len)
		memcpy(s, body.p, body.len);
	s[body.len] = '\0';
	*out = s;
	return 0;
}

bool wire_get_str(struct wire_rd *r, size_t max, char **out)
{
	return get_str(r, max, out) == 0;
}

bool wire_done(const struct wire_rd *r)
{
	return r->len == 0;
}

/* ---- writer ------------------------------------------------------------------------------ */

void wire_wr_init(struct wire_wr *w, void *buf, size_t cap)
{
	w->p = buf;
	w->cap = cap;
	w->len = 0;
	w->failed = false;
}

static bool wr_reserve(struct wire_wr *w, size_t n, uint8_t **out)
{
	if (w->failed || n > w->cap - w->len) {
		w->failed = true;
		return false;
	}
	*out = w->p + w->len;
	w->len += n;
	return true;
}

static bool wr_be(struct wire_wr *w, size_t n, uint64_t v)
{
	uint8_t *b;
	if (!wr_reserve(w, n, &b))
		return false;
	for (size_t i = n; i-- > 0;) {
		b[i] = (uint8_t)(v & 0xffu);
		v >>= 8;
	}
	return true;
}

bool wire_put_u8(struct wire_wr *w, uint8_t v)
{
	return wr_be(w, 1, v);
}

bool wire_put_u16(struct wire_wr *w, uint16_t v)
{
	return wr_be(w, 2, v);
}

bool wire_put_u32(struct wire_wr *w, uint32_t v)
{
	return wr_be(w, 4, v);
}

bool wire_put_u64(struct wire_wr *w, uint64_t v)
{
	return wr_be(w, 8, v);
}

bool wire_put_bytes(struct wire_wr *w, const void *p, size_t n)
{
	uint8_t *b;
	if (!wr_reserve(w, n, &b))
		return false;
	if (n)
		memcpy(b, p, n);
	return true;
}

bool wire_put_str(struct wire_wr *w, const char *s, size_t n, size_t max)
{
	if (n > max || n > UINT32_MAX) {
		w->failed = true;
		return false;
	}
	return wire_put_u32(w, (uint32_t)n) && wire_put_bytes(w, s, n);
}

/* ---- MAC --------------------------------------------------------------------------------- */

/*
 * HMAC-SHA-256 (RFC 2104), keyed once: the inner and outer hash states after the padded key
 * are kept, and each frame starts from copies of them. SHA-256 is the codec's own (sha256.c,
 * with the CPU's SHA extensions where it has them), so that neither side needs a crypto
 * library for the channel.
 */
struct wire_mac {
	struct wire_sha256 inner; /* after (key ^ ipad) */
	struct wire_sha256 outer; /* after (key ^ opad) */
};

struct wire_mac *wire_mac_free(struct wire_mac *m)
{
	if (!m)
		return NULL;
	explicit_bzero(m, sizeof(*m)); /* the states are as good as the key */
	free(m);
	return NULL;
}

struct wire_mac *wire_mac_new(const uint8_t key[WIRE_KEY_LEN])
{
	struct wire_mac *m = calloc(1, sizeof(*m));
	if (!m)
		return NULL;
	/* The key (32 bytes) is shorter than the block (64): it is used as it is, zero-padded. */
	uint8_t ipad[WIRE_SHA256_BLOCK], opad[WIRE_SHA256_BLOCK];
	for (size_t i = 0; i < WIRE_SHA256_BLOCK; i++) {
		uint8_t k = i < WIRE_KEY_LEN ? key[i] : 0;
		ipad[i] = (uint8_t)(k ^ 0x36u);
		opad[i] = (uint8_t)(k ^ 0x5cu);
	}
	wire_sha256_init(&m->inner);
	wire_sha256_update(&m->inner, ipad, sizeof(ipad));
	wire_sha256_init(&m->outer);
	wire_sha256_update(&m->outer, opad, sizeof(opad));
	explicit_bzero(ipad, sizeof(ipad));
	explicit_bzero(opad, sizeof(opad));
	return m;
}

static int mac_compute(struct wire_mac *m, enum wire_dir dir, const uint8_t *hdr,
		       const uint8_t *payload, size_t payload_len, uint8_t out[WIRE_MAC_LEN])
{
	uint8_t d = (uint8_t)dir;
	uint8_t inner_digest[WIRE_SHA256_LEN];
	struct wire_sha256 ctx = m->inner;
	wire_sha256_update(&ctx, &d, 1);
	wire_sha256_update(&ctx, hdr, WIRE_HEADER_LEN);
	if (payload_len)
		wire_sha256_update(&ctx, payload, payload_len);
	wire_sha256_final(&ctx, inner_digest); /* wipes ctx */
	ctx = m->outer;
	wire_sha256_update(&ctx, inner_digest, sizeof(inner_digest));
	wire_sha256_final(&ctx, out);
	explicit_bzero(inner_digest, sizeof(inner_digest));
	return 0;
}

/* Every byte is compared whatever the earlier ones were: no early exit to time. */
bool wire_equal_ct(const void *a, const void *b, size_t n)
{
	const volatile uint8_t *x = a, *y = b;
	uint8_t diff = 0;
	for (size_t i = 0; i < n; i++)
		diff |= (uint8_t)(x[i] ^ y[i]);
	return diff == 0;
}

int wire_seal(struct wire_mac *m, enum wire_dir dir, uint8_t type, uint64_t seq,
	      const void *payload, size_t payload_len, uint8_t *out, size_t cap)
{
	if (payload_len > WIRE_MAX_PAYLOAD ||
	    cap < WIRE_HEADER_LEN + payload_len + WIRE_MAC_LEN)
		return -EMSGSIZE;
	struct wire_wr w;
	wire_wr_init(&w, out, cap);
	bool ok = wire_put_u8(&w, WIRE_VERSION) && wire_put_u8(&w, type) &&
		  wire_put_u16(&w, 0) && wire_put_u32(&w, (uint32_t)payload_len) &&
		  wire_put_u64(&w, seq) && wire_put_bytes(&w, payload, payload_len);
	if (!ok)
		return -EMSGSIZE;
	uint8_t tag[WIRE_MAC_LEN];
	int r = mac_compute(m, dir, out, out + WIRE_HEADER_LEN, payload_len, tag);
	if (r < 0)
		return r;
	if (!wire_put_bytes(&w, tag, WIRE_MAC_LEN))
		return -EMSGSIZE;
	return (int)w.len;
}

int wire_open(struct wire_mac *m, enum wire_dir dir, uint64_t expected_seq, const uint8_t *buf,
	      size_t len, struct wire_hdr *out_hdr, struct wire_rd *out_payload)
{
	if (len < WIRE_HEADER_LEN + WIRE_MAC_LEN || len > WIRE_MAX_FRAME)
		return -EBADMSG;

	struct wire_rd r, hdr_view, payload;
	wire_rd_init(&r, buf, len);
	if (!wire_get_view(&r, WIRE_HEADER_LEN, &hdr_view))
		return -EBADMSG;
	/* payload_len is read only to find the MAC; it must account for every byte. */
	struct wire_rd peek = hdr_view;
	uint32_t payload_len;
	uint64_t skip;
	if (!rd_be(&peek, 4, &skip) || !wire_get_u32(&peek, &payload_len))
		return -EBADMSG;
	if (payload_len > WIRE_MAX_PAYLOAD || (size_t)payload_len != r.len - WIRE_MAC_LEN ||
	    r.len < WIRE_MAC_LEN)
		return -EBADMSG;
	if (!wire_get_view(&r, payload_len, &payload))
		return -EBADMSG;
	uint8_t got[WIRE_MAC_LEN], want[WIRE_MAC_LEN];
	if (!wire_get_bytes(&r, got, WIRE_MAC_LEN) || !wire_done(&r))
		return -EBADMSG;
	if (mac_compute(m, dir, hdr_view.p, payload.p, payload.len, want) < 0)
		return -EBADMSG;
	if (!wire_equal_ct(got, want, WIRE_MAC_LEN))
		return -EBADMSG;

	/* Authentic: now decode the header for real. */
	struct wire_hdr h;
	if (!wire_get_u8(&hdr_view, &h.version) || !wire_get_u8(&hdr_view, &h.type) ||
	    !wire_get_u16(&hdr_view, &h.flags) || !wire_get_u32(&hdr_view, &h.payload_len) ||
	    !wire_get_u64(&hdr_view, &h.seq) || !wire_done(&hdr_view))
		return -EBADMSG;
	if (h.version != WIRE_VERSION || (h.flags & ~WIRE_FLAGS_KNOWN))
		return -EBADMSG;
	if (h.seq != expected_seq)
		return -EPROTO;
	*out_hdr = h;
	*out_payload = payload;
	return 0;
}

/* ---- payloads ---------------------------------------------------------------------------- */

bool wire_put_exited(struct wire_wr *w, const struct wire_exited *e)
{
	return wire_put_u8(w, e->how) && wire_put_u32(w, (uint32_t)e->code) &&
	       wire_put_u64(w, e->utime_usec) && wire_put_u64(w, e->stime_usec) &&
	       wire_put_u64(w, e->maxrss_kib);
}

int wire_get_exited(struct wire_rd *r, struct wire_exited *out)
{
	struct wire_exited e;
	uint32_t code;
	if (!wire_get_u8(r, &e.how) || !wire_get_u32(r, &code) ||
	    !wire_get_u64(r, &e.utime_usec) || !wire_get_u64(r, &e.stime_usec) ||
	    !wire_get_u64(r, &e.maxrss_kib) || !wire_done(r))
		return -EBADMSG;
	e.code = (int32_t)code;
	switch (e.how) {
	case WIRE_EXIT_CODE:
		if (e.code < 0 || e.code > 255)
			return -EBADMSG;
		break;
	case WIRE_EXIT_SIGNAL:
		if (e.code < 1 || e.code > 64)
			return -EBADMSG;
		break;
	case WIRE_EXIT_NOT_FOUND:
	case WIRE_EXIT_NOT_EXEC:
		if (e.code < 1 || e.code > 4095)
			return -EBADMSG;
		break;
	default:
		return -EBADMSG;
	}
	*out = e;
	return 0;
}

bool wire_put_identity(struct wire_wr *w, const struct wire_identity *id)
{
	bool ok = wire_put_u32(w, id->pid);
	for (int i = 0; i < 4; i++)
		ok = ok && wire_put_u32(w, id->uid[i]);
	for (int i = 0; i < 4; i++)
		ok = ok && wire_put_u32(w, id->gid[i]);
	return ok && wire_put_u64(w, id->cap_inh) && wire_put_u64(w, id->cap_prm) &&
	       wire_put_u64(w, id->cap_eff) && wire_put_u64(w, id->cap_bnd) &&
	       wire_put_u64(w, id->cap_amb) && wire_put_u8(w, id->no_new_privs) &&
	       wire_put_u8(w, id->seccomp) && wire_put_u32(w, id->seccomp_filters);
}

int wire_get_identity(struct wire_rd *r, struct wire_identity *out)
{
	struct wire_identity id;
	bool ok = wire_get_u32(r, &id.pid);
	for (int i = 0; i < 4; i++)
		ok = ok && wire_get_u32(r, &id.uid[i]);
	for (int i = 0; i < 4; i++)
		ok = ok && wire_get_u32(r, &id.gid[i]);
	ok = ok && wire_get_u64(r, &id.cap_inh) && wire_get_u64(r, &id.cap_prm) &&
	     wire_get_u64(r, &id.cap_eff) && wire_get_u64(r, &id.cap_bnd) &&
	     wire_get_u64(r, &id.cap_amb) && wire_get_u8(r, &id.no_new_privs) &&
	     wire_get_u8(r, &id.seccomp) && wire_get_u32(r, &id.seccomp_filters);
	if (!ok || id.no_new_privs > 1 || id.seccomp > 2)
		return -EBADMSG;
	*out = id;
	return 0;
}

bool wire_put_event(struct wire_wr *w, uint8_t level, const char *text, size_t len)
{
	return wire_put_u8(w, level) && wire_put_str(w, text, len, WIRE_MAX_EVENT_TEXT);
}

int wire_get_event(struct wire_rd *r, uint8_t *out_level, char **out_text)
{
	uint8_t level;
	char *text = NULL;
	if (!wire_get_u8(r, &level) || level > WIRE_EVENT_LEVEL_MAX)
		return -EBADMSG;
	int e = get_str(r, WIRE_MAX_EVENT_TEXT, &text);
	if (e < 0)
		return e;
	if (!wire_done(r)) {
		free(text);
		return -EBADMSG;
	}
	*out_level = level;
	*out_text = text;
	return 0;
}

bool wire_put_error(struct wire_wr *w, uint32_t code, const char *what, size_t len)
{
	return wire_put_u32(w, code) && wire_put_str(w, what, len, WIRE_MAX_ERROR_TEXT);
}

int wire_get_error(struct wire_rd *r, uint32_t *out_code, char **out_what)
{
	uint32_t code;
	char *what = NULL;
	if (!wire_get_u32(r, &code) || code < 1 || code > 4095)
		return -EBADMSG;
	int e = get_str(r, WIRE_MAX_ERROR_TEXT, &what);
	if (e < 0)
		return e;
	if (!wire_done(r)) {
		free(what);
		return -EBADMSG;
	}
	*out_code = code;
	*out_what = what;
	return 0;
}

bool wire_put_result(struct wire_wr *w, const char *name, size_t name_len, uint32_t score_millis,
		     const char *detail, size_t detail_len)
{
	return wire_put_str(w, name, name_len, WIRE_MAX_RESULT_NAME) &&
	       wire_put_u32(w, score_millis) &&
	       wire_put_str(w, detail, detail_len, WIRE_MAX_RESULT_TEXT);
}

int wire_get_result(struct wire_rd *r, char **out_name, uint32_t *out_score_millis,
		    char **out_detail)
{
	char *name = NULL, *detail = NULL;
	uint32_t score;
	int e = get_str(r, WIRE_MAX_RESULT_NAME, &name);
	if (e < 0)
		return e;
	if (!wire_get_u32(r, &score) || score > 1000)
		e = -EBADMSG;
	if (e >= 0)
		e = get_str(r, WIRE_MAX_RESULT_TEXT, &detail);
	if (e >= 0 && !wire_done(r))
		e = -EBADMSG;
	if (e < 0) {
		free(name);
		free(detail);
		return e;
	}
	*out_name = name;
	*out_score_millis = score;
	*out_detail = detail;
	return 0;
}

bool wire_put_probe(struct wire_wr *w, const char *id, uint32_t err, const char *detail,
		    size_t detail_len)
{
	return wire_put_str(w, id, strlen(id), WIRE_MAX_PROBE_ID) && wire_put_u32(w, err) &&
	       wire_put_str(w, detail, detail_len, WIRE_MAX_PROBE_TEXT);
}

int wire_get_probe(struct wire_rd *r, char **out_id, uint32_t *out_err, char **out_detail)
{
	char *id = NULL, *detail = NULL;
	uint32_t err;
	int e = get_str(r, WIRE_MAX_PROBE_ID, &id);
	if (e < 0)
		return e;
	if (!*id || !wire_get_u32(r, &err) || err > 4095)
		e = -EBADMSG;
	if (e >= 0)
		e = get_str(r, WIRE_MAX_PROBE_TEXT, &detail);
	if (e >= 0 && !wire_done(r))
		e = -EBADMSG;
	if (e < 0) {
		free(id);
		free(detail);
		return e;
	}
	*out_id = id;
	*out_err = err;
	*out_detail = detail;
	return 0;
}
