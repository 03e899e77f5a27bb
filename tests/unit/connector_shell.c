// SPDX-License-Identifier: GPL-2.0
/*
 * The connectors' shell parser: a command line -> the simple commands it
 * runs, with redirections and the cwd each runs in. Each case prints the
 * parse in a compact form and compares it with the expected one:
 *   commands joined by " ; ", words by ",", a run-time value marked "~"
 *   (suffix), redirections "<f", ">f", "<>f", the cwd "@dir" when it is
 *   not the starting one, "@?" when unknown, and "!" alone for a line
 *   the parser refuses to analyse.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "tests/unit/unit.h"
#include "user/connector/shell/shell.h"

#define CWD "/p/proj"
#define HOME "/home/u"

static char *summarise(const char *text)
{
	struct sbx_sh_parse p;
	char *buf = NULL;
	size_t len = 0;
	FILE *f;

	if (sbx_sh_parse(text, CWD, HOME, &p) < 0)
		return strdup("ENOMEM");
	f = open_memstream(&buf, &len);
	if (p.unanalysed) {
		fprintf(f, "!");
	} else {
		for (size_t k = 0; k < p.n; k++) {
			struct sbx_sh_cmd *c = &p.cmds[k];

			if (k)
				fprintf(f, " ; ");
			for (int a = 0; a < c->argc; a++)
				fprintf(f, "%s%s%s", a ? "," : "", c->argv[a].val,
					c->argv[a].dynamic ? "~" : "");
			for (size_t r = 0; r < c->n_redir; r++)
				fprintf(f, "%s%s%s%s", c->argc || r ? "," : "",
					c->redir[r].kind == SBX_REDIR_READ ? "<" :
					c->redir[r].kind == SBX_REDIR_WRITE ? ">" : "<>",
					c->redir[r].target.val, c->redir[r].target.dynamic ? "~" : "");
			if (!c->cwd)
				fprintf(f, "@?");
			else if (strcmp(c->cwd, CWD))
				fprintf(f, "@%s", c->cwd);
		}
	}
	fclose(f);
	sbx_sh_parse_free(&p);
	return buf;
}

struct pcase {
	const char *text;
	const char *want;
};

static const struct pcase cases[] = {
	/* words and quoting */
	{ "ls -la", "ls,-la" },
	{ "echo 'a b' \"c d\" e\\ f", "echo,a b,c d,e f" },
	{ "echo \"it's\" 'say \"hi\"'", "echo,it's,say \"hi\"" },
	{ "echo \"a\\\"b\\\\c\\$d\"", "echo,a\"b\\c$d" },
	{ "echo $'a\\tb'", "echo,a\tb" },
	{ "cat ~/.ssh/id_rsa", "cat," HOME "/.ssh/id_rsa" },
	{ "cat '~/x'", "cat,~/x" },
	{ "cat $HOME/.aws/credentials", "cat," HOME "/.aws/credentials" },
	{ "cat \"${HOME}/.netrc\"", "cat," HOME "/.netrc" },
	{ "cat $FOO", "cat,~" },
	{ "F=~/.ssh/id_rsa; cat $F", "cat," HOME "/.ssh/id_rsa" },
	{ "F=x cat $F", "cat,~" },
	{ "echo a#b # comment", "echo,a#b" },
	{ "ec\\\nho hi", "echo,hi" },
	/* lists, pipes, background */
	{ "a && b || c; d & e", "a ; b ; c ; d ; e" },
	{ "cat f | grep x |& tee out", "cat,f ; grep,x ; tee,out" },
	{ "a\nb\n\nc", "a ; b ; c" },
	/* redirections */
	{ "echo hi > out.txt", "echo,hi,>out.txt" },
	{ "echo hi >> log 2>&1", "echo,hi,>log" },
	{ "sort < in > out", "sort,<in,>out" },
	{ "cmd 2>/dev/null &>all >|clob", "cmd,>/dev/null,>all,>clob" },
	{ "cmd <>rw 3<&0 >&-", "cmd,<>rw" },
	{ "> empty", ">empty" },
	{ "cmd >& file", "cmd,>file" },
	{ "cat <<< \"$(id)\"", "id ; cat" },
	/* substitutions */
	{ "echo $(cat /etc/passwd)", "cat,/etc/passwd ; echo,~" },
	{ "echo `whoami`", "whoami ; echo,~" },
	{ "echo \"$(cat a | wc -l)\"", "cat,a ; wc,-l ; echo,~" },
	{ "diff <(sort a) >(cat)", "sort,a ; cat ; diff,/dev/fd/63,/dev/fd/63" },
	{ "x=$(cat secret); echo $x", "cat,secret ; echo,~" },
	{ "echo $((1+2))", "echo,~" },
	{ "echo ${#HOME}", "echo,~" },
	/* subshells and cwd */
	{ "(cd /tmp && rm x); rm y", "cd,/tmp ; rm,x@/tmp ; rm,y" },
	{ "cd sub && cat f", "cd,sub ; cat,f@/p/proj/sub" },
	{ "cd .. && cat f", "cd,.. ; cat,f@/p" },
	{ "cd && cat f", "cd ; cat,f@/home/u" },
	{ "cd $X && cat f", "cd,~ ; cat,f@?" },
	{ "cd - && ls", "cd,- ; ls@?" },
	{ "{ a; b; } > out", "a ; b ; >out" },
	{ "if [ -f x ]; then cat x; else echo no; fi", "[,-f,x,] ; cat,x ; echo,no" },
	{ "while read l; do echo $l; done < f", "read,l ; echo,~ ; <f" },
	{ "for f in *.c; do cat $f; done", "cat,~" },
	{ "for f in $(ls); do rm $f; done", "ls ; rm,~" },
	{ "[[ -f a && b < c ]] && cat a", "[[,-f,a,&&,b,<,c,]] ; cat,a" },
	{ "! grep -q x f", "grep,-q,x,f" },
	{ "time make", "make" },
	/* here-documents */
	{ "cat <<'EOF'\n$(rm -rf /)\nEOF\necho done", "cat ; echo,done" },
	{ "cat <<EOF > f\nhello $USER\nEOF", "cat,>f" },
	{ "cat <<-EOF\n\tx\n\tEOF\nls", "cat ; ls" },
	/* refused: never allowed */
	{ "echo 'unterminated", "!" },
	{ "echo \"unterminated", "!" },
	{ "echo $(unterminated", "!" },
	{ "echo `x", "!" },
	{ "(echo a", "!" },
	{ "echo a)", "!" },
	{ "cat <<EOF\nno end", "!" },
	{ "cat <<EOF\n$(id)\nEOF", "!" },
	{ "case $x in a) ls;; esac", "!" },
	{ "f() { rm -rf /; }; f", "!" },
	{ "function f { ls; }", "!" },
	{ "echo $(( $(id) ))", "!" },
	{ "exec {fd}>file", "!" },
	{ "echo >", "!" },
};

