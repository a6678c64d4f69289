/* SPDX-License-Identifier: MIT */
/*
 * Unit tests for the egress matcher and host parser (egress/match-util.c, host-util.c): host
 * spellings, entry parsing and canonical text, every wildcard edge, ports, deny before allow,
 * IP literals, and the address classes with their explicit listing.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "match.h"
#include "wire-egress.h"

static struct egr_host host_of(const char *s)
{
	struct egr_host h;
	int r = egr_host_parse_str(s, strlen(s), &h);
	if (r < 0)
		fprintf(stderr, "host '%s' does not parse\n", s);
	assert_int_equal(r, 0);
	return h;
}

static void test_host_names(void **state)
{
	(void)state;
	static const struct {
		const char *in, *canon;
		enum egr_host_type type;
	} ok[] = {
		{ "Example.COM", "example.com", EGR_HOST_NAME },
		{ "example.com.", "example.com", EGR_HOST_NAME },
		{ "localhost", "localhost", EGR_HOST_NAME },
		{ "_dmarc.x-y.test", "_dmarc.x-y.test", EGR_HOST_NAME },
		{ "1password.com", "1password.com", EGR_HOST_NAME },
		{ "1.2.3.4", "1.2.3.4", EGR_HOST_IPV4 },
		{ "[::1]", "::1", EGR_HOST_IPV6 },
		{ "[2001:DB8:0:0::1]", "2001:db8::1", EGR_HOST_IPV6 },
		{ "[::ffff:10.1.2.3]", "10.1.2.3", EGR_HOST_IPV4 },
		{ "[::FFFF:a01:203]", "10.1.2.3", EGR_HOST_IPV4 },
	};
	for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
		struct egr_host h = host_of(ok[i].in);
		assert_string_equal(h.text, ok[i].canon);
		assert_int_equal(h.text_len, strlen(ok[i].canon));
		assert_int_equal(h.type, ok[i].type);
	}
	static const char *const bad[] = {
		"", ".", "a..b", ".a", "a.b..", "-", "-a.test", "a-.test", "a.test-", "a b", "a:b", "a/b", "a@b", "*.a", "a.\xc3\xa9",
		"127.1", "0x7f.1", "2130706433", "1.2.3", "01.2.3.4", "1.2.3.4.5", "256.1.1.1",
		"a.1b", "[1.2.3.4]", "[::1", "::1", "[::1]x", "[::1%1]", "[]", "[g::1]",
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct egr_host h;
		memset(&h, 0x5a, sizeof(h));
		struct egr_host untouched = h;
		int r = egr_host_parse_str(bad[i], strlen(bad[i]), &h);
		if (r != -EINVAL)
			fprintf(stderr, "host '%s' parsed\n", bad[i]);
		assert_int_equal(r, -EINVAL);
		assert_memory_equal(&h, &untouched, sizeof(h));
	}
}

static void test_host_lengths(void **state)
{
	(void)state;
	char label[80], name[300];
	struct egr_host h;
	memset(label, 'a', 63);
	assert_int_equal(egr_host_parse_str(label, 63, &h), 0);
	memset(label, 'a', 64);
	assert_int_equal(egr_host_parse_str(label, 64, &h), -EINVAL);
	/* 253 bytes: 63 + . + 63 + . + 63 + . + 61 */
	memset(name, 'a', sizeof(name));
	name[63] = name[127] = name[191] = '.';
	assert_int_equal(egr_host_parse_str(name, 253, &h), 0);
	assert_int_equal(h.text_len, 253);
	name[253] = '.';
	assert_int_equal(egr_host_parse_str(name, 254, &h), 0); /* its trailing dot folded */
	name[253] = 'a';
	assert_int_equal(egr_host_parse_str(name, 254, &h), -EINVAL);
	assert_int_equal(egr_host_parse_str("a\0b", 3, &h), -EINVAL);
}

static struct egr_rule rule_of(const char *s)
{
	struct egr_rule r;
	int rc = egr_rule_parse(s, strlen(s), &r);
	if (rc < 0)
		fprintf(stderr, "entry '%s' does not parse\n", s);
	assert_int_equal(rc, 0);
	return r;
}

