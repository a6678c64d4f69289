/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer target for what warden reads from the user's systemd over D-Bus.
 *
 * Target functions (sandbox/sdbus-util.c): sdbus_msg_length(), sdbus_msg_parse(),
 * sdbus_read_job_removed(), sdbus_read_error(), sdbus_body() with the cursor getters, and
 * sdbus_auth_reply(); the writer (sdbus_msg_begin(), sdbus_build_start_scope()) for the
 * round trips.
 *
 * Input: one byte that picks the mode, then the rest:
 *   0: a whole message as systemd or the bus would send it;
 *   1: one line of the authentication exchange (without "\r\n");
 *   2: strings for the scope request: unit NUL description, written and read back.
 * Inputs over SDBUS_MSG_MAX + 1 bytes are rejected first. No time, no randomness, no state.
 *
 * Beyond "no crash, no leak, no UB", it checks on every input:
 *  - the parser returns 0, -EBADMSG or -EMSGSIZE, leaves its output untouched on failure,
 *    agrees with sdbus_msg_length on the length, and gives the same answer twice;
 *  - on success every view lies inside the message and ends in its NUL, the type is 1..4,
 *    the serial is not 0 and the body starts 8-aligned inside the message;
 *  - a method call written with the parsed header fields parses back to the same fields;
 *  - the body readers return 0 or -EBADMSG and their views lie inside the message;
 *  - the authentication answer is 0, -EACCES or -EBADMSG, and 0 only for "OK " and 32 hex;
 *  - a scope request written from any unit and description (within the limits) parses, and
 *    its body reads back the same unit, "fail", the description and the pid.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz-util.h"
#include "sdbus-util.h"

static bool inside(const struct sdbus_msg *m, struct sdbus_str s)
{
	if (s.len == 0)
		return s.p != NULL && s.p[0] == '\0';
	const uint8_t *p = (const uint8_t *)s.p;
	return p >= m->msg && p + s.len < m->msg + m->len && s.p[s.len] == '\0' &&
	       !memchr(s.p, 0, s.len);
}

static bool same(struct sdbus_str a, struct sdbus_str b)
{
	return a.len == b.len && (a.len == 0 || memcmp(a.p, b.p, a.len) == 0);
}

/* A NUL-terminated heap copy of s (whose bytes hold no NUL). */
static char *dup_str(struct sdbus_str s)
{
	char *c = malloc(s.len + 1);
	CHECK(c != NULL);
	if (s.len)
		memcpy(c, s.p, s.len);
	c[s.len] = '\0';
	return c;
}

/* Writes a call with m's header fields and no body, parses it, and compares. */
static void roundtrip_fields(const struct sdbus_msg *m)
{
	char *path = dup_str(m->path), *iface = dup_str(m->interface);
	char *member = dup_str(m->member), *dest = dup_str(m->destination);
	const struct sdbus_call c = {
		.dest = dest[0] ? dest : NULL,
		.path = path[0] ? path : "/",
		.interface = iface[0] ? iface : NULL,
		.member = member[0] ? member : "M",
	};
	size_t cap = m->len + 256, len;
	uint8_t *buf = malloc(cap);
	CHECK(buf != NULL);
	struct sdbus_wr w;
	sdbus_wr_init(&w, buf, cap);
	sdbus_msg_begin(&w, 7, &c);
	if (sdbus_msg_end(&w, &len) == 0) {
		struct sdbus_msg back;
		CHECK(sdbus_msg_parse(buf, len, &back) == 0);
		CHECK(back.type == SDBUS_CALL && back.serial == 7 && back.body_off == len);
		CHECK(sdbus_str_is(back.path, c.path) && sdbus_str_is(back.member, c.member));
		CHECK(same(back.interface, m->interface) && same(back.destination, m->destination));
	} else {
		/* Only a string over the writer's limit may fail it; the room was enough. */
		CHECK(m->path.len > SDBUS_STR_MAX || m->interface.len > SDBUS_STR_MAX ||
		      m->member.len > SDBUS_STR_MAX || m->destination.len > SDBUS_STR_MAX);
	}
	free(buf);
	free(path);
	free(iface);
	free(member);
	free(dest);
}

