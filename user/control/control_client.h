/* SPDX-License-Identifier: GPL-2.0 */
/*
 * control_client.h - the client side of the daemon's control socket
 * (SBX_CONTROL_SOCK, or $BPFSBX_CONTROL_SOCK). The protocol itself is the
 * table in control_ops.c, documented in docs/CONTROL.md.
 */
#ifndef SBX_CONTROL_CLIENT_H
#define SBX_CONTROL_CLIENT_H

#include <stdbool.h>
#include <sys/types.h>
#include <jansson.h>

#define SBX_CONTROL_ENV "BPFSBX_CONTROL_SOCK"
#define SBX_CONTROL_MAX_MSG (4u << 20)	/* one request or reply line */

/* Path of the control socket ($BPFSBX_CONTROL_SOCK or SBX_CONTROL_SOCK). */
const char *sbx_control_path(void);

/* One round trip. 0 with *reply set (check "ok" yourself); -ENOENT or
 * -ECONNREFUSED when no daemon listens; other -errno on failure. */
int sbx_ctl_call(json_t *req, json_t **reply, char **err);

/* The same, passing the descriptor pass_fd along (SCM_RIGHTS); -1: none. */
int sbx_ctl_call_fd(json_t *req, int pass_fd, json_t **reply, char **err);

/* Ask the daemon to hide the listening socket listen_fd from every session:
 * the kernel then refuses a session's connect to it, whatever its policy
 * or a person's grant says (an approver's page must not be reachable by
 * the agent it approves for). 0, or -errno with *err. */
int sbx_ctl_protect_listener(int listen_fd, char **err);

/*
 * Is PID (0: this process) in a bpfsbx session, by its cgroup? 1 (and
 * *name, malloc'd, if name), 0, or -errno when /proc cannot tell.
 */
int sbx_pid_session(pid_t pid, char **name);
/* Is this process inside a bpfsbx session? (sbx_pid_session(0) == 1) */
bool sbx_in_session(char **name);

#endif
