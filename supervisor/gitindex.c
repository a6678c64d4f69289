/* SPDX-License-Identifier: MIT */
/*
 * gitindex: the strict reader of a sandbox-written git index (see gitindex.h for the format,
 * the rules and what is knowingly left out).
 *
 * One pass over the file with wire's cursor (its getters are big-endian, as git's format is):
 * header, entries, extensions, checksum. Nothing is returned until the last byte has been
 * accepted. The reader is stricter than git wherever the two could disagree about what an
 * entry is: git takes a name's length from the 12-bit field and ignores the padding, this
 * reader requires field, NUL and padding to agree; git ignores up to 7 stray bytes before the
 * checksum, this reader refuses them. Being stricter only holds an index back; being looser
 * could let the host's git see an entry (and its bits) that this reader framed differently.
 *
 * Pure code: no syscalls, no global state.
 */
#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cleanup.h"
#include "gitindex.h"
#include "wire.h"

#define SIGNATURE "DIRC"
#define HASH_LEN 20u          /* SHA-1: object names and the checksum */
#define HEADER_LEN 12u
#define STAT_BEFORE_MODE 24u  /* ctime s/ns, mtime s/ns, dev, ino */
#define STAT_AFTER_MODE 12u   /* uid, gid, size */
#define ENTRY_FIXED (STAT_BEFORE_MODE + 4u + STAT_AFTER_MODE + HASH_LEN + 2u) /* 62 */
#define EXT_HEADER_LEN 8u     /* signature[4] | u32 size */

/* The first 16-bit flags word. */
#define F_ASSUME_VALID 0x8000u /* assume-unchanged */
#define F_EXTENDED 0x4000u     /* the second word follows (v3 and v4) */
#define F_STAGE_MASK 0x3000u
#define F_STAGE_SHIFT 12u
#define F_NAME_MASK 0x0fffu    /* the name's length, or 0xfff when it is 0xfff or more */

/* The second word. */
#define F2_SKIP_WORKTREE 0x4000u
#define F2_INTENT_TO_ADD 0x2000u
#define F2_KNOWN (F2_SKIP_WORKTREE | F2_INTENT_TO_ADD)

/* The only modes git writes into an index. */
#define MODE_FILE 0100644u
#define MODE_EXEC 0100755u
#define MODE_SYMLINK 0120000u
#define MODE_GITLINK 0160000u
#define MODE_DIR 040000u /* a sparse directory entry */

_Static_assert(POL_GITINDEX_MAX_PATH >= F_NAME_MASK, "the 12-bit field must be reachable");
_Static_assert(POL_GITINDEX_MAX_BYTES <= SIZE_MAX / 2, "sizes below must not overflow");

/* ---- the cursor -------------------------------------------------------------------------- */

static bool skip(struct wire_rd *r, size_t n)
{
	struct wire_rd ignored;
	return wire_get_view(r, n, &ignored);
}

/*
 * The v4 strip length: git's variable-width integer (gitformat-pack(5), OFS_DELTA offsets).
 * Each byte gives 7 bits, high bit set when another byte follows, and every continuation adds
 * one before the shift, so each value has exactly one encoding. Values over max are refused as
 * soon as they get there, which also bounds the loop (max is at most 4096: three bytes).
 */
static bool get_varint(struct wire_rd *r, size_t max, size_t *out)
{
	uint8_t b;
	if (!wire_get_u8(r, &b))
		return false;
	size_t v = b & 0x7fu;
	while (b & 0x80u) {
		if (!wire_get_u8(r, &b))
			return false;
		v = ((v + 1) << 7) | (b & 0x7fu);
		if (v > max)
			return false;
	}
	if (v > max)
		return false;
	*out = v;
	return true;
}

/*
 * Reads bytes up to and including a NUL into name[at..], with the whole name (at + what is
 * read, without the NUL) at most POL_GITINDEX_MAX_PATH bytes. name holds MAX_PATH + 1 bytes.
 * Stores the whole length and NUL-terminates name.
 */
