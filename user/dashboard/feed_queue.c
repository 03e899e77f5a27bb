// SPDX-License-Identifier: GPL-2.0
/*
 * feed_queue.c - the feed thread: it reads the projects' queues and audit logs
 * into the store (feed_store.h), woken by the queue's watch and every second.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/stat.h>
#include "lib/alloc.h"
#include "lib/clock.h"
#include "lib/fileio.h"
#include "lib/text.h"
#include "queue/queue.h"
#include "queue/watch.h"
#include "user/dashboard/wrap.h"
#include "user/dashboard/feed_store.h"
#include "lib/json.h"

/* ---- small helpers ------------------------------------------------------ */

static void set_str(char **dst, const char *s)
{
	if (!s)
		return;
	free(*dst);
	*dst = sbx_strdup(s);
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

/* ---- the feed thread: requests ------------------------------------------- */

static void notice(struct sbx_feed *f, const struct project *p, const char *text)
{
	feed_push(f, "notice", json_pack("{s:s,s:s}", "project", p->dir, "text", text));
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

	if (sbx_queue_list(p->q, SBX_QDIR_DONE, &a, &err) < 0) {
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
	if (sbx_queue_list(p->q, SBX_QDIR_PENDING, &a, &err) < 0) {
		notice(f, p, err ? err : "cannot list its requests");
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
		feed_push_locked(f, "request", sbx_api_wrap(p->dir, SBX_QDIR_PENDING, r), false);
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
		if (sbx_queue_read(p->q, SBX_QDIR_DONE, k->id, &done, NULL) == 0) {
			pthread_mutex_lock(&f->lock);
			count_decided_locked(f, p, done);
			feed_push_locked(f, "decided", json_pack("{s:s,s:s,s:s,s:o}", "project", p->dir,
							    "state", sbx_qdir_name(SBX_QDIR_DONE), "id", k->id,
							    "request", done), false);
			known_remove_locked(p, i);
			f->sess_dirty = true;
			pthread_mutex_unlock(&f->lock);
			continue;
		}
		if (faccessat(sbx_queue_dirfd(p->q, SBX_QDIR_CLAIMED), name, F_OK,
			      AT_SYMLINK_NOFOLLOW) == 0) {
			if (!k->claimed) {
				pthread_mutex_lock(&f->lock);
				k->claimed = true;
				f->sess_dirty = true;
				feed_push_locked(f, "claimed", json_pack("{s:s,s:s,s:s}", "project", p->dir,
								    "state", sbx_qdir_name(SBX_QDIR_CLAIMED), "id", k->id),
					    false);
				pthread_mutex_unlock(&f->lock);
			}
			i++;
			continue;
		}
		pthread_mutex_lock(&f->lock);
		feed_push_locked(f, "gone", json_pack("{s:s,s:s}", "project", p->dir, "id", k->id), false);
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
			feed_push_locked(f, "event", e, true);
		json_decref(v[i].rec);
		free(v[i].session);
	}
	pthread_mutex_unlock(&f->lock);
	free(v);
}

/* ---- the feed thread --------------------------------------------------------- */

/* a watch that cannot be set is not fatal: the scan every second still
 * finds what changed */
static void add_watches(struct sbx_feed *f, struct project *p)
{
	if (!p->watched) {
		sbx_qwatch_add(f->qw, p->q, SBX_QDIR_PENDING, SBX_QW_ARRIVED | SBX_QW_LEFT);
		sbx_qwatch_add(f->qw, p->q, SBX_QDIR_DONE, SBX_QW_ARRIVED);
		sbx_qwatch_add(f->qw, p->q, SBX_QDIR_CLAIMED, SBX_QW_ARRIVED | SBX_QW_LEFT);
		p->watched = true;
	}
	/* audit/ appears with the first session */
	if (!p->audit_watched)
		p->audit_watched = sbx_qwatch_add_audit(f->qw, p->q, SBX_QW_APPENDED |
							SBX_QW_CREATED | SBX_QW_ARRIVED) >= 0;
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
	uint64_t v;

	while (read(fd, &v, sizeof(v)) > 0)
		;
}

void *feed_queue_main(void *arg)
{
	struct sbx_feed *f = arg;
	int64_t last_wake = sbx_now_ms(), last_sess = 0;

	for (;;) {
		struct pollfd pf[2] = { { .fd = sbx_qwatch_fd(f->qw), .events = POLLIN },
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
			feed_push_locked(f, "sessions", json_object(), false);
		}
		after = f->next;
		pthread_mutex_unlock(&f->lock);
		if (after != before || sbx_now_ms() - last_wake >= KEEPALIVE_MS) {
			feed_wake_streams(f);
			last_wake = sbx_now_ms();
		}
		if (poll(pf, 2, 1000) > 0) {
			sbx_qwatch_read(f->qw, NULL, NULL);
			drain(f->wakefd);
			/* a writer renames several files in a row: take them together */
			usleep(20000);
			sbx_qwatch_read(f->qw, NULL, NULL);
		}
	}
	return NULL;
}
