// SPDX-License-Identifier: GPL-2.0
/*
 * learn.c - a policy for `run --learn`: what it denies or asks is recorded
 * instead (audit, with the verdict it would have had), except what the
 * protected set keeps refused (docs/POLICY.md "Learning").
 *
 * The protected set is what `policy suggest` never suggests: agent-
 * default's own rules that deny or ask files and commands (the credential
 * locations, persistence paths, escalation, the accomplices' sockets), its
 * network denies (cloud metadata) and loopback-service asks; the machine
 * policy (its floor is applied when the policy is compiled, after this);
 * and the built-in rules (not rules of the policy: never touched). The
 * policy must extend agent-default, or a learning session would guard no
 * credential at all.
 *
 * The kernel decides by the closest rule, so a project rule that is made
 * audit must not be closer to a protected object than the protected rule
 * that refuses it: a path rule at or below a protected path rule, or with
 * a component that a protected name rule matches, stays as it is; so do
 * name, /proc and abstract-socket rules (a name matches anywhere, a
 * protected directory included), a network rule whose range lies in a
 * protected range or whose host a protected host rule covers, and the
 * resolvers rule. network.loopback and network.inbound stay too: they
 * guard the person's own services, not the session's work.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#define SBX_POLICY_INTERNAL
#include "lib/shipped.h"
#include "lib/text.h"
#include "policy/policy.h"

struct learn {
	struct sbx_policy *p;
	char *base;		/* agent-default's realpath */
	bool *in_base;		/* [id]: an explicit rule of agent-default's file */
	const struct sbx_frule **guards;	/* agent-default's refusing file rules */
	size_t n_guards;
};

static bool refuses(uint8_t v)
{
	return v == SBX_V_DENY || v == SBX_V_ASK;
}

/* A rule of agent-default's own file (not a default: those are the
 * sections', and learning records them) */
static bool from_base(const struct learn *l, uint32_t id)
{
	return id && id <= l->p->n_rules && l->in_base[id];
}

/* in_base[] and the guards, once: 10,000 rules would otherwise resolve
 * their files' paths for every pair of rules */
static int learn_index(struct learn *l)
{
	const struct sbx_policy *p = l->p;
	const char *last = NULL;
	bool last_same = false;

	l->in_base = calloc(p->n_rules + 1, sizeof(bool));
	l->guards = calloc(p->n_frules + 1, sizeof(*l->guards));
	if (!l->in_base || !l->guards)
		return -ENOMEM;
	for (uint32_t id = 1; id <= p->n_rules; id++) {
		const struct sbx_rule_info *r = &p->rules[id - 1];

		if (r->is_default || !r->file)
			continue;
		/* one realpath per run of rules from one file */
		if (!last || strcmp(last, r->file)) {
			char *real = realpath(r->file, NULL);

			last = r->file;
			last_same = real && !strcmp(real, l->base);
			free(real);
		}
		l->in_base[id] = last_same;
	}
	for (size_t i = 0; i < p->n_frules; i++)
		if (refuses(p->frules[i].verdict) && from_base(l, p->frules[i].id))
			l->guards[l->n_guards++] = &p->frules[i];
	return 0;
}

/* the machine policy's (machine.c marks each), or no rule this policy has */
static bool machine_rule(const struct learn *l, uint32_t id)
{
	const struct sbx_rule_info *r = sbx_policy_rule(l->p, id);

	return !r || r->machine;
}

/* agent-default's network rules that stay, as `policy suggest` never
 * suggests them: what it denies (cloud metadata) and the loopback services
 * it asks (Docker's API, DevTools, X11); its asks of private networks are
 * the work's to record */
static bool guard_nrule(const struct learn *l, const struct sbx_nrule *g)
{
	if (!refuses(g->verdict) || !from_base(l, g->id))
		return false;
	if (g->verdict == SBX_V_DENY)
		return true;
	for (size_t i = 0; i < g->n_items; i++)
		if (g->items[i].kind != SBX_NI_CIDR ||
		    !sbx_addr_is_loopback(g->items[i].family, g->items[i].addr))
			return false;
	return g->n_items > 0;
}

