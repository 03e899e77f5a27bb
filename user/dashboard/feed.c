// SPDX-License-Identifier: GPL-2.0
/*
 * feed.c - the dashboard's store and the threads that fill it (feed.h).
 *
 * Invariants:
 * - Only the feed thread touches a project's queue handle, its audit
 *   tails and its list of known requests; it writes them under the lock,
 *   so other threads may read them under the lock.
 * - A message's cursor is its place in the ring (cursor - 1) % RING, and
 *   cursors only grow: a client that asks for messages past its cursor
 *   gets each one once, in order, or learns that it fell behind.
 * - A stream is in the waiters list exactly while its connection is
 *   suspended; a suspended connection is never closed by MHD, so a
 *   waiter's pointer stays valid until it is resumed.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/eventfd.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <microhttpd.h>
#include "lib/alloc.h"
#include "lib/clock.h"
#include "lib/log.h"
#include "lib/text.h"
#include "queue/queue.h"
#include "user/control/control_client.h"
#include "user/dashboard/wrap.h"
#include "user/dashboard/feed.h"
#include "lib/json.h"

#define MAX_PROJECTS 1024
#define KEEPALIVE_MS 15000
#define STATUS_EVERY_MS 2000

struct tail {
	char *name;		/* SESSION.jsonl */
	char *session;
	off_t off;		/* bytes consumed: complete lines only */
	dev_t dev;
	ino_t ino;
};

struct known {			/* a request last seen pending or claimed */
	char *id, *session;
	bool claimed, seen;
};

struct project {
	char *dir;
	bool from_cli, writable, ready;
	char *error;		/* why it cannot be served, for the page */
	struct sbx_queue *q;	/* the feed thread's */
	bool watched, audit_watched;
	struct tail *tails;
	size_t ntails;
	struct known *known;
	size_t nknown;
};

/* what the audit logs and the requests tell of one session */
struct sess {
	char *project, *name;
	char *started, *ended, *policy, *last;
	long long uid;
	bool daemon;		/* a session_start record: the daemon ran it */
	uint64_t deny, ask, audit, allow, approved, denied, records, requests;
};

struct msg {
	uint64_t cursor;
	const char *type;	/* static */
	char *data;		/* compact JSON, one line */
	json_t *ev;		/* events: the object, for /api/events */
};

struct sbx_feed_stream {
	struct sbx_feed *f;
	struct MHD_Connection *conn;
	uint64_t cursor;
	struct sbx_strbuf out;
	size_t outoff;
	int64_t last_write;
	bool waiting, hello;
	struct sbx_feed_stream *next;	/* in the waiters list */
};

struct sbx_feed {
	pthread_mutex_t lock;
	pthread_cond_t cond;
	struct project **projects;
	size_t nprojects;
	struct sess **sess;
	size_t nsess;
	struct msg *ring;
	uint64_t next;		/* the cursor the next message gets; the first is 1 */
	json_t *status;		/* the daemon's last `status` reply */
	char *status_err;	/* why there is none */
	struct sbx_feed_stream *waiters;
	size_t nstreams;
	bool stopping, started, use_daemon, sess_dirty;
	pthread_t feed_th, sess_th;
	int wakefd, ifd;
};

/* ---- small helpers ------------------------------------------------------ */

static void set_str(char **dst, const char *s)
{
	if (!s)
		return;
	free(*dst);
	*dst = sbx_strdup(s);
}

/* ---- the ring ----------------------------------------------------------- */

static uint64_t oldest_locked(const struct sbx_feed *f)
{
	uint64_t n = f->next - 1;

	return f->next - (n < SBX_FEED_RING ? n : SBX_FEED_RING);
}

/* with the lock held; takes the reference to data */
static void push_locked(struct sbx_feed *f, const char *type, json_t *data, bool is_event)
{
	struct msg *m = &f->ring[(f->next - 1) % SBX_FEED_RING];

	free(m->data);
	json_decref(m->ev);
	m->cursor = f->next++;
	m->type = type;
	json_object_set_new(data, "cursor", json_integer((json_int_t)m->cursor));
	m->data = json_dumps(data, JSON_COMPACT);
	m->ev = is_event ? data : NULL;
	if (!is_event)
		json_decref(data);
}

static void push(struct sbx_feed *f, const char *type, json_t *data)
{
	pthread_mutex_lock(&f->lock);
	push_locked(f, type, data, false);
	pthread_mutex_unlock(&f->lock);
}

/* resume every stream that waits for news (never under the lock: MHD
 * takes its own locks in MHD_resume_connection) */
static void wake_streams(struct sbx_feed *f)
{
	struct sbx_feed_stream *w;

	pthread_mutex_lock(&f->lock);
	w = f->waiters;
	f->waiters = NULL;
	for (struct sbx_feed_stream *s = w; s; s = s->next)
		s->waiting = false;
	pthread_mutex_unlock(&f->lock);
	while (w) {
		struct sbx_feed_stream *n = w->next;

		w->next = NULL;
		MHD_resume_connection(w->conn);
		w = n;
	}
}

/* ---- sessions, as the logs and the queue tell them -------------------------- */

static struct sess *sess_get_locked(struct sbx_feed *f, const char *project, const char *name)
{
	struct sess *s;

	for (size_t i = 0; i < f->nsess; i++)
		if (!strcmp(f->sess[i]->name, name) && !strcmp(f->sess[i]->project, project))
			return f->sess[i];
	s = sbx_calloc(1, sizeof(*s));
	s->project = sbx_strdup(project);
	s->name = sbx_strdup(name);
	s->uid = -1;
	f->sess = sbx_realloc_array(f->sess, f->nsess + 1, sizeof(*f->sess));
	f->sess[f->nsess++] = s;
	return s;
}

