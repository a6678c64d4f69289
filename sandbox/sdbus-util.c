/* SPDX-License-Identifier: MIT */
/*
 * D-Bus messages for the user's systemd: one bounded reader, one writer, no syscalls
 * (sdbus-util.h).
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "sdbus-util.h"

#define ARRAY_MAX (64u << 20) /* the protocol's limit on an array's length */

enum field {
	F_PATH = 1,
	F_INTERFACE = 2,
	F_MEMBER = 3,
	F_ERROR_NAME = 4,
	F_REPLY_SERIAL = 5,
	F_DESTINATION = 6,
	F_SENDER = 7,
	F_SIGNATURE = 8,
	F_UNIX_FDS = 9,
};

bool sdbus_str_is(struct sdbus_str s, const char *lit)
{
	size_t n = strlen(lit);
	return s.len == n && (n == 0 || memcmp(s.p, lit, n) == 0);
}

static uint32_t load32(const uint8_t *b, bool be)
{
	return be ? (uint32_t)b[0] << 24 | (uint32_t)b[1] << 16 | (uint32_t)b[2] << 8 | b[3]
		  : (uint32_t)b[3] << 24 | (uint32_t)b[2] << 16 | (uint32_t)b[1] << 8 | b[0];
}

/* ---- reader ------------------------------------------------------------------------------ */

/* The one place that advances over received bytes: checks n against what is left first. */
static bool rd_take(struct sdbus_rd *r, size_t n, const uint8_t **out)
{
	if (r->pos > r->end || n > r->end - r->pos)
		return false;
	*out = r->msg + r->pos;
	r->pos += n;
	return true;
}

/* Skips the padding to a multiple of align (counted from the message's start): zero bytes. */
static bool rd_align(struct sdbus_rd *r, size_t align)
{
	const uint8_t *p;
	size_t pad = (align - r->pos % align) % align;
	if (!rd_take(r, pad, &p))
		return false;
	for (size_t i = 0; i < pad; i++)
		if (p[i])
			return false;
	return true;
}

static bool rd_u32(struct sdbus_rd *r, uint32_t *out)
{
	const uint8_t *p;
	if (!rd_align(r, 4) || !rd_take(r, 4, &p))
		return false;
	*out = load32(p, r->big_endian);
	return true;
}

/* A string or object path of at most max bytes: u32 length, the bytes, a NUL, none inside. */
static bool rd_string(struct sdbus_rd *r, size_t max, struct sdbus_str *out)
{
	uint32_t n;
	const uint8_t *p;
	if (!rd_u32(r, &n) || n > max || !rd_take(r, (size_t)n + 1, &p) || p[n] != 0 ||
	    memchr(p, 0, n))
		return false;
	out->p = (const char *)p;
	out->len = n;
	return true;
}

static bool is_basic(char c)
{
	return c && strchr("ybnqiuxtdhsog", c);
}

static size_t align_of(char c)
{
	switch (c) {
	case 'n':
	case 'q':
		return 2;
	case 'b':
	case 'i':
	case 'u':
	case 'h':
	case 's':
	case 'o':
	case 'a':
		return 4;
	case 'x':
	case 't':
	case 'd':
	case '(':
	case '{':
		return 8;
	default: /* y, g, v */
		return 1;
	}
}

/*
 * The length of the single complete type that sig[0..len) starts with, containers nested at
 * most SDBUS_DEPTH_MAX deep. False when it starts with none.
 */
