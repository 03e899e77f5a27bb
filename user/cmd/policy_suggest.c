// SPDX-License-Identifier: GPL-2.0
/*
 * bpfsbx policy suggest|diff: policies from what sessions were refused.
 *
 *   suggest [--events FILE] [--session ID...] [--policy F]
 *       the YAML patch (policy/suggest.c) that would have allowed the
 *       denied and asked accesses of those sessions, on standard output;
 *       the commands a connector asked about are the project's queue's
 *       requests of kind command (the kernel's events have none)
 *   diff OLD NEW [--events FILE] [--session ID...]
 *       per rule of NEW, the recorded accesses whose verdict changes
 *
 * The events are read whole before anything is printed: a corrupt or
 * truncated file, or a session with no event in it, is an error with the
 * file and line, and no patch is printed as if it were complete.
 */
#include <dirent.h>
#include <errno.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "lib/alloc.h"
#include "lib/json.h"
#include "lib/names.h"
#include "policy/policy.h"
#include "policy/suggest.h"
#include "queue/event_rec.h"
#include "queue/queue.h"
#include "queue/request.h"
#include "user/connector/shell/shell.h"
#include "user/cmd/cmd.h"
#include "user/cmd/policy_cli.h"
#include "user/daemon/state.h"

void policy_recorded_free(struct recorded *r)
{
	for (size_t i = 0; i < r->n; i++) {
		free((char *)r->v[i].path);
		free((char *)r->v[i].host);
		free((char *)r->v[i].who);
		for (int k = 0; k < r->v[i].argc; k++)
			free(r->v[i].argv[k]);
		free((char **)r->v[i].argv);
	}
	free(r->v);
	for (size_t i = 0; i < r->n_names; i++)
		free(r->names[i]);
	free(r->names);
}

static bool wanted(const struct popts *o, const char *session)
{
	if (!session)
		return false;	/* not in a session: no policy of ours refused it */
	if (!o->nsessions)
		return true;
	for (size_t i = 0; i < o->nsessions; i++)
		if (!strcmp(o->sessions[i], session))
			return true;
	return false;
}

static void note_session(struct recorded *r, const char *s)
{
	if (!s)
		return;
	for (size_t i = 0; i < r->n_names; i++)
		if (!strcmp(r->names[i], s))
			return;
	r->names = sbx_realloc_array(r->names, r->n_names + 1, sizeof(*r->names));
	r->names[r->n_names++] = sbx_strdup(s);
}

static struct sbx_seen *new_seen(struct recorded *r)
{
	struct sbx_seen *s;

	if (r->n == r->cap) {
		r->cap = r->cap ? 2 * r->cap : 1024;
		r->v = sbx_realloc_array(r->v, r->cap, sizeof(*r->v));
	}
	s = &r->v[r->n++];
	memset(s, 0, sizeof(*s));
	return s;
}

static void add_seen(struct recorded *r, const struct sbx_event_rec *e)
{
	struct sbx_seen *s = new_seen(r);

	s->count = e->count;
	s->who = e->comm ? sbx_strdup(e->comm) : NULL;
	switch (e->kind) {
	case SBX_EVREC_FILE:
		s->kind = SBX_SEEN_FILE;
		s->access = e->access;
		s->path = e->truncated ? NULL : sbx_strdup(e->path);
		break;
	case SBX_EVREC_NET:
		s->kind = SBX_SEEN_NET;
		s->family = e->family;
		memcpy(s->addr, e->addr, sizeof(s->addr));
		s->port = e->port;
		s->host = e->host ? sbx_strdup(e->host) : NULL;
		break;
	case SBX_EVREC_DNS:
		s->kind = SBX_SEEN_HOST;
		s->host = sbx_strdup(e->host);
		break;
	case SBX_EVREC_OTHER:
		break;
	}
}

