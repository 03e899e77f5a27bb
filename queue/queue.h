/* SPDX-License-Identifier: GPL-2.0 */
/*
 * queue.h - the folder queue under <project>/.sandbox/, the bus between
 * the daemon, the agent connectors and the approvers. Processes share no
 * memory and no port; everything survives a restart.
 *
 *   <project>/.sandbox/
 *     escalations/pending/ID.json    new request
 *     escalations/claimed/ID.json    an approver took it (rename: one wins)
 *     escalations/done/ID.json       request + decision (+ command result)
 *     escalations/applied/ID         the daemon applied the decision to the kernel
 *     escalations/issued/ID.json     copy of each request as submitted; a
 *                                    decision is checked against it
 *     escalations/out/ID.txt         output of an approved command
 *     escalations/quarantine/NAME    malformed or foreign files, with NAME.why
 *     remembered.yaml                "approve always" decisions
 *     audit/SESSION.jsonl            hash-chained audit records
 *     audit/SESSION.head             seq and hash of the last record
 *
 * Every write is a temporary file in the same directory, fsync, rename
 * (RENAME_NOREPLACE where a file must not be replaced), fsync of the
 * directory. Every path is opened beneath the project's directory fd with
 * RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS, because the daemon runs as root
 * and writes into a directory that its user controls. Files the daemon
 * creates are owned by the queue's owner uid.
 *
 * JSON is jansson. Functions return 0 on success and -errno on failure;
 * where they can fail for a reason a person must read, they fill *err
 * (malloc'd) when err is not NULL.
 */
#ifndef SBX_QUEUE_H
#define SBX_QUEUE_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <time.h>
#include <jansson.h>
#include "lib/clock.h"
#include "lib/fileio.h"

#define SBX_QUEUE_VERSION 1
#define SBX_DEFAULT_DEADLINE_S 600	/* unanswered requests are denied after */
#define SBX_ONCE_TTL_S 60		/* "approve once" lasts this long */

struct sbx_queue;

enum sbx_queue_flags {
	SBX_Q_CREATE = 1 << 0,	/* create .sandbox/escalations/... if missing */
};

/* owner: uid/gid that created files get (the daemon passes the session's
 * user); (uid_t)-1 keeps the caller's, except for root, whose files then
 * go to the owner of .sandbox (sudo bpfsbx approve must not leave
 * root-only files in a user's queue). */
struct sbx_queue *sbx_queue_open(const char *project_dir, unsigned flags,
				 uid_t owner_uid, gid_t owner_gid, char **err);
void sbx_queue_close(struct sbx_queue *q);
const char *sbx_queue_project(const struct sbx_queue *q);

/* The sub-folders of escalations/. Their names on disk are queue/'s
 * alone: callers name a folder by this enum (the dashboard's "state" of
 * a request is sbx_qdir_name() of its folder). */
enum sbx_qdir {
	SBX_QDIR_PENDING, SBX_QDIR_CLAIMED, SBX_QDIR_DONE, SBX_QDIR_APPLIED,
	SBX_QDIR_OUT, SBX_QDIR_QUARANTINE, SBX_QDIR_ISSUED, SBX_QDIR_N
};
/* the folder's name (NULL if sub is none) */
const char *sbx_qdir_name(enum sbx_qdir sub);
/* the folder of that name, or -1 */
int sbx_qdir_parse(const char *name);

/* directory fd of escalations/<sub>, for openat; owned by the queue.
 * To wait for changes in it, see queue/watch.h. */
int sbx_queue_dirfd(struct sbx_queue *q, enum sbx_qdir sub);
/* how many records (ID.json) escalations/<sub> holds, or -errno */
int sbx_queue_count(struct sbx_queue *q, enum sbx_qdir sub);

/* Time-sortable id, unique across processes: "YYYYMMDDTHHMMSS.uuuuuuZ-PID-RAND" */
char *sbx_id_new(void);
bool sbx_id_valid(const char *id);

/* ---- requests ------------------------------------------------------------
 *
 * Request object (all written by sbx_queue_submit unless marked caller):
 * {
 *   "version": 1, "id": ID, "created": RFC3339, "deadline": RFC3339,
 *   "kind": "file" | "exec" | "net" | "command" | "access",      (caller)
 *   "session": NAME, "project": DIR,                              (caller)
 *   "count": N,                    repeats folded into this request
 *   "process": {"pid","uid","comm","exe","cmdline":[..],"cwd"},   (caller)
 *   "object": file:    {"path","access":"read|write|exec","dev","ino","new_name"?,"name_hash"?}
 *             net:     {"family":"ipv4|ipv6","addr","port","proto":"tcp|udp|any"}
 *             command: {"command": "sh text", "cwd"}
 *             access:  {"path","access"} or {"host","port"}  (asked ahead by the agent)
 *   "rule": {"id","pattern","verdict","reason","source"},        (caller, may be null)
 *   "agent_reason": TEXT                                          (caller, optional)
 * }
 */
