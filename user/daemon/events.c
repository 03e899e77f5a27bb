// SPDX-License-Identifier: GPL-2.0
/*
 * events.c - what the kernel reports: each deny, ask and audit
 * event becomes one JSON line in the event log and a record in the
 * session's audit chain; an ask also becomes an escalation request.
 *
 * An agent that retries in a loop must not flood the person: repeats of
 * the same object by the same session fold into one request whose count
 * is flushed to disk at most every 200 ms.
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "user/daemon/events.h"
#include "user/daemon/evrec.h"
#include "user/daemon/sinks.h"
#include "user/daemon/inet_owner.h"
#include "user/daemon/learned.h"
#include "user/daemon/grants.h"
#include "user/daemon/notice.h"
#include "lib/alloc.h"
#include "lib/clock.h"
#include "lib/fileio.h"
#include "lib/log.h"
#include "lib/names.h"
#include "lib/text.h"
#include "lib/json.h"
#include "policy/policy.h"
#include "queue/request.h"

#define DEDUP_WINDOW_NS (30ull * 1000000000ull)	/* after a decision */

/* An abstract unix socket's name: any byte may occur, so anything
 * outside printable ASCII is escaped (\xNN); "@" stands for the leading
 * NUL, as ss(8) and the policy write it. */
static char *abstract_name(const struct sbx_event *e)
{
	uint32_t off = e->path_off < SBX_EVENT_PATH_MAX ? e->path_off : SBX_EVENT_PATH_MAX - 1;
	size_t n = SBX_EVENT_PATH_MAX - 1 - off;
	char *out = malloc(2 + 4 * n), *o = out;

	if (!out)
		return NULL;
	*o++ = '@';
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)e->path[off + i];

		if (c >= 0x20 && c < 0x7f && c != '\\')
			*o++ = (char)c;
		else
			o += sprintf(o, "\\x%02x", c);
	}
	*o = 0;
	return out;
}

/* The name a session learned an address from, for people: NULL if none. */
static const char *event_name(const struct sbx_session_rt *s, const struct sbx_event *e)
{
	uint8_t a16[16];

	if (!s || !(e->flags & (SBX_EVF_NET4 | SBX_EVF_NET6)))
		return NULL;
	sbx_addr16(e->family == AF_INET6 ? AF_INET6 : AF_INET, e->addr, a16);
	return sbx_learned_name(s, a16);
}