static void count_verdict(struct sess *s, const char *v, uint64_t n)
{
	if (!v)
		return;
	if (!strcmp(v, "deny"))
		s->deny += n;
	else if (!strcmp(v, "ask"))
		s->ask += n;
	else if (!strcmp(v, "audit"))
		s->audit += n;
	else if (!strcmp(v, "allow"))
		s->allow += n;
}

static void sess_record_locked(struct sbx_feed *f, const char *project, const char *session,
			       const json_t *rec)
{
	struct sess *s = sess_get_locked(f, project, session);
	const char *ev = sbx_json_str(rec, "event") ?: "";

	s->records++;
	set_str(&s->last, sbx_json_str(rec, "time"));
	if (!strcmp(ev, "session_start")) {
		s->daemon = true;
		set_str(&s->started, sbx_json_str(rec, "time"));
		set_str(&s->policy, sbx_json_str(rec, "policy"));
		if (json_is_integer(json_object_get(rec, "uid")))
			s->uid = json_integer_value(json_object_get(rec, "uid"));
	} else if (!strcmp(ev, "session_end")) {
		set_str(&s->ended, sbx_json_str(rec, "time"));
	} else if (!strcmp(ev, "kernel")) {
		count_verdict(s, sbx_json_str(rec, "verdict"), 1);
	} else if (!strcmp(ev, "kernel_repeats")) {
		json_int_t r = json_integer_value(json_object_get(rec, "repeats"));

		count_verdict(s, sbx_json_str(rec, "verdict"), r > 0 ? (uint64_t)r : 0);
	}
	if (!s->started && sbx_json_str(rec, "time"))
		set_str(&s->started, sbx_json_str(rec, "time"));
	f->sess_dirty = true;
}

/* ---- projects ---------------------------------------------------------------- */

static struct project *project_find_locked(struct sbx_feed *f, const char *dir)
{
	for (size_t i = 0; i < f->nprojects; i++)
		if (!strcmp(f->projects[i]->dir, dir))
			return f->projects[i];
	return NULL;
}

static bool can_write(struct sbx_queue *q, const char *sub)
{
	return faccessat(sbx_queue_dirfd(q, sub), ".", W_OK | X_OK, AT_EACCESS) == 0;
}

int sbx_feed_add_project(struct sbx_feed *f, const char *dir, bool from_cli, char **err)
{
	char *real = realpath(dir, NULL), *sbx = NULL, *qerr = NULL;
	struct project *p;
	struct stat st;
	unsigned flags = 0;
	int rc = 0;

	if (err)
		*err = NULL;
	if (!real) {
		rc = -errno;
		if (err)
			*err = sbx_asprintf("%s: %s", dir, strerror(errno));
		if (from_cli)
			return rc;
		real = sbx_strdup(dir);
	}
	pthread_mutex_lock(&f->lock);
	p = project_find_locked(f, real);
	pthread_mutex_unlock(&f->lock);
	if (p) {
		free(real);
		return 0;
	}
	p = sbx_calloc(1, sizeof(*p));
	p->dir = real;
	p->from_cli = from_cli;
	/* like watch: escalations/ is created only where .sandbox is */
	sbx = sbx_asprintf("%s/.sandbox", real);
	if (from_cli && lstat(sbx, &st) == 0 && S_ISDIR(st.st_mode))
		flags = SBX_Q_CREATE;
	free(sbx);
	if (!rc)
		p->q = sbx_queue_open(real, flags, (uid_t)-1, (gid_t)-1, &qerr);
	if (rc) {
		p->error = sbx_strdup(err && *err ? *err : strerror(-rc));
	} else if (!p->q) {
		rc = -EACCES;
		p->error = sbx_asprintf("%s", qerr ? qerr : "cannot open its queue");
		if (err)
			*err = sbx_asprintf("%s: %s", real, p->error);
	} else if (!can_write(p->q, "pending") || !can_write(p->q, "claimed") ||
		   !can_write(p->q, "done")) {
		/* who may decide is who may write the queue, as for watch */
		rc = -EACCES;
		p->error = sbx_strdup("you cannot write its escalations/: its requests are "
				      "not yours to decide");
		if (err)
			*err = sbx_asprintf("%s: %s", real, p->error);
		sbx_queue_close(p->q);
		p->q = NULL;
	} else {
		p->writable = true;
	}
	free(qerr);
	if (rc && from_cli) {
		free(p->error);
		free(p->dir);
		free(p);
		return rc;
	}
	pthread_mutex_lock(&f->lock);
	if (f->nprojects >= MAX_PROJECTS || project_find_locked(f, p->dir)) {
		pthread_mutex_unlock(&f->lock);
		sbx_queue_close(p->q);
		free(p->error);
		free(p->dir);
		free(p);
		return from_cli ? -ENOSPC : 0;
	}
	f->projects = sbx_realloc_array(f->projects, f->nprojects + 1, sizeof(*f->projects));
	f->projects[f->nprojects++] = p;
	pthread_mutex_unlock(&f->lock);
	if (f->wakefd >= 0) {
		uint64_t one = 1;

		if (write(f->wakefd, &one, sizeof(one)) < 0) {
			/* the feed thread also looks every second */
		}
	}
	return 0;
}

