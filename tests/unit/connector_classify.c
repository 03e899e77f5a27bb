// SPDX-License-Identifier: GPL-2.0
/*
 * The shell classifier against the shipped agent-default policy (plus a
 * test rule), in a scratch project under a scratch $HOME. Each line is a
 * command and the verdict the hook must reach for it. Network cases use
 * address literals and a name in .invalid, so no test depends on DNS.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "tests/unit/connector_helpers.h"
#include "tests/unit/unit.h"
#include "user/connector/conn_policy.h"
#include "user/connector/classify/classify.h"
#include "user/connector/shell/shell.h"

#define A SBX_V_ALLOW
#define K SBX_V_ASK
#define D SBX_V_DENY

static const char *const extra =
	"commands:\n"
	"  rules:\n"
	"    - command: apt-get\n"
	"      verdict: ask\n"
	"      reason: installs system packages (test rule)\n";

struct ccase {
	const char *cmd;
	uint8_t want;
	const char *reason;	/* substring of the reason, or NULL */
};

static const struct ccase cases[] = {
	{ "ls -la", A, NULL },
	{ "cat README.md", A, NULL },
	{ "", A, NULL },
	{ "cat ~/.ssh/id_rsa", D, "SSH private keys" },
	{ "cat $HOME/.ssh/id_ed25519", D, NULL },
	{ "F=~/.ssh/id_rsa; cat \"$F\"", D, NULL },
	{ "head -n 5 ~/.aws/credentials", K, NULL },
	{ "tail -f /var/log/syslog", A, NULL },
	{ "grep -r password ~/.ssh", D, NULL },
	{ "grep -e foo ~/.netrc", K, "plaintext passwords" },
	{ "grep ~/.ssh/id_rsa notes.txt", A, NULL },	/* a pattern, not a file */
	{ "rg TODO src", A, NULL },
	{ "cp ~/.ssh/id_rsa /tmp/x", D, NULL },
	{ "cp a.txt b.txt", A, NULL },
	{ "cp a.txt /etc/x", D, NULL },
	{ "mv notes.txt CLAUDE.md", K, "instruction files" },
	{ "echo hi > CLAUDE.md", K, NULL },
	{ "echo hi >> ~/.bashrc", D, "shell startup" },
	{ "echo hi > /tmp/out.txt", A, NULL },
	{ "echo hi 2>/dev/null", A, NULL },
	{ "cat < ~/.ssh/id_rsa", D, NULL },
	{ "tee -a ~/.profile < x", D, NULL },
	{ "touch newfile", A, NULL },
	{ "chmod +x ~/.local/bin/tool", D, "PATH" },
	{ "mkdir -p build/out", A, NULL },
	{ "ln -s /etc/passwd ~/bin/x", D, NULL },
	{ "rm -rf build", A, NULL },
	{ "rm -rf /", D, "rm -r of /" },
	{ "rm -rf ~", D, NULL },
	{ "rm -fr ~/*", D, NULL },
	{ "rm -rf /tmp/scratch", K, "outside the project" },
	{ "rm file.txt", A, NULL },
	/* sudo, doas and pkexec go to a person (agent-default asks them) */
	{ "sudo id", K, "privileged commands" },
	{ "su -c id", D, "su opens a shell" },
	{ "doas id", K, NULL },
	{ "sudo -u bob cat /etc/shadow", K, NULL },
	{ "/usr/bin/sudo id", K, NULL },
	{ "exec sudo id", K, NULL },
	{ "time sudo id", K, NULL },
	{ "ls | sudo tee /etc/hosts", D, NULL },	/* tee writes /etc/hosts: a files deny */
	{ "apt-get install -y jq", K, "test rule" },
	{ "env FOO=1 apt-get update", K, NULL },
	{ "nice -n 5 timeout 10 apt-get update", K, NULL },
	{ "stdbuf -oL nohup apt-get update", K, NULL },
	{ "xargs -0 apt-get install < list", K, NULL },
	{ "sh -c 'cat ~/.ssh/id_rsa'", D, NULL },
	{ "bash -lc \"echo ok; sudo id\"", K, NULL },
	{ "sh -c 'sh -c \"cat ~/.aws/config\"'", K, NULL },
	{ "echo $(cat ~/.ssh/id_rsa)", D, NULL },
	{ "echo `cat ~/.netrc`", K, NULL },
	{ "diff <(cat ~/.ssh/known_hosts) x", A, NULL },
	{ "cat ~/.ssh/known_hosts", A, NULL },
	{ "(cd ~/.ssh && cat id_rsa)", D, NULL },
	{ "cd ~/.ssh; cat id_rsa", D, NULL },
	{ "cd /tmp && rm -rf x", K, "outside the project" },
	{ "(cd /tmp); rm -rf x", A, NULL },
	{ "eval \"$CMD\"", K, "could not analyse" },
	{ "$EDITOR file", K, "could not analyse" },
	{ "cat $UNKNOWN", K, "could not analyse" },
	{ "echo 'unterminated", K, "could not analyse" },
	{ "case x in x) ls;; esac", K, "could not analyse" },
	{ "cat <<EOF\n$(id)\nEOF", K, "could not analyse" },
	{ "find . -name '*.o' -delete", A, NULL },
	{ "find ~/.ssh -type f -exec cat {} \\;", D, NULL },
	{ "find /tmp -name x | xargs rm", K, "could not analyse" },
	{ "curl http://127.0.0.1:8080/health", A, NULL },
	{ "curl -s http://169.254.169.254/latest/meta-data/", D, "metadata" },
	{ "wget -q -O- http://10.1.2.3/x", K, "private networks" },
	{ "curl https://nonexistent.invalid/x", K, "cannot be resolved" },
	{ "curl -o ~/.bashrc http://127.0.0.1/x", D, NULL },
	{ "curl -d @.env http://127.0.0.1/x", K, ".env" },
	{ "curl -x http://169.254.169.254:80 http://127.0.0.1/", D, NULL },
	{ "nc 127.0.0.1 2375", K, "Docker" },
	{ "nc -l 8080", A, NULL },
	{ "ssh 10.0.0.5", K, NULL },
	{ "ssh -p 2222 user@127.0.0.1 ls", A, NULL },
	{ "scp ~/.ssh/id_rsa 127.0.0.1:/tmp/", D, NULL },
	{ "git status", A, NULL },
	{ "git push --force origin main", K, NULL },
	{ "git push -f", K, NULL },
	{ "git push origin +main", K, NULL },
	{ "git push --force-with-lease", K, NULL },
	{ "git push origin topic-f", A, NULL },
	{ "git clone http://127.0.0.1:9/repo.git", A, NULL },
	{ "git clone git@10.9.8.7:org/repo.git", K, NULL },
	{ "git -C /tmp/other status", A, NULL },
	{ "python3 script.py", A, NULL },
	{ "python3 -c 'print(1)'", K, "hooks only" },	/* opaque: see connector_oneclass */
	{ "source ~/.aws/credentials", K, NULL },
	{ ". ~/.ssh/environment", D, NULL },
	{ "command -v sudo", A, NULL },
	{ "cat <<'EOF' > ~/.ssh/authorized_keys\nkey\nEOF", D, NULL },
	{ "sed -i s/a/b/ ~/.bashrc", D, NULL },
	{ "sed -n 1p ~/.bashrc", A, NULL },
	{ "awk '{print}' ~/.aws/credentials", K, NULL },
	{ "base64 ~/.ssh/id_rsa", D, NULL },
	{ "openssl rsa -in server.key", K, "private keys" },
	{ "xxd secret.pem", K, NULL },
	{ "PATH=/tmp:$PATH; ls", A, NULL },
	{ "[[ -f ~/.ssh/id_rsa ]] && echo yes", A, NULL },
	{ "if [ -f x ]; then cat ~/.ssh/id_rsa; fi", D, NULL },
	{ "for f in ~/.ssh/*; do echo $f; done", A, NULL },
	{ "for f in *; do cat $f; done", K, "could not analyse" },
	{ "dd if=~/.ssh/id_rsa of=key.bak", D, NULL },
	{ "echo ok > .sandbox/policy.yaml", D, ".sandbox" },
};

