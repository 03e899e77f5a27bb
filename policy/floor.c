// SPDX-License-Identifier: GPL-2.0
/*
 * floor.c - the machine policy as a floor under the project's files
 * rules (docs/POLICY.md "Machine policy"): wherever the machine policy has
 * a rule, the final verdict is the stricter of the machine's and the
 * project's, each decided by most-specific-wins within its own layer.
 *
 * The kernel knows one walk, most specific entry first, so the layers are
 * not kept apart in the maps. Instead the rules are rewritten before they
 * are compiled, where one layer's rule would beat a stricter one of the
 * other by being more specific:
 *  - a project path rule takes the machine's verdict (and rule id) for its
 *    path when that is stricter: an allow of ~/.ssh/id_rsa under a machine
 *    deny of ~/.ssh/ becomes that deny;
 *  - a machine path rule takes the project's verdict for its path when
 *    that is stricter, so that a machine exception never loosens a project;
 *  - an exact-name rule of either layer takes the other layer's name
 *    verdict for that name (a project `cacert.pem` allow against a machine
 *    `*.pem` deny);
 *  - a project name rule that could match below a machine deny or ask of a
 *    directory: the objects below it with such a name get a path rule with
 *    the machine's verdict. Only what exists at compile time can be found
 *    so; docs/POLICY.md says what that leaves.
 * Both layers are compiled alone first, and decided with decide.c, so the
 * rewritten rules give what the kernel and `policy explain` then decide.
 * A path or exact-name rule of the project's own files that the floor
 * would raise is refused instead, naming both rules: the project says
 * something the machine does not let it say. The shipped policies'
 * rules are raised quietly (they are not the project's to change).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include "policy/compile.h"
#include "lib/alloc.h"
#include "lib/shipped.h"

struct floor {
	const struct sbx_policy *p;
	struct sbx_diags *d;
	struct sbx_compiled cp, cm;	/* the project alone, the machine alone */
	struct sbx_frule *out;
	size_t n, cap;
	char **texts;			/* paths of the rules made for objects */
	size_t n_texts, cap_texts;
	char *shipped_dir;		/* the shipped policies' directory, resolved */
	bool oom, refused;
};

/* A rule of a shipped policy: bpfsbx's own, raised under the floor without
 * a word; a rule of the project's own files is refused instead. */
static bool shipped_file(struct floor *f, const char *file)
{
	char *real, *sl;
	bool same;

	if (!f->shipped_dir) {
		char *any = sbx_shipped_policy("agent-default", NULL, NULL);

		if (!any)
			return false;
		sl = strrchr(any, '/');
		*sl = 0;
		f->shipped_dir = any;
	}
	real = file ? realpath(file, NULL) : NULL;
	if (!real)
		return false;
	sl = strrchr(real, '/');
	*sl = 0;
	same = !strcmp(real, f->shipped_dir);
	free(real);
	return same;
}

/* One rule for one pattern, one verdict and id per access class. */
static void emit(struct floor *f, const struct sbx_path_pat *pat, const uint8_t v[SBX_ACC_MAX],
		 const uint32_t id[SBX_ACC_MAX], uint8_t access)
{
	/* a rule per (verdict, id): classes that agree stay one rule */
	for (int a = 0; a < SBX_ACC_MAX; a++) {
		struct sbx_frule *r;
		uint8_t mask = 0;

		if (!(access & SBX_ACCBIT(a)))
			continue;
		for (int b = a; b < SBX_ACC_MAX; b++)
			if ((access & SBX_ACCBIT(b)) && v[b] == v[a] && id[b] == id[a])
				mask |= SBX_ACCBIT(b);
		access &= (uint8_t)~mask;
		if (!SBX_GROW(f->out, f->cap, f->n + 1, 64) ||
		    !(f->out[f->n].pats = malloc(sizeof(*pat)))) {
			f->oom = true;
			return;
		}
		r = &f->out[f->n++];
		r->id = id[a];
		r->access = mask;
		r->verdict = v[a];
		r->pats[0] = *pat;
		r->n_pats = 1;
	}
}

static bool is_name(enum sbx_path_shape s)
{
	return s == SBX_PAT_NAME_EXACT || s == SBX_PAT_NAME_PREFIX || s == SBX_PAT_NAME_SUFFIX;
}

