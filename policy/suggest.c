// SPDX-License-Identifier: GPL-2.0
/*
 * suggest.c - the generaliser behind `bpfsbx policy suggest` (suggest.h).
 *
 * Invariants:
 * - What is printed is what was checked: the patch text is emitted once
 *   (libyaml), loaded and compiled as a policy that extends the base, and
 *   every access and every probe is decided on that compile (decide.c).
 * - A rule never opens what agent-default denies or asks, nor what a
 *   built-in rule protects: such accesses are classified before any rule
 *   is made, a directory is never widened to the home directory, a parent
 *   of it, or a parent of a protected path, and a probe of every
 *   protected path must keep its verdict under the patch.
 * - The order of the recorded accesses does not change the patch: they
 *   are sorted and merged first, and rules are emitted in key order.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>
#define SBX_POLICY_INTERNAL
#include "policy/policy.h"
#include "policy/suggest.h"
#include "lib/alloc.h"
#include "lib/names.h"
#include "lib/shipped.h"
#include "lib/text.h"

#define MAX_ROUNDS 4
#define PATCH_NAME "suggested-patch.yaml"
#define DIR_MIN_PATHS 2		/* a directory only for more than one object below it */
#define WILDCARD_MIN_NAMES 3	/* "*.parent" only for this many names below it */
#define WILDCARD_MIN_LABELS 3	/* and a parent of this many labels (never "*.co.uk") */

enum cls { C_SUGGEST, C_ALREADY, C_PROTECTED, C_KEPT, C_UNEXPR };

struct acc {
	const struct sbx_seen *s;
	char *key;
	uint64_t count;
	struct sbx_strbuf who;	/* process names, at most a few */
	size_t n_who;
	enum cls cls;
	char *why;
	bool exact;		/* never widened (a widening failed its check) */
	int rule;		/* the patch rule that covers it, -1 none */
	struct sbx_decision base;	/* how the base decides it */
};

struct prule {
	enum sbx_section section;
	int access;		/* files */
	char *path;		/* files: as written in the patch */
	char **items;		/* network: hosts or addresses; commands: args globs */
	size_t n_items;
	bool is_host;
	uint16_t *ports;	/* network: none = any port */
	size_t n_ports;
	char *cmd;		/* commands */
	uint64_t events;
	size_t n_acc;
	struct sbx_strbuf who;
	size_t n_who;
	bool dir;
};

struct ctx {
	const struct sbx_suggest_in *in;
	struct sbx_policy_env env;
	struct sbx_policy *bp, *gp, *pp;
	struct sbx_compiled b, g, p;
	bool b_ok, g_ok, p_ok;
	struct acc **v;
	size_t n;
	struct prule *rules;
	size_t n_rules;
	int *rule_line;		/* each rule's line in the emitted patch */
	struct sbx_diags *d;
};

/* ---- small helpers -------------------------------------------------------------- */

static int no_resolve(const char *host, struct sbx_addr **out, size_t *n, void *ctx)
{
	(void)host;
	(void)ctx;
	*out = NULL;
	*n = 0;
	return ECANCELED;
}

/* below dir and not dir itself */
static bool strictly_below(const char *path, const char *dir)
{
	size_t n = strlen(dir);

	if (n && dir[n - 1] == '/')
		n--;
	return sbx_path_within(path, dir) && path[n] == '/' && path[n + 1];
}

static char *addr_text(int family, const uint8_t *addr)
{
	char a[INET6_ADDRSTRLEN] = "?";

	inet_ntop(family, addr, a, sizeof(a));
	return sbx_strdup(a);
}

static char *argv_joined(char *const *argv, int argc, int from)
{
	struct sbx_strbuf b = { 0 };

	for (int i = from; i < argc; i++)
		sbx_sb_join(&b, " ", argv[i] ? argv[i] : "");
	return b.p ? b.p : sbx_strdup("");
}

static const char *basename_of(const char *p)
{
	const char *s = strrchr(p, '/');

	return s ? s + 1 : p;
}

/*
 * A path a policy can carry as it is: no glob, no variable, no control
 * byte, and normalised as the kernel reports paths (no "." or ".." and no
 * empty component), so that the text compared here is the text decided.
 */
static bool expressible(const char *p)
{
	size_t n = strlen(p);

	for (const unsigned char *c = (const unsigned char *)p; *c; c++)
		if (*c < 0x20 || *c == 0x7f || *c == '*' || *c == '$' || *c == '\\')
			return false;
	if (p[0] == '@')
		return true;
	return !strstr(p, "//") && !strstr(p, "/./") && !strstr(p, "/../") &&
	       !(n >= 2 && !strcmp(p + n - 2, "/.")) && !(n >= 3 && !strcmp(p + n - 3, "/.."));
}

/* ~/x, ${PROJECT}/x or the path itself (the project first: it is often in home) */
static char *spelled(const struct ctx *c, const char *path, bool dir)
{
	const char *proj = c->env.project, *home = c->env.home;
	const char *slash = dir ? "/" : "";

	if (proj && sbx_path_within(path, proj))
		return sbx_asprintf("${PROJECT}%s%s", path + strlen(proj), slash);
	if (home && strictly_below(path, home))
		return sbx_asprintf("~%s%s", path + strlen(home), slash);
	return sbx_asprintf("%s%s", path, slash);
}

/* ---- the generaliser's parts ------------------------------------------------------ */

/* Directories below home that hold one directory per tool. */
static const char *const containers[] = {
	".cache", ".config", ".local/share", ".local/state", ".local/lib", "go/pkg", NULL,
};

char *sbx_suggest_widen(const char *path, const char *home, const char *project)
{
	const char *base, *rest;
	int keep;

	if (!path || path[0] != '/')
		return NULL;
	if (project && strictly_below(path, project)) {
		base = project;
		keep = 1;
	} else if (home && strictly_below(path, home)) {
		base = home;
		keep = 2;
		rest = path + strlen(home) + 1;
		for (int i = 0; containers[i]; i++)
			if (sbx_path_within(rest, containers[i])) {
				keep = 1 + (int)(strchr(containers[i], '/') ? 2 : 1);
				break;
			}
	} else {
		base = "";
		keep = 3;
	}
	rest = path + strlen(base);
	if (*rest == '/')
		rest++;
	/* the directory of keep components below base, if the path goes deeper */
	for (int i = 0; i < keep; i++) {
		const char *sl = strchr(rest, '/');

		if (!sl || !sl[1])
			return NULL;
		rest = sl + 1;
	}
	return strndup(path, (size_t)(rest - path - 1));
}

/* fnmatch's special bytes escaped: the argument string matches itself only */
static char *glob_escape(const char *s)
{
	struct sbx_strbuf b = { 0 };

	for (; *s; s++) {
		if (strchr("*?[]\\", *s))
			sbx_sb_putc(&b, '\\');
		sbx_sb_putc(&b, *s);
	}
	return b.p ? b.p : sbx_strdup("");
}

