/* SPDX-License-Identifier: GPL-2.0 */
/*
 * attach.h - the daemon's links on demand: made at the first session,
 * dropped from a background thread once no session has existed for the
 * idle time (`daemon --idle-detach`), so that an idle machine runs nothing
 * of bpfsbx. The programs and maps stay pinned throughout.
 */
#ifndef SBX_ATTACH_H
#define SBX_ATTACH_H

#include <stdbool.h>

struct sbx_daemon;

#define SBX_IDLE_DETACH_S 180	/* long enough that a loop of `run`s does not flap */

/*
 * idle_s 0: the links are made now and kept (never detached). Otherwise
 * they are made at the first session, and a thread drops them idle_s
 * seconds after the last session ended (or after the start, with none).
 */
int sbx_attach_init(struct sbx_daemon *d, unsigned idle_s, char **err);
void sbx_attach_fini(struct sbx_daemon *d);
/*
 * A session is about to start: make the links if they are not there
 * (waiting for a detach under way). 0: they exist, and stay until
 * sbx_attach_session_done; an error refuses the session.
 */
int sbx_attach_session_begin(struct sbx_daemon *d, char **err);
/* The start begun above finished (started or not); d->sessions is current. */
void sbx_attach_session_done(struct sbx_daemon *d);
/* d->sessions changed (a session ended, sessions were adopted). */
void sbx_attach_sessions_changed(struct sbx_daemon *d);
/* Are the links down (or not yet made), with no session running or starting? */
bool sbx_attach_idle(struct sbx_daemon *d);
/* For status: are the links there, and after how many seconds idle do they go (0: never)? */
bool sbx_attach_state(struct sbx_daemon *d, unsigned *idle_s);

#endif
