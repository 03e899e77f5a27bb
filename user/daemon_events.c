// SPDX-License-Identifier: GPL-2.0
/*
 * daemon_events.c - what the kernel reports: each deny, ask and audit
 * event becomes one JSON line in the event log and a record in the
 * session's audit chain; an ask also becomes an escalation request.
 *
 * An agent that retries in a loop must not flood the person: repeats of
 * the same object by the same session fold into one request whose count
 * is flushed to disk at most every 200 ms.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "user/daemon.h"
#include "user/util.h"

#define DEDUP_WINDOW_NS (30ull * 1000000000ull)	/* after a decision */

static const char *const op_names[SBX_OP_MAX] = {
	[SBX_OP_NONE] = "none",
	[SBX_OP_OPEN_READ] = "open_read",
	[SBX_OP_OPEN_WRITE] = "open_write",
	[SBX_OP_CREATE] = "create",
	[SBX_OP_MKDIR] = "mkdir",
	[SBX_OP_UNLINK] = "unlink",
	[SBX_OP_RMDIR] = "rmdir",
	[SBX_OP_RENAME_FROM] = "rename_from",
	[SBX_OP_RENAME_TO] = "rename_to",
	[SBX_OP_LINK_FROM] = "link_from",
	[SBX_OP_LINK_TO] = "link_to",
	[SBX_OP_SYMLINK] = "symlink",
	[SBX_OP_TRUNCATE] = "truncate",
	[SBX_OP_CHMOD] = "chmod",
	[SBX_OP_CHOWN] = "chown",
	[SBX_OP_EXEC] = "exec",
	[SBX_OP_MMAP_EXEC] = "mmap_exec",
	[SBX_OP_CONNECT] = "connect",
	[SBX_OP_SENDMSG] = "sendmsg",
	[SBX_OP_UNIX_CONNECT] = "unix_connect",
	[SBX_OP_SOCKET_CREATE] = "socket_create",
	[SBX_OP_BPF] = "bpf",
	[SBX_OP_PTRACE] = "ptrace",
	[SBX_OP_SIGNAL] = "signal",
	[SBX_OP_MOUNT] = "mount",
	[SBX_OP_USERNS] = "userns",
	[SBX_OP_CGROUP_ESCAPE] = "cgroup_escape",
	[SBX_OP_PROC_ACCESS] = "proc_access",
	[SBX_OP_SETXATTR] = "setxattr",
	[SBX_OP_IOCTL] = "ioctl",
	[SBX_OP_KERNEL] = "kernel",
	[SBX_OP_FILE_RECEIVE] = "file_receive",
};

const char *sbx_op_name(unsigned op)
{
	return op < SBX_OP_MAX && op_names[op] ? op_names[op] : "unknown";
}

static const char *builtin_rule_name(uint32_t id)
{
	switch (id) {
	case SBX_RULE_SANDBOX_DIR: return "built-in: .sandbox is never writable by a session";
	case SBX_RULE_PROTECTED: return "built-in: policy files are never writable by a session";
	case SBX_RULE_PSEUDOFS: return "built-in: bpffs, cgroupfs, securityfs, debugfs and tracefs are never writable by a session";
	case SBX_RULE_WALK_LIMIT: return "built-in: the parent walk could not finish";
	case SBX_RULE_ERROR: return "built-in: internal error, denied (fail closed)";
	case SBX_RULE_LAUNDER: return "built-in: renaming or linking a protected object";
	case SBX_RULE_SELF_PROTECT: return "built-in: self-protection";
	case SBX_RULE_GRANT: return "allowed by a person's decision";
	case SBX_RULE_PROC: return "built-in: /proc of processes outside the session";
	case SBX_RULE_EXEC_KIND: return "built-in: memfd, deleted or setuid executable";
	case SBX_RULE_SOCKET_FAMILY: return "built-in: risky socket family";
	default: return "built-in";
	}
}

static const char *verdict_str(uint8_t v)
{
	switch (v) {
	case SBX_V_ALLOW: return "allow";
	case SBX_V_AUDIT: return "audit";
	case SBX_V_ASK: return "ask";
	case SBX_V_DENY: return "deny";
	default: return "none";
	}
}

static const char *access_str(uint8_t a)
{
	return a == SBX_ACC_WRITE ? "write" : a == SBX_ACC_EXEC ? "exec" : "read";
}

