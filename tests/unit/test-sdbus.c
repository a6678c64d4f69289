/* SPDX-License-Identifier: MIT */
/*
 * Unit tests for warden's D-Bus client of the user's systemd: the codec (sandbox/sdbus-util.c)
 * and the client (sandbox/sdscope.c) against a fake systemd in a child process.
 *
 * The codec: each getter at its bounds (exact fit, one byte short, padding that is not zero,
 * a string's missing or inner NUL, max and max + 1), outputs untouched on failure; golden
 * encodings both ways, with a truncation sweep and a bit-flip sweep of a received message;
 * the authentication lines. The golden bytes were made or checked by an independent D-Bus
 * implementation (Python's jeepney 0.8): the four received messages were serialised by it,
 * and it parsed the three written ones back to the same fields and arguments.
 *
 * The client: a fake systemd listens where sbx_sd_find looks ($XDG_RUNTIME_DIR/bus or
 * systemd/private of a temporary directory), checks what it is sent (BEGIN before the
 * authentication's answer, the calls and their arguments) and answers from a script, hostile
 * answers included; each failure must come back as its own errno.
 */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "cleanup.h"
#include "sdbus-util.h"
#include "sdscope.h"

/* ---- golden bytes ------------------------------------------------------------------------ */

static const uint8_t golden_job_removed_le[] = {
	0x6c, 0x04, 0x00, 0x01, 0x41, 0x00, 0x00, 0x00, 0x09, 0x00, 0x00, 0x00, 0x8a, 0x00, 0x00, 0x00,
	0x01, 0x01, 0x6f, 0x00, 0x19, 0x00, 0x00, 0x00, 0x2f, 0x6f, 0x72, 0x67, 0x2f, 0x66, 0x72, 0x65,
	0x65, 0x64, 0x65, 0x73, 0x6b, 0x74, 0x6f, 0x70, 0x2f, 0x73, 0x79, 0x73, 0x74, 0x65, 0x6d, 0x64,
	0x31, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x02, 0x01, 0x73, 0x00, 0x20, 0x00, 0x00, 0x00,
	0x6f, 0x72, 0x67, 0x2e, 0x66, 0x72, 0x65, 0x65, 0x64, 0x65, 0x73, 0x6b, 0x74, 0x6f, 0x70, 0x2e,
	0x73, 0x79, 0x73, 0x74, 0x65, 0x6d, 0x64, 0x31, 0x2e, 0x4d, 0x61, 0x6e, 0x61, 0x67, 0x65, 0x72,
	0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x03, 0x01, 0x73, 0x00, 0x0a, 0x00, 0x00, 0x00,
	0x4a, 0x6f, 0x62, 0x52, 0x65, 0x6d, 0x6f, 0x76, 0x65, 0x64, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
	0x07, 0x01, 0x73, 0x00, 0x04, 0x00, 0x00, 0x00, 0x3a, 0x31, 0x2e, 0x35, 0x00, 0x00, 0x00, 0x00,
	0x08, 0x01, 0x67, 0x00, 0x04, 0x75, 0x6f, 0x73, 0x73, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
	0x4d, 0x00, 0x00, 0x00, 0x20, 0x00, 0x00, 0x00, 0x2f, 0x6f, 0x72, 0x67, 0x2f, 0x66, 0x72, 0x65,
	0x65, 0x64, 0x65, 0x73, 0x6b, 0x74, 0x6f, 0x70, 0x2f, 0x73, 0x79, 0x73, 0x74, 0x65, 0x6d, 0x64,
	0x31, 0x2f, 0x6a, 0x6f, 0x62, 0x2f, 0x37, 0x37, 0x00, 0x00, 0x00, 0x00, 0x07, 0x00, 0x00, 0x00,
	0x61, 0x2e, 0x73, 0x63, 0x6f, 0x70, 0x65, 0x00, 0x04, 0x00, 0x00, 0x00, 0x64, 0x6f, 0x6e, 0x65,
	0x00,
};
static const uint8_t golden_job_removed_be[] = {
	0x42, 0x04, 0x00, 0x01, 0x00, 0x00, 0x00, 0x41, 0x00, 0x00, 0x00, 0x09, 0x00, 0x00, 0x00, 0x8a,
	0x01, 0x01, 0x6f, 0x00, 0x00, 0x00, 0x00, 0x19, 0x2f, 0x6f, 0x72, 0x67, 0x2f, 0x66, 0x72, 0x65,
	0x65, 0x64, 0x65, 0x73, 0x6b, 0x74, 0x6f, 0x70, 0x2f, 0x73, 0x79, 0x73, 0x74, 0x65, 0x6d, 0x64,
	0x31, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x02, 0x01, 0x73, 0x00, 0x00, 0x00, 0x00, 0x20,
	0x6f, 0x72, 0x67, 0x2e, 0x66, 0x72, 0x65, 0x65, 0x64, 0x65, 0x73, 0x6b, 0x74, 0x6f, 0x70, 0x2e,
	0x73, 0x79, 0x73, 0x74, 0x65, 0x6d, 0x64, 0x31, 0x2e, 0x4d, 0x61, 0x6e, 0x61, 0x67, 0x65, 0x72,
	0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x03, 0x01, 0x73, 0x00, 0x00, 0x00, 0x00, 0x0a,
	0x4a, 0x6f, 0x62, 0x52, 0x65, 0x6d, 0x6f, 0x76, 0x65, 0x64, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
	0x07, 0x01, 0x73, 0x00, 0x00, 0x00, 0x00, 0x04, 0x3a, 0x31, 0x2e, 0x35, 0x00, 0x00, 0x00, 0x00,
	0x08, 0x01, 0x67, 0x00, 0x04, 0x75, 0x6f, 0x73, 0x73, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
	0x00, 0x00, 0x00, 0x4d, 0x00, 0x00, 0x00, 0x20, 0x2f, 0x6f, 0x72, 0x67, 0x2f, 0x66, 0x72, 0x65,
	0x65, 0x64, 0x65, 0x73, 0x6b, 0x74, 0x6f, 0x70, 0x2f, 0x73, 0x79, 0x73, 0x74, 0x65, 0x6d, 0x64,
	0x31, 0x2f, 0x6a, 0x6f, 0x62, 0x2f, 0x37, 0x37, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x07,
	0x61, 0x2e, 0x73, 0x63, 0x6f, 0x70, 0x65, 0x00, 0x00, 0x00, 0x00, 0x04, 0x64, 0x6f, 0x6e, 0x65,
	0x00,
};
static const uint8_t golden_error_be[] = {
	0x42, 0x03, 0x00, 0x01, 0x00, 0x00, 0x00, 0x21, 0x00, 0x00, 0x00, 0x0b, 0x00, 0x00, 0x00, 0x3f,
	0x04, 0x01, 0x73, 0x00, 0x00, 0x00, 0x00, 0x23, 0x6f, 0x72, 0x67, 0x2e, 0x66, 0x72, 0x65, 0x65,
	0x64, 0x65, 0x73, 0x6b, 0x74, 0x6f, 0x70, 0x2e, 0x73, 0x79, 0x73, 0x74, 0x65, 0x6d, 0x64, 0x31,
	0x2e, 0x55, 0x6e, 0x69, 0x74, 0x45, 0x78, 0x69, 0x73, 0x74, 0x73, 0x00, 0x00, 0x00, 0x00, 0x00,
	0x05, 0x01, 0x75, 0x00, 0x00, 0x00, 0x00, 0x05, 0x08, 0x01, 0x67, 0x00, 0x01, 0x73, 0x00, 0x00,
	0x00, 0x00, 0x00, 0x1c, 0x55, 0x6e, 0x69, 0x74, 0x20, 0x61, 0x2e, 0x73, 0x63, 0x6f, 0x70, 0x65,
	0x20, 0x61, 0x6c, 0x72, 0x65, 0x61, 0x64, 0x79, 0x20, 0x65, 0x78, 0x69, 0x73, 0x74, 0x73, 0x2e,
	0x00,
};
static const uint8_t golden_get_bool_le[] = {
	0x6c, 0x02, 0x00, 0x01, 0x08, 0x00, 0x00, 0x00, 0x0c, 0x00, 0x00, 0x00, 0x0f, 0x00, 0x00, 0x00,
	0x05, 0x01, 0x75, 0x00, 0x04, 0x00, 0x00, 0x00, 0x08, 0x01, 0x67, 0x00, 0x01, 0x76, 0x00, 0x00,
	0x01, 0x62, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00,
};
static const uint8_t golden_build_hello[] = {
	0x6c, 0x01, 0x00, 0x01, 0x00, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x6d, 0x00, 0x00, 0x00,
	0x01, 0x01, 0x6f, 0x00, 0x15, 0x00, 0x00, 0x00, 0x2f, 0x6f, 0x72, 0x67, 0x2f, 0x66, 0x72, 0x65,
	0x65, 0x64, 0x65, 0x73, 0x6b, 0x74, 0x6f, 0x70, 0x2f, 0x44, 0x42, 0x75, 0x73, 0x00, 0x00, 0x00,
	0x02, 0x01, 0x73, 0x00, 0x14, 0x00, 0x00, 0x00, 0x6f, 0x72, 0x67, 0x2e, 0x66, 0x72, 0x65, 0x65,
	0x64, 0x65, 0x73, 0x6b, 0x74, 0x6f, 0x70, 0x2e, 0x44, 0x42, 0x75, 0x73, 0x00, 0x00, 0x00, 0x00,
	0x03, 0x01, 0x73, 0x00, 0x05, 0x00, 0x00, 0x00, 0x48, 0x65, 0x6c, 0x6c, 0x6f, 0x00, 0x00, 0x00,
	0x06, 0x01, 0x73, 0x00, 0x14, 0x00, 0x00, 0x00, 0x6f, 0x72, 0x67, 0x2e, 0x66, 0x72, 0x65, 0x65,
	0x64, 0x65, 0x73, 0x6b, 0x74, 0x6f, 0x70, 0x2e, 0x44, 0x42, 0x75, 0x73, 0x00, 0x00, 0x00, 0x00,
};
static const uint8_t golden_build_getprop[] = {
	0x6c, 0x01, 0x00, 0x01, 0x31, 0x00, 0x00, 0x00, 0x04, 0x00, 0x00, 0x00, 0xa0, 0x00, 0x00, 0x00,
	0x01, 0x01, 0x6f, 0x00, 0x28, 0x00, 0x00, 0x00, 0x2f, 0x6f, 0x72, 0x67, 0x2f, 0x66, 0x72, 0x65,
	0x65, 0x64, 0x65, 0x73, 0x6b, 0x74, 0x6f, 0x70, 0x2f, 0x73, 0x79, 0x73, 0x74, 0x65, 0x6d, 0x64,
	0x31, 0x2f, 0x75, 0x6e, 0x69, 0x74, 0x2f, 0x61, 0x5f, 0x32, 0x65, 0x73, 0x63, 0x6f, 0x70, 0x65,
	0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x02, 0x01, 0x73, 0x00, 0x1f, 0x00, 0x00, 0x00,
	0x6f, 0x72, 0x67, 0x2e, 0x66, 0x72, 0x65, 0x65, 0x64, 0x65, 0x73, 0x6b, 0x74, 0x6f, 0x70, 0x2e,
	0x44, 0x42, 0x75, 0x73, 0x2e, 0x50, 0x72, 0x6f, 0x70, 0x65, 0x72, 0x74, 0x69, 0x65, 0x73, 0x00,
	0x03, 0x01, 0x73, 0x00, 0x03, 0x00, 0x00, 0x00, 0x47, 0x65, 0x74, 0x00, 0x00, 0x00, 0x00, 0x00,
	0x06, 0x01, 0x73, 0x00, 0x18, 0x00, 0x00, 0x00, 0x6f, 0x72, 0x67, 0x2e, 0x66, 0x72, 0x65, 0x65,
	0x64, 0x65, 0x73, 0x6b, 0x74, 0x6f, 0x70, 0x2e, 0x73, 0x79, 0x73, 0x74, 0x65, 0x6d, 0x64, 0x31,
	0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x08, 0x01, 0x67, 0x00, 0x02, 0x73, 0x73, 0x00,
	0x1e, 0x00, 0x00, 0x00, 0x6f, 0x72, 0x67, 0x2e, 0x66, 0x72, 0x65, 0x65, 0x64, 0x65, 0x73, 0x6b,
	0x74, 0x6f, 0x70, 0x2e, 0x73, 0x79, 0x73, 0x74, 0x65, 0x6d, 0x64, 0x31, 0x2e, 0x53, 0x63, 0x6f,
	0x70, 0x65, 0x00, 0x00, 0x08, 0x00, 0x00, 0x00, 0x44, 0x65, 0x6c, 0x65, 0x67, 0x61, 0x74, 0x65,
	0x00,
};
static const uint8_t golden_build_start[] = {
	0x6c, 0x01, 0x00, 0x01, 0xd8, 0x00, 0x00, 0x00, 0x05, 0x00, 0x00, 0x00, 0xb6, 0x00, 0x00, 0x00,
	0x01, 0x01, 0x6f, 0x00, 0x19, 0x00, 0x00, 0x00, 0x2f, 0x6f, 0x72, 0x67, 0x2f, 0x66, 0x72, 0x65,
	0x65, 0x64, 0x65, 0x73, 0x6b, 0x74, 0x6f, 0x70, 0x2f, 0x73, 0x79, 0x73, 0x74, 0x65, 0x6d, 0x64,
	0x31, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x02, 0x01, 0x73, 0x00, 0x20, 0x00, 0x00, 0x00,
	0x6f, 0x72, 0x67, 0x2e, 0x66, 0x72, 0x65, 0x65, 0x64, 0x65, 0x73, 0x6b, 0x74, 0x6f, 0x70, 0x2e,
	0x73, 0x79, 0x73, 0x74, 0x65, 0x6d, 0x64, 0x31, 0x2e, 0x4d, 0x61, 0x6e, 0x61, 0x67, 0x65, 0x72,
	0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x03, 0x01, 0x73, 0x00, 0x12, 0x00, 0x00, 0x00,
	0x53, 0x74, 0x61, 0x72, 0x74, 0x54, 0x72, 0x61, 0x6e, 0x73, 0x69, 0x65, 0x6e, 0x74, 0x55, 0x6e,
	0x69, 0x74, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x06, 0x01, 0x73, 0x00, 0x18, 0x00, 0x00, 0x00,
	0x6f, 0x72, 0x67, 0x2e, 0x66, 0x72, 0x65, 0x65, 0x64, 0x65, 0x73, 0x6b, 0x74, 0x6f, 0x70, 0x2e,
	0x73, 0x79, 0x73, 0x74, 0x65, 0x6d, 0x64, 0x31, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
	0x08, 0x01, 0x67, 0x00, 0x10, 0x73, 0x73, 0x61, 0x28, 0x73, 0x76, 0x29, 0x61, 0x28, 0x73, 0x61,
	0x28, 0x73, 0x76, 0x29, 0x29, 0x00, 0x00, 0x00, 0x20, 0x00, 0x00, 0x00, 0x77, 0x61, 0x72, 0x64,
	0x65, 0x6e, 0x2d, 0x73, 0x63, 0x6f, 0x70, 0x65, 0x2d, 0x34, 0x32, 0x34, 0x32, 0x2d, 0x30, 0x30,
	0x30, 0x30, 0x61, 0x62, 0x63, 0x64, 0x2e, 0x73, 0x63, 0x6f, 0x70, 0x65, 0x00, 0x00, 0x00, 0x00,
	0x04, 0x00, 0x00, 0x00, 0x66, 0x61, 0x69, 0x6c, 0x00, 0x00, 0x00, 0x00, 0x98, 0x00, 0x00, 0x00,
	0x0b, 0x00, 0x00, 0x00, 0x44, 0x65, 0x73, 0x63, 0x72, 0x69, 0x70, 0x74, 0x69, 0x6f, 0x6e, 0x00,
	0x01, 0x73, 0x00, 0x00, 0x1c, 0x00, 0x00, 0x00, 0x77, 0x61, 0x72, 0x64, 0x65, 0x6e, 0x20, 0x73,
	0x75, 0x70, 0x65, 0x72, 0x76, 0x69, 0x73, 0x6f, 0x72, 0x20, 0x28, 0x70, 0x69, 0x64, 0x20, 0x34,
	0x32, 0x34, 0x32, 0x29, 0x00, 0x00, 0x00, 0x00, 0x0b, 0x00, 0x00, 0x00, 0x43, 0x6f, 0x6c, 0x6c,
	0x65, 0x63, 0x74, 0x4d, 0x6f, 0x64, 0x65, 0x00, 0x01, 0x73, 0x00, 0x00, 0x12, 0x00, 0x00, 0x00,
	0x69, 0x6e, 0x61, 0x63, 0x74, 0x69, 0x76, 0x65, 0x2d, 0x6f, 0x72, 0x2d, 0x66, 0x61, 0x69, 0x6c,
	0x65, 0x64, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x08, 0x00, 0x00, 0x00, 0x44, 0x65, 0x6c, 0x65,
	0x67, 0x61, 0x74, 0x65, 0x00, 0x01, 0x62, 0x00, 0x01, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
	0x04, 0x00, 0x00, 0x00, 0x50, 0x49, 0x44, 0x73, 0x00, 0x02, 0x61, 0x75, 0x00, 0x00, 0x00, 0x00,
	0x04, 0x00, 0x00, 0x00, 0x92, 0x10, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
};

