/* SPDX-License-Identifier: MIT */
/*
 * criteria: what one evaluation criterion comes to (see criteria.h).
 *
 * Everything read here is untrusted: the workspace is whatever the agent left, and a command's
 * stdout is whatever it printed. So paths resolve beneath the workspace fd and never through a
 * symlink, only regular files are opened for reading, reads are bounded, byte searches never
 * stop at a NUL, and details quote what was found with every byte outside printable ASCII
 * escaped. Anything this module cannot judge (a pattern that does not compile, a pointer that
 * is not a pointer, openat2 missing, out of memory) is an error, never a pass: fail closed.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/openat2.h>
#include <math.h>
#include <regex.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "cleanup.h"
#include "criteria.h"
#include "json-strict.h"

#ifndef SYS_openat2
#define SYS_openat2 437 /* the same number on every architecture */
#endif

DEFINE_CLEANUP(cJSON *, cJSON_Delete)

/* At most this many bytes of a found or expected text are shown in details. */
#define CRIT_QUOTE_MAX 64u
/* Room for CRIT_QUOTE_MAX bytes escaped (4 each), two quotes, "..." and the NUL. */
#define CRIT_QUOTE_BUF (CRIT_QUOTE_MAX * 4u + 8u)
/* openat2 says EAGAIN when a rename raced with a lookup; it is retried this often. */
#define CRIT_OPENAT2_TRIES 8

/* A quoted text, or a short phrase around one ("the string \"...\""). */
struct qbuf {
	char s[CRIT_QUOTE_BUF + 32];
};

/* ---- details ---- */

/*
 * Writes len bytes of p (borrowed, may hold NULs) into b as printable ASCII between two q
 * characters: backslash, q, \n, \r and \t are escaped, every other byte outside 0x20..0x7e is
 * \xNN; past CRIT_QUOTE_MAX bytes the text is cut and "..." follows the closing quote.
 * Returns b->s.
 */
static const char *quote_mem(struct qbuf *b, const void *p, size_t len, char q)
{
	static const char hex[] = "0123456789abcdef";
	const unsigned char *s = p;
	size_t n = len < CRIT_QUOTE_MAX ? len : CRIT_QUOTE_MAX, o = 0;

	b->s[o++] = q;
	for (size_t i = 0; i < n; i++) {
		unsigned char ch = s[i];
		char esc = ch == '\n' ? 'n' : ch == '\r' ? 'r' : ch == '\t' ? 't' : 0;
		if (ch == '\\' || ch == (unsigned char)q) {
			b->s[o++] = '\\';
			b->s[o++] = (char)ch;
		} else if (esc) {
			b->s[o++] = '\\';
			b->s[o++] = esc;
		} else if (ch >= 0x20 && ch < 0x7f) {
			b->s[o++] = (char)ch;
		} else {
			b->s[o++] = '\\';
			b->s[o++] = 'x';
			b->s[o++] = hex[ch >> 4];
			b->s[o++] = hex[ch & 0xf];
		}
	}
	b->s[o++] = q;
	if (n < len) {
		memcpy(b->s + o, "...", 3);
		o += 3;
	}
	b->s[o] = '\0';
	return b->s;
}

static const char *quote_str(struct qbuf *b, const char *s)
{
	return quote_mem(b, s, strlen(s), '\'');
}

/*
 * Formats details into out->details. Output that does not fit is cut and ends in "...". The
 * caller's sanitize() pass makes it one printable line whatever went in.
 */
__attribute__((format(printf, 2, 0))) static void vset_details(struct sup_crit_result *out,
							       const char *fmt, va_list ap)
{
	size_t cap = sizeof(out->details);
	int n = vsnprintf(out->details, cap, fmt, ap);
	if (n < 0)
		out->details[0] = '\0';
	else if ((size_t)n >= cap)
		memcpy(out->details + cap - 4, "...", 4);
}

__attribute__((format(printf, 2, 3))) static void set_details(struct sup_crit_result *out,
							      const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vset_details(out, fmt, ap);
	va_end(ap);
}

/* Makes details one NUL-terminated line of printable ASCII, whatever was written into it. */
static void sanitize(struct sup_crit_result *out)
{
	out->details[sizeof(out->details) - 1] = '\0';
	for (char *p = out->details; *p; p++)
		if ((unsigned char)*p < 0x20 || (unsigned char)*p >= 0x7f)
			*p = '?';
}

/* A judged criterion: score 0 or 1000, and passed as the threshold says. */
__attribute__((format(printf, 4, 5))) static void verdict(struct sup_crit_result *out,
							  const struct pol_task_criterion *c,
							  bool pass, const char *fmt, ...)
{
	va_list ap;
	out->evaluated = true;
	out->error = false;
	out->score_milli = pass ? 1000 : 0;
	out->passed = out->score_milli >= c->pass_threshold_milli;
	va_start(ap, fmt);
	vset_details(out, fmt, ap);
	va_end(ap);
}