static bool name_matches(const struct sbx_path_pat *g, const char *comp, size_t n)
{
	char c[256];

	if (n >= sizeof(c))
		return true;	/* cannot tell: keep the rule */
	memcpy(c, comp, n);
	c[n] = 0;
	switch (g->shape) {
	case SBX_PAT_NAME_EXACT:
		return !strcmp(c, g->text);
	case SBX_PAT_NAME_PREFIX:
		return !strncmp(c, g->text, strlen(g->text));
	case SBX_PAT_NAME_SUFFIX:
		return n >= strlen(g->text) && !strcmp(c + n - strlen(g->text), g->text);
	default:
		return false;
	}
}

/* Would making this path pattern audit put it closer to something a
 * protected rule refuses than that rule is? */
static bool path_near_guard(const struct learn *l, const struct sbx_path_pat *pat, uint8_t access)
{
	if (pat->shape != SBX_PAT_ANCHORED)
		return true;
	for (size_t i = 0; i < l->n_guards; i++) {
		const struct sbx_frule *g = l->guards[i];

		if (!(g->access & access))
			continue;
		for (size_t k = 0; k < g->n_pats; k++) {
			const struct sbx_path_pat *gp = &g->pats[k];

			if (gp->shape == SBX_PAT_ANCHORED) {
				if (sbx_path_within(pat->text, gp->text))
					return true;
			} else if (sbx_pat_is_name(gp->shape)) {
				for (const char *c = pat->text; *c;) {
					size_t n;

					while (*c == '/')
						c++;
					n = strcspn(c, "/");
					if (n && name_matches(gp, c, n))
						return true;
					c += n;
				}
			} else if (gp->shape == SBX_PAT_PROC && sbx_path_within(pat->text, "/proc")) {
				return true;	/* other processes' environ, mem, fd */
			}	/* an abstract socket has no path */
		}
	}
	return false;
}

static bool cidr_within(const struct sbx_net_item *a, const struct sbx_net_item *g)
{
	size_t full, i;

	if (a->family != g->family || a->bits < g->bits)
		return false;
	full = g->bits / 8;
	for (i = 0; i < full; i++)
		if (a->addr[i] != g->addr[i])
			return false;
	if (g->bits % 8) {
		uint8_t m = (uint8_t)(0xff << (8 - g->bits % 8));

		if ((a->addr[full] & m) != (g->addr[full] & m))
			return false;
	}
	return true;
}

/* a host item covered by a protected host item ("*.x" covers below x) */
static bool host_within(const char *h, const char *g)
{
	size_t lh, lg;

	if (!strcmp(h, g))
		return true;
	if (strncmp(g, "*.", 2))
		return false;
	g += 1;			/* ".x" */
	if (!strncmp(h, "*.", 2))
		h += 1;
	lh = strlen(h);
	lg = strlen(g);
	return lh > lg && !strcmp(h + lh - lg, g);
}

static bool net_near_guard(const struct learn *l, const struct sbx_nrule *r)
{
	const struct sbx_policy *p = l->p;

	for (size_t k = 0; k < r->n_items; k++) {
		const struct sbx_net_item *a = &r->items[k];

		if (a->kind == SBX_NI_RESOLVERS)
			return true;
		for (size_t i = 0; i < p->n_nrules; i++) {
			const struct sbx_nrule *g = &p->nrules[i];

			if (!guard_nrule(l, g))
				continue;
			for (size_t j = 0; j < g->n_items; j++) {
				const struct sbx_net_item *gi = &g->items[j];

				if (gi->kind == SBX_NI_RESOLVERS)
					continue;
				if (a->kind == SBX_NI_CIDR && gi->kind == SBX_NI_CIDR &&
				    cidr_within(a, gi))
					return true;
				if (a->kind == SBX_NI_HOST && gi->kind == SBX_NI_HOST &&
				    host_within(a->text, gi->text))
					return true;
			}
		}
	}
	return false;
}

