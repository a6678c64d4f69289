/* SPDX-License-Identifier: MIT */
/*
 * The runner the bad-input corpus tests share (test-policy-corpus, test-task-corpus), for unit
 * tests only.
 *
 * A corpus is a directory of NAME.yaml cases, each with NAME.expected: the exact one-line
 * diagnostic "FILE:LINE:COLUMN: message" its parser must give for it. A case is read (at most
 * max_bytes) and handed to the corpus's parse callback together with a loader that maps the
 * virtual root ("/policy-bad/") onto the corpus directory; nothing outside it exists. The parse
 * must fail with -EINVAL or -E2BIG, store no result and give a one-line message; the virtual
 * root is dropped from the diagnostic's file before it is compared with NAME.expected (a final
 * newline there is ignored, any other is an error). Only regular files directly in the directory
 * are listed, so files in subdirectories (include/) are not cases themselves.
 *
 * Each case is its own cmocka test; one more test, corpus_complete, fails when there are fewer
 * than min_cases cases, a NAME.yaml without its NAME.expected (or the reverse), or a file that
 * is neither.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "policy.h"

/*
 * Parses one case. name is its file name (NAME.yaml), vpath the same file under the virtual
 * root ("/policy-bad/NAME.yaml"), text its contents (len bytes, NUL-terminated), and
 * load/load_ctx the corpus loader (see pol_loader). All are borrowed. Returns what the parser
 * returned, with *out_diag filled by the parser, and sets *out_produced to whether the parser
 * stored a result (wrote its out-parameter at all). A result the parser returned with 0 is
 * freed before the callback returns; the caller fails the case in that event anyway.
 */
typedef int (*corpus_parse_fn)(const char *name, const char *vpath, const char *text, size_t len,
			       pol_loader load, void *load_ctx, struct pol_diag *out_diag,
			       bool *out_produced);

/* A corpus. Every pointer is borrowed and must outlive corpus_run(). */
struct corpus {
	const char *group;        /* cmocka group name: "policy-bad" */
	const char *dir_env;      /* environment variable that names the directory */
	const char *dir;          /* the directory when dir_env is unset or empty (from -D) */
	const char *virtual_root; /* loader prefix, dropped from diagnostics: "/policy-bad/" */
	size_t min_cases;         /* fewer NAME.yaml cases fail corpus_complete */
	size_t max_bytes;         /* most bytes read of a case: one over the parser's limit, so
				     that -E2BIG stays reachable */
	corpus_parse_fn parse;
};

/*
 * Lists c's directory and runs corpus_complete and one test per case as the cmocka group
 * c->group. Takes c borrowed. Returns the process exit status for main(): the number of
 * failed tests (0 when all passed), or 1 when the directory cannot be listed (more than 1024
 * files is an error too) or memory runs out, after a message on stderr.
 */
int corpus_run(const struct corpus *c);
