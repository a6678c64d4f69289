/* SPDX-License-Identifier: MIT */
/*
 * The effective policy as text: pol_to_json (cJSON) for tools and records, pol_to_yaml (the
 * libyaml emitter) for people and for the round trip pol_parse(pol_to_yaml(p)) == p, and
 * pol_equal, which defines "==" there.
 *
 * Both printers write every section and every field, in the order of policy/default.yaml, so
 * the output is the whole effective policy and not a difference from the default. The YAML
 * text is produced by libyaml's emitter, never by string pasting, so any string a policy can
 * hold (quotes, line breaks, non-ASCII, YAML indicators) is escaped the way libyaml's parser
 * reads it back. Plain style is only requested; the emitter falls back to quoting wherever
 * plain would be misread, and the null spellings are always quoted because the parser reads a
 * plain one as "no value".
 *
 * Pure code: no I/O, no global state.
 */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>
#include <yaml.h>

#include "cleanup.h"
#include "policy.h"
#include "str-util.h"
#include "utf8.h"

DEFINE_CLEANUP(cJSON *, cJSON_Delete)

/* ------------------------------------------------------------------------------------------ */
/* Equality                                                                                   */

static bool str_equal(const char *a, const char *b)
{
	if (!a || !b)
		return a == b;
	return streq(a, b);
}

static bool strv_equal(char *const *a, size_t n_a, char *const *b, size_t n_b)
{
	if (n_a != n_b)
		return false;
	for (size_t i = 0; i < n_a; i++)
		if (!str_equal(a[i], b[i]))
			return false;
	return true;
}

static bool rule_equal(const struct pol_syscall_rule *a, const struct pol_syscall_rule *b)
{
	if (!str_equal(a->name, b->name) || a->allow != b->allow || a->n_conds != b->n_conds)
		return false;
	for (size_t i = 0; i < a->n_conds && i < ELEMENTSOF(a->conds); i++) {
		const struct pol_arg_cond *x = &a->conds[i], *y = &b->conds[i];
		if (x->index != y->index || x->op != y->op || x->value != y->value ||
		    x->mask != y->mask)
			return false;
	}
	return true;
}

/* True iff a and b describe the same effective policy; ->sources is ignored. See policy.h. */
bool pol_equal(const struct pol_policy *a, const struct pol_policy *b)
{
	if (a->uid != b->uid || a->gid != b->gid || !str_equal(a->user_name, b->user_name) ||
	    a->host_id_base != b->host_id_base || a->host_id_count != b->host_id_count ||
	    !str_equal(a->hostname, b->hostname))
		return false;

	if (a->n_binds != b->n_binds)
		return false;
	for (size_t i = 0; i < a->n_binds; i++) {
		const struct pol_bind *x = &a->binds[i], *y = &b->binds[i];
		if (!str_equal(x->src, y->src) || !str_equal(x->dst, y->dst) ||
		    x->mode != y->mode || x->optional != y->optional)
			return false;
	}
	if (!strv_equal(a->etc_files, a->n_etc_files, b->etc_files, b->n_etc_files) ||
	    !strv_equal(a->protect, a->n_protect, b->protect, b->n_protect) ||
	    !strv_equal(a->allow_create, a->n_allow_create, b->allow_create, b->n_allow_create) ||
	    !strv_equal(a->hide, a->n_hide, b->hide, b->n_hide))
		return false;
	if (a->ws_mode != b->ws_mode || a->ws_apply != b->ws_apply ||
	    !strv_equal(a->hold, a->n_hold, b->hold, b->n_hold))
		return false;

	for (size_t i = 0; i < POL_NS_N; i++)
		if (a->namespaces[i] != b->namespaces[i])
			return false;
	if (!strv_equal(a->caps_keep, a->n_caps_keep, b->caps_keep, b->n_caps_keep) ||
	    a->network != b->network)
		return false;

	if (!strv_equal(a->env_set, a->n_env_set, b->env_set, b->n_env_set) ||
	    !strv_equal(a->env_pass, a->n_env_pass, b->env_pass, b->n_env_pass))
		return false;

	if (!str_equal(a->seccomp_profile, b->seccomp_profile) ||
	    a->seccomp_default != b->seccomp_default ||
	    !strv_equal(a->seccomp_allow, a->n_seccomp_allow, b->seccomp_allow, b->n_seccomp_allow) ||
	    !strv_equal(a->seccomp_deny, a->n_seccomp_deny, b->seccomp_deny, b->n_seccomp_deny) ||
	    a->n_seccomp_rules != b->n_seccomp_rules)
		return false;
	for (size_t i = 0; i < a->n_seccomp_rules; i++)
		if (!rule_equal(&a->seccomp_rules[i], &b->seccomp_rules[i]))
			return false;

	return a->memory_bytes == b->memory_bytes && a->pids == b->pids &&
	       a->cpu_millicpus == b->cpu_millicpus && a->nofile == b->nofile &&
	       a->nproc == b->nproc && a->fsize_bytes == b->fsize_bytes &&
	       a->tmp_bytes == b->tmp_bytes && a->wall_ms == b->wall_ms &&
	       a->output_bytes == b->output_bytes && a->unsafe == b->unsafe;
}

