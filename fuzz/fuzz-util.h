/* SPDX-License-Identifier: MIT */
/*
 * What every fuzz target shares: the libFuzzer entry point that each target defines and
 * replay-main.c calls, and CHECK. Header-only, for fuzz targets only.
 */
#pragma once

#include <stddef.h>
#include <stdint.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/*
 * A broken promise of the code under test: trap at once, so that libFuzzer keeps the input as
 * a crash and the replay run fails, in every build type (assert() would vanish with NDEBUG).
 */
#define CHECK(x)                          \
	do {                              \
		if (!(x))                 \
			__builtin_trap(); \
	} while (0)
