/* SPDX-License-Identifier: MIT */
/*
 * Allow and deny entries and the matcher (match.h). Entries come from a policy; they are
 * parsed with the same host parser as what a client sends, so both sides of every comparison
 * are canonical text or canonical addresses, compared whole.
 */
#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "match.h"
#include "wire-egress.h"
#include "wire-text.h"

#define PREFIX_DIGITS 3u
#define IPV6_ENTRY_MAX 49u /* 45 bytes of address, '/', 3 digits */

static bool is_digit(uint8_t b)
{
	return b >= '0' && b <= '9';
}

static bool host_byte(uint8_t b)
{
	return b != ':' && b != '/';
}

/* Decimal digits, all of v, without a leading zero (but "0" itself when zero_ok), at most max. */
static bool get_decimal(struct wire_rd v, uint32_t max, bool zero_ok, uint32_t *out)
{
	struct wire_rd digits;
	uint8_t d0, d;
	if (!wire_get_while(&v, is_digit, 5, &digits) || !wire_done(&v) ||
	    !wire_peek_u8(&digits, &d0))
		return false;
	if (d0 == '0' && !(zero_ok && digits.len == 1))
		return false;
	uint32_t n = 0;
	while (wire_get_u8(&digits, &d))
		n = n * 10 + (uint32_t)(d - '0');
	if (n > max)
		return false;
	*out = n;
	return true;
}

/* True iff no bit of ip past prefix is set. */
static bool net_is_exact(const struct egr_ip *ip, unsigned prefix)
{
	unsigned bits = ip->family == 4 ? 32u : 128u;
	for (unsigned i = prefix; i < bits; i++)
		if (ip->b[i / 8] & (0x80u >> (i % 8)))
			return false;
	return true;
}

/* Parses the address part of an entry (without port) into rule. */
static int parse_net(const struct wire_rd *addr, const struct wire_rd *prefix, bool has_prefix,
		     bool bracketed, struct egr_rule *rule)
{
	struct egr_host h;
	char buf[IPV6_ENTRY_MAX + 3];
	if (bracketed) {
		/* Rebuild "[address]" for the host parser. */
		struct wire_rd copy = *addr;
		if (addr->len > IPV6_ENTRY_MAX)
			return -EINVAL;
		buf[0] = '[';
		if (!wire_get_bytes(&copy, buf + 1, addr->len))
			return -EINVAL;
		buf[addr->len + 1] = ']';
		if (egr_host_parse_str(buf, addr->len + 2, &h) < 0)
			return -EINVAL;
	} else if (egr_host_parse(addr, &h) < 0) {
		return -EINVAL;
	}
	if (h.type == EGR_HOST_NAME)
		return has_prefix ? -EINVAL : 1; /* a name: the caller's case */

	unsigned bits = h.ip.family == 4 ? 32u : 128u;
	uint32_t p = bits;
	if (has_prefix) {
		/* A mapped IPv6 range was written over 128 bits; it is now an IPv4 one. */
		uint32_t written = bracketed ? 128u : bits;
		if (!get_decimal(*prefix, written, true, &p))
			return -EINVAL;
		if (bracketed && h.ip.family == 4) {
			if (p < 96)
				return -EINVAL;
			p -= 96;
		}
	}
	if (!net_is_exact(&h.ip, p))
		return -EINVAL;
	rule->type = EGR_RULE_NET;
	rule->net = h.ip;
	rule->prefix = p;
	return 0;
}

