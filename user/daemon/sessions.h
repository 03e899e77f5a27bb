/* SPDX-License-Identifier: GPL-2.0 */
/* sessions.h - a session's life: created, reloaded, ended, adopted after a restart. */
#ifndef SBX_SESSIONS_H
#define SBX_SESSIONS_H

#include <stdbool.h>
#include <sys/types.h>
#include <jansson.h>
#include "user/daemon/state.h"

/* Create a session for process pid (the caller), policy compiled with
 * the caller's credentials (learn: run --learn's, policy/learn.c; the
 * bpf-lsm tier only). 0 or -errno with *err (and *diags, a JSON array of
 * strings, when the policy was rejected). */
int sbx_session_create(struct sbx_daemon *d, pid_t pid, uid_t uid, gid_t gid,
		       const char *policy_path, const char *project, const char *home,
		       bool learn, struct sbx_session_rt **out, char **err, json_t **diags);
/* The same for a cgroup its container runtime made and put pid in
 * (containers.c): it is not moved, and the kernel entry says arming
 * until the container's first exec. grafts: its mount roots, ended by a
 * NULL path (policy/graft.c). */
int sbx_session_create_adopted(struct sbx_daemon *d, pid_t pid, uid_t uid, gid_t gid,
			       const char *policy_path, const char *project, const char *cgroup,
			       json_t *identity, const struct sbx_graft *grafts,
			       struct sbx_session_rt **out, char **err, json_t **diags);
/* Swap the policy; on failure the old one stays in force. */
int sbx_session_reload(struct sbx_daemon *d, struct sbx_session_rt *s,
		       const char *policy_path, char **err, json_t **diags);
/* cgroup emptied: remove its map entries, grants and cgroup */
void sbx_session_end(struct sbx_daemon *d, struct sbx_session_rt *s);
/* A restarted daemon: sessions from saved state whose cgroups still exist. */
int sbx_sessions_adopt(struct sbx_daemon *d);
/* inotify on the session's cgroup.events; the queue's watch for its decisions */
int sbx_session_watch(struct sbx_daemon *d, struct sbx_session_rt *s);
bool sbx_session_populated(struct sbx_session_rt *s);

#endif