static bool sig_single(const char *s, size_t len, unsigned depth, size_t *out_n)
{
	size_t n;
	if (len == 0 || depth > SDBUS_DEPTH_MAX)
		return false;
	if (is_basic(s[0]) || s[0] == 'v') {
		*out_n = 1;
		return true;
	}
	if (s[0] == 'a' && len >= 2 && s[1] == '{') {
		/* a dict entry: a basic key, one complete value, '}' */
		if (len < 3 || !is_basic(s[2]) || !sig_single(s + 3, len - 3, depth + 1, &n) ||
		    3 + n >= len || s[3 + n] != '}')
			return false;
		*out_n = 4 + n;
		return true;
	}
	if (s[0] == 'a') {
		if (!sig_single(s + 1, len - 1, depth + 1, &n))
			return false;
		*out_n = 1 + n;
		return true;
	}
	if (s[0] == '(') {
		size_t i = 1;
		if (len < 2 || s[1] == ')')
			return false;
		while (i < len && s[i] != ')') {
			if (!sig_single(s + i, len - i, depth + 1, &n))
				return false;
			i += n;
		}
		if (i >= len)
			return false;
		*out_n = i + 1;
		return true;
	}
	return false;
}

/* Whether sig[0..len) is a sequence of complete types (a message's or a 'g' value). */
static bool sig_valid(const char *s, size_t len)
{
	size_t i = 0, n;
	while (i < len) {
		if (!sig_single(s + i, len - i, 0, &n))
			return false;
		i += n;
	}
	return true;
}

static bool rd_sig(struct sdbus_rd *r, struct sdbus_str *out)
{
	const uint8_t *p;
	if (!rd_take(r, 1, &p))
		return false;
	size_t n = p[0];
	if (!rd_take(r, n + 1, &p) || p[n] != 0 || memchr(p, 0, n) || !sig_valid((const char *)p, n))
		return false;
	out->p = (const char *)p;
	out->len = n;
	return true;
}

/* Skips one value of the single complete type s[0..n), which sig_single accepted. */
static bool skip_one(struct sdbus_rd *r, const char *s, size_t n, unsigned depth)
{
	const uint8_t *p;
	struct sdbus_str v;
	uint32_t u;
	size_t m;
	if (depth > SDBUS_DEPTH_MAX)
		return false;
	switch (s[0]) {
	case 'y':
		return rd_take(r, 1, &p);
	case 'b':
		return rd_u32(r, &u) && u <= 1;
	case 'n':
	case 'q':
		return rd_align(r, 2) && rd_take(r, 2, &p);
	case 'i':
	case 'u':
		return rd_u32(r, &u);
	case 'x':
	case 't':
	case 'd':
		return rd_align(r, 8) && rd_take(r, 8, &p);
	case 's':
	case 'o':
		return rd_string(r, UINT32_MAX, &v);
	case 'g':
		return rd_sig(r, &v);
	case 'v':
		return rd_sig(r, &v) && sig_single(v.p, v.len, depth + 1, &m) && m == v.len &&
		       skip_one(r, v.p, v.len, depth + 1);
	case 'a':
		/* Skipped by its length: its elements are never looked at. */
		return rd_u32(r, &u) && u <= ARRAY_MAX && rd_align(r, align_of(s[1])) &&
		       rd_take(r, u, &p);
	case '(':
	case '{':
		if (!rd_align(r, 8))
			return false;
		for (size_t i = 1; i < n - 1; i += m)
			if (!sig_single(s + i, n - 1 - i, depth + 1, &m) ||
			    !skip_one(r, s + i, m, depth + 1))
				return false;
		return true;
	default: /* 'h': no file descriptors were negotiated */
		return false;
	}
}

bool sdbus_get_u8(struct sdbus_rd *r, uint8_t *out)
{
	const uint8_t *p;
	if (!rd_take(r, 1, &p))
		return false;
	*out = p[0];
	return true;
}

bool sdbus_get_bool(struct sdbus_rd *r, bool *out)
{
	struct sdbus_rd save = *r;
	uint32_t v;
	if (!rd_u32(r, &v) || v > 1) {
		*r = save;
		return false;
	}
	*out = v == 1;
	return true;
}

bool sdbus_get_u32(struct sdbus_rd *r, uint32_t *out)
{
	struct sdbus_rd save = *r;
	if (!rd_u32(r, out)) {
		*r = save;
		return false;
	}
	return true;
}

bool sdbus_get_str(struct sdbus_rd *r, struct sdbus_str *out)
{
	struct sdbus_rd save = *r;
	if (!rd_string(r, SDBUS_STR_MAX, out)) {
		*r = save;
		return false;
	}
	return true;
}

