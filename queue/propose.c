// SPDX-License-Identifier: GPL-2.0
/*
 * propose.c - "always", widened into a rule of the project's policy.
 *
 * The proposal is decided on the very text that would be written: the
 * project's policy with the rule inserted (policy/edit.c), loaded with the
 * machine floor and compiled, so what the person is told it allows, and
 * which waiting requests it answers, is what the kernel will do with it.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <pwd.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/socket.h>
#include "lib/alloc.h"
#include "lib/json.h"
#include "lib/clock.h"
#include "lib/fileio.h"
#include "lib/names.h"
#include "lib/privs.h"
#include "lib/project.h"
#include "lib/text.h"
#include "policy/edit.h"
#include "policy/suggest.h"
#include "queue/propose.h"
#include "queue/request.h"

#define NEW_POLICY	"version: 1\nextends: agent-default\n"
#define POLICY_MAX	(4u << 20)

/* A request as policy suggest sees an access; false for a command */
static bool req_seen(const struct sbx_request *r, struct sbx_seen *s)
{
	memset(s, 0, sizeof(*s));
	s->count = r->count > 0 ? (uint64_t)r->count : 1;
	s->who = r->process.comm;
	switch (r->kind) {
	case SBX_REQ_FILE:
	case SBX_REQ_ACCESS_PATH:
	case SBX_REQ_EXEC:
		if (!r->path)
			return false;
		s->kind = SBX_SEEN_FILE;
		s->path = r->path;
		s->access = r->kind == SBX_REQ_EXEC ? SBX_ACC_EXEC :
			    r->has_access ? r->access : SBX_ACC_READ;
		return true;
	case SBX_REQ_NET:
		if (!r->addr)
			return false;
		s->kind = SBX_SEEN_NET;
		if (inet_pton(AF_INET, r->addr, s->addr) == 1)
			s->family = AF_INET;
		else if (inet_pton(AF_INET6, r->addr, s->addr) == 1)
			s->family = AF_INET6;
		else
			return false;
		s->port = (uint16_t)r->port;
		s->host = r->learned;
		return true;
	case SBX_REQ_HOST:
	case SBX_REQ_ACCESS_HOST:
		if (!r->host)
			return false;
		s->kind = SBX_SEEN_HOST;
		s->host = r->host;
		return true;
	case SBX_REQ_COMMAND:
		break;
	}
	return false;
}

static bool lets_through(uint8_t v)
{
	return v == SBX_V_ALLOW || v == SBX_V_AUDIT;
}

void sbx_proposal_free(struct sbx_proposal *p)
{
	free(p->id);
	free(p->file);
	free(p->home);
	free(p->project);
	sbx_policy_items_free(p->items, p->nitems);
	free(p->rule);
	for (size_t i = 0; i < p->nexplain; i++)
		free(p->explain[i].text);
	free(p->explain);
	for (size_t i = 0; i < p->ncovers; i++) {
		free(p->covers[i]);
		free(p->covers_what[i]);
	}
	free(p->covers);
	free(p->covers_what);
	memset(p, 0, sizeof(*p));
}