/* A criterion that could not be judged: the run is ERROR, never a pass. */
__attribute__((format(printf, 2, 3))) static void crit_error(struct sup_crit_result *out,
							     const char *fmt, ...)
{
	va_list ap;
	out->evaluated = false;
	out->error = true;
	out->score_milli = 0;
	out->passed = false;
	va_start(ap, fmt);
	vset_details(out, fmt, ap);
	va_end(ap);
}

static void reset(struct sup_crit_result *out)
{
	memset(out, 0, sizeof(*out));
	crit_error(out, "not evaluated");
}

/* ---- regexes ---- */

/*
 * Searches len bytes at text (borrowed, may hold NULs, need not be NUL-terminated) for the
 * POSIX ERE pattern, compiled with REG_EXTENDED | REG_NOSUB | REG_NEWLINE (^ and $ match at
 * every line, . and [^x] never match a newline); REG_STARTEND bounds the search by
 * length, not by the first NUL. eflags may add REG_NOTEOL. Returns 1 (match), 0 (no match),
 * -EINVAL when the pattern does not compile (its reason in why), -E2BIG for a text regexec
 * cannot address, -ENOMEM when compiling runs out of memory, or -ENOSPC when matching does
 * (regexec's REG_ESPACE: the text, whoever wrote it, needed more than the process may have).
 */
static int regex_search(const char *pattern, const char *text, size_t len, int eflags, char *why,
			size_t why_len)
{
	regex_t re;
	regmatch_t m[1];
	int rc = regcomp(&re, pattern, REG_EXTENDED | REG_NOSUB | REG_NEWLINE);
	if (rc != 0) {
		(void)regerror(rc, &re, why, why_len);
		return rc == REG_ESPACE ? -ENOMEM : -EINVAL;
	}
	if (len > (size_t)INT_MAX) {
		regfree(&re);
		return -E2BIG;
	}
	m[0].rm_so = 0;
	m[0].rm_eo = (regoff_t)len;
	rc = regexec(&re, text ? text : "", 1, m, eflags | REG_STARTEND);
	regfree(&re);
	if (rc == 0)
		return 1;
	if (rc == REG_NOMATCH)
		return 0;
	return -ENOSPC;
}

/* ---- the workspace: what the parent opens (sup_crit_open) ---- */

/* openat2 beneath dfd, through no symlink and no magic link. Returns an fd or -errno. */
static int open_beneath(int dfd, const char *path, uint64_t flags)
{
	struct open_how how = {
		.flags = flags,
		.resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS,
	};
	for (int i = 0; i < CRIT_OPENAT2_TRIES; i++) {
		long fd = syscall(SYS_openat2, dfd, path, &how, sizeof(how));
		if (fd >= 0)
			return (int)fd;
		if (errno != EAGAIN && errno != EINTR)
			return -errno;
	}
	return -EAGAIN;
}

/*
 * Resolves path beneath the workspace to an O_PATH fd and fstat()s it. The last component is
 * not followed: a symlink there comes back as itself (S_ISLNK), which is how file_absent sees
 * a symlink, even a dangling one, as present, and why a FIFO or device is never opened for
 * I/O. Returns the fd (the caller owns it) with *out_st, or -errno: -EXDEV (escapes), -ELOOP
 * (a symlink in a parent), -ENOENT, -ENOTDIR (a parent is not a directory), -ENOSYS (no
 * openat2), or another error of openat2 or fstat.
 */
