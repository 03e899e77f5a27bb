// SPDX-License-Identifier: GPL-2.0
/*
 * daemon.c - `bpfsbx daemon`: the loop and the control protocol.
 *
 * One thread, one epoll set. Nothing here blocks for long except a policy
 * compile (host names are resolved then), which happens only when a
 * session starts or reloads.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/file.h>
#include <sys/inotify.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/timerfd.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "user/cmd.h"
#include "user/control.h"
#include "user/daemon.h"
#include "user/util.h"

#define TICK_MS 200

enum { EP_CTL = 1, EP_RB, EP_INO, EP_SIG, EP_TIMER, EP_CONN };

struct conn {
	int fd;
	pid_t pid;
	uid_t uid;
	gid_t gid;
	char *buf;
	size_t len, cap;
	struct conn *next;
};

static struct conn *conns;

bool sbx_daemon_running(pid_t *pid)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	struct ucred cr;
	socklen_t l = sizeof(cr);
	bool up;
	int fd;

	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", sbx_control_path());
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return false;
	up = connect(fd, (struct sockaddr *)&sa, sizeof(sa)) == 0;
	if (up && pid && getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cr, &l) == 0)
		*pid = cr.pid;
	close(fd);
	return up;
}

static int ep_add(struct sbx_daemon *d, int fd, uint64_t tag)
{
	struct epoll_event ev = { .events = EPOLLIN, .data.u64 = tag };

	return epoll_ctl(d->ep, EPOLL_CTL_ADD, fd, &ev);
}

static int lock_fd = -1;

int sbx_daemon_init(struct sbx_daemon *d, const struct sbx_daemon_opts *o, char **err)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	struct itimerspec its = {
		.it_interval = { 0, TICK_MS * 1000000L }, .it_value = { 0, TICK_MS * 1000000L },
	};
	struct sbx_config cfg;
	const char *log_path = o->log_path ? o->log_path : SBX_EVENT_LOG;
	sigset_t mask;
	__u32 zero = 0;
	pid_t other = 0;
	int rc;

	memset(d, 0, sizeof(*d));
	d->ep = d->ctl = d->ino = d->sig = d->timer = -1;
	d->next_policy_id = 1;
	d->next_serial = 1;
	d->embedded = o->embedded;
	d->once_ttl_s = o->once_ttl_s ? o->once_ttl_s : SBX_ONCE_TTL_S;

	if (geteuid() != 0) {
		*err = sbx_strdup("the daemon must run as root (it loads BPF programs)");
		return -EPERM;
	}
	if (sbx_mkdir_p(SBX_RUN_DIR, 0755) || sbx_mkdir_p(SBX_STATE_DIR, 0700)) {
		*err = sbx_asprintf("creating %s: %s", SBX_RUN_DIR, strerror(errno));
		return -errno;
	}
	chmod(SBX_RUN_DIR, 0755);
	lock_fd = open(SBX_RUN_DIR "/daemon.lock", O_RDWR | O_CREAT | O_CLOEXEC, 0600);
	if (lock_fd < 0 || flock(lock_fd, LOCK_EX | LOCK_NB)) {
		sbx_daemon_running(&other);
		*err = other ? sbx_asprintf("a bpfsbx daemon is already running (pid %d)", (int)other)
			     : sbx_strdup("a bpfsbx daemon is already running");
		if (lock_fd >= 0)
			close(lock_fd);
		lock_fd = -1;
		return -EBUSY;
	}
	rc = sbx_cgroup_root(&d->cg_root, err);
	if (rc)
		return rc;
	rc = sbx_kernel_up(&d->k, true, err);
	if (rc)
		return rc;
	if (bpf_map_lookup_elem(d->k.config, &zero, &cfg) == 0) {
		cfg.daemon_tgid = getpid();
		bpf_map_update_elem(d->k.config, &zero, &cfg, BPF_ANY);
	}

	d->rb = ring_buffer__new(d->k.events, sbx_events_handle, d, NULL);
	if (!d->rb) {
		*err = sbx_asprintf("opening the event ring buffer: %s", strerror(errno));
		return -errno;
	}
	if (strcmp(log_path, "-")) {
		char *dir = sbx_strdup(log_path), *slash = strrchr(dir, '/');

		if (slash && slash != dir) {
			*slash = 0;
			sbx_mkdir_p(dir, 0750);
		}
		free(dir);
		d->log = fopen(log_path, "ae");
		if (!d->log)
			sbx_warn("cannot open event log %s: %s", log_path, strerror(errno));
	} else {
		d->log = stdout;
	}

	d->ep = epoll_create1(EPOLL_CLOEXEC);
	d->ino = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
	sigemptyset(&mask);
	sigaddset(&mask, SIGTERM);
	sigaddset(&mask, SIGINT);
	sigaddset(&mask, SIGHUP);
	sigaddset(&mask, SIGCHLD);
	sigprocmask(SIG_BLOCK, &mask, NULL);
	d->sig = signalfd(-1, &mask, SFD_NONBLOCK | SFD_CLOEXEC);
	d->timer = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
	if (d->ep < 0 || d->ino < 0 || d->sig < 0 || d->timer < 0 ||
	    timerfd_settime(d->timer, 0, &its, NULL)) {
		*err = sbx_asprintf("setting up the event loop: %s", strerror(errno));
		return -errno;
	}

	d->ctl = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", sbx_control_path());
	unlink(sa.sun_path);	/* we hold the lock: any socket file is stale */
	if (d->ctl < 0 || bind(d->ctl, (struct sockaddr *)&sa, sizeof(sa)) ||
	    chmod(sa.sun_path, 0666) || listen(d->ctl, 64)) {
		*err = sbx_asprintf("control socket %s: %s", sa.sun_path, strerror(errno));
		return -errno;
	}
	{
		/* sessions may always reach the control socket (see network.bpf.c) */
		uint32_t dev;
		uint64_t ino;

		if (sbx_kident(sa.sun_path, false, &dev, &ino) == 0 &&
		    bpf_map_lookup_elem(d->k.config, &zero, &cfg) == 0) {
			cfg.ctl_dev = dev;
			cfg.ctl_ino = ino;
			bpf_map_update_elem(d->k.config, &zero, &cfg, BPF_ANY);
		}
	}
	if (ep_add(d, d->ctl, EP_CTL) || ep_add(d, ring_buffer__epoll_fd(d->rb), EP_RB) ||
	    ep_add(d, d->ino, EP_INO) || ep_add(d, d->sig, EP_SIG) ||
	    ep_add(d, d->timer, EP_TIMER)) {
		*err = sbx_asprintf("epoll: %s", strerror(errno));
		return -errno;
	}
	rc = sbx_sessions_root_sync(d, err);
	if (rc)
		return rc;
	rc = sbx_sessions_adopt(d);
	if (rc > 0)
		sbx_info("adopted %d live session(s)", rc);
	return 0;
}

