// SPDX-License-Identifier: GPL-2.0
/*
 * daemon.c - `bpfsbx daemon`: the options, then the loop (user/daemon/).
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "lib/log.h"
#include "lib/text.h"
#include "user/cmd/cmd.h"
#include "user/daemon/journal.h"
#include "user/daemon/loop.h"
#include "user/daemon/metrics.h"

static void usage(FILE *f)
{
	fprintf(f, "usage: bpfsbx daemon [--log FILE|-] [--once-ttl SECONDS] [--metrics-dir DIR]\n"
		   "                     [--policy-cache-ttl SECONDS] [--no-journal]\n\n"
		   "Load (or adopt) the BPF-LSM programs, pin them under " SBX_PIN_DIR ",\n"
		   "and serve " SBX_CONTROL_SOCK ". Runs in the foreground; stop it with\n"
		   "SIGTERM (sessions stay confined).\n\n"
		   "  --log FILE         the event log, one JSON line per event (default\n"
		   "                     " SBX_EVENT_LOG "; - for none)\n"
		   "  --once-ttl S       how long an \"approve once\" grant lasts (default 60)\n"
		   "  --policy-cache-ttl S\n"
		   "                     how long a compiled policy stays in the kernel for\n"
		   "                     the next session of the same policy, user and\n"
		   "                     project (default 300; 0: until its last session ends)\n"
		   "  --metrics-dir DIR  write DIR/bpfsbx.prom (Prometheus text format) every\n"
		   "                     second, for node_exporter's textfile collector\n"
		   "  --no-journal       do not send events to the systemd journal\n"
		   "  -h, --help         this help\n");
}

static int cmd_daemon(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "log", required_argument, NULL, 'l' },
		{ "once-ttl", required_argument, NULL, 't' },
		{ "metrics-dir", required_argument, NULL, 'm' },
		{ "policy-cache-ttl", required_argument, NULL, 'P' },
		{ "no-journal", no_argument, NULL, 'J' },
		{ "help", no_argument, NULL, 'h' },
		{}
	};
	struct sbx_daemon_opts o = {};
	struct sbx_daemon d;
	char *err = NULL;
	int c, rc;

	while ((c = getopt_long(argc, argv, "+l:t:m:P:Jh", opts, NULL)) != -1) {
		long v;

		switch (c) {
		case 'l':
			o.log_path = optarg;
			break;
		case 't':
			if (!sbx_parse_long(optarg, 1, 86400, &v)) {
				sbx_err("daemon: --once-ttl takes seconds (1..86400), not '%s'", optarg);
				return SBX_EXIT_USAGE;
			}
			o.once_ttl_s = v;
			break;
		case 'P':
			if (!sbx_parse_long(optarg, 0, 86400, &v)) {
				sbx_err("daemon: --policy-cache-ttl takes seconds (0..86400), not '%s'",
					optarg);
				return SBX_EXIT_USAGE;
			}
			o.pcache_ttl_s = v;
			o.pcache_ttl_set = true;
			break;
		case 'm':
			if (sbx_metrics_init(optarg, &err)) {
				sbx_err("daemon: %s", err);
				free(err);
				return SBX_EXIT_USAGE;
			}
			break;
		case 'J':
			sbx_journal_enable(false);
			break;
		case 'h':
			usage(stdout);
			return SBX_EXIT_OK;
		default:
			usage(stderr);
			return SBX_EXIT_USAGE;
		}
	}
	if (optind != argc) {
		sbx_err("daemon: unexpected argument '%s'", argv[optind]);
		return SBX_EXIT_USAGE;
	}
	sbx_set_log_prefix("bpfsbx daemon");
	sbx_set_log_timestamps(true);
	rc = sbx_daemon_init(&d, &o, &err);
	if (rc) {
		sbx_err("%s", err ? err : strerror(-rc));
		free(err);
		sbx_daemon_fini(&d);
		return SBX_EXIT_FAIL;
	}
	sbx_info("ready (pid %d, %s)", (int)getpid(), d.k.loaded_here ? "loaded" : "adopted");
	rc = sbx_daemon_loop(&d);
	sbx_daemon_fini(&d);
	return rc ? SBX_EXIT_FAIL : SBX_EXIT_OK;
}

SBX_COMMAND(daemon, "daemon", "[--log FILE] [--metrics-dir DIR] [...]", "load BPF-LSM and serve sessions (root)",
	    cmd_daemon);