bool sdbus_get_sig(struct sdbus_rd *r, struct sdbus_str *out)
{
	struct sdbus_rd save = *r;
	if (!rd_sig(r, out)) {
		*r = save;
		return false;
	}
	return true;
}

bool sdbus_get_variant(struct sdbus_rd *r, const char *sig)
{
	struct sdbus_rd save = *r;
	struct sdbus_str v;
	size_t n;
	if (!rd_sig(r, &v) || !sdbus_str_is(v, sig) || !sig_single(v.p, v.len, 0, &n) ||
	    n != v.len) {
		*r = save;
		return false;
	}
	return true;
}

bool sdbus_get_array(struct sdbus_rd *r, size_t align, struct sdbus_rd *out)
{
	struct sdbus_rd save = *r;
	uint32_t n;
	const uint8_t *p;
	if (!rd_u32(r, &n) || n > ARRAY_MAX || !rd_align(r, align)) {
		*r = save;
		return false;
	}
	size_t start = r->pos;
	if (!rd_take(r, n, &p)) {
		*r = save;
		return false;
	}
	*out = (struct sdbus_rd){ .msg = r->msg, .pos = start, .end = r->pos,
				  .big_endian = r->big_endian };
	return true;
}

bool sdbus_get_struct(struct sdbus_rd *r)
{
	struct sdbus_rd save = *r;
	if (!rd_align(r, 8)) {
		*r = save;
		return false;
	}
	return true;
}

bool sdbus_skip(struct sdbus_rd *r, const char *sig, size_t sig_len)
{
	struct sdbus_rd save = *r;
	size_t n;
	if (sig_len > SDBUS_SIG_MAX || !sig_single(sig, sig_len, 0, &n) || n != sig_len ||
	    !skip_one(r, sig, sig_len, 0)) {
		*r = save;
		return false;
	}
	return true;
}

bool sdbus_done(const struct sdbus_rd *r)
{
	return r->pos == r->end;
}

/* ---- messages ---------------------------------------------------------------------------- */

int sdbus_msg_length(const uint8_t fixed[SDBUS_FIXED_LEN], size_t *out_len)
{
	if ((fixed[0] != 'l' && fixed[0] != 'B') || fixed[3] != 1)
		return -EBADMSG;
	bool be = fixed[0] == 'B';
	uint64_t fields = load32(fixed + 12, be), body = load32(fixed + 4, be);
	uint64_t total = ((SDBUS_FIXED_LEN + fields + 7) & ~(uint64_t)7) + body;
	if (total > SDBUS_MSG_MAX)
		return -EMSGSIZE;
	*out_len = (size_t)total;
	return 0;
}

/* A header field's value: a variant of exactly the type sig, a string of that type. */
static bool field_str(struct sdbus_rd *r, const char *sig, struct sdbus_str *out)
{
	return sdbus_get_variant(r, sig) &&
	       (sig[0] == 'g' ? sdbus_get_sig(r, out) : sdbus_get_str(r, out));
}

