/* SPDX-License-Identifier: MIT */
/*
 * Unit tests for the run-record reader (eval/evrecord.c): a full and a minimal record are
 * accepted with their views; then one mutation per rule of the schema (docs/eval.md "The run
 * record"), each refused with -EBADMSG and a message naming the field; the JSON syntax pass
 * (NUL, \u0000, control characters, number grammar, UTF-8, depth, trailing bytes, size); the
 * cross-field rules; agent_canon; and sweeps over every prefix and every bit flip.
 *
 * Records are written with ' for " so that they stay readable; json() swaps them back.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <cjson/cJSON.h>

#include "cleanup.h"
#include "evrecord.h"

DEFINE_CLEANUP(cJSON *, cJSON_Delete)
DEFINE_CLEANUP(struct pol_evrec *, pol_evrec_free)

/* A value no parse ever stores, to prove *out is untouched on failure. */
static struct pol_evrec *const sentinel = (struct pol_evrec *)(uintptr_t)0x5a5a5a5a;

#define D64A "sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
#define D64B "sha256:fedcba9876543210fedcba9876543210fedcba9876543210fedcba9876543210"
#define CAP0 "'0000000000000000'"
#define NS(a, b, sep) "{'supervisor': " #a ", 'sandbox': " #b ", 'separate': " #sep "}"

/*
 * A full record: graded by eval, SUCCESS; every number that a test edits occurs once. Its
 * teardown step has no oom_kills and pids_limit_hits, as records written before they existed.
 */
static const char full_record[] =
	"{\n"
	" 'schema_version': 1,\n"
	" 'kind': 'warden-eval-run',\n"
	" 'warden_version': '0.1.0',\n"
	" 'run_id': 'report.v2-20261129T120000Z-1a2b3c4d',\n"
	" 'task': { 'id': 'report.v2', 'source': '/home/me/tasks/report/task.yaml',\n"
	"           'digest': '" D64A "' },\n"
	" 'policy': { 'digest': '" D64B "', 'weakenings': ['share-net'] },\n"
	" 'created_at': '2026-11-29T12:00:00Z',\n"
	" 'updated_at': '2026-11-29T12:00:09Z',\n"
	" 'host': { 'kernel': '6.1.0-26-amd64', 'mode': 'privileged', 'cgroup_version': 2 },\n"
	" 'phases': {\n"
	"  'setup': { 'status': 'ok', 'duration_ms': 412, 'steps': [\n"
	"   { 'status': 'ok', 'reason': 'exited', 'exit_code': 0, 'signal': null, 'detail': null,\n"
	"     'started_at': '2026-11-29T12:00:01Z', 'duration_ms': 411,\n"
	"     'peak_memory_bytes': 1048576, 'cpu_usec': 2000, 'oom_kills': 0,\n"
	"     'pids_limit_hits': 0 } ] },\n"
	"  'agent': { 'status': 'ok', 'reason': 'exited', 'exit_code': 3, 'signal': null,\n"
	"     'detail': 'agent said goodbye', 'started_at': '2026-11-29T12:00:02Z',\n"
	"     'duration_ms': 5000, 'peak_memory_bytes': 73400320, 'cpu_usec': 4100000,\n"
	"     'oom_kills': 1, 'pids_limit_hits': 7,\n"
	"     'stdout': { 'file': 'agent.stdout', 'bytes': 120, 'kept': 120, 'truncated': false },\n"
	"     'stderr': { 'file': 'agent.stderr', 'bytes': 7, 'kept': 7, 'truncated': false } },\n"
	"  'reap': { 'status': 'ok', 'cgroup_emptied': true, 'duration_ms': 3 },\n"
	"  'grade': { 'status': 'ok', 'by': 'eval', 'started_at': '2026-11-29T12:00:08Z',\n"
	"     'duration_ms': 350, 'log': 'grade.log' },\n"
	"  'teardown': { 'status': 'ok', 'duration_ms': 20, 'steps': [\n"
	"   { 'status': 'ok', 'reason': 'exited', 'exit_code': 0, 'signal': null, 'detail': null,\n"
	"     'started_at': '2026-11-29T12:00:09Z', 'duration_ms': 19,\n"
	"     'peak_memory_bytes': null, 'cpu_usec': null } ] }\n"
	" },\n"
	" 'criteria': [\n"
	"  { 'description': 'the report counts three items', 'check': 'json_equals', 'weight': 2,\n"
	"    'pass_threshold': 1, 'evaluated': true, 'score': 1, 'passed': true,\n"
	"    'details': '/count is 3', 'run': null },\n"
	"  { 'description': 'the tests pass', 'check': 'command', 'weight': 4.5,\n"
	"    'pass_threshold': 0.5, 'evaluated': true, 'score': 1, 'passed': true, 'details': '',\n"
	"    'run': { 'status': 'ok', 'reason': 'exited', 'exit_code': 0, 'signal': null,\n"
	"      'detail': null, 'started_at': '2026-11-29T12:00:08Z', 'duration_ms': 345,\n"
	"      'peak_memory_bytes': 2097152, 'cpu_usec': 300000, 'oom_kills': null,\n"
	"      'pids_limit_hits': null } },\n"
	"  { 'description': 'informational', 'check': 'file_exists', 'weight': 0,\n"
	"    'pass_threshold': 1, 'evaluated': true, 'score': 0, 'passed': false,\n"
	"    'details': 'out/x is missing', 'run': null }\n"
	" ],\n"
	" 'score': 1,\n"
	" 'status': 'SUCCESS',\n"
	" 'stamps': [],\n"
	" 'grades': 1,\n"
	" 'identity': { 'checked': true, 'held': true, 'uid': 100000, 'gid': 100001,\n"
	"   'CapInh': " CAP0 ", 'CapPrm': " CAP0 ", 'CapEff': " CAP0 ", 'CapBnd': " CAP0 ",\n"
	"   'CapAmb': " CAP0 ", 'NoNewPrivs': 1, 'Seccomp': 2, 'Seccomp_filters': 1,\n"
	"   'nspid_depth': 2, 'namespaces': {\n"
	"     'user': " NS(4026531837, 4026532201, true) ", 'pid': " NS(4026531836, 4026532202, true) ",\n"
	"     'mnt': " NS(4026531841, 4026532203, true) ", 'net': " NS(4026531840, 4026531840, false) ",\n"
	"     'uts': " NS(4026531838, 4026532205, true) ", 'ipc': " NS(4026531839, 4026532206, true) ",\n"
	"     'cgroup': " NS(4026531835, 4026532207, true) " } }\n"
	"}\n";

/* A minimal record: the agent's sandbox could not be built, nothing was graded. */
static const char minimal_record[] =
	"{'schema_version':1,'kind':'warden-eval-run','warden_version':'0.1.0',"
	"'run_id':'t1-20260101T000000Z-00000000',"
	"'task':{'id':'t1','source':'/t/task.yaml','digest':'" D64A "'},"
	"'policy':{'digest':'" D64B "','weakenings':[]},"
	"'created_at':'2026-01-01T00:00:00Z','updated_at':'2026-01-01T00:00:00Z',"
	"'host':{'kernel':'6.1.0','mode':'unprivileged','cgroup_version':0},"
	"'phases':{'setup':{'status':'skipped','duration_ms':0,'steps':[]},'agent':null,"
	"'reap':{'status':'skipped','cgroup_emptied':false,'duration_ms':0},"
	"'grade':{'status':'skipped','by':'eval','started_at':null,'duration_ms':0,'log':'grade.log'},"
	"'teardown':{'status':'skipped','duration_ms':0,'steps':[]}},"
	"'criteria':[{'description':'d','check':'file_exists','weight':1,'pass_threshold':1,"
	"'evaluated':false,'score':null,'passed':false,'details':'','run':null}],"
	"'score':null,'status':'ERROR','stamps':[],'grades':0,'identity':null}";

/* s with every ' turned into ". The caller frees it. */
static char *json(const char *s)
{
	char *out = strdup(s);
	assert_non_null(out);
	for (char *p = out; *p; p++)
		if (*p == '\'')
			*p = '"';
	return out;
}

/* s, which the caller owns, with every " turned back into ': json() undone in place. */
static char *unjson(char *s)
{
	for (char *p = s; *p; p++)
		if (*p == '"')
			*p = '\'';
	return s;
}

/* base with its one occurrence of from replaced by to (both in ' notation), as JSON. */
static char *mutate_from(const char *base, const char *from, const char *to)
{
	const char *at = strstr(base, from);
	if (!at)
		fail_msg("'%s' is not in the record", from);
	if (strstr(at + 1, from))
		fail_msg("'%s' occurs more than once in the record", from);
	size_t head = (size_t)(at - base), from_len = strlen(from), to_len = strlen(to);
	size_t len = strlen(base) - from_len + to_len;
	_cleanup_free_ char *tmp = malloc(len + 1);
	assert_non_null(tmp);
	memcpy(tmp, base, head);
	memcpy(tmp + head, to, to_len);
	memcpy(tmp + head + to_len, at + from_len, strlen(at + from_len) + 1);
	return json(tmp);
}