int sbx_queue_submit(struct sbx_queue *q, json_t *req, char **id_out, char **err);

/* Pending requests sorted by id. Malformed or foreign files met on the
 * way are quarantined (never deleted) and reported through *err. */
int sbx_queue_list(struct sbx_queue *q, enum sbx_qdir sub, json_t **array, char **err);
int sbx_queue_read(struct sbx_queue *q, enum sbx_qdir sub, const char *id,
		   json_t **obj, char **err);
/*
 * What a person typed for a request id, as git takes a short hash: a
 * whole id is taken as it is; otherwise the one id in pending/, claimed/
 * or done/ of any of the nq queues that starts with prefix. 0, *id
 * (malloc'd) and *which (the queue's index); -EINVAL: no id looks like
 * that; -ENOENT: none starts so; -EEXIST: several do, and *err names them
 * (the first few, then how many more).
 */
int sbx_queue_find_id(struct sbx_queue *const *qs, size_t nq, const char *prefix,
		      char **id, size_t *which, char **err);

/* Bump "count" of a pending request (dedup of repeats). */
int sbx_queue_bump(struct sbx_queue *q, const char *id, unsigned by);

/* rename pending/ID.json -> claimed/ID.json. 0: this caller won;
 * -ENOENT: someone else did, or it does not exist. */
int sbx_queue_claim(struct sbx_queue *q, const char *id, json_t **req, char **err);

/* ---- decisions -----------------------------------------------------------
 *
 * done/ID.json = the request object plus
 *   "decision": {"verdict":"approve|deny", "scope":"once|session|always",
 *                "by": USER, "at": RFC3339, "note": TEXT?, "expired": bool?}
 *   "result":   {"exit_code", "signal"?, "output": "out/ID.txt",
 *                "truncated", "started", "finished"}        (commands only)
 * Written with RENAME_NOREPLACE: a decision is never replaced. The claim
 * file is removed after done/ exists.
 */
enum sbx_scope { SBX_SCOPE_ONCE, SBX_SCOPE_SESSION, SBX_SCOPE_ALWAYS };

struct sbx_decision_rec {
	bool approve;
	enum sbx_scope scope;
	const char *by;		/* NULL: the caller's user name */
	const char *note;
	bool expired;		/* set by sbx_queue_expire */
	json_t *result;		/* commands: the result object, or NULL */
};

int sbx_queue_decide(struct sbx_queue *q, const char *id,
		     const struct sbx_decision_rec *d, char **err);

/* Deny every pending or claimed request whose deadline has passed. */
int sbx_queue_expire(struct sbx_queue *q, time_t now, unsigned *n_expired);

/* Move escalations/<sub>/<name> to quarantine/ with a .why note. */
int sbx_queue_quarantine(struct sbx_queue *q, enum sbx_qdir sub, const char *name,
			 const char *why);

/* The daemon's marker that a decision reached the kernel. */
int sbx_queue_mark_applied(struct sbx_queue *q, const char *id);
bool sbx_queue_is_applied(struct sbx_queue *q, const char *id);

/* Wait (inotify on done/) until done/ID.json exists or timeout_ms passes.
 * 0 with *done set; -ETIMEDOUT. */
int sbx_queue_wait_done(struct sbx_queue *q, const char *id, int timeout_ms,
			json_t **done, char **err);

/* Validate a request or a done record read from disk (schema, id matches
 * file name, types). Returns false and a reason for the quarantine note. */
bool sbx_queue_validate_request(const json_t *req, const char *expect_id, char **why);
bool sbx_queue_validate_done(const json_t *done, const char *expect_id, char **why);

const char *sbx_scope_name(enum sbx_scope s);
int sbx_scope_parse(const char *s);	/* -1 if unknown */

/* ---- remembered.yaml ("approve always") --------------------------------- */

/*
 * remembered:
 *   - kind: file            # file | exec | net
 *     path: /home/u/.aws/credentials
 *     access: read
 *     dev: 2049             # the object the person saw (kernel identity)
 *     ino: 131077
 *     type: file
 *     request: ID
 *     by: alice
 *     at: 2026-11-30T10:15:03Z
 *   - kind: net
 *     addr: 10.0.0.5
 *     port: 5432
 *     ...
 * Written with libyaml's emitter, atomically; read with its parser;
 * malformed files are reported with line:column, never half-applied.
 */
