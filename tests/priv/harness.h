/* SPDX-License-Identifier: MIT */
/*
 * Shared helpers of the privileged test programs (tests/priv, tests/escape, tests/hostile,
 * tests/reliability): run warden (or, as a control, the probe itself) with a bounded capture
 * of stdout and stderr and a hard timeout; temporary workspaces holding a copy of the probe;
 * policy files; run records; scans of the host's processes; host-side tools (a pty, a loopback
 * socket, a file copy, the host user's git); and the one test fixture (struct th_fx) with the
 * run-and-expect helpers that the test programs share.
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
/* A capability set with nothing in it, as /proc/PID/status and the run record print it. */
#define TH_ZERO_CAPS "0000000000000000"
/* The largest record.json the tests read. */
#define TH_RECORD_MAX (1u << 20)
/* Where privileged mode allocates host ids from (policy/default.yaml, user.host_ids). */
#define TH_HOST_ID_BASE 2000000000u
/* The lock files of the host ids in use, one per id, named by it. */
#define TH_IDS_DIR "/run/warden/ids"

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
 * Ends the program through th_cannot_run unless warden can run in privileged mode here: full
 * privilege (th_fully_privileged) and user namespaces for uid 0. Then $WARDEN and $PROBE must
 * be set (th_warden, th_probe).
 */
void th_require_privileged(void);

/* Milliseconds of the monotonic clock. */
uint64_t th_now_ms(void);

/*
 * True when this process holds full privilege: uid 0 with CAP_SYS_ADMIN in the initial user
 * namespace (the identity uid map), which is what puts warden in privileged mode.
 */
bool th_fully_privileged(void);

/*
 * Root only: when $TMPDIR (default /tmp) is on overlayfs (a container's root), mounts a tmpfs
 * on a new folder in it, in a private mount namespace of this program, and makes that folder
 * TMPDIR (removed at exit). th_require_privileged calls it.
 */
void th_tmp_idmappable(void);

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

/* Removes path recursively, without following symlinks or crossing mounts; "" is ignored. */
void th_rm_rf(const char *path);

/*
 * Copies src to dst, which must not exist yet (not even as a symlink), then gives dst mode and
 * uid:gid. Returns 0 or -errno; a failed copy may leave dst behind.
 */
int th_copy_file(const char *src, const char *dst, mode_t mode, uid_t uid, gid_t gid);

/* A fresh, unused path "<aux>/<stem>-N" in out (PATH_MAX bytes). */
void th_aux_path(struct th_ws *ws, const char *stem, char *out);

/* snprintf into a PATH_MAX buffer; truncation fails the test. */
__attribute__((format(printf, 2, 3))) void th_pathf(char *out, const char *fmt, ...);

/* Writes text to path (created or truncated, mode 0644). Returns 0 or -errno. */
int th_write_file(const char *path, const char *text);

/* th_write_file; a failure fails the test. */
void th_put_file(const char *path, const char *text);

/* Makes the missing folders above path, mode 0755; fails the test. */
void th_mkdir_parents(const char *path);

/* th_put_file, making the missing folders above path (0755) and the file mode 0644. */
void th_put_file_mkdirs(const char *path, const char *text);

/*
 * Reads path (following a final symlink unless nofollow; never blocking on a FIFO) into a new
 * NUL-terminated buffer, keeping at most max bytes; its length goes to *out_len when not
 * NULL. Returns NULL, with errno set, when path cannot be opened. Caller frees.
 */
char *th_read_file(const char *path, size_t max, bool nofollow, size_t *out_len);

/* path (a final symlink followed) holds exactly text; fails the test with both shown. */
void th_expect_file(const char *path, const char *text);

/*
 * The names in dir but "." and "..", sorted, each followed by '\n', in a new string; their
 * number goes to *out_n when not NULL. NULL, with errno set, when dir cannot be listed.
 * Caller frees.
 */
char *th_list_dir(const char *dir, size_t *out_n);

