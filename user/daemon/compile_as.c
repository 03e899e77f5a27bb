// SPDX-License-Identifier: GPL-2.0
/*
 * compile_as.c - a policy compiled with its owner's rights.
 *
 * The daemon runs as root, but a policy belongs to the user who starts
 * the session: it is read, expanded (~ is that user's home) and compiled
 * in a child process that has dropped to that user's uid, gid and groups.
 * A user therefore cannot make the daemon read a file they could not read
 * themselves (an `extends: /etc/shadow` only fails). The child sends the
 * compiled entries back over a pipe, in the format below; the daemon
 * applies them all or not at all (policy_cache.c).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include "lib/alloc.h"
#include "lib/fileio.h"
#include "lib/privs.h"
#include "user/daemon/compile_as.h"
#include "lib/json.h"

#define WIRE_MAGIC "SBXCMP1"

struct wire_hdr {
	char magic[8];
	uint32_t ok;
	uint32_t n_inode, n_chain, n_name, n_net4, n_net6, n_protect;
	uint32_t json_len;
	struct sbx_policy_hdr hdr;
};

#define WRITE_PAIRS(fd, arr, n)							\
	do {									\
		for (size_t i_ = 0; i_ < (n); i_++) {				\
			sbx_write_all(fd, &(arr)[i_].k, sizeof((arr)[i_].k));	\
			sbx_write_all(fd, &(arr)[i_].v, sizeof((arr)[i_].v));	\
		}								\
	} while (0)

#define READ_PAIRS(fd, arr, n, rc)						\
	do {									\
		(arr) = sbx_calloc((n), sizeof(*(arr)));			\
		for (size_t i_ = 0; i_ < (n) && !(rc); i_++) {			\
			rc = sbx_read_all(fd, &(arr)[i_].k, sizeof((arr)[i_].k));	\
			rc = rc ?: sbx_read_all(fd, &(arr)[i_].v, sizeof((arr)[i_].v)); \
		}								\
	} while (0)

/* [[path, dev, ino], ...]: what the cache checks again */
static json_t *idents_json(const struct sbx_compiled *c)
{
	json_t *a = json_array();

	for (size_t i = 0; i < c->n_idents; i++)
		json_array_append_new(a, json_pack("[s,I,I,I]", c->idents[i].path,
						   (json_int_t)c->idents[i].dev,
						   (json_int_t)c->idents[i].ino,
						   (json_int_t)c->idents[i].gen));
	return a;
}

static json_t *diags_json(const struct sbx_diags *d)
{
	json_t *a = json_array();

	for (size_t i = 0; i < d->n; i++) {
		const struct sbx_diag *g = &d->v[i];
		char *s = sbx_asprintf("%s:%d:%d: %s: %s%s%s", g->file ? g->file : "?", g->line,
				       g->col, g->level == SBX_DIAG_ERROR ? "error" : "warning",
				       g->field ? g->field : "", g->field ? ": " : "", g->msg);

		json_array_append_new(a, json_string(s));
		free(s);
	}
	return a;
}

/* What a policy file looked like when it was compiled: if it still looks
 * the same, a compiled copy of it may be reused. */
json_t *sbx_source_stamp(const char *path)
{
	struct stat st;

	if (stat(path, &st))
		return json_pack("{s:s}", "path", path);
	return json_pack("{s:s,s:I,s:I,s:I,s:I}", "path", path, "mtime_s",
			 (json_int_t)st.st_mtim.tv_sec, "mtime_ns", (json_int_t)st.st_mtim.tv_nsec,
			 "size", (json_int_t)st.st_size, "ino", (json_int_t)st.st_ino);
}

/* What the machine policy's projects: asks of the session's approvals. */
static json_t *approval_json(const struct sbx_policy *p)
{
	json_t *a = json_pack("{s:I}", "max_always_ttl_s",
			      (json_int_t)sbx_policy_max_always_ttl(p));
	const char *const *who = sbx_policy_approvers(p);

	if (who) {
		json_t *v = json_array();

		for (size_t i = 0; who[i]; i++)
			json_array_append_new(v, json_string(who[i]));
		json_object_set_new(a, "approvers", v);
	}
	return a;
}

