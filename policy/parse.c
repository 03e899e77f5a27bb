// SPDX-License-Identifier: GPL-2.0
/*
 * parse.c - read a policy (YAML, schema version 1) with libyaml, check it
 * against the schema, expand variables and number the rules.
 *
 * The YAML is first turned into a small tree that keeps each node's
 * line and column (libyaml's marks), so that every diagnostic can name
 * FILE:LINE:COL and the field. Then the tree is walked against the
 * schema. Nothing is half-loaded: any error and the load returns NULL.
 *
 * parse.c is the top level of a policy (version, extends, sandbox) and
 * the loader; each section has its own parse_*.c (see parse.h).
 *
 * Rule numbering is deliberately independent of the order in which rules
 * are written: within one file the rules of each section are numbered in
 * a canonical order (by their text), parent files before their children.
 * Together with "deny wins, then the smaller rule id" this makes the
 * compiled form, including the rule ids in it, a function of the set of
 * rules only (see tests/unit/policy_permute.c).
 */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "lib/shipped.h"
#include "policy/parse.h"
#include "lib/names.h"
#include "lib/alloc.h"

#ifndef SBX_SHIPPED_POLICY_DIR
#define SBX_SHIPPED_POLICY_DIR "/usr/local/share/bpfsbx/policy"
#endif

#define MAX_EXTENDS	8
#define MAX_FILE_SIZE	(1 << 20)

struct sandbox_switch {
	const char *key;
	uint32_t flag;
};
static const struct sandbox_switch sandbox_switches[SBX_SANDBOX_SWITCHES];

/* ---- freeing rules -------------------------------------------------------------- */

static void frule_free(struct sbx_frule *f)
{
	for (size_t i = 0; i < f->n_pats; i++) {
		free(f->pats[i].text);
		free(f->pats[i].pos.file);
		free(f->pats[i].pos.field);
	}
	free(f->pats);
}

static void nrule_free(struct sbx_nrule *n)
{
	for (size_t i = 0; i < n->n_items; i++) {
		free(n->items[i].text);
		free(n->items[i].pos.file);
		free(n->items[i].pos.field);
	}
	free(n->items);
	free(n->ports);
}

static void crule_free(struct sbx_crule *c)
{
	for (size_t i = 0; i < c->n_cmds; i++)
		free(c->cmds[i]);
	free(c->cmds);
	for (size_t i = 0; i < c->n_args; i++)
		free(c->args[i]);
	free(c->args);
}

static void info_free(struct sbx_rule_info *r)
{
	free(r->pattern);
	free(r->expanded);
	free(r->reason);
	free(r->file);
}

static void trule_free(struct trule *t)
{
	free(t->key);
	info_free(&t->info);
	frule_free(&t->f);
	nrule_free(&t->nr);
	crule_free(&t->c);
}

static void fdoc_free(struct fdoc *doc)
{
	if (!doc)
		return;
	for (size_t i = 0; i < doc->n; i++)
		trule_free(&doc->r[i]);
	free(doc->r);
	for (int a = 0; a < SBX_ACC_MAX; a++)
		free(doc->fdef[a].field);
	free(doc->ndef.field);
	free(doc->cdef.field);
	free(doc->ldef.field);
	free(doc->idef.field);
	free(doc->reserved);
	free(doc->inbound_ports);
	for (size_t i = 0; i < doc->n_keep_env; i++)
		free(doc->keep_env[i]);
	free(doc->keep_env);
	free(doc->freason);
	free(doc->nreason);
	free(doc->creason);
	free(doc->extends);
	free(doc->ext_real);
	if (doc->mdoc_free)
		doc->mdoc_free(doc->mdoc);
	free(doc->file);
	free(doc->dir);
	free(doc);
}

void policy_fdoc_free(struct fdoc *doc)
{
	fdoc_free(doc);
}

const char *policy_sandbox_key(int i)
{
	static const char *const lists[] = { "socket_families", "netlink", "keep_env" };

	if (i < 0 || i >= SBX_SANDBOX_KEYS)
		return NULL;
	return i < SBX_SANDBOX_SWITCHES ? sandbox_switches[i].key : lists[i - SBX_SANDBOX_SWITCHES];
}

/* ---- the top level ---------------------------------------------------------------- */

/*
 * sandbox: switches for the built-in protections that some tools need
 * off. Each is allow or deny; all default to deny. The lists add socket
 * families, netlink protocols and environment handles to what a session
 * gets by default.
 */
static const struct sandbox_switch sandbox_switches[SBX_SANDBOX_SWITCHES] = {
	{ "userns", SBX_PF_ALLOW_USERNS },
	{ "memfd_exec", SBX_PF_ALLOW_MEMFD_EXEC },
	{ "setuid_exec", SBX_PF_ALLOW_SETUID },
	{ "raw_sockets", SBX_PF_ALLOW_RAW },
	{ "sctp", SBX_PF_ALLOW_SCTP },
	{ "mptcp", SBX_PF_ALLOW_MPTCP },
	{ "proc_cmdline", SBX_PF_PROC_CMDLINE },
	{ "ping", SBX_PF_ALLOW_PING },
};

