/* SPDX-License-Identifier: MIT */
/*
 * Unit tests for the git index reader (supervisor/gitindex.c).
 *
 * Two sources of input:
 *  - fixtures written by the real git binary (tests/gitindex/, made by make-fixtures.sh; the
 *    README there says what each holds): versions 2, 3 and 4, with and without the bits, a
 *    conflict, names at the 12-bit length limit, cache-tree and resolve-undo extensions, a
 *    sparse index, a split index and threaded-loading tables;
 *  - indexes built here by build(), which is first shown to write what git writes (the same
 *    bytes as the fixtures, checksum aside), and then made to break one rule at a time.
 * Every refusal asserts its specific error and that the outputs were left untouched; sweeps
 * cover every prefix and every single-bit flip of the fixtures.
 */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "cleanup.h"
#include "gitindex.h"
#include "wire.h"

#ifndef GITINDEX_DIR
#error "GITINDEX_DIR must name tests/gitindex"
#endif

/* Values no call ever stores, to prove the outputs are untouched on failure. */
#define SENTINEL_PATHS ((char **)(uintptr_t)0x5a5a5a5a)
#define SENTINEL_N ((size_t)0x5a5a5a5a)

#define M_FILE 0100644u
#define M_EXEC 0100755u
#define M_LINK 0120000u
#define M_GITLINK 0160000u
#define M_DIR 040000u

/* The blob "hi\n", which every --cacheinfo entry of the fixtures names. */
static const uint8_t blob_hi[20] = {
	0x45, 0xb9, 0x83, 0xbe, 0x36, 0xb7, 0x3c, 0x07, 0x88, 0xdc,
	0x9c, 0xbc, 0xb7, 0x6c, 0xbb, 0x80, 0xfc, 0x7b, 0xb0, 0x57,
};

/* ---- fixtures ----------------------------------------------------------------------------- */

struct blob {
	uint8_t *p;
	size_t len;
};

static void blob_done(struct blob *b)
{
	free(b->p);
	b->p = NULL;
}

/* The bytes of tests/gitindex/<name>; fails the test when it cannot be read. */
static struct blob fixture(const char *name)
{
	char path[512];
	(void)snprintf(path, sizeof(path), "%s/%s", GITINDEX_DIR, name);
	_cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		fail_msg("%s: %s", path, strerror(errno));
	struct stat st;
	assert_int_equal(fstat(fd, &st), 0);
	assert_true(st.st_size > 0 && st.st_size < 1024 * 1024);
	struct blob b = { .p = malloc((size_t)st.st_size), .len = (size_t)st.st_size };
	assert_non_null(b.p);
	assert_int_equal(read(fd, b.p, b.len), (ssize_t)b.len);
	return b;
}

/* The paths at the 12-bit field's limit that long-v3.index and long-v4.index hold. */
static char *long_path(size_t extra_f)
{
	char *p = malloc(POL_GITINDEX_MAX_PATH + 2);
	assert_non_null(p);
	size_t n = 0;
	for (int i = 0; i < 20; i++) {
		memset(p + n, 'd', 200);
		n += 200;
		p[n++] = '/';
	}
	memset(p + n, 'e', 74);
	n += 74;
	memset(p + n, 'f', extra_f);
	n += extra_f;
	p[n] = '\0';
	assert_int_equal(n, 4094 + extra_f);
	return p;
}

/* ---- calling the reader ------------------------------------------------------------------ */

/* Parses and expects success with exactly the want[0..n_want) paths. */
static void expect_paths(const void *buf, size_t len, const char *const *want, size_t n_want)
{
	char **paths = SENTINEL_PATHS;
	size_t n = SENTINEL_N;
	int r = pol_gitindex_hidden(buf, len, &paths, &n);
	if (r != 0)
		fail_msg("expected success, got %d", r);
	assert_int_equal(n, n_want);
	if (n == 0)
		assert_null(paths);
	for (size_t i = 0; i < n; i++)
		assert_string_equal(paths[i], want[i]);
	pol_gitindex_paths_free(paths, n);
}

/* Parses and expects error want, with the outputs untouched. */
static void expect_err(const void *buf, size_t len, int want)
{
	char **paths = SENTINEL_PATHS;
	size_t n = SENTINEL_N;
	int r = pol_gitindex_hidden(buf, len, &paths, &n);
	if (r != want)
		fail_msg("expected %d, got %d", want, r);
	assert_ptr_equal(paths, SENTINEL_PATHS);
	assert_int_equal(n, SENTINEL_N);
}

#define PATHS(...) ((const char *const[]){ __VA_ARGS__ })
#define N_PATHS(...) (sizeof(PATHS(__VA_ARGS__)) / sizeof(const char *))
#define EXPECT(buf, len, ...) expect_paths(buf, len, PATHS(__VA_ARGS__), N_PATHS(__VA_ARGS__))
#define EXPECT_NONE(buf, len) expect_paths(buf, len, NULL, 0)

/* ---- an index writer --------------------------------------------------------------------- */

/* One entry for build(). Zero values mean "as git writes it"; the rest break a rule. */
struct ent {
	const char *name;
	size_t name_len;      /* 0: strlen(name); else the bytes of name written (NULs too) */
	uint32_t mode;        /* 0: M_FILE */
	unsigned stage;
	bool valid, skip, ita;
	bool set_field;       /* write field as the 12-bit length instead of the name's */
	unsigned field;
	bool force_ext;       /* write the second flags word though no bit needs it */
	uint16_t flags2_or;   /* extra bits in the second word (which it then forces) */
	bool set_pad;         /* v2/v3: write pad NULs after the name instead of 1..8 */
	unsigned pad;
	uint8_t last_pad;     /* v2/v3: the last padding byte */
	bool set_strip;       /* v4: write strip as the strip length, and name as the suffix */
	size_t strip;
	const uint8_t *varint; /* v4: these varint_len bytes instead, name as the suffix */
	size_t varint_len;
};

struct idx {
	uint32_t version;
	const struct ent *e;
	size_t n;
	bool set_count;       /* write count as the number of entries */
	uint32_t count;
	const char *sig;      /* NULL: "DIRC" */
	const void *ext;      /* raw extension bytes after the entries */
	size_t ext_len;
	size_t junk;          /* zero bytes between the extensions and the checksum */
};