char **sbx_feed_project_dirs(struct sbx_feed *f, size_t *n)
{
	char **v;

	pthread_mutex_lock(&f->lock);
	v = sbx_calloc(f->nprojects + 1, sizeof(*v));
	*n = 0;
	for (size_t i = 0; i < f->nprojects; i++)
		if (f->projects[i]->writable)
			v[(*n)++] = sbx_strdup(f->projects[i]->dir);
	pthread_mutex_unlock(&f->lock);
	return v;
}

json_t *sbx_feed_projects_json(struct sbx_feed *f)
{
	json_t *a = json_array();

	pthread_mutex_lock(&f->lock);
	for (size_t i = 0; i < f->nprojects; i++) {
		struct project *p = f->projects[i];
		json_t *o = json_pack("{s:s,s:b,s:b}", "dir", p->dir, "writable", p->writable,
				      "from_command_line", p->from_cli);

		if (p->error)
			json_object_set_new(o, "error", json_string(p->error));
		json_array_append_new(a, o);
	}
	pthread_mutex_unlock(&f->lock);
	return a;
}

/* ---- the feed thread: requests ------------------------------------------- */

static void notice(struct sbx_feed *f, const struct project *p, const char *text)
{
	push(f, "notice", json_pack("{s:s,s:s}", "project", p->dir, "text", text));
}

/* a decided request of a session (the queue's done/, not the audit's
 * decision records, which only a daemon writes) */
static void count_decided_locked(struct sbx_feed *f, const struct project *p, const json_t *done)
{
	const char *session = sbx_json_str(done, "session");
	const json_t *d = json_object_get(done, "decision");
	struct sess *s;

	if (!session || !d)
		return;
	s = sess_get_locked(f, p->dir, session);
	if (json_is_true(json_object_get(d, "approve")) ||
	    (sbx_json_str(d, "verdict") && !strcmp(sbx_json_str(d, "verdict"), "approve")))
		s->approved++;
	else
		s->denied++;
	f->sess_dirty = true;
}

/* at the first scan: what was decided before this dashboard started */
static void scan_done(struct sbx_feed *f, struct project *p)
{
	json_t *a = NULL, *r;
	char *err = NULL;
	size_t i;

	if (sbx_queue_list(p->q, "done", &a, &err) < 0) {
		free(err);
		return;
	}
	if (err)
		notice(f, p, err);
	free(err);
	pthread_mutex_lock(&f->lock);
	json_array_foreach(a, i, r)
		count_decided_locked(f, p, r);
	pthread_mutex_unlock(&f->lock);
	json_decref(a);
}

static struct known *known_find(struct project *p, const char *id)
{
	for (size_t i = 0; i < p->nknown; i++)
		if (!strcmp(p->known[i].id, id))
			return &p->known[i];
	return NULL;
}

static void known_remove_locked(struct project *p, size_t i)
{
	free(p->known[i].id);
	free(p->known[i].session);
	p->known[i] = p->known[--p->nknown];
}

static void scan_pending(struct sbx_feed *f, struct project *p)
{
	json_t *a = NULL, *r;
	char *err = NULL;
	size_t i;

	sbx_queue_expire(p->q, time(NULL), NULL);	/* denied at their deadline */
	if (sbx_queue_list(p->q, "pending", &a, &err) < 0) {
		notice(f, p, err ? err : "cannot list escalations/pending/");
		free(err);
		return;
	}
	if (err) {
		/* malformed files were moved to quarantine/: say so */
		notice(f, p, err);
		free(err);
	}
	for (i = 0; i < p->nknown; i++)
		p->known[i].seen = false;
	json_array_foreach(a, i, r) {
		const char *id = sbx_json_str(r, "id");
		struct known *k = id ? known_find(p, id) : NULL;

		if (!id)
			continue;
		if (k) {
			k->seen = true;
			continue;
		}
		pthread_mutex_lock(&f->lock);
		p->known = sbx_realloc_array(p->known, p->nknown + 1, sizeof(*p->known));
		p->known[p->nknown++] = (struct known){ .id = sbx_strdup(id),
			.session = sbx_strdup(sbx_json_str(r, "session") ?: ""), .seen = true };
		if (sbx_json_str(r, "session")) {
			struct sess *ss = sess_get_locked(f, p->dir, sbx_json_str(r, "session"));
			json_t *uid = json_object_get(json_object_get(r, "process"), "uid");

			ss->requests++;
			if (ss->uid < 0 && json_is_integer(uid))
				ss->uid = json_integer_value(uid);
		}
		f->sess_dirty = true;
		push_locked(f, "request", sbx_api_wrap(p->dir, "pending", r), false);
		pthread_mutex_unlock(&f->lock);
	}
	json_decref(a);
	/* the ones no longer pending: claimed, decided, or gone */
	for (i = 0; i < p->nknown;) {
		struct known *k = &p->known[i];
		char name[SBX_ID_MAX + 8];
		json_t *done = NULL;

		if (k->seen) {
			i++;
			continue;
		}
		snprintf(name, sizeof(name), "%s.json", k->id);
		if (sbx_queue_read(p->q, "done", k->id, &done, NULL) == 0) {
			pthread_mutex_lock(&f->lock);
			count_decided_locked(f, p, done);
			push_locked(f, "decided", json_pack("{s:s,s:s,s:s,s:o}", "project", p->dir,
							    "state", "done", "id", k->id,
							    "request", done), false);
			known_remove_locked(p, i);
			f->sess_dirty = true;
			pthread_mutex_unlock(&f->lock);
			continue;
		}
		if (faccessat(sbx_queue_dirfd(p->q, "claimed"), name, F_OK,
			      AT_SYMLINK_NOFOLLOW) == 0) {
			if (!k->claimed) {
				pthread_mutex_lock(&f->lock);
				k->claimed = true;
				f->sess_dirty = true;
				push_locked(f, "claimed", json_pack("{s:s,s:s,s:s}", "project", p->dir,
								    "state", "claimed", "id", k->id),
					    false);
				pthread_mutex_unlock(&f->lock);
			}
			i++;
			continue;
		}
		pthread_mutex_lock(&f->lock);
		push_locked(f, "gone", json_pack("{s:s,s:s}", "project", p->dir, "id", k->id), false);
		known_remove_locked(p, i);
		f->sess_dirty = true;
		pthread_mutex_unlock(&f->lock);
	}
}

