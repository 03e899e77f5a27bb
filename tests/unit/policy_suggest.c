// SPDX-License-Identifier: GPL-2.0
/*
 * The generaliser of `policy suggest` (policy/suggest.c): where it stops
 * widening, the patterns it emits, that it never widens past a protected
 * path nor suggests one, and that its patch, loaded and decided with
 * decide.c, allows exactly what it was made for.
 */
#include <stdio.h>
#include <sys/socket.h>
#include <stdlib.h>
#include <string.h>
#include "tests/unit/unit.h"
#include "tests/unit/policy_helpers.h"
#include "policy/policy.h"
#include "policy/suggest.h"
#include "lib/alloc.h"

static void widen_is(const char *path, const char *home, const char *proj, const char *want)
{
	char *got = sbx_suggest_widen(path, home, proj);

	if (!want) {
		CU_ASSERT_PTR_NULL(got);
	} else {
		CU_ASSERT_STRING_EQUAL(got ? got : "(null)", want);
	}
	if ((!want) != (!got) || (want && strcmp(want, got)))
		fprintf(stderr, "widen %s: got %s, want %s\n", path, got ? got : "NULL",
			want ? want : "NULL");
	free(got);
}

SBX_TEST(suggest, widen_stops_at_the_tools_directory)
{
	const char *h = "/home/u", *p = "/home/u/src/proj";

	/* below home: the tool's directory and one more level */
	widen_is("/home/u/.cache/pip/http-v2/a/b/c", h, p, "/home/u/.cache/pip");
	widen_is("/home/u/.local/share/pnpm/store/v3/x", h, p, "/home/u/.local/share/pnpm");
	widen_is("/home/u/.npm/_cacache/index-v5/1/2", h, p, "/home/u/.npm/_cacache");
	widen_is("/home/u/.cargo/registry/index/x", h, p, "/home/u/.cargo/registry");
	widen_is("/home/u/go/pkg/mod/github.com/x/y", h, p, "/home/u/go/pkg/mod");
	/* never the home itself, nor a file no deeper than the stop */
	widen_is("/home/u/.gitconfig", h, p, NULL);
	widen_is("/home/u/.cache/pip", h, p, NULL);
	widen_is("/home/u/notes/todo.txt", h, p, NULL);
	/* elsewhere three levels */
	widen_is("/var/cache/apt/archives/x.deb", h, p, "/var/cache/apt");
	widen_is("/usr/lib/x", h, p, NULL);
	/* in the project (which is below home): one level */
	widen_is("/home/u/src/proj/build/obj/a.o", h, p, "/home/u/src/proj/build");
	widen_is("/home/u/src/proj/Makefile", h, p, NULL);
	widen_is("relative/path/x/y", h, p, NULL);
}

SBX_TEST(suggest, args_patterns)
{
	char *same[] = { "install -r requirements.txt", "install -r requirements.txt" };
	char *vary[] = { "install --no-index ./a.whl", "install --no-index ./b.whl",
			 "install --no-index ./c.whl" };
	char *none[] = { "status", "log --oneline" };
	char *partial[] = { "install foo", "installer bar" };
	char *glob[] = { "run *.py [x]" };
	char *g;

	g = sbx_suggest_args(same, 2);
	CU_ASSERT_STRING_EQUAL(g, "install -r requirements.txt");
	free(g);
	g = sbx_suggest_args(vary, 3);
	CU_ASSERT_STRING_EQUAL(g, "install --no-index *");
	free(g);
	CU_ASSERT_PTR_NULL(sbx_suggest_args(none, 2));
	/* a common prefix that is not a whole word is no pattern */
	CU_ASSERT_PTR_NULL(sbx_suggest_args(partial, 2));
	/* a glob byte in an argument matches itself only */
	g = sbx_suggest_args(glob, 1);
	CU_ASSERT_STRING_EQUAL(g, "run \\*.py \\[x\\]");
	free(g);
}

/* a scratch home and project with a project policy that asks every read in the home */
struct fx {
	char *home, *proj, *policy;
	struct sbx_policy_env env;
};

static void fx_init(struct fx *f)
{
	pt_dirs(sbx_unit_tmpdir(), &f->home, &f->proj);
	f->policy = pt_path("%s/policy.yaml", f->proj);
	pt_write(f->policy, "version: 1\nextends: agent-default\nfiles:\n  rules:\n"
		 "    - path: ~/\n      access: read\n      verdict: ask\n      reason: the home is asked\n");
	pt_env(&f->env, f->home, f->proj);
}

