/* SPDX-License-Identifier: MIT */
/*
 * Scope-bound cleanup helpers shared by every module.
 *
 * A variable declared with one of these attributes is released when it goes out of scope.
 * Initialise it where it is declared (NULL or -1). Ownership leaves a scope only through
 * TAKE_PTR()/TAKE_FD().
 */
#pragma once

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static inline void cleanup_freep(void *p)
{
	free(*(void **)p);
}

static inline void cleanup_closep(const int *fd)
{
	if (*fd >= 0) {
		int saved = errno;
		(void)close(*fd);
		errno = saved;
	}
}

static inline void cleanup_fclosep(FILE **f)
{
	if (*f) {
		int saved = errno;
		(void)fclose(*f);
		errno = saved;
	}
}

#define _cleanup_(fn) __attribute__((cleanup(fn)))
#define _cleanup_free_ _cleanup_(cleanup_freep)
#define _cleanup_close_ _cleanup_(cleanup_closep)
#define _cleanup_fclose_ _cleanup_(cleanup_fclosep)

/* DEFINE_CLEANUP(type, fn) defines fn##p(type *) that calls fn(*p) when *p is non-NULL. */
#define DEFINE_CLEANUP(type, fn)                   \
	__attribute__((unused)) static inline void fn##p(type *p) \
	{                                          \
		if (*p)                            \
			fn(*p);                    \
	}

#define TAKE_PTR(p)                              \
	({                                       \
		__typeof__(p) take_ptr_tmp_ = (p); \
		(p) = NULL;                      \
		take_ptr_tmp_;                   \
	})

#define TAKE_FD(fd)                       \
	({                                \
		int take_fd_tmp_ = (fd);  \
		(fd) = -1;                \
		take_fd_tmp_;             \
	})

#define ELEMENTSOF(a) (sizeof(a) / sizeof((a)[0]))