struct sbx_remembered {
	char *kind;		/* "file", "exec", "net", "host" */
	char *path;		/* file, exec */
	char *access;		/* file */
	char *addr;		/* net */
	char *host;		/* host: a name the agent asked for ahead, resolved
				 * by the daemon when a session starts */
	int port;		/* net, host; 0 = any */
	char *request, *by, *at;
	/* file, exec: the object the person saw (dev, ino as the kernel
	 * names it; type). A later session applies the entry only while the
	 * path still leads there without following a final symlink. For a
	 * name that did not exist yet (new_name), dev/ino are its directory's. */
	bool has_ident, new_name;
	bool seen_dev, seen_ino;	/* parser's bookkeeping */
	uint32_t dev;
	uint64_t ino;
	char *type, *btime;
};

int sbx_remembered_load(struct sbx_queue *q, struct sbx_remembered **v, size_t *n,
			char **err);
int sbx_remembered_add(struct sbx_queue *q, const struct sbx_remembered *r, char **err);
void sbx_remembered_free(struct sbx_remembered *v, size_t n);

/* ---- audit: hash-chained JSONL ----------------------------------------- */

/*
 * Each line: {"seq":N, "time":RFC3339, "prev":HEX, "hash":HEX, ...body}
 * ("time" is the body's own when it has one, e.g. the kernel event's,
 * else the time of the append; seq, prev and hash belong to the log)
 * hash = SHA-256(prev_hex || compact JSON of the record without "hash",
 * keys sorted). seq starts at 1; prev of seq 1 is 64 zeros. SESSION.head
 * holds {"seq","hash"} of the last record, updated atomically after each
 * append, so that truncation is detected. Appends take flock() on the log:
 * several writers (daemon, hooks) may append to one session's log.
 */
struct sbx_audit;

struct sbx_audit *sbx_audit_open(struct sbx_queue *q, const char *session, char **err);
void sbx_audit_close(struct sbx_audit *a);
int sbx_audit_append(struct sbx_audit *a, json_t *body, char **err);

struct sbx_audit_report {
	uint64_t records;	/* records that verified */
	uint64_t first_bad;	/* seq (or line number) of the first bad record; 0 = none */
	char *problem;		/* what is wrong, for a person */
	uint64_t line;		/* line of first_bad in the log (1-based); 0 = none */
};
/* 0: intact. 1: tampering found (report filled). <0: could not read. */
int sbx_audit_verify(const char *log_path, struct sbx_audit_report *r);
void sbx_audit_report_free(struct sbx_audit_report *r);

/* ==== extensions (added after the first contract; see docs/QUEUE.md) ==== */

#define SBX_QUEUE_FILE_MAX	(1u << 20)	/* larger queue files are quarantined */
#define SBX_TMP_GRACE_S		600	/* dot files younger than this are a writer's
					 * temporary file and left alone; older ones
					 * are quarantined as abandoned */
#define SBX_CLAIM_LEASE_S	900	/* a claimed request past its deadline is
					 * expired only once its claim is this old
					 * (an approver may be running its command) */
#define SBX_CMD_TIMEOUT_S	600	/* default limit for an approved command */
#define SBX_CMD_OUTPUT_MAX	(1u << 20)	/* out/ID.txt is cut at this size */

/* fd of <project>/.sandbox (for remembered.yaml, audit/); owned by the queue */
int sbx_queue_sandbox_fd(struct sbx_queue *q);
void sbx_queue_owner(const struct sbx_queue *q, uid_t *uid, gid_t *gid);

/*
 * Finish half-done work after a crash or restart: remove pending/ and
 * claimed/ files whose decision already exists in done/, quarantine
 * malformed files and abandoned temporary files. The daemon calls it at
 * start; sbx_queue_list() does the same for the directory it lists.
 * *err lists what was quarantined (0 is still returned).
 */
int sbx_queue_recover(struct sbx_queue *q, char **err);

/*
 * The daemon's check of a decision file, done/NAME, before applying it:
 *   SBX_DONE_OK       valid and not applied yet: apply it, then
 *                     sbx_queue_mark_applied_ident(q, id, &ident)
 *   SBX_DONE_APPLIED  this very file (same inode and bytes) was applied
 *                     already, e.g. seen again when the daemon restarts
 *   SBX_DONE_BAD      quarantined (with SBX_CHECK_QUARANTINE) or to be:
 *                     not JSON, fails the schema, id differs from the
 *                     name, no such request was issued, the request part
 *                     differs from the issued request, or a replay (a
 *                     different file for an id already applied)
 * <0: -errno (-ENOENT: the file is gone; -EAGAIN: NAME is a writer's
 * temporary dot file, ignore it). *why: the reason (BAD).
 */
