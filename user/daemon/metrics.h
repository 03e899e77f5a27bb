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

struct sbx_metrics {
	uint64_t stats[SBX_STAT_MAX];	/* the kernel's counters */
	uint64_t events_received, sessions, pending_requests;
	struct sbx_latency latency;
};

/* daemon --metrics-dir DIR: DIR must exist */
int sbx_metrics_init(const char *dir, char **err);
/* write DIR/bpfsbx.prom (the loop calls it once a second) */
void sbx_metrics_tick(struct sbx_daemon *d);
/* a person's decision reached the daemon this long after the request */
void sbx_metrics_approval(double seconds);
/* the text, for the file and for the tests */
char *sbx_metrics_render(const struct sbx_metrics *m);
void sbx_latency_observe(struct sbx_latency *l, double seconds);

#endif