int policy_read_events(const struct popts *o, const char *path, FILE *f, struct recorded *r)
{
	char *line = NULL;
	size_t cap = 0, ln = 0;
	ssize_t len;
	int rc = 0;

	while (rc == 0 && (len = getline(&line, &cap, f)) >= 0) {
		struct sbx_event_rec e;
		json_error_t jerr;
		json_t *j;
		char *why = NULL;
		int d;

		ln++;
		if (len == 0 || line[len - 1] != '\n') {
			fprintf(stderr, "bpfsbx policy: %s:%zu: truncated: the last line has no end "
				"(the file was cut, or is still being written)\n", path, ln);
			rc = -1;
			break;
		}
		j = json_loadb(line, (size_t)len, JSON_REJECT_DUPLICATES, &jerr);
		if (!j) {
			fprintf(stderr, "bpfsbx policy: %s:%zu:%d: not a JSON line: %s\n", path, ln,
				jerr.column, jerr.text);
			rc = -1;
			break;
		}
		d = sbx_event_rec_decode(j, &e, &why);
		if (d < 0) {
			fprintf(stderr, "bpfsbx policy: %s:%zu: %s\n", path, ln, why);
			rc = -1;
		} else if (d > 0) {
			note_session(r, e.session);
			if (wanted(o, e.session)) {
				r->events += e.count;
				if (e.uid >= 0 && r->uid >= 0 && e.uid != r->uid)
					r->uid_mixed = true;
				else if (e.uid >= 0)
					r->uid = e.uid;
				/* a learning session's audit of what enforcing would
				 * have refused is a refusal for the patch */
				if (e.verdict == SBX_V_DENY || e.verdict == SBX_V_ASK || e.would) {
					r->refused += e.count;
					/* a container's paths are its own view, which a
					 * rule of the host's policy would not name */
					if (e.kind == SBX_EVREC_OTHER ||
					    (json_object_get(j, "container") && e.path))
						r->other += e.count;
					else
						add_seen(r, &e);
				} else if (o->all_recorded && e.verdict == SBX_V_AUDIT &&
					   e.kind != SBX_EVREC_OTHER) {
					add_seen(r, &e);
				}
			}
		}
		free(why);
		json_decref(j);
	}
	if (rc == 0 && ferror(f)) {
		fprintf(stderr, "bpfsbx policy: %s: %s\n", path, strerror(errno));
		rc = -1;
	}
	free(line);
	r->lines = ln;
	return rc;
}

int policy_sessions_seen(const struct popts *o, const char *path, const struct recorded *r)
{
	int rc = 0;

	for (size_t i = 0; i < o->nsessions; i++) {
		bool found = false;

		for (size_t k = 0; k < r->n_names && !found; k++)
			found = !strcmp(r->names[k], o->sessions[i]);
		if (!found) {
			fprintf(stderr, "bpfsbx policy: %s: no event of session '%s' in its %zu lines "
				"(%zu session%s there%s", path, o->sessions[i], r->lines, r->n_names,
				r->n_names == 1 ? "" : "s", r->n_names ? ": " : "");
			for (size_t k = 0; k < r->n_names && k < 8; k++)
				fprintf(stderr, "%s%s", k ? ", " : "", r->names[k]);
			fprintf(stderr, "%s)\n", r->n_names > 8 ? ", ..." : "");
			rc = -1;
		}
	}
	return rc;
}

/* the simple commands of an asked command line, each a COMMAND access */
static void add_command(struct recorded *r, const char *command, const char *cwd, long long count,
			const char *origin, const char *home)
{
	struct sbx_sh_parse sp = { 0 };

	if (!command || sbx_sh_parse(command, cwd, home, &sp)) {
		sbx_sh_parse_free(&sp);
		return;
	}
	/* a line the parser cannot follow has no argv a rule could name */
	for (size_t i = 0; !sp.unanalysed && i < sp.n; i++) {
		const struct sbx_sh_cmd *c = &sp.cmds[i];
		struct sbx_seen *s;
		bool fixed = c->argc > 0;
		char **argv;

		for (int k = 0; k < c->argc; k++)
			fixed &= !c->argv[k].dynamic && !c->argv[k].glob && c->argv[k].val;
		if (!fixed)
			continue;
		argv = sbx_calloc((size_t)c->argc, sizeof(*argv));
		for (int k = 0; k < c->argc; k++)
			argv[k] = sbx_strdup(c->argv[k].val);
		s = new_seen(r);
		s->kind = SBX_SEEN_COMMAND;
		s->argv = argv;
		s->argc = c->argc;
		s->count = count > 0 ? (uint64_t)count : 1;
		s->who = sbx_strdup(origin ? origin : "connector");
	}
	sbx_sh_parse_free(&sp);
}

