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
#include "user/daemon/kernel.h"
#include "user/daemon/notify.h"
#include "user/control/control_client.h"
#include "user/daemon/loop.h"
#include "user/daemon/metrics.h"
#include "user/daemon/otlp.h"
#include "user/daemon/syslog.h"

static void usage(FILE *f)
{
	sbx_cmd_help(f, sbx_cmd_find("daemon"));
}

static const struct sbx_opt daemon_opts[] = {
	{ "log", 'l', 0, 'f', "FILE|-", SBX_EVENT_LOG,
	  "the event log, one JSON line per event; - for none", NULL },
	{ "once-ttl", 't', 0, 0, "SECONDS", "60",
	  "how long an \"approve once\" grant lasts (1..86400)", NULL },
	{ "metrics-dir", 'm', 0, 'd', "DIR", NULL,
	  "write DIR/bpfsbx.prom (Prometheus text format) every second, for node_exporter's "
	  "textfile collector", NULL },
	{ "policy-cache-ttl", 'P', 0, 0, "SECONDS", "300",
	  "how long a compiled policy stays in the kernel for the next session of the same "
	  "policy, user and project (0: until its last session ends)", NULL },
	{ "idle-detach", 'i', 0, 0, "SECONDS", "180",
	  "drop the programs' links once no session has existed for SECONDS, so that an idle "
	  "machine runs nothing of bpfsbx; the next run makes them again (0: make them at the "
	  "start and keep them)", NULL },
	{ "no-journal", 'J', 0, 0, NULL, NULL, "do not send events to the systemd journal", NULL },
	{ "syslog", 'S', 0, 0, "TARGET", NULL,
	  "also send each event as RFC 5424 syslog with structured data to TARGET: "
	  "unix:/dev/log, udp:HOST:PORT or tcp:HOST:PORT", NULL },
	{ "otlp", 'O', 0, 0, "URL", NULL,
	  "also send each event as an OTLP/HTTP JSON log record to URL (a collector's "
	  "http://HOST:4318/v1/logs), queued on disk while it is down", NULL },
	{ "otlp-queue", 'Q', 0, 'd', "DIR", SBX_OTLP_QUEUE_DIR,
	  "where OTLP records wait for the endpoint", NULL },
	{ "otlp-queue-max", 'X', 0, 0, "N", "10000",
	  "records the OTLP queue holds (1..1000000); past that, new ones are counted as lost",
	  NULL },
	{ 0 }
};

static int cmd_daemon(int argc, char **argv)
{
	struct sbx_daemon_opts o = {};
	struct sbx_daemon d;
	const char *otlp = NULL, *otlp_queue = SBX_OTLP_QUEUE_DIR;
	long otlp_max = SBX_OTLP_QUEUE_MAX;
	char *err = NULL;
	int c, rc;

	while ((c = sbx_getopt(argc, argv, daemon_opts, "+")) != -1) {
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
		case 'i':
			if (!sbx_parse_long(optarg, 0, 86400, &v)) {
				sbx_err("daemon: --idle-detach takes seconds (0..86400), not '%s'",
					optarg);
				return SBX_EXIT_USAGE;
			}
			o.idle_detach_s = v;
			o.idle_detach_set = true;
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
		case 'S':
			if (sbx_syslog_configure(optarg, &err)) {
				sbx_err("daemon: %s", err);
				free(err);
				return SBX_EXIT_USAGE;
			}
			break;
		case 'O':
			otlp = optarg;
			break;
		case 'Q':
			otlp_queue = optarg;
			break;
		case 'X':
			if (!sbx_parse_long(optarg, 1, 1000000, &otlp_max)) {
				sbx_err("daemon: --otlp-queue-max takes a number (1..1000000), not '%s'",
					optarg);
				return SBX_EXIT_USAGE;
			}
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
	if (otlp && sbx_otlp_configure(otlp, otlp_queue, otlp_max, &err)) {
		sbx_err("daemon: %s", err);
		free(err);
		return SBX_EXIT_USAGE;
	}
	sbx_set_log_prefix("bpfsbx daemon");
	sbx_set_log_timestamps(true);
	rc = sbx_daemon_init(&d, &o, &err);
	if (rc) {
		sbx_err("%s", err ? err : strerror(-rc));
		sbx_notify("STATUS=failed: %s", err ? err : strerror(-rc));
		free(err);
		sbx_daemon_fini(&d);
		sbx_otlp_stop(0);
		return SBX_EXIT_FAIL;
	}
	/* the programs are loaded (attached, or attached before any session
	 * is reported started) and the control socket listens: confining */
	sbx_info("ready (pid %d, %s)", (int)getpid(), d.k.loaded_here ? "loaded" : "adopted");
	sbx_notify("READY=1\nSTATUS=confining: programs %s and %s, serving %s",
		   d.k.loaded_here ? "loaded" : "adopted",
		   sbx_kernel_attached() ? "attached" : "attached at the first session",
		   sbx_control_path());
	rc = sbx_daemon_loop(&d);
	sbx_notify("STOPPING=1\nSTATUS=stopping: sessions stay confined (the programs stay "
		   "pinned until bpfsbx unload)");
	sbx_daemon_fini(&d);
	/* what the endpoint has not taken by then waits on disk for the next start */
	sbx_otlp_stop(1000);
	return rc ? SBX_EXIT_FAIL : SBX_EXIT_OK;
}

SBX_COMMAND(daemon, "daemon", "[OPTIONS]", "load BPF-LSM and serve sessions (root)",
	    cmd_daemon, daemon_opts);
