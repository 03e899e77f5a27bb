/* SPDX-License-Identifier: GPL-2.0 */
/*
 * daemon.h - the parts of `bpfsbx daemon`, and what `run` needs to embed
 * one. The daemon is a single-threaded epoll loop over: the control socket
 * and its connections, the BPF ring buffer, one inotify fd (session
 * cgroup.events files and the queues' done/ directories), a signalfd and
 * a timerfd.
 *
 *   daemon_kernel.c    load or adopt the pinned BPF state; map access
 *   daemon_policy.c    compile a policy with the caller's rights; apply
 *                      it to the maps all or nothing; grants
 *   daemon_session.c   session cgroups, their life cycle, saved state
 *   daemon_events.c    ring buffer -> event log, audit, ask -> request
 *   daemon_decisions.c done/ -> grants in the kernel, remembered.yaml
 *   daemon.c           the loop, the control protocol, the subcommand
 */
#ifndef SBX_DAEMON_H
#define SBX_DAEMON_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>
#include <jansson.h>
#include "bpf/bpfsbx.h"
#include "policy/policy.h"
#include "queue/queue.h"

#define SBX_STATE_DIR	SBX_RUN_DIR "/sessions"
#define SBX_EVENT_LOG	"/var/log/bpfsbx/events.jsonl"

/* ---- kernel state (daemon_kernel.c) ---------------------------------- */

struct sbx_kernel {
	int sessions, inode_rules, chain_rules, name_rules, net4, net6;
	int grants, protected_, config, stats, events, epoch;
	bool loaded_here;	/* this process loaded and pinned the programs */
};

bool sbx_kernel_pinned(void);
/* Adopt the pinned state or, if there is none and load is true, load,
 * attach and pin atomically. On failure nothing is left behind. */
int sbx_kernel_up(struct sbx_kernel *k, bool load, char **err);
void sbx_kernel_close(struct sbx_kernel *k);
/* Remove every pin: enforcement stops. */
int sbx_kernel_unload(char **err);
int sbx_kernel_stats(const struct sbx_kernel *k, uint64_t out[SBX_STAT_MAX]);
/* Is BPF-LSM active? (reads /sys/kernel/security/lsm) */
bool sbx_bpf_lsm_active(char **lsm_list);
/* Delete every key of map fd whose first 4 bytes (policy_id) match. For
 * LPM keys the policy id sits after the prefix length, big-endian. */
int sbx_map_delete_if(int fd, size_t key_size, size_t id_off, bool be,
		      bool (*doomed)(uint32_t id, void *ctx), void *ctx);
int sbx_map_count(int fd, size_t key_size);

/* ---- sessions (daemon_session.c) -------------------------------------- */

struct sbx_rule_row {
	uint32_t id;
	uint8_t verdict;
	char *pattern, *reason, *source;
};

struct sbx_grant_rt {
	struct sbx_grant_key key;
	uint64_t expires_ns;
	char *request;
};

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
	struct sbx_policy_hdr hdr;
	struct sbx_rule_row *rules;
	size_t n_rules;
	struct sbx_protect_key *protect;
	size_t n_protect;
	struct sbx_grant_rt *grants;
	size_t n_grants;
	struct sbx_pending_rt *pending;
	size_t n_pending;
	char **my_requests;	/* ids of requests this daemon created */
	size_t n_my_requests;
	struct sbx_queue *queue;
	struct sbx_audit *audit;
	int events_wd, done_wd;
	bool ended;
	struct sbx_session_rt *next;
};

struct sbx_daemon {
	struct sbx_kernel k;
	struct ring_buffer *rb;
	int ep, ctl, ino, sig, timer;
	char *cg_root;			/* cgroup2 mount, e.g. /sys/fs/cgroup */
	struct sbx_session_rt *sessions;
	struct sbx_pcache *pcache;
	uint32_t next_policy_id;
	uint64_t next_serial;
	FILE *log;			/* event log, one JSON line per event */
	bool embedded;			/* `run` as root with no daemon up */
	pid_t embedded_child;
	bool stop;
	uint64_t events_seen, events_lost_reported;
	unsigned once_ttl_s;		/* how long "approve once" lasts */
};

int sbx_cgroup_root(char **path, char **err);
int sbx_sessions_root_sync(struct sbx_daemon *d, char **err);

struct sbx_session_rt *sbx_session_find(struct sbx_daemon *d, const char *name);
struct sbx_session_rt *sbx_session_by_cgid(struct sbx_daemon *d, uint64_t cgid);
/* Create a session for process pid (the caller), policy compiled with
 * the caller's credentials. 0 or -errno with *err (and *diags, a JSON
 * array of strings, when the policy was rejected). */
int sbx_session_create(struct sbx_daemon *d, pid_t pid, uid_t uid, gid_t gid,
		       const char *policy_path, const char *project, const char *home,
		       struct sbx_session_rt **out, char **err, json_t **diags);
int sbx_session_reload(struct sbx_daemon *d, struct sbx_session_rt *s,
		       const char *policy_path, char **err, json_t **diags);
