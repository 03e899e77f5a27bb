// SPDX-License-Identifier: GPL-2.0
/*
 * api.c - the dashboard's JSON API (api.h), without HTTP.
 *
 * Every listing opens the project's queue and reads the files as they
 * are now; a decision goes through sbx_queue_resolve() and nothing else,
 * so the page, `bpfsbx watch` and `bpfsbx approve` cannot disagree: the
 * first to claim a request decides it, the others get 409.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include "lib/alloc.h"
#include "lib/fileio.h"
#include "lib/log.h"
#include "lib/text.h"
#include "queue/propose.h"
#include "queue/queue.h"
#include "queue/render.h"
#include "queue/request.h"
#include "user/dashboard/api.h"
#include "user/dashboard/wrap.h"
#include "lib/json.h"

/* where a request can be, in the order it gets there */
static const enum sbx_qdir states[] = { SBX_QDIR_PENDING, SBX_QDIR_CLAIMED, SBX_QDIR_DONE };

json_t *sbx_api_error(const char *code, const char *fmt, ...)
{
	char *msg = NULL;
	va_list ap;
	json_t *j;

	va_start(ap, fmt);
	msg = sbx_vformat(fmt, ap);
	va_end(ap);
	j = json_pack("{s:b,s:s,s:s}", "ok", 0, "error", msg ? msg : "?", "code", code);
	free(msg);
	return j;
}

static bool parse_limit(const char *s, long max, long def, long *out)
{
	if (!s || !*s) {
		*out = def;
		return true;
	}
	return sbx_parse_long(s, 1, max, out);
}

char *sbx_api_utf8(const char *buf, size_t len)
{
	const unsigned char *p = (const unsigned char *)buf;
	struct sbx_strbuf b = { 0 };
	size_t i = 0;

	while (i < len) {
		unsigned c = p[i];
		size_t n = c < 0x80 ? 1 : (c & 0xe0) == 0xc0 ? 2 : (c & 0xf0) == 0xe0 ? 3 :
			   (c & 0xf8) == 0xf0 ? 4 : 0;
		unsigned cp = n == 1 ? c : n == 2 ? c & 0x1f : n == 3 ? c & 0x0f : c & 0x07;
		bool ok = n > 0 && i + n <= len && c != 0;

		for (size_t k = 1; ok && k < n; k++) {
			if ((p[i + k] & 0xc0) != 0x80)
				ok = false;
			else
				cp = (cp << 6) | (p[i + k] & 0x3f);
		}
		/* overlong forms, surrogates and beyond U+10FFFF are not text */
		if (ok && ((n == 2 && cp < 0x80) || (n == 3 && cp < 0x800) ||
			   (n == 4 && (cp < 0x10000 || cp > 0x10ffff)) ||
			   (cp >= 0xd800 && cp <= 0xdfff)))
			ok = false;
		if (ok) {
			sbx_sb_putn(&b, buf + i, n);
			i += n;
		} else {
			sbx_sb_puts(&b, "\xef\xbf\xbd");
			i++;
		}
	}
	if (!b.p)
		return sbx_strdup("");
	return b.p;
}

/* ---- finding requests ------------------------------------------------------ */

static struct sbx_queue *open_queue(const char *dir, char **err)
{
	return sbx_queue_open(dir, 0, (uid_t)-1, (gid_t)-1, err);
}

/* the project and state of ID: 0, or -ENOENT */
static int locate(struct sbx_feed *f, const char *id, char **project, enum sbx_qdir *state)
{
	char name[SBX_ID_MAX + 8];
	size_t n;
	char **dirs = sbx_feed_project_dirs(f, &n);
	int rc = -ENOENT;

	snprintf(name, sizeof(name), "%s.json", id);
	for (size_t s = 0; s < 3 && rc; s++) {
		for (size_t i = 0; i < n && rc; i++) {
			struct sbx_queue *q = open_queue(dirs[i], NULL);

			if (!q)
				continue;
			if (faccessat(sbx_queue_dirfd(q, states[s]), name, F_OK,
				      AT_SYMLINK_NOFOLLOW) == 0) {
				*project = sbx_strdup(dirs[i]);
				*state = states[s];
				rc = 0;
			}
			sbx_queue_close(q);
		}
	}
	for (size_t i = 0; i < n; i++)
		free(dirs[i]);
	free(dirs);
	return rc;
}