char *sbx_suggest_args(char *const *joined, size_t n)
{
	size_t common = (size_t)-1;	/* bytes of the common leading words */
	bool same = true;

	if (!n)
		return NULL;
	for (size_t i = 1; i < n; i++)
		if (strcmp(joined[i], joined[0]))
			same = false;
	if (same)
		return glob_escape(joined[0]);
	for (size_t i = 1; i < n; i++) {
		size_t k = 0, last_word = 0;
		const char *a = joined[0], *b = joined[i];

		while (a[k] && a[k] == b[k]) {
			k++;
			if (a[k] == ' ' && (b[k] == ' '))
				last_word = k;
		}
		/* a whole word in both: up to a space, or one string ends there */
		if ((!a[k] && b[k] == ' ') || (!b[k] && a[k] == ' '))
			last_word = k;
		if (last_word < common)
			common = last_word;
	}
	if (common == (size_t)-1 || common == 0)
		return NULL;
	{
		char *lead = strndup(joined[0], common), *esc = glob_escape(lead), *out;

		out = sbx_asprintf("%s *", esc);
		free(lead);
		free(esc);
		return out;
	}
}

/* ---- loading ------------------------------------------------------------------------ */

static struct sbx_policy *load_path(struct ctx *c, const char *path, struct sbx_compiled *out,
				    bool *ok)
{
	struct sbx_policy *p = sbx_policy_load_file(path, &c->env, c->d);

	if (p && sbx_policy_compile(p, 1, out, c->d) == 0)
		*ok = true;
	return p;
}

static struct sbx_policy *load_shipped(struct ctx *c, const char *name, struct sbx_compiled *out,
				       bool *ok)
{
	char *path = sbx_shipped_policy(name, c->env.shipped_dir, NULL);
	struct sbx_policy *p;

	if (!path) {
		sbx_diag_add(c->d, SBX_DIAG_ERROR, name, 0, 0, NULL,
			     "the shipped policy %s is not found: it names the protected set", name);
		return NULL;
	}
	p = load_path(c, path, out, ok);
	free(path);
	return p;
}

/* ---- classification ----------------------------------------------------------------- */

static bool explicit_rule(const struct sbx_policy *p, uint32_t id)
{
	const struct sbx_rule_info *r;

	if (id == 0 || id >= SBX_RULE_BUILTIN)
		return false;
	r = sbx_policy_rule(p, id);
	return r && !r->is_default;
}

static char *rule_words(const struct sbx_policy *p, const char *who, uint32_t id)
{
	const struct sbx_rule_info *r;

	if (id >= SBX_RULE_BUILTIN)
		return sbx_strdup(sbx_builtin_rule_text(id));
	r = sbx_policy_rule(p, id);
	if (!r)
		return sbx_asprintf("%s: rule #%u", who, id);
	return sbx_asprintf("%s rule \"%s\": %s", who, r->pattern ? r->pattern : "?",
			    r->reason ? r->reason : "");
}

static bool is_loopback(const struct sbx_seen *s)
{
	return sbx_addr_is_loopback(s->family, s->addr);
}

static int decide_seen_net(const struct sbx_compiled *c, const struct sbx_seen *s,
			   struct sbx_decision *d)
{
	if (is_loopback(s))
		return sbx_decide_loopback(c, s->family, s->addr, s->port, IPPROTO_TCP, d);
	return sbx_decide_net(c, s->family, s->addr, s->port, IPPROTO_TCP, d);
}

/* A learned address: the host rule's port rules come along (policy.h). */
static int decide_seen_host_port(const struct sbx_compiled *c, const struct sbx_seen *s,
				 struct sbx_decision *d)
{
	struct sbx_host_decision hd;

	if (sbx_decide_host(c, s->host, &hd))
		return decide_seen_net(c, s, d);
	if (hd.matched)
		for (size_t i = hd.first; i < hd.first + hd.n; i++) {
			const struct sbx_net_port_rule *pr = &c->hosts[i].pr;

			if (s->port >= pr->port_lo && s->port <= pr->port_hi &&
			    (pr->proto == 0 || pr->proto == IPPROTO_TCP)) {
				d->verdict = pr->verdict;
				d->rule_id = pr->rule_id;
				return 0;
			}
		}
	return decide_seen_net(c, s, d);
}

int sbx_seen_decide(const struct sbx_compiled *c, const struct sbx_policy *p,
		    const struct sbx_seen *s, struct sbx_decision *d)
{
	memset(d, 0, sizeof(*d));
	switch (s->kind) {
	case SBX_SEEN_FILE:
		if (s->path[0] == '@')
			return sbx_decide_abstract(c, s->path + 1, strlen(s->path + 1), d);
		return sbx_decide_path(c, s->path, (enum sbx_access)s->access, d);
	case SBX_SEEN_NET:
		return s->host ? decide_seen_host_port(c, s, d) : decide_seen_net(c, s, d);
	case SBX_SEEN_HOST: {
		struct sbx_host_decision hd;
		int rc = sbx_decide_host(c, s->host, &hd);

		d->verdict = hd.verdict;
		d->rule_id = hd.rule_id;
		return rc;
	}
	case SBX_SEEN_COMMAND:
		return sbx_decide_command(p, s->argc, s->argv, d);
	}
	return -EINVAL;
}

static bool allowed(uint8_t v)
{
	return v == SBX_V_ALLOW || v == SBX_V_AUDIT;
}

static void set_cls(struct acc *a, enum cls cls, char *why)
{
	a->cls = cls;
	free(a->why);
	a->why = why;
}

static void classify(struct ctx *c, struct acc *a)
{
	const struct sbx_seen *s = a->s;
	struct sbx_decision db, dg;

	if (s->kind == SBX_SEEN_FILE && (!s->path || (s->path[0] != '/' && s->path[0] != '@'))) {
		set_cls(a, C_UNEXPR, sbx_strdup("the event has no whole path (cut by the kernel)"));
		return;
	}
	if (s->kind == SBX_SEEN_FILE && !expressible(s->path)) {
		set_cls(a, C_UNEXPR, sbx_strdup("a path with *, $, \\, a control byte or a . or .. "
						"component: no rule can name it exactly"));
		return;
	}
	if (s->kind == SBX_SEEN_HOST || (s->kind == SBX_SEEN_NET && s->host)) {
		char norm[256];

		if (!sbx_host_normalize(s->host, norm, sizeof(norm))) {
			set_cls(a, C_UNEXPR, sbx_strdup("not a DNS name"));
			return;
		}
	}
	if (s->kind == SBX_SEEN_COMMAND && (s->argc < 1 || !s->argv[0][0] ||
					    strchr(s->argv[0], ' '))) {
		set_cls(a, C_UNEXPR, sbx_strdup("not a command a rule can name"));
		return;
	}
	if (sbx_seen_decide(&c->b, c->bp, s, &db) || sbx_seen_decide(&c->g, c->gp, s, &dg)) {
		set_cls(a, C_UNEXPR, sbx_strdup("cannot be decided"));
		return;
	}
	a->base = db;
	if (allowed(db.verdict)) {
		set_cls(a, C_ALREADY, NULL);
		return;
	}
	if (db.rule_id >= SBX_RULE_BUILTIN && db.rule_id != SBX_RULE_LISTENER_OUTSIDE) {
		set_cls(a, C_PROTECTED, sbx_strdup(sbx_builtin_rule_text(db.rule_id)));
		return;
	}
	if (dg.rule_id >= SBX_RULE_BUILTIN && dg.rule_id != SBX_RULE_LISTENER_OUTSIDE &&
	    !allowed(dg.verdict)) {
		set_cls(a, C_PROTECTED, sbx_strdup(sbx_builtin_rule_text(dg.rule_id)));
		return;
	}
	/*
	 * agent-default's own rules name the credential locations, the
	 * persistence paths, escalation and the accomplices: whatever they
	 * deny or ask stays so. On the network, what it denies (cloud
	 * metadata) and the loopback services it asks (Docker's API, the
	 * DevTools protocol, X11: as good as root or the browser).
	 */
	if (explicit_rule(c->gp, dg.rule_id) && !allowed(dg.verdict) &&
	    (s->kind == SBX_SEEN_FILE || s->kind == SBX_SEEN_COMMAND || dg.verdict == SBX_V_DENY ||
	     (s->kind == SBX_SEEN_NET && is_loopback(s)))) {
		set_cls(a, C_PROTECTED, rule_words(c->gp, "agent-default", dg.rule_id));
		return;
	}
	if (explicit_rule(c->bp, db.rule_id) && db.verdict == SBX_V_DENY) {
		set_cls(a, C_KEPT, rule_words(c->bp, "the policy's", db.rule_id));
		return;
	}
	set_cls(a, C_SUGGEST, NULL);
}

