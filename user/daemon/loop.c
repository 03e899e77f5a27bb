// SPDX-License-Identifier: GPL-2.0
/*
 * loop.c - the daemon's loop: the control socket and its connections,
 * the BPF ring buffer, inotify, signals and a timer, in one epoll set.
 *
 * One thread, one epoll set. Nothing here blocks for long except a policy
 * compile, which happens only when a session starts or reloads. The
 * sessions' resolver (resolver.c) lives in the same set: its sockets carry
 * odd tags (a pointer | 1), and it never waits for an upstream.
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
#include "user/daemon/attach.h"
#include "user/daemon/claude_json.h"
#include "user/control/control_client.h"
#include "user/daemon/control_ops.h"
#include "user/daemon/decisions.h"
#include "user/daemon/events.h"
#include "user/daemon/grants.h"
#include "user/daemon/loop.h"
#include "user/daemon/notice.h"
#include "user/daemon/learned.h"
#include "user/daemon/machine_live.h"
#include "user/daemon/metrics.h"
#include "user/daemon/policy_cache.h"
#include "user/daemon/resolver.h"
#include "user/daemon/sessions.h"
#include "lib/alloc.h"
#include "lib/clock.h"
#include "lib/dirwatch.h"
#include "lib/fileio.h"
#include "lib/log.h"
#include "lib/text.h"
#include "lib/json.h"
#include "queue/watch.h"

#define TICK_MS 200

enum { EP_CTL = 1, EP_RB, EP_INO, EP_QWATCH, EP_SIG, EP_TIMER, EP_CONN };

struct conn {
	int fd;
	pid_t pid;
	uid_t uid;
	gid_t gid;
	int passed_fd;		/* a descriptor the caller sent (SCM_RIGHTS), or -1 */
	uint64_t session_cgid;	/* the kernel's record of the connecting task's
				 * session (sbx_ctl_peers), 0: none */
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
	d->pcache_ttl_ns = (o->pcache_ttl_set ? o->pcache_ttl_s : SBX_PCACHE_TTL_S) * 1000000000ull;

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
	{
		/* a cgroup2 mounted again since doctor last looked may have lost it */
		char *opts = sbx_cgroup2_options(d->cg_root);

		if (opts && !strstr(opts, "favordynmods"))
			sbx_info("cgroup2 at %s is mounted without favordynmods: each session start "
				 "waits for an RCU grace period to move its caller (mount -o "
				 "remount,%s,favordynmods %s; 'bpfsbx doctor' says more)",
				 d->cg_root, opts, d->cg_root);
		free(opts);
	}
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
	d->qwatch = sbx_qwatch_new();
	sigemptyset(&mask);
	sigaddset(&mask, SIGTERM);
	sigaddset(&mask, SIGINT);
	sigaddset(&mask, SIGHUP);
	sigaddset(&mask, SIGCHLD);
	sigprocmask(SIG_BLOCK, &mask, NULL);
	d->sig = signalfd(-1, &mask, SFD_NONBLOCK | SFD_CLOEXEC);
	d->timer = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
	if (d->ep < 0 || d->ino < 0 || !d->qwatch || d->sig < 0 || d->timer < 0 ||
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
		/* sessions may always reach the control socket, and the kernel
		 * records on each connection which session it came from
		 * (sbx_check_unix in bpf/network.bpf.c) */
		struct sbx_listener v = { .flags = SBX_LISTENER_DAEMON | SBX_LISTENER_CONTROL };

		if (bpf_map_update_elem(d->k.listeners, &d->ctl, &v, BPF_ANY)) {
			*err = sbx_asprintf("marking the control socket in the kernel: %s",
					    strerror(errno));
			return -errno;
		}
	}
	if (ep_add(d, d->ctl, EP_CTL) || ep_add(d, ring_buffer__epoll_fd(d->rb), EP_RB) ||
	    ep_add(d, d->ino, EP_INO) || ep_add(d, sbx_qwatch_fd(d->qwatch), EP_QWATCH) ||
	    ep_add(d, d->sig, EP_SIG) ||
	    ep_add(d, d->timer, EP_TIMER)) {
		*err = sbx_asprintf("epoll: %s", strerror(errno));
		return -errno;
	}
	rc = sbx_sessions_root_sync(&d->k, d->cg_root, err);
	if (rc)
		return rc;
	rc = sbx_sessions_adopt(d);
	if (rc > 0)
		sbx_info("adopted %d live session(s)", rc);
	sbx_machine_live_check(d, false);	/* the floor as it is now */
	/* an embedded daemon serves one session, now: its links too */
	return sbx_attach_init(d, d->embedded ? 0 : o->idle_detach_set ? o->idle_detach_s :
			       SBX_IDLE_DETACH_S, err);
}