/* ---- the feed thread: audit logs ---------------------------------------------- */

struct line {
	char *session;
	json_t *rec;
};

static int cmp_line_time(const void *a, const void *b)
{
	const char *x = sbx_json_str(((const struct line *)a)->rec, "time") ?: "";
	const char *y = sbx_json_str(((const struct line *)b)->rec, "time") ?: "";

	return strcmp(x, y);
}

/* complete lines of one log from t->off on, appended to *v */
static void read_tail(int afd, struct tail *t, struct line **v, size_t *n)
{
	int fd = sbx_openat_beneath(afd, t->name, O_RDONLY | O_CLOEXEC | O_NOFOLLOW, 0);
	struct stat st;
	char *buf;
	off_t start;
	ssize_t got;
	size_t len, pos = 0;

	if (fd < 0)
		return;
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		close(fd);
		return;
	}
	if (st.st_dev != t->dev || st.st_ino != t->ino || st.st_size < t->off) {
		/* a new file under the name, or cut short: read it again */
		bool first = t->dev == 0 && t->ino == 0;

		t->dev = st.st_dev;
		t->ino = st.st_ino;
		t->off = 0;
		if (first && st.st_size > (off_t)SBX_FEED_TAIL_BYTES)
			t->off = st.st_size - (off_t)SBX_FEED_TAIL_BYTES;
	}
	if (st.st_size == t->off) {
		close(fd);
		return;
	}
	start = t->off;
	len = (size_t)(st.st_size - start);
	if (len > 8 * SBX_FEED_TAIL_BYTES)
		len = 8 * SBX_FEED_TAIL_BYTES;	/* the rest on the next round */
	buf = malloc(len + 1);
	if (!buf) {
		close(fd);
		return;
	}
	got = pread(fd, buf, len, start);
	close(fd);
	if (got <= 0) {
		free(buf);
		return;
	}
	len = (size_t)got;
	if (start > 0 && t->off == start && (t->dev || t->ino)) {
		/* started in the middle of a long log: skip to a line start,
		 * unless the byte before is a newline */
		char prev = 0;
		int fd2 = sbx_openat_beneath(afd, t->name, O_RDONLY | O_CLOEXEC | O_NOFOLLOW, 0);

		if (fd2 >= 0) {
			if (pread(fd2, &prev, 1, start - 1) != 1)
				prev = '\n';
			close(fd2);
		}
		if (prev != '\n') {
			char *nl = memchr(buf, '\n', len);

			pos = nl ? (size_t)(nl - buf) + 1 : len;
		}
	}
	while (pos < len) {
		char *nl = memchr(buf + pos, '\n', len - pos);
		json_error_t jerr;
		json_t *rec;

		if (!nl)
			break;	/* being written: wait for the rest */
		rec = json_loadb(buf + pos, (size_t)(nl - (buf + pos)), 0, &jerr);
		if (json_is_object(rec)) {
			*v = sbx_realloc_array(*v, *n + 1, sizeof(**v));
			(*v)[(*n)++] = (struct line){ .session = sbx_strdup(t->session), .rec = rec };
		} else {
			json_decref(rec);
		}
		pos = (size_t)(nl - buf) + 1;
	}
	t->off = start + (off_t)pos;
	free(buf);
}

static bool is_log_name(const char *n)
{
	size_t l = strlen(n);

	return n[0] != '.' && l > 6 && !strcmp(n + l - 6, ".jsonl");
}

static void scan_audit(struct sbx_feed *f, struct project *p, bool initial)
{
	int afd = sbx_openat_beneath(sbx_queue_sandbox_fd(p->q), "audit",
				     O_RDONLY | O_DIRECTORY | O_CLOEXEC, 0);
	struct line *v = NULL;
	struct dirent *de;
	size_t n = 0;
	DIR *d;
	int dfd;

	if (afd < 0)
		return;
	dfd = dup(afd);
	d = dfd >= 0 ? fdopendir(dfd) : NULL;
	if (!d) {
		if (dfd >= 0)
			close(dfd);
		close(afd);
		return;
	}
	while ((de = readdir(d))) {
		struct tail *t = NULL;

		if (!is_log_name(de->d_name))
			continue;
		for (size_t i = 0; i < p->ntails && !t; i++)
			if (!strcmp(p->tails[i].name, de->d_name))
				t = &p->tails[i];
		if (!t) {
			size_t l = strlen(de->d_name);

			p->tails = sbx_realloc_array(p->tails, p->ntails + 1, sizeof(*p->tails));
			t = &p->tails[p->ntails++];
			memset(t, 0, sizeof(*t));
			t->name = sbx_strdup(de->d_name);
			t->session = strndup(de->d_name, l - 6);
		}
		read_tail(afd, t, &v, &n);
	}
	closedir(d);
	close(afd);
	if (!n)
		return;
	if (initial)
		qsort(v, n, sizeof(*v), cmp_line_time);
	pthread_mutex_lock(&f->lock);
	for (size_t i = 0; i < n; i++) {
		const json_t *rec = v[i].rec;
		const char *ev = sbx_json_str(rec, "event");
		json_t *e = json_pack("{s:s,s:s,s:s?,s:s?,s:s?,s:s?,s:O}", "project", p->dir,
				      "session", v[i].session, "kind", ev, "verdict",
				      sbx_json_str(rec, "verdict"), "operation",
				      sbx_json_str(rec, "operation") ?: ev, "time", sbx_json_str(rec, "time"),
				      "record", rec);

		sess_record_locked(f, p->dir, v[i].session, rec);
		if (e)
			push_locked(f, "event", e, true);
		json_decref(v[i].rec);
		free(v[i].session);
	}
	pthread_mutex_unlock(&f->lock);
	free(v);
}