/* What a layer decides for a basename alone (a name rule, or nothing). */
static bool name_verdict(const struct sbx_compiled *c, const char *name, enum sbx_access a,
			 struct sbx_decision *dd)
{
	char *path = NULL;
	int err;

	/* a component that cannot exist: only name rules match at level 0 */
	if (asprintf(&path, "/\x01sbx-floor\x01/%s", name) < 0)
		return false;
	err = sbx_decide_path_policy(c, path, a, dd);
	free(path);
	return !err && dd->level == 0 && dd->rank != SBX_RANK_EXACT && dd->rule_id &&
	       dd->rule_id < SBX_RULE_BUILTIN;
}

/* A rule of layer `mine`, raised to the other layer's verdict where that
 * is stricter at the rule's own pattern. */
static void raise_rule(struct floor *f, const struct sbx_frule *r, bool machine)
{
	const struct sbx_compiled *other = machine ? &f->cp : &f->cm;

	for (size_t j = 0; j < r->n_pats && !f->oom; j++) {
		const struct sbx_path_pat *pat = &r->pats[j];
		uint8_t v[SBX_ACC_MAX];
		uint32_t id[SBX_ACC_MAX];

		for (int a = 0; a < SBX_ACC_MAX; a++) {
			struct sbx_decision dd;
			bool have = false;

			v[a] = r->verdict;
			id[a] = r->id;
			if (!(r->access & SBX_ACCBIT(a)))
				continue;
			if (pat->shape == SBX_PAT_ANCHORED)
				have = !sbx_decide_path_policy(other, pat->text, a, &dd) &&
				       dd.rule_id < SBX_RULE_BUILTIN &&
				       (machine || sbx_rule_is_machine(f->p, dd.rule_id));
			else if (pat->shape == SBX_PAT_NAME_EXACT)
				have = name_verdict(other, pat->text, a, &dd) &&
				       (machine || sbx_rule_is_machine(f->p, dd.rule_id));
			/* stricter wins; on a tie the machine's rule is named */
			if (have && (dd.verdict > v[a] || (dd.verdict == v[a] && !machine))) {
				v[a] = dd.verdict;
				id[a] = dd.rule_id;
			}
			if (!machine && v[a] > r->verdict && !shipped_file(f, pat->pos.file)) {
				const struct sbx_rule_info *m = sbx_policy_rule(f->p, id[a]);

				/* live: the session runs; the floor holds over it */
				sbx_diag_at(f->d, f->p->floor_live ? SBX_DIAG_WARNING : SBX_DIAG_ERROR,
					    &pat->pos,
					    "%s %s of %s, where the machine policy says %s (%s:%d:%d: "
					    "\"%s\"): %s", sbx_verdict_name(r->verdict),
					    sbx_access_name(a), pat->text, sbx_verdict_name(v[a]),
					    m ? m->file : "?", m ? m->line : 0, m ? m->col : 0,
					    m ? m->pattern : "?",
					    f->p->floor_live ? "the machine's verdict holds in the "
					    "running session" : "a project cannot lower the machine's floor");
				f->refused |= !f->p->floor_live;
			}
		}
		emit(f, pat, v, id, r->access);
	}
}

/* ---- project name rules below a machine deny or ask of a directory ------------------------ */

static bool name_matches(const struct sbx_path_pat *pat, const char *name)
{
	size_t n = strlen(name), l = strlen(pat->text);

	switch (pat->shape) {
	case SBX_PAT_NAME_EXACT:
		return !strcmp(name, pat->text);
	case SBX_PAT_NAME_PREFIX:
		return n >= l && !memcmp(name, pat->text, l);
	case SBX_PAT_NAME_SUFFIX:
		return n >= l && !memcmp(name + n - l, pat->text, l);
	default:
		return false;
	}
}

struct below {
	struct floor *f;
	const struct sbx_frule *m;	/* the machine's rule */
	const struct sbx_path_pat *mpat;
	uint8_t loose;			/* access classes some project name rule loosens */
	size_t seen, max;
	dev_t dev;
	bool truncated;
};

/* obj matches a project name rule: pin the machine's verdict on it where
 * the project's (decided by that name) is looser */
