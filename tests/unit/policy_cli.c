// SPDX-License-Identifier: GPL-2.0
/*
 * `bpfsbx policy check|explain|compile`: the sanitizer build of the CLI
 * (make build/bpfsbx-san) is run on good and bad files; exit codes and
 * output lines are checked.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include "lib/names.h"
#include "policy/policy.h"
#include "tests/unit/unit.h"
#include "tests/unit/policy_helpers.h"

#define BIN_PATH "build/bpfsbx-san"
#define BIN BIN_PATH " policy"

/* Run BIN with args (shell words); output in *out. Returns the exit status. */
static int run(const char *args, bool with_stderr, char **out)
{
	char *cmd = pt_path("%s %s %s", BIN, args, with_stderr ? "2>&1" : "2>/dev/null");
	FILE *p = popen(cmd, "r");
	size_t len = 0, cap = 4096;
	char *buf = malloc(cap);
	int st;

	free(cmd);
	if (!p || !buf) {
		free(buf);
		*out = NULL;
		return -1;
	}
	for (;;) {
		size_t n = fread(buf + len, 1, cap - len - 1, p);

		len += n;
		if (n == 0)
			break;
		if (len + 1 >= cap) {
			char *t = realloc(buf, cap * 2);

			if (!t)
				break;
			buf = t;
			cap *= 2;
		}
	}
	buf[len] = 0;
	st = pclose(p);
	*out = buf;
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static bool has_line(const char *out, const char *line)
{
	size_t n = strlen(line);

	for (const char *p = out; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL)
		if (!strncmp(p, line, n) && (p[n] == '\n' || p[n] == 0))
			return true;
	return false;
}

struct cli {
	char *home, *proj, *pol, *opts;
};

static bool cli_start(struct cli *c)
{
	if (access(BIN_PATH, X_OK))
		return false;
	pt_dirs(sbx_unit_tmpdir(), &c->home, &c->proj);
	c->pol = pt_path("%s/p.yaml", c->proj);
	c->opts = pt_path("--project %s --home %s --no-resolve", c->proj, c->home);
	pt_write(c->pol,
		 "version: 1\n"
		 "files:\n"
		 "  default: {read: allow, write: deny, exec: allow}\n"
		 "  default_reason: read-only outside\n"
		 "  rules:\n"
		 "    - path: ~/.ssh/\n"
		 "      verdict: deny\n"
		 "      reason: ssh keys\n"
		 "    - path: ${PROJECT}\n"
		 "      access: write\n"
		 "      verdict: allow\n"
		 "      reason: workspace\n"
		 "network:\n"
		 "  default: ask\n"
		 "  rules:\n"
		 "    - cidr: 10.1.2.3\n"
		 "      port: 443\n"
		 "      protocol: tcp\n"
		 "      verdict: deny\n"
		 "      reason: blocked host\n"
		 "commands:\n"
		 "  default: allow\n"
		 "  rules:\n"
		 "    - command: git\n"
		 "      args: \"push*--force*\"\n"
		 "      verdict: ask\n"
		 "      reason: force push\n");
	return true;
}

static void cli_end(struct cli *c)
{
	free(c->home);
	free(c->proj);
	free(c->pol);
	free(c->opts);
}

/* t with @POL@, @OPTS@, @HOME@ and @PROJ@ filled in from c; malloc'd */
static char *fill(const struct cli *c, const char *t)
{
	static const char *const keys[] = { "@POL@", "@OPTS@", "@HOME@", "@PROJ@" };
	const char *vals[] = { c->pol, c->opts, c->home, c->proj };
	char *s = pt_path("%s", t), *at;

	for (size_t k = 0; k < sizeof(keys) / sizeof(keys[0]); k++)
		while ((at = strstr(s, keys[k]))) {
			char *n = pt_path("%.*s%s%s", (int)(at - s), s, vals[k],
					  at + strlen(keys[k]));

			free(s);
			s = n;
		}
	return s;
}

/*
 * One run of `bpfsbx policy ARGS` and what it must print: whole lines,
 * parts of the output, and parts it must not have (each filled in).
 */
struct cli_case {
	const char *args;
	bool with_stderr;
	int exit;
	const char *lines[2], *has[2], *lacks[1];
};

#define N_OF(a) (sizeof(a) / sizeof((a)[0]))

static void cli_check(const struct cli *c, const struct cli_case *k)
{
	char *args = fill(c, k->args), *out = NULL;
	int st = run(args, k->with_stderr, &out);
	bool ok = st == k->exit;

	CU_ASSERT_EQUAL(st, k->exit);
	for (size_t i = 0; i < N_OF(k->lines) && k->lines[i]; i++) {
		char *want = fill(c, k->lines[i]);

		ok = ok && has_line(out, want);
		CU_ASSERT(has_line(out, want));
		free(want);
	}
	for (size_t i = 0; i < N_OF(k->has) && k->has[i]; i++) {
		ok = ok && strstr(out ?: "", k->has[i]);
		CU_ASSERT_PTR_NOT_NULL(strstr(out ?: "", k->has[i]));
	}
	for (size_t i = 0; i < N_OF(k->lacks) && k->lacks[i]; i++) {
		ok = ok && !strstr(out ?: "", k->lacks[i]);
		CU_ASSERT_PTR_NULL(strstr(out ?: "", k->lacks[i]));
	}
	if (!ok)
		fprintf(stderr, "policy %s: exit %d, output:\n%s\n", args, st, out ?: "");
	free(out);
	free(args);
}

/* every case of a test, in one scratch project */
#define CLI_CASES(cases)							\
	do {									\
		struct cli c;							\
										\
		if (!cli_start(&c))						\
			SBX_SKIP(BIN_PATH " not built (make " BIN_PATH ")");	\
		for (size_t k = 0; k < N_OF(cases); k++)			\
			cli_check(&c, &(cases)[k]);				\
		cli_end(&c);							\
	} while (0)

SBX_TEST(policy_cli, check_good_and_shipped)
{
	static const struct cli_case cases[] = {
		{ "check @POL@ @OPTS@", .with_stderr = true, .lines = { "@POL@: ok, 4 rules" } },
		{ "check policy/shipped/agent-default.yaml @OPTS@",
		  .has = { "policy/shipped/agent-default.yaml: ok, " } },
	};

	CLI_CASES(cases);
}

SBX_TEST(policy_cli, check_bad_reports_position)
{
	static const struct cli_case cases[] = {
		{ "check tests/unit/data/policy/bad/bad-verdict.yaml @OPTS@", .exit = 1,
		  .lines = { "tests/unit/data/policy/bad/bad-verdict.yaml:7:16: error: "
			     "files.rules[0].verdict: unknown verdict 'block': use allow, deny, ask or audit" },
		  .lacks = { ": ok," } },
		{ "check @PROJ@/missing.yaml @OPTS@", .exit = 1,
		  .has = { "missing.yaml: error: cannot read: No such file" } },
	};

	CLI_CASES(cases);
}

SBX_TEST(policy_cli, explain_path)
{
	static const struct cli_case cases[] = {
		{ "explain @POL@ @OPTS@ @HOME@/.ssh/id_rsa",
		  .lines = { "read  deny  by rule #5 \"~/.ssh/\" at @POL@:6: ssh keys",
			     "exec  deny  by rule #5 \"~/.ssh/\" at @POL@:6: ssh keys" } },
		{ "explain @POL@ @OPTS@ @PROJ@/src/main.c",
		  .lines = { "write allow by rule #4 \"${PROJECT}\" at @POL@:9: workspace",
			     "read  allow by default (files.default.read at @POL@:3): read-only outside" } },
		{ "explain @POL@ @OPTS@ @PROJ@/.sandbox/queue",
		  .lines = { "write deny  by built-in sandbox-dir: .sandbox directories "
			     "(policy, queue, audit log) are never writable" } },
		{ "explain @POL@ @OPTS@ @POL@",
		  .lines = { "write deny  by built-in protected: the policy files of a session "
			     "are never writable" } },
	};

	CLI_CASES(cases);
}

SBX_TEST(policy_cli, explain_net_and_command)
{
	static const struct cli_case cases[] = {
		{ "explain @POL@ @OPTS@ 10.1.2.3:443",
		  .lines = { "10.1.2.3 port 443/tcp deny  by rule #7 \"10.1.2.3 port 443 tcp\" "
			     "at @POL@:16: blocked host",
			     "10.1.2.3 port 443/udp ask   by default (network.default at @POL@:14)" } },
		{ "explain @POL@ @OPTS@ '[::ffff:10.1.2.3]:443'",
		  .has = { "[::ffff:10.1.2.3] port 443/tcp deny  by rule #7" } },
		/* the hook's classifier: the commands rule, and the built-in force-push rule */
		{ "explain @POL@ @OPTS@ -- git push origin --force",
		  .lines = { "verdict: ask (hooks only)" },
		  .has = { "git push origin --force: a command line", "reason: " } },
	};

	CLI_CASES(cases);
}

SBX_TEST(policy_cli, compile_dump)
{
	struct cli c;
	char *out, *args;

	if (!cli_start(&c))
		SBX_SKIP(BIN_PATH " not built (make " BIN_PATH ")");
	args = pt_path("compile --dump %s %s --policy-id 42", c.pol, c.opts);
	CU_ASSERT_EQUAL(run(args, false, &out), 0);
	{
		char head[96];
		int n = snprintf(head, sizeof(head),
				 "# bpfsbx compiled policy (abi %d)\nhdr policy_id=42 ", SBX_ABI_VERSION);

		CU_ASSERT(!strncmp(out, head, (size_t)n));
	}
	CU_ASSERT(has_line(out, "net4 10.1.2.3/32 rules=1 # 10.1.2.3"));
	CU_ASSERT(has_line(out, "  port=443-443 proto=tcp deny#7"));
	CU_ASSERT(has_line(out, "rule #5 files deny ~/.ssh/ access=read,write,exec"));
	/* built-in rules by name, never as 4294901761... */
	CU_ASSERT_PTR_NULL(strstr(out, "#42949"));
	CU_ASSERT_PTR_NOT_NULL(strstr(out, "#built-in:"));
	free(out);
	free(args);
	cli_end(&c);
}

SBX_TEST(policy_cli, usage_errors)
{
#define USAGE(a) { a, .with_stderr = true, .exit = 2, .has = { "usage: bpfsbx policy" } }
	static const struct cli_case cases[] = {
		USAGE(""), USAGE("frobnicate x"), USAGE("check"), USAGE("check --bogus x"),
		USAGE("explain x"), USAGE("compile x"), USAGE("check a b"),
		USAGE("explain x --project"), USAGE("check x --policy-id 3"), USAGE("explain x --"),
	};
#undef USAGE

	CLI_CASES(cases);
}

/* Every built-in rule has a name of its own, and the dump prints names,
 * never the sentinel numbers (4294901761...) a person cannot read. */
SBX_TEST(policy_cli, builtin_rules_have_names)
{
	const char *seen[64] = { 0 };
	size_t n = 0;
	char buf[48];

	for (uint32_t id = SBX_RULE_SANDBOX_DIR; id < SBX_RULE_BUILTIN_END; id++) {
		const char *name = sbx_builtin_rule_name(id);

		CU_ASSERT_PTR_NOT_NULL_FATAL(name);
		CU_ASSERT_STRING_NOT_EQUAL(name, "built-in");
		for (size_t i = 0; i < n; i++)
			CU_ASSERT_STRING_NOT_EQUAL(seen[i], name);
		if (n < 64)
			seen[n++] = name;
		/* the long text starts with the name ("built-in NAME: ...") */
		if (id != SBX_RULE_GRANT)
			CU_ASSERT_PTR_NOT_NULL(strstr(sbx_builtin_rule_text(id), name));
	}
	CU_ASSERT_PTR_NULL(sbx_builtin_rule_name(7));
	CU_ASSERT_STRING_EQUAL(sbx_rule_id_label(7, buf, sizeof(buf)), "7");
	CU_ASSERT_STRING_EQUAL(sbx_rule_id_label(SBX_RULE_LISTENER_OUTSIDE, buf, sizeof(buf)),
			       "built-in:listener-outside");
}