static char *mutate(const char *from, const char *to)
{
	return mutate_from(full_record, from, to);
}

static struct pol_evrec *parse_ok_len(const char *text, size_t len)
{
	struct pol_evrec *rec = NULL;
	char why[512] = "untouched";
	int r = pol_evrec_parse(text, len, &rec, why, sizeof(why));
	if (r != 0)
		fail_msg("unexpected failure %d: %s", r, why);
	assert_string_equal(why, "untouched");
	assert_non_null(rec);
	return rec;
}

static struct pol_evrec *parse_ok(const char *text)
{
	return parse_ok_len(text, strlen(text));
}

/* Parses len bytes of text, expects error r and a message holding substr; checks the contract. */
static void refused_len(const char *text, size_t len, int want, const char *substr)
{
	struct pol_evrec *rec = sentinel;
	char why[512];
	memset(why, 0x5a, sizeof(why));
	int r = pol_evrec_parse(text, len, &rec, why, sizeof(why));
	assert_ptr_equal(rec, sentinel);
	assert_non_null(memchr(why, '\0', sizeof(why)));
	if (r != want)
		fail_msg("expected %d, got %d (%s)", want, r, r < 0 ? why : "accepted");
	if (!strstr(why, substr))
		fail_msg("message '%s' lacks '%s'", why, substr);
	for (const char *p = why; *p; p++)
		if (*p < 0x20 || *p > 0x7e)
			fail_msg("message '%s' has a byte 0x%02x", why, (unsigned char)*p);
}

static void refused_text(const char *text, const char *substr)
{
	refused_len(text, strlen(text), -EBADMSG, substr);
}

/* The full record with from replaced by to is refused with a message holding substr. */
static void refused(const char *from, const char *to, const char *substr)
{
	_cleanup_free_ char *text = mutate(from, to);
	refused_text(text, substr);
}

/* len bytes of text are accepted. */
static void accepted_len(const char *text, size_t len)
{
	pol_evrec_free(parse_ok_len(text, len));
}

static void accepted_text(const char *text)
{
	accepted_len(text, strlen(text));
}

static void accepted(const char *from, const char *to)
{
	_cleanup_free_ char *text = mutate(from, to);
	accepted_text(text);
}

/* One edit of the full record for check_edits(): from replaced by to, as in mutate(). */
struct edit {
	const char *from;
	const char *to;
	const char *msg; /* what the refusal's message holds; NULL: the record is accepted */
};

/* Each edit of the full record is refused with a message holding its msg, or accepted. */
static void check_edits(const struct edit *e, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		if (e[i].msg)
			refused(e[i].from, e[i].to, e[i].msg);
		else
			accepted(e[i].from, e[i].to);
	}
}

/* ------------------------------------------------------------------------------------------ */

static void test_full_record(void **state)
{
	(void)state;
	_cleanup_free_ char *text = json(full_record);
	_cleanup_(pol_evrec_freep) struct pol_evrec *rec = parse_ok(text);

	assert_string_equal(rec->run_id, "report.v2-20261129T120000Z-1a2b3c4d");
	assert_string_equal(rec->task_id, "report.v2");
	assert_string_equal(rec->task_source, "/home/me/tasks/report/task.yaml");
	assert_string_equal(rec->task_digest, D64A);
	assert_string_equal(rec->policy_digest, D64B);
	assert_string_equal(rec->status, "SUCCESS");
	assert_int_equal(rec->grades, 1);
	assert_non_null(rec->json);

	/* The views borrow from the tree. */
	assert_ptr_equal(rec->run_id, cJSON_GetObjectItemCaseSensitive(rec->json, "run_id")->valuestring);
	assert_ptr_equal(rec->status, cJSON_GetObjectItemCaseSensitive(rec->json, "status")->valuestring);

	/* agent_canon is [setup, agent, reap, identity], unformatted. */
	assert_non_null(rec->agent_canon);
	assert_true(strncmp(rec->agent_canon, "[{\"status\":\"ok\",\"duration_ms\":412,", 34) == 0);
	assert_non_null(strstr(rec->agent_canon, "\"exit_code\":3,"));
	assert_non_null(strstr(rec->agent_canon, "\"cgroup_emptied\":true"));
	assert_non_null(strstr(rec->agent_canon, "\"nspid_depth\":2"));
	assert_null(strstr(rec->agent_canon, "grade.log"));
	assert_null(strstr(rec->agent_canon, "\"criteria\""));
	assert_null(strchr(rec->agent_canon, '\n'));
	_cleanup_free_ char *again = pol_evrec_agent_canon(rec->json);
	assert_non_null(again);
	assert_string_equal(again, rec->agent_canon);

	/* Not NUL-terminated: exactly len bytes are read. */
	size_t len = strlen(text);
	_cleanup_free_ char *copy = malloc(len + 1);
	assert_non_null(copy);
	memcpy(copy, text, len);
	copy[len] = '}';
	_cleanup_(pol_evrec_freep) struct pol_evrec *rec2 = parse_ok_len(copy, len);
	assert_string_equal(rec2->agent_canon, rec->agent_canon);
}

static void test_minimal_record(void **state)
{
	(void)state;
	_cleanup_free_ char *text = json(minimal_record);
	_cleanup_(pol_evrec_freep) struct pol_evrec *rec = parse_ok(text);
	assert_string_equal(rec->run_id, "t1-20260101T000000Z-00000000");
	assert_string_equal(rec->task_id, "t1");
	assert_string_equal(rec->status, "ERROR");
	assert_int_equal(rec->grades, 0);
	assert_string_equal(rec->agent_canon,
			    "[{\"status\":\"skipped\",\"duration_ms\":0,\"steps\":[]},null,"
			    "{\"status\":\"skipped\",\"cgroup_emptied\":false,\"duration_ms\":0},null]");
}

static void test_free_null(void **state)
{
	(void)state;
	assert_null(pol_evrec_free(NULL));
	assert_null(pol_evrec_agent_canon(NULL));
	_cleanup_(cJSON_Deletep) cJSON *empty = cJSON_CreateObject();
	assert_null(pol_evrec_agent_canon(empty));
}

static void test_accepted_variants(void **state)
{
	static const struct edit edits[] = {
		/* Whitespace, key order, escapes and UTF-8 are the writer's business. */
		{ "'kind': 'warden-eval-run',", "'kind':\t\r\n'\\u0077arden-eval-run',", NULL },
		{ "'details': '/count is 3'",
		  "'details': '/count \\u00e9 \\ud83d\\ude00 \xc3\xa9 \\n'",
		  NULL },
		{ "'host': { 'kernel': '6.1.0-26-amd64', 'mode': 'privileged', 'cgroup_version': 2 }",
		  "'host': { 'cgroup_version': 2, 'mode': 'privileged', 'kernel': '6.1.0-26-amd64' }", NULL },
		/* Integers: the largest, and exponent forms with whole values. */
		{ "'duration_ms': 5000,", "'duration_ms': 9007199254740991,", NULL },
		{ "'duration_ms': 5000,", "'duration_ms': 5e3,", NULL },
		{ "'duration_ms': 5000,", "'duration_ms': 5000.0,", NULL },
		/* Optional identity.failure when the identity did not hold. */
		{ "'checked': true, 'held': true,",
		  "'checked': true, 'held': false, 'failure': 'uid is not the sandbox\\u0027s host uid',", NULL },
		/* A weight with three decimals. */
		{ "'weight': 4.5,", "'weight': 0.125,", NULL },
		{ "'weakenings': ['share-net']", "'weakenings': []", NULL },
		{ "'weakenings': ['share-net']",
		  "'weakenings': ['no-cgroup', 'io_uring', 'bind-host-root', 'bind-container-socket', "
		  "'bind-kernel-fs', 'workspace-anywhere', 'share-net', 'share-uts', 'share-ipc', 'share-cgroup', "
		  "'keep-capabilities']", NULL },
		{ "'signal': null,\n     'detail': 'agent said goodbye'",
		  "'signal': null,\n     'detail': null", NULL },
		{ "'uid': 100000,", "'uid': 4294967295,", NULL },
		{ "'created_at': '2026-11-29T12:00:00Z'", "'created_at': '2024-02-29T23:59:59Z'",
		  NULL },
	};
	(void)state;
	check_edits(edits, ELEMENTSOF(edits));
	/* Output longer than the cap, stamped. */
	_cleanup_free_ char *capped = mutate("'bytes': 120, 'kept': 120, 'truncated': false",
					     "'bytes': 121, 'kept': 120, 'truncated': true");
	_cleanup_free_ char *stamped = mutate_from(capped, "\"stamps\": [],", "'stamps': ['agent_output_truncated'],");
	accepted_text(stamped);
}