/* ---- the accesses, merged ------------------------------------------------------------ */

char *sbx_seen_key(const struct sbx_seen *s)
{
	switch (s->kind) {
	case SBX_SEEN_FILE:
		return sbx_asprintf("F%d %s", s->access, s->path ? s->path : "");
	case SBX_SEEN_NET: {
		char *a = addr_text(s->family, s->addr), *k;

		k = sbx_asprintf("N%s %s %05u", s->host ? s->host : "", a, s->port);
		free(a);
		return k;
	}
	case SBX_SEEN_HOST:
		return sbx_asprintf("H%s", s->host ? s->host : "");
	case SBX_SEEN_COMMAND: {
		char *j = argv_joined(s->argv, s->argc, 0), *k = sbx_asprintf("C%s", j);

		free(j);
		return k;
	}
	}
	return sbx_strdup("?");
}

static int cmp_acc(const void *x, const void *y)
{
	return strcmp((*(struct acc *const *)x)->key, (*(struct acc *const *)y)->key);
}

static void add_who(struct sbx_strbuf *b, size_t *n, const char *who)
{
	if (!who || !*who || (b->p && strstr(b->p, who)))
		return;
	if (*n == 3)
		sbx_sb_puts(b, ", ...");
	else if (*n < 3)
		sbx_sb_join(b, ", ", who);
	(*n)++;
}

static void merge(struct ctx *c, const struct sbx_seen *v, size_t n)
{
	struct acc **all = sbx_calloc(n ? n : 1, sizeof(*all));
	size_t w = 0;

	for (size_t i = 0; i < n; i++) {
		all[i] = sbx_calloc(1, sizeof(**all));
		all[i]->s = &v[i];
		all[i]->key = sbx_seen_key(&v[i]);
		all[i]->count = v[i].count ? v[i].count : 1;
		all[i]->rule = -1;
		add_who(&all[i]->who, &all[i]->n_who, v[i].who);
	}
	qsort(all, n, sizeof(*all), cmp_acc);
	for (size_t i = 0; i < n; i++) {
		if (w && !strcmp(all[w - 1]->key, all[i]->key)) {
			struct acc *k = all[w - 1];

			k->count += all[i]->count;
			add_who(&k->who, &k->n_who, all[i]->who.p);
			free(all[i]->key);
			free(all[i]->who.p);
			free(all[i]);
			continue;
		}
		all[w++] = all[i];
	}
	c->v = all;
	c->n = w;
}

/* ---- rules ---------------------------------------------------------------------------- */

static struct prule *new_rule(struct ctx *c, enum sbx_section sec)
{
	struct prule *r;

	c->rules = sbx_realloc_array(c->rules, c->n_rules + 1, sizeof(*c->rules));
	r = &c->rules[c->n_rules++];
	memset(r, 0, sizeof(*r));
	r->section = sec;
	return r;
}

static void rule_take(struct ctx *c, struct prule *r, struct acc *a)
{
	r->events += a->count;
	r->n_acc++;
	a->rule = (int)(r - c->rules);
	if (a->who.p)
		add_who(&r->who, &r->n_who, a->who.p);
}

static void rules_free(struct ctx *c)
{
	for (size_t i = 0; i < c->n_rules; i++) {
		struct prule *r = &c->rules[i];

		free(r->path);
		for (size_t j = 0; j < r->n_items; j++)
			free(r->items[j]);
		free(r->items);
		free(r->ports);
		free(r->cmd);
		free(r->who.p);
	}
	free(c->rules);
	c->rules = NULL;
	c->n_rules = 0;
	for (size_t i = 0; i < c->n; i++)
		c->v[i]->rule = -1;
}

/* Is widening to dir for access acc safe by the structure of the rules? */
static bool dir_safe(const struct ctx *c, const char *dir, int acc)
{
	const char *home = c->env.home, *proj = c->env.project;

	if (!strcmp(dir, "/") || (home && sbx_path_within(home, dir)) ||
	    (proj && sbx_path_within(proj, dir)))
		return false;
	if (strstr(dir, "/.sandbox/") || (strlen(dir) >= 9 && !strcmp(dir + strlen(dir) - 9, "/.sandbox")))
		return false;
	for (int pass = 0; pass < 2; pass++) {
		const struct sbx_policy *p = pass ? c->bp : c->gp;

		for (size_t i = 0; i < p->n_frules; i++) {
			const struct sbx_frule *f = &p->frules[i];

			if (!(f->access & SBX_ACCBIT(acc)) || f->verdict < (pass ? SBX_V_DENY : SBX_V_ASK))
				continue;
			for (size_t j = 0; j < f->n_pats; j++)
				if (f->pats[j].shape == SBX_PAT_ANCHORED &&
				    (sbx_path_within(f->pats[j].text, dir) || sbx_path_within(dir, f->pats[j].text)))
					return false;
		}
		for (size_t i = 0; i < p->n_sources; i++)
			if (sbx_path_within(p->sources[i], dir))
				return false;
	}
	return true;
}

