// SPDX-License-Identifier: GPL-2.0
/*
 * Escalation for the connectors: submit, wait, describe. Outside a
 * session the connector writes the folder queue itself; inside one the
 * kernel forbids writing .sandbox/, so the daemon writes the request (and
 * fills in the session and process from SO_PEERCRED). Reading decisions
 * is allowed everywhere.
 */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/stat.h>
#include "policy/policy.h"
#include "queue/queue.h"
#include "queue/request.h"
#include "user/connector/escalate.h"
#include "user/control/control_client.h"
#include "lib/alloc.h"
#include "lib/clock.h"
#include "lib/fileio.h"
#include "lib/log.h"
#include "lib/text.h"
#include "lib/json.h"

int sbx_env_ms(const char *name, int def, int max)
{
	const char *s = getenv(name);
	long v;

	if (!s || !*s || !sbx_parse_long(s, 0, max, &v))
		return def;
	return (int)v;
}

char *sbx_esc_session_name(const char *prefix, const char *raw)
{
	char buf[65];
	size_t n = 0;

	for (const char *p = prefix; p && *p && n < 64; p++)
		buf[n++] = *p;
	for (const char *p = raw; p && *p && n < 64; p++)
		buf[n++] = (isalnum((unsigned char)*p) || *p == '.' || *p == '_' || *p == '-')
			   ? *p : '_';
	if (n == 0)
		buf[n++] = 'x';
	buf[n] = 0;
	return strdup(buf);
}

static char *read_proc(pid_t pid, const char *what, size_t *len)
{
	char path[64], *buf = NULL;
	size_t n = 0;

	snprintf(path, sizeof(path), "/proc/%d/%s", (int)pid, what);
	if (sbx_read_file(path, 64 * 1024, &buf, &n) < 0)
		return NULL;
	if (len)
		*len = n;
	return buf;
}

/* What the request says of the agent, until it is encoded */
struct agent_proc {
	char *comm, *cmd;
	json_t *cmdline;
	char exe[4096];
};

/* The agent: our parent (the hook's and the MCP server's caller). */
static void process_info(struct agent_proc *a, struct sbx_request *r)
{
	pid_t pid = getppid();
	char lnk[64];
	size_t len = 0;
	ssize_t n;

	memset(a, 0, sizeof(*a));
	r->process.pid = pid;
	r->process.uid = getuid();
	a->comm = read_proc(pid, "comm", NULL);
	if (a->comm) {
		a->comm[strcspn(a->comm, "\n")] = 0;
		r->process.comm = a->comm;
	}
	snprintf(lnk, sizeof(lnk), "/proc/%d/exe", (int)pid);
	n = readlink(lnk, a->exe, sizeof(a->exe) - 1);
	if (n > 0) {
		a->exe[n] = 0;
		r->process.exe = a->exe;
	}
	a->cmd = read_proc(pid, "cmdline", &len);
	if (a->cmd) {
		a->cmdline = json_array();
		for (size_t off = 0; a->cmdline && off < len; off += strlen(a->cmd + off) + 1)
			json_array_append_new(a->cmdline, json_string(a->cmd + off));
		r->process.cmdline = a->cmdline;
	}
}

static void agent_proc_free(struct agent_proc *a)
{
	free(a->comm);
	free(a->cmd);
	json_decref(a->cmdline);
}

/* A pending request that req repeats: bump its count and return its id. */
static bool fold_pending(struct sbx_queue *q, json_t *req, char **id)
{
	json_t *arr = NULL, *rec;
	char *err = NULL;
	bool found = false;
	size_t i;

	if (sbx_queue_list(q, SBX_QDIR_PENDING, &arr, &err) < 0 || !arr) {
		free(err);
		return false;
	}
	json_array_foreach(arr, i, rec) {
		const char *rid = sbx_json_str(rec, "id");

		if (!rid || !json_equal(json_object_get(rec, "kind"), json_object_get(req, "kind")) ||
		    !json_equal(json_object_get(rec, "session"), json_object_get(req, "session")) ||
		    !json_equal(json_object_get(rec, "object"), json_object_get(req, "object")))
			continue;
		if (sbx_queue_bump(q, rid, 1) == 0) {
			*id = sbx_strdup(rid);
			found = true;
			break;
		}
	}
	free(err);
	json_decref(arr);
	return found;
}

