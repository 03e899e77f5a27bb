// SPDX-License-Identifier: GPL-2.0
/*
 * control_ops.c - the control protocol: one table row per operation (see
 * control_ops.h). Who may send an operation and the shape of its
 * arguments are checked here, before any handler runs; a handler checks
 * only what depends on the state (whose session it is).
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <fcntl.h>
#include <sys/socket.h>
#include <arpa/inet.h>
#include <bpf/bpf.h>
#include "lib/alloc.h"
#include "lib/clock.h"
#include "lib/log.h"
#include "user/control/control_client.h"
#include "user/daemon/attach.h"
#include "user/daemon/containers.h"
#include "user/daemon/control_ops.h"
#include "user/daemon/machine_live.h"
#include "user/daemon/notice.h"
#include "user/daemon/events.h"
#include "user/daemon/learned.h"
#include "user/daemon/policy_cache.h"
#include "user/daemon/resolver.h"
#include "user/daemon/sessions.h"
#include "user/daemon/sinks.h"
#include "lib/json.h"

json_t *sbx_ctl_error(const char *fmt, ...)
{
	va_list ap;
	char *msg;
	json_t *j;

	va_start(ap, fmt);
	msg = sbx_vformat(fmt, ap);
	va_end(ap);
	j = json_pack("{s:b,s:s}", "ok", 0, "error", msg ? msg : "error");
	free(msg);
	return j;
}

/* with the policy's diagnostics, when there are any */
static json_t *with_diags(json_t *r, json_t *diags)
{
	if (diags)
		json_object_set_new(r, "diagnostics", diags);
	return r;
}

/* ---- the handlers ---------------------------------------------------------- */

/* The learned rows of s in force (for addr16 only, when given). */
static json_t *learned_rows(const struct sbx_session_rt *s, const uint8_t *addr16)
{
	uint64_t now = sbx_boot_ns();
	json_t *a = json_array();

	for (size_t i = 0; i < s->n_learned; i++) {
		const struct sbx_learned_rt *r = &s->learned[i];
		char txt[INET6_ADDRSTRLEN];
		const uint8_t *x = r->addr;
		bool v4 = !x[0] && !x[1] && !x[2] && !x[3] && !x[4] && !x[5] && !x[6] && !x[7] &&
			  !x[8] && !x[9] && x[10] == 0xff && x[11] == 0xff;

		if (r->expires_ns <= now || (addr16 && memcmp(addr16, r->addr, 16)))
			continue;
		inet_ntop(v4 ? AF_INET : AF_INET6, v4 ? r->addr + 12 : r->addr, txt, sizeof(txt));
		json_array_append_new(a, json_pack("{s:s,s:s,s:s,s:I}", "session", s->name, "name",
						   r->name, "addr", txt, "expires_in_s",
						   (json_int_t)((r->expires_ns - now) / 1000000000ull)));
	}
	return a;
}

static json_t *op_learned(struct sbx_daemon *d, const struct sbx_ctl_caller *c, json_t *req)
{
	const char *txt = sbx_json_str(req, "addr");
	uint8_t a[16], addr16[16];
	json_t *names = json_array();
	int fam = txt && strchr(txt, ':') ? AF_INET6 : AF_INET;

	if (!txt || inet_pton(fam, txt, a) != 1) {
		json_decref(names);
		return sbx_ctl_error("learned: \"addr\" is not an address");
	}
	sbx_addr16(fam, a, addr16);
	for (struct sbx_session_rt *s = d->sessions; s; s = s->next)
		if (c->uid == 0 || c->uid == s->uid) {
			json_t *rows = learned_rows(s, addr16);

			json_array_extend(names, rows);
			json_decref(rows);
		}
	return json_pack("{s:b,s:o}", "ok", 1, "names", names);
}

