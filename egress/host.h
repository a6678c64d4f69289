/* SPDX-License-Identifier: MIT */
/*
 * Host names and addresses as the egress proxy sees them: one parser for every host a client,
 * a ClientHello or a policy entry names, and the address classes a resolved name may not land
 * in unless the policy lists the address. Pure: no syscalls.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "egress-limits.h"
#include "wire.h"

/* An address. IPv4 sits in b[0..3]; every unused byte is zero, so two equal ones memcmp equal. */
struct egr_ip {
	uint8_t family; /* 4 or 6 */
	uint8_t b[16];
};

enum egr_host_type {
	EGR_HOST_NAME = 1,
	EGR_HOST_IPV4 = 2,
	EGR_HOST_IPV6 = 3,
};

/* A parsed host. */
struct egr_host {
	enum egr_host_type type;
	/*
	 * Canonical text, NUL-terminated: a name in lower case without a trailing dot, a dotted
	 * quad, or IPv6 as inet_ntop(3) prints it (no brackets).
	 */
	char text[EGR_MAX_HOST + 1];
	size_t text_len;
	struct egr_ip ip; /* EGR_HOST_IPV4 and EGR_HOST_IPV6 only; zero for a name */
};

/*
 * Parses the whole view as a host:
 *  - a DNS name: labels of 1..63 bytes of [A-Za-z0-9_-], neither starting nor ending with
 *    a hyphen, joined by dots, 253 bytes at most; one trailing dot is dropped and ASCII case
 *    folded. The last label must not start with a
 *    digit, so that numeric spellings a resolver would read as an address (127.1, 2130706433,
 *    0x7f.1) are refused instead of becoming names;
 *  - an IPv4 address as exactly four decimal octets without leading zeros;
 *  - an IPv6 address in brackets, without a zone. An IPv4-mapped one (::ffff:a.b.c.d) is that
 *    IPv4 address, so no rule or class can be dodged by spelling it the other way.
 * Returns 0, or -EINVAL; *out untouched on failure. r is not consumed.
 */
int egr_host_parse(const struct wire_rd *r, struct egr_host *out);

/* As egr_host_parse, on a NUL-free C string of len bytes. */
int egr_host_parse_str(const char *s, size_t len, struct egr_host *out);

/* True iff a and b are the same host (same type and canonical text). */
bool egr_host_equal(const struct egr_host *a, const struct egr_host *b);

/*
 * Writes ip's text (a dotted quad, or IPv6 as inet_ntop prints it) into buf of cap bytes.
 * Returns 0, or -ENOSPC (buf untouched beyond its first byte, which is then NUL).
 */
int egr_ip_format(const struct egr_ip *ip, char *buf, size_t cap);

/* An IPv4-mapped IPv6 address becomes its IPv4 address; anything else is left as it is. */
void egr_ip_canonical(struct egr_ip *ip);

/* True iff ip lies in net/prefix (same family; prefix at most 32 or 128). */
bool egr_ip_in(const struct egr_ip *ip, const struct egr_ip *net, unsigned prefix);

/* The address classes. Every class but PUBLIC is refused unless listed explicitly. */
enum egr_addr_class {
	EGR_ADDR_PUBLIC = 0,
	EGR_ADDR_UNSPECIFIED, /* 0.0.0.0/8, :: */
	EGR_ADDR_LOOPBACK,    /* 127.0.0.0/8, ::1 */
	EGR_ADDR_LINK_LOCAL,  /* 169.254.0.0/16 (cloud metadata at .169.254), fe80::/10 */
	EGR_ADDR_PRIVATE,     /* 10/8, 172.16/12, 192.168/16, fc00::/7, fec0::/10 */
	EGR_ADDR_CGNAT,       /* 100.64.0.0/10 */
	EGR_ADDR_MULTICAST,   /* 224.0.0.0/4, ff00::/8 */
	EGR_ADDR_RESERVED,    /* documentation, benchmarking, protocol, 240/4, non-global IPv6 */
};

/*
 * The class of ip (canonical or not: a mapped address is classed as its IPv4 address, and
 * 6to4 and NAT64 addresses by the IPv4 address they carry).
 */
enum egr_addr_class egr_ip_class(const struct egr_ip *ip);

/* A short lower-case name of c ("loopback", "link-local", ...), static storage. */
const char *egr_addr_class_name(enum egr_addr_class c);