/* ---- the feed thread --------------------------------------------------------- */

static void watch_dir(struct sbx_feed *f, int dirfd, uint32_t mask)
{
	char path[64];

	snprintf(path, sizeof(path), "/proc/self/fd/%d", dirfd);
	if (inotify_add_watch(f->ifd, path, mask) < 0) {
		/* the scan every second still finds what changed */
	}
}

static void add_watches(struct sbx_feed *f, struct project *p)
{
	if (!p->watched) {
		watch_dir(f, sbx_queue_dirfd(p->q, "pending"),
			  IN_MOVED_TO | IN_CLOSE_WRITE | IN_MOVED_FROM | IN_DELETE);
		watch_dir(f, sbx_queue_dirfd(p->q, "done"), IN_MOVED_TO | IN_CLOSE_WRITE);
		watch_dir(f, sbx_queue_dirfd(p->q, "claimed"), IN_MOVED_TO | IN_DELETE);
		p->watched = true;
	}
	if (!p->audit_watched) {
		/* audit/ appears with the first session */
		int afd = sbx_openat_beneath(sbx_queue_sandbox_fd(p->q), "audit",
					     O_RDONLY | O_DIRECTORY | O_CLOEXEC, 0);

		if (afd >= 0) {
			watch_dir(f, afd, IN_MODIFY | IN_CREATE | IN_MOVED_TO | IN_CLOSE_WRITE);
			close(afd);
			p->audit_watched = true;
		}
	}
}

static struct project **snapshot_projects(struct sbx_feed *f, size_t *n)
{
	struct project **v;

	pthread_mutex_lock(&f->lock);
	*n = f->nprojects;
	v = sbx_calloc(*n + 1, sizeof(*v));
	memcpy(v, f->projects, *n * sizeof(*v));
	pthread_mutex_unlock(&f->lock);
	return v;
}

static void drain(int fd)
{
	char buf[4096] __attribute__((aligned(__alignof__(struct inotify_event))));

	while (read(fd, buf, sizeof(buf)) > 0)
		;
}

static void *feed_main(void *arg)
{
	struct sbx_feed *f = arg;
	int64_t last_wake = sbx_now_ms(), last_sess = 0;

	for (;;) {
		struct pollfd pf[2] = { { .fd = f->ifd, .events = POLLIN },
					{ .fd = f->wakefd, .events = POLLIN } };
		struct project **ps;
		uint64_t before, after;
		size_t n;
		bool stop;

		pthread_mutex_lock(&f->lock);
		stop = f->stopping;
		before = f->next;
		pthread_mutex_unlock(&f->lock);
		if (stop)
			break;
		ps = snapshot_projects(f, &n);
		for (size_t i = 0; i < n; i++) {
			struct project *p = ps[i];
			bool initial = !p->ready;

			if (!p->q)
				continue;
			add_watches(f, p);
			if (initial)
				scan_done(f, p);
			scan_audit(f, p, initial);
			scan_pending(f, p);
			if (initial) {
				pthread_mutex_lock(&f->lock);
				p->ready = true;
				pthread_mutex_unlock(&f->lock);
			}
		}
		free(ps);
		pthread_mutex_lock(&f->lock);
		if (f->sess_dirty && sbx_now_ms() - last_sess >= 1000) {
			f->sess_dirty = false;
			last_sess = sbx_now_ms();
			push_locked(f, "sessions", json_object(), false);
		}
		after = f->next;
		pthread_mutex_unlock(&f->lock);
		if (after != before || sbx_now_ms() - last_wake >= KEEPALIVE_MS) {
			wake_streams(f);
			last_wake = sbx_now_ms();
		}
		if (poll(pf, 2, 1000) > 0) {
			drain(f->ifd);
			drain(f->wakefd);
			/* a writer renames several files in a row: take them together */
			usleep(20000);
			drain(f->ifd);
		}
	}
	return NULL;
}

/* ---- the sessions thread: the daemon's view ----------------------------------- */