static void test_unknown_keys(void **state)
{
	static const struct edit edits[] = {
		{ "'grades': 1,", "'grades': 1, 'extra': 1,", "record: unknown key 'extra'" },
		{ "'file': 'agent.stdout',", "'file': 'agent.stdout', 'mode': 'x',",
		  "phases.agent.stdout: unknown key 'mode'" },
		{ "'log': 'grade.log'", "'log': 'grade.log', 'by2': 1",
		  "phases.grade: unknown key 'by2'" },
		{ "'nspid_depth': 2,", "'nspid_depth': 2, 'Pid': 7,",
		  "identity: unknown key 'Pid'" },
		{ "'details': '/count is 3',", "'details': '/count is 3', 'Details': '',",
		  "criteria[0]: unknown key 'Details'" },
		/* Unprintable keys are escaped and capped in the message. */
		{ "'grades': 1,", "'grades': 1, '\\u001b[31mred\\u0007': 1,",
		  "record: unknown key '\\x1b[31mred\\x07'" },
		{ "'grades': 1,",
		  "'grades': 1, 'xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx': 1,",
		  "unknown key '" "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx...'" },
	};
	(void)state;
	check_edits(edits, ELEMENTSOF(edits));
}

static void test_missing_keys(void **state)
{
	static const struct edit edits[] = {
		{ " 'grades': 1,\n", "", "grades: missing (expected 0..1000000)" },
		{ "'cgroup_emptied': true, ", "",
		  "phases.reap.cgroup_emptied: missing (expected true or false)" },
		{ "'exit_code': 3, ", "",
		  "phases.agent.exit_code: missing (expected 0..255 or null)" },
		{ "'CapAmb': " CAP0 ", ", "", "identity.CapAmb: missing" },
		{ "'separate': false", "'separat': false",
		  "identity.namespaces.net: unknown key 'separat'" },
		{ "'grade': { 'status': 'ok', 'by': 'eval', 'started_at': '2026-11-29T12:00:08Z',\n"
		  "     'duration_ms': 350, 'log': 'grade.log' },\n",
		  "", "phases.grade: missing" },
	};
	(void)state;
	check_edits(edits, ELEMENTSOF(edits));
	refused_text("{}", "schema_version: missing (expected 1)");
}

static void test_duplicate_keys(void **state)
{
	static const struct edit edits[] = {
		{ "'grades': 1,", "'grades': 1, 'grades': 1,", "grades: duplicate key" },
		{ "'score': 1,\n", "'score': 1, 'score': null,\n", "score: duplicate key" },
		{ "'file': 'agent.stderr',", "'file': 'agent.stderr', 'file': 'agent.stderr',",
		  "phases.agent.stderr.file: duplicate key" },
		{ "'checked': true,", "'checked': true, 'checked': true,",
		  "identity.checked: duplicate key" },
	};
	(void)state;
	check_edits(edits, ELEMENTSOF(edits));
}

static void test_wrong_types(void **state)
{
	static const struct edit edits[] = {
		{ "'grades': 1,", "'grades': '1',",
		  "grades: a string is not an integer (expected 0..1000000)" },
		{ "'grades': 1,", "'grades': true,", "grades: a boolean is not an integer" },
		{ "'grades': 1,", "'grades': null,",
		  "grades: null is not allowed (expected 0..1000000)" },
		{ "'cgroup_emptied': true", "'cgroup_emptied': 1",
		  "phases.reap.cgroup_emptied: a number is not a boolean" },
		{ "'stamps': [],", "'stamps': {},", "stamps: an object is not an array" },
		{ "'stamps': [],", "'stamps': [1],", "stamps[0]: a number is not a string" },
		{ "'run_id': 'report.v2-20261129T120000Z-1a2b3c4d',", "'run_id': null,",
		  "run_id: null is not allowed" },
		{ "'reap': {", "'reap': [], 'x': {", "phases: unknown key 'x'" },
		{ "'reap': { 'status': 'ok', 'cgroup_emptied': true, 'duration_ms': 3 }", "'reap': []",
		  "phases.reap: an array is not an object (expected phases.reap)" },
		{ "'score': 1,\n", "'score': '1',\n",
		  "score: a string is not a number (expected a number 0..1 or null)" },
	};
	(void)state;
	check_edits(edits, ELEMENTSOF(edits));
	refused_text("[]", "record: an array is not an object (expected the record)");
	refused_text("null", "record: null is not allowed");
	refused_text("\"x\"", "record: a string is not an object");
}

static void test_integer_ranges(void **state)
{
	static const struct edit edits[] = {
		{ "'exit_code': 3,", "'exit_code': 256,",
		  "phases.agent.exit_code: 256 is out of range (expected 0..255 or null)" },
		{ "'exit_code': 3,", "'exit_code': -1,",
		  "phases.agent.exit_code: -1 is out of range" },
		{ "'exit_code': 3, 'signal': null,", "'exit_code': 3, 'signal': 0,",
		  "phases.agent.signal: 0 is out of range (expected 1..64 or null)" },
		{ "'exit_code': 3, 'signal': null,", "'exit_code': 3, 'signal': 65,",
		  "phases.agent.signal: 65 is out of range" },
		{ "'duration_ms': 412,", "'duration_ms': -1,",
		  "phases.setup.duration_ms: -1 is out of range" },
		{ "'duration_ms': 345,", "'duration_ms': -5,",
		  "criteria[1].run.duration_ms: -5 is out of range" },
		{ "'duration_ms': 411,", "'duration_ms': 9007199254740992,",
		  "phases.setup.steps[0].duration_ms: 9007199254740992 is out of range (expected 0..9007199254740991)" },
		{ "'duration_ms': 5000,", "'duration_ms': 9007199254740993,",
		  "phases.agent.duration_ms: 9007199254740992 is out of range" },
		{ "'duration_ms': 5000,", "'duration_ms': 1e300,",
		  "phases.agent.duration_ms: 1e+300 is out of range" },
		{ "'duration_ms': 5000,", "'duration_ms': -0,",
		  "phases.agent.duration_ms: -0 is out of range" },
		{ "'duration_ms': 5000,", "'duration_ms': 1.5,",
		  "phases.agent.duration_ms: 1.5 is not an integer (expected 0..9007199254740991)" },
		{ "'duration_ms': 5000,", "'duration_ms': 5e-1,",
		  "phases.agent.duration_ms: 0.5 is not an integer" },
		{ "'exit_code': 3,", "'exit_code': 3.25,",
		  "phases.agent.exit_code: 3.25 is not an integer" },
		{ "'schema_version': 1,", "'schema_version': 2,",
		  "schema_version: 2 is not supported (expected 1)" },
		{ "'schema_version': 1,", "'schema_version': 1.5,",
		  "schema_version: 1.5 is not supported" },
		{ "'schema_version': 1,", "'schema_version': '1',",
		  "schema_version: a string is not an integer" },
		{ "'cgroup_version': 2", "'cgroup_version': 3",
		  "host.cgroup_version: 3 is out of range (expected 0..2)" },
		{ "'grades': 1,", "'grades': 1000001,", "grades: 1000001 is out of range" },
		{ "'uid': 100000,", "'uid': 4294967296,",
		  "identity.uid: 4294967296 is out of range" },
		{ "'NoNewPrivs': 1,", "'NoNewPrivs': 2,",
		  "identity.NoNewPrivs: 2 is out of range (expected 0..1)" },
		{ "'Seccomp': 2,", "'Seccomp': 3,",
		  "identity.Seccomp: 3 is out of range (expected 0..2)" },
		{ "'nspid_depth': 2,", "'nspid_depth': 0,",
		  "identity.nspid_depth: 0 is out of range (expected 1..64)" },
		{ "'bytes': 7, 'kept': 7,", "'bytes': 7, 'kept': -7,",
		  "phases.agent.stderr.kept: -7 is out of range" },
	};
	(void)state;
	check_edits(edits, ELEMENTSOF(edits));
}

static void test_numbers(void **state)
{
	static const struct edit edits[] = {
		{ "'score': 1,\n", "'score': 1.01,\n",
		  "score: 1.01 is out of range (expected a number 0..1 or null)" },
		{ "'score': 1,\n", "'score': -0.5,\n", "score: -0.5 is out of range" },
		{ "'weight': 2,", "'weight': 1000000.5,",
		  "criteria[0].weight: 1000000.5 is out of range" },
		{ "'weight': 2,", "'weight': -1,", "criteria[0].weight: -1 is out of range" },
		{ "'weight': 2,", "'weight': 0.0001,",
		  "criteria[0].weight: 0.0001 has more than 3 decimals" },
		{ "'pass_threshold': 0.5,", "'pass_threshold': 1.5,",
		  "criteria[1].pass_threshold: 1.5 is out of range (expected a number 0..1 with at most 3 decimals)" },
		{ "'score': 0, 'passed': false,", "'score': 2, 'passed': false,",
		  "criteria[2].score: 2 is out of range (expected a number 0..1 or null)" },
	};
	(void)state;
	check_edits(edits, ELEMENTSOF(edits));
}