static const struct { const char *name; int proto; } netlinks[] = {
	{ "route", 0 }, { "sock_diag", 4 }, { "audit", 9 }, { "kobject_uevent", 15 },
	{ "generic", 16 }, { "netfilter", 12 }, { "xfrm", 6 }, { "selinux", 7 },
	{ "connector", 11 }, { "crypto", 21 },
};

/* a list of names from a table into a bit mask; false on an unknown one */
static bool name_list(struct pctx *c, const struct ynode *y, const char *field,
		      const char *(*name_of)(size_t i, int *bit), size_t n, uint64_t *mask)
{
	struct sitem *it;
	size_t m;

	it = string_or_list(c, y, field, "a name or a list of names", &m);
	if (!it)
		return false;
	for (size_t i = 0; i < m; i++) {
		bool found = false;

		for (size_t j = 0; j < n && !found; j++) {
			int bit;
			const char *nm = name_of(j, &bit);

			if (!strcmp(nm, it[i].y->str)) {
				*mask |= 1ull << bit;
				found = true;
			}
		}
		if (!found) {
			char known[512] = "";

			for (size_t j = 0; j < n; j++) {
				int bit;

				snprintf(known + strlen(known), sizeof(known) - strlen(known), "%s%s",
					 j ? ", " : "", name_of(j, &bit));
			}
			perr(c, it[i].y->line, it[i].y->col, it[i].field, "unknown name '%s' (known: %s)",
			     it[i].y->str, known);
		}
	}
	free(it);
	return true;
}

static const char *family_name(size_t i, int *bit)
{
	return sbx_optional_family(i, bit);
}

static const char *netlink_name(size_t i, int *bit)
{
	*bit = netlinks[i].proto;
	return netlinks[i].name;
}

/* an environment variable's name: [A-Za-z_][A-Za-z0-9_]* */
static bool env_name_ok(const char *s)
{
	if (!s || !((*s >= 'A' && *s <= 'Z') || (*s >= 'a' && *s <= 'z') || *s == '_'))
		return false;
	for (s++; *s; s++)
		if (!((*s >= 'A' && *s <= 'Z') || (*s >= 'a' && *s <= 'z') || *s == '_' ||
		      (*s >= '0' && *s <= '9')))
			return false;
	return true;
}

static void parse_sandbox(struct pctx *c, const struct ynode *y)
{
	const char *keys[SBX_SANDBOX_SWITCHES + 5];
	const struct ynode *v;
	size_t k = 0;

	for (int i = 0; i < SBX_SANDBOX_SWITCHES; i++)
		keys[k++] = sandbox_switches[i].key;
	keys[k++] = "socket_families";
	keys[k++] = "netlink";
	keys[k++] = "keep_env";
	keys[k++] = "require";
	keys[k] = NULL;
	if (!want_map(c, y, "sandbox", "a mapping of switches (userns, memfd_exec, ...) to allow "
		      "or deny, and lists (socket_families, netlink, keep_env)"))
		return;
	check_keys(c, y, "sandbox", keys);
	for (int i = 0; i < SBX_SANDBOX_SWITCHES; i++) {
		char field[64];

		v = map_get(y, sandbox_switches[i].key);
		if (!v)
			continue;
		snprintf(field, sizeof(field), "sandbox.%s", sandbox_switches[i].key);
		c->doc->sandbox_line[i] = v->line;
		c->doc->sandbox_col[i] = v->col;
		if (!want_scalar(c, v, field, "allow or deny"))
			continue;
		if (!strcmp(v->str, "allow"))
			c->doc->sandbox[i] = 1;
		else if (!strcmp(v->str, "deny"))
			c->doc->sandbox[i] = 0;
		else
			perr(c, v->line, v->col, field, "'%s': write allow or deny", v->str);
	}
	/* the tier the policy needs: bpf-lsm refuses the fallback tier
	 * (Landlock + seccomp, docs/FALLBACK.md), any takes either */
	if ((v = map_get(y, "require")) && want_scalar(c, v, "sandbox.require", "bpf-lsm or any")) {
		if (!strcmp(v->str, "bpf-lsm"))
			c->doc->require_bpf_lsm = true;
		else if (strcmp(v->str, "any"))
			perr(c, v->line, v->col, "sandbox.require", "'%s': write bpf-lsm or any",
			     v->str);
	}
	for (int i = SBX_SANDBOX_SWITCHES; i < SBX_SANDBOX_KEYS; i++)
		if ((v = map_get(y, policy_sandbox_key(i)))) {
			c->doc->sandbox_line[i] = v->line;
			c->doc->sandbox_col[i] = v->col;
		}
	if ((v = map_get(y, "socket_families")))
		name_list(c, v, "sandbox.socket_families", family_name,
			  sbx_optional_family_count(), &c->doc->family_allow);
	if ((v = map_get(y, "netlink"))) {
		uint64_t m = 0;

		if (name_list(c, v, "sandbox.netlink", netlink_name,
			      sizeof(netlinks) / sizeof(netlinks[0]), &m))
			c->doc->netlink_allow |= (uint32_t)m;
	}
	if ((v = map_get(y, "keep_env"))) {
		size_t m;
		struct sitem *it = string_or_list(c, v, "sandbox.keep_env", "a variable name or a list of them", &m);

		c->doc->keep_env_set = true;
		for (size_t i = 0; it && i < m; i++) {
			if (!env_name_ok(it[i].y->str)) {
				perr(c, it[i].y->line, it[i].y->col, it[i].field,
				     "'%s' is not an environment variable's name", it[i].y->str);
				continue;
			}
			if (sbx_scrubbed_env_index(it[i].y->str) < 0) {
				char known[1024] = "";

				for (size_t j = 0; sbx_scrubbed_env(j); j++)
					snprintf(known + strlen(known), sizeof(known) - strlen(known),
						 "%s%s", j ? ", " : "", sbx_scrubbed_env(j));
				perr(c, it[i].y->line, it[i].y->col, it[i].field,
				     "'%s' is kept anyway: only these are removed: %s",
				     it[i].y->str, known);
				continue;
			}
			c->doc->keep_env = realloc(c->doc->keep_env,
						   (c->doc->n_keep_env + 1) * sizeof(char *));
			if (!c->doc->keep_env)
				abort();
			c->doc->keep_env[c->doc->n_keep_env++] = strdup(it[i].y->str);
		}
		free(it);
	}
}

