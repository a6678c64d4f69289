/* SPDX-License-Identifier: MIT */
/*
 * Unit tests for the egress proxy's request parser (egress/request-util.c): CONNECT and
 * absolute-form requests with their forwarded heads, every prefix of a valid head, each
 * refused form with its specific error, and every limit at its edge.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "egress-limits.h"
#include "request.h"
#include "wire-egress.h"

static uint8_t fwd[EGR_MAX_FWD];

/* Parses s (NUL-terminated text) whole and returns the result; *out as the parser left it. */
static int parse(const char *s, struct egr_request *out)
{
	return egr_request_parse((const uint8_t *)s, strlen(s), out, fwd, sizeof(fwd));
}

/* A request whose parse must fail with err and leave the output untouched. */
static void expect_fail(const char *s, int err)
{
	struct egr_request req;
	memset(&req, 0x5a, sizeof(req));
	struct egr_request untouched = req;
	int r = parse(s, &req);
	if (r != err)
		fprintf(stderr, "request %s: got %d, want %d\n", s, r, err);
	assert_int_equal(r, err);
	assert_memory_equal(&req, &untouched, sizeof(req));
}

static void test_connect(void **state)
{
	(void)state;
	const char *s = "CONNECT API.Example.COM.:443 HTTP/1.1\r\n"
			"Host: api.example.com:443\r\nUser-Agent: curl/8\r\n\r\n";
	struct egr_request req;
	assert_int_equal(parse(s, &req), 0);
	assert_int_equal(req.kind, WIRE_EGRESS_KIND_CONNECT);
	assert_int_equal(req.host.type, EGR_HOST_NAME);
	assert_string_equal(req.host.text, "api.example.com");
	assert_int_equal(req.port, 443);
	assert_int_equal(req.head_len, strlen(s));
	assert_int_equal(req.fwd_len, 0);
}

static void test_connect_leaves_tail(void **state)
{
	(void)state;
	const char *head = "CONNECT a.test:8443 HTTP/1.0\r\n\r\n";
	char s[128];
	(void)snprintf(s, sizeof(s), "%s\x16\x03\x01", head);
	struct egr_request req;
	assert_int_equal(parse(s, &req), 0);
	assert_int_equal(req.head_len, strlen(head));
	assert_int_equal(req.port, 8443);
}

static void test_connect_ipv6_and_mapped(void **state)
{
	(void)state;
	struct egr_request req;
	assert_int_equal(parse("CONNECT [2001:DB8::1]:443 HTTP/1.1\r\n\r\n", &req), 0);
	assert_int_equal(req.host.type, EGR_HOST_IPV6);
	assert_string_equal(req.host.text, "2001:db8::1");
	assert_int_equal(parse("CONNECT [::ffff:127.0.0.1]:8080 HTTP/1.1\r\n\r\n", &req), 0);
	assert_int_equal(req.host.type, EGR_HOST_IPV4);
	assert_string_equal(req.host.text, "127.0.0.1");
	assert_int_equal(req.port, 8080);
}

/* The forwarded head of an HTTP request, golden. */
static void expect_forward(const char *s, const char *want_host, uint16_t want_port,
			   const char *want_fwd)
{
	struct egr_request req;
	assert_int_equal(parse(s, &req), 0);
	assert_int_equal(req.kind, WIRE_EGRESS_KIND_HTTP);
	assert_string_equal(req.host.text, want_host);
	assert_int_equal(req.port, want_port);
	assert_int_equal(req.head_len, strlen(s));
	if (req.fwd_len != strlen(want_fwd) || memcmp(fwd, want_fwd, req.fwd_len) != 0)
		fprintf(stderr, "forwarded: '%.*s'\n", (int)req.fwd_len, (const char *)fwd);
	assert_int_equal(req.fwd_len, strlen(want_fwd));
	assert_memory_equal(fwd, want_fwd, req.fwd_len);
}

static void test_http_forward(void **state)
{
	(void)state;
	expect_forward("GET http://Example.COM:8080/a/b?c=1&d HTTP/1.1\r\n"
		       "Host: example.com:8080\r\nUser-Agent: t\r\nProxy-Connection: keep-alive\r\n"
		       "Connection: keep-alive\r\nKeep-Alive: 5\r\nProxy-Authorization: x\r\n"
		       "Accept:   */*  \r\n\r\n",
		       "example.com", 8080,
		       "GET /a/b?c=1&d HTTP/1.1\r\nHost: example.com:8080\r\nUser-Agent: t\r\n"
		       "Accept: */*\r\nConnection: close\r\n\r\n");
}

