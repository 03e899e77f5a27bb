// SPDX-License-Identifier: GPL-2.0
/*
 * attach.c - links on demand (see attach.h).
 *
 * One mutex orders the loop's session starts against the thread's
 * detach: a start holds off a detach from before the links are made until
 * its session is in d->sessions (or has failed), and a detach under way
 * holds the start until the links are gone, after which the start makes
 * them again. Unpinning a trampoline's link waits for an RCU tasks grace
 * period, which is why a thread does it and not the loop.
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "lib/alloc.h"
#include "lib/clock.h"
#include "lib/log.h"
#include "user/daemon/attach.h"
#include "user/daemon/kernel.h"
#include "user/daemon/state.h"

struct sbx_attach {
	pthread_mutex_t mu;
	pthread_cond_t cv;		/* CLOCK_MONOTONIC */
	pthread_t thread;
	bool thread_up, stop;
	bool attached;
	unsigned idle_s;		/* 0: never detach */
	unsigned starting;		/* session starts under way */
	unsigned live;			/* sessions in d->sessions */
	int64_t idle_since_ms;		/* when live and starting last became 0 */
};

static unsigned count_sessions(const struct sbx_daemon *d)
{
	unsigned n = 0;

	for (const struct sbx_session_rt *s = d->sessions; s; s = s->next)
		n++;
	return n;
}

static void *idle_thread(void *arg)
{
	struct sbx_attach *a = arg;

	pthread_mutex_lock(&a->mu);
	while (!a->stop) {
		int64_t due = a->idle_since_ms + (int64_t)a->idle_s * 1000;
		struct timespec ts;

		if (a->attached && !a->live && !a->starting && sbx_now_ms() >= due) {
			size_t n = 0;
			char *err = NULL;

			/* under the lock: a start waits, then attaches again */
			if (sbx_kernel_detach(&n, &err)) {
				/* some links may be gone: the next start makes
				 * whatever is missing */
				sbx_warn("dropping the links after %u s idle: %s", a->idle_s, err);
				free(err);
			} else {
				sbx_info("no session for %u s: %zu links dropped (bpfsbx runs "
					 "nothing until the next session)", a->idle_s, n);
			}
			a->attached = false;
			continue;
		}
		if (!a->attached || a->live || a->starting) {
			pthread_cond_wait(&a->cv, &a->mu);
			continue;
		}
		ts.tv_sec = due / 1000;
		ts.tv_nsec = (due % 1000) * 1000000L;
		pthread_cond_timedwait(&a->cv, &a->mu, &ts);
	}
	pthread_mutex_unlock(&a->mu);
	return NULL;
}

int sbx_attach_init(struct sbx_daemon *d, unsigned idle_s, char **err)
{
	struct sbx_attach *a = sbx_calloc(1, sizeof(*a));
	pthread_condattr_t ca;
	int rc;

	pthread_mutex_init(&a->mu, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&a->cv, &ca);
	pthread_condattr_destroy(&ca);
	a->idle_s = idle_s;
	a->live = count_sessions(d);
	a->idle_since_ms = sbx_now_ms();
	a->attached = sbx_kernel_attached();
	d->attach = a;
	/* adopted sessions run on these links; with no idle time, so does
	 * every later one, as before links were made on demand */
	if ((a->live || !idle_s) && !a->attached) {
		rc = sbx_kernel_attach(&d->k, d->cg_root, err);
		if (rc)
			return rc;
		a->attached = true;
	}
	if (!idle_s)
		return 0;
	rc = pthread_create(&a->thread, NULL, idle_thread, a);
	if (rc) {
		*err = sbx_asprintf("starting the idle-detach thread: %s", strerror(rc));
		return -rc;
	}
	a->thread_up = true;
	return 0;
}

void sbx_attach_fini(struct sbx_daemon *d)
{
	struct sbx_attach *a = d->attach;

	if (!a)
		return;
	if (a->thread_up) {
		pthread_mutex_lock(&a->mu);
		a->stop = true;
		pthread_cond_signal(&a->cv);
		pthread_mutex_unlock(&a->mu);
		pthread_join(a->thread, NULL);
	}
	pthread_cond_destroy(&a->cv);
	pthread_mutex_destroy(&a->mu);
	free(a);
	d->attach = NULL;
}

int sbx_attach_session_begin(struct sbx_daemon *d, char **err)
{
	struct sbx_attach *a = d->attach;
	int rc = 0;

	pthread_mutex_lock(&a->mu);
	if (!a->attached) {
		uint64_t t = sbx_boot_ns();

		rc = sbx_kernel_attach(&d->k, d->cg_root, err);
		if (!rc) {
			a->attached = true;
			sbx_info("links made for a session (%llu ms)",
				 (unsigned long long)((sbx_boot_ns() - t) / 1000000));
		} else {
			sbx_warn("a session is refused: %s", *err ? *err : strerror(-rc));
		}
	}
	if (!rc)
		a->starting++;
	pthread_mutex_unlock(&a->mu);
	return rc;
}

static void note_sessions(struct sbx_daemon *d, bool done)
{
	struct sbx_attach *a = d->attach;

	if (!a)
		return;
	pthread_mutex_lock(&a->mu);
	if (done && a->starting)
		a->starting--;
	a->live = count_sessions(d);
	if (!a->live && !a->starting)
		a->idle_since_ms = sbx_now_ms();
	pthread_cond_signal(&a->cv);
	pthread_mutex_unlock(&a->mu);
}

void sbx_attach_session_done(struct sbx_daemon *d)
{
	note_sessions(d, true);
}

void sbx_attach_sessions_changed(struct sbx_daemon *d)
{
	note_sessions(d, false);
}

bool sbx_attach_idle(struct sbx_daemon *d)
{
	struct sbx_attach *a = d->attach;
	bool idle;

	if (!a || !a->idle_s)
		return false;
	pthread_mutex_lock(&a->mu);
	idle = !a->attached && !a->live && !a->starting;
	pthread_mutex_unlock(&a->mu);
	return idle;
}

bool sbx_attach_state(struct sbx_daemon *d, unsigned *idle_s)
{
	struct sbx_attach *a = d->attach;
	bool on;

	if (!a) {
		*idle_s = 0;
		return false;
	}
	pthread_mutex_lock(&a->mu);
	on = a->attached;
	*idle_s = a->idle_s;
	pthread_mutex_unlock(&a->mu);
	return on;
}