static void pin_object(struct below *b, const char *obj)
{
	struct floor *f = b->f;
	uint8_t v[SBX_ACC_MAX] = { 0 };
	uint32_t id[SBX_ACC_MAX] = { 0 };
	uint8_t access = 0;
	struct sbx_path_pat pat;

	for (int a = 0; a < SBX_ACC_MAX; a++) {
		struct sbx_decision dp, dm;

		if (!(b->loose & SBX_ACCBIT(a)) ||
		    sbx_decide_path_policy(&f->cp, obj, a, &dp) ||
		    sbx_decide_path_policy(&f->cm, obj, a, &dm) ||
		    !sbx_rule_is_machine(f->p, dm.rule_id) || dm.verdict <= dp.verdict)
			continue;
		v[a] = dm.verdict;
		id[a] = dm.rule_id;
		access |= SBX_ACCBIT(a);
	}
	if (!access)
		return;
	if (!SBX_GROW(f->texts, f->cap_texts, f->n_texts + 1, 16) ||
	    !(f->texts[f->n_texts] = strdup(obj))) {
		f->oom = true;
		return;
	}
	pat = *b->mpat;
	pat.shape = SBX_PAT_ANCHORED;
	pat.text = f->texts[f->n_texts++];
	emit(f, &pat, v, id, access);
}

static int cmp_dirent(const struct dirent **a, const struct dirent **b)
{
	return strcmp((*a)->d_name, (*b)->d_name);
}

static void scan_below(struct below *b, const char *dir, int depth)
{
	const struct sbx_policy *p = b->f->p;
	size_t own = p->n_frules - p->n_machine_frules;
	struct dirent **ents = NULL;
	int n;

	if (depth > SBX_HARDLINK_SCAN_DEPTH) {
		b->truncated = true;
		return;
	}
	n = scandir(dir, &ents, NULL, cmp_dirent);
	for (int i = 0; i < n; i++) {
		const char *nm = ents[i]->d_name;
		char *child = NULL;
		struct stat st;
		bool hit = false;

		if (!strcmp(nm, ".") || !strcmp(nm, "..") || b->truncated || b->f->oom)
			goto next;
		if (++b->seen > b->max) {
			b->truncated = true;
			goto next;
		}
		if (asprintf(&child, "%s%s%s", dir, strcmp(dir, "/") ? "/" : "", nm) < 0) {
			child = NULL;
			b->f->oom = true;
			goto next;
		}
		if (lstat(child, &st) || st.st_dev != b->dev)
			goto next;
		for (size_t k = 0; k < own && !hit; k++)
			for (size_t j = 0; j < p->frules[k].n_pats && !hit; j++)
				hit = is_name(p->frules[k].pats[j].shape) &&
				      name_matches(&p->frules[k].pats[j], nm);
		if (hit)
			pin_object(b, child);
		if (S_ISDIR(st.st_mode))
			scan_below(b, child, depth + 1);
next:
		free(child);
		free(ents[i]);
	}
	free(ents);
}

static void below_machine_dirs(struct floor *f)
{
	const struct sbx_policy *p = f->p;
	size_t own = p->n_frules - p->n_machine_frules;

	for (size_t i = own; i < p->n_frules && !f->oom; i++) {
		const struct sbx_frule *m = &p->frules[i];
		uint8_t loose = 0;

		if (m->verdict < SBX_V_ASK)
			continue;
		/* which classes a project name rule is looser in */
		for (size_t k = 0; k < own; k++)
			for (size_t j = 0; j < p->frules[k].n_pats; j++)
				if (is_name(p->frules[k].pats[j].shape) &&
				    p->frules[k].verdict < m->verdict)
					loose |= p->frules[k].access & m->access;
		if (!loose)
			continue;
		for (size_t j = 0; j < m->n_pats && !f->oom; j++) {
			struct below b = {
				.f = f, .m = m, .mpat = &m->pats[j], .loose = loose,
				.max = p->hardlink_scan_max ? p->hardlink_scan_max : SBX_HARDLINK_SCAN_MAX,
			};
			struct stat st;

			if (m->pats[j].shape != SBX_PAT_ANCHORED || stat(m->pats[j].text, &st) ||
			    !S_ISDIR(st.st_mode))
				continue;
			b.dev = st.st_dev;
			scan_below(&b, m->pats[j].text, 1);
			if (b.truncated)
				sbx_diag_at(f->d, SBX_DIAG_WARNING, &m->pats[j].pos,
					    "stopped looking below %s after %zu entries or %d levels for "
					    "names that the project's name rules allow: beyond that, such "
					    "a name is decided by the project's rule", m->pats[j].text,
					    b.max, SBX_HARDLINK_SCAN_DEPTH);
		}
	}
}

