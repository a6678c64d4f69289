/* SPDX-License-Identifier: MIT */
/*
 * Host names, address literals and address classes (host.h). Every byte is read through the
 * bounded reader; inet_pton(3) and inet_ntop(3) only ever see a NUL-terminated copy of a view
 * that was checked for length and alphabet first.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "host.h"
#include "wire-text.h"

#define IPV4_TEXT_MAX 15u /* 255.255.255.255 */
#define IPV6_TEXT_MAX 45u /* ffff:ffff:ffff:ffff:ffff:ffff:255.255.255.255 */

static bool label_byte(uint8_t b)
{
	return (b >= 'a' && b <= 'z') || (b >= 'A' && b <= 'Z') || (b >= '0' && b <= '9') ||
	       b == '-' || b == '_';
}

static bool ipv4_byte(uint8_t b)
{
	return (b >= '0' && b <= '9') || b == '.';
}

static bool ipv6_byte(uint8_t b)
{
	return (b >= '0' && b <= '9') || (b >= 'a' && b <= 'f') || (b >= 'A' && b <= 'F') ||
	       b == ':' || b == '.';
}

static bool is_hyphen(uint8_t b)
{
	return b == '-';
}

static bool is_digit(uint8_t b)
{
	return b >= '0' && b <= '9';
}

static char lower(uint8_t b)
{
	return (char)((b >= 'A' && b <= 'Z') ? b + ('a' - 'A') : b);
}

/* Copies the view (at most cap - 1 bytes) into buf as a C string. False when it does not fit. */
static bool view_cstr(const struct wire_rd *r, char *buf, size_t cap)
{
	struct wire_rd copy = *r;
	size_t n = r->len;
	if (n >= cap || !wire_get_bytes(&copy, buf, n))
		return false;
	buf[n] = '\0';
	return true;
}

static void set_ipv4(struct egr_host *h, const uint8_t a[4])
{
	memset(&h->ip, 0, sizeof(h->ip));
	h->type = EGR_HOST_IPV4;
	h->ip.family = 4;
	memcpy(h->ip.b, a, 4);
}

static int parse_ipv6(const struct wire_rd *r, struct egr_host *out)
{
	struct wire_rd t = *r, inner;
	char buf[IPV6_TEXT_MAX + 1];
	if (!wire_get_lit(&t, "[", 1, false) || !wire_get_until(&t, ']', IPV6_TEXT_MAX, &inner) ||
	    !wire_done(&t) || !wire_all(&inner, ipv6_byte) || !view_cstr(&inner, buf, sizeof(buf)))
		return -EINVAL;
	uint8_t a[16];
	if (inet_pton(AF_INET6, buf, a) != 1)
		return -EINVAL;
	struct egr_host h;
	memset(&h, 0, sizeof(h));
	h.type = EGR_HOST_IPV6;
	h.ip.family = 6;
	memcpy(h.ip.b, a, 16);
	egr_ip_canonical(&h.ip);
	if (h.ip.family == 4)
		h.type = EGR_HOST_IPV4;
	if (egr_ip_format(&h.ip, h.text, sizeof(h.text)) < 0)
		return -EINVAL;
	h.text_len = strlen(h.text);
	*out = h;
	return 0;
}

/* A dotted quad, or -EINVAL (then the caller tries a name, which refuses a numeric one). */
static int parse_ipv4(const struct wire_rd *r, struct egr_host *out)
{
	char buf[IPV4_TEXT_MAX + 1];
	uint8_t a[4];
	if (!wire_all(r, ipv4_byte) || !view_cstr(r, buf, sizeof(buf)) ||
	    inet_pton(AF_INET, buf, a) != 1)
		return -EINVAL;
	struct egr_host h;
	memset(&h, 0, sizeof(h));
	set_ipv4(&h, a);
	if (egr_ip_format(&h.ip, h.text, sizeof(h.text)) < 0)
		return -EINVAL;
	h.text_len = strlen(h.text);
	/* inet_pton refuses leading zeros; its form must also be the one given. */
	if (h.text_len != r->len)
		return -EINVAL;
	*out = h;
	return 0;
}