/* the head of an approved command's output, into o */
static void add_output(struct sbx_queue *q, const json_t *done, json_t *o)
{
	char *buf = NULL, *text;
	size_t len = 0;

	if (sbx_queue_read_output(q, done, &buf, &len))
		return;
	json_object_set_new(o, "output_truncated", json_boolean(len > SBX_API_OUTPUT_MAX));
	if (len > SBX_API_OUTPUT_MAX)
		len = SBX_API_OUTPUT_MAX;
	text = sbx_api_utf8(buf, len);
	json_object_set_new(o, "output", json_string(text));
	free(text);
	free(buf);
}

static int cmp_wrapped(const void *a, const void *b, bool desc)
{
	const char *x = sbx_json_str(json_object_get(*(json_t *const *)a, "request"), "id") ?: "";
	const char *y = sbx_json_str(json_object_get(*(json_t *const *)b, "request"), "id") ?: "";

	return desc ? strcmp(y, x) : strcmp(x, y);
}

static int cmp_asc(const void *a, const void *b)
{
	return cmp_wrapped(a, b, false);
}

static int cmp_desc(const void *a, const void *b)
{
	return cmp_wrapped(a, b, true);
}

static int cmp_name_desc(const void *a, const void *b)
{
	return strcmp(*(char *const *)b, *(char *const *)a);
}

/* the newest `limit` ids in done/ (malloc'd strings) */
static char **done_ids(struct sbx_queue *q, size_t limit, size_t *n)
{
	int fd = dup(sbx_queue_dirfd(q, SBX_QDIR_DONE));
	DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
	struct dirent *de;
	char **v = NULL;

	*n = 0;
	if (!d) {
		if (fd >= 0)
			close(fd);
		return NULL;
	}
	rewinddir(d);
	while ((de = readdir(d))) {
		size_t l = strlen(de->d_name);
		char *id;

		if (l < 6 || strcmp(de->d_name + l - 5, ".json"))
			continue;
		id = strndup(de->d_name, l - 5);
		if (!id || !sbx_id_valid(id)) {
			free(id);
			continue;
		}
		v = sbx_realloc_array(v, *n + 1, sizeof(*v));
		v[(*n)++] = id;
	}
	closedir(d);
	if (*n)
		qsort(v, *n, sizeof(*v), cmp_name_desc);
	while (*n > limit)
		free(v[--(*n)]);
	return v;
}