static json_t *op_status(struct sbx_daemon *d, const struct sbx_ctl_caller *c, json_t *req)
{
	uint64_t st[SBX_STAT_MAX] = {};
	json_t *sessions = json_array(), *stats;

	(void)req;
	sbx_kernel_stats(&d->k, st);
	stats = json_pack("{s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:I}",
			  "cache_hits", (json_int_t)st[SBX_STAT_CACHE_HIT],
			  "events", (json_int_t)st[SBX_STAT_EVENTS],
			  "event_drops", (json_int_t)st[SBX_STAT_EVENT_DROPS],
			  "deny", (json_int_t)st[SBX_STAT_DENY], "ask", (json_int_t)st[SBX_STAT_ASK],
			  "audit", (json_int_t)st[SBX_STAT_AUDIT],
			  "grant_used", (json_int_t)st[SBX_STAT_GRANT_USED],
			  "walk_truncated", (json_int_t)st[SBX_STAT_WALK_TRUNC],
			  "errors", (json_int_t)st[SBX_STAT_ERRORS],
			  "checks", (json_int_t)st[SBX_STAT_CHECKS]);
	json_object_set_new(stats, "events_received", json_integer(d->events_seen));
	json_object_set_new(stats, "dns_redirects", json_integer((json_int_t)st[SBX_STAT_DNS_REDIRECT]));
	json_object_set_new(stats, "learned_used", json_integer((json_int_t)st[SBX_STAT_LEARNED_USED]));
	json_object_set_new(stats, "datagram_cache_hits",
			    json_integer((json_int_t)st[SBX_STAT_NET_CACHE_HIT]));
	json_object_set_new(stats, "loopback_cache_hits",
			    json_integer((json_int_t)st[SBX_STAT_LO_CACHE_HIT]));
	for (struct sbx_session_rt *s = d->sessions; s; s = s->next) {
		json_t *o = json_pack("{s:s,s:I,s:i,s:s,s:s,s:i,s:i,s:i,s:b}", "name", s->name, "cgid",
				      (json_int_t)s->cgid, "uid", (int)s->uid, "project", s->project,
				      "policy", s->policy_path, "policy_id", (int)s->policy_id,
				      "grants", (int)(s->n_grants + s->n_name_grants), "rules",
				      s->rules ? (int)s->rules->n : 0, "populated", sbx_session_populated(s));
		json_object_set_new(o, "tier", json_string(s->tier ? s->tier : "?"));
		if (s->learn)
			json_object_set_new(o, "learning", json_true());
		if (s->container)
			json_object_set(o, "container", s->container);

		json_object_set_new(o, "dns", sbx_resolver_status(s));
		json_object_set_new(o, "names", learned_rows(s, NULL));
		json_array_append_new(sessions, o);
	}
	{
		json_t *prof = json_object();

		for (int i = 0; i < SBX_SP_N; i++)
			json_object_set_new(prof, sbx_start_phase_names[i],
					    json_integer((json_int_t)d->start_ns[i]));
		unsigned idle_s, cached = 0;
		bool linked = sbx_attach_state(d, &idle_s);

		for (const struct sbx_pcache *e = d->pcache; e; e = e->next)
			cached++;

		json_t *r = json_pack("{s:b,s:i,s:o,s:o,s:s,s:b,s:i,s:o,s:o,s:s,s:i,s:b,s:i,s:i,s:o,s:o}",
				      "ok", 1, "daemon_pid", (int)getpid(), "sessions", sessions,
				      "stats", stats, "pins", SBX_PIN_DIR, "embedded", d->embedded,
				      "once_ttl_s", (int)d->once_ttl_s, "dns_answer_to_map",
				      sbx_resolver_latency(), "last_session_start_ns", prof, "tier",
				      sbx_tier_name(d->k.tier), "landlock_abi", d->k.landlock_abi,
				      "linked", linked, "idle_detach_s", (int)idle_s, "cached_policies",
				      (int)cached, "sinks",
				      sbx_sinks_status(), "machine", sbx_machine_live_status(d));

		/* the caller's own session, as the kernel placed it: what a
		 * connector inside it may trust (never its environment) */
		if (c->in_session)
			json_object_set_new(r, "caller", c->session ?
				json_pack("{s:s,s:b}", "session", c->session->name, "learning",
					  c->session->learn) :
				json_pack("{s:n,s:b}", "session", "learning", 0));
		return r;
	}
}

static json_t *op_adopt(struct sbx_daemon *d, const struct sbx_ctl_caller *c, json_t *req)
{
	(void)c;
	return sbx_container_adopt(d, req);
}

