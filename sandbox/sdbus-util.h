/* SPDX-License-Identifier: MIT */
/*
 * The few D-Bus messages warden exchanges with the user's systemd (sandbox/sdscope.c), as
 * pure code: a writer for the calls it makes and one bounded reader for what comes back. No
 * syscalls, so the unit tests and the fuzz target (fuzz/fuzz-sdbus.c) run it as is.
 *
 * The wire format is the D-Bus specification's ("Message Protocol"): a 16-byte fixed header
 * (endianness 'l' or 'B', type, flags, version 1, body length, serial, length of the header
 * field array), the header fields as an array of (code, variant), padding to 8, the body.
 * Every value is aligned to its own size counted from the message's first byte, and padding
 * bytes must be zero. Messages are written little-endian; both orders are read.
 *
 * What the reader accepts, and what it knowingly does not check:
 *  - message types 1..4 only, version 1, a non-zero serial, at most SDBUS_MSG_MAX bytes;
 *  - each known header field once, with its own type; the fields each type requires; an
 *    unknown field code is skipped by its signature (nesting at most SDBUS_DEPTH_MAX);
 *  - no file descriptors (UNIX_FDS must be absent or 0: warden never negotiates them);
 *  - strings end in their NUL and hold none inside; UTF-8 validity and the syntax of object
 *    paths and names are not checked, since warden only compares them with its own.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define SDBUS_FIXED_LEN 16          /* the fixed part of every header */
#define SDBUS_MSG_MAX (1u << 20)    /* the largest message read (the protocol allows 128 MiB) */
#define SDBUS_STR_MAX 4096          /* the longest string a getter returns */
#define SDBUS_SIG_MAX 255           /* the protocol's own limit on a signature */
#define SDBUS_DEPTH_MAX 32          /* containers nested in a skipped value */
#define SDBUS_AUTH_LINE_MAX 512     /* the longest line of the authentication exchange */

enum sdbus_type {
	SDBUS_CALL = 1,
	SDBUS_RETURN = 2,
	SDBUS_ERROR = 3,
	SDBUS_SIGNAL = 4,
};

/* A string inside a message: borrowed, p[len] is its NUL. */
struct sdbus_str {
	const char *p;
	size_t len;
};

/* Whether s is exactly the C string lit. */
bool sdbus_str_is(struct sdbus_str s, const char *lit);

/* A parsed message: views into the caller's buffer, valid while it is. */
struct sdbus_msg {
	const uint8_t *msg;     /* the whole message */
	size_t len;
	bool big_endian;
	uint8_t type;           /* enum sdbus_type */
	uint8_t flags;
	uint32_t serial;
	uint32_t reply_serial;  /* 0 when absent */
	struct sdbus_str path, interface, member, error_name, destination, sender;
	struct sdbus_str signature; /* the body's; empty when absent */
	size_t body_off;        /* the body: msg[body_off .. len) */
};

/*
 * The length of the whole message whose first SDBUS_FIXED_LEN bytes are fixed (borrowed):
 * 0 and *out_len, -EBADMSG when those bytes are no D-Bus header, -EMSGSIZE when the message
 * is longer than SDBUS_MSG_MAX. *out_len is untouched on failure.
 */
int sdbus_msg_length(const uint8_t fixed[SDBUS_FIXED_LEN], size_t *out_len);

/*
 * Parses the whole message msg[0..len) (borrowed; len as sdbus_msg_length gave it). Returns 0
 * and fills *out (views into msg), or -EBADMSG, -EMSGSIZE; *out is untouched on failure.
 */
int sdbus_msg_parse(const uint8_t *msg, size_t len, struct sdbus_msg *out);

/*
 * The reader: a view of a message from pos to end. Alignment is counted from msg, the
 * message's first byte, so a sub-cursor (an array's body) keeps msg and narrows end.
 * A getter that fails leaves the cursor and its outputs as they were.
 */
struct sdbus_rd {
	const uint8_t *msg;
	size_t pos;
	size_t end;
	bool big_endian;
};

/*
 * A cursor over m's body when its signature is exactly sig (borrowed C string). Returns 0, or
 * -EBADMSG when the signature differs; *out is untouched on failure.
 */
int sdbus_body(const struct sdbus_msg *m, const char *sig, struct sdbus_rd *out);

bool sdbus_get_u8(struct sdbus_rd *r, uint8_t *out);
bool sdbus_get_bool(struct sdbus_rd *r, bool *out);   /* a u32 that must be 0 or 1 */
bool sdbus_get_u32(struct sdbus_rd *r, uint32_t *out);
/* A string ('s') or object path ('o') of at most SDBUS_STR_MAX bytes, as a view. */
bool sdbus_get_str(struct sdbus_rd *r, struct sdbus_str *out);
/* A signature ('g'): a view, checked to be a sequence of complete types. */
bool sdbus_get_sig(struct sdbus_rd *r, struct sdbus_str *out);
/* A variant whose value is of the single complete type sig; leaves r at the value. */
bool sdbus_get_variant(struct sdbus_rd *r, const char *sig);
/*
 * An array whose elements align to align (1, 2, 4 or 8): its u32 length, the padding to its
 * first element, and *out over its elements (same msg, narrower end); r moves past it.
 */
