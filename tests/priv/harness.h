/* SPDX-License-Identifier: MIT */
/*
 * Shared helpers of the tests/priv suite: run warden (or, as a control, the probe itself) with
 * a bounded capture of stdout and stderr and a hard timeout; temporary workspaces holding a
 * copy of the probe; policy files; run records; scans of the host's processes.
 *
 * The test programs find their binaries in the environment that meson test sets:
 * WARDEN (build/warden) and PROBE (the static probe).
 */
#pragma once

#include <cjson/cJSON.h>
#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* The probe's path inside the sandbox: every workspace holds a copy at its top. */
#define TH_PROBE "/workspace/probe"
/* A command argument equal to this is replaced by warden's own pid (known only after fork). */
#define TH_WARDEN_PID "@WARDEN_PID@"
/* Exit status that meson counts as a skipped test. */
#define TH_EXIT_SKIP 77
/* What is kept of each of stdout and stderr; the rest is read and dropped. */
#define TH_CAPTURE_MAX (1u << 20)
/* The hard timeout of one run when th_opts.hard_timeout_ms is 0. */
#define TH_HARD_TIMEOUT_MS 30000u

/* A NULL-terminated command, e.g. TH_CMD(TH_PROBE, "exit", "3"). */
#define TH_CMD(...) ((const char *const[]){ __VA_ARGS__, NULL })

/* $WARDEN and $PROBE; a missing one fails the whole program (exit 1) with a message. */
const char *th_warden(void);
const char *th_probe(void);

/* True when SBX_TEST_MUST_WORK=1: a test that cannot run then fails instead of skipping. */
bool th_must_work(void);

/*
 * Ends the program because the tests cannot run here: prints why, then exits 77 (skipped),
 * or 1 under SBX_TEST_MUST_WORK=1.
 */
__attribute__((noreturn, format(printf, 1, 2))) void th_cannot_run(const char *fmt, ...);

/*
 * True when this process holds full privilege: uid 0 with CAP_SYS_ADMIN in the initial user
 * namespace (the identity uid map), which is what puts warden in privileged mode.
 */
bool th_fully_privileged(void);

/* True when a child of this process, switched to uid:gid, can create a user namespace. */
bool th_userns_available(uid_t uid, gid_t gid);

/* True when uid:gid (no supplementary groups) may read and execute path. */
bool th_executable_by(uid_t uid, gid_t gid, const char *path);

/* The setpriv binary, or NULL when there is none. */
const char *th_setpriv(void);

/* A temporary workspace and, beside it, a directory for policies and records. */
struct th_ws {
	char dir[PATH_MAX];   /* the workspace; holds "probe", a copy of $PROBE, mode 0755 */
	char aux[PATH_MAX];   /* outside the workspace */
	unsigned n_files;     /* names handed out by th_aux_path */
};

/*
 * Creates a workspace under $TMPDIR (default /tmp) and its aux directory, both owned by
 * uid:gid along with the probe copy. Returns 0 or -errno; on failure nothing is left behind.
 */
int th_ws_new(struct th_ws *ws, uid_t uid, gid_t gid);

/* Removes both directories recursively (without following symlinks). */
void th_ws_remove(struct th_ws *ws);

/* A fresh, unused path "<aux>/<stem>-N" in out (PATH_MAX bytes). */
void th_aux_path(struct th_ws *ws, const char *stem, char *out);

/* snprintf into a PATH_MAX buffer; truncation fails the test. */
__attribute__((format(printf, 2, 3))) void th_pathf(char *out, const char *fmt, ...);

/* Writes text to path (created or truncated, mode 0644). Returns 0 or -errno. */
int th_write_file(const char *path, const char *text);

/* Writes a policy file into ws->aux; its path goes to out (PATH_MAX bytes). Fails the test. */
void th_policy(struct th_ws *ws, const char *yaml, char *out);