static bool get_name(struct wire_rd *r, char *name, size_t at, size_t *out_len)
{
	size_t n = at;
	for (;;) {
		uint8_t b;
		if (!wire_get_u8(r, &b))
			return false;
		if (b == 0)
			break;
		if (n >= POL_GITINDEX_MAX_PATH)
			return false;
		name[n++] = (char)b;
	}
	name[n] = '\0';
	*out_len = n;
	return true;
}

/* ---- rules ------------------------------------------------------------------------------- */

static bool component_ok(const char *c, size_t n)
{
	if (n == 0)
		return false; /* a leading '/', "//" */
	if ((n == 1 && c[0] == '.') || (n == 2 && c[0] == '.' && c[1] == '.'))
		return false;
	/* git refuses to add ".git" in any case; an entry holding one was planted. */
	if (n == 4 && c[0] == '.' && (c[1] | 0x20) == 'g' && (c[2] | 0x20) == 'i' &&
	    (c[3] | 0x20) == 't')
		return false;
	return true;
}

/*
 * A path (len bytes, no NUL in it) is relative, non-empty, and has no empty, ".", ".." or
 * ".git" component. A trailing '/' is allowed only when dir (a sparse directory entry).
 */
static bool path_ok(const char *p, size_t len, bool dir)
{
	if (dir) {
		if (len < 2 || p[len - 1] != '/')
			return false;
		len--;
	}
	size_t start = 0;
	for (size_t i = 0; i <= len; i++) {
		if (i == len || p[i] == '/') {
			if (!component_ok(p + start, i - start))
				return false;
			start = i + 1;
		}
	}
	return true;
}

/* git's order: bytes as unsigned, a proper prefix first. <0, 0 or >0 as memcmp(). */
static int name_cmp(const char *a, size_t a_len, const char *b, size_t b_len)
{
	int c = memcmp(a, b, a_len < b_len ? a_len : b_len);
	if (c)
		return c;
	return a_len < b_len ? -1 : a_len > b_len ? 1 : 0;
}

/* ---- the result -------------------------------------------------------------------------- */

struct gi_list {
	char **v;
	size_t n, cap;
	size_t bytes;    /* strlen + 1 of every path in v */
	size_t last_len; /* strlen of v[n - 1] */
	bool over;       /* a path did not fit in POL_GITINDEX_MAX_HIDDEN_BYTES */
};

static void gi_list_done(struct gi_list *l)
{
	(void)pol_gitindex_paths_free(l->v, l->n);
	l->v = NULL;
	l->n = l->cap = l->bytes = l->last_len = 0;
}

/*
 * Appends a copy of name (len bytes) unless it equals the last path (stages of one path).
 * Once the paths would exceed POL_GITINDEX_MAX_HIDDEN_BYTES, sets over and adds no more, so
 * that the rest of the file is still checked. Returns 0 or -ENOMEM.
 */
static int gi_list_add(struct gi_list *l, const char *name, size_t len)
{
	if (l->over)
		return 0;
	if (l->n > 0 && l->last_len == len && memcmp(l->v[l->n - 1], name, len) == 0)
		return 0;
	if (len + 1 > POL_GITINDEX_MAX_HIDDEN_BYTES - l->bytes) {
		l->over = true;
		return 0;
	}
	if (l->n == l->cap) {
		/* n is at most POL_GITINDEX_MAX_ENTRIES, so neither product overflows. */
		size_t cap = l->cap ? l->cap * 2 : 16;
		char **v = realloc(l->v, cap * sizeof(*v));
		if (!v)
			return -ENOMEM;
		l->v = v;
		l->cap = cap;
	}
	char *s = malloc(len + 1);
	if (!s)
		return -ENOMEM;
	memcpy(s, name, len);
	s[len] = '\0';
	l->v[l->n++] = s;
	l->bytes += len + 1;
	l->last_len = len;
	return 0;
}

/* ---- entries ----------------------------------------------------------------------------- */

struct gi_parse {
	uint32_t version;
	/* The previous entry's path and the current one: two buffers, swapped after each entry. */
	char names[2][POL_GITINDEX_MAX_PATH + 1];
	char *prev, *cur;
	size_t prev_len;
	unsigned prev_stage;
	bool have_prev;
	bool has_dir_entry; /* then the "sdir" extension must be present */
	struct gi_list hidden;
};