static void parse_root(struct pctx *c, const struct ynode *root)
{
	static const char *const keys[] = {
		"version", "name", "description", "extends", "files", "network", "commands",
		"sandbox", NULL
	};
	static const char *const machine_keys[] = {
		"version", "name", "description", "files", "network", "commands", "projects", NULL
	};
	const struct ynode *v;

	if (root->type != Y_MAP) {
		perr(c, root->line, root->col, NULL,
		     "a policy is a mapping (key: value lines starting with `version: 1`), not %s",
		     ytype_name(root));
		return;
	}
	v = map_get(root, "version");
	if (!v) {
		perr(c, root->line, root->col, "version", "missing: start the policy with `version: 1`");
	} else if (want_scalar(c, v, "version", "the number 1") && strcmp(v->str, "1")) {
		perr(c, v->line, v->col, "version",
		     "unsupported version '%s': this bpfsbx reads version 1", v->str);
	}
	check_keys(c, root, "", c->machine ? machine_keys : keys);
	if (c->machine && (v = map_get(root, "projects")))
		c->projects(c, v);
	if ((v = map_get(root, "name")))
		want_scalar(c, v, "name", "a name");
	if ((v = map_get(root, "description")))
		want_scalar(c, v, "description", "text");
	if (!c->machine && (v = map_get(root, "extends")) && want_scalar(c, v, "extends",
			"a shipped policy name or a path")) {
		if (v->len == 0)
			perr(c, v->line, v->col, "extends", "empty: write a shipped policy name (agent-default) or a path");
		else {
			c->doc->extends = strdup(v->str);
			c->doc->ext_line = v->line;
			c->doc->ext_col = v->col;
		}
	}
	if ((v = map_get(root, "files")))
		parse_files(c, v);
	if ((v = map_get(root, "network")))
		parse_network(c, v);
	if ((v = map_get(root, "commands")))
		parse_commands(c, v);
	if (!c->machine && (v = map_get(root, "sandbox")))
		parse_sandbox(c, v);
}

/* ---- files, extends and merging ----------------------------------------------------- */

struct loader {
	const struct sbx_policy_env *env;
	struct sbx_diags *d;
	char *stack[MAX_EXTENDS + 2];	/* realpaths being loaded */
	size_t depth;
	struct fdoc *docs[MAX_EXTENDS + 2];	/* root ancestor first once done */
	size_t ndocs;
	char *sources[MAX_EXTENDS + 2];
	size_t nsources;
	bool failed;
};

static char *read_stream(FILE *f, size_t *len, int *err);

static char *read_file(const char *path, size_t *len, int *err)
{
	FILE *f = fopen(path, "re");

	*err = 0;
	if (!f) {
		*err = errno;
		return NULL;
	}
	return read_stream(f, len, err);
}