char **sbx_suggest_refused_below(const struct sbx_policy *p, const char *dir, int acc, size_t *n)
{
	char **v = NULL;

	*n = 0;
	for (size_t i = 0; i < p->n_frules; i++) {
		const struct sbx_frule *f = &p->frules[i];
		const struct sbx_rule_info *r = sbx_policy_rule(p, f->id);
		struct sbx_strbuf b = { 0 };

		if (!(f->access & SBX_ACCBIT(acc)) || f->verdict < SBX_V_ASK)
			continue;
		/* one line a rule: its names and paths, its verdict and why */
		for (size_t j = 0; j < f->n_pats; j++) {
			const struct sbx_path_pat *pt = &f->pats[j];

			if (!sbx_pat_is_name(pt->shape) &&
			    !(pt->shape == SBX_PAT_ANCHORED && strictly_below(pt->text, dir)))
				continue;
			sbx_sb_printf(&b, "%s%s%s%s", b.len ? ", " : "",
				      pt->shape == SBX_PAT_NAME_SUFFIX ? "*" : "", pt->text,
				      pt->shape == SBX_PAT_NAME_PREFIX ? "*" : "");
		}
		if (!b.len)
			continue;
		sbx_sb_printf(&b, ": %s (%s)", sbx_verdict_name(f->verdict),
			      r && r->reason ? r->reason : "no reason given");
		v = sbx_realloc_array(v, *n + 1, sizeof(*v));
		v[(*n)++] = b.p;
	}
	return v;
}

static void make_file_rules(struct ctx *c, int acc)
{
	size_t i = 0;
	struct { char *dir; struct acc *a; } *g = sbx_calloc(c->n ? c->n : 1, sizeof(*g));
	size_t ng = 0;

	for (size_t k = 0; k < c->n; k++) {
		struct acc *a = c->v[k];

		if (a->cls != C_SUGGEST || a->s->kind != SBX_SEEN_FILE || a->s->access != acc)
			continue;
		g[ng].a = a;
		g[ng].dir = a->exact || a->s->path[0] == '@' ? NULL :
			sbx_suggest_widen(a->s->path, c->env.home, c->env.project);
		if (g[ng].dir && !dir_safe(c, g[ng].dir, acc)) {
			free(g[ng].dir);
			g[ng].dir = NULL;
		}
		ng++;
	}
	/* the accesses are in path order, so one directory's are adjacent */
	while (i < ng) {
		size_t j = i + 1;

		if (g[i].dir)
			while (j < ng && g[j].dir && !strcmp(g[j].dir, g[i].dir))
				j++;
		if (g[i].dir && j - i >= (c->in->dir_min ? c->in->dir_min : DIR_MIN_PATHS)) {
			struct prule *r = new_rule(c, SBX_SEC_FILES);

			r->access = acc;
			r->dir = true;
			r->path = spelled(c, g[i].dir, true);
			for (size_t k = i; k < j; k++)
				rule_take(c, r, g[k].a);
		} else {
			for (size_t k = i; k < j; k++) {
				struct prule *r = new_rule(c, SBX_SEC_FILES);

				r->access = acc;
				r->path = g[k].a->s->path[0] == '@' ? sbx_strdup(g[k].a->s->path) :
					  spelled(c, g[k].a->s->path, false);
				rule_take(c, r, g[k].a);
			}
		}
		i = j;
	}
	for (size_t k = 0; k < ng; k++)
		free(g[k].dir);
	free(g);
}

/* network: one entry per host (or address) with its set of ports */
struct nent {
	char *item;
	bool is_host, any_port;
	uint16_t ports[16];
	size_t n_ports;
	struct acc **accs;
	size_t n_accs;
};

static void nent_port(struct nent *e, uint16_t port, bool any)
{
	if (any || e->n_ports == sizeof(e->ports) / sizeof(e->ports[0])) {
		e->any_port = true;
		return;
	}
	for (size_t i = 0; i < e->n_ports; i++)
		if (e->ports[i] == port)
			return;
	e->ports[e->n_ports++] = port;
}

static int cmp_u16(const void *a, const void *b)
{
	return (int)*(const uint16_t *)a - (int)*(const uint16_t *)b;
}

static bool same_ports(const struct nent *a, const struct nent *b)
{
	if (a->any_port || b->any_port)
		return a->any_port == b->any_port;
	return a->n_ports == b->n_ports && !memcmp(a->ports, b->ports, a->n_ports * sizeof(a->ports[0]));
}

static const char *parent_of(const char *host)
{
	const char *dot = strchr(host, '.');

	return dot ? dot + 1 : NULL;
}

static int labels(const char *h)
{
	int n = 1;

	for (; *h; h++)
		n += *h == '.';
	return n;
}

static void make_net_rules(struct ctx *c)
{
	struct nent *e = NULL;
	size_t ne = 0;

	for (size_t k = 0; k < c->n; k++) {
		struct acc *a = c->v[k];
		const struct sbx_seen *s = a->s;
		char norm[256], *item;
		bool host;
		size_t i;

		if (a->cls != C_SUGGEST || (s->kind != SBX_SEEN_NET && s->kind != SBX_SEEN_HOST))
			continue;
		host = s->host != NULL && !(s->kind == SBX_SEEN_NET && is_loopback(s));
		if (host) {
			sbx_host_normalize(s->host, norm, sizeof(norm));
			item = sbx_strdup(norm);
		} else {
			item = addr_text(s->family, s->addr);
		}
		for (i = 0; i < ne; i++)
			if (e[i].is_host == host && !strcmp(e[i].item, item))
				break;
		if (i == ne) {
			e = sbx_realloc_array(e, ne + 1, sizeof(*e));
			memset(&e[ne], 0, sizeof(*e));
			e[ne].item = item;
			e[ne].is_host = host;
			ne++;
		} else {
			free(item);
		}
		/* a lookup refused before any connect: its port was never seen */
		nent_port(&e[i], s->port, s->kind == SBX_SEEN_HOST);
		e[i].accs = sbx_realloc_array(e[i].accs, e[i].n_accs + 1, sizeof(*e[i].accs));
		e[i].accs[e[i].n_accs++] = a;
	}
	for (size_t i = 0; i < ne; i++)
		qsort(e[i].ports, e[i].n_ports, sizeof(e[i].ports[0]), cmp_u16);
	/* many names below one parent of enough labels: "*.parent" */
	for (size_t i = 0; i < ne; i++) {
		const char *par = e[i].is_host ? parent_of(e[i].item) : NULL;
		size_t same = 0;

		if (!par || labels(par) < WILDCARD_MIN_LABELS || e[i].item[0] == '*')
			continue;
		for (size_t j = 0; j < ne; j++)
			if (e[j].is_host && e[j].item[0] != '*' && parent_of(e[j].item) &&
			    !strcmp(parent_of(e[j].item), par) && same_ports(&e[i], &e[j]))
				same++;
		if (same < WILDCARD_MIN_NAMES)
			continue;
		{
			char *wild = sbx_asprintf("*.%s", par), *p = sbx_strdup(par);

			for (size_t j = 0; j < ne; j++)
				if (j != i && e[j].is_host && e[j].item[0] != '*' &&
				    parent_of(e[j].item) && !strcmp(parent_of(e[j].item), p) &&
				    same_ports(&e[i], &e[j])) {
					e[i].accs = sbx_realloc_array(e[i].accs, e[i].n_accs + e[j].n_accs,
								      sizeof(*e[i].accs));
					memcpy(e[i].accs + e[i].n_accs, e[j].accs,
					       e[j].n_accs * sizeof(*e[j].accs));
					e[i].n_accs += e[j].n_accs;
					e[j].n_accs = 0;
					free(e[j].item);
					e[j].item = sbx_strdup("");
					e[j].is_host = false;
				}
			free(e[i].item);
			e[i].item = wild;
			free(p);
		}
	}
	/* one rule per set of ports, hosts and addresses apart */
	for (size_t i = 0; i < ne; i++) {
		struct prule *r;

		if (!e[i].n_accs)
			continue;
		r = new_rule(c, SBX_SEC_NETWORK);
		r->is_host = e[i].is_host;
		if (!e[i].any_port) {
			r->ports = sbx_calloc(e[i].n_ports, sizeof(*r->ports));
			memcpy(r->ports, e[i].ports, e[i].n_ports * sizeof(*r->ports));
			r->n_ports = e[i].n_ports;
		}
		for (size_t j = i; j < ne; j++) {
			if (!e[j].n_accs || e[j].is_host != e[i].is_host || !same_ports(&e[i], &e[j]))
				continue;
			r->items = sbx_realloc_array(r->items, r->n_items + 1, sizeof(*r->items));
			r->items[r->n_items++] = e[j].item;
			e[j].item = NULL;
			for (size_t k = 0; k < e[j].n_accs; k++)
				rule_take(c, r, e[j].accs[k]);
			e[j].n_accs = 0;
		}
	}
	for (size_t i = 0; i < ne; i++) {
		free(e[i].item);
		free(e[i].accs);
	}
	free(e);
}

