// SPDX-License-Identifier: GPL-2.0
/*
 * The parser: the shipped policies load cleanly, and every file in
 * tests/unit/data/policy/bad/ is rejected with the first error that its
 * first line announces:
 *
 *   # expect: LINE:COL FIELD substring of the message   (FIELD "-" = none)
 *   # env: no-project                                    (optional)
 */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "policy/policy.h"
#include "tests/unit/unit.h"
#include "tests/unit/policy_helpers.h"

#define BAD_DIR "tests/unit/data/policy/bad"

static void check_shipped(const char *name, size_t min_rules)
{
	char *home, *proj, *file = pt_path("policy/shipped/%s.yaml", name);
	struct sbx_policy_env env;
	struct sbx_diags d = { 0 };
	struct sbx_compiled c;
	struct sbx_policy *p;

	pt_dirs(sbx_unit_tmpdir(), &home, &proj);
	pt_env(&env, home, proj);
	p = sbx_policy_load_file(file, &env, &d);
	CU_ASSERT_PTR_NOT_NULL_FATAL(p);
	CU_ASSERT_EQUAL(d.errors, 0);
	CU_ASSERT(sbx_policy_rule_count(p) >= min_rules);
	CU_ASSERT_EQUAL(sbx_policy_compile(p, 1, &c, &d), 0);
	CU_ASSERT_EQUAL(d.errors, 0);
	/* every rule has a reason */
	for (uint32_t id = 1; id <= sbx_policy_rule_count(p); id++) {
		const struct sbx_rule_info *r = sbx_policy_rule(p, id);

		CU_ASSERT_EQUAL(r->id, id);
		if (!r->is_default)
			CU_ASSERT(r->reason && strlen(r->reason) > 10);
	}
	CU_ASSERT_EQUAL(sbx_policy_source_count(p), 1);
	CU_ASSERT_EQUAL(c.n_protect, 1);
	sbx_compiled_free(&c);
	sbx_policy_free(p);
	sbx_diags_free(&d);
	free(file);
	free(home);
	free(proj);
}

SBX_TEST(policy_parse, shipped_agent_default)
{
	check_shipped("agent-default", 30);
}

SBX_TEST(policy_parse, shipped_strict)
{
	check_shipped("strict", 10);
}

SBX_TEST(policy_parse, shipped_audit_only)
{
	check_shipped("audit-only", 3);
}

/* Returns a short description of a mismatch, or NULL when it matched. */
static char *run_bad_case(const char *dir, const char *name, const char *home, const char *proj)
{
	char *path = pt_path("%s/%s", dir, name), *res = NULL;
	char line1[512] = "", line2[512] = "", field[256], sub[512];
	int eline, ecol, n = 0;
	FILE *f = fopen(path, "r");
	struct sbx_policy_env env;
	struct sbx_diags d = { 0 };
	struct sbx_policy *p;
	const struct sbx_diag *g = NULL;

	if (!f || !fgets(line1, sizeof(line1), f)) {
		res = pt_path("%s: cannot read", name);
		goto out;
	}
	if (!fgets(line2, sizeof(line2), f))
		line2[0] = 0;
	fclose(f);
	f = NULL;
	line1[strcspn(line1, "\n")] = 0;
	if (sscanf(line1, "# expect: %d:%d %255s %n", &eline, &ecol, field, &n) != 3 || !n) {
		res = pt_path("%s: bad expect line", name);
		goto out;
	}
	snprintf(sub, sizeof(sub), "%s", line1 + n);
	pt_env(&env, home, strstr(line2, "no-project") ? NULL : proj);
	p = sbx_policy_load_file(path, &env, &d);
	if (p) {
		struct sbx_compiled c;

		if (sbx_policy_compile(p, 1, &c, &d) == 0) {
			sbx_compiled_free(&c);
			res = pt_path("%s: loaded and compiled without error", name);
			sbx_policy_free(p);
			goto out;
		}
		sbx_policy_free(p);
	}
	for (size_t i = 0; i < d.n; i++)
		if (d.v[i].level == SBX_DIAG_ERROR) {
			g = &d.v[i];
			break;
		}
	if (!g) {
		res = pt_path("%s: rejected without an error diagnostic", name);
		goto out;
	}
	if (g->line != eline || g->col != ecol ||
	    strcmp(g->field ? g->field : "-", field) || !strstr(g->msg, sub))
		res = pt_path("%s: got %d:%d %s '%s', want %d:%d %s '%s'", name, g->line, g->col,
			      g->field ? g->field : "-", g->msg, eline, ecol, field, sub);
out:
	if (f)
		fclose(f);
	sbx_diags_free(&d);
	free(path);
	return res;
}

static int yaml_only(const struct dirent *e)
{
	size_t n = strlen(e->d_name);

	return n > 5 && !strcmp(e->d_name + n - 5, ".yaml");
}