static void test_strings(void **state)
{
	static const struct edit edits[] = {
		/* digests */
		{ "'digest': '" D64A "'", "'digest': 'sha256:0123456789ABCDEF0123456789abcdef0123456789abcdef0123456789abcdef'",
		  "task.digest: 'sha256:0123456789ABCDEF0123456789abcdef0123456789abcdef01234...' is not a digest (expected sha256: and 64 lowercase hex digits)" },
		{ "'digest': '" D64B "'", "'digest': 'sha256:0123'",
		  "policy.digest: 'sha256:0123' is not a digest" },
		{ "'digest': '" D64B "'", "'digest': 'sha512:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef'",
		  "policy.digest: 'sha512:" },
		{ "'digest': '" D64B "'", "'digest': '" D64B "0'",
		  "policy.digest: 'sha256:fedcba9876543210fedcba9876543210fedcba9876543210fedcb...' is not a digest" },
		/* times */
		{ "'created_at': '2026-11-29T12:00:00Z'", "'created_at': '2026-11-29 12:00:00Z'",
		  "created_at: '2026-11-29 12:00:00Z' is not a UTC time (expected YYYY-MM-DDTHH:MM:SSZ" },
		{ "'updated_at': '2026-11-29T12:00:09Z'", "'updated_at': '2026-11-29T12:00:09.123Z'",
		  "updated_at: '2026-11-29T12:00:09.123Z' is not a UTC time (expected YYYY-MM-DDTHH:MM:SSZ, RFC 3339 in UTC)" },
		{ "'updated_at': '2026-11-29T12:00:09Z'", "'updated_at': '2026-11-29T12:00:09+00:00'",
		  "updated_at: '2026-11-29T12:00:09+00:00' is not a UTC time" },
		{ "'created_at': '2026-11-29T12:00:00Z'", "'created_at': '2026-02-29T12:00:00Z'",
		  "created_at: '2026-02-29T12:00:00Z' is not a UTC time" },
		{ "'created_at': '2026-11-29T12:00:00Z'", "'created_at': '2026-11-29T24:00:00Z'",
		  "is not a UTC time" },
		{ "'created_at': '2026-11-29T12:00:00Z'", "'created_at': '2026-11-29T12:00:60Z'",
		  "is not a UTC time" },
		{ "'created_at': '2026-11-29T12:00:00Z'", "'created_at': '2026-11-29t12:00:00z'",
		  "is not a UTC time" },
		{ "'created_at': '2026-11-29T12:00:00Z'", "'created_at': '2026-13-01T12:00:00Z'",
		  "is not a UTC time" },
		{ "'created_at': '2026-11-29T12:00:00Z'", "'created_at': '2026-1a-01T12:00:00Z'",
		  "is not a UTC time" },
		{ "'started_at': '2026-11-29T12:00:02Z'", "'started_at': ''",
		  "phases.agent.started_at: an empty string is not allowed" },
		{ "'started_at': '2026-11-29T12:00:08Z',\n     'duration_ms': 350",
		  "'started_at': 'yesterday',\n     'duration_ms': 350", "phases.grade.started_at: 'yesterday' is not a UTC time" },
		/* task id, run_id */
		{ "'id': 'report.v2'", "'id': '-report'", "task.id: '-report' is not a task id" },
		{ "'id': 'report.v2'", "'id': 'a/b'", "task.id: 'a/b' is not a task id" },
		{ "'id': 'report.v2'",
		  "'id': 'a1234567890123456789012345678901234567890123456789012345678901234'",
		  "task.id: 'a12345678901234567890123456789012345678901234567890123456789...' is not a task id (expected 1 to 64 of" },
		{ "'run_id': 'report.v2-20261129T120000Z-1a2b3c4d'", "'run_id': 'report.v2/../x'",
		  "run_id: 'report.v2/../x' is not a plain name" },
		{ "'run_id': 'report.v2-20261129T120000Z-1a2b3c4d'", "'run_id': '..'",
		  "run_id: '..' is not a plain name" },
		{ "'run_id': 'report.v2-20261129T120000Z-1a2b3c4d'", "'run_id': '.report.v2-20261129T120000Z-1a2b3c4d'",
		  "is not a plain name" },
		{ "'run_id': 'report.v2-20261129T120000Z-1a2b3c4d'", "'run_id': 'other-20261129T120000Z-1a2b3c4d'",
		  "run_id: 'other-20261129T120000Z-1a2b3c4d' is not the run folder of task 'report.v2'" },
		{ "'run_id': 'report.v2-20261129T120000Z-1a2b3c4d'", "'run_id': 'report.v2x-20261129T120000Z-1a2b3c4d'",
		  "is not the run folder of task 'report.v2'" },
		{ "'run_id': 'report.v2-20261129T120000Z-1a2b3c4d'", "'run_id': 'report.v2-20261129T120000Z-1A2B3C4D'",
		  "is not the run folder" },
		{ "'run_id': 'report.v2-20261129T120000Z-1a2b3c4d'", "'run_id': 'report.v2-20261329T120000Z-1a2b3c4d'",
		  "is not the run folder" },
		{ "'run_id': 'report.v2-20261129T120000Z-1a2b3c4d'", "'run_id': 'report.v2-20261129T120000Z-1a2b3c4d5'",
		  "is not the run folder" },
		{ "'run_id': 'report.v2-20261129T120000Z-1a2b3c4d'", "'run_id': 'report.v2'",
		  "is not the run folder" },
		/* task.source */
		{ "'source': '/home/me/tasks/report/task.yaml'", "'source': 'tasks/report/task.yaml'",
		  "task.source: 'tasks/report/task.yaml' is not an absolute, normalised file path" },
		{ "'source': '/home/me/tasks/report/task.yaml'", "'source': '/home/me/../etc/task.yaml'",
		  "is not an absolute, normalised file path" },
		{ "'source': '/home/me/tasks/report/task.yaml'", "'source': '/home/me/./task.yaml'",
		  "is not an absolute" },
		{ "'source': '/home/me/tasks/report/task.yaml'", "'source': '/home//me/task.yaml'",
		  "is not an absolute" },
		{ "'source': '/home/me/tasks/report/task.yaml'", "'source': '/home/me/'",
		  "is not an absolute" },
		{ "'source': '/home/me/tasks/report/task.yaml'", "'source': '/'",
		  "is not an absolute" },
		{ "'source': '/home/me/tasks/report/task.yaml'", "'source': '/home/me\\nx/task.yaml'",
		  "task.source: '/home/me\\x0ax/task.yaml' is not an absolute" },
		/* words and fixed names */
		{ "'file': 'agent.stdout'", "'file': 'x/../y'",
		  "phases.agent.stdout.file: 'x/../y' is not one of agent.stdout (expected agent.stdout)" },
		{ "'file': 'agent.stderr'", "'file': 'agent.stdout'",
		  "phases.agent.stderr.file: 'agent.stdout' is not one of agent.stderr" },
		{ "'log': 'grade.log'", "'log': '../grade.log'",
		  "phases.grade.log: '../grade.log' is not one of grade.log" },
		{ "'kind': 'warden-eval-run'", "'kind': 'warden-run'",
		  "kind: 'warden-run' is not one of warden-eval-run" },
		{ "'mode': 'privileged'", "'mode': 'root'",
		  "host.mode: 'root' is not one of privileged, unprivileged" },
		{ "'status': 'SUCCESS'", "'status': 'success'",
		  "status: 'success' is not one of SETUP_FAILED, ERROR, TIMEOUT, NOT_GRADED, INTERRUPTED, SUCCESS, FAILURE" },
		{ "'by': 'eval'", "'by': 'me'", "phases.grade.by: 'me' is not one of eval, grade" },
		{ "'check': 'json_equals'", "'check': 'json_equal'",
		  "criteria[0].check: 'json_equal' is not one of" },
		{ "'reap': { 'status': 'ok'", "'reap': { 'status': 'timeout'",
		  "phases.reap.status: 'timeout' is not one of ok, failed, skipped" },
		{ "'agent': { 'status': 'ok'", "'agent': { 'status': 'failed'",
		  "phases.agent.status: 'failed' is not one of ok, timeout, error, skipped" },
		{ "'weakenings': ['share-net']", "'weakenings': ['share-pid']",
		  "policy.weakenings[0]: 'share-pid' is not one of no-cgroup, io_uring" },
		{ "'weakenings': ['share-net']", "'weakenings': ['share-net', 'share-net']",
		  "policy.weakenings[1]: 'share-net' appears twice" },
		/* other strings */
		{ "'warden_version': '0.1.0'", "'warden_version': ''",
		  "warden_version: an empty string is not allowed" },
		{ "'warden_version': '0.1.0'", "'warden_version': '0.1 beta'",
		  "warden_version: '0.1 beta' is not a printable word" },
		{ "'kernel': '6.1.0-26-amd64'",
		  "'kernel': '6.1.0-26-amd64-0123456789012345678901234567890123456789012345678901'",
		  "host.kernel: '6.1.0-26-amd64-012345678901234567890123456789012345678901234...' is not a printable word (expected 1 to 64 printable ASCII characters, no space)" },
		{ "'CapEff': " CAP0, "'CapEff': '000000000000000G'",
		  "identity.CapEff: '000000000000000G' is not a capability set" },
		{ "'CapBnd': " CAP0, "'CapBnd': '00000000000000000'",
		  "identity.CapBnd: '00000000000000000' is not a capability set (expected 16 lowercase hex digits)" },
		{ "'description': 'informational'", "'description': ''",
		  "criteria[2].description: an empty string is not allowed" },
		{ "'detail': 'agent said goodbye'", "'detail': ''",
		  "phases.agent.detail: an empty string is not allowed" },
	};
	(void)state;
	check_edits(edits, ELEMENTSOF(edits));
}

