// SPDX-License-Identifier: GPL-2.0
/* status.c - `bpfsbx status`: sessions, kernel counters, pins. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "user/cmd.h"
#include "user/control.h"
#include "user/daemon.h"
#include "user/util.h"

static int cmd_status(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "json", no_argument, NULL, 'j' },
		{ "help", no_argument, NULL, 'h' },
		{}
	};
	json_t *req, *r = NULL, *v, *st;
	bool as_json = false;
	char *err = NULL;
	size_t i;
	int c;

	while ((c = getopt_long(argc, argv, "jh", opts, NULL)) != -1) {
		switch (c) {
		case 'j':
			as_json = true;
			break;
		case 'h':
			printf("usage: bpfsbx status [--json]\n");
			return SBX_EXIT_OK;
		default:
			fprintf(stderr, "usage: bpfsbx status [--json]\n");
			return SBX_EXIT_USAGE;
		}
	}
	if (optind != argc) {
		sbx_err("status: unexpected argument '%s'", argv[optind]);
		return SBX_EXIT_USAGE;
	}
	req = json_pack("{s:s}", "op", "status");
	if (sbx_ctl_call(req, &r, &err)) {
		json_decref(req);
		printf("daemon: not running (%s)\n", err);
		printf("kernel: %s\n", sbx_kernel_pinned() ? "programs pinned under " SBX_PIN_DIR
			" (enforcing)" : "not loaded");
		free(err);
		return SBX_EXIT_FAIL;
	}
	json_decref(req);
	if (as_json) {
		char *t = json_dumps(r, JSON_INDENT(2) | JSON_SORT_KEYS);

		printf("%s\n", t);
		free(t);
		json_decref(r);
		return SBX_EXIT_OK;
	}
	printf("daemon: running (pid %lld%s)\n",
	       (long long)json_integer_value(json_object_get(r, "daemon_pid")),
	       json_is_true(json_object_get(r, "embedded")) ? ", embedded in a run" : "");
	printf("kernel: programs pinned under %s\n", json_string_value(json_object_get(r, "pins")));
	st = json_object_get(r, "stats");
	printf("counters: %lld checks (%lld from the verdict cache), %lld denied, %lld asked, "
	       "%lld audited, %lld grants used, %lld internal errors, %lld walks truncated\n",
	       (long long)json_integer_value(json_object_get(st, "checks")),
	       (long long)json_integer_value(json_object_get(st, "cache_hits")),
	       (long long)json_integer_value(json_object_get(st, "deny")),
	       (long long)json_integer_value(json_object_get(st, "ask")),
	       (long long)json_integer_value(json_object_get(st, "audit")),
	       (long long)json_integer_value(json_object_get(st, "grant_used")),
	       (long long)json_integer_value(json_object_get(st, "errors")),
	       (long long)json_integer_value(json_object_get(st, "walk_truncated")));
	printf("events: %lld sent by the kernel, %lld received, %lld LOST (ring buffer full)\n",
	       (long long)json_integer_value(json_object_get(st, "events")),
	       (long long)json_integer_value(json_object_get(st, "events_received")),
	       (long long)json_integer_value(json_object_get(st, "event_drops")));
	printf("sessions: %zu\n", json_array_size(json_object_get(r, "sessions")));
	json_array_foreach(json_object_get(r, "sessions"), i, v)
		printf("  %s  uid %lld  %s  policy %s  (%lld rules, %lld grants)\n",
		       json_string_value(json_object_get(v, "name")),
		       (long long)json_integer_value(json_object_get(v, "uid")),
		       json_string_value(json_object_get(v, "project")),
		       json_string_value(json_object_get(v, "policy")),
		       (long long)json_integer_value(json_object_get(v, "rules")),
		       (long long)json_integer_value(json_object_get(v, "grants")));
	json_decref(r);
	return SBX_EXIT_OK;
}

SBX_COMMAND(status, "status", "[--json]", "show sessions and kernel counters", cmd_status);