static void test_rule_parse(void **state)
{
	(void)state;
	static const struct {
		const char *in, *canon;
		enum egr_rule_type type;
		uint16_t port;
	} ok[] = {
		{ "PyPI.org.", "pypi.org", EGR_RULE_NAME, 0 },
		{ "api.anthropic.com", "api.anthropic.com", EGR_RULE_NAME, 0 },
		{ "*.pythonhosted.org:443", "*.pythonhosted.org:443", EGR_RULE_SUFFIX, 443 },
		{ "*.Test", "*.test", EGR_RULE_SUFFIX, 0 },
		{ "registry.npmjs.org:443", "registry.npmjs.org:443", EGR_RULE_NAME, 443 },
		{ "127.0.0.1:8080", "127.0.0.1:8080", EGR_RULE_NET, 8080 },
		{ "10.0.0.0/8", "10.0.0.0/8", EGR_RULE_NET, 0 },
		{ "10.0.0.0/8:443", "10.0.0.0/8:443", EGR_RULE_NET, 443 },
		{ "1.2.3.4/32", "1.2.3.4", EGR_RULE_NET, 0 },
		{ "0.0.0.0/0", "0.0.0.0/0", EGR_RULE_NET, 0 },
		{ "[::1]:8080", "[::1]:8080", EGR_RULE_NET, 8080 },
		{ "[FD00::/8]", "[fd00::/8]", EGR_RULE_NET, 0 },
		{ "[::ffff:10.0.0.0/104]:443", "10.0.0.0/8:443", EGR_RULE_NET, 443 },
		{ "[::ffff:127.0.0.1]", "127.0.0.1", EGR_RULE_NET, 0 },
	};
	for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
		struct egr_rule r = rule_of(ok[i].in);
		assert_string_equal(r.text, ok[i].canon);
		assert_int_equal(r.type, ok[i].type);
		assert_int_equal(r.port, ok[i].port);
		/* The canonical text parses to the same entry. */
		struct egr_rule again = rule_of(r.text);
		assert_string_equal(again.text, r.text);
	}
	static const char *const bad[] = {
		"", "*", "*.", "*.*.a", "a.*.b", "**.a", "*a.b", "a..b", "-", ":443", "a:",
		"a:0", "a:65536", "a:080", "a:44a", "a:443:1", "a b", "a/8", "*.1.2.3.4",
		"*.[::1]", "10.0.0.1/8", "10.0.0.0/33", "10.0.0.0/", "10.0.0.0/08", "1.2.3",
		"[::1", "::1", "[::1]x", "[::1]:", "[fd00::1/8]", "[::/129]",
		"[::ffff:10.0.0.0/95]", "[a.test]", "127.1", "2130706433",
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct egr_rule r;
		memset(&r, 0x5a, sizeof(r));
		struct egr_rule untouched = r;
		int rc = egr_rule_parse(bad[i], strlen(bad[i]), &r);
		if (rc != -EINVAL)
			fprintf(stderr, "entry '%s' parsed\n", bad[i]);
		assert_int_equal(rc, -EINVAL);
		assert_memory_equal(&r, &untouched, sizeof(r));
	}
	struct egr_rule r;
	char long_text[EGR_MAX_RULE_TEXT + 2];
	memset(long_text, 'a', sizeof(long_text));
	assert_int_equal(egr_rule_parse(long_text, sizeof(long_text), &r), -EINVAL);
	assert_int_equal(egr_rule_parse("a\0b", 3, &r), -EINVAL);
}

/* rules from "allow" and "deny" lists (NULL-terminated). */
static void rules_of(struct egr_rules *rules, const char *const *allow, const char *const *deny)
{
	memset(rules, 0, sizeof(*rules));
	for (size_t i = 0; allow && allow[i]; i++)
		assert_int_equal(egr_rules_add(rules, false, allow[i], strlen(allow[i])), 0);
	for (size_t i = 0; deny && deny[i]; i++)
		assert_int_equal(egr_rules_add(rules, true, deny[i], strlen(deny[i])), 0);
}

/* Asserts the decision for host:port: verdict, reason and the deciding entry's text. */
static void expect(const struct egr_rules *rules, const char *host, uint16_t port,
		   uint8_t verdict, uint8_t reason, const char *rule)
{
	struct egr_host h = host_of(host);
	struct egr_verdict v;
	egr_rules_match(rules, &h, port, &v);
	if (v.verdict != verdict || v.reason != reason)
		fprintf(stderr, "%s:%u: verdict %u reason %u\n", host, port, v.verdict, v.reason);
	assert_int_equal(v.verdict, verdict);
	assert_int_equal(v.reason, reason);
	if (rule) {
		assert_non_null(v.rule);
		assert_string_equal(v.rule->text, rule);
	} else {
		assert_null(v.rule);
	}
}

