/* SPDX-License-Identifier: GPL-2.0 */
/*
 * classify_programs.h - what the classifier's two parts share: classify.c
 * (the checks of files and hosts, the option scanner, the wrappers, one
 * command's walk) and classify_programs.c (what known programs do with
 * their arguments). Not an API; that is classify.h.
 */
#ifndef SBX_CLASSIFY_PROGRAMS_H
#define SBX_CLASSIFY_PROGRAMS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "user/connector/conn_policy.h"
#include "user/connector/shell/shell.h"

/* ---- the checks (classify.c) ------------------------------------------------ */

struct cls {
	struct sbx_conn_policy *cp;
	struct sbx_conn_verdict *acc;
	const char *home;
	const char *project;	/* NULL: unknown (then everything is "outside") */
	bool kernel;		/* the caller runs in a kernel-confined session */
};

typedef const struct sbx_sh_word word_t;

void cls_merge(struct cls *c, struct sbx_conn_verdict *v);
/* a built-in rule's verdict */
void cls_builtin(struct cls *c, uint8_t verdict, const char *what, const char *reason);
/* "could not analyse": ask, never allow */
void cls_unanalysed(struct cls *c, const char *why);
const char *cls_basename(const char *p);
void cls_check_file(struct cls *c, word_t *w, const char *cwd, enum sbx_access acc);
void cls_check_host(struct cls *c, const char *host, int port);
void cls_check_url(struct cls *c, word_t *w, int default_port);
char *cls_remote_host(const char *s);

/* ---- option scanning (classify.c) ------------------------------------------- */

struct kv {
	const char *opt;	/* "-o" or "--output" (pointer into the word) */
	size_t optlen;
	word_t *val;
	const char *inline_val;	/* "-ofile" / "--output=file" */
};

struct opts {
	word_t **pos;
	int npos;
	struct kv *kv;
	int nkv;
	bool sf[128];		/* short flags seen */
	word_t **lf;		/* long flags seen */
	int nlf;
	int end;		/* index after the last argument consumed */
};

int cls_scan(int argc, word_t *argv, int from, const char *short_arg,
	     const char *const *long_arg, bool permute, struct opts *o);
void cls_opts_free(struct opts *o);
bool cls_has(const struct opts *o, const char *name);
void cls_each_val(struct cls *c, const struct opts *o, const char *name, const char *cwd,
		  void (*fn)(struct cls *, word_t *, const char *, int), int arg);
/* callbacks of cls_each_val: the value is a file read or written, a file
 * after curl's @, or a URL (arg: the default port) */
void cls_fn_read(struct cls *c, word_t *w, const char *cwd, int arg);
void cls_fn_write(struct cls *c, word_t *w, const char *cwd, int arg);
void cls_fn_at_read(struct cls *c, word_t *w, const char *cwd, int arg);
void cls_fn_url(struct cls *c, word_t *w, const char *cwd, int port);
/* every operand from index from on is a file ("-" is stdin) */
void cls_all_pos(struct cls *c, const struct opts *o, int from, const char *cwd,
		 enum sbx_access acc);

/* ---- commands inside commands (classify.c) ---------------------------------- */

/* one simple command: the policy, the executable, wrappers, programs */
void classify_argv(struct cls *c, int argc, word_t *argv, const char *cwd,
		   int depth, bool stdin_args);
/* a command line given as one word (sh -c TEXT), parsed one level deeper */
void classify_text(struct cls *c, word_t *w, const char *cwd, int depth);

/* ---- what an argument can name (classify_args.c) --------------------------- */

/* a pattern's expansions against the policy's deny and ask rules */
void cls_check_pattern(struct cls *c, const char *abs, enum sbx_access acc);
/* paths named in a program text, and in the arguments of a program with no spec */
void cls_scan_text(struct cls *c, const char *text, const char *cwd);
void cls_scan_args(struct cls *c, int argc, word_t *argv, const char *cwd);
/* not seen through: ask with hooks only, the kernel's when it enforces */
void cls_opaque(struct cls *c, const char *why);
void cls_awk_program(struct cls *c, const char *prog, const char *cwd);
void cls_sed_script(struct cls *c, const char *script, const char *cwd);

/* ---- programs (classify_programs.c) ----------------------------------------- */

/* What the program called name (argv[0]'s base name) is known to do with
 * its arguments; nothing for a program it does not know. */
void cls_known_program(struct cls *c, const char *name, int argc, word_t *argv,
		       const char *cwd, int depth, bool stdin_args);

#endif
