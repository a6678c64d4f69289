/* SPDX-License-Identifier: MIT */
/*
 * Every limit of the egress proxy, in one place (docs/egress.md lists them). Bytes from a
 * client are hostile; each of these bounds what one client connection can make the proxy
 * hold or do.
 */
#pragma once

/* ---- HTTP request heads (request-util.c) ------------------------------------------------- */
#define EGR_MAX_HEAD 16384u    /* request line, header lines and the empty line, in bytes */
#define EGR_MAX_LINE 8192u     /* one line, without its CRLF */
#define EGR_MAX_HEADERS 64u    /* header lines */
#define EGR_MAX_METHOD 32u     /* method token */
#define EGR_MAX_FIELD_NAME 128u /* header field name */
#define EGR_MAX_CONTENT_LENGTH_DIGITS 18u
/* The forwarded head: the request line shrinks, a Host line and "Connection: close" appear. */
#define EGR_MAX_FWD (EGR_MAX_HEAD + 512u)

/* ---- TLS ClientHello (hello-util.c) ------------------------------------------------------- */
#define EGR_MAX_HELLO 16384u      /* the ClientHello handshake message body */
#define EGR_MAX_HELLO_RECORDS 16u /* TLS records it may be split over */
#define EGR_MAX_HELLO_EXTS 128u   /* extensions in it */
#define EGR_TLS_RECORD_HEADER 5u
#define EGR_TLS_MAX_FRAGMENT 16384u
/* What the proxy buffers, at most, while it waits for a whole ClientHello. */
#define EGR_HELLO_BUF (EGR_MAX_HELLO + 4u + EGR_MAX_HELLO_RECORDS * EGR_TLS_RECORD_HEADER)

/* ---- names and rules (host-util.c, match-util.c) ------------------------------------------ */
#define EGR_MAX_HOST 253u  /* a DNS name without the trailing dot */
#define EGR_MAX_LABEL 63u  /* one label of it */
#define EGR_MAX_RULE_TEXT 300u
#define EGR_MAX_RULES 1024u /* entries in each of allow and deny */

/* ---- the proxy (proxy.c, resolve.c) ------------------------------------------------------- */
#define EGR_MAX_ADDRS 16u   /* addresses of one name that are checked and tried */
#define EGR_MAX_ACTIVE 128u /* client connections open at once; more wait in the backlog */
#define EGR_MAX_DRAIN 65536u /* bytes read and dropped after an error reply, before closing */