/* Writes rule's canonical text into rule->text. */
static int format_rule(struct egr_rule *rule)
{
	char addr[64] = "", pfx[8] = "", port[8] = "";
	const char *open = "", *close = "", *star = "";
	if (rule->type == EGR_RULE_NET) {
		if (egr_ip_format(&rule->net, addr, sizeof(addr)) < 0)
			return -EINVAL;
		unsigned bits = rule->net.family == 4 ? 32u : 128u;
		if (rule->prefix != bits)
			(void)snprintf(pfx, sizeof(pfx), "/%u", rule->prefix);
		if (rule->net.family == 6) {
			open = "[";
			close = "]";
		}
	} else {
		star = rule->type == EGR_RULE_SUFFIX ? "*." : "";
	}
	if (rule->port)
		(void)snprintf(port, sizeof(port), ":%u", rule->port);
	int n = snprintf(rule->text, sizeof(rule->text), "%s%s%s%s%s%s", star, open,
			 rule->type == EGR_RULE_NET ? addr : rule->name.text, pfx, close, port);
	return n < 0 || (size_t)n >= sizeof(rule->text) ? -EINVAL : 0;
}

int egr_rule_parse(const char *text, size_t len, struct egr_rule *out)
{
	if (len == 0 || len > EGR_MAX_RULE_TEXT || memchr(text, '\0', len))
		return -EINVAL;
	struct wire_rd t;
	wire_rd_init(&t, text, len);
	struct egr_rule rule;
	memset(&rule, 0, sizeof(rule));

	bool wildcard = wire_get_lit(&t, "*.", 2, false);
	bool bracketed = wire_get_lit(&t, "[", 1, false);
	struct wire_rd host, prefix = { 0 }, port;
	bool has_prefix = false;
	if (bracketed) {
		struct wire_rd inside;
		if (wildcard || !wire_get_until(&t, ']', IPV6_ENTRY_MAX, &inside))
			return -EINVAL;
		struct wire_rd rest = inside;
		has_prefix = wire_get_until(&rest, '/', IPV6_ENTRY_MAX, &host);
		if (has_prefix)
			prefix = rest;
		else
			host = inside;
	} else {
		if (!wire_get_while(&t, host_byte, EGR_MAX_HOST + 1, &host))
			return -EINVAL;
		has_prefix = wire_get_lit(&t, "/", 1, false);
		if (has_prefix && !wire_get_while(&t, is_digit, PREFIX_DIGITS, &prefix))
			return -EINVAL;
	}
	if (!wire_done(&t)) {
		uint32_t p;
		if (!wire_get_lit(&t, ":", 1, false))
			return -EINVAL;
		port = t;
		if (!get_decimal(port, 65535, false, &p))
			return -EINVAL;
		rule.port = (uint16_t)p;
	}
	if (host.len == 0)
		return -EINVAL;

	int r = parse_net(&host, &prefix, has_prefix, bracketed, &rule);
	if (r < 0)
		return r;
	if (r > 0) {
		/* A name, or the suffix of a wildcard. */
		if (egr_host_parse(&host, &rule.name) < 0 || rule.name.type != EGR_HOST_NAME)
			return -EINVAL;
		rule.type = wildcard ? EGR_RULE_SUFFIX : EGR_RULE_NAME;
	} else if (wildcard) {
		return -EINVAL;
	}
	if (format_rule(&rule) < 0)
		return -EINVAL;
	*out = rule;
	return 0;
}

int egr_rules_add(struct egr_rules *rules, bool deny, const char *text, size_t len)
{
	struct egr_rule rule;
	int r = egr_rule_parse(text, len, &rule);
	if (r < 0)
		return r;
	struct egr_rule **list = deny ? &rules->deny : &rules->allow;
	size_t *n = deny ? &rules->n_deny : &rules->n_allow;
	if (*n >= EGR_MAX_RULES)
		return -E2BIG;
	struct egr_rule *grown = realloc(*list, (*n + 1) * sizeof(**list));
	if (!grown)
		return -ENOMEM;
	grown[*n] = rule;
	*list = grown;
	(*n)++;
	return 0;
}

void egr_rules_done(struct egr_rules *rules)
{
	if (!rules)
		return;
	free(rules->allow);
	free(rules->deny);
	memset(rules, 0, sizeof(*rules));
}