char *policy_read_fd(int fd, size_t *len, int *err)
{
	FILE *f = fdopen(fd, "r");

	*err = 0;
	if (!f) {
		*err = errno;
		close(fd);
		return NULL;
	}
	return read_stream(f, len, err);
}

static char *read_stream(FILE *f, size_t *len, int *err)
{
	char *buf = NULL;
	size_t cap = 0, n = 0;

	{
		/* a FIFO or a device would block or never end */
		struct stat st;

		if (fstat(fileno(f), &st) || !S_ISREG(st.st_mode)) {
			*err = EINVAL;
			fclose(f);
			return NULL;
		}
	}
	for (;;) {
		size_t r;

		if (!SBX_GROW(buf, cap, n + 4096 + 1, 8192)) {
			*err = ENOMEM;
			goto fail;
		}
		r = fread(buf + n, 1, cap - n - 1, f);
		n += r;
		if (n > MAX_FILE_SIZE) {
			*err = EFBIG;
			goto fail;
		}
		if (r == 0) {
			if (ferror(f)) {
				*err = errno ? errno : EIO;
				goto fail;
			}
			break;
		}
	}
	fclose(f);
	buf[n] = 0;
	*len = n;
	return buf;
fail:
	fclose(f);
	free(buf);
	return NULL;
}

static char *dir_of(const char *path)
{
	const char *sl = strrchr(path, '/');

	if (!sl)
		return NULL;
	if (sl == path)
		return strdup("/");
	return strndup(path, (size_t)(sl - path));
}

static struct fdoc *load_one(struct loader *ld, const char *file, const char *dir,
			     const char *buf, size_t len);

static void load_extends(struct loader *ld, struct fdoc *doc)
{
	char *path = NULL, *looked = NULL, *rp, *buf;
	const char *x = doc->extends;
	size_t len;
	int err;

	if (!strchr(x, '/') && !strstr(x, ".yaml") && !strstr(x, ".yml")) {
		if (!sbx_shipped_name_ok(x)) {
			sbx_diag_add(ld->d, SBX_DIAG_ERROR, doc->file, doc->ext_line, doc->ext_col,
				     "extends", "'%s' is not a shipped policy name (agent-default, "
				     "strict, audit-only) nor a path (write ./%s.yaml)", x, x);
			return;
		}
		path = sbx_shipped_policy(x, ld->env->shipped_dir, &looked);
		if (!path) {
			sbx_diag_add(ld->d, SBX_DIAG_ERROR, doc->file, doc->ext_line, doc->ext_col,
				     "extends", "unknown shipped policy '%s' (looked in %s): use "
				     "agent-default, strict or audit-only, or a path", x,
				     looked ? looked : "nowhere");
			free(looked);
			return;
		}
		free(looked);
	} else if (x[0] == '/') {
		path = strdup(x);
	} else if (doc->dir) {
		if (asprintf(&path, "%s/%s", doc->dir, x) < 0)
			path = NULL;
	} else {
		path = strdup(x);
	}
	if (!path)
		return;
	rp = realpath(path, NULL);
	if (!rp) {
		sbx_diag_add(ld->d, SBX_DIAG_ERROR, doc->file, doc->ext_line, doc->ext_col,
			     "extends", "cannot open '%s' (%s): %s", x, path, strerror(errno));
		free(path);
		return;
	}
	for (size_t i = 0; i < ld->depth; i++)
		if (ld->stack[i] && !strcmp(ld->stack[i], rp)) {
			sbx_diag_add(ld->d, SBX_DIAG_ERROR, doc->file, doc->ext_line, doc->ext_col,
				     "extends", "extends cycle: '%s' is already being loaded "
				     "(a policy cannot extend itself, directly or through others)", path);
			free(rp);
			free(path);
			return;
		}
	if (ld->depth >= MAX_EXTENDS) {
		sbx_diag_add(ld->d, SBX_DIAG_ERROR, doc->file, doc->ext_line, doc->ext_col,
			     "extends", "extends chain longer than %d files", MAX_EXTENDS);
		free(rp);
		free(path);
		return;
	}
	buf = read_file(rp, &len, &err);
	if (!buf) {
		sbx_diag_add(ld->d, SBX_DIAG_ERROR, doc->file, doc->ext_line, doc->ext_col,
			     "extends", "cannot read '%s': %s", path,
			     err == EFBIG ? "larger than 1 MiB" :
			     err == EINVAL ? "not a regular file" : strerror(err));
		free(rp);
		free(path);
		return;
	}
	ld->stack[ld->depth++] = rp;
	doc->ext_real = strdup(rp);
	{
		char *pdir = dir_of(rp);

		load_one(ld, path, pdir, buf, len);
		free(pdir);
	}
	ld->depth--;
	if (ld->nsources < sizeof(ld->sources) / sizeof(ld->sources[0]))
		ld->sources[ld->nsources++] = rp;
	else
		free(rp);
	ld->stack[ld->depth] = NULL;
	free(buf);
	free(path);
}