int sdbus_msg_parse(const uint8_t *msg, size_t len, struct sdbus_msg *out)
{
	size_t want;
	if (len < SDBUS_FIXED_LEN)
		return -EBADMSG;
	int r = sdbus_msg_length(msg, &want);
	if (r < 0)
		return r;
	if (want != len)
		return -EBADMSG;
	const struct sdbus_str none = { "", 0 };
	struct sdbus_msg m = {
		.msg = msg, .len = len, .big_endian = msg[0] == 'B', .type = msg[1],
		.flags = msg[2], .serial = load32(msg + 8, msg[0] == 'B'),
		.path = none, .interface = none, .member = none, .error_name = none,
		.destination = none, .sender = none, .signature = none,
	};
	if (m.type < SDBUS_CALL || m.type > SDBUS_SIGNAL || m.serial == 0)
		return -EBADMSG;
	/* the field array: its length at 12, its elements (8-aligned) from 16 */
	struct sdbus_rd hdr = { .msg = msg, .pos = 12, .end = len, .big_endian = m.big_endian };
	struct sdbus_rd f;
	if (!sdbus_get_array(&hdr, 8, &f))
		return -EBADMSG;
	unsigned seen = 0;
	while (!sdbus_done(&f)) {
		uint8_t code;
		uint32_t u = 0;
		struct sdbus_str v;
		bool ok;
		if (!sdbus_get_struct(&f) || !sdbus_get_u8(&f, &code) || code == 0)
			return -EBADMSG;
		if (code <= F_UNIX_FDS) {
			if (seen & (1u << code))
				return -EBADMSG;
			seen |= 1u << code;
		}
		switch (code) {
		case F_PATH:
			ok = field_str(&f, "o", &m.path);
			break;
		case F_INTERFACE:
			ok = field_str(&f, "s", &m.interface);
			break;
		case F_MEMBER:
			ok = field_str(&f, "s", &m.member);
			break;
		case F_ERROR_NAME:
			ok = field_str(&f, "s", &m.error_name);
			break;
		case F_DESTINATION:
			ok = field_str(&f, "s", &m.destination);
			break;
		case F_SENDER:
			ok = field_str(&f, "s", &m.sender);
			break;
		case F_SIGNATURE:
			ok = field_str(&f, "g", &m.signature);
			break;
		case F_REPLY_SERIAL:
			ok = sdbus_get_variant(&f, "u") && sdbus_get_u32(&f, &u) && u != 0;
			m.reply_serial = u;
			break;
		case F_UNIX_FDS:
			ok = sdbus_get_variant(&f, "u") && sdbus_get_u32(&f, &u) && u == 0;
			break;
		default: /* a field this protocol version does not know: skipped, as it says */
			ok = sdbus_get_sig(&f, &v) && sdbus_skip(&f, v.p, v.len);
			break;
		}
		if (!ok)
			return -EBADMSG;
	}
	/* padding to the body, whose start sdbus_msg_length counted the same way */
	if (!rd_align(&hdr, 8))
		return -EBADMSG;
	m.body_off = hdr.pos;
	bool has_path = seen & (1u << F_PATH), has_member = seen & (1u << F_MEMBER);
	bool has_reply = seen & (1u << F_REPLY_SERIAL);
	switch (m.type) {
	case SDBUS_CALL:
		r = has_path && has_member ? 0 : -EBADMSG;
		break;
	case SDBUS_RETURN:
		r = has_reply ? 0 : -EBADMSG;
		break;
	case SDBUS_ERROR:
		r = has_reply && (seen & (1u << F_ERROR_NAME)) ? 0 : -EBADMSG;
		break;
	default:
		r = has_path && has_member && (seen & (1u << F_INTERFACE)) ? 0 : -EBADMSG;
		break;
	}
	/* A body needs a signature to say what it holds. */
	if (r == 0 && m.signature.len == 0 && m.body_off != len)
		r = -EBADMSG;
	if (r == 0)
		*out = m;
	return r;
}

int sdbus_body(const struct sdbus_msg *m, const char *sig, struct sdbus_rd *out)
{
	if (!sdbus_str_is(m->signature, sig))
		return -EBADMSG;
	*out = (struct sdbus_rd){ .msg = m->msg, .pos = m->body_off, .end = m->len,
				  .big_endian = m->big_endian };
	return 0;
}

int sdbus_read_job_removed(const struct sdbus_msg *m, struct sdbus_str *out_unit,
			   struct sdbus_str *out_result)
{
	struct sdbus_rd r;
	struct sdbus_str job, unit, result;
	uint32_t id;
	if (m->type != SDBUS_SIGNAL ||
	    !sdbus_str_is(m->interface, "org.freedesktop.systemd1.Manager") ||
	    !sdbus_str_is(m->member, "JobRemoved") || sdbus_body(m, "uoss", &r) < 0 ||
	    !sdbus_get_u32(&r, &id) || !sdbus_get_str(&r, &job) || !sdbus_get_str(&r, &unit) ||
	    !sdbus_get_str(&r, &result) || !sdbus_done(&r))
		return -EBADMSG;
	*out_unit = unit;
	*out_result = result;
	return 0;
}