/* "'key': 'ccc...'" with n times ch, in ' notation. The caller frees it. */
static char *long_field(const char *key, char ch, size_t n)
{
	size_t cap = strlen(key) + n + 8;
	char *s = malloc(cap);
	assert_non_null(s);
	int o = snprintf(s, cap, "'%s': '", key);
	assert_true(o > 0);
	memset(s + o, ch, n);
	memcpy(s + (size_t)o + n, "'", 2);
	return s;
}

static void test_long_strings(void **state)
{
	/* A free-text field at its longest is accepted, one byte longer refused. */
	static const struct {
		const char *key, *from;
		char ch;
		size_t max;
		const char *msg;
	} caps[] = {
		{ "details", "'details': 'out/x is missing'", 'd', 512,
		  "criteria[2].details: a string of 513 bytes is too long (expected at most 512 bytes)" },
		{ "detail", "'detail': 'agent said goodbye'", 'e', 640,
		  "phases.agent.detail: a string of 641 bytes is too long (expected at most 640 bytes)" },
		{ "description", "'description': 'informational'", 'f', 4096,
		  "criteria[2].description: a string of 4097 bytes is too long (expected at most 4096 bytes)" },
	};
	(void)state;
	for (size_t i = 0; i < ELEMENTSOF(caps); i++) {
		_cleanup_free_ char *longest = long_field(caps[i].key, caps[i].ch, caps[i].max);
		_cleanup_free_ char *over = long_field(caps[i].key, caps[i].ch, caps[i].max + 1);
		accepted(caps[i].from, longest);
		refused(caps[i].from, over, caps[i].msg);
	}
	/* run_id: at most 128 bytes, a plain name first. */
	_cleanup_free_ char *run_id = long_field("run_id", 'r', 129);
	refused("'run_id': 'report.v2-20261129T120000Z-1a2b3c4d'", run_id,
		"run_id: 'rrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrr...' is not a plain name (expected 1 to 128 of");
	/* task.source: at most 4095 bytes, components at most 255. */
	_cleanup_free_ char *src = long_field("source", 'a', 4095);
	for (size_t i = 11; i < 11 + 4095; i += 200)
		src[i] = '/';
	accepted("'source': '/home/me/tasks/report/task.yaml'", src);
	_cleanup_free_ char *src_long = long_field("source", 'a', 4096);
	for (size_t i = 11; i < 11 + 4096; i += 200)
		src_long[i] = '/';
	refused("'source': '/home/me/tasks/report/task.yaml'", src_long,
		"task.source: a string of 4096 bytes is too long (expected at most 4095 bytes)");
	_cleanup_free_ char *name255 = long_field("source", 'a', 256);
	name255[11] = '/';
	accepted("'source': '/home/me/tasks/report/task.yaml'", name255);
	_cleanup_free_ char *name256 = long_field("source", 'a', 257);
	name256[11] = '/';
	refused("'source': '/home/me/tasks/report/task.yaml'", name256,
		"is not an absolute, normalised file path");

	/* A long value is capped in the message. */
	_cleanup_free_ char *mode = long_field("mode", 'm', 500);
	refused("'mode': 'privileged'", mode, "host.mode: a string of 500 bytes is too long");
	_cleanup_free_ char *mode64 = long_field("mode", 'm', 64);
	refused("'mode': 'privileged'", mode64,
		"host.mode: 'mmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmm...' is not one of");
}

static void test_streams(void **state)
{
	static const struct edit edits[] = {
		{ "'bytes': 120, 'kept': 120, 'truncated': false", "'bytes': 121, 'kept': 120, 'truncated': false",
		  "phases.agent.stdout.truncated: false with kept 120 of 121 bytes (expected kept < bytes)" },
		{ "'bytes': 120, 'kept': 120, 'truncated': false", "'bytes': 120, 'kept': 120, 'truncated': true",
		  "phases.agent.stdout.truncated: true with kept 120 of 120 bytes" },
		{ "'bytes': 7, 'kept': 7,", "'bytes': 7, 'kept': 8,",
		  "phases.agent.stderr.kept: 8 is more than bytes 7 (expected at most bytes)" },
		{ "'stamps': [],", "'stamps': ['agent_output_truncated'],",
		  "stamps: agent_output_truncated without its cause" },
	};
	(void)state;
	check_edits(edits, ELEMENTSOF(edits));
	/* Truncated output without its stamp. */
	_cleanup_free_ char *no_stamp = mutate("'bytes': 7, 'kept': 7, 'truncated': false",
					       "'bytes': 9, 'kept': 7, 'truncated': true");
	refused_text(no_stamp, "stamps: agent_output_truncated is missing");
}

static void test_criteria(void **state)
{
	static const struct edit edits[] = {
		{ "'evaluated': true, 'score': 0, 'passed': false,", "'evaluated': false, 'score': 0, 'passed': false,",
		  "criteria[2].score: a number with evaluated false (expected null exactly when not evaluated)" },
		{ "'evaluated': true, 'score': 0, 'passed': false,", "'evaluated': true, 'score': null, 'passed': false,",
		  "criteria[2].score: null with evaluated true" },
		{ "'evaluated': true, 'score': 0, 'passed': false,", "'evaluated': true, 'score': 0, 'passed': true,",
		  "criteria[2].passed: true with score 0 and pass_threshold 1 (expected score >= pass_threshold)" },
		{ "'score': 1, 'passed': true,\n    'details': '/count is 3'",
		  "'score': 0.5, 'passed': true,\n    'details': '/count is 3'", "criteria[0].passed: true with score 0.5" },
		{ "'details': '/count is 3', 'run': null", "'details': '/count is 3', 'run': 1",
		  "criteria[0].run: a number is not an object (expected a STEP or null)" },
		{ "'details': 'out/x is missing', 'run': null",
		  "'details': 'out/x is missing', 'run': { 'status': 'ok', 'reason': 'exited', 'exit_code': 0, "
		  "'signal': null, 'detail': null, 'started_at': '2026-11-29T12:00:08Z', 'duration_ms': 1, "
		  "'peak_memory_bytes': null, 'cpu_usec': null }",
		  "criteria[2].run: a step for a file_exists check (expected null unless the check is command)" },
		/* A criterion with weight 0 never decides the status. */
		{ "'evaluated': true, 'score': 0, 'passed': false,",
		  "'evaluated': true, 'score': 0, 'passed': false,",
		  NULL },
	};
	(void)state;
	check_edits(edits, ELEMENTSOF(edits));
}

/* The full record's criteria[] replaced by n copies of one criterion. */
static char *with_criteria(size_t n)
{
	static const char one[] = "{'description':'c','check':'file_exists','weight':1,'pass_threshold':1,"
				  "'evaluated':true,'score':1,'passed':true,'details':'','run':null}";
	const char *start = strstr(full_record, " 'criteria': [");
	const char *end = strstr(full_record, "\n 'score': 1,\n");
	assert_non_null(start);
	assert_non_null(end);
	end++;
	size_t cap = strlen(full_record) + n * sizeof(one) + 64, o = 0;
	_cleanup_free_ char *tmp = malloc(cap);
	assert_non_null(tmp);
	memcpy(tmp, full_record, (size_t)(start - full_record));
	o = (size_t)(start - full_record);
	o += (size_t)snprintf(tmp + o, cap - o, " 'criteria': [");
	for (size_t i = 0; i < n; i++)
		o += (size_t)snprintf(tmp + o, cap - o, "%s%s", i ? "," : "", one);
	o += (size_t)snprintf(tmp + o, cap - o, "],\n");
	(void)snprintf(tmp + o, cap - o, "%s", end);
	return json(tmp);
}