/*
 * One entry at the cursor. On success the entry's path has become p->prev (p->prev_len bytes,
 * its stage p->prev_stage) and, if it carries a hiding bit, has been added to p->hidden.
 * Returns 0, -EBADMSG or -ENOMEM.
 */
static int parse_entry(struct gi_parse *p, struct wire_rd *r)
{
	uint32_t mode;
	uint16_t flags, flags2 = 0;

	if (!skip(r, STAT_BEFORE_MODE) || !wire_get_u32(r, &mode) || !skip(r, STAT_AFTER_MODE) ||
	    !skip(r, HASH_LEN) || !wire_get_u16(r, &flags))
		return -EBADMSG;
	bool extended = flags & F_EXTENDED;
	if (extended) {
		/* "must be zero in version 2" */
		if (p->version < 3 || !wire_get_u16(r, &flags2) || (flags2 & ~F2_KNOWN))
			return -EBADMSG;
	}

	size_t copy_len = 0;
	if (p->version == 4) {
		size_t strip;
		/* The first entry's previous path is the empty string. */
		if (!get_varint(r, p->have_prev ? p->prev_len : 0, &strip))
			return -EBADMSG;
		copy_len = (p->have_prev ? p->prev_len : 0) - strip;
		if (copy_len)
			memcpy(p->cur, p->prev, copy_len);
	}
	size_t len;
	if (!get_name(r, p->cur, copy_len, &len))
		return -EBADMSG;
	size_t field = flags & F_NAME_MASK;
	if (field < F_NAME_MASK ? len != field : len < F_NAME_MASK)
		return -EBADMSG; /* also catches a NUL inside the name the field describes */

	if (p->version < 4) {
		/* Pad with NULs to a multiple of 8 bytes; the name's own NUL is the first of 1..8. */
		size_t used = ENTRY_FIXED + (extended ? 2u : 0u) + len + 1u;
		for (size_t pad = (8u - used % 8u) % 8u; pad > 0; pad--) {
			uint8_t b;
			if (!wire_get_u8(r, &b) || b != 0)
				return -EBADMSG;
		}
	}

	bool skip_worktree = flags2 & F2_SKIP_WORKTREE;
	bool dir = mode == MODE_DIR;
	switch (mode) {
	case MODE_FILE:
	case MODE_EXEC:
	case MODE_SYMLINK:
	case MODE_GITLINK:
		break;
	case MODE_DIR:
		/* Sparse index: only outside the sparse checkout, so always skip-worktree. */
		if (!skip_worktree)
			return -EBADMSG;
		p->has_dir_entry = true;
		break;
	default:
		return -EBADMSG;
	}
	if (!path_ok(p->cur, len, dir))
		return -EBADMSG;

	unsigned stage = (flags & F_STAGE_MASK) >> F_STAGE_SHIFT;
	if (p->have_prev) {
		int c = name_cmp(p->prev, p->prev_len, p->cur, len);
		if (c > 0)
			return -EBADMSG;
		/* One path: either stage 0 alone, or stages 1..3 in increasing order. */
		if (c == 0 && (p->prev_stage == 0 || stage <= p->prev_stage))
			return -EBADMSG;
	}

	if ((flags & F_ASSUME_VALID) || skip_worktree) {
		int e = gi_list_add(&p->hidden, p->cur, len);
		if (e < 0)
			return e;
	}

	char *t = p->prev;
	p->prev = p->cur;
	p->cur = t;
	p->prev_len = len;
	p->prev_stage = stage;
	p->have_prev = true;
	return 0;
}

/* ---- extensions -------------------------------------------------------------------------- */

/*
 * The extensions, which fill r exactly. Returns 0 (all opaque ones), -EBADMSG, or -EPROTO
 * after checking the framing of every one of them.
 */
