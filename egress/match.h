/* SPDX-License-Identifier: MIT */
/*
 * The egress policy: allow and deny entries, and the one matcher every decision goes
 * through. Pure: no syscalls. docs/egress.md ("Rules") is the user's description.
 *
 * An entry is one of
 *   NAME[:PORT]             that name exactly (ASCII case folded, one trailing dot folded)
 *   *.NAME[:PORT]           any name below NAME, at any depth; never NAME itself, and never a
 *                           name that merely ends in the same letters (*.pypi.org does not
 *                           match evil-pypi.org)
 *   IPV4[/PREFIX][:PORT]    an address or range (a client's IP literal; a resolved address)
 *   [IPV6[/PREFIX]][:PORT]  the same for IPv6, always in brackets
 * Without a port, an allow entry covers ports 443 and 80, and a deny entry every port. A
 * range may not have bits set past its prefix. An IPv4-mapped IPv6 entry is its IPv4 entry.
 *
 * Deciding a request for (host, port): the first deny entry that matches refuses it; else the
 * first allow entry that matches admits it; else it is refused as not allowed. A name is
 * matched by name and wildcard entries only, an IP literal by address entries only, so an IP
 * literal is refused unless an allow entry lists that address (127.0.0.1:8080).
 *
 * Checking an address a name resolved to, for the same port: a deny address entry that holds
 * it refuses it; a public address passes; any other class (host.h) passes only when an allow
 * address entry holds it.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "host.h"

enum egr_rule_type {
	EGR_RULE_NAME = 1,
	EGR_RULE_SUFFIX = 2,
	EGR_RULE_NET = 3,
};

struct egr_rule {
	enum egr_rule_type type;
	struct egr_host name;  /* NAME: the name; SUFFIX: what follows "*." */
	struct egr_ip net;     /* NET: the range's first address */
	unsigned prefix;       /* NET: its length in bits */
	uint16_t port;         /* 0: 443 and 80 */
	char text[EGR_MAX_RULE_TEXT + 1]; /* canonical text, as the record shows it */
};

/* The two lists. Zero-initialise, fill with egr_rules_add, release with egr_rules_done. */
struct egr_rules {
	struct egr_rule *allow;
	size_t n_allow;
	struct egr_rule *deny;
	size_t n_deny;
};

/*
 * Parses one entry (text: len bytes, borrowed, no NUL inside) into *out. Returns 0 or
 * -EINVAL; *out untouched on failure.
 */
int egr_rule_parse(const char *text, size_t len, struct egr_rule *out);

/*
 * Parses text and appends it to the deny list (deny) or the allow list. Returns 0, -EINVAL
 * for an entry that does not parse, -E2BIG past EGR_MAX_RULES entries, -ENOMEM.
 */
int egr_rules_add(struct egr_rules *rules, bool deny, const char *text, size_t len);

/* Releases both lists; rules is zeroed and may be filled again. NULL-safe. */
void egr_rules_done(struct egr_rules *rules);

/* A decision, and the entry that made it (NULL when none did). */
struct egr_verdict {
	uint8_t verdict;             /* WIRE_EGRESS_ALLOWED or WIRE_EGRESS_DENIED */
	uint8_t reason;              /* WIRE_EGRESS_OK, _DENY_RULE, _NOT_ALLOWED or _ADDRESS */
	const struct egr_rule *rule; /* borrowed from rules */
};

/* Decides a request for host:port (deny, then allow). Always fills *out. */
void egr_rules_match(const struct egr_rules *rules, const struct egr_host *host, uint16_t port,
		     struct egr_verdict *out);

/*
 * Checks ip (canonical or not) for port: deny address entries, then its class, then allow
 * address entries. Always fills *out; *out_class (may be NULL) receives ip's class.
 */
void egr_rules_check_addr(const struct egr_rules *rules, const struct egr_ip *ip, uint16_t port,
			  struct egr_verdict *out, enum egr_addr_class *out_class);