enum sbx_done_check { SBX_DONE_OK = 0, SBX_DONE_APPLIED = 1, SBX_DONE_BAD = 2 };
#define SBX_CHECK_QUARANTINE	(1u << 0)

struct sbx_done_ident {
	uint64_t dev, ino;
	uid_t uid;		/* who wrote it: the approver */
	char sha256[65];	/* hex of the file's bytes */
};

int sbx_queue_check_done(struct sbx_queue *q, const char *name, unsigned flags,
			 json_t **done, struct sbx_done_ident *ident, char **why);
/* Mark applied, recording which file was applied (replays then differ). */
int sbx_queue_mark_applied_ident(struct sbx_queue *q, const char *id,
				 const struct sbx_done_ident *ident);

/*
 * Claim, (for an approved command: run it), decide: what `watch`,
 * `approve` and `deny` do with one request.
 *   0        decided; *done (if not NULL) is the decision record
 *   -ENOENT  no such request          -EEXIST  already decided
 *   -EBUSY   taken by another approver
 *   -EINVAL  e.g. a command approved with a scope other than once
 * *err says which, for a person.
 */
struct sbx_request;	/* queue/request.h */
struct sbx_resolve_opts {
	bool approve;
	enum sbx_scope scope;
	const char *note;
	const char *by;		/* NULL: the caller's user name */
	int cmd_timeout_s;	/* 0: SBX_CMD_TIMEOUT_S */
	bool interactive;	/* a person at a terminal: a command runs as them, there */
	/* called after the claim, before a command runs (may be NULL),
	 * with the claimed request as decoded */
	void (*on_run)(void *arg, const struct sbx_request *req);
	void *arg;
};
int sbx_queue_resolve(struct sbx_queue *q, const char *id,
		      const struct sbx_resolve_opts *o, json_t **done, char **err);

/*
 * Run an approved command request outside the agent: /bin/sh -c TEXT in
 * the request's cwd (else the project dir), stdin /dev/null, stdout and
 * stderr into out/ID.txt (cut at SBX_CMD_OUTPUT_MAX), killed after
 * timeout_s. interactive: stdin is the terminal and the output is also
 * shown there. The result has the exit status, the output's SHA-256 and
 * the user it ran as.
 * *result is the decision's "result" object.
 */
int sbx_queue_run_command(struct sbx_queue *q, const json_t *req, int timeout_s,
			  bool interactive, json_t **result, char **err);
/*
 * The output of the command that the done record done ran, read whole
 * from out/: only the file of done's own id, whatever its result names,
 * so that a record cannot point a reader at another file. 0 with *buf
 * (NUL-terminated, malloc'd) and *len; -ENOENT when it names no output.
 */
int sbx_queue_read_output(struct sbx_queue *q, const json_t *done, char **buf, size_t *len);
/* Who an approved command runs as (see queue/command.c): interactive, the
 * person at the terminal; else the project's owner, and root only when
 * the agent (agent_uid, -1: unknown) is root too (-EPERM with *err).
 * *name is malloc'd. */
int sbx_queue_command_user(struct sbx_queue *q, bool interactive, long long agent_uid,
			   uid_t *uid, gid_t *gid, char **name, char **err);

/* remembered.yaml from and to memory (sbx_remembered_load/add use these);
 * errors read "remembered.yaml:LINE:COL: what". *text is NUL terminated. */
int sbx_remembered_parse(const char *buf, size_t len, struct sbx_remembered **v,
			 size_t *n, char **err);
int sbx_remembered_format(const struct sbx_remembered *v, size_t n, char **text,
			  size_t *len);

/* Name of the calling user for "by" (getpwuid(getuid())); static storage. */
const char *sbx_queue_user(void);

/* longest id sbx_id_valid() accepts */
#define SBX_ID_MAX 64

/*
 * Audit durability. By default each append fdatasyncs the log and
 * replaces the head with fsyncs (~ms per record on a disk). With sync off
 * an append is two writes and no fsync: a daemon under a burst
 * of denials turns it off and calls sbx_audit_sync() now and then. A
 * crash of the process loses nothing; a crash of the machine can lose the
 * last records, which verify then reports as a truncation.
 */
void sbx_audit_set_sync(struct sbx_audit *a, bool sync);
int sbx_audit_sync(struct sbx_audit *a);

/* ---- building blocks, shared by queue/ and by tools built on it ---------- */

/* *err = malloc'd message (replacing one already there); no-op if !err */
void sbx_queue_set_err(char **err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#endif
