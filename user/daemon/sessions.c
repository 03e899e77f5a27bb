// SPDX-License-Identifier: GPL-2.0
/*
 * sessions.c - a session's life: cgroup, policy, queue, audit log,
 * saved state, end.
 *
 * Order matters for fail-closed behaviour. The cgroup is created and its
 * policy is in the maps before the caller is moved into it, so there is
 * no moment in which a process is in the session but unconfined; and a
 * session ends (its entries removed) only once its cgroup is empty.
 */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <pwd.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "user/daemon/attach.h"
#include "user/daemon/decisions.h"
#include "user/daemon/events.h"
#include "user/daemon/grants.h"
#include "user/daemon/learned.h"
#include "user/daemon/policy_cache.h"
#include "user/daemon/resolver.h"
#include "user/daemon/sessions.h"
#include "user/daemon/claude_json.h"
#include "lib/alloc.h"
#include "lib/clock.h"
#include "lib/fileio.h"
#include "lib/log.h"
#include "lib/text.h"
#include "queue/watch.h"

/* ---- watching ------------------------------------------------------------------ */

bool sbx_session_populated(struct sbx_session_rt *s)
{
	char *p = sbx_asprintf("%s/cgroup.events", s->cgroup_path), *buf = NULL;
	bool pop = false;

	if (sbx_read_file(p, 4096, &buf, NULL) == 0)
		pop = strstr(buf, "populated 1") != NULL;
	free(p);
	free(buf);
	return pop;
}

/*
 * Sessions of one project share its queue directory, and inotify gives
 * one watch (one wd) per directory: removing it when one session ends
 * would leave the others' approvals unapplied.
 */
static bool done_watch_shared(struct sbx_daemon *d, const struct sbx_session_rt *s)
{
	for (const struct sbx_session_rt *o = d->sessions; o; o = o->next)
		if (o != s && o->done_wd == s->done_wd)
			return true;
	return false;
}

int sbx_session_watch(struct sbx_daemon *d, struct sbx_session_rt *s)
{
	char *p = sbx_asprintf("%s/cgroup.events", s->cgroup_path);

	s->events_wd = inotify_add_watch(d->ino, p, IN_MODIFY);
	free(p);
	if (s->events_wd < 0)
		return -errno;
	s->done_wd = -1;
	if (s->queue) {
		s->done_wd = sbx_qwatch_add(d->qwatch, s->queue, SBX_QDIR_DONE, SBX_QW_ARRIVED);
		if (s->done_wd < 0)
			sbx_warn("session %s: cannot watch the decisions in %s: %s", s->name,
				 s->project, strerror(-s->done_wd));
	}
	return 0;
}

/* ---- creation ---------------------------------------------------------------- */

static void session_name(char *buf, size_t len)
{
	unsigned char r[3];
	struct tm tm;
	time_t now = time(NULL);

	gmtime_r(&now, &tm);
	if (getrandom(r, sizeof(r), 0) != sizeof(r))
		memset(r, 0, sizeof(r));
	snprintf(buf, len, "%04d%02d%02dT%02d%02d%02dZ-%02x%02x%02x", tm.tm_year + 1900,
		 tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, r[0], r[1], r[2]);
}

static int write_procs(const char *cgroup, pid_t pid)
{
	char *p = sbx_asprintf("%s/cgroup.procs", cgroup);
	char num[32];
	int fd, rc = 0, n;

	fd = open(p, O_WRONLY | O_CLOEXEC);
	free(p);
	if (fd < 0)
		return -errno;
	n = snprintf(num, sizeof(num), "%d", (int)pid);
	if (write(fd, num, n) != n)
		rc = -errno;
	close(fd);
	return rc;
}

/*
 * Writing a pid into cgroup.procs waits for an RCU grace period (the
 * threadgroup rwsem taken for writing, unless cgroup2 has favordynmods):
 * milliseconds in which the daemon would do nothing. The write runs in a
 * thread of its own while the session's queue, audit log and resolver are
 * opened, and is joined before the reply. The session's entry is in the
 * kernel before the write starts, so the caller is never in the cgroup
 * without it.
 */