unsigned sbx_api_requests(struct sbx_feed *f, const char *state_s, const char *limit_s,
			  json_t **out)
{
	int state = state_s && *state_s ? sbx_qdir_parse(state_s) : SBX_QDIR_PENDING;
	json_t *errors = json_array(), *items, *a, *r;
	bool done;
	long limit;
	size_t n, total = 0, i;
	char **dirs;
	json_t **v = NULL;

	if (state != SBX_QDIR_PENDING && state != SBX_QDIR_CLAIMED && state != SBX_QDIR_DONE) {
		json_decref(errors);
		*out = sbx_api_error("bad_request", "state must be %s, %s or %s",
				     sbx_qdir_name(SBX_QDIR_PENDING), sbx_qdir_name(SBX_QDIR_CLAIMED),
				     sbx_qdir_name(SBX_QDIR_DONE));
		return 400;
	}
	done = state == SBX_QDIR_DONE;
	if (!parse_limit(limit_s, done ? SBX_API_DONE_MAX : 100000, done ? 100 : 100000, &limit)) {
		json_decref(errors);
		*out = sbx_api_error("bad_request", "limit must be a number from 1 to %d",
				     done ? SBX_API_DONE_MAX : 100000);
		return 400;
	}
	dirs = sbx_feed_project_dirs(f, &n);
	for (size_t k = 0; k < n; k++) {
		char *err = NULL;
		struct sbx_queue *q = open_queue(dirs[k], &err);

		if (!q) {
			json_array_append_new(errors, json_pack("{s:s,s:s}", "project", dirs[k],
								"error", err ? err : "cannot open"));
			free(err);
			continue;
		}
		if (done) {
			size_t m;
			char **ids = done_ids(q, (size_t)limit, &m);

			for (size_t j = 0; j < m; j++) {
				json_t *rec = NULL;

				if (sbx_queue_read(q, SBX_QDIR_DONE, ids[j], &rec, NULL) == 0) {
					v = sbx_realloc_array(v, total + 1, sizeof(*v));
					v[total++] = sbx_api_wrap(dirs[k], SBX_QDIR_DONE, rec);
				}
				json_decref(rec);
				free(ids[j]);
			}
			free(ids);
		} else if (sbx_queue_list(q, state, &a, &err) == 0) {
			json_array_foreach(a, i, r) {
				v = sbx_realloc_array(v, total + 1, sizeof(*v));
				v[total++] = sbx_api_wrap(dirs[k], state, r);
			}
			json_decref(a);
		}
		if (err) {
			json_array_append_new(errors, json_pack("{s:s,s:s}", "project", dirs[k],
								"error", err));
			free(err);
		}
		sbx_queue_close(q);
	}
	if (total)
		qsort(v, total, sizeof(*v), done ? cmp_desc : cmp_asc);
	items = json_array();
	for (i = 0; i < total; i++) {
		if (i < (size_t)limit)
			json_array_append_new(items, v[i]);
		else
			json_decref(v[i]);
	}
	free(v);
	for (size_t k = 0; k < n; k++)
		free(dirs[k]);
	free(dirs);
	*out = json_pack("{s:b,s:s,s:o,s:o,s:I}", "ok", 1, "state", sbx_qdir_name(state), "requests", items,
			 "errors", errors, "cursor", (json_int_t)sbx_feed_cursor(f));
	return 200;
}

unsigned sbx_api_request(struct sbx_feed *f, const char *id, json_t **out)
{
	enum sbx_qdir state = SBX_QDIR_PENDING;
	char *project = NULL, *err = NULL;
	struct sbx_queue *q;
	json_t *rec = NULL;
	int rc;

	if (!sbx_id_valid(id)) {
		*out = sbx_api_error("bad_request", "not a request id");
		return 400;
	}
	if (locate(f, id, &project, &state)) {
		*out = sbx_api_error("not_found", "%s: no such request in this dashboard's projects",
				     id);
		return 404;
	}
	q = open_queue(project, &err);
	if (!q) {
		*out = sbx_api_error("internal", "%s", err ? err : "cannot open the queue");
		free(err);
		free(project);
		return 500;
	}
	rc = sbx_queue_read(q, state, id, &rec, &err);
	if (rc == -ENOENT && state != SBX_QDIR_DONE) {
		/* decided meanwhile */
		free(err);
		err = NULL;
		state = SBX_QDIR_DONE;
		rc = sbx_queue_read(q, state, id, &rec, &err);
	}
	if (rc) {
		*out = sbx_api_error(rc == -ENOENT ? "not_found" : "internal", "%s",
				     err ? err : strerror(-rc));
		free(err);
		sbx_queue_close(q);
		free(project);
		return rc == -ENOENT ? 404 : 500;
	}
	*out = sbx_api_wrap(project, state, rec);
	json_object_set_new(*out, "ok", json_true());
	add_output(q, rec, *out);
	json_decref(rec);
	sbx_queue_close(q);
	free(project);
	return 200;
}

static bool all_digits(const char *s)
{
	if (!*s)
		return false;
	for (; *s; s++)
		if (*s < '0' || *s > '9')
			return false;
	return true;
}