static json_t *op_run(struct sbx_daemon *d, const struct sbx_ctl_caller *c, json_t *req)
{
	struct sbx_session_rt *s;
	json_t *diags = NULL, *r;
	char *err = NULL;
	int rc;

	rc = sbx_session_create(d, c->pid, c->uid, c->gid, sbx_json_str(req, "policy_path"),
				sbx_json_str(req, "project"), sbx_json_str(req, "home"),
				json_is_true(json_object_get(req, "learn")), &s, &err, &diags);
	if (rc) {
		r = sbx_ctl_error("%s", err ? err : strerror(-rc));
		free(err);
		return with_diags(r, diags);
	}
	sbx_notice_adopt(s, c->passed_fd);	/* run's stderr, when a terminal */
	sbx_info("session %s started for pid %d uid %u (%s)%s%s", s->name, (int)c->pid, c->uid,
		 s->policy_path, s->learn ? ", learning" : "",
		 s->notice_fd > 0 ? ", its requests told on its terminal" : "");
	if (d->embedded && !d->embedded_child)
		d->embedded_child = c->pid;
	return with_diags(json_pack("{s:b,s:s,s:I,s:s,s:I,s:s,s:i,s:b,s:b}", "ok", 1, "session",
				    s->name, "cgid", (json_int_t)s->cgid, "project", s->project,
				    "keep_env", (json_int_t)s->hdr.keep_env, "tier", s->tier,
				    "landlock_abi", s->landlock_abi, "kernel_decides",
				    sbx_kernel_decides(&d->k), "learning", s->learn), diags);
}

/*
 * What a connector inside a session may send, besides status: a request
 * for the person, or a record for the session's audit log. One op, so
 * that the set of things a session can ask of the daemon stays as small
 * as it looks.
 */
static json_t *op_submit(struct sbx_daemon *d, const struct sbx_ctl_caller *c, json_t *req)
{
	json_t *request = json_object_get(req, "request"), *record = json_object_get(req, "record");
	struct sbx_request ask;
	char *id = NULL, *err = NULL;
	json_t *r;
	int rc;

	(void)d;
	if (!!json_is_object(request) == !!json_is_object(record))
		return sbx_ctl_error("submit needs exactly one of \"request\" and \"record\"");
	if (record) {
		json_t *rec = json_deep_copy(record);

		json_object_set_new(rec, "event", json_string("connector"));
		json_object_set_new(rec, "pid", json_integer(c->pid));
		rc = sbx_daemon_audit(c->session, rec);
		json_decref(rec);
		return rc ? sbx_ctl_error("audit failed: %s", strerror(-rc)) :
			    json_pack("{s:b}", "ok", 1);
	}
	if (!json_is_object(json_object_get(request, "object")))
		return sbx_ctl_error("submit: \"object\" must be an object");
	sbx_request_view(request, &ask);
	/* a path from inside a container is its own view, which the daemon
	 * would resolve on the host (grants.c): commands and hosts only */
	if (c->session && c->session->container && ask.path)
		return sbx_ctl_error("submit: a container session asks ahead for hosts and "
				     "commands, not paths: its paths are not the host's");
	rc = sbx_submit_for(c->session, c->pid, &ask, &id, &err);
	if (rc) {
		r = sbx_ctl_error("%s", err ? err : strerror(-rc));
		free(err);
		return r;
	}
	r = json_pack("{s:b,s:s,s:s}", "ok", 1, "id", id, "project", c->session->project);
	free(id);
	return r;
}

static json_t *op_reload(struct sbx_daemon *d, const struct sbx_ctl_caller *c, json_t *req)
{
	const char *name = sbx_json_str(req, "session");
	struct sbx_session_rt *s = sbx_session_find(d, name);
	json_t *diags = NULL, *r;
	char *err = NULL;
	int rc;

	if (!s)
		return sbx_ctl_error("reload: no live session %s", name);
	if (c->uid != 0 && c->uid != s->uid)
		return sbx_ctl_error("session %s belongs to uid %u", s->name, s->uid);
	rc = sbx_session_reload(d, s, sbx_json_str(req, "policy_path"), &err, &diags);
	if (rc) {
		r = sbx_ctl_error("%s (the previous policy stays in force)",
				  err ? err : strerror(-rc));
		free(err);
		return with_diags(r, diags);
	}
	return with_diags(json_pack("{s:b,s:i}", "ok", 1, "policy_id", (int)s->policy_id), diags);
}