/* git's varint (gitformat-pack(5), OFS_DELTA): big-endian 7-bit groups, minus one per group. */
static size_t put_varint(uint8_t out[16], size_t v)
{
	uint8_t tmp[16];
	size_t pos = sizeof(tmp) - 1;
	tmp[pos] = (uint8_t)(v & 0x7fu);
	while (v >>= 7) {
		v--;
		tmp[--pos] = (uint8_t)(0x80u | (v & 0x7fu));
	}
	size_t n = sizeof(tmp) - pos;
	memcpy(out, tmp + pos, n);
	return n;
}

static size_t common_prefix(const char *a, size_t a_len, const char *b, size_t b_len)
{
	size_t i = 0;
	while (i < a_len && i < b_len && a[i] == b[i])
		i++;
	return i;
}

/* The index x as git would write it (apart from the checksum: 20 zero bytes). */
static struct blob build(const struct idx *x)
{
	size_t cap = 12 + x->ext_len + x->junk + 20;
	for (size_t i = 0; i < x->n; i++) {
		const struct ent *e = &x->e[i];
		cap += 80 + 16 + (e->name_len ? e->name_len : strlen(e->name)) + e->varint_len +
		       (e->set_pad ? e->pad : 0);
	}
	struct blob b = { .p = malloc(cap), .len = 0 };
	assert_non_null(b.p);
	struct wire_wr w;
	wire_wr_init(&w, b.p, cap);

	wire_put_bytes(&w, x->sig ? x->sig : "DIRC", 4);
	wire_put_u32(&w, x->version);
	wire_put_u32(&w, x->set_count ? x->count : (uint32_t)x->n);

	_cleanup_free_ char *prev = malloc(POL_GITINDEX_MAX_PATH + 64);
	assert_non_null(prev);
	size_t prev_len = 0;
	for (size_t i = 0; i < x->n; i++) {
		const struct ent *e = &x->e[i];
		size_t len = e->name_len ? e->name_len : strlen(e->name);
		size_t start = w.len;
		for (int k = 0; k < 6; k++)
			wire_put_u32(&w, 0); /* ctime, mtime, dev, ino */
		wire_put_u32(&w, e->mode ? e->mode : M_FILE);
		for (int k = 0; k < 3; k++)
			wire_put_u32(&w, 0); /* uid, gid, size */
		wire_put_bytes(&w, blob_hi, sizeof(blob_hi));
		uint16_t flags2 = (uint16_t)((e->skip ? 0x4000u : 0) | (e->ita ? 0x2000u : 0) |
					     e->flags2_or);
		bool ext = flags2 || e->force_ext;

		/* The full name this entry stands for, and what is written of it. */
		const char *suffix = e->name;
		size_t suffix_len = len, full_len = len, strip = 0;
		if (x->version == 4 && (e->set_strip || e->varint)) {
			strip = e->strip;
			full_len = (strip <= prev_len ? prev_len - strip : 0) + len;
		} else if (x->version == 4) {
			size_t common = common_prefix(prev, prev_len, e->name, len);
			strip = prev_len - common;
			suffix = e->name + common;
			suffix_len = len - common;
		}
		unsigned field = e->set_field ? e->field : (full_len < 0xfff ? (unsigned)full_len : 0xfffu);
		wire_put_u16(&w, (uint16_t)((e->valid ? 0x8000u : 0) | (ext ? 0x4000u : 0) |
					    ((e->stage & 3u) << 12) | (field & 0xfffu)));
		if (ext)
			wire_put_u16(&w, flags2);
		if (x->version == 4) {
			uint8_t v[16];
			if (e->varint)
				wire_put_bytes(&w, e->varint, e->varint_len);
			else
				wire_put_bytes(&w, v, put_varint(v, strip));
		}
		wire_put_bytes(&w, suffix, suffix_len);
		if (x->version == 4) {
			wire_put_u8(&w, 0);
		} else {
			size_t used = w.len - start;
			size_t pad = e->set_pad ? e->pad : 8 - used % 8;
			for (size_t k = 0; k < pad; k++)
				wire_put_u8(&w, k + 1 == pad ? e->last_pad : 0);
		}

		/* Remember the full name for the next entry's prefix. */
		if (x->version == 4 && (e->set_strip || e->varint)) {
			size_t keep = strip <= prev_len ? prev_len - strip : 0;
			memcpy(prev + keep, e->name, len);
			prev_len = keep + len;
		} else {
			memcpy(prev, e->name, len);
			prev_len = len;
		}
	}
	if (x->ext_len)
		wire_put_bytes(&w, x->ext, x->ext_len);
	for (size_t k = 0; k < x->junk + 20; k++)
		wire_put_u8(&w, 0);
	assert_false(w.failed);
	b.len = w.len;
	return b;
}

/* Builds x and expects the paths want[0..n_want). */
static void build_expect(const struct idx *x, const char *const *want, size_t n_want)
{
	struct blob b = build(x);
	expect_paths(b.p, b.len, want, n_want);
	blob_done(&b);
}

static void build_err(const struct idx *x, int want)
{
	struct blob b = build(x);
	expect_err(b.p, b.len, want);
	blob_done(&b);
}

#define ENTS(...) .e = (const struct ent[]){ __VA_ARGS__ }, \
		  .n = sizeof((const struct ent[]){ __VA_ARGS__ }) / sizeof(struct ent)

/* The entries of most fixtures: a, dir/f and dir/g (executable), with more fields for each. */
#define THREE(f_fields, g_fields) { .name = "a" }, { .name = "dir/f", f_fields }, \
		{ .name = "dir/g", .mode = M_EXEC, g_fields }

/* ---- fixtures made by git ---------------------------------------------------------------- */