struct migrate {
	pthread_t thread;
	const char *cgroup;
	pid_t pid;
	int rc;
	uint64_t ns;
	bool started;
};

static void *migrate_run(void *arg)
{
	struct migrate *m = arg;
	uint64_t t = sbx_boot_ns();

	m->rc = write_procs(m->cgroup, m->pid);
	m->ns = sbx_boot_ns() - t;
	return NULL;
}

static void migrate_start(struct migrate *m, const char *cgroup, pid_t pid)
{
	*m = (struct migrate){ .cgroup = cgroup, .pid = pid };
	/* without a thread the write is made here, as before */
	m->started = !pthread_create(&m->thread, NULL, migrate_run, m);
	if (!m->started)
		migrate_run(m);
}

static int migrate_join(struct migrate *m)
{
	if (m->started)
		pthread_join(m->thread, NULL);
	m->started = false;
	return m->rc;
}

const char *const sbx_start_phase_names[SBX_SP_N] = {
	[SBX_SP_CHECKS] = "checks", [SBX_SP_POLICY] = "policy", [SBX_SP_CGROUP] = "cgroup",
	[SBX_SP_QUEUE] = "queue", [SBX_SP_KERNEL] = "kernel", [SBX_SP_RESOLVER] = "resolver",
	[SBX_SP_MIGRATE] = "migrate", [SBX_SP_RECORDS] = "records", [SBX_SP_STATE] = "state",
	[SBX_SP_MIGRATE_WRITE] = "migrate_write",
};

/* the time since *t goes to phase i, and *t moves on */
static void phase_done(struct sbx_daemon *d, enum sbx_start_phase i, uint64_t *t)
{
	uint64_t now = sbx_boot_ns();

	d->start_ns[i] = now - *t;
	*t = now;
}

/* A container's cgroup, made by its runtime, that becomes the session's
 * (containers.c); NULL: run's own, made here and the caller moved in. */
struct adopt {
	const char *cgroup;
	json_t *identity;
	const struct sbx_graft *grafts;	/* its mount roots (policy/graft.c) */
};

