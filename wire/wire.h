/* SPDX-License-Identifier: MIT */
/*
 * wire: the frame codec that the supervisor and the worker both link. It depends on nothing
 * else in the tree, nor on any library (SHA-256 for the HMAC is sha256.c).
 *
 * docs/protocol.md is the normative description of everything here; change both together.
 *
 * A frame is  header (16 bytes) | payload (payload_len bytes) | mac (32 bytes)
 *   header:   u8 version | u8 type | u16 flags | u32 payload_len | u64 seq   (big-endian)
 *   mac:      HMAC-SHA-256(session key, u8 direction | header | payload)
 * The transport is a SOCK_SEQPACKET socketpair, so one recvmsg() is one frame.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define WIRE_VERSION 1
#define WIRE_HEADER_LEN 16
#define WIRE_MAC_LEN 32
#define WIRE_KEY_LEN 32
#define WIRE_NONCE_LEN 32
#define WIRE_MAX_PAYLOAD 65536u
#define WIRE_MAX_FRAME (WIRE_HEADER_LEN + WIRE_MAX_PAYLOAD + WIRE_MAC_LEN)
#define WIRE_MAX_STRING 4096u   /* any string field */
#define WIRE_MAX_EVENT_TEXT 1024u /* EVENT text */
#define WIRE_MAX_EVENTS 256u      /* EVENT frames one session may carry */
#define WIRE_MAX_ERROR_TEXT 256u  /* ERROR text */
#define WIRE_MAX_RESULT_NAME 128u /* RESULT name */
#define WIRE_MAX_RESULT_TEXT 1024u /* RESULT detail */
#define WIRE_MAX_PROBE_ID 32u     /* PROBE id */
#define WIRE_MAX_PROBE_TEXT 256u  /* PROBE detail */
#define WIRE_MAX_PROBES 128u      /* PROBE frames one audit session may carry */
#define WIRE_MAX_FIELDS 64u     /* any counted list in a payload */

/* The key packet: the very first packet on the channel, supervisor to worker, unframed. */
#define WIRE_KEY_MAGIC "WKEY"
#define WIRE_KEY_PACKET_LEN (4 + WIRE_KEY_LEN)

/* Who sent a frame; part of the MAC input so a frame cannot be reflected back. */
enum wire_dir {
	WIRE_DIR_TO_WORKER = 1,
	WIRE_DIR_TO_SUPERVISOR = 2,
};

/* Frame types: supervisor requests are even, worker answers and reports are odd. */
enum wire_type {
	WIRE_CHALLENGE = 2, /* sup -> worker: nonce[32] */
	WIRE_GO = 4,        /* sup -> worker: run the command; empty */
	WIRE_AUDIT = 6,     /* sup -> worker: run the audit probes instead; u16 host port */
	WIRE_HELLO = 3,     /* worker -> sup: nonce[32] | identity (see protocol.md) */
	WIRE_READY = 5,     /* worker -> sup: about to exec the command; empty */
	WIRE_STARTED = 7,   /* worker -> sup: u32 pid (inside the sandbox) */
	WIRE_EXITED = 9,    /* worker -> sup: exit record (see wire_exited) */
	WIRE_EVENT = 11,    /* worker -> sup: u8 level | str text */
	WIRE_RESULT = 13,   /* worker -> sup: str name | u32 score_millis | str detail */
	WIRE_ERROR = 15,    /* worker -> sup: u32 code (errno) | str what */
	WIRE_PROBE = 17,    /* worker -> sup: str id | u32 err | str detail (audit only) */
};

/* Flags: none defined yet; any set bit is rejected. */
#define WIRE_FLAGS_KNOWN 0x0000u

/* ---- the bounded reader ----------------------------------------------------------------- */

/* A borrowed view of untrusted bytes. Never owns them. */
struct wire_rd {
	const uint8_t *p;
	size_t len;
};