static void test_fixture_lists(void **state)
{
	(void)state;
	static const struct {
		const char *file;
		const char *paths[4];
		size_t n;
	} cases[] = {
		{ "v2-plain.index", { NULL }, 0 },
		{ "v2-assume.index", { "dir/g" }, 1 },
		{ "v3-hidden.index", { "dir/f", "dir/g" }, 2 },
		{ "v4-hidden.index", { "dir/f", "dir/g" }, 2 },
		{ "v4-plain.index", { NULL }, 0 },
		{ "v4-more.index", { "dir/link", "dir/sub/deeper/x", "dirt" }, 3 },
		{ "conflict.index", { "dir/f" }, 1 },
		{ "resolved.index", { "dir/f" }, 1 },   /* REUC skipped */
		{ "tree.index", { "a" }, 1 },           /* TREE skipped */
		{ "sparse.index", { "dir2/" }, 1 },     /* a sparse directory entry, "sdir" */
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct blob b = fixture(cases[i].file);
		expect_paths(b.p, b.len, cases[i].paths, cases[i].n);
		blob_done(&b);
	}
}

/* Names of 4094, 4095 and 4096 bytes: the 12-bit field holds 0xffe, then 0xfff twice. */
static void test_fixture_long_names(void **state)
{
	(void)state;
	_cleanup_free_ char *p4095 = long_path(1);
	_cleanup_free_ char *p4096 = long_path(2);
	const char *want[] = { p4095, p4096 };
	for (int v = 3; v <= 4; v++) {
		struct blob b = fixture(v == 3 ? "long-v3.index" : "long-v4.index");
		expect_paths(b.p, b.len, want, 2);
		blob_done(&b);
	}
}

/* A split index keeps its entries in another file; threaded-loading tables give offsets. */
static void test_fixture_refused(void **state)
{
	(void)state;
	const char *files[] = { "split.index", "eoie.index" };
	for (size_t i = 0; i < 2; i++) {
		struct blob b = fixture(files[i]);
		expect_err(b.p, b.len, -EPROTO);
		blob_done(&b);
	}
}

/* build() writes exactly what git wrote (the checksum aside), so its refusals below count. */
static void test_builder_matches_git(void **state)
{
	(void)state;
	_cleanup_free_ char *p4094 = long_path(0);
	_cleanup_free_ char *p4095 = long_path(1);
	_cleanup_free_ char *p4096 = long_path(2);
	const struct ent more[] = {
		THREE(, ), { .name = "dir/link", .mode = M_LINK, .valid = true },
		{ .name = "dir/sub/deeper/x", .skip = true }, { .name = "dir/sub/deeper/y" },
		{ .name = "dirt", .skip = true },
	};
	const struct ent more_plain[] = {
		THREE(, ), { .name = "dir/link", .mode = M_LINK }, { .name = "dir/sub/deeper/x" },
		{ .name = "dir/sub/deeper/y" }, { .name = "dirt" },
	};
	const struct ent conflict[] = {
		{ .name = "a" }, { .name = "c", .stage = 1 }, { .name = "c", .stage = 2 },
		{ .name = "c", .stage = 3 }, { .name = "dir/f", .skip = true },
		{ .name = "dir/g", .mode = M_EXEC },
	};
	const struct ent longs[] = {
		{ .name = p4094 }, { .name = p4095, .skip = true }, { .name = p4096, .skip = true },
	};
	const struct {
		const char *file;
		struct idx x;
	} cases[] = {
		{ "v2-plain.index", { .version = 2, ENTS(THREE(, )) } },
		{ "v2-assume.index", { .version = 2, ENTS(THREE(, .valid = true)) } },
		{ "v3-hidden.index", { .version = 3, ENTS(THREE(.skip = true, .valid = true)) } },
		{ "v4-hidden.index", { .version = 4, ENTS(THREE(.skip = true, .valid = true)) } },
		{ "v4-more.index", { .version = 4, .e = more, .n = 7 } },
		{ "v4-plain.index", { .version = 4, .e = more_plain, .n = 7 } },
		{ "conflict.index", { .version = 3, .e = conflict, .n = 6 } },
		{ "long-v3.index", { .version = 3, .e = longs, .n = 3 } },
		{ "long-v4.index", { .version = 4, .e = longs, .n = 3 } },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct blob git = fixture(cases[i].file);
		struct blob ours = build(&cases[i].x);
		if (git.len != ours.len || memcmp(git.p, ours.p, git.len - 20) != 0)
			fail_msg("%s: build() wrote %zu bytes, git %zu, or other bytes", cases[i].file,
				 ours.len, git.len);
		blob_done(&git);
		blob_done(&ours);
	}
}

/* ---- sweeps ------------------------------------------------------------------------------ */

/*
 * Every proper prefix is refused with -EBADMSG, but one kind: the checksum is not verified, so
 * a prefix that ends 20 bytes after the entries or after an extension is a well-formed index
 * whose checksum is the next 20 bytes. tree.index cut there is accepted (without TREE),
 * eoie.index too (without IEOT and EOIE) and refused (-EPROTO) when cut after IEOT; sparse.index
 * cut there lacks "sdir" for its directory entry. git refuses all of those: bad checksum.
 */
static void test_truncation_sweep(void **state)
{
	(void)state;
	static const struct {
		const char *file;
		size_t n_accepted, n_refused; /* prefixes answered 0 and -EPROTO */
	} cases[] = {
		{ "v2-plain.index", 0, 0 },  { "v2-assume.index", 0, 0 }, { "v3-hidden.index", 0, 0 },
		{ "v4-hidden.index", 0, 0 }, { "v4-more.index", 0, 0 },   { "conflict.index", 0, 0 },
		{ "resolved.index", 1, 0 },  { "tree.index", 1, 0 },      { "sparse.index", 0, 0 },
		{ "long-v3.index", 0, 0 },   { "long-v4.index", 0, 0 },   { "split.index", 1, 0 },
		{ "eoie.index", 1, 1 },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct blob b = fixture(cases[i].file);
		size_t accepted = 0, refused = 0;
		for (size_t n = 0; n < b.len; n++) {
			char **paths = SENTINEL_PATHS;
			size_t n_paths = SENTINEL_N;
			int r = pol_gitindex_hidden(b.p, n, &paths, &n_paths);
			if (r == 0) {
				accepted++;
				pol_gitindex_paths_free(paths, n_paths);
				continue;
			}
			if (r == -EPROTO)
				refused++;
			else if (r != -EBADMSG)
				fail_msg("%s, prefix %zu: %d", cases[i].file, n, r);
			assert_ptr_equal(paths, SENTINEL_PATHS);
			assert_int_equal(n_paths, SENTINEL_N);
		}
		if (accepted != cases[i].n_accepted || refused != cases[i].n_refused)
			fail_msg("%s: %zu prefixes accepted, %zu refused", cases[i].file, accepted,
				 refused);
		blob_done(&b);
	}
}

