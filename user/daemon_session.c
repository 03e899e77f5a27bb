// SPDX-License-Identifier: GPL-2.0
/*
 * daemon_session.c - a session's life: cgroup, policy, queue, audit log,
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
#include "user/daemon.h"
#include "user/util.h"

int sbx_cgroup_root(char **path, char **err)
{
	FILE *f = fopen("/proc/self/mountinfo", "re");
	char line[4096];
	char *best = NULL;

	if (!f) {
		*err = sbx_asprintf("reading /proc/self/mountinfo: %s", strerror(errno));
		return -errno;
	}
	while (fgets(line, sizeof(line), f)) {
		char root[PATH_MAX], mnt[PATH_MAX], *sep;

		sep = strstr(line, " - cgroup2 ");
		if (!sep)
			continue;
		if (sscanf(line, "%*d %*d %*s %4095s %4095s", root, mnt) != 2)
			continue;
		if (strcmp(root, "/"))
			continue;	/* a cgroup namespace view: not the real root */
		/* prefer the conventional place when it is mounted twice */
		if (!best || !strcmp(mnt, "/sys/fs/cgroup")) {
			free(best);
			best = sbx_strdup(mnt);
		}
	}
	fclose(f);
	if (!best) {
		*err = sbx_strdup("cgroup v2 is not mounted (run 'bpfsbx doctor')");
		return -ENOENT;
	}
	*path = best;
	return 0;
}

/*
 * Create <cgroup2>/bpfsbx if needed and make sure the kernel's
 * sbx_config.sessions_root names it. The BPF side lets every task whose
 * ancestor is another cgroup pass without a lookup, so a session must
 * never start below a directory whose id the kernel does not have: any
 * failure here fails the session.
 */
int sbx_sessions_root_sync(struct sbx_daemon *d, char **err)
{
	char *base = sbx_asprintf("%s/" SBX_CGROUP_DIR_NAME, d->cg_root);
	struct sbx_config cfg;
	struct stat st;
	__u32 zero = 0;
	int rc = 0;

	if (mkdir(base, 0755) && errno != EEXIST) {
		rc = -errno;
		*err = sbx_asprintf("creating %s: %s", base, strerror(-rc));
	} else if (stat(base, &st)) {
		rc = -errno;
		*err = sbx_asprintf("%s: %s", base, strerror(-rc));
	} else if (bpf_map_lookup_elem(d->k.config, &zero, &cfg)) {
		rc = -errno;
		*err = sbx_asprintf("reading sbx_config: %s", strerror(-rc));
	} else if (cfg.sessions_root != (__u64)st.st_ino) {
		cfg.sessions_root = st.st_ino;	/* cgroup2: the inode is the id */
		if (bpf_map_update_elem(d->k.config, &zero, &cfg, BPF_ANY)) {
			rc = -errno;
			*err = sbx_asprintf("writing sbx_config: %s", strerror(-rc));
		}
	}
	free(base);
	return rc;
}

bool sbx_pid_in_session(pid_t pid, char *name, size_t len)
{
	char path[64], line[4096];
	const char *prefix = "0::/" SBX_CGROUP_DIR_NAME "/";
	bool found = false;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/cgroup", (int)pid);
	f = fopen(path, "re");
	if (!f)
		return true;	/* cannot tell: treat as confined (fail closed) */
	while (fgets(line, sizeof(line), f)) {
		if (strncmp(line, prefix, strlen(prefix)))
			continue;
		found = true;
		if (name) {
			char *p = line + strlen(prefix);

			p[strcspn(p, "/\n")] = 0;
			snprintf(name, len, "%s", p);
		}
	}
	fclose(f);
	return found;
}

struct sbx_session_rt *sbx_session_find(struct sbx_daemon *d, const char *name)
{
	for (struct sbx_session_rt *s = d->sessions; s; s = s->next)
		if (!strcmp(s->name, name))
			return s;
	return NULL;
}

struct sbx_session_rt *sbx_session_by_cgid(struct sbx_daemon *d, uint64_t cgid)
{
	for (struct sbx_session_rt *s = d->sessions; s; s = s->next)
		if (s->cgid == cgid)
			return s;
	return NULL;
}