/* ------------------------------------------------------------------------------------------ */
/* What both printers need                                                                    */

static const char *seccomp_action_name(enum pol_seccomp_action a)
{
	switch (a) {
	case POL_SECCOMP_ERRNO:
		return "errno";
	case POL_SECCOMP_KILL:
		return "kill";
	}
	return NULL;
}

static const char *bind_mode_name(enum pol_bind_mode m)
{
	switch (m) {
	case POL_BIND_RO:
		return "ro";
	case POL_BIND_RW:
		return "rw";
	}
	return NULL;
}

static bool strv_printable(char *const *v, size_t n)
{
	if (n > 0 && !v)
		return false;
	for (size_t i = 0; i < n; i++)
		if (!v[i])
			return false;
	return true;
}

/* -EINVAL when p holds something the language has no spelling for; the printers then stop. */
static int check_printable(const struct pol_policy *p)
{
	uint32_t known = 0;

	for (uint32_t bit = 1; bit; bit <<= 1)
		if (pol_unsafe_name(bit))
			known |= bit;
	if (!p->user_name || !p->hostname || !p->seccomp_profile ||
	    !seccomp_action_name(p->seccomp_default) || !pol_network_name(p->network) ||
	    !pol_ws_mode_name(p->ws_mode) || !pol_ws_apply_name(p->ws_apply) ||
	    (p->unsafe & ~known))
		return -EINVAL;
	if (p->n_binds > 0 && !p->binds)
		return -EINVAL;
	for (size_t i = 0; i < p->n_binds; i++)
		if (!p->binds[i].src || !p->binds[i].dst || !bind_mode_name(p->binds[i].mode))
			return -EINVAL;
	if (!strv_printable(p->etc_files, p->n_etc_files) ||
	    !strv_printable(p->protect, p->n_protect) ||
	    !strv_printable(p->allow_create, p->n_allow_create) ||
	    !strv_printable(p->hide, p->n_hide) || !strv_printable(p->hold, p->n_hold) ||
	    !strv_printable(p->caps_keep, p->n_caps_keep) ||
	    !strv_printable(p->env_set, p->n_env_set) ||
	    !strv_printable(p->env_pass, p->n_env_pass) ||
	    !strv_printable(p->seccomp_allow, p->n_seccomp_allow) ||
	    !strv_printable(p->seccomp_deny, p->n_seccomp_deny) ||
	    !strv_printable(p->sources, p->n_sources))
		return -EINVAL;
	if (p->n_seccomp_rules > 0 && !p->seccomp_rules)
		return -EINVAL;
	for (size_t i = 0; i < p->n_seccomp_rules; i++) {
		const struct pol_syscall_rule *rule = &p->seccomp_rules[i];
		if (!rule->name || rule->n_conds > ELEMENTSOF(rule->conds))
			return -EINVAL;
		for (size_t c = 0; c < rule->n_conds; c++)
			if (!pol_cmp_op_name(rule->conds[c].op))
				return -EINVAL;
	}
	return 0;
}