/* The child: never returns. */
static void compile_child(int fd, uid_t uid, gid_t gid, const char *home, const char *project,
			  const char *policy_path, uint32_t policy_id, bool floor_live, bool learn)
{
	struct sbx_policy_env env = { .home = home, .project = project, .floor_live = floor_live };
	struct sbx_diags diags = {};
	struct sbx_compiled c = {};
	struct sbx_policy *p = NULL;
	struct wire_hdr h = { .magic = WIRE_MAGIC };
	json_t *j = json_object(), *rules = json_array();
	char *text;
	int rc;

	rc = sbx_drop_privileges(uid, gid, 0);
	if (rc) {
		json_object_set_new(j, "error", json_sprintf("dropping privileges: %s",
							     strerror(-rc)));
		goto send;
	}
	if (setenv("HOME", home, 1))
		_exit(3);
	p = sbx_policy_load_file(policy_path, &env, &diags);
	if (p && learn && sbx_policy_learn(p, env.shipped_dir, &diags)) {
		sbx_policy_free(p);
		p = NULL;
	}
	if (p && sbx_policy_compile(p, policy_id, &c, &diags) == 0) {
		h.ok = 1;
		h.hdr = c.hdr;
		h.n_inode = c.n_inode;
		h.n_chain = c.n_chain;
		h.n_name = c.n_name;
		h.n_net4 = c.n_net4;
		h.n_net6 = c.n_net6;
		h.n_protect = c.n_protect;
		for (uint32_t id = 1; id <= sbx_policy_rule_count(p); id++) {
			const struct sbx_rule_info *r = sbx_policy_rule(p, id);
			char *src;

			if (!r)
				continue;
			src = sbx_asprintf("%s:%d:%d", r->file ? r->file : "?", r->line, r->col);
			json_array_append_new(rules, sbx_rule_row_json(&(struct sbx_rule_row){
				.id = r->id, .verdict = r->verdict, .would = r->would,
				.pattern = r->pattern, .reason = r->reason, .source = src }));
			free(src);
		}
		json_t *srcs = json_array(), *dirs = json_array();
		char digest[32];

		for (size_t i = 0; i < sbx_policy_source_count(p); i++)
			json_array_append_new(srcs, sbx_source_stamp(sbx_policy_source(p, i)));
		/* a machine policy file that appears, goes or is renamed changes
		 * one of these, and a kept compile would miss the floor */
		{
			const char *md = sbx_machine_dir(&env);
			char *mf = NULL, *mdd = NULL;

			json_array_append_new(srcs, sbx_source_stamp(md));
			if (asprintf(&mf, "%s/machine.yaml", md) >= 0) {
				json_array_append_new(srcs, sbx_source_stamp(mf));
				free(mf);
			}
			if (asprintf(&mdd, "%s/machine.d", md) >= 0) {
				json_array_append_new(srcs, sbx_source_stamp(mdd));
				free(mdd);
			}
		}
		json_object_set_new(j, "sources", srcs);
		for (size_t i = 0; i < c.n_scan_dirs; i++)
			json_array_append_new(dirs, json_string(c.scan_dirs[i]));
		json_object_set_new(j, "scan_dirs", dirs);
		snprintf(digest, sizeof(digest), "%016llx",
			 (unsigned long long)sbx_hardlink_digest(c.scan_dirs, c.n_scan_dirs));
		json_object_set_new(j, "hardlinks", json_string(digest));
		json_object_set_new(j, "idents", idents_json(&c));
		json_object_set_new(j, "names", sbx_names_json(&c));
		json_object_set_new(j, "approval", approval_json(p));
	} else if (!diags.errors) {
		json_object_set_new(j, "error", json_string("the policy could not be compiled"));
	}
send:
	json_object_set_new(j, "rules", rules);
	json_object_set_new(j, "diags", diags_json(&diags));
	text = json_dumps(j, JSON_COMPACT);
	h.json_len = text ? strlen(text) : 0;
	if (sbx_write_all(fd, &h, sizeof(h)))
		_exit(2);
	if (h.ok) {
		WRITE_PAIRS(fd, c.inode, c.n_inode);
		WRITE_PAIRS(fd, c.chain, c.n_chain);
		WRITE_PAIRS(fd, c.name, c.n_name);
		WRITE_PAIRS(fd, c.net4, c.n_net4);
		WRITE_PAIRS(fd, c.net6, c.n_net6);
		sbx_write_all(fd, c.protect, c.n_protect * sizeof(*c.protect));
	}
	if (text)
		sbx_write_all(fd, text, h.json_len);
	_exit(0);
}

void sbx_compiled_rt_free(struct sbx_compiled_rt *c)
{
	free(c->c.inode);
	free(c->c.chain);
	free(c->c.name);
	free(c->c.net4);
	free(c->c.net6);
	free(c->c.protect);
	for (size_t i = 0; i < c->n_rules; i++) {
		free(c->rules[i].pattern);
		free(c->rules[i].reason);
		free(c->rules[i].source);
	}
	free(c->rules);
	json_decref(c->diags);
	json_decref(c->sources);
	json_decref(c->names);
	json_decref(c->approval);
	memset(c, 0, sizeof(*c));
}