const struct sbx_rule_row *sbx_session_rule(const struct sbx_session_rt *s, uint32_t id)
{
	for (size_t i = 0; i < s->n_rules; i++)
		if (s->rules[i].id == id)
			return &s->rules[i];
	return NULL;
}

void sbx_session_free(struct sbx_session_rt *s)
{
	if (!s)
		return;
	free(s->home);
	free(s->project);
	free(s->policy_path);
	free(s->cgroup_path);
	for (size_t i = 0; i < s->n_rules; i++) {
		free(s->rules[i].pattern);
		free(s->rules[i].reason);
		free(s->rules[i].source);
	}
	free(s->rules);
	free(s->protect);
	for (size_t i = 0; i < s->n_grants; i++)
		free(s->grants[i].request);
	free(s->grants);
	for (size_t i = 0; i < s->n_pending; i++) {
		free(s->pending[i].key);
		free(s->pending[i].id);
	}
	free(s->pending);
	for (size_t i = 0; i < s->n_my_requests; i++)
		free(s->my_requests[i]);
	free(s->my_requests);
	if (s->audit)
		sbx_audit_close(s->audit);
	if (s->queue)
		sbx_queue_close(s->queue);
	free(s);
}

/* ---- saved state ---------------------------------------------------------- */

static json_t *hex_blob(const void *p, size_t n)
{
	static const char hx[] = "0123456789abcdef";
	char *s = sbx_calloc(1, n * 2 + 1);
	json_t *j;

	for (size_t i = 0; i < n; i++) {
		s[2 * i] = hx[((const unsigned char *)p)[i] >> 4];
		s[2 * i + 1] = hx[((const unsigned char *)p)[i] & 15];
	}
	j = json_string(s);
	free(s);
	return j;
}

static bool unhex_blob(const json_t *j, void *out, size_t n)
{
	const char *s = json_string_value(j);

	if (!s || strlen(s) != n * 2)
		return false;
	for (size_t i = 0; i < n; i++) {
		unsigned v;

		if (!isxdigit((unsigned char)s[2 * i]) || !isxdigit((unsigned char)s[2 * i + 1]) ||
		    sscanf(s + 2 * i, "%2x", &v) != 1)
			return false;
		((unsigned char *)out)[i] = v;
	}
	return true;
}

int sbx_session_save(struct sbx_daemon *d, struct sbx_session_rt *s)
{
	json_t *j = json_object(), *a;
	char *path, *text;
	int rc;

	(void)d;
	json_object_set_new(j, "name", json_string(s->name));
	json_object_set_new(j, "cgid", json_integer(s->cgid));
	json_object_set_new(j, "serial", json_integer(s->serial));
	json_object_set_new(j, "uid", json_integer(s->uid));
	json_object_set_new(j, "gid", json_integer(s->gid));
	json_object_set_new(j, "home", json_string(s->home));
	json_object_set_new(j, "project", json_string(s->project));
	json_object_set_new(j, "policy_path", json_string(s->policy_path));
	json_object_set_new(j, "cgroup", json_string(s->cgroup_path));
	json_object_set_new(j, "policy_id", json_integer(s->policy_id));
	json_object_set_new(j, "hdr", hex_blob(&s->hdr, sizeof(s->hdr)));
	a = json_array();
	for (size_t i = 0; i < s->n_rules; i++)
		json_array_append_new(a, json_pack("{s:i,s:i,s:s,s:s,s:s}", "id",
						   (int)s->rules[i].id, "verdict",
						   (int)s->rules[i].verdict, "pattern",
						   s->rules[i].pattern, "reason", s->rules[i].reason,
						   "source", s->rules[i].source));
	json_object_set_new(j, "rules", a);
	json_object_set_new(j, "protect", hex_blob(s->protect, s->n_protect * sizeof(*s->protect)));
	a = json_array();
	for (size_t i = 0; i < s->n_grants; i++)
		json_array_append_new(a, json_pack("{s:o,s:I,s:s}", "key",
						   hex_blob(&s->grants[i].key,
							    sizeof(s->grants[i].key)),
						   "expires_ns", (json_int_t)s->grants[i].expires_ns,
						   "request", s->grants[i].request));
	json_object_set_new(j, "grants", a);
	a = json_array();
	for (size_t i = 0; i < s->n_my_requests; i++)
		json_array_append_new(a, json_string(s->my_requests[i]));
	json_object_set_new(j, "requests", a);

	text = json_dumps(j, JSON_INDENT(1) | JSON_SORT_KEYS);
	json_decref(j);
	sbx_mkdir_p(SBX_STATE_DIR, 0700);
	path = sbx_asprintf(SBX_STATE_DIR "/%s.json", s->name);
	rc = sbx_write_file_atomic(path, text, strlen(text), 0600);
	if (rc)
		sbx_warn("saving session state %s: %s", path, strerror(-rc));
	free(path);
	free(text);
	return rc;
}

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
		char *dp = sbx_asprintf("%s/.sandbox/escalations/done", s->project);

		s->done_wd = inotify_add_watch(d->ino, dp, IN_MOVED_TO | IN_CLOSE_WRITE);
		if (s->done_wd < 0)
			sbx_warn("session %s: cannot watch %s: %s", s->name, dp, strerror(errno));
		free(dp);
	}
	return 0;
}

