// SPDX-License-Identifier: GPL-2.0
/*
 * parse_schema.c - the checks that every section of a policy uses: the
 * type of a value, known keys (with a suggestion for a misspelt one),
 * verdicts, reasons, variables, and the head and frame of rules.
 *
 * Every error names FILE:LINE:COL and the field, and marks the file as
 * failed; the walk goes on after an error, so that one check reports as
 * many as it can.
 */
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include "policy/parse.h"
#include "lib/text.h"
#include "lib/alloc.h"

/* ---- schema helpers ------------------------------------------------------------ */

void perr(struct pctx *c, int line, int col, const char *field,
	  const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	sbx_diag_vadd(c->d, SBX_DIAG_ERROR, c->doc->file, line, col, field, fmt, ap);
	va_end(ap);
	c->err = true;
}


void pwarn(struct pctx *c, int line, int col, const char *field,
	   const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	sbx_diag_vadd(c->d, SBX_DIAG_WARNING, c->doc->file, line, col, field, fmt, ap);
	va_end(ap);
}

void field_name(char *dst, size_t n, const char *base, const char *suffix)
{
	size_t a = strnlen(base, n - 1), b = strnlen(suffix, n - 1 - a);

	memcpy(dst, base, a);
	memcpy(dst + a, suffix, b);
	dst[a + b] = 0;
}

void field_index(char *dst, size_t n, const char *base, size_t i)
{
	char num[SBX_UTOA_LEN], idx[SBX_UTOA_LEN + 2];
	const char *d = sbx_utoa(i, num);
	size_t l = strlen(d);

	idx[0] = '[';
	memcpy(idx + 1, d, l);
	idx[l + 1] = ']';
	idx[l + 2] = 0;
	field_name(dst, n, base, idx);
}

const char *ytype_name(const struct ynode *y)
{
	switch (y->type) {
	case Y_SCALAR: return "a single value";
	case Y_SEQ: return "a list";
	default: return "a mapping";
	}
}

static size_t edit_distance(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b), prev[64], cur[64];

	if (la >= 63 || lb >= 63)
		return 99;
	for (size_t j = 0; j <= lb; j++)
		prev[j] = j;
	for (size_t i = 1; i <= la; i++) {
		cur[0] = i;
		for (size_t j = 1; j <= lb; j++) {
			size_t del = prev[j] + 1, ins = cur[j - 1] + 1;
			size_t sub = prev[j - 1] + (a[i - 1] != b[j - 1]);

			cur[j] = del < ins ? del : ins;
			if (sub < cur[j])
				cur[j] = sub;
		}
		memcpy(prev, cur, (lb + 1) * sizeof(size_t));
	}
	return prev[lb];
}


void check_keys(struct pctx *c, const struct ynode *map, const char *field,
		const char *const *allowed)
{
	for (size_t i = 0; i < map->n; i += 2) {
		const struct ynode *k = map->kids[i];
		const char *best = NULL;
		size_t bestd = 3;
		char list[256] = "", f[FIELD_MAX];
		bool ok = false;

		for (const char *const *a = allowed; *a && !ok; a++)
			ok = !strcmp(k->str, *a);
		if (ok)
			continue;
		/* a key that is not allowed: the nearest one, else the list */
		for (const char *const *a = allowed; *a; a++) {
			size_t dist = edit_distance(k->str, *a);

			if (dist < bestd) {
				bestd = dist;
				best = *a;
			}
			if (list[0])
				strncat(list, ", ", sizeof(list) - strlen(list) - 1);
			strncat(list, *a, sizeof(list) - strlen(list) - 1);
		}
		/* an abbreviation (proto for protocol) is as near as a typo */
		if (!best && strlen(k->str) >= 3)
			for (const char *const *a = allowed; *a; a++)
				if (!strncmp(*a, k->str, strlen(k->str))) {
					if (best) {	/* two keys start so: no guess */
						best = NULL;
						break;
					}
					best = *a;
				}
		snprintf(f, sizeof(f), "%s%s%s", field, *field ? "." : "", k->str);
		if (best)
			perr(c, k->line, k->col, f, "unknown key '%s': did you mean '%s'?", k->str, best);
		else
			perr(c, k->line, k->col, f, "unknown key '%s': expected one of %s", k->str, list);
	}
}

