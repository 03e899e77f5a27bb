/* SPDX-License-Identifier: GPL-2.0 */
/* loop.h - the daemon: set up, run, stop; and what `run` needs to embed one. */
#ifndef SBX_LOOP_H
#define SBX_LOOP_H

#include <stdbool.h>
#include <sys/types.h>
#include "user/daemon/state.h"

struct sbx_daemon_opts {
	bool embedded;
	const char *log_path;
	unsigned once_ttl_s;		/* 0: SBX_ONCE_TTL_S */
	bool pcache_ttl_set;
	unsigned pcache_ttl_s;		/* unset: SBX_PCACHE_TTL_S */
	bool idle_detach_set;
	unsigned idle_detach_s;		/* unset: SBX_IDLE_DETACH_S; 0: never */
};

int sbx_daemon_init(struct sbx_daemon *d, const struct sbx_daemon_opts *o, char **err);
/* Run until stopped; with embedded, until the embedded session ends. */
int sbx_daemon_loop(struct sbx_daemon *d);
void sbx_daemon_fini(struct sbx_daemon *d);
/* Is a daemon answering on the control socket? */
bool sbx_daemon_running(pid_t *pid);
/* The embedded session's command: its wait status, or -1 while it runs. */
int sbx_embedded_status(void);

#endif