/* ---- remembered "approve always" decisions ----------------------------------- */

static void apply_remembered(struct sbx_daemon *d, struct sbx_session_rt *s)
{
	struct sbx_remembered *v = NULL;
	char *err = NULL;
	size_t n = 0;

	if (sbx_remembered_load(s->queue, &v, &n, &err)) {
		if (err)
			sbx_warn("session %s: %s (remembered decisions not applied)", s->name, err);
		free(err);
		return;
	}
	for (size_t i = 0; i < n; i++) {
		struct sbx_grant_key k = { .cgid = s->cgid };
		const struct sbx_remembered *r = &v[i];

		if (!r->kind)
			continue;
		if (!strcmp(r->kind, "file") || !strcmp(r->kind, "exec")) {
			uint32_t dev;
			uint64_t ino;
			int acc = !strcmp(r->kind, "exec") ? SBX_ACC_EXEC :
				  (r->access && !strcmp(r->access, "write")) ? SBX_ACC_WRITE :
									      SBX_ACC_READ;

			if (!r->path)
				continue;
			k.access = acc;
			if (sbx_kident(r->path, true, &dev, &ino) == 0) {
				k.kind = SBX_GK_INODE;
				k.dev = dev;
				k.ino = ino;
			} else {
				char *copy = sbx_strdup(r->path), *slash = strrchr(copy, '/');

				if (!slash || !slash[1]) {
					free(copy);
					continue;
				}
				*slash = 0;
				if (sbx_kident(*copy ? copy : "/", true, &dev, &ino)) {
					free(copy);
					continue;
				}
				k.kind = SBX_GK_NAME;
				k.dev = dev;
				k.ino = ino;
				k.hash = sbx_hash_name(slash + 1, strlen(slash + 1));
				free(copy);
			}
		} else if (!strcmp(r->kind, "net") && r->addr) {
			unsigned char a[16] = {};

			if (inet_pton(AF_INET, r->addr, a) == 1) {
				k.kind = SBX_GK_NET4;
			} else if (inet_pton(AF_INET6, r->addr, a) == 1) {
				k.kind = SBX_GK_NET6;
			} else {
				continue;
			}
			memcpy(k.addr, a, 16);
			k.port = r->port;
		} else {
			continue;
		}
		if (sbx_grant_add(d, s, &k, 0, r->request ? r->request : "remembered"))
			sbx_warn("session %s: applying a remembered decision failed", s->name);
	}
	sbx_remembered_free(v, n);
}