static void test_http_forward_defaults(void **state)
{
	(void)state;
	/* No path, no port, no Host (HTTP/1.0): "/", port 80, a Host line added. */
	expect_forward("GET http://a.test HTTP/1.0\r\n\r\n", "a.test", 80,
		       "GET / HTTP/1.0\r\nHost: a.test\r\nConnection: close\r\n\r\n");
	/* A query without a path gets its slash; the Host header may omit the default port. */
	expect_forward("HEAD HTTP://a.test:80?q HTTP/1.1\r\nHost: A.test\r\n\r\n", "a.test", 80,
		       "HEAD /?q HTTP/1.1\r\nHost: a.test\r\nConnection: close\r\n\r\n");
	expect_forward("POST http://[::1]:8080/x HTTP/1.1\r\nHost: [::1]:8080\r\n"
		       "Content-Length: 3\r\n\r\n",
		       "::1", 8080,
		       "POST /x HTTP/1.1\r\nHost: [::1]:8080\r\nContent-Length: 3\r\n"
		       "Connection: close\r\n\r\n");
	expect_forward("PUT http://127.0.0.1:8080/u HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n",
		       "127.0.0.1", 8080,
		       "PUT /u HTTP/1.1\r\nHost: 127.0.0.1:8080\r\nTransfer-Encoding: chunked\r\n"
		       "Connection: close\r\n\r\n");
}

/* Every proper prefix of a valid head is incomplete, never an error. */
static void test_every_prefix_incomplete(void **state)
{
	(void)state;
	const char *heads[] = {
		"CONNECT a.test:443 HTTP/1.1\r\nHost: a.test:443\r\n\r\n",
		"GET http://a.test/x HTTP/1.1\r\nHost: a.test\r\nAccept: */*\r\n\r\n",
	};
	for (size_t h = 0; h < 2; h++) {
		size_t len = strlen(heads[h]);
		for (size_t n = 0; n < len; n++) {
			struct egr_request req;
			int r = egr_request_parse((const uint8_t *)heads[h], n, &req, fwd, sizeof(fwd));
			if (r != -EAGAIN)
				fprintf(stderr, "prefix %zu of head %zu: %d\n", n, h, r);
			assert_int_equal(r, -EAGAIN);
		}
		struct egr_request req;
		assert_int_equal(egr_request_parse((const uint8_t *)heads[h], len, &req, fwd,
						   sizeof(fwd)), 0);
	}
}

