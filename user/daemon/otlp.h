/* SPDX-License-Identifier: GPL-2.0 */
/* otlp.h - events as OpenTelemetry logs over OTLP/HTTP JSON, queued on disk (otlp.c). */
#ifndef SBX_OTLP_H
#define SBX_OTLP_H

#include <stdint.h>
#include <jansson.h>
#include "user/daemon/evrec.h"

#define SBX_OTLP_QUEUE_DIR "/var/lib/bpfsbx/otlp"
#define SBX_OTLP_QUEUE_MAX 10000

struct sbx_otlp_stats {
	bool enabled;
	uint64_t queued;	/* on disk, not yet accepted by the endpoint */
	uint64_t sent;		/* accepted (2xx) since the daemon started */
	uint64_t lost;		/* not queued because the queue was full (kept across restarts) */
	uint64_t rejected;	/* refused by the endpoint as malformed (4xx): set aside */
	uint64_t failures;	/* attempts that failed and will be retried */
};

/*
 * daemon --otlp URL [--otlp-queue DIR] [--otlp-queue-max N]: DIR is made
 * (0700) if missing; what it holds from an earlier run is sent first.
 * Starts the sender thread. -errno with *err (malloc'd).
 */
int sbx_otlp_configure(const char *url, const char *dir, long max, char **err);
/* The ExportLogsServiceRequest of one record (OTLP/JSON; a new reference). */
json_t *sbx_otlp_request(const struct sbx_evrec *r, const char *host);
/* Queue r for the endpoint (on disk before this returns). */
void sbx_otlp_event(const struct sbx_evrec *r);
void sbx_otlp_stats(struct sbx_otlp_stats *st);
/* Stop the sender, after waiting up to wait_ms for the queue to empty;
 * what is left stays on disk for the next start. */
void sbx_otlp_stop(int wait_ms);

#endif