/* The paths p[0..n) are what the reader promises: valid and strictly increasing. */
static void check_list(char **p, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		size_t len = strlen(p[i]);
		assert_true(len > 0 && len <= POL_GITINDEX_MAX_PATH && p[i][0] != '/');
		assert_null(strstr(p[i], "//"));
		if (i > 0)
			assert_true(strcmp(p[i - 1], p[i]) < 0);
	}
}

/*
 * Every single-bit flip is accepted or refused with -EBADMSG (-EPROTO only where an
 * extension's signature turns into one that is refused). Flips in stat data, object names and
 * the checksum are accepted with the same list; a flip of an assume-unchanged bit is accepted
 * with one path more or fewer.
 */
static void test_bit_flip_sweep(void **state)
{
	(void)state;
	const char *files[] = { "v2-assume.index", "v3-hidden.index", "v4-more.index",
				"conflict.index", "sparse.index", "tree.index" };
	for (size_t f = 0; f < sizeof(files) / sizeof(files[0]); f++) {
		struct blob b = fixture(files[f]);
		char **base = NULL;
		size_t n_base = 0;
		assert_int_equal(pol_gitindex_hidden(b.p, b.len, &base, &n_base), 0);
		size_t accepted = 0, same = 0;
		for (size_t i = 0; i < b.len; i++) {
			for (unsigned bit = 0; bit < 8; bit++) {
				b.p[i] ^= (uint8_t)(1u << bit);
				char **paths = SENTINEL_PATHS;
				size_t n = SENTINEL_N;
				int r = pol_gitindex_hidden(b.p, b.len, &paths, &n);
				if (r == 0) {
					accepted++;
					check_list(paths, n);
					if (n == n_base && pol_gitindex_newly_hidden(base, n_base, paths, n,
										     NULL) == 0)
						same++;
					pol_gitindex_paths_free(paths, n);
				} else {
					if (r != -EBADMSG && r != -EPROTO)
						fail_msg("%s: flip %zu.%u: %d", files[f], i, bit, r);
					assert_ptr_equal(paths, SENTINEL_PATHS);
					assert_int_equal(n, SENTINEL_N);
				}
				b.p[i] ^= (uint8_t)(1u << bit);
			}
		}
		/* Stat data, object names and the checksum are most of an entry. */
		assert_true(accepted > b.len * 8 / 2);
		assert_true(accepted < b.len * 8);
		assert_true(same > 0 && same < accepted);
		pol_gitindex_paths_free(base, n_base);
		blob_done(&b);
	}
}

/* The assume-unchanged bit of each entry of v2-plain.index, set by hand, lists that entry. */
static void test_flip_assume_bit(void **state)
{
	(void)state;
	struct blob b = fixture("v2-plain.index");
	/* v2 entries are 62 bytes, the name and its padding: "a" 64, "dir/f" and "dir/g" 72. */
	const size_t flags_at[] = { 12 + 60, 12 + 64 + 60, 12 + 136 + 60 };
	const char *names[] = { "a", "dir/f", "dir/g" };
	for (size_t i = 0; i < 3; i++) {
		b.p[flags_at[i]] ^= 0x80;
		expect_paths(b.p, b.len, &names[i], 1);
		/* The extended bit instead: there is no second word in version 2. */
		b.p[flags_at[i]] ^= 0x80 | 0x40;
		expect_err(b.p, b.len, -EBADMSG);
		b.p[flags_at[i]] ^= 0x40;
	}
	EXPECT_NONE(b.p, b.len);
	blob_done(&b);
}

/* ---- rules, one at a time ----------------------------------------------------------------- */

static void test_header(void **state)
{
	(void)state;
	build_expect(&(struct idx){ .version = 2 }, NULL, 0);
	build_expect(&(struct idx){ .version = 3 }, NULL, 0);
	build_expect(&(struct idx){ .version = 4 }, NULL, 0);
	build_err(&(struct idx){ .version = 1 }, -EBADMSG);
	build_err(&(struct idx){ .version = 5 }, -EBADMSG);
	build_err(&(struct idx){ .version = 0x02000000 }, -EBADMSG);
	build_err(&(struct idx){ .version = 2, .sig = "DIRc" }, -EBADMSG);
	build_err(&(struct idx){ .version = 2, .sig = "CRID" }, -EBADMSG);
	/* Shorter than a header and a checksum; nothing at all. */
	uint8_t small[31] = { 'D', 'I', 'R', 'C', 0, 0, 0, 2 };
	expect_err(small, sizeof(small), -EBADMSG);
	expect_err(small, 0, -EBADMSG);
	expect_err(NULL, 0, -EBADMSG);
}

static void test_counts(void **state)
{
	(void)state;
	build_expect(&(struct idx){ .version = 2, ENTS(THREE(, .valid = true)) }, PATHS("dir/g"), 1);
	/* More entries announced than present; fewer (the rest is not an extension). */
	build_err(&(struct idx){ .version = 2, ENTS(THREE(, )), .set_count = true, .count = 4 },
		  -EBADMSG);
	build_err(&(struct idx){ .version = 2, ENTS(THREE(, )), .set_count = true, .count = 2 },
		  -EBADMSG);
	build_err(&(struct idx){ .version = 4, ENTS(THREE(, )), .set_count = true, .count = 2 },
		  -EBADMSG);
	/* Over the limit: refused from the header alone, whatever follows. */
	build_err(&(struct idx){ .version = 2, .set_count = true,
				 .count = POL_GITINDEX_MAX_ENTRIES + 1 }, -EBADMSG);
	build_err(&(struct idx){ .version = 4, .set_count = true, .count = UINT32_MAX }, -EBADMSG);
}