struct fdoc *policy_parse_doc(const char *file, const char *buf, size_t len,
			      const struct sbx_policy_env *env, struct sbx_diags *d,
			      void (*projects)(struct pctx *c, const struct ynode *y),
			      bool *failed)
{
	struct fdoc *doc = calloc(1, sizeof(*doc));
	struct pctx c = { .d = d, .env = env, .doc = doc, .machine = projects != NULL,
			  .projects = projects };
	struct ynode *root;

	*failed = true;
	if (!doc)
		return NULL;
	for (int i = 0; i < SBX_SANDBOX_SWITCHES; i++)
		doc->sandbox[i] = -1;
	doc->file = strdup(file);
	if (!doc->file) {
		fdoc_free(doc);
		return NULL;
	}
	root = yparse(file, buf, len, d);
	if (!root) {
		fdoc_free(doc);
		return NULL;
	}
	parse_root(&c, root);
	ynode_free(root);
	*failed = c.err;
	return doc;
}

/* Parse one file; its parents are loaded first and land before it in docs[]. */
static struct fdoc *load_one(struct loader *ld, const char *file, const char *dir,
			     const char *buf, size_t len)
{
	bool failed = true;
	struct fdoc *doc = policy_parse_doc(file, buf, len, ld->env, ld->d, NULL, &failed);

	if (failed)
		ld->failed = true;
	if (!doc)
		return NULL;
	doc->dir = dir ? strdup(dir) : NULL;
	if (doc->extends)
		load_extends(ld, doc);
	if (ld->ndocs < sizeof(ld->docs) / sizeof(ld->docs[0]))
		ld->docs[ld->ndocs++] = doc;
	else
		fdoc_free(doc);
	return doc;
}

static int cmp_trule(const void *a, const void *b)
{
	const struct trule *x = a, *y = b;
	int r;

	if (x->sec != y->sec)
		return (int)x->sec - (int)y->sec;
	r = strcmp(x->key ? x->key : "", y->key ? y->key : "");
	if (r)
		return r;
	/* identical rules: their written position orders them */
	if (x->info.line != y->info.line)
		return x->info.line - y->info.line;
	return x->info.col - y->info.col;
}

static struct sbx_rule_info *add_info(struct sbx_policy *p)
{
	struct sbx_rule_info *v = realloc(p->rules, (p->n_rules + 1) * sizeof(*v));

	if (!v)
		return NULL;
	p->rules = v;
	memset(&v[p->n_rules], 0, sizeof(v[0]));
	v[p->n_rules].id = (uint32_t)(p->n_rules + 1);
	return &v[p->n_rules++];
}

static int add_default(struct sbx_policy *p, struct fdoc *doc, enum sbx_section sec,
		       const struct defpos *dp, uint8_t access, const char *reason,
		       uint32_t *id)
{
	struct sbx_rule_info *r = add_info(p);

	if (!r)
		return -1;
	r->section = sec;
	r->verdict = dp->verdict;
	r->access = access;
	r->pattern = strdup(dp->field ? dp->field : "default");
	r->reason = reason ? strdup(reason) : NULL;
	r->file = strdup(doc->file);
	r->line = dp->line;
	r->col = dp->col;
	r->is_default = true;
	*id = r->id;
	return 0;
}

/* Move a section's rules of doc into p, numbering them. */
static int take_rules(struct sbx_policy *p, struct fdoc *doc, enum sbx_section sec)
{
	for (size_t i = 0; i < doc->n; i++) {
		struct trule *t = &doc->r[i];
		struct sbx_rule_info *r;

		if (t->sec != sec)
			continue;
		r = add_info(p);
		if (!r)
			return -1;
		t->info.id = r->id;
		*r = t->info;
		memset(&t->info, 0, sizeof(t->info));
		if (sec == SBX_SEC_FILES) {
			struct sbx_frule *v = realloc(p->frules, (p->n_frules + 1) * sizeof(*v));

			if (!v)
				return -1;
			p->frules = v;
			t->f.id = r->id;
			v[p->n_frules++] = t->f;
			memset(&t->f, 0, sizeof(t->f));
		} else if (sec == SBX_SEC_NETWORK) {
			struct sbx_nrule *v = realloc(p->nrules, (p->n_nrules + 1) * sizeof(*v));

			if (!v)
				return -1;
			p->nrules = v;
			t->nr.id = r->id;
			v[p->n_nrules++] = t->nr;
			memset(&t->nr, 0, sizeof(t->nr));
		} else {
			struct sbx_crule *v = realloc(p->crules, (p->n_crules + 1) * sizeof(*v));

			if (!v)
				return -1;
			p->crules = v;
			t->c.id = r->id;
			v[p->n_crules++] = t->c;
			memset(&t->c, 0, sizeof(t->c));
		}
	}
	return 0;
}