void sbx_daemon_fini(struct sbx_daemon *d)
{
	struct sbx_config cfg;
	__u32 zero = 0;

	while (conns) {
		struct conn *c = conns;

		conns = c->next;
		close(c->fd);
		free(c->buf);
		free(c);
	}
	if (d->rb) {
		ring_buffer__consume(d->rb);	/* what the kernel already sent */
		ring_buffer__free(d->rb);
	}
	sbx_events_flush_all(d);
	if (d->k.config >= 0 && bpf_map_lookup_elem(d->k.config, &zero, &cfg) == 0 &&
	    cfg.daemon_tgid == (unsigned)getpid()) {
		cfg.daemon_tgid = 0;
		bpf_map_update_elem(d->k.config, &zero, &cfg, BPF_ANY);
	}
	/* Sessions stay confined by the pins; free only our memory (a cached
	 * policy nobody uses is swept by the next daemon). */
	while (d->pcache) {
		struct sbx_pcache *e = d->pcache;

		d->pcache = e->next;
		sbx_pcache_drop(e);
	}
	while (d->sessions) {
		struct sbx_session_rt *s = d->sessions;

		d->sessions = s->next;
		sbx_session_save(d, s);
		sbx_session_free(s);
	}
	if (d->ctl >= 0) {
		unlink(sbx_control_path());
		close(d->ctl);
	}
	for (int *fd = &d->ep; fd <= &d->timer; fd++)
		if (fd != &d->ctl && *fd >= 0)
			close(*fd);
	if (d->log && d->log != stdout)
		fclose(d->log);
	sbx_kernel_close(&d->k);
	free(d->cg_root);
	if (lock_fd >= 0)
		close(lock_fd);
	lock_fd = -1;
}

