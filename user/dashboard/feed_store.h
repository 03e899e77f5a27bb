/* SPDX-License-Identifier: GPL-2.0 */
/*
 * feed_store.h - what the dashboard's threads share; feed.h is the view
 * from outside. One file per thread:
 *   feed.c         the store: the ring of messages, the projects, life cycle
 *   feed_queue.c   the feed thread: the projects' queues and audit logs
 *   feed_daemon.c  the sessions thread: the daemon's `status`
 *   feed_http.c    the server's threads: answers and the live stream
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
#ifndef SBX_FEED_STORE_H
#define SBX_FEED_STORE_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include <jansson.h>
#include <microhttpd.h>
#include "lib/text.h"
#include "queue/queue.h"
#include "user/dashboard/feed.h"

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
	int wakefd;
	struct sbx_qwatch *qw;	/* the projects' queues */
};

/* the ring (feed.c); _locked: with f->lock held */
uint64_t feed_oldest_locked(const struct sbx_feed *f);
/* takes the reference to data; is_event: kept for /api/events */
void feed_push_locked(struct sbx_feed *f, const char *type, json_t *data, bool is_event);
void feed_push(struct sbx_feed *f, const char *type, json_t *data);
/* resume every stream that waits for news; never with the lock held */
void feed_wake_streams(struct sbx_feed *f);

/* the threads' bodies (arg: the feed) */
void *feed_queue_main(void *arg);
void *feed_daemon_main(void *arg);

#endif
