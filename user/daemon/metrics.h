/* SPDX-License-Identifier: GPL-2.0 */
/* metrics.h - Prometheus textfile for node_exporter (metrics.c). */
#ifndef SBX_METRICS_H
#define SBX_METRICS_H

#include <stdint.h>
#include "user/daemon/state.h"

#define SBX_LATENCY_BUCKETS 9

struct sbx_latency {
	uint64_t bucket[SBX_LATENCY_BUCKETS];	/* cumulative, as Prometheus wants */
	uint64_t count;
	double sum;
};

/* One live session's gauges (labels session, project, user). */
struct sbx_metrics_session {
	const char *name, *project;
	unsigned uid;
	uint64_t rules, grants, learned, dns_queries, dns_denied;
};

/* How often a rule decided an event (deny, ask, audit): events.c's
 * records, folded repeats included. Allows are not events, so not here. */
struct sbx_rule_hits {
	char *rule, *verdict;
	uint64_t n;
};

struct sbx_metrics {
	uint64_t stats[SBX_STAT_MAX];	/* the kernel's counters */
	uint64_t events_received, sessions, pending_requests;
	struct sbx_latency latency;
	const struct sbx_metrics_session *session;
	size_t n_session;
	const struct sbx_rule_hits *hits;
	size_t n_hits;
	/* the sinks: syslog.c, otlp.c, journal.c */
	uint64_t syslog_sent, syslog_failures, journal_failures;
	uint64_t otlp_queued, otlp_sent, otlp_lost, otlp_rejected, otlp_failures;
};

struct sbx_evrec;
/* count r against its rule (sinks.c, for every record) */
void sbx_metrics_rule_hit(const struct sbx_evrec *r);
/* the table so far (tests) */
const struct sbx_rule_hits *sbx_metrics_rule_hits(size_t *n);

/* daemon --metrics-dir DIR: DIR must exist */
int sbx_metrics_init(const char *dir, char **err);
/* write DIR/bpfsbx.prom (the loop calls it once a second) */
void sbx_metrics_tick(struct sbx_daemon *d);
/* a person's decision reached the daemon this long after the request */
void sbx_metrics_approval(double seconds);
/* the sinks' counters into m */
void sbx_metrics_sinks(struct sbx_metrics *m);
/* the text, for the file and for the tests */
char *sbx_metrics_render(const struct sbx_metrics *m);
void sbx_latency_observe(struct sbx_latency *l, double seconds);

#endif