/* ------------------------------------------------------------------------------------------ */
/* JSON                                                                                       */

/* Integers go in as raw digits: cJSON's numbers are doubles, exact only up to 2^53. */
static bool json_u64(cJSON *o, const char *key, uint64_t v)
{
	char digits[24];

	(void)snprintf(digits, sizeof(digits), "%" PRIu64, v);
	return cJSON_AddRawToObject(o, key, digits) != NULL;
}

static bool json_str(cJSON *o, const char *key, const char *s)
{
	return cJSON_AddStringToObject(o, key, s) != NULL;
}

static bool json_bool(cJSON *o, const char *key, bool b)
{
	return cJSON_AddBoolToObject(o, key, b) != NULL;
}

static bool json_strv(cJSON *o, const char *key, char *const *v, size_t n)
{
	cJSON *a = cJSON_AddArrayToObject(o, key);

	if (!a)
		return false;
	for (size_t i = 0; i < n; i++) {
		cJSON *s = cJSON_CreateString(v[i]);
		if (!s)
			return false;
		cJSON_AddItemToArray(a, s);
	}
	return true;
}

static bool json_user(cJSON *root, const struct pol_policy *p)
{
	cJSON *u = cJSON_AddObjectToObject(root, "user"), *h;

	return u && json_u64(u, "uid", p->uid) && json_u64(u, "gid", p->gid) &&
	       json_str(u, "name", p->user_name) && (h = cJSON_AddObjectToObject(u, "host_ids")) &&
	       json_u64(h, "base", p->host_id_base) && json_u64(h, "count", p->host_id_count);
}

static bool json_filesystem(cJSON *root, const struct pol_policy *p)
{
	cJSON *fs = cJSON_AddObjectToObject(root, "filesystem");
	cJSON *binds = fs ? cJSON_AddArrayToObject(fs, "binds") : NULL;

	if (!binds)
		return false;
	for (size_t i = 0; i < p->n_binds; i++) {
		const struct pol_bind *b = &p->binds[i];
		cJSON *o = cJSON_CreateObject();
		if (!o)
			return false;
		cJSON_AddItemToArray(binds, o);
		if (!json_str(o, "src", b->src) || !json_str(o, "dst", b->dst) ||
		    !json_str(o, "mode", bind_mode_name(b->mode)) ||
		    !json_bool(o, "optional", b->optional))
			return false;
	}
	return json_strv(fs, "etc", p->etc_files, p->n_etc_files) &&
	       json_strv(fs, "protect", p->protect, p->n_protect) &&
	       json_strv(fs, "allow_create", p->allow_create, p->n_allow_create) &&
	       json_strv(fs, "hide", p->hide, p->n_hide);
}

static bool json_workspace(cJSON *root, const struct pol_policy *p)
{
	cJSON *ws = cJSON_AddObjectToObject(root, "workspace");

	return ws && json_str(ws, "mode", pol_ws_mode_name(p->ws_mode)) &&
	       json_str(ws, "apply", pol_ws_apply_name(p->ws_apply)) &&
	       json_strv(ws, "hold", p->hold, p->n_hold);
}

static bool json_namespaces(cJSON *root, const struct pol_policy *p)
{
	cJSON *ns = cJSON_AddObjectToObject(root, "namespaces");

	if (!ns)
		return false;
	for (int i = 0; i < POL_NS_N; i++)
		if (!json_bool(ns, pol_ns_name((enum pol_ns)i), p->namespaces[i]))
			return false;
	return true;
}