static const char *vname(uint8_t v)
{
	return v == A ? "allow" : v == K ? "ask" : v == D ? "deny" : v == SBX_V_AUDIT ? "audit" : "?";
}

SBX_TEST(connector_classify, command_table)
{
	struct tc_env e;
	struct sbx_conn_policy *cp = NULL;
	char *err = NULL, *old_home = getenv("HOME") ? strdup(getenv("HOME")) : NULL;
	size_t bad = 0;

	tc_setup(&e, extra);
	setenv("HOME", e.home, 1);
	if (sbx_conn_policy_load(e.project, &cp, &err) < 0) {
		fprintf(stderr, "policy: %s\n", err);
		CU_FAIL("the test policy does not load");
		goto out;
	}
	CU_ASSERT_TRUE(sizeof(cases) / sizeof(cases[0]) >= 60);
	for (size_t k = 0; k < sizeof(cases) / sizeof(cases[0]); k++) {
		struct sbx_conn_verdict v;

		sbx_cv_init(&v);
		sbx_sh_classify(cp, cases[k].cmd, e.project, &v);
		if (v.verdict != cases[k].want ||
		    (cases[k].reason && (!v.reason || !strstr(v.reason, cases[k].reason)))) {
			fprintf(stderr, "classify %zu: %s\n  want %s%s%s, got %s: %s\n", k,
				cases[k].cmd, vname(cases[k].want),
				cases[k].reason ? " with " : "", cases[k].reason ? cases[k].reason : "",
				vname(v.verdict), v.reason ? v.reason : "(no reason)");
			bad++;
		}
		sbx_cv_clear(&v);
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

/* Without a policy only the built-in rules and the parser decide. */
SBX_TEST(connector_classify, builtin_without_policy)
{
	struct sbx_conn_verdict v;

	sbx_cv_init(&v);
	sbx_sh_classify(NULL, "rm -rf /", "/x", &v);
	CU_ASSERT_EQUAL(v.verdict, D);
	sbx_sh_classify(NULL, "git push -f", "/x", &v);
	CU_ASSERT_EQUAL(v.verdict, K);
	sbx_sh_classify(NULL, "echo $(", "/x", &v);
	CU_ASSERT_EQUAL(v.verdict, K);
	sbx_sh_classify(NULL, "ls", "/x", &v);
	CU_ASSERT_EQUAL(v.verdict, A);
	sbx_cv_clear(&v);
}

SBX_TEST(connector_classify, parse_url)
{
	char *h = NULL;
	int port = 0;

	CU_ASSERT_EQUAL(sbx_conn_parse_url("https://user:pw@Example.com:8443/a?b", 80, &h, &port), 0);
	CU_ASSERT_STRING_EQUAL(h, "Example.com");
	CU_ASSERT_EQUAL(port, 8443);
	free(h);
	CU_ASSERT_EQUAL(sbx_conn_parse_url("http://[::1]/x", 0, &h, &port), 0);
	CU_ASSERT_STRING_EQUAL(h, "::1");
	CU_ASSERT_EQUAL(port, 80);
	free(h);
	CU_ASSERT_EQUAL(sbx_conn_parse_url("example.org", 443, &h, &port), 0);
	CU_ASSERT_STRING_EQUAL(h, "example.org");
	CU_ASSERT_EQUAL(port, 443);
	free(h);
	CU_ASSERT_EQUAL(sbx_conn_parse_url("ssh://git@host:2222/r", 0, &h, &port), 0);
	CU_ASSERT_EQUAL(port, 2222);
	free(h);
	CU_ASSERT_EQUAL(sbx_conn_parse_url("http://", 80, &h, &port), -EINVAL);
	CU_ASSERT_EQUAL(sbx_conn_parse_url("http://a b/", 80, &h, &port), -EINVAL);
	CU_ASSERT_EQUAL(sbx_conn_parse_url("http://h:99999/", 80, &h, &port), -EINVAL);
	CU_ASSERT_EQUAL(sbx_conn_parse_url("file:///etc/passwd", 80, &h, &port), -EINVAL);
}
