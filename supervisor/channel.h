/* SPDX-License-Identifier: MIT */
/*
 * The supervisor's end of the worker channel: session key, handshake and the dispatch table.
 * Every frame from the worker is hostile input: it is authenticated before it is parsed, and
 * the first invalid or out-of-state frame ends the session.
 */
#pragma once

#include <stdbool.h>
#include <stdint.h>

#include "wire.h"

enum sup_chan_state {
	SUP_CHAN_HANDSHAKE, /* CHALLENGE sent, waiting for HELLO */
	SUP_CHAN_ATTESTED,  /* HELLO checked, GO not yet sent */
	SUP_CHAN_GO_SENT,   /* waiting for READY */
	SUP_CHAN_READY,     /* waiting for STARTED or EXITED */
	SUP_CHAN_RUNNING,   /* waiting for EXITED */
	SUP_CHAN_AUDITING,  /* AUDIT sent: PROBE frames, then EXITED (how 1, code 0) */
	/* Terminal states come last: waiting "until DONE" ends in either. */
	SUP_CHAN_DONE,      /* EXITED received; nothing more is permitted */
	SUP_CHAN_FAILED,    /* ERROR received: the worker could not run the command */
};

/* One audit probe as the worker reported it (escaped text). */
struct sup_probe {
	char id[WIRE_MAX_PROBE_ID + 1];
	uint32_t err;
	char detail[WIRE_MAX_PROBE_TEXT * 4 + 1];
};

struct sup_channel {
	int fd;                        /* borrowed */
	int peer_pid;                  /* the worker's host pid, for log lines; 0 if unknown */
	struct wire_mac *mac;
	uint64_t send_seq;
	uint64_t recv_seq;
	enum sup_chan_state state;
	uint32_t used_once;            /* bit per frame type already seen (ONCE types) */
	uint8_t nonce[WIRE_NONCE_LEN];

	/* What the worker reported, valid when the matching have_ flag is set. */
	bool have_identity;
	struct wire_identity claimed;
	bool have_started;
	uint32_t command_pid;
	bool have_exited;
	struct wire_exited exited;
	unsigned n_events;             /* EVENT frames accepted, at most WIRE_MAX_EVENTS */
	struct sup_probe *probes;      /* owned; at most WIRE_MAX_PROBES */
	size_t n_probes;
	bool have_error;
	uint32_t error_code;           /* errno the worker reported in ERROR */
	char error_what[WIRE_MAX_ERROR_TEXT * 4 + 1]; /* its text, escaped */

	/* The first violation: frame number (1-based), its type byte, and why. */
	bool violated;
	uint64_t violation_frame;
	int violation_type;            /* -1 when the frame never decoded */
	char violation_reason[160];
};

/*
 * Sets up ch on fd (borrowed): makes a fresh session key from getrandom, sends it as the key
 * packet, then sends CHALLENGE with a fresh nonce. Returns 0 or -errno.
 */
int sup_channel_start(struct sup_channel *ch, int fd);

/* Frees the MAC context (wiping the key) and the probes. Safe to call twice. */
void sup_channel_done(struct sup_channel *ch);

/* Sends GO. Permitted only in SUP_CHAN_ATTESTED. Returns 0 or -errno. */
int sup_channel_send_go(struct sup_channel *ch);

/*
 * Sends AUDIT with the host loopback port the probes try to reach. Permitted only in
 * SUP_CHAN_ATTESTED. Returns 0 or -errno.
 */
int sup_channel_send_audit(struct sup_channel *ch, uint16_t port);

/*
 * Receives and dispatches one frame (the fd must be readable). Returns 0 when a frame was
 * accepted, -ECONNRESET when the worker closed the channel, -EBADMSG or -EPROTO for a
 * violation (recorded in ch->violation_*), or another -errno.
 */
int sup_channel_recv(struct sup_channel *ch);

/* Records a violation that was detected outside the codec (e.g. a silent worker). */
void sup_channel_violation(struct sup_channel *ch, int type, const char *reason);

/*
 * Copies untrusted text into out (size bytes, always NUL-terminated) with everything outside
 * printable ASCII, and backslash and quote, written as \xNN; cut short when out is full.
 */
void sup_escape(const char *in, char *out, size_t size);

/* A printable name for a frame type, or "unknown". */
const char *sup_frame_name(int type);
