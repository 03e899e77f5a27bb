// SPDX-License-Identifier: GPL-2.0
/*
 * machine_live.c - the machine policy applied live (machine_live.h).
 *
 * Config management (Ansible, Puppet, a systemd path unit) writes
 * machine.yaml or machine.d/, and a session that was accepted under the
 * old floor must not keep what the new one refuses. So every live
 * session's policy is compiled again under the new floor, where the
 * floor holds over what the project says instead of refusing it
 * (sbx_policy_env.floor_live), and then all of them are switched, each
 * by one map update, or none is: a machine file that does not load, or
 * any session that cannot be compiled or switched, leaves every session
 * as it was, with an event that says why.
 *
 * The files (with their signatures and keys/, policy/machine.c) are
 * looked at by a stamp (inode, size, mtime, ctime, mode,
 * owner: a change of owner or mode decides whether a file is trusted),
 * once a second and at SIGHUP (`systemctl reload bpfsbx`): a few stats,
 * and nothing to miss when a watch would have been set too late. The
 * stamp last applied is kept in /run/bpfsbx, so that a daemon that starts
 * again applies a floor that changed while none ran to the sessions it
 * adopts.
 */
#include <dirent.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include "lib/alloc.h"
#include "lib/clock.h"
#include "lib/fileio.h"
#include "lib/log.h"
#include "lib/sign.h"
#include "policy/policy.h"
#include "user/daemon/evrec.h"
#include "user/daemon/grants.h"
#include "user/daemon/learned.h"
#include "user/daemon/machine_live.h"
#include "user/daemon/policy_cache.h"
#include "user/daemon/sinks.h"

static const char *machine_dir(void)
{
	static const struct sbx_policy_env env;

	return sbx_machine_dir(&env);
}

static json_t *stamp_of(const char *path)
{
	struct stat st;

	if (lstat(path, &st))
		return json_pack("{s:s,s:i}", "path", path, "errno", errno);
	return json_pack("{s:s,s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:I}", "path", path,
			 "ino", (json_int_t)st.st_ino, "size", (json_int_t)st.st_size,
			 "mtime_s", (json_int_t)st.st_mtim.tv_sec,
			 "mtime_ns", (json_int_t)st.st_mtim.tv_nsec,
			 "ctime_s", (json_int_t)st.st_ctim.tv_sec,
			 "ctime_ns", (json_int_t)st.st_ctim.tv_nsec,
			 "mode", (json_int_t)st.st_mode, "uid", (json_int_t)st.st_uid);
}

#define APPLIED_STAMP	SBX_RUN_DIR "/machine-stamp.json"

static void keep_applied(const json_t *stamp)
{
	char *text = json_dumps(stamp, JSON_COMPACT);

	if (!text || sbx_write_file_atomic(APPLIED_STAMP, text, strlen(text), 0600))
		sbx_warn("keeping the machine policy's stamp in %s: %s", APPLIED_STAMP,
			 text ? strerror(errno) : "out of memory");
	free(text);
}

static int by_name(const struct dirent **a, const struct dirent **b)
{
	return strcmp((*a)->d_name, (*b)->d_name);
}

/* dir/sub and every entry of it */
static void stamp_dir(json_t *a, const char *dir, const char *sub)
{
	struct dirent **ents = NULL;
	char *p = sbx_asprintf("%s/%s", dir, sub);
	int n;

	json_array_append_new(a, stamp_of(p));
	n = scandir(p, &ents, NULL, by_name);
	for (int i = 0; i < n; i++) {
		if (strcmp(ents[i]->d_name, ".") && strcmp(ents[i]->d_name, "..")) {
			char *e = sbx_asprintf("%s/%s", p, ents[i]->d_name);

			json_array_append_new(a, stamp_of(e));
			free(e);
		}
		free(ents[i]);
	}
	free(ents);
	free(p);
}

/* The directory, machine.yaml and its signature, machine.d and keys/
 * and every entry of them. */
static json_t *machine_stamp(const char *dir)
{
	json_t *a = json_array();
	char *p;

	json_array_append_new(a, stamp_of(dir));
	p = sbx_asprintf("%s/machine.yaml", dir);
	json_array_append_new(a, stamp_of(p));
	free(p);
	p = sbx_asprintf("%s/machine.yaml" SBX_SIG_SUFFIX, dir);
	json_array_append_new(a, stamp_of(p));
	free(p);
	stamp_dir(a, dir, "machine.d");
	stamp_dir(a, dir, "keys");
	return a;
}

static void tell(struct sbx_daemon *d, const char *verdict, const char *what)
{
	struct sbx_evrec r;
	struct timespec now;

	clock_gettime(CLOCK_REALTIME, &now);
	sbx_evrec_init(&r, "machine_policy", &now);
	r.operation = "apply";
	r.object = machine_dir();
	r.verdict = verdict;
	r.rule.rule.reason = what;
	/* the event log has no rule to carry the words: they travel apart */
	r.extra = json_pack("{s:s,s:i,s:s}", "event", "machine_policy", "generation",
			    (int)d->machine_gen, "detail", what);
	sbx_sinks_emit(d, NULL, &r);
	json_decref(r.extra);
}

/* The compile's first error ("FILE:LINE:COL: error: ..."): a bad machine
 * file is named by it */
static const char *first_error(const json_t *diags)
{
	const json_t *v;
	size_t i;

	json_array_foreach(diags, i, v) {
		const char *t = json_string_value(v);

		if (t && strstr(t, ": error: "))
			return t;
	}
	return NULL;
}