/*
 * The requests of kind command in the project's queue (waiting, taken or
 * decided) of the sessions o names: what a connector asked a person
 * about. A project without a queue has none.
 */
static void read_commands(const struct popts *o, const char *project, const char *home,
			  struct recorded *r)
{
	static const enum sbx_qdir dirs[] = { SBX_QDIR_PENDING, SBX_QDIR_CLAIMED, SBX_QDIR_DONE };
	struct sbx_queue *q;
	char *err = NULL;

	if (!project || !(q = sbx_queue_open(project, 0, (uid_t)-1, (gid_t)-1, &err))) {
		free(err);
		return;
	}
	for (size_t d = 0; d < sizeof(dirs) / sizeof(dirs[0]); d++) {
		json_t *arr = NULL, *rec;
		size_t i;

		if (sbx_queue_list(q, dirs[d], &arr, &err) < 0) {
			fprintf(stderr, "bpfsbx policy: the queue of %s: %s\n", project, err ? err : "?");
			free(err);
			err = NULL;
			continue;
		}
		free(err);
		err = NULL;
		json_array_foreach(arr, i, rec) {
			struct sbx_request req;

			if (!sbx_request_decode(rec, dirs[d] == SBX_QDIR_DONE, &req, NULL))
				continue;
			note_session(r, req.session);
			if (req.kind == SBX_REQ_COMMAND && wanted(o, req.session)) {
				r->refused += req.count > 0 ? (uint64_t)req.count : 1;
				r->events += req.count > 0 ? (uint64_t)req.count : 1;
				add_command(r, req.command, req.cwd, req.count, req.origin, home);
			}
			sbx_request_release(&req);
		}
		json_decref(arr);
	}
	sbx_queue_close(q);
}

/*
 * What the connectors of a learning session let through that the policy
 * would have asked or denied: their audit records (decision audit, with
 * would) in the project's .sandbox/audit/SESSION.jsonl, for the sessions o
 * names. A line that is not JSON is the chain's business (audit verify),
 * not a command: skipped.
 */
static void read_learned_commands(const struct popts *o, const char *project, const char *home,
				  struct recorded *r)
{
	char *dir = project ? sbx_asprintf("%s/.sandbox/audit", project) : NULL;
	DIR *d = dir ? opendir(dir) : NULL;
	struct dirent *de;

	while (d && (de = readdir(d))) {
		size_t n = strlen(de->d_name);
		char *session, *path, *line = NULL;
		size_t cap = 0;
		FILE *f;

		if (n < 7 || strcmp(de->d_name + n - 6, ".jsonl") || de->d_name[0] == '.')
			continue;
		session = strndup(de->d_name, n - 6);
		if (!session || !wanted(o, session)) {
			free(session);
			continue;
		}
		path = sbx_asprintf("%s/%s", dir, de->d_name);
		f = fopen(path, "re");
		while (f && getline(&line, &cap, f) > 0) {
			json_t *j = json_loads(line, 0, NULL), *in = json_object_get(j, "input");
			const char *ev = sbx_json_str(j, "event");

			if (ev && (!strcmp(ev, "connector") || !strcmp(ev, "connector_decision")) &&
			    !strcmp(sbx_json_str(j, "decision") ?: "", "audit") &&
			    sbx_json_str(j, "would") && sbx_json_str(in, "command")) {
				note_session(r, session);
				r->refused++;
				r->events++;
				add_command(r, sbx_json_str(in, "command"), project, 1,
					    sbx_json_str(j, "agent"), home);
			}
			json_decref(j);
		}
		if (f)
			fclose(f);
		free(line);
		free(path);
		free(session);
	}
	if (d)
		closedir(d);
	free(dir);
}

int policy_events_home(const struct popts *o, const struct recorded *r, struct popts *out,
		       char **home)
{
	struct passwd *pw;

	*out = *o;
	*home = NULL;
	if (o->home || r->uid < 0)
		return 0;
	if (r->uid_mixed) {
		fprintf(stderr, "bpfsbx policy: the events are of sessions of more than one user, "
			"whose ~ differ: name one user's sessions with --session, or give --home\n");
		return -1;
	}
	if ((uid_t)r->uid == getuid())
		return 0;
	pw = getpwuid((uid_t)r->uid);
	if (!pw || pw->pw_dir[0] != '/' || access(pw->pw_dir, F_OK)) {
		fprintf(stderr, "bpfsbx policy: the events are of uid %lld, who has no home here: "
			"give --home\n", r->uid);
		return -1;
	}
	*home = sbx_strdup(pw->pw_dir);
	out->home = *home;
	fprintf(stderr, "bpfsbx policy: ~ is %s, the home of uid %lld whose sessions made these "
		"events (--home says otherwise)\n", *home, r->uid);
	return 0;
}

