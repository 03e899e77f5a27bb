/* SPDX-License-Identifier: GPL-2.0 */
/*
 * state.h - what the daemon knows: its sessions, and the records it keeps
 * of them (saved state for a restarted daemon, the audit log).
 *
 * The daemon is a single-threaded epoll loop (loop.c). Its parts, each
 * depending only on those listed before it:
 *
 *   kernel.c        load or adopt the pinned BPF state; map access
 *   state.c         the session list, lookups, saved state, audit records,
 *                   the session's host rules (names) as JSON
 *   compile_as.c    compile a policy with the caller's rights (child, pipe)
 *   policy_cache.c  compiled policies in the kernel, shared, all or nothing;
 *                   the protected set
 *   grants.c        a person's answers in the kernel: keys, add, expire,
 *                   remembered "always" answers (names among them)
 *   learned.c       addresses a session's lookups returned: its kernel
 *                   entries, TTLs and caps, the names behind addresses,
 *                   saved beside the pins for a restarted daemon
 *   events.c        ring buffer -> event log, audit, ask -> request;
 *                   the resolver's decisions into the same logs
 *   decisions.c     done/ -> grants
 *   resolver.c      the sessions' DNS: one socket pair per session, each
 *                   query decided by name, allowed ones forwarded upstream
 *                   and learned before the answer is released
 *   sessions.c      a session's life: create, reload, end, adopt
 *   control_ops.c   the control protocol
 *   loop.c          the loop
 */
#ifndef SBX_STATE_H
#define SBX_STATE_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>
#include <jansson.h>
#include "bpf/bpfsbx.h"
#include "policy/policy.h"
#include "queue/queue.h"
#include "user/daemon/kernel.h"

#define SBX_STATE_DIR	SBX_RUN_DIR "/sessions"
#define SBX_EVENT_LOG	"/var/log/bpfsbx/events.jsonl"

struct sbx_rule_row {
	uint32_t id;
	uint8_t verdict;
	uint8_t would;		/* learning: deny or ask when enforced; 0 otherwise */
	char *pattern, *reason, *source;
};

/* A row as the compiler's child sends it and the state keeps it. */
json_t *sbx_rule_row_json(const struct sbx_rule_row *r);
/* Fills r from v (strings copied). */
void sbx_rule_row_from_json(struct sbx_rule_row *r, const json_t *v);

/* The rows of one compiled policy, read-only, shared by the cache entry
 * and every session of it (10,000 rules are 30,000 strings to copy). */
struct sbx_rule_table {
	unsigned refs;
	struct sbx_rule_row *rows;
	size_t n;
};
/* takes rows */
struct sbx_rule_table *sbx_rule_table_new(struct sbx_rule_row *rows, size_t n);
struct sbx_rule_table *sbx_rule_table_ref(struct sbx_rule_table *t);
void sbx_rule_table_unref(struct sbx_rule_table *t);

struct sbx_grant_rt {
	struct sbx_grant_key key;
	uint64_t expires_ns;
	char *request;
};

/* A person's yes to a name (a request of kind host): its lookups resolve. */
struct sbx_name_grant {
	char *name;		/* normalised; "*.x" never (a person sees one name) */
	uint16_t port;		/* 0: any */
	uint64_t expires_ns;	/* 0: until the session ends */
	char *request;
};

/* One (name, address) a lookup of the session returned (learned.c). */
struct sbx_learned_rt {
	char *name;
	uint8_t addr[16];	/* IPv4 as ::ffff:a.b.c.d */
	uint64_t expires_ns;	/* CLOCK_BOOTTIME */
	uint32_t count;		/* port rules */
	struct sbx_net_port_rule r[SBX_LEARNED_PORT_RULES];
};

/* What the resolver did for a session (status). */
struct sbx_dns_stats {
	uint64_t queries, forwarded, denied, asked, refused_exfil, servfail;
	uint64_t rate_dropped, malformed, cap_dropped, learned_total;
};

struct sbx_resolver;

struct sbx_pending_rt {		/* dedup of repeated asks */
	char *key;		/* object identity */
	char *id;		/* request id */
	uint64_t count, flushed;
	uint64_t last_flush_ns;
};