/* ---- the reader's getters ---------------------------------------------------------------- */

static struct sdbus_rd rd_at(const uint8_t *msg, size_t pos, size_t end, bool be)
{
	return (struct sdbus_rd){ .msg = msg, .pos = pos, .end = end, .big_endian = be };
}

/* A failed getter leaves the cursor as it was. */
static void assert_unmoved(const struct sdbus_rd *r, const struct sdbus_rd *before)
{
	assert_ptr_equal(r->msg, before->msg);
	assert_int_equal(r->pos, before->pos);
	assert_int_equal(r->end, before->end);
}

static void test_get_u32_bounds(void **state)
{
	(void)state;
	static const uint8_t le[] = { 0x01, 0x02, 0x03, 0x04, 0xff };
	static const uint8_t be[] = { 0x01, 0x02, 0x03, 0x04 };
	/* from 1: three bytes of padding to 4, then the value */
	static const uint8_t padded[] = { 0xee, 0x00, 0x00, 0x00, 0x2a, 0x00, 0x00, 0x00 };
	static const uint8_t dirty[] = { 0xee, 0x00, 0x07, 0x00, 0x2a, 0x00, 0x00, 0x00 };
	uint32_t v = 0x5a5a5a5a;
	struct sdbus_rd r = rd_at(le, 0, 4, false), before;
	assert_true(sdbus_get_u32(&r, &v));
	assert_int_equal(v, 0x04030201);
	assert_true(sdbus_done(&r));
	r = rd_at(be, 0, 4, true);
	assert_true(sdbus_get_u32(&r, &v));
	assert_int_equal(v, 0x01020304);
	for (size_t end = 0; end < 4; end++) {
		r = before = rd_at(le, 0, end, false);
		v = 0x5a5a5a5a;
		assert_false(sdbus_get_u32(&r, &v));
		assert_int_equal(v, 0x5a5a5a5a);
		assert_unmoved(&r, &before);
	}
	r = rd_at(padded, 1, sizeof(padded), false);
	assert_true(sdbus_get_u32(&r, &v));
	assert_int_equal(v, 42);
	r = before = rd_at(dirty, 1, sizeof(dirty), false);
	assert_false(sdbus_get_u32(&r, &v));
	assert_unmoved(&r, &before);
}

