// SPDX-License-Identifier: GPL-2.0
/*
 * decisions.c - a person's decision reaches the kernel.
 *
 * inotify on escalations/done/ wakes the daemon when an approver's
 * decision file is renamed into place; the grant is in the map a few
 * milliseconds later, so the agent's retry succeeds. Decisions are
 * checked before anything is applied: a file that does not validate,
 * names a request this daemon never made for that session, or repeats a
 * decision already applied is quarantined and nothing happens.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "lib/alloc.h"
#include "lib/clock.h"
#include "lib/log.h"
#include "queue/request.h"
#include "user/daemon/decisions.h"
#include "user/daemon/events.h"
#include "user/daemon/grants.h"
#include "user/daemon/metrics.h"
#include "lib/json.h"

/* The live session of the hint's project that issued request id. */
static struct sbx_session_rt *issuer(struct sbx_daemon *d, const struct sbx_session_rt *hint,
				     const char *id)
{
	for (struct sbx_session_rt *c = d->sessions; c; c = c->next)
		if (c->project && !strcmp(c->project, hint->project) && sbx_session_issued(c, id))
			return c;
	return NULL;
}

static void apply(struct sbx_daemon *d, struct sbx_session_rt *s, const struct sbx_request *r)
{
	enum sbx_scope scope = r->decision.scope;
	uint64_t exp = scope == SBX_SCOPE_ONCE ?
		sbx_boot_ns() + (uint64_t)d->once_ttl_s * 1000000000ull : 0;

	/* the machine policy's projects.max_always_ttl: "always" lasts that long */
	if (scope == SBX_SCOPE_ALWAYS && s->max_always_ttl_s)
		exp = sbx_boot_ns() + (uint64_t)s->max_always_ttl_s * 1000000000ull;
	struct sbx_grant_obj o;
	char *why = NULL, *what = sbx_request_what(r);
	int rc = -EINVAL;

	if (sbx_grant_obj_of_request(r, &o))
		rc = sbx_grant_obj_add(d, s, &o, exp, r->id, &why);
	if (rc) {
		json_t *rec = json_pack("{s:s,s:s,s:s,s:s}", "event", "grant_refused", "request",
					r->id, "object", what, "reason",
					why ? why : strerror(-rc));

		/* the person approved an object the path no longer leads to:
		 * nothing is granted, and the record says why */
		sbx_warn("session %s: approval of %s (%s) not granted: %s", s->name, r->id, what,
			 why ? why : strerror(-rc));
		sbx_daemon_audit(s, rec);
		json_decref(rec);
	} else
		sbx_info("session %s: approved (%s) %s", s->name, sbx_scope_name(scope), what);
	free(why);
	free(what);
}

void sbx_decision_file(struct sbx_daemon *d, struct sbx_session_rt *hint, const char *name)
{
	struct sbx_session_rt *s;
	struct sbx_done_ident ident;
	struct sbx_request r;
	struct sbx_queue *q = hint->queue;
	char *why = NULL;
	json_t *done = NULL, *rec;
	size_t l = strlen(name);
	int rc;

	if (!q || name[0] == '.' || l < 6 || strcmp(name + l - 5, ".json"))
		return;
	/* Checked against the request as it was issued: an approver cannot
	 * approve something other than what was asked, nor replay a decision. */
	rc = sbx_queue_check_done(q, name, SBX_CHECK_QUARANTINE, &done, &ident, &why);
	if (rc < 0 || rc == SBX_DONE_APPLIED)
		goto out;
	if (rc == SBX_DONE_BAD || !sbx_request_decode(done, true, &r, &why)) {
		sbx_warn("session %s: decision %s quarantined: %s", hint->name, name,
			 why ? why : "invalid");
		goto out;
	}
	if (r.kind == SBX_REQ_COMMAND)
		goto out_req;	/* commands are run by the approver, not the kernel */
	s = issuer(d, hint, r.id);
	if (!s) {
		/* A decision naming one of our live sessions that we never asked
		 * for is forged; one for somebody else's request is not ours. */
		if (r.session && sbx_session_find(d, r.session))
			sbx_queue_quarantine(q, SBX_QDIR_DONE, name,
					     "decision for a request this session never made");
		goto out_req;
	}
	if (!sbx_session_approver_ok(s, ident.uid)) {
		/* the machine policy's projects.approvers: not this person's to
		 * decide; the request stays refused, and the chain says who tried */
		char *text = sbx_asprintf("decided by uid %u, who is not an approver under the "
					  "machine policy (projects.approvers)", (unsigned)ident.uid);

		sbx_warn("session %s: decision %s refused: %s", s->name, r.id, text);
		rec = json_pack("{s:s,s:s,s:i,s:s}", "event", "decision_refused", "request", r.id,
				"approver_uid", (int)ident.uid, "reason", text);
		sbx_daemon_audit(s, rec);
		json_decref(rec);
		sbx_queue_quarantine(q, SBX_QDIR_DONE, name, text);
		free(text);
		text = sbx_asprintf("asked again: uid %u answered %s, and is not an approver "
				    "under the machine policy", (unsigned)ident.uid, r.id);
		sbx_events_ask_again(s, &r, text);
		free(text);
		goto out_req;
	}
	sbx_metrics_approval(difftime(time(NULL), r.created));
	if (r.decision.approve)
		apply(d, s, &r);
	sbx_queue_mark_applied_ident(q, r.id, &ident);
	rec = json_pack("{s:s,s:s,s:s,s:s,s:O,s:i}", "event", "decision", "request", r.id,
			"verdict", r.decision.approve ? "approve" : "deny", "scope",
			sbx_scope_name(r.decision.scope), "decision",
			json_object_get(done, "decision"), "approver_uid", (int)ident.uid);
	sbx_daemon_audit(s, rec);
	json_decref(rec);
out_req:
	sbx_request_release(&r);
out:
	free(why);
	json_decref(done);
}

void sbx_decisions_scan(struct sbx_daemon *d, struct sbx_session_rt *s)
{
	json_t *all = NULL, *v;
	char *err = NULL;
	size_t i;

	if (!s->queue)
		return;
	if (sbx_queue_list(s->queue, SBX_QDIR_DONE, &all, &err) == 0) {
		json_array_foreach(all, i, v) {
			const char *id = sbx_json_str(v, "id");
			char *name;

			if (!id || sbx_queue_is_applied(s->queue, id) || !sbx_session_issued(s, id))
				continue;
			name = sbx_asprintf("%s.json", id);
			sbx_decision_file(d, s, name);
			free(name);
		}
	}
	free(err);
	json_decref(all);
}

void sbx_requests_expire(struct sbx_daemon *d)
{
	time_t now = time(NULL);

	for (struct sbx_session_rt *s = d->sessions; s; s = s->next) {
		unsigned n = 0;

		if (s->queue && sbx_queue_expire(s->queue, now, &n) == 0 && n)
			sbx_info("session %s: %u request(s) expired and were denied", s->name, n);
	}
}
