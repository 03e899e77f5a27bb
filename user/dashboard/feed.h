/* SPDX-License-Identifier: GPL-2.0 */
/*
 * feed.h - what the dashboard knows and how it learns it, from nothing but
 * what the folder queues, the audit logs and the daemon's control socket
 * already expose.
 *
 * Two threads fill the store. The feed thread watches each project's
 * escalations/pending/, done/ and audit/ (inotify, and a scan every second
 * so that a missed event cannot hide a request), tails the audit logs and
 * notes requests as they come and go. The sessions thread asks the daemon
 * for its sessions (`status`) every two seconds and adds the projects it
 * names. Every change becomes a message with a cursor (a number that only
 * grows) in one ring; the live feed (Server-Sent Events) sends messages
 * past a client's cursor, and GET /api/events pages through the events.
 *
 * The store is read by the HTTP thread and the decision workers under one
 * mutex; queue files are never read through the store, so an API answer is
 * always what is on disk.
 */
#ifndef SBX_FEED_H
#define SBX_FEED_H

#include <stdbool.h>
#include <stdint.h>
#include <jansson.h>

struct sbx_feed;
struct MHD_Connection;
struct MHD_Response;

#define SBX_FEED_RING 8192		/* messages kept (events, requests, ...) */
#define SBX_FEED_TAIL_BYTES (1u << 20)	/* of a long audit log, read at start */
#define SBX_FEED_STREAMS_MAX 256	/* live feed connections at once */

struct sbx_feed *sbx_feed_new(void);
/* Stops the threads (if started), resumes every waiting stream, frees. */
void sbx_feed_free(struct sbx_feed *f);

/*
 * A project directory whose queue this dashboard serves. from_cli: named
 * on the command line (its queue is created if it has .sandbox, and an
 * error is fatal); otherwise it came from the daemon and a project the
 * user cannot decide for is listed without its requests. 0 or -errno with
 * *err.
 */
int sbx_feed_add_project(struct sbx_feed *f, const char *dir, bool from_cli, char **err);

/* Start the feed and sessions threads; use_daemon false: no status calls. */
int sbx_feed_start(struct sbx_feed *f, bool use_daemon);
/* Wake waiting streams so that they end (shutdown), and stop the threads. */
void sbx_feed_stop(struct sbx_feed *f);

/* The directories of the projects whose requests this user may decide
 * (malloc'd array of malloc'd strings). */
char **sbx_feed_project_dirs(struct sbx_feed *f, size_t *n);

/* Every project with its state, for /api/info: [{dir, writable, error?}] */
json_t *sbx_feed_projects_json(struct sbx_feed *f);

/* GET /api/sessions: the daemon's view merged with the audit logs' */
json_t *sbx_feed_sessions_json(struct sbx_feed *f);

struct sbx_feed_filter {
	uint64_t since;			/* cursor: events after it */
	const char *since_time;		/* or RFC 3339: events recorded after it */
	size_t limit;
	const char *project, *session, *verdict, *operation;
};
/* GET /api/events: {"cursor","oldest","events":[...]} */
json_t *sbx_feed_events_json(struct sbx_feed *f, const struct sbx_feed_filter *flt);

/* The newest cursor, for a stream that starts now. */
uint64_t sbx_feed_cursor(struct sbx_feed *f);

/*
 * The live feed as an MHD response (text/event-stream): messages past
 * cursor, then new ones as they come, a comment every 15 s so that a dead
 * client is noticed. NULL when too many streams are open (or no memory).
 * The server must be started with MHD_ALLOW_SUSPEND_RESUME: a stream with
 * nothing to send is suspended until the feed has news.
 */
struct MHD_Response *sbx_feed_stream(struct sbx_feed *f, struct MHD_Connection *c,
				     uint64_t cursor);

/* Tell the feed thread to look now (after a decision made here). */
void sbx_feed_poke(struct sbx_feed *f);

#endif