static void test_get_bool(void **state)
{
	(void)state;
	static const uint8_t vals[3][4] = { { 0 }, { 1 }, { 2 } };
	bool b = true;
	struct sdbus_rd r = rd_at(vals[0], 0, 4, false), before;
	assert_true(sdbus_get_bool(&r, &b));
	assert_false(b);
	r = rd_at(vals[1], 0, 4, false);
	assert_true(sdbus_get_bool(&r, &b));
	assert_true(b);
	r = before = rd_at(vals[2], 0, 4, false);
	assert_false(sdbus_get_bool(&r, &b));
	assert_true(b);
	assert_unmoved(&r, &before);
}

/* A string of n bytes 'x' as the wire has it, in a new buffer; *out_len its length. */
static uint8_t *wire_string(size_t n, size_t *out_len)
{
	uint8_t *b = calloc(1, n + 5);
	assert_non_null(b);
	b[0] = (uint8_t)n;
	b[1] = (uint8_t)(n >> 8);
	b[2] = (uint8_t)(n >> 16);
	b[3] = (uint8_t)(n >> 24);
	memset(b + 4, 'x', n);
	*out_len = n + 5;
	return b;
}

static void test_get_str_bounds(void **state)
{
	(void)state;
	static const uint8_t abc[] = { 3, 0, 0, 0, 'a', 'b', 'c', 0 };
	static const uint8_t unterminated[] = { 3, 0, 0, 0, 'a', 'b', 'c', 'd' };
	static const uint8_t inner_nul[] = { 3, 0, 0, 0, 'a', 0, 'c', 0 };
	struct sdbus_str s = { "untouched", 9 };
	struct sdbus_rd r = rd_at(abc, 0, sizeof(abc), false), before;
	assert_true(sdbus_get_str(&r, &s));
	assert_true(sdbus_str_is(s, "abc"));
	assert_true(sdbus_done(&r));
	for (size_t end = 0; end < sizeof(abc); end++) {
		r = before = rd_at(abc, 0, end, false);
		s = (struct sdbus_str){ "untouched", 9 };
		assert_false(sdbus_get_str(&r, &s));
		assert_true(sdbus_str_is(s, "untouched"));
		assert_unmoved(&r, &before);
	}
	r = rd_at(unterminated, 0, sizeof(unterminated), false);
	assert_false(sdbus_get_str(&r, &s));
	r = rd_at(inner_nul, 0, sizeof(inner_nul), false);
	assert_false(sdbus_get_str(&r, &s));

	size_t len;
	_cleanup_free_ uint8_t *max = wire_string(SDBUS_STR_MAX, &len);
	r = rd_at(max, 0, len, false);
	assert_true(sdbus_get_str(&r, &s));
	assert_int_equal(s.len, SDBUS_STR_MAX);
	_cleanup_free_ uint8_t *over = wire_string(SDBUS_STR_MAX + 1, &len);
	r = before = rd_at(over, 0, len, false);
	assert_false(sdbus_get_str(&r, &s));
	assert_unmoved(&r, &before);
	/* skipping has no such limit: only the message's own bounds */
	r = rd_at(over, 0, len, false);
	assert_true(sdbus_skip(&r, "s", 1));
	assert_true(sdbus_done(&r));
}

/* Whether the signature sig (as text) is accepted by sdbus_get_sig. */
static bool sig_ok(const char *sig)
{
	uint8_t b[300];
	size_t n = strlen(sig);
	assert_true(n + 2 <= sizeof(b));
	b[0] = (uint8_t)n;
	memcpy(b + 1, sig, n + 1);
	struct sdbus_rd r = rd_at(b, 0, n + 2, false);
	struct sdbus_str s;
	bool ok = sdbus_get_sig(&r, &s);
	if (ok)
		assert_true(sdbus_str_is(s, sig) && sdbus_done(&r));
	return ok;
}

