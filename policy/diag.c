// SPDX-License-Identifier: GPL-2.0
/*
 * diag.c - diagnostics of policy loading and compiling: each one names
 * the file, line, column and field it concerns, and says what to write
 * instead.
 */
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#define SBX_POLICY_INTERNAL
#include "policy/policy.h"
#include "lib/alloc.h"

void sbx_diag_vadd(struct sbx_diags *d, enum sbx_diag_level level,
		   const char *file, int line, int col, const char *field,
		   const char *fmt, va_list ap)
{
	struct sbx_diag *g;
	char *msg = NULL;

	if (!d)
		return;
	if (!SBX_GROW(d->v, d->cap, d->n + 1, 8)) {
		/* cannot record it, but an error must still count:
		 * the policy is then rejected, never half-loaded */
		if (level == SBX_DIAG_ERROR)
			d->errors++;
		return;
	}
	msg = sbx_vformat(fmt, ap);
	g = &d->v[d->n++];
	g->level = level;
	g->file = file ? strdup(file) : NULL;
	g->line = line;
	g->col = col;
	g->field = field && *field ? strdup(field) : NULL;
	g->msg = msg ? msg : strdup("out of memory");
	if (level == SBX_DIAG_ERROR)
		d->errors++;
}

void sbx_diag_add(struct sbx_diags *d, enum sbx_diag_level level,
		  const char *file, int line, int col, const char *field,
		  const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	sbx_diag_vadd(d, level, file, line, col, field, fmt, ap);
	va_end(ap);
}

void sbx_diag_vat(struct sbx_diags *d, enum sbx_diag_level level,
		  const struct sbx_srcpos *pos, const char *fmt, va_list ap)
{
	sbx_diag_vadd(d, level, pos ? pos->file : NULL, pos ? pos->line : 0,
		      pos ? pos->col : 0, pos ? pos->field : NULL, fmt, ap);
}

void sbx_diag_at(struct sbx_diags *d, enum sbx_diag_level level,
		 const struct sbx_srcpos *pos, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	sbx_diag_vat(d, level, pos, fmt, ap);
	va_end(ap);
}

void sbx_diags_free(struct sbx_diags *d)
{
	if (!d)
		return;
	for (size_t i = 0; i < d->n; i++) {
		free(d->v[i].file);
		free(d->v[i].field);
		free(d->v[i].msg);
	}
	free(d->v);
	memset(d, 0, sizeof(*d));
}

void sbx_diags_print(const struct sbx_diags *d, FILE *out)
{
	if (!d)
		return;
	for (size_t i = 0; i < d->n; i++) {
		const struct sbx_diag *g = &d->v[i];

		fputs(g->file ? g->file : "<policy>", out);
		if (g->line > 0)
			fprintf(out, ":%d:%d", g->line, g->col > 0 ? g->col : 1);
		fprintf(out, ": %s: ", g->level == SBX_DIAG_ERROR ? "error" : "warning");
		if (g->field)
			fprintf(out, "%s: ", g->field);
		fprintf(out, "%s\n", g->msg);
	}
}

struct diag_ord {
	struct sbx_diag g;
	size_t file_rank;	/* files in the order they were first met */
	size_t i;
};

static int cmp_diag(const void *a, const void *b)
{
	const struct diag_ord *x = a, *y = b;

	if (x->file_rank != y->file_rank)
		return x->file_rank < y->file_rank ? -1 : 1;
	if (x->g.line != y->g.line)
		return x->g.line - y->g.line;
	if (x->g.col != y->g.col)
		return x->g.col - y->g.col;
	return x->i < y->i ? -1 : x->i > y->i;
}

void sbx_diags_sort_from(struct sbx_diags *d, size_t from)
{
	const char *files[32];
	struct diag_ord *v;
	size_t n, nfiles = 0;

	if (!d || from >= d->n)
		return;
	n = d->n - from;
	v = malloc(n * sizeof(*v));
	if (!v)
		return;		/* order is cosmetic */
	for (size_t i = 0; i < n; i++) {
		const char *f = d->v[from + i].file ? d->v[from + i].file : "";
		size_t r;

		v[i].g = d->v[from + i];
		v[i].i = i;
		/* a policy and the few it extends, in the order first met */
		for (r = 0; r < nfiles && strcmp(files[r], f); r++)
			;
		if (r == nfiles && nfiles < sizeof(files) / sizeof(files[0]))
			files[nfiles++] = f;
		v[i].file_rank = r;
	}
	qsort(v, n, sizeof(*v), cmp_diag);
	for (size_t i = 0; i < n; i++)
		d->v[from + i] = v[i].g;
	free(v);
}