static void fx_free(struct fx *f)
{
	free(f->home);
	free(f->proj);
	free(f->policy);
}

static struct sbx_seen file_seen(int acc, const char *path, const char *who)
{
	return (struct sbx_seen){ .kind = SBX_SEEN_FILE, .access = acc, .path = path, .count = 1,
				  .who = who };
}

static char *suggest(struct fx *f, const struct sbx_seen *v, size_t n, struct sbx_suggestion *out)
{
	struct sbx_suggest_in in = { .env = &f->env, .base = f->policy };
	struct sbx_diags d = { 0 };
	int rc = sbx_suggest(v, n, &in, out, &d);

	if (rc)
		sbx_diags_print(&d, stderr);
	sbx_diags_free(&d);
	CU_ASSERT_EQUAL(rc, 0);
	return rc ? NULL : out->yaml;
}

/* a line of the patch that is not a comment contains s (whole: is s, indentation aside) */
static bool rule_line(const char *yaml, const char *s, bool whole)
{
	const char *l = yaml;

	while (l && *l) {
		const char *e = strchr(l, '\n');
		size_t n = e ? (size_t)(e - l) : strlen(l);
		char *line = strndup(l, n);
		const char *t = line + strspn(line, " ");
		bool hit = *t != '#' && (whole ? !strcmp(t, s) : strstr(line, s) != NULL);

		free(line);
		if (hit)
			return true;
		l = e ? e + 1 : NULL;
	}
	return false;
}

static bool rule_has(const char *yaml, const char *s)
{
	return rule_line(yaml, s, false);
}

/* decide the patch as a session would, and compare */
static int patch_verdict(struct fx *f, const char *yaml, const char *path, enum sbx_access a)
{
	char *file = pt_path("%s/patch.yaml", f->proj);
	struct sbx_diags d = { 0 };
	struct sbx_compiled c;
	struct sbx_policy *p;
	struct sbx_decision dec = { 0 };

	pt_write(file, yaml);
	p = sbx_policy_load_file(file, &f->env, &d);
	CU_ASSERT_PTR_NOT_NULL_FATAL(p);
	CU_ASSERT_EQUAL_FATAL(sbx_policy_compile(p, 1, &c, &d), 0);
	CU_ASSERT_EQUAL(d.errors, 0);
	sbx_decide_path(&c, path, a, &dec);
	sbx_compiled_free(&c);
	sbx_policy_free(p);
	sbx_diags_free(&d);
	free(file);
	return dec.verdict;
}

