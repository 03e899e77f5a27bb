// SPDX-License-Identifier: GPL-2.0
/*
 * event_fixture.c - kernel events through the daemon's own event path
 * (sbx_events_handle, the ring buffer's callback) into the sinks, on a
 * host whose kernel refuses LSM programs: the fleet tests (test-fleet.mjs)
 * check what real rsyslog, OTLP and journal receivers make of them.
 *
 *   event-fixture [daemon sink options] [--log FILE] [--journal]
 *                 [--emit N] [--verdict deny|ask|audit] [--wait-ms MS]
 *                 [--metrics FILE]
 *
 * One session ("fleet-test", project /srv/fleet-project, the caller's
 * user) with one rule; event i is an open of /home/u/.ssh/"id]\N-i (the
 * quote, bracket and backslash are what RFC 5424 values escape). Prints
 * the sinks' status (the "sinks" of `bpfsbx status --json`) as JSON, after
 * waiting up to MS for the OTLP queue to empty.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "lib/alloc.h"
#include "lib/clock.h"
#include "lib/fileio.h"
#include "user/daemon/events.h"
#include "user/daemon/journal.h"
#include "user/daemon/metrics.h"
#include "user/daemon/otlp.h"
#include "user/daemon/sinks.h"
#include "user/daemon/syslog.h"

#define CGID 4242

static void event(struct sbx_daemon *d, int i, uint8_t verdict)
{
	struct sbx_event *e = sbx_calloc(1, sizeof(*e));
	char *path = sbx_asprintf("/home/u/.ssh/\"id]\\N-%d", i);
	size_t n = strlen(path);

	e->ts_ns = sbx_boot_ns();
	e->cgid = CGID;
	e->pid = e->tid = (uint32_t)getpid();
	e->uid = (uint32_t)getuid();
	e->rule_id = 1;
	e->op = SBX_OP_OPEN_READ;
	e->verdict = verdict;
	e->access = SBX_ACC_READ;
	e->flags = SBX_EVF_FILE;
	e->ret = verdict == SBX_V_AUDIT ? 0 : -1;
	e->dev = 8;
	e->ino = 1000 + (uint64_t)i;	/* distinct objects: none folds into another */
	memcpy(e->comm, "cat", 4);
	e->path_off = SBX_EVENT_PATH_MAX - 1 - (uint32_t)n;
	memcpy(e->path + e->path_off, path, n);
	e->exe_off = e->cwd_off = SBX_EVENT_CTX_MAX - 1;
	sbx_events_handle(d, e, sizeof(*e));
	free(e);
	free(path);
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "syslog", 1, 0, 'S' }, { "otlp", 1, 0, 'O' }, { "otlp-queue", 1, 0, 'Q' },
		{ "otlp-queue-max", 1, 0, 'X' }, { "log", 1, 0, 'l' }, { "journal", 0, 0, 'J' },
		{ "emit", 1, 0, 'n' }, { "verdict", 1, 0, 'v' }, { "wait-ms", 1, 0, 'w' },
		{ "metrics", 1, 0, 'm' }, { 0 }
	};
	const char *otlp = NULL, *queue = SBX_OTLP_QUEUE_DIR, *metrics = NULL;
	long max = SBX_OTLP_QUEUE_MAX, emit = 1, wait_ms = 0;
	uint8_t verdict = SBX_V_DENY;
	struct sbx_daemon d = { 0 };
	struct sbx_session_rt *s = sbx_calloc(1, sizeof(*s));
	struct sbx_rule_row *row = sbx_calloc(1, sizeof(*row));
	char *err = NULL, *txt;
	json_t *st;
	int c;

	sbx_journal_enable(false);
	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (c) {
		case 'S':
			if (sbx_syslog_configure(optarg, &err)) {
				fprintf(stderr, "event-fixture: %s\n", err);
				return 2;
			}
			break;
		case 'O': otlp = optarg; break;
		case 'Q': queue = optarg; break;
		case 'X': max = atol(optarg); break;
		case 'l':
			d.log = fopen(optarg, "a");
			break;
		case 'J': sbx_journal_enable(true); break;
		case 'n': emit = atol(optarg); break;
		case 'w': wait_ms = atol(optarg); break;
		case 'm': metrics = optarg; break;
		case 'v':
			verdict = !strcmp(optarg, "ask") ? SBX_V_ASK :
				  !strcmp(optarg, "audit") ? SBX_V_AUDIT : SBX_V_DENY;
			break;
		default:
			return 2;
		}
	}
	if (otlp && sbx_otlp_configure(otlp, queue, max, &err)) {
		fprintf(stderr, "event-fixture: %s\n", err);
		return 2;
	}
	snprintf(s->name, sizeof(s->name), "fleet-test");
	s->cgid = CGID;
	s->uid = getuid();
	s->project = sbx_strdup("/srv/fleet-project");
	*row = (struct sbx_rule_row){ .id = 1, .verdict = verdict,
				      .pattern = sbx_strdup("~/.ssh/**"),
				      .reason = sbx_strdup("SSH keys stay with the person"),
				      .source = sbx_strdup(".sandbox/policy.yaml:4:7") };
	s->rules = sbx_rule_table_new(row, 1);
	d.sessions = s;
	for (long i = 0; i < emit; i++)
		event(&d, (int)i, verdict);
	sbx_events_flush_all(&d);
	sbx_otlp_stop((int)wait_ms);
	if (metrics) {
		struct sbx_metrics m = { .sessions = 1 };
		struct sbx_metrics_session ms = { .name = s->name, .project = s->project,
						  .uid = s->uid, .rules = 1 };

		sbx_metrics_sinks(&m);
		m.hits = sbx_metrics_rule_hits(&m.n_hits);
		m.session = &ms;
		m.n_session = 1;
		txt = sbx_metrics_render(&m);
		if (!txt || sbx_write_file_atomic(metrics, txt, strlen(txt), 0644))
			return 1;
		free(txt);
	}
	st = sbx_sinks_status();
	txt = json_dumps(st, JSON_COMPACT);
	printf("%s\n", txt);
	free(txt);
	json_decref(st);
	if (d.log)
		fclose(d.log);
	return 0;
}
