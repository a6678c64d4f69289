/* SPDX-License-Identifier: MIT */
/*
 * `warden grade [--yes] [--task TASK.yaml] [--json] RUN_DIR...`: grades recorded runs again,
 * in a fresh sandbox of the recorded policy, with the run's workspace adopted in place.
 *
 * A run folder is untrusted input. Nothing it names runs before the trust gate: the folder,
 * the record and the task (whose digest and policy digest must be the recorded ones) are
 * checked first, then every command and every host path is shown, and only --yes or an
 * interactive yes lets anything run. The record is never parsed here: a confined child reads
 * it (eval/confined.c, strictly by eval/evrecord.c) and answers with a validated summary
 * (struct ev_folder), from which alone this file decides, prints the gate and carries the
 * agent's phase into the new record.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cleanup.h"
#include "cli.h"
#include "confined.h"
#include "eval.h"
#include "rundir.h"
#include "sandbox.h"
#include "supervisor.h"

DEFINE_CLEANUP(struct pol_task *, pol_task_free)

static const char usage_grade[] =
	"Usage: warden grade [--yes] [--task TASK.yaml] [--json] RUN_DIR...\n"
	"\n"
	"Grades recorded evaluation runs again (docs/eval.md): the criteria and teardown run in\n"
	"a fresh sandbox of the recorded policy with the run's workspace adopted in place. Setup\n"
	"and the agent never run again. A run folder is untrusted input: it is checked, then\n"
	"every command and host path is shown, and nothing runs without a yes.\n"
	"\n"
	"  --yes          proceed without asking (needed when stdin is not a terminal)\n"
	"  --task FILE    the task file, when it has moved since the run or is not yours or\n"
	"                 root's (its digest must match)\n"
	"  --json         print the summary as JSON\n"
	"\n"
	"Exit status: 0 every run SUCCESS; 1 some FAILURE or TIMEOUT; 2 some ERROR, a run with\n"
	"nothing to grade, or bad usage; 3 the trust gate refused (no --yes without a terminal,\n"
	"the answer was no, or the folder or record is invalid, does not match its task, or was\n"
	"changed while grading); 4 the host cannot provide the isolation. The highest applies;\n"
	"128+N when signal N (SIGINT, SIGTERM, SIGHUP) interrupted a grade, which then writes\n"
	"nothing.\n";

static void show_argv(FILE *f, const char *what, char *const *argv, size_t n, const char *task_id)
{
	char **v = ev_substitute(argv, n, task_id);
	fprintf(f, "             %s:", what);
	for (size_t i = 0; v && v[i]; i++)
		fprintf(f, " %s", v[i]);
	fprintf(f, "\n");
	ev_argv_free(v);
}

static const char *const agent_words[] = {
	[EV_FOLDER_AGENT_NONE] = "never ran", [EV_FOLDER_AGENT_OK] = "ok",
	[EV_FOLDER_AGENT_TIMEOUT] = "timeout", [EV_FOLDER_AGENT_ERROR] = "error",
	[EV_FOLDER_AGENT_SKIPPED] = "skipped",
};

/*
 * Prints what grading will run and expose; asks unless yes. Returns 0 to go on, else -EPERM.
 * What it says of the run folder comes from the reader's validated summary (rf) alone; the
 * rest is the task, whose digest is the recorded one.
 */