SBX_TEST(connector_shell, parse_table)
{
	size_t bad = 0;

	for (size_t k = 0; k < sizeof(cases) / sizeof(cases[0]); k++) {
		char *got = summarise(cases[k].text);

		if (strcmp(got, cases[k].want)) {
			fprintf(stderr, "parse %zu: %s\n  want: %s\n  got:  %s\n", k,
				cases[k].text, cases[k].want, got);
			bad++;
		}
		free(got);
	}
	CU_ASSERT_EQUAL(bad, 0);
}

SBX_TEST(connector_shell, resolve)
{
	char *r;

	r = sbx_sh_resolve("a/./b/../c", "/x/y", HOME);
	CU_ASSERT_STRING_EQUAL(r, "/x/y/a/c");
	free(r);
	r = sbx_sh_resolve("../../../..", "/x/y", HOME);
	CU_ASSERT_STRING_EQUAL(r, "/");
	free(r);
	r = sbx_sh_resolve("//etc//passwd/", "/x", HOME);
	CU_ASSERT_STRING_EQUAL(r, "/etc/passwd");
	free(r);
	CU_ASSERT_PTR_NULL(sbx_sh_resolve("rel", NULL, HOME));
	CU_ASSERT_PTR_NULL(sbx_sh_resolve("", "/x", HOME));
}

SBX_TEST(connector_shell, limits)
{
	struct sbx_sh_parse p;
	size_t n = SBX_SH_MAX_TEXT + 10;
	char *big = malloc(n + 1);

	memset(big, 'a', n);
	big[n] = 0;
	CU_ASSERT_EQUAL(sbx_sh_parse(big, CWD, HOME, &p), 0);
	CU_ASSERT_TRUE(p.unanalysed);
	sbx_sh_parse_free(&p);
	free(big);

	/* $( ) nested deeper than the limit */
	char deep[256] = "";
	for (int k = 0; k < SBX_SH_MAX_DEPTH + 2; k++)
		strcat(deep, "$(");
	strcat(deep, "id");
	for (int k = 0; k < SBX_SH_MAX_DEPTH + 2; k++)
		strcat(deep, ")");
	CU_ASSERT_EQUAL(sbx_sh_parse(deep, CWD, HOME, &p), 0);
	CU_ASSERT_TRUE(p.unanalysed);
	sbx_sh_parse_free(&p);

	/* many commands */
	char *many = malloc(SBX_SH_MAX_CMDS * 3 + 10);
	many[0] = 0;
	for (unsigned k = 0; k < SBX_SH_MAX_CMDS + 1; k++)
		strcat(many, "a;");
	CU_ASSERT_EQUAL(sbx_sh_parse(many, CWD, HOME, &p), 0);
	CU_ASSERT_TRUE(p.unanalysed);
	sbx_sh_parse_free(&p);
	free(many);
}
