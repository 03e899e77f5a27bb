// SPDX-License-Identifier: GPL-2.0
/*
 * machine.c - the machine policy: /etc/bpfsbx/machine.yaml and
 * /etc/bpfsbx/machine.d/NAME.yaml (sorted), a floor that a security team
 * sets and no project policy lowers (docs/POLICY.md "Machine policy").
 *
 * Its rules are read by the project parser (files, network, commands),
 * then put after the project's own rules, marked machine; compile.c
 * keeps every machine deny or ask over the project's verdict (floor.c).
 * Its projects: section says what a project may use; a project that
 * breaks it is refused here, with the positions of both lines.
 *
 * The files are trusted only when nobody but root can have written them:
 * each file and directory on the way must be owned by root and writable
 * by nobody else, and no file may be a symlink (opened O_NOFOLLOW, then
 * checked on the open descriptor). $BPFSBX_MACHINE_DIR points elsewhere
 * for tests and for checking a project against another machine's floor;
 * there, files owned by the caller are accepted too, as nothing a caller
 * loads under it is more trusted than the caller.
 *
 * A fleet that pulls its floor over the network puts the public keys
 * that sign it in keys/NAME.pub (root's, as the rest); then every file
 * must have a FILE.sig by one of them (lib/sign.h), or the machine policy
 * is refused whole and the floor in force stays.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "lib/alloc.h"
#include "lib/fileio.h"
#include "lib/shipped.h"
#include "lib/sign.h"
#include "lib/text.h"
#include "policy/parse.h"

#define MACHINE_MAX_FILES	64

/* A setting of projects: and where it was written. */
struct mpos {
	bool set;
	int line, col;
};

struct sbx_machine_doc {
	struct mpos extends, audit_only, switches, require, ttl, approvers;
	char **ext;		/* shipped names or absolute paths */
	size_t n_ext;
	bool audit_only_ok;
	uint32_t switch_ok;	/* bit i: policy_sandbox_key(i) may be set */
	bool require_bpf_lsm;
	uint32_t ttl_s;
	char **appr;
	size_t n_appr;
};

static void strv_free(char **v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(v[i]);
	free(v);
}

static void machine_doc_free(struct sbx_machine_doc *m)
{
	if (!m)
		return;
	strv_free(m->ext, m->n_ext);
	strv_free(m->appr, m->n_appr);
	free(m);
}

const char *sbx_machine_dir(const struct sbx_policy_env *env)
{
	const char *e;

	if (env && env->machine_dir)
		return env->machine_dir;
	e = getenv("BPFSBX_MACHINE_DIR");
	return e && *e ? e : SBX_MACHINE_DIR;
}

/* ---- projects: -------------------------------------------------------------------- */

static void mark(struct mpos *p, const struct ynode *y)
{
	p->set = true;
	p->line = y->line;
	p->col = y->col;
}

/* "30d", "12h", "90m", "45s" or seconds; false if not a duration */
static bool parse_duration(const char *s, uint32_t *out)
{
	long v;
	size_t n = strlen(s);
	unsigned long mul = 1;
	char num[32];

	if (!n || n >= sizeof(num))
		return false;
	memcpy(num, s, n + 1);
	switch (num[n - 1]) {
	case 'd': mul = 86400; num[--n] = 0; break;
	case 'h': mul = 3600; num[--n] = 0; break;
	case 'm': mul = 60; num[--n] = 0; break;
	case 's': num[--n] = 0; break;
	default: break;
	}
	if (!sbx_parse_long(num, 1, 0x7fffffffL, &v) || (unsigned long)v > 0xffffffffUL / mul)
		return false;
	*out = (uint32_t)((unsigned long)v * mul);
	return true;
}

static char **strings(struct pctx *c, const struct ynode *y, const char *field, const char *what,
		      size_t *n)
{
	struct sitem *it = string_or_list(c, y, field, what, n);
	char **v;

	if (!it)
		return NULL;
	v = calloc(*n + 1, sizeof(*v));
	for (size_t i = 0; v && i < *n; i++)
		if (!(v[i] = strdup(it[i].y->str)))
			abort();
	free(it);
	if (!v)
		abort();
	return v;
}