/* Inside a session: the daemon files r, and fills in who and where from
 * SO_PEERCRED and its own records */
static int submit_to_daemon(const struct sbx_request *r, char **id, char **err)
{
	json_t *req = sbx_request_encode(r), *call, *reply = NULL;
	int rc;

	call = req ? json_pack("{s:s, s:o}", "op", "submit", "request", req) : NULL;
	if (!call)
		return -ENOMEM;
	rc = sbx_ctl_call(call, &reply, err);
	json_decref(call);
	if (rc < 0)
		return rc;
	if (!json_is_true(json_object_get(reply, "ok")) ||
	    !json_is_string(json_object_get(reply, "id"))) {
		const char *m = sbx_json_str(reply, "error");

		if (err)
			*err = sbx_asprintf("the daemon refused the request: %s",
					    m ? m : "no reason given");
		json_decref(reply);
		return -EPROTO;
	}
	*id = strdup(sbx_json_str(reply, "id"));
	json_decref(reply);
	return *id ? 0 : -ENOMEM;
}

/* Outside a session: the connector writes the queue itself, and keeps the
 * daemon's rules: overdue requests are denied first, and a repeat of a
 * pending request (same session, kind and object) folds into it. */
static int submit_to_queue(const struct sbx_esc *e, const struct sbx_request *r, char **id,
			   char **err)
{
	json_t *req = sbx_request_encode(r);
	struct sbx_queue *q;
	int rc;

	if (!req)
		return -ENOMEM;
	q = sbx_queue_open(e->project, SBX_Q_CREATE, (uid_t)-1, (gid_t)-1, err);
	if (!q) {
		json_decref(req);
		return -EIO;
	}
	sbx_queue_expire(q, time(NULL), NULL);
	rc = fold_pending(q, req, id) ? 0 : sbx_queue_submit(q, req, id, err);
	sbx_queue_close(q);
	json_decref(req);
	return rc;
}

int sbx_esc_submit(const struct sbx_esc *e, struct sbx_request *r, char **id, char **err)
{
	struct agent_proc ap;
	int rc;

	*id = NULL;
	r->origin = e->origin;
	if (sbx_in_session(NULL))
		return submit_to_daemon(r, id, err);
	r->session = e->session;
	r->project = e->project;
	process_info(&ap, r);
	rc = submit_to_queue(e, r, id, err);
	/* what process_info() pointed r at is gone */
	memset(&r->process, 0, sizeof(r->process));
	r->process.pid = r->process.uid = -1;
	agent_proc_free(&ap);
	return rc;
}

void sbx_esc_outcome_clear(struct sbx_esc_outcome *o)
{
	json_decref(o->done);
	o->done = NULL;
	o->state = SBX_ESC_UNKNOWN;
}

static void classify_done(struct sbx_esc_outcome *o, json_t *done)
{
	const char *v = sbx_json_str(json_object_get(done, "decision"), "verdict");

	o->done = done;
	o->state = v && !strcmp(v, "approve") ? SBX_ESC_APPROVED : SBX_ESC_DENIED;
}

static int locate(struct sbx_queue *q, const char *id, struct sbx_esc_outcome *o, char **err)
{
	json_t *obj = NULL;
	int rc;

	rc = sbx_queue_read(q, SBX_QDIR_DONE, id, &obj, err);
	if (rc == 0) {
		classify_done(o, obj);
		return 0;
	}
	if (rc != -ENOENT)
		return rc;
	free(*err);
	*err = NULL;
	if (sbx_queue_read(q, SBX_QDIR_PENDING, id, &obj, NULL) == 0) {
		json_decref(obj);
		o->state = SBX_ESC_PENDING;
		return 0;
	}
	if (sbx_queue_read(q, SBX_QDIR_CLAIMED, id, &obj, NULL) == 0) {
		json_decref(obj);
		o->state = SBX_ESC_CLAIMED;
		return 0;
	}
	/* moved between two looks: one more look at done/ */
	if (sbx_queue_read(q, SBX_QDIR_DONE, id, &obj, NULL) == 0) {
		classify_done(o, obj);
		return 0;
	}
	o->state = SBX_ESC_UNKNOWN;
	return 0;
}

