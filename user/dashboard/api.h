/* SPDX-License-Identifier: GPL-2.0 */
/*
 * api.h - the dashboard's JSON API behind the HTTP layer (docs/DASHBOARD.md).
 * Nothing here knows HTTP: each call returns the status code and fills
 * *out with the body, so that the unit tests call them directly.
 *
 * Queue files are read from disk on every call, through the queue library,
 * and a decision is sbx_queue_resolve(), exactly as `bpfsbx approve` and
 * `bpfsbx deny` make it: a request is claimed by one approver only, and a
 * decision is never replaced, whoever else decides at the same time.
 */
#ifndef SBX_API_H
#define SBX_API_H

#include <stdbool.h>
#include <stddef.h>
#include <jansson.h>
#include "queue/queue.h"
#include "user/dashboard/feed.h"

#define SBX_API_BODY_MAX (64u * 1024)	/* a request body; larger ones get 413 */
#define SBX_API_NOTE_MAX 2000		/* characters of a decision's note */
#define SBX_API_OUTPUT_MAX (64u * 1024)	/* of a command's output, in a reply */
#define SBX_API_DONE_MAX 1000		/* decided requests in one listing */

/* {"ok":false,"error":TEXT,"code":CODE} */
json_t *sbx_api_error(const char *code, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* GET /api/requests?state=pending|claimed|done&limit=N */
unsigned sbx_api_requests(struct sbx_feed *f, const char *state, const char *limit,
			  json_t **out);
/* GET /api/requests/ID: {"state","project","request","output"?} */
unsigned sbx_api_request(struct sbx_feed *f, const char *id, json_t **out);
/* GET /api/events?since=&limit=&project=&session=&verdict=&operation= */
unsigned sbx_api_events(struct sbx_feed *f, const char *since, const char *limit,
			const char *project, const char *session, const char *verdict,
			const char *operation, json_t **out);
/* GET /api/audit/verify: every audit log of every project */
unsigned sbx_api_verify(struct sbx_feed *f, json_t **out);

/* A decision, checked before anything is claimed. */
struct sbx_api_decision {
	char *project;		/* the queue that holds the request */
	char *id;
	bool approve;
	enum sbx_scope scope;
	char *note;
	int cmd_timeout_s;
	/* POST .../rule: the rule text the person was shown (it must still
	 * be the proposal, or nothing is written) */
	char *rule;
};
void sbx_api_decision_free(struct sbx_api_decision *d);

/*
 * The body of POST /api/requests/ID/approve ({"scope":"once|session|always",
 * "note"?}), .../deny ({"note"?}) or, with rule, .../rule ({"rule": the
 * text shown, "note"?}), and where ID is: 200 with *d filled,
 * or 400 (not JSON, unknown field, bad scope, not an id), 404 (no project
 * of this dashboard has it), with *out the error.
 */
unsigned sbx_api_prepare(struct sbx_feed *f, const char *id, bool approve, bool rule,
			 const char *body, size_t len, struct sbx_api_decision *d, json_t **out);
/*
 * Make the decision (blocking: an approved command runs here). 200; 404;
 * 409 when it was decided already or another approver holds it; 400 for
 * a command approved with a scope other than once; 500.
 */
unsigned sbx_api_decide(const struct sbx_api_decision *d, json_t **out);

/*
 * GET /api/requests/ID/rule: the rule "always" widens to (queue/propose.h)
 * with its fields as watch shows them: 200 {"ok","proposal","fields"}; 404;
 * 409 "no_rule" with the reason (a command, a protected object, a floor
 * that bounds "always").
 */
unsigned sbx_api_rule(struct sbx_feed *f, const char *id, json_t **out);

/* Text for JSON: invalid UTF-8 bytes become U+FFFD (malloc'd). */
char *sbx_api_utf8(const char *buf, size_t len);

#endif