/* projects: of a machine file (policy_parse_doc's hook) */
static void parse_projects(struct pctx *c, const struct ynode *y)
{
	static const char *const keys[] = {
		"extends", "audit_only", "sandbox_switches", "require", "max_always_ttl",
		"approvers", NULL
	};
	struct sbx_machine_doc *m;
	const struct ynode *v;

	if (!want_map(c, y, "projects", "a mapping (extends, audit_only, sandbox_switches, "
		      "require, max_always_ttl, approvers)"))
		return;
	check_keys(c, y, "projects", keys);
	m = c->doc->mdoc = calloc(1, sizeof(*m));
	c->doc->mdoc_free = machine_doc_free;
	if (!m)
		abort();
	if ((v = map_get(y, "extends"))) {
		mark(&m->extends, v);
		m->ext = strings(c, v, "projects.extends", "a shipped policy name or an absolute path",
				 &m->n_ext);
		for (size_t i = 0; m->ext && i < m->n_ext; i++)
			if (m->ext[i][0] != '/' && !sbx_shipped_name_ok(m->ext[i]))
				perr(c, v->line, v->col, "projects.extends",
				     "'%s' is neither a shipped policy name nor an absolute path",
				     m->ext[i]);
	}
	if ((v = map_get(y, "audit_only")) &&
	    want_scalar(c, v, "projects.audit_only", "true or false")) {
		mark(&m->audit_only, v);
		if (!strcmp(v->str, "true"))
			m->audit_only_ok = true;
		else if (strcmp(v->str, "false"))
			perr(c, v->line, v->col, "projects.audit_only", "'%s': write true or false",
			     v->str);
	}
	if ((v = map_get(y, "sandbox_switches"))) {
		size_t n = 0;
		struct sitem *it = string_or_list(c, v, "projects.sandbox_switches",
						  "a sandbox: key", &n);

		mark(&m->switches, v);
		for (size_t i = 0; it && i < n; i++) {
			int k;

			for (k = 0; k < SBX_SANDBOX_KEYS; k++)
				if (!strcmp(it[i].y->str, policy_sandbox_key(k)))
					break;
			if (k == SBX_SANDBOX_KEYS) {
				char known[256] = "";

				for (k = 0; k < SBX_SANDBOX_KEYS; k++)
					snprintf(known + strlen(known), sizeof(known) - strlen(known),
						 "%s%s", k ? ", " : "", policy_sandbox_key(k));
				perr(c, it[i].y->line, it[i].y->col, it[i].field,
				     "unknown sandbox: key '%s' (known: %s)", it[i].y->str, known);
				continue;
			}
			m->switch_ok |= 1u << k;
		}
		free(it);
	}
	if ((v = map_get(y, "require")) &&
	    want_scalar(c, v, "projects.require", "bpf-lsm or landlock")) {
		mark(&m->require, v);
		if (!strcmp(v->str, "bpf-lsm"))
			m->require_bpf_lsm = true;
		else if (strcmp(v->str, "landlock"))
			perr(c, v->line, v->col, "projects.require",
			     "'%s': write bpf-lsm (the fallback tier may not run sessions) or "
			     "landlock (either tier)", v->str);
	}
	if ((v = map_get(y, "max_always_ttl")) &&
	    want_scalar(c, v, "projects.max_always_ttl", "a duration (30d, 12h, 90m, 3600s)")) {
		mark(&m->ttl, v);
		if (!parse_duration(v->str, &m->ttl_s))
			perr(c, v->line, v->col, "projects.max_always_ttl",
			     "'%s' is not a duration: write a number with d, h, m or s (30d, 12h)",
			     v->str);
	}
	if ((v = map_get(y, "approvers"))) {
		mark(&m->approvers, v);
		m->appr = strings(c, v, "projects.approvers", "a user name or @group", &m->n_appr);
		for (size_t i = 0; m->appr && i < m->n_appr; i++) {
			const char *a = m->appr[i] + (m->appr[i][0] == '@');

			if (!*a || strspn(a, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
					  "0123456789._-$") != strlen(a))
				perr(c, v->line, v->col, "projects.approvers",
				     "'%s' is not a user name or @group", m->appr[i]);
		}
	}
}

/* ---- reading the files -------------------------------------------------------------- */

/* Is st trusted: root's (or, under an override, the caller's), writable by
 * nobody else? why: a reason for the person, or NULL. */
static const char *untrusted(const struct stat *st, bool override)
{
	if (st->st_uid != 0 && !(override && st->st_uid == geteuid()))
		return override ? "owned by neither root nor you" : "not owned by root";
	if (st->st_mode & S_IWGRP)
		return "writable by its group";
	if (st->st_mode & S_IWOTH)
		return "writable by everyone";
	return NULL;
}