SBX_TEST(suggest, cache_dirs_and_credentials_left_out)
{
	struct fx f;
	struct sbx_suggestion out;
	char *p[8], *dotdot;
	const char *yaml;

	fx_init(&f);
	p[0] = pt_path("%s/.cache/pip/http-v2/a/1", f.home);
	p[1] = pt_path("%s/.cache/pip/http-v2/b/2", f.home);
	p[2] = pt_path("%s/.cache/pip/wheels/c/3.whl", f.home);
	p[3] = pt_path("%s/.npm/_cacache/index-v5/x", f.home);
	p[4] = pt_path("%s/.npm/_cacache/content-v2/y", f.home);
	p[5] = pt_path("%s/.ssh/id_ed25519", f.home);
	p[6] = pt_path("%s/.aws/credentials", f.home);
	p[7] = pt_path("%s/.gitconfig", f.home);
	dotdot = pt_path("%s/.cache/pip/../../.config/x", f.home);
	{
		struct sbx_seen v[] = {
			file_seen(SBX_ACC_READ, p[0], "pip"), file_seen(SBX_ACC_READ, p[1], "pip"),
			file_seen(SBX_ACC_READ, p[2], "pip"), file_seen(SBX_ACC_READ, p[3], "npm"),
			file_seen(SBX_ACC_READ, p[4], "npm"), file_seen(SBX_ACC_READ, p[5], "cat"),
			file_seen(SBX_ACC_READ, p[6], "aws"), file_seen(SBX_ACC_READ, p[7], "git"),
			/* agent-default denies this write: a cache that runs later */
			file_seen(SBX_ACC_WRITE, p[0], "pip"),
			file_seen(SBX_ACC_READ, dotdot, "cat"),
		};

		yaml = suggest(&f, v, sizeof(v) / sizeof(v[0]), &out);
	}
	CU_ASSERT_PTR_NOT_NULL_FATAL(yaml);
	CU_ASSERT_TRUE(rule_has(yaml, "- path: ~/.cache/pip/"));
	CU_ASSERT_TRUE(rule_has(yaml, "- path: ~/.npm/_cacache/"));
	CU_ASSERT_TRUE(rule_has(yaml, "- path: ~/.gitconfig"));
	CU_ASSERT_TRUE(strstr(yaml, "# 3 events, 3 paths below (pip)") != NULL);
	CU_ASSERT_FALSE(rule_has(yaml, ".ssh"));
	CU_ASSERT_FALSE(rule_has(yaml, ".aws"));
	CU_ASSERT_FALSE(rule_has(yaml, "access: write"));
	/* listed apart, with the reason */
	CU_ASSERT_TRUE(strstr(yaml, "#   read ~/.ssh/id_ed25519 (1 event, cat)") != NULL);
	CU_ASSERT_TRUE(strstr(yaml, "agent-default rule \"~/.ssh/\"") != NULL);
	CU_ASSERT_TRUE(strstr(yaml, "#   read ~/.aws/credentials") != NULL);
	CU_ASSERT_TRUE(strstr(yaml, "#   write ~/.cache/pip/http-v2/a/1") != NULL);
	CU_ASSERT_EQUAL(out.rules, 3);
	CU_ASSERT_EQUAL(out.covered, 6);
	CU_ASSERT_EQUAL(out.protected_n, 3);
	/* a path the kernel would not report (..) is named by no rule */
	CU_ASSERT_EQUAL(out.unexpressible, 1);
	CU_ASSERT_FALSE(rule_has(yaml, ".."));
	/* the patch decides as promised */
	CU_ASSERT_EQUAL(patch_verdict(&f, yaml, p[0], SBX_ACC_READ), SBX_V_ALLOW);
	CU_ASSERT_EQUAL(patch_verdict(&f, yaml, p[3], SBX_ACC_READ), SBX_V_ALLOW);
	CU_ASSERT_EQUAL(patch_verdict(&f, yaml, p[5], SBX_ACC_READ), SBX_V_DENY);
	CU_ASSERT_EQUAL(patch_verdict(&f, yaml, p[6], SBX_ACC_READ), SBX_V_ASK);
	CU_ASSERT_EQUAL(patch_verdict(&f, yaml, p[0], SBX_ACC_WRITE), SBX_V_DENY);
	sbx_suggestion_free(&out);
	for (size_t i = 0; i < 8; i++)
		free(p[i]);
	free(dotdot);
	fx_free(&f);
}

SBX_TEST(suggest, never_widens_past_a_protected_path)
{
	struct fx f;
	struct sbx_suggestion out;
	char *a, *b, *reg;
	const char *yaml;

	fx_init(&f);
	/* ~/.config/helm would hold ~/.config/helm/registry/, which agent-default asks */
	a = pt_path("%s/.config/helm/repository/cache/index.yaml", f.home);
	b = pt_path("%s/.config/helm/plugins/x/plugin.yaml", f.home);
	reg = pt_path("%s/.config/helm/registry/config.json", f.home);
	{
		struct sbx_seen v[] = { file_seen(SBX_ACC_READ, a, "helm"),
					file_seen(SBX_ACC_READ, b, "helm") };

		yaml = suggest(&f, v, 2, &out);
	}
	CU_ASSERT_PTR_NOT_NULL_FATAL(yaml);
	CU_ASSERT_FALSE(rule_line(yaml, "- path: ~/.config/helm/", true));
	CU_ASSERT_FALSE(rule_line(yaml, "- path: ~/.config/", true));
	CU_ASSERT_TRUE(rule_has(yaml, "- path: ~/.config/helm/repository/cache/index.yaml"));
	CU_ASSERT_TRUE(rule_has(yaml, "- path: ~/.config/helm/plugins/x/plugin.yaml"));
	CU_ASSERT_EQUAL(patch_verdict(&f, yaml, a, SBX_ACC_READ), SBX_V_ALLOW);
	CU_ASSERT_EQUAL(patch_verdict(&f, yaml, reg, SBX_ACC_READ), SBX_V_ASK);
	sbx_suggestion_free(&out);
	free(a);
	free(b);
	free(reg);
	fx_free(&f);
}