static int trust_gate(const char *run_dir, const struct ev_folder *rf, const struct pol_task *t,
		      const char *task_digest, const char *policy_digest, bool yes, char *why,
		      size_t why_len)
{
	const struct pol_policy *pol = t->policy;
	FILE *f = stderr;
	fprintf(f, "warden grade: %s\n", run_dir);
	fprintf(f, "  run        %s (recorded %s, graded %" PRIu64 " time%s; agent %s, "
		"stdout %" PRIu64 " bytes, stderr %" PRIu64 " bytes)\n", rf->run_id,
		ev_status_name((enum ev_status)rf->status), rf->grades, rf->grades == 1 ? "" : "s",
		agent_words[rf->agent], rf->stdout_kept, rf->stderr_kept);
	fprintf(f, "  task       %s (%s)\n", t->source, task_digest);
	fprintf(f, "  policy     %s\n", policy_digest);
	_cleanup_free_ char *abs = realpath(run_dir, NULL);
	fprintf(f, "  exposes    %s/workspace  at %s (command criteria see a throwaway overlay "
		"of it; teardown's writes are applied under the workspace rules)\n",
		abs ? abs : run_dir, SBX_WORKSPACE);
	if (t->reference)
		fprintf(f, "             %s  read-only at %s (criteria and teardown)\n", t->reference,
			SBX_REFERENCE);
	for (size_t i = 0; i < pol->n_binds; i++)
		fprintf(f, "             %s  %s at %s (policy)\n", pol->binds[i].src,
			pol->binds[i].mode == POL_BIND_RO ? "read-only" : "read-write",
			pol->binds[i].dst);
	if (pol->n_etc_files) {
		fprintf(f, "             /etc/{");
		for (size_t i = 0; i < pol->n_etc_files; i++)
			fprintf(f, "%s%s", i ? "," : "", pol->etc_files[i]);
		fprintf(f, "}  read-only, those present (policy)\n");
	}
	fprintf(f, "  runs\n");
	size_t runs = 0;
	for (size_t i = 0; i < t->n_criteria; i++) {
		const struct pol_task_criterion *c = &t->criteria[i];
		char what[48];
		(void)snprintf(what, sizeof(what), "criteria[%zu]", i);
		if (c->check == POL_TASK_COMMAND) {
			show_argv(f, what, c->command.argv, c->command.n_argv, t->task_id);
			runs++;
		} else {
			fprintf(f, "             %s: %s %s (judged by a confined reader, no "
				"command runs)\n", what, pol_task_check_name(c->check), c->path);
		}
	}
	for (size_t i = 0; i < t->n_teardown; i++) {
		char what[48];
		(void)snprintf(what, sizeof(what), "teardown[%zu]", i);
		show_argv(f, what, t->teardown[i].argv, t->teardown[i].n_argv, t->task_id);
		runs++;
	}
	if (yes)
		return 0;
	if (isatty(STDIN_FILENO) != 1) {
		(void)snprintf(why, why_len, "refusing to run %zu command(s) from a run folder without "
			       "--yes: stdin is not a terminal to ask", runs);
		return -EPERM;
	}
	fprintf(f, "Run these in sandboxes? [y/N] ");
	(void)fflush(f);
	char answer[16] = "";
	if (!fgets(answer, sizeof(answer), stdin) ||
	    (strcmp(answer, "y\n") != 0 && strcmp(answer, "yes\n") != 0)) {
		(void)snprintf(why, why_len, "not confirmed");
		return -EPERM;
	}
	return 0;
}

struct grade_outcome {
	int code;
	bool interrupted;     /* no more run folders are graded */
	const char *status;
	bool graded;
	uint32_t score_milli;
	char error[1024];
};

/* Renames a record that changed under us; it is never graded or overwritten. */
static void quarantine(int dirfd)
{
	(void)renameat(dirfd, "record.json", dirfd, "record.json.quarantined");
	(void)fsync(dirfd);
}

static void grade_one(const char *run_dir, const char *task_path, bool yes,
		      struct grade_outcome *out)
{
	char why[1024] = "";
	out->code = EV_EXIT_REFUSED;
	out->status = "REFUSED";
	struct ev_run ev;
	ev_run_init(&ev);
	struct ev_folder rf, again;
	ev_folder_init(&rf);
	ev_folder_init(&again);
	_cleanup_(pol_task_freep) struct pol_task *task = NULL;
	_cleanup_close_ int ws_fd = -1;
	_cleanup_close_ int log_fd = -1;
	_cleanup_free_ char *normal = NULL;
	char tmp[128] = "";

