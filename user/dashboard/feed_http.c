// SPDX-License-Identifier: GPL-2.0
/*
 * feed_http.c - what the server's threads read from the store (feed_store.h):
 * the answers of the JSON API and the live feed.
 */
#include <pthread.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <microhttpd.h>
#include "lib/alloc.h"
#include "lib/clock.h"
#include "lib/text.h"
#include "user/dashboard/feed_store.h"
#include "lib/json.h"

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
	oldest = feed_oldest_locked(f);
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
	uint64_t oldest = feed_oldest_locked(f);

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