SBX_TEST(suggest, hosts_not_addresses_and_the_order_does_not_matter)
{
	struct fx f;
	struct sbx_suggestion o1, o2;
	struct sbx_seen v[6] = { 0 };
	const char *y1, *y2;
	char *c1, *c2;

	fx_init(&f);
	for (int i = 0; i < 3; i++) {
		static const char *const names[] = { "a.cdn.example.org", "b.cdn.example.org",
						     "c.cdn.example.org" };

		v[i] = (struct sbx_seen){ .kind = SBX_SEEN_NET, .family = AF_INET, .port = 443,
					  .host = names[i], .count = 2, .who = "npm" };
		v[i].addr[0] = 198;
		v[i].addr[1] = 51;
		v[i].addr[2] = 100;
		v[i].addr[3] = (uint8_t)(10 + i);
	}
	/* two addresses of one name: one host rule */
	v[3] = (struct sbx_seen){ .kind = SBX_SEEN_NET, .family = AF_INET, .port = 22,
				  .addr = { 10, 20, 0, 7 }, .host = "git.internal.example", .count = 1 };
	v[4] = (struct sbx_seen){ .kind = SBX_SEEN_NET, .family = AF_INET, .port = 22,
				  .addr = { 10, 20, 0, 8 }, .host = "git.internal.example", .count = 1 };
	/* cloud metadata: never */
	v[5] = (struct sbx_seen){ .kind = SBX_SEEN_NET, .family = AF_INET, .port = 80,
				  .addr = { 169, 254, 169, 254 }, .count = 1 };
	y1 = suggest(&f, v, 6, &o1);
	{
		struct sbx_seen r[6] = { v[5], v[3], v[1], v[4], v[0], v[2] };

		y2 = suggest(&f, r, 6, &o2);
	}
	CU_ASSERT_PTR_NOT_NULL_FATAL(y1);
	CU_ASSERT_PTR_NOT_NULL_FATAL(y2);
	CU_ASSERT_TRUE(rule_has(y1, "host: '*.cdn.example.org'"));
	CU_ASSERT_TRUE(rule_has(y1, "host: git.internal.example"));
	CU_ASSERT_TRUE(rule_has(y1, "port: 22"));
	CU_ASSERT_FALSE(rule_has(y1, "10.20.0.7"));
	CU_ASSERT_FALSE(rule_has(y1, "169.254"));
	CU_ASSERT_TRUE(strstr(y1, "#   connect 169.254.169.254 port 80") != NULL);
	/* the same patch whatever order the events came in (the header aside) */
	c1 = strstr(y1, "version:");
	c2 = strstr(y2, "version:");
	CU_ASSERT_TRUE(c1 && c2 && !strcmp(c1, c2));
	sbx_suggestion_free(&o1);
	sbx_suggestion_free(&o2);
	fx_free(&f);
}

SBX_TEST(suggest, commands_with_varying_args_become_a_glob)
{
	struct fx f;
	struct sbx_suggestion out;
	char *a1[] = { "make", "deploy", "ENV=a" }, *a2[] = { "make", "deploy", "ENV=b" };
	char *a3[] = { "sudo", "apt-get", "install", "x" };
	struct sbx_seen v[3] = {
		{ .kind = SBX_SEEN_COMMAND, .argv = a1, .argc = 3, .count = 1 },
		{ .kind = SBX_SEEN_COMMAND, .argv = a2, .argc = 3, .count = 1 },
		{ .kind = SBX_SEEN_COMMAND, .argv = a3, .argc = 4, .count = 1 },
	};
	const char *yaml;
	char *y;

	fx_init(&f);
	y = pt_path("%s/cmd.yaml", f.proj);
	pt_write(y, "version: 1\nextends: agent-default\ncommands:\n  default: ask\n");
	free(f.policy);
	f.policy = y;
	yaml = suggest(&f, v, 3, &out);
	CU_ASSERT_PTR_NOT_NULL_FATAL(yaml);
	CU_ASSERT_TRUE(rule_has(yaml, "command: make"));
	CU_ASSERT_TRUE(rule_has(yaml, "args: deploy *"));
	/* sudo is agent-default's ask: listed, never suggested */
	CU_ASSERT_FALSE(rule_has(yaml, "sudo"));
	CU_ASSERT_TRUE(strstr(yaml, "#   run sudo apt-get install x") != NULL);
	sbx_suggestion_free(&out);
	fx_free(&f);
}