/* 0, or -1 with the error printed (file:line) */
static int read_events(const struct popts *o, const char *path, struct recorded *r)
{
	FILE *f = fopen(path, "r");
	int rc;

	if (!f) {
		fprintf(stderr, "bpfsbx policy: %s: %s\n", path, strerror(errno));
		return -1;
	}
	rc = policy_read_events(o, path, f, r);
	fclose(f);
	return rc;
}

int policy_suggest(const struct popts *given)
{
	const char *events = given->events ? given->events : SBX_EVENT_LOG;
	struct recorded r = { .uid = -1 };
	struct popts po, *o = &po;
	char *ehome = NULL;
	struct sbx_policy_env env;
	struct loaded L;
	struct sbx_suggest_in in = { 0 };
	struct sbx_suggestion out;
	struct sbx_diags d = { 0 };
	char *base = NULL, *header = NULL;
	struct timespec t0, t1;
	int rc = SBX_EXIT_FAIL;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	memset(&L, 0, sizeof(L));
	if (read_events(given, events, &r) || policy_events_home(given, &r, &po, &ehome) ||
	    policy_cli_env(o, &L, &env))
		goto out;
	read_commands(o, o->project ? L.project : o->found_project, L.home, &r);
	read_learned_commands(o, o->project ? L.project : o->found_project, L.home, &r);
	if (policy_sessions_seen(o, events, &r))
		goto out;
	if (o->file && !(base = realpath(o->file, NULL))) {
		fprintf(stderr, "bpfsbx policy: %s: %s\n", o->file, strerror(errno));
		goto out;
	}
	header = sbx_asprintf("from %s: %llu events of %s, %llu refused", events,
			      (unsigned long long)r.events,
			      o->nsessions ? "the sessions named" : "every session",
			      (unsigned long long)r.refused);
	in.env = &env;
	in.base = base;
	in.header = header;
	if (sbx_suggest(r.v, r.n, &in, &out, &d)) {
		sbx_diags_print(&d, stderr);
		fprintf(stderr, "bpfsbx policy: no patch suggested\n");
		goto out;
	}
	fputs(out.yaml, stdout);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	fprintf(stderr, "bpfsbx policy: %zu rules for %zu accesses; %zu protected, %zu denied by "
		"the policy's own rules, %zu unnameable, %zu allowed by now; %llu events of other "
		"kinds or of a container's paths (no rule opens them); %.0f ms\n", out.rules, out.covered, out.protected_n,
		out.kept, out.unexpressible, out.already, (unsigned long long)r.other,
		(double)(t1.tv_sec - t0.tv_sec) * 1e3 + (double)(t1.tv_nsec - t0.tv_nsec) / 1e6);
	sbx_suggestion_free(&out);
	rc = fflush(stdout) ? SBX_EXIT_FAIL : SBX_EXIT_OK;
out:
	sbx_diags_free(&d);
	free(base);
	free(header);
	free(L.project);
	free(L.home);
	free(ehome);
	policy_recorded_free(&r);
	return rc;
}

/* ---- diff ------------------------------------------------------------------------------ */

struct change {
	const struct sbx_seen *s;
	char *key;
	uint64_t count;
	struct sbx_decision old, new;
};

static int cmp_change(const void *a, const void *b)
{
	const struct change *x = a, *y = b;

	if (x->new.rule_id != y->new.rule_id)
		return x->new.rule_id < y->new.rule_id ? -1 : 1;
	return strcmp(x->key, y->key);
}

static int cmp_key(const void *a, const void *b)
{
	return strcmp(((const struct change *)a)->key, ((const struct change *)b)->key);
}