/* The names in dir (th_list_dir) are exactly want; otherwise both are shown and the test fails. */
void th_expect_names(const char *dir, const char *want);

/*
 * Opens a pseudo-terminal pair. Returns the slave's descriptor and puts the master's in
 * *out_master (both close-on-exec; the caller closes them); -1 with errno set on failure.
 */
int th_open_pty(int *out_master);

/*
 * A socket of type (SOCK_STREAM, listening, or SOCK_DGRAM) bound to a free port of the host's
 * 127.0.0.1, non-blocking and close-on-exec; the port goes to out_port in decimal (len bytes).
 * Returns the descriptor (the caller closes it) or -errno.
 */
int th_host_socket(int type, char *out_port, size_t len);

/* ws->dir + "/" + rel into out (PATH_MAX bytes); truncation fails the test. */
void th_ws_path(const struct th_ws *ws, const char *rel, char *out);

struct th_out;

/* The workspace's file rel holds exactly text (th_expect_file). */
void th_ws_expect_file(const struct th_ws *ws, const char *rel, const char *text);

/* Gives every entry of the workspace (symlinks themselves, no mount crossed) to uid:gid. */
void th_ws_chown(const struct th_ws *ws, uid_t uid, gid_t gid);

/*
 * The host user's side of a workspace test: the programs a user runs on the tree afterwards
 * (git above all), with a HOME of their own holding the user's git settings (an identity,
 * trust in a workspace of another uid, file:// submodules), no system git config, LC_ALL=C.
 */
struct th_host {
	char home[PATH_MAX];
	char env_home[PATH_MAX + 8];
	const char *env[4];          /* the environment besides PATH, for th_opts.env */
};

/* The host's git binary, or NULL when there is none. */
const char *th_git(void);

/* Makes h's HOME in ws->aux. Returns 0, or -1 with a message. */
int th_host_setup(struct th_host *h, struct th_ws *ws);

/* Runs argv (argv[0] absolute) on the host as root in cwd; code < 0: any exit. Into *out. */
void th_host_run(const struct th_host *h, const char *cwd, const char *const *argv, int code,
		 struct th_out *out);

/* The host's git with args (NULL-terminated), as th_host_run. */
void th_host_git(const struct th_host *h, const char *cwd, const char *const *args, int code,
		 struct th_out *out);

/* True when the workspace has an entry rel (a final symlink is not followed). */
bool th_ws_exists(const struct th_ws *ws, const char *rel);

/* The st_mode of the workspace's entry rel (a final symlink is not followed); fails the test. */
mode_t th_ws_mode(const struct th_ws *ws, const char *rel);

/* Writes text to the workspace's file rel (th_put_file). */
void th_ws_write(const struct th_ws *ws, const char *rel, const char *text);

/* Creates the workspace's directory rel with mode 0755 whatever the umask; fails the test. */
void th_ws_mkdir(const struct th_ws *ws, const char *rel);

/* Writes a policy file into ws->aux; its path goes to out (PATH_MAX bytes). Fails the test. */
void th_policy(struct th_ws *ws, const char *yaml, char *out);

struct th_opts {
	const char *workspace;       /* --workspace DIR; NULL: not passed */
	const char *policy;          /* --policy FILE; NULL: not passed */
	const char *record;          /* --record DIR; NULL: not passed */
	const char *timeout;         /* --timeout SECONDS; NULL: not passed */
	const char *ws_mode;         /* --workspace-mode MODE; NULL: not passed */
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
	const char *const *prefix;   /* NULL-terminated words run in front of the rest (valgrind
					and its options, a measuring helper); NULL: none */
	const char *const *options;  /* NULL-terminated options after the ones above, before
					"--" (--apply none); NULL: none */
};

/* What th_spawn executes: strings are borrowed (options, command, environ) but the ids. */
struct th_exec {
	const char *argv[96];
	size_t argc;
	const char *envp[24];
	size_t envc;
	char uid_opt[32], gid_opt[32];
};

