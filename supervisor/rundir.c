/* SPDX-License-Identifier: MIT */
#include "rundir.h"