static void kill_session(struct sbx_session_rt *s)
{
	char *p = sbx_asprintf("%s/cgroup.kill", s->cgroup_path);
	int fd = open(p, O_WRONLY | O_CLOEXEC);

	if (fd >= 0) {
		if (write(fd, "1", 1) != 1)
			sbx_warn("killing session %s: %s", s->name, strerror(errno));
		close(fd);
	}
	free(p);
	for (int i = 0; i < 100 && sbx_session_populated(s); i++)
		usleep(10000);
}

static json_t *op_unload(struct sbx_daemon *d, const struct sbx_ctl_caller *c, json_t *req)
{
	char *err = NULL;
	json_t *r;

	(void)c;
	if (d->sessions && !json_is_true(json_object_get(req, "force")))
		return sbx_ctl_error("%s live session(s); stop them first or use --force "
				     "(which kills them)", d->sessions->next ? "several" : "a");
	while (d->sessions) {
		kill_session(d->sessions);
		sbx_session_end(d, d->sessions);
	}
	sbx_pcache_expire(d, true);
	if (sbx_kernel_unload(&err)) {
		r = sbx_ctl_error("%s", err);
		free(err);
		return r;
	}
	d->stop = true;
	/* no new caller may reach a daemon that is going: once unload returns,
	 * a run finds no socket and may start its own session (the reply goes
	 * out on the caller's connection, not this one) */
	unlink(sbx_control_path());
	close(d->ctl);
	d->ctl = -1;
	return json_pack("{s:b}", "ok", 1);
}

/*
 * The descriptor passed along is the proof of ownership: only a process
 * that holds the listening socket can ask for it to be hidden, and the
 * kernel then recognises the socket itself, not a port or path that
 * another process could take over.
 */
static json_t *op_protect_listener(struct sbx_daemon *d, const struct sbx_ctl_caller *c,
				   json_t *req)
{
	struct sbx_listener v = { .flags = SBX_LISTENER_NEVER, .owner_uid = c->uid };
	int listening = 0;
	socklen_t l = sizeof(listening);

	(void)req;
	if (c->passed_fd < 0)
		return sbx_ctl_error("protect_listener: pass the listening socket's descriptor "
				     "along (SCM_RIGHTS)");
	if (getsockopt(c->passed_fd, SOL_SOCKET, SO_ACCEPTCONN, &listening, &l) || !listening)
		return sbx_ctl_error("protect_listener: the descriptor is not a listening socket");
	if (bpf_map_update_elem(d->k.listeners, &c->passed_fd, &v, BPF_ANY))
		return sbx_ctl_error("protect_listener: %s", strerror(errno));
	sbx_info("listener of uid %u hidden from every session", c->uid);
	return json_pack("{s:b}", "ok", 1);
}

/* ---- the table ------------------------------------------------------------- */

static const struct sbx_ctl_arg no_args[] = { { NULL } };

static const struct sbx_ctl_arg run_args[] = {
	{ "policy_path", SBX_ARG_STRING, true, "the policy file, an absolute path; it is read "
	  "and compiled with the caller's rights" },
	{ "project", SBX_ARG_STRING, true, "the project directory (`${PROJECT}`, and where "
	  "`.sandbox/` is); it must belong to the caller unless the caller is root" },
	{ "home", SBX_ARG_STRING, false, "`~` in the policy; honoured for root only (others get "
	  "their own home)" },
	{ "learn", SBX_ARG_BOOL, false, "record the policy's denies and asks instead of "
	  "enforcing them, except the protected set (`run --learn`; the bpf-lsm tier only)" },
	{ NULL }
};

static const struct sbx_ctl_arg adopt_args[] = {
	{ "state", SBX_ARG_OBJECT, true, "the container's OCI state as its runtime gave the "
	  "hook on stdin at createRuntime: `id`, `pid` (the host's), `bundle`, `annotations`" },
	{ "project", SBX_ARG_STRING, true, "the project directory whose policy and queue the "
	  "session has; its owner is the session's user" },
	{ NULL }
};

static const struct sbx_ctl_arg submit_args[] = {
	{ "request", SBX_ARG_OBJECT, false, "`kind` (`command` or `access`), `object` and "
	  "optionally `agent_reason` of a request (docs/QUEUE.md); the daemon fills in the "
	  "session, project and process itself" },
	{ "record", SBX_ARG_OBJECT, false, "instead of a request: the body of an audit record; "
	  "the daemon adds `event: connector` and the caller's pid" },
	{ NULL }
};