SBX_TEST(policy_parse, bad_corpus)
{
	struct dirent **ents;
	char *home, *proj;
	int n = scandir(BAD_DIR, &ents, yaml_only, alphasort), failed = 0;

	CU_ASSERT_FATAL(n >= 30);
	pt_dirs(sbx_unit_tmpdir(), &home, &proj);
	for (int i = 0; i < n; i++) {
		char *why = run_bad_case(BAD_DIR, ents[i]->d_name, home, proj);

		if (why) {
			/* one line per mismatch, so that all are seen at once */
			fprintf(stderr, "  bad_corpus: %s\n", why);
			failed++;
			free(why);
		}
		free(ents[i]);
	}
	free(ents);
	CU_ASSERT_EQUAL(failed, 0);
	free(home);
	free(proj);
}

SBX_TEST(policy_parse, errors_do_not_stop_at_the_first)
{
	static const char y[] =
		"version: 1\n"
		"files:\n"
		"  default: deny\n"
		"  rules:\n"
		"    - {path: /a, verdict: nope, reason: r}\n"
		"    - {path: /b, verdict: deny}\n"
		"network: {default: deny}\n";
	struct sbx_diags d = { 0 };
	struct sbx_policy *p = pt_load(y, "/home/u", "/p", &d);

	CU_ASSERT_PTR_NULL(p);
	CU_ASSERT_EQUAL(d.errors, 2);
	CU_ASSERT(pt_has_diag(&d, SBX_DIAG_ERROR, "unknown verdict 'nope'"));
	CU_ASSERT(pt_has_diag(&d, SBX_DIAG_ERROR, "needs a reason"));
	sbx_diags_free(&d);
}

SBX_TEST(policy_parse, diag_print_format)
{
	static const char y[] = "version: 1\nfiles: {default: deny}\nnetwork: {default: maybe}\n";
	struct sbx_diags d = { 0 };
	char *buf = NULL;
	size_t len = 0;
	FILE *f;

	CU_ASSERT_PTR_NULL(pt_load(y, "/home/u", "/p", &d));
	f = open_memstream(&buf, &len);
	sbx_diags_print(&d, f);
	fclose(f);
	CU_ASSERT_STRING_EQUAL(buf, "test.yaml:3:20: error: network.default: "
			       "unknown verdict 'maybe': use allow, deny, ask or audit\n");
	free(buf);
	sbx_diags_free(&d);
}

SBX_TEST(policy_parse, rule_info_and_defaults)
{
	static const char y[] =
		"version: 1\n"
		"files:\n"
		"  default: {read: allow, write: deny, exec: allow}\n"
		"  default_reason: >\n"
		"    folded text\n"
		"  rules:\n"
		"    - path: [~/.ssh/, \"${PROJECT}/k\"]\n"
		"      access: [read, write]\n"
		"      verdict: deny\n"
		"      reason: keys\n"
		"network: {default: ask}\n";
	struct sbx_diags d = { 0 };
	struct sbx_policy *p = pt_load(y, "/home/u", "/proj", &d);
	const struct sbx_rule_info *r;

	CU_ASSERT_PTR_NOT_NULL_FATAL(p);
	/* three default entries, one rule, one network default */
	CU_ASSERT_EQUAL(sbx_policy_rule_count(p), 5);
	r = sbx_policy_rule(p, 2);
	CU_ASSERT_PTR_NOT_NULL_FATAL(r);
	CU_ASSERT(r->is_default);
	CU_ASSERT_STRING_EQUAL(r->pattern, "files.default.write");
	CU_ASSERT_EQUAL(r->verdict, SBX_V_DENY);
	CU_ASSERT_STRING_EQUAL(r->reason, "folded text");
	CU_ASSERT_EQUAL(r->line, 3);
	r = sbx_policy_rule(p, 4);
	CU_ASSERT_PTR_NOT_NULL_FATAL(r);
	CU_ASSERT(!r->is_default);
	CU_ASSERT_STRING_EQUAL(r->pattern, "~/.ssh/, ${PROJECT}/k");
	CU_ASSERT_STRING_EQUAL(r->expanded, "/home/u/.ssh, /proj/k");
	CU_ASSERT_EQUAL(r->access, SBX_ACCBIT(SBX_ACC_READ) | SBX_ACCBIT(SBX_ACC_WRITE));
	CU_ASSERT_EQUAL(r->line, 7);
	CU_ASSERT_PTR_NULL(sbx_policy_rule(p, 0));
	CU_ASSERT_PTR_NULL(sbx_policy_rule(p, 6));
	sbx_policy_free(p);
	sbx_diags_free(&d);
}