#define ALLOWED(h, p, rule) expect(&rules, h, p, WIRE_EGRESS_ALLOWED, WIRE_EGRESS_OK, rule)
#define NOT_ALLOWED(h, p) expect(&rules, h, p, WIRE_EGRESS_DENIED, WIRE_EGRESS_NOT_ALLOWED, NULL)
#define DENIED(h, p, rule) expect(&rules, h, p, WIRE_EGRESS_DENIED, WIRE_EGRESS_DENY_RULE, rule)

static void test_wildcard_edges(void **state)
{
	(void)state;
	struct egr_rules rules;
	const char *allow[] = { "*.pypi.org", NULL };
	rules_of(&rules, allow, NULL);
	ALLOWED("files.pypi.org", 443, "*.pypi.org");
	ALLOWED("a.b.c.pypi.org", 80, "*.pypi.org");
	ALLOWED("FILES.PyPI.ORG.", 443, "*.pypi.org");
	NOT_ALLOWED("pypi.org", 443);            /* never the bare suffix */
	NOT_ALLOWED("evil-pypi.org", 443);       /* never a look-alike */
	NOT_ALLOWED("xpypi.org", 443);
	NOT_ALLOWED("pypi.org.evil.test", 443);
	NOT_ALLOWED("files.pypi.org.evil", 443);
	NOT_ALLOWED("files.pypi.orgx", 443);
	NOT_ALLOWED("org", 443);
	NOT_ALLOWED("files.pypi.org", 8443);     /* no port: 443 and 80 only */
	egr_rules_done(&rules);
}

static void test_exact_and_ports(void **state)
{
	(void)state;
	struct egr_rules rules;
	const char *allow[] = { "pypi.org", "registry.npmjs.org:8443", NULL };
	rules_of(&rules, allow, NULL);
	ALLOWED("PYPI.ORG.", 443, "pypi.org");
	ALLOWED("pypi.org", 80, "pypi.org");
	NOT_ALLOWED("pypi.org", 8080);
	NOT_ALLOWED("www.pypi.org", 443);
	NOT_ALLOWED("pypi.org.", 22);
	ALLOWED("registry.npmjs.org", 8443, "registry.npmjs.org:8443");
	NOT_ALLOWED("registry.npmjs.org", 443);
	egr_rules_done(&rules);
}

static void test_deny_first(void **state)
{
	(void)state;
	struct egr_rules rules;
	const char *allow[] = { "*.example.test", "a.x.test", "evil.example.test", NULL };
	const char *deny[] = { "evil.example.test", "*.x.test:443", NULL };
	rules_of(&rules, allow, deny);
	ALLOWED("good.example.test", 443, "*.example.test");
	DENIED("evil.example.test", 443, "evil.example.test");
	DENIED("a.x.test", 443, "*.x.test:443");
	ALLOWED("a.x.test", 80, "a.x.test");     /* the deny entry names port 443 only */
	DENIED("evil.example.test", 8443, "evil.example.test"); /* no port: every port */
	egr_rules_done(&rules);
}

static void test_ip_literals(void **state)
{
	(void)state;
	struct egr_rules rules;
	const char *allow[] = { "127.0.0.1:8080", "10.0.0.0/8", "[fd00::/8]:443", "localhost",
				"*.0.1", NULL };
	/* "*.0.1" would be a wildcard on a numeric suffix: refused by the entry parser. */
	memset(&rules, 0, sizeof(rules));
	for (size_t i = 0; i < 4; i++)
		assert_int_equal(egr_rules_add(&rules, false, allow[i], strlen(allow[i])), 0);
	assert_int_equal(egr_rules_add(&rules, false, allow[4], strlen(allow[4])), -EINVAL);
	ALLOWED("127.0.0.1", 8080, "127.0.0.1:8080");
	ALLOWED("[::ffff:127.0.0.1]", 8080, "127.0.0.1:8080");
	NOT_ALLOWED("127.0.0.1", 8081);
	NOT_ALLOWED("127.0.0.2", 8080);
	NOT_ALLOWED("[::1]", 8080);
	ALLOWED("10.200.0.1", 443, "10.0.0.0/8");
	NOT_ALLOWED("11.0.0.1", 443);
	ALLOWED("[fd12::5]", 443, "[fd00::/8]:443");
	NOT_ALLOWED("[fe80::1]", 443);
	/* A name entry never admits an address, an address entry never a name. */
	NOT_ALLOWED("1.2.3.4", 443);
	ALLOWED("localhost", 443, "localhost");
	egr_rules_done(&rules);
}

