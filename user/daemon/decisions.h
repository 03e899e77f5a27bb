/* SPDX-License-Identifier: GPL-2.0 */
/* decisions.h - a person's decisions (escalations/done/) reach the kernel. */
#ifndef SBX_DECISIONS_H
#define SBX_DECISIONS_H

#include "user/daemon/state.h"

/* A file that appeared in the done/ directory of hint's queue. */
void sbx_decision_file(struct sbx_daemon *d, struct sbx_session_rt *hint, const char *name);
/* Every decision of s's requests not applied yet (after a restart). */
void sbx_decisions_scan(struct sbx_daemon *d, struct sbx_session_rt *s);
/* Deny what passed its deadline, in every session's queue. */
void sbx_requests_expire(struct sbx_daemon *d);

#endif