/* rule id's verdict becomes audit, remembering what it was */
static void record(struct sbx_policy *p, uint32_t id, uint8_t *verdict)
{
	struct sbx_rule_info *r = id && id <= p->n_rules ? &p->rules[id - 1] : NULL;

	if (r && !r->would)
		r->would = r->verdict;
	if (r)
		r->verdict = SBX_V_AUDIT;
	*verdict = SBX_V_AUDIT;
}

static void learn_default(struct learn *l, uint32_t id, uint8_t *verdict)
{
	if (refuses(*verdict) && !(id && machine_rule(l, id)))
		record(l->p, id, verdict);
}

int sbx_policy_learn(struct sbx_policy *p, const char *shipped_dir, struct sbx_diags *d)
{
	struct learn l = { .p = p };
	char *base = sbx_shipped_policy("agent-default", shipped_dir, NULL);
	bool extends = false;
	int rc;

	l.base = base ? realpath(base, NULL) : NULL;
	free(base);
	for (size_t i = 0; l.base && i < p->n_sources; i++)
		extends |= !strcmp(p->sources[i], l.base);
	if (!extends) {
		sbx_diag_add(d, SBX_DIAG_ERROR, p->n_sources ? p->sources[p->n_sources - 1] : NULL,
			     0, 0, "extends", "a learning session (run --learn) needs a policy "
			     "that extends agent-default (directly or through agent-strict): "
			     "its rules are the credentials and persistence paths that stay "
			     "refused while everything else is recorded%s",
			     l.base ? "" : "; the shipped agent-default was not found");
		free(l.base);
		return -EINVAL;
	}
	/* decided per rule, before anything changes: every entry of a rule
	 * stays, or every one is recorded (the checks read the rules as the
	 * policy has them) */
	bool *keep = calloc(p->n_rules + 1, sizeof(bool));

	rc = keep ? learn_index(&l) : -ENOMEM;
	if (rc) {
		free(keep);
		free(l.in_base);
		free(l.guards);
		free(l.base);
		return rc;
	}
	for (size_t i = 0; i < p->n_frules; i++) {
		const struct sbx_frule *f = &p->frules[i];

		if (!refuses(f->verdict) || f->id > p->n_rules)
			continue;
		keep[f->id] |= machine_rule(&l, f->id) || from_base(&l, f->id);
		for (size_t k = 0; k < f->n_pats && !keep[f->id]; k++)
			keep[f->id] = path_near_guard(&l, &f->pats[k], f->access);
	}
	for (size_t i = 0; i < p->n_nrules; i++) {
		const struct sbx_nrule *r = &p->nrules[i];

		if (refuses(r->verdict) && r->id <= p->n_rules)
			keep[r->id] |= machine_rule(&l, r->id) || r->id == p->loopback_rule ||
				       r->id == p->inbound_rule || guard_nrule(&l, r) ||
				       net_near_guard(&l, r);
	}
	for (size_t i = 0; i < p->n_crules; i++) {
		const struct sbx_crule *r = &p->crules[i];

		if (refuses(r->verdict) && r->id <= p->n_rules)
			keep[r->id] |= machine_rule(&l, r->id) || from_base(&l, r->id);
	}
	for (size_t i = 0; i < p->n_frules; i++)
		if (refuses(p->frules[i].verdict) && !keep[p->frules[i].id])
			record(p, p->frules[i].id, &p->frules[i].verdict);
	for (size_t i = 0; i < p->n_nrules; i++)
		if (refuses(p->nrules[i].verdict) && !keep[p->nrules[i].id])
			record(p, p->nrules[i].id, &p->nrules[i].verdict);
	for (size_t i = 0; i < p->n_crules; i++)
		if (refuses(p->crules[i].verdict) && !keep[p->crules[i].id])
			record(p, p->crules[i].id, &p->crules[i].verdict);
	for (size_t a = 0; a < SBX_ACC_MAX; a++)
		learn_default(&l, p->file_default_rule[a], &p->file_default[a]);
	learn_default(&l, p->net_default_rule, &p->net_default);
	learn_default(&l, p->cmd_default_rule, &p->cmd_default);
	free(keep);
	free(l.in_base);
	free(l.guards);
	free(l.base);
	return 0;
}
