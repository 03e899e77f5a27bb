// SPDX-License-Identifier: GPL-2.0
/*
 * daemon_decisions.c - a person's decision reaches the kernel.
 *
 * inotify on escalations/done/ wakes the daemon when an approver's
 * decision file is renamed into place; the grant is in the map a few
 * milliseconds later, so the agent's retry succeeds. Decisions are
 * checked before anything is applied: a file that does not validate,
 * names a request this daemon never made for that session, or repeats a
 * decision already applied is quarantined and nothing happens.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "user/daemon.h"
#include "user/util.h"

static bool is_mine(const struct sbx_session_rt *s, const char *id)
{
	for (size_t i = 0; i < s->n_my_requests; i++)
		if (!strcmp(s->my_requests[i], id))
			return true;
	return false;
}

static int access_parse(const char *a)
{
	if (!a || !strcmp(a, "read"))
		return SBX_ACC_READ;
	if (!strcmp(a, "write"))
		return SBX_ACC_WRITE;
	if (!strcmp(a, "exec"))
		return SBX_ACC_EXEC;
	return -1;
}

static int file_key_from_path(const char *path, struct sbx_grant_key *k)
{
	uint32_t dev;
	uint64_t ino;
	char *copy, *slash;

	if (!path || path[0] != '/')
		return -EINVAL;
	if (sbx_kident(path, true, &dev, &ino) == 0) {
		k->kind = SBX_GK_INODE;
		k->dev = dev;
		k->ino = ino;
		return 0;
	}
	copy = sbx_strdup(path);
	slash = strrchr(copy, '/');
	if (!slash[1]) {
		free(copy);
		return -EINVAL;
	}
	*slash = 0;
	if (sbx_kident(*copy ? copy : "/", true, &dev, &ino)) {
		free(copy);
		return -ENOENT;
	}
	k->kind = SBX_GK_NAME;
	k->dev = dev;
	k->ino = ino;
	k->hash = sbx_hash_name(slash + 1, strlen(slash + 1));
	free(copy);
	return 0;
}

static int apply_net(struct sbx_daemon *d, struct sbx_session_rt *s, const char *addr,
		     int port, uint64_t exp, const char *id)
{
	struct sbx_grant_key k = { .cgid = s->cgid, .port = port };
	unsigned char a[16] = {};

	if (inet_pton(AF_INET, addr, a) == 1)
		k.kind = SBX_GK_NET4;
	else if (inet_pton(AF_INET6, addr, a) == 1)
		k.kind = SBX_GK_NET6;
	else
		return -EINVAL;
	memcpy(k.addr, a, 16);
	return sbx_grant_add(d, s, &k, exp, id);
}

static int apply_grant(struct sbx_daemon *d, struct sbx_session_rt *s, const char *id,
		       const json_t *req, enum sbx_scope scope, char **what)
{
	const char *kind = json_string_value(json_object_get(req, "kind"));
	const json_t *obj = json_object_get(req, "object");
	uint64_t exp = scope == SBX_SCOPE_ONCE ?
		sbx_boot_ns() + (uint64_t)d->once_ttl_s * 1000000000ull : 0;
	struct sbx_grant_key k = { .cgid = s->cgid };
	int rc = 0;

	if (!kind || !json_is_object(obj))
		return -EINVAL;
	if (!strcmp(kind, "file") || !strcmp(kind, "exec") ||
	    (!strcmp(kind, "access") && json_object_get(obj, "path"))) {
		const char *path = json_string_value(json_object_get(obj, "path"));
		int acc = !strcmp(kind, "exec") ? SBX_ACC_EXEC :
			  access_parse(json_string_value(json_object_get(obj, "access")));

		if (acc < 0)
			return -EINVAL;
		k.access = acc;
		if (!strcmp(kind, "access")) {
			rc = file_key_from_path(path, &k);
		} else if (json_is_true(json_object_get(obj, "new_name"))) {
			const char *h = json_string_value(json_object_get(obj, "name_hash"));

			k.kind = SBX_GK_NAME;
			k.dev = json_integer_value(json_object_get(obj, "dev"));
			k.ino = json_integer_value(json_object_get(obj, "ino"));
			k.hash = h ? strtoull(h, NULL, 16) : 0;
		} else {
			k.kind = SBX_GK_INODE;
			k.dev = json_integer_value(json_object_get(obj, "dev"));
			k.ino = json_integer_value(json_object_get(obj, "ino"));
		}
		if (!rc)
			rc = sbx_grant_add(d, s, &k, exp, id);
		*what = sbx_asprintf("%s %s", sbx_access_name(acc), path ? path : "?");
	} else if (!strcmp(kind, "net")) {
		const char *addr = json_string_value(json_object_get(obj, "addr"));
		int port = json_integer_value(json_object_get(obj, "port"));

		rc = addr ? apply_net(d, s, addr, port, exp, id) : -EINVAL;
		*what = sbx_asprintf("connect %s port %d", addr ? addr : "?", port);
	} else if (!strcmp(kind, "access") && json_object_get(obj, "host")) {
		const char *host = json_string_value(json_object_get(obj, "host"));
		int port = json_integer_value(json_object_get(obj, "port"));
		struct addrinfo hints = { .ai_socktype = SOCK_STREAM }, *res = NULL;

		if (!host || getaddrinfo(host, NULL, &hints, &res))
			return -ENOENT;
		for (struct addrinfo *ai = res; ai && !rc; ai = ai->ai_next) {
			char a[INET6_ADDRSTRLEN];
			const void *src = ai->ai_family == AF_INET ?
				(const void *)&((struct sockaddr_in *)ai->ai_addr)->sin_addr :
				(const void *)&((struct sockaddr_in6 *)ai->ai_addr)->sin6_addr;

			inet_ntop(ai->ai_family, src, a, sizeof(a));
			rc = apply_net(d, s, a, port, exp, id);
			if (scope == SBX_SCOPE_ALWAYS) {
				struct sbx_remembered r2 = { .kind = "net", .addr = a, .port = port,
							     .request = (char *)id };
				char *err = NULL;

				sbx_remembered_add(s->queue, &r2, &err);
				free(err);
			}
		}
		freeaddrinfo(res);
		*what = sbx_asprintf("connect %s port %d", host, port);
		return rc;
	} else {
		return -EINVAL;
	}
	return rc;
}

void sbx_decision_file(struct sbx_daemon *d, struct sbx_session_rt *hint, const char *name)
{
	struct sbx_session_rt *s = NULL;
	struct sbx_done_ident ident;
	char *id, *why = NULL, *what = NULL;
	const char *kind, *sess, *verdict, *scope_s;
	json_t *done = NULL, *dec, *rec;
	struct sbx_queue *q = hint->queue;
	size_t l = strlen(name);
	int scope, rc;

	if (!q || name[0] == '.' || l < 6 || strcmp(name + l - 5, ".json"))
		return;
	/* Checked against the request as it was issued: an approver cannot
	 * approve something other than what was asked, nor replay a decision. */
	rc = sbx_queue_check_done(q, name, SBX_CHECK_QUARANTINE, &done, &ident, &why);
	if (rc < 0 || rc == SBX_DONE_APPLIED)
		goto out_early;
	if (rc == SBX_DONE_BAD) {
		sbx_warn("session %s: decision %s quarantined: %s", hint->name, name,
			 why ? why : "invalid");
		goto out_early;
	}
	id = strndup(name, l - 5);
	if (!id)
		abort();
	kind = json_string_value(json_object_get(done, "kind"));
	sess = json_string_value(json_object_get(done, "session"));
	if (!kind || !strcmp(kind, "command"))
		goto out;	/* commands are run by the approver, not the kernel */
	for (struct sbx_session_rt *c = d->sessions; c && !s; c = c->next)
		if (c->project && !strcmp(c->project, hint->project) && is_mine(c, id))
			s = c;
	if (!s) {
		/* A decision naming one of our live sessions that we never asked
		 * for is forged; one for somebody else's request is not ours. */
		for (struct sbx_session_rt *c = d->sessions; c; c = c->next)
			if (sess && !strcmp(c->name, sess)) {
				sbx_queue_quarantine(q, "done", name,
						     "decision for a request this session never made");
				break;
			}
		goto out;
	}
	dec = json_object_get(done, "decision");
	verdict = json_string_value(json_object_get(dec, "verdict"));
	scope_s = json_string_value(json_object_get(dec, "scope"));
	scope = scope_s ? sbx_scope_parse(scope_s) : SBX_SCOPE_ONCE;
	if (scope < 0)
		scope = SBX_SCOPE_ONCE;
	if (verdict && !strcmp(verdict, "approve")) {
		rc = apply_grant(d, s, id, done, scope, &what);
		if (rc)
			sbx_warn("session %s: applying %s: %s", s->name, id, strerror(-rc));
		else
			sbx_info("session %s: approved (%s) %s", s->name, sbx_scope_name(scope),
				 what ? what : "");
	}
	sbx_queue_mark_applied_ident(q, id, &ident);
	rec = json_pack("{s:s,s:s,s:s,s:s,s:O}", "event", "decision", "request", id,
			"verdict", verdict ? verdict : "?", "scope", scope_s ? scope_s : "once",
			"decision", dec);
	sbx_daemon_audit(d, s, rec);
	json_decref(rec);
out:
	free(id);
out_early:
	free(what);
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
	if (sbx_queue_list(s->queue, "done", &all, &err) == 0) {
		json_array_foreach(all, i, v) {
			const char *id = json_string_value(json_object_get(v, "id"));
			char *name;

			if (!id || sbx_queue_is_applied(s->queue, id) || !is_mine(s, id))
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
