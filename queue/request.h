/* SPDX-License-Identifier: GPL-2.0 */
/*
 * request.h - a request record (docs/QUEUE.md) decoded once, after
 * validation, into a struct with an enum kind: the daemon, the approvers
 * and the connectors switch on it instead of comparing strings.
 *
 * Both directions go through this struct: the writers (the daemon's
 * events, the resolver, the connectors) fill one and sbx_request_encode()
 * makes the record, so a new field is added here and in request.c only.
 *
 * Decoded, the strings point into the JSON record, which the struct holds
 * a reference to: they live until sbx_request_release(). Filled by a
 * writer, they are the writer's, and must live until it has encoded.
 */
#ifndef SBX_REQUEST_H
#define SBX_REQUEST_H

#include <stdbool.h>
#include <stdint.h>
#include <time.h>
#include <jansson.h>
#include "queue/queue.h"

enum sbx_req_kind {
	SBX_REQ_FILE,		/* the kernel asked: open, create, ... of a file */
	SBX_REQ_EXEC,		/* the kernel asked: exec or executable mapping */
	SBX_REQ_NET,		/* the kernel asked: a connect or a send */
	SBX_REQ_COMMAND,	/* a connector asked: run a command outside the agent */
	SBX_REQ_ACCESS_PATH,	/* the agent asked ahead for a path */
	SBX_REQ_ACCESS_HOST,	/* the agent asked ahead for a host */
	SBX_REQ_HOST,		/* the resolver asked: a lookup of a name */
};

/* The rule that asked, as a record carries it ({"id","name","section",
 * "pattern","verdict","reason","source"}); a connector's verdict holds one
 * too, and a request built from the verdict takes it as it is. */
struct sbx_req_rule {
	bool present;
	long long id;		/* -1 when absent or not a number */
	const char *name;	/* a built-in rule's ("sandbox-dir", ...) */
	const char *section;	/* a connector's: the policy section */
	const char *pattern, *verdict, *reason, *source;
	/* a learning session's (run --learn): what the rule does when
	 * enforced, "deny" or "ask"; verdict is then "audit" */
	const char *would;
};

struct sbx_request {
	const char *id;
	enum sbx_req_kind kind;
	const char *kind_name;		/* "file", ... as in the record */
	const char *session, *project, *agent_reason;
	const char *notice;		/* the daemon's word to the person (why asked again) */
	const char *origin;		/* the connector that asked ("hook", "mcp") */
	const json_t *container;	/* a container session's identity: {id, name,
					 * pod?, namespace?, ...}, or NULL */
	time_t created, deadline;
	long long count;
	struct {
		/* -1: not given. With a pid, exe, cwd and cmdline are always
		 * in the record: null says they were looked for and not found */
		long long pid, uid;
		const char *comm, *exe, *cwd;
		const json_t *cmdline;	/* array of strings, or NULL */
	} process;

	/* FILE, EXEC, ACCESS_PATH */
	const char *path;
	int access;			/* enum sbx_access */
	bool has_access;		/* the record names it (exec need not) */
	const char *op;
	bool has_ident;			/* dev and ino as the kernel saw the object */
	uint32_t dev;
	uint64_t ino;
	bool new_name;			/* not there yet: dev/ino are its parent's */
	bool abstract;			/* an abstract unix socket: path is "@name" */
	uint64_t name_hash;		/* new_name: the name's; abstract: the socket name's */
	const char *ftype;		/* "file", "dir", ... (NULL: not recorded) */
	long long nlink;		/* hard links when asked; -1: not recorded */
	const char *btime;		/* birth time "SEC.NSEC", or NULL */
	const json_t *listener;		/* a unix socket's serving process, or NULL */
	/* NET, ACCESS_HOST, HOST */
	const char *addr, *family, *proto, *host;
	const char *learned;		/* NET: the name the address was resolved from */
	int port;
	bool has_port;			/* the record names it (NET always) */
	/* COMMAND */
	const char *command, *cwd;

	struct sbx_req_rule rule;

	/* done/ records: the decision, when there is one */
	struct {
		bool present, approve, expired;
		enum sbx_scope scope;
		const char *by, *at, *note;
		const json_t *result;
	} decision;

	json_t *json;			/* the record; a reference is held */
};

/* The kind alone, of a record read from the queue (so validated): -1 if
 * it has none a request can have. */
int sbx_request_kind(const json_t *rec);

/* Validate (request schema; with done, the decision schema too) and decode.
 * false with *why (malloc'd) for people. */
bool sbx_request_decode(json_t *rec, bool done, struct sbx_request *out, char **why);
void sbx_request_release(struct sbx_request *r);
/* Read and decode queue file dir/ID.json: 0, or -errno with *err (a record
 * that does not decode: -EINVAL, and why). *out is zeroed either way. */
int sbx_request_read(struct sbx_queue *q, enum sbx_qdir dir, const char *id,
		     struct sbx_request *out, char **err);

/* The fields of rec as they are, without validation: for what is not (yet)
 * a whole record, such as a connector's ask or a test's fragment. The
 * strings point into rec, which the caller keeps; no reference is held. */
void sbx_request_view(const json_t *rec, struct sbx_request *out);

/* A rule object as records and event lines carry it into out; NULL or not
 * an object: no rule. The strings point into rule. */
void sbx_request_view_rule(const json_t *rule, struct sbx_req_rule *out);

/* An empty request of kind: every "not given" sentinel set, count 1. */
void sbx_request_init(struct sbx_request *r, enum sbx_req_kind kind);

/*
 * The record of r (docs/QUEUE.md), or NULL when out of memory. Only what
 * is given is written; id, version and the times only when r has an id
 * (sbx_queue_submit() adds them to a new request). A string that is not
 * UTF-8 is left out (JSON cannot carry it), so that the schema names the
 * field if it was required. The decision is not part of a request.
 */
json_t *sbx_request_encode(const struct sbx_request *r);
/* The rule alone ({"id",...} in that order), or json null without one:
 * the event log shows the same object as the request. */
json_t *sbx_request_encode_rule(const struct sbx_req_rule *rule);
/* The record's name of a kind: "file", ..., "access" for both ACCESS_* */
const char *sbx_request_kind_name(enum sbx_req_kind kind);

/* A person's words for the object: "read /home/a/.aws/credentials",
 * "connect 10.0.0.5 port 5432", "run: git push" (malloc'd). */
char *sbx_request_what(const struct sbx_request *r);

#endif
