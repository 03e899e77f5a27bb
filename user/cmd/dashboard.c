// SPDX-License-Identifier: GPL-2.0
/*
 * bpfsbx dashboard [DIR...] [--port N | --socket PATH] [--token-file FILE]
 *                  [--cmd-timeout SECONDS]
 *
 * The approver's web page: the live sessions, their pending requests with
 * their full context, the events as they happen, the audit chains, and the
 * decisions of `bpfsbx watch` one click away. The server is user/dashboard/
 * (docs/DASHBOARD.md). It serves the projects DIR (daemon-less queues) and
 * every project the daemon's sessions name, on 127.0.0.1 (a free port
 * unless --port) or a unix socket (for an SSH tunnel), behind a random
 * token. It refuses to run inside a session: an agent must never decide
 * its own requests.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include "lib/log.h"
#include "lib/text.h"
#include "user/cmd/cmd.h"
#include "user/control/control_client.h"
#include "user/dashboard/server.h"

static void usage(FILE *out)
{
	sbx_cmd_help(out, sbx_cmd_find("dashboard"));
}

static const struct sbx_opt dashboard_opts[] = {
	{ "port", 'p', 0, 0, "N", "a free port", "listen on 127.0.0.1:N", NULL },
	{ "socket", 'S', 0, 'f', "PATH", NULL,
	  "listen on the unix socket PATH (0600; reach it with ssh -L) instead", NULL },
	{ "token-file", 'T', 0, 'f', "FILE", "$XDG_RUNTIME_DIR/bpfsbx/ or ~/.local/state/bpfsbx/",
	  "where the URL and its token are written (readable by you only)", NULL },
	{ "cmd-timeout", 't', 0, 0, "SECONDS", "600",
	  "how long an approved command may run", NULL },
	{ 0 }
};

static int cmd_dashboard(int argc, char **argv)
{
	struct sbx_dash_opts o = { 0 };
	char *session = NULL;
	long v;
	int c;

	sbx_set_log_prefix("bpfsbx dashboard");
	opterr = 0;
	optind = 1;
	while ((c = sbx_getopt(argc, argv, dashboard_opts, NULL)) != -1) {
		switch (c) {
		case 'p':
			if (!sbx_parse_long(optarg, 1, 65535, &v)) {
				sbx_err("--port takes a port number (1-65535)");
				return SBX_EXIT_USAGE;
			}
			o.port = (int)v;
			break;
		case 'S':
			if (optarg[0] != '/') {
				sbx_err("--socket takes an absolute path");
				return SBX_EXIT_USAGE;
			}
			o.socket_path = optarg;
			break;
		case 'T':
			o.token_file = optarg;
			break;
		case 't':
			if (!sbx_parse_long(optarg, 1, 7 * 24 * 3600, &v)) {
				sbx_err("--cmd-timeout takes a number of seconds");
				return SBX_EXIT_USAGE;
			}
			o.cmd_timeout_s = (int)v;
			break;
		case 'h':
			usage(stdout);
			return SBX_EXIT_OK;
		default:
			sbx_err("unknown option '%s'", argv[optind - 1]);
			usage(stderr);
			return SBX_EXIT_USAGE;
		}
	}
	if (o.port && o.socket_path) {
		sbx_err("--port and --socket exclude each other");
		return SBX_EXIT_USAGE;
	}
	if (sbx_in_session(&session)) {
		sbx_err("refusing to run inside the bpfsbx session %s: an agent must not decide "
			"its own requests; run the dashboard outside every session", session);
		free(session);
		return SBX_EXIT_FAIL;
	}
	o.dirs = argv + optind;
	o.ndirs = (size_t)(argc - optind);
	if (!o.ndirs) {
		/* like watch: the project we are in, when it has a queue */
		static char *here[] = { "." };
		struct stat st;

		if (lstat(".sandbox", &st) == 0 && S_ISDIR(st.st_mode)) {
			o.dirs = here;
			o.ndirs = 1;
		}
	}
	return sbx_dash_run(&o);
}

SBX_COMMAND(dashboard, "dashboard", "[DIR...] [OPTIONS]",
	    "serve the approver's web page (sessions, requests, events)", cmd_dashboard,
	    dashboard_opts);
