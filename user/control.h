/* SPDX-License-Identifier: GPL-2.0 */
/*
 * control.h - the daemon's control socket (SBX_CONTROL_SOCK, or
 * $BPFSBX_CONTROL_SOCK). One JSON object per line, one request and one
 * reply per connection. The daemon tells callers apart by SO_PEERCRED:
 * it never trusts what a caller says about its own uid, pid or session.
 *
 * Requests ("op"):
 *   run     {"policy_text","policy_name","project","cwd","home"}
 *           -> {"ok":true,"session":NAME,"cgid":N}; the caller's process
 *           has been moved into the session cgroup when the reply arrives.
 *   submit  {"request":{kind, object, agent_reason, ...}}
 *           -> {"ok":true,"id":ID}. For callers inside a session (hooks,
 *           the MCP server): the daemon writes the request into the
 *           session's queue, filling session, project and process itself.
 *   audit   {"record":{...}} -> {"ok":true}; appended to the caller's
 *           session audit log.
 *   status  {} -> {"ok":true,"sessions":[...],"stats":{...},"pins":...}
 *   reload  {"session":NAME,"policy_text","policy_name"} -> ok, or the
 *           policy's errors; the old policy stays in force on error.
 *   unload  {} (root only) -> the daemon removes all pins and exits.
 * Errors: {"ok":false,"error":TEXT}.
 */
#ifndef SBX_CONTROL_H
#define SBX_CONTROL_H

#include <stdbool.h>
#include <jansson.h>

#define SBX_CONTROL_ENV "BPFSBX_CONTROL_SOCK"
#define SBX_CONTROL_MAX_MSG (4u << 20)	/* one request or reply line */

/* Path of the control socket ($BPFSBX_CONTROL_SOCK or SBX_CONTROL_SOCK). */
const char *sbx_control_path(void);

/* One round trip. 0 with *reply set (check "ok" yourself); -ENOENT or
 * -ECONNREFUSED when no daemon listens; other -errno on failure. */
int sbx_ctl_call(json_t *req, json_t **reply, char **err);

/* Is this process inside a bpfsbx session? Reads /proc/self/cgroup; fills
 * *name (malloc'd) with the session name when it is. */
bool sbx_in_session(char **name);

#endif