static int session_create(struct sbx_daemon *d, pid_t pid, uid_t uid, gid_t gid,
			  const char *policy_path, const char *project, const char *home,
			  bool learn, const struct adopt *ad, struct sbx_session_rt **out,
			  char **err, json_t **diags)
{
	struct sbx_session_rt *s = sbx_calloc(1, sizeof(*s));
	struct sbx_policy_use u = {};
	char *base = NULL, real[PATH_MAX], cur[128];
	struct stat st;
	struct passwd *pw;
	int rc;
	bool in_map = false, made_cg = false;
	uint64_t t = sbx_boot_ns();
	struct migrate m = { 0 };
	char *back = NULL;

	*out = NULL;
	memset(d->start_ns, 0, sizeof(d->start_ns));
	if (!ad && sbx_pid_in_session(pid, cur, sizeof(cur))) {
		*err = sbx_asprintf("process %d is already in session %s: sessions cannot be "
				    "nested or left", (int)pid, cur);
		free(s);
		return -EPERM;
	}
	if (!realpath(project, real) || stat(real, &st) || !S_ISDIR(st.st_mode)) {
		*err = sbx_asprintf("project directory %s does not exist", project);
		free(s);
		return -ENOENT;
	}
	if (uid != 0 && st.st_uid != uid) {
		*err = sbx_asprintf("project directory %s belongs to uid %u, not to you (uid %u)",
				    real, st.st_uid, uid);
		free(s);
		return -EPERM;
	}
	pw = getpwuid(uid);
	if (uid != 0 || !home || !*home)
		home = pw ? pw->pw_dir : "/";

	s->uid = uid;
	s->gid = gid;
	s->home = sbx_strdup(home);
	s->project = sbx_strdup(real);
	s->policy_path = sbx_strdup(policy_path);
	s->tier = sbx_tier_name(d->k.tier);
	s->landlock_abi = d->k.landlock_abi;
	s->learn = learn;
	if (ad) {
		s->container = json_incref(ad->identity);
		s->grafts = sbx_grafts_dup(ad->grafts);
		/* the runtime still sets the container up: the entry arms at
		 * its exec (bpf/exec.bpf.c), never by a later update of ours */
		s->arming = true;
	}
	s->serial = d->next_serial++;
	s->events_wd = s->done_wd = -1;
	session_name(s->name, sizeof(s->name));
	phase_done(d, SBX_SP_CHECKS, &t);

	rc = sbx_policy_obtain(d, uid, gid, s->home, s->project, policy_path, learn,
			       s->grafts, SBX_OBTAIN_KEPT, &u, err);
	if (diags)
		*diags = json_incref(u.diags);
	if (rc) {
		sbx_policy_use_free(&u);
		sbx_session_free(s);
		return rc;
	}
	sbx_policy_take(s, &u);	/* in the kernel already; released below on failure */
	phase_done(d, SBX_SP_POLICY, &t);

	rc = sbx_sessions_root_sync(&d->k, d->cg_root, err);
	if (rc)
		goto fail;
	base = sbx_asprintf("%s/" SBX_CGROUP_DIR_NAME, d->cg_root);
	if (ad) {
		s->cgroup_path = sbx_strdup(ad->cgroup);
	} else {
		s->cgroup_path = sbx_asprintf("%s/%s", base, s->name);
		if (mkdir(s->cgroup_path, 0755)) {
			rc = -errno;
			*err = sbx_asprintf("creating %s: %s", s->cgroup_path, strerror(-rc));
			goto fail;
		}
		made_cg = true;
	}
	if (stat(s->cgroup_path, &st)) {
		rc = -errno;
		*err = sbx_asprintf("%s: %s", s->cgroup_path, strerror(-rc));
		goto fail;
	}
	s->cgid = st.st_ino;	/* cgroup2: the directory's inode is the cgroup id */
	if (ad && sbx_session_by_cgid(d, s->cgid)) {
		rc = -EEXIST;
		*err = sbx_asprintf("%s is session %s already", s->cgroup_path,
				    sbx_session_by_cgid(d, s->cgid)->name);
		goto fail;
	}
	phase_done(d, SBX_SP_CGROUP, &t);

	/* the session's entry before the caller can be in its cgroup */
	rc = sbx_session_push_hdr(d, s);
	if (rc) {
		*err = sbx_asprintf("adding the session to the kernel: %s", strerror(-rc));
		goto fail;
	}
	in_map = true;
	s->next = d->sessions;
	d->sessions = s;
	sbx_protect_sync(d);
	phase_done(d, SBX_SP_KERNEL, &t);

	if (!ad) {
		/* where a start that fails after the move puts the caller back */
		char *cg = sbx_pid_cgroup(pid);

		back = cg ? sbx_asprintf("%s%s", d->cg_root, cg) : NULL;
		free(cg);
		migrate_start(&m, s->cgroup_path, pid);
	}
	s->queue = sbx_queue_open(s->project, SBX_Q_CREATE, uid, gid, err);
	if (!s->queue) {
		rc = -EIO;
		goto unmove;
	}
	s->audit = sbx_audit_open(s->queue, s->name, err);
	if (!s->audit) {
		rc = -EIO;
		goto unmove;
	}
	/* a burst of denials must not wait for a disk flush each; the timer
	 * syncs the log every second */
	sbx_audit_set_sync(s->audit, false);
	{
		char *rerr = NULL;

		sbx_queue_recover(s->queue, &rerr);
		if (rerr)
			sbx_warn("queue %s: %s", s->project, rerr);
		free(rerr);
	}
	/* before the reply, so that the caller's first access finds them */
	sbx_grants_apply_remembered(d, s);
	phase_done(d, SBX_SP_QUEUE, &t);
	/* its resolver, before anything of it runs: its first lookup works */
	rc = sbx_resolver_open(d, s, err);
	if (rc)
		goto unmove;
	sbx_claude_json_snapshot(s);
	phase_done(d, SBX_SP_RESOLVER, &t);

	rc = migrate_join(&m);
	d->start_ns[SBX_SP_MIGRATE_WRITE] = m.ns;
	if (rc) {
		*err = sbx_asprintf("moving process %d into %s: %s", (int)pid, s->cgroup_path,
				    strerror(-rc));
		goto unlist;
	}
	/* what the write took beyond the work above: the wait the caller saw */
	phase_done(d, SBX_SP_MIGRATE, &t);
	free(back);
	rc = sbx_session_watch(d, s);
	if (rc)
		sbx_warn("session %s: cannot watch its cgroup: %s", s->name, strerror(-rc));
	sbx_session_dirty(s);
	{
		json_t *rec = json_pack("{s:s,s:s,s:i,s:i,s:s,s:s}", "event", "session_start",
					"session", s->name, "pid", (int)pid, "uid", (int)uid,
					"policy", policy_path, "project", s->project);

		if (learn)
			json_object_set_new(rec, "learn", json_true());
		if (s->container)
			json_object_set(rec, "container", s->container);
		sbx_daemon_audit(s, rec);
		json_decref(rec);
	}
	phase_done(d, SBX_SP_RECORDS, &t);
	free(base);
	/* every update of the entry while adopting is made: from here on none
	 * carries the arming flag (grants.c) */
	s->arming = false;
	*out = s;
	return 0;
unmove:
	/* a step after the move began failed: the caller goes back where it
	 * was before the entry goes (it stays confined until then), or, if
	 * it cannot, it does not go on at all */
	if (!ad && !migrate_join(&m) && (!back || write_procs(back, pid))) {
		sbx_warn("session %s: a failed start could not move pid %d back: killed it",
			 s->name, (int)pid);
		kill(pid, SIGKILL);
	}
unlist:
	free(back);
	d->sessions = s->next;
	sbx_protect_sync(d);
fail:
	sbx_resolver_close(d, s, false);
	if (in_map) {
		bpf_map_delete_elem(d->k.sessions, &s->cgid);
		sbx_grants_forget(d, s);
		sbx_learned_forget(d, s);
	}
	if (made_cg)
		rmdir(s->cgroup_path);
	{
		uint32_t id = s->policy_id;

		free(base);
		sbx_policy_use_free(&u);
		sbx_session_free(s);
		sbx_policy_release(d, id);	/* after s left d->sessions */
	}
	return rc ? rc : -EINVAL;
}