static void make_command_rules(struct ctx *c)
{
	for (size_t k = 0; k < c->n; k++) {
		struct acc *a = c->v[k], **grp = NULL;
		const char *base;
		char **joined = NULL, *glob;
		size_t ng = 0;
		struct prule *r;

		if (a->cls != C_SUGGEST || a->s->kind != SBX_SEEN_COMMAND || a->rule >= 0)
			continue;
		base = basename_of(a->s->argv[0]);
		for (size_t j = k; j < c->n; j++) {
			struct acc *b = c->v[j];

			if (b->cls != C_SUGGEST || b->s->kind != SBX_SEEN_COMMAND || b->rule >= 0 ||
			    strcmp(basename_of(b->s->argv[0]), base))
				continue;
			grp = sbx_realloc_array(grp, ng + 1, sizeof(*grp));
			joined = sbx_realloc_array(joined, ng + 1, sizeof(*joined));
			grp[ng] = b;
			joined[ng++] = argv_joined(b->s->argv, b->s->argc, 1);
		}
		r = new_rule(c, SBX_SEC_COMMANDS);
		r->cmd = sbx_strdup(base);
		glob = a->exact ? NULL : sbx_suggest_args(joined, ng);
		if (glob) {
			r->items = sbx_calloc(1, sizeof(*r->items));
			r->items[r->n_items++] = glob;
		} else {
			/* nothing in common: each argument string, exactly */
			r->items = sbx_calloc(ng, sizeof(*r->items));
			for (size_t j = 0; j < ng; j++) {
				char *esc = glob_escape(joined[j]);
				bool dup = false;

				for (size_t m = 0; m < r->n_items; m++)
					dup |= !strcmp(r->items[m], esc);
				if (dup)
					free(esc);
				else
					r->items[r->n_items++] = esc;
			}
		}
		for (size_t j = 0; j < ng; j++) {
			rule_take(c, r, grp[j]);
			free(joined[j]);
		}
		free(joined);
		free(grp);
	}
}

/* ---- emitting ------------------------------------------------------------------------- */

struct out {
	struct sbx_strbuf b;
	struct mark { size_t off; char *text; int rule; } *marks;
	size_t n_marks;
};

static int out_write(void *data, unsigned char *buf, size_t size)
{
	struct out *o = data;

	sbx_sb_putn(&o->b, (const char *)buf, size);
	return !o->b.oom;
}

#define EMIT(init) do { if (!(init) || !yaml_emitter_emit(e, &ev)) return -EIO; } while (0)

static int scalar(yaml_emitter_t *e, const char *s, bool plain)
{
	yaml_event_t ev;

	EMIT(yaml_scalar_event_initialize(&ev, NULL, NULL, (yaml_char_t *)s, (int)strlen(s), 1, 1,
					  plain ? YAML_PLAIN_SCALAR_STYLE : YAML_ANY_SCALAR_STYLE));
	return 0;
}

static int kv(yaml_emitter_t *e, const char *k, const char *v)
{
	return scalar(e, k, false) ?: scalar(e, v, false);
}

/* a comment for the next node: where the emitter's output stands now */
static int mark(yaml_emitter_t *e, struct out *o, char *text, int rule)
{
	if (!yaml_emitter_flush(e)) {
		free(text);
		return -EIO;
	}
	o->marks = sbx_realloc_array(o->marks, o->n_marks + 1, sizeof(*o->marks));
	o->marks[o->n_marks++] = (struct mark){ o->b.len, text, rule };
	return 0;
}

/* comments are text, not YAML: one line each, control bytes shown as \xNN */
static void comment_text(struct sbx_strbuf *b, const char *s)
{
	for (const unsigned char *c = (const unsigned char *)s; *c; c++)
		if (*c < 0x20 || *c == 0x7f)
			sbx_sb_printf(b, "\\x%02x", *c);
		else
			sbx_sb_putc(b, (char)*c);
}

static char *rule_comment(const struct prule *r)
{
	struct sbx_strbuf b = { 0 };

	sbx_sb_printf(&b, "%llu event%s", (unsigned long long)r->events, r->events == 1 ? "" : "s");
	if (r->section == SBX_SEC_FILES && r->dir)
		sbx_sb_printf(&b, ", %zu paths below", r->n_acc);
	else if (r->section == SBX_SEC_NETWORK)
		sbx_sb_printf(&b, ", %zu %s", r->n_acc, r->n_acc == 1 ? "destination" : "destinations");
	else if (r->section == SBX_SEC_COMMANDS)
		sbx_sb_printf(&b, ", %zu command line%s", r->n_acc, r->n_acc == 1 ? "" : "s");
	if (r->who.p) {
		sbx_sb_puts(&b, " (");
		comment_text(&b, r->who.p);
		sbx_sb_puts(&b, ")");
	}
	if (r->section == SBX_SEC_NETWORK && !r->n_ports)
		sbx_sb_puts(&b, "; its lookup was refused before a port was seen: narrow port: if "
			    "you know it");
	return b.p;
}

static char *rule_reason(const struct ctx *c, const struct prule *r)
{
	if (c->in->reason)
		return sbx_strdup(c->in->reason);
	return sbx_asprintf("suggested by bpfsbx policy suggest: %llu recorded event%s%s%s",
			    (unsigned long long)r->events, r->events == 1 ? "" : "s",
			    r->who.p ? " of " : "", r->who.p ? r->who.p : "");
}

static int emit_ports(yaml_emitter_t *e, const struct prule *r)
{
	yaml_event_t ev;
	char num[8];
	int rc;

	if (!r->n_ports)
		return 0;
	if ((rc = scalar(e, "port", false)))
		return rc;
	if (r->n_ports == 1) {
		snprintf(num, sizeof(num), "%u", r->ports[0]);
		return scalar(e, num, true);
	}
	EMIT(yaml_sequence_start_event_initialize(&ev, NULL, NULL, 1, YAML_FLOW_SEQUENCE_STYLE));
	for (size_t i = 0; i < r->n_ports; i++) {
		snprintf(num, sizeof(num), "%u", r->ports[i]);
		if ((rc = scalar(e, num, true)))
			return rc;
	}
	EMIT(yaml_sequence_end_event_initialize(&ev));
	return 0;
}