static void test_criteria_count(void **state)
{
	(void)state;
	_cleanup_free_ char *c64 = with_criteria(64);
	accepted_text(c64);
	_cleanup_free_ char *c65 = with_criteria(65);
	refused_text(c65, "criteria: more than 64 entries (expected an array of 1..64 criteria)");
	_cleanup_free_ char *c0 = with_criteria(0);
	refused_text(c0, "criteria: 0 entries are too few (expected an array of 1..64 criteria)");
}

static void test_steps(void **state)
{
	(void)state;
	/* 33 setup steps. */
	const char *from = "'steps': [\n   { 'status': 'ok', 'reason': 'exited', 'exit_code': 0, 'signal': null, 'detail': null,\n"
			   "     'started_at': '2026-11-29T12:00:01Z'";
	const char *step = "{'status':'ok','reason':'exited','exit_code':0,'signal':null,'detail':null,"
			   "'started_at':'2026-11-29T12:00:01Z','duration_ms':1,'peak_memory_bytes':null,'cpu_usec':null},";
	size_t cap = 33 * strlen(step) + strlen(from) + 16;
	_cleanup_free_ char *to = malloc(cap);
	assert_non_null(to);
	size_t o = (size_t)snprintf(to, cap, "'steps': [");
	for (int i = 0; i < 32; i++)
		o += (size_t)snprintf(to + o, cap - o, "%s", step);
	(void)snprintf(to + o, cap - o, "%s", from + strlen("'steps': ["));
	refused(from, to, "phases.setup.steps: more than 32 entries (expected an array of 0..32 STEP objects)");

	refused("'steps': [\n   { 'status': 'ok', 'reason': 'exited', 'exit_code': 0, 'signal': null, 'detail': null,\n"
		"     'started_at': '2026-11-29T12:00:09Z'",
		"'steps': [\n   { 'status': 'ok', 'reason': 'exited', 'exit_code': 0, 'signal': null, 'detail': null, 'x': 1,\n"
		"     'started_at': '2026-11-29T12:00:09Z'",
		"phases.teardown.steps[0]: unknown key 'x' (expected only the keys of a STEP)");
	refused("'status': 'ok', 'duration_ms': 412, 'steps': [", "'status': 'skipped', 'duration_ms': 412, 'steps': [",
		"phases.setup.status: 'skipped' with some steps (expected skipped exactly when no step ran)");
}

static void test_step_rules(void **state)
{
	static const struct edit edits[] = {
		/* Both may be set: a wall-clock kill can race the command's own exit. */
		{ "'exit_code': 3, 'signal': null,", "'exit_code': 3, 'signal': 9,", NULL },
		{ "'reason': 'exited', 'exit_code': 3,", "'reason': 'exited', 'exit_code': null,",
		  "phases.agent.exit_code: null with reason exited (expected the exit code)" },
		{ "'agent': { 'status': 'ok', 'reason': 'exited', 'exit_code': 3,",
		  "'agent': { 'status': 'ok', 'reason': 'signaled', 'exit_code': null,",
		  "phases.agent.signal: null with reason signaled" },
		/* The agent: ok unless its sandbox failed or it hit its timeout; its exit code is no verdict. */
		{ "'agent': { 'status': 'ok', 'reason': 'exited', 'exit_code': 3,",
		  "'agent': { 'status': 'ok', 'reason': 'oom', 'exit_code': null,", NULL },
		{ "'agent': { 'status': 'ok', 'reason': 'exited', 'exit_code': 3,",
		  "'agent': { 'status': 'ok', 'reason': 'wall-timeout', 'exit_code': null,",
		  "phases.agent.status: 'ok' does not fit reason wall-timeout (expected timeout)" },
		{ "'agent': { 'status': 'ok', 'reason': 'exited', 'exit_code': 3,",
		  "'agent': { 'status': 'timeout', 'reason': 'exited', 'exit_code': 3,",
		  "phases.agent.status: 'timeout' does not fit reason exited (expected ok)" },
		{ "'agent': { 'status': 'ok', 'reason': 'exited', 'exit_code': 3,",
		  "'agent': { 'status': 'ok', 'reason': 'attestation-failed', 'exit_code': null,",
		  "phases.agent.status: 'ok' does not fit reason attestation-failed (expected error)" },
		{ "'agent': { 'status': 'ok', 'reason': 'exited', 'exit_code': 3,",
		  "'agent': { 'status': 'skipped', 'reason': 'exited', 'exit_code': 3,",
		  "phases.agent.status: 'skipped' does not fit reason exited (expected ok)" },
		/* A step: ok exactly when it exited with 0. */
		{ "'exit_code': 0, 'signal': null,\n      'detail': null",
		  "'exit_code': 1, 'signal': null,\n      'detail': null",
		  "criteria[1].run.status: 'ok' does not fit reason exited with a non-zero exit code (expected failed)" },
		{ "'status': 'ok', 'reason': 'exited', 'exit_code': 0, 'signal': null, 'detail': null,\n"
		  "     'started_at': '2026-11-29T12:00:01Z'",
		  "'status': 'ok', 'reason': 'oom', 'exit_code': null, 'signal': 9, 'detail': null,\n"
		  "     'started_at': '2026-11-29T12:00:01Z'",
		  "phases.setup.steps[0].status: 'ok' does not fit reason oom (expected failed)" },
		{ "'status': 'ok', 'reason': 'exited', 'exit_code': 0, 'signal': null, 'detail': null,\n"
		  "     'started_at': '2026-11-29T12:00:01Z'",
		  "'status': 'failed', 'reason': 'exited', 'exit_code': 0, 'signal': null, 'detail': null,\n"
		  "     'started_at': '2026-11-29T12:00:01Z'",
		  "phases.setup.steps[0].status: 'failed' does not fit reason exited with exit code 0 (expected ok)" },
	};
	(void)state;
	check_edits(edits, ELEMENTSOF(edits));
}

/* The limit events of a step: counts or null, each key optional (older records lack them). */
static void test_limit_events(void **state)
{
	(void)state;
	static const struct edit edits[] = {
		{ "'oom_kills': 1,", "'oom_kills': 9007199254740991,", NULL },
		{ "'oom_kills': 1,", "'oom_kills': null,", NULL },
		{ "'oom_kills': 1,", "", NULL },
		{ "'pids_limit_hits': 7,", "", NULL },
		{ "'oom_kills': 1,", "'oom_kills': -1,",
		  "phases.agent.oom_kills: -1 is out of range (expected 0..9007199254740991 or null)" },
		{ "'oom_kills': 1,", "'oom_kills': 1.5,", "phases.agent.oom_kills: 1.5 is not an integer" },
		{ "'oom_kills': 1,", "'oom_kills': '1',", "phases.agent.oom_kills" },
		{ "'pids_limit_hits': 7,", "'pids_limit_hits': true,", "phases.agent.pids_limit_hits" },
		{ "'pids_limit_hits': 0 }", "'pids_limit_hits': 9007199254740992 }",
		  "phases.setup.steps[0].pids_limit_hits: 9007199254740992 is out of range" },
		{ "'pids_limit_hits': null }", "'pids_limit_hits': {} }",
		  "criteria[1].run.pids_limit_hits" },
		{ "'oom_kills': 1,", "'oom_kills': 1, 'oom_kills': 2,", "oom_kills" },
	};
	check_edits(edits, ELEMENTSOF(edits));
	refused("'oom_kills': 1,", "'oom_kills': 1, 'oom_kill': 2,", "oom_kill");
}

/* A run that a signal stopped is INTERRUPTED, whatever its phases show. */
static void test_interrupted(void **state)
{
	(void)state;
	accepted("'status': 'SUCCESS'", "'status': 'INTERRUPTED'");
	_cleanup_free_ char *min = mutate_from(minimal_record, "'status':'ERROR'",
					       "'status':'INTERRUPTED'");
	accepted_text(min);
	refused("'status': 'SUCCESS'", "'status': 'interrupted'", "is not one of");
}

static void test_stamps(void **state)
{
	static const struct edit edits[] = {
		{ "'stamps': [],", "'stamps': ['regraded', 'regraded'],",
		  "stamps[1]: 'regraded' appears twice" },
		{ "'stamps': [],", "'stamps': ['cheated'],",
		  "stamps[0]: 'cheated' is not one of graded_without_setup, regraded, agent_output_truncated" },
		{ "'stamps': [],", "'stamps': ['reference_missing', 'x', 'y', 'z', 'a', 'b', 'c', 'd', 'e', 'f', 'g', 'h', 'i', 'j', 'k', 'l', 'm'],",
		  "stamps: more than 16 entries" },
		{ "'stamps': [],", "'stamps': ['regraded'],",
		  "stamps: regraded without its cause" },
		{ "'by': 'eval'", "'by': 'grade'", "stamps: regraded is missing" },
		{ "'stamps': [],", "'stamps': ['no_cgroup'],", NULL },
		{ "'stamps': [],", "'stamps': ['teardown_failed'],",
		  "stamps: teardown_failed without its cause" },
		{ "'stamps': [],", "'stamps': ['reference_missing'],", NULL },
	};
	(void)state;
	check_edits(edits, ELEMENTSOF(edits));
}

