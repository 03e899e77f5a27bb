// SPDX-License-Identifier: GPL-2.0
/*
 * feed_daemon.c - the sessions thread: asks the daemon for its `status` every
 * STATUS_EVERY_MS and adds the projects of its sessions (feed_store.h).
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "lib/alloc.h"
#include "user/control/control_client.h"
#include "user/dashboard/feed_store.h"
#include "lib/json.h"

void *feed_daemon_main(void *arg)
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
			feed_push_locked(f, "sessions", json_object(), false);
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