static int lookup(int ws, const char *path, struct stat *out_st)
{
	_cleanup_close_ int fd = open_beneath(ws, path, O_PATH | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return fd;
	if (fstat(fd, out_st) < 0)
		return -errno;
	return TAKE_FD(fd);
}

static bool reads_content(const struct pol_task_criterion *c)
{
	return c->check == POL_TASK_FILE_CONTAINS || c->check == POL_TASK_FILE_MATCHES ||
	       c->check == POL_TASK_JSON_EQUALS;
}

void sup_crit_input_init(struct sup_crit_input *in)
{
	memset(in, 0, sizeof(*in));
	in->lookup_err = -EBADF;
	in->fd = -1;
}

void sup_crit_input_done(struct sup_crit_input *in)
{
	if (in->fd >= 0)
		(void)close(in->fd);
	in->fd = -1;
}

void sup_crit_open(int workspace_fd, const struct pol_task_criterion *c, struct sup_crit_input *in)
{
	struct stat st, st2;

	sup_crit_input_done(in);
	sup_crit_input_init(in);
	if (!c || !c->path || c->check == POL_TASK_COMMAND)
		return;
	_cleanup_close_ int pfd = lookup(workspace_fd, c->path, &st);
	if (pfd < 0) {
		in->lookup_err = pfd;
		return;
	}
	in->lookup_err = 0;
	in->mode = st.st_mode;
	in->size = st.st_size < 0 ? UINT64_MAX : (uint64_t)st.st_size;
	/* Only a regular file within the cap is opened for reading; the judge says why not. */
	if (!reads_content(c) || !S_ISREG(st.st_mode) || in->size > SUP_CRIT_MAX_FILE)
		return;

	/*
	 * Re-opened from the O_PATH fd through /proc/self/fd, so that what was checked is what is
	 * read. O_NONBLOCK keeps a file swapped for a FIFO meanwhile from blocking the open.
	 */
	char proc[64];
	(void)snprintf(proc, sizeof(proc), "/proc/self/fd/%d", pfd);
	_cleanup_close_ int fd = open(proc, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	if (fd < 0) {
		in->open_step = SUP_CRIT_OPEN_REOPEN;
		in->open_err = -errno;
		return;
	}
	/* A /proc of another pid namespace would hand us someone else's fd: check it is ours. */
	if (fstat(fd, &st2) < 0) {
		in->open_step = SUP_CRIT_OPEN_STAT;
		in->open_err = -errno;
		return;
	}
	if (st2.st_dev != st.st_dev || st2.st_ino != st.st_ino || !S_ISREG(st2.st_mode)) {
		in->open_step = SUP_CRIT_OPEN_STALE;
		in->open_err = -ESTALE;
		return;
	}
	in->fd = TAKE_FD(fd);
}

/* ---- the workspace: what the judge makes of it ---- */

static const char *kind_name(mode_t mode)
{
	if (S_ISREG(mode))
		return "a regular file";
	if (S_ISDIR(mode))
		return "a directory";
	if (S_ISLNK(mode))
		return "a symlink";
	if (S_ISFIFO(mode))
		return "a FIFO";
	if (S_ISSOCK(mode))
		return "a socket";
	if (S_ISCHR(mode))
		return "a character device";
	if (S_ISBLK(mode))
		return "a block device";
	return "of an unknown type";
}

/*
 * Turns a failed lookup into a verdict: what the agent can cause (an escape, a symlink, a
 * missing file, a permission) scores 0; what it cannot (no openat2, out of fds or memory) is an
 * error, since the run could not be judged.
 */
static void lookup_failed(struct sup_crit_result *out, const struct pol_task_criterion *c, int r)
{
	switch (r) {
	case -ENOSYS:
		crit_error(
			out,
			"openat2(2) is missing (Linux 5.6 or later is needed), so the path cannot "
			"be resolved safely");
		return;
	case -EXDEV:
		verdict(out, c, false, "path escapes the workspace");
		return;
	case -ELOOP:
		verdict(out, c, false, "path crosses a symlink");
		return;
	case -ENOENT:
		verdict(out, c, false, "no such file");
		return;
	case -ENOTDIR:
		verdict(out, c, false, "no such file (a parent is not a directory)");
		return;
	case -ENAMETOOLONG:
	case -EACCES:
	case -EPERM:
		verdict(out, c, false, "cannot be opened: %s", strerror(-r));
		return;
	default:
		crit_error(out, "cannot be opened: %s", strerror(-r));
		return;
	}
}

/*
 * Reads the regular file the parent opened (in->fd) into a malloc()ed buffer with a NUL after
 * its last byte (the content may hold NULs too), at most SUP_CRIT_MAX_FILE bytes. Uses read()
 * on the fd it was given and nothing else, so that it works in the judge's filter. Returns 0
 * with *out_buf (the caller frees it) and *out_len; or a negative value with *out filled with
 * the verdict (score 0 or error), *out_buf untouched.
 */
static int read_file(const struct sup_crit_input *in, const struct pol_task_criterion *c,
		     struct sup_crit_result *out, char **out_buf, size_t *out_len)
{
	if (in->lookup_err < 0) {
		lookup_failed(out, c, in->lookup_err);
		return in->lookup_err;
	}
	if (S_ISLNK(in->mode)) {
		verdict(out, c, false, "path crosses a symlink");
		return -ELOOP;
	}
	if (!S_ISREG(in->mode)) {
		verdict(out, c, false, "is %s, not a regular file", kind_name(in->mode));
		return -EINVAL;
	}
	if (in->size > SUP_CRIT_MAX_FILE) {
		verdict(out, c, false, "larger than %u MiB", SUP_CRIT_MAX_FILE >> 20);
		return -EFBIG;
	}
	if (in->fd < 0) {
		int r = in->open_err < 0 ? in->open_err : -EBADF;
		if (in->open_step == SUP_CRIT_OPEN_REOPEN && (r == -EACCES || r == -EPERM))
			verdict(out, c, false, "cannot be read: %s", strerror(-r));
		else if (in->open_step == SUP_CRIT_OPEN_REOPEN)
			crit_error(out, "cannot be re-opened through /proc/self/fd: %s",
				   strerror(-r));
		else if (in->open_step == SUP_CRIT_OPEN_STAT)
			crit_error(out, "cannot stat the re-opened file: %s", strerror(-r));
		else if (in->open_step == SUP_CRIT_OPEN_STALE)
			crit_error(out, "re-opening through /proc/self/fd gave another file");
		else
			crit_error(out, "the file was not opened for reading");
		return r;
	}

	/* File bytes, one more to see a file that grew past the cap, and the NUL. */
	size_t alloc = (size_t)in->size + 2, got = 0;
	_cleanup_free_ char *buf = malloc(alloc);
	if (!buf) {
		crit_error(out, "out of memory");
		return -ENOMEM;
	}
	for (;;) {
		if (got == alloc - 1) {
			if (got > SUP_CRIT_MAX_FILE) {
				verdict(out, c, false, "larger than %u MiB",
					SUP_CRIT_MAX_FILE >> 20);
				return -EFBIG;
			}
			size_t grow = alloc > (SUP_CRIT_MAX_FILE + 2) / 2 ? SUP_CRIT_MAX_FILE + 2
									  : alloc * 2;
			char *nb = realloc(buf, grow);
			if (!nb) {
				crit_error(out, "out of memory");
				return -ENOMEM;
			}
			buf = nb;
			alloc = grow;
		}
		ssize_t n = read(in->fd, buf + got, alloc - 1 - got);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			int r = -errno;
			crit_error(out, "cannot be read: %s", strerror(-r));
			return r;
		}
		if (n == 0)
			break;
		got += (size_t)n;
	}
	buf[got] = '\0';
	*out_buf = TAKE_PTR(buf);
	*out_len = got;
	return 0;
}

static void eval_exists(const struct sup_crit_input *in, const struct pol_task_criterion *c,
			struct sup_crit_result *out)
{
	if (in->lookup_err < 0)
		lookup_failed(out, c, in->lookup_err);
	else if (S_ISLNK(in->mode))
		verdict(out, c, false, "path crosses a symlink");
	else if (S_ISREG(in->mode) || S_ISDIR(in->mode))
		verdict(out, c, true, "exists (%s)", kind_name(in->mode));
	else
		verdict(out, c, false, "is %s, not a regular file or a directory",
			kind_name(in->mode));
}

/*
 * file_absent: ENOENT (the last component or a parent missing) and ENOTDIR (a parent is a
 * file, so nothing can be below it) pass. Whatever is present fails, a symlink included, since
 * the O_PATH | O_NOFOLLOW lookup stops at the last component the way fstatat
 * (AT_SYMLINK_NOFOLLOW) in its parent would. An escape, or a symlink among the parents, scores
 * 0: absence beneath the workspace cannot be shown through either.
 */
static void eval_absent(const struct sup_crit_input *in, const struct pol_task_criterion *c,
			struct sup_crit_result *out)
{
	if (in->lookup_err == -ENOENT)
		verdict(out, c, true, "absent");
	else if (in->lookup_err == -ENOTDIR)
		verdict(out, c, true, "absent (a parent is not a directory)");
	else if (in->lookup_err < 0)
		lookup_failed(out, c, in->lookup_err);
	else
		verdict(out, c, false, "exists (%s)", kind_name(in->mode));
}

static void eval_contains(const struct sup_crit_input *in, const struct pol_task_criterion *c,
			  struct sup_crit_result *out)
{
	struct qbuf q;
	_cleanup_free_ char *buf = NULL;
	size_t len = 0;

	if ((c->n_includes && !c->includes) || (c->n_excludes && !c->excludes)) {
		crit_error(out, "file_contains has no strings");
		return;
	}
	for (size_t i = 0; i < c->n_includes; i++)
		if (!c->includes[i]) {
			crit_error(out, "file_contains has no strings");
			return;
		}
	for (size_t i = 0; i < c->n_excludes; i++)
		if (!c->excludes[i]) {
			crit_error(out, "file_contains has no strings");
			return;
		}
	if (read_file(in, c, out, &buf, &len) < 0)
		return;
	for (size_t i = 0; i < c->n_includes; i++) {
		const char *s = c->includes[i];
		if (!memmem(buf, len, s, strlen(s))) {
			verdict(out, c, false, "does not contain %s", quote_str(&q, s));
			return;
		}
	}
	for (size_t i = 0; i < c->n_excludes; i++) {
		const char *s = c->excludes[i];
		if (memmem(buf, len, s, strlen(s))) {
			verdict(out, c, false, "contains the excluded %s", quote_str(&q, s));
			return;
		}
	}
	verdict(out, c, true, "holds all %zu included strings and none of the %zu excluded",
		c->n_includes, c->n_excludes);
}

static void eval_matches(const struct sup_crit_input *in, const struct pol_task_criterion *c,
			 struct sup_crit_result *out)
{
	struct qbuf q;
	char why[256];
	_cleanup_free_ char *buf = NULL;
	size_t len = 0;

	if (!c->regex) {
		crit_error(out, "file_matches has no regex");
		return;
	}
	/* Compile first: a bad pattern is the task's error, whatever the workspace holds. */
	int r = regex_search(c->regex, "", 0, 0, why, sizeof(why));
	if (r == -EINVAL) {
		crit_error(out, "regex %s does not compile: %s", quote_str(&q, c->regex), why);
		return;
	}
	if (read_file(in, c, out, &buf, &len) < 0)
		return;
	r = regex_search(c->regex, buf, len, 0, why, sizeof(why));
	/* The judge's memory is bounded (RLIMIT_DATA): what the file made it need scores 0. */
	if (r == -ENOSPC)
		verdict(out, c, false, "regex %s cannot be matched on it within the judge's memory",
			quote_str(&q, c->regex));
	else if (r < 0)
		crit_error(out, "regex %s cannot be matched: %s", quote_str(&q, c->regex),
			   strerror(-r));
	else
		verdict(out, c, r == 1, "%s regex %s", r == 1 ? "matches" : "does not match",
			quote_str(&q, c->regex));
}

/* ---- JSON ---- */

/* What a json_equals document may be beyond the grammar (eval/json-strict.h). */
static const struct ev_json_limits doc_limits = {
	.max_depth = SUP_CRIT_JSON_MAX_DEPTH,
	.max_number_chars = SUP_CRIT_JSON_MAX_NUMBER,
};

/* True when the pointer is "" or '/'-separated tokens with ~ only in ~0 and ~1 (RFC 6901). */
static bool pointer_valid(const char *p)
{
	if (p[0] != '\0' && p[0] != '/')
		return false;
	for (; *p; p++)
		if (p[0] == '~' && p[1] != '0' && p[1] != '1')
			return false;
	return true;
}

/* Formats a double in the fewest digits that read back as the same value. */
static const char *fmt_number(struct qbuf *b, double d)
{
	if (fabs(d) < 1e15 && d == (double)(int64_t)d) {
		(void)snprintf(b->s, sizeof(b->s), "%.0f", d);
		return b->s;
	}
	for (int prec = 1; prec <= 17; prec++) {
		(void)snprintf(b->s, sizeof(b->s), "%.*g", prec, d);
		if (strtod(b->s, NULL) == d)
			break;
	}
	return b->s;
}

/* A short description of a JSON value: "null", "the number 3", "the string \"x\""... */
static const char *describe(struct qbuf *b, const cJSON *v)
{
	struct qbuf t;
	if (cJSON_IsNull(v))
		return "null";
	if (cJSON_IsTrue(v))
		return "true";
	if (cJSON_IsFalse(v))
		return "false";
	if (cJSON_IsNumber(v))
		(void)snprintf(b->s, sizeof(b->s), "the number %s", fmt_number(&t, v->valuedouble));
	else if (cJSON_IsString(v) && v->valuestring)
		(void)snprintf(b->s, sizeof(b->s), "the string %s",
			       quote_mem(&t, v->valuestring, strlen(v->valuestring), '"'));
	else if (cJSON_IsArray(v))
		(void)snprintf(b->s, sizeof(b->s), "an array of %d items", cJSON_GetArraySize(v));
	else if (cJSON_IsObject(v))
		(void)snprintf(b->s, sizeof(b->s), "an object with %d members",
			       cJSON_GetArraySize(v));
	else
		return "a value of an unknown type";
	return b->s;
}

/* The criterion's value, as describe() would put it. */
static const char *describe_expected(struct qbuf *b, const struct pol_task_criterion *c)
{
	struct qbuf t;
	switch (c->value_type) {
	case POL_TASK_JSON_NULL:
		return "null";
	case POL_TASK_JSON_BOOL:
		return c->value_bool ? "true" : "false";
	case POL_TASK_JSON_NUMBER:
		(void)snprintf(b->s, sizeof(b->s), "the number %s",
			       fmt_number(&t, c->value_number));
		return b->s;
	case POL_TASK_JSON_STRING:
		(void)snprintf(b->s, sizeof(b->s), "the string %s",
			       quote_mem(&t, c->value_text, strlen(c->value_text), '"'));
		return b->s;
	}
	return "an unknown value";
}

/* An RFC 6901 array index: "0", or digits without a leading zero; never "-". */
static bool parse_index(const char *tok, int *out)
{
	long v = 0;
	if (tok[0] < '0' || tok[0] > '9' || (tok[0] == '0' && tok[1] != '\0'))
		return false;
	for (const char *p = tok; *p; p++) {
		if (*p < '0' || *p > '9')
			return false;
		if (v > (INT_MAX - (*p - '0')) / 10)
			return false; /* larger than any array cJSON can hold */
		v = v * 10 + (*p - '0');
	}
	*out = (int)v;
	return true;
}

/*
 * Resolves pointer (valid per pointer_valid) in doc. Returns the value (borrowed from doc), or
 * NULL with the reason in why: the pointer does not resolve; or -ENOMEM in *out_err.
 */
static const cJSON *resolve(const cJSON *doc, const char *pointer, char *why, size_t why_len,
			    int *out_err)
{
	struct qbuf q, d;
	_cleanup_free_ char *tok = malloc(strlen(pointer) + 1);
	const cJSON *node = doc;
	const char *p = pointer;

	*out_err = 0;
	if (!tok) {
		*out_err = -ENOMEM;
		return NULL;
	}
	while (*p == '/') {
		size_t n = 0;
		for (p++; *p && *p != '/'; p++) {
			if (*p == '~') {
				p++;
				tok[n++] = *p == '1' ? '/' : '~';
			} else {
				tok[n++] = *p;
			}
		}
		tok[n] = '\0';

		const cJSON *next = NULL;
		int idx;
		if (cJSON_IsObject(node)) {
			/* Exact, case-sensitive; with duplicate keys the first one counts. */
			next = cJSON_GetObjectItemCaseSensitive(node, tok);
			if (!next)
				(void)snprintf(why, why_len, "no member %s", quote_str(&q, tok));
		} else if (cJSON_IsArray(node)) {
			if (!parse_index(tok, &idx))
				(void)snprintf(why, why_len, "%s is not an array index",
					       quote_str(&q, tok));
			else if (!(next = cJSON_GetArrayItem(node, idx)))
				(void)snprintf(why, why_len, "index %d is out of range (%d items)",
					       idx, cJSON_GetArraySize(node));
		} else {
			(void)snprintf(why, why_len, "%s has no member %s", describe(&d, node),
				       quote_str(&q, tok));
		}
		if (!next)
			return NULL;
		node = next;
	}
	return node;
}

static bool json_equal(const struct pol_task_criterion *c, const cJSON *v)
{
	switch (c->value_type) {
	case POL_TASK_JSON_NULL:
		return cJSON_IsNull(v);
	case POL_TASK_JSON_BOOL:
		return cJSON_IsBool(v) && (cJSON_IsTrue(v) != 0) == c->value_bool;
	case POL_TASK_JSON_NUMBER:
		return cJSON_IsNumber(v) && v->valuedouble == c->value_number;
	case POL_TASK_JSON_STRING:
		return cJSON_IsString(v) && v->valuestring &&
		       !strcmp(v->valuestring, c->value_text);
	}
	return false;
}

static const char *op_symbol(enum pol_task_json_op op)
{
	switch (op) {
	case POL_TASK_JSON_LT:
		return "<";
	case POL_TASK_JSON_LE:
		return "<=";
	case POL_TASK_JSON_GT:
		return ">";
	case POL_TASK_JSON_GE:
		return ">=";
	case POL_TASK_JSON_EQ:
	case POL_TASK_JSON_NE:
	case POL_TASK_JSON_EXISTS:
		break;
	}
	return "?";
}

/* The criterion's json_equals members are usable: NULL or an explanation. */
static const char *json_config_problem(const struct pol_task_criterion *c)
{
	if (!c->pointer)
		return "json_equals has no pointer";
	if (!pointer_valid(c->pointer))
		return "the pointer is not an RFC 6901 JSON pointer";
	switch (c->op) {
	case POL_TASK_JSON_EXISTS:
		return NULL;
	case POL_TASK_JSON_EQ:
	case POL_TASK_JSON_NE:
		break;
	case POL_TASK_JSON_LT:
	case POL_TASK_JSON_LE:
	case POL_TASK_JSON_GT:
	case POL_TASK_JSON_GE:
		if (c->value_type != POL_TASK_JSON_NUMBER)
			return "a comparison needs a number to compare with";
		break;
	default:
		return "json_equals has an unknown op";
	}
	switch (c->value_type) {
	case POL_TASK_JSON_NULL:
	case POL_TASK_JSON_BOOL:
		return NULL;
	case POL_TASK_JSON_NUMBER:
		return isfinite(c->value_number) ? NULL : "the value is not a finite number";
	case POL_TASK_JSON_STRING:
		return c->value_text ? NULL : "the string value is missing";
	default:
		return "json_equals has an unknown value type";
	}
}

/* sup_crit_json_eval() without the reset and the final sanitize(). */
static void json_judge(const struct pol_task_criterion *c, const void *buf, size_t len,
		       struct sup_crit_result *out)
{
	struct qbuf qp, qf, qe;
	char why[CRIT_QUOTE_BUF * 2];
	const char *problem;

	if (!c || c->check != POL_TASK_JSON_EQUALS) {
		crit_error(out, "not a json_equals criterion");
		return;
	}
	problem = json_config_problem(c);
	if (problem) {
		crit_error(out, "%s", problem);
		return;
	}
	if (len > SUP_CRIT_MAX_FILE) {
		verdict(out, c, false, "larger than %u MiB", SUP_CRIT_MAX_FILE >> 20);
		return;
	}

	_cleanup_(cJSON_Deletep) cJSON *doc = NULL;
	struct ev_json_err jerr = { 0 };
	int jr = ev_json_parse(buf, len, &doc_limits, &doc, &jerr);
	if (jr == -EBADMSG) {
		verdict(out, c, false, "not valid JSON (at byte %zu: %s)", jerr.pos, jerr.what);
		return;
	}
	/* The tree is the document's size in nodes, which the document's author chose. */
	if (jr == -ENOMEM) {
		verdict(out, c, false, "the JSON document does not fit in the judge's memory");
		return;
	}
	if (jr < 0) {
		crit_error(out, "the document cannot be read: %s", strerror(-jr));
		return;
	}

	const char *ptr = c->pointer[0] ? quote_str(&qp, c->pointer) : "the document";
	int err = 0;
	why[0] = '\0';
	const cJSON *v = resolve(doc, c->pointer, why, sizeof(why), &err);
	if (err < 0) {
		crit_error(out, "out of memory");
		return;
	}
	if (!v) {
		verdict(out, c, false, "%s does not resolve: %s", ptr, why);
		return;
	}
	const char *found = describe(&qf, v);
	switch (c->op) {
	case POL_TASK_JSON_EXISTS:
		verdict(out, c, true, "%s is %s", ptr, found);
		break;
	case POL_TASK_JSON_EQ:
		if (json_equal(c, v))
			verdict(out, c, true, "%s is %s", ptr, found);
		else
			verdict(out, c, false, "%s is %s, expected %s", ptr, found,
				describe_expected(&qe, c));
		break;
	case POL_TASK_JSON_NE:
		if (!json_equal(c, v))
			verdict(out, c, true, "%s is %s, not %s", ptr, found,
				describe_expected(&qe, c));
		else
			verdict(out, c, false, "%s is %s, expected anything else", ptr, found);
		break;
	case POL_TASK_JSON_LT:
	case POL_TASK_JSON_LE:
	case POL_TASK_JSON_GT:
	case POL_TASK_JSON_GE: {
		if (!cJSON_IsNumber(v)) {
			verdict(out, c, false, "%s is %s, not a number (expected %s %s)", ptr,
				found, op_symbol(c->op), fmt_number(&qe, c->value_number));
			break;
		}
		double a = v->valuedouble, b = c->value_number;
		bool pass = c->op == POL_TASK_JSON_LT	? a < b
			    : c->op == POL_TASK_JSON_LE ? a <= b
			    : c->op == POL_TASK_JSON_GT ? a > b
							: a >= b;
		if (pass)
			verdict(out, c, true, "%s is %s (%s %s)", ptr, found, op_symbol(c->op),
				fmt_number(&qe, b));
		else
			verdict(out, c, false, "%s is %s, expected %s %s", ptr, found,
				op_symbol(c->op), fmt_number(&qe, b));
		break;
	}
	default:
		crit_error(out, "json_equals has an unknown op");
		break;
	}
}

void sup_crit_json_eval(const struct pol_task_criterion *c, const void *buf, size_t len,
			struct sup_crit_result *out)
{
	reset(out);
	json_judge(c, buf, len, out);
	sanitize(out);
}

/* ---- entry points ---- */

void sup_crit_judge_static(const struct pol_task_criterion *c, const struct sup_crit_input *in,
			   struct sup_crit_result *out)
{
	_cleanup_free_ char *buf = NULL;
	size_t len = 0;

	reset(out);
	if (!c || !in) {
		crit_error(out, "no criterion");
		goto done;
	}
	switch (c->check) {
	case POL_TASK_FILE_EXISTS:
	case POL_TASK_FILE_ABSENT:
	case POL_TASK_FILE_CONTAINS:
	case POL_TASK_FILE_MATCHES:
	case POL_TASK_JSON_EQUALS:
		break;
	case POL_TASK_COMMAND:
		crit_error(out, "a command criterion is not a static check");
		goto done;
	default:
		crit_error(out, "unknown check");
		goto done;
	}
	if (!c->path) {
		crit_error(out, "the criterion has no path");
		goto done;
	}

	switch (c->check) {
	case POL_TASK_FILE_EXISTS:
		eval_exists(in, c, out);
		break;
	case POL_TASK_FILE_ABSENT:
		eval_absent(in, c, out);
		break;
	case POL_TASK_FILE_CONTAINS:
		eval_contains(in, c, out);
		break;
	case POL_TASK_FILE_MATCHES:
		eval_matches(in, c, out);
		break;
	case POL_TASK_JSON_EQUALS: {
		const char *problem = json_config_problem(c);
		if (problem)
			crit_error(out, "%s", problem);
		else if (read_file(in, c, out, &buf, &len) == 0)
			json_judge(c, buf, len, out);
		break;
	}
	case POL_TASK_COMMAND:
		break;
	}

	/* Every verdict names the path it is about. */
	char tail[sizeof(out->details)];
	struct qbuf q;
	memcpy(tail, out->details, sizeof(tail));
	set_details(out, "%s: %s", quote_str(&q, c->path), tail);
done:
	sanitize(out);
}

void sup_crit_eval_static(int workspace_fd, const struct pol_task_criterion *c,
			  struct sup_crit_result *out)
{
	struct sup_crit_input in;
	sup_crit_input_init(&in);
	sup_crit_open(workspace_fd, c, &in);
	sup_crit_judge_static(c, &in, out);
	sup_crit_input_done(&in);
}

void sup_crit_judge_command(const struct pol_task_criterion *c, const struct sup_crit_outcome *o,
			    struct sup_crit_result *out)
{
	const struct pol_task_command *cmd;
	struct qbuf q, g;
	char why[256];
	char ex[32];
	size_t len;
	const char *text, *tr;

	reset(out);
	if (!c || c->check != POL_TASK_COMMAND) {
		crit_error(out, "not a command criterion");
		goto done;
	}
	if (!o) {
		crit_error(out, "the command has no outcome");
		goto done;
	}
	if (!o->started) {
		const char *e = o->error ? o->error : "no reason given";
		crit_error(out, "the sandbox could not be built: %s", quote_str(&q, e));
		goto done;
	}
	cmd = &c->command;
	if (cmd->stdout_kind != POL_TASK_STDOUT_ANY && !cmd->stdout_text) {
		crit_error(out, "the stdout check has no text");
		goto done;
	}
	if (cmd->stdout_kind == POL_TASK_STDOUT_REGEX) {
		/* A bad pattern is the task's error, however the command ended. */
		int r = regex_search(cmd->stdout_text, "", 0, 0, why, sizeof(why));
		if (r == -EINVAL) {
			crit_error(out, "stdout regex %s does not compile: %s",
				   quote_str(&q, cmd->stdout_text), why);
			goto done;
		}
	}
	if (o->timed_out) {
		verdict(out, c, false, "timed out after %llu ms",
			(unsigned long long)cmd->timeout_ms);
		goto done;
	}
	if (o->signaled) {
		const char *name = sigabbrev_np(o->signal);
		verdict(out, c, false, "killed by signal %d%s%s%s", o->signal, name ? " (SIG" : "",
			name ? name : "", name ? ")" : "");
		goto done;
	}
	if (o->exit_code < 0 || o->exit_code > 255 || (uint32_t)o->exit_code != cmd->expect_exit) {
		verdict(out, c, false, "exit %d, expected %u", o->exit_code, cmd->expect_exit);
		goto done;
	}
	(void)snprintf(ex, sizeof(ex), "exit %d", o->exit_code);

	text = o->out ? o->out : "";
	len = o->out ? o->out_len : 0;
	tr = o->out_truncated ? " (truncated)" : "";
	switch (cmd->stdout_kind) {
	case POL_TASK_STDOUT_ANY:
		verdict(out, c, true, "%s", ex);
		break;
	case POL_TASK_STDOUT_EXACT: {
		size_t want = strlen(cmd->stdout_text);
		if (o->out_truncated)
			verdict(out, c, false,
				"%s, but stdout was truncated, so it is not exactly %s", ex,
				quote_str(&q, cmd->stdout_text));
		else if (len == want && !memcmp(text, cmd->stdout_text, len))
			verdict(out, c, true, "%s, stdout is exactly %s", ex,
				quote_str(&q, cmd->stdout_text));
		else
			verdict(out, c, false, "%s, but stdout is not exactly %s: got %s", ex,
				quote_str(&q, cmd->stdout_text), quote_mem(&g, text, len, '\''));
		break;
	}
	case POL_TASK_STDOUT_CONTAINS:
		if (memmem(text, len, cmd->stdout_text, strlen(cmd->stdout_text)))
			verdict(out, c, true, "%s, stdout contains %s", ex,
				quote_str(&q, cmd->stdout_text));
		else
			verdict(out, c, false, "%s, but stdout%s does not contain %s", ex, tr,
				quote_str(&q, cmd->stdout_text));
		break;
	case POL_TASK_STDOUT_REGEX: {
		/*
		 * The end of a truncated capture is not the end of the output: REG_NOTEOL keeps
		 * '$' from matching there, so "^[0-9]+$" cannot pass on the first digits of a
		 * longer stdout.
		 */
		int r = regex_search(cmd->stdout_text, text, len, o->out_truncated ? REG_NOTEOL : 0,
				     why, sizeof(why));
		if (r == -ENOSPC)
			verdict(out, c, false, "%s, but stdout regex %s cannot be matched on it "
				"within the judge's memory", ex, quote_str(&q, cmd->stdout_text));
		else if (r < 0)
			crit_error(out, "stdout regex %s cannot be matched: %s",
				   quote_str(&q, cmd->stdout_text), strerror(-r));
		else if (r == 1)
			verdict(out, c, true, "%s, stdout matches %s", ex,
				quote_str(&q, cmd->stdout_text));
		else
			verdict(out, c, false, "%s, but stdout%s does not match %s", ex, tr,
				quote_str(&q, cmd->stdout_text));
		break;
	}
	default:
		crit_error(out, "unknown stdout check");
		break;
	}
done:
	sanitize(out);
}