static void test_record_rules(void **state)
{
	static const struct edit edits[] = {
		{ "'status': 'SUCCESS'", "'status': 'FAILURE'",
		  "status: FAILURE while every weighted criterion passed (expected SUCCESS)" },
		{ "'status': 'SUCCESS'", "'status': 'NOT_GRADED'",
		  "status: NOT_GRADED with phases.grade.status ok" },
		{ "'status': 'SUCCESS'", "'status': 'TIMEOUT'",
		  "status: TIMEOUT while the agent did not time out" },
		{ "'status': 'SUCCESS'", "'status': 'SETUP_FAILED'",
		  "status: SETUP_FAILED without a failed setup" },
		{ "'status': 'SUCCESS'", "'status': 'ERROR'", NULL },
		{ "'grades': 1,", "'grades': 0,",
		  "grades: 0 with phases.grade.status ok (expected at least 1)" },
		{ "'score': 1,\n", "'score': null,\n",
		  "score: null with phases.grade.status ok (expected a number)" },
		{ "'status': 'ok', 'by': 'eval', 'started_at': '2026-11-29T12:00:08Z'",
		  "'status': 'skipped', 'by': 'eval', 'started_at': '2026-11-29T12:00:08Z'",
		  "phases.grade.started_at: a time with status skipped (expected null exactly when skipped)" },
		{ "'started_at': '2026-11-29T12:00:08Z',\n     'duration_ms': 350",
		  "'started_at': null,\n     'duration_ms': 350", "phases.grade.started_at: null with status ok" },
		{ "'checked': true,", "'checked': false,",
		  "identity.checked: false (expected true" },
		{ "'checked': true, 'held': true,", "'checked': true, 'held': false,",
		  "identity.failure: missing with held false" },
		{ "'checked': true, 'held': true,", "'checked': true, 'held': true, 'failure': 'x',",
		  "identity.failure: present with held true" },
		{ "'net': " NS(4026531840, 4026531840, false), "'net': " NS(4026531840, 4026531840, true),
		  "identity.namespaces.net.separate: true (expected true exactly when supervisor and sandbox differ)" },
		{ "'uts': " NS(4026531838, 4026532205, true), "'uts': " NS(4026531838, 4026532205, false),
		  "identity.namespaces.uts.separate: false" },
	};
	(void)state;
	check_edits(edits, ELEMENTSOF(edits));

	/* The minimal record's own rules. */
	_cleanup_free_ char *with_identity = mutate_from(minimal_record, "'identity':null", "'identity':{}");
	refused_text(with_identity, "identity.checked: missing");
	_cleanup_free_ char *not_graded = mutate_from(minimal_record, "'status':'ERROR'", "'status':'NOT_GRADED'");
	accepted_text(not_graded);
	_cleanup_free_ char *scored = mutate_from(minimal_record, "'score':null,'status'", "'score':0,'status'");
	refused_text(scored, "score: a number with phases.grade.status skipped (expected null)");
	_cleanup_free_ char *reaped = mutate_from(minimal_record, "'reap':{'status':'skipped'", "'reap':{'status':'ok'");
	refused_text(reaped, "phases.reap.status: 'ok' while phases.agent is null (expected skipped)");
	_cleanup_free_ char *setup_failed =
		mutate_from(minimal_record, "'status':'ERROR'", "'status':'SETUP_FAILED'");
	refused_text(setup_failed, "status: SETUP_FAILED without a failed setup");
}

static void test_syntax(void **state)
{
	static const struct edit edits[] = {
		{ "'detail': 'agent said goodbye'", "'detail': 'agent\\u0000said goodbye'",
		  "\\u0000 in a string (NUL is not allowed)" },
		{ "'grades': 1,", "'grades': 1, 'g\\u0000x': 1,", "\\u0000 in a string" },
		{ "'detail': 'agent said goodbye'", "'detail': 'agent\tsaid'",
		  "a control character in a string" },
		{ "'detail': 'agent said goodbye'", "'detail': 'agent \\x'",
		  "an invalid escape in a string" },
		{ "'detail': 'agent said goodbye'", "'detail': 'agent \\u12'",
		  "a \\u escape without 4 hex digits" },
		{ "'detail': 'agent said goodbye'", "'detail': '\\ud800'",
		  "an unpaired surrogate" },
		{ "'detail': 'agent said goodbye'", "'detail': '\\udc00x'",
		  "an unpaired surrogate" },
		{ "'detail': 'agent said goodbye'", "'detail': '\\ud800\\u0041'",
		  "an unpaired surrogate" },
		{ "'detail': 'agent said goodbye'", "'detail': '\xff'", "invalid UTF-8" },
		{ "'detail': 'agent said goodbye'", "'detail': '\xc0\xaf'", "invalid UTF-8" },
		{ "'detail': 'agent said goodbye'", "'detail': '\xed\xa0\x80'", "invalid UTF-8" },
		{ "'detail': 'agent said goodbye'", "'detail': '\xf4\x90\x80\x80'",
		  "invalid UTF-8" },
		{ "'detail': 'agent said goodbye'", "'detail': '\xe2\x82'", "invalid UTF-8" },
		{ "'grades': 1,", "'grades': 01,", "a missing ',' or '}' in an object" },
		{ "'grades': 1,", "'grades': 1.,", "a number without digits after '.'" },
		{ "'grades': 1,", "'grades': .5,", "not a JSON value" },
		{ "'grades': 1,", "'grades': +1,", "not a JSON value" },
		{ "'grades': 1,", "'grades': 1e,", "a number without digits in its exponent" },
		{ "'grades': 1,", "'grades': -,", "a number without digits" },
		{ "'grades': 1,", "'grades': 0x1,", "a missing ',' or '}'" },
		{ "'grades': 1,", "'grades': 1.000000000000000000000000000000000,",
		  "a number longer than 32 characters" },
		{ "'grades': 1,", "'grades': NaN,", "not a JSON value" },
		{ "'grades': 1,", "'grades': 1,,", "an object key that is not a string" },
		{ "'stamps': [],", "'stamps': [,],", "not a JSON value" },
		{ "'stamps': [],", "'stamps': ['regraded',],", "not a JSON value" },
		{ "'grades': 1,", "'grades' 1,", "a missing ':' after an object key" },
		{ "'grades': 1,", "grades: 1,", "an object key that is not a string" },
		{ "'grades': 1,", "'grades': tru,", "not a JSON value" },
		{ "'grades': 1,", "'grades':\x01 1,", "not a JSON value" },
		{ "'grades': 1,", "'grades':\x0b 1,", "not a JSON value" },
		{ "'grades': 1,", "'grades': 1, 'x': [[[[[[[[1]]]]]]]],",
		  "nesting deeper than 8 levels" },
	};
	(void)state;
	_cleanup_free_ char *text = json(full_record);
	size_t len = strlen(text);

	/* Trailing bytes, before and after whitespace. */
	_cleanup_free_ char *trail = malloc(len + 8);
	assert_non_null(trail);
	memcpy(trail, text, len);
	memcpy(trail + len, " x", 3);
	refused_text(trail, "record: invalid JSON at byte");
	refused_text(trail, "bytes after the JSON value");
	memcpy(trail + len, "{}", 3);
	refused_text(trail, "bytes after the JSON value");
	memcpy(trail + len, " \n\t\r", 5);
	accepted_text(trail);

	/* A NUL byte anywhere, even at the end. */
	memcpy(trail, text, len);
	trail[len] = '\0';
	refused_len(trail, len + 1, -EBADMSG, "NUL byte at byte");
	char nul_inside[] = "{\"schema_version\": 1\0}";
	refused_len(nul_inside, sizeof(nul_inside) - 1, -EBADMSG, "record: a NUL byte at byte 20");

	/* Escapes, UTF-8, numbers and punctuation that are not JSON (the table above). */
	check_edits(edits, ELEMENTSOF(edits));
	refused_text("\xef\xbb\xbf{}", "record: invalid JSON at byte 0: not a JSON value");
	refused_text("", "record: invalid JSON at byte 0: a missing value");
	refused_text("   ", "record: invalid JSON at byte 3: a missing value");
	refused_text("{\"a\":\"", "an unterminated string");
	refused_text("{\"a\":\"\\", "an unterminated string");
	refused_text("{\"a\":1", "a missing ',' or '}' in an object");
	refused_text("[1", "a missing ',' or ']' in an array");
	refused_text("{\"schema_version\":1,\"a\":[[[[[[[1]]]]]]]}", "record: unknown key 'a'");

	/* Over-size input: -E2BIG before anything is read. */
	struct pol_evrec *out = sentinel;
	char why[128] = "";
	assert_int_equal(pol_evrec_parse("", (size_t)EVREC_MAX_INPUT_BYTES + 1, &out, why, sizeof(why)),
			 -E2BIG);
	assert_ptr_equal(out, sentinel);
	assert_non_null(strstr(why, "is too large (expected at most 4194304 bytes)"));
	_cleanup_free_ char *big = malloc((size_t)EVREC_MAX_INPUT_BYTES + 1);
	assert_non_null(big);
	memset(big, ' ', (size_t)EVREC_MAX_INPUT_BYTES + 1);
	memcpy(big, text, len);
	refused_len(big, (size_t)EVREC_MAX_INPUT_BYTES + 1, -E2BIG, "is too large");
	accepted_len(big, EVREC_MAX_INPUT_BYTES);
}