	/*
	 * Privilege mode first: the run folder's reader, and the criteria judge after it, run as
	 * the owner of the folder's workspace, never as root.
	 */
	ev.privileged = sup_decide_privileged(sup_in_init_userns());
	struct ev_confined_ids ids = ev_confined_ids_for(ev.privileged);
	int r = sup_rundir_open(run_dir, &ev.dirfd, why, sizeof(why));
	if (r >= 0)
		r = ev_read_folder(&ids, ev.dirfd, &rf, why, sizeof(why));
	if (r < 0)
		goto refused;

	/*
	 * The task the record names is someone's say-so: it is read only through its own
	 * canonical path, only if it is root's or the user's and no one else may write it
	 * (ev_load_task_from); --task is the user's own choice. A file that is not the recorded
	 * task is not even parsed (its errors could quote it).
	 */
	const char *source = task_path ? task_path : rf.task_source;
	struct pol_diag diag;
	r = ev_load_task_from(source, task_path ? EV_TASK_NAMED : EV_TASK_RECORDED, &task, &diag,
			      ev.task_digest, rf.task_digest);
	if (r == -EPERM) {
		(void)snprintf(why, sizeof(why), "the task '%.600s'%s %.380s", source,
			       task_path ? "" : " that the record names", diag.message);
		goto refused;
	}
	if (r == -ESTALE) {
		(void)snprintf(why, sizeof(why), "the task '%.600s' has changed since the run (digest "
			       "%s, recorded %s)", source, ev.task_digest, rf.task_digest);
		goto refused;
	}
	if (r == -EINVAL || r == -E2BIG) {
		(void)snprintf(why, sizeof(why), "the task does not validate: %.400s:%u:%u: %.400s",
			       diag.file, diag.line, diag.column, diag.message);
		goto refused;
	}
	if (r < 0) {
		(void)snprintf(why, sizeof(why), "the task '%.600s' cannot be read: %s", source,
			       strerror(-r));
		goto refused;
	}
	if (strcmp(ev.task_digest, rf.task_digest) != 0) {
		(void)snprintf(why, sizeof(why), "the task '%.600s' has changed since the run (digest "
			       "%s, recorded %s)", source, ev.task_digest, rf.task_digest);
		goto refused;
	}
	if (strcmp(task->task_id, rf.task_id) != 0) {
		(void)snprintf(why, sizeof(why), "the task's id '%s' is not the recorded '%s'",
			       task->task_id, rf.task_id);
		goto refused;
	}
	if (pol_to_json(task->policy, &normal) < 0) {
		(void)snprintf(why, sizeof(why), "out of memory");
		goto refused;
	}
	sup_digest_hex(normal, strlen(normal), ev.policy_digest);
	if (strcmp(ev.policy_digest, rf.policy_digest) != 0) {
		(void)snprintf(why, sizeof(why), "the task's policy has changed since the run (digest "
			       "%s, recorded %s): the grade would not run in the run's sandbox",
			       ev.policy_digest, rf.policy_digest);
		goto refused;
	}
	if (sup_check_host_paths(task->policy, why, sizeof(why)) < 0 ||
	    ev_check_exposure(task, why, sizeof(why)) < 0)
		goto refused;

	/* What the record says happened before grading. */
	if (rf.agent == EV_FOLDER_AGENT_NONE || rf.agent == EV_FOLDER_AGENT_ERROR ||
	    rf.setup == EV_FOLDER_SETUP_FAILED) {
		(void)snprintf(why, sizeof(why), "the run has no agent work to grade (status %s)",
			       ev_status_name((enum ev_status)rf.status));
		out->code = EV_EXIT_ERROR;
		out->status = "ERROR";
		goto failed;
	}
	if (rf.status == EV_INTERRUPTED) {
		(void)snprintf(why, sizeof(why), "the run was interrupted: its agent's work may be "
			       "unfinished (evaluate the task again)");
		out->code = EV_EXIT_ERROR;
		out->status = "ERROR";
		goto failed;
	}
	if (rf.reap != EV_FOLDER_REAP_OK) {
		(void)snprintf(why, sizeof(why), "the run's agent was never reaped: a live agent is "
			       "never graded");
		out->code = EV_EXIT_ERROR;
		out->status = "ERROR";
		goto failed;
	}