/*
 * The links first (attach.h): a session is never reported started, nor
 * its policy taken from the cache, before every hook runs again and what
 * the hooks missed while detached is forgotten.
 */
static int create_linked(struct sbx_daemon *d, pid_t pid, uid_t uid, gid_t gid,
			 const char *policy_path, const char *project, const char *home,
			 bool learn, const struct adopt *ad, struct sbx_session_rt **out,
			 char **err, json_t **diags)
{
	char *aerr = NULL;
	int rc;

	*out = NULL;
	/* Landlock refuses or allows, and says nothing of what it allows:
	 * turning a deny into "allow" there would record nothing at all */
	if (learn && d->k.tier == SBX_TIER_LANDLOCK) {
		*err = sbx_strdup("run --learn needs the bpf-lsm tier, which records what it "
				  "lets through; this kernel has the landlock tier (no BPF-LSM), "
				  "where Landlock allows without a record. Nothing was run "
				  "('bpfsbx doctor' names the lsm= line that brings the bpf-lsm tier)");
		return -EOPNOTSUPP;
	}
	rc = sbx_attach_session_begin(d, &aerr);
	if (rc) {
		*err = sbx_asprintf("attaching bpfsbx's programs failed, so the session is "
				    "refused: %s", aerr ? aerr : strerror(-rc));
		free(aerr);
		return rc;
	}
	rc = session_create(d, pid, uid, gid, policy_path, project, home, learn, ad, out, err,
			    diags);
	sbx_attach_session_done(d);
	/* said to the caller, and here: a client that gave up hears nothing */
	if (rc)
		sbx_warn("no session for pid %d (uid %u, %s): %s", (int)pid, (unsigned)uid,
			 policy_path, *err ? *err : strerror(-rc));
	return rc;
}