static bool json_rules(cJSON *seccomp, const struct pol_policy *p)
{
	cJSON *rules = cJSON_AddArrayToObject(seccomp, "rules");

	if (!rules)
		return false;
	for (size_t i = 0; i < p->n_seccomp_rules; i++) {
		const struct pol_syscall_rule *rule = &p->seccomp_rules[i];
		cJSON *o = cJSON_CreateObject(), *args;
		if (!o)
			return false;
		cJSON_AddItemToArray(rules, o);
		if (!json_str(o, "syscall", rule->name) ||
		    !json_str(o, "action", rule->allow ? "allow" : "deny") ||
		    !(args = cJSON_AddArrayToObject(o, "args")))
			return false;
		for (size_t c = 0; c < rule->n_conds; c++) {
			const struct pol_arg_cond *cd = &rule->conds[c];
			cJSON *a = cJSON_CreateObject();
			if (!a)
				return false;
			cJSON_AddItemToArray(args, a);
			if (!json_u64(a, "index", cd->index) ||
			    !json_str(a, "op", pol_cmp_op_name(cd->op)) ||
			    !json_u64(a, "value", cd->value) ||
			    (cd->op == POL_CMP_MASKED_EQ && !json_u64(a, "mask", cd->mask)))
				return false;
		}
	}
	return true;
}

static bool json_seccomp(cJSON *root, const struct pol_policy *p)
{
	cJSON *sc = cJSON_AddObjectToObject(root, "seccomp");

	return sc && json_str(sc, "profile", p->seccomp_profile) &&
	       json_str(sc, "default_action", seccomp_action_name(p->seccomp_default)) &&
	       json_strv(sc, "allow", p->seccomp_allow, p->n_seccomp_allow) &&
	       json_strv(sc, "deny", p->seccomp_deny, p->n_seccomp_deny) && json_rules(sc, p);
}

static bool json_limits(cJSON *root, const struct pol_policy *p)
{
	cJSON *l = cJSON_AddObjectToObject(root, "limits");

	return l && json_u64(l, "memory_bytes", p->memory_bytes) && json_u64(l, "pids", p->pids) &&
	       json_u64(l, "cpu_millicpus", p->cpu_millicpus) && json_u64(l, "nofile", p->nofile) &&
	       json_u64(l, "nproc", p->nproc) && json_u64(l, "fsize_bytes", p->fsize_bytes) &&
	       json_u64(l, "tmpfs_bytes", p->tmp_bytes) && json_u64(l, "wall_ms", p->wall_ms) &&
	       json_u64(l, "output_bytes", p->output_bytes);
}

static bool json_unsafe(cJSON *root, const struct pol_policy *p)
{
	cJSON *a = cJSON_AddArrayToObject(root, "unsafe");

	if (!a)
		return false;
	for (uint32_t bit = 1; bit; bit <<= 1) {
		cJSON *s;
		if (!(p->unsafe & bit))
			continue;
		s = cJSON_CreateString(pol_unsafe_name(bit));
		if (!s)
			return false;
		cJSON_AddItemToArray(a, s);
	}
	return true;
}

/* The effective policy as a JSON object. See policy.h. */
int pol_to_json(const struct pol_policy *p, char **out)
{
	_cleanup_(cJSON_Deletep) cJSON *root = NULL;
	char *text, *copy;
	cJSON *caps, *env;
	int r = check_printable(p);

	if (r < 0)
		return r;
	root = cJSON_CreateObject();
	if (!root || !json_user(root, p) || !json_str(root, "hostname", p->hostname) ||
	    !json_filesystem(root, p) || !json_workspace(root, p) || !json_namespaces(root, p) ||
	    !(caps = cJSON_AddObjectToObject(root, "capabilities")) ||
	    !json_strv(caps, "keep", p->caps_keep, p->n_caps_keep) ||
	    !json_str(root, "network", pol_network_name(p->network)) ||
	    !(env = cJSON_AddObjectToObject(root, "env")) ||
	    !json_strv(env, "set", p->env_set, p->n_env_set) ||
	    !json_strv(env, "pass", p->env_pass, p->n_env_pass) || !json_seccomp(root, p) ||
	    !json_limits(root, p) || !json_unsafe(root, p) ||
	    !json_strv(root, "sources", p->sources, p->n_sources))
		return -ENOMEM;

	text = cJSON_Print(root);
	if (!text)
		return -ENOMEM;
	/* cJSON's allocator may be hooked; hand out memory the caller can free() for sure. */
	copy = strdup(text);
	cJSON_free(text);
	if (!copy)
		return -ENOMEM;
	*out = copy;
	return 0;
}

