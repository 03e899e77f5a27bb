/* SPDX-License-Identifier: GPL-2.0 */
/*
 * escalate.h - how the connectors (hook, MCP server) ask a
 * person: submit a request to the project's folder queue (through the
 * daemon when running inside a session, whose kernel policy forbids
 * writing .sandbox/), wait for the decision, and turn the decision into
 * text a model can act on.
 */
#ifndef SBX_CONNECTOR_ESCALATE_H
#define SBX_CONNECTOR_ESCALATE_H

#include <stdbool.h>
#include <stddef.h>
#include <jansson.h>
#include "queue/request.h"

#define SBX_ESC_OUTPUT_CAP	8000	/* characters of command output shown */

struct sbx_esc {
	const char *project;	/* absolute */
	const char *session;	/* request/audit session name outside sessions */
	const char *origin;	/* "hook" or "mcp" */
};

/*
 * Submit the agent's ask r (queue/request.h), filled by the connector
 * from what the agent sent: a command, or an access (path or host), with
 * the rule and the agent's reason. Who asks and where (origin, session,
 * project, the agent's process) are e's and the kernel's: this fills them
 * in (the process only for the call), or the daemon does inside a
 * session. 0 and *id (malloc'd); else -errno and *err.
 */
int sbx_esc_submit(const struct sbx_esc *e, struct sbx_request *r, char **id, char **err);

enum sbx_esc_state {
	SBX_ESC_UNKNOWN,	/* no such request */
	SBX_ESC_PENDING,	/* waiting for a person */
	SBX_ESC_CLAIMED,	/* an approver has it (maybe running it) */
	SBX_ESC_APPROVED,
	SBX_ESC_DENIED,
};

struct sbx_esc_outcome {
	enum sbx_esc_state state;
	json_t *done;		/* the done record, when decided */
};

void sbx_esc_outcome_clear(struct sbx_esc_outcome *o);

/* Where is request id now? Never blocks. 0, or -errno and *err. */
int sbx_esc_check(const char *project, const char *id, struct sbx_esc_outcome *o,
		  char **err);
/* Block up to timeout_ms for the decision (inotify). 0 with o filled
 * (state may still be PENDING/CLAIMED after the timeout). */
int sbx_esc_wait(const char *project, const char *id, int timeout_ms,
		 struct sbx_esc_outcome *o, char **err);

/*
 * Text for the model about a decided request: for an approved command
 * its exit code and output (capped at SBX_ESC_OUTPUT_CAP characters with
 * a note), for a denial the person's note. malloc'd.
 */
char *sbx_esc_describe(const char *project, const char *id, const struct sbx_esc_outcome *o);
/* The MCP server is this process: its tools exist (set by sbx_mcp_new).
 * Otherwise messages name them only where the project registers bpfsbx. */
extern bool sbx_esc_mcp_serving;
/* The command's output (capped), exit code; for structured results. */
int sbx_esc_command_result(const char *project, const json_t *done, char **output,
			   bool *truncated, int *exit_code);

/*
 * Has a person already granted this access (a done record approving an
 * "access" or "file"/"net" request for the same object that is still in
 * force: once within SBX_ONCE_TTL_S, session for the same session name,
 * always), or does remembered.yaml hold it? path+access or host+port.
 */
bool sbx_esc_granted(const char *project, const char *session, const char *path,
		     int access, const char *host, int port);

/* Append an audit record for this connector's session. body borrowed. */
int sbx_esc_audit(const struct sbx_esc *e, json_t *body, char **err);

/* A name usable as a session/file name: [A-Za-z0-9._-], at most 64. */
char *sbx_esc_session_name(const char *prefix, const char *raw);

/* Read an environment variable as milliseconds in [0, max]; def otherwise. */
int sbx_env_ms(const char *name, int def, int max);

/*
 * One decision of a connector, into the session's hash-chained audit log:
 * decision is "deny" (the policy), "ask" (a request was filed), or the
 * outcome of a request ("approved", "denied", "pending"); out, when given,
 * adds the person's decision and, for a command run outside the agent, its
 * exit status, the SHA-256 of its output and the user it ran as.
 * Best effort: 0 or -errno with *err.
 */
int sbx_esc_audit_decision(const struct sbx_esc *e, const char *agent, const char *tool,
			   json_t *input, const char *decision, const char *reason,
			   const struct sbx_req_rule *rule, const char *request,
			   const struct sbx_esc_outcome *out, char **err);
/* The last max denials by connectors in the project's audit logs, one
 * line each ("TIME tool: reason"), for sandbox_status; NULL if none. */
char *sbx_esc_recent_denials(const char *project, int max);

#endif