struct sbx_session_rt {
	char name[64];
	uint64_t cgid, serial;
	uid_t uid;
	gid_t gid;
	char *home, *project, *policy_path;
	char *cgroup_path;
	uint32_t policy_id;
	/* the machine policy's projects: for approvals (sbx_session_set_approval) */
	json_t *approval;
	uint32_t max_always_ttl_s;	/* how long an "always" answer lasts; 0: for good */
	/* the tier that confines it (sbx_tier_name()) and the Landlock ABI,
	 * saved so that a person reading the state knows what held */
	const char *tier;
	int landlock_abi;
	/* run --learn: the policy's denies and asks are recorded, not
	 * enforced, except the protected set (policy/learn.c) */
	bool learn;
	/* a container adopted by its runtime's OCI hook (containers.c): its
	 * identity {id, name, runtime, bundle, pod?, namespace?, ...}, which
	 * events, requests and status carry; NULL for run's sessions */
	json_t *container;
	/* its bind mounts' and root's mount roots, ended by a NULL path,
	 * grafted into every compile of its policy (policy/graft.c); NULL:
	 * none */
	struct sbx_graft *grafts;
	/* while adopting: the kernel entry says SBX_PF_ARMING (bpfsbx.h) */
	bool arming;
	struct sbx_policy_hdr hdr;
	struct sbx_rule_table *rules;	/* shared with the policy cache; NULL: none */
	struct sbx_protect_key *protect;
	size_t n_protect;
	struct sbx_grant_rt *grants;
	size_t n_grants;
	struct sbx_pending_rt *pending;
	size_t n_pending;
	struct sbx_note {	/* why a path is asked again (remembered.yaml) */
		char *path, *text;
	} *notes;
	size_t n_notes;
	char **my_requests;	/* ids of requests this daemon created */
	size_t n_my_requests;
	struct sbx_queue *queue;
	struct sbx_audit *audit;
	int events_wd, done_wd;
	int notice_fd;		/* run's terminal (notice.c); 0: none (a dup is >= 3) */
	char *notice_held;	/* lines the terminal had no room for yet */
	size_t notice_held_len;
	unsigned notice_tries;
	/* ~/.claude.json as last checked (claude_json.c): device, inode,
	 * size and mtime, so that a tick costs one fstatat */
	struct sbx_cj_seen {
		uint64_t dev, ino, size;
		int64_t mtime_ns;
	} cj_seen;
	bool dirty;		/* the saved state is behind: sbx_state_flush() */
	/* names: host rules and DNS settings (names.hosts, names.dns,
	 * names.hdr.net_default), the JSON they came as */
	json_t *names_json;
	struct sbx_compiled names;
	struct sbx_name_grant *name_grants;
	size_t n_name_grants;
	struct sbx_learned_rt *learned;
	size_t n_learned;
	bool learned_dirty;
	struct sbx_dns_stats dns;
	/* the resolver's address: kept so that a restarted daemon binds the same */
	uint32_t dns_addr4;			/* network order */
	uint16_t dns_port4_udp, dns_port4_tcp, dns_port6_udp, dns_port6_tcp;	/* host order */
	struct sbx_resolver *resolver;
	struct sbx_session_rt *next;
};

struct sbx_pcache;
struct sbx_dirwatch;
struct sbx_attach;
struct ring_buffer;

/* Where the last `run` spent its time in the daemon, phase by phase (ns;
 * `status --json` shows it, and the benchmarks report it). */
enum sbx_start_phase {
	SBX_SP_CHECKS,		/* caller, project, user */
	SBX_SP_POLICY,		/* compile, or the cache's check */
	SBX_SP_CGROUP,		/* the session's cgroup made */
	SBX_SP_QUEUE,		/* the project's queue and audit log opened */
	SBX_SP_KERNEL,		/* session, protected set, remembered grants */
	SBX_SP_RESOLVER,	/* its DNS sockets */
	SBX_SP_MIGRATE,		/* the caller moved into the cgroup */
	SBX_SP_RECORDS,		/* watches, audit record */
	SBX_SP_STATE,		/* saved state on disk before the reply */
	SBX_SP_MIGRATE_WRITE,	/* the cgroup.procs write itself, in its thread
				 * beside queue..resolver (not a phase of the sum) */
	SBX_SP_N
};
extern const char *const sbx_start_phase_names[SBX_SP_N];

