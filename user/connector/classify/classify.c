// SPDX-License-Identifier: GPL-2.0
/*
 * Simple commands -> verdicts. For each command found by the parser:
 * the policy's commands section (sbx_decide_command), the executable
 * (exec access), the redirections, and what the program is known to do
 * with its arguments (readers, writers, network clients, git). Wrappers
 * (env, sudo, timeout, xargs, sh -c ...) are looked through. The verdict
 * of the line is the most restrictive part; its reason is the reason of
 * the first part that reached it.
 *
 * What it cannot know (a file name computed at run time, arguments that
 * xargs reads from stdin) is "could not analyse": ask, never allow. What
 * a program does inside (python -c, a script's own commands) is not seen
 * here; inside a session the kernel still checks every open, exec and
 * connect.
 *
 * The parts, each below the one that uses it: check.c (files, hosts,
 * patterns, the built-in verdicts), scan.c (the option scanner), args.c
 * (what an argument can name, whatever the program) and programs.c (what
 * known programs do with their arguments). Here are the wrappers and the
 * walk; the programs reach back into it only through the cls callbacks.
 */
#include <ctype.h>
#include <errno.h>
#include <glob.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include "user/connector/classify/classify.h"
#include "user/connector/shell/shell.h"
#include "lib/alloc.h"
#include "lib/clock.h"
#include "lib/fileio.h"
#include "lib/log.h"
#include "lib/text.h"
#include "user/connector/classify/args.h"
#include "user/connector/classify/check.h"
#include "user/connector/classify/programs.h"
#include "user/connector/classify/scan.h"

int sbx_sh_parse_depth(const char *text, const char *cwd, const char *home, int depth,
		       struct sbx_sh_parse *out);


/* ---- command text ---------------------------------------------------- */

static void classify_argv(struct cls *c, int argc, word_t *argv, const char *cwd,
			  int depth, bool stdin_args);

static void classify_text(struct cls *c, word_t *w, const char *cwd, int depth)
{
	struct sbx_sh_parse p = { 0 };

	if (w->dynamic) {
		cls_unanalysed(c, "sh -c with a command computed at run time");
		return;
	}
	if (sbx_sh_parse_depth(w->val, cwd, c->home, depth + 1, &p) < 0) {
		cls_unanalysed(c, "out of memory");
		return;
	}
	if (p.unanalysed)
		cls_unanalysed(c, p.why ? p.why : "could not parse");
	for (size_t k = 0; k < p.n; k++) {
		struct sbx_sh_cmd *sc = &p.cmds[k];

		for (size_t r = 0; r < sc->n_redir; r++) {
			struct sbx_sh_redir *rd = &sc->redir[r];

			if (rd->kind != SBX_REDIR_WRITE)
				cls_check_file(c, &rd->target, sc->cwd, SBX_ACC_READ);
			if (rd->kind != SBX_REDIR_READ)
				cls_check_file(c, &rd->target, sc->cwd, SBX_ACC_WRITE);
		}
		if (sc->argc)
			classify_argv(c, sc->argc, sc->argv, sc->cwd, sc->depth, false);
	}
	sbx_sh_parse_free(&p);
}

/* ---- wrappers: the command they run starts at the returned index ------- */

static int skip_opts(int argc, word_t *argv, int k, const char *short_arg,
		     const char *const *long_arg)
{
	while (k < argc) {
		const char *a = argv[k].val;

		if (argv[k].dynamic || a[0] != '-' || !a[1])
			break;
		if (!strcmp(a, "--"))
			return k + 1;
		if (a[1] == '-') {
			const char *eq = strchr(a, '=');
			size_t n = eq ? (size_t)(eq - a) : strlen(a);

			k += (!eq && cls_in_list(long_arg, a, n)) ? 2 : 1;
			continue;
		}
		bool takes = false;
		for (const char *p = a + 1; *p; p++)
			if (short_arg && strchr(short_arg, *p)) {
				takes = !p[1];
				break;
			}
		k += takes ? 2 : 1;
	}
	return k;
}