static struct sbx_queue *open_q(const char *project, char **err)
{
	/* creating the directories is harmless outside sessions and refused
	 * (by the kernel) inside them, where they exist already */
	struct sbx_queue *q = sbx_queue_open(project, 0, (uid_t)-1, (gid_t)-1, NULL);

	if (!q && !sbx_in_session(NULL))
		q = sbx_queue_open(project, SBX_Q_CREATE, (uid_t)-1, (gid_t)-1, err);
	else if (!q && err)
		*err = sbx_asprintf("%s/.sandbox/escalations cannot be opened", project);
	return q;
}

/* Where id is now; with wait, after waiting up to timeout_ms for its
 * decision (inotify) */
static int look(const char *project, const char *id, bool wait, int timeout_ms,
		struct sbx_esc_outcome *o, char **err)
{
	struct sbx_queue *q;
	json_t *done = NULL;
	char *e = NULL;
	int rc;

	memset(o, 0, sizeof(*o));
	q = open_q(project, err);
	if (!q)
		return -EIO;
	rc = wait ? sbx_queue_wait_done(q, id, timeout_ms, &done, &e) : -ETIMEDOUT;
	if (rc == 0) {
		classify_done(o, done);
	} else if (rc == -ETIMEDOUT) {
		free(e);
		e = NULL;
		rc = locate(q, id, o, &e);
	}
	sbx_queue_close(q);
	if (rc < 0 && err)
		*err = e;
	else
		free(e);
	return rc;
}

int sbx_esc_check(const char *project, const char *id, struct sbx_esc_outcome *o, char **err)
{
	if (!sbx_id_valid(id)) {
		memset(o, 0, sizeof(*o));
		o->state = SBX_ESC_UNKNOWN;
		return 0;
	}
	return look(project, id, false, 0, o, err);
}

int sbx_esc_wait(const char *project, const char *id, int timeout_ms,
		 struct sbx_esc_outcome *o, char **err)
{
	return look(project, id, true, timeout_ms, o, err);
}

int sbx_esc_command_result(const char *project, const json_t *done, char **output,
			   bool *truncated, int *exit_code)
{
	const json_t *res = json_object_get(done, "result");
	struct sbx_queue *q;
	size_t got = 0;
	int rc;

	*output = NULL;
	*truncated = json_is_true(json_object_get(res, "truncated"));
	*exit_code = json_is_integer(json_object_get(res, "exit_code"))
		     ? (int)json_integer_value(json_object_get(res, "exit_code")) : -1;
	if (!res)
		return -ENOENT;
	q = open_q(project, NULL);
	if (!q)
		return -EIO;
	rc = sbx_queue_read_output(q, done, output, &got);
	sbx_queue_close(q);
	if (rc)
		return rc;
	if (got > SBX_ESC_OUTPUT_CAP) {
		got = SBX_ESC_OUTPUT_CAP;
		*truncated = true;
	}
	(*output)[got] = 0;
	/* never cut a UTF-8 sequence in half: JSON strings must stay valid */
	while (got > 0 && ((unsigned char)(*output)[got - 1] & 0xc0) == 0x80)
		got--;
	if (got > 0 && ((unsigned char)(*output)[got - 1] & 0xc0) == 0xc0)
		got--;
	if (*truncated || got < strlen(*output))
		(*output)[got] = 0;
	return 0;
}

/* Is the bpfsbx MCP server registered in the project (init --mcp, --codex,
 * --cursor)? Only then may a message send the model to its tools. */
bool sbx_esc_mcp_serving;

static bool mcp_known(const char *project)
{
	static const char *const files[] = { ".mcp.json", ".cursor/mcp.json", ".codex/config.toml" };

	if (sbx_esc_mcp_serving)
		return true;
	for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		char *path = sbx_asprintf("%s/%s", project, files[i]), *buf = NULL;
		size_t len = 0;
		bool found = sbx_read_file(path, 1 << 20, &buf, &len) == 0 && buf &&
			     strstr(buf, "bpfsbx");

		free(buf);
		free(path);
		if (found)
			return true;
	}
	return false;
}