static void test_rules_cap(void **state)
{
	(void)state;
	struct egr_rules rules = { 0 };
	for (unsigned i = 0; i < EGR_MAX_RULES; i++)
		assert_int_equal(egr_rules_add(&rules, true, "a.test", 6), 0);
	assert_int_equal(egr_rules_add(&rules, true, "a.test", 6), -E2BIG);
	assert_int_equal(egr_rules_add(&rules, false, "a.test", 6), 0);
	assert_int_equal(egr_rules_add(&rules, false, "a..test", 7), -EINVAL);
	assert_int_equal(rules.n_allow, 1);
	egr_rules_done(&rules);
	assert_null(rules.allow);
	assert_int_equal(rules.n_deny, 0);
	egr_rules_done(NULL);
}

static struct egr_ip ip_of(const char *s)
{
	struct egr_ip ip = { 0 };
	if (strchr(s, ':')) {
		ip.family = 6;
		assert_int_equal(inet_pton(AF_INET6, s, ip.b), 1);
	} else {
		ip.family = 4;
		assert_int_equal(inet_pton(AF_INET, s, ip.b), 1);
	}
	return ip;
}

static void test_address_classes(void **state)
{
	(void)state;
	static const struct {
		const char *ip;
		enum egr_addr_class cls;
	} cases[] = {
		{ "8.8.8.8", EGR_ADDR_PUBLIC },
		{ "1.1.1.1", EGR_ADDR_PUBLIC },
		{ "0.0.0.0", EGR_ADDR_UNSPECIFIED },
		{ "0.1.2.3", EGR_ADDR_UNSPECIFIED },
		{ "127.0.0.1", EGR_ADDR_LOOPBACK },
		{ "127.255.255.254", EGR_ADDR_LOOPBACK },
		{ "169.254.169.254", EGR_ADDR_LINK_LOCAL },
		{ "10.0.0.1", EGR_ADDR_PRIVATE },
		{ "172.16.0.1", EGR_ADDR_PRIVATE },
		{ "172.31.255.255", EGR_ADDR_PRIVATE },
		{ "172.32.0.1", EGR_ADDR_PUBLIC },
		{ "192.168.1.1", EGR_ADDR_PRIVATE },
		{ "100.64.0.1", EGR_ADDR_CGNAT },
		{ "100.127.255.255", EGR_ADDR_CGNAT },
		{ "100.128.0.1", EGR_ADDR_PUBLIC },
		{ "224.0.0.1", EGR_ADDR_MULTICAST },
		{ "239.255.255.250", EGR_ADDR_MULTICAST },
		{ "240.0.0.1", EGR_ADDR_RESERVED },
		{ "255.255.255.255", EGR_ADDR_RESERVED },
		{ "192.0.2.1", EGR_ADDR_RESERVED },
		{ "198.18.0.1", EGR_ADDR_RESERVED },
		{ "::", EGR_ADDR_UNSPECIFIED },
		{ "::1", EGR_ADDR_LOOPBACK },
		{ "::ffff:127.0.0.1", EGR_ADDR_LOOPBACK },
		{ "::ffff:169.254.169.254", EGR_ADDR_LINK_LOCAL },
		{ "::ffff:10.0.0.1", EGR_ADDR_PRIVATE },
		{ "::ffff:8.8.8.8", EGR_ADDR_PUBLIC },
		{ "64:ff9b::7f00:1", EGR_ADDR_LOOPBACK },
		{ "64:ff9b::808:808", EGR_ADDR_PUBLIC },
		{ "2002:a9fe:a9fe::1", EGR_ADDR_LINK_LOCAL },
		{ "2002:808:808::1", EGR_ADDR_PUBLIC },
		{ "::127.0.0.1", EGR_ADDR_RESERVED },
		{ "fe80::1", EGR_ADDR_LINK_LOCAL },
		{ "febf::1", EGR_ADDR_LINK_LOCAL },
		{ "fec0::1", EGR_ADDR_PRIVATE },
		{ "fc00::1", EGR_ADDR_PRIVATE },
		{ "fd12:3456::1", EGR_ADDR_PRIVATE },
		{ "ff02::1", EGR_ADDR_MULTICAST },
		{ "2001:db8::1", EGR_ADDR_RESERVED },
		{ "2001::1", EGR_ADDR_RESERVED },
		{ "100::1", EGR_ADDR_RESERVED },
		{ "2606:4700:4700::1111", EGR_ADDR_PUBLIC },
		{ "2a00:1450::1", EGR_ADDR_PUBLIC },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct egr_ip ip = ip_of(cases[i].ip);
		enum egr_addr_class c = egr_ip_class(&ip);
		if (c != cases[i].cls)
			fprintf(stderr, "%s: class %s\n", cases[i].ip, egr_addr_class_name(c));
		assert_int_equal(c, cases[i].cls);
	}
	assert_string_equal(egr_addr_class_name(EGR_ADDR_LINK_LOCAL), "link-local");
	assert_string_equal(egr_addr_class_name(EGR_ADDR_LOOPBACK), "loopback");
}

