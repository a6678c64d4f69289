/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer target for the frame codec.
 *
 * Target functions (wire/wire.c): wire_seal(), wire_open(), the payload decoders
 * wire_get_exited() and wire_get_identity(), and the cursor getters wire_get_u8/u16/u32/u64/
 * bytes/view/sub/str() and wire_done(); the writers wire_put_exited(), wire_put_identity(),
 * wire_put_u32() and wire_put_str() are used to check decode(encode(x)) == x.
 *
 * Input: data[0] % 3 picks the mode.
 *   0  seal/open round trip. data[1] is the frame type, data[2..9] the seq (big-endian), the
 *      rest the payload. It is sealed with the fixed key, must open again (and must not open
 *      at another seq, in the other direction, one byte short or with one bit flipped), and
 *      the payload goes through the decoder for its type; whatever decodes must re-encode to
 *      the same bytes.
 *   1  raw frame. data[1..] goes to wire_open() with the fixed key, both directions, seq 0.
 *      MACs will almost never verify; failures must leave the outputs untouched.
 *   2  payload decoders. data[1] % 5 picks EXITED, identity, HELLO (nonce | identity), a
 *      string with max data[2], or a cursor program; data[2..] is the payload.
 *
 * Inputs over FRAME_MAX_INPUT are rejected first. The key is a fixed constant; no time, no
 * randomness. The only state kept across inputs is the MAC context keyed with that constant.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz-util.h"
#include "fuzz-wire.h"
#include "wire.h"

/* Room for a payload one page over the limit, so wire_seal's -EMSGSIZE is reachable. */
#define FRAME_MAX_INPUT (10 + WIRE_MAX_PAYLOAD + 4096)

static const uint8_t fuzz_key[WIRE_KEY_LEN] = {
	0x66, 0x75, 0x7a, 0x7a, 0x2d, 0x66, 0x72, 0x61, 0x6d, 0x65, 0x2d, 0x6b, 0x65, 0x79, 0x00, 0x01,
	0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08, 0x09, 0x0a, 0x0b, 0x0c, 0x0d, 0x0e, 0x0f, 0x10, 0x11,
};

static uint8_t frame[WIRE_MAX_FRAME + 1];
static uint8_t reenc[WIRE_MAX_FRAME];

static struct wire_mac *fixed_mac(void)
{
	static struct wire_mac *mac;
	if (!mac)
		mac = wire_mac_new(fuzz_key);
	CHECK(mac);
	return mac;
}

static bool same_exited(const struct wire_exited *a, const struct wire_exited *b)
{
	return a->how == b->how && a->code == b->code && a->utime_usec == b->utime_usec &&
	       a->stime_usec == b->stime_usec && a->maxrss_kib == b->maxrss_kib;
}

/* EXITED: decodes p; on success, the value is in range and re-encodes to the same bytes. */
static void check_exited(const uint8_t *p, size_t len)
{
	struct wire_rd r;
	struct wire_exited e, e2, untouched;
	memset(&e, 0x5a, sizeof(e));
	memset(&untouched, 0x5a, sizeof(untouched));
	wire_rd_init(&r, p, len);
	int ret = wire_get_exited(&r, &e);
	CHECK(ret == 0 || ret == -EBADMSG);
	if (ret < 0) {
		CHECK(!memcmp(&e, &untouched, sizeof(e)));
		return;
	}
	CHECK(len == FUZZ_EXITED_LEN && wire_done(&r));
	switch (e.how) {
	case WIRE_EXIT_CODE:
		CHECK(e.code >= 0 && e.code <= 255);
		break;
	case WIRE_EXIT_SIGNAL:
		CHECK(e.code >= 1 && e.code <= 64);
		break;
	case WIRE_EXIT_NOT_FOUND:
	case WIRE_EXIT_NOT_EXEC:
		CHECK(e.code >= 1 && e.code <= 4095);
		break;
	default:
		CHECK(false);
	}
	struct wire_wr w;
	wire_wr_init(&w, reenc, sizeof(reenc));
	CHECK(wire_put_exited(&w, &e));
	CHECK(w.len == len && !memcmp(reenc, p, len));
	wire_rd_init(&r, reenc, w.len);
	CHECK(wire_get_exited(&r, &e2) == 0 && same_exited(&e, &e2));
}

/*
 * identity: decodes a prefix of p; on success the values are in range and re-encode to the
 * bytes consumed. Returns the number of bytes consumed, or 0 on failure.
 */