static int parse_name(const struct wire_rd *r, struct egr_host *out)
{
	struct wire_rd t = *r;
	if (t.len == 0)
		return -EINVAL;
	/* One trailing dot names the same host (the DNS root); only one is folded. */
	struct wire_rd head, tail = t;
	if (t.len > 1 && wire_get_view(&tail, t.len - 1, &head) && wire_eq_ci(&tail, ".", 1))
		t = head;
	if (t.len > EGR_MAX_HOST)
		return -EINVAL;

	struct egr_host h;
	memset(&h, 0, sizeof(h));
	h.type = EGR_HOST_NAME;
	struct wire_rd label;
	uint8_t first = 0;
	for (;;) {
		if (!wire_get_while(&t, label_byte, EGR_MAX_LABEL, &label) || label.len == 0)
			return -EINVAL;
		/* A label neither starts nor ends with a hyphen (RFC 1123 section 2.1). */
		struct wire_rd trimmed = label;
		wire_trim_end(&trimmed, is_hyphen);
		if (!wire_peek_u8(&label, &first) || first == '-' || trimmed.len != label.len)
			return -EINVAL;
		uint8_t b;
		while (wire_get_u8(&label, &b))
			h.text[h.text_len++] = lower(b);
		if (wire_done(&t))
			break;
		if (!wire_get_lit(&t, ".", 1, false))
			return -EINVAL;
		h.text[h.text_len++] = '.';
	}
	if (is_digit(first))
		return -EINVAL;
	h.text[h.text_len] = '\0';
	*out = h;
	return 0;
}

int egr_host_parse(const struct wire_rd *r, struct egr_host *out)
{
	uint8_t first;
	if (!wire_peek_u8(r, &first))
		return -EINVAL;
	if (first == '[')
		return parse_ipv6(r, out);
	if (parse_ipv4(r, out) == 0)
		return 0;
	return parse_name(r, out);
}

int egr_host_parse_str(const char *s, size_t len, struct egr_host *out)
{
	struct wire_rd r;
	wire_rd_init(&r, s, len);
	if (memchr(s, '\0', len))
		return -EINVAL;
	return egr_host_parse(&r, out);
}

bool egr_host_equal(const struct egr_host *a, const struct egr_host *b)
{
	return a->type == b->type && a->text_len == b->text_len &&
	       memcmp(a->text, b->text, a->text_len) == 0;
}

int egr_ip_format(const struct egr_ip *ip, char *buf, size_t cap)
{
	char tmp[INET6_ADDRSTRLEN];
	if (cap)
		buf[0] = '\0';
	if (!inet_ntop(ip->family == 4 ? AF_INET : AF_INET6, ip->b, tmp, sizeof(tmp)))
		return -ENOSPC;
	size_t n = strlen(tmp);
	if (n >= cap)
		return -ENOSPC;
	memcpy(buf, tmp, n + 1);
	return 0;
}

static const uint8_t mapped_prefix[12] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff };

void egr_ip_canonical(struct egr_ip *ip)
{
	if (ip->family != 6 || memcmp(ip->b, mapped_prefix, sizeof(mapped_prefix)) != 0)
		return;
	uint8_t a[4];
	memcpy(a, ip->b + 12, 4);
	memset(ip, 0, sizeof(*ip));
	ip->family = 4;
	memcpy(ip->b, a, 4);
}

bool egr_ip_in(const struct egr_ip *ip, const struct egr_ip *net, unsigned prefix)
{
	unsigned bits = ip->family == 4 ? 32u : 128u;
	if (ip->family != net->family || prefix > bits)
		return false;
	unsigned whole = prefix / 8, rest = prefix % 8;
	if (memcmp(ip->b, net->b, whole) != 0)
		return false;
	if (rest == 0)
		return true;
	uint8_t mask = (uint8_t)(0xffu << (8 - rest));
	return (ip->b[whole] & mask) == (net->b[whole] & mask);
}

/* One IPv4 range and its class. */
struct v4_range {
	uint8_t net[4];
	unsigned prefix;
	enum egr_addr_class cls;
};

/* Checked in order; the first that holds decides. Anything else is public. */
static const struct v4_range v4_ranges[] = {
	{ { 0, 0, 0, 0 }, 8, EGR_ADDR_UNSPECIFIED },       /* "this network" */
	{ { 10, 0, 0, 0 }, 8, EGR_ADDR_PRIVATE },
	{ { 100, 64, 0, 0 }, 10, EGR_ADDR_CGNAT },
	{ { 127, 0, 0, 0 }, 8, EGR_ADDR_LOOPBACK },
	{ { 169, 254, 0, 0 }, 16, EGR_ADDR_LINK_LOCAL },   /* 169.254.169.254: cloud metadata */
	{ { 172, 16, 0, 0 }, 12, EGR_ADDR_PRIVATE },
	{ { 192, 0, 0, 0 }, 24, EGR_ADDR_RESERVED },       /* IETF protocol assignments */
	{ { 192, 0, 2, 0 }, 24, EGR_ADDR_RESERVED },       /* documentation */
	{ { 192, 88, 99, 0 }, 24, EGR_ADDR_RESERVED },     /* 6to4 relay anycast */
	{ { 192, 168, 0, 0 }, 16, EGR_ADDR_PRIVATE },
	{ { 198, 18, 0, 0 }, 15, EGR_ADDR_RESERVED },      /* benchmarking */
	{ { 198, 51, 100, 0 }, 24, EGR_ADDR_RESERVED },    /* documentation */
	{ { 203, 0, 113, 0 }, 24, EGR_ADDR_RESERVED },     /* documentation */
	{ { 224, 0, 0, 0 }, 4, EGR_ADDR_MULTICAST },
	{ { 240, 0, 0, 0 }, 4, EGR_ADDR_RESERVED },        /* reserved, and 255.255.255.255 */
};