char *sbx_esc_describe(const char *project, const char *id, const struct sbx_esc_outcome *o)
{
	const json_t *d = json_object_get(o->done, "decision");
	bool command = sbx_request_kind(o->done) == SBX_REQ_COMMAND;
	const char *by = sbx_json_str(d, "by");
	const char *note = sbx_json_str(d, "note");
	const char *scope = sbx_json_str(d, "scope");
	const json_t *obj = json_object_get(o->done, "object");
	char *text = NULL, *out = NULL;
	bool trunc = false;
	int code = -1;

	switch (o->state) {
	case SBX_ESC_UNKNOWN:
		return sbx_asprintf("bpfsbx: there is no request %s in %s/.sandbox/escalations.",
				    id, project);
	case SBX_ESC_PENDING:
	case SBX_ESC_CLAIMED:
		if (!mcp_known(project))
			return sbx_asprintf(
				"bpfsbx: request %s is waiting for a person's decision%s. Do not "
				"retry at once; tell the user that request %s waits for them "
				"(`bpfsbx watch`). Once it is decided, the same action gets the "
				"outcome.", id, o->state == SBX_ESC_CLAIMED ?
				" (an approver is looking at it)" : "", id);
		return sbx_asprintf(
			"bpfsbx: request %s is waiting for a person's decision%s. Do not retry "
			"the same action; call the MCP tool check_request (mcp__bpfsbx__check_request) "
			"with id \"%s\" later to get the outcome.", id,
			o->state == SBX_ESC_CLAIMED ? " (an approver is looking at it)" : "", id);
	case SBX_ESC_DENIED:
		if (json_is_true(json_object_get(d, "expired")))
			return sbx_asprintf("bpfsbx: request %s expired without a decision and is "
					    "denied. Ask the user directly if it is still needed.", id);
		return sbx_asprintf("bpfsbx: a person (%s) denied request %s%s%s. Do not retry "
				    "it; find another way or ask the user.", by ? by : "?", id,
				    note && *note ? ": " : "", note && *note ? note : "");
	case SBX_ESC_APPROVED:
		break;
	}
	if (command) {
		const char *cmd = sbx_json_str(obj, "command");

		if (!json_object_get(o->done, "result"))
			return sbx_asprintf("bpfsbx: a person (%s) approved request %s, but no result "
					    "of the command was recorded.", by ? by : "?", id);
		sbx_esc_command_result(project, o->done, &out, &trunc, &code);
		char *tnote = trunc ? sbx_asprintf("[output truncated to %d characters; the whole "
						   "output is in %s/.sandbox/escalations/%s/%s.txt]\n",
						   SBX_ESC_OUTPUT_CAP, project,
						   sbx_qdir_name(SBX_QDIR_OUT), id) : NULL;
		text = sbx_asprintf(
			"bpfsbx: this command was run for you outside the sandbox by bpfsbx after a "
			"person (%s) approved it (request %s); do not run it again.\n"
			"$ %s\nexit code: %d%s\n--- output ---\n%s%s%s",
			by ? by : "?", id, cmd ? cmd : "?", code,
			json_is_true(json_object_get(json_object_get(o->done, "result"), "timed_out"))
			? " (timed out)" : "",
			out ? out : "(no output recorded)",
			out && *out && out[strlen(out) - 1] != '\n' ? "\n" : "",
			tnote ? tnote : "");
		free(tnote);
		free(out);
		return text;
	}
	return sbx_asprintf("bpfsbx: access granted by a person (%s, scope %s, request %s)%s%s. "
			    "Retry the tool now.", by ? by : "?", scope ? scope : "once", id,
			    note && *note ? ": " : "", note && *note ? note : "");
}

/* ---- grants without a kernel ------------------------------------------- */

static bool ident_holds(const char *path, bool new_name, uint32_t dev, uint64_t ino,
			const char *type, const char *btime)
{
	char *why = NULL;
	int rc = sbx_objid_check(path, new_name, dev, ino, type, btime, &why);

	free(why);
	return rc == 0;
}