static void explain(struct sbx_proposal *p, const char *label, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static void explain(struct sbx_proposal *p, const char *label, const char *fmt, ...)
{
	va_list ap;
	char *t;

	va_start(ap, fmt);
	t = sbx_vformat(fmt, ap);
	va_end(ap);
	if (!t)
		abort();
	p->explain = sbx_realloc_array(p->explain, p->nexplain + 1, sizeof(*p->explain));
	p->explain[p->nexplain++] = (struct sbx_prop_line){ label, t };
}

/* A loaded and compiled policy */
struct pol {
	struct sbx_policy *p;
	struct sbx_compiled c;
	bool ok;
};

static int pol_load(struct pol *L, const char *name, const char *text,
		    const struct sbx_policy_env *env, char **err)
{
	struct sbx_diags d = { 0 };

	memset(L, 0, sizeof(*L));
	L->p = sbx_policy_load_buffer(name, text, strlen(text), env, &d);
	if (L->p && !d.errors && sbx_policy_compile(L->p, 0, &L->c, &d) == 0 && !d.errors)
		L->ok = true;
	if (!L->ok) {
		char *buf = NULL;
		size_t len = 0;
		FILE *f = open_memstream(&buf, &len);

		if (f) {
			sbx_diags_print(&d, f);
			fclose(f);
		}
		sbx_queue_set_err(err, "%s does not load:\n%s", name, buf ? buf : "");
		free(buf);
	}
	sbx_diags_free(&d);
	return L->ok ? 0 : -1;
}

static void pol_free(struct pol *L)
{
	if (L->p) {
		sbx_compiled_free(&L->c);
		sbx_policy_free(L->p);
	}
	memset(L, 0, sizeof(*L));
}

/* May the caller put a rule in a project's policy under this floor? */
static int floor_allows(const struct sbx_policy *p, const char *id, char **err)
{
	const char *const *who = sbx_policy_approvers(p);
	uint32_t ttl = sbx_policy_max_always_ttl(p);
	bool listed = !who || geteuid() == 0;

	if (ttl) {
		/* a rule has no end, and the floor says every "always" has one */
		sbx_queue_set_err(err, "%s: the machine policy bounds \"always\" to %us "
				  "(projects.max_always_ttl), and a rule in the project's policy "
				  "never ends: no rule is offered; approve it always instead", id, ttl);
		return -1;
	}
	for (size_t i = 0; who && who[i] && !listed; i++)
		listed = sbx_uid_is(geteuid(), who[i]);
	if (!listed) {
		sbx_queue_set_err(err, "%s: the machine policy's projects.approvers does not name "
				  "you: you may not widen its answers into the project's policy", id);
		return -1;
	}
	return 0;
}

/* the home the session's policy was compiled with: its user's */
static char *home_for(struct sbx_queue *q, const struct sbx_request *r)
{
	uid_t uid;
	gid_t gid;
	struct passwd *pw;

	if (r->process.uid >= 0) {
		uid = (uid_t)r->process.uid;
	} else {
		sbx_queue_owner(q, &uid, &gid);
	}
	pw = getpwuid(uid);
	return pw && pw->pw_dir ? sbx_strdup(pw->pw_dir) : NULL;
}

/* Why there is no rule to offer, in the words of the policy that decides */
static void no_rule(const struct sbx_suggestion *sug, const struct pol *base,
		    const struct sbx_seen *s, const char *what, const char *id, char **err)
{
	struct sbx_decision d;
	char *w = NULL;

	if (sbx_seen_decide(&base->c, base->p, s, &d) == 0)
		w = sbx_policy_rule_words(base->p, d.rule_id);
	if (sug->protected_n)
		sbx_queue_set_err(err, "%s: no rule is offered: %s is protected, %s; approve it "
				  "once or for the session", id, what, w ? w : "by agent-default");
	else if (sug->kept)
		sbx_queue_set_err(err, "%s: no rule is offered: the project's policy refuses %s "
				  "by a rule of its own (%s); change that rule by hand", id, what,
				  w ? w : "?");
	else if (sug->already)
		sbx_queue_set_err(err, "%s: no rule is offered: the project's policy allows %s "
				  "already (%s)", id, what, w ? w : "?");
	else
		sbx_queue_set_err(err, "%s: no rule is offered: no rule can name %s (a path with "
				  "*, $ or a control character, or cut by the kernel)", id, what);
	free(w);
}

static void explain_rule(struct sbx_proposal *p, const struct pol *old, const struct pol *neu,
			 const struct sbx_seen *s, const char *what, const struct sbx_decision *dn)
{
	const struct sbx_rule_info *r = sbx_policy_rule(neu->p, dn->rule_id);
	struct sbx_decision d;
	char *w;

	if (r && s->kind == SBX_SEEN_FILE && r->expanded && r->pattern && *r->pattern &&
	    r->pattern[strlen(r->pattern) - 1] == '/') {
		size_t n = 0;
		char **in = sbx_suggest_refused_below(neu->p, r->expanded, s->access, &n);

		explain(p, "allows", "%s of %s/ and of everything below it",
			sbx_access_name(s->access), r->expanded);
		if (n) {
			struct sbx_strbuf b = { 0 };

			for (size_t i = 0; i < n; i++) {
				sbx_sb_join(&b, "\n", in[i]);
				free(in[i]);
			}
			explain(p, "refused", "still, below it:\n%s", b.p ? b.p : "");
			free(b.p);
		}
		free(in);
	} else if (r && s->kind == SBX_SEEN_FILE) {
		explain(p, "allows", "%s of %s only", sbx_access_name(s->access),
			r->expanded ? r->expanded : r->pattern);
	} else if (r) {
		explain(p, "allows", "%s", r->pattern);
	}
	if (sbx_seen_decide(&old->c, old->p, s, &d) == 0) {
		w = sbx_policy_rule_words(old->p, d.rule_id);
		explain(p, "before", "%s: %s %s", what, sbx_verdict_name(d.verdict), w);
		free(w);
	}
	w = sbx_policy_rule_words(neu->p, dn->rule_id);
	explain(p, "after", "%s: %s %s", what, sbx_verdict_name(dn->verdict), w);
	free(w);
}

/* the waiting requests of the project that the new text lets through and
 * the old did not, the asked one first */
static void find_covers(struct sbx_queue *q, struct sbx_proposal *p, const struct pol *old,
			const struct pol *neu, const char *asked_what)
{
	json_t *arr = NULL, *rec;
	size_t i;

	p->covers = sbx_calloc(1, sizeof(char *));
	p->covers_what = sbx_calloc(1, sizeof(char *));
	p->covers[0] = sbx_strdup(p->id);
	p->covers_what[0] = sbx_strdup(asked_what);
	p->ncovers = 1;
	if (sbx_queue_list(q, SBX_QDIR_PENDING, &arr, NULL))
		return;
	json_array_foreach(arr, i, rec) {
		struct sbx_request r;
		struct sbx_seen s;
		struct sbx_decision dold, dnew;

		if (!sbx_request_decode(rec, false, &r, NULL))
			continue;
		/* a container's path names its own view, not the host file the
		 * rule names (sbx_queue_propose) */
		if (r.container)
			continue;
		if (r.id && strcmp(r.id, p->id) && req_seen(&r, &s) &&
		    sbx_seen_decide(&old->c, old->p, &s, &dold) == 0 &&
		    sbx_seen_decide(&neu->c, neu->p, &s, &dnew) == 0 &&
		    !lets_through(dold.verdict) && lets_through(dnew.verdict)) {
			p->covers = sbx_realloc_array(p->covers, p->ncovers + 1, sizeof(char *));
			p->covers_what = sbx_realloc_array(p->covers_what, p->ncovers + 1,
							   sizeof(char *));
			p->covers[p->ncovers] = sbx_strdup(r.id);
			p->covers_what[p->ncovers++] = sbx_request_what(&r);
		}
		sbx_request_release(&r);
	}
	json_decref(arr);
}

int sbx_queue_propose(struct sbx_queue *q, const char *id, struct sbx_proposal *out, char **err)
{
	struct sbx_policy_env env = { 0 };
	struct sbx_suggest_in in = { .env = &env, .dir_min = 1 };
	struct sbx_suggestion sug = { 0 };
	struct sbx_diags diags = { 0 };
	struct sbx_request r = { 0 };
	struct pol old = { 0 }, neu = { 0 };
	struct sbx_decision dn;
	struct sbx_seen s;
	char *text = NULL, *edited = NULL, *what = NULL, *reason = NULL;
	size_t len = 0;
	int rc = -1;

	memset(out, 0, sizeof(*out));
	if (sbx_request_read(q, SBX_QDIR_PENDING, id, &r, err))
		return -1;
	out->id = sbx_strdup(id);
	if (r.kind == SBX_REQ_COMMAND) {
		sbx_queue_set_err(err, "%s: a command is approved once, never widened into a rule "
				  "(policy suggest lists command rules for review)", id);
		goto out;
	}
	/* its path is the container's view: as a rule of the project's policy
	 * it would name whatever the host has there */
	if (r.container && (r.kind == SBX_REQ_FILE || r.kind == SBX_REQ_EXEC ||
			    r.kind == SBX_REQ_ACCESS_PATH)) {
		sbx_queue_set_err(err, "%s: the path is as container %s sees it, not the host's, so "
				  "no rule is offered (approve it, or write a rule for the host path "
				  "mounted there)", id, sbx_json_str(r.container, "name") ?: "?");
		goto out;
	}
	if (!req_seen(&r, &s)) {
		sbx_queue_set_err(err, "%s: the request names no object a rule could", id);
		goto out;
	}
	what = sbx_request_what(&r);
	out->home = home_for(q, &r);
	if (!out->home) {
		sbx_queue_set_err(err, "%s: no home directory for the session's user", id);
		goto out;
	}
	/* no text of the agent's in the person's file but the path itself */
	reason = sbx_asprintf("approved by %s, widened from request %s", sbx_queue_user(), id);
	in.reason = reason;
	env.home = out->home;
	/* watch may have opened the queue by a relative name */
	out->project = realpath(sbx_queue_project(q), NULL);
	if (!out->project) {
		sbx_queue_set_err(err, "%s: %s", sbx_queue_project(q), strerror(errno));
		goto out;
	}
	env.project = out->project;
	out->file = sbx_asprintf("%s/%s", env.project, SBX_POLICY_FILE);
	out->sec = s.kind == SBX_SEEN_FILE ? SBX_SEC_FILES : SBX_SEC_NETWORK;
	switch (sbx_read_file(out->file, POLICY_MAX, &text, &len)) {
	case 0:
		out->file_exists = true;
		in.base = out->file;
		break;
	case -ENOENT:
		text = sbx_strdup(NEW_POLICY);
		len = strlen(text);
		break;
	default:
		sbx_queue_set_err(err, "%s: cannot read it", out->file);
		goto out;
	}
	if (pol_load(&old, out->file, text, &env, err) || floor_allows(old.p, id, err))
		goto out;
	if (sbx_suggest(&s, 1, &in, &sug, &diags)) {
		sbx_queue_set_err(err, "%s: no rule could be made for %s", id, what);
		goto out;
	}
	if (!sug.rules) {
		no_rule(&sug, &old, &s, what, id, err);
		goto out;
	}
	if (sbx_policy_rule_items("the suggested rule", sug.yaml, strlen(sug.yaml), out->sec,
				  &out->items, &out->nitems, err) || !out->nitems) {
		sbx_queue_set_err(err, "%s: the suggested rule could not be read back", id);
		goto out;
	}
	{
		struct sbx_strbuf b = { 0 };

		for (size_t i = 0; i < out->nitems; i++)
			sbx_sb_puts(&b, out->items[i]);
		out->rule = b.p;
	}
	/* decided on what would be written, floor and all */
	if (sbx_policy_text_add(out->file, text, len, out->sec, out->items, out->nitems, NULL,
				&edited, err) ||
	    pol_load(&neu, out->file, edited, &env, err))
		goto out;
	if (sbx_seen_decide(&neu.c, neu.p, &s, &dn) || !lets_through(dn.verdict)) {
		/* the floor, or a closer rule of the project's, still refuses it */
		char *w = sbx_policy_rule_words(neu.p, dn.rule_id);

		sbx_queue_set_err(err, "%s: with the rule, %s would still be %s %s: no rule is "
				  "offered", id, what, sbx_verdict_name(dn.verdict), w);
		free(w);
		goto out;
	}
	explain_rule(out, &old, &neu, &s, what, &dn);
	find_covers(q, out, &old, &neu, what);
	rc = 0;
out:
	if (rc)
		sbx_proposal_free(out);
	sbx_suggestion_free(&sug);
	sbx_diags_free(&diags);
	pol_free(&old);
	pol_free(&neu);
	sbx_request_release(&r);
	free(text);
	free(edited);
	free(what);
	free(reason);
	return rc;
}

json_t *sbx_proposal_json(const struct sbx_proposal *p)
{
	json_t *ex = json_array(), *cov = json_array();

	for (size_t i = 0; i < p->nexplain; i++)
		json_array_append_new(ex, json_pack("[s,s]", p->explain[i].label,
						    p->explain[i].text));
	for (size_t i = 0; i < p->ncovers; i++)
		json_array_append_new(cov, json_pack("{s:s,s:s}", "id", p->covers[i], "what",
						     p->covers_what[i] ? p->covers_what[i] : ""));
	return json_pack("{s:s,s:s,s:b,s:s,s:s,s:o,s:o}", "id", p->id, "file", p->file,
			 "created", !p->file_exists, "section",
			 p->sec == SBX_SEC_FILES ? "files" : "network", "rule", p->rule,
			 "explain", ex, "covers", cov);
}

int sbx_queue_adopt(struct sbx_queue *q, const struct sbx_proposal *p,
		    const struct sbx_resolve_opts *o, size_t *decided, json_t **done, char **err)
{
	struct sbx_policy_env env = { .home = p->home, .project = p->project };
	struct sbx_resolve_opts ro = *o;
	char *at = sbx_time_rfc3339(time(NULL)), *note, *first;
	int rc;

	*decided = 0;
	if (done)
		*done = NULL;
	first = strndup(p->rule, strcspn(p->rule, "\n"));
	if (!first)
		abort();
	note = sbx_asprintf("rule from request %s by %s at %s", p->id,
			    o->by ? o->by : sbx_queue_user(), at);
	rc = sbx_policy_file_add(p->file, p->sec, p->items, p->nitems, note, &env, NULL, err);
	free(note);
	free(at);
	if (rc) {
		free(first);
		return -1;
	}
	ro.approve = true;
	ro.scope = SBX_SCOPE_SESSION;
	note = sbx_asprintf("approved by a rule now in %s: %s", SBX_POLICY_FILE,
			    first + strspn(first, "- "));
	if (!ro.note)
		ro.note = note;
	for (size_t i = 0; i < p->ncovers; i++) {
		json_t *d = NULL;

		/* one another approver took meanwhile is theirs to decide */
		if (sbx_queue_resolve(q, p->covers[i], &ro, &d, NULL) == 0)
			(*decided)++;
		if (i == 0 && done)
			*done = d;
		else
			json_decref(d);
	}
	free(note);
	free(first);
	return 0;
}

char *sbx_request_rule_key(const struct sbx_request *r)
{
	struct passwd *pw;
	char *dir, *key;

	if ((r->kind != SBX_REQ_FILE && r->kind != SBX_REQ_EXEC) || !r->path || !r->session ||
	    r->container || r->process.uid < 0 || !(pw = getpwuid((uid_t)r->process.uid)))
		return NULL;
	dir = sbx_suggest_widen(r->path, pw->pw_dir, r->project);
	if (!dir)
		return NULL;
	key = sbx_asprintf("%s %s %s", r->session,
			   sbx_access_name(r->kind == SBX_REQ_EXEC ? SBX_ACC_EXEC : r->access), dir);
	free(dir);
	return key;
}
