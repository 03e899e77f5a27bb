// SPDX-License-Identifier: GPL-2.0
/*
 * compile.c - turn a loaded policy into the kernel's map entries.
 *
 * Files: absolute paths become inode entries (existing objects, by kernel
 * identity) or chain entries (the nearest existing ancestor plus the
 * hash of the missing names), basename patterns become name entries.
 * Network: CIDRs and resolved hosts become LPM entries whose values carry
 * their own port rules followed by those of every covering prefix.
 *
 * The result is sorted by key bytes and unique, and is the same for any
 * order of the rules: every merge below is "larger verdict, then smaller
 * rule id", and rule ids do not depend on rule order (see parse.c).
 *
 * compile.c fills the header, protects the policy files and runs the
 * passes in order; the passes are compile_files.c and compile_net.c (see
 * compile.h).
 */
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include "policy/compile.h"

/* ---- the policy files ------------------------------------------------------------------ */

struct prot {
	struct sbx_protect_key k;
	char *what;
};

static int cmp_prot(const void *a, const void *b)
{
	const struct prot *x = a, *y = b;
	int r = memcmp(&x->k, &y->k, sizeof(x->k));

	return r ? r : strcmp(x->what, y->what);
}

static void compile_protect(struct cstate *s)
{
	const struct sbx_policy *p = s->p;
	struct prot *v = calloc(p->n_sources + 1, sizeof(*v));
	size_t n = 0, o = 0;

	if (!v) {
		s->oom = true;
		return;
	}
	for (size_t i = 0; i < p->n_sources; i++) {
		uint32_t dev;
		uint64_t ino;
		int err = sbx_kident(p->sources[i], true, &dev, &ino);

		if (err) {
			sbx_diag_add(s->d, SBX_DIAG_ERROR, p->sources[i], 0, 0, NULL,
				     "cannot identify the policy file to protect it: %s", strerror(-err));
			s->err = true;
			continue;
		}
		v[n].k.dev = dev;
		v[n].k.ino = ino;
		v[n].what = p->sources[i];
		n++;
	}
	qsort(v, n, sizeof(*v), cmp_prot);
	s->out->protect = calloc(n + 1, sizeof(*s->out->protect));
	s->out->protect_what = calloc(n + 1, sizeof(char *));
	if (!s->out->protect || !s->out->protect_what) {
		s->oom = true;
		free(v);
		return;
	}
	for (size_t i = 0; i < n; i++) {
		if (o && !memcmp(&v[i].k, &s->out->protect[o - 1], sizeof(v[i].k)))
			continue;
		s->out->protect[o] = v[i].k;
		s->out->protect_what[o] = strdup(v[i].what);
		o++;
	}
	s->out->n_protect = o;
	free(v);
}

/* ---- the result ------------------------------------------------------------------------ */

void sbx_compiled_free(struct sbx_compiled *c)
{
	if (!c)
		return;
	free_files_out(c);
	for (size_t i = 0; i < c->n_net4; i++)
		free(c->net4[i].what);
	free(c->net4);
	for (size_t i = 0; i < c->n_net6; i++)
		free(c->net6[i].what);
	free(c->net6);
	for (size_t i = 0; i < c->n_hosts; i++)
		free(c->hosts[i].name);
	free(c->hosts);
	for (size_t i = 0; i < c->n_protect; i++)
		free(c->protect_what ? c->protect_what[i] : NULL);
	free(c->protect_what);
	free(c->protect);
	for (size_t i = 0; i < c->n_scan_dirs; i++)
		free(c->scan_dirs[i]);
	free(c->scan_dirs);
	for (size_t i = 0; i < c->n_idents; i++)
		free(c->idents[i].path);
	free(c->idents);
	memset(c, 0, sizeof(*c));
}