char *sbx_event_object(const struct sbx_event *e)
{
	if (e->flags & (SBX_EVF_NET4 | SBX_EVF_NET6)) {
		char a[INET6_ADDRSTRLEN] = "?";

		inet_ntop(e->family == 10 ? AF_INET6 : AF_INET, e->addr, a, sizeof(a));
		return e->family == 10 ? sbx_asprintf("[%s]:%u", a, e->port) :
					 sbx_asprintf("%s:%u", a, e->port);
	}
	if (e->flags & SBX_EVF_FILE) {
		uint32_t off = e->path_off < SBX_EVENT_PATH_MAX ? e->path_off : SBX_EVENT_PATH_MAX - 1;
		char path[SBX_EVENT_PATH_MAX + 1];

		memcpy(path, e->path + off, SBX_EVENT_PATH_MAX - off);
		path[SBX_EVENT_PATH_MAX - off] = 0;
		return sbx_asprintf("%s%s", (e->flags & SBX_EVF_PATH_TRUNC) ? "..." : "", path);
	}
	switch (e->op) {
	case SBX_OP_PTRACE:
	case SBX_OP_SIGNAL:
		return sbx_asprintf("pid %u", e->aux);
	case SBX_OP_SOCKET_CREATE:
		return sbx_asprintf("socket family %u type %u", e->aux & 0xffff, e->aux >> 16);
	case SBX_OP_IOCTL:
		return sbx_asprintf("ioctl 0x%x", e->aux);
	case SBX_OP_BPF:
		return sbx_asprintf("bpf command %u", e->aux);
	default:
		return sbx_strdup(sbx_op_name(e->op));
	}
}

static char *proc_link(pid_t pid, const char *what)
{
	char p[64], buf[PATH_MAX];
	ssize_t n;

	snprintf(p, sizeof(p), "/proc/%d/%s", (int)pid, what);
	n = readlink(p, buf, sizeof(buf) - 1);
	if (n < 0)
		return NULL;
	buf[n] = 0;
	return sbx_strdup(buf);
}

static json_t *proc_cmdline(pid_t pid)
{
	char p[64], *buf = NULL;
	size_t len = 0;
	json_t *a;

	snprintf(p, sizeof(p), "/proc/%d/cmdline", (int)pid);
	if (sbx_read_file(p, 64 * 1024, &buf, &len))
		return json_null();
	a = json_array();
	for (size_t i = 0; i < len;) {
		json_array_append_new(a, json_stringn_nocheck(buf + i, strnlen(buf + i, len - i)));
		i += strnlen(buf + i, len - i) + 1;
	}
	free(buf);
	return a;
}

/* A right-aligned string of an event (path, exe, cwd); NULL when empty. */
static char *event_str(const char *buf, uint32_t off, size_t size)
{
	if (off >= size - 1 || !buf[off])
		return NULL;
	return strndup(buf + off, size - off);
}

/* The process's command line: from the event, or /proc if it had none. */
static json_t *event_cmdline(const struct sbx_event *e)
{
	json_t *a;
	uint32_t n = e->args_len < SBX_EVENT_CTX_MAX ? e->args_len : SBX_EVENT_CTX_MAX;

	if (!n)
		return proc_cmdline(e->pid);
	a = json_array();
	for (uint32_t i = 0; i < n;) {
		size_t l = strnlen(e->args + i, n - i);

		json_array_append_new(a, json_stringn_nocheck(e->args + i, l));
		i += l + 1;
	}
	return a;
}

static char *event_exe(const struct sbx_event *e)
{
	char *s = event_str(e->exe, e->exe_off, SBX_EVENT_CTX_MAX);

	return s ? s : proc_link(e->pid, "exe");
}

static char *event_cwd(const struct sbx_event *e)
{
	char *s = event_str(e->cwd, e->cwd_off, SBX_EVENT_CTX_MAX);

	return s ? s : proc_link(e->pid, "cwd");
}