/* ------------------------------------------------------------------------------------------ */
/* YAML                                                                                       */

struct ybuf {
	char *data;
	size_t len;
	size_t cap;
	bool failed;
};

static bool ybuf_add(struct ybuf *b, const void *s, size_t n)
{
	if (b->failed)
		return false;
	if (n + 1 > b->cap - b->len || !b->data) {
		size_t cap = b->cap ? b->cap : 4096;
		char *d;
		while (cap - b->len < n + 1) {
			if (cap > SIZE_MAX / 2) {
				b->failed = true;
				return false;
			}
			cap *= 2;
		}
		d = realloc(b->data, cap);
		if (!d) {
			b->failed = true;
			return false;
		}
		b->data = d;
		b->cap = cap;
	}
	memcpy(b->data + b->len, s, n);
	b->len += n;
	b->data[b->len] = '\0';
	return true;
}

/* libyaml's write handler: 1 on success, 0 on failure. */
static int ybuf_write(void *data, unsigned char *buffer, size_t size)
{
	return ybuf_add(data, buffer, size) ? 1 : 0;
}

struct yout {
	yaml_emitter_t emitter;
	struct ybuf buf;
	int err;      /* the first error; once set, nothing more is emitted */
};

static void yemit(struct yout *y, yaml_event_t *ev)
{
	/* yaml_emitter_emit takes the event, also when it fails. */
	if (!yaml_emitter_emit(&y->emitter, ev) && !y->err)
		y->err = y->emitter.error == YAML_MEMORY_ERROR || y->buf.failed ? -ENOMEM : -EINVAL;
}

static void yscalar(struct yout *y, const char *s, yaml_scalar_style_t style)
{
	yaml_event_t ev;
	size_t len = strlen(s);

	if (y->err)
		return;
	if (len > INT_MAX) {
		y->err = -EINVAL;
		return;
	}
	/*
	 * libyaml's own check lets surrogates and code points above U+10FFFF through; the strict
	 * one (common/utf8.h) runs first, so a failure of the constructor is memory.
	 */
	if (!utf8_valid_mem(s, len)) {
		y->err = -EINVAL;
		return;
	}
	if (!yaml_scalar_event_initialize(&ev, NULL, NULL, (yaml_char_t *)(uintptr_t)s, (int)len,
					  1, 1, style)) {
		y->err = -ENOMEM;
		return;
	}
	yemit(y, &ev);
}

/* A string: plain where the emitter finds that safe, quoted where plain would read as null. */
static void ystr(struct yout *y, const char *s)
{
	static const char *const nulls[] = { "", "~", "null", "Null", "NULL" };
	yaml_scalar_style_t style = YAML_PLAIN_SCALAR_STYLE;

	for (size_t i = 0; i < ELEMENTSOF(nulls); i++)
		if (streq(s, nulls[i]))
			style = YAML_DOUBLE_QUOTED_SCALAR_STYLE;
	yscalar(y, s, style);
}

/* Numbers and booleans: the parser requires them plain, and they always can be. */
static void ytoken(struct yout *y, const char *s)
{
	yscalar(y, s, YAML_PLAIN_SCALAR_STYLE);
}

__attribute__((format(printf, 2, 3))) static void yfmt(struct yout *y, const char *fmt, ...)
{
	char s[64];
	va_list ap;

	va_start(ap, fmt);
	(void)vsnprintf(s, sizeof(s), fmt, ap);
	va_end(ap);
	ytoken(y, s);
}