int policy_merge_doc(struct sbx_policy *p, struct fdoc *doc)
{
	uint32_t id;

	if (doc->n)
		qsort(doc->r, doc->n, sizeof(doc->r[0]), cmp_trule);
	/* files: defaults first, then rules */
	if (doc->fdef_scalar) {
		if (add_default(p, doc, SBX_SEC_FILES, &doc->fdef[0], (1u << SBX_ACC_MAX) - 1,
				doc->freason, &id))
			return -1;
		for (int a = 0; a < SBX_ACC_MAX; a++) {
			p->file_default[a] = doc->fdef[a].verdict;
			p->file_default_rule[a] = id;
		}
	} else {
		for (int a = 0; a < SBX_ACC_MAX; a++) {
			if (!doc->fdef[a].set)
				continue;
			if (add_default(p, doc, SBX_SEC_FILES, &doc->fdef[a], SBX_ACCBIT(a),
					doc->freason, &id))
				return -1;
			p->file_default[a] = doc->fdef[a].verdict;
			p->file_default_rule[a] = id;
		}
	}
	if (take_rules(p, doc, SBX_SEC_FILES))
		return -1;
	if (doc->ndef.set) {
		if (add_default(p, doc, SBX_SEC_NETWORK, &doc->ndef, 0, doc->nreason, &id))
			return -1;
		p->net_default = doc->ndef.verdict;
		p->net_default_rule = id;
	}
	if (take_rules(p, doc, SBX_SEC_NETWORK))
		return -1;
	if (doc->cdef.set) {
		if (add_default(p, doc, SBX_SEC_COMMANDS, &doc->cdef, 0, doc->creason, &id))
			return -1;
		p->cmd_default = doc->cdef.verdict;
		p->cmd_default_rule = id;
	}
	/* network.resolvers and network.dns: a child's settings replace its parent's */
	if (doc->dns_resolvers_set) {
		p->dns.n_resolvers = doc->dns.n_resolvers;
		memcpy(p->dns.resolvers, doc->dns.resolvers, sizeof(p->dns.resolvers));
	}
	if (doc->dns_grace_set)
		p->dns.grace_s = doc->dns.grace_s;
	if (doc->dns_min_ttl_set)
		p->dns.min_ttl_s = doc->dns.min_ttl_s;
	if (doc->dns_per_name_set)
		p->dns.max_per_name = doc->dns.max_per_name;
	if (doc->dns_per_session_set)
		p->dns.max_per_session = doc->dns.max_per_session;
	/* a child's switches override its parent's; lists add up, except
	 * keep_env, which a child replaces */
	for (int i = 0; i < SBX_SANDBOX_SWITCHES; i++) {
		if (doc->sandbox[i] == 1)
			p->sandbox_flags |= sandbox_switches[i].flag;
		else if (doc->sandbox[i] == 0)
			p->sandbox_flags &= ~sandbox_switches[i].flag;
	}
	p->family_allow |= doc->family_allow;
	p->netlink_allow |= doc->netlink_allow;
	p->require_bpf_lsm |= doc->require_bpf_lsm;
	if (doc->keep_env_set) {
		for (size_t i = 0; i < p->n_keep_env; i++)
			free(p->keep_env[i]);
		free(p->keep_env);
		p->keep_env = doc->keep_env;
		p->n_keep_env = doc->n_keep_env;
		doc->keep_env = NULL;
		doc->n_keep_env = 0;
	}
	if (doc->ldef.set) {
		if (add_default(p, doc, SBX_SEC_NETWORK, &doc->ldef, 0, doc->nreason, &id))
			return -1;
		p->loopback_verdict = doc->ldef.verdict;
		p->loopback_rule = id;
	}
	if (doc->idef.set) {
		if (add_default(p, doc, SBX_SEC_NETWORK, &doc->idef, 0,
				"network.inbound: clients outside every session that connect "
				"or send to the session's listeners (TCP, UDP, unix sockets)", &id))
			return -1;
		p->inbound_verdict = doc->idef.verdict;
		p->inbound_rule = id;
	}
	/* reserved and inbound ports add up along the chain: a child may
	 * open a port to outside clients, never free a reserved one */
	for (int k = 0; k < 2; k++) {
		struct sbx_port_range **dst = k ? &p->inbound_ports : &p->reserved;
		size_t *nd = k ? &p->n_inbound_ports : &p->n_reserved;
		const struct sbx_port_range *src = k ? doc->inbound_ports : doc->reserved;
		size_t ns = k ? doc->n_inbound_ports : doc->n_reserved;
		struct sbx_port_range *v;

		if (!ns)
			continue;
		v = realloc(*dst, (*nd + ns) * sizeof(*v));
		if (!v)
			return -1;
		memcpy(v + *nd, src, ns * sizeof(*v));
		*dst = v;
		*nd += ns;
	}
	return take_rules(p, doc, SBX_SEC_COMMANDS);
}