static void *sess_main(void *arg)
{
	struct sbx_feed *f = arg;
	char *prev = NULL;

	for (;;) {
		json_t *req = json_pack("{s:s}", "op", "status"), *r = NULL, *v;
		char *err = NULL, *now = NULL;
		struct timespec until;
		size_t i;
		bool stop;
		int rc;

		rc = sbx_ctl_call(req, &r, &err);
		json_decref(req);
		if (!rc && !json_is_true(json_object_get(r, "ok"))) {
			err = sbx_strdup(sbx_json_str(r, "error") ?: "the daemon refused `status`");
			json_decref(r);
			r = NULL;
			rc = -EPROTO;
		}
		json_array_foreach(json_object_get(r, "sessions"), i, v)
			if (sbx_json_str(v, "project"))
				sbx_feed_add_project(f, sbx_json_str(v, "project"), false, NULL);
		now = r ? json_dumps(json_object_get(r, "sessions"), JSON_COMPACT | JSON_SORT_KEYS)
			: sbx_strdup("");
		pthread_mutex_lock(&f->lock);
		json_decref(f->status);
		f->status = r;
		free(f->status_err);
		f->status_err = rc ? err : NULL;
		if (!rc)
			free(err);
		if (!prev || !now || strcmp(prev, now))
			push_locked(f, "sessions", json_object(), false);
		free(prev);
		prev = now;
		stop = f->stopping;
		if (!stop) {
			clock_gettime(CLOCK_REALTIME, &until);
			until.tv_sec += STATUS_EVERY_MS / 1000;
			pthread_cond_timedwait(&f->cond, &f->lock, &until);
			stop = f->stopping;
		}
		pthread_mutex_unlock(&f->lock);
		if (stop)
			break;
	}
	free(prev);
	return NULL;
}

/* ---- life cycle ---------------------------------------------------------------- */

struct sbx_feed *sbx_feed_new(void)
{
	struct sbx_feed *f = sbx_calloc(1, sizeof(*f));

	pthread_mutex_init(&f->lock, NULL);
	pthread_cond_init(&f->cond, NULL);
	f->ring = sbx_calloc(SBX_FEED_RING, sizeof(*f->ring));
	f->next = 1;
	f->wakefd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	f->ifd = inotify_init1(IN_CLOEXEC | IN_NONBLOCK);
	return f;
}

int sbx_feed_start(struct sbx_feed *f, bool use_daemon)
{
	int rc;

	if (f->wakefd < 0 || f->ifd < 0)
		return -EMFILE;
	f->use_daemon = use_daemon;
	rc = -pthread_create(&f->feed_th, NULL, feed_main, f);
	if (rc)
		return rc;
	if (use_daemon) {
		rc = -pthread_create(&f->sess_th, NULL, sess_main, f);
		if (rc) {
			sbx_feed_stop(f);
			return rc;
		}
	}
	f->started = true;
	return 0;
}

void sbx_feed_stop(struct sbx_feed *f)
{
	uint64_t one = 1;
	bool was;

	pthread_mutex_lock(&f->lock);
	was = f->stopping;
	f->stopping = true;
	pthread_cond_broadcast(&f->cond);
	pthread_mutex_unlock(&f->lock);
	if (was)
		return;
	if (write(f->wakefd, &one, sizeof(one)) < 0) {
		/* the feed thread looks at least every second */
	}
	wake_streams(f);
	if (f->started) {
		pthread_join(f->feed_th, NULL);
		if (f->use_daemon)
			pthread_join(f->sess_th, NULL);
		f->started = false;
	}
}

void sbx_feed_free(struct sbx_feed *f)
{
	if (!f)
		return;
	sbx_feed_stop(f);
	for (size_t i = 0; i < f->nprojects; i++) {
		struct project *p = f->projects[i];

		for (size_t k = 0; k < p->ntails; k++) {
			free(p->tails[k].name);
			free(p->tails[k].session);
		}
		free(p->tails);
		for (size_t k = 0; k < p->nknown; k++) {
			free(p->known[k].id);
			free(p->known[k].session);
		}
		free(p->known);
		sbx_queue_close(p->q);
		free(p->error);
		free(p->dir);
		free(p);
	}
	free(f->projects);
	for (size_t i = 0; i < f->nsess; i++) {
		struct sess *s = f->sess[i];

		free(s->project);
		free(s->name);
		free(s->started);
		free(s->ended);
		free(s->policy);
		free(s->last);
		free(s);
	}
	free(f->sess);
	for (size_t i = 0; i < SBX_FEED_RING; i++) {
		free(f->ring[i].data);
		json_decref(f->ring[i].ev);
	}
	free(f->ring);
	json_decref(f->status);
	free(f->status_err);
	if (f->wakefd >= 0)
		close(f->wakefd);
	if (f->ifd >= 0)
		close(f->ifd);
	pthread_cond_destroy(&f->cond);
	pthread_mutex_destroy(&f->lock);
	free(f);
}

void sbx_feed_poke(struct sbx_feed *f)
{
	uint64_t one = 1;

	if (write(f->wakefd, &one, sizeof(one)) < 0) {
		/* the feed thread looks at least every second */
	}
}

/* ---- answers ---------------------------------------------------------------------- */

uint64_t sbx_feed_cursor(struct sbx_feed *f)
{
	uint64_t c;

	pthread_mutex_lock(&f->lock);
	c = f->next - 1;
	pthread_mutex_unlock(&f->lock);
	return c;
}

static char *user_name(long long uid)
{
	struct passwd pw, *res = NULL;
	char buf[4096];

	if (uid < 0)
		return NULL;
	if (getpwuid_r((uid_t)uid, &pw, buf, sizeof(buf), &res) || !res)
		return sbx_asprintf("%lld", uid);
	return sbx_strdup(res->pw_name);
}

/* "20261130T101503Z-a1b2c3": the daemon names sessions by their start */
static char *started_from_name(const char *name)
{
	int y, mo, d, h, mi, s;

	if (!name || sscanf(name, "%4d%2d%2dT%2d%2d%2dZ-", &y, &mo, &d, &h, &mi, &s) != 6)
		return NULL;
	return sbx_asprintf("%04d-%02d-%02dT%02d:%02d:%02dZ", y, mo, d, h, mi, s);
}

