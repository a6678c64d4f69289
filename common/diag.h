/* SPDX-License-Identifier: MIT */
/*
 * A diagnostic about an input file: where and what. Filled by the YAML loader and walker
 * (yaml-util.h) and by every parser built on them (policy/, eval/).
 */
#pragma once

/* line and column are 1-based; 0 when unknown. */
struct pol_diag {
	char file[256];
	unsigned line;
	unsigned column;
	char message[512];
};
