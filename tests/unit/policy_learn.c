// SPDX-License-Identifier: GPL-2.0
/*
 * Learning (policy/learn.c): a policy's denies and asks become audit with
 * the verdict they would have had, decided on the compiled policy as the
 * kernel decides; agent-default's refusing rules, any rule closer than
 * them to what they refuse, the machine's, network.loopback and
 * network.inbound keep their verdicts; a policy that does not extend
 * agent-default is refused.
 */
#include <arpa/inet.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#define SBX_POLICY_INTERNAL
#include "policy/policy.h"
#include "tests/unit/unit.h"
#include "tests/unit/policy_helpers.h"

#define R SBX_ACC_READ
#define W SBX_ACC_WRITE

struct lfix {
	char *home, *proj;
	struct sbx_diags d;
	struct sbx_policy *p;
	struct sbx_compiled c;
};

/* load yaml (home and project made), learn, compile */
static int lfix_start(struct lfix *f, const char *yaml)
{
	int rc;

	memset(f, 0, sizeof(*f));
	pt_dirs(sbx_unit_tmpdir(), &f->home, &f->proj);
	f->p = pt_load(yaml, f->home, f->proj, &f->d);
	if (!f->p)
		sbx_diags_print(&f->d, stderr);
	CU_ASSERT_PTR_NOT_NULL_FATAL(f->p);
	rc = sbx_policy_learn(f->p, "policy/shipped", &f->d);
	if (rc)
		return rc;
	rc = sbx_policy_compile(f->p, 7, &f->c, &f->d);
	CU_ASSERT_EQUAL(rc, 0);
	return rc;
}

static void lfix_end(struct lfix *f)
{
	sbx_compiled_free(&f->c);
	sbx_policy_free(f->p);
	sbx_diags_free(&f->d);
	free(f->home);
	free(f->proj);
}

static int at(struct lfix *f, const char *rel, enum sbx_access a)
{
	char *path = pt_path("%s", rel);
	int v;

	if (rel[0] == '~')
		path = (free(path), pt_path("%s%s", f->home, rel + 1));
	v = pt_verdict(&f->c, path, a);
	free(path);
	return v;
}

static int net4(struct lfix *f, const char *addr, uint16_t port)
{
	struct sbx_decision d;
	uint8_t a[4];

	CU_ASSERT_EQUAL_FATAL(inet_pton(AF_INET, addr, a), 1);
	CU_ASSERT_EQUAL_FATAL(sbx_decide_net(&f->c, AF_INET, a, port, 6, &d), 0);
	return d.verdict;
}

static bool refused(int v)
{
	return v == SBX_V_DENY || v == SBX_V_ASK;
}

/* the rule a decision names, and what it would have been */
static uint8_t would_of(struct lfix *f, const char *rel, enum sbx_access a)
{
	char *path = rel[0] == '~' ? pt_path("%s%s", f->home, rel + 1) : pt_path("%s", rel);
	struct sbx_decision d;
	const struct sbx_rule_info *r;

	CU_ASSERT_EQUAL_FATAL(sbx_decide_path(&f->c, path, a, &d), 0);
	free(path);
	r = sbx_policy_rule(f->p, d.rule_id);
	return r ? r->would : 0;
}