static void ymap(struct yout *y, bool flow)
{
	yaml_event_t ev;

	if (y->err)
		return;
	if (!yaml_mapping_start_event_initialize(&ev, NULL, NULL, 1,
						 flow ? YAML_FLOW_MAPPING_STYLE : YAML_BLOCK_MAPPING_STYLE)) {
		y->err = -ENOMEM;
		return;
	}
	yemit(y, &ev);
}

static void yseq(struct yout *y, bool flow)
{
	yaml_event_t ev;

	if (y->err)
		return;
	if (!yaml_sequence_start_event_initialize(&ev, NULL, NULL, 1,
						  flow ? YAML_FLOW_SEQUENCE_STYLE : YAML_BLOCK_SEQUENCE_STYLE)) {
		y->err = -ENOMEM;
		return;
	}
	yemit(y, &ev);
}

static void yend_map(struct yout *y)
{
	yaml_event_t ev;

	if (y->err)
		return;
	if (!yaml_mapping_end_event_initialize(&ev)) {
		y->err = -ENOMEM;
		return;
	}
	yemit(y, &ev);
}

static void yend_seq(struct yout *y)
{
	yaml_event_t ev;

	if (y->err)
		return;
	if (!yaml_sequence_end_event_initialize(&ev)) {
		y->err = -ENOMEM;
		return;
	}
	yemit(y, &ev);
}

static void ykv_str(struct yout *y, const char *key, const char *value)
{
	ytoken(y, key);
	ystr(y, value);
}

static void ykv_bool(struct yout *y, const char *key, bool value)
{
	ytoken(y, key);
	ytoken(y, value ? "true" : "false");
}

static void ykv_u64(struct yout *y, const char *key, uint64_t value)
{
	ytoken(y, key);
	yfmt(y, "%" PRIu64, value);
}

static void ykv_strv(struct yout *y, const char *key, char *const *v, size_t n)
{
	ytoken(y, key);
	yseq(y, false); /* the emitter writes an empty one as [] */
	for (size_t i = 0; i < n; i++)
		ystr(y, v[i]);
	yend_seq(y);
}

/* A size with the largest binary suffix that keeps it exact: 4G, 1536K, 1000. */
static void ykv_size(struct yout *y, const char *key, uint64_t bytes)
{
	static const char suffixes[] = "KMGT";
	unsigned shift = 0;

	while (bytes && shift < 4 && (bytes & ((UINT64_C(1) << (10 * (shift + 1))) - 1)) == 0)
		shift++;
	ytoken(y, key);
	if (shift)
		yfmt(y, "%" PRIu64 "%c", bytes >> (10 * shift), suffixes[shift - 1]);
	else
		yfmt(y, "%" PRIu64, bytes);
}

/* A time with the largest unit that keeps it exact: 30m, 90s, 1500ms, 0. */
static void ykv_time(struct yout *y, const char *key, uint64_t ms)
{
	ytoken(y, key);
	if (ms == 0)
		ytoken(y, "0");
	else if (ms % 3600000u == 0)
		yfmt(y, "%" PRIu64 "h", ms / 3600000u);
	else if (ms % 60000u == 0)
		yfmt(y, "%" PRIu64 "m", ms / 60000u);
	else if (ms % 1000u == 0)
		yfmt(y, "%" PRIu64 "s", ms / 1000u);
	else
		yfmt(y, "%" PRIu64 "ms", ms);
}

/* CPUs with up to three decimals and no trailing zeros: 0.5, 2, 1.25. */
static void ykv_cpu(struct yout *y, const char *key, uint64_t millicpus)
{
	uint64_t whole = millicpus / 1000u, frac = millicpus % 1000u;

	ytoken(y, key);
	if (!frac)
		yfmt(y, "%" PRIu64, whole);
	else if (frac % 100u == 0)
		yfmt(y, "%" PRIu64 ".%" PRIu64, whole, frac / 100u);
	else if (frac % 10u == 0)
		yfmt(y, "%" PRIu64 ".%02" PRIu64, whole, frac / 10u);
	else
		yfmt(y, "%" PRIu64 ".%03" PRIu64, whole, frac);
}