static int refuse(struct sbx_diags *d, const char *path, const char *why)
{
	sbx_diag_add(d, SBX_DIAG_ERROR, path, 0, 0, NULL,
		     "machine policy refused: %s (it must be root's and writable by root only: "
		     "chown root: and chmod go-w)", why);
	return -1;
}

/* A directory to read from: fd, -ENOENT when it is not there, -1 refused. */
static int open_dir(struct sbx_diags *d, int at, const char *name, const char *path,
		    bool override)
{
	struct stat st;
	const char *why;
	int fd = openat(at, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);

	if (fd < 0) {
		if (errno == ENOENT)
			return -ENOENT;
		sbx_diag_add(d, SBX_DIAG_ERROR, path, 0, 0, NULL,
			     "machine policy: cannot open the directory: %s%s", strerror(errno),
			     errno == ELOOP || errno == ENOTDIR ? " (a symlink or not a directory)" : "");
		return -1;
	}
	if (fstat(fd, &st))
		why = strerror(errno);
	else
		why = untrusted(&st, override);
	if (why) {
		close(fd);
		return refuse(d, path, why);
	}
	return fd;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Parse one file of the machine policy into *out (NULL: not there). */
/* With keys (the machine directory has keys/), buf must be signed by one
 * of them: NAME.sig beside it. 0, or -1 reported. */
static int check_signed(struct sbx_diags *d, int dirfd, const char *name, const char *path,
			const struct sbx_keyring *keys, const char *buf, size_t len)
{
	char *signame = sbx_asprintf("%s" SBX_SIG_SUFFIX, name), *sig = NULL, *err = NULL;
	const char *by;
	size_t sl;
	int rc = sbx_read_file_at(dirfd, signame, SBX_SIG_MAX, &sig, &sl, NULL);

	if (rc == -ENOENT)
		sbx_diag_add(d, SBX_DIAG_ERROR, path, 0, 0, NULL, "machine policy refused: not "
			     "signed: there is no %s beside it, and keys/ in the machine policy's "
			     "directory says every file must be (bpfsbx policy sign)", signame);
	else if (rc < 0)
		sbx_diag_add(d, SBX_DIAG_ERROR, path, 0, 0, NULL, "machine policy refused: "
			     "reading %s: %s", signame, rc == -EFBIG ? "not a signature (too large)"
			     : strerror(-rc));
	else if (!sbx_verify(keys, buf, len, sig, &by, &err))
		sbx_diag_add(d, SBX_DIAG_ERROR, path, 0, 0, NULL, "machine policy refused: %s: %s",
			     signame, err);
	free(err);
	free(sig);
	free(signame);
	return rc < 0 || !by ? -1 : 0;
}

static int read_one(struct sbx_diags *d, int dirfd, const char *name, const char *path,
		    bool override, const struct sbx_policy_env *env,
		    const struct sbx_keyring *keys, struct fdoc **out)
{
	struct stat st;
	const char *why;
	char *buf;
	size_t len;
	int err, fd = openat(dirfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	bool failed;

	*out = NULL;
	if (fd < 0) {
		if (errno == ENOENT)
			return 0;
		sbx_diag_add(d, SBX_DIAG_ERROR, path, 0, 0, NULL, "machine policy: cannot open: %s%s",
			     strerror(errno), errno == ELOOP ? " (a symlink: name the file itself)" : "");
		return -1;
	}
	if (fstat(fd, &st)) {
		err = errno;
		close(fd);
		return refuse(d, path, strerror(err));
	}
	if (!S_ISREG(st.st_mode)) {
		close(fd);
		return refuse(d, path, "not a regular file");
	}
	if ((why = untrusted(&st, override))) {
		close(fd);
		return refuse(d, path, why);
	}
	buf = policy_read_fd(fd, &len, &err);
	if (!buf) {
		sbx_diag_add(d, SBX_DIAG_ERROR, path, 0, 0, NULL, "machine policy: cannot read: %s",
			     err == EFBIG ? "larger than 1 MiB" : strerror(err));
		return -1;
	}
	if (keys && check_signed(d, dirfd, name, path, keys, buf, len)) {
		free(buf);
		return -1;
	}
	*out = policy_parse_doc(path, buf, len, env, d, parse_projects, &failed);
	free(buf);
	if (!*out || failed) {
		policy_fdoc_free(*out);
		*out = NULL;
		return -1;
	}
	return 0;
}

/* A machine file holds rules and projects:, no defaults: where it has no
 * rule, the project decides. */
static bool rules_only(struct sbx_diags *d, const struct fdoc *doc)
{
	const struct defpos *set = NULL;

	for (int a = 0; a < SBX_ACC_MAX && !set; a++)
		if (doc->fdef[a].set)
			set = &doc->fdef[a];
	if (!set && doc->ndef.set)
		set = &doc->ndef;
	if (!set && doc->cdef.set)
		set = &doc->cdef;
	if (!set && doc->ldef.set)
		set = &doc->ldef;
	if (!set && doc->idef.set)
		set = &doc->idef;
	if (set) {
		sbx_diag_add(d, SBX_DIAG_ERROR, doc->file, set->line, set->col, set->field,
			     "a machine policy has rules, not defaults: where no machine rule "
			     "matches, the project's policy decides");
		return false;
	}
	if (doc->n_inbound_ports || doc->dns_resolvers_set || doc->dns_grace_set ||
	    doc->dns_min_ttl_set || doc->dns_per_name_set || doc->dns_per_session_set) {
		sbx_diag_add(d, SBX_DIAG_ERROR, doc->file, 1, 1, "network",
			     "a machine policy has rules and reserved_ports only: inbound_ports, "
			     "resolvers and dns are the project's");
		return false;
	}
	return true;
}

/* keys/NAME.pub of the machine directory: when it is there, only signed
 * files are taken (*kr NULL: it is not). 0, or -1 reported. */
static int read_keys(struct sbx_diags *d, int top, const char *dir, bool override,
		     struct sbx_keyring **kr)
{
	char *path = sbx_asprintf("%s/keys", dir), *buf = NULL, *err = NULL;
	struct dirent **ents = NULL;
	int fd = open_dir(d, top, "keys", path, override), n = 0, rc = 0;

	*kr = NULL;
	if (fd == -ENOENT) {
		free(path);
		return 0;
	}
	if (fd < 0) {
		free(path);
		return -1;
	}
	*kr = sbx_calloc(1, sizeof(**kr));
	n = scandirat(fd, ".", &ents, NULL, alphasort);
	if (n < 0) {
		sbx_diag_add(d, SBX_DIAG_ERROR, path, 0, 0, NULL,
			     "machine policy: cannot list the keys: %s", strerror(errno));
		rc = -1;
	}
	for (int i = 0; i < n; i++) {
		const char *name = ents[i]->d_name;
		size_t l = strlen(name), len;
		struct stat st;
		const char *why;
		char *kp;

		if (rc || name[0] == '.' || l < 5 || strcmp(name + l - 4, ".pub"))
			continue;
		kp = sbx_asprintf("%s/%s", path, name);
		len = 0;
		if ((rc = sbx_read_file_at(fd, name, 64 * 1024, &buf, &len, &st)) < 0)
			sbx_diag_add(d, SBX_DIAG_ERROR, kp, 0, 0, NULL,
				     "machine policy: cannot read the key: %s", strerror(-rc));
		else if ((why = untrusted(&st, override)))
			rc = refuse(d, kp, why);
		else if ((rc = sbx_keyring_add(*kr, kp, buf, len, &err)))
			sbx_diag_add(d, SBX_DIAG_ERROR, kp, 0, 0, NULL,
				     "machine policy: a key that is not one: %s", err);
		free(err);
		err = NULL;
		free(buf);
		buf = NULL;
		free(kp);
	}
	for (int i = 0; i < n; i++)
		free(ents[i]);
	free(ents);
	if (!rc && !(*kr)->n) {
		sbx_diag_add(d, SBX_DIAG_ERROR, path, 0, 0, NULL,
			     "machine policy refused: keys/ holds no key (NAME.pub): with keys/ "
			     "only files they signed are taken; remove it to take unsigned ones");
		rc = -1;
	}
	close(fd);
	free(path);
	if (rc < 0) {
		sbx_keyring_free(*kr);
		free(*kr);
		*kr = NULL;
		return -1;
	}
	return 0;
}

int sbx_machine_keys(const struct sbx_policy_env *env, struct sbx_keyring **kr,
		     struct sbx_diags *d)
{
	const char *dir = sbx_machine_dir(env);
	bool override = (env && env->machine_dir) || getenv("BPFSBX_MACHINE_DIR");
	int top = open_dir(d, AT_FDCWD, dir, dir, override), rc;

	*kr = NULL;
	if (top == -ENOENT)
		return 0;
	if (top < 0)
		return -1;
	rc = read_keys(d, top, dir, override, kr);
	close(top);
	return rc;
}

/* machine.yaml, then machine.d/NAME.yaml by name; 0, or -1 (reported) */
static int read_all(const struct sbx_policy_env *env, struct sbx_diags *d, struct fdoc **docs,
		    size_t *n)
{
	const char *dir = sbx_machine_dir(env);
	bool override = (env && env->machine_dir) || getenv("BPFSBX_MACHINE_DIR");
	char *path = NULL, **names = NULL;
	struct sbx_keyring *keys = NULL;
	size_t nn = 0;
	int top, sub = -1, rc = -1;
	DIR *dd = NULL;
	struct dirent *de;

	*n = 0;
	top = open_dir(d, AT_FDCWD, dir, dir, override);
	if (top == -ENOENT)
		return 0;
	if (top < 0)
		return -1;
	if (read_keys(d, top, dir, override, &keys))
		goto out;
	if (asprintf(&path, "%s/machine.yaml", dir) < 0)
		goto out;
	if (read_one(d, top, "machine.yaml", path, override, env, keys, &docs[*n]))
		goto out;
	if (docs[*n])
		(*n)++;
	free(path);
	if (asprintf(&path, "%s/machine.d", dir) < 0) {
		path = NULL;
		goto out;
	}
	sub = open_dir(d, top, "machine.d", path, override);
	if (sub == -ENOENT) {
		rc = 0;
		goto out;
	}
	if (sub < 0 || !(dd = fdopendir(dup(sub))))
		goto out;
	while ((de = readdir(dd))) {
		size_t l = strlen(de->d_name);

		if (de->d_name[0] == '.' || l < 6 || strcmp(de->d_name + l - 5, ".yaml"))
			continue;
		if (nn == MACHINE_MAX_FILES) {
			sbx_diag_add(d, SBX_DIAG_ERROR, path, 0, 0, NULL,
				     "machine policy: more than %d files", MACHINE_MAX_FILES);
			goto out;
		}
		names = realloc(names, (nn + 1) * sizeof(*names));
		if (!names || !(names[nn] = strdup(de->d_name)))
			abort();
		nn++;
	}
	if (nn)
		qsort(names, nn, sizeof(*names), cmp_str);
	rc = 0;
	for (size_t i = 0; i < nn && !rc; i++) {
		char *fp = NULL;

		if (asprintf(&fp, "%s/%s", path, names[i]) < 0)
			abort();
		rc = read_one(d, sub, names[i], fp, override, env, keys, &docs[*n]);
		if (docs[*n])
			(*n)++;
		free(fp);
	}
out:
	if (keys) {
		sbx_keyring_free(keys);
		free(keys);
	}
	strv_free(names, nn);
	if (dd)
		closedir(dd);
	if (sub >= 0)
		close(sub);
	close(top);
	free(path);
	for (size_t i = 0; i < *n && !rc; i++)
		if (!rules_only(d, docs[i]))
			rc = -1;
	return rc;
}

/* ---- what projects may use ------------------------------------------------------------ */

/* The one machine file that sets a projects: key (two that do: an error). */
struct setting {
	const struct fdoc *doc;
	const struct mpos *pos;
};

static int one_setting(struct sbx_diags *d, struct fdoc **docs, size_t n, size_t off,
		       const char *key, struct setting *out)
{
	out->doc = NULL;
	out->pos = NULL;
	for (size_t i = 0; i < n; i++) {
		const struct mpos *p;

		if (!docs[i]->mdoc)
			continue;
		p = (const struct mpos *)((const char *)docs[i]->mdoc + off);
		if (!p->set)
			continue;
		if (out->doc) {
			sbx_diag_add(d, SBX_DIAG_ERROR, docs[i]->file, p->line, p->col, key,
				     "already set by the machine policy at %s:%d:%d: one file sets it",
				     out->doc->file, out->pos->line, out->pos->col);
			return -1;
		}
		out->doc = docs[i];
		out->pos = p;
	}
	return 0;
}

static void broken(struct sbx_diags *d, const struct fdoc *doc, int line, int col,
		   const char *field, const struct setting *s, const char *key, const char *what)
{
	sbx_diag_add(d, SBX_DIAG_ERROR, doc->file, line, col, field,
		     "%s, which the machine policy does not allow (%s:%d:%d: %s)", what,
		     s->doc->file, s->pos->line, s->pos->col, key);
}

static char *resolve_base(const char *x, const struct sbx_policy_env *env)
{
	if (x[0] == '/')
		return realpath(x, NULL);
	return sbx_shipped_policy(x, env->shipped_dir, NULL);
}

static bool base_allowed(const struct sbx_machine_doc *m, const char *real,
			 const struct sbx_policy_env *env)
{
	for (size_t i = 0; real && i < m->n_ext; i++) {
		char *r = resolve_base(m->ext[i], env);
		bool same = r && !strcmp(r, real);

		free(r);
		if (same)
			return true;
	}
	return false;
}

static int check_projects(struct sbx_policy *p, struct fdoc *const *pdocs, size_t np,
			  const char *self_real, struct fdoc **mdocs, size_t nm,
			  const struct sbx_policy_env *env, struct sbx_diags *d)
{
	struct setting ext, ao, sw, req, ttl, appr;
	size_t errors = d->errors;

	if (one_setting(d, mdocs, nm, offsetof(struct sbx_machine_doc, extends),
			"projects.extends", &ext) ||
	    one_setting(d, mdocs, nm, offsetof(struct sbx_machine_doc, audit_only),
			"projects.audit_only", &ao) ||
	    one_setting(d, mdocs, nm, offsetof(struct sbx_machine_doc, switches),
			"projects.sandbox_switches", &sw) ||
	    one_setting(d, mdocs, nm, offsetof(struct sbx_machine_doc, require),
			"projects.require", &req) ||
	    one_setting(d, mdocs, nm, offsetof(struct sbx_machine_doc, ttl),
			"projects.max_always_ttl", &ttl) ||
	    one_setting(d, mdocs, nm, offsetof(struct sbx_machine_doc, approvers),
			"projects.approvers", &appr))
		return -1;
	/* extends: the project's own file names a base the machine lists;
	 * what a listed base extends is the machine owner's choice, and a
	 * listed base given as the policy itself is fine too. No extends: the
	 * project writes its own defaults, and the floor holds over them. */
	if (ext.doc && np && pdocs[np - 1]->extends &&
	    !base_allowed(ext.doc->mdoc, self_real, env) &&
	    !base_allowed(ext.doc->mdoc, pdocs[np - 1]->ext_real, env)) {
		const struct fdoc *doc = pdocs[np - 1];
		char what[512];

		snprintf(what, sizeof(what), "extends '%s'", doc->extends);
		broken(d, doc, doc->ext_line, doc->ext_col, "extends", &ext, "projects.extends", what);
	}
	if (ao.doc && !ao.doc->mdoc->audit_only_ok) {
		char *audit = sbx_shipped_policy("audit-only", env->shipped_dir, NULL);

		for (size_t k = 0; audit && k < np; k++)
			if (pdocs[k]->ext_real && !strcmp(pdocs[k]->ext_real, audit))
				broken(d, pdocs[k], pdocs[k]->ext_line, pdocs[k]->ext_col, "extends",
				       &ao, "projects.audit_only: false", "extends audit-only");
		if (audit && np && self_real && !strcmp(self_real, audit))
			broken(d, pdocs[np - 1], 1, 1, NULL, &ao, "projects.audit_only: false",
			       "is audit-only");
		free(audit);
	}
	if (sw.doc)
		for (size_t k = 0; k < np; k++)
			for (int i = 0; i < SBX_SANDBOX_KEYS; i++) {
				const struct fdoc *doc = pdocs[k];
				bool loosens = i < SBX_SANDBOX_SWITCHES ? doc->sandbox[i] == 1 :
						doc->sandbox_line[i] != 0;
				char field[64], what[128];

				if (!loosens || (sw.doc->mdoc->switch_ok & (1u << i)))
					continue;
				snprintf(field, sizeof(field), "sandbox.%s", policy_sandbox_key(i));
				snprintf(what, sizeof(what), "sets sandbox.%s", policy_sandbox_key(i));
				broken(d, doc, doc->sandbox_line[i], doc->sandbox_col[i], field, &sw,
				       "projects.sandbox_switches", what);
			}
	if (req.doc && req.doc->mdoc->require_bpf_lsm)
		p->require_bpf_lsm = true;
	if (ttl.doc)
		p->max_always_ttl_s = ttl.doc->mdoc->ttl_s;
	if (appr.doc) {
		const struct sbx_machine_doc *m = appr.doc->mdoc;

		p->approvers = calloc(m->n_appr + 1, sizeof(char *));
		if (!p->approvers)
			return -1;
		for (size_t i = 0; i < m->n_appr; i++)
			if (!(p->approvers[i] = strdup(m->appr[i])))
				return -1;
	}
	return d->errors > errors ? -1 : 0;
}

/* ---- into the project's policy -------------------------------------------------------- */

int machine_apply(struct sbx_policy *p, struct fdoc *const *docs, size_t ndocs,
		  const char *self_real, const struct sbx_policy_env *env, struct sbx_diags *d)
{
	struct fdoc *m[MACHINE_MAX_FILES + 1] = { 0 };
	size_t n = 0, rules = p->n_rules, fr = p->n_frules, nr = p->n_nrules, cr = p->n_crules;
	int rc = -1;

	if (read_all(env, d, m, &n))
		goto out;
	if (!n) {
		rc = 0;
		goto out;
	}
	if (check_projects(p, docs, ndocs, self_real, m, n, env, d))
		goto out;
	for (size_t i = 0; i < n; i++) {
		char *real = realpath(m[i]->file, NULL), **v;

		if (policy_merge_doc(p, m[i]))
			goto out;
		/* sessions may never write the floor either */
		v = real ? realloc(p->sources, (p->n_sources + 1) * sizeof(*v)) : NULL;
		if (!v) {
			free(real);
			goto out;
		}
		p->sources = v;
		p->sources[p->n_sources++] = real;
	}
	for (size_t i = rules; i < p->n_rules; i++)
		p->rules[i].machine = true;
	p->n_machine_rules = p->n_rules - rules;
	p->n_machine_frules = p->n_frules - fr;
	p->n_machine_nrules = p->n_nrules - nr;
	p->n_machine_crules = p->n_crules - cr;
	rc = 0;
out:
	for (size_t i = 0; i < n; i++)
		policy_fdoc_free(m[i]);
	return rc;
}

uint32_t sbx_policy_max_always_ttl(const struct sbx_policy *p)
{
	return p ? p->max_always_ttl_s : 0;
}

const char *const *sbx_policy_approvers(const struct sbx_policy *p)
{
	return p ? (const char *const *)p->approvers : NULL;
}

/* ---- the public loaders: the project's policy, then the floor under it ------------------ */

static struct sbx_policy *floored(struct sbx_policy *p, struct policy_layer *keep,
				  const char *name, const struct sbx_policy_env *env,
				  struct sbx_diags *diags, size_t diags_before)
{
	struct sbx_diags local = { 0 };
	struct sbx_diags *d = diags ? diags : &local;
	size_t errors = d->errors;

	if (p && !env->no_machine &&
	    machine_apply(p, keep->docs, keep->ndocs, keep->self_real, env, d)) {
		if (d->errors == errors)
			sbx_diag_add(d, SBX_DIAG_ERROR, name, 0, 0, NULL, "out of memory");
		sbx_policy_free(p);
		p = NULL;
	}
	/* people read them top to bottom, as an editor lists them */
	sbx_diags_sort_from(d, diags_before);
	policy_layer_free(keep);
	sbx_diags_free(&local);
	return p;
}

struct sbx_policy *sbx_policy_load_buffer(const char *name, const char *buf, size_t len,
					  const struct sbx_policy_env *env,
					  struct sbx_diags *diags)
{
	struct policy_layer keep = { 0 };
	size_t before = diags ? diags->n : 0;
	struct sbx_policy *p = policy_load_buffer(name, buf, len, env, diags, &keep);

	return floored(p, &keep, name ? name : "<buffer>", env, diags, before);
}

struct sbx_policy *sbx_policy_load_file(const char *path, const struct sbx_policy_env *env,
					struct sbx_diags *diags)
{
	struct policy_layer keep = { 0 };
	size_t before = diags ? diags->n : 0;
	struct sbx_policy *p = policy_load_file(path, env, diags, &keep);

	return floored(p, &keep, path, env, diags, before);
}