int sdbus_read_error(const struct sdbus_msg *m, struct sdbus_str *out_name,
		     struct sdbus_str *out_text)
{
	struct sdbus_str text = { "", 0 };
	if (m->type != SDBUS_ERROR)
		return -EBADMSG;
	if (m->signature.len && m->signature.p[0] == 's') {
		struct sdbus_rd r = { .msg = m->msg, .pos = m->body_off, .end = m->len,
				      .big_endian = m->big_endian };
		if (!sdbus_get_str(&r, &text))
			return -EBADMSG;
	}
	*out_name = m->error_name;
	*out_text = text;
	return 0;
}

/* ---- writer ------------------------------------------------------------------------------ */

void sdbus_wr_init(struct sdbus_wr *w, void *buf, size_t cap)
{
	*w = (struct sdbus_wr){ .p = buf, .cap = cap };
}

static bool wr_room(struct sdbus_wr *w, size_t n)
{
	if (w->failed || n > w->cap - w->len) {
		w->failed = true;
		return false;
	}
	return true;
}

static void store32(uint8_t *b, uint32_t v)
{
	b[0] = (uint8_t)v;
	b[1] = (uint8_t)(v >> 8);
	b[2] = (uint8_t)(v >> 16);
	b[3] = (uint8_t)(v >> 24);
}

void sdbus_put_align(struct sdbus_wr *w, size_t align)
{
	size_t pad = (align - w->len % align) % align;
	if (!wr_room(w, pad))
		return;
	memset(w->p + w->len, 0, pad);
	w->len += pad;
}

void sdbus_put_u8(struct sdbus_wr *w, uint8_t v)
{
	if (!wr_room(w, 1))
		return;
	w->p[w->len++] = v;
}

void sdbus_put_u32(struct sdbus_wr *w, uint32_t v)
{
	sdbus_put_align(w, 4);
	if (!wr_room(w, 4))
		return;
	store32(w->p + w->len, v);
	w->len += 4;
}

void sdbus_put_bool(struct sdbus_wr *w, bool v)
{
	sdbus_put_u32(w, v ? 1 : 0);
}

void sdbus_put_str(struct sdbus_wr *w, const char *s)
{
	size_t n = strlen(s);
	if (n > SDBUS_STR_MAX) {
		w->failed = true;
		return;
	}
	sdbus_put_u32(w, (uint32_t)n);
	if (!wr_room(w, n + 1))
		return;
	memcpy(w->p + w->len, s, n + 1);
	w->len += n + 1;
}

void sdbus_put_sig(struct sdbus_wr *w, const char *sig)
{
	size_t n = strlen(sig);
	if (n > SDBUS_SIG_MAX) {
		w->failed = true;
		return;
	}
	sdbus_put_u8(w, (uint8_t)n);
	if (!wr_room(w, n + 1))
		return;
	memcpy(w->p + w->len, sig, n + 1);
	w->len += n + 1;
}

void sdbus_put_array_open(struct sdbus_wr *w, size_t align, struct sdbus_arr *out)
{
	sdbus_put_align(w, 4);
	out->len_at = w->len;
	sdbus_put_u32(w, 0);
	sdbus_put_align(w, align);
	out->start = w->len;
}

void sdbus_put_array_close(struct sdbus_wr *w, const struct sdbus_arr *a)
{
	if (w->failed)
		return;
	size_t n = w->len - a->start;
	if (n > ARRAY_MAX) {
		w->failed = true;
		return;
	}
	store32(w->p + a->len_at, (uint32_t)n);
}

/* A header field whose value is the string v of type sig ("o", "s" or "g"). */
static void put_field(struct sdbus_wr *w, uint8_t code, const char *sig, const char *v)
{
	sdbus_put_align(w, 8);
	sdbus_put_u8(w, code);
	sdbus_put_sig(w, sig);
	if (sig[0] == 'g')
		sdbus_put_sig(w, v);
	else
		sdbus_put_str(w, v);
}

