/* SPDX-License-Identifier: GPL-2.0 */
/*
 * propose.h - "always", widened: the rule an approver may write into the
 * project's policy instead of remembering one object, and what it means.
 *
 * The rule is policy suggest's (policy/suggest.c) for the one asked
 * object, with the tool's directory offered at once (~/.cache/pip/ for a
 * file below it), and the same guarantees: it never opens what
 * agent-default or a built-in rule protects, and it is checked with the
 * kernel's algorithm before it is shown. `bpfsbx approve --rule`, `watch`
 * (r, then y) and the dashboard show the same proposal, and adopting it
 * writes the rule (policy/edit.c) and approves, for their sessions, every
 * waiting request of the project that it allows.
 */
#ifndef SBX_QUEUE_PROPOSE_H
#define SBX_QUEUE_PROPOSE_H

#include <stdbool.h>
#include <stddef.h>
#include <jansson.h>
#include "policy/policy.h"
#include "queue/queue.h"

struct sbx_proposal {
	char *id;		/* the asked request */
	char *file;		/* the project's policy, where the rule goes */
	bool file_exists;	/* false: it is created, extending agent-default */
	enum sbx_section sec;
	char **items;		/* policy/edit.h's form */
	size_t nitems;
	char *rule;		/* the items as shown: what the person approves */
	/* for a person: what it allows ("allows"), what stays refused
	 * below it ("refused"), the asked access before and after; labels
	 * are static */
	struct sbx_prop_line { const char *label; char *text; } *explain;
	size_t nexplain;
	/* the waiting requests of the project it answers, the asked first,
	 * with their words ("read /home/u/.cache/pip/a") */
	char **covers, **covers_what;
	size_t ncovers;
	char *home;		/* ~ of the session's user, as the rule was decided */
	char *project;		/* ${PROJECT}, canonical */
};

/*
 * The proposal for pending request id. -1 with *err when there is none to
 * make: a command (approved once, never always), an object agent-default
 * or a built-in rule protects (the reason is said), a machine policy that
 * bounds "always" (max_always_ttl) or names approvers the caller is not
 * one of, or a policy that does not load.
 */
int sbx_queue_propose(struct sbx_queue *q, const char *id, struct sbx_proposal *out, char **err);
void sbx_proposal_free(struct sbx_proposal *p);
/* {"id","file","created","section","rule","explain":[[label,text],..],
 *  "covers":[{"id","what"}]} */
json_t *sbx_proposal_json(const struct sbx_proposal *p);

/*
 * Write p's rule into the project's policy (the text checked to load and
 * compile, floor included, before it replaces the file) and approve each
 * request p covers that is still waiting, for its session, with a note
 * that names the rule. o gives by and note (approve and scope are set
 * here). 0 with *decided (how many were approved; a request another
 * approver took meanwhile is skipped); *done (may be NULL): the asked
 * request's decision. -1 with *err and nothing written or decided.
 */
int sbx_queue_adopt(struct sbx_queue *q, const struct sbx_proposal *p,
		    const struct sbx_resolve_opts *o, size_t *decided, json_t **done, char **err);

/*
 * "SESSION ACCESS DIRECTORY" of a kernel's file ask, the directory the
 * rule for it would be (policy suggest's generaliser, with the home of
 * the asking user): asks with equal keys are one rule's, and watch and the
 * dashboard mark them so. NULL for other kinds (malloc'd).
 */
char *sbx_request_rule_key(const struct sbx_request *r);

#endif