static void expect_addr(const struct egr_rules *rules, const char *ip, uint16_t port,
			uint8_t verdict, uint8_t reason, const char *rule)
{
	struct egr_ip a = ip_of(ip);
	struct egr_verdict v;
	enum egr_addr_class cls;
	egr_rules_check_addr(rules, &a, port, &v, &cls);
	if (v.verdict != verdict || v.reason != reason)
		fprintf(stderr, "%s:%u: verdict %u reason %u\n", ip, port, v.verdict, v.reason);
	assert_int_equal(v.verdict, verdict);
	assert_int_equal(v.reason, reason);
	if (rule) {
		assert_non_null(v.rule);
		assert_string_equal(v.rule->text, rule);
	} else {
		assert_null(v.rule);
	}
}

static void test_address_check(void **state)
{
	(void)state;
	struct egr_rules rules;
	const char *allow[] = { "127.0.0.1:8080", "192.168.0.0/16", "a.test", NULL };
	const char *deny[] = { "8.8.4.4", "192.168.7.0/24", NULL };
	rules_of(&rules, allow, deny);
	uint8_t A = WIRE_EGRESS_ALLOWED, D = WIRE_EGRESS_DENIED;
	expect_addr(&rules, "8.8.8.8", 443, A, WIRE_EGRESS_OK, NULL);
	expect_addr(&rules, "8.8.4.4", 443, D, WIRE_EGRESS_DENY_RULE, "8.8.4.4");
	expect_addr(&rules, "8.8.4.4", 22, D, WIRE_EGRESS_DENY_RULE, "8.8.4.4"); /* any port */
	expect_addr(&rules, "127.0.0.1", 8080, A, WIRE_EGRESS_OK, "127.0.0.1:8080");
	expect_addr(&rules, "::ffff:127.0.0.1", 8080, A, WIRE_EGRESS_OK, "127.0.0.1:8080");
	expect_addr(&rules, "127.0.0.1", 443, D, WIRE_EGRESS_ADDRESS, NULL);
	expect_addr(&rules, "127.0.0.2", 8080, D, WIRE_EGRESS_ADDRESS, NULL);
	expect_addr(&rules, "::1", 8080, D, WIRE_EGRESS_ADDRESS, NULL);
	expect_addr(&rules, "169.254.169.254", 80, D, WIRE_EGRESS_ADDRESS, NULL);
	expect_addr(&rules, "::ffff:169.254.169.254", 80, D, WIRE_EGRESS_ADDRESS, NULL);
	expect_addr(&rules, "10.0.0.1", 443, D, WIRE_EGRESS_ADDRESS, NULL);
	expect_addr(&rules, "100.64.1.1", 443, D, WIRE_EGRESS_ADDRESS, NULL);
	expect_addr(&rules, "0.0.0.0", 443, D, WIRE_EGRESS_ADDRESS, NULL);
	expect_addr(&rules, "224.0.0.1", 443, D, WIRE_EGRESS_ADDRESS, NULL);
	expect_addr(&rules, "192.168.1.1", 443, A, WIRE_EGRESS_OK, "192.168.0.0/16");
	expect_addr(&rules, "192.168.7.1", 443, D, WIRE_EGRESS_DENY_RULE, "192.168.7.0/24");
	egr_rules_done(&rules);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_host_names),
		cmocka_unit_test(test_host_lengths),
		cmocka_unit_test(test_rule_parse),
		cmocka_unit_test(test_wildcard_edges),
		cmocka_unit_test(test_exact_and_ports),
		cmocka_unit_test(test_deny_first),
		cmocka_unit_test(test_ip_literals),
		cmocka_unit_test(test_rules_cap),
		cmocka_unit_test(test_address_classes),
		cmocka_unit_test(test_address_check),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