static size_t pending_of_locked(struct sbx_feed *f, const char *project, const char *name,
				bool claimed)
{
	size_t n = 0;

	for (size_t i = 0; i < f->nprojects; i++) {
		struct project *p = f->projects[i];

		if (project && strcmp(p->dir, project))
			continue;
		for (size_t k = 0; k < p->nknown; k++)
			if (p->known[k].claimed == claimed && !strcmp(p->known[k].session, name))
				n++;
	}
	return n;
}

static json_t *sess_json_locked(struct sbx_feed *f, const struct sess *s, const json_t *live,
				bool daemon_up, bool embedded)
{
	const char *name = s ? s->name : sbx_json_str(live, "name");
	const char *project = live && sbx_json_str(live, "project") ? sbx_json_str(live, "project") :
			      s ? s->project : NULL;
	long long uid = live ? json_integer_value(json_object_get(live, "uid")) :
		       s ? s->uid : -1;
	char *user = user_name(uid), *from_name = started_from_name(name);
	const char *mode;
	json_t *o, *c;

	if (live)
		mode = embedded ? "kernel (embedded daemon)" : "kernel";
	else if (s && s->ended)
		mode = "ended";
	else if (s && s->daemon)
		mode = daemon_up ? "ended" : "unknown (no daemon to ask)";
	else
		mode = "connector only (no kernel session)";
	c = json_pack("{s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:I}",
		      "pending", (json_int_t)pending_of_locked(f, s ? s->project : NULL, name, false),
		      "claimed", (json_int_t)pending_of_locked(f, s ? s->project : NULL, name, true),
		      "requests", (json_int_t)(s ? s->requests : 0),
		      "deny", (json_int_t)(s ? s->deny : 0), "ask", (json_int_t)(s ? s->ask : 0),
		      "audit", (json_int_t)(s ? s->audit : 0),
		      "approved", (json_int_t)(s ? s->approved : 0),
		      "denied", (json_int_t)(s ? s->denied : 0),
		      "records", (json_int_t)(s ? s->records : 0),
		      "allow", (json_int_t)(s ? s->allow : 0));
	if (live) {
		json_object_set(c, "grants", json_object_get(live, "grants"));
		json_object_set(c, "rules", json_object_get(live, "rules"));
	}
	o = json_pack("{s:s,s:s?,s:I,s:s?,s:s?,s:s,s:b,s:s?,s:s?,s:s?,s:o}",
		      "name", name, "project", project, "uid", (json_int_t)uid, "user", user,
		      "policy", live && sbx_json_str(live, "policy") ? sbx_json_str(live, "policy") :
				s ? s->policy : NULL,
		      "mode", mode, "live", live != NULL,
		      "started", s && s->started ? s->started : from_name,
		      "ended", s ? s->ended : NULL, "last", s ? s->last : NULL,
		      "counters", c);
	if (live && json_is_boolean(json_object_get(live, "populated")))
		json_object_set(o, "populated", json_object_get(live, "populated"));
	free(user);
	free(from_name);
	return o;
}

json_t *sbx_feed_sessions_json(struct sbx_feed *f)
{
	json_t *out = json_object(), *a = json_array(), *dmn, *v;
	bool up, embedded;
	size_t i;

	pthread_mutex_lock(&f->lock);
	up = f->status != NULL;
	embedded = json_is_true(json_object_get(f->status, "embedded"));
	dmn = json_pack("{s:b}", "running", up);
	if (up) {
		json_object_set(dmn, "pid", json_object_get(f->status, "daemon_pid"));
		json_object_set(dmn, "embedded", json_object_get(f->status, "embedded"));
		json_object_set(dmn, "stats", json_object_get(f->status, "stats"));
	} else {
		json_object_set_new(dmn, "error", json_string(f->use_daemon ?
			(f->status_err ? f->status_err : "not asked yet") :
			"not asked (daemon-less)"));
	}
	json_array_foreach(json_object_get(f->status, "sessions"), i, v) {
		const struct sess *s = NULL;

		for (size_t k = 0; k < f->nsess && !s; k++)
			if (sbx_json_str(v, "name") && !strcmp(f->sess[k]->name, sbx_json_str(v, "name")))
				s = f->sess[k];
		json_array_append_new(a, sess_json_locked(f, s, v, true, embedded));
	}
	for (size_t k = 0; k < f->nsess; k++) {
		const struct sess *s = f->sess[k];
		bool live = false;

		json_array_foreach(json_object_get(f->status, "sessions"), i, v)
			live |= sbx_json_str(v, "name") && !strcmp(sbx_json_str(v, "name"), s->name);
		if (!live)
			json_array_append_new(a, sess_json_locked(f, s, NULL, up, embedded));
	}
	pthread_mutex_unlock(&f->lock);
	json_object_set_new(out, "daemon", dmn);
	json_object_set_new(out, "sessions", a);
	return out;
}

static bool field_is(const json_t *e, const char *k, const char *want)
{
	const char *v;

	if (!want || !*want)
		return true;
	v = sbx_json_str(e, k);
	return v && !strcmp(v, want);
}