/* ---- control protocol -------------------------------------------------- */

static json_t *reply_err(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static json_t *reply_err(const char *fmt, ...)
{
	va_list ap;
	char *msg;

	va_start(ap, fmt);
	if (vasprintf(&msg, fmt, ap) < 0)
		msg = NULL;
	va_end(ap);
	json_t *j = json_pack("{s:b,s:s}", "ok", 0, "error", msg ? msg : "error");
	free(msg);
	return j;
}

static struct sbx_session_rt *caller_session(struct sbx_daemon *d, pid_t pid)
{
	char name[128];

	if (!sbx_pid_in_session(pid, name, sizeof(name)))
		return NULL;
	return sbx_session_find(d, name);
}

static json_t *status_json(struct sbx_daemon *d)
{
	uint64_t st[SBX_STAT_MAX] = {};
	json_t *sessions = json_array(), *stats;

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
	for (struct sbx_session_rt *s = d->sessions; s; s = s->next)
		json_array_append_new(sessions, json_pack(
			"{s:s,s:I,s:i,s:s,s:s,s:i,s:i,s:i,s:b}", "name", s->name, "cgid",
			(json_int_t)s->cgid, "uid", (int)s->uid, "project", s->project,
			"policy", s->policy_path, "policy_id", (int)s->policy_id, "grants",
			(int)s->n_grants, "rules", (int)s->n_rules, "populated",
			sbx_session_populated(s)));
	return json_pack("{s:b,s:i,s:o,s:o,s:s,s:b,s:i}", "ok", 1, "daemon_pid", (int)getpid(),
			 "sessions", sessions, "stats", stats, "pins", SBX_PIN_DIR, "embedded",
			 d->embedded, "once_ttl_s", (int)d->once_ttl_s);
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

static json_t *handle(struct sbx_daemon *d, struct conn *c, json_t *req)
{
	const char *op = json_string_value(json_object_get(req, "op"));
	char *err = NULL;
	json_t *diags = NULL, *r;
	int rc;

	if (!op)
		return reply_err("request has no \"op\"");

	if (!strcmp(op, "status"))
		return status_json(d);

	if (!strcmp(op, "run")) {
		const char *policy = json_string_value(json_object_get(req, "policy_path"));
		const char *project = json_string_value(json_object_get(req, "project"));
		const char *home = json_string_value(json_object_get(req, "home"));
		struct sbx_session_rt *s;

		if (!policy || !project)
			return reply_err("run needs \"policy_path\" and \"project\"");
		rc = sbx_session_create(d, c->pid, c->uid, c->gid, policy, project, home, &s, &err,
					&diags);
		if (rc) {
			r = reply_err("%s", err ? err : strerror(-rc));
			if (diags)
				json_object_set_new(r, "diagnostics", diags);
			free(err);
			return r;
		}
		sbx_info("session %s started for pid %d uid %u (%s)", s->name, (int)c->pid, c->uid,
			 s->policy_path);
		r = json_pack("{s:b,s:s,s:I,s:s}", "ok", 1, "session", s->name, "cgid",
			      (json_int_t)s->cgid, "project", s->project);
		if (diags)
			json_object_set_new(r, "diagnostics", diags);
		if (d->embedded && !d->embedded_child)
			d->embedded_child = c->pid;
		return r;
	}

	if (!strcmp(op, "submit") || !strcmp(op, "audit")) {
		struct sbx_session_rt *s = caller_session(d, c->pid);
		char *id = NULL;

		if (!s)
			return reply_err("%s is only for processes inside a session", op);
		if (!strcmp(op, "audit")) {
			json_t *rec = json_deep_copy(json_object_get(req, "record"));

			if (!json_is_object(rec)) {
				json_decref(rec);
				return reply_err("audit needs a \"record\" object");
			}
			json_object_set_new(rec, "event", json_string("connector"));
			json_object_set_new(rec, "pid", json_integer(c->pid));
			rc = sbx_daemon_audit(d, s, rec);
			json_decref(rec);
			return rc ? reply_err("audit failed: %s", strerror(-rc))
				  : json_pack("{s:b}", "ok", 1);
		}
		rc = sbx_submit_for(d, s, c->pid, json_object_get(req, "request"), &id, &err);
		if (rc) {
			r = reply_err("%s", err ? err : strerror(-rc));
			free(err);
			return r;
		}
		r = json_pack("{s:b,s:s,s:s}", "ok", 1, "id", id, "project", s->project);
		free(id);
		return r;
	}

	if (!strcmp(op, "reload")) {
		const char *name = json_string_value(json_object_get(req, "session"));
		const char *policy = json_string_value(json_object_get(req, "policy_path"));
		struct sbx_session_rt *s = name ? sbx_session_find(d, name) : NULL;

		if (!s || !policy)
			return reply_err("reload needs a live \"session\" and \"policy_path\"");
		/* An agent must never change its own rules. */
		if (sbx_pid_in_session(c->pid, NULL, 0))
			return reply_err("a process inside a session cannot reload policies");
		if (c->uid != 0 && c->uid != s->uid)
			return reply_err("session %s belongs to uid %u", s->name, s->uid);
		rc = sbx_session_reload(d, s, policy, &err, &diags);
		if (rc) {
			r = reply_err("%s (the previous policy stays in force)",
				      err ? err : strerror(-rc));
			if (diags)
				json_object_set_new(r, "diagnostics", diags);
			free(err);
			return r;
		}
		r = json_pack("{s:b,s:i}", "ok", 1, "policy_id", (int)s->policy_id);
		if (diags)
			json_object_set_new(r, "diagnostics", diags);
		return r;
	}

	if (!strcmp(op, "unload")) {
		bool force = json_is_true(json_object_get(req, "force"));

		if (c->uid != 0 || sbx_pid_in_session(c->pid, NULL, 0))
			return reply_err("only root outside every session may unload bpfsbx");
		if (d->sessions && !force)
			return reply_err("%s live session(s); stop them first or use --force "
					 "(which kills them)", d->sessions->next ? "several" : "a");
		while (d->sessions) {
			kill_session(d->sessions);
			sbx_session_end(d, d->sessions);
		}
		sbx_pcache_expire(d, true);
		rc = sbx_kernel_unload(&err);
		if (rc) {
			r = reply_err("%s", err);
			free(err);
			return r;
		}
		d->stop = true;
		return json_pack("{s:b}", "ok", 1);
	}
	return reply_err("unknown op \"%s\"", op);
}

static void conn_close(struct sbx_daemon *d, struct conn *c)
{
	struct conn **pp;

	epoll_ctl(d->ep, EPOLL_CTL_DEL, c->fd, NULL);
	close(c->fd);
	for (pp = &conns; *pp; pp = &(*pp)->next)
		if (*pp == c) {
			*pp = c->next;
			break;
		}
	free(c->buf);
	free(c);
}

static void conn_reply(struct conn *c, json_t *r)
{
	char *txt = json_dumps(r, JSON_COMPACT);
	size_t len = txt ? strlen(txt) : 0;
	int fl = fcntl(c->fd, F_GETFL);

	/* Replies are small; write them blocking with a bound. */
	fcntl(c->fd, F_SETFL, fl & ~O_NONBLOCK);
	{
		struct timeval tv = { 5, 0 };

		setsockopt(c->fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	}
	for (size_t off = 0; txt && off < len;) {
		ssize_t w = send(c->fd, txt + off, len - off, MSG_NOSIGNAL);

		if (w <= 0)
			break;
		off += w;
	}
	send(c->fd, "\n", 1, MSG_NOSIGNAL);
	free(txt);
}

static void conn_readable(struct sbx_daemon *d, struct conn *c)
{
	json_error_t jerr;
	json_t *req, *r;
	char *nl;

	for (;;) {
		ssize_t n;

		if (c->len == c->cap) {
			if (c->cap >= SBX_CONTROL_MAX_MSG) {
				r = reply_err("request larger than %u bytes", SBX_CONTROL_MAX_MSG);
				conn_reply(c, r);
				json_decref(r);
				conn_close(d, c);
				return;
			}
			c->cap = c->cap ? c->cap * 2 : 4096;
			c->buf = realloc(c->buf, c->cap + 1);
			if (!c->buf)
				abort();
		}
		n = recv(c->fd, c->buf + c->len, c->cap - c->len, 0);
		if (n < 0 && (errno == EAGAIN || errno == EINTR))
			break;
		if (n <= 0) {
			conn_close(d, c);
			return;
		}
		c->len += n;
	}
	c->buf[c->len] = 0;
	nl = memchr(c->buf, '\n', c->len);
	if (!nl)
		return;
	*nl = 0;
	req = json_loads(c->buf, 0, &jerr);
	if (!req || !json_is_object(req))
		r = reply_err("malformed request: %s", req ? "not an object" : jerr.text);
	else
		r = handle(d, c, req);
	json_decref(req);
	conn_reply(c, r);
	json_decref(r);
	conn_close(d, c);
}

static void ctl_accept(struct sbx_daemon *d)
{
	for (;;) {
		struct ucred cr;
		socklen_t l = sizeof(cr);
		struct conn *c;
		int fd = accept4(d->ctl, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);

		if (fd < 0)
			return;
		if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cr, &l)) {
			close(fd);
			continue;
		}
		c = sbx_calloc(1, sizeof(*c));
		c->fd = fd;
		c->pid = cr.pid;
		c->uid = cr.uid;
		c->gid = cr.gid;
		c->next = conns;
		conns = c;
		{
			struct epoll_event ev = { .events = EPOLLIN, .data.ptr = c };

			if (epoll_ctl(d->ep, EPOLL_CTL_ADD, fd, &ev))
				conn_close(d, c);
		}
	}
}

/* ---- inotify, signals, timer ------------------------------------------- */

static void on_inotify(struct sbx_daemon *d)
{
	char buf[16384] __attribute__((aligned(__alignof__(struct inotify_event))));

	for (;;) {
		ssize_t n = read(d->ino, buf, sizeof(buf));

		if (n <= 0)
			return;
		for (char *p = buf; p < buf + n;) {
			struct inotify_event *ev = (struct inotify_event *)p;

			p += sizeof(*ev) + ev->len;
			for (struct sbx_session_rt *s = d->sessions, *nx; s; s = nx) {
				nx = s->next;
				if (ev->wd == s->events_wd && !sbx_session_populated(s)) {
					sbx_session_end(d, s);
				} else if (ev->wd == s->done_wd && ev->len) {
					sbx_decision_file(d, s, ev->name);
					break;	/* one queue dir may serve several sessions */
				}
			}
		}
	}
}

static int child_status = -1;

static void on_signal(struct sbx_daemon *d)
{
	struct signalfd_siginfo si;

	while (read(d->sig, &si, sizeof(si)) == sizeof(si)) {
		if (si.ssi_signo == SIGCHLD) {
			int st;
			pid_t p;

			while ((p = waitpid(-1, &st, WNOHANG)) > 0)
				if (p == d->embedded_child)
					child_status = st;
			continue;
		}
		if (d->embedded && d->embedded_child && si.ssi_signo == SIGINT)
			continue;	/* the terminal sent ^C to the command too */
		if (d->embedded && d->embedded_child && si.ssi_signo != SIGHUP) {
			/* `run`'s own signals belong to the command */
			kill(d->embedded_child, si.ssi_signo);
			continue;
		}
		if (si.ssi_signo == SIGHUP)
			continue;
		sbx_info("signal %d: stopping (sessions stay confined)", (int)si.ssi_signo);
		d->stop = true;
	}
}

static unsigned ticks;

static void on_timer(struct sbx_daemon *d)
{
	uint64_t n;

	if (read(d->timer, &n, sizeof(n)) != sizeof(n))
		return;
	sbx_events_flush_pending(d);
	if (++ticks % 5)
		return;
	sbx_grants_expire(d);
	sbx_requests_expire(d);
	sbx_pcache_expire(d, false);
	for (struct sbx_session_rt *s = d->sessions; s; s = s->next)
		if (s->audit)
			sbx_audit_sync(s->audit);
	/* belt and braces: a missed inotify event must not leak a session */
	for (struct sbx_session_rt *s = d->sessions, *nx; s; s = nx) {
		nx = s->next;
		if (!sbx_session_populated(s))
			sbx_session_end(d, s);
	}
}

int sbx_embedded_status(void)
{
	return child_status;
}

int sbx_daemon_loop(struct sbx_daemon *d)
{
	struct epoll_event evs[32];

	while (!d->stop) {
		int n = epoll_wait(d->ep, evs, 32, -1);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			sbx_err("epoll_wait: %s", strerror(errno));
			return -errno;
		}
		for (int i = 0; i < n; i++) {
			uint64_t tag = evs[i].data.u64;

			if (tag == EP_RB)
				ring_buffer__consume(d->rb);
			else if (tag == EP_CTL)
				ctl_accept(d);
			else if (tag == EP_INO)
				on_inotify(d);
			else if (tag == EP_SIG)
				on_signal(d);
			else if (tag == EP_TIMER)
				on_timer(d);
			else
				conn_readable(d, evs[i].data.ptr);
		}
		if (d->embedded && d->embedded_child && !d->sessions)
			break;	/* our one session ended */
	}
	return 0;
}