static void test_too_big(void **state)
{
	(void)state;
	/* Refused on the length alone: the buffer is never read. */
	uint8_t one = 0;
	expect_err(&one, (size_t)POL_GITINDEX_MAX_BYTES + 1, -E2BIG);
	expect_err(&one, SIZE_MAX, -E2BIG);
}

/* Paths git never writes, each alone in a v2, v3 and v4 index. */
static void test_paths(void **state)
{
	(void)state;
	static const char *const bad[] = {
		"", "/a", "/", "a//b", "a/", "./a", "a/.", "a/./b", ".", "..", "../a", "a/..",
		"a/../b", ".git", ".git/config", "a/.git", "a/.GIT/x", ".Git", "x/.gIt/y",
	};
	static const char *const good[] = {
		".gitignore", ".gi", "..a", "a..", "...", "a/.gitx", "x.git", "a b", "-", "\xc3\xa9",
		"a\\b", "\x7f", "\x01",
	};
	for (uint32_t v = 2; v <= 4; v++) {
		for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
			struct ent e = { .name = bad[i], .skip = v > 2, .valid = v == 2 };
			build_err(&(struct idx){ .version = v, .e = &e, .n = 1 }, -EBADMSG);
		}
		for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
			struct ent e = { .name = good[i], .skip = v > 2, .valid = v == 2 };
			build_expect(&(struct idx){ .version = v, .e = &e, .n = 1 }, &good[i], 1);
		}
	}
}

/* The 12-bit field, the NUL and the padding must agree on where a name ends. */
static void test_name_framing(void **state)
{
	(void)state;
	for (uint32_t v = 2; v <= 4; v++) {
		/* The field one short, one long, zero, and 0xfff for a short name. */
		const unsigned fields[] = { 4, 6, 0, 0xfff };
		for (size_t i = 0; i < 4; i++) {
			struct ent e = { .name = "dir/f", .set_field = true, .field = fields[i] };
			build_err(&(struct idx){ .version = v, .e = &e, .n = 1 }, -EBADMSG);
		}
		/* A NUL inside the name the field describes. */
		struct ent nul = { .name = "ab\0cd", .name_len = 5 };
		build_err(&(struct idx){ .version = v, .e = &nul, .n = 1 }, -EBADMSG);
	}
	/* v2/v3: padding of 0 bytes (no NUL), 9 bytes, and one that is not zero. */
	for (uint32_t v = 2; v <= 3; v++) {
		build_err(&(struct idx){ .version = v, ENTS({ .name = "a", .set_pad = true, .pad = 0 },
							    { .name = "b" }) }, -EBADMSG);
		build_err(&(struct idx){ .version = v, ENTS({ .name = "a", .set_pad = true, .pad = 17 },
							    { .name = "b" }) }, -EBADMSG);
		build_err(&(struct idx){ .version = v, ENTS({ .name = "abc", .last_pad = 1 }) },
			  -EBADMSG);
		/* Exactly 8 NULs when the name ends on a boundary ("ab": 62 + 2 = 64). */
		build_expect(&(struct idx){ .version = v, ENTS({ .name = "ab", .valid = true }) },
			     PATHS("ab"), 1);
	}
}

/* The longest path is POL_GITINDEX_MAX_PATH bytes, in every version. */
static void test_path_length(void **state)
{
	(void)state;
	_cleanup_free_ char *max = malloc(POL_GITINDEX_MAX_PATH + 2);
	assert_non_null(max);
	memset(max, 'x', POL_GITINDEX_MAX_PATH + 1);
	max[POL_GITINDEX_MAX_PATH] = '\0';
	for (uint32_t v = 2; v <= 4; v++) {
		struct ent e = { .name = max, .valid = true };
		build_expect(&(struct idx){ .version = v, .e = &e, .n = 1 }, PATHS(max), 1);
		max[POL_GITINDEX_MAX_PATH] = 'x';
		max[POL_GITINDEX_MAX_PATH + 1] = '\0';
		build_err(&(struct idx){ .version = v, .e = &e, .n = 1 }, -EBADMSG);
		max[POL_GITINDEX_MAX_PATH] = '\0';
	}
	/* v4: a long previous path and a short suffix make a path over the limit too. */
	struct ent two[] = { { .name = max }, { .name = "yy", .set_strip = true, .strip = 0 } };
	build_err(&(struct idx){ .version = 4, .e = two, .n = 2 }, -EBADMSG);
	two[1].strip = 1; /* 4095 + 2 */
	build_err(&(struct idx){ .version = 4, .e = two, .n = 2 }, -EBADMSG);
	two[1].strip = 2; /* 4094 + "yy": 4096, and after the previous path */
	build_expect(&(struct idx){ .version = 4, .e = two, .n = 2 }, NULL, 0);
}

/* Sorted by path as unsigned bytes, then by stage; stage 0 is alone. */
static void test_order(void **state)
{
	(void)state;
	for (uint32_t v = 2; v <= 4; v++) {
		build_err(&(struct idx){ .version = v, ENTS({ .name = "b" }, { .name = "a" }) },
			  -EBADMSG);
		build_err(&(struct idx){ .version = v, ENTS({ .name = "a" }, { .name = "a" }) },
			  -EBADMSG);
		build_err(&(struct idx){ .version = v, ENTS({ .name = "ab" }, { .name = "a" }) },
			  -EBADMSG);
		/* '-' (0x2d) sorts before '/' (0x2f), and 0xc3 after both. */
		build_expect(&(struct idx){ .version = v, ENTS({ .name = "a" }, { .name = "a-b" },
							       { .name = "a/b" }, { .name = "a\xc3\xa9" }) },
			     NULL, 0);
		build_err(&(struct idx){ .version = v, ENTS({ .name = "a/b" }, { .name = "a-b" }) },
			  -EBADMSG);
		build_err(&(struct idx){ .version = v, ENTS({ .name = "a\xc3\xa9" }, { .name = "a/b" }) },
			  -EBADMSG);
		/* Stages. */
		build_expect(&(struct idx){ .version = v, ENTS({ .name = "c", .stage = 1 },
							       { .name = "c", .stage = 3 }) }, NULL, 0);
		build_err(&(struct idx){ .version = v, ENTS({ .name = "c", .stage = 2 },
							    { .name = "c", .stage = 1 }) }, -EBADMSG);
		build_err(&(struct idx){ .version = v, ENTS({ .name = "c", .stage = 2 },
							    { .name = "c", .stage = 2 }) }, -EBADMSG);
		build_err(&(struct idx){ .version = v, ENTS({ .name = "c" },
							    { .name = "c", .stage = 1 }) }, -EBADMSG);
		build_err(&(struct idx){ .version = v, ENTS({ .name = "c", .stage = 1 },
							    { .name = "c" }) }, -EBADMSG);
	}
}