static json_t *rule_json(const struct sbx_session_rt *s, uint32_t id, uint8_t verdict)
{
	const struct sbx_rule_row *r;

	if (id >= SBX_RULE_BUILTIN)
		return json_pack("{s:I,s:s,s:s,s:s}", "id", (json_int_t)id, "pattern",
				 builtin_rule_name(id), "verdict", verdict_str(verdict),
				 "reason", builtin_rule_name(id));
	r = s ? sbx_session_rule(s, id) : NULL;
	if (!r)
		return json_pack("{s:I,s:s,s:s}", "id", (json_int_t)id, "pattern",
				 id ? "?" : "default", "verdict", verdict_str(verdict));
	return json_pack("{s:I,s:s,s:s,s:s,s:s}", "id", (json_int_t)id, "pattern", r->pattern,
			 "verdict", verdict_str(verdict), "reason", r->reason, "source", r->source);
}

int sbx_daemon_audit(struct sbx_daemon *d, struct sbx_session_rt *s, json_t *body)
{
	char *err = NULL;
	int rc;

	(void)d;
	if (!s || !s->audit)
		return -ENOENT;
	rc = sbx_audit_append(s->audit, body, &err);
	if (rc)
		sbx_warn("session %s: audit: %s", s->name, err ? err : strerror(-rc));
	free(err);
	return rc;
}

/* One event as one JSON line in the event log. */
static void log_line(struct sbx_daemon *d, json_t *line)
{
	char *txt;

	if (!d->log)
		return;
	txt = json_dumps(line, JSON_COMPACT);
	if (txt) {
		fprintf(d->log, "%s\n", txt);
		fflush(d->log);
		free(txt);
	}
}

static void remember_request(struct sbx_session_rt *s, const char *id)
{
	s->my_requests = realloc(s->my_requests, (s->n_my_requests + 1) * sizeof(*s->my_requests));
	if (!s->my_requests)
		abort();
	s->my_requests[s->n_my_requests++] = sbx_strdup(id);
}

static void fold_flush(struct sbx_daemon *d, bool all);

static char *dedup_key(const struct sbx_event *e)
{
	if (e->flags & (SBX_EVF_NET4 | SBX_EVF_NET6)) {
		char a[INET6_ADDRSTRLEN] = "?";

		inet_ntop(e->family == 10 ? AF_INET6 : AF_INET, e->addr, a, sizeof(a));
		return sbx_asprintf("net:%s:%u", a, e->port);
	}
	return sbx_asprintf("file:%u:%u:%llu:%llx:%d", e->access, e->dev,
			    (unsigned long long)e->ino, (unsigned long long)e->name_hash,
			    !!(e->flags & SBX_EVF_NEW_NAME));
}

static struct sbx_pending_rt *pending_find(struct sbx_session_rt *s, const char *key)
{
	for (size_t i = 0; i < s->n_pending; i++)
		if (!strcmp(s->pending[i].key, key))
			return &s->pending[i];
	return NULL;
}

static json_t *event_request(const struct sbx_session_rt *s, const struct sbx_event *e,
			     const char *object)
{
	json_t *req = json_object(), *obj = json_object(), *proc = json_object();
	char *exe = event_exe(e), *cwd = event_cwd(e);
	char hash[32];
	const char *kind;

	if (e->flags & (SBX_EVF_NET4 | SBX_EVF_NET6)) {
		char a[INET6_ADDRSTRLEN] = "?";

		kind = "net";
		inet_ntop(e->family == 10 ? AF_INET6 : AF_INET, e->addr, a, sizeof(a));
		json_object_set_new(obj, "family", json_string(e->family == 10 ? "ipv6" : "ipv4"));
		json_object_set_new(obj, "addr", json_string(a));
		json_object_set_new(obj, "port", json_integer(e->port));
		json_object_set_new(obj, "proto", json_string(e->proto == 6 ? "tcp" :
							      e->proto == 17 ? "udp" : "any"));
	} else {
		kind = (e->op == SBX_OP_EXEC || e->op == SBX_OP_MMAP_EXEC) ? "exec" : "file";
		json_object_set_new(obj, "path", json_string(object));
		json_object_set_new(obj, "access", json_string(access_str(e->access)));
		json_object_set_new(obj, "op", json_string(sbx_op_name(e->op)));
		json_object_set_new(obj, "dev", json_integer(e->dev));
		json_object_set_new(obj, "ino", json_integer((json_int_t)e->ino));
		if (e->flags & SBX_EVF_NEW_NAME) {
			snprintf(hash, sizeof(hash), "%016llx", (unsigned long long)e->name_hash);
			json_object_set_new(obj, "new_name", json_true());
			json_object_set_new(obj, "name_hash", json_string(hash));
		}
	}
	json_object_set_new(proc, "pid", json_integer(e->pid));
	json_object_set_new(proc, "uid", json_integer(e->uid));
	json_object_set_new(proc, "comm", json_stringn_nocheck(e->comm, strnlen(e->comm,
									       sizeof(e->comm))));
	json_object_set_new(proc, "exe", exe ? json_string(exe) : json_null());
	json_object_set_new(proc, "cmdline", event_cmdline(e));
	json_object_set_new(proc, "cwd", cwd ? json_string(cwd) : json_null());
	free(exe);
	free(cwd);

	json_object_set_new(req, "kind", json_string(kind));
	json_object_set_new(req, "session", json_string(s->name));
	json_object_set_new(req, "project", json_string(s->project));
	json_object_set_new(req, "count", json_integer(1));
	json_object_set_new(req, "process", proc);
	json_object_set_new(req, "object", obj);
	json_object_set_new(req, "rule", rule_json(s, e->rule_id, e->verdict));
	return req;
}