int sbx_session_create(struct sbx_daemon *d, pid_t pid, uid_t uid, gid_t gid,
		       const char *policy_path, const char *project, const char *home,
		       bool learn, struct sbx_session_rt **out, char **err, json_t **diags)
{
	return create_linked(d, pid, uid, gid, policy_path, project, home, learn, NULL, out, err,
			     diags);
}

int sbx_session_create_adopted(struct sbx_daemon *d, pid_t pid, uid_t uid, gid_t gid,
			       const char *policy_path, const char *project, const char *cgroup,
			       json_t *identity, const struct sbx_graft *grafts,
			       struct sbx_session_rt **out,
			       char **err, json_t **diags)
{
	struct adopt ad = { .cgroup = cgroup, .identity = identity, .grafts = grafts };

	return create_linked(d, pid, uid, gid, policy_path, project, NULL, false, &ad, out, err,
			     diags);
}

int sbx_session_reload(struct sbx_daemon *d, struct sbx_session_rt *s, const char *policy_path,
		       char **err, json_t **diags)
{
	struct sbx_policy_use u = {};
	uint32_t old = s->policy_id;
	int rc;

	/* fresh: a reload is asked for because something changed */
	rc = sbx_policy_obtain(d, s->uid, s->gid, s->home, s->project, policy_path, s->learn,
			       s->grafts, SBX_OBTAIN_FRESH, &u, err);
	if (diags)
		*diags = json_incref(u.diags);
	if (rc) {
		sbx_policy_use_free(&u);
		return rc;	/* the old policy stays in force */
	}
	sbx_policy_take(s, &u);
	sbx_policy_use_free(&u);
	/* the landlock tier: the session's Landlock domain holds the plan of
	 * the policy it started with and takes no other, so from now on the
	 * program on security_file_open decides its reads and execs by the
	 * new one (bpf/files.bpf.c). A read the new policy allows and the old
	 * plan refused stays refused: a domain only tightens. */
	if (d->k.tier == SBX_TIER_LANDLOCK)
		s->hdr.flags |= SBX_PF_DECIDE_OPENS;
	/* the swap: one map update */
	rc = sbx_session_push_hdr(d, s);
	if (rc) {
		*err = sbx_asprintf("switching the session to the new policy: %s", strerror(-rc));
		return rc;
	}
	sbx_policy_release(d, old);
	sbx_learned_redecide(d, s);
	free(s->policy_path);
	s->policy_path = sbx_strdup(policy_path);
	sbx_protect_sync(d);
	sbx_session_dirty(s);
	return 0;
}

void sbx_session_end(struct sbx_daemon *d, struct sbx_session_rt *s)
{
	struct sbx_session_rt **pp;
	json_t *rec;

	/* its last events first, while the session is still known */
	if (d->rb)
		ring_buffer__consume(d->rb);
	bpf_map_delete_elem(d->k.sessions, &s->cgid);
	sbx_grants_forget(d, s);
	sbx_resolver_close(d, s, false);
	sbx_learned_forget(d, s);
	if (s->events_wd >= 0)
		inotify_rm_watch(d->ino, s->events_wd);
	if (s->done_wd >= 0 && !done_watch_shared(d, s))
		sbx_qwatch_rm(d->qwatch, s->done_wd);
	if (rmdir(s->cgroup_path) && errno != ENOENT)
		sbx_warn("session %s: removing %s: %s", s->name, s->cgroup_path, strerror(errno));
	sbx_events_flush_all(d);
	sbx_claude_json_check(s);
	rec = json_pack("{s:s,s:s}", "event", "session_end", "session", s->name);
	sbx_daemon_audit(s, rec);
	json_decref(rec);
	sbx_state_remove(s);
	for (pp = &d->sessions; *pp; pp = &(*pp)->next) {
		if (*pp == s) {
			*pp = s->next;
			break;
		}
	}
	sbx_protect_sync(d);
	/* no session left: outside clients' loopback connects stop looking
	 * their listener up (bpf/inbound.bpf.c) until a session's socket
	 * takes a port again. Sessions start only in this loop, so none can
	 * take one between the check and the write. */
	if (!d->sessions)
		sbx_session_ports_forget(&d->k);
	sbx_attach_sessions_changed(d);
	sbx_info("session %s ended", s->name);
	{
		uint32_t id = s->policy_id;

		sbx_session_free(s);
		sbx_policy_release(d, id);	/* unless shared or cached */
	}
}