static void test_get_sig(void **state)
{
	(void)state;
	char deep[40];
	assert_true(sig_ok(""));
	assert_true(sig_ok("uoss"));
	assert_true(sig_ok("ssa(sv)a(sa(sv))"));
	assert_true(sig_ok("sa{sv}as"));
	assert_false(sig_ok("a"));
	assert_false(sig_ok("("));
	assert_false(sig_ok("()"));
	assert_false(sig_ok("(s"));
	assert_false(sig_ok("a{vs}"));  /* a dict's key is a basic type */
	assert_false(sig_ok("a{sss}")); /* and one value */
	assert_false(sig_ok("{sv}"));   /* only inside an array */
	assert_false(sig_ok("z"));
	/* containers nested SDBUS_DEPTH_MAX deep, and one more */
	memset(deep, 'a', SDBUS_DEPTH_MAX);
	deep[SDBUS_DEPTH_MAX] = 'y';
	deep[SDBUS_DEPTH_MAX + 1] = '\0';
	assert_true(sig_ok(deep));
	memset(deep, 'a', SDBUS_DEPTH_MAX + 1);
	deep[SDBUS_DEPTH_MAX + 1] = 'y';
	deep[SDBUS_DEPTH_MAX + 2] = '\0';
	assert_false(sig_ok(deep));
	/* the length byte says one more than there is */
	static const uint8_t short_sig[] = { 2, 's', 0 };
	struct sdbus_rd r = rd_at(short_sig, 0, sizeof(short_sig), false);
	struct sdbus_str s;
	assert_false(sdbus_get_sig(&r, &s));
}

static void test_get_array(void **state)
{
	(void)state;
	/* at(x): length 8, padding to 8, one element */
	static const uint8_t at[] = { 8, 0, 0, 0, 0, 0, 0, 0, 1, 2, 3, 4, 5, 6, 7, 8 };
	static const uint8_t dirty[] = { 8, 0, 0, 0, 0, 9, 0, 0, 1, 2, 3, 4, 5, 6, 7, 8 };
	/* an empty array still has its padding */
	static const uint8_t empty[] = { 0, 0, 0, 0, 0, 0, 0, 0 };
	struct sdbus_rd r = rd_at(at, 0, sizeof(at), false), sub, before;
	assert_true(sdbus_get_array(&r, 8, &sub));
	assert_int_equal(sub.pos, 8);
	assert_int_equal(sub.end, 16);
	assert_ptr_equal(sub.msg, at);
	assert_true(sdbus_done(&r));
	for (size_t end = 0; end < sizeof(at); end++) {
		r = before = rd_at(at, 0, end, false);
		assert_false(sdbus_get_array(&r, 8, &sub));
		assert_unmoved(&r, &before);
	}
	r = rd_at(dirty, 0, sizeof(dirty), false);
	assert_false(sdbus_get_array(&r, 8, &sub));
	r = rd_at(empty, 0, sizeof(empty), false);
	assert_true(sdbus_get_array(&r, 8, &sub));
	assert_true(sdbus_done(&sub) && sdbus_done(&r));
	r = rd_at(empty, 0, 4, false);
	assert_false(sdbus_get_array(&r, 8, &sub));
}

static void test_skip(void **state)
{
	(void)state;
	/* (s v:u): "ab", variant u 7; then 'h', which no file descriptors allow */
	static const uint8_t sv[] = { 2, 0, 0, 0, 'a', 'b', 0, 1, 'u', 0, 0, 0, 7, 0, 0, 0 };
	struct sdbus_rd r = rd_at(sv, 0, sizeof(sv), false), before;
	assert_true(sdbus_skip(&r, "(sv)", 4));
	assert_true(sdbus_done(&r));
	r = before = rd_at(sv, 0, sizeof(sv) - 1, false);
	assert_false(sdbus_skip(&r, "(sv)", 4));
	assert_unmoved(&r, &before);
	r = rd_at(sv, 0, sizeof(sv), false);
	assert_false(sdbus_skip(&r, "(sv", 3));  /* no single complete type */
	assert_false(sdbus_skip(&r, "ss", 2));   /* two */
	assert_false(sdbus_skip(&r, "h", 1));
	/* a variant holding more than one complete type */
	static const uint8_t two[] = { 2, 'u', 'u', 0, 1, 0, 0, 0, 2, 0, 0, 0 };
	r = rd_at(two, 0, sizeof(two), false);
	assert_false(sdbus_skip(&r, "v", 1));
	/* sdbus_get_variant wants exactly the type asked for */
	static const uint8_t vb[] = { 1, 'b', 0, 0, 1, 0, 0, 0 };
	bool b = false;
	r = rd_at(vb, 0, sizeof(vb), false);
	assert_false(sdbus_get_variant(&r, "u"));
	assert_true(sdbus_get_variant(&r, "b") && sdbus_get_bool(&r, &b) && b);
}

/* ---- golden messages --------------------------------------------------------------------- */

struct golden {
	const uint8_t *p;
	size_t len;
};

#define GOLDEN(x) { x, sizeof(x) }

static const struct golden received[] = {
	GOLDEN(golden_job_removed_le),
	GOLDEN(golden_job_removed_be),
	GOLDEN(golden_error_be),
	GOLDEN(golden_get_bool_le),
};

static void test_parse_golden(void **state)
{
	(void)state;
	struct sdbus_msg m;
	struct sdbus_str a, b;
	for (int i = 0; i < 2; i++) {
		const struct golden *g = &received[i];
		assert_int_equal(sdbus_msg_parse(g->p, g->len, &m), 0);
		assert_int_equal(m.big_endian, i == 1);
		assert_int_equal(m.type, SDBUS_SIGNAL);
		assert_int_equal(m.serial, 9);
		assert_true(sdbus_str_is(m.sender, ":1.5"));
		assert_true(sdbus_str_is(m.path, "/org/freedesktop/systemd1"));
		assert_int_equal(sdbus_read_job_removed(&m, &a, &b), 0);
		assert_true(sdbus_str_is(a, "a.scope") && sdbus_str_is(b, "done"));
		assert_int_equal(sdbus_read_error(&m, &a, &b), -EBADMSG);
	}
	assert_int_equal(sdbus_msg_parse(golden_error_be, sizeof(golden_error_be), &m), 0);
	assert_int_equal(m.type, SDBUS_ERROR);
	assert_int_equal(m.reply_serial, 5);
	assert_int_equal(sdbus_read_error(&m, &a, &b), 0);
	assert_true(sdbus_str_is(a, "org.freedesktop.systemd1.UnitExists"));
	assert_true(sdbus_str_is(b, "Unit a.scope already exists."));
	assert_int_equal(sdbus_read_job_removed(&m, &a, &b), -EBADMSG);

	assert_int_equal(sdbus_msg_parse(golden_get_bool_le, sizeof(golden_get_bool_le), &m), 0);
	struct sdbus_rd r;
	bool v = false;
	assert_int_equal(sdbus_body(&m, "s", &r), -EBADMSG);
	assert_int_equal(sdbus_body(&m, "v", &r), 0);
	assert_true(sdbus_get_variant(&r, "b") && sdbus_get_bool(&r, &v) && v && sdbus_done(&r));
}

static void test_truncation_sweep(void **state)
{
	(void)state;
	for (size_t i = 0; i < ELEMENTSOF(received); i++) {
		const struct golden *g = &received[i];
		for (size_t n = 0; n < g->len; n++) {
			struct sdbus_msg m;
			memset(&m, 0x5a, sizeof(m));
			assert_int_equal(sdbus_msg_parse(g->p, n, &m), -EBADMSG);
			assert_int_equal(m.serial, 0x5a5a5a5a);
			size_t want = 0;
			if (n >= SDBUS_FIXED_LEN) {
				assert_int_equal(sdbus_msg_length(g->p, &want), 0);
				assert_int_equal(want, g->len);
			}
		}
	}
}

