/* SPDX-License-Identifier: MIT */
#pragma once

#include "wire.h"

/*
 * Reads the status file at path (the worker passes "/proc/self/status") and parses it with
 * wire_parse_status. Returns 0 or -errno; *out untouched on failure.
 */
int wrk_read_identity(const char *path, struct wire_identity *out);

/*
 * Audit mode: runs every probe (each in its own child) and hands each PROBE payload to
 * send(ctx, payload, len). port is the host loopback port the supervisor listens on.
 * Returns 0, or the first negative value send returned, or -EMSGSIZE.
 */
int wrk_audit(uint16_t port, int (*send)(void *ctx, const uint8_t *payload, size_t len),
	      void *ctx);
