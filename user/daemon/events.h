/* SPDX-License-Identifier: GPL-2.0 */
/* events.h - what the kernel reports becomes log lines, audit records and requests. */
#ifndef SBX_EVENTS_H
#define SBX_EVENTS_H

#include <stddef.h>
#include <sys/types.h>
#include <jansson.h>
#include "queue/request.h"
#include "user/daemon/state.h"

/* The ring buffer's callback (ctx: the daemon). */
int sbx_events_handle(void *ctx, void *data, size_t size);
/* Write folded repeat counts; forget requests decided long ago. */
void sbx_events_flush_pending(struct sbx_daemon *d);
/* A decision of r (s's request) was refused (why: the word to the
 * person): r is filed again under a new id, for one who may decide, and
 * the attempts that follow fold into it rather than going unasked. */
void sbx_events_ask_again(struct sbx_session_rt *s, const struct sbx_request *r, const char *why);
/* Before a session ends or the daemon stops: every folded repeat counted. */
void sbx_events_flush_all(struct sbx_daemon *d);
/* the object of an event as a person reads it */
char *sbx_event_object(const struct sbx_event *e);
/*
 * A query the resolver decided (deny, ask, audit, or refused as a DNS
 * tunnel): one line in the event log and a record in the session's audit
 * log, like a kernel event, with operation "dns" and the name as the
 * object. Repeats of the same (session, name, verdict) within a second
 * are counted into one line. ask: also a request of kind host (the person
 * sees the name), folded like the kernel's asks.
 */
void sbx_events_dns(struct sbx_daemon *d, struct sbx_session_rt *s, const char *name,
		    const char *qtype, uint8_t verdict, uint32_t rule_id, const char *why,
		    pid_t pid, bool escalate_it);
/*
 * A request from a connector inside a session (control op "submit"), r as
 * sbx_request_view() read it from the call. Only the kind, the object and
 * the agent's reason are the caller's: r is narrowed to them, and who asks
 * (pid), where its queue lives and which object a path names are filled
 * in by the daemon. r is used up: what it points to after the call is
 * gone. 0 and *id, or -errno and *err.
 */
int sbx_submit_for(struct sbx_session_rt *s, pid_t pid, struct sbx_request *r, char **id,
		   char **err);

#endif