json_t *sbx_feed_events_json(struct sbx_feed *f, const struct sbx_feed_filter *flt)
{
	json_t *a = json_array(), *out;
	time_t since_t = 0;
	bool by_time = flt->since_time && !sbx_time_parse(flt->since_time, &since_t);
	uint64_t oldest, c, upto;
	size_t limit = flt->limit ? flt->limit : 200;
	bool more = false;

	pthread_mutex_lock(&f->lock);
	oldest = oldest_locked(f);
	c = flt->since + 1 > oldest ? flt->since + 1 : oldest;
	if (by_time)
		c = oldest;
	for (; c < f->next; c++) {
		const struct msg *m = &f->ring[(c - 1) % SBX_FEED_RING];
		time_t t;

		if (!m->ev)
			continue;
		if (by_time && (sbx_time_parse(sbx_json_str(m->ev, "time"), &t) || t <= since_t))
			continue;
		if (!field_is(m->ev, "project", flt->project) ||
		    !field_is(m->ev, "session", flt->session) ||
		    !field_is(m->ev, "verdict", flt->verdict) ||
		    !field_is(m->ev, "operation", flt->operation))
			continue;
		if (json_array_size(a) >= limit) {
			more = true;
			break;
		}
		json_array_append(a, m->ev);
	}
	/* with more to come, the cursor is where this page stopped, so that
	 * ?since=CURSOR returns the rest and skips nothing */
	upto = more ? c - 1 : f->next - 1;
	out = json_pack("{s:I,s:I,s:b,s:b,s:o}", "cursor", (json_int_t)upto,
			"oldest", (json_int_t)oldest,
			"truncated", !by_time && flt->since + 1 < oldest && f->next > 1,
			"more", more, "events", a);
	pthread_mutex_unlock(&f->lock);
	return out;
}

/* ---- the live feed (Server-Sent Events) ------------------------------------------ */

/* with the lock held: what the stream has not been sent yet */
static void fill_locked(struct sbx_feed *f, struct sbx_feed_stream *s)
{
	uint64_t oldest = oldest_locked(f);

	if (!s->hello) {
		sbx_sb_printf(&s->out, "retry: 2000\nevent: hello\ndata: {\"cursor\":%llu}\n\n",
			      (unsigned long long)(f->next - 1));
		s->hello = true;
	}
	if (s->cursor + 1 < oldest) {
		/* fell behind the ring: the page reloads what it shows */
		sbx_sb_printf(&s->out, "event: reset\ndata: {\"cursor\":%llu}\n\n",
			      (unsigned long long)(f->next - 1));
		s->cursor = f->next - 1;
	}
	while (s->cursor + 1 < f->next && s->out.len < 65536) {
		const struct msg *m = &f->ring[s->cursor % SBX_FEED_RING];

		s->cursor++;
		if (m->data)
			sbx_sb_printf(&s->out, "id: %llu\nevent: %s\ndata: %s\n\n",
				      (unsigned long long)m->cursor, m->type, m->data);
	}
}

static ssize_t stream_read(void *cls, uint64_t pos, char *buf, size_t max)
{
	struct sbx_feed_stream *s = cls;
	struct sbx_feed *f = s->f;
	size_t n;

	(void)pos;
	pthread_mutex_lock(&f->lock);
	if (f->stopping) {
		pthread_mutex_unlock(&f->lock);
		return MHD_CONTENT_READER_END_OF_STREAM;
	}
	if (s->outoff >= s->out.len) {
		s->out.len = 0;
		s->outoff = 0;
		if (s->out.p)
			s->out.p[0] = 0;
		fill_locked(f, s);
		if (!s->out.len && sbx_now_ms() - s->last_write >= KEEPALIVE_MS - 1000)
			sbx_sb_puts(&s->out, ": keepalive\n\n");
		if (s->out.oom) {
			pthread_mutex_unlock(&f->lock);
			return MHD_CONTENT_READER_END_WITH_ERROR;
		}
	}
	if (s->outoff >= s->out.len) {
		/* nothing to say: sleep until the feed thread has news */
		s->waiting = true;
		s->next = f->waiters;
		f->waiters = s;
		MHD_suspend_connection(s->conn);
		pthread_mutex_unlock(&f->lock);
		return 0;
	}
	n = s->out.len - s->outoff;
	if (n > max)
		n = max;
	memcpy(buf, s->out.p + s->outoff, n);
	s->outoff += n;
	s->last_write = sbx_now_ms();
	pthread_mutex_unlock(&f->lock);
	return (ssize_t)n;
}

static void stream_free(void *cls)
{
	struct sbx_feed_stream *s = cls;
	struct sbx_feed *f = s->f;

	pthread_mutex_lock(&f->lock);
	if (s->waiting) {
		/* not reached (a suspended connection is not closed), but
		 * never leave a freed stream in the list */
		for (struct sbx_feed_stream **pp = &f->waiters; *pp; pp = &(*pp)->next)
			if (*pp == s) {
				*pp = s->next;
				break;
			}
	}
	f->nstreams--;
	pthread_mutex_unlock(&f->lock);
	free(s->out.p);
	free(s);
}

struct MHD_Response *sbx_feed_stream(struct sbx_feed *f, struct MHD_Connection *c,
				     uint64_t cursor)
{
	struct sbx_feed_stream *s;
	struct MHD_Response *r;

	pthread_mutex_lock(&f->lock);
	if (f->nstreams >= SBX_FEED_STREAMS_MAX || f->stopping) {
		pthread_mutex_unlock(&f->lock);
		return NULL;
	}
	f->nstreams++;
	if (cursor > f->next - 1)
		cursor = f->next - 1;
	pthread_mutex_unlock(&f->lock);
	s = sbx_calloc(1, sizeof(*s));
	s->f = f;
	s->conn = c;
	s->cursor = cursor;
	s->last_write = sbx_now_ms();
	r = MHD_create_response_from_callback(MHD_SIZE_UNKNOWN, 16384, stream_read, s, stream_free);
	if (!r)
		stream_free(s);
	return r;
}