static void test_bitflip_sweep(void **state)
{
	(void)state;
	const struct golden *g = &received[0];
	uint8_t copy[sizeof(golden_job_removed_le)];
	for (size_t i = 0; i < g->len; i++) {
		for (int bit = 0; bit < 8; bit++) {
			memcpy(copy, g->p, g->len);
			copy[i] ^= (uint8_t)(1u << bit);
			struct sdbus_msg m;
			int r = sdbus_msg_parse(copy, g->len, &m);
			if (i == 0 || i == 1 || i == 3) /* byte order, type (4), version */
				assert_int_equal(r, -EBADMSG);
			else if ((i >= 4 && i < 8) || (i >= 12 && i < 16)) /* the two lengths */
				assert_true(r == -EBADMSG || r == -EMSGSIZE);
			else
				assert_true(r == 0 || r == -EBADMSG);
			if (r == 0) {
				struct sdbus_str a, b;
				int k = sdbus_read_job_removed(&m, &a, &b);
				assert_true(k == 0 || k == -EBADMSG);
			}
		}
	}
}

static void test_msg_length(void **state)
{
	(void)state;
	uint8_t f[SDBUS_FIXED_LEN] = { 'l', 2, 0, 1 };
	size_t len = 77;
	/* body SDBUS_MSG_MAX - 16 (little-endian), no fields: exactly the limit; one more is over */
	uint32_t body = SDBUS_MSG_MAX - SDBUS_FIXED_LEN;
	for (int i = 0; i < 4; i++)
		f[4 + i] = (uint8_t)(body >> (8 * i));
	assert_int_equal(sdbus_msg_length(f, &len), 0);
	assert_int_equal(len, SDBUS_MSG_MAX);
	f[4] = (uint8_t)(body + 1);
	len = 77;
	assert_int_equal(sdbus_msg_length(f, &len), -EMSGSIZE);
	assert_int_equal(len, 77);
	/* the largest lengths the fields can say do not wrap */
	memset(f + 4, 0xff, 4);
	memset(f + 12, 0xff, 4);
	assert_int_equal(sdbus_msg_length(f, &len), -EMSGSIZE);
	f[0] = 'x';
	assert_int_equal(sdbus_msg_length(f, &len), -EBADMSG);
	f[0] = 'B';
	f[3] = 2;
	assert_int_equal(sdbus_msg_length(f, &len), -EBADMSG);
}

/* ---- the writer -------------------------------------------------------------------------- */

#define UNIT "warden-scope-4242-0000abcd.scope"
#define DESC "warden supervisor (pid 4242)"
#define UNIT_PATH "/org/freedesktop/systemd1/unit/a_2escope"

static void test_build_golden(void **state)
{
	(void)state;
	uint8_t buf[1024];
	size_t len = 0;
	assert_int_equal(sdbus_build_hello(buf, sizeof(buf), 1, &len), 0);
	assert_int_equal(len, sizeof(golden_build_hello));
	assert_memory_equal(buf, golden_build_hello, len);
	assert_int_equal(sdbus_build_get_property(buf, sizeof(buf), 4, UNIT_PATH,
						  "org.freedesktop.systemd1.Scope", "Delegate", &len),
			 0);
	assert_int_equal(len, sizeof(golden_build_getprop));
	assert_memory_equal(buf, golden_build_getprop, len);
	assert_int_equal(sdbus_build_start_scope(buf, sizeof(buf), 5, UNIT, 4242, DESC, &len), 0);
	assert_int_equal(len, sizeof(golden_build_start));
	assert_memory_equal(buf, golden_build_start, len);
	/* every buffer too small by any amount: -ENOBUFS, and the length untouched */
	for (size_t cap = 0; cap < sizeof(golden_build_start); cap++) {
		size_t l = 77;
		assert_int_equal(sdbus_build_start_scope(buf, cap, 5, UNIT, 4242, DESC, &l),
				 -ENOBUFS);
		assert_int_equal(l, 77);
	}
	_cleanup_free_ char *big = malloc(SDBUS_STR_MAX + 2);
	assert_non_null(big);
	memset(big, 'x', SDBUS_STR_MAX + 1);
	big[SDBUS_STR_MAX + 1] = '\0';
	assert_int_equal(sdbus_build_start_scope(buf, sizeof(buf), 5, big, 4242, DESC, &len),
			 -EINVAL);
	assert_int_equal(sdbus_build_add_match(buf, sizeof(buf), 2, big, &len), -EINVAL);
}

/* What the writer wrote, read back by the reader: the scope request's every argument. */
static void test_build_reads_back(void **state)
{
	(void)state;
	uint8_t buf[1024];
	size_t len;
	struct sdbus_msg m;
	struct sdbus_rd r, props, pids, aux;
	struct sdbus_str s;
	uint32_t pid = 0;
	bool delegate = false;
	int seen = 0;
	assert_int_equal(sdbus_build_start_scope(buf, sizeof(buf), 5, UNIT, 4242, DESC, &len), 0);
	assert_int_equal(sdbus_msg_parse(buf, len, &m), 0);
	assert_int_equal(m.type, SDBUS_CALL);
	assert_true(sdbus_str_is(m.destination, "org.freedesktop.systemd1"));
	assert_true(sdbus_str_is(m.interface, "org.freedesktop.systemd1.Manager"));
	assert_true(sdbus_str_is(m.member, "StartTransientUnit"));
	assert_int_equal(sdbus_body(&m, "ssa(sv)a(sa(sv))", &r), 0);
	assert_true(sdbus_get_str(&r, &s) && sdbus_str_is(s, UNIT));
	assert_true(sdbus_get_str(&r, &s) && sdbus_str_is(s, "fail"));
	assert_true(sdbus_get_array(&r, 8, &props));
	while (!sdbus_done(&props)) {
		assert_true(sdbus_get_struct(&props) && sdbus_get_str(&props, &s));
		seen++;
		if (sdbus_str_is(s, "Delegate")) {
			assert_true(sdbus_get_variant(&props, "b") && sdbus_get_bool(&props, &delegate));
		} else if (sdbus_str_is(s, "PIDs")) {
			assert_true(sdbus_get_variant(&props, "au") &&
				    sdbus_get_array(&props, 4, &pids) && sdbus_get_u32(&pids, &pid) &&
				    sdbus_done(&pids));
		} else if (sdbus_str_is(s, "Description")) {
			assert_true(sdbus_get_variant(&props, "s") && sdbus_get_str(&props, &s) &&
				    sdbus_str_is(s, DESC));
		} else {
			assert_true(sdbus_str_is(s, "CollectMode"));
			assert_true(sdbus_get_variant(&props, "s") && sdbus_get_str(&props, &s) &&
				    sdbus_str_is(s, "inactive-or-failed"));
		}
	}
	assert_int_equal(seen, 4);
	assert_true(delegate);
	assert_int_equal(pid, 4242);
	assert_true(sdbus_get_array(&r, 8, &aux) && sdbus_done(&aux) && sdbus_done(&r));
}

/* ---- authentication ---------------------------------------------------------------------- */

