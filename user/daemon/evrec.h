/* SPDX-License-Identifier: GPL-2.0 */
/*
 * evrec.h - one event as a typed record, filled once where the event is
 * understood (events.c) and read by every sink: the event log line and
 * the audit record (JSON), the journal, syslog (RFC 5424), OTLP and the
 * rule counters of the metrics. A sink never parses another sink's text,
 * so none of them can drift from the others.
 */
#ifndef SBX_EVREC_H
#define SBX_EVREC_H

#include <stdint.h>
#include <time.h>
#include <jansson.h>
#include "queue/request.h"

struct sbx_evrec {
	const char *kind;	/* "kernel", "kernel_repeats", "dns", "dns_repeats" */
	struct timespec ts;	/* wall clock */
	const char *session, *project;	/* NULL: outside every known session */
	const json_t *container;	/* a container session's identity, or NULL */
	const char *user;	/* the session's user by name (sinks.c fills it) */
	const char *tier;	/* the tier that decided: its reach differs (sinks.c) */
	long long pid, tid, uid;	/* -1: not known */
	const char *comm, *exe;
	const char *operation;
	const char *access;	/* files only, else NULL */
	const char *object;
	const char *verdict;
	struct sbx_request rule;	/* only .rule is used: as requests name it */
	long long err;		/* the errno returned; -1: none */
	uint64_t repeats;	/* a folded repeat count; 0: a first event */
	const char *name;	/* the name an address was learned from, a DNS name */
	const char *answer;	/* what the resolver answered (DNS) */
	json_t *extra;		/* rare parts (listener, client, ...), or NULL */
};

/* This machine's name, as the records that leave it (syslog, OTLP) carry
 * it. */
const char *sbx_evrec_host(void);
/* An empty record of kind at time ts: numbers -1, strings NULL. */
void sbx_evrec_init(struct sbx_evrec *r, const char *kind, const struct timespec *ts);
/* The event log line (a new reference; NULL when out of memory). */
json_t *sbx_evrec_json(const struct sbx_evrec *r);
/* One line for people: "deny read /x (session s): reason" (malloc'd). */
char *sbx_evrec_message(const struct sbx_evrec *r);
/* syslog severity: refused 3 (err), deny 4 (warning), ask 5 (notice), else 6 (info) */
int sbx_evrec_severity(const struct sbx_evrec *r);

#endif
