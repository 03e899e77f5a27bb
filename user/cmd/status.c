// SPDX-License-Identifier: GPL-2.0
/* status.c - `bpfsbx status`: sessions, kernel counters, pins. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "user/cmd/cmd.h"
#include "user/control/control_client.h"
#include "user/daemon/kernel.h"
#include "lib/alloc.h"
#include "lib/clock.h"
#include "lib/fileio.h"
#include "lib/log.h"
#include "lib/text.h"
#include "lib/json.h"

static const struct sbx_opt status_opts[] = {
	{ "json", 'j', 0, 0, NULL, NULL,
	  "the same as one JSON object (also when the daemon is down)", NULL },
	{ 0 }
};

static int cmd_status(int argc, char **argv)
{
	json_t *req, *r = NULL, *v, *st;
	bool as_json = false;
	char *err = NULL;
	size_t i;
	int c;

	while ((c = sbx_getopt(argc, argv, status_opts, NULL)) != -1) {
		switch (c) {
		case 'j':
			as_json = true;
			break;
		case 'h':
			printf("usage: bpfsbx status [--json]\n\n"
			       "The daemon, the mode of enforcement, the kernel's counters and the\n"
			       "sessions. Exit status 1 when the daemon is not running.\n\n"
			       "  --json      the same as one JSON object (also when the daemon is down)\n"
			       "  -h, --help  this help\n");
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
		bool pinned = sbx_kernel_pinned();

		json_decref(req);
		if (as_json) {
			json_t *o = json_pack("{s:s,s:s,s:s,s:s}", "daemon", "not running", "error",
					      err ? err : "", "kernel", pinned ? "pinned" : "not loaded",
					      "mode", pinned ? "kernel-enforced" : "hooks only");
			char *t = json_dumps(o, JSON_INDENT(2) | JSON_SORT_KEYS);

			printf("%s\n", t);
			free(t);
			json_decref(o);
		} else {
			printf("daemon: not running (%s)\n", err);
			printf("kernel: %s\n", pinned ? "programs pinned under " SBX_PIN_DIR
			       " (enforcing)" : "not loaded");
			printf("mode: %s\n", pinned ? "kernel-enforced (sessions started earlier stay "
			       "confined; new ones need the daemon)" : "hooks only: commands are "
			       "classified, nothing is enforced by the kernel");
		}
		free(err);
		return SBX_EXIT_FAIL;
	}
	json_decref(req);
	if (as_json) {
		char *t;

		json_object_set_new(r, "daemon", json_string("running"));
		json_object_set_new(r, "mode", json_string("kernel-enforced"));
		t = json_dumps(r, JSON_INDENT(2) | JSON_SORT_KEYS);

		printf("%s\n", t);
		free(t);
		json_decref(r);
		return SBX_EXIT_OK;
	}
	printf("mode: kernel-enforced\n");
	printf("tier: %s (Landlock ABI %lld)\n", sbx_json_str(r, "tier") ? sbx_json_str(r, "tier") : "?",
	       (long long)json_integer_value(json_object_get(r, "landlock_abi")));
	printf("daemon: running (pid %lld%s)\n",
	       (long long)json_integer_value(json_object_get(r, "daemon_pid")),
	       json_is_true(json_object_get(r, "embedded")) ? ", embedded in a run" : "");
	printf("kernel: programs pinned under %s, %s\n", sbx_json_str(r, "pins"),
	       json_is_true(json_object_get(r, "linked")) ? "attached" :
	       "detached (no session for a while: attached again at the next run)");
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
	{
		const json_t *sk = json_object_get(r, "sinks"), *o = json_object_get(sk, "otlp");
		const json_t *sl = json_object_get(sk, "syslog");

#define N(j, k) (long long)json_integer_value(json_object_get(j, k))
		if (N(sl, "sent") || N(sl, "failures"))
			printf("syslog: %lld sent, %lld not delivered\n", N(sl, "sent"),
			       N(sl, "failures"));
		if (o)
			printf("otlp: %lld queued, %lld sent, %lld LOST (queue full), %lld rejected, "
			       "%lld retries\n", N(o, "queued"), N(o, "sent"), N(o, "lost"),
			       N(o, "rejected"), N(o, "failures"));
#undef N
	}
	{
		const json_t *m = json_object_get(r, "machine");
		const char *e = sbx_json_str(m, "error");

		if (m)
			printf("machine policy: %s, applied live %lld time(s), as read at %s%s%s\n",
			       sbx_json_str(m, "dir"),
			       (long long)json_integer_value(json_object_get(m, "generation")),
			       sbx_json_str(m, "read_at") ?: "?",
			       e ? "; its last change was NOT applied: " : "", e ? e : "");
	}
	printf("sessions: %zu\n", json_array_size(json_object_get(r, "sessions")));
	json_array_foreach(json_object_get(r, "sessions"), i, v) {
		const json_t *dns = json_object_get(v, "dns");
		size_t k;
		json_t *n;

		printf("  %s  uid %lld  %s  policy %s  (%lld rules, %lld grants)%s\n",
		       sbx_json_str(v, "name"),
		       (long long)json_integer_value(json_object_get(v, "uid")),
		       sbx_json_str(v, "project"),
		       sbx_json_str(v, "policy"),
		       (long long)json_integer_value(json_object_get(v, "rules")),
		       (long long)json_integer_value(json_object_get(v, "grants")),
		       json_is_true(json_object_get(v, "learning")) ?
		       "  LEARNING: denies and asks recorded, not enforced" : "");
		if (!dns)
			continue;
#define DNSN(k) (long long)json_integer_value(json_object_get(dns, k))
		printf("    dns %s: %lld queries, %lld forwarded, %lld denied, %lld asked, %lld "
		       "refused, %lld SERVFAIL, %lld dropped by the rate limit, %lld malformed\n",
		       sbx_json_str(dns, "resolver"), DNSN("queries"),
		       DNSN("forwarded"), DNSN("denied"), DNSN("asked"), DNSN("refused"),
		       DNSN("servfail"), DNSN("rate_dropped"), DNSN("malformed"));
		printf("    learned: %lld addresses in force (%lld so far), %lld DROPPED by the caps\n",
		       DNSN("learned"), DNSN("learned_total"), DNSN("cap_dropped"));
#undef DNSN
		json_array_foreach(json_object_get(v, "names"), k, n)
			printf("      %s  %s  %llds\n", sbx_json_str(n, "addr"),
			       sbx_json_str(n, "name"),
			       (long long)json_integer_value(json_object_get(n, "expires_in_s")));
	}
	json_decref(r);
	return SBX_EXIT_OK;
}

SBX_COMMAND(status, "status", "[--json]", "show sessions and kernel counters", cmd_status,
	    status_opts);
