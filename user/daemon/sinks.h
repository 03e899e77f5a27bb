/* SPDX-License-Identifier: GPL-2.0 */
/*
 * sinks.h - where an event record goes (sinks.c): the event log, the
 * session's audit chain, the journal, syslog (syslog.c), OTLP (otlp.c)
 * and the metrics' rule counters.
 */
#ifndef SBX_SINKS_H
#define SBX_SINKS_H

#include "user/daemon/evrec.h"
#include "user/daemon/state.h"

/* Every sink gets r (s: its session, or NULL). */
void sbx_sinks_emit(struct sbx_daemon *d, struct sbx_session_rt *s, const struct sbx_evrec *r);
/* {"journal": {failures}, "syslog": {sent, failures}, "otlp": {queued,
 * sent, lost, rejected, failures} (only with --otlp)}: status shows it */
json_t *sbx_sinks_status(void);

#endif