static int emit_list(yaml_emitter_t *e, const char *key, char **items, size_t n)
{
	yaml_event_t ev;
	int rc;

	if ((rc = scalar(e, key, false)))
		return rc;
	if (n == 1)
		return scalar(e, items[0], false);
	EMIT(yaml_sequence_start_event_initialize(&ev, NULL, NULL, 1, YAML_FLOW_SEQUENCE_STYLE));
	for (size_t i = 0; i < n; i++)
		if ((rc = scalar(e, items[i], false)))
			return rc;
	EMIT(yaml_sequence_end_event_initialize(&ev));
	return 0;
}

static int emit_rule(yaml_emitter_t *e, struct out *o, const struct ctx *c, const struct prule *r,
		     int idx)
{
	yaml_event_t ev;
	char *reason;
	int rc;

	if ((rc = mark(e, o, rule_comment(r), idx)))
		return rc;
	EMIT(yaml_mapping_start_event_initialize(&ev, NULL, NULL, 1, YAML_BLOCK_MAPPING_STYLE));
	switch (r->section) {
	case SBX_SEC_FILES:
		rc = kv(e, "path", r->path) ?: kv(e, "access", sbx_access_name((enum sbx_access)r->access));
		break;
	case SBX_SEC_NETWORK:
		rc = emit_list(e, r->is_host ? "host" : "cidr", r->items, r->n_items) ?: emit_ports(e, r);
		break;
	case SBX_SEC_COMMANDS:
		rc = kv(e, "command", r->cmd) ?: emit_list(e, "args", r->items, r->n_items);
		break;
	}
	if (rc)
		return rc;
	reason = rule_reason(c, r);
	rc = kv(e, "verdict", "allow") ?: kv(e, "reason", reason);
	free(reason);
	if (rc)
		return rc;
	EMIT(yaml_mapping_end_event_initialize(&ev));
	return 0;
}

static int emit_section(yaml_emitter_t *e, struct out *o, const struct ctx *c,
			enum sbx_section sec, const char *name)
{
	yaml_event_t ev;
	size_t n = 0;
	int rc;

	for (size_t i = 0; i < c->n_rules; i++)
		n += c->rules[i].section == sec;
	if (!n)
		return 0;
	if ((rc = scalar(e, name, false)))
		return rc;
	EMIT(yaml_mapping_start_event_initialize(&ev, NULL, NULL, 1, YAML_BLOCK_MAPPING_STYLE));
	if ((rc = scalar(e, "rules", false)))
		return rc;
	EMIT(yaml_sequence_start_event_initialize(&ev, NULL, NULL, 1, YAML_BLOCK_SEQUENCE_STYLE));
	for (size_t i = 0; i < c->n_rules; i++)
		if (c->rules[i].section == sec && (rc = emit_rule(e, o, c, &c->rules[i], (int)i)))
			return rc;
	EMIT(yaml_sequence_end_event_initialize(&ev));
	EMIT(yaml_mapping_end_event_initialize(&ev));
	return 0;
}

static int emit_doc(yaml_emitter_t *e, struct out *o, const struct ctx *c, const char *ref)
{
	yaml_event_t ev;
	int rc;

	EMIT(yaml_stream_start_event_initialize(&ev, YAML_UTF8_ENCODING));
	EMIT(yaml_document_start_event_initialize(&ev, NULL, NULL, NULL, 1));
	EMIT(yaml_mapping_start_event_initialize(&ev, NULL, NULL, 1, YAML_BLOCK_MAPPING_STYLE));
	if ((rc = scalar(e, "version", false)) || (rc = scalar(e, "1", true)) ||
	    (rc = kv(e, "extends", ref)) ||
	    (rc = emit_section(e, o, c, SBX_SEC_FILES, "files")) ||
	    (rc = emit_section(e, o, c, SBX_SEC_NETWORK, "network")) ||
	    (rc = emit_section(e, o, c, SBX_SEC_COMMANDS, "commands")))
		return rc;
	EMIT(yaml_mapping_end_event_initialize(&ev));
	EMIT(yaml_document_end_event_initialize(&ev, 1));
	EMIT(yaml_stream_end_event_initialize(&ev));
	return 0;
}
#undef EMIT

/*
 * The emitter's text with each comment put on its own line before the
 * rule it was marked for: at a mark the emitter has written everything
 * before the rule (a key or two of the section may still be pending), and
 * the rule is the next line that starts with "- ", a block sequence item.
 */
static char *with_comments(const struct out *o, int *rule_line, int first_line)
{
	struct sbx_strbuf b = { 0 };
	size_t pos = 0;
	int line = first_line;

	for (size_t i = 0; i < o->n_marks; i++) {
		size_t at = o->marks[i].off, ind = 0;

		/* the start of the item's line */
		for (;;) {
			const char *nl = memchr(o->b.p + at, '\n', o->b.len - at);

			if (!nl) {
				at = o->b.len;
				break;
			}
			at = (size_t)(nl - o->b.p) + 1;
			for (ind = 0; at + ind < o->b.len && o->b.p[at + ind] == ' '; ind++)
				;
			if (at + ind + 1 < o->b.len && o->b.p[at + ind] == '-' && o->b.p[at + ind + 1] == ' ')
				break;
		}
		if (at >= o->b.len)
			continue;
		for (size_t k = pos; k < at; k++)
			line += o->b.p[k] == '\n';
		sbx_sb_putn(&b, o->b.p + pos, at - pos);
		sbx_sb_printf(&b, "%*s# ", (int)ind, "");
		comment_text(&b, o->marks[i].text);
		sbx_sb_putc(&b, '\n');
		line++;
		rule_line[o->marks[i].rule] = line;
		pos = at;
	}
	sbx_sb_putn(&b, o->b.p + pos, o->b.len - pos);
	return b.oom ? (free(b.p), NULL) : b.p;
}

char *sbx_seen_words(const struct sbx_seen *s)
{
	switch (s->kind) {
	case SBX_SEEN_FILE:
		return sbx_asprintf("%s %s", sbx_access_name((enum sbx_access)s->access),
				    s->path ? s->path : "(no path)");
	case SBX_SEEN_NET: {
		char *ad = addr_text(s->family, s->addr), *w;

		w = sbx_asprintf("connect %s%s%s port %u%s%s%s", s->family == AF_INET6 ? "[" : "", ad,
				 s->family == AF_INET6 ? "]" : "", s->port, s->host ? " (" : "",
				 s->host ? s->host : "", s->host ? ")" : "");
		free(ad);
		return w;
	}
	case SBX_SEEN_HOST:
		return sbx_asprintf("look up %s", s->host);
	case SBX_SEEN_COMMAND: {
		char *j = argv_joined(s->argv, s->argc, 0), *w = sbx_asprintf("run %s", j);

		free(j);
		return w;
	}
	}
	return sbx_strdup("?");
}

