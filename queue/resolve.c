// SPDX-License-Identifier: GPL-2.0
/*
 * resolve.c - what an approver does with one request: claim it, have an
 * approved command run outside the agent (command.c), write the decision.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "lib/names.h"
#include "queue/queue.h"
#include "queue/request.h"
#include "lib/alloc.h"
#include "policy/policy.h"
#include "lib/json.h"

/* why a request we could not claim is not ours */
static int not_pending(struct sbx_queue *q, const char *id, char **err)
{
	char name[SBX_ID_MAX + 8];
	json_t *done = NULL;

	snprintf(name, sizeof(name), "%s.json", id);
	if (sbx_queue_read(q, SBX_QDIR_DONE, id, &done, NULL) == 0) {
		const json_t *d = json_object_get(done, "decision");

		sbx_queue_set_err(err, "%s: already decided (%s %s by %s at %s%s)", id,
			sbx_json_str(d, "verdict"),
			sbx_json_str(d, "scope"),
			sbx_json_str(d, "by"),
			sbx_json_str(d, "at"),
			json_is_true(json_object_get(d, "expired")) ? ", expired" : "");
		json_decref(done);
		return -EEXIST;
	}
	if (faccessat(sbx_queue_dirfd(q, SBX_QDIR_CLAIMED), name, F_OK, AT_SYMLINK_NOFOLLOW) == 0) {
		sbx_queue_set_err(err, "%s: taken by another approver", id);
		return -EBUSY;
	}
	sbx_queue_set_err(err, "%s: no such request in %s", id, sbx_queue_project(q));
	return -ENOENT;
}

/*
 * "Approve always": the approver, who runs as the project's owner outside
 * every session, records the decision in remembered.yaml, so that it
 * holds for later sessions even if the asking session has ended by the
 * time a person answers. It is the one writer of that file; the daemon
 * only reads it when a session starts (a host is resolved then).
 */
static void remember(struct sbx_queue *q, const struct sbx_request *req)
{
	struct sbx_remembered r = { .request = (char *)req->id };
	char *err = NULL;

	switch (req->kind) {
	case SBX_REQ_FILE:
	case SBX_REQ_ACCESS_PATH:
		r.kind = "file";
		r.path = (char *)req->path;
		r.access = (char *)sbx_access_name(req->access);
		break;
	case SBX_REQ_EXEC:
		r.kind = "exec";
		r.path = (char *)req->path;
		r.access = "exec";
		break;
	case SBX_REQ_NET:
		r.kind = "net";
		r.addr = (char *)req->addr;
		r.port = req->port;
		break;
	case SBX_REQ_ACCESS_HOST:
	case SBX_REQ_HOST:
		r.kind = "host";
		r.host = (char *)req->host;
		r.port = req->port;
		break;
	case SBX_REQ_COMMAND:
		return;		/* a command is approved once, never always */
	}
	if (req->has_ident && (req->kind == SBX_REQ_FILE || req->kind == SBX_REQ_EXEC ||
			       req->kind == SBX_REQ_ACCESS_PATH)) {
		r.has_ident = true;
		r.new_name = req->new_name;
		r.dev = req->dev;
		r.ino = req->ino;
		r.type = (char *)req->ftype;
		r.btime = (char *)req->btime;
	}
	/* who and when: the machine policy's max_always_ttl counts from it */
	r.by = (char *)sbx_queue_user();
	r.at = sbx_time_rfc3339(time(NULL));
	if ((r.path || r.addr || r.host) && sbx_remembered_add(q, &r, &err))
		fprintf(stderr, "bpfsbx: remembering %s: %s\n", req->id, err ? err : "failed");
	free(r.at);
	free(err);
}

/* A file request whose path no longer leads to the object it showed (or
 * that has more than one hard link) is not approved: the daemon would
 * refuse the grant anyway, and the person should hear it now. */
static int ident_holds(const struct sbx_request *r, char **err)
{
	char *why = NULL;
	int rc;

	if (r->kind != SBX_REQ_FILE && r->kind != SBX_REQ_EXEC && r->kind != SBX_REQ_ACCESS_PATH)
		return 0;
	/* an abstract socket is a name in the kernel's table: no path to swap */
	if (r->abstract)
		return 0;
	/* without an identity (a request filed with no kernel behind it) the
	 * approval is matched by path by the connector; the daemon never
	 * grants such a request in the kernel */
	if (!r->has_ident)
		return 0;
	/* a container's path is its own view, which the approver cannot
	 * look through: the daemon checks it through the container's root
	 * before it grants anything (user/daemon/grants.c) */
	if (r->container)
		return 0;
	rc = sbx_objid_check(r->path, r->new_name, r->dev, r->ino, r->ftype, r->btime, &why);
	if (rc)
		sbx_queue_set_err(err, "%s: %s", r->id, why ? why : "the object changed");
	free(why);
	return rc;
}