SBX_TEST(policy_learn, refusals_recorded_credentials_kept)
{
	struct lfix f;

	CU_ASSERT_EQUAL_FATAL(lfix_start(&f,
		"version: 1\n"
		"extends: agent-default\n"
		"files:\n"
		"  rules:\n"
		"    - {path: /srv/denied/, access: [read, write], verdict: deny, reason: r}\n"
		"    - {path: /srv/asked/, access: read, verdict: ask, reason: r}\n"
		"    - {path: /opt/bin/forbidden, access: exec, verdict: deny, reason: r}\n"
		/* closer to a key than agent-default's ~/.ssh/ rule: stays */
		"    - {path: ~/.ssh/config, access: read, verdict: deny, reason: r}\n"
		/* a component agent-default names (.env): stays */
		"    - {path: /srv/app/.env/x, access: read, verdict: deny, reason: r}\n"
		/* a name matches anywhere, a protected directory included: stays */
		"    - {path: '*.secret', access: read, verdict: deny, reason: r}\n"
		"network:\n"
		"  rules:\n"
		"    - {cidr: 169.254.169.254/32, verdict: deny, reason: r}\n"
		"    - {cidr: 198.51.100.0/24, verdict: deny, reason: r}\n"), 0);
	/* the project's own refusals: recorded, with what they were */
	CU_ASSERT_EQUAL(at(&f, "/srv/denied/f", R), SBX_V_AUDIT);
	CU_ASSERT_EQUAL(at(&f, "/srv/denied/f", W), SBX_V_AUDIT);
	CU_ASSERT_EQUAL(would_of(&f, "/srv/denied/f", R), SBX_V_DENY);
	CU_ASSERT_EQUAL(at(&f, "/srv/asked/f", R), SBX_V_AUDIT);
	CU_ASSERT_EQUAL(would_of(&f, "/srv/asked/f", R), SBX_V_ASK);
	CU_ASSERT_EQUAL(at(&f, "/opt/bin/forbidden", SBX_ACC_EXEC), SBX_V_AUDIT);
	/* agent-default's credentials and persistence: as enforced */
	CU_ASSERT_EQUAL(at(&f, "~/.ssh/id_rsa", R), SBX_V_DENY);
	CU_ASSERT_EQUAL(at(&f, "~/.aws/credentials", R), SBX_V_ASK);
	CU_ASSERT_EQUAL(at(&f, "~/.bashrc", W), SBX_V_DENY);
	CU_ASSERT_NOT_EQUAL(at(&f, "/srv/x/.env", R), SBX_V_AUDIT);
	CU_ASSERT_EQUAL(would_of(&f, "~/.ssh/id_rsa", R), 0);
	/* the rules closer than a protected one */
	CU_ASSERT_EQUAL(at(&f, "~/.ssh/config", R), SBX_V_DENY);
	CU_ASSERT_EQUAL(at(&f, "/srv/app/.env/x", R), SBX_V_DENY);
	CU_ASSERT_EQUAL(at(&f, "~/.ssh/k.secret", R), SBX_V_DENY);
	CU_ASSERT_EQUAL(at(&f, "/srv/k.secret", R), SBX_V_DENY);
	/* network: cloud metadata stays denied (agent-default's and the
	 * project's own /32 inside it); the project's range and the default
	 * (ask) are recorded; agent-default's private-network ask too */
	CU_ASSERT_EQUAL(net4(&f, "169.254.169.254", 80), SBX_V_DENY);
	CU_ASSERT_EQUAL(net4(&f, "198.51.100.7", 443), SBX_V_AUDIT);
	CU_ASSERT_EQUAL(net4(&f, "203.0.113.9", 443), SBX_V_AUDIT);
	CU_ASSERT_EQUAL(net4(&f, "10.1.2.3", 5432), SBX_V_AUDIT);
	/* loopback services agent-default asks (Docker's API) stay asked,
	 * and so does network.loopback */
	CU_ASSERT_EQUAL(net4(&f, "127.0.0.1", 2375), SBX_V_ASK);
	CU_ASSERT_EQUAL(f.p->loopback_verdict, SBX_V_ASK);
	lfix_end(&f);
}

SBX_TEST(policy_learn, without_agent_default_refused)
{
	struct lfix f;

	CU_ASSERT_EQUAL(lfix_start(&f,
		"version: 1\n"
		"files: {default: allow, rules: [{path: ~/.ssh/, verdict: deny, reason: r}]}\n"
		"network: {default: deny}\n"), -EINVAL);
	CU_ASSERT(pt_has_diag(&f.d, SBX_DIAG_ERROR, "extends agent-default"));
	/* nothing was changed */
	CU_ASSERT_EQUAL(f.p->frules[0].verdict, SBX_V_DENY);
	CU_ASSERT_EQUAL(f.p->net_default, SBX_V_DENY);
	lfix_end(&f);
}

SBX_TEST(policy_learn, agent_default_itself_records_only_the_defaults)
{
	struct lfix f;

	CU_ASSERT_EQUAL_FATAL(lfix_start(&f, "version: 1\nextends: agent-default\n"), 0);
	for (size_t i = 0; i < f.p->n_frules; i++)
		if (f.p->frules[i].verdict == SBX_V_AUDIT)
			CU_FAIL("an agent-default file rule was made audit");
	CU_ASSERT(refused(at(&f, "~/.gnupg/private-keys-v1.d/k", R)));
	CU_ASSERT(refused(at(&f, "~/.gnupg/private-keys-v1.d/k.key", R)));
	CU_ASSERT(refused(at(&f, "/usr/bin/sudo", SBX_ACC_EXEC)));
	CU_ASSERT_EQUAL(f.p->net_default, SBX_V_AUDIT);
	CU_ASSERT_EQUAL(sbx_policy_rule(f.p, f.p->net_default_rule)->would, SBX_V_ASK);
	lfix_end(&f);
}