static bool grant_matches(json_t *rec, const char *session, const char *path,
			  int access, const char *host, int port, time_t now)
{
	struct sbx_request r;
	bool ok = false;

	if (!sbx_request_decode(rec, true, &r, NULL))
		return false;
	if (!r.decision.present || !r.decision.approve)
		goto out;
	if (path) {
		if (r.kind != SBX_REQ_ACCESS_PATH && r.kind != SBX_REQ_FILE)
			goto out;
		if (!r.path || strcmp(r.path, path))
			goto out;
		/* a write grant covers reading the same file */
		if (r.access != access && !(access == SBX_ACC_READ && r.access == SBX_ACC_WRITE))
			goto out;
		/* and only while the path leads to the object the person saw */
		if (r.has_ident && !r.abstract && !ident_holds(r.path, r.new_name, r.dev, r.ino, r.ftype, r.btime))
			goto out;
	} else {
		if (r.kind != SBX_REQ_ACCESS_HOST || !r.host || strcasecmp(r.host, host) ||
		    (r.port && r.port != port))
			goto out;
	}
	switch (r.decision.scope) {
	case SBX_SCOPE_ALWAYS:
		ok = true;
		break;
	case SBX_SCOPE_SESSION:
		ok = r.session && session && !strcmp(r.session, session);
		break;
	case SBX_SCOPE_ONCE: {
		time_t at;

		ok = sbx_time_parse(r.decision.at, &at) == 0 && now - at <= SBX_ONCE_TTL_S &&
		     now >= at - 5;
		break;
	}
	}
out:
	sbx_request_release(&r);
	return ok;
}

bool sbx_esc_granted(const char *project, const char *session, const char *path,
		     int access, const char *host, int port)
{
	struct sbx_queue *q = open_q(project, NULL);
	struct sbx_remembered *rv = NULL;
	json_t *arr = NULL, *rec;
	size_t n = 0, i;
	char *err = NULL;
	bool ok = false;

	if (!q)
		return false;
	if (sbx_queue_list(q, SBX_QDIR_DONE, &arr, &err) >= 0 && arr) {
		time_t now = time(NULL);

		json_array_foreach(arr, i, rec)
			if (grant_matches(rec, session, path, access, host, port, now)) {
				ok = true;
				break;
			}
	}
	free(err);
	err = NULL;
	json_decref(arr);
	if (!ok && path && sbx_remembered_load(q, &rv, &n, &err) == 0) {
		for (i = 0; i < n && !ok; i++)
			ok = rv[i].kind && !strcmp(rv[i].kind, "file") && rv[i].path &&
			     !strcmp(rv[i].path, path) && rv[i].access &&
			     (!strcmp(rv[i].access, sbx_access_name(access)) ||
			      (access == SBX_ACC_READ && !strcmp(rv[i].access, "write"))) &&
			     (!rv[i].has_ident ||
			      ident_holds(rv[i].path, rv[i].new_name, rv[i].dev, rv[i].ino, rv[i].type,
					  rv[i].btime));
		sbx_remembered_free(rv, n);
	}
	free(err);
	sbx_queue_close(q);
	return ok;
}

int sbx_esc_audit(const struct sbx_esc *e, json_t *body, char **err)
{
	struct sbx_queue *q;
	struct sbx_audit *a;
	int rc;

	if (sbx_in_session(NULL)) {
		json_t *call = json_pack("{s:s, s:O}", "op", "submit", "record", body);
		json_t *reply = NULL;

		if (!call)
			return -ENOMEM;
		rc = sbx_ctl_call(call, &reply, err);
		json_decref(call);
		if (rc == 0 && !json_is_true(json_object_get(reply, "ok"))) {
			const char *m = sbx_json_str(reply, "error");
			if (err)
				*err = sbx_asprintf("the daemon refused the audit record: %s",
						    m ? m : "?");
			rc = -EPROTO;
		}
		json_decref(reply);
		return rc;
	}
	q = sbx_queue_open(e->project, SBX_Q_CREATE, (uid_t)-1, (gid_t)-1, err);
	if (!q)
		return -EIO;
	a = sbx_audit_open(q, e->session, err);
	if (!a) {
		sbx_queue_close(q);
		return -EIO;
	}
	rc = sbx_audit_append(a, body, err);
	sbx_audit_close(a);
	sbx_queue_close(q);
	return rc;
}