void wire_rd_init(struct wire_rd *r, const void *p, size_t len);
bool wire_get_u8(struct wire_rd *r, uint8_t *out);
bool wire_get_u16(struct wire_rd *r, uint16_t *out);
bool wire_get_u32(struct wire_rd *r, uint32_t *out);
bool wire_get_u64(struct wire_rd *r, uint64_t *out);
/* Copies exactly n bytes. */
bool wire_get_bytes(struct wire_rd *r, void *out, size_t n);
/* A sub-cursor over the next n bytes. */
bool wire_get_view(struct wire_rd *r, size_t n, struct wire_rd *out);
/* u32 length + body as a sub-cursor. */
bool wire_get_sub(struct wire_rd *r, struct wire_rd *out);
/*
 * u32 length + body copied into a new NUL-terminated string (caller frees). Fails when the
 * length exceeds max or the body contains a NUL byte. *out untouched on failure.
 */
bool wire_get_str(struct wire_rd *r, size_t max, char **out);
/* True iff every byte was consumed. */
bool wire_done(const struct wire_rd *r);

/* ---- the writer ------------------------------------------------------------------------- */

/* A writer over caller storage. Once a put fails the writer stays failed. */
struct wire_wr {
	uint8_t *p;
	size_t cap;
	size_t len;
	bool failed;
};

void wire_wr_init(struct wire_wr *w, void *buf, size_t cap);
bool wire_put_u8(struct wire_wr *w, uint8_t v);
bool wire_put_u16(struct wire_wr *w, uint16_t v);
bool wire_put_u32(struct wire_wr *w, uint32_t v);
bool wire_put_u64(struct wire_wr *w, uint64_t v);
bool wire_put_bytes(struct wire_wr *w, const void *p, size_t n);
/* u32 length + bytes; fails when n exceeds max. */
bool wire_put_str(struct wire_wr *w, const char *s, size_t n, size_t max);

/* ---- the MAC and frames ----------------------------------------------------------------- */

struct wire_mac; /* opaque: an HMAC-SHA-256 context keyed once per session */

/* Creates a MAC context keyed with key[WIRE_KEY_LEN]. Returns NULL on failure. */
struct wire_mac *wire_mac_new(const uint8_t key[WIRE_KEY_LEN]);
/* NULL-safe. Wipes the key material. Returns NULL. */
struct wire_mac *wire_mac_free(struct wire_mac *m);

/* A decoded header. */
struct wire_hdr {
	uint8_t version;
	uint8_t type;
	uint16_t flags;
	uint32_t payload_len;
	uint64_t seq;
};

/*
 * Builds a complete frame into out (cap bytes). Returns the frame length, or -EMSGSIZE when
 * the payload is over WIRE_MAX_PAYLOAD or does not fit, -EIO when the MAC fails.
 */
int wire_seal(struct wire_mac *m, enum wire_dir dir, uint8_t type, uint64_t seq,
	      const void *payload, size_t payload_len, uint8_t *out, size_t cap);

/*
 * Authenticates and decodes one received frame of len bytes. The MAC is checked, in constant
 * time, before any header field other than payload_len is trusted and before the payload is
 * looked at. On success stores the header and a view of the payload and returns 0.
 * Errors: -EBADMSG (short, oversize, length mismatch, bad MAC, unknown version or flags),
 * -EPROTO (authentic but seq != expected_seq). Outputs untouched on failure.
 */
int wire_open(struct wire_mac *m, enum wire_dir dir, uint64_t expected_seq, const uint8_t *buf,
	      size_t len, struct wire_hdr *out_hdr, struct wire_rd *out_payload);

/* ---- payloads ---------------------------------------------------------------------------- */

/* EXITED: how the command ended. */
struct wire_exited {
	uint8_t how;            /* WIRE_EXIT_* */
	int32_t code;           /* exit status, signal number, or errno for exec failures */
	uint64_t utime_usec;
	uint64_t stime_usec;
	uint64_t maxrss_kib;
};

enum wire_exit_how {
	WIRE_EXIT_CODE = 1,       /* code = exit status 0..255 */
	WIRE_EXIT_SIGNAL = 2,     /* code = signal number */
	WIRE_EXIT_NOT_FOUND = 3,  /* exec failed with ENOENT; code = errno */
	WIRE_EXIT_NOT_EXEC = 4,   /* exec failed otherwise; code = errno */
};