char *sbx_event_object(const struct sbx_event *e)
{
	if (e->flags & (SBX_EVF_NET4 | SBX_EVF_NET6)) {
		char a[INET6_ADDRSTRLEN] = "?";

		inet_ntop(e->family == AF_INET6 ? AF_INET6 : AF_INET, e->addr, a, sizeof(a));
		return e->family == AF_INET6 ? sbx_asprintf("[%s]:%u", a, e->port) :
					 sbx_asprintf("%s:%u", a, e->port);
	}
	if (e->flags & SBX_EVF_ABSTRACT)
		return abstract_name(e);
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
	case SBX_OP_SIGNAL_OWNER:
		/* F_SETOWN and FIOSETOWN name a pid, or a process group as -pgid */
		return (int32_t)e->aux < 0 ? sbx_asprintf("process group %d", -(int32_t)e->aux) :
					     sbx_asprintf("pid %u", e->aux);
	case SBX_OP_SOCKET_CREATE:
		return sbx_asprintf("socket %s type %u protocol %u", sbx_family_name(e->family),
				    e->aux, e->port);
	case SBX_OP_UNIX_CONNECT:
		return sbx_strdup("unix socket (unnamed)");
	case SBX_OP_FILE_RECEIVE:	/* not a file: an IP socket (socket-outside) */
		return sbx_asprintf("socket %s protocol %u made outside the session",
				    sbx_family_name(e->family), e->proto);
	case SBX_OP_INBOUND:
		return sbx_strdup("unix socket of the session (abstract)");
	case SBX_OP_IOCTL:
		return sbx_asprintf("ioctl 0x%x", e->aux);
	case SBX_OP_BPF:
		return sbx_asprintf("bpf command %u", e->aux);
	case SBX_OP_IPC:
		return sbx_asprintf("SysV IPC id %u key 0x%08x", e->aux, (uint32_t)e->name_hash);
	case SBX_OP_KEY:
		return sbx_asprintf("key %u", e->aux);
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

/* A loopback listener outside the session (bpf/dns.bpf.c): who serves it. */
static json_t *loopback_listener(const struct sbx_event *e)
{
	pid_t pid = sbx_inet_owner(e->family == AF_INET6 ? AF_INET6 : AF_INET, e->addr, e->port,
				   e->proto);
	char *exe = pid > 0 ? proc_link(pid, "exe") : NULL;
	json_t *j = json_pack("{s:s}", "where", "outside the session");

	if (pid > 0)
		json_object_set_new(j, "pid", json_integer(pid));
	json_object_set_new(j, "exe", exe ? json_string(exe) : json_null());
	free(exe);
	return j;
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

/* The rule of an event or a lookup, as the request and the event log name it */
static void rule_fill(const struct sbx_session_rt *s, uint32_t id, uint8_t verdict,
		      struct sbx_request *req)
{
	const struct sbx_rule_row *r;

	/* the id stays the number (readers compare it); name is for people */
	req->rule.present = true;
	req->rule.id = id;
	req->rule.verdict = sbx_verdict_name(verdict);
	if (id >= SBX_RULE_BUILTIN) {
		req->rule.name = sbx_builtin_rule_name(id);
		req->rule.pattern = sbx_builtin_rule_text(id);
		req->rule.reason = sbx_builtin_rule_text(id);
		return;
	}
	r = s ? sbx_session_rule(s, id) : NULL;
	if (!r) {
		req->rule.pattern = id ? "?" : "default";
		return;
	}
	req->rule.pattern = r->pattern;
	req->rule.reason = r->reason;
	req->rule.source = r->source;
	/* learning: the kernel let it through as audit; say what enforcing
	 * would have done */
	if (r->would && verdict == SBX_V_AUDIT)
		req->rule.would = sbx_verdict_name(r->would);
}

static void fold_flush(struct sbx_daemon *d, bool all);

static char *dedup_key(const struct sbx_event *e)
{
	if (e->flags & (SBX_EVF_NET4 | SBX_EVF_NET6)) {
		char a[INET6_ADDRSTRLEN] = "?";

		inet_ntop(e->family == AF_INET6 ? AF_INET6 : AF_INET, e->addr, a, sizeof(a));
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

/*
 * The process serving a unix socket that a session tried to reach: the
 * pid the kernel recorded at listen() and what it runs now. The pid may
 * have exited or been reused by the time we read /proc; the socket inode
 * tells which it is.
 */
static json_t *peer_json(const struct sbx_event *e)
{
	json_t *p = json_object();
	char *exe = e->aux ? proc_link((pid_t)e->aux, "exe") : NULL;

	json_object_set_new(p, "pid", e->aux ? json_integer(e->aux) : json_null());
	json_object_set_new(p, "exe", exe ? json_string(exe) : json_null());
	if (e->peer_ino)
		json_object_set_new(p, "socket_inode", json_integer((json_int_t)e->peer_ino));
	free(exe);
	return p;
}

/* What a request filled from an event or a lookup points to, until it is filed */
struct req_store {
	char *exe, *cwd, *path;
	json_t *cmdline, *listener;
	char comm[sizeof(((struct sbx_event *)0)->comm) + 1];
	char addr[INET6_ADDRSTRLEN];
	struct sbx_objid ident;
};

static void store_free(struct req_store *st)
{
	free(st->exe);
	free(st->cwd);
	free(st->path);
	json_decref(st->cmdline);
	json_decref(st->listener);
}

/* The process of pid as /proc shows it (a lookup, a connector's ask) */
static void proc_fill(struct req_store *st, pid_t pid, struct sbx_request *r)
{
	st->exe = proc_link(pid, "exe");
	st->cwd = proc_link(pid, "cwd");
	st->cmdline = proc_cmdline(pid);
	r->process.pid = pid;
	r->process.exe = st->exe;
	r->process.cwd = st->cwd;
	r->process.cmdline = json_is_array(st->cmdline) ? st->cmdline : NULL;
}

static void event_request(const struct sbx_session_rt *s, const struct sbx_event *e,
			  const char *object, struct req_store *st, struct sbx_request *r)
{
	if (e->flags & (SBX_EVF_NET4 | SBX_EVF_NET6)) {
		sbx_request_init(r, SBX_REQ_NET);
		inet_ntop(e->family == AF_INET6 ? AF_INET6 : AF_INET, e->addr, st->addr,
			  sizeof(st->addr));
		r->family = e->family == AF_INET6 ? "ipv6" : "ipv4";
		r->addr = st->addr;
		r->port = e->port;
		r->proto = e->proto == IPPROTO_TCP || e->proto == IPPROTO_UDP ?
			   sbx_proto_name(e->proto) : "any";
		r->learned = event_name(s, e);
	} else {
		sbx_request_init(r, (e->op == SBX_OP_EXEC || e->op == SBX_OP_MMAP_EXEC) ?
				    SBX_REQ_EXEC : SBX_REQ_FILE);
		r->path = object;
		r->access = e->access;
		r->op = sbx_op_name(e->op);
		if (e->flags & SBX_EVF_ABSTRACT) {
			/* a socket name has no inode: its hash is the object */
			r->abstract = true;
			r->name_hash = e->name_hash;
		} else {
			r->has_ident = true;
			r->dev = e->dev;
			r->ino = e->ino;
		}
		if (e->flags & SBX_EVF_PEER)
			r->listener = st->listener = peer_json(e);
		if (e->flags & SBX_EVF_NEW_NAME) {
			r->new_name = true;
			r->name_hash = e->name_hash;
		}
	}
	memcpy(st->comm, e->comm, sizeof(e->comm));
	st->comm[sizeof(e->comm)] = 0;
	st->exe = event_exe(e);
	st->cwd = event_cwd(e);
	st->cmdline = event_cmdline(e);
	r->process.pid = e->pid;
	r->process.uid = e->uid;
	r->process.comm = st->comm;
	r->process.exe = st->exe;
	r->process.cwd = st->cwd;
	r->process.cmdline = json_is_array(st->cmdline) ? st->cmdline : NULL;

	r->session = s->name;
	r->container = s->container;
	r->project = s->project;
	rule_fill(s, e->rule_id, e->verdict, r);
	if (r->kind != SBX_REQ_NET)
		r->notice = sbx_grant_annotate(s, r, &st->ident);
}

/* Write r into s's queue, as one of s's requests: 0 and *id, or -errno
 * and *err */
static int submit(struct sbx_session_rt *s, const struct sbx_request *r, char **id, char **err)
{
	json_t *req = sbx_request_encode(r);
	int rc;

	if (!req) {
		*err = sbx_strdup(strerror(ENOMEM));
		return -ENOMEM;
	}
	rc = sbx_queue_submit(s->queue, req, id, err);
	json_decref(req);
	if (rc == 0)
		sbx_session_add_request(s, *id);
	return rc;
}

/*
 * File r as a new request of s, remembered under key (taken) so that
 * repeats of the same ask fold into it, and tell the terminal the
 * session was started from (notice.c).
 */
static void file_request(struct sbx_session_rt *s, char *key, const struct sbx_request *r)
{
	char *id = NULL, *err = NULL;

	if (submit(s, r, &id, &err)) {
		sbx_warn("session %s: writing a request: %s", s->name, err ? err : "?");
		free(err);
		free(key);
		return;
	}
	sbx_notice_request(s, id, r);
	s->pending = sbx_realloc_array(s->pending, s->n_pending + 1, sizeof(*s->pending));
	s->pending[s->n_pending++] = (struct sbx_pending_rt){
		.key = key, .id = id, .count = 1, .flushed = 1, .last_flush_ns = sbx_boot_ns(),
	};
}

static void escalate(struct sbx_daemon *d, struct sbx_session_rt *s, const struct sbx_event *e,
		     const char *object)
{
	struct sbx_pending_rt *p;
	char *key = dedup_key(e);

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
	{
		struct req_store st = { 0 };
		struct sbx_request r;

		event_request(s, e, object, &st, &r);
		file_request(s, key, &r);
		store_free(&st);
	}
}

void sbx_events_ask_again(struct sbx_session_rt *s, const struct sbx_request *r, const char *why)
{
	struct sbx_request again = *r;
	struct sbx_pending_rt *p = NULL;
	char *id = NULL, *err = NULL;

	for (size_t i = 0; i < s->n_pending; i++)
		if (!strcmp(s->pending[i].id, r->id))
			p = &s->pending[i];
	again.id = NULL;
	again.json = NULL;
	memset(&again.decision, 0, sizeof(again.decision));
	again.notice = why;
	if (submit(s, &again, &id, &err)) {
		sbx_warn("session %s: asking %s again: %s", s->name, r->id, err ? err : "?");
		free(err);
		if (p) {
			/* the next event files it anew */
			free(p->key);
			free(p->id);
			*p = s->pending[--s->n_pending];
		}
		return;
	}
	sbx_notice_request(s, id, &again);
	if (!p) {
		free(id);
		return;
	}
	/* the repeats the refused request folded go on folding into this one */
	free(p->id);
	p->id = id;
	p->count = 1;
	p->flushed = 1;
	p->last_flush_ns = sbx_boot_ns();
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

				if (sbx_queue_read(s->queue, SBX_QDIR_PENDING, p->id, &o, NULL))
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
 * Repeats of one event (same session, user, operation, verdict, rule and
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
	h = sbx_mix64(h ^ e->uid);
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
	/*
	 * The user is part of the key: an inbound refusal is filed under the
	 * listener's session, and a root client's attempt folded into the
	 * session user's would lose who tried.
	 */
	return a->cgid == b->cgid && a->uid == b->uid && a->op == b->op &&
	       a->verdict == b->verdict &&
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
	struct sbx_evrec r;
	char *object, *exe, comm[sizeof(e->comm) + 1];

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
	object = sbx_event_object(e);
	if (event_name(s, e)) {
		/* "connect 140.82.112.3:443 (github.com)" */
		char *named = sbx_asprintf("%s (%s)", object, event_name(s, e));

		free(object);
		object = named;
	}
	exe = event_exe(e);
	memcpy(comm, e->comm, sizeof(e->comm));
	comm[sizeof(e->comm)] = 0;

	sbx_evrec_init(&r, "kernel", &ts);
	r.session = s ? s->name : NULL;
	r.container = s ? s->container : NULL;
	r.project = s ? s->project : NULL;
	r.pid = e->pid;
	r.tid = e->tid;
	r.uid = e->uid;
	r.comm = comm;
	r.exe = exe;
	r.operation = sbx_op_name(e->op);
	if (e->flags & SBX_EVF_FILE)
		r.access = sbx_access_name(e->access);
	r.object = object;
	rule_fill(s, e->rule_id, e->verdict, &r.rule);
	r.verdict = sbx_verdict_name(e->verdict);
	r.err = -e->ret;
	r.name = event_name(s, e);
	if (e->flags & (SBX_EVF_WALK_TRUNC | SBX_EVF_PEER | SBX_EVF_LOOPBACK | SBX_EVF_INBOUND))
		r.extra = json_object();
	if (e->flags & SBX_EVF_WALK_TRUNC)
		json_object_set_new(r.extra, "walk_truncated", json_true());
	if (e->flags & SBX_EVF_PEER)
		json_object_set_new(r.extra, "listener", peer_json(e));
	if (e->flags & SBX_EVF_LOOPBACK)
		json_object_set_new(r.extra, "listener", loopback_listener(e));
	/* pid, comm and exe above are the client's; the session is the
	 * listener's (bpf/inbound.bpf.c, sbx_unix_inbound) */
	if (e->flags & SBX_EVF_INBOUND)
		json_object_set_new(r.extra, "client", json_string("outside every session"));

	sbx_sinks_emit(d, s, &r);
	if (s && e->verdict == SBX_V_ASK)
		escalate(d, s, e, object);
	json_decref(r.extra);
	free(exe);
	free(object);
	return 0;
}

/*
 * Of a connector's ask, only what the caller may say: for a command the
 * command and its directory, for an access the path and access or the
 * host and port, and its reason. The rest is the daemon's to fill.
 */
static void ask_narrow(struct sbx_request *r)
{
	const struct sbx_request a = *r;

	sbx_request_init(r, a.kind);
	r->agent_reason = a.agent_reason;
	switch (a.kind) {
	case SBX_REQ_COMMAND:
		r->command = a.command;
		r->cwd = a.cwd;
		break;
	case SBX_REQ_ACCESS_PATH:
		r->path = a.path;
		r->access = a.access;
		r->has_access = a.has_access;
		break;
	case SBX_REQ_ACCESS_HOST:
		r->host = a.host;
		r->port = a.port;
		r->has_port = a.has_port;
		break;
	default:
		break;
	}
}

int sbx_submit_for(struct sbx_session_rt *s, pid_t pid, struct sbx_request *r, char **id,
		   char **err)
{
	struct req_store st = { 0 };
	int rc = 0;

	if (r->kind != SBX_REQ_COMMAND && r->kind != SBX_REQ_ACCESS_PATH &&
	    r->kind != SBX_REQ_ACCESS_HOST) {
		*err = sbx_strdup("submit: \"kind\" must be \"command\" or \"access\"");
		return -EINVAL;
	}
	if (!s->queue) {
		*err = sbx_strdup("the session has no queue");
		return -EIO;
	}
	ask_narrow(r);
	if (r->kind == SBX_REQ_ACCESS_PATH)
		rc = sbx_grant_ident_of_access(r, &st.ident, &st.path, err);
	if (rc == 0) {
		r->session = s->name;
		r->container = s->container;
		r->project = s->project;
		r->process.uid = s->uid;
		proc_fill(&st, pid, r);
		rc = submit(s, r, id, err);
	}
	store_free(&st);
	return rc;
}

/* One line for the repeats of a folded event, in the log and the audit. */
static void fold_summary(struct sbx_daemon *d, struct fold_slot *f)
{
	struct sbx_session_rt *s;
	struct timespec ts;
	struct sbx_evrec r;
	char *object;

	if (!f->repeats)
		return;
	s = sbx_session_by_cgid(d, f->ev.cgid);
	ts = sbx_boot_to_real(f->ev.ts_ns);
	object = sbx_event_object(&f->ev);
	sbx_evrec_init(&r, "kernel_repeats", &ts);
	r.session = s ? s->name : NULL;
	r.container = s ? s->container : NULL;
	r.project = s ? s->project : NULL;
	r.pid = f->last_pid;
	r.uid = f->ev.uid;
	r.operation = sbx_op_name(f->ev.op);
	r.object = object;
	rule_fill(s, f->ev.rule_id, f->ev.verdict, &r.rule);
	r.verdict = sbx_verdict_name(f->ev.verdict);
	r.repeats = f->repeats;
	sbx_sinks_emit(d, s, &r);
	free(object);
	f->repeats = 0;
}


/* ---- the resolver's decisions ---------------------------------------------------- */

#define DNS_FOLD_SLOTS 256

struct dns_fold {
	uint64_t cgid, first_ns, repeats;
	uint8_t verdict;
	char name[256];
	char qtype[16];
	uint32_t rule_id;
};

static struct dns_fold dns_folds[DNS_FOLD_SLOTS];

static void dns_line(struct sbx_daemon *d, struct sbx_session_rt *s, const char *name,
		     const char *qtype, uint8_t verdict, uint32_t rule_id, const char *why,
		     pid_t pid, uint64_t repeats)
{
	char *object = sbx_asprintf("%s (%s)", name, qtype);
	struct timespec ts;
	struct sbx_evrec r;

	clock_gettime(CLOCK_REALTIME, &ts);
	sbx_evrec_init(&r, repeats ? "dns_repeats" : "dns", &ts);
	r.session = s->name;
	r.container = s->container;
	r.project = s->project;
	r.operation = "dns";
	r.object = object;
	rule_fill(s, rule_id, verdict, &r.rule);
	r.verdict = sbx_verdict_name(verdict);
	r.name = name;
	r.answer = why;
	if (pid > 0)
		r.pid = pid;
	r.repeats = repeats;
	sbx_sinks_emit(d, s, &r);
	free(object);
}

static void dns_fold_close(struct sbx_daemon *d, struct dns_fold *f)
{
	struct sbx_session_rt *s = f->repeats ? sbx_session_by_cgid(d, f->cgid) : NULL;

	if (s)
		dns_line(d, s, f->name, f->qtype, f->verdict, f->rule_id, NULL, 0, f->repeats);
	memset(f, 0, sizeof(*f));
}

/* a request of kind host for name, folded like the kernel's asks */
static void escalate_host(struct sbx_session_rt *s, const char *name, uint32_t rule_id,
			  pid_t pid)
{
	char *key = sbx_asprintf("host:%s", name);
	struct sbx_pending_rt *p = pending_find(s, key);
	struct req_store st = { 0 };
	struct sbx_request r;

	if (p || !s->queue) {
		if (p)
			p->count++;
		free(key);
		return;
	}
	sbx_request_init(&r, SBX_REQ_HOST);
	r.host = name;
	r.session = s->name;
	r.container = s->container;
	r.project = s->project;
	r.process.uid = s->uid;
	if (pid > 0)
		proc_fill(&st, pid, &r);
	rule_fill(s, rule_id, SBX_V_ASK, &r);
	file_request(s, key, &r);
	store_free(&st);
}

void sbx_events_dns(struct sbx_daemon *d, struct sbx_session_rt *s, const char *name,
		    const char *qtype, uint8_t verdict, uint32_t rule_id, const char *why,
		    pid_t pid, bool escalate_it)
{
	uint64_t now = sbx_boot_ns(), h = SBX_CHAIN_SEED;
	struct dns_fold *f;

	h = sbx_mix64(h ^ s->cgid);
	h = sbx_mix64(h ^ sbx_hash_name(name, strlen(name)) ^ verdict);
	f = &dns_folds[h % DNS_FOLD_SLOTS];
	if (f->cgid && now - f->first_ns >= FOLD_WINDOW_NS)
		dns_fold_close(d, f);
	if (f->cgid == s->cgid && f->verdict == verdict && !strcmp(f->name, name)) {
		f->repeats++;
		if (escalate_it)
			escalate_host(s, name, rule_id, pid);	/* only counts */
		return;
	}
	if (f->cgid)
		dns_fold_close(d, f);
	f->cgid = s->cgid;
	f->first_ns = now;
	f->verdict = verdict;
	f->rule_id = rule_id;
	snprintf(f->name, sizeof(f->name), "%s", name);
	snprintf(f->qtype, sizeof(f->qtype), "%s", qtype);
	dns_line(d, s, name, qtype, verdict, rule_id, why, pid, 0);
	if (escalate_it)
		escalate_host(s, name, rule_id, pid);
}

/* Before a session ends or the daemon stops: every folded repeat counted. */
void sbx_events_flush_all(struct sbx_daemon *d)
{
	fold_flush(d, true);
	for (int i = 0; i < DNS_FOLD_SLOTS; i++)
		if (dns_folds[i].cgid)
			dns_fold_close(d, &dns_folds[i]);
	sbx_events_flush_pending(d);
}