static void rule_label(const struct sbx_policy *p, const char *file, uint32_t id)
{
	const struct sbx_rule_info *ri;

	if (id >= SBX_RULE_BUILTIN) {
		printf("%s", sbx_builtin_rule_text(id));
		return;
	}
	ri = sbx_policy_rule(p, id);
	if (!ri || ri->is_default) {
		printf("the default of %s", file);
		return;
	}
	printf("rule #%u \"%s\" (%s:%d)", id, ri->pattern ? ri->pattern : "?",
	       ri->file ? ri->file : file, ri->line);
}

int policy_diff(const struct popts *given)
{
	const char *events = given->events ? given->events : SBX_EVENT_LOG;
	struct recorded r = { .uid = -1 };
	struct popts po, *o = &po;
	char *ehome = NULL;
	struct loaded A = { 0 }, B = { 0 };
	struct change *v = NULL;
	size_t n = 0, changed = 0, still = 0;
	uint64_t changed_ev = 0;
	uint32_t last_rule = 0;
	int rc = SBX_EXIT_FAIL;

	po = *given;
	if (read_events(given, events, &r) || policy_sessions_seen(given, events, &r) ||
	    policy_events_home(given, &r, &po, &ehome) ||
	    policy_cli_load(o, o->file, &A, stderr) || policy_cli_load(o, o->target, &B, stderr))
		goto out;
	v = sbx_calloc(r.n ? r.n : 1, sizeof(*v));
	for (size_t i = 0; i < r.n; i++) {
		v[n].s = &r.v[i];
		v[n].key = sbx_seen_key(&r.v[i]);
		v[n].count = r.v[i].count;
		n++;
	}
	/* one line per access, however many events recorded it */
	qsort(v, n, sizeof(*v), cmp_key);
	{
		size_t w = 0;

		for (size_t i = 0; i < n; i++) {
			if (w && !strcmp(v[w - 1].key, v[i].key)) {
				v[w - 1].count += v[i].count;
				free(v[i].key);
				continue;
			}
			v[w++] = v[i];
		}
		n = w;
	}
	for (size_t i = 0; i < n; i++)
		if (sbx_seen_decide(&A.c, A.p, v[i].s, &v[i].old) ||
		    sbx_seen_decide(&B.c, B.p, v[i].s, &v[i].new))
			v[i].old.verdict = v[i].new.verdict = 0;	/* cannot be decided: no change */
	qsort(v, n, sizeof(*v), cmp_change);
	for (size_t i = 0; i < n; i++) {
		char *w;

		if (v[i].old.verdict == v[i].new.verdict)
			continue;
		/* sorted by NEW's rule: a heading where the rule changes */
		if (!changed || v[i].new.rule_id != last_rule) {
			printf("%s", changed ? "\n" : "");
			rule_label(B.p, o->target, v[i].new.rule_id);
			printf(":\n");
			last_rule = v[i].new.rule_id;
		}
		w = sbx_seen_words(v[i].s);
		printf("  %s: %s -> %s (%llu event%s)\n", w, sbx_verdict_name(v[i].old.verdict),
		       sbx_verdict_name(v[i].new.verdict), (unsigned long long)v[i].count,
		       v[i].count == 1 ? "" : "s");
		free(w);
		changed++;
		changed_ev += v[i].count;
	}
	for (size_t i = 0; i < n; i++)
		if (v[i].new.verdict == SBX_V_DENY || v[i].new.verdict == SBX_V_ASK) {
			char *w = sbx_seen_words(v[i].s);

			printf("%s%s %s under %s by ", still ? "" : (changed ? "\nstill refused:\n" :
								   "still refused:\n"),
			       w, sbx_verdict_name(v[i].new.verdict), o->target);
			rule_label(B.p, o->target, v[i].new.rule_id);
			printf("\n");
			free(w);
			still++;
		}
	printf("%s%zu of %zu recorded accesses change verdict (%llu events); %zu still denied or "
	       "asked under %s; %llu events of other kinds not compared\n", changed || still ? "\n" : "",
	       changed, n, (unsigned long long)changed_ev, still, o->target,
	       (unsigned long long)r.other);
	rc = SBX_EXIT_OK;
out:
	for (size_t i = 0; i < n; i++)
		free(v[i].key);
	free(v);
	policy_cli_free(&A);
	policy_cli_free(&B);
	policy_recorded_free(&r);
	free(ehome);
	return rc;
}