static const struct sbx_ctl_arg learned_args[] = {
	{ "addr", SBX_ARG_STRING, true, "an IPv4 or IPv6 address" },
	{ NULL }
};

static const struct sbx_ctl_arg reload_args[] = {
	{ "session", SBX_ARG_STRING, true, "a live session's name" },
	{ "policy_path", SBX_ARG_STRING, true, "the new policy file" },
	{ NULL }
};

static const struct sbx_ctl_arg unload_args[] = {
	{ "force", SBX_ARG_BOOL, false, "kill live sessions first (without it, live sessions "
	  "make unload fail)" },
	{ NULL }
};

static const struct sbx_ctl_op ops[] = {
	{ "status", op_status, SBX_CTL_ANYONE, no_args,
	  "the daemon's sessions and the kernel's counters",
	  "`{\"ok\":true,\"daemon_pid\",\"sessions\":[{name,cgid,uid,project,policy,policy_id,"
	  "grants,rules,populated,tier,learning?,container?}],\"stats\":{...},\"pins\",\"embedded\","
	  "\"once_ttl_s\",\"tier\",\"landlock_abi\",\"linked\",\"idle_detach_s\",\"cached_policies\","
	  "\"sinks\":{journal,syslog,otlp},\"machine\":{dir,generation,read_at,error?},"
	  "\"caller\"?:{session,learning}}`; caller: from inside a session, the session the "
	  "kernel placed the caller in and whether it is learning (what a connector there "
	  "trusts, never its environment); machine: the floor's directory, how "
	  "many times a change of it was applied to the live sessions, when the files in "
	  "force were read, and why the last change was not applied; "
	  "tier: `bpf-lsm`, or `landlock` where BPF-LSM is off (docs/FALLBACK.md); linked: "
	  "whether the programs' links exist (made at the first session, dropped after "
	  "idle_detach_s without one); cached_policies: compiled policies kept for the next "
	  "session of the same user, project and policy (dropped with the links)" },
	{ "learned", op_learned, SBX_CTL_OUTSIDE, learned_args,
	  "the names the caller's live sessions (root: all) learned an address from",
	  "`{\"ok\":true,\"names\":[{session,name,addr,expires_in_s}]}`" },
	{ "run", op_run, SBX_CTL_OUTSIDE, run_args,
	  "start a session and move the caller's process into it; a terminal that comes "
	  "along as SCM_RIGHTS (run's stderr) gets one line per request the session files",
	  "`{\"ok\":true,\"session\",\"cgid\",\"project\",\"keep_env\",\"tier\",\"landlock_abi\","
	  "\"kernel_decides\",\"learning\",\"diagnostics\"?}`; the caller is in the session's "
	  "cgroup when the reply arrives; on tier `landlock` it must confine itself (Landlock, "
	  "seccomp) before it runs anything; kernel_decides: the daemon's programs decide writes "
	  "and asks in the kernel, and its plan lets Landlock grant them; learning: the session "
	  "records instead of enforcing (`learn`), which a client that asked for it checks" },
	{ "adopt", op_adopt, SBX_CTL_ROOT | SBX_CTL_OUTSIDE, adopt_args,
	  "make a container a session: its cgroup, made by its runtime directly below "
	  "<cgroup2>/bpfsbx, becomes the session's (`bpfsbx oci-hook`, docs/CONTAINERS.md)",
	  "`{\"ok\":true,\"session\",\"cgid\",\"container\":{id,name,pod?,namespace?,"
	  "pod_uid?,image?,bundle?}}` once the session's kernel entry exists; `{\"ok\":true,"
	  "\"skipped\"}` for a pod's sandbox container; the session decides from the "
	  "container's first exec on" },
	{ "submit", op_submit, SBX_CTL_INSIDE, submit_args,
	  "a connector's request, written into the caller's session queue; or, with "
	  "`record`, a record appended to the session's audit log",
	  "`{\"ok\":true,\"id\",\"project\"}` for a request, `{\"ok\":true}` for a record" },
	{ "reload", op_reload, SBX_CTL_OUTSIDE, reload_args,
	  "swap a session's policy atomically (its owner or root)",
	  "`{\"ok\":true,\"policy_id\",\"diagnostics\"?}`; on error the old policy stays in force" },
	{ "protect_listener", op_protect_listener, SBX_CTL_OUTSIDE, no_args,
	  "hide a listening socket from every session (an approver's page); its descriptor "
	  "comes along as SCM_RIGHTS", "`{\"ok\":true}`; a session's connect to it is refused" },
	{ "unload", op_unload, SBX_CTL_ROOT | SBX_CTL_OUTSIDE, unload_args,
	  "remove bpfsbx from the kernel; the daemon exits", "`{\"ok\":true}`" },
};