/* what the words of an access begin with: its access class or kind */
static char *seen_head(const struct sbx_seen *s)
{
	switch (s->kind) {
	case SBX_SEEN_FILE:
		return sbx_strdup(sbx_access_name((enum sbx_access)s->access));
	case SBX_SEEN_NET:
		return sbx_strdup("connect");
	case SBX_SEEN_HOST:
		return sbx_strdup("look up");
	case SBX_SEEN_COMMAND:
		return sbx_strdup("run");
	}
	return sbx_strdup("?");
}

/*
 * The accesses of one class, one entry per reason and kind: the first
 * object, how many more, their events and processes, then the reason.
 */
static void list_left_out(struct sbx_strbuf *b, const struct ctx *c, enum cls cls, const char *title)
{
	bool *done = sbx_calloc(c->n ? c->n : 1, sizeof(*done));
	bool first = true;

	for (size_t i = 0; i < c->n; i++) {
		const struct acc *a = c->v[i];
		struct sbx_strbuf who = { 0 };
		size_t more = 0, n_who = 0;
		uint64_t events = 0;
		char *head, *w;

		if (a->cls != cls || done[i])
			continue;
		head = seen_head(a->s);
		for (size_t k = i; k < c->n; k++) {
			const struct acc *o = c->v[k];
			char *h;

			if (o->cls != cls || done[k] || strcmp(o->why ? o->why : "", a->why ? a->why : ""))
				continue;
			h = seen_head(o->s);
			if (!strcmp(h, head)) {
				done[k] = true;
				events += o->count;
				more += k != i;
				add_who(&who, &n_who, o->who.p);
			}
			free(h);
		}
		if (first)
			sbx_sb_printf(b, "#\n# %s\n", title);
		first = false;
		if (a->s->kind == SBX_SEEN_FILE && a->s->path && a->s->path[0] == '/') {
			char *sp = spelled(c, a->s->path, false);

			w = sbx_asprintf("%s %s", head, sp);
			free(sp);
		} else {
			w = sbx_seen_words(a->s);
		}
		sbx_sb_puts(b, "#   ");
		comment_text(b, w);
		if (more)
			sbx_sb_printf(b, " and %zu more", more);
		sbx_sb_printf(b, " (%llu event%s", (unsigned long long)events, events == 1 ? "" : "s");
		if (who.p) {
			sbx_sb_puts(b, ", ");
			comment_text(b, who.p);
		}
		sbx_sb_puts(b, ")\n#     ");
		comment_text(b, a->why ? a->why : "");
		sbx_sb_putc(b, '\n');
		free(w);
		free(head);
		free(who.p);
	}
	free(done);
}

static char *emit_patch(struct ctx *c, const char *ref, bool with_lists)
{
	struct out o = { 0 };
	yaml_emitter_t e;
	struct sbx_strbuf all = { 0 };
	char *body;
	int rc, lines = 1;

	sbx_sb_puts(&all, "# bpfsbx policy suggest: the rules that would have allowed what was refused.\n");
	if (c->in->header) {
		sbx_sb_puts(&all, "# ");
		comment_text(&all, c->in->header);
		sbx_sb_putc(&all, '\n');
	}
	sbx_sb_puts(&all, "# Review each rule; every one was checked against the protected set.\n");
	for (size_t i = 0; i < all.len; i++)
		lines += all.p[i] == '\n';
	c->rule_line = sbx_realloc_array(c->rule_line, c->n_rules ? c->n_rules : 1,
					 sizeof(*c->rule_line));
	memset(c->rule_line, 0, (c->n_rules ? c->n_rules : 1) * sizeof(*c->rule_line));
	if (!yaml_emitter_initialize(&e)) {
		free(all.p);
		return NULL;
	}
	yaml_emitter_set_unicode(&e, 1);
	yaml_emitter_set_width(&e, -1);
	yaml_emitter_set_output(&e, out_write, &o);
	rc = emit_doc(&e, &o, c, ref);
	if (!rc && !yaml_emitter_flush(&e))
		rc = -EIO;
	yaml_emitter_delete(&e);
	body = rc || o.b.oom ? NULL : with_comments(&o, c->rule_line, lines);
	for (size_t i = 0; i < o.n_marks; i++)
		free(o.marks[i].text);
	free(o.marks);
	free(o.b.p);
	if (!body) {
		free(all.p);
		return NULL;
	}
	sbx_sb_puts(&all, body);
	free(body);
	if (with_lists) {
		list_left_out(&all, c, C_PROTECTED, "Not suggested: protected (credentials, persistence, "
			      "the always-protected set); they stay denied or asked:");
		list_left_out(&all, c, C_KEPT, "Not suggested: the policy denies them by a rule of its own:");
		list_left_out(&all, c, C_UNEXPR, "Not suggested: no rule can name them:");
	}
	return all.oom ? (free(all.p), NULL) : all.p;
}

/* ---- the check ------------------------------------------------------------------------- */

static void patch_free(struct ctx *c)
{
	if (c->pp) {
		sbx_compiled_free(&c->p);
		sbx_policy_free(c->pp);
	}
	c->pp = NULL;
	c->p_ok = false;
	memset(&c->p, 0, sizeof(c->p));
}

static int compile_patch(struct ctx *c, const char *text)
{
	struct sbx_diags d = { 0 };

	patch_free(c);
	c->pp = sbx_policy_load_buffer(PATCH_NAME, text, strlen(text), &c->env, &d);
	if (c->pp && sbx_policy_compile(c->pp, 1, &c->p, &d) == 0)
		c->p_ok = true;
	if (!c->p_ok) {
		/* a patch of ours that does not load is our bug: say it, print nothing */
		for (size_t i = 0; i < d.n; i++)
			sbx_diag_add(c->d, d.v[i].level, d.v[i].file, d.v[i].line, d.v[i].col,
				     d.v[i].field, "in the suggested patch: %s", d.v[i].msg);
		sbx_diags_free(&d);
		return -1;
	}
	sbx_diags_free(&d);
	return 0;
}

/* the patch's own rule that decided, or -1 (the base's, a default, built-in) */
static int patch_rule_of(const struct ctx *c, uint32_t id)
{
	const struct sbx_rule_info *r = id < SBX_RULE_BUILTIN ? sbx_policy_rule(c->pp, id) : NULL;

	if (!r || !r->file || !strstr(r->file, PATCH_NAME) || r->is_default)
		return -1;
	for (size_t i = 0; i < c->n_rules; i++)
		if (c->rule_line[i] == r->line)
			return (int)i;
	return -1;
}

/* narrow the accesses of patch rule i to exact objects; false if they already were */
static bool narrow(struct ctx *c, int i)
{
	bool changed = false;

	for (size_t k = 0; k < c->n; k++)
		if (c->v[k]->rule == i && !c->v[k]->exact) {
			c->v[k]->exact = true;
			changed = true;
		}
	return changed;
}