/* Several stages of one path carrying the bits list it once. */
static void test_stages_listed_once(void **state)
{
	(void)state;
	build_expect(&(struct idx){ .version = 3, ENTS({ .name = "a", .stage = 1, .skip = true },
						       { .name = "c", .stage = 1, .valid = true },
						       { .name = "c", .stage = 2 },
						       { .name = "c", .stage = 3, .skip = true },
						       { .name = "d", .valid = true }) },
		     PATHS("a", "c", "d"), 3);
}

/* The flags words: which bits hide, which are refused. */
static void test_flags(void **state)
{
	(void)state;
	/* intent-to-add hides nothing; skip-worktree and assume-unchanged do, alone or together. */
	build_expect(&(struct idx){ .version = 3, ENTS({ .name = "a", .ita = true },
						       { .name = "b", .skip = true, .ita = true },
						       { .name = "c", .valid = true, .skip = true },
						       { .name = "d", .force_ext = true }) },
		     PATHS("b", "c"), 2);
	/* No second word in version 2 (git would read a skip-worktree bit from it). */
	build_err(&(struct idx){ .version = 2, ENTS({ .name = "a", .skip = true }) }, -EBADMSG);
	build_err(&(struct idx){ .version = 2, ENTS({ .name = "a", .force_ext = true }) }, -EBADMSG);
	/* The reserved bit and the 13 unused ones. */
	const uint16_t unknown[] = { 0x8000, 0x1000, 0x0001, 0x0100 };
	for (uint32_t v = 3; v <= 4; v++)
		for (size_t i = 0; i < 4; i++)
			build_err(&(struct idx){ .version = v,
						 ENTS({ .name = "a", .flags2_or = unknown[i] }) },
				  -EBADMSG);
}

static void test_modes(void **state)
{
	(void)state;
	build_expect(&(struct idx){ .version = 2, ENTS({ .name = "a", .mode = M_FILE },
						       { .name = "b", .mode = M_EXEC },
						       { .name = "c", .mode = M_LINK },
						       { .name = "d", .mode = M_GITLINK, .valid = true }) },
		     PATHS("d"), 1);
	const uint32_t bad[] = { 0100664, 0100600, 0100000, 0120777, 0170000, 0140000,
				 0x80000000u | M_FILE };
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		build_err(&(struct idx){ .version = 2, ENTS({ .name = "a", .mode = bad[i] }) },
			  -EBADMSG);
	/* Mode 0, which build() cannot write: the mode of "a" in v2-plain.index cleared. */
	struct blob b = fixture("v2-plain.index");
	memset(b.p + 12 + 24, 0, 4);
	expect_err(b.p, b.len, -EBADMSG);
	blob_done(&b);
}

/* A sparse directory entry: mode 040000, skip-worktree, a trailing '/', and "sdir". */
static void test_sparse_dir(void **state)
{
	(void)state;
	static const uint8_t sdir[] = { 's', 'd', 'i', 'r', 0, 0, 0, 0 };
	static const uint8_t sdir_1[] = { 's', 'd', 'i', 'r', 0, 0, 0, 1, 0 };
	for (uint32_t v = 3; v <= 4; v++) {
		build_expect(&(struct idx){ .version = v, ENTS({ .name = "a" },
							       { .name = "d/", .mode = M_DIR, .skip = true },
							       { .name = "d0" }),
					    .ext = sdir, .ext_len = sizeof(sdir) },
			     PATHS("d/"), 1);
		/* Without the extension; with content in it. */
		build_err(&(struct idx){ .version = v,
					 ENTS({ .name = "d/", .mode = M_DIR, .skip = true }) },
			  -EBADMSG);
		build_err(&(struct idx){ .version = v,
					 ENTS({ .name = "d/", .mode = M_DIR, .skip = true }),
					 .ext = sdir_1, .ext_len = sizeof(sdir_1) },
			  -EBADMSG);
		/* Without skip-worktree; without the '/'; a '/' on a file; "/" alone; "./". */
		const struct ent bad[] = {
			{ .name = "d/", .mode = M_DIR },
			{ .name = "d/", .mode = M_DIR, .valid = true },
			{ .name = "d", .mode = M_DIR, .skip = true },
			{ .name = "d/", .skip = true },
			{ .name = "/", .mode = M_DIR, .skip = true },
			{ .name = "./", .mode = M_DIR, .skip = true },
			{ .name = "a//", .mode = M_DIR, .skip = true },
		};
		for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
			build_err(&(struct idx){ .version = v, .e = &bad[i], .n = 1, .ext = sdir,
						 .ext_len = sizeof(sdir) },
				  -EBADMSG);
	}
}

