/* SPDX-License-Identifier: GPL-2.0 */
/* containers.h - a container, adopted by its runtime's OCI hook, as a session. */
#ifndef SBX_CONTAINERS_H
#define SBX_CONTAINERS_H

#include <stdbool.h>
#include <jansson.h>
#include "user/daemon/state.h"

/* The control op `adopt`: {state: the OCI state the hook was given,
 * project}. The reply, {ok, session, cgid, container} or an error. */
json_t *sbx_container_adopt(struct sbx_daemon *d, json_t *req);
/* {id, name, pod?, namespace?, pod_uid?, image?, bundle?} from the OCI
 * state's id, bundle and annotations (a new reference). */
json_t *sbx_container_identity(const char *id, const char *bundle, const json_t *annotations);
/* The annotation that has the runtime run the workload without an exec
 * (crun's wasm and krun handlers), or NULL. */
const char *sbx_container_in_process(const json_t *annotations);
/* A Kubernetes pod's sandbox ("pause") container, by its annotations. */
bool sbx_container_is_sandbox(const json_t *annotations);

/* A process of a container session (the first of its cgroup), whose root,
 * mounts and network its paths and sockets are seen through; 0 and *why. */
pid_t sbx_container_pid(const struct sbx_session_rt *s, char **why);
/* A container session's network namespace, when it is not the daemon's:
 * an fd to it; -1: the daemon's (or no container); < -1: -errno, *err. */
int sbx_container_netns(const struct sbx_session_rt *s, char **err);

#endif