static void yaml_user(struct yout *y, const struct pol_policy *p)
{
	ytoken(y, "user");
	ymap(y, false);
	ykv_u64(y, "uid", p->uid);
	ykv_u64(y, "gid", p->gid);
	ykv_str(y, "name", p->user_name);
	ytoken(y, "host_ids");
	ymap(y, true);
	ykv_u64(y, "base", p->host_id_base);
	ykv_u64(y, "count", p->host_id_count);
	yend_map(y);
	yend_map(y);
}

static void yaml_filesystem(struct yout *y, const struct pol_policy *p)
{
	ytoken(y, "filesystem");
	ymap(y, false);
	ytoken(y, "binds");
	yseq(y, false);
	for (size_t i = 0; i < p->n_binds; i++) {
		ymap(y, true);
		ykv_str(y, "src", p->binds[i].src);
		ykv_str(y, "dst", p->binds[i].dst);
		ykv_str(y, "mode", bind_mode_name(p->binds[i].mode));
		ykv_bool(y, "optional", p->binds[i].optional);
		yend_map(y);
	}
	yend_seq(y);
	ykv_strv(y, "etc", p->etc_files, p->n_etc_files);
	ykv_strv(y, "protect", p->protect, p->n_protect);
	ykv_strv(y, "allow_create", p->allow_create, p->n_allow_create);
	ykv_strv(y, "hide", p->hide, p->n_hide);
	yend_map(y);
}

static void yaml_seccomp(struct yout *y, const struct pol_policy *p)
{
	ytoken(y, "seccomp");
	ymap(y, false);
	ykv_str(y, "profile", p->seccomp_profile);
	ykv_str(y, "default_action", seccomp_action_name(p->seccomp_default));
	ykv_strv(y, "allow", p->seccomp_allow, p->n_seccomp_allow);
	ykv_strv(y, "deny", p->seccomp_deny, p->n_seccomp_deny);
	ytoken(y, "rules");
	yseq(y, false);
	for (size_t i = 0; i < p->n_seccomp_rules; i++) {
		const struct pol_syscall_rule *rule = &p->seccomp_rules[i];
		ymap(y, false);
		ykv_str(y, "syscall", rule->name);
		ykv_str(y, "action", rule->allow ? "allow" : "deny");
		ytoken(y, "args");
		yseq(y, false);
		for (size_t c = 0; c < rule->n_conds; c++) {
			const struct pol_arg_cond *cd = &rule->conds[c];
			ymap(y, true);
			ykv_u64(y, "index", cd->index);
			ykv_str(y, "op", pol_cmp_op_name(cd->op));
			ytoken(y, "value");
			yfmt(y, "0x%" PRIx64, cd->value);
			if (cd->op == POL_CMP_MASKED_EQ) {
				ytoken(y, "mask");
				yfmt(y, "0x%" PRIx64, cd->mask);
			}
			yend_map(y);
		}
		yend_seq(y);
		yend_map(y);
	}
	yend_seq(y);
	yend_map(y);
}