const struct ynode *map_get(const struct ynode *map, const char *key)
{
	for (size_t i = 0; i + 1 < map->n; i += 2)
		if (!strcmp(map->kids[i]->str, key))
			return map->kids[i + 1];
	return NULL;
}

bool want_scalar(struct pctx *c, const struct ynode *y, const char *field,
		 const char *what)
{
	if (y->type == Y_SCALAR)
		return true;
	perr(c, y->line, y->col, field, "expected %s, found %s", what, ytype_name(y));
	return false;
}

bool want_map(struct pctx *c, const struct ynode *y, const char *field,
	      const char *what)
{
	if (y->type == Y_MAP)
		return true;
	if (y->type == Y_SCALAR && y->plain && y->len == 0)
		perr(c, y->line, y->col, field, "empty: expected %s", what);
	else
		perr(c, y->line, y->col, field, "expected %s, found %s", what, ytype_name(y));
	return false;
}


struct sitem *string_or_list(struct pctx *c, const struct ynode *y,
			     const char *field, const char *what, size_t *n)
{
	struct sitem *v;

	*n = 0;
	if (y->type == Y_MAP) {
		perr(c, y->line, y->col, field, "expected %s or a list of them, found a mapping", what);
		return NULL;
	}
	if (y->type == Y_SCALAR) {
		if (y->plain && y->len == 0) {
			perr(c, y->line, y->col, field, "empty: expected %s", what);
			return NULL;
		}
		v = calloc(1, sizeof(*v));
		if (!v)
			return NULL;
		v->y = y;
		field_name(v->field, sizeof(v->field), field, "");
		*n = 1;
		return v;
	}
	if (y->n == 0) {
		perr(c, y->line, y->col, field, "empty list: expected at least one %s", what);
		return NULL;
	}
	v = calloc(y->n, sizeof(*v));
	if (!v)
		return NULL;
	for (size_t i = 0; i < y->n; i++) {
		char f[FIELD_MAX];

		field_index(f, sizeof(f), field, i);
		if (y->kids[i]->type != Y_SCALAR) {
			perr(c, y->kids[i]->line, y->kids[i]->col, f, "expected %s, found %s",
			     what, ytype_name(y->kids[i]));
			free(v);
			return NULL;
		}
		if (y->kids[i]->plain && y->kids[i]->len == 0) {
			perr(c, y->kids[i]->line, y->kids[i]->col, f, "empty: expected %s", what);
			free(v);
			return NULL;
		}
		v[i].y = y->kids[i];
		field_name(v[i].field, sizeof(v[i].field), f, "");
	}
	*n = y->n;
	return v;
}

int parse_verdict(struct pctx *c, const struct ynode *y, const char *field)
{
	int v;

	if (!want_scalar(c, y, field, "a verdict (allow, deny, ask or audit)"))
		return -1;
	v = sbx_verdict_parse(y->str);
	if (v < 0)
		perr(c, y->line, y->col, field,
		     "unknown verdict '%s': use allow, deny, ask or audit", y->str);
	return v;
}

char *parse_reason(struct pctx *c, const struct ynode *y, const char *field)
{
	const char *s;

	if (!want_scalar(c, y, field, "a reason (text shown to people)"))
		return NULL;
	for (s = y->str; *s == ' ' || *s == '\t' || *s == '\n'; s++)
		;
	if (!*s) {
		perr(c, y->line, y->col, field,
		     "empty reason: say why the rule exists; people see it when it fires");
		return NULL;
	}
	{
		/* folded scalars (>) end in a newline; reasons are one line */
		char *r = strdup(s);
		size_t n = r ? strlen(r) : 0;

		while (n > 0 && (r[n - 1] == '\n' || r[n - 1] == ' ' || r[n - 1] == '\t'))
			r[--n] = 0;
		return r;
	}
}

