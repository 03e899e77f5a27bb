/* SPDX-License-Identifier: GPL-2.0 */
/*
 * server.h - `bpfsbx dashboard`'s HTTP server (libmicrohttpd): one page and
 * the JSON API of docs/DASHBOARD.md, on 127.0.0.1 or a unix socket.
 *
 * Access, in the order it is checked, for every request:
 *   1. the Host header names this machine's loopback (127.0.0.1, localhost,
 *      [::1]), so a page of another site cannot reach it by DNS rebinding;
 *   2. an Origin header, when there is one, is this server's own, and no
 *      API call is cross-site (Sec-Fetch-Site);
 *   3. on a unix socket, the peer is this user (or root) and is not inside
 *      a bpfsbx session (SO_PEERCRED and its cgroup);
 *   4. the token: the URL's ?token= on the first visit (answered with a
 *      cookie and a redirect that drops it from the URL), then the cookie,
 *      or an Authorization: Bearer header; 401 without it;
 *   5. a POST carries the CSRF token (X-CSRF-Token, from GET /api/info) and
 *      a JSON body; 403 and 415 otherwise.
 * And in the kernel: the listening socket is given to the daemon
 * (protect_listener) right after listen(), so that no session can connect
 * to it at all. With no daemon the page says it is not so protected.
 */
#ifndef SBX_SERVER_H
#define SBX_SERVER_H

#include <stdbool.h>
#include <stddef.h>

struct sbx_dash_opts {
	char **dirs;			/* project directories (daemon-less queues) */
	size_t ndirs;
	int port;			/* on 127.0.0.1; 0: a free one */
	const char *socket_path;	/* a unix socket instead of TCP */
	const char *token_file;		/* NULL: $XDG_RUNTIME_DIR/bpfsbx or
					 * ~/.local/state/bpfsbx/dashboard-PID.json */
	int cmd_timeout_s;		/* 0: SBX_CMD_TIMEOUT_S */
};

#define SBX_DASH_CONN_MAX 4000		/* connections at once */
#define SBX_DASH_IDLE_S 30		/* an idle connection is closed after */
#define SBX_DASH_WORKERS_MAX 64		/* decisions in progress at once */

/* Serve until SIGINT or SIGTERM. Returns an exit status (lib/exit.h). */
int sbx_dash_run(const struct sbx_dash_opts *o);

/*
 * The checks of one request, without MHD (unit-tested): Host names the
 * loopback; Origin, if given, is "http://" + Host. 0, or 403 with *why.
 */
unsigned sbx_dash_check_origin(const char *host, const char *origin, const char **why);

#endif
