// SPDX-License-Identifier: GPL-2.0
/*
 * feed.c - the dashboard's store (feed.h, feed_store.h): the ring of messages
 * that the threads fill and the streams read, the projects, life cycle.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/eventfd.h>
#include <sys/stat.h>
#include "lib/alloc.h"
#include "lib/text.h"
#include "queue/queue.h"
#include "queue/watch.h"
#include "user/dashboard/feed_store.h"
#include "lib/json.h"

/* ---- the ring ----------------------------------------------------------- */

uint64_t feed_oldest_locked(const struct sbx_feed *f)
{
	uint64_t n = f->next - 1;

	return f->next - (n < SBX_FEED_RING ? n : SBX_FEED_RING);
}

/* with the lock held; takes the reference to data */
void feed_push_locked(struct sbx_feed *f, const char *type, json_t *data, bool is_event)
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

void feed_push(struct sbx_feed *f, const char *type, json_t *data)
{
	pthread_mutex_lock(&f->lock);
	feed_push_locked(f, type, data, false);
	pthread_mutex_unlock(&f->lock);
}

/* resume every stream that waits for news (never under the lock: MHD
 * takes its own locks in MHD_resume_connection) */
void feed_wake_streams(struct sbx_feed *f)
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

/* ---- projects ---------------------------------------------------------------- */

static struct project *project_find_locked(struct sbx_feed *f, const char *dir)
{
	for (size_t i = 0; i < f->nprojects; i++)
		if (!strcmp(f->projects[i]->dir, dir))
			return f->projects[i];
	return NULL;
}

static bool can_write(struct sbx_queue *q, enum sbx_qdir sub)
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
	} else if (!can_write(p->q, SBX_QDIR_PENDING) || !can_write(p->q, SBX_QDIR_CLAIMED) ||
		   !can_write(p->q, SBX_QDIR_DONE)) {
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

/* ---- life cycle ---------------------------------------------------------------- */

struct sbx_feed *sbx_feed_new(void)
{
	struct sbx_feed *f = sbx_calloc(1, sizeof(*f));

	pthread_mutex_init(&f->lock, NULL);
	pthread_cond_init(&f->cond, NULL);
	f->ring = sbx_calloc(SBX_FEED_RING, sizeof(*f->ring));
	f->next = 1;
	f->wakefd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	f->qw = sbx_qwatch_new();
	return f;
}

int sbx_feed_start(struct sbx_feed *f, bool use_daemon)
{
	int rc;

	if (f->wakefd < 0 || !f->qw)
		return -EMFILE;
	f->use_daemon = use_daemon;
	rc = -pthread_create(&f->feed_th, NULL, feed_queue_main, f);
	if (rc)
		return rc;
	if (use_daemon) {
		rc = -pthread_create(&f->sess_th, NULL, feed_daemon_main, f);
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
	feed_wake_streams(f);
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
	sbx_qwatch_free(f->qw);
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