static void test_auth(void **state)
{
	(void)state;
	char buf[64];
	size_t len = 0;
	assert_int_equal(sdbus_auth_line(1000, buf, sizeof(buf), &len), 0);
	assert_int_equal(len, strlen("AUTH EXTERNAL 31303030\r\n"));
	assert_memory_equal(buf, "AUTH EXTERNAL 31303030\r\n", len);
	assert_int_equal(sdbus_auth_line(0, buf, sizeof(buf), &len), 0);
	assert_memory_equal(buf, "AUTH EXTERNAL 30\r\n", len);
	assert_int_equal(sdbus_auth_line(1000, buf, 10, &len), -ENOBUFS);

	static const struct {
		const char *line;
		int r;
	} cases[] = {
		{ "OK 0123456789abcdef0123456789ABCDEF", 0 },
		{ "OK 0123456789abcdef0123456789ABCDE", -EBADMSG },   /* 31 digits */
		{ "OK 0123456789abcdef0123456789ABCDEF0", -EBADMSG }, /* 33 */
		{ "OK 0123456789abcdef0123456789ABCDEG", -EBADMSG },
		{ "OK", -EBADMSG },
		{ "REJECTED EXTERNAL", -EACCES },
		{ "REJECTED", -EACCES },
		{ "REJECTEDX", -EBADMSG },
		{ "DATA", -EBADMSG },
		{ "ERROR", -EBADMSG },
		{ "OK 0123456789abcdef\t123456789ABCDEF", -EBADMSG },
		{ "", -EBADMSG },
	};
	for (size_t i = 0; i < ELEMENTSOF(cases); i++)
		assert_int_equal(sdbus_auth_reply(cases[i].line, strlen(cases[i].line)), cases[i].r);
	char long_line[SDBUS_AUTH_LINE_MAX + 2];
	memset(long_line, 'R', sizeof(long_line));
	memcpy(long_line, "REJECTED ", 9);
	assert_int_equal(sdbus_auth_reply(long_line, SDBUS_AUTH_LINE_MAX), -EACCES);
	assert_int_equal(sdbus_auth_reply(long_line, SDBUS_AUTH_LINE_MAX + 1), -EBADMSG);
}

/* ---- the client against a fake systemd --------------------------------------------------- */

/* What a fake systemd does after authentication; it runs in a child, which exits 0 when every
 * expectation held. */
enum fake_script {
	FAKE_SCOPE_DONE,       /* noise, the answer, another unit's job, then ours: done */
	FAKE_SCOPE_JOB_FIRST,  /* our job's end before the answer */
	FAKE_SCOPE_FAILED,     /* the job ends "failed" */
	FAKE_SCOPE_EXISTS,     /* an error answer: UnitExists */
	FAKE_SCOPE_DENIED,     /* an error answer: AccessDenied */
	FAKE_SCOPE_HANGUP,     /* reads the call, hangs up */
	FAKE_SCOPE_OVERSIZE,   /* a header that says 2 MiB */
	FAKE_SCOPE_MALFORMED,  /* a message of protocol version 2 */
	FAKE_SCOPE_FLOOD,      /* the answer, then signals without end */
	FAKE_AUTH_REJECTED,    /* REJECTED for AUTH EXTERNAL */
	FAKE_PEER_CLOSES,      /* closes before the authentication's answer */
	FAKE_DELEGATED_YES,    /* a scope with Delegate=yes */
	FAKE_DELEGATED_SLICE,  /* a slice: no Delegate property is asked for */
};

#define FAKE_UNIT "warden-scope-1-00000001.scope"
#define FAKE_UNIT_PATH "/org/freedesktop/systemd1/unit/warden_2dscope_2d1_2d00000001_2escope"

struct fake {
	char dir[64];        /* $XDG_RUNTIME_DIR */
	char sock[100];
	int listen_fd;
	pid_t pid;
};

static int fake_read(int fd, void *buf, size_t len)
{
	uint8_t *b = buf;
	while (len) {
		ssize_t n = read(fd, b, len);
		if (n <= 0)
			return -1;
		b += n;
		len -= (size_t)n;
	}
	return 0;
}

static int fake_write(int fd, const void *buf, size_t len)
{
	return send(fd, buf, len, MSG_NOSIGNAL) == (ssize_t)len ? 0 : -1;
}

/* Reads one message into buf (SDBUS_MSG_MAX) and parses it. */
static int fake_recv(int fd, uint8_t *buf, struct sdbus_msg *m)
{
	size_t len;
	if (fake_read(fd, buf, SDBUS_FIXED_LEN) < 0 || sdbus_msg_length(buf, &len) < 0 ||
	    fake_read(fd, buf + SDBUS_FIXED_LEN, len - SDBUS_FIXED_LEN) < 0)
		return -1;
	return sdbus_msg_parse(buf, len, m) == 0 && m->type == SDBUS_CALL ? 0 : -1;
}

/* What a body holds: a string, an object path, a variant of a string or a bool, or nothing. */
struct fake_body {
	char kind; /* 's', 'o', 'S' (v of s), 'B' (v of b), 0 */
	const char *str;
	bool flag;
};

/*
 * A message as systemd or the bus would send it: type, serial, reply serial (0: none), the
 * error name, path, interface and member (NULL: absent), and the body.
 */
static int fake_send(int fd, uint8_t type, uint32_t serial, uint32_t reply_serial,
		     const char *error, const char *path, const char *iface, const char *member,
		     const char *sig, void (*body)(struct sdbus_wr *w, const void *arg),
		     const void *arg)
{
	uint8_t buf[1024];
	struct sdbus_wr w;
	struct sdbus_arr fields;
	sdbus_wr_init(&w, buf, sizeof(buf));
	sdbus_put_u8(&w, 'l');
	sdbus_put_u8(&w, type);
	sdbus_put_u8(&w, 0);
	sdbus_put_u8(&w, 1);
	sdbus_put_u32(&w, 0);
	sdbus_put_u32(&w, serial);
	sdbus_put_array_open(&w, 8, &fields);
	const struct {
		uint8_t code;
		const char *sig;
		const char *v;
	} f[] = { { 1, "o", path }, { 2, "s", iface }, { 3, "s", member }, { 4, "s", error },
		  { 7, "s", ":1.1" }, { 8, "g", sig } };
	for (size_t i = 0; i < ELEMENTSOF(f); i++) {
		if (!f[i].v || !f[i].v[0])
			continue;
		sdbus_put_align(&w, 8);
		sdbus_put_u8(&w, f[i].code);
		sdbus_put_sig(&w, f[i].sig);
		if (f[i].sig[0] == 'g')
			sdbus_put_sig(&w, f[i].v);
		else
			sdbus_put_str(&w, f[i].v);
	}
	if (reply_serial) {
		sdbus_put_align(&w, 8);
		sdbus_put_u8(&w, 5);
		sdbus_put_sig(&w, "u");
		sdbus_put_u32(&w, reply_serial);
	}
	sdbus_put_array_close(&w, &fields);
	sdbus_put_align(&w, 8);
	w.body_off = w.len;
	if (body)
		body(&w, arg);
	size_t len;
	if (sdbus_msg_end(&w, &len) < 0)
		return -1;
	return fake_write(fd, buf, len);
}

static void body_simple(struct sdbus_wr *w, const void *arg)
{
	const struct fake_body *b = arg;
	switch (b->kind) {
	case 's':
	case 'o':
		sdbus_put_str(w, b->str);
		break;
	case 'S':
		sdbus_put_sig(w, "s");
		sdbus_put_str(w, b->str);
		break;
	case 'B':
		sdbus_put_sig(w, "b");
		sdbus_put_bool(w, b->flag);
		break;
	default:
		break;
	}
}

static int fake_return(int fd, uint32_t serial, uint32_t reply, char kind, const char *str,
		       bool flag)
{
	const struct fake_body b = { kind, str, flag };
	const char *sig = kind == 's' ? "s" : kind == 'o' ? "o" : kind ? "v" : "";
	return fake_send(fd, SDBUS_RETURN, serial, reply, NULL, NULL, NULL, NULL, sig,
			 body_simple, &b);
}

static void body_job_removed(struct sdbus_wr *w, const void *arg)
{
	const char *const *v = arg; /* unit, result */
	sdbus_put_u32(w, 7);
	sdbus_put_str(w, "/org/freedesktop/systemd1/job/7");
	sdbus_put_str(w, v[0]);
	sdbus_put_str(w, v[1]);
}

static int fake_job_removed(int fd, uint32_t serial, const char *unit, const char *result)
{
	const char *v[2] = { unit, result };
	return fake_send(fd, SDBUS_SIGNAL, serial, 0, NULL, "/org/freedesktop/systemd1",
			 "org.freedesktop.systemd1.Manager", "JobRemoved", "uoss",
			 body_job_removed, v);
}