void sbx_policy_free(struct sbx_policy *p)
{
	if (!p)
		return;
	for (size_t i = 0; i < p->n_rules; i++)
		info_free(&p->rules[i]);
	free(p->rules);
	for (size_t i = 0; i < p->n_frules; i++)
		frule_free(&p->frules[i]);
	free(p->frules);
	for (size_t i = 0; i < p->n_nrules; i++)
		nrule_free(&p->nrules[i]);
	free(p->nrules);
	for (size_t i = 0; i < p->n_crules; i++)
		crule_free(&p->crules[i]);
	free(p->crules);
	for (size_t i = 0; i < p->n_sources; i++)
		free(p->sources[i]);
	free(p->sources);
	for (size_t i = 0; i < p->n_keep_env; i++)
		free(p->keep_env[i]);
	free(p->keep_env);
	for (size_t i = 0; p->approvers && p->approvers[i]; i++)
		free(p->approvers[i]);
	free(p->approvers);
	free(p->reserved);
	free(p->inbound_ports);
	free(p->home);
	free(p->project);
	free(p->resolv_conf);
	free(p);
}

static struct sbx_policy *load_common(const char *name, const char *dir, const char *buf,
				      size_t len, const char *self_real,
				      const struct sbx_policy_env *env, struct sbx_diags *diags,
				      struct policy_layer *keep)
{
	struct loader ld = { .env = env, .d = diags };
	struct sbx_policy *p = NULL;
	size_t errors_before = diags ? diags->errors : 0;
	struct sbx_diags local = { 0 };
	size_t diags_before = diags ? diags->n : 0;

	if (!diags)
		ld.d = diags = &local;
	if (!env || !env->home || env->home[0] != '/') {
		sbx_diag_add(diags, SBX_DIAG_ERROR, name, 0, 0, NULL,
			     "no home directory (an absolute HOME is required to expand ~)");
		goto out;
	}
	if (env->project && env->project[0] != '/') {
		sbx_diag_add(diags, SBX_DIAG_ERROR, name, 0, 0, NULL,
			     "the project directory must be an absolute path");
		goto out;
	}
	if (self_real)
		ld.stack[ld.depth++] = strdup(self_real);
	load_one(&ld, name, dir, buf, len);
	if (self_real) {
		ld.depth--;
		if (ld.stack[ld.depth])
			ld.sources[ld.nsources++] = ld.stack[ld.depth];
		ld.stack[ld.depth] = NULL;
	}
	if (ld.failed || diags->errors > errors_before || ld.ndocs == 0)
		goto out;
	p = calloc(1, sizeof(*p));
	if (!p)
		goto out;
	p->dns.grace_s = SBX_DNS_GRACE_S;
	p->dns.min_ttl_s = SBX_DNS_MIN_TTL_S;
	p->dns.max_per_name = SBX_DNS_MAX_PER_NAME;
	p->dns.max_per_session = SBX_DNS_MAX_PER_SESSION;
	for (size_t i = 0; i < ld.ndocs; i++)
		if (policy_merge_doc(p, ld.docs[i]))
			goto fail;
	/* the last doc is the file itself; its position names missing defaults */
	{
		struct fdoc *leaf = ld.docs[ld.ndocs - 1];

		for (int a = 0; a < SBX_ACC_MAX; a++)
			if (!p->file_default_rule[a] && a != SBX_ACC_CONNECT) {
				sbx_diag_add(diags, SBX_DIAG_ERROR, leaf->file, 1, 1, "files.default",
					     "missing %s verdict: a policy that extends nothing must set "
					     "files.default, e.g. `default: {read: allow, write: deny, exec: allow}`",
					     sbx_access_name(a));
				goto fail;
			}
		if (!p->net_default_rule) {
			sbx_diag_add(diags, SBX_DIAG_ERROR, leaf->file, 1, 1, "network.default",
				     "missing: a policy that extends nothing must set network.default "
				     "(allow, deny, ask or audit)");
			goto fail;
		}
		if (!p->cmd_default_rule)
			p->cmd_default = SBX_V_ALLOW;	/* classification only; the kernel decides */
	}
	p->sources = calloc(ld.nsources ? ld.nsources : 1, sizeof(char *));
	if (!p->sources)
		goto fail;
	/* root of the chain first: sources[] were appended as loads finished */
	for (size_t i = 0; i < ld.nsources; i++) {
		p->sources[p->n_sources++] = ld.sources[i];
		ld.sources[i] = NULL;
	}
	p->home = strdup(env->home);
	p->project = env->project ? strdup(env->project) : NULL;
	p->resolv_conf = strdup(env->resolv_conf ? env->resolv_conf : "/etc/resolv.conf");
	p->resolve = env->resolve;
	p->resolve_ctx = env->resolve_ctx;
	p->hardlink_scan_max = env->hardlink_scan_max ? env->hardlink_scan_max : SBX_HARDLINK_SCAN_MAX;
	p->no_hardlink_scan = env->no_hardlink_scan;
	p->no_generations = env->no_generations;
	p->floor_live = env->floor_live;
	if (!p->home || (env->project && !p->project) || !p->resolv_conf)
		goto fail;
	if (keep) {
		_Static_assert(sizeof(keep->docs) >= sizeof(ld.docs), "policy_layer.docs");
		memcpy(keep->docs, ld.docs, ld.ndocs * sizeof(*ld.docs));
		keep->ndocs = ld.ndocs;
		ld.ndocs = 0;
		keep->self_real = self_real ? strdup(self_real) : NULL;
	}
	goto out;
fail:
	if (diags->errors == errors_before)
		sbx_diag_add(diags, SBX_DIAG_ERROR, name, 0, 0, NULL, "out of memory");
	sbx_policy_free(p);
	p = NULL;
out:
	/* people read them top to bottom, as an editor lists them */
	sbx_diags_sort_from(diags, diags_before);
	for (size_t i = 0; i < ld.ndocs; i++)
		fdoc_free(ld.docs[i]);
	for (size_t i = 0; i < ld.nsources; i++)
		free(ld.sources[i]);
	for (size_t i = 0; i < ld.depth; i++)
		free(ld.stack[i]);
	sbx_diags_free(&local);
	return p;
}