int sbx_policy_compile_as(uid_t uid, gid_t gid, const char *home, const char *project,
			  const char *policy_path, uint32_t policy_id, bool floor_live,
			  bool learn, struct sbx_compiled_rt *out, char **err)
{
	struct wire_hdr h;
	json_error_t jerr;
	json_t *j = NULL, *v;
	char *text = NULL;
	int pfd[2], rc, status;
	size_t i;
	pid_t pid;

	memset(out, 0, sizeof(*out));
	if (pipe2(pfd, O_CLOEXEC))
		return -errno;
	pid = fork();
	if (pid < 0) {
		rc = -errno;
		close(pfd[0]);
		close(pfd[1]);
		return rc;
	}
	if (pid == 0) {
		close(pfd[0]);
		compile_child(pfd[1], uid, gid, home, project, policy_path, policy_id, floor_live,
			      learn);
	}
	close(pfd[1]);
	rc = sbx_read_all(pfd[0], &h, sizeof(h));
	if (!rc && memcmp(h.magic, WIRE_MAGIC, 8))
		rc = -EPROTO;
	if (!rc && h.ok) {
		out->c.hdr = h.hdr;
		out->c.n_inode = h.n_inode;
		out->c.n_chain = h.n_chain;
		out->c.n_name = h.n_name;
		out->c.n_net4 = h.n_net4;
		out->c.n_net6 = h.n_net6;
		out->c.n_protect = h.n_protect;
		READ_PAIRS(pfd[0], out->c.inode, h.n_inode, rc);
		READ_PAIRS(pfd[0], out->c.chain, h.n_chain, rc);
		READ_PAIRS(pfd[0], out->c.name, h.n_name, rc);
		READ_PAIRS(pfd[0], out->c.net4, h.n_net4, rc);
		READ_PAIRS(pfd[0], out->c.net6, h.n_net6, rc);
		out->c.protect = sbx_calloc(h.n_protect, sizeof(*out->c.protect));
		rc = rc ?: sbx_read_all(pfd[0], out->c.protect, h.n_protect * sizeof(*out->c.protect));
	}
	if (!rc && h.json_len) {
		text = sbx_calloc(1, (size_t)h.json_len + 1);
		rc = sbx_read_all(pfd[0], text, h.json_len);
	}
	close(pfd[0]);
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	if (!rc && (!WIFEXITED(status) || WEXITSTATUS(status)))
		rc = -ECHILD;
	if (!rc && text) {
		j = json_loads(text, 0, &jerr);
		if (!j)
			rc = -EPROTO;
	}
	free(text);
	if (rc) {
		*err = sbx_asprintf("compiling %s failed: %s", policy_path,
				    rc == -ECHILD ? "the compiler process crashed" : strerror(-rc));
		json_decref(j);
		sbx_compiled_rt_free(out);
		return rc;
	}

	out->diags = json_incref(json_object_get(j, "diags"));
	if (!out->diags)
		out->diags = json_array();
	out->sources = json_pack("{s:O?,s:O?,s:O?,s:O?}", "files", json_object_get(j, "sources"),
				 "scan_dirs", json_object_get(j, "scan_dirs"), "hardlinks",
				 json_object_get(j, "hardlinks"), "idents", json_object_get(j, "idents"));
	out->names = json_incref(json_object_get(j, "names"));
	out->approval = json_incref(json_object_get(j, "approval"));
	json_array_foreach(json_object_get(j, "rules"), i, v) {
		struct sbx_rule_row *r;

		out->rules = realloc(out->rules, (out->n_rules + 1) * sizeof(*out->rules));
		if (!out->rules)
			abort();
		r = &out->rules[out->n_rules++];
		sbx_rule_row_from_json(r, v);
	}
	if (!h.ok) {
		const char *e = sbx_json_str(j, "error");

		*err = e ? sbx_asprintf("%s: %s", policy_path, e) :
			   sbx_asprintf("%s: the policy has errors", policy_path);
		json_decref(j);
		rc = -EINVAL;
		/* keep diags for the caller; drop the rest */
		json_t *diags = out->diags;

		out->diags = NULL;
		sbx_compiled_rt_free(out);
		out->diags = diags;
		return rc;
	}
	json_decref(j);
	return 0;
}