/* v4: the strip length and its varint. */
static void test_v4_names(void **state)
{
	(void)state;
	/* A first entry strips from the empty string: only 0 is valid. */
	build_err(&(struct idx){ .version = 4, ENTS({ .name = "a", .set_strip = true, .strip = 1 }) },
		  -EBADMSG);
	/* More than the previous path has. */
	build_err(&(struct idx){ .version = 4, ENTS({ .name = "abc" },
						    { .name = "d", .set_strip = true, .strip = 4 }) },
		  -EBADMSG);
	/* All of it, and a suffix that makes a later name; an empty suffix for the next stage. */
	build_expect(&(struct idx){ .version = 4, ENTS({ .name = "abc" },
						       { .name = "b", .set_strip = true, .strip = 3,
							 .stage = 1, .skip = true },
						       { .name = "", .set_strip = true, .strip = 0,
							 .stage = 2 }) },
		     PATHS("b"), 1);

	/* A 300-byte path, then one sharing 100 bytes: strip 200 takes a two-byte varint. */
	char a[301], b[102];
	memset(a, 'x', 300);
	a[300] = '\0';
	memset(b, 'x', 100);
	b[100] = 'y';
	b[101] = '\0';
	uint8_t v[16];
	assert_int_equal(put_varint(v, 200), 2);
	build_expect(&(struct idx){ .version = 4, ENTS({ .name = a }, { .name = b, .skip = true }) },
		     PATHS(b), 1);

	/* The same strip, written raw: git's encoding of 200 is 0x80 0x48. */
	static const uint8_t v200[] = { 0x80, 0x48 };
	build_expect(&(struct idx){ .version = 4,
				    ENTS({ .name = a }, { .name = "y", .varint = v200, .varint_len = 2,
							  .strip = 200, .skip = true }) },
		     PATHS(b), 1);
	/* 0xc8 0x01 would be 200 in LEB128, but is 9345 here: more than the path has. */
	static const uint8_t leb[] = { 0xc8, 0x01 };
	build_err(&(struct idx){ .version = 4, ENTS({ .name = a }, { .name = "y", .varint = leb,
								     .varint_len = 2 }) },
		  -EBADMSG);
	/* Runs on, and runs off the end of the file. */
	static const uint8_t endless[] = { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
					   0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f };
	build_err(&(struct idx){ .version = 4, ENTS({ .name = a }, { .name = "y", .varint = endless,
								     .varint_len = sizeof(endless) }) },
		  -EBADMSG);
	static const uint8_t more[] = { 0x80 };
	struct blob cut = build(&(struct idx){ .version = 4, ENTS({ .name = a }, {
		.name = "", .varint = more, .varint_len = 1 }) });
	/* Without the suffix's NUL, the entries end on the varint's continuation byte. */
	memmove(cut.p + cut.len - 21, cut.p + cut.len - 20, 20);
	expect_err(cut.p, cut.len - 1, -EBADMSG);
	blob_done(&cut);
	/* The 12-bit field counts the whole path, not the suffix. */
	build_err(&(struct idx){ .version = 4, ENTS({ .name = "abc" },
						    { .name = "d", .set_strip = true, .strip = 0,
						      .set_field = true, .field = 1 }) },
		  -EBADMSG);
}

static void test_extensions(void **state)
{
	(void)state;
	static const uint8_t tree[] = { 'T', 'R', 'E', 'E', 0, 0, 0, 3, 'x', 'y', 'z' };
	static const uint8_t other[] = { 'Z', 'Z', 'Z', 'Z', 0, 0, 0, 0,
					 'U', 'N', 'T', 'R', 0, 0, 0, 1, 0 };
	static const uint8_t lower[] = { 'a', 'b', 'c', 'd', 0, 0, 0, 0 };
	static const uint8_t digit[] = { '1', 'A', 'B', 'C', 0, 0, 0, 0 };
	static const uint8_t link[] = { 'l', 'i', 'n', 'k', 0, 0, 0, 0 };
	static const uint8_t eoie[] = { 'E', 'O', 'I', 'E', 0, 0, 0, 0 };
	static const uint8_t ieot[] = { 'I', 'E', 'O', 'T', 0, 0, 0, 0 };
	static const uint8_t past[] = { 'T', 'R', 'E', 'E', 0, 0, 0, 21 };
	static const uint8_t into[] = { 'T', 'R', 'E', 'E', 0, 0, 0, 1 };
	static const uint8_t huge[] = { 'T', 'R', 'E', 'E', 0xff, 0xff, 0xff, 0xff };
	static const uint8_t link_then_bad[] = { 'l', 'i', 'n', 'k', 0, 0, 0, 0,
						 'a', 'b', 'c', 'd', 0, 0, 0, 0 };
#define X(e, r) { e, sizeof(e), r }
	static const struct {
		const uint8_t *ext;
		size_t len;
		int want;
	} cases[] = {
		X(tree, 0),      X(other, 0),       X(lower, -EBADMSG), X(digit, -EBADMSG),
		X(link, -EPROTO), X(eoie, -EPROTO), X(ieot, -EPROTO),  X(past, -EBADMSG),
		X(into, -EBADMSG), X(huge, -EBADMSG), X(link_then_bad, -EBADMSG),
	};
#undef X
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct idx x = { .version = 2, ENTS({ .name = "a", .valid = true }), .ext = cases[i].ext,
				 .ext_len = cases[i].len };
		if (cases[i].want == 0)
			build_expect(&x, PATHS("a"), 1);
		else
			build_err(&x, cases[i].want);
	}
	/* 1..7 stray bytes before the checksum: too short for an extension header. */
	for (size_t junk = 1; junk < 8; junk++)
		build_err(&(struct idx){ .version = 2, ENTS({ .name = "a" }), .junk = junk }, -EBADMSG);
	/* A malformed entry wins over a refused extension. */
	build_err(&(struct idx){ .version = 2, ENTS({ .name = "b" }, { .name = "a" }), .ext = link,
				 .ext_len = sizeof(link) },
		  -EBADMSG);
}

/*
 * v4 lets a short entry stand for a 4096-byte path, so the returned paths are bounded on their
 * own: just over POL_GITINDEX_MAX_HIDDEN_BYTES of them are refused with -E2BIG, from an index
 * of about a megabyte, but only once the whole file has been checked.
 */
static void test_hidden_bytes_limit(void **state)
{
	(void)state;
	const size_t per = POL_GITINDEX_MAX_PATH + 1;
	const size_t n = POL_GITINDEX_MAX_HIDDEN_BYTES / per + 1;
	struct ent *e = calloc(n, sizeof(*e));
	char *names = malloc(n * per);
	assert_non_null(e);
	assert_non_null(names);
	for (size_t i = 0; i < n; i++) {
		char *p = names + i * per;
		memset(p, 'p', POL_GITINDEX_MAX_PATH - 8);
		(void)snprintf(p + POL_GITINDEX_MAX_PATH - 8, 9, "/%07zu", i);
		e[i] = (struct ent){ .name = p, .skip = true };
	}
	struct idx x = { .version = 4, .e = e, .n = n };
	struct blob b = build(&x);
	assert_true(b.len < 2u * 1024 * 1024);
	expect_err(b.p, b.len, -E2BIG);
	blob_done(&b);
	/* One entry fewer fits. */
	x.n = n - 1;
	b = build(&x);
	char **paths = NULL;
	size_t n_paths = 0;
	assert_int_equal(pol_gitindex_hidden(b.p, b.len, &paths, &n_paths), 0);
	assert_int_equal(n_paths, n - 1);
	assert_string_equal(paths[n - 2], e[n - 2].name);
	pol_gitindex_paths_free(paths, n_paths);
	blob_done(&b);
	/* Malformed after the limit was reached: -EBADMSG. */
	x.n = n;
	x.junk = 3;
	build_err(&x, -EBADMSG);
	free(names);
	free(e);
}