/* cgroup emptied: remove its map entries, grants and cgroup */
void sbx_session_end(struct sbx_daemon *d, struct sbx_session_rt *s);
void sbx_session_free(struct sbx_session_rt *s);
int sbx_session_save(struct sbx_daemon *d, struct sbx_session_rt *s);
/* A restarted daemon: sessions from saved state whose cgroups still exist. */
int sbx_sessions_adopt(struct sbx_daemon *d);
/* inotify bookkeeping */
int sbx_session_watch(struct sbx_daemon *d, struct sbx_session_rt *s);
bool sbx_session_populated(struct sbx_session_rt *s);
const struct sbx_rule_row *sbx_session_rule(const struct sbx_session_rt *s, uint32_t id);
/* Is pid inside any session cgroup? (reads /proc/pid/cgroup) */
bool sbx_pid_in_session(pid_t pid, char *name, size_t len);

/* ---- policy (daemon_policy.c) ------------------------------------------ */

struct sbx_compiled_rt {
	struct sbx_compiled c;		/* entries, without the "what" labels */
	struct sbx_rule_row *rules;
	size_t n_rules;
	json_t *diags;			/* array of "file:line:col: ..." strings */
	json_t *sources;		/* [{path, mtime, size, ino}] of the policy files */
};

/* A compiled policy in the kernel that sessions may share (daemon_policy.c) */
struct sbx_pcache {
	uint32_t policy_id;
	uid_t uid;
	gid_t gid;
	char *home, *project, *policy_path;
	struct sbx_policy_hdr hdr;
	struct sbx_rule_row *rules;
	size_t n_rules;
	struct sbx_protect_key *protect;
	size_t n_protect;
	json_t *sources, *diags;
	dev_t project_dev, home_dev;
	ino_t project_ino, home_ino;
	uint64_t born_ns;
	uint64_t link_epoch;		/* SBX_EPOCH_LINK when last validated */
	bool link_epoch_ok;
	struct sbx_pcache *next;
};

/* What a session gets: its own copies of the shared policy's tables. */
struct sbx_policy_use {
	struct sbx_policy_hdr hdr;
	struct sbx_rule_row *rules;
	size_t n_rules;
	struct sbx_protect_key *protect;
	size_t n_protect;
	json_t *diags;
	bool shared;			/* reused, not compiled now */
};

/* Load and compile in a child that runs with uid/gid's rights. */
int sbx_policy_compile_as(uid_t uid, gid_t gid, const char *home, const char *project,
			  const char *policy_path, uint32_t policy_id,
			  struct sbx_compiled_rt *out, char **err);
void sbx_compiled_rt_free(struct sbx_compiled_rt *c);
/* Insert every entry; on any failure remove what was inserted. */
int sbx_policy_apply(struct sbx_kernel *k, const struct sbx_compiled *c, char **err);
void sbx_policy_remove(struct sbx_kernel *k, uint32_t policy_id);
int sbx_protect_add(struct sbx_daemon *d, const struct sbx_protect_key *keys, size_t n);
void sbx_protect_sync(struct sbx_daemon *d);
/* A policy for these parameters in the kernel: a recent identical one, or
 * compiled and applied now (fresh: always compile). */
int sbx_policy_obtain(struct sbx_daemon *d, uid_t uid, gid_t gid, const char *home,
		      const char *project, const char *policy_path, bool fresh,
		      struct sbx_policy_use *u, char **err);
/* Remove policy id from the kernel unless a session or the cache uses it. */
void sbx_policy_release(struct sbx_daemon *d, uint32_t id);
void sbx_pcache_expire(struct sbx_daemon *d, bool all);
/* Free a cache entry's memory (not its kernel entries). */
void sbx_pcache_drop(struct sbx_pcache *e);
/* After adoption: remove entries of policies no live session uses. */
void sbx_policy_sweep(struct sbx_daemon *d);
int sbx_grant_add(struct sbx_daemon *d, struct sbx_session_rt *s,
		  const struct sbx_grant_key *key, uint64_t expires_ns, const char *request);
void sbx_grants_expire(struct sbx_daemon *d);
int sbx_session_push_hdr(struct sbx_daemon *d, struct sbx_session_rt *s);

/* ---- events (daemon_events.c) ------------------------------------------ */

int sbx_events_handle(void *ctx, void *data, size_t size);
void sbx_events_flush_pending(struct sbx_daemon *d);
void sbx_events_flush_all(struct sbx_daemon *d);
const char *sbx_op_name(unsigned op);
/* the object of an event as a person reads it */
char *sbx_event_object(const struct sbx_event *e);
int sbx_daemon_audit(struct sbx_daemon *d, struct sbx_session_rt *s, json_t *body);
/* a request from a connector inside a session (control op "submit") */
int sbx_submit_for(struct sbx_daemon *d, struct sbx_session_rt *s, pid_t pid, json_t *req,
		   char **id, char **err);

/* ---- decisions (daemon_decisions.c) ------------------------------------ */

void sbx_decisions_scan(struct sbx_daemon *d, struct sbx_session_rt *s);
void sbx_decision_file(struct sbx_daemon *d, struct sbx_session_rt *s, const char *name);
void sbx_requests_expire(struct sbx_daemon *d);

/* ---- the daemon (daemon.c) ---------------------------------------------- */

struct sbx_daemon_opts {
	bool embedded;
	const char *log_path;
	unsigned once_ttl_s;		/* 0: SBX_ONCE_TTL_S */
};

int sbx_daemon_init(struct sbx_daemon *d, const struct sbx_daemon_opts *o, char **err);
/* Run until stopped; with embedded, until the embedded session ends. */
int sbx_daemon_loop(struct sbx_daemon *d);
void sbx_daemon_fini(struct sbx_daemon *d);
/* Is a daemon answering on the control socket? */
bool sbx_daemon_running(pid_t *pid);

#endif