static void probe_paths(const struct sbx_policy *p, uint8_t min_verdict, char ***out, int **acc,
			size_t *n)
{
	for (size_t i = 0; i < p->n_frules; i++) {
		const struct sbx_frule *f = &p->frules[i];

		if (f->verdict < min_verdict)
			continue;
		for (size_t j = 0; j < f->n_pats; j++) {
			if (f->pats[j].shape != SBX_PAT_ANCHORED)
				continue;
			for (int a = 0; a < SBX_ACC_MAX; a++) {
				if (!(f->access & SBX_ACCBIT(a)))
					continue;
				for (int below_it = 0; below_it < 2; below_it++) {
					*out = sbx_realloc_array(*out, *n + 1, sizeof(**out));
					*acc = sbx_realloc_array(*acc, *n + 1, sizeof(**acc));
					(*out)[*n] = below_it ? sbx_asprintf("%s/sbx-suggest-probe",
									     f->pats[j].text) :
								sbx_strdup(f->pats[j].text);
					(*acc)[(*n)++] = a;
				}
			}
		}
	}
}

/*
 * 0: the patch holds; 1: a rule was narrowed or an access given up, emit
 * again; -1: a protected probe changed verdict and nothing is left to
 * narrow (fail closed).
 */
static int check_patch(struct ctx *c)
{
	char **probes = NULL;
	int *pacc = NULL, rc = 0;
	size_t np = 0;

	/* every protected path keeps its verdict under the patch */
	probe_paths(c->gp, SBX_V_ASK, &probes, &pacc, &np);
	probe_paths(c->bp, SBX_V_DENY, &probes, &pacc, &np);
	for (size_t i = 0; i < np && rc >= 0; i++) {
		struct sbx_decision db, dp;

		if (sbx_decide_path(&c->b, probes[i], (enum sbx_access)pacc[i], &db) ||
		    sbx_decide_path(&c->p, probes[i], (enum sbx_access)pacc[i], &dp))
			continue;
		if (db.verdict != dp.verdict) {
			int r = patch_rule_of(c, dp.rule_id);

			if (r < 0 || !narrow(c, r)) {
				sbx_diag_add(c->d, SBX_DIAG_ERROR, PATCH_NAME, 0, 0, NULL,
					     "a suggested rule changes the verdict on protected %s %s; "
					     "no patch printed", sbx_access_name((enum sbx_access)pacc[i]),
					     probes[i]);
				rc = -1;
			} else {
				rc = 1;
			}
		}
	}
	for (size_t i = 0; i < np; i++)
		free(probes[i]);
	free(probes);
	free(pacc);
	if (rc)
		return rc;
	/* what was refused and left out stays so; what was suggested is allowed */
	for (size_t k = 0; k < c->n; k++) {
		struct acc *a = c->v[k];
		struct sbx_decision db = a->base, dp;

		if (a->cls != C_SUGGEST && a->cls != C_PROTECTED && a->cls != C_KEPT)
			continue;
		if (sbx_seen_decide(&c->p, c->pp, a->s, &dp))
			continue;
		if (a->cls != C_SUGGEST) {
			if (db.verdict != dp.verdict) {
				int r = patch_rule_of(c, dp.rule_id);

				if (r < 0 || !narrow(c, r)) {
					char *w = sbx_seen_words(a->s);

					sbx_diag_add(c->d, SBX_DIAG_ERROR, PATCH_NAME, 0, 0,
						     NULL, "a suggested rule opens %s, which stays "
						     "refused; no patch printed", w);
					free(w);
					return -1;
				}
				rc = 1;
			}
			continue;
		}
		if (!allowed(dp.verdict)) {
			/* a closer rule of the base still decides: exact, or give up */
			if (a->exact || a->rule < 0 || !narrow(c, a->rule)) {
				set_cls(a, C_KEPT, sbx_asprintf("even an exact rule loses to %s",
								dp.rule_id >= SBX_RULE_BUILTIN ?
								sbx_builtin_rule_text(dp.rule_id) :
								"a closer rule of the policy"));
			}
			rc = 1;
		}
	}
	return rc;
}

/* ---- the whole ---------------------------------------------------------------------------- */

int sbx_suggest(const struct sbx_seen *v, size_t n, const struct sbx_suggest_in *in,
		struct sbx_suggestion *out, struct sbx_diags *d)
{
	struct ctx c = { .in = in, .d = d };
	const char *ref = in->base_ref ? in->base_ref : in->base ? in->base : "agent-default";
	char *text = NULL;
	int rc = -1;

	memset(out, 0, sizeof(*out));
	c.env = *in->env;
	c.env.no_hardlink_scan = true;
	c.env.resolve = no_resolve;
	c.bp = in->base ? load_path(&c, in->base, &c.b, &c.b_ok) :
			  load_shipped(&c, "agent-default", &c.b, &c.b_ok);
	c.gp = in->guard ? load_path(&c, in->guard, &c.g, &c.g_ok) :
			   load_shipped(&c, "agent-default", &c.g, &c.g_ok);
	if (!c.b_ok || !c.g_ok)
		goto out;
	merge(&c, v, n);
	for (size_t i = 0; i < c.n; i++)
		classify(&c, c.v[i]);
	for (int round = 0;; round++) {
		int chk;

		rules_free(&c);
		for (int a = 0; a < SBX_ACC_MAX; a++)
			make_file_rules(&c, a);
		make_net_rules(&c);
		make_command_rules(&c);
		/* no rule: the patch is the base itself, nothing to check */
		if (!c.n_rules)
			break;
		free(text);
		text = emit_patch(&c, ref, false);
		if (!text || compile_patch(&c, text))
			goto out;
		chk = check_patch(&c);
		if (chk < 0)
			goto out;
		if (chk == 0)
			break;
		if (round == MAX_ROUNDS) {
			sbx_diag_add(d, SBX_DIAG_ERROR, PATCH_NAME, 0, 0, NULL,
				     "the patch did not settle in %d rounds; no patch printed", MAX_ROUNDS);
			goto out;
		}
	}
	free(text);
	text = NULL;
	out->yaml = emit_patch(&c, ref, true);
	if (!out->yaml)
		goto out;
	out->rules = c.n_rules;
	for (size_t i = 0; i < c.n; i++) {
		switch (c.v[i]->cls) {
		case C_SUGGEST: out->covered++; break;
		case C_ALREADY: out->already++; break;
		case C_PROTECTED: out->protected_n++; break;
		case C_KEPT: out->kept++; break;
		case C_UNEXPR: out->unexpressible++; break;
		}
	}
	rc = 0;
out:
	free(text);
	rules_free(&c);
	free(c.rule_line);
	patch_free(&c);
	for (size_t i = 0; i < c.n; i++) {
		free(c.v[i]->key);
		free(c.v[i]->who.p);
		free(c.v[i]->why);
		free(c.v[i]);
	}
	free(c.v);
	if (c.bp) {
		sbx_compiled_free(&c.b);
		sbx_policy_free(c.bp);
	}
	if (c.gp) {
		sbx_compiled_free(&c.g);
		sbx_policy_free(c.gp);
	}
	return rc;
}

void sbx_suggestion_free(struct sbx_suggestion *s)
{
	free(s->yaml);
	s->yaml = NULL;
}