struct sbx_policy *policy_load_buffer(const char *name, const char *buf, size_t len,
				      const struct sbx_policy_env *env, struct sbx_diags *diags,
				      struct policy_layer *keep)
{
	char *dir = name ? dir_of(name) : NULL;
	struct sbx_policy *p;

	p = load_common(name ? name : "<buffer>", dir, buf, len, NULL, env, diags, keep);
	free(dir);
	return p;
}

void policy_layer_free(struct policy_layer *keep)
{
	for (size_t i = 0; i < keep->ndocs; i++)
		fdoc_free(keep->docs[i]);
	keep->ndocs = 0;
	free(keep->self_real);
	keep->self_real = NULL;
}

struct sbx_policy *policy_load_file(const char *path, const struct sbx_policy_env *env,
				    struct sbx_diags *diags, struct policy_layer *keep)
{
	struct sbx_policy *p = NULL;
	char *buf, *rp, *dir;
	size_t len;
	int err;

	buf = read_file(path, &len, &err);
	if (!buf) {
		sbx_diag_add(diags, SBX_DIAG_ERROR, path, 0, 0, NULL, "cannot read: %s",
			     err == EFBIG ? "larger than 1 MiB" :
			     err == EINVAL ? "not a regular file" : strerror(err));
		return NULL;
	}
	rp = realpath(path, NULL);
	dir = rp ? dir_of(rp) : dir_of(path);
	p = load_common(path, dir, buf, len, rp, env, diags, keep);
	free(rp);
	free(dir);
	free(buf);
	return p;
}

bool sbx_policy_requires_bpf_lsm(const struct sbx_policy *p)
{
	return p && p->require_bpf_lsm;
}

size_t sbx_policy_rule_count(const struct sbx_policy *p)
{
	return p ? p->n_rules : 0;
}

const struct sbx_rule_info *sbx_policy_rule(const struct sbx_policy *p, uint32_t id)
{
	if (!p || id == 0 || id > p->n_rules)
		return NULL;
	return &p->rules[id - 1];
}

char *sbx_policy_rule_words(const struct sbx_policy *p, uint32_t id)
{
	const struct sbx_rule_info *r;
	struct sbx_strbuf b = { 0 };

	if (id >= SBX_RULE_BUILTIN)
		return sbx_asprintf("by %s", sbx_builtin_rule_text(id));
	r = sbx_policy_rule(p, id);
	if (!r)
		return sbx_strdup("by the section default");
	if (r->is_default)
		sbx_sb_printf(&b, "by default (%s at %s:%d)", r->pattern, r->file, r->line);
	else
		sbx_sb_printf(&b, "by %srule #%u \"%s\" at %s:%d", r->machine ? "machine " : "",
			      r->id, r->pattern, r->file, r->line);
	if (r->would)
		sbx_sb_printf(&b, " (learning: would %s)", sbx_verdict_name(r->would));
	if (r->reason)
		sbx_sb_printf(&b, ": %s", r->reason);
	return b.p ? b.p : sbx_strdup("");
}

size_t sbx_policy_source_count(const struct sbx_policy *p)
{
	return p ? p->n_sources : 0;
}

const char *sbx_policy_source(const struct sbx_policy *p, size_t i)
{
	return p && i < p->n_sources ? p->sources[i] : NULL;
}