/* ---- adoption after a restart ---------------------------------------------------- */

int sbx_sessions_adopt(struct sbx_daemon *d)
{
	DIR *dir = opendir(SBX_STATE_DIR);
	struct dirent *de;
	int n = 0;

	sbx_protect_read(d);	/* what a previous daemon left pinned */
	/* no saved state: still sweep what a previous daemon left behind */
	while (dir && (de = readdir(dir))) {
		struct sbx_session_rt *s;
		struct sbx_session kv;
		struct stat st;
		char *path, *err = NULL;
		size_t l = strlen(de->d_name);

		/* policy-N.json: the shared part of sessions' state, read with them */
		if (l < 6 || strcmp(de->d_name + l - 5, ".json") ||
		    !strncmp(de->d_name, "policy-", 7))
			continue;
		path = sbx_asprintf(SBX_STATE_DIR "/%s", de->d_name);
		s = sbx_state_load(path);
		if (!s) {
			sbx_warn("ignoring unreadable session state %s", path);
			free(path);
			continue;
		}
		if (s->policy_id >= d->next_policy_id)
			d->next_policy_id = s->policy_id + 1;
		if (s->serial >= d->next_serial)
			d->next_serial = s->serial + 1;
		if (stat(s->cgroup_path, &st) || st.st_ino != s->cgid ||
		    bpf_map_lookup_elem(d->k.sessions, &s->cgid, &kv)) {
			/* The cgroup or the kernel entry is gone (reboot, unload). */
			sbx_info("dropping stale session %s", s->name);
			bpf_map_delete_elem(d->k.sessions, &s->cgid);
			sbx_resolver_close(d, s, false);
			sbx_learned_forget(d, s);
			rmdir(s->cgroup_path);	/* its policy goes in the sweep below */
			unlink(path);
			free(path);
			sbx_session_free(s);
			continue;
		}
		free(path);
		s->queue = sbx_queue_open(s->project, SBX_Q_CREATE, s->uid, s->gid, &err);
		if (!s->queue) {
			sbx_warn("session %s: queue: %s", s->name, err ? err : "?");
			free(err);
			err = NULL;
		} else {
			s->audit = sbx_audit_open(s->queue, s->name, &err);
			if (!s->audit) {
				sbx_warn("session %s: audit: %s", s->name, err ? err : "?");
				free(err);
				err = NULL;
			} else {
				sbx_audit_set_sync(s->audit, false);
			}
			sbx_queue_recover(s->queue, &err);
			if (err)
				sbx_warn("queue %s: %s", s->project, err);
			free(err);
			err = NULL;
		}
		s->next = d->sessions;
		d->sessions = s;
		sbx_session_watch(d, s);
		/* its resolver again, on the same address and ports, and what it
		 * had learned: DNS is back within the daemon's start */
		if (sbx_resolver_open(d, s, &err)) {
			sbx_warn("session %s: %s", s->name, err ? err : "no resolver");
			free(err);
			err = NULL;
		}
		sbx_learned_adopt(d, s);
		sbx_info("adopted session %s (cgroup %llu)", s->name, (unsigned long long)s->cgid);
		n++;
	}
	if (dir)
		closedir(dir);
	sbx_protect_sync(d);
	sbx_policy_sweep(d);
	/* what no live session accounts for (ended while no daemon ran) */
	sbx_grants_sweep(d);
	sbx_learned_sweep(d);
	/* Finish what was half done while no daemon ran. */
	for (struct sbx_session_rt *s = d->sessions, *nx; s; s = nx) {
		nx = s->next;
		if (!sbx_session_populated(s)) {
			sbx_session_end(d, s);
			continue;
		}
		if (s->queue)
			sbx_decisions_scan(d, s);
	}
	return n;
}