/* Switch s's kernel header to hdr, and leave s as it was. */
static int push(struct sbx_daemon *d, struct sbx_session_rt *s, const struct sbx_policy_hdr *hdr)
{
	struct sbx_policy_hdr keep = s->hdr;
	int rc;

	s->hdr = *hdr;
	rc = sbx_session_push_hdr(d, s);
	s->hdr = keep;
	return rc;
}

/* 0, or -errno with *why: nothing changed */
static int apply_all(struct sbx_daemon *d, size_t *n_landlock, char **why)
{
	struct sbx_session_rt *s;
	struct sbx_policy_use *u;
	size_t n = 0, i, pushed = 0;
	char *err = NULL;
	int rc = 0;

	for (s = d->sessions; s; s = s->next)
		n++;
	u = sbx_calloc(n ? n : 1, sizeof(*u));
	/* 1: every session's policy under the new floor, in the kernel
	 * beside the one in force */
	for (s = d->sessions, i = 0; s && !rc; s = s->next, i++) {
		rc = sbx_policy_obtain(d, s->uid, s->gid, s->home, s->project, s->policy_path,
				       s->learn, s->grafts, SBX_OBTAIN_LIVE, &u[i], &err);
		if (rc)
			*why = sbx_asprintf("session %s (%s): %s%s%s", s->name, s->policy_path,
					    err ? err : strerror(-rc), first_error(u[i].diags) ?
					    ": " : "", first_error(u[i].diags) ?: "");
	}
	/* 2: all switched, or those switched back */
	for (s = d->sessions, i = 0; s && !rc; s = s->next, i++, pushed++) {
		rc = push(d, s, &u[i].hdr);
		if (rc)
			*why = sbx_asprintf("switching session %s: %s", s->name, strerror(-rc));
	}
	if (rc) {
		for (s = d->sessions, i = 0; s && i < pushed; s = s->next, i++)
			if (sbx_session_push_hdr(d, s))
				sbx_err("session %s: switching back to its policy %u: %s", s->name,
					s->policy_id, strerror(errno));
		for (i = 0; i < n; i++)
			sbx_policy_use_free(&u[i]);
		free(u);
		free(err);
		return rc;
	}
	/* 3: the daemon's side follows */
	*n_landlock = 0;
	for (s = d->sessions, i = 0; s; s = s->next, i++) {
		uint32_t old = s->policy_id;

		sbx_policy_take(s, &u[i]);
		sbx_policy_use_free(&u[i]);
		sbx_policy_release(d, old);
		sbx_learned_redecide(d, s);
		sbx_session_dirty(s);
		if (s->tier && !strcmp(s->tier, "landlock"))
			(*n_landlock)++;
	}
	sbx_protect_sync(d);
	free(u);
	free(err);
	return 0;
}

void sbx_machine_live_check(struct sbx_daemon *d, bool force)
{
	struct timespec read_at;
	json_t *now;
	size_t n = 0, n_landlock = 0;
	char *why = NULL, *what;

	/* before the stat: a write after this time is seen by the next look */
	clock_gettime(CLOCK_REALTIME, &read_at);
	now = machine_stamp(machine_dir());
	if (!d->machine_stamp) {
		/* the start: the adopted sessions' floor is the one last applied */
		d->machine_stamp = json_load_file(APPLIED_STAMP, 0, NULL);
		if (!d->machine_stamp || !d->sessions) {
			json_decref(d->machine_stamp);
			d->machine_stamp = now;
			d->machine_read_at = read_at;
			keep_applied(now);
			return;
		}
	}
	if (!force && json_equal(now, d->machine_stamp)) {
		json_decref(now);
		if (!d->machine_error)
			d->machine_read_at = read_at;
		return;
	}
	/* taken before the apply: a bad file is not tried again every second,
	 * only when it changes (or at SIGHUP) */
	json_decref(d->machine_stamp);
	d->machine_stamp = now;
	for (struct sbx_session_rt *s = d->sessions; s; s = s->next)
		n++;
	if (apply_all(d, &n_landlock, &why)) {
		free(d->machine_error);
		d->machine_error = why;
		what = sbx_asprintf("the machine policy changed and was not applied: %s; every "
				    "session keeps the previous floor", why);
		sbx_err("%s", what);
		tell(d, "refused", what);
		free(what);
		return;
	}
	free(d->machine_error);
	d->machine_error = NULL;
	d->machine_gen++;
	d->machine_read_at = read_at;
	keep_applied(now);
	what = sbx_asprintf("the machine policy was applied to %zu live session(s)%s", n,
			    n_landlock ? "; on the landlock tier only their network rules "
			    "follow it (a running session's Landlock rules cannot change): its "
			    "files rules hold from their next session" : "");
	sbx_info("%s", what);
	tell(d, "applied", what);
	free(what);
}

json_t *sbx_machine_live_status(const struct sbx_daemon *d)
{
	char at[40];
	json_t *j;

	sbx_rfc3339(at, sizeof(at), &d->machine_read_at, 3);
	j = json_pack("{s:s,s:i,s:s}", "dir", machine_dir(), "generation", (int)d->machine_gen,
		      "read_at", at);

	if (d->machine_error)
		json_object_set_new(j, "error", json_string(d->machine_error));
	return j;
}

void sbx_machine_live_free(struct sbx_daemon *d)
{
	json_decref(d->machine_stamp);
	d->machine_stamp = NULL;
	free(d->machine_error);
	d->machine_error = NULL;
}