static void fuzz_message(const uint8_t *data, size_t size)
{
	struct sdbus_msg m, untouched;
	memset(&m, 0x5a, sizeof(m));
	memset(&untouched, 0x5a, sizeof(untouched));
	int r = sdbus_msg_parse(data, size, &m);
	CHECK(r == 0 || r == -EBADMSG || r == -EMSGSIZE);
	if (size >= SDBUS_FIXED_LEN) {
		size_t want = 0;
		int lr = sdbus_msg_length(data, &want);
		CHECK(lr == 0 || lr == -EBADMSG || lr == -EMSGSIZE);
		if (r == 0)
			CHECK(lr == 0 && want == size);
		if (lr == -EMSGSIZE)
			CHECK(r == -EMSGSIZE);
	}
	struct sdbus_msg again;
	CHECK(sdbus_msg_parse(data, size, &again) == r);
	if (r < 0) {
		CHECK(!memcmp(&m, &untouched, sizeof(m)));
		return;
	}
	CHECK(m.type >= SDBUS_CALL && m.type <= SDBUS_SIGNAL && m.serial != 0);
	CHECK(m.body_off % 8 == 0 && m.body_off >= SDBUS_FIXED_LEN && m.body_off <= size);
	CHECK(inside(&m, m.path) && inside(&m, m.interface) && inside(&m, m.member) &&
	      inside(&m, m.error_name) && inside(&m, m.destination) && inside(&m, m.sender) &&
	      inside(&m, m.signature));
	CHECK(m.signature.len > 0 || m.body_off == size);
	roundtrip_fields(&m);

	struct sdbus_str a, b;
	r = sdbus_read_job_removed(&m, &a, &b);
	CHECK(r == 0 || r == -EBADMSG);
	if (r == 0)
		CHECK(m.type == SDBUS_SIGNAL && inside(&m, a) && inside(&m, b));
	r = sdbus_read_error(&m, &a, &b);
	CHECK(r == 0 || r == -EBADMSG);
	if (r == 0)
		CHECK(m.type == SDBUS_ERROR && inside(&m, a) && inside(&m, b));

	/* The answers warden reads: "o", "v" holding "s" or "b". */
	struct sdbus_rd rd;
	if (sdbus_body(&m, "o", &rd) == 0 && sdbus_get_str(&rd, &a))
		CHECK(inside(&m, a) && rd.pos <= rd.end);
	if (sdbus_body(&m, "v", &rd) == 0) {
		struct sdbus_rd v = rd;
		bool flag;
		if (sdbus_get_variant(&v, "s") && sdbus_get_str(&v, &a))
			CHECK(inside(&m, a));
		v = rd;
		if (sdbus_get_variant(&v, "b") && sdbus_get_bool(&v, &flag))
			CHECK(v.pos <= v.end);
	}
	/* Skipping the whole body by its own signature ends exactly at the end, or fails. */
	if (m.signature.len && sdbus_body(&m, m.signature.p, &rd) == 0) {
		struct sdbus_rd s = rd;
		size_t i = 0;
		bool ok = true;
		/* one complete type at a time: try each prefix length as sdbus_skip does */
		while (ok && i < m.signature.len) {
			size_t n = 1;
			while (i + n <= m.signature.len && !sdbus_skip(&s, m.signature.p + i, n))
				n++;
			ok = i + n <= m.signature.len;
			i += n;
		}
		CHECK(s.pos <= s.end);
	}
}

static void fuzz_auth(const uint8_t *data, size_t size)
{
	int r = sdbus_auth_reply((const char *)data, size);
	CHECK(r == 0 || r == -EACCES || r == -EBADMSG);
	if (r == 0)
		CHECK(size == 35 && memcmp(data, "OK ", 3) == 0);
	if (r == -EACCES)
		CHECK(size >= 8 && memcmp(data, "REJECTED", 8) == 0);
}

static void fuzz_scope(const uint8_t *data, size_t size)
{
	const uint8_t *nul = memchr(data, 0, size);
	if (!nul)
		return;
	size_t ulen = (size_t)(nul - data), dlen = size - ulen - 1;
	if (memchr(nul + 1, 0, dlen))
		return;
	char *unit = malloc(ulen + 1), *desc = malloc(dlen + 1);
	CHECK(unit && desc);
	memcpy(unit, data, ulen);
	unit[ulen] = '\0';
	memcpy(desc, nul + 1, dlen);
	desc[dlen] = '\0';
	size_t cap = 2 * size + 1024, len;
	uint8_t *buf = malloc(cap);
	CHECK(buf != NULL);
	int r = sdbus_build_start_scope(buf, cap, 3, unit, 4242, desc, &len);
	if (ulen > SDBUS_STR_MAX || dlen > SDBUS_STR_MAX) {
		CHECK(r == -EINVAL);
	} else {
		CHECK(r == 0);
		struct sdbus_msg m;
		struct sdbus_rd rd, props, pids, aux;
		struct sdbus_str s, name;
		uint32_t pid = 0;
		CHECK(sdbus_msg_parse(buf, len, &m) == 0);
		CHECK(sdbus_str_is(m.member, "StartTransientUnit"));
		CHECK(sdbus_body(&m, "ssa(sv)a(sa(sv))", &rd) == 0);
		CHECK(sdbus_get_str(&rd, &s) && sdbus_str_is(s, unit));
		CHECK(sdbus_get_str(&rd, &s) && sdbus_str_is(s, "fail"));
		/* a(sv): read the description and the pid back, element by element */
		CHECK(sdbus_get_array(&rd, 8, &props));
		bool saw_desc = false, saw_pid = false;
		while (!sdbus_done(&props)) {
			CHECK(sdbus_get_struct(&props) && sdbus_get_str(&props, &name));
			if (sdbus_str_is(name, "Description")) {
				CHECK(sdbus_get_variant(&props, "s") && sdbus_get_str(&props, &s) &&
				      sdbus_str_is(s, desc));
				saw_desc = true;
			} else if (sdbus_str_is(name, "PIDs")) {
				CHECK(sdbus_get_variant(&props, "au") &&
				      sdbus_get_array(&props, 4, &pids) &&
				      sdbus_get_u32(&pids, &pid) && pid == 4242 && sdbus_done(&pids));
				saw_pid = true;
			} else {
				struct sdbus_str sig;
				CHECK(sdbus_get_sig(&props, &sig) && sdbus_skip(&props, sig.p, sig.len));
			}
		}
		CHECK(saw_desc && saw_pid);
		CHECK(sdbus_get_array(&rd, 8, &aux) && sdbus_done(&aux) && sdbus_done(&rd));
	}
	free(buf);
	free(unit);
	free(desc);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1 || size > SDBUS_MSG_MAX + 1)
		return -1; /* keep it out of the corpus */
	switch (data[0]) {
	case 0:
		fuzz_message(data + 1, size - 1);
		break;
	case 1:
		fuzz_auth(data + 1, size - 1);
		break;
	case 2:
		fuzz_scope(data + 1, size - 1);
		break;
	default:
		break;
	}
	return 0;
}