unsigned sbx_api_events(struct sbx_feed *f, const char *since, const char *limit_s,
			const char *project, const char *session, const char *verdict,
			const char *operation, json_t **out)
{
	struct sbx_feed_filter flt = { .project = project, .session = session,
				       .verdict = verdict, .operation = operation };
	long limit;
	time_t t;

	if (since && *since) {
		long long v;
		char *end;

		if (all_digits(since)) {
			errno = 0;
			v = strtoll(since, &end, 10);
			if (errno || v < 0) {
				*out = sbx_api_error("bad_request", "since: too large");
				return 400;
			}
			flt.since = (uint64_t)v;
		} else if (!sbx_time_parse(since, &t)) {
			flt.since_time = since;
		} else {
			*out = sbx_api_error("bad_request", "since must be a cursor (a number) or an "
					     "RFC 3339 time");
			return 400;
		}
	}
	if (!parse_limit(limit_s, 2000, 200, &limit)) {
		*out = sbx_api_error("bad_request", "limit must be a number from 1 to 2000");
		return 400;
	}
	flt.limit = (size_t)limit;
	*out = sbx_feed_events_json(f, &flt);
	json_object_set_new(*out, "ok", json_true());
	return 200;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

unsigned sbx_api_verify(struct sbx_feed *f, json_t **out)
{
	json_t *logs = json_array();
	size_t n;
	char **dirs = sbx_feed_project_dirs(f, &n);

	for (size_t k = 0; k < n; k++) {
		char *adir = sbx_asprintf("%s/.sandbox/audit", dirs[k]);
		DIR *d = opendir(adir);
		struct dirent *de;
		char **names = NULL;
		size_t m = 0;

		while (d && (de = readdir(d))) {
			size_t l = strlen(de->d_name);

			if (de->d_name[0] == '.' || l < 7 || strcmp(de->d_name + l - 6, ".jsonl"))
				continue;
			names = sbx_realloc_array(names, m + 1, sizeof(*names));
			names[m++] = sbx_strdup(de->d_name);
		}
		if (d)
			closedir(d);
		if (m)
			qsort(names, m, sizeof(*names), cmp_str);
		for (size_t i = 0; i < m; i++) {
			char *path = sbx_asprintf("%s/%s", adir, names[i]);
			struct sbx_audit_report r;
			int rc = sbx_audit_verify(path, &r);
			json_t *o;

			names[i][strlen(names[i]) - 6] = 0;
			o = json_pack("{s:s,s:s,s:s}", "project", dirs[k], "session", names[i],
				      "log", path);
			if (rc < 0) {
				json_object_set_new(o, "ok", json_false());
				json_object_set_new(o, "problem", json_sprintf("cannot read: %s",
									      strerror(-rc)));
			} else {
				json_object_set_new(o, "ok", json_boolean(rc == 0));
				json_object_set_new(o, "records", json_integer((json_int_t)r.records));
				if (rc) {
					json_object_set_new(o, "first_bad",
							    json_integer((json_int_t)r.first_bad));
					json_object_set_new(o, "line", json_integer((json_int_t)r.line));
					json_object_set_new(o, "problem",
							    json_string(r.problem ? r.problem : "tampered"));
				}
				sbx_audit_report_free(&r);
			}
			json_array_append_new(logs, o);
			free(path);
			free(names[i]);
		}
		free(names);
		free(adir);
		free(dirs[k]);
	}
	free(dirs);
	*out = json_pack("{s:b,s:o}", "ok", 1, "logs", logs);
	return 200;
}

/* ---- decisions -------------------------------------------------------------- */

void sbx_api_decision_free(struct sbx_api_decision *d)
{
	free(d->project);
	free(d->id);
	free(d->note);
	free(d->rule);
	memset(d, 0, sizeof(*d));
}

unsigned sbx_api_prepare(struct sbx_feed *f, const char *id, bool approve, bool rule,
			 const char *body, size_t len, struct sbx_api_decision *d, json_t **out)
{
	enum sbx_qdir state;
	const char *k;
	json_error_t jerr;
	json_t *j, *v;

	memset(d, 0, sizeof(*d));
	d->approve = approve;
	d->scope = SBX_SCOPE_ONCE;
	if (!sbx_id_valid(id)) {
		*out = sbx_api_error("bad_request", "not a request id (they look like "
				     "20261130T101503.123456Z-4242-1a2b3c4d)");
		return 400;
	}
	j = json_loadb(body ? body : "", len, JSON_REJECT_DUPLICATES, &jerr);
	if (!json_is_object(j)) {
		*out = j ? sbx_api_error("bad_request", "the body must be a JSON object")
			 : sbx_api_error("bad_request", "the body is not JSON: %s (line %d, "
					 "column %d)", jerr.text, jerr.line, jerr.column);
		json_decref(j);
		return 400;
	}
	json_object_foreach(j, k, v) {
		if (!strcmp(k, "note")) {
			if (!json_is_string(v) || json_string_length(v) > SBX_API_NOTE_MAX) {
				*out = sbx_api_error("bad_request", "note must be a string of at "
						     "most %d bytes", SBX_API_NOTE_MAX);
				goto bad;
			}
			if (json_string_length(v))
				d->note = sbx_strdup(json_string_value(v));
		} else if (!strcmp(k, "rule") && rule) {
			/* the text the person was shown: it must still be the
			 * proposal when it is written */
			if (!json_is_string(v)) {
				*out = sbx_api_error("bad_request", "rule must be the rule's text as "
						     "GET /api/requests/ID/rule gave it");
				goto bad;
			}
			d->rule = sbx_strdup(json_string_value(v));
		} else if (!strcmp(k, "scope") && approve && !rule) {
			if (!json_is_string(v) || sbx_scope_parse(json_string_value(v)) < 0) {
				*out = sbx_api_error("bad_request", "scope must be once, session or "
						     "always");
				goto bad;
			}
			d->scope = (enum sbx_scope)sbx_scope_parse(json_string_value(v));
		} else {
			*out = sbx_api_error("bad_request", "unknown field \"%s\" (%s)", k,
					     rule ? "rule takes rule and note" :
					     approve ? "approve takes scope and note" :
						       "deny takes note");
			goto bad;
		}
	}
	if (rule && !d->rule) {
		*out = sbx_api_error("bad_request", "the body is {\"rule\": the rule's text as GET "
				     "/api/requests/ID/rule gave it, \"note\"?}");
		goto bad;
	}
	json_decref(j);
	if (locate(f, id, &d->project, &state)) {
		*out = sbx_api_error("not_found", "%s: no such request in this dashboard's projects",
				     id);
		sbx_api_decision_free(d);
		return 404;
	}
	d->id = sbx_strdup(id);
	return 200;
bad:
	json_decref(j);
	sbx_api_decision_free(d);
	return 400;
}

unsigned sbx_api_rule(struct sbx_feed *f, const char *id, json_t **out)
{
	struct sbx_proposal p;
	struct sbx_render r = { 0 };
	struct sbx_queue *q;
	enum sbx_qdir state;
	char *project = NULL, *err = NULL;
	json_t *fields;

	if (!sbx_id_valid(id)) {
		*out = sbx_api_error("bad_request", "not a request id");
		return 400;
	}
	if (locate(f, id, &project, &state) || state != SBX_QDIR_PENDING) {
		free(project);
		*out = sbx_api_error("not_found", "%s: no such waiting request in this dashboard's "
				     "projects", id);
		return 404;
	}
	q = open_queue(project, &err);
	free(project);
	if (!q) {
		*out = sbx_api_error("internal", "%s", err ? err : "cannot open the queue");
		free(err);
		return 500;
	}
	if (sbx_queue_propose(q, id, &p, &err)) {
		*out = sbx_api_error("no_rule", "%s", err ? err : "no rule to offer");
		free(err);
		sbx_queue_close(q);
		return 409;
	}
	sbx_render_proposal(&p, &r);
	fields = sbx_render_json(&r);
	*out = json_pack("{s:b,s:o,s:o}", "ok", 1, "proposal", sbx_proposal_json(&p), "fields",
			 fields);
	sbx_render_free(&r);
	sbx_proposal_free(&p);
	sbx_queue_close(q);
	return 200;
}

/* The rule the person saw, written, and what it answers approved */
static unsigned decide_rule(const struct sbx_api_decision *d, struct sbx_queue *q, json_t **out)
{
	struct sbx_resolve_opts o = { .note = d->note };
	struct sbx_proposal p;
	char *err = NULL;
	size_t decided;

	if (sbx_queue_propose(q, d->id, &p, &err)) {
		*out = sbx_api_error("no_rule", "%s", err ? err : "no rule to offer");
		free(err);
		return 409;
	}
	if (strcmp(p.rule, d->rule)) {
		/* another request or an edit of the policy changed it: the
		 * person approves what they read, or nothing */
		*out = sbx_api_error("changed", "the proposed rule is no longer the one shown; "
				     "read it again");
		sbx_proposal_free(&p);
		return 409;
	}
	if (sbx_queue_adopt(q, &p, &o, &decided, NULL, &err)) {
		*out = sbx_api_error("not_written", "%s", err ? err : "the rule was not written");
		free(err);
		sbx_proposal_free(&p);
		return 409;
	}
	*out = json_pack("{s:b,s:s,s:s,s:s,s:I,s:I}", "ok", 1, "id", d->id, "project", d->project,
			 "file", p.file, "approved", (json_int_t)decided, "answers",
			 (json_int_t)p.ncovers);
	sbx_info("rule written to %s from %s; approved %zu of %zu", p.file, d->id, decided,
		 p.ncovers);
	sbx_proposal_free(&p);
	return 200;
}

unsigned sbx_api_decide(const struct sbx_api_decision *d, json_t **out)
{
	struct sbx_resolve_opts o = {
		.approve = d->approve, .scope = d->scope, .note = d->note,
		.cmd_timeout_s = d->cmd_timeout_s,
	};
	struct sbx_queue *q;
	json_t *done = NULL;
	char *err = NULL;
	unsigned status;
	int rc;

	q = open_queue(d->project, &err);
	if (!q) {
		*out = sbx_api_error("internal", "%s", err ? err : "cannot open the queue");
		free(err);
		return 500;
	}
	if (d->rule) {
		status = decide_rule(d, q, out);
		sbx_queue_close(q);
		return status;
	}
	rc = sbx_queue_resolve(q, d->id, &o, &done, &err);
	switch (rc) {
	case 0:
		status = 200;
		*out = json_pack("{s:b,s:s,s:s,s:s,s:s,s:O?,s:O?}", "ok", 1, "id", d->id,
				 "project", d->project, "verdict", d->approve ? "approve" : "deny",
				 "scope", sbx_scope_name(d->scope), "decision",
				 json_object_get(done, "decision"), "result",
				 json_object_get(done, "result"));
		add_output(q, done, *out);
		sbx_info("%s %s%s%s (%s)", d->approve ? "approved" : "denied", d->id,
			 d->approve ? " " : "", d->approve ? sbx_scope_name(d->scope) : "",
			 d->project);
		break;
	case -ENOENT:
		status = 404;
		*out = sbx_api_error("not_found", "%s", err ? err : "no such request");
		break;
	case -EEXIST:
		status = 409;
		*out = sbx_api_error("already_decided", "%s", err ? err : "already decided");
		break;
	case -EBUSY:
		status = 409;
		*out = sbx_api_error("taken", "%s", err ? err : "taken by another approver");
		break;
	case -ESTALE:
		/* the object is gone or another now: not granted, and denied;
		 * a conflict with the world, not a fault of the server */
		status = 409;
		*out = sbx_api_error("stale", "%s; it was denied, the agent has to ask again",
				     err ? err : "the object changed");
		break;
	case -ETIMEDOUT:
		status = 409;
		*out = sbx_api_error("expired", "%s", err ? err : "its deadline has passed");
		break;
	case -EINVAL:
		status = 400;
		*out = sbx_api_error("bad_request", "%s", err ? err : "refused");
		break;
	default:
		status = 500;
		*out = sbx_api_error("internal", "%s", err ? err : strerror(-rc));
		break;
	}
	free(err);
	json_decref(done);
	sbx_queue_close(q);
	return status;
}