void sdbus_msg_begin(struct sdbus_wr *w, uint32_t serial, const struct sdbus_call *c)
{
	struct sdbus_arr fields;
	sdbus_put_u8(w, 'l');
	sdbus_put_u8(w, SDBUS_CALL);
	sdbus_put_u8(w, 0); /* flags: a reply is wanted */
	sdbus_put_u8(w, 1); /* protocol version */
	sdbus_put_u32(w, 0); /* the body's length, set by sdbus_msg_end */
	sdbus_put_u32(w, serial);
	sdbus_put_array_open(w, 8, &fields);
	put_field(w, F_PATH, "o", c->path);
	if (c->interface)
		put_field(w, F_INTERFACE, "s", c->interface);
	put_field(w, F_MEMBER, "s", c->member);
	if (c->dest)
		put_field(w, F_DESTINATION, "s", c->dest);
	if (c->sig && c->sig[0])
		put_field(w, F_SIGNATURE, "g", c->sig);
	sdbus_put_array_close(w, &fields);
	sdbus_put_align(w, 8);
	w->body_off = w->len;
}

int sdbus_msg_end(struct sdbus_wr *w, size_t *out_len)
{
	if (w->failed || w->len < SDBUS_FIXED_LEN)
		return -ENOBUFS;
	store32(w->p + 4, (uint32_t)(w->len - w->body_off));
	*out_len = w->len;
	return 0;
}

/* ---- the calls --------------------------------------------------------------------------- */

#define SD_DEST "org.freedesktop.systemd1"
#define SD_PATH "/org/freedesktop/systemd1"
#define SD_MANAGER "org.freedesktop.systemd1.Manager"
#define BUS_DEST "org.freedesktop.DBus"
#define BUS_PATH "/org/freedesktop/DBus"

static bool too_long(const char *s)
{
	return strlen(s) > SDBUS_STR_MAX;
}

int sdbus_build_hello(void *buf, size_t cap, uint32_t serial, size_t *out_len)
{
	struct sdbus_wr w;
	const struct sdbus_call c = { .dest = BUS_DEST, .path = BUS_PATH,
				      .interface = BUS_DEST, .member = "Hello" };
	sdbus_wr_init(&w, buf, cap);
	sdbus_msg_begin(&w, serial, &c);
	return sdbus_msg_end(&w, out_len);
}

int sdbus_build_add_match(void *buf, size_t cap, uint32_t serial, const char *rule,
			  size_t *out_len)
{
	struct sdbus_wr w;
	const struct sdbus_call c = { .dest = BUS_DEST, .path = BUS_PATH, .interface = BUS_DEST,
				      .member = "AddMatch", .sig = "s" };
	if (too_long(rule))
		return -EINVAL;
	sdbus_wr_init(&w, buf, cap);
	sdbus_msg_begin(&w, serial, &c);
	sdbus_put_str(&w, rule);
	return sdbus_msg_end(&w, out_len);
}

int sdbus_build_get_unit_by_pid(void *buf, size_t cap, uint32_t serial, uint32_t pid,
				size_t *out_len)
{
	struct sdbus_wr w;
	const struct sdbus_call c = { .dest = SD_DEST, .path = SD_PATH, .interface = SD_MANAGER,
				      .member = "GetUnitByPID", .sig = "u" };
	sdbus_wr_init(&w, buf, cap);
	sdbus_msg_begin(&w, serial, &c);
	sdbus_put_u32(&w, pid);
	return sdbus_msg_end(&w, out_len);
}