/* ---- the subcommand ------------------------------------------------------ */

static void usage(FILE *f)
{
	fprintf(f, "usage: bpfsbx daemon [--log FILE|-] [--once-ttl SECONDS]\n\n"
		   "Load (or adopt) the BPF-LSM programs, pin them under " SBX_PIN_DIR ",\n"
		   "and serve " SBX_CONTROL_SOCK ". Runs in the foreground; stop it with\n"
		   "SIGTERM (sessions stay confined). Events go to " SBX_EVENT_LOG ".\n"
		   "--once-ttl: how long an \"approve once\" grant lasts (default 60 s).\n");
}

static int cmd_daemon(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "log", required_argument, NULL, 'l' },
		{ "once-ttl", required_argument, NULL, 't' },
		{ "help", no_argument, NULL, 'h' },
		{}
	};
	struct sbx_daemon_opts o = {};
	struct sbx_daemon d;
	char *err = NULL;
	int c, rc;

	while ((c = getopt_long(argc, argv, "+l:t:h", opts, NULL)) != -1) {
		long v;

		switch (c) {
		case 'l':
			o.log_path = optarg;
			break;
		case 't':
			if (!sbx_parse_long(optarg, 1, 86400, &v)) {
				sbx_err("daemon: --once-ttl takes seconds (1..86400), not '%s'", optarg);
				return SBX_EXIT_USAGE;
			}
			o.once_ttl_s = v;
			break;
		case 'h':
			usage(stdout);
			return SBX_EXIT_OK;
		default:
			usage(stderr);
			return SBX_EXIT_USAGE;
		}
	}
	if (optind != argc) {
		sbx_err("daemon: unexpected argument '%s'", argv[optind]);
		return SBX_EXIT_USAGE;
	}
	sbx_set_log_prefix("bpfsbx daemon");
	sbx_set_log_timestamps(true);
	rc = sbx_daemon_init(&d, &o, &err);
	if (rc) {
		sbx_err("%s", err ? err : strerror(-rc));
		free(err);
		sbx_daemon_fini(&d);
		return SBX_EXIT_FAIL;
	}
	sbx_info("ready (pid %d, %s)", (int)getpid(), d.k.loaded_here ? "loaded" : "adopted");
	rc = sbx_daemon_loop(&d);
	sbx_daemon_fini(&d);
	return rc ? SBX_EXIT_FAIL : SBX_EXIT_OK;
}

SBX_COMMAND(daemon, "daemon", "[--log FILE] [--once-ttl S]", "load BPF-LSM and serve sessions (root)",
	    cmd_daemon);