bool sdbus_get_array(struct sdbus_rd *r, size_t align, struct sdbus_rd *out);
/* The start of a struct or dict entry: the padding to 8. */
bool sdbus_get_struct(struct sdbus_rd *r);
/* Skips one value of the single complete type sig[0..sig_len). */
bool sdbus_skip(struct sdbus_rd *r, const char *sig, size_t sig_len);
/* True iff r has nothing left. */
bool sdbus_done(const struct sdbus_rd *r);

/*
 * The writer: little-endian into a caller's buffer. The first failure (no room) sticks; the
 * message is then unusable and sdbus_msg_end says so.
 */
struct sdbus_wr {
	uint8_t *p;
	size_t cap;
	size_t len;
	size_t body_off;
	bool failed;
};

void sdbus_wr_init(struct sdbus_wr *w, void *buf, size_t cap);
void sdbus_put_u8(struct sdbus_wr *w, uint8_t v);
void sdbus_put_bool(struct sdbus_wr *w, bool v);
void sdbus_put_u32(struct sdbus_wr *w, uint32_t v);
/* A string or object path; one longer than SDBUS_STR_MAX fails the writer. */
void sdbus_put_str(struct sdbus_wr *w, const char *s);
/* A signature (at most SDBUS_SIG_MAX bytes). */
void sdbus_put_sig(struct sdbus_wr *w, const char *sig);

/* An array being written: where its length goes and where its elements start. */
struct sdbus_arr {
	size_t len_at;
	size_t start;
};
/* Opens an array whose elements align to align (1, 2, 4 or 8). */
void sdbus_put_array_open(struct sdbus_wr *w, size_t align, struct sdbus_arr *out);
void sdbus_put_array_close(struct sdbus_wr *w, const struct sdbus_arr *a);
/* Pads to a multiple of align (a struct's or dict entry's start: 8). */
void sdbus_put_align(struct sdbus_wr *w, size_t align);

/* A method call's header fields, borrowed C strings; dest and sig may be NULL. */
struct sdbus_call {
	const char *dest;
	const char *path;
	const char *interface;
	const char *member;
	const char *sig;
};

/* Writes a method call's header; the body follows with the put functions. */
void sdbus_msg_begin(struct sdbus_wr *w, uint32_t serial, const struct sdbus_call *c);
/* Sets the body's length. Returns the message's length, or -ENOBUFS when it did not fit. */
int sdbus_msg_end(struct sdbus_wr *w, size_t *out_len);

/*
 * The calls warden makes. Each writes one whole message into buf[0..cap) and stores its
 * length; returns 0 or -ENOBUFS (-EINVAL for a string over SDBUS_STR_MAX).
 */
/* org.freedesktop.DBus.Hello (a message bus's first call; a direct connection has none). */
int sdbus_build_hello(void *buf, size_t cap, uint32_t serial, size_t *out_len);
/* org.freedesktop.DBus.AddMatch(rule). */
int sdbus_build_add_match(void *buf, size_t cap, uint32_t serial, const char *rule,
			  size_t *out_len);
/* org.freedesktop.systemd1.Manager.GetUnitByPID(pid). */
int sdbus_build_get_unit_by_pid(void *buf, size_t cap, uint32_t serial, uint32_t pid,
				size_t *out_len);
/* org.freedesktop.DBus.Properties.Get(interface, property) on the object path. */
int sdbus_build_get_property(void *buf, size_t cap, uint32_t serial, const char *path,
			     const char *interface, const char *property, size_t *out_len);
/*
 * org.freedesktop.systemd1.Manager.StartTransientUnit(unit, "fail", properties, no aux): a
 * scope holding pid, with Delegate=yes, the description, and CollectMode=inactive-or-failed
 * (a scope that failed to start is not kept around).
 */
int sdbus_build_start_scope(void *buf, size_t cap, uint32_t serial, const char *unit,
			    uint32_t pid, const char *description, size_t *out_len);

/*
 * The server's answers during authentication, one line without its "\r\n": "OK <guid>" is 0,
 * "REJECTED ..." -EACCES, anything else (or a line over SDBUS_AUTH_LINE_MAX, or with a byte
 * outside printable ASCII) -EBADMSG.
 */
int sdbus_auth_reply(const char *line, size_t len);

/* The AUTH EXTERNAL line for uid: "AUTH EXTERNAL <hex of the decimal uid>\r\n". */
int sdbus_auth_line(uid_t uid, char *buf, size_t cap, size_t *out_len);

/*
 * The body of a Manager.JobRemoved signal (signature "uoss": id, job, unit, result), as
 * views. Returns 0, or -EBADMSG when m is no such signal or its body is malformed.
 */
int sdbus_read_job_removed(const struct sdbus_msg *m, struct sdbus_str *out_unit,
			   struct sdbus_str *out_result);

/*
 * The text an error reply carries: its first argument when that is a string, else empty.
 * Returns 0, or -EBADMSG when m is no error or its first string is malformed.
 */
int sdbus_read_error(const struct sdbus_msg *m, struct sdbus_str *out_name,
		     struct sdbus_str *out_text);
