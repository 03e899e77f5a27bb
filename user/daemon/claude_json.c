// SPDX-License-Identifier: GPL-2.0
/*
 * claude_json.c - the guard on ~/.claude.json (docs/POLICY.md).
 *
 * Claude Code rewrites ~/.claude.json all the time, so a session may write
 * it; but its user-scope mcpServers (and hooks and permissions) start or
 * allow programs at the user's next `claude`, outside every session. So the
 * daemon keeps a copy from the session's start and puts the guarded keys
 * back as they were: within a tick of each change while the session runs
 * (a `claude` the person starts meanwhile, outside, must not load them),
 * and once more when it ends. What the session had written
 * there is kept in <project>/.sandbox/claude-json/SESSION.json and named in
 * the audit log, for the person to apply if they want it; every other key
 * the agent wrote stays.
 *
 * The file is the user's: it is opened without following symlinks, only
 * when it is a regular file of the session's user, and written back as that
 * user by rename in the home directory.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include <jansson.h>
#include "lib/alloc.h"
#include "lib/fileio.h"
#include "lib/log.h"
#include "user/daemon/claude_json.h"

#define CJ_MAX	(64u << 20)

/* keys that start or allow programs, at the top and in each projects entry */
static const char *const guarded[] = {
	"mcpServers", "hooks", "enabledMcpjsonServers", "disabledMcpjsonServers",
	"enableAllProjectMcpServers", "permissions", "allowedTools", NULL,
};

static char *snap_path(const struct sbx_session_rt *s)
{
	return sbx_asprintf(SBX_STATE_DIR "/%s.claude-json-copy", s->name);
}

/* ~/.claude.json of the session's user: the parsed object, NULL if absent
 * (*absent) or not one we may touch */
static json_t *load_user_file(const struct sbx_session_rt *s, int *homefd, bool *absent)
{
	struct stat st;
	json_t *j = NULL;
	char *buf = NULL;
	size_t len;
	int rc;

	*absent = false;
	*homefd = s->home ? open(s->home, O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC) : -1;
	if (*homefd < 0)
		return NULL;
	rc = sbx_read_file_at(*homefd, ".claude.json", CJ_MAX, &buf, &len, &st);
	if (rc == -ENOENT) {
		*absent = true;
		return NULL;
	}
	if (rc || st.st_uid != s->uid) {
		free(buf);
		return NULL;
	}
	j = json_loadb(buf, len, 0, NULL);
	free(buf);
	if (j && !json_is_object(j)) {
		json_decref(j);
		j = NULL;
	}
	return j;
}

void sbx_claude_json_snapshot(const struct sbx_session_rt *s)
{
	int homefd;
	bool absent;
	json_t *cur = load_user_file(s, &homefd, &absent), *snap;
	char *path = snap_path(s), *txt;

	if (homefd >= 0)
		close(homefd);
	if (!cur && !absent)
		goto out;	/* not a file we guard (unreadable, not the user's) */
	snap = json_pack("{s:b,s:o}", "existed", !absent, "content", cur ? cur : json_object());
	txt = snap ? json_dumps(snap, JSON_COMPACT) : NULL;
	if (txt && sbx_write_file_atomic(path, txt, strlen(txt), 0600))
		sbx_warn("session %s: cannot keep a copy of ~/.claude.json", s->name);
	free(txt);
	json_decref(snap);
out:
	free(path);
}

/* the guarded keys of one level: put old's back into cur; changed keys
 * are added to what (as "projects.P.key" or "key") and the session's
 * values to prop */
static void restore_level(json_t *cur, const json_t *old, const char *where, json_t *what,
			  json_t *prop)
{
	for (int i = 0; guarded[i]; i++) {
		json_t *c = json_object_get(cur, guarded[i]);
		const json_t *o = json_object_get(old, guarded[i]);
		char *name;

		if ((!c && !o) || (c && o && json_equal(c, (json_t *)o)))
			continue;
		name = sbx_asprintf("%s%s", where, guarded[i]);
		json_array_append_new(what, json_string(name));
		json_object_set(prop, name, c ? c : json_null());
		free(name);
		if (o)
			json_object_set(cur, guarded[i], (json_t *)o);
		else
			json_object_del(cur, guarded[i]);
	}
}