/* ---- the pass ------------------------------------------------------------------------------ */

/* The policy with a machine policy's files rules: the rules rewritten so
 * that a machine deny or ask holds, then compiled. */
static int floor_compile(const struct sbx_policy *p, uint32_t policy_id, struct sbx_compiled *out,
		  struct sbx_diags *d)
{
	struct floor f = { .p = p, .d = d };
	struct sbx_policy view = *p;
	size_t own = p->n_frules - p->n_machine_frules;
	struct sbx_diags quiet = { 0 };
	int rc;

	/* each layer alone, for its decisions; their own problems are
	 * reported once, by the compile of the whole below */
	view.n_machine_rules = view.n_machine_frules = view.n_machine_nrules =
		view.n_machine_crules = 0;
	view.n_sources = 0;
	view.no_hardlink_scan = true;
	view.n_frules = own;
	rc = sbx_policy_compile(&view, policy_id, &f.cp, &quiet);
	view.frules = p->frules + own;
	view.n_frules = p->n_machine_frules;
	if (!rc)
		rc = sbx_policy_compile(&view, policy_id, &f.cm, &quiet);
	sbx_diags_free(&quiet);
	if (rc) {
		/* the whole compile reports why */
		sbx_compiled_free(&f.cp);
		sbx_compiled_free(&f.cm);
		view = *p;
		view.n_machine_frules = 0;
		rc = sbx_policy_compile(&view, policy_id, out, d);
		if (!rc) {
			sbx_compiled_free(out);
			sbx_diag_add(d, SBX_DIAG_ERROR, NULL, 0, 0, NULL,
				     "the machine policy's files rules do not compile");
			rc = -EINVAL;
		}
		return rc;
	}
	for (size_t i = 0; i < p->n_frules && !f.oom; i++)
		raise_rule(&f, &p->frules[i], i >= own);
	if (!f.oom)
		below_machine_dirs(&f);
	if (f.oom) {
		rc = -ENOMEM;
		sbx_diag_add(d, SBX_DIAG_ERROR, NULL, 0, 0, NULL, "out of memory while compiling");
	} else if (f.refused) {
		rc = -EINVAL;
	} else {
		view = *p;
		view.frules = f.out;
		view.n_frules = f.n;
		view.n_machine_frules = 0;
		rc = sbx_policy_compile(&view, policy_id, out, d);
	}
	for (size_t i = 0; i < f.n; i++)
		free(f.out[i].pats);
	free(f.out);
	for (size_t i = 0; i < f.n_texts; i++)
		free(f.texts[i]);
	free(f.texts);
	free(f.shipped_dir);
	sbx_compiled_free(&f.cp);
	sbx_compiled_free(&f.cm);
	return rc;
}

/* ---- network: refused where the floor cannot be kept yet ------------------------------------ */

/* Does item b (of one layer) cover item a (of the other), so that a, more
 * specific or the same, would be decided by its own rule first? */
static bool item_covers(const struct sbx_net_item *b, const struct sbx_net_item *a)
{
	if (a->kind == SBX_NI_CIDR && b->kind == SBX_NI_CIDR) {
		uint8_t net[16];

		if (a->family != b->family || a->bits < b->bits)
			return false;
		sbx_addr_mask(net, a->addr, a->family == AF_INET ? 4 : 16, b->bits);
		return !memcmp(net, b->addr, a->family == AF_INET ? 4 : 16);
	}
	if (a->kind == SBX_NI_HOST && b->kind == SBX_NI_HOST) {
		const char *an = a->text, *bn = b->text;
		bool aw = !strncmp(an, "*.", 2), bw = !strncmp(bn, "*.", 2);
		size_t al, bl;

		if (!strcmp(an, bn))
			return true;
		if (!bw)
			return false;
		/* *.S covers a name strictly below S, and *.T for T below S */
		bn += 2;
		an += aw ? 2 : 0;
		al = strlen(an);
		bl = strlen(bn);
		return al > bl && an[al - bl - 1] == '.' && !strcmp(an + al - bl, bn);
	}
	return false;
}