/*
 * An entry without a port: in allow, ports 443 and 80; in deny, every port, so that denying
 * a host never leaves another of its ports open.
 */
static bool port_matches(const struct egr_rule *rule, bool deny, uint16_t port)
{
	if (rule->port)
		return rule->port == port;
	return deny || port == 443 || port == 80;
}

/* True iff name is strictly below suffix: "x.suffix", never "suffix" or "xsuffix". */
static bool name_below(const struct egr_host *name, const struct egr_host *suffix)
{
	size_t n = name->text_len, s = suffix->text_len;
	return n > s + 1 && name->text[n - s - 1] == '.' &&
	       memcmp(name->text + (n - s), suffix->text, s) == 0;
}

static bool rule_matches(const struct egr_rule *rule, bool deny, const struct egr_host *host,
			 uint16_t port)
{
	if (!port_matches(rule, deny, port))
		return false;
	switch (rule->type) {
	case EGR_RULE_NAME:
		return host->type == EGR_HOST_NAME && egr_host_equal(&rule->name, host);
	case EGR_RULE_SUFFIX:
		return host->type == EGR_HOST_NAME && name_below(host, &rule->name);
	case EGR_RULE_NET:
		return host->type != EGR_HOST_NAME && egr_ip_in(&host->ip, &rule->net, rule->prefix);
	}
	return false;
}

static void set_verdict(struct egr_verdict *out, uint8_t verdict, uint8_t reason,
			const struct egr_rule *rule)
{
	out->verdict = verdict;
	out->reason = reason;
	out->rule = rule;
}

void egr_rules_match(const struct egr_rules *rules, const struct egr_host *host, uint16_t port,
		     struct egr_verdict *out)
{
	for (size_t i = 0; i < rules->n_deny; i++)
		if (rule_matches(&rules->deny[i], true, host, port)) {
			set_verdict(out, WIRE_EGRESS_DENIED, WIRE_EGRESS_DENY_RULE, &rules->deny[i]);
			return;
		}
	for (size_t i = 0; i < rules->n_allow; i++)
		if (rule_matches(&rules->allow[i], false, host, port)) {
			set_verdict(out, WIRE_EGRESS_ALLOWED, WIRE_EGRESS_OK, &rules->allow[i]);
			return;
		}
	set_verdict(out, WIRE_EGRESS_DENIED, WIRE_EGRESS_NOT_ALLOWED, NULL);
}

static const struct egr_rule *find_net(const struct egr_rule *list, size_t n, bool deny,
				       const struct egr_ip *ip, uint16_t port)
{
	for (size_t i = 0; i < n; i++)
		if (list[i].type == EGR_RULE_NET && port_matches(&list[i], deny, port) &&
		    egr_ip_in(ip, &list[i].net, list[i].prefix))
			return &list[i];
	return NULL;
}

void egr_rules_check_addr(const struct egr_rules *rules, const struct egr_ip *ip, uint16_t port,
			  struct egr_verdict *out, enum egr_addr_class *out_class)
{
	struct egr_ip c = *ip;
	egr_ip_canonical(&c);
	enum egr_addr_class cls = egr_ip_class(&c);
	if (out_class)
		*out_class = cls;
	const struct egr_rule *rule = find_net(rules->deny, rules->n_deny, true, &c, port);
	if (rule) {
		set_verdict(out, WIRE_EGRESS_DENIED, WIRE_EGRESS_DENY_RULE, rule);
		return;
	}
	if (cls == EGR_ADDR_PUBLIC) {
		set_verdict(out, WIRE_EGRESS_ALLOWED, WIRE_EGRESS_OK, NULL);
		return;
	}
	rule = find_net(rules->allow, rules->n_allow, false, &c, port);
	if (rule)
		set_verdict(out, WIRE_EGRESS_ALLOWED, WIRE_EGRESS_OK, rule);
	else
		set_verdict(out, WIRE_EGRESS_DENIED, WIRE_EGRESS_ADDRESS, NULL);
}
