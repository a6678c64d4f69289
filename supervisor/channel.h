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

/*
 * The most descriptors the kernel attaches to one message (SCM_MAX_FD in the kernel's
 * include/net/scm.h; not exported to user space). A control buffer this large never makes the
 * kernel drop, and so close, a descriptor on our side.
 */
#define SUP_CHAN_MAX_FDS 253

/* One audit probe as the worker reported it (escaped text). */
struct sup_probe {
	char id[WIRE_MAX_PROBE_ID + 1];
	uint32_t err;
	char detail[WIRE_MAX_PROBE_TEXT * 4 + 1];
};

struct sup_channel {
	bool started;                  /* sup_channel_start ran, sup_channel_done did not */
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

	/*
	 * Descriptors that arrived on the channel (only where the kernel cannot refuse them):
	 * never closed while the sandbox lives, since the last close of a lingering socket can
	 * block; sup_channel_release_fds closes them once it is dead.
	 */
	int parked[SUP_CHAN_MAX_FDS];
	unsigned n_parked;

	/* The first violation: frame number (1-based), its type byte, and why. */
	bool violated;
	uint64_t violation_frame;
	int violation_type;            /* -1 when the frame never decoded */
	char violation_reason[160];
};

/*
 * Makes the kernel refuse descriptors sent to fd (the supervisor's end of the channel; no
 * frame type carries one): SO_PASSRIGHTS off, so a sender's sendmsg with SCM_RIGHTS fails
 * with EPERM and nothing reaches us. Call it before the worker exists: what was queued
 * earlier is still delivered. Returns 0, -ENOPROTOOPT when the kernel lacks the option (before
 * Linux 6.16: sup_channel_recv then parks what arrives), or another -errno. warden-test skips
 * it when WARDEN_TEST_NO_PASSRIGHTS is set, to exercise that fallback.
 */
int sup_channel_refuse_fds(int fd);

/*
 * Sets up ch on fd (borrowed): refuses descriptors on it (sup_channel_refuse_fds; a kernel
 * without the option is no error), makes a fresh session key from getrandom, sends it as the
 * key packet, then sends CHALLENGE with a fresh nonce. Returns 0 or -errno; either way ch
 * needs sup_channel_done in the end.
 */
int sup_channel_start(struct sup_channel *ch, int fd);

/*
 * Frees the MAC context (wiping the key) and the probes, and releases parked descriptors
 * (sup_channel_release_fds). Call it only once nothing of the sandbox runs. Safe to call twice.
 */
void sup_channel_done(struct sup_channel *ch);

/*
 * Once nothing of the sandbox runs any more: receives whatever is still queued on the channel
 * (the dead worker cannot add to it), then closes every descriptor that arrived, sockets first
 * set to abort on close (SO_LINGER {1, 0}), so that no close waits on a peer. Safe to call
 * twice, and on a channel that never started.
 */
void sup_channel_release_fds(struct sup_channel *ch);

/*
 * True when the worker's end of the channel is closed (POLLHUP), as opposed to an empty
 * datagram, which sup_channel_recv reports the same way (-ECONNRESET).
 */
bool sup_channel_peer_closed(const struct sup_channel *ch);

/* Sends GO. Permitted only in SUP_CHAN_ATTESTED. Returns 0 or -errno. */
int sup_channel_send_go(struct sup_channel *ch);

/*
 * Sends AUDIT with the host loopback port the probes try to reach. Permitted only in
 * SUP_CHAN_ATTESTED. Returns 0 or -errno.
 */
int sup_channel_send_audit(struct sup_channel *ch, uint16_t port);

/*
 * Receives and dispatches one frame (the fd must be readable). Returns 0 when a frame was
 * accepted, -ECONNRESET when the worker closed the channel or sent an empty datagram
 * (sup_channel_peer_closed tells which), -EBADMSG or -EPROTO for a violation (recorded in
 * ch->violation_*), or another -errno for a failure of our own (-EAGAIN: nothing queued,
 * -ENOMEM), which is no violation. Descriptors attached to a datagram are a violation; they
 * are parked in ch->parked, never closed here.
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