struct sbx_srcpos mkpos(struct pctx *c, const struct ynode *y, int off,
			const char *field)
{
	struct sbx_srcpos p = {
		.file = strdup(c->doc->file),
		.field = strdup(field),
		.line = y->line,
		.col = y->col + (y->plain ? 0 : 1) + off,
	};
	return p;
}

int scol(const struct ynode *y, size_t off)
{
	return y->col + (y->plain ? 0 : 1) + (int)off;
}

/* ---- variables ----------------------------------------------------------------- */

char *expand_vars(struct pctx *c, const struct ynode *y, const char *field)
{
	const char *s = y->str;
	size_t cap = strlen(s) + 1, o = 0;
	char *out;
	size_t i = 0;

	if (s[0] == '~') {
		if (s[1] && s[1] != '/') {
			perr(c, y->line, scol(y, 0), field,
			     "'~user' is not supported: write ~/ for your home or an absolute path");
			return NULL;
		}
	}
	out = malloc(cap);
	if (!out)
		return NULL;
#define APPEND(str, n) do {						\
		size_t n_ = (n);					\
		if (!SBX_GROW(out, cap, o + n_ + 1, 1)) {		\
			free(out);					\
			return NULL;					\
		}							\
		memcpy(out + o, (str), n_);				\
		o += n_;						\
	} while (0)
	if (s[0] == '~') {
		APPEND(c->env->home, strlen(c->env->home));
		i = 1;
	}
	while (s[i]) {
		if (s[i] != '$') {
			APPEND(s + i, 1);
			i++;
			continue;
		}
		if (s[i + 1] != '{') {
			perr(c, y->line, scol(y, i), field,
			     "'$' must start ${HOME} or ${PROJECT} (braces required)");
			free(out);
			return NULL;
		}
		{
			const char *e = strchr(s + i, '}');
			size_t n = e ? (size_t)(e - (s + i + 2)) : 0;
			const char *val = NULL;

			if (!e) {
				perr(c, y->line, scol(y, i), field, "unterminated ${: write ${HOME} or ${PROJECT}");
				free(out);
				return NULL;
			}
			if (n == 4 && !strncmp(s + i + 2, "HOME", 4)) {
				val = c->env->home;
			} else if (n == 7 && !strncmp(s + i + 2, "PROJECT", 7)) {
				val = c->env->project;
				if (!val) {
					perr(c, y->line, scol(y, i), field,
					     "${PROJECT} is used but no project directory is set "
					     "(pass --project DIR)");
					free(out);
					return NULL;
				}
			} else {
				perr(c, y->line, scol(y, i), field,
				     "unknown variable ${%.*s}: only ${HOME} and ${PROJECT} exist",
				     (int)n, s + i + 2);
				free(out);
				return NULL;
			}
			APPEND(val, strlen(val));
			i = (size_t)(e - s) + 1;
		}
	}
#undef APPEND
	out[o] = 0;
	return out;
}

bool has_var_start(const char *s)
{
	return s[0] == '~' || s[0] == '/' || !strncmp(s, "${", 2);
}

/* ---- rules --------------------------------------------------------------------- */