int sdbus_build_get_property(void *buf, size_t cap, uint32_t serial, const char *path,
			     const char *interface, const char *property, size_t *out_len)
{
	struct sdbus_wr w;
	const struct sdbus_call c = { .dest = SD_DEST, .path = path,
				      .interface = "org.freedesktop.DBus.Properties",
				      .member = "Get", .sig = "ss" };
	if (too_long(path) || too_long(interface) || too_long(property))
		return -EINVAL;
	sdbus_wr_init(&w, buf, cap);
	sdbus_msg_begin(&w, serial, &c);
	sdbus_put_str(&w, interface);
	sdbus_put_str(&w, property);
	return sdbus_msg_end(&w, out_len);
}

/* One (sv) property whose value is the string v. */
static void put_prop_str(struct sdbus_wr *w, const char *name, const char *v)
{
	sdbus_put_align(w, 8);
	sdbus_put_str(w, name);
	sdbus_put_sig(w, "s");
	sdbus_put_str(w, v);
}

int sdbus_build_start_scope(void *buf, size_t cap, uint32_t serial, const char *unit,
			    uint32_t pid, const char *description, size_t *out_len)
{
	struct sdbus_wr w;
	struct sdbus_arr props, pids, aux;
	const struct sdbus_call c = { .dest = SD_DEST, .path = SD_PATH, .interface = SD_MANAGER,
				      .member = "StartTransientUnit",
				      .sig = "ssa(sv)a(sa(sv))" };
	if (too_long(unit) || too_long(description))
		return -EINVAL;
	sdbus_wr_init(&w, buf, cap);
	sdbus_msg_begin(&w, serial, &c);
	sdbus_put_str(&w, unit);
	sdbus_put_str(&w, "fail"); /* a unit of that name already there is an error */
	sdbus_put_array_open(&w, 8, &props);
	put_prop_str(&w, "Description", description);
	put_prop_str(&w, "CollectMode", "inactive-or-failed");
	sdbus_put_align(&w, 8);
	sdbus_put_str(&w, "Delegate");
	sdbus_put_sig(&w, "b");
	sdbus_put_bool(&w, true);
	sdbus_put_align(&w, 8);
	sdbus_put_str(&w, "PIDs");
	sdbus_put_sig(&w, "au");
	sdbus_put_array_open(&w, 4, &pids);
	sdbus_put_u32(&w, pid);
	sdbus_put_array_close(&w, &pids);
	sdbus_put_array_close(&w, &props);
	sdbus_put_array_open(&w, 8, &aux); /* no auxiliary units */
	sdbus_put_array_close(&w, &aux);
	return sdbus_msg_end(&w, out_len);
}

/* ---- authentication ---------------------------------------------------------------------- */

int sdbus_auth_reply(const char *line, size_t len)
{
	if (len > SDBUS_AUTH_LINE_MAX)
		return -EBADMSG;
	for (size_t i = 0; i < len; i++)
		if ((unsigned char)line[i] < 0x20 || (unsigned char)line[i] > 0x7e)
			return -EBADMSG;
	if (len == 3 + 32 && memcmp(line, "OK ", 3) == 0) {
		for (size_t i = 3; i < len; i++)
			if (!strchr("0123456789abcdefABCDEF", line[i]))
				return -EBADMSG;
		return 0;
	}
	if (len >= 8 && memcmp(line, "REJECTED", 8) == 0 && (len == 8 || line[8] == ' '))
		return -EACCES;
	return -EBADMSG;
}

int sdbus_auth_line(uid_t uid, char *buf, size_t cap, size_t *out_len)
{
	char dec[16];
	int n = snprintf(dec, sizeof(dec), "%u", (unsigned)uid);
	if (n <= 0 || (size_t)n >= sizeof(dec))
		return -EINVAL;
	static const char hex[] = "0123456789abcdef";
	char h[2 * sizeof(dec)];
	for (int i = 0; i < n; i++) {
		h[2 * i] = hex[(unsigned char)dec[i] >> 4];
		h[2 * i + 1] = hex[(unsigned char)dec[i] & 15];
	}
	h[2 * n] = '\0';
	int k = snprintf(buf, cap, "AUTH EXTERNAL %s\r\n", h);
	if (k < 0 || (size_t)k >= cap)
		return -ENOBUFS;
	*out_len = (size_t)k;
	return 0;
}
