/* SPDX-License-Identifier: GPL-2.0 */
/*
 * machine_live.h - the machine policy (the floor, docs/POLICY.md "Machine
 * policy") applied to the running sessions when it changes.
 */
#ifndef SBX_MACHINE_LIVE_H
#define SBX_MACHINE_LIVE_H

#include <stdbool.h>
#include <jansson.h>
#include "user/daemon/state.h"

/* Has the machine policy changed since it was last applied (force: apply
 * it again anyway)? Then compile every live session's policy under it and
 * switch all of them, or none: the previous floor stays in force and an
 * event says why. The first call only takes note of the floor. */
void sbx_machine_live_check(struct sbx_daemon *d, bool force);
/* {"dir","generation","read_at","error"?}: status shows it; read_at is
 * when the files now in force were looked at, so config management knows
 * that what it wrote before then holds */
json_t *sbx_machine_live_status(const struct sbx_daemon *d);
void sbx_machine_live_free(struct sbx_daemon *d);

#endif