static void yaml_body(struct yout *y, const struct pol_policy *p)
{
	yaml_user(y, p);
	ykv_str(y, "hostname", p->hostname);
	yaml_filesystem(y, p);

	ytoken(y, "workspace");
	ymap(y, false);
	ykv_str(y, "mode", pol_ws_mode_name(p->ws_mode));
	ykv_str(y, "apply", pol_ws_apply_name(p->ws_apply));
	ykv_strv(y, "hold", p->hold, p->n_hold);
	yend_map(y);

	ytoken(y, "namespaces");
	ymap(y, false);
	for (int i = 0; i < POL_NS_N; i++)
		ykv_bool(y, pol_ns_name((enum pol_ns)i), p->namespaces[i]);
	yend_map(y);

	ytoken(y, "capabilities");
	ymap(y, false);
	ykv_strv(y, "keep", p->caps_keep, p->n_caps_keep);
	yend_map(y);

	ykv_str(y, "network", pol_network_name(p->network));

	ytoken(y, "env");
	ymap(y, false);
	ykv_strv(y, "set", p->env_set, p->n_env_set);
	ykv_strv(y, "pass", p->env_pass, p->n_env_pass);
	yend_map(y);

	yaml_seccomp(y, p);

	ytoken(y, "limits");
	ymap(y, false);
	ykv_size(y, "memory", p->memory_bytes);
	ykv_u64(y, "pids", p->pids);
	ykv_cpu(y, "cpu", p->cpu_millicpus);
	ykv_u64(y, "nofile", p->nofile);
	ykv_u64(y, "nproc", p->nproc);
	ykv_size(y, "fsize", p->fsize_bytes);
	ykv_size(y, "tmpfs", p->tmp_bytes);
	ykv_time(y, "wall", p->wall_ms);
	ykv_size(y, "output", p->output_bytes);
	yend_map(y);

	ytoken(y, "unsafe");
	yseq(y, false);
	for (uint32_t bit = 1; bit; bit <<= 1)
		if (p->unsafe & bit)
			ytoken(y, pol_unsafe_name(bit));
	yend_seq(y);
}

/* "# sources ..." with every byte a comment may not hold replaced by '?'. */
static void yaml_header(struct ybuf *b, const struct pol_policy *p)
{
	static const char head[] = "# The effective policy. Sources, outermost last:\n";

	(void)ybuf_add(b, head, sizeof(head) - 1);
	for (size_t i = 0; i < p->n_sources; i++) {
		(void)ybuf_add(b, "#   ", 4);
		for (const char *s = p->sources[i]; *s; s++) {
			char c = (*s >= 0x20 && *s < 0x7f) ? *s : '?';
			(void)ybuf_add(b, &c, 1);
		}
		(void)ybuf_add(b, "\n", 1);
	}
}

/* The effective policy as a YAML document pol_parse accepts. See policy.h. */
int pol_to_yaml(const struct pol_policy *p, char **out)
{
	struct yout y = { 0 };
	yaml_event_t ev;
	int r = check_printable(p);

	if (r < 0)
		return r;
	if (!yaml_emitter_initialize(&y.emitter))
		return -ENOMEM;
	yaml_emitter_set_output(&y.emitter, ybuf_write, &y.buf);
	yaml_emitter_set_encoding(&y.emitter, YAML_UTF8_ENCODING);
	yaml_emitter_set_unicode(&y.emitter, 1);
	yaml_emitter_set_indent(&y.emitter, 2);
	yaml_emitter_set_width(&y.emitter, -1); /* never fold a long string */
	yaml_emitter_set_break(&y.emitter, YAML_LN_BREAK);
	yaml_header(&y.buf, p);

	if (!yaml_stream_start_event_initialize(&ev, YAML_UTF8_ENCODING))
		y.err = -ENOMEM;
	else
		yemit(&y, &ev);
	if (!y.err && !yaml_document_start_event_initialize(&ev, NULL, NULL, NULL, 1))
		y.err = -ENOMEM;
	else if (!y.err)
		yemit(&y, &ev);
	ymap(&y, false);
	yaml_body(&y, p);
	yend_map(&y);
	if (!y.err && !yaml_document_end_event_initialize(&ev, 1))
		y.err = -ENOMEM;
	else if (!y.err)
		yemit(&y, &ev);
	if (!y.err && !yaml_stream_end_event_initialize(&ev))
		y.err = -ENOMEM;
	else if (!y.err)
		yemit(&y, &ev);
	if (!y.err && !yaml_emitter_flush(&y.emitter))
		y.err = -ENOMEM;
	yaml_emitter_delete(&y.emitter);

	if (!y.err && (y.buf.failed || !y.buf.data))
		y.err = -ENOMEM;
	if (y.err) {
		free(y.buf.data);
		return y.err;
	}
	*out = y.buf.data;
	return 0;
}
