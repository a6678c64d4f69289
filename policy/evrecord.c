/* SPDX-License-Identifier: MIT */
#include "evrecord.h"