static size_t check_identity(const uint8_t *p, size_t len)
{
	struct wire_rd r;
	struct wire_identity id, id2;
	wire_rd_init(&r, p, len);
	int ret = wire_get_identity(&r, &id);
	CHECK(ret == 0 || ret == -EBADMSG);
	if (ret < 0)
		return 0;
	size_t used = len - r.len;
	CHECK(used == FUZZ_IDENTITY_LEN);
	CHECK(id.no_new_privs <= 1 && id.seccomp <= 2);
	struct wire_wr w;
	wire_wr_init(&w, reenc, sizeof(reenc));
	CHECK(wire_put_identity(&w, &id));
	CHECK(w.len == used && !memcmp(reenc, p, used));
	wire_rd_init(&r, reenc, w.len);
	CHECK(wire_get_identity(&r, &id2) == 0 && wire_done(&r) && fuzz_same_identity(&id, &id2));
	return used;
}

/* HELLO: nonce[32] | identity, nothing after. */
static void check_hello(const uint8_t *p, size_t len)
{
	if (len < WIRE_NONCE_LEN)
		return;
	(void)check_identity(p + WIRE_NONCE_LEN, len - WIRE_NONCE_LEN);
}

/* STARTED: u32 pid, nothing after. */
static void check_started(const uint8_t *p, size_t len)
{
	struct wire_rd r;
	uint32_t pid;
	wire_rd_init(&r, p, len);
	if (!wire_get_u32(&r, &pid) || !wire_done(&r))
		return;
	struct wire_wr w;
	wire_wr_init(&w, reenc, sizeof(reenc));
	CHECK(wire_put_u32(&w, pid) && w.len == len && !memcmp(reenc, p, len));
}

/* A length-prefixed string with max taken from the input. */
static void check_str(const uint8_t *p, size_t len)
{
	if (len < 1)
		return;
	size_t max = p[0];
	struct wire_rd r, sub;
	wire_rd_init(&r, p + 1, len - 1);
	const struct wire_rd before = r;
	bool sub_ok = wire_get_sub(&r, &sub);
	r = before;
	char *const untouched = (char *)(uintptr_t)1;
	char *s = untouched;
	if (!wire_get_str(&r, max, &s)) {
		CHECK(s == untouched && r.p == before.p && r.len == before.len);
		CHECK(!sub_ok || sub.len > max || memchr(sub.p, 0, sub.len));
		return;
	}
	CHECK(sub_ok && sub.len <= max);
	size_t n = strlen(s);
	CHECK(n == sub.len && !memcmp(s, sub.p, n));
	CHECK(r.len == before.len - 4 - n);
	struct wire_wr w;
	wire_wr_init(&w, reenc, sizeof(reenc));
	CHECK(wire_put_str(&w, s, n, max) && w.len == 4 + n && !memcmp(reenc, before.p, w.len));
	free(s);
}

/*
 * A cursor program: p[0] % 32 op bytes, then the data they read. Each getter either consumes
 * exactly its width or fails and consumes nothing.
 */
static void check_cursor(const uint8_t *p, size_t len)
{
	if (len < 1)
		return;
	size_t n_ops = p[0] % 32u;
	if (n_ops > len - 1)
		n_ops = len - 1;
	const uint8_t *ops = p + 1;
	struct wire_rd r;
	wire_rd_init(&r, p + 1 + n_ops, len - 1 - n_ops);
	for (size_t i = 0; i < n_ops; i++) {
		const struct wire_rd before = r;
		size_t width = 0;
		bool ok = false;
		uint8_t u8v;
		uint16_t u16v;
		uint32_t u32v;
		uint64_t u64v;
		uint8_t bytes[32];
		struct wire_rd v;
		switch (ops[i] % 8u) {
		case 0:
			width = 1;
			ok = wire_get_u8(&r, &u8v);
			break;
		case 1:
			width = 2;
			ok = wire_get_u16(&r, &u16v);
			break;
		case 2:
			width = 4;
			ok = wire_get_u32(&r, &u32v);
			break;
		case 3:
			width = 8;
			ok = wire_get_u64(&r, &u64v);
			break;
		case 4:
			width = ops[i] / 8u; /* 0..31 */
			ok = wire_get_bytes(&r, bytes, width);
			if (ok)
				CHECK(!memcmp(bytes, before.p, width));
			break;
		case 5:
			width = ops[i] / 8u;
			ok = wire_get_view(&r, width, &v);
			if (ok)
				CHECK(v.p == before.p && v.len == width);
			break;
		case 6:
			ok = wire_get_sub(&r, &v);
			if (ok) {
				width = 4 + v.len;
				CHECK(v.p == before.p + 4);
			} else {
				/* Legitimate only without a length prefix or with a body too long. */
				CHECK(before.len < 4 ||
				      (((uint32_t)before.p[0] << 24) | ((uint32_t)before.p[1] << 16) |
				       ((uint32_t)before.p[2] << 8) | before.p[3]) > before.len - 4);
				width = before.len + 1;
			}
			break;
		default:
			CHECK(wire_done(&r) == (r.len == 0));
			continue;
		}
		if (ok)
			CHECK(width <= before.len && r.p == before.p + width &&
			      r.len == before.len - width);
		else
			CHECK(width > before.len && r.p == before.p && r.len == before.len);
	}
}