int sbx_claude_json_restore(const struct sbx_session_rt *s, json_t *cur, const json_t *old,
			    json_t **what, json_t **prop)
{
	const json_t *oprojs = json_object_get(old, "projects");
	json_t *cprojs = json_object_get(cur, "projects"), *v;
	const char *k;

	*what = json_array();
	*prop = json_object();
	(void)s;
	restore_level(cur, old, "", *what, *prop);
	json_object_foreach(cprojs, k, v) {
		char *where = sbx_asprintf("projects.%s.", k);

		if (json_is_object(v))
			restore_level(v, json_object_get(oprojs, k), where, *what, *prop);
		free(where);
	}
	return (int)json_array_size(*what);
}

/* one look at the file: *seen filled; false when it is not there */
static bool cj_stat(const struct sbx_session_rt *s, struct sbx_cj_seen *seen)
{
	struct stat st;

	memset(seen, 0, sizeof(*seen));
	if (!s->home)
		return false;
	{
		int fd = open(s->home, O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		int rc;

		if (fd < 0)
			return false;
		rc = fstatat(fd, ".claude.json", &st, AT_SYMLINK_NOFOLLOW);
		close(fd);
		if (rc)
			return false;
	}
	seen->dev = st.st_dev;
	seen->ino = st.st_ino;
	seen->size = (uint64_t)st.st_size;
	seen->mtime_ns = (int64_t)st.st_mtim.tv_sec * 1000000000 + st.st_mtim.tv_nsec;
	return true;
}

static void cj_check(struct sbx_session_rt *s, bool final);

void sbx_claude_json_watch(struct sbx_session_rt *s)
{
	struct sbx_cj_seen now;

	cj_stat(s, &now);
	if (!memcmp(&now, &s->cj_seen, sizeof(now)))
		return;
	cj_check(s, false);
	/* our own write, if any, is not a change to look at again */
	cj_stat(s, &s->cj_seen);
}

void sbx_claude_json_check(struct sbx_session_rt *s)
{
	cj_check(s, true);
}

static void cj_check(struct sbx_session_rt *s, bool final)
{
	char *path = snap_path(s), *buf = NULL, *txt = NULL, *name = NULL;
	json_t *snap = NULL, *cur = NULL, *what = NULL, *prop = NULL, *rec;
	size_t len;
	bool absent;
	int homefd = -1, n;

	if (sbx_read_file(path, CJ_MAX, &buf, &len))
		goto out;
	snap = json_loadb(buf, len, 0, NULL);
	if (!json_is_object(snap))
		goto out;
	cur = load_user_file(s, &homefd, &absent);
	if (!cur)
		goto out;	/* gone, or no longer the user's regular file */
	n = sbx_claude_json_restore(s, cur, json_object_get(snap, "content"), &what, &prop);
	if (!n)
		goto out;
	txt = json_dumps(cur, JSON_INDENT(2));
	if (!txt || sbx_write_atomic(homefd, ".claude.json", txt, strlen(txt), SBX_W_REPLACE,
				     s->uid, s->gid)) {
		sbx_warn("session %s: ~/.claude.json: cannot put the guarded keys back", s->name);
		goto out;
	}
	free(txt);
	txt = json_dumps(prop, JSON_INDENT(2));
	if (s->queue && txt) {
		int sfd = sbx_queue_sandbox_fd(s->queue), dfd;
		uid_t ou;
		gid_t og;

		sbx_queue_owner(s->queue, &ou, &og);
		dfd = sbx_opendir_beneath(sfd, "claude-json", true, ou, og);
		name = sbx_asprintf("%s.json", s->name);
		if (dfd >= 0) {
			sbx_write_atomic(dfd, name, txt, strlen(txt), SBX_W_REPLACE, ou, og);
			close(dfd);
		}
	}
	rec = json_pack("{s:s,s:O,s:s}", "event", "claude_json_restored", "keys", what,
			"kept_in", name ? name : "");
	sbx_daemon_audit(s, rec);
	json_decref(rec);
	sbx_info("session %s: ~/.claude.json: %d guarded key(s) written by the session were put "
		 "back; the session's version is in .sandbox/claude-json/%s", s->name, n,
		 name ? name : "?");
out:
	if (homefd >= 0)
		close(homefd);
	if (final)
		unlink(path);
	free(path);
	free(buf);
	free(txt);
	free(name);
	json_decref(snap);
	json_decref(cur);
	json_decref(what);
	json_decref(prop);
}