static void test_why_buffer(void **state)
{
	(void)state;
	struct pol_evrec *out = sentinel;
	char why[8];
	memset(why, 'x', sizeof(why));
	assert_int_equal(pol_evrec_parse("{}", 2, &out, why, sizeof(why)), -EBADMSG);
	assert_string_equal(why, "schema_");
	assert_int_equal(pol_evrec_parse("{}", 2, &out, NULL, 0), -EBADMSG);
	assert_int_equal(pol_evrec_parse(NULL, 0, &out, why, sizeof(why)), -EBADMSG);
	assert_ptr_equal(out, sentinel);
	assert_int_equal(pol_evrec_parse("{}", 2, NULL, why, sizeof(why)), -EBADMSG);
}

static char *canon_of(const char *text)
{
	_cleanup_(pol_evrec_freep) struct pol_evrec *rec = parse_ok(text);
	return TAKE_PTR(rec->agent_canon);
}

static void test_agent_canon(void **state)
{
	(void)state;
	_cleanup_free_ char *text = json(full_record);
	_cleanup_free_ char *base = canon_of(text);

	/* Grading, criteria, stamps and top-level fields are not the agent phase. */
	static const char *const same[][2] = {
		{ "'duration_ms': 350", "'duration_ms': 351" },
		{ "'updated_at': '2026-11-29T12:00:09Z'", "'updated_at': '2026-11-30T12:00:09Z'" },
		{ "'grades': 1,", "'grades': 2," },
		{ "'details': '/count is 3'", "'details': '/count is 4'" },
		{ "'duration_ms': 19,", "'duration_ms': 18," },
	};
	_cleanup_free_ char *work = strdup(full_record);
	assert_non_null(work);
	for (size_t i = 0; i < ELEMENTSOF(same); i++) {
		/* keep the ' notation for the next step */
		_cleanup_free_ char *next = unjson(mutate_from(work, same[i][0], same[i][1]));
		free(work);
		work = TAKE_PTR(next);
		_cleanup_free_ char *j = json(work);
		_cleanup_free_ char *canon = canon_of(j);
		assert_string_equal(canon, base);
	}

	/* A regrade, with its stamps. */
	_cleanup_free_ char *by = unjson(mutate("'by': 'eval'", "'by': 'grade'"));
	_cleanup_free_ char *regraded =
		mutate_from(by, "'stamps': [],", "'stamps': ['regraded', 'graded_without_setup'],");
	_cleanup_free_ char *regraded_canon = canon_of(regraded);
	assert_string_equal(regraded_canon, base);

	/* The agent phase, setup, reap and identity are. */
	static const char *const differ[][2] = {
		{ "'exit_code': 3,", "'exit_code': 4," },
		{ "'duration_ms': 5000,", "'duration_ms': 5001," },
		{ "'bytes': 7, 'kept': 7,", "'bytes': 8, 'kept': 8," },
		{ "'duration_ms': 412,", "'duration_ms': 413," },
		{ "'duration_ms': 3 }", "'duration_ms': 4 }" },
		{ "'uid': 100000,", "'uid': 100002," },
		{ "'detail': 'agent said goodbye'", "'detail': 'agent said hello'" },
	};
	for (size_t i = 0; i < ELEMENTSOF(differ); i++) {
		_cleanup_free_ char *j = mutate(differ[i][0], differ[i][1]);
		_cleanup_free_ char *canon = canon_of(j);
		assert_string_not_equal(canon, base);
	}

	/* Formatting does not matter: the tree, printed either way, gives the same canon. */
	_cleanup_(pol_evrec_freep) struct pol_evrec *rec = parse_ok(text);
	_cleanup_free_ char *flat = cJSON_PrintUnformatted(rec->json);
	_cleanup_free_ char *pretty = cJSON_Print(rec->json);
	assert_non_null(flat);
	assert_non_null(pretty);
	_cleanup_free_ char *c1 = canon_of(flat);
	_cleanup_free_ char *c2 = canon_of(pretty);
	assert_string_equal(c1, base);
	assert_string_equal(c2, base);

	/* pol_evrec_agent_canon does not modify the tree it reads. */
	_cleanup_free_ char *before = cJSON_PrintUnformatted(rec->json);
	_cleanup_free_ char *canon = pol_evrec_agent_canon(rec->json);
	_cleanup_free_ char *after = cJSON_PrintUnformatted(rec->json);
	assert_string_equal(before, after);
	assert_string_equal(canon, base);
}

/* Every proper prefix of the record is invalid JSON. */
static void test_truncation_sweep(void **state)
{
	(void)state;
	_cleanup_free_ char *text = json(full_record);
	size_t len = strlen(text);
	while (len > 0 && text[len - 1] == '\n')
		len--;
	for (size_t n = 0; n < len; n++) {
		struct pol_evrec *out = sentinel;
		char why[256] = "";
		int r = pol_evrec_parse(text, n, &out, why, sizeof(why));
		if (r != -EBADMSG)
			fail_msg("prefix %zu: %d", n, r);
		assert_ptr_equal(out, sentinel);
		assert_non_null(strstr(why, "record: invalid JSON at byte "));
	}
}

/* Every single-bit flip of the minimal record is refused, or accepted as a valid record. */
static void test_bit_flip_sweep(void **state)
{
	(void)state;
	_cleanup_free_ char *text = json(minimal_record);
	_cleanup_free_ char *base = canon_of(text);
	size_t len = strlen(text), accepted_n = 0;
	for (size_t i = 0; i < len; i++) {
		for (unsigned b = 0; b < 8; b++) {
			text[i] = (char)(text[i] ^ (1u << b));
			struct pol_evrec *out = sentinel;
			char why[256] = "";
			int r = pol_evrec_parse(text, len, &out, why, sizeof(why));
			if (r == 0) {
				accepted_n++;
				assert_non_null(out->agent_canon);
				pol_evrec_free(out);
			} else {
				if (r != -EBADMSG)
					fail_msg("flip %zu.%u: %d", i, b, r);
				assert_ptr_equal(out, sentinel);
				assert_true(why[0] != '\0');
			}
			text[i] = (char)(text[i] ^ (1u << b));
		}
	}
	/* Flips in digests, times, the random part of run_id and whitespace survive; most do not. */
	assert_true(accepted_n > 0);
	assert_true(accepted_n < len * 8 / 4);
	_cleanup_free_ char *again = canon_of(text);
	assert_string_equal(again, base);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_full_record),
		cmocka_unit_test(test_minimal_record),
		cmocka_unit_test(test_free_null),
		cmocka_unit_test(test_accepted_variants),
		cmocka_unit_test(test_unknown_keys),
		cmocka_unit_test(test_missing_keys),
		cmocka_unit_test(test_duplicate_keys),
		cmocka_unit_test(test_wrong_types),
		cmocka_unit_test(test_integer_ranges),
		cmocka_unit_test(test_numbers),
		cmocka_unit_test(test_strings),
		cmocka_unit_test(test_long_strings),
		cmocka_unit_test(test_streams),
		cmocka_unit_test(test_criteria),
		cmocka_unit_test(test_criteria_count),
		cmocka_unit_test(test_steps),
		cmocka_unit_test(test_step_rules),
		cmocka_unit_test(test_limit_events),
		cmocka_unit_test(test_interrupted),
		cmocka_unit_test(test_stamps),
		cmocka_unit_test(test_record_rules),
		cmocka_unit_test(test_syntax),
		cmocka_unit_test(test_why_buffer),
		cmocka_unit_test(test_agent_canon),
		cmocka_unit_test(test_truncation_sweep),
		cmocka_unit_test(test_bit_flip_sweep),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
