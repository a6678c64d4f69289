/* SPDX-License-Identifier: MIT */
/*
 * /proc/<pid>/status parsing, shared by the worker (its claim) and the supervisor (the
 * kernel's word). Lines are walked through the bounded reader; numbers are parsed with
 * explicit range checks.
 */
#include <errno.h>
#include <string.h>

#include "wire.h"

/*
 * The longest line of a field parsed here: NSpid with a value for each of the 33 levels of pid
 * namespace the kernel allows (MAX_PID_NS_LEVEL 32, plus the initial one) is under 400 bytes.
 * Other lines (Groups, Cpus_allowed_list, ...) are skipped whatever their length: the kernel
 * prints them as long as a process's groups and the machine's CPUs make them.
 */
#define STATUS_MAX_LINE 512u

enum field {
	F_PID, F_NSPID, F_UID, F_GID, F_CAPINH, F_CAPPRM, F_CAPEFF, F_CAPBND, F_CAPAMB,
	F_NNP, F_SECCOMP, F_FILTERS, F_N,
};

static const char *const names[F_N] = {
	"Pid:", "NSpid:", "Uid:", "Gid:", "CapInh:", "CapPrm:", "CapEff:", "CapBnd:",
	"CapAmb:", "NoNewPrivs:", "Seccomp:", "Seccomp_filters:",
};

/* Reads one line (without the newline) as a sub-view, however long. */
static void next_line(struct wire_rd *r, struct wire_rd *line)
{
	size_t n = 0;
	while (n < r->len && r->p[n] != '\n')
		n++;
	(void)wire_get_view(r, n, line);
	uint8_t nl;
	if (r->len)
		(void)wire_get_u8(r, &nl);
}

static void skip_blanks(struct wire_rd *r)
{
	uint8_t c;
	while (r->len && (r->p[0] == ' ' || r->p[0] == '\t'))
		(void)wire_get_u8(r, &c);
}

static bool get_number(struct wire_rd *r, unsigned base, uint64_t max, uint64_t *out)
{
	skip_blanks(r);
	uint64_t v = 0;
	size_t digits = 0;
	while (r->len) {
		uint8_t c = r->p[0];
		unsigned d;
		if (c >= '0' && c <= '9')
			d = (unsigned)(c - '0');
		else if (base == 16 && c >= 'a' && c <= 'f')
			d = (unsigned)(c - 'a' + 10);
		else
			break;
		if (d > max || v > (max - d) / base)
			return false;
		v = v * base + d;
		(void)wire_get_u8(r, &c);
		digits++;
	}
	if (!digits)
		return false;
	*out = v;
	return true;
}

static bool prefix(struct wire_rd *line, const char *name)
{
	size_t n = strlen(name);
	if (line->len < n || memcmp(line->p, name, n) != 0)
		return false;
	struct wire_rd skip;
	return wire_get_view(line, n, &skip);
}

int wire_parse_status(const char *text, size_t len, struct wire_identity *out,
		      unsigned *out_nspid_depth)
{
	struct wire_identity id;
	memset(&id, 0, sizeof(id));
	bool seen[F_N] = { false };
	unsigned depth = 0;
	uint32_t innermost = 0; /* the last NSpid value, whatever the order of the lines */
	uint64_t v;
	struct wire_rd r, line;
	wire_rd_init(&r, text, len);

	while (r.len) {
		next_line(&r, &line);
		size_t line_len = line.len;
		int f = -1;
		for (int i = 0; i < F_N && f < 0; i++)
			if (prefix(&line, names[i]))
				f = i;
		if (f < 0)
			continue;
		if (seen[f] || line_len > STATUS_MAX_LINE)
			return -EBADMSG;
		seen[f] = true;
		switch ((enum field)f) {
		case F_PID:
			if (!get_number(&line, 10, UINT32_MAX, &v))
				return -EBADMSG;
			id.pid = (uint32_t)v;
			break;
		case F_NSPID:
			/* The last value is the pid in the innermost namespace. */
			while (line.len) {
				if (!get_number(&line, 10, UINT32_MAX, &v) || depth >= 64)
					return -EBADMSG;
				innermost = (uint32_t)v;
				depth++;
				skip_blanks(&line);
			}
			break;
		case F_UID:
		case F_GID:
			for (int i = 0; i < 4; i++) {
				if (!get_number(&line, 10, UINT32_MAX, &v))
					return -EBADMSG;
				if (f == F_UID)
					id.uid[i] = (uint32_t)v;
				else
					id.gid[i] = (uint32_t)v;
			}
			break;
		case F_CAPINH:
		case F_CAPPRM:
		case F_CAPEFF:
		case F_CAPBND:
		case F_CAPAMB: {
			if (!get_number(&line, 16, UINT64_MAX, &v))
				return -EBADMSG;
			uint64_t *dst[] = { &id.cap_inh, &id.cap_prm, &id.cap_eff, &id.cap_bnd,
					    &id.cap_amb };
			*dst[f - F_CAPINH] = v;
			break;
		}
		case F_NNP:
			if (!get_number(&line, 10, 1, &v))
				return -EBADMSG;
			id.no_new_privs = (uint8_t)v;
			break;
		case F_SECCOMP:
			if (!get_number(&line, 10, 2, &v))
				return -EBADMSG;
			id.seccomp = (uint8_t)v;
			break;
		case F_FILTERS:
			if (!get_number(&line, 10, UINT32_MAX, &v))
				return -EBADMSG;
			id.seccomp_filters = (uint32_t)v;
			break;
		case F_N:
			return -EBADMSG;
		}
		skip_blanks(&line);
		if (!wire_done(&line))
			return -EBADMSG;
	}
	for (int i = 0; i < F_N; i++)
		if (!seen[i])
			return -EBADMSG;
	if (!depth)
		return -EBADMSG;
	id.pid = innermost;
	*out = id;
	if (out_nspid_depth)
		*out_nspid_depth = depth;
	return 0;
}