static void test_refused_forms(void **state)
{
	(void)state;
	static const char *const bad[] = {
		"GET /origin HTTP/1.1\r\n\r\n",                     /* origin-form */
		"OPTIONS * HTTP/1.1\r\n\r\n",                       /* asterisk-form */
		"GET https://a.test/ HTTP/1.1\r\n\r\n",             /* another scheme */
		"GET ftp://a.test/ HTTP/1.1\r\n\r\n",
		"GET http://user@a.test/ HTTP/1.1\r\n\r\n",         /* user information */
		"GET http://a.test@evil.test/ HTTP/1.1\r\n\r\n",
		"GET http://a.test/#frag HTTP/1.1\r\n\r\n",         /* a fragment */
		"GET http:///x HTTP/1.1\r\n\r\n",                   /* no host */
		"GET http://a.test:/ HTTP/1.1\r\n\r\n",             /* empty port */
		"GET http://a.test:0/ HTTP/1.1\r\n\r\n",
		"GET http://a.test:65536/ HTTP/1.1\r\n\r\n",
		"GET http://a.test:080/ HTTP/1.1\r\n\r\n",
		"GET http://127.1/ HTTP/1.1\r\n\r\n",               /* numeric non-address */
		"GET http://2130706433/ HTTP/1.1\r\n\r\n",
		"GET http://0x7f.1/ HTTP/1.1\r\n\r\n",
		"GET http://[::1%25lo]/ HTTP/1.1\r\n\r\n",          /* a zone */
		"GET http://a_b.t\xc3\xa9st/ HTTP/1.1\r\n\r\n",     /* not ASCII */
		"GET http://a.test/ HTTP/2.0\r\n\r\n",              /* version */
		"GET http://a.test/ http/1.1\r\n\r\n",
		"GET http://a.test/ HTTP/1.1 \r\n\r\n",
		"GET  http://a.test/ HTTP/1.1\r\n\r\n",             /* two spaces */
		"GET http://a.test/\tx HTTP/1.1\r\n\r\n",
		" GET http://a.test/ HTTP/1.1\r\n\r\n",
		"GET http://a.test/ HTTP/1.1\n\r\n",                /* bare LF */
		"GET http://a.test/ HTTP/1.1\r\nA: b\n\r\n",
		"GET http://a.test/ HTTP/1.1\r\nA: b\r\n \tfolded\r\n\r\n", /* obs-fold */
		"GET http://a.test/ HTTP/1.1\r\nA : b\r\n\r\n",     /* space before the colon */
		"GET http://a.test/ HTTP/1.1\r\n: b\r\n\r\n",
		"GET http://a.test/ HTTP/1.1\r\nNo-colon\r\n\r\n",
		"GET http://a.test/ HTTP/1.1\r\nA: b\rc\r\n\r\n",   /* a CR inside */
		"GET http://a.test/ HTTP/1.1\r\nA: b\x7f\r\n\r\n",
		"GET http://a.test/ HTTP/1.1\r\nHost: evil.test\r\n\r\n", /* Host elsewhere */
		"GET http://a.test/ HTTP/1.1\r\nHost: a.test:81\r\n\r\n",
		"GET http://a.test:81/ HTTP/1.1\r\nHost: a.test\r\n\r\n",
		"GET http://a.test/ HTTP/1.1\r\nHost: a.test\r\nHost: a.test\r\n\r\n",
		"GET http://a.test/ HTTP/1.1\r\nContent-Length: 1\r\nContent-Length: 1\r\n\r\n",
		"GET http://a.test/ HTTP/1.1\r\nContent-Length: -1\r\n\r\n",
		"GET http://a.test/ HTTP/1.1\r\nContent-Length: 1 2\r\n\r\n",
		"GET http://a.test/ HTTP/1.1\r\nContent-Length: 1234567890123456789\r\n\r\n",
		"GET http://a.test/ HTTP/1.1\r\nContent-Length: 1\r\n"
		"Transfer-Encoding: chunked\r\n\r\n",
		"GET http://a.test/ HTTP/1.1\r\nTransfer-Encoding: gzip, chunked\r\n\r\n",
		"GET http://a.test/ HTTP/1.1\r\nTransfer-Encoding: chunked\r\n"
		"Transfer-Encoding: chunked\r\n\r\n",
		"GET http://a.test/ HTTP/1.0\r\nTransfer-Encoding: chunked\r\n\r\n",
		"CONNECT a.test HTTP/1.1\r\n\r\n",                  /* CONNECT without a port */
		"CONNECT http://a.test:443 HTTP/1.1\r\n\r\n",
		"CONNECT a.test:443/x HTTP/1.1\r\n\r\n",
		"CONNECT a.test:443 HTTP/1.1\r\nContent-Length: 0\r\n\r\n",
		"CONNECT a.test:443 HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n",
		"CONNECT a.test:443 HTTP/1.1\r\nHost: b.test:443\r\n\r\n",
		"CONNECT a.test:8443 HTTP/1.1\r\nHost: a.test\r\n\r\n",
		"connect a.test:443 HTTP/1.1\r\n\r\n",              /* methods are case-sensitive */
		"CONNECT [::1:443 HTTP/1.1\r\n\r\n",
		"CONNECT ::1:443 HTTP/1.1\r\n\r\n",
		"G(T http://a.test/ HTTP/1.1\r\n\r\n",              /* not a token */
		"\r\n\r\n",
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		expect_fail(bad[i], -EBADMSG);
}

static void test_nul_refused(void **state)
{
	(void)state;
	static const char s[] = "GET http://a.test/ HTTP/1.1\r\nA: b\0c\r\n\r\n";
	struct egr_request req;
	assert_int_equal(egr_request_parse((const uint8_t *)s, sizeof(s) - 1, &req, fwd,
					   sizeof(fwd)),
			 -EBADMSG);
}

/* Builds "GET http://a.test/ HTTP/1.1\r\n" + n headers "X-<i>: v\r\n" + "\r\n". */
static char *with_headers(unsigned n)
{
	size_t cap = 64 + (size_t)n * 16;
	char *s = malloc(cap);
	assert_non_null(s);
	size_t len = (size_t)snprintf(s, cap, "GET http://a.test/ HTTP/1.1\r\n");
	for (unsigned i = 0; i < n; i++)
		len += (size_t)snprintf(s + len, cap - len, "X-%u: v\r\n", i);
	(void)snprintf(s + len, cap - len, "\r\n");
	return s;
}

static void test_header_count_limit(void **state)
{
	(void)state;
	struct egr_request req;
	char *ok = with_headers(EGR_MAX_HEADERS);
	assert_int_equal(parse(ok, &req), 0);
	free(ok);
	char *over = with_headers(EGR_MAX_HEADERS + 1);
	expect_fail(over, -E2BIG);
	free(over);
}

/* A request whose one header line is exactly n bytes long (without CRLF). */
static char *with_line(size_t n)
{
	const char *start = "GET http://a.test/ HTTP/1.1\r\n";
	size_t cap = strlen(start) + n + 8;
	char *s = malloc(cap);
	assert_non_null(s);
	size_t len = (size_t)snprintf(s, cap, "%sX: ", start);
	memset(s + len, 'v', n - 3);
	len += n - 3;
	memcpy(s + len, "\r\n\r\n", 5);
	return s;
}

static void test_line_limit(void **state)
{
	(void)state;
	struct egr_request req;
	char *ok = with_line(EGR_MAX_LINE);
	assert_int_equal(parse(ok, &req), 0);
	free(ok);
	char *over = with_line(EGR_MAX_LINE + 1);
	expect_fail(over, -E2BIG);
	/* Without its end yet, the long line is already over the limit. */
	assert_int_equal(egr_request_parse((const uint8_t *)over, strlen(over) - 3, &req, fwd,
					   sizeof(fwd)),
			 -E2BIG);
	free(over);
}

static void test_head_limit(void **state)
{
	(void)state;
	/* Lines of 4000 bytes, 64 at most: the total runs over EGR_MAX_HEAD first. */
	size_t cap = EGR_MAX_HEAD * 2;
	char *s = malloc(cap);
	assert_non_null(s);
	size_t len = (size_t)snprintf(s, cap, "GET http://a.test/ HTTP/1.1\r\n");
	while (len < EGR_MAX_HEAD + 100) {
		len += (size_t)snprintf(s + len, cap - len, "X: ");
		memset(s + len, 'v', 4000);
		len += 4000;
		memcpy(s + len, "\r\n", 2);
		len += 2;
	}
	memcpy(s + len, "\r\n", 3);
	struct egr_request req;
	assert_int_equal(parse(s, &req), -E2BIG);
	/* And exactly EGR_MAX_HEAD bytes without the end: nothing more can fit. */
	assert_int_equal(egr_request_parse((const uint8_t *)s, EGR_MAX_HEAD, &req, fwd,
					   sizeof(fwd)),
			 -E2BIG);
	assert_int_equal(egr_request_parse((const uint8_t *)s, EGR_MAX_HEAD - 1, &req, fwd,
					   sizeof(fwd)),
			 -EAGAIN);
	free(s);
}

static void test_small_forward_buffer(void **state)
{
	(void)state;
	struct egr_request req;
	uint8_t small[16];
	const char *s = "GET http://a.test/x HTTP/1.1\r\n\r\n";
	assert_int_equal(egr_request_parse((const uint8_t *)s, strlen(s), &req, small,
					   sizeof(small)),
			 -ENOBUFS);
	/* CONNECT writes nothing forward, so needs no buffer. */
	const char *c = "CONNECT a.test:443 HTTP/1.1\r\n\r\n";
	assert_int_equal(egr_request_parse((const uint8_t *)c, strlen(c), &req, NULL, 0), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_connect),
		cmocka_unit_test(test_connect_leaves_tail),
		cmocka_unit_test(test_connect_ipv6_and_mapped),
		cmocka_unit_test(test_http_forward),
		cmocka_unit_test(test_http_forward_defaults),
		cmocka_unit_test(test_every_prefix_incomplete),
		cmocka_unit_test(test_refused_forms),
		cmocka_unit_test(test_nul_refused),
		cmocka_unit_test(test_header_count_limit),
		cmocka_unit_test(test_line_limit),
		cmocka_unit_test(test_head_limit),
		cmocka_unit_test(test_small_forward_buffer),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
