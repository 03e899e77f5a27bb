// SPDX-License-Identifier: GPL-2.0
/*
 * One classifier: for every command line in the table, the Claude Code
 * hook (sbx_hook_handle, as `bpfsbx hook pre-tool-use` runs it) and
 * `bpfsbx policy explain -- CMD` (the CLI binary) reach the same verdict,
 * and it is the one the table wants. The table is also the list of
 * evasions found in the static classifier, each closed: patterns in a
 * directory component, find -exec, git -c, awk and sed program texts,
 * programs with no spec. Opaque constructs (eval, python -c, sh reading
 * a pipe) are asked with hooks only and left to the kernel when it
 * enforces: the `kernel` column.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <jansson.h>
#include "lib/alloc.h"
#include "tests/unit/connector_helpers.h"
#include "tests/unit/unit.h"
#include "user/connector/claude_hook.h"
#include "user/connector/classify/classify.h"
#include "user/connector/conn_policy.h"

#define A SBX_V_ALLOW
#define K SBX_V_ASK
#define D SBX_V_DENY

struct ocase {
	const char *cmd;
	uint8_t hooks;		/* no kernel enforcement: the hook is all there is */
	uint8_t kernel;		/* in a kernel-confined session */
};

static const struct ocase cases[] = {
	/* the first example: explain used to say allow */
	{ "cat ~/.ssh/id_rsa", D, D },
	{ "cat README.md", A, A },
	{ "ls -la", A, A },
	/* a pattern in a directory component, decided on its text */
	{ "cat ~/.[s]sh/id_rsa", D, D },
	{ "cat ~/.*/id_rsa", D, D },
	{ "cat ~/{.ssh,x}/id_rsa", D, D },
	{ "cat ~/.s?h/id_rsa", D, D },
	{ "cat ~/.a*/credentials", K, K },
	{ "cat src/*.c", A, A },
	{ "cat ~/.[s]sh/known_hosts", D, D },	/* the pattern could be any file there */
	{ "echo x > ~/.bash[r]c", D, D },
	/* find -exec: {} is any file below the start path */
	{ "find ~ -name id_rsa -exec cat {} \\;", D, D },
	{ "find ~ -exec cat {} +", D, D },
	{ "find . -name '*.c' -exec wc -l {} +", A, A },
	/* any file below ~/.aws may be named .Xauthority, which is denied by name */
	{ "find ~/.aws -exec cat {} \\;", D, D },
	/* git -c: commands git runs */
	{ "git -c core.sshCommand='cat ~/.ssh/id_rsa' fetch", D, D },
	{ "git -c core.sshCommand='ssh -i key' fetch origin", K, K },
	{ "git -c alias.x='!cat ~/.ssh/id_rsa' x", D, D },
	{ "git -c alias.x='!sh -c id' x", A, A },
	{ "git -c alias.st=status st", A, A },
	{ "git -c user.name=me commit -m msg", A, A },
	/* awk and sed program texts */
	{ "awk 'BEGIN{while((getline l < \"/HOME/.ssh/id_rsa\")>0) print l}'", D, D },
	{ "awk 'BEGIN{getline l < f}' f=x", K, A },
	{ "awk 'BEGIN{system(\"id\")}'", K, A },
	{ "awk '{print $1}' notes.txt", A, A },
	{ "sed 'r ~/.ssh/id_rsa' notes.txt", D, D },
	{ "sed -n '1R /HOME/.aws/credentials' notes.txt", K, K },
	{ "sed 's/a/b/w ~/.bashrc' notes.txt", D, D },
	{ "sed '1e id' notes.txt", K, A },
	{ "sed -e 's/a/b/' notes.txt", A, A },
	/* programs with no spec that take paths */
	{ "tar czf out.tgz ~/.ssh", D, D },
	{ "tar -C / -czf out.tgz home/u/x", A, A },
	{ "vim -es -c 'r ~/.ssh/id_rsa' -c wq notes.txt", D, D },
	{ "vim ~/.bashrc", D, D },
	{ "zip -r out.zip ~/.aws", K, K },
	{ "gcc -I/usr/include -o hello hello.c", A, A },
	{ "make PREFIX=/usr/local install", A, A },
	{ "rsync -a ~/.ssh/ /tmp/k", D, D },
	{ "echo ~/.ssh/id_rsa", A, A },	/* a name printed, no file touched */
	/* what the classifier cannot see through */
	{ "eval \"$CMD\"", K, A },
	{ "python3 -c 'print(1)'", K, A },
	{ "python3 -c 'open(\"/HOME/.ssh/id_rsa\").read()'", D, D },
	{ "base64 -d payload | sh", K, A },
	{ "echo Y2F0 | base64 -d | bash", K, A },
	{ "node -e 'process.exit(0)'", K, A },
	{ "perl -e 'print 1'", K, A },
	{ "python3 script.py", A, A },
	/* privileged commands go to a person (issue 13), never run in the session */
	{ "sudo id", K, K },
};

static const char *vname(uint8_t v)
{
	return v == A ? "allow" : v == K ? "ask" : v == D ? "deny" : "?";
}

/* /HOME in a case stands for the scratch home directory */
static char *with_home(const char *cmd, const char *home)
{
	const char *p = strstr(cmd, "/HOME/");

	if (!p)
		return sbx_strdup(cmd);
	return sbx_asprintf("%.*s%s/%s", (int)(p - cmd), cmd, home, p + 6);
}