/*
 * Builds into x (NULL-terminated argv and envp) what th_spawn runs for o and cmd, before
 * TH_WARDEN_PID is replaced. Returns 0, -E2BIG when it does not fit, or -ENOENT when
 * o->as_user and there is no setpriv; x is then unusable.
 */
int th_exec_build(const struct th_opts *o, const char *const *cmd, struct th_exec *x);

/* A finished run. */
struct th_out {
	int code;                    /* exit status; 128+N for signal N; -1 after a hard timeout */
	bool hard_timeout;           /* the run was SIGKILLed at the hard timeout */
	uint64_t elapsed_ms;
	pid_t pid;                   /* the process th_spawn started (warden, or cmd with direct) */
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
 * Starts `warden run [options] -- cmd...` (or, with o->direct, cmd itself), after o->prefix,
 * in its own process group, stdin /dev/null unless o->stdin_fd is set, stdout and stderr
 * captured, and the environment PATH=..., any *SAN_OPTIONS and XDG_STATE_HOME of this process,
 * and o->env (th_exec_build). An argument equal to TH_WARDEN_PID becomes the child's pid.
 * Returns 0 or -errno; p is then unusable.
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

/* Prints text under a title, in pieces (cmocka's print_error has a bounded buffer). */
void th_print_long(const char *title, const char *text);

/* Prints a finished run (exit code, time, stdout, stderr), for a failure's context. */
void th_show(const struct th_out *out);

/* th_show with the run's name ("run B") in front. */
void th_show_named(const char *name, const struct th_out *out);

/* Calls fn(pid, ctx) for every process in /proc; fails the test when /proc cannot be listed. */
void th_each_pid(void (*fn)(pid_t, void *), void *ctx);

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

/* Frees *record, then th_record_load(dir) into it (NULL while that runs). */
void th_record_reload(cJSON **record, const char *dir);

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

/* How many host files one test may make with th_fx_host_file. */
#define TH_HOST_FILES 4

/*
 * One test's fixture, shared by the programs that run commands in a fresh workspace. A
 * program that needs more state puts a struct th_fx first in a larger struct of its own, so
 * that a test needing only this part can still read its state as a struct th_fx *.
 */
struct th_fx {
	struct th_ws ws;
	uid_t uid;                  /* the workspace's owner */
	gid_t gid;
	const void *param;          /* the test's case (table-driven tests); NULL otherwise */
	struct th_out out;          /* the last run */
	cJSON *record;              /* the last record loaded; NULL when none */
	char record_dir[PATH_MAX];  /* the --record directory of the last th_fx_record_expect */
	char marker[96];            /* host processes with this argument are killed at teardown */
	const char *ws_mode;        /* --workspace-mode for th_fx_opts; NULL: the policy's */
	char host_files[TH_HOST_FILES][PATH_MAX]; /* th_fx_host_file's, removed at teardown */
	/* The host user's side, made by th_fx_setup_owned (empty otherwise): */
	char real[PATH_MAX];        /* ws.dir's canonical path, as changesets record it */
	struct th_host host;        /* git with a HOME of its own */
	struct th_out host_out;     /* the last host command (th_fx_git) */
};

/* A workspace's owner, as the cmocka initial state of a test that th_fx_setup_owned sets up. */
struct th_owner {
	uid_t uid;
	gid_t gid;
};

/* An owner other than root (4242:4343): inside, the sandbox user owns such a workspace. */
extern const struct th_owner th_user_owner;

/* Discards every changeset (warden changes) whose workspace is ws_dir. */
void th_discard_changesets(const char *ws_dir);

/*
 * A cmocka setup: allocates size bytes (at least sizeof(struct th_fx), zeroed, a struct th_fx
 * at their start), takes *state as param and creates the workspace owned by uid:gid; the
 * allocation goes to *state. Returns 0, or -1 (with a message when the workspace could not be
 * made).
 */
int th_fx_setup(void **state, size_t size, uid_t uid, gid_t gid);

/* A cmocka setup: th_fx_setup of a plain struct th_fx, with a workspace that root owns. */
int th_fx_setup_root(void **state);

/*
 * th_fx_setup for the owner that *state points to (a const struct th_owner; NULL: root), then
 * the host user's side: f->real and f->host (th_host_setup). Returns 0, or -1 with a message.
 */
int th_fx_setup_owned(void **state, size_t size);

/*
 * Kills the marked host processes, frees the run and the record, removes the host files, the
 * changesets recorded under f->real, the workspace, and frees the allocation f starts (it came
 * from th_fx_setup). NULL-safe.
 */
void th_fx_free(struct th_fx *f);

/*
 * Creates a new, empty file "<dir>/<stem>-XXXXXX" on the host, removed at teardown; its path
 * goes to *out_path (owned by f). Returns its descriptor (close-on-exec; the caller closes it)
 * or -errno. More than TH_HOST_FILES in one test fails the test.
 */
int th_fx_host_file(struct th_fx *f, const char *dir, const char *stem, const char **out_path);

/* Gives the workspace and everything in it to f's owner, unless that is root (th_ws_chown). */
void th_fx_chown(const struct th_fx *f);

/* The host's git with args in f's workspace, as th_host_git; its result in f->host_out. */
void th_fx_git(struct th_fx *f, int code, const char *const *args);
#define TH_GIT(f, code, ...) th_fx_git((f), (code), TH_CMD(__VA_ARGS__))

/* A cmocka teardown: th_fx_free(*state). */
int th_fx_teardown(void **state);

/* Options running in f's workspace under policy (NULL: the default policy). */
struct th_opts th_fx_opts(const struct th_fx *f, const char *policy);

/* Runs cmd with o (NULL: th_fx_opts(f, NULL)); the result replaces f->out. */
void th_fx_run(struct th_fx *f, const struct th_opts *o, const char *const *cmd);

/* th_finish of p (a run started with th_spawn), whose result replaces f->out. */
void th_fx_finish(struct th_fx *f, struct th_proc *p);

/*
 * Asserts the last run's exit code and, unless out is NULL, its exact stdout; on a mismatch
 * the run is shown first.
 */
void th_fx_expect(const struct th_fx *f, int code, const char *out);

/* The last run's stderr contains text; otherwise the run is shown and the test fails. */
void th_fx_expect_err_has(const struct th_fx *f, const char *text);

/* th_fx_run (o NULL: th_fx_opts(f, NULL)), then th_fx_expect. */
void th_fx_run_expect(struct th_fx *f, const struct th_opts *o, const char *const *cmd, int code,
		      const char *out);

/*
 * th_fx_run_expect with o (NULL: th_fx_opts(f, NULL)) but --record into a fresh directory of
 * f->ws.aux (o->record is not used), whose path goes to f->record_dir; then its record
 * replaces f->record. A missing or invalid record fails the test.
 */
void th_fx_record_expect(struct th_fx *f, const struct th_opts *o, const char *const *cmd,
			 int code, const char *out);

/*
 * The last run exited 0 and printed one JSON document (a --json subcommand); it replaces
 * f->record, which owns it. Returns it.
 */
const cJSON *th_fx_expect_json(struct th_fx *f);

/* The last run's write was refused, by a read-only mount (EROFS) or by permissions (EACCES). */
void th_fx_expect_write_refused(const struct th_fx *f);

/*
 * The last run was `probe status`, and every capability set (CapInh, CapPrm, CapEff, CapBnd,
 * CapAmb) it printed is want.
 */
void th_fx_expect_caps(const struct th_fx *f, const char *want);

/*
 * The last run was `probe status` as the default sandbox user: no capability in any set,
 * no_new_privs, a seccomp filter, and uid and gid 1000.
 */
void th_fx_expect_sandbox_user(const struct th_fx *f);
