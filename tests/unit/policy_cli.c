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

char *pt_path(const char *fmt, ...);
void pt_mkdirs(const char *path);
int pt_write(const char *path, const char *text);
void pt_dirs(const char *tmp, char **home, char **proj);

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

SBX_TEST(policy_cli, check_good_and_shipped)
{
	struct cli c;
	char *out, *args, *want;

	if (!cli_start(&c))
		SBX_SKIP(BIN_PATH " not built (make " BIN_PATH ")");
	args = pt_path("check %s %s", c.pol, c.opts);
	CU_ASSERT_EQUAL(run(args, true, &out), 0);
	want = pt_path("%s: ok, 4 rules", c.pol);
	CU_ASSERT(has_line(out, want));
	free(out);
	free(args);
	free(want);
	args = pt_path("check policy/shipped/agent-default.yaml %s", c.opts);
	CU_ASSERT_EQUAL(run(args, false, &out), 0);
	CU_ASSERT_PTR_NOT_NULL(strstr(out, "policy/shipped/agent-default.yaml: ok, "));
	free(out);
	free(args);
	cli_end(&c);
}

SBX_TEST(policy_cli, check_bad_reports_position)
{
	struct cli c;
	char *out, *args;

	if (!cli_start(&c))
		SBX_SKIP(BIN_PATH " not built (make " BIN_PATH ")");
	args = pt_path("check tests/unit/data/policy/bad/bad-verdict.yaml %s", c.opts);
	CU_ASSERT_EQUAL(run(args, false, &out), 1);
	CU_ASSERT(has_line(out, "tests/unit/data/policy/bad/bad-verdict.yaml:7:16: error: "
			   "files.rules[0].verdict: unknown verdict 'block': use allow, deny, ask or audit"));
	CU_ASSERT_PTR_NULL(strstr(out, ": ok,"));
	free(out);
	free(args);
	args = pt_path("check %s/missing.yaml %s", c.proj, c.opts);
	CU_ASSERT_EQUAL(run(args, false, &out), 1);
	CU_ASSERT_PTR_NOT_NULL(strstr(out, "missing.yaml: error: cannot read: No such file"));
	free(out);
	free(args);
	cli_end(&c);
}

SBX_TEST(policy_cli, explain_path)
{
	struct cli c;
	char *out, *args, *want;

	if (!cli_start(&c))
		SBX_SKIP(BIN_PATH " not built (make " BIN_PATH ")");
	args = pt_path("explain %s %s %s/.ssh/id_rsa", c.pol, c.opts, c.home);
	CU_ASSERT_EQUAL(run(args, false, &out), 0);
	want = pt_path("read  deny  by rule #5 \"~/.ssh/\" at %s:6: ssh keys", c.pol);
	CU_ASSERT(has_line(out, want));
	free(want);
	want = pt_path("exec  deny  by rule #5 \"~/.ssh/\" at %s:6: ssh keys", c.pol);
	CU_ASSERT(has_line(out, want));
	free(want);
	free(out);
	free(args);
	args = pt_path("explain %s %s %s/src/main.c", c.pol, c.opts, c.proj);
	CU_ASSERT_EQUAL(run(args, false, &out), 0);
	want = pt_path("write allow by rule #4 \"${PROJECT}\" at %s:9: workspace", c.pol);
	CU_ASSERT(has_line(out, want));
	free(want);
	want = pt_path("read  allow by default (files.default.read at %s:3): read-only outside", c.pol);
	CU_ASSERT(has_line(out, want));
	free(want);
	free(out);
	free(args);
	args = pt_path("explain %s %s %s/.sandbox/queue", c.pol, c.opts, c.proj);
	CU_ASSERT_EQUAL(run(args, false, &out), 0);
	CU_ASSERT(has_line(out, "write deny  by built-in sandbox-dir: .sandbox directories "
			   "(policy, queue, audit log) are never writable"));
	free(out);
	free(args);
	args = pt_path("explain %s %s %s", c.pol, c.opts, c.pol);
	CU_ASSERT_EQUAL(run(args, false, &out), 0);
	CU_ASSERT(has_line(out, "write deny  by built-in protected: the policy files of a session "
			   "are never writable"));
	free(out);
	free(args);
	cli_end(&c);
}

SBX_TEST(policy_cli, explain_net_and_command)
{
	struct cli c;
	char *out, *args, *want;

	if (!cli_start(&c))
		SBX_SKIP(BIN_PATH " not built (make " BIN_PATH ")");
	args = pt_path("explain %s %s 10.1.2.3:443", c.pol, c.opts);
	CU_ASSERT_EQUAL(run(args, false, &out), 0);
	want = pt_path("10.1.2.3 port 443/tcp deny  by rule #7 \"10.1.2.3 port 443 tcp\" at %s:16: "
		       "blocked host", c.pol);
	CU_ASSERT(has_line(out, want));
	free(want);
	want = pt_path("10.1.2.3 port 443/udp ask   by default (network.default at %s:14)", c.pol);
	CU_ASSERT(has_line(out, want));
	free(want);
	free(out);
	free(args);
	args = pt_path("explain %s %s '[::ffff:10.1.2.3]:443'", c.pol, c.opts);
	CU_ASSERT_EQUAL(run(args, false, &out), 0);
	CU_ASSERT_PTR_NOT_NULL(strstr(out, "[::ffff:10.1.2.3] port 443/tcp deny  by rule #7"));
	free(out);
	free(args);
	args = pt_path("explain %s %s -- git push origin --force", c.pol, c.opts);
	CU_ASSERT_EQUAL(run(args, false, &out), 0);
	/* the hook's classifier: the commands rule, and the built-in force-push rule */
	CU_ASSERT(has_line(out, "verdict: ask (hooks only)"));
	CU_ASSERT_PTR_NOT_NULL(strstr(out, "git push origin --force: a command line"));
	CU_ASSERT_PTR_NOT_NULL(strstr(out, "reason: "));
	free(out);
	free(args);
	cli_end(&c);
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
	struct cli c;
	char *out, *args;
	static const char *const bad[] = {
		"", "frobnicate x", "check", "check --bogus x", "explain x", "compile x",
		"check a b", "explain x --project", "check x --policy-id 3", "explain x --",
	};

	if (!cli_start(&c))
		SBX_SKIP(BIN_PATH " not built (make " BIN_PATH ")");
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		args = pt_path("%s", bad[i]);
		CU_ASSERT_EQUAL(run(args, true, &out), 2);
		CU_ASSERT_PTR_NOT_NULL(strstr(out, "usage: bpfsbx policy"));
		free(out);
		free(args);
	}
	cli_end(&c);
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
