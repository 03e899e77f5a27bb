/* SPDX-License-Identifier: GPL-2.0 */
/*
 * scan.h - the option scanner (scan.c): a command's operands and option
 * values, as the program specs (programs.c) read them.
 */
#ifndef SBX_CLASSIFY_SCAN_H
#define SBX_CLASSIFY_SCAN_H

#include <stdbool.h>
#include <stddef.h>
#include "user/connector/classify/check.h"

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

/* is s[0..n) one of the words of the NULL-ended list l? */
bool cls_in_list(const char *const *l, const char *s, size_t n);
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

#endif