/* Encodes e as an EXITED payload into w. */
bool wire_put_exited(struct wire_wr *w, const struct wire_exited *e);
/* Decodes an EXITED payload; fails on any malformed or trailing byte. */
int wire_get_exited(struct wire_rd *r, struct wire_exited *out);

/* EVENT: a bounded log line from the worker. level: 0 debug, 1 info, 2 warning, 3 error. */
#define WIRE_EVENT_LEVEL_MAX 3u
bool wire_put_event(struct wire_wr *w, uint8_t level, const char *text, size_t len);
/*
 * Decodes an EVENT payload; *out_text is a new NUL-terminated string. -EBADMSG for a malformed
 * payload, -ENOMEM when the copy cannot be allocated (as every decoder below that copies).
 */
int wire_get_event(struct wire_rd *r, uint8_t *out_level, char **out_text);

/* ERROR: the worker could not do what GO asked (code is an errno, 1..4095). */
bool wire_put_error(struct wire_wr *w, uint32_t code, const char *what, size_t len);
int wire_get_error(struct wire_rd *r, uint32_t *out_code, char **out_what);

/* RESULT: one graded criterion (evaluations): name, score in thousandths (0..1000), detail. */
bool wire_put_result(struct wire_wr *w, const char *name, size_t name_len, uint32_t score_millis,
		     const char *detail, size_t detail_len);
int wire_get_result(struct wire_rd *r, char **out_name, uint32_t *out_score_millis,
		    char **out_detail);

/*
 * PROBE: what one audit probe observed inside the sandbox. err is 0 when the attempt
 * succeeded, else its errno (1..4095); detail is the observation (a value, a list).
 */
bool wire_put_probe(struct wire_wr *w, const char *id, uint32_t err, const char *detail,
		    size_t detail_len);
int wire_get_probe(struct wire_rd *r, char **out_id, uint32_t *out_err, char **out_detail);

/* The identity a worker claims in HELLO, read from its own /proc/self/status. */
struct wire_identity {
	uint32_t pid;                 /* pid inside the sandbox */
	uint32_t uid[4], gid[4];      /* real, effective, saved, fs */
	uint64_t cap_inh, cap_prm, cap_eff, cap_bnd, cap_amb;
	uint8_t no_new_privs;
	uint8_t seccomp;              /* 0 off, 1 strict, 2 filter */
	uint32_t seccomp_filters;
};

bool wire_put_identity(struct wire_wr *w, const struct wire_identity *id);
int wire_get_identity(struct wire_rd *r, struct wire_identity *out);

/* Constant-time comparison of n bytes: true iff equal. */
bool wire_equal_ct(const void *a, const void *b, size_t n);

/*
 * The longest /proc/<pid>/status text the kernel can print, rounded up: Groups with
 * NGROUPS_MAX (65536) ids of up to 10 digits and a separator each is 720 KiB; Cpus_allowed and
 * Cpus_allowed_list for 8192 possible CPUs (the largest NR_CPUS) at most 25 KiB; the NS* lines,
 * Mems_allowed* and the other fields a few KiB more. Readers of a status file use a buffer this
 * large, so that no process's status is ever too long for them.
 */
#define WIRE_STATUS_MAX_BYTES (1u << 20)

/*
 * Parses the text of a /proc/<pid>/status file (len bytes, untrusted layout) into *out: Pid
 * (the innermost NSpid value when present), Uid, Gid, Cap*, NoNewPrivs, Seccomp and
 * Seccomp_filters. Every one of those fields must be present exactly once and well-formed, on a
 * line of at most 512 bytes; every other line is skipped, however long.
 * If out_nspid_depth is not NULL it receives the number of NSpid values (1 = not nested).
 * Returns 0 or -EBADMSG; outputs untouched on failure.
 */
int wire_parse_status(const char *text, size_t len, struct wire_identity *out,
		      unsigned *out_nspid_depth);