/* EVENT, ERROR, RESULT: decode, then decode(encode(x)) == x and the bytes match. */
static void check_event(const uint8_t *p, size_t len)
{
	struct wire_rd r;
	wire_rd_init(&r, p, len);
	uint8_t level;
	char *text = NULL;
	int ret = wire_get_event(&r, &level, &text);
	CHECK(ret == 0 || ret == -EBADMSG);
	if (ret < 0) {
		CHECK(text == NULL);
		return;
	}
	size_t tl = strlen(text);
	CHECK(level <= WIRE_EVENT_LEVEL_MAX && tl <= WIRE_MAX_EVENT_TEXT);
	struct wire_wr w;
	wire_wr_init(&w, reenc, sizeof(reenc));
	CHECK(wire_put_event(&w, level, text, tl));
	CHECK(w.len == len && !memcmp(reenc, p, len));
	free(text);
}

static void check_error(const uint8_t *p, size_t len)
{
	struct wire_rd r;
	wire_rd_init(&r, p, len);
	uint32_t code;
	char *what = NULL;
	int ret = wire_get_error(&r, &code, &what);
	CHECK(ret == 0 || ret == -EBADMSG);
	if (ret < 0)
		return;
	size_t wl = strlen(what);
	CHECK(code >= 1 && code <= 4095 && wl <= WIRE_MAX_ERROR_TEXT);
	struct wire_wr w;
	wire_wr_init(&w, reenc, sizeof(reenc));
	CHECK(wire_put_error(&w, code, what, wl));
	CHECK(w.len == len && !memcmp(reenc, p, len));
	free(what);
}

static void check_result(const uint8_t *p, size_t len)
{
	struct wire_rd r;
	wire_rd_init(&r, p, len);
	uint32_t score;
	char *name = NULL, *detail = NULL;
	int ret = wire_get_result(&r, &name, &score, &detail);
	CHECK(ret == 0 || ret == -EBADMSG);
	if (ret < 0)
		return;
	size_t nl = strlen(name), dl = strlen(detail);
	CHECK(score <= 1000 && nl <= WIRE_MAX_RESULT_NAME && dl <= WIRE_MAX_RESULT_TEXT);
	struct wire_wr w;
	wire_wr_init(&w, reenc, sizeof(reenc));
	CHECK(wire_put_result(&w, name, nl, score, detail, dl));
	CHECK(w.len == len && !memcmp(reenc, p, len));
	free(name);
	free(detail);
}

static void check_payload(uint8_t type, const uint8_t *p, size_t len)
{
	switch (type) {
	case WIRE_EXITED:
		check_exited(p, len);
		break;
	case WIRE_HELLO:
		check_hello(p, len);
		break;
	case WIRE_STARTED:
		check_started(p, len);
		break;
	case WIRE_EVENT:
		check_event(p, len);
		break;
	case WIRE_ERROR:
		check_error(p, len);
		break;
	case WIRE_RESULT:
		check_result(p, len);
		break;
	default:
		break;
	}
}