int sbx_queue_resolve(struct sbx_queue *q, const char *id,
		      const struct sbx_resolve_opts *o, json_t **done, char **err)
{
	struct sbx_decision_rec d = {
		.approve = o->approve, .scope = o->scope, .by = o->by, .note = o->note,
	};
	struct sbx_request typed;
	json_t *req = NULL, *result = NULL;
	char *inner = NULL;
	bool command, claimed;
	int rc;

	if (err)
		*err = NULL;
	if (done)
		*done = NULL;
	if (!sbx_id_valid(id)) {
		sbx_queue_set_err(err, "%s: not a request id", id ? id : "(null)");
		return -EINVAL;
	}
	rc = sbx_queue_read(q, SBX_QDIR_PENDING, id, &req, &inner);
	if (rc == -ENOENT) {
		free(inner);
		return not_pending(q, id, err);
	}
	if (rc) {
		sbx_queue_set_err(err, "%s", inner ? inner : "cannot read the request");
		free(inner);
		return rc;
	}
	command = sbx_request_decode(req, false, &typed, NULL) && typed.kind == SBX_REQ_COMMAND;
	if (o->approve && !command && typed.json && (rc = ident_holds(&typed, err))) {
		/* what the person saw is no longer what the path leads to: the
		 * approval would grant something else. Say so and deny. */
		char *note = sbx_asprintf("not granted: %s", err && *err ? *err : "stale");

		sbx_request_release(&typed);
		json_decref(req);
		if (sbx_queue_claim(q, id, &req, NULL) == 0) {
			d.approve = false;
			d.note = note;
			sbx_queue_decide(q, id, &d, NULL);
			json_decref(req);
		}
		free(note);
		return rc;
	}
	sbx_request_release(&typed);
	json_decref(req);
	req = NULL;
	if (o->approve && command && o->scope != SBX_SCOPE_ONCE) {
		sbx_queue_set_err(err, "%s: a command can only be approved once: it runs now, here, "
			"and its output goes back to the agent; approve it with scope once", id);
		return -EINVAL;
	}
	rc = sbx_queue_claim(q, id, &req, &inner);
	if (rc == -ENOENT) {
		free(inner);
		return not_pending(q, id, err);
	}
	if (rc) {
		sbx_queue_set_err(err, "%s", inner ? inner : "claim failed");
		free(inner);
		return rc;
	}
	/* the claimed record, decoded once: what is shown before it runs,
	 * and what is remembered */
	claimed = sbx_request_decode(req, false, &typed, NULL);
	if (o->approve && command) {
		if (o->on_run && claimed)
			o->on_run(o->arg, &typed);
		rc = sbx_queue_run_command(q, req, o->cmd_timeout_s, o->interactive, &result,
					   &inner);
		if (rc) {
			/* fail closed: the agent is told no, with the reason */
			char *note = NULL;

			if (asprintf(&note, "approved, but running the command failed: %s",
				     inner ? inner : strerror(-rc)) < 0)
				note = NULL;
			d.approve = false;
			d.note = note;
			sbx_queue_decide(q, id, &d, NULL);
			sbx_queue_set_err(err, "%s: %s", id, note ? note : "running the command failed");
			free(note);
			free(inner);
			sbx_request_release(&typed);
			json_decref(req);
			return rc;
		}
		d.result = result;
	}
	rc = sbx_queue_decide(q, id, &d, &inner);
	json_decref(result);
	if (rc == 0 && o->approve && o->scope == SBX_SCOPE_ALWAYS && claimed)
		remember(q, &typed);
	sbx_request_release(&typed);
	json_decref(req);
	if (rc == -EEXIST) {
		free(inner);
		return not_pending(q, id, err);
	}
	if (rc) {
		sbx_queue_set_err(err, "%s", inner ? inner : "decision failed");
		free(inner);
		return rc;
	}
	if (done)
		sbx_queue_read(q, SBX_QDIR_DONE, id, done, NULL);
	return 0;
}