static int fake_unit_new(int fd, uint32_t serial)
{
	const struct fake_body b = { 's', "other.scope", false };
	return fake_send(fd, SDBUS_SIGNAL, serial, 0, NULL, "/org/freedesktop/systemd1",
			 "org.freedesktop.systemd1.Manager", "UnitNew", "s", body_simple, &b);
}

static int fake_error(int fd, uint32_t serial, uint32_t reply, const char *name,
		      const char *text)
{
	const struct fake_body b = { 's', text, false };
	return fake_send(fd, SDBUS_ERROR, serial, reply, name, NULL, NULL, NULL, "s",
			 body_simple, &b);
}

/* Checks that m is StartTransientUnit of FAKE_UNIT holding pid, with Delegate=yes. */
static bool is_scope_request(const struct sdbus_msg *m, pid_t pid)
{
	struct sdbus_rd r, props, pids;
	struct sdbus_str s;
	uint32_t p = 0;
	bool delegate = false;
	if (!sdbus_str_is(m->member, "StartTransientUnit") ||
	    !sdbus_str_is(m->destination, "org.freedesktop.systemd1") ||
	    sdbus_body(m, "ssa(sv)a(sa(sv))", &r) < 0 || !sdbus_get_str(&r, &s) ||
	    !sdbus_str_is(s, FAKE_UNIT) || !sdbus_get_str(&r, &s) || !sdbus_get_array(&r, 8, &props))
		return false;
	while (!sdbus_done(&props)) {
		if (!sdbus_get_struct(&props) || !sdbus_get_str(&props, &s))
			return false;
		if (sdbus_str_is(s, "Delegate")) {
			if (!sdbus_get_variant(&props, "b") || !sdbus_get_bool(&props, &delegate))
				return false;
		} else if (sdbus_str_is(s, "PIDs")) {
			if (!sdbus_get_variant(&props, "au") || !sdbus_get_array(&props, 4, &pids) ||
			    !sdbus_get_u32(&pids, &p))
				return false;
		} else {
			struct sdbus_str sig;
			if (!sdbus_get_sig(&props, &sig) || !sdbus_skip(&props, sig.p, sig.len))
				return false;
		}
	}
	return delegate && p == (uint32_t)pid;
}

/* A Properties.Get of the unit's property prop on interface iface. */
static bool is_get(const struct sdbus_msg *m, const char *iface, const char *prop)
{
	struct sdbus_rd r;
	struct sdbus_str a, b;
	return sdbus_str_is(m->member, "Get") && sdbus_str_is(m->path, FAKE_UNIT_PATH) &&
	       sdbus_body(m, "ss", &r) == 0 && sdbus_get_str(&r, &a) && sdbus_get_str(&r, &b) &&
	       sdbus_str_is(a, iface) && sdbus_str_is(b, prop);
}

/*
 * The authentication, as a server: the NUL, AUTH EXTERNAL with our uid and BEGIN, all before
 * the answer (a client that waited for it before BEGIN would stall here), then the answer.
 */
static int fake_auth(int fd, const char *answer)
{
	char want[64], got[64];
	size_t len;
	if (sdbus_auth_line(getuid(), want + 1, sizeof(want) - 8, &len) < 0)
		return -1;
	want[0] = '\0';
	memcpy(want + 1 + len, "BEGIN\r\n", 7);
	if (fake_read(fd, got, len + 8) < 0 || memcmp(got, want, len + 8) != 0)
		return -1;
	if (!answer)
		return -1; /* hang up */
	return fake_write(fd, answer, strlen(answer));
}

/* The child: one connection, then the script; 0 when every expectation held. */
static int fake_serve(int lfd, enum fake_script script, bool bus, pid_t client)
{
	static uint8_t buf[SDBUS_MSG_MAX];
	struct sdbus_msg m;
	uint32_t out = 100;
	int fd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);
	if (fd < 0)
		return 10;
	const char *ok = "OK 0123456789abcdef0123456789abcdef\r\n";
	if (script == FAKE_PEER_CLOSES)
		return fake_auth(fd, NULL) == -1 ? 0 : 11;
	if (fake_auth(fd, script == FAKE_AUTH_REJECTED ? "REJECTED EXTERNAL\r\n" : ok) < 0)
		return 12;
	if (script == FAKE_AUTH_REJECTED)
		return 0;
	if (bus) {
		struct sdbus_rd r;
		struct sdbus_str rule;
		if (fake_recv(fd, buf, &m) < 0 || !sdbus_str_is(m.member, "Hello") ||
		    fake_return(fd, out++, m.serial, 's', ":1.42", false) < 0)
			return 13;
		if (script != FAKE_DELEGATED_YES &&
		    (fake_recv(fd, buf, &m) < 0 || !sdbus_str_is(m.member, "AddMatch") ||
		     sdbus_body(&m, "s", &r) < 0 || !sdbus_get_str(&r, &rule) ||
		     !memmem(rule.p, rule.len, "member='JobRemoved'", 19) ||
		     fake_return(fd, out++, m.serial, 0, NULL, false) < 0))
			return 14;
	}
	if (script == FAKE_DELEGATED_YES || script == FAKE_DELEGATED_SLICE) {
		struct sdbus_rd r;
		uint32_t pid = 0;
		if (fake_recv(fd, buf, &m) < 0 || !sdbus_str_is(m.member, "GetUnitByPID") ||
		    sdbus_body(&m, "u", &r) < 0 || !sdbus_get_u32(&r, &pid) ||
		    pid != (uint32_t)client || fake_return(fd, out++, m.serial, 'o', FAKE_UNIT_PATH,
							    false) < 0)
			return 15;
		bool slice = script == FAKE_DELEGATED_SLICE;
		if (fake_recv(fd, buf, &m) < 0 || !is_get(&m, "org.freedesktop.systemd1.Unit", "Id") ||
		    fake_return(fd, out++, m.serial, 'S', slice ? "app.slice" : "run-r1.scope",
				false) < 0)
			return 16;
		if (slice) /* nothing more is asked */
			return read(fd, buf, 1) == 0 ? 0 : 17;
		if (fake_recv(fd, buf, &m) < 0 ||
		    !is_get(&m, "org.freedesktop.systemd1.Scope", "Delegate") ||
		    fake_return(fd, out++, m.serial, 'B', NULL, true) < 0)
			return 18;
		return 0;
	}
	if (fake_recv(fd, buf, &m) < 0 || !is_scope_request(&m, client))
		return 20;
	uint32_t call = m.serial;
	switch (script) {
	case FAKE_SCOPE_DONE:
		return fake_unit_new(fd, out++) < 0 || fake_return(fd, out++, call, 'o', "/j/7", false) < 0 ||
			       fake_job_removed(fd, out++, "other.scope", "done") < 0 ||
			       fake_job_removed(fd, out++, FAKE_UNIT, "done") < 0
		       ? 21 : 0;
	case FAKE_SCOPE_JOB_FIRST:
		return fake_job_removed(fd, out++, FAKE_UNIT, "done") < 0 ||
			       fake_return(fd, out++, call, 'o', "/j/7", false) < 0
		       ? 22 : 0;
	case FAKE_SCOPE_FAILED:
		return fake_return(fd, out++, call, 'o', "/j/7", false) < 0 ||
			       fake_job_removed(fd, out++, FAKE_UNIT, "failed") < 0
		       ? 23 : 0;
	case FAKE_SCOPE_EXISTS:
		return fake_error(fd, out++, call, "org.freedesktop.systemd1.UnitExists",
				  "Unit " FAKE_UNIT " was already loaded.\n") < 0 ? 24 : 0;
	case FAKE_SCOPE_DENIED:
		return fake_error(fd, out++, call, "org.freedesktop.DBus.Error.AccessDenied",
				  "no") < 0 ? 25 : 0;
	case FAKE_SCOPE_HANGUP:
		return 0;
	case FAKE_SCOPE_OVERSIZE: {
		static const uint8_t big[SDBUS_FIXED_LEN] = { 'l', 2, 0, 1, 0, 0, 0x20, 0, 1, 0, 0, 0 };
		return fake_write(fd, big, sizeof(big)) < 0 ? 26 : 0;
	}
	case FAKE_SCOPE_MALFORMED: {
		static const uint8_t v2[SDBUS_FIXED_LEN] = { 'l', 2, 0, 2, 0, 0, 0, 0, 1, 0, 0, 0 };
		return fake_write(fd, v2, sizeof(v2)) < 0 ? 27 : 0;
	}
	case FAKE_SCOPE_FLOOD:
		if (fake_return(fd, out++, call, 'o', "/j/7", false) < 0)
			return 28;
		/* more than the client reads; it hangs up first, which ends this */
		for (unsigned i = 0; i < SBX_SD_MSGS_MAX + 8; i++)
			if (fake_unit_new(fd, out++) < 0)
				return 0;
		return 0;
	case FAKE_AUTH_REJECTED:
	case FAKE_PEER_CLOSES:
	case FAKE_DELEGATED_YES:
	case FAKE_DELEGATED_SLICE:
		break;
	}
	return 29;
}