	r = trust_gate(run_dir, &rf, task, ev.task_digest, ev.policy_digest, yes, why,
		       sizeof(why));
	if (r < 0)
		goto refused;

	/* The workspace, adopted in place through the fd we checked (never re-resolved). */
	ws_fd = openat(ev.dirfd, "workspace", O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (ws_fd < 0) {
		(void)snprintf(why, sizeof(why), "workspace/: %s", strerror(errno));
		goto refused;
	}
	ev.task = task;
	ev.graded_by_grade = true;
	(void)snprintf(ev.run_dir, sizeof(ev.run_dir), "%s", run_dir);
	(void)snprintf(ev.run_id, sizeof(ev.run_id), "%s", rf.run_id);
	(void)snprintf(ev.workspace, sizeof(ev.workspace), "/proc/self/fd/%d", ws_fd);
	ev.agent.ran = true;
	if (rf.agent == EV_FOLDER_AGENT_TIMEOUT)
		ev.agent.res.reason = SUP_REASON_WALL_TIMEOUT;
	ev.reap_ok = true;
	ev.grades = rf.grades;
	ev.stamps = EV_STAMP_REGRADED | (task->n_setup ? EV_STAMP_GRADED_WITHOUT_SETUP : 0);
	if (rf.output_truncated)
		ev.stamps |= EV_STAMP_OUTPUT_TRUNCATED;
	if (rf.no_cgroup)
		ev.stamps |= EV_STAMP_NO_CGROUP;

	log_fd = ev_log_open(ev.dirfd, "grade.log", tmp, sizeof(tmp));
	if (log_fd < 0) {
		(void)snprintf(why, sizeof(why), "grade.log cannot be created: %s", strerror(-log_fd));
		out->code = EV_EXIT_ERROR;
		out->status = "ERROR";
		goto failed;
	}
	/*
	 * From here a stop signal waits for the next step's end (ev_stop_block); an interrupted
	 * grade writes nothing, so the record stays the one the folder had. The caller restores
	 * the signal mask.
	 */
	r = ev_stop_block();
	if (r < 0) {
		(void)snprintf(why, sizeof(why), "block signals: %s", strerror(-r));
		out->code = EV_EXIT_ERROR;
		out->status = "ERROR";
		goto failed;
	}
	ev_grade(&ev, log_fd);
	ev_verdict(&ev);
	if (!ev_stop_check(&ev))
		ev_teardown(&ev, log_fd);
	if (ev.interrupted)
		goto interrupted;

	/* The agent's phase must be what it was when we began, or nothing is written. */
	char why2[512];
	r = ev_read_folder(&ids, ev.dirfd, &again, why2, sizeof(why2));
	/* A stop signal that cut the reader short is an interruption, not a changed record. */
	if (r == -EINTR && ev_stop_check(&ev))
		goto interrupted;
	if (r < 0 || memcmp(again.agent_digest, rf.agent_digest, sizeof(rf.agent_digest)) != 0) {
		(void)unlinkat(ev.dirfd, tmp, 0);
		quarantine(ev.dirfd);
		(void)snprintf(why, sizeof(why), "record.json changed while it was being graded (%s): "
			       "quarantined as record.json.quarantined, nothing written",
			       r < 0 ? why2 : "the agent phase differs");
		goto refused;
	}
	r = ev_log_commit(ev.dirfd, &log_fd, tmp, "grade.log");
	if (r >= 0)
		r = ev_record_write(&ev, &rf);
	if (r < 0) {
		(void)snprintf(why, sizeof(why), "the record cannot be written: %s", strerror(-r));
		out->code = EV_EXIT_ERROR;
		out->status = "ERROR";
		goto failed;
	}
	out->code = ev_exit_code(&ev);
	out->status = ev_status_name(ev.status);
	out->graded = ev.graded;
	out->score_milli = ev.score_milli;
	ev_folder_done(&rf);
	ev_folder_done(&again);
	ev_run_done(&ev);
	return;

interrupted:
	(void)close(log_fd);
	log_fd = -1;
	(void)unlinkat(ev.dirfd, tmp, 0);
	(void)snprintf(why, sizeof(why), "interrupted by signal %d (%s): nothing written, the "
		       "record is as it was", ev.interrupted, strsignal(ev.interrupted));
	out->code = EV_EXIT_SIGNAL_BASE + ev.interrupted;
	out->status = "INTERRUPTED";
	out->interrupted = true;
	goto failed;
refused:
	out->code = EV_EXIT_REFUSED;
	out->status = "REFUSED";
failed:
	(void)snprintf(out->error, sizeof(out->error), "%s", why);
	ev_folder_done(&rf);
	ev_folder_done(&again);
	ev_run_done(&ev);
}

enum {
	OPT_JSON = CLI_LONG,
};

static const struct cli_option grade_options[] = {
	{ "yes", 'y', false },
	{ "task", 't', true },
	{ "json", OPT_JSON, false },
	{ NULL, 0, false },
};

static const struct cli_command grade_command = {
	.name = "grade",
	.help = usage_grade,
	.options = grade_options,
	.min_operands = 1,
	.max_operands = CLI_ANY,
	.operands = "RUN_DIR",
	.usage_exit = EV_EXIT_ERROR,
};

int ev_cmd_grade(int argc, char **argv)
{
	bool yes = false, json = false;
	const char *task = NULL;
	_cleanup_(cli_done) struct cli cli = { 0 };
	if (cli_start(&cli, &grade_command, argc, argv) < 0)
		return EV_EXIT_ERROR;
	int key;
	while ((key = cli_next(&cli)) > 0) {
		switch (key) {
		case 'y':
			yes = true;
			break;
		case 't':
			task = cli.arg;
			break;
		default: /* OPT_JSON */
			json = true;
			break;
		}
	}
	if (key == CLI_STOP)
		return cli.exit_code;
	int n = (int)cli.n_operands;
	if (task && n > 1)
		return cli_usage(&grade_command, "--task goes with one run folder");
	int code = 0;
	cJSON *arr = json ? cJSON_CreateArray() : NULL;
	if (!json)
		printf("%-12s %6s  %s\n", "STATUS", "SCORE", "RUN");
	sigset_t mask;
	if (sigprocmask(SIG_SETMASK, NULL, &mask) < 0) {
		fprintf(stderr, "warden grade: read the signal mask: %s\n", strerror(errno));
		cJSON_Delete(arr);
		return EV_EXIT_ERROR;
	}
	bool stopped = false;
	for (int i = 0; i < n; i++) {
		const char *dir = cli.operands[i];
		struct grade_outcome o = { 0 };
		if (stopped) {
			o.status = "INTERRUPTED";
			(void)snprintf(o.error, sizeof(o.error), "not graded (interrupted)");
		} else {
			grade_one(dir, task, yes, &o);
			/* The trust gate of the next folder must answer to ^C again. */
			(void)sigprocmask(SIG_SETMASK, &mask, NULL);
			stopped = o.interrupted;
		}
		if (o.error[0])
			fprintf(stderr, "warden grade: %s: %s\n", dir, o.error);
		if (o.code > code)
			code = o.code;
		char score[16] = "-";
		if (o.graded)
			(void)snprintf(score, sizeof(score), "%.3f", o.score_milli / 1000.0);
		if (!json) {
			printf("%-12s %6s  %s\n", o.status, score, dir);
			continue;
		}
		ev_summary_add(arr, NULL, dir, o.status, o.graded, o.score_milli, o.error);
	}
	ev_summary_print(arr);
	cJSON_Delete(arr);
	return code;
}
