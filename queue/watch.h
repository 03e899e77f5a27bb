/* SPDX-License-Identifier: GPL-2.0 */
/*
 * watch.h - waiting for changes in a queue's folders.
 *
 * Whoever waits on the queue (the daemon for decisions, watch and the
 * dashboard for requests, audit tail for records) names a folder by
 * enum sbx_qdir and what it wants to hear of; which inotify events that
 * is stays here, beside the layout. A folder is watched through the
 * queue's own directory fd, so the watch is on the folder the queue
 * opened beneath the project, not on a path that may lead elsewhere
 * since.
 *
 * An event only says "look again": inotify's queue can overflow and a
 * watch can fail to be set, so every caller also looks on a timer.
 * inotify keeps one watch per folder and instance: a folder added twice
 * (two sessions of one project, each with its own sbx_queue) gets the
 * same id, and the later `what` replaces the earlier one.
 */
#ifndef SBX_QUEUE_WATCH_H
#define SBX_QUEUE_WATCH_H

#include "queue/queue.h"

enum sbx_qwatch_what {
	SBX_QW_ARRIVED = 1 << 0,	/* a file was renamed in or finished being written */
	SBX_QW_CREATED = 1 << 1,	/* a file was created (a writer's temporary one too) */
	SBX_QW_LEFT = 1 << 2,		/* a file was removed or renamed away */
	SBX_QW_APPENDED = 1 << 3,	/* a file was written to (audit logs grow so) */
};

struct sbx_qwatch;

/* NULL (errno set) if inotify is not available. */
struct sbx_qwatch *sbx_qwatch_new(void);
void sbx_qwatch_free(struct sbx_qwatch *w);
/* readable when events wait: for poll/epoll */
int sbx_qwatch_fd(const struct sbx_qwatch *w);

/* Watch escalations/<sub> of q for what (SBX_QW_*): the watch's id (>= 0)
 * or -errno. */
int sbx_qwatch_add(struct sbx_qwatch *w, struct sbx_queue *q, enum sbx_qdir sub,
		   unsigned what);
/* The same for q's audit/ folder: -ENOENT until the first session made it. */
int sbx_qwatch_add_audit(struct sbx_qwatch *w, struct sbx_queue *q, unsigned what);
/* The same for a folder of audit logs named by the user (audit tail
 * reads logs that need not be in a queue). */
int sbx_qwatch_add_path(struct sbx_qwatch *w, const char *dir, unsigned what);
/* Stop watching id (a folder shared by several callers goes for all). */
void sbx_qwatch_rm(struct sbx_qwatch *w, int id);

/* Call fn (may be NULL: just drain) for each event that waits, with the
 * watch's id and the file's name ("" for the folder itself); never
 * blocks. The number of events, or -errno. */
typedef void sbx_qwatch_fn(void *arg, int id, const char *name);
int sbx_qwatch_read(struct sbx_qwatch *w, sbx_qwatch_fn *fn, void *arg);

#endif