/* A fake systemd listening at $XDG_RUNTIME_DIR/bus (bus) or systemd/private, in a child. */
static void fake_start(struct fake *f, enum fake_script script, bool bus)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	(void)snprintf(f->dir, sizeof(f->dir), "/tmp/test-sdbus-XXXXXX");
	assert_non_null(mkdtemp(f->dir));
	if (!bus) {
		char d[sizeof(f->dir) + 16];
		(void)snprintf(d, sizeof(d), "%s/systemd", f->dir);
		assert_int_equal(mkdir(d, 0700), 0);
	}
	(void)snprintf(f->sock, sizeof(f->sock), "%s/%s", f->dir, bus ? "bus" : "systemd/private");
	(void)snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", f->sock);
	f->listen_fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	assert_true(f->listen_fd >= 0);
	assert_int_equal(bind(f->listen_fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	assert_int_equal(listen(f->listen_fd, 1), 0);
	assert_int_equal(setenv("XDG_RUNTIME_DIR", f->dir, 1), 0);
	pid_t client = getpid();
	f->pid = fork();
	assert_true(f->pid >= 0);
	if (f->pid == 0)
		_exit(fake_serve(f->listen_fd, script, bus, client));
}

/* Waits for the fake: its exit status must be 0. Removes its directory. */
static void fake_end(struct fake *f)
{
	int st = 0;
	assert_int_equal(waitpid(f->pid, &st, 0), f->pid);
	(void)close(f->listen_fd);
	(void)unlink(f->sock);
	char d[sizeof(f->dir) + 16];
	(void)snprintf(d, sizeof(d), "%s/systemd", f->dir);
	(void)rmdir(d);
	(void)rmdir(f->dir);
	if (!WIFEXITED(st) || WEXITSTATUS(st) != 0)
		fail_msg("the fake systemd's expectations failed (status %d)", st);
}

/* Runs sbx_sd_start_scope against script; checks the result and what *out_what holds. */
static void scope_case(enum fake_script script, bool bus, int want, const char *what_has)
{
	struct fake f;
	struct sbx_sd_addr a;
	const char *what = "untouched";
	fake_start(&f, script, bus);
	assert_int_equal(sbx_sd_find(&a), 0);
	assert_int_equal(a.bus, bus);
	assert_string_equal(a.path, f.sock);
	int r = sbx_sd_start_scope(&a, FAKE_UNIT, &what);
	fake_end(&f);
	if (r != want)
		fail_msg("sbx_sd_start_scope: %d (%s), wanted %d", r, what, want);
	if (what_has && !strstr(what, what_has))
		fail_msg("'%s' does not say '%s'", what, what_has);
}

static void test_scope_done(void **state)
{
	(void)state;
	scope_case(FAKE_SCOPE_DONE, false, 0, NULL);
	scope_case(FAKE_SCOPE_DONE, true, 0, NULL);
	scope_case(FAKE_SCOPE_JOB_FIRST, false, 0, NULL);
}

static void test_scope_refused(void **state)
{
	(void)state;
	scope_case(FAKE_SCOPE_FAILED, false, -EPROTO, "job ended: failed");
	scope_case(FAKE_SCOPE_EXISTS, false, -EREMOTEIO,
		   "org.freedesktop.systemd1.UnitExists: Unit " FAKE_UNIT " was already loaded.?");
	scope_case(FAKE_SCOPE_DENIED, true, -EACCES, "AccessDenied");
	scope_case(FAKE_AUTH_REJECTED, false, -EACCES, "AUTH EXTERNAL");
}

static void test_scope_hostile(void **state)
{
	(void)state;
	scope_case(FAKE_PEER_CLOSES, false, -ECONNRESET, "authenticate");
	scope_case(FAKE_SCOPE_HANGUP, false, -ECONNRESET, "delegated scope");
	scope_case(FAKE_SCOPE_OVERSIZE, false, -EMSGSIZE, NULL);
	scope_case(FAKE_SCOPE_MALFORMED, false, -EBADMSG, NULL);
	scope_case(FAKE_SCOPE_FLOOD, false, -EPROTO, "wait for systemd");
}

static void test_delegated(void **state)
{
	(void)state;
	struct fake f;
	struct sbx_sd_addr a;
	const char *what = "";
	bool d = false;
	fake_start(&f, FAKE_DELEGATED_YES, true);
	assert_int_equal(sbx_sd_find(&a), 0);
	assert_int_equal(sbx_sd_delegated(&a, getpid(), &d, &what), 0);
	fake_end(&f);
	assert_true(d);
	fake_start(&f, FAKE_DELEGATED_SLICE, false);
	assert_int_equal(sbx_sd_find(&a), 0);
	d = true;
	assert_int_equal(sbx_sd_delegated(&a, getpid(), &d, &what), 0);
	fake_end(&f);
	assert_false(d);
}

static void test_find(void **state)
{
	(void)state;
	struct sbx_sd_addr a = { .path = "untouched" };
	assert_int_equal(setenv("XDG_RUNTIME_DIR", "/nonexistent-test-sdbus", 1), 0);
	assert_int_equal(sbx_sd_find(&a), -ENOENT);
	assert_string_equal(a.path, "untouched");
	/* a regular file where the socket would be is no systemd */
	char dir[] = "/tmp/test-sdbus-XXXXXX", p[64];
	assert_non_null(mkdtemp(dir));
	(void)snprintf(p, sizeof(p), "%s/bus", dir);
	int fd = open(p, O_CREAT | O_WRONLY | O_CLOEXEC, 0600);
	assert_true(fd >= 0);
	(void)close(fd);
	assert_int_equal(setenv("XDG_RUNTIME_DIR", dir, 1), 0);
	assert_int_equal(sbx_sd_find(&a), -ENOENT);
	(void)unlink(p);
	(void)rmdir(dir);
}

int main(void)
{
	/* The fake systemd's children are reaped by fake_end; none may linger as a zombie. */
	(void)signal(SIGPIPE, SIG_IGN);
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_get_u32_bounds),
		cmocka_unit_test(test_get_bool),
		cmocka_unit_test(test_get_str_bounds),
		cmocka_unit_test(test_get_sig),
		cmocka_unit_test(test_get_array),
		cmocka_unit_test(test_skip),
		cmocka_unit_test(test_parse_golden),
		cmocka_unit_test(test_truncation_sweep),
		cmocka_unit_test(test_bitflip_sweep),
		cmocka_unit_test(test_msg_length),
		cmocka_unit_test(test_build_golden),
		cmocka_unit_test(test_build_reads_back),
		cmocka_unit_test(test_auth),
		cmocka_unit_test(test_scope_done),
		cmocka_unit_test(test_scope_refused),
		cmocka_unit_test(test_scope_hostile),
		cmocka_unit_test(test_delegated),
		cmocka_unit_test(test_find),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