static struct trule *doc_new_rule(struct fdoc *doc)
{
	if (!SBX_GROW(doc->r, doc->cap, doc->n + 1, 16))
		return NULL;
	memset(&doc->r[doc->n], 0, sizeof(doc->r[0]));
	return &doc->r[doc->n++];
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

char *make_key(const char *const *parts, size_t n, const char *tail)
{
	char **v = malloc((n ? n : 1) * sizeof(*v));
	char *key = NULL;

	if (!v)
		return NULL;
	memcpy(v, parts, n * sizeof(*v));
	qsort(v, n, sizeof(*v), cmp_str);
	for (size_t i = 0; i < n; i++)
		if (sbx_str_append(&key, "\x1f", v[i])) {
			free(v);
			free(key);
			return NULL;
		}
	free(v);
	if (sbx_str_append(&key, "\x1e", tail)) {
		free(key);
		return NULL;
	}
	return key;
}

struct trule *parse_rule_head(struct pctx *c, const struct ynode *y, const char *field,
			      const struct rule_kind *kind, void *out)
{
	const struct ynode *yv, *yr;
	struct trule *t;
	int verdict = -1;
	char *reason = NULL, f[FIELD_MAX];
	bool ok;

	if (!want_map(c, y, field, kind->what))
		return NULL;
	check_keys(c, y, field, kind->keys);
	ok = kind->fields(c, y, field, out);
	yv = map_get(y, "verdict");
	yr = map_get(y, "reason");
	field_name(f, sizeof(f), field, ".verdict");
	if (!yv)
		perr(c, y->line, y->col, f, "missing: write verdict: allow, deny, ask or audit");
	else
		verdict = parse_verdict(c, yv, f);
	field_name(f, sizeof(f), field, ".reason");
	if (!yr)
		perr(c, y->line, y->col, f,
		     "missing: every rule needs a reason (people see it when the rule fires)");
	else
		reason = parse_reason(c, yr, f);
	if (!ok || verdict < 0 || !reason) {
		free(reason);
		return NULL;
	}
	t = doc_new_rule(c->doc);
	if (!t) {
		free(reason);
		return NULL;
	}
	t->sec = kind->sec;
	t->info.section = kind->sec;
	t->info.verdict = (uint8_t)verdict;
	t->info.reason = reason;
	t->info.file = strdup(c->doc->file);
	t->info.line = y->line;
	t->info.col = y->col;
	return t;
}

void parse_section_default(struct pctx *c, const struct ynode *y, const char *field,
			   struct defpos *out)
{
	int v = parse_verdict(c, y, field);

	if (v < 0)
		return;
	out->set = true;
	out->verdict = (uint8_t)v;
	out->line = y->line;
	out->col = y->col;
	out->field = strdup(field);
}

void parse_rules(struct pctx *c, const struct ynode *y, const char *field,
		 void (*fn)(struct pctx *, const struct ynode *, const char *))
{
	if (y->type == Y_SCALAR && y->plain && y->len == 0)
		return;		/* "rules:" with nothing: no rules */
	if (y->type != Y_SEQ) {
		perr(c, y->line, y->col, field, "expected a list of rules (lines starting with '- '), found %s",
		     ytype_name(y));
		return;
	}
	for (size_t i = 0; i < y->n; i++) {
		char f[FIELD_MAX];

		field_index(f, sizeof(f), field, i);
		fn(c, y->kids[i], f);
	}
}

char *parse_opt_reason(struct pctx *c, const struct ynode *sec, const char *field)
{
	const struct ynode *y = map_get(sec, "default_reason");
	char f[FIELD_MAX];

	if (!y)
		return NULL;
	field_name(f, sizeof(f), field, ".default_reason");
	return parse_reason(c, y, f);
}

void parse_verdict_section(struct pctx *c, const struct ynode *y, const char *name,
			   const char *default_field, const char *rules_field,
			   struct defpos *def, char **reason,
			   void (*rule)(struct pctx *, const struct ynode *, const char *),
			   const char *const *extra_keys)
{
	const char *keys[16] = { "default", "default_reason", "rules" };
	const struct ynode *v;
	size_t n = 3;

	for (size_t i = 0; extra_keys && extra_keys[i] && n < 15; i++)
		keys[n++] = extra_keys[i];
	keys[n] = NULL;
	if (!want_map(c, y, name, "a mapping with default and rules"))
		return;
	check_keys(c, y, name, keys);
	if ((v = map_get(y, "default")))
		parse_section_default(c, v, default_field, def);
	*reason = parse_opt_reason(c, y, name);
	if ((v = map_get(y, "rules")))
		parse_rules(c, v, rules_field, rule);
}