static void escalate(struct sbx_daemon *d, struct sbx_session_rt *s, const struct sbx_event *e,
		     const char *object)
{
	struct sbx_pending_rt *p;
	char *key = dedup_key(e), *id = NULL, *err = NULL;
	json_t *req;

	if (!s->queue) {
		free(key);
		return;
	}
	p = pending_find(s, key);
	if (p) {
		p->count++;
		free(key);
		return;
	}
	if (!object) {
		/* a folded repeat whose request was decided meanwhile: the
		 * next event after the window asks again */
		free(key);
		return;
	}
	req = event_request(s, e, object);
	if (sbx_queue_submit(s->queue, req, &id, &err)) {
		sbx_warn("session %s: writing a request: %s", s->name, err ? err : "?");
		free(err);
		free(key);
		json_decref(req);
		return;
	}
	json_decref(req);
	s->pending = realloc(s->pending, (s->n_pending + 1) * sizeof(*s->pending));
	if (!s->pending)
		abort();
	s->pending[s->n_pending++] = (struct sbx_pending_rt){
		.key = key, .id = id, .count = 1, .flushed = 1, .last_flush_ns = sbx_boot_ns(),
	};
	remember_request(s, id);
	sbx_session_save(d, s);
}

/* Write the folded repeat counts; forget entries whose request was
 * decided more than a window ago. */
void sbx_events_flush_pending(struct sbx_daemon *d)
{
	uint64_t now = sbx_boot_ns();

	fold_flush(d, false);
	for (struct sbx_session_rt *s = d->sessions; s; s = s->next) {
		size_t w = 0;

		for (size_t i = 0; i < s->n_pending; i++) {
			struct sbx_pending_rt *p = &s->pending[i];
			bool keep = true;

			if (p->count > p->flushed) {
				int rc = sbx_queue_bump(s->queue, p->id, p->count - p->flushed);

				if (rc == 0) {
					p->flushed = p->count;
					p->last_flush_ns = now;
				} else {
					/* decided: repeats within the window stay folded */
					p->flushed = p->count;
				}
			}
			if (now - p->last_flush_ns > DEDUP_WINDOW_NS && s->queue) {
				json_t *o = NULL;

				if (sbx_queue_read(s->queue, "pending", p->id, &o, NULL))
					keep = false;	/* no longer pending */
				json_decref(o);
			}
			if (keep) {
				s->pending[w++] = *p;
			} else {
				free(p->key);
				free(p->id);
			}
		}
		s->n_pending = w;
	}
}

/*
 * Repeats of one event (same session, operation, verdict, rule and
 * object) within a second are folded: the first is handled in full, the
 * rest are counted, and one summary line with the count follows when the
 * window closes. A retry loop thus costs the daemon a hash lookup per
 * event instead of /proc reads, a JSON line and an audit record, which is
 * what lets it keep up with a burst of 10,000 denials a second.
 */
#define FOLD_SLOTS 1024
#define FOLD_PROBE 8
#define FOLD_WINDOW_NS 1000000000ull

struct fold_slot {
	bool used;
	uint64_t hash, first_ns, repeats;
	struct sbx_event ev;	/* the first one (path and all) */
	pid_t last_pid;
};