static void mode_seal(const uint8_t *data, size_t size)
{
	if (size < 9)
		return;
	struct wire_mac *m = fixed_mac();
	uint8_t type = data[0];
	uint64_t seq = 0;
	for (int i = 1; i <= 8; i++)
		seq = (seq << 8) | data[i];
	const uint8_t *payload = data + 9;
	size_t payload_len = size - 9;

	int n = wire_seal(m, WIRE_DIR_TO_SUPERVISOR, type, seq, payload, payload_len, frame,
			  sizeof(frame));
	if (payload_len > WIRE_MAX_PAYLOAD) {
		CHECK(n == -EMSGSIZE);
		return;
	}
	CHECK(n >= 0 && (size_t)n == WIRE_HEADER_LEN + payload_len + WIRE_MAC_LEN);
	size_t len = (size_t)n;
	CHECK(wire_seal(m, WIRE_DIR_TO_SUPERVISOR, type, seq, payload, payload_len, frame,
			len - 1) == -EMSGSIZE);

	struct wire_hdr h;
	struct wire_rd p;
	CHECK(wire_open(m, WIRE_DIR_TO_SUPERVISOR, seq, frame, len, &h, &p) == 0);
	CHECK(h.version == WIRE_VERSION && h.type == type && h.flags == 0 &&
	      h.payload_len == payload_len && h.seq == seq);
	CHECK(p.p == frame + WIRE_HEADER_LEN && p.len == payload_len);
	CHECK(!payload_len || !memcmp(p.p, payload, payload_len));

	CHECK(wire_open(m, WIRE_DIR_TO_SUPERVISOR, seq + 1, frame, len, &h, &p) == -EPROTO);
	CHECK(wire_open(m, WIRE_DIR_TO_WORKER, seq, frame, len, &h, &p) == -EBADMSG);
	CHECK(wire_open(m, WIRE_DIR_TO_SUPERVISOR, seq, frame, len - 1, &h, &p) == -EBADMSG);
	size_t bit = (size_t)(seq % (len * 8));
	frame[bit / 8] ^= (uint8_t)(1u << (bit % 8));
	CHECK(wire_open(m, WIRE_DIR_TO_SUPERVISOR, seq, frame, len, &h, &p) == -EBADMSG);
	frame[bit / 8] ^= (uint8_t)(1u << (bit % 8));

	CHECK(wire_open(m, WIRE_DIR_TO_SUPERVISOR, seq, frame, len, &h, &p) == 0);
	check_payload(type, p.p, p.len);
}

static void mode_open(const uint8_t *data, size_t size)
{
	struct wire_mac *m = fixed_mac();
	for (int dir = WIRE_DIR_TO_WORKER; dir <= WIRE_DIR_TO_SUPERVISOR; dir++) {
		struct wire_hdr h, untouched;
		memset(&h, 0x5a, sizeof(h));
		memset(&untouched, 0x5a, sizeof(untouched));
		struct wire_rd p = { (const uint8_t *)(uintptr_t)1, 77 };
		int r = wire_open(m, (enum wire_dir)dir, 0, data, size, &h, &p);
		CHECK(r == 0 || r == -EBADMSG || r == -EPROTO);
		if (r == -EBADMSG) {
			CHECK(!memcmp(&h, &untouched, sizeof(h)));
			CHECK(p.p == (const uint8_t *)(uintptr_t)1 && p.len == 77);
			continue;
		}
		/* Authentic (a seed sealed with the fixed key). */
		CHECK(size >= WIRE_HEADER_LEN + WIRE_MAC_LEN && size <= WIRE_MAX_FRAME);
		if (r == -EPROTO) {
			uint64_t seq = 0;
			for (int i = 8; i < 16; i++)
				seq = (seq << 8) | data[i];
			CHECK(seq != 0);
			r = wire_open(m, (enum wire_dir)dir, seq, data, size, &h, &p);
			CHECK(r == 0 && h.seq == seq);
		}
		CHECK(h.version == WIRE_VERSION && h.flags == 0);
		CHECK(h.payload_len == size - WIRE_HEADER_LEN - WIRE_MAC_LEN);
		CHECK(p.p == data + WIRE_HEADER_LEN && p.len == h.payload_len);
		check_payload(h.type, p.p, p.len);
	}
}

static void mode_decode(const uint8_t *data, size_t size)
{
	if (size < 1)
		return;
	const uint8_t *p = data + 1;
	size_t len = size - 1;
	switch (data[0] % 8u) {
	case 5:
		check_event(p, len);
		break;
	case 6:
		check_error(p, len);
		break;
	case 7:
		check_result(p, len);
		break;
	case 0:
		check_exited(p, len);
		break;
	case 1:
		(void)check_identity(p, len);
		break;
	case 2:
		check_hello(p, len);
		break;
	case 3:
		check_str(p, len);
		break;
	default:
		check_cursor(p, len);
		break;
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size > FRAME_MAX_INPUT)
		return -1; /* keep it out of the corpus */
	if (size < 1)
		return 0;
	switch (data[0] % 3u) {
	case 0:
		mode_seal(data + 1, size - 1);
		break;
	case 1:
		mode_open(data + 1, size - 1);
		break;
	default:
		mode_decode(data + 1, size - 1);
		break;
	}
	return 0;
}