void sbx_daemon_fini(struct sbx_daemon *d)
{
	struct sbx_config cfg;
	__u32 zero = 0;

	sbx_attach_fini(d);
	while (conns) {
		struct conn *c = conns;

		conns = c->next;
		close(c->fd);
		if (c->passed_fd >= 0)
			close(c->passed_fd);
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
	sbx_learned_flush(d);
	/* Sessions stay confined by the pins; free only our memory (a cached
	 * policy nobody uses is swept by the next daemon). */
	while (d->pcache) {
		struct sbx_pcache *e = d->pcache;

		d->pcache = e->next;
		sbx_pcache_drop(e);
	}
	sbx_applied_free_all(d);
	sbx_dirwatch_free(d->dirwatch);
	sbx_machine_live_free(d);
	free(d->protected_keys);
	d->dirwatch = NULL;
	while (d->sessions) {
		struct sbx_session_rt *s = d->sessions;

		d->sessions = s->next;
		sbx_state_save(s);
		sbx_resolver_close(d, s, true);	/* the sockets only; the kernel keeps the rest */
		sbx_session_free(s);
	}
	sbx_qwatch_free(d->qwatch);
	d->qwatch = NULL;
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

/* ---- control connections ---------------------------------------------- */

static void conn_close(struct sbx_daemon *d, struct conn *c)
{
	struct conn **pp;

	epoll_ctl(d->ep, EPOLL_CTL_DEL, c->fd, NULL);
	close(c->fd);
	if (c->passed_fd >= 0)
		close(c->passed_fd);
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

	if (txt) {	/* the reply and its newline in one send */
		txt = sbx_realloc_array(txt, len + 2, 1);
		txt[len++] = '\n';
		txt[len] = 0;
	}

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
	if (!txt)
		send(c->fd, "\n", 1, MSG_NOSIGNAL);
	free(txt);
}

/* recv(), keeping the first descriptor a caller passes (more are closed) */
static ssize_t recv_with_fds(struct conn *c, char *buf, size_t len)
{
	char cbuf[CMSG_SPACE(4 * sizeof(int))];
	struct iovec iov = { .iov_base = buf, .iov_len = len };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = cbuf,
			     .msg_controllen = sizeof(cbuf) };
	ssize_t n = recvmsg(c->fd, &mh, MSG_CMSG_CLOEXEC);

	for (struct cmsghdr *cm = CMSG_FIRSTHDR(&mh); n >= 0 && cm; cm = CMSG_NXTHDR(&mh, cm)) {
		int nfd = (cm->cmsg_len - CMSG_LEN(0)) / sizeof(int), fds[4];

		if (cm->cmsg_level != SOL_SOCKET || cm->cmsg_type != SCM_RIGHTS || nfd > 4)
			continue;
		memcpy(fds, CMSG_DATA(cm), nfd * sizeof(int));
		for (int i = 0; i < nfd; i++) {
			if (c->passed_fd < 0)
				c->passed_fd = fds[i];
			else
				close(fds[i]);
		}
	}
	return n;
}


/*
 * Is pid inside a session, and which one? A cgroup below bpfsbx/ counts
 * as inside (and so does one that cannot be read: fail closed), unless the
 * kernel confines nothing there: a container's cgroup that no hook
 * adopted, or podman's conmon next to it, get from the kernel what every
 * process outside gets, and may ask what they may ask (oci-hook's adopt).
 * The session is found by its cgroup's id: a container's cgroup is named
 * by its runtime, not after the session.
 */
static bool caller_in_session(struct sbx_daemon *d, pid_t pid, struct sbx_session_rt **s)
{
	char name[256], *p;
	struct sbx_session kv;
	struct stat st;
	bool in;

	*s = NULL;
	name[0] = 0;
	in = sbx_pid_in_session(pid, name, sizeof(name));
	if (!in || !name[0])
		return in;
	p = sbx_asprintf("%s/" SBX_CGROUP_DIR_NAME "/%s", d->cg_root, name);
	if (stat(p, &st) == 0) {
		uint64_t cgid = st.st_ino;

		*s = sbx_session_by_cgid(d, cgid);
		if (!*s && bpf_map_lookup_elem(d->k.sessions, &cgid, &kv) && errno == ENOENT)
			in = false;
	}
	free(p);
	return in;
}

static void conn_readable(struct sbx_daemon *d, struct conn *c)
{
	json_error_t jerr;
	json_t *req, *r;
	bool is_run;
	char *nl;

	for (;;) {
		ssize_t n;

		if (c->len == c->cap) {
			if (c->cap >= SBX_CONTROL_MAX_MSG) {
				r = sbx_ctl_error("request larger than %u bytes", SBX_CONTROL_MAX_MSG);
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
		n = recv_with_fds(c, c->buf + c->len, c->cap - c->len);
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
	if (!req || !json_is_object(req)) {
		r = sbx_ctl_error("malformed request: %s", req ? "not an object" : jerr.text);
	} else {
		struct sbx_ctl_caller who = { .pid = c->pid, .uid = c->uid, .gid = c->gid,
					      .passed_fd = c->passed_fd };

		/* inside if either the kernel's record at connect or the pid
		 * now says so: a descriptor inherited into a session, or one
		 * connected from a session and passed out, both count */
		who.in_session = caller_in_session(d, c->pid, &who.session);
		if (c->session_cgid) {
			who.in_session = true;
			who.session = sbx_session_by_cgid(d, c->session_cgid);
		}
		r = sbx_ctl_handle(d, &who, req);
	}
	is_run = req && json_is_string(json_object_get(req, "op")) &&
		 !strcmp(sbx_json_str(req, "op"), "run");
	json_decref(req);
	/* what the reply tells the caller is on disk for a restarted daemon */
	{
		uint64_t t = sbx_boot_ns();

		sbx_state_flush(d);
		if (is_run)
			d->start_ns[SBX_SP_STATE] = sbx_boot_ns() - t;
	}
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
		c->passed_fd = -1;
		c->pid = cr.pid;
		c->uid = cr.uid;
		c->gid = cr.gid;
		{
			/* recorded by the connect hook, keyed by the socket itself:
			 * no pid that could be recycled is involved */
			struct sbx_ctl_peer peer;

			if (bpf_map_lookup_elem(d->k.ctl_peers, &fd, &peer) == 0)
				c->session_cgid = peer.cgid;
		}
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
				if (ev->wd == s->events_wd && !sbx_session_populated(s))
					sbx_session_end(d, s);
			}
		}
	}
}

/* a file arrived in the done/ folder watched as id */
static void on_decision(void *arg, int id, const char *name)
{
	struct sbx_daemon *d = arg;

	if (!name[0])
		return;
	for (struct sbx_session_rt *s = d->sessions; s; s = s->next)
		if (id == s->done_wd) {
			sbx_decision_file(d, s, name);
			break;	/* one queue dir may serve several sessions */
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
		if (si.ssi_signo == SIGHUP) {
			/* `systemctl reload`: the machine policy, now */
			sbx_machine_live_check(d, true);
			continue;
		}
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
	/* Links dropped for idleness: the cached policies go too. Their
	 * inotify marks are what an idle machine would still pay for (any mark
	 * on a file system sends every open there through fsnotify), and the
	 * first session after the attach scans everything again anyway. */
	if (d->pcache && sbx_attach_idle(d))
		sbx_pcache_expire(d, true);
	sbx_events_flush_pending(d);
	sbx_resolver_tick(d);
	sbx_learned_expire(d);
	/* a user-scope MCP server a session wrote must be gone before the
	 * person's next `claude`, not at the session's end */
	for (struct sbx_session_rt *s = d->sessions; s; s = s->next) {
		sbx_claude_json_watch(s);
		sbx_notice_retry(s);
	}
	if (++ticks % 5)
		return;
	sbx_learned_flush(d);
	sbx_machine_live_check(d, false);
	sbx_metrics_tick(d);
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

			/* the small fixed tags first: some are odd, like the
			 * resolver's tagged pointers */
			if (tag == EP_RB)
				ring_buffer__consume(d->rb);
			else if (tag == EP_CTL)
				ctl_accept(d);
			else if (tag == EP_INO)
				on_inotify(d);
			else if (tag == EP_QWATCH)
				sbx_qwatch_read(d->qwatch, on_decision, d);
			else if (tag == EP_SIG)
				on_signal(d);
			else if (tag == EP_TIMER)
				on_timer(d);
			else if (sbx_resolver_is_tag(tag))
				sbx_resolver_event(d, tag, evs[i].events);
			else
				conn_readable(d, evs[i].data.ptr);
		}
		sbx_state_flush(d);
		if (d->embedded && d->embedded_child && !d->sessions)
			break;	/* our one session ended */
	}
	return 0;
}