static enum egr_addr_class class_v4(const uint8_t a[4])
{
	struct egr_ip ip = { .family = 4 };
	memcpy(ip.b, a, 4);
	for (size_t i = 0; i < sizeof(v4_ranges) / sizeof(v4_ranges[0]); i++) {
		struct egr_ip net = { .family = 4 };
		memcpy(net.b, v4_ranges[i].net, 4);
		if (egr_ip_in(&ip, &net, v4_ranges[i].prefix))
			return v4_ranges[i].cls;
	}
	return EGR_ADDR_PUBLIC;
}

/* True iff the first prefix bits of b equal those of the 16 bytes of net. */
static bool v6_in(const uint8_t b[16], const uint8_t net[16], unsigned prefix)
{
	struct egr_ip ip = { .family = 6 }, n = { .family = 6 };
	memcpy(ip.b, b, 16);
	memcpy(n.b, net, 16);
	return egr_ip_in(&ip, &n, prefix);
}

static enum egr_addr_class class_v6(const uint8_t b[16])
{
	static const uint8_t zero[16] = { 0 };
	static const uint8_t one[16] = { [15] = 1 };
	static const uint8_t nat64[16] = { 0x00, 0x64, 0xff, 0x9b };
	static const uint8_t sixtofour[16] = { 0x20, 0x02 };
	static const uint8_t global[16] = { 0x20 };
	static const uint8_t teredo[16] = { 0x20, 0x01, 0x00, 0x00 };
	static const uint8_t orchid[16] = { 0x20, 0x01, 0x00, 0x10 };
	static const uint8_t bench[16] = { 0x20, 0x01, 0x00, 0x02 };
	static const uint8_t doc[16] = { 0x20, 0x01, 0x0d, 0xb8 };
	static const uint8_t doc2[16] = { 0x3f, 0xff };
	static const uint8_t ula[16] = { 0xfc };
	static const uint8_t sitelocal[16] = { 0xfe, 0xc0 };
	static const uint8_t linklocal[16] = { 0xfe, 0x80 };
	static const uint8_t mcast[16] = { 0xff };

	if (memcmp(b, zero, 16) == 0)
		return EGR_ADDR_UNSPECIFIED;
	if (memcmp(b, one, 16) == 0)
		return EGR_ADDR_LOOPBACK;
	if (memcmp(b, mapped_prefix, sizeof(mapped_prefix)) == 0)
		return class_v4(b + 12);
	/* NAT64's well-known prefix carries an IPv4 address: judge that one. */
	if (v6_in(b, nat64, 96))
		return class_v4(b + 12);
	/* 6to4 carries the IPv4 address of its relay in bits 16..47. */
	if (v6_in(b, sixtofour, 16))
		return class_v4(b + 2);
	if (v6_in(b, mcast, 8))
		return EGR_ADDR_MULTICAST;
	if (v6_in(b, linklocal, 10))
		return EGR_ADDR_LINK_LOCAL;
	if (v6_in(b, ula, 7) || v6_in(b, sitelocal, 10))
		return EGR_ADDR_PRIVATE;
	/* Only global unicast can be public; within it, the special-purpose blocks are not. */
	if (!v6_in(b, global, 3) || v6_in(b, teredo, 32) || v6_in(b, orchid, 28) ||
	    v6_in(b, bench, 48) || v6_in(b, doc, 32) || v6_in(b, doc2, 20))
		return EGR_ADDR_RESERVED;
	return EGR_ADDR_PUBLIC;
}

enum egr_addr_class egr_ip_class(const struct egr_ip *ip)
{
	return ip->family == 4 ? class_v4(ip->b) : class_v6(ip->b);
}

const char *egr_addr_class_name(enum egr_addr_class c)
{
	switch (c) {
	case EGR_ADDR_PUBLIC:
		return "public";
	case EGR_ADDR_UNSPECIFIED:
		return "unspecified";
	case EGR_ADDR_LOOPBACK:
		return "loopback";
	case EGR_ADDR_LINK_LOCAL:
		return "link-local";
	case EGR_ADDR_PRIVATE:
		return "private";
	case EGR_ADDR_CGNAT:
		return "shared (CGNAT)";
	case EGR_ADDR_MULTICAST:
		return "multicast";
	case EGR_ADDR_RESERVED:
		return "reserved";
	}
	return "unknown";
}