static uint8_t hook_verdict(struct sbx_conn_policy *cp, const char *project, const char *cmd)
{
	struct sbx_hook_opts o = { .wait_ms = 0, .dry_run = true, .project = project, .policy = cp };
	struct sbx_hook_result r = { 0 };
	json_t *in = json_pack("{s:s,s:s,s:s,s:s,s:{s:s}}", "session_id", "t-1", "cwd", project,
			       "hook_event_name", "PreToolUse", "tool_name", "Bash", "tool_input",
			       "command", cmd), *out;
	char *txt = json_dumps(in, 0);
	const char *dec, *why;
	uint8_t v = SBX_V_NONE;

	sbx_hook_handle("pre-tool-use", txt, strlen(txt), &o, &r);
	out = r.exit_code == 0 && r.out ? json_loads(r.out, 0, NULL) : NULL;
	dec = json_string_value(json_object_get(json_object_get(out, "hookSpecificOutput"),
						"permissionDecision"));
	why = json_string_value(json_object_get(json_object_get(out, "hookSpecificOutput"),
						"permissionDecisionReason"));
	if (out && !dec)
		v = A;
	else if (dec && !strcmp(dec, "deny"))
		v = why && strstr(why, "needs a person's approval") ? K : D;
	else if (dec && !strcmp(dec, "allow"))
		v = A;
	json_decref(out);
	json_decref(in);
	free(txt);
	sbx_hook_result_free(&r);
	return v;
}

static uint8_t explain_verdict(const struct tc_env *e, const char *cmd, bool kernel)
{
	char *pol = tc_path(e->project, ".sandbox/policy.yaml");
	char *const argv[] = { "bpfsbx", "policy", "explain", pol, "--project", e->project,
			       "--home", e->home, "--no-resolve", "--", (char *)cmd, NULL };
	char *out = NULL, *err = NULL, *line;
	uint8_t v = SBX_V_NONE, hooks = SBX_V_NONE;
	char envhome[600];
	const char *env[] = { envhome, NULL };

	snprintf(envhome, sizeof(envhome), "HOME=%s", e->home);
	if (tc_run(argv, env, "", 0, &out, &err) != 0)
		fprintf(stderr, "explain %s: %s\n", cmd, err ? err : "?");
	for (line = out ? strstr(out, "verdict: ") : NULL; line;
	     line = strstr(line + 1, "verdict: ")) {
		uint8_t x = !strncmp(line + 9, "allow", 5) ? A : !strncmp(line + 9, "ask", 3) ? K :
			    !strncmp(line + 9, "deny", 4) ? D : SBX_V_NONE;

		if (strstr(line, "(hooks only)") == strchr(line, '(') && hooks == SBX_V_NONE)
			hooks = x;
		else
			v = x;
	}
	free(out);
	free(err);
	free(pol);
	/* the kernel-mode line is printed only where it differs */
	return kernel && v != SBX_V_NONE ? v : hooks;
}

SBX_TEST(connector_oneclass, hook_and_explain_agree)
{
	struct tc_env e;
	struct sbx_conn_policy *cp = NULL;
	char *err = NULL, *old_home = getenv("HOME") ? strdup(getenv("HOME")) : NULL;
	size_t bad = 0;

	if (!tc_bin()) {
		free(old_home);
		SBX_SKIP("build/bpfsbx-san not built");
	}
	tc_setup(&e, NULL);
	setenv("HOME", e.home, 1);
	if (sbx_conn_policy_load(e.project, &cp, &err) < 0) {
		fprintf(stderr, "policy: %s\n", err);
		CU_FAIL("the test policy does not load");
		goto out;
	}
	CU_ASSERT_FALSE(cp->kernel_enforced);	/* unit tests run outside any session */
	for (size_t k = 0; k < sizeof(cases) / sizeof(cases[0]); k++) {
		char *cmd = with_home(cases[k].cmd, e.home);
		struct sbx_conn_verdict v;
		uint8_t hook, hooks_cli, kern, kern_cli;

		cp->kernel_enforced = false;
		hook = hook_verdict(cp, e.project, cmd);
		hooks_cli = explain_verdict(&e, cmd, false);
		cp->kernel_enforced = true;
		sbx_cv_init(&v);
		sbx_sh_classify(cp, cmd, e.project, &v);
		kern = v.verdict;
		kern_cli = explain_verdict(&e, cmd, true);
		if (hook != cases[k].hooks || hooks_cli != hook || kern != cases[k].kernel ||
		    kern_cli != kern) {
			fprintf(stderr, "case %zu: %s\n  hooks only: want %s, hook %s, explain %s\n"
				"  kernel:     want %s, classifier %s, explain %s (%s)\n", k, cmd,
				vname(cases[k].hooks), vname(hook), vname(hooks_cli),
				vname(cases[k].kernel), vname(kern), vname(kern_cli),
				v.reason ? v.reason : "");
			bad++;
		}
		sbx_cv_clear(&v);
		free(cmd);
	}
	CU_ASSERT_EQUAL(bad, 0);
out:
	if (old_home)
		setenv("HOME", old_home, 1);
	free(old_home);
	free(err);
	sbx_conn_policy_free(cp);
	tc_teardown(&e);
}