static void delete_grants_of(struct sbx_daemon *d, uint64_t cgid)
{
	struct sbx_grant_key key, next;
	int first = 1;

	while (bpf_map_get_next_key(d->k.grants, first ? NULL : &key, &next) == 0) {
		key = next;
		first = 0;
		if (next.cgid == cgid) {
			bpf_map_delete_elem(d->k.grants, &next);
			first = 1;
		}
	}
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

static void take_policy(struct sbx_session_rt *s, struct sbx_policy_use *u)
{
	for (size_t i = 0; i < s->n_rules; i++) {
		free(s->rules[i].pattern);
		free(s->rules[i].reason);
		free(s->rules[i].source);
	}
	free(s->rules);
	free(s->protect);
	s->rules = u->rules;
	s->n_rules = u->n_rules;
	u->rules = NULL;
	u->n_rules = 0;
	s->protect = u->protect;
	s->n_protect = u->n_protect;
	u->protect = NULL;
	u->n_protect = 0;
	s->hdr = u->hdr;
	s->policy_id = u->hdr.policy_id;
}

static void use_free(struct sbx_policy_use *u)
{
	for (size_t i = 0; i < u->n_rules; i++) {
		free(u->rules[i].pattern);
		free(u->rules[i].reason);
		free(u->rules[i].source);
	}
	free(u->rules);
	free(u->protect);
	json_decref(u->diags);
	memset(u, 0, sizeof(*u));
}

int sbx_session_create(struct sbx_daemon *d, pid_t pid, uid_t uid, gid_t gid,
		       const char *policy_path, const char *project, const char *home,
		       struct sbx_session_rt **out, char **err, json_t **diags)
{
	struct sbx_session_rt *s = sbx_calloc(1, sizeof(*s));
	struct sbx_policy_use u = {};
	char *base = NULL, real[PATH_MAX], cur[128];
	struct stat st;
	struct passwd *pw;
	int rc;
	bool in_map = false, made_cg = false;

	*out = NULL;
	if (sbx_pid_in_session(pid, cur, sizeof(cur))) {
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
	s->serial = d->next_serial++;
	s->events_wd = s->done_wd = -1;
	session_name(s->name, sizeof(s->name));

	rc = sbx_policy_obtain(d, uid, gid, s->home, s->project, policy_path, false, &u, err);
	if (diags)
		*diags = json_incref(u.diags);
	if (rc) {
		use_free(&u);
		sbx_session_free(s);
		return rc;
	}
	take_policy(s, &u);	/* in the kernel already; released below on failure */

	rc = sbx_sessions_root_sync(d, err);
	if (rc)
		goto fail;
	base = sbx_asprintf("%s/" SBX_CGROUP_DIR_NAME, d->cg_root);
	s->cgroup_path = sbx_asprintf("%s/%s", base, s->name);
	if (mkdir(s->cgroup_path, 0755)) {
		rc = -errno;
		*err = sbx_asprintf("creating %s: %s", s->cgroup_path, strerror(-rc));
		goto fail;
	}
	made_cg = true;
	if (stat(s->cgroup_path, &st)) {
		rc = -errno;
		*err = sbx_asprintf("%s: %s", s->cgroup_path, strerror(-rc));
		goto fail;
	}
	s->cgid = st.st_ino;	/* cgroup2: the directory's inode is the cgroup id */

	s->queue = sbx_queue_open(s->project, SBX_Q_CREATE, uid, gid, err);
	if (!s->queue) {
		rc = -EIO;
		goto fail;
	}
	s->audit = sbx_audit_open(s->queue, s->name, err);
	if (!s->audit) {
		rc = -EIO;
		goto fail;
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

	rc = sbx_session_push_hdr(d, s);
	if (rc) {
		*err = sbx_asprintf("adding the session to the kernel: %s", strerror(-rc));
		goto fail;
	}
	in_map = true;
	s->next = d->sessions;
	d->sessions = s;
	sbx_protect_sync(d);
	apply_remembered(d, s);

	rc = write_procs(s->cgroup_path, pid);
	if (rc) {
		*err = sbx_asprintf("moving process %d into %s: %s", (int)pid, s->cgroup_path,
				    strerror(-rc));
		d->sessions = s->next;
		sbx_protect_sync(d);
		goto fail;
	}
	rc = sbx_session_watch(d, s);
	if (rc)
		sbx_warn("session %s: cannot watch its cgroup: %s", s->name, strerror(-rc));
	sbx_session_save(d, s);
	{
		json_t *rec = json_pack("{s:s,s:s,s:i,s:i,s:s,s:s}", "event", "session_start",
					"session", s->name, "pid", (int)pid, "uid", (int)uid,
					"policy", policy_path, "project", s->project);

		sbx_daemon_audit(d, s, rec);
		json_decref(rec);
	}
	free(base);
	*out = s;
	return 0;
fail:
	if (in_map) {
		bpf_map_delete_elem(d->k.sessions, &s->cgid);
		delete_grants_of(d, s->cgid);
	}
	if (made_cg)
		rmdir(s->cgroup_path);
	{
		uint32_t id = s->policy_id;

		free(base);
		use_free(&u);
		sbx_session_free(s);
		sbx_policy_release(d, id);	/* after s left d->sessions */
	}
	return rc ? rc : -EINVAL;
}

int sbx_session_reload(struct sbx_daemon *d, struct sbx_session_rt *s, const char *policy_path,
		       char **err, json_t **diags)
{
	struct sbx_policy_use u = {};
	uint32_t old = s->policy_id;
	int rc;

	/* fresh: a reload is asked for because something changed */
	rc = sbx_policy_obtain(d, s->uid, s->gid, s->home, s->project, policy_path, true, &u, err);
	if (diags)
		*diags = json_incref(u.diags);
	if (rc) {
		use_free(&u);
		return rc;	/* the old policy stays in force */
	}
	take_policy(s, &u);
	use_free(&u);
	/* the swap: one map update */
	rc = sbx_session_push_hdr(d, s);
	if (rc) {
		*err = sbx_asprintf("switching the session to the new policy: %s", strerror(-rc));
		return rc;
	}
	sbx_policy_release(d, old);
	free(s->policy_path);
	s->policy_path = sbx_strdup(policy_path);
	sbx_protect_sync(d);
	sbx_session_save(d, s);
	return 0;
}

void sbx_session_end(struct sbx_daemon *d, struct sbx_session_rt *s)
{
	struct sbx_session_rt **pp;
	char *state;
	json_t *rec;

	/* its last events first, while the session is still known */
	if (d->rb)
		ring_buffer__consume(d->rb);
	bpf_map_delete_elem(d->k.sessions, &s->cgid);
	delete_grants_of(d, s->cgid);
	if (s->events_wd >= 0)
		inotify_rm_watch(d->ino, s->events_wd);
	if (s->done_wd >= 0 && !done_watch_shared(d, s))
		inotify_rm_watch(d->ino, s->done_wd);
	if (rmdir(s->cgroup_path) && errno != ENOENT)
		sbx_warn("session %s: removing %s: %s", s->name, s->cgroup_path, strerror(errno));
	sbx_events_flush_all(d);
	rec = json_pack("{s:s,s:s}", "event", "session_end", "session", s->name);
	sbx_daemon_audit(d, s, rec);
	json_decref(rec);
	state = sbx_asprintf(SBX_STATE_DIR "/%s.json", s->name);
	unlink(state);
	free(state);
	for (pp = &d->sessions; *pp; pp = &(*pp)->next) {
		if (*pp == s) {
			*pp = s->next;
			break;
		}
	}
	sbx_protect_sync(d);
	sbx_info("session %s ended", s->name);
	{
		uint32_t id = s->policy_id;

		sbx_session_free(s);
		sbx_policy_release(d, id);	/* unless shared or cached */
	}
}

/* ---- adoption after a restart ---------------------------------------------------- */

static struct sbx_session_rt *load_state(const char *path)
{
	struct sbx_session_rt *s;
	json_error_t jerr;
	json_t *j, *a, *v;
	size_t i;
	const char *str;

	j = json_load_file(path, 0, &jerr);
	if (!j)
		return NULL;
	s = sbx_calloc(1, sizeof(*s));
	s->events_wd = s->done_wd = -1;
	str = json_string_value(json_object_get(j, "name"));
	snprintf(s->name, sizeof(s->name), "%s", str ? str : "");
	s->cgid = json_integer_value(json_object_get(j, "cgid"));
	s->serial = json_integer_value(json_object_get(j, "serial"));
	s->uid = json_integer_value(json_object_get(j, "uid"));
	s->gid = json_integer_value(json_object_get(j, "gid"));
	s->home = sbx_strdup(json_string_value(json_object_get(j, "home")));
	s->project = sbx_strdup(json_string_value(json_object_get(j, "project")));
	s->policy_path = sbx_strdup(json_string_value(json_object_get(j, "policy_path")));
	s->cgroup_path = sbx_strdup(json_string_value(json_object_get(j, "cgroup")));
	s->policy_id = json_integer_value(json_object_get(j, "policy_id"));
	if (!s->name[0] || !s->cgid || !unhex_blob(json_object_get(j, "hdr"), &s->hdr,
						   sizeof(s->hdr))) {
		json_decref(j);
		sbx_session_free(s);
		return NULL;
	}
	json_array_foreach(json_object_get(j, "rules"), i, v) {
		struct sbx_rule_row *r;

		s->rules = realloc(s->rules, (s->n_rules + 1) * sizeof(*s->rules));
		if (!s->rules)
			abort();
		r = &s->rules[s->n_rules++];
		r->id = json_integer_value(json_object_get(v, "id"));
		r->verdict = json_integer_value(json_object_get(v, "verdict"));
		r->pattern = sbx_strdup(json_string_value(json_object_get(v, "pattern")));
		r->reason = sbx_strdup(json_string_value(json_object_get(v, "reason")));
		r->source = sbx_strdup(json_string_value(json_object_get(v, "source")));
	}
	str = json_string_value(json_object_get(j, "protect"));
	if (str && strlen(str) % (2 * sizeof(struct sbx_protect_key)) == 0) {
		s->n_protect = strlen(str) / (2 * sizeof(struct sbx_protect_key));
		s->protect = sbx_calloc(s->n_protect, sizeof(*s->protect));
		if (!unhex_blob(json_object_get(j, "protect"), s->protect,
				s->n_protect * sizeof(*s->protect)))
			s->n_protect = 0;
	}
	json_array_foreach(json_object_get(j, "grants"), i, v) {
		struct sbx_grant_rt g = {};

		if (!unhex_blob(json_object_get(v, "key"), &g.key, sizeof(g.key)))
			continue;
		g.expires_ns = json_integer_value(json_object_get(v, "expires_ns"));
		g.request = sbx_strdup(json_string_value(json_object_get(v, "request")));
		s->grants = realloc(s->grants, (s->n_grants + 1) * sizeof(*s->grants));
		if (!s->grants)
			abort();
		s->grants[s->n_grants++] = g;
	}
	a = json_object_get(j, "requests");
	json_array_foreach(a, i, v) {
		s->my_requests = realloc(s->my_requests,
					 (s->n_my_requests + 1) * sizeof(*s->my_requests));
		if (!s->my_requests)
			abort();
		s->my_requests[s->n_my_requests++] = sbx_strdup(json_string_value(v));
	}
	json_decref(j);
	return s;
}

int sbx_sessions_adopt(struct sbx_daemon *d)
{
	DIR *dir = opendir(SBX_STATE_DIR);
	struct dirent *de;
	int n = 0;

	if (!dir)
		return 0;
	while ((de = readdir(dir))) {
		struct sbx_session_rt *s;
		struct sbx_session kv;
		struct stat st;
		char *path, *err = NULL;
		size_t l = strlen(de->d_name);

		if (l < 6 || strcmp(de->d_name + l - 5, ".json"))
			continue;
		path = sbx_asprintf(SBX_STATE_DIR "/%s", de->d_name);
		s = load_state(path);
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
		sbx_info("adopted session %s (cgroup %llu)", s->name, (unsigned long long)s->cgid);
		n++;
	}
	closedir(dir);
	sbx_protect_sync(d);
	sbx_policy_sweep(d);
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