/* ---- the comparison ----------------------------------------------------------------------- */

static int newly(char *const *old_paths, size_t n_old, char *const *new_paths, size_t n_new,
		 const char **first)
{
	*first = "untouched";
	return pol_gitindex_newly_hidden(old_paths, n_old, new_paths, n_new, first);
}

static void test_newly_hidden(void **state)
{
	(void)state;
	char *abc[] = { "a", "b", "c" }, *ac[] = { "a", "c" }, *b[] = { "b" }, *d[] = { "d" };
	char *unsorted[] = { "b", "a" }, *dup[] = { "a", "a" }, *null[] = { "a", NULL };
	const char *first;

	assert_int_equal(newly(NULL, 0, NULL, 0, &first), 0);
	assert_string_equal(first, "untouched");
	assert_int_equal(newly(abc, 3, abc, 3, &first), 0);
	assert_int_equal(newly(abc, 3, ac, 2, &first), 0);
	assert_int_equal(newly(abc, 3, NULL, 0, &first), 0);
	assert_int_equal(newly(abc, 3, b, 1, &first), 0);
	assert_string_equal(first, "untouched");
	assert_int_equal(newly(ac, 2, abc, 3, &first), 1);
	assert_ptr_equal(first, abc[1]);
	assert_int_equal(newly(NULL, 0, b, 1, &first), 1);
	assert_ptr_equal(first, b[0]);
	assert_int_equal(newly(abc, 3, d, 1, &first), 1);
	assert_ptr_equal(first, d[0]);
	assert_int_equal(newly(d, 1, abc, 3, &first), 1);
	assert_ptr_equal(first, abc[0]);
	assert_int_equal(pol_gitindex_newly_hidden(ac, 2, abc, 3, NULL), 1);
	/* A list that the reader cannot have returned is the caller's bug. */
	assert_int_equal(newly(unsorted, 2, abc, 3, &first), -EINVAL);
	assert_int_equal(newly(abc, 3, dup, 2, &first), -EINVAL);
	assert_int_equal(newly(abc, 3, null, 2, &first), -EINVAL);
	assert_int_equal(newly(NULL, 1, abc, 3, &first), -EINVAL);
	assert_string_equal(first, "untouched");
}

/* What the supervisor will do: the host's index against the sandbox's. */
static void test_newly_hidden_fixtures(void **state)
{
	(void)state;
	static const struct {
		const char *old_file, *new_file;
		int want;
		const char *first;
	} cases[] = {
		{ "v2-plain.index", "v2-plain.index", 0, NULL },
		{ "v2-plain.index", "v2-assume.index", 1, "dir/g" },
		{ "v2-plain.index", "v3-hidden.index", 1, "dir/f" },
		{ "v2-assume.index", "v3-hidden.index", 1, "dir/f" },
		{ "v3-hidden.index", "v2-assume.index", 0, NULL },
		{ "v3-hidden.index", "v4-hidden.index", 0, NULL },
		{ "v4-hidden.index", "conflict.index", 0, NULL },
		{ "v4-plain.index", "v4-more.index", 1, "dir/link" },
		{ "v4-more.index", "v4-plain.index", 0, NULL },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct blob o = fixture(cases[i].old_file), n = fixture(cases[i].new_file);
		char **op = NULL, **np = NULL;
		size_t on = 0, nn = 0;
		assert_int_equal(pol_gitindex_hidden(o.p, o.len, &op, &on), 0);
		assert_int_equal(pol_gitindex_hidden(n.p, n.len, &np, &nn), 0);
		const char *first = NULL;
		assert_int_equal(pol_gitindex_newly_hidden(op, on, np, nn, &first), cases[i].want);
		if (cases[i].first)
			assert_string_equal(first, cases[i].first);
		else
			assert_null(first);
		pol_gitindex_paths_free(op, on);
		pol_gitindex_paths_free(np, nn);
		blob_done(&o);
		blob_done(&n);
	}
}

static void test_free_null(void **state)
{
	(void)state;
	assert_null(pol_gitindex_paths_free(NULL, 0));
	assert_null(pol_gitindex_paths_free(NULL, 5));
	char **p = malloc(sizeof(*p));
	assert_non_null(p);
	p[0] = strdup("x");
	assert_null(pol_gitindex_paths_free(p, 1));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_fixture_lists),
		cmocka_unit_test(test_fixture_long_names),
		cmocka_unit_test(test_fixture_refused),
		cmocka_unit_test(test_builder_matches_git),
		cmocka_unit_test(test_truncation_sweep),
		cmocka_unit_test(test_bit_flip_sweep),
		cmocka_unit_test(test_flip_assume_bit),
		cmocka_unit_test(test_header),
		cmocka_unit_test(test_counts),
		cmocka_unit_test(test_too_big),
		cmocka_unit_test(test_paths),
		cmocka_unit_test(test_name_framing),
		cmocka_unit_test(test_path_length),
		cmocka_unit_test(test_order),
		cmocka_unit_test(test_stages_listed_once),
		cmocka_unit_test(test_flags),
		cmocka_unit_test(test_modes),
		cmocka_unit_test(test_sparse_dir),
		cmocka_unit_test(test_v4_names),
		cmocka_unit_test(test_extensions),
		cmocka_unit_test(test_hidden_bytes_limit),
		cmocka_unit_test(test_newly_hidden),
		cmocka_unit_test(test_newly_hidden_fixtures),
		cmocka_unit_test(test_free_null),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
