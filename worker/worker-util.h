/* SPDX-License-Identifier: MIT */
#pragma once

#include "wire.h"

/*
 * Reads the status file at path (the worker passes "/proc/self/status") and parses it with
 * wire_parse_status. Returns 0 or -errno; *out untouched on failure.
 */
int wrk_read_identity(const char *path, struct wire_identity *out);