#define N_OPS (sizeof(ops) / sizeof(ops[0]))

const struct sbx_ctl_op *sbx_ctl_ops(size_t *n)
{
	*n = N_OPS;
	return ops;
}

const struct sbx_ctl_op *sbx_ctl_op_find(const char *name)
{
	for (size_t i = 0; name && i < N_OPS; i++)
		if (!strcmp(ops[i].name, name))
			return &ops[i];
	return NULL;
}

static const char *type_name(enum sbx_ctl_arg_type t)
{
	return t == SBX_ARG_STRING ? "a string" : t == SBX_ARG_OBJECT ? "an object" : "true or false";
}

char *sbx_ctl_check(const struct sbx_ctl_op *op, const struct sbx_ctl_caller *c,
		    const json_t *req)
{
	if ((op->who & SBX_CTL_ROOT) && c->uid != 0)
		return sbx_asprintf("only root may send %s", op->name);
	/* whatever the table says: a session gets status and submit, no more */
	if (c->in_session && !(op->who & SBX_CTL_INSIDE) && strcmp(op->name, "status"))
		return sbx_asprintf("a process inside a session cannot %s: process %d is already "
				    "in session %s", op->name, (int)c->pid,
				    c->session ? c->session->name : "(not known to this daemon)");
	if ((op->who & SBX_CTL_OUTSIDE) && c->in_session)
		return sbx_asprintf("a process inside a session cannot %s: process %d is already "
				    "in session %s", op->name, (int)c->pid,
				    c->session ? c->session->name : "(not known to this daemon)");
	if ((op->who & SBX_CTL_INSIDE) && !c->session)
		return sbx_asprintf("%s is only for processes inside a session", op->name);
	for (const struct sbx_ctl_arg *a = op->args; a->name; a++) {
		const json_t *v = json_object_get(req, a->name);
		bool ok;

		if (!v || json_is_null(v)) {
			if (a->required)
				return sbx_asprintf("%s needs \"%s\"", op->name, a->name);
			continue;
		}
		ok = a->type == SBX_ARG_STRING ? json_is_string(v) :
		     a->type == SBX_ARG_OBJECT ? json_is_object(v) : json_is_boolean(v);
		if (!ok)
			return sbx_asprintf("%s: \"%s\" must be %s", op->name, a->name,
					    type_name(a->type));
	}
	return NULL;
}

json_t *sbx_ctl_handle(struct sbx_daemon *d, const struct sbx_ctl_caller *c, json_t *req)
{
	const char *name = sbx_json_str(req, "op");
	const struct sbx_ctl_op *op = sbx_ctl_op_find(name);
	char *why;
	json_t *r;

	if (!name)
		return sbx_ctl_error("request has no \"op\"");
	if (!op)
		return sbx_ctl_error("unknown op \"%s\"", name);
	why = sbx_ctl_check(op, c, req);
	if (why) {
		r = sbx_ctl_error("%s", why);
		free(why);
		return r;
	}
	return op->fn(d, c, req);
}

void sbx_ctl_describe(FILE *f)
{
	fprintf(f, "| op | who may send it | arguments | reply |\n| --- | --- | --- | --- |\n");
	for (size_t i = 0; i < N_OPS; i++) {
		const struct sbx_ctl_op *op = &ops[i];
		const char *who = (op->who & SBX_CTL_ROOT) ? "root, outside every session" :
				  (op->who & SBX_CTL_INSIDE) ? "a process inside a session" :
				  (op->who & SBX_CTL_OUTSIDE) ? "any user, outside every session" :
				  "anyone";

		fprintf(f, "| `%s`: %s | %s | ", op->name, op->summary, who);
		if (!op->args[0].name)
			fprintf(f, "none");
		for (const struct sbx_ctl_arg *a = op->args; a->name; a++)
			fprintf(f, "%s`%s` (%s, %s): %s", a != op->args ? "; " : "", a->name,
				type_name(a->type), a->required ? "required" : "optional", a->doc);
		fprintf(f, " | %s |\n", op->reply);
	}
}
