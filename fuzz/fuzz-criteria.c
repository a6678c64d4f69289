/* SPDX-License-Identifier: MIT */
#include <stddef.h>
#include <stdint.h>

#include "criteria.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	(void)data;
	(void)size;
	return 0;
}
