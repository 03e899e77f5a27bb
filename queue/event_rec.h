/* SPDX-License-Identifier: GPL-2.0 */
/*
 * event_rec.h - a line of the daemon's event log (user/daemon/events.c
 * writes it) or the same record in a session's audit log, decoded once
 * into a struct with enums: `policy suggest` and `policy diff` switch on
 * it instead of comparing strings.
 *
 * The strings point into the JSON object, which the caller keeps until it
 * is done with the record.
 */
#ifndef SBX_EVENT_REC_H
#define SBX_EVENT_REC_H

#include <stdbool.h>
#include <stdint.h>
#include <jansson.h>
#include "queue/request.h"

enum sbx_evrec_kind {
	SBX_EVREC_FILE,		/* a path (or "@name", an abstract socket) and an access class */
	SBX_EVREC_NET,		/* an address and a port */
	SBX_EVREC_DNS,		/* a name the resolver decided */
	SBX_EVREC_OTHER,	/* ptrace, signal, socket_create, ...: no object a rule names */
};

struct sbx_event_rec {
	enum sbx_evrec_kind kind;
	const char *time, *session, *comm, *exe;
	long long uid;		/* the process's, -1 when the line has none */
	const char *op_name;	/* "open_read", ... as in the record */
	int op;			/* enum sbx_op; -1 for a name this build does not know */
	int access;		/* enum sbx_access; -1 where none applies */
	uint8_t verdict;	/* enum sbx_verdict */
	/* a learning session's audit: what the rule does when enforced
	 * (SBX_V_DENY or SBX_V_ASK, from rule.would); 0 otherwise */
	uint8_t would;
	uint64_t count;		/* events the line stands for (a folded line's repeats) */
	const char *object;	/* as people read it */
	struct sbx_req_rule rule;	/* as a request names it */
	/* FILE: the path; truncated when the kernel cut its head off */
	const char *path;
	bool truncated;
	/* NET */
	int family;		/* AF_INET or AF_INET6 */
	uint8_t addr[16];
	uint16_t port;
	/* NET: the name the address was learned from, or NULL; DNS: the name */
	const char *host;
};

/*
 * 1: an access event, decoded into *out; 0: a record of another kind (an
 * audit log's session_start, decision, ...), to be skipped; -1: not an
 * event record, with *why (malloc'd) naming the field.
 */
int sbx_event_rec_decode(const json_t *line, struct sbx_event_rec *out, char **why);

#endif
