/* SPDX-License-Identifier: GPL-2.0 */
/*
 * dirwatch.h - has a path possibly come to lead to another object?
 *
 * An owner (a compiled policy the daemon keeps for reuse) names paths;
 * every directory on the way to each of them is watched with inotify for
 * the names on that way: one created, removed, renamed or moved there, or
 * the directory itself removed or moved, makes the owner stale. inotify
 * queues an event before the syscall that made the change returns, so a
 * change that finished before sbx_dirwatch_stale() is seen by it. What
 * inotify cannot see (a mount, a lost event, a watch that could not be
 * set) must make the owner stale too: the caller checks mounts itself;
 * the rest is handled here, and so is a way through a file system whose
 * changes may come from elsewhere (NFS, 9p, FUSE): it is never watched.
 *
 * A new owner starts stale: something may have changed between the
 * moment its paths were looked at and the moment the watches were set.
 * The caller checks the paths the slow way, then sbx_dirwatch_rearm().
 */
#ifndef SBX_DIRWATCH_H
#define SBX_DIRWATCH_H

#include <stdbool.h>
#include <stdint.h>

struct sbx_dirwatch;

/* NULL (errno set) if inotify is not available. */
struct sbx_dirwatch *sbx_dirwatch_new(void);
void sbx_dirwatch_free(struct sbx_dirwatch *w);

/* Watch the way to path (absolute) for owner. A watch that cannot be set
 * leaves owner stale for good: -errno. */
int sbx_dirwatch_add(struct sbx_dirwatch *w, uint32_t owner, const char *path);
/* Forget owner (its watches go when no other owner needs them). */
void sbx_dirwatch_forget(struct sbx_dirwatch *w, uint32_t owner);
/* Read the events so far; has owner's way changed since it was armed? */
bool sbx_dirwatch_stale(struct sbx_dirwatch *w, uint32_t owner);
/* The caller has checked owner's paths after sbx_dirwatch_stale() said
 * stale: changes from then on count (those already queued too). */
void sbx_dirwatch_rearm(struct sbx_dirwatch *w, uint32_t owner);
/* How many directories are watched (status, tests). */
unsigned sbx_dirwatch_count(const struct sbx_dirwatch *w);

#endif