static struct fold_slot folds[FOLD_SLOTS];

static uint64_t fold_hash(const struct sbx_event *e)
{
	uint64_t h = SBX_CHAIN_SEED;

	h = sbx_mix64(h ^ e->cgid);
	h = sbx_mix64(h ^ ((uint64_t)e->op << 48 | (uint64_t)e->verdict << 40 |
			   (uint64_t)e->access << 32 | e->rule_id));
	h = sbx_mix64(h ^ ((uint64_t)e->dev << 32 | e->port));
	h = sbx_mix64(h ^ e->ino);
	h = sbx_mix64(h ^ e->name_hash);
	for (int i = 0; i < 16; i += 8) {
		uint64_t a;

		memcpy(&a, e->addr + i, 8);
		h = sbx_mix64(h ^ a);
	}
	return h;
}

static bool fold_same(const struct sbx_event *a, const struct sbx_event *b)
{
	return a->cgid == b->cgid && a->op == b->op && a->verdict == b->verdict &&
	       a->access == b->access && a->rule_id == b->rule_id && a->dev == b->dev &&
	       a->ino == b->ino && a->name_hash == b->name_hash && a->port == b->port &&
	       !memcmp(a->addr, b->addr, 16) && a->flags == b->flags;
}

static void fold_summary(struct sbx_daemon *d, struct fold_slot *f);

/* true: a repeat, counted; false: handle it in full (and remember it) */
static bool fold_event(struct sbx_daemon *d, const struct sbx_event *e, uint64_t now)
{
	uint64_t h = fold_hash(e);
	struct fold_slot *free_slot = NULL;

	for (int i = 0; i < FOLD_PROBE; i++) {
		struct fold_slot *f = &folds[(h + i) % FOLD_SLOTS];

		if (f->used && now - f->first_ns >= FOLD_WINDOW_NS) {
			fold_summary(d, f);	/* its window closed */
			f->used = false;
		}
		if (!f->used) {
			if (!free_slot)
				free_slot = f;
			continue;
		}
		if (f->hash == h && fold_same(&f->ev, e)) {
			f->repeats++;
			f->last_pid = e->pid;
			return true;
		}
	}
	if (free_slot) {
		free_slot->used = true;
		free_slot->hash = h;
		free_slot->first_ns = now;
		free_slot->repeats = 0;
		free_slot->ev = *e;
		free_slot->last_pid = e->pid;
	}
	return false;
}

static void fold_flush(struct sbx_daemon *d, bool all)
{
	uint64_t now = sbx_boot_ns();

	for (int i = 0; i < FOLD_SLOTS; i++) {
		struct fold_slot *f = &folds[i];

		if (f->used && (all || now - f->first_ns >= FOLD_WINDOW_NS)) {
			fold_summary(d, f);
			f->used = false;
		}
	}
}

int sbx_events_handle(void *ctx, void *data, size_t size)
{
	struct sbx_daemon *d = ctx;
	const struct sbx_event *e = data;
	struct sbx_session_rt *s;
	struct timespec ts;
	char when[40], *object, *exe;
	json_t *line;

	if (size < sizeof(*e))
		return 0;
	d->events_seen++;
	s = sbx_session_by_cgid(d, e->cgid);
	if (fold_event(d, e, sbx_boot_ns())) {
		if (s && e->verdict == SBX_V_ASK)
			escalate(d, s, e, NULL);	/* only counts: the request exists */
		return 0;
	}
	ts = sbx_boot_to_real(e->ts_ns);
	sbx_rfc3339(when, sizeof(when), &ts);
	object = sbx_event_object(e);
	exe = event_exe(e);

	line = json_object();
	json_object_set_new(line, "time", json_string(when));
	json_object_set_new(line, "session", s ? json_string(s->name) : json_null());
	json_object_set_new(line, "pid", json_integer(e->pid));
	json_object_set_new(line, "tid", json_integer(e->tid));
	json_object_set_new(line, "uid", json_integer(e->uid));
	json_object_set_new(line, "comm", json_stringn_nocheck(e->comm, strnlen(e->comm,
									       sizeof(e->comm))));
	json_object_set_new(line, "exe", exe ? json_string(exe) : json_null());
	json_object_set_new(line, "operation", json_string(sbx_op_name(e->op)));
	if (e->flags & SBX_EVF_FILE)
		json_object_set_new(line, "access", json_string(access_str(e->access)));
	json_object_set_new(line, "object", json_string(object));
	json_object_set_new(line, "rule", rule_json(s, e->rule_id, e->verdict));
	json_object_set_new(line, "verdict", json_string(verdict_str(e->verdict)));
	json_object_set_new(line, "errno", json_integer(-e->ret));
	if (e->flags & SBX_EVF_WALK_TRUNC)
		json_object_set_new(line, "walk_truncated", json_true());
	free(exe);

	log_line(d, line);
	if (s) {
		json_object_set_new(line, "event", json_string("kernel"));
		sbx_daemon_audit(d, s, line);
		if (e->verdict == SBX_V_ASK)
			escalate(d, s, e, object);
	}
	json_decref(line);
	free(object);
	return 0;
}