struct th_opts {
	const char *workspace;       /* --workspace DIR; NULL: not passed */
	const char *policy;          /* --policy FILE; NULL: not passed */
	const char *record;          /* --record DIR; NULL: not passed */
	const char *timeout;         /* --timeout SECONDS; NULL: not passed */
	const char *cwd;             /* warden's working directory; NULL: "/" */
	const char *const *env;      /* extra NAME=value entries of warden's environment */
	int stdin_fd;                /* > 0: warden's stdin; otherwise /dev/null */
	bool as_user;                /* run warden through setpriv as uid:gid, no caps */
	uid_t uid;
	gid_t gid;
	bool direct;                 /* control run: no warden; TH_PROBE is run as $PROBE */
	const char *subcommand;      /* NULL: "run"; else e.g. "audit": warden SUB [options] cmd...
					(the cmd words are plain arguments, no "--") */
	unsigned hard_timeout_ms;    /* 0: TH_HARD_TIMEOUT_MS */
};

/* A finished run. */
struct th_out {
	int code;                    /* exit status; 128+N for signal N; -1 after a hard timeout */
	bool hard_timeout;           /* the run was SIGKILLed at the hard timeout */
	uint64_t elapsed_ms;
	char *out, *err;             /* NUL-terminated captures (at most TH_CAPTURE_MAX bytes) */
	size_t out_len, err_len;
};

/* A run in progress. */
struct th_proc {
	pid_t pid;
	int pidfd;
	int fd[2];                   /* stdout, stderr read ends; -1 at EOF */
	char *buf[2];
	size_t len[2];
	bool exited;
	int status;
	uint64_t t0, deadline, drain_deadline;
};

/*
 * Starts `warden run [options] -- cmd...` (or, with o->direct, cmd itself) in its own process
 * group, stdin /dev/null unless o->stdin_fd is set, stdout and stderr captured, and the
 * environment PATH=..., any *SAN_OPTIONS of this process, and o->env. An argument equal to
 * TH_WARDEN_PID becomes the child's pid. Returns 0 or -errno; p is then unusable.
 */
int th_spawn(const struct th_opts *o, const char *const *cmd, struct th_proc *p);

/* Pumps output until stdout contains needle (true) or ms pass or the run ends (false). */
bool th_wait_stdout(struct th_proc *p, const char *needle, unsigned ms);

/*
 * Waits for the run to end, up to its hard timeout (then SIGKILLs its process group). Once
 * warden has exited, output is drained for at most a short grace period, so a leaked
 * process holding the pipes cannot stall the test. Fills *out; releases p.
 */
void th_finish(struct th_proc *p, struct th_out *out);

/* th_spawn + th_finish; a spawn failure fails the test. */
void th_run(const struct th_opts *o, const char *const *cmd, struct th_out *out);

/* Frees the captures. */
void th_out_done(struct th_out *out);

/*
 * Counts host processes whose command line has an argument equal to marker and, when
 * argv0_suffix is not NULL, whose argv[0] ends with it; pid `exclude` is not counted.
 */
int th_count_procs(const char *marker, const char *argv0_suffix, pid_t exclude);

/* SIGKILLs every host process th_count_procs(marker, NULL, exclude) would count. */
void th_kill_procs(const char *marker, pid_t exclude);

/*
 * The pids of the host processes th_count_procs(marker, argv0_suffix, exclude) would count:
 * the first max of them go to out; returns how many matched (which may exceed max).
 */
int th_find_procs(const char *marker, const char *argv0_suffix, pid_t exclude, pid_t *out,
		  size_t max);

/* Reads /proc/PID/status into buf (NUL-terminated, truncated to len - 1 bytes). */
bool th_proc_status(pid_t pid, char *buf, size_t len);

/* A marker unique to this test program and call: "<stem>-<pid>-<n>". */
void th_marker(const char *stem, char *out, size_t len);

/* Loads dir/record.json; fails the test when it is missing or not JSON. Caller frees. */
cJSON *th_record_load(const char *dir);

/* The node at a dotted path ("exit.reason"); NULL when absent. */
const cJSON *th_json_at(const cJSON *root, const char *path);
/* The string / number / bool at path; fail the test when absent or of another type. */
const char *th_json_str(const cJSON *root, const char *path);
double th_json_num(const cJSON *root, const char *path);
bool th_json_bool(const cJSON *root, const char *path);

/*
 * The value of the "Key:\t..." line of a /proc/self/status excerpt, copied to out (at most
 * len bytes, NUL-terminated). Returns false when there is no such line.
 */
bool th_status_field(const char *text, const char *key, char *out, size_t len);

/* True when text has a line equal to line (without its newline). */
bool th_has_line(const char *text, const char *line);