static void classify_argv(struct cls *c, int argc, word_t *argv, const char *cwd,
			  int depth, bool stdin_args)
{
	const char *name;
	char **plain;
	struct sbx_conn_verdict v;
	bool escalated;
	int k;

	if (argc < 1)
		return;
	if (depth > SBX_SH_MAX_DEPTH) {
		cls_unanalysed(c, "nested too deeply");
		return;
	}
	if (argv[0].dynamic) {
		cls_unanalysed(c, "the program name is computed at run time");
		return;
	}
	name = cls_basename(argv[0].val);

	/* the policy's commands section sees the words as written */
	plain = calloc(argc + 1, sizeof(*plain));
	if (!plain) {
		cls_unanalysed(c, "out of memory");
		return;
	}
	for (k = 0; k < argc; k++)
		plain[k] = argv[k].val;
	sbx_cv_init(&v);
	sbx_conn_decide_argv(c->cp, argc, plain, &v);
	escalated = v.verdict == SBX_V_ASK;
	cls_merge(c, &v);
	free(plain);

	/* the executable itself: whether the session may run it. Not for a
	 * program the commands section escalates (sudo, doas, pkexec): that
	 * one runs outside the session, as the person who approves it, and
	 * the kernel keeps refusing it inside. Its redirections and known
	 * file arguments are still checked below. */
	if (escalated) {
		/* nothing: see above */
	} else if (strchr(argv[0].val, '/')) {
		cls_check_file(c, &argv[0], cwd, SBX_ACC_EXEC);
	} else if (c->cp) {
		const char *path = getenv("PATH");
		char *dup = path ? strdup(path) : NULL, *save = NULL;

		for (char *d = dup ? strtok_r(dup, ":", &save) : NULL; d;
		     d = strtok_r(NULL, ":", &save)) {
			char *full;

			if (d[0] != '/' || asprintf(&full, "%s/%s", d, argv[0].val) < 0)
				continue;
			if (access(full, X_OK) == 0) {
				cls_decide_abs(c, full, SBX_ACC_EXEC);
				free(full);
				break;
			}
			free(full);
		}
		free(dup);
	}

	if (!strcmp(name, "eval") || !strcmp(name, "trap") || !strcmp(name, "alias")) {
		cls_opaque(c, "eval, trap and alias run text as commands");
		for (k = 1; k < argc; k++)
			if (!argv[k].dynamic)
				cls_scan_text(c, argv[k].val, cwd);
		return;
	}
	if (!strcmp(name, "exec") || !strcmp(name, "command") || !strcmp(name, "builtin") ||
	    !strcmp(name, "nohup") || !strcmp(name, "time") || !strcmp(name, "nice") ||
	    !strcmp(name, "stdbuf") || !strcmp(name, "timeout") || !strcmp(name, "env") ||
	    !strcmp(name, "xargs") || !strcmp(name, "sudo") || !strcmp(name, "doas") ||
	    !strcmp(name, "ionice") || !strcmp(name, "chrt") || !strcmp(name, "setsid") ||
	    !strcmp(name, "unbuffer") || !strcmp(name, "flock") || !strcmp(name, "caffeinate")) {
		static const char *const to_long[] = { "--signal", "--kill-after", NULL };
		static const char *const sb_long[] = { "--input", "--output", "--error", NULL };
		static const char *const xa_long[] = { "--arg-file", "--delimiter", "--eof",
			"--replace", "--max-lines", "--max-args", "--max-procs", "--max-chars",
			"--process-slot-var", NULL };
		static const char *const sudo_long[] = { "--user", "--group", "--prompt",
			"--close-from", "--chdir", "--host", "--role", "--type", "--command-timeout",
			"--other-user", NULL };
		bool inner_stdin = stdin_args;
		const char *inner_cwd = cwd;
		char *cwd_buf = NULL;

		k = 1;
		if (!strcmp(name, "exec")) {
			k = skip_opts(argc, argv, 1, "a", NULL);
		} else if (!strcmp(name, "command")) {
			for (int j = 1; j < argc && argv[j].val[0] == '-'; j++)
				if (strchr(argv[j].val, 'v') || strchr(argv[j].val, 'V'))
					return;	/* command -v: a lookup, nothing runs */
			k = skip_opts(argc, argv, 1, "", NULL);
		} else if (!strcmp(name, "time")) {
			k = skip_opts(argc, argv, 1, "fo", NULL);
			for (int j = 1; j + 1 < k; j++)
				if (!strcmp(argv[j].val, "-o"))
					cls_check_file(c, &argv[j + 1], cwd, SBX_ACC_WRITE);
		} else if (!strcmp(name, "nice")) {
			k = skip_opts(argc, argv, 1, "n", NULL);
		} else if (!strcmp(name, "ionice")) {
			k = skip_opts(argc, argv, 1, "cnpPtu", NULL);
		} else if (!strcmp(name, "chrt")) {
			k = skip_opts(argc, argv, 1, "T P D", NULL);
			k++;	/* priority */
		} else if (!strcmp(name, "stdbuf")) {
			k = skip_opts(argc, argv, 1, "ioe", sb_long);
		} else if (!strcmp(name, "timeout")) {
			k = skip_opts(argc, argv, 1, "sk", to_long) + 1;	/* + DURATION */
		} else if (!strcmp(name, "flock")) {
			k = skip_opts(argc, argv, 1, "wEc", NULL);
			if (k < argc)
				cls_check_file(c, &argv[k], cwd, SBX_ACC_READ);
			k++;
			for (int j = 1; j < argc; j++)
				if (!strcmp(argv[j].val, "-c") && j + 1 < argc) {
					classify_text(c, &argv[j + 1], cwd, depth);
					return;
				}
		} else if (!strcmp(name, "env")) {
			k = 1;
			while (k < argc) {
				const char *a = argv[k].val;

				if (argv[k].dynamic)
					break;
				if (!strcmp(a, "-S") || !strncmp(a, "--split-string", 14) ||
				    (a[0] == '-' && a[1] != '-' && strchr(a, 'S'))) {
					cls_unanalysed(c, "env -S splits a string into a command");
					return;
				}
				if (!strcmp(a, "-C") || !strcmp(a, "--chdir")) {
					if (k + 1 >= argc || argv[k + 1].dynamic) {
						cls_unanalysed(c, "env -C with a directory computed at run time");
						return;
					}
					free(cwd_buf);
					cwd_buf = sbx_sh_resolve(argv[k + 1].val, inner_cwd, c->home);
					inner_cwd = cwd_buf;
					k += 2;
					continue;
				}
				if (!strcmp(a, "-u") || !strcmp(a, "--unset")) {
					k += 2;
					continue;
				}
				if (!strcmp(a, "--")) {
					k++;
					continue;
				}
				if (a[0] == '-' ) {
					k++;
					continue;
				}
				if (strchr(a, '=') && (isalpha((unsigned char)a[0]) || a[0] == '_')) {
					k++;
					continue;
				}
				break;
			}
		} else if (!strcmp(name, "xargs")) {
			k = 1;
			while (k < argc) {
				const char *a = argv[k].val;

				if (argv[k].dynamic || a[0] != '-' || !a[1])
					break;
				if (!strcmp(a, "--")) {
					k++;
					break;
				}
				if (!strcmp(a, "-a") || !strcmp(a, "--arg-file")) {
					if (k + 1 < argc)
						cls_check_file(c, &argv[k + 1], cwd, SBX_ACC_READ);
					k += 2;
					continue;
				}
				if (a[1] == '-') {
					const char *eq = strchr(a, '=');
					size_t n = eq ? (size_t)(eq - a) : strlen(a);
					k += (!eq && cls_in_list(xa_long, a, n)) ? 2 : 1;
					continue;
				}
				/* -i and -l take an optional attached value, -I etc. a separate one */
				bool takes = false;
				for (const char *p = a + 1; *p; p++)
					if (strchr("dEILnPs", *p)) {
						takes = !p[1];
						break;
					} else if (strchr("il", *p)) {
						break;
					}
				k += takes ? 2 : 1;
			}
			inner_stdin = true;
		} else if (!strcmp(name, "sudo") || !strcmp(name, "doas")) {
			k = skip_opts(argc, argv, 1, name[0] == 's' ? "aCcDghpRrTtUu" : "uC", sudo_long);
			for (int j = 1; j < k; j++) {
				const char *a = argv[j].val;

				if (a[0] == '-' && a[1] != '-' && (strchr(a, 'e')) && !strchr("aCcDghpRrTtUu", a[1])) {
					/* sudo -e FILE...: sudoedit writes them */
					for (int m = k; m < argc; m++)
						cls_check_file(c, &argv[m], cwd, SBX_ACC_WRITE);
					return;
				}
			}
		} else {
			k = skip_opts(argc, argv, 1, "", NULL);
		}
		if (k < argc)
			classify_argv(c, argc - k, argv + k, inner_cwd, depth, inner_stdin);
		free(cwd_buf);
		return;
	}
	if (!strcmp(name, "sudoedit")) {
		for (k = skip_opts(argc, argv, 1, "aCcDghpRrTtUu", NULL); k < argc; k++)
			cls_check_file(c, &argv[k], cwd, SBX_ACC_WRITE);
		return;
	}
	if (!strcmp(name, "su")) {
		for (k = 1; k < argc; k++)
			if ((!strcmp(argv[k].val, "-c") || !strcmp(argv[k].val, "--command")) &&
			    k + 1 < argc) {
				classify_text(c, &argv[k + 1], cwd, depth);
				return;
			}
		return;
	}
	cls_known_program(c, name, argc, argv, cwd, depth, stdin_args);
}

int sbx_sh_classify(struct sbx_conn_policy *cp, const char *text, const char *cwd,
		    struct sbx_conn_verdict *out)
{
	struct cls c = { .cp = cp, .acc = out, .home = cp ? cp->home : sbx_conn_home(),
			 .project = cp ? cp->project : NULL, .kernel = cp && cp->kernel_enforced,
			 .argv = classify_argv, .text = classify_text };
	struct sbx_sh_word w = { (char *)text, false, false };

	sbx_cv_clear(out);
	classify_text(&c, &w, cwd, -1);
	if (out->verdict == SBX_V_NONE) {
		out->verdict = SBX_V_ALLOW;
		free(out->reason);
		out->reason = strdup("no rule applies");
	}
	return 0;
}