static int parse_extensions(struct gi_parse *p, struct wire_rd *r)
{
	bool refused = false, sparse = false;

	while (!wire_done(r)) {
		char sig[4];
		uint32_t size;
		if (!wire_get_bytes(r, sig, sizeof(sig)) || !wire_get_u32(r, &size) ||
		    !skip(r, size))
			return -EBADMSG;
		if (memcmp(sig, "link", 4) == 0 || memcmp(sig, "EOIE", 4) == 0 ||
		    memcmp(sig, "IEOT", 4) == 0) {
			refused = true;
		} else if (memcmp(sig, "sdir", 4) == 0) {
			if (size != 0)
				return -EBADMSG; /* a marker, without content */
			sparse = true;
		} else if (!(sig[0] >= 'A' && sig[0] <= 'Z')) {
			return -EBADMSG; /* mandatory, and unknown to git too */
		}
	}
	if (p->has_dir_entry && !sparse)
		return -EBADMSG;
	return refused ? -EPROTO : 0;
}

/* ---- the API ----------------------------------------------------------------------------- */

static int parse(struct gi_parse *p, const void *buf, size_t len)
{
	struct wire_rd all, body, r;
	wire_rd_init(&all, buf, len);
	if (len < HEADER_LEN + HASH_LEN || !wire_get_view(&all, len - HASH_LEN, &body) ||
	    !skip(&all, HASH_LEN) || !wire_done(&all))
		return -EBADMSG;
	r = body;

	char sig[4];
	uint32_t n_entries;
	if (!wire_get_bytes(&r, sig, sizeof(sig)) || memcmp(sig, SIGNATURE, 4) != 0 ||
	    !wire_get_u32(&r, &p->version) || p->version < 2 || p->version > 4 ||
	    !wire_get_u32(&r, &n_entries) || n_entries > POL_GITINDEX_MAX_ENTRIES)
		return -EBADMSG;

	p->prev = p->names[0];
	p->cur = p->names[1];
	for (uint32_t i = 0; i < n_entries; i++) {
		int e = parse_entry(p, &r);
		if (e < 0)
			return e;
	}
	return parse_extensions(p, &r);
}

int pol_gitindex_hidden(const void *buf, size_t len, char ***out_paths, size_t *out_n)
{
	if (len > POL_GITINDEX_MAX_BYTES)
		return -E2BIG;
	if (!buf && len > 0)
		return -EBADMSG;

	/* Two path buffers of 4 KiB: on the heap, not the stack. */
	_cleanup_free_ struct gi_parse *p = calloc(1, sizeof(*p));
	if (!p)
		return -ENOMEM;
	int e = parse(p, buf, len);
	if (e == 0 && p->hidden.over)
		e = -E2BIG;
	if (e < 0) {
		gi_list_done(&p->hidden);
		return e;
	}
	if (p->hidden.n == 0) {
		gi_list_done(&p->hidden);
		*out_paths = NULL;
		*out_n = 0;
		return 0;
	}
	*out_paths = TAKE_PTR(p->hidden.v);
	*out_n = p->hidden.n;
	return 0;
}

char **pol_gitindex_paths_free(char **paths, size_t n)
{
	if (!paths)
		return NULL;
	for (size_t i = 0; i < n; i++)
		free(paths[i]);
	free(paths);
	return NULL;
}

static bool increasing(char *const *v, size_t n)
{
	if (n > 0 && !v)
		return false;
	for (size_t i = 0; i < n; i++)
		if (!v[i] || (i > 0 && strcmp(v[i - 1], v[i]) >= 0))
			return false;
	return true;
}

int pol_gitindex_newly_hidden(char *const *old_paths, size_t n_old, char *const *new_paths,
			      size_t n_new, const char **out_first)
{
	if (!increasing(old_paths, n_old) || !increasing(new_paths, n_new))
		return -EINVAL;
	/* Both sorted: one merge walk. */
	size_t i = 0;
	for (size_t j = 0; j < n_new; j++) {
		int c = 1;
		while (i < n_old && (c = strcmp(old_paths[i], new_paths[j])) < 0)
			i++;
		if (i == n_old || c != 0) {
			if (out_first)
				*out_first = new_paths[j];
			return 1;
		}
	}
	return 0;
}