SBX_TEST(policy_parse, path_shapes)
{
	static const char y[] =
		"version: 1\n"
		"files:\n"
		"  default: deny\n"
		"  rules:\n"
		"    - path: [/a/, /a/**, /a, /x/./y/../z//w, \"**/.env\", .env/, \"*.pem\", \"id_*\","
		" ~, \"/**\", /proc/*/mem/]\n"
		"      verdict: deny\n"
		"      reason: shapes\n"
		"network: {default: deny}\n";
	struct sbx_diags d = { 0 };
	struct sbx_policy *p = pt_load(y, "/home/u", "/proj", &d);
	const struct sbx_rule_info *r;

	CU_ASSERT_PTR_NOT_NULL_FATAL(p);
	r = sbx_policy_rule(p, 2);
	CU_ASSERT_PTR_NOT_NULL_FATAL(r);
	/* "X", "X/" and "X/ + **" are one thing: X and everything below */
	CU_ASSERT_STRING_EQUAL(r->expanded,
			       "/a, /a, /a, /x/z/w, .env, .env, .pem, id_, /home/u, /, mem");
	/* only mem of the three /proc files: a warning says all three are covered */
	CU_ASSERT(pt_has_diag(&d, SBX_DIAG_WARNING, "together"));
	sbx_policy_free(p);
	sbx_diags_free(&d);
}

SBX_TEST(policy_parse, warning_for_builtin_override)
{
	static const char y[] =
		"version: 1\n"
		"files:\n"
		"  default: deny\n"
		"  rules:\n"
		"    - path: ${PROJECT}/.sandbox/\n"
		"      verdict: allow\n"
		"      reason: try to open the queue\n"
		"network: {default: deny}\n";
	struct sbx_diags d = { 0 };
	struct sbx_policy *p = pt_load(y, "/home/u", "/proj", &d);

	CU_ASSERT_PTR_NOT_NULL(p);
	CU_ASSERT_EQUAL(d.errors, 0);
	CU_ASSERT(pt_has_diag(&d, SBX_DIAG_WARNING, "never takes effect"));
	sbx_policy_free(p);
	sbx_diags_free(&d);
}

SBX_TEST(policy_parse, missing_home_is_an_error)
{
	struct sbx_policy_env env = { 0 };
	struct sbx_diags d = { 0 };
	static const char y[] = "version: 1\nfiles: {default: deny}\nnetwork: {default: deny}\n";

	CU_ASSERT_PTR_NULL(sbx_policy_load_buffer("x", y, sizeof(y) - 1, &env, &d));
	CU_ASSERT(d.errors > 0);
	sbx_diags_free(&d);
}

/* agent-strict asks reads in the home outside the project, allows the
 * non-secret places builds read, and keeps agent-default's credential rules
 * (they are closer to the file than its ~/ rule) */
SBX_TEST(policy_parse, shipped_agent_strict)
{
	char *home, *proj, *file = pt_path("policy/shipped/agent-strict.yaml");
	struct sbx_policy_env env;
	struct sbx_diags d = { 0 };
	struct sbx_compiled c;
	struct sbx_policy *p;
	static const struct { const char *rel; int verdict; } want[] = {
		{ "notes.txt", SBX_V_ASK },
		{ "Documents/tax.pdf", SBX_V_ASK },
		{ NULL, SBX_V_ALLOW },	/* the project: src/main.c */
		{ ".cache/pip/http/x", SBX_V_ALLOW },
		{ ".rustup/toolchains/x", SBX_V_ALLOW },
		{ ".gitconfig", SBX_V_ALLOW },
		{ ".claude/settings.json", SBX_V_ALLOW },
		{ ".ssh/known_hosts", SBX_V_ALLOW },
		{ ".cache/huggingface/token", SBX_V_ASK },
		{ ".aws/credentials", SBX_V_ASK },
		{ ".claude/.credentials.json", SBX_V_ASK },
		{ ".bash_history", SBX_V_ASK },
		{ ".ssh/id_ed25519", SBX_V_DENY },
		{ ".mozilla/firefox/p/logins.json", SBX_V_DENY },
	};

	pt_dirs(sbx_unit_tmpdir(), &home, &proj);
	pt_env(&env, home, proj);
	p = sbx_policy_load_file(file, &env, &d);
	CU_ASSERT_PTR_NOT_NULL_FATAL(p);
	CU_ASSERT_EQUAL(d.errors, 0);
	CU_ASSERT_EQUAL_FATAL(sbx_policy_compile(p, 1, &c, &d), 0);
	for (uint32_t id = 1; id <= sbx_policy_rule_count(p); id++) {
		const struct sbx_rule_info *r = sbx_policy_rule(p, id);

		if (!r->is_default)
			CU_ASSERT(r->reason && strlen(r->reason) > 10);
	}
	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		char *path = want[i].rel ? pt_path("%s/%s", home, want[i].rel) :
					   pt_path("%s/src/main.c", proj);
		int v = pt_verdict(&c, path, SBX_ACC_READ);

		if (v != want[i].verdict)
			fprintf(stderr, "agent-strict: %s: verdict %d, want %d\n", path, v,
				want[i].verdict);
		CU_ASSERT_EQUAL(v, want[i].verdict);
		free(path);
	}
	sbx_compiled_free(&c);
	sbx_policy_free(p);
	sbx_diags_free(&d);
	free(file);
	free(home);
	free(proj);
}