struct sbx_daemon {
	struct sbx_kernel k;
	struct sbx_attach *attach;	/* the links on demand (attach.h) */
	struct ring_buffer *rb;
	int ep, ctl, ino, sig, timer;
	struct sbx_qwatch *qwatch;	/* the sessions' queues: decisions arriving */
	char *cg_root;			/* cgroup2 mount, e.g. /sys/fs/cgroup */
	struct sbx_session_rt *sessions;
	struct sbx_pcache *pcache;
	struct sbx_applied *applied;	/* the keys of the policies this daemon applied */
	struct sbx_dirwatch *dirwatch;	/* the ways to the cached policies' paths */
	bool dirwatch_failed;		/* inotify unavailable: always check them */
	/* what sbx_protected holds (only the daemon writes it): read once at
	 * the start (sbx_protect_read), then kept, so syncing it walks no map */
	struct sbx_protect_key *protected_keys;
	size_t n_protected;
	uint32_t next_policy_id;
	uint64_t next_serial;
	FILE *log;			/* event log, one JSON line per event */
	bool embedded;			/* `run` as root with no daemon up */
	pid_t embedded_child;
	bool stop;
	uint64_t events_seen, events_lost_reported;
	unsigned once_ttl_s;		/* how long "approve once" lasts */
	uint64_t pcache_ttl_ns;		/* how long a compiled policy is kept */
	uint64_t start_ns[SBX_SP_N];	/* the last session start */
	/* the machine policy (the floor) as last applied (machine_live.h) */
	json_t *machine_stamp;		/* what its files looked like */
	unsigned machine_gen;		/* applies since the start */
	struct timespec machine_read_at;	/* when the files in force were read */
	char *machine_error;		/* why the last change was not applied */
};

struct sbx_session_rt *sbx_session_find(struct sbx_daemon *d, const char *name);
struct sbx_session_rt *sbx_session_by_cgid(struct sbx_daemon *d, uint64_t cgid);
const struct sbx_rule_row *sbx_session_rule(const struct sbx_session_rt *s, uint32_t id);
void sbx_session_free(struct sbx_session_rt *s);
void sbx_rule_rows_free(struct sbx_rule_row *r, size_t n);
/* remember that this daemon issued request id for s */
void sbx_session_add_request(struct sbx_session_rt *s, const char *id);
bool sbx_session_issued(const struct sbx_session_rt *s, const char *id);

/*
 * Saved state, for a restarted daemon (SBX_STATE_DIR/NAME.json). A change
 * marks the session dirty; the loop writes dirty sessions once per turn,
 * and before it answers a control request, so a caller never learns of a
 * session that a restarted daemon would not know.
 */
static inline void sbx_session_dirty(struct sbx_session_rt *s)
{
	s->dirty = true;
}
int sbx_state_save(struct sbx_session_rt *s);
void sbx_state_flush(struct sbx_daemon *d);
/* A session from its saved state (no queue, audit or watches yet), or NULL. */
struct sbx_session_rt *sbx_state_load(const char *path);
void sbx_state_remove(const struct sbx_session_rt *s);
/* A policy id is no longer in the kernel: its shared part of the saved
 * state goes. */
void sbx_state_policy_gone(uint32_t id);

/* Append a record to the session's hash-chained audit log. */
int sbx_daemon_audit(struct sbx_session_rt *s, json_t *body);

/* The session's host rules and DNS settings from their JSON (a reference
 * is taken; NULL: none, every name takes the network default). */
void sbx_session_set_names(struct sbx_session_rt *s, json_t *names);
/* {max_always_ttl_s, approvers?} from the compile (NULL: no limits) */
void sbx_session_set_approval(struct sbx_session_rt *s, json_t *approval);
/* May uid decide this session's requests? Without approvers in the machine
 * policy anyone the queue lets write may; with them, a listed user or a
 * member of a listed @group (root always). */
bool sbx_session_approver_ok(const struct sbx_session_rt *s, uid_t uid);
/*
 * The host rules and DNS settings of a compiled policy as JSON, and back:
 * the resolver decides queries by them (policy/decide.c, sbx_decide_host),
 * and they travel with the session's saved state.
 *   {"hosts": [[name, wildcard, lo, hi, proto, verdict, rule], ...],
 *    "dns": {grace, min_ttl, max_per_name, max_per_session, resolvers: [[family, hex, port]]},
 *    "net_default": V, "net_default_rule": ID}
 */
json_t *sbx_names_json(const struct sbx_compiled *c);
/* Fill c->hosts, c->dns and c->hdr's network default from j; false if malformed. */
bool sbx_names_from_json(const json_t *j, struct sbx_compiled *c);

/* Is pid inside any session cgroup? (reads /proc/pid/cgroup; unreadable
 * counts as inside: fail closed) */
bool sbx_pid_in_session(pid_t pid, char *name, size_t len);
/* pid's cgroup v2 path ("/a/b", the 0:: line of /proc/PID/cgroup),
 * malloc'd; NULL if unreadable */
char *sbx_pid_cgroup(pid_t pid);

#endif