/* A connector inside a session asks for something (control op "submit").
 * Only kind, object and the agent's reason come from the caller; who it
 * is and where its queue lives come from the kernel and our records. */
int sbx_submit_for(struct sbx_daemon *d, struct sbx_session_rt *s, pid_t pid, json_t *in,
		   char **id, char **err)
{
	const char *kind = json_string_value(json_object_get(in, "kind"));
	json_t *obj = json_object_get(in, "object"), *req, *proc;
	const char *why = json_string_value(json_object_get(in, "agent_reason"));
	char *exe, *cwd;
	int rc;

	if (!kind || (strcmp(kind, "command") && strcmp(kind, "access"))) {
		*err = sbx_strdup("submit: \"kind\" must be \"command\" or \"access\"");
		return -EINVAL;
	}
	if (!json_is_object(obj)) {
		*err = sbx_strdup("submit: \"object\" must be an object");
		return -EINVAL;
	}
	if (!s->queue) {
		*err = sbx_strdup("the session has no queue");
		return -EIO;
	}
	exe = proc_link(pid, "exe");
	cwd = proc_link(pid, "cwd");
	proc = json_pack("{s:i,s:o,s:o,s:o}", "pid", (int)pid, "exe",
			 exe ? json_string(exe) : json_null(), "cmdline", proc_cmdline(pid), "cwd",
			 cwd ? json_string(cwd) : json_null());
	free(exe);
	free(cwd);
	req = json_pack("{s:s,s:s,s:s,s:i,s:o,s:O,s:n}", "kind", kind, "session", s->name,
			"project", s->project, "count", 1, "process", proc, "object", obj, "rule");
	json_object_set_new(json_object_get(req, "process"), "uid", json_integer(s->uid));
	if (why)
		json_object_set_new(req, "agent_reason", json_string(why));
	rc = sbx_queue_submit(s->queue, req, id, err);
	json_decref(req);
	if (rc)
		return rc;
	remember_request(s, *id);
	sbx_session_save(d, s);
	return 0;
}

/* One line for the repeats of a folded event, in the log and the audit. */
static void fold_summary(struct sbx_daemon *d, struct fold_slot *f)
{
	struct sbx_session_rt *s;
	struct timespec ts;
	char when[40], *object;
	json_t *line;

	if (!f->repeats)
		return;
	s = sbx_session_by_cgid(d, f->ev.cgid);
	ts = sbx_boot_to_real(f->ev.ts_ns);
	sbx_rfc3339(when, sizeof(when), &ts);
	object = sbx_event_object(&f->ev);
	line = json_pack("{s:s,s:o,s:i,s:s,s:s,s:o,s:s,s:I}", "time", when, "session",
			 s ? json_string(s->name) : json_null(), "pid", (int)f->last_pid,
			 "operation", sbx_op_name(f->ev.op), "object", object, "rule",
			 rule_json(s, f->ev.rule_id, f->ev.verdict), "verdict",
			 verdict_str(f->ev.verdict), "repeats", (json_int_t)f->repeats);
	log_line(d, line);
	if (s) {
		json_object_set_new(line, "event", json_string("kernel_repeats"));
		sbx_daemon_audit(d, s, line);
	}
	json_decref(line);
	free(object);
	f->repeats = 0;
}

/* Before a session ends or the daemon stops: every folded repeat counted. */
void sbx_events_flush_all(struct sbx_daemon *d)
{
	fold_flush(d, true);
	sbx_events_flush_pending(d);
}