static bool ports_meet(const struct sbx_nrule *x, const struct sbx_nrule *y)
{
	if (x->proto && y->proto && x->proto != y->proto)
		return false;
	if (!x->n_ports || !y->n_ports)
		return true;
	for (size_t i = 0; i < x->n_ports; i++)
		for (size_t j = 0; j < y->n_ports; j++)
			if (x->ports[i].lo <= y->ports[j].hi && y->ports[j].lo <= x->ports[i].hi)
				return true;
	return false;
}

/*
 * The network maps are not rewritten like the files rules (one prefix's
 * port rules would have to be split by the other layer's): a rule that is
 * as or more specific than one of the other layer, meets its ports and is
 * looser than it would lower the floor, so the policy is refused, with both
 * positions. Same-key rules merge to the stricter anyway.
 * In a running session's policy (floor_live) the looser rule takes the
 * stricter verdict instead, whole, in raised (a copy of nrules): stricter
 * than either layer asked for its other names and ports, never looser.
 */
static int floor_network(const struct sbx_policy *p, struct sbx_nrule *raised,
			 struct sbx_diags *d)
{
	size_t own = p->n_nrules - p->n_machine_nrules;
	size_t errors = d->errors, from = d->n;

	for (size_t i = 0; i < p->n_nrules; i++) {
		const struct sbx_nrule *a = &p->nrules[i];
		size_t lo = i < own ? own : 0, hi = i < own ? p->n_nrules : own;

		for (size_t j = lo; j < hi; j++) {
			const struct sbx_nrule *b = &p->nrules[j];

			if (a->verdict >= b->verdict || !ports_meet(a, b))
				continue;
			for (size_t x = 0; x < a->n_items; x++)
				for (size_t y = 0; y < b->n_items; y++) {
					const struct sbx_net_item *ai = &a->items[x], *bi = &b->items[y];

					if (!item_covers(bi, ai))
						continue;
					if (raised && raised[i].verdict < b->verdict) {
						raised[i].verdict = b->verdict;
						raised[i].id = b->id;
					}
					sbx_diag_at(d, raised ? SBX_DIAG_WARNING : SBX_DIAG_ERROR,
						    &ai->pos,
						    "'%s' (%s) is %s than the %s rule at %s:%d:%d "
						    "that covers it ('%s': %s): %s", ai->text,
						    sbx_verdict_name(a->verdict), "looser",
						    i < own ? "machine policy's" : "project's",
						    bi->pos.file, bi->pos.line, bi->pos.col, bi->text,
						    sbx_verdict_name(b->verdict), raised ?
						    "its verdict holds over this rule in the running session" :
						    "a machine rule holds over a more specific project rule, so "
						    "write the stricter verdict here or leave the name out");
				}
		}
	}
	sbx_diags_sort_from(d, from);
	return d->errors > errors ? -1 : 0;
}

/* A running session's (p->floor_live): a copy of p's nrules with the looser
 * rules raised to the floor, with a warning each; NULL: out of memory. */
static struct sbx_nrule *floor_raise_network(const struct sbx_policy *p, struct sbx_diags *d)
{
	struct sbx_nrule *raised = calloc(p->n_nrules ? p->n_nrules : 1, sizeof(*raised));

	if (!raised)
		return NULL;
	memcpy(raised, p->nrules, p->n_nrules * sizeof(*raised));
	floor_network(p, raised, d);
	return raised;
}

/* ---- the entry: the machine's layer first, then compile.c ------------------------------------ */

int sbx_policy_compile(const struct sbx_policy *p, uint32_t policy_id,
		       struct sbx_compiled *out, struct sbx_diags *diags)
{
	struct sbx_diags local = { 0 };
	struct sbx_diags *d = diags ? diags : &local;
	bool net = p && p->n_machine_nrules && !p->floor_net_raised;
	int rc;

	if (!p || (!net && !p->n_machine_frules))
		return compile_layer(p, policy_id, out, diags);
	memset(out, 0, sizeof(*out));
	if (net && p->floor_live) {
		struct sbx_policy view = *p;

		view.nrules = floor_raise_network(p, d);
		view.floor_net_raised = true;
		rc = view.nrules ? sbx_policy_compile(&view, policy_id, out, d) : -ENOMEM;
		free(view.nrules);
	} else if (net && floor_network(p, NULL, d)) {
		rc = -EINVAL;
	} else if (p->n_machine_frules) {
		rc = floor_compile(p, policy_id, out, d);
	} else {
		rc = compile_layer(p, policy_id, out, d);	/* the network was checked */
	}
	sbx_diags_free(&local);
	return rc;
}