int compile_layer(const struct sbx_policy *p, uint32_t policy_id, struct sbx_compiled *out,
		  struct sbx_diags *diags)
{
	struct sbx_diags local = { 0 };
	struct cstate s = {
		.p = p, .d = diags ? diags : &local, .policy_id = policy_id, .out = out,
		.inode.klen = sizeof(struct sbx_inode_key),
		.chain.klen = sizeof(struct sbx_chain_key),
		.name.klen = sizeof(struct sbx_name_key),
	};
	struct sbx_policy_hdr *h = &out->hdr;
	size_t diag_from = s.d->n;

	memset(out, 0, sizeof(*out));
	if (!p)
		return -EINVAL;
	h->policy_id = policy_id;
	for (int a = 0; a < SBX_ACC_MAX; a++) {
		h->file_default[a] = p->file_default[a];
		h->file_default_rule[a] = p->file_default_rule[a];
	}
	/* a listener outside the session that no rule names is refused */
	if (!h->file_default_rule[SBX_ACC_CONNECT]) {
		h->file_default[SBX_ACC_CONNECT] = SBX_V_DENY;
		h->file_default_rule[SBX_ACC_CONNECT] = SBX_RULE_LISTENER_OUTSIDE;
	}
	h->net_default = p->net_default;
	h->net_default_rule = p->net_default_rule;
	h->loopback_outside = p->loopback_rule ? p->loopback_verdict : SBX_V_ASK;
	h->loopback_rule = p->loopback_rule ? p->loopback_rule : SBX_RULE_LOOPBACK_OUTSIDE;
	h->flags |= p->sandbox_flags;
	/* whether the landlock tier decides read and exec opens in the kernel
	 * (files.bpf.c): where one may be asked, since an approval cannot reach
	 * a Landlock domain; where one is recorded (audit), since Landlock
	 * tells no one of what it allows; and where a name rule denies one,
	 * since Landlock grants by place, so a name made later (a new .env
	 * beside the agent's work) or one outside the plan's scan roots would
	 * be Landlock's to let through */
	if (p->file_default[SBX_ACC_READ] == SBX_V_ASK || p->file_default[SBX_ACC_READ] == SBX_V_AUDIT ||
	    p->file_default[SBX_ACC_EXEC] == SBX_V_ASK || p->file_default[SBX_ACC_EXEC] == SBX_V_AUDIT)
		h->flags |= SBX_PF_DECIDE_OPENS;
	for (size_t i = 0; i < p->n_frules; i++) {
		const struct sbx_frule *r = &p->frules[i];

		if (!(r->access & (SBX_ACCBIT(SBX_ACC_READ) | SBX_ACCBIT(SBX_ACC_EXEC))))
			continue;
		if (r->verdict == SBX_V_ASK || r->verdict == SBX_V_AUDIT)
			h->flags |= SBX_PF_DECIDE_OPENS;
		if (r->verdict != SBX_V_DENY)
			continue;
		for (size_t j = 0; j < r->n_pats; j++)
			if (sbx_pat_is_name(r->pats[j].shape))
				h->flags |= SBX_PF_DECIDE_OPENS;
	}
	h->netlink_allow = SBX_NETLINK_DEFAULT | p->netlink_allow;
	h->family_allow = p->family_allow;
	for (size_t i = 0; i < p->n_keep_env; i++) {
		int bit = sbx_scrubbed_env_index(p->keep_env[i]);

		if (bit >= 0)
			h->keep_env |= 1u << bit;
	}
	compile_files(&s);
	if (!s.oom)
		compile_network(&s);
	if (!s.oom)
		compile_protect(&s);
	compile_files_free(&s);
	if (s.oom)
		sbx_diag_add(s.d, SBX_DIAG_ERROR, NULL, 0, 0, NULL, "out of memory while compiling");
	/* rules were compiled in id order; people read files top-down */
	sbx_diags_sort_from(s.d, diag_from);
	sbx_diags_free(&local);
	if (s.oom || s.err) {
		sbx_compiled_free(out);
		return s.oom ? -ENOMEM : -EINVAL;
	}
	return 0;
}