int sbx_esc_audit_decision(const struct sbx_esc *e, const char *agent, const char *tool,
			   json_t *input, const char *decision, const char *reason,
			   const struct sbx_req_rule *rule, const char *request,
			   const struct sbx_esc_outcome *out, char **err)
{
	json_t *rec = json_pack("{s:s, s:s, s:s, s:s}", "event", "connector_decision", "agent",
				agent ? agent : "?", "tool", tool ? tool : "?", "decision", decision);
	const json_t *d = out ? json_object_get(out->done, "decision") : NULL;
	const json_t *res = out ? json_object_get(out->done, "result") : NULL;
	int rc;

	if (!rec)
		return -ENOMEM;
	if (input)
		json_object_set(rec, "input", input);
	if (reason)
		json_object_set_new(rec, "reason", json_string(reason));
	if (rule && rule->present && rule->pattern)
		json_object_set_new(rec, "rule", json_string(rule->pattern));
	/* a learning session's: what the rule does when enforced */
	if (rule && rule->present && rule->would)
		json_object_set_new(rec, "would", json_string(rule->would));
	if (request)
		json_object_set_new(rec, "request", json_string(request));
	if (d)
		json_object_set_new(rec, "by", json_copy(json_object_get(d, "by")));
	if (d && json_object_get(d, "note"))
		json_object_set(rec, "note", json_object_get(d, "note"));
	if (json_is_object(res)) {
		/* what ran outside the agent, and exactly what output came back */
		static const char *const keys[] = { "exit_code", "signal", "timed_out", "truncated",
						    "bytes", "output_sha256", "user", "uid",
						    "interactive", NULL };
		json_t *r = json_object();

		for (int i = 0; keys[i]; i++)
			if (json_object_get(res, keys[i]))
				json_object_set(r, keys[i], json_object_get(res, keys[i]));
		json_object_set_new(rec, "result", r);
	}
	rc = sbx_esc_audit(e, rec, err);
	json_decref(rec);
	return rc;
}

struct denial {
	char *time, *line;
};

static int denial_cmp(const void *a, const void *b)
{
	return strcmp(((const struct denial *)a)->time, ((const struct denial *)b)->time);
}

char *sbx_esc_recent_denials(const char *project, int max)
{
	char *dir = sbx_asprintf("%s/.sandbox/audit", project), *out = NULL;
	struct denial *v = NULL;
	size_t n = 0, len = 0;
	struct dirent *de;
	DIR *dp = opendir(dir);
	FILE *f;

	if (!dp) {
		free(dir);
		return NULL;
	}
	while ((de = readdir(dp))) {
		size_t l = strlen(de->d_name);
		char *path, *line = NULL;
		size_t cap = 0;
		FILE *in;

		if (l < 7 || strcmp(de->d_name + l - 6, ".jsonl"))
			continue;
		path = sbx_asprintf("%s/%s", dir, de->d_name);
		in = fopen(path, "re");
		free(path);
		if (!in)
			continue;
		while (getline(&line, &cap, in) > 0) {
			json_t *j;
			const char *t, *tool, *why;

			if (!strstr(line, "\"connector_decision\"") || !strstr(line, "\"deny\""))
				continue;
			j = json_loads(line, 0, NULL);
			t = sbx_json_str(j, "time");
			tool = sbx_json_str(j, "tool");
			why = sbx_json_str(j, "reason");
			if (t && json_is_string(json_object_get(j, "decision")) &&
			    !strcmp(sbx_json_str(j, "decision"), "deny")) {
				v = sbx_realloc_array(v, n + 1, sizeof(*v));
				v[n].time = sbx_strdup(t);
				v[n].line = sbx_asprintf("%s %s: %.300s", t, tool ? tool : "?",
							 why ? why : "");
				n++;
			}
			json_decref(j);
		}
		free(line);
		fclose(in);
	}
	closedir(dp);
	free(dir);
	if (!n)
		return NULL;
	qsort(v, n, sizeof(*v), denial_cmp);
	f = open_memstream(&out, &len);
	for (size_t i = 0; i < n; i++) {
		if (f && i + (size_t)max >= n)
			fprintf(f, "  %s\n", v[i].line);
		free(v[i].time);
		free(v[i].line);
	}
	free(v);
	if (f)
		fclose(f);
	return out;
}
