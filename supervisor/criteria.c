/* SPDX-License-Identifier: MIT */
#include "criteria.h"
