// SPDX-License-Identifier: GPL-2.0
/*
 * parse.c - read a policy (YAML, schema version 1) with libyaml, check it
 * against the schema, expand variables and number the rules.
 *
 * The YAML is first turned into a small tree that keeps each node's
 * line and column (libyaml's marks), so that every diagnostic can name
 * FILE:LINE:COL and the field. Then the tree is walked against the
 * schema. Nothing is half-loaded: any error and the load returns NULL.
 *
 * Rule numbering is deliberately independent of the order in which rules
 * are written: within one file the rules of each section are numbered in
 * a canonical order (by their text), parent files before their children.
 * Together with "deny wins, then the smaller rule id" this makes the
 * compiled form, including the rule ids in it, a function of the set of
 * rules only (see tests/unit/policy_permute.c).
 */
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <yaml.h>
#define SBX_POLICY_INTERNAL
#include "policy/policy.h"

#ifndef SBX_SHIPPED_POLICY_DIR
#define SBX_SHIPPED_POLICY_DIR "/usr/local/share/bpfsbx/policy"
#endif

#define MAX_DEPTH	32	/* YAML nesting; the schema needs 5 */
#define MAX_EXTENDS	8
#define MAX_FILE_SIZE	(1 << 20)
#define FIELD_MAX	256

/* ---- a YAML tree with positions ------------------------------------------ */

enum ytype { Y_SCALAR, Y_SEQ, Y_MAP };

struct ynode {
	enum ytype type;
	int line, col;		/* 1-based */
	char *str;		/* scalar */
	size_t len;
	bool plain;		/* unquoted scalar */
	struct ynode **kids;	/* seq: items; map: key, value, key, value... */
	size_t n, cap;
};

struct yload {
	yaml_parser_t p;
	const char *file;
	const char *buf;
	size_t len;
	struct sbx_diags *d;
	bool failed;
};

static void ynode_free(struct ynode *y)
{
	if (!y)
		return;
	for (size_t i = 0; i < y->n; i++)
		ynode_free(y->kids[i]);
	free(y->kids);
	free(y->str);
	free(y);
}

static struct ynode *ynode_new(enum ytype t, const yaml_mark_t *m)
{
	struct ynode *y = calloc(1, sizeof(*y));

	if (y) {
		y->type = t;
		y->line = (int)m->line + 1;
		y->col = (int)m->column + 1;
	}
	return y;
}

static int ynode_push(struct ynode *y, struct ynode *k)
{
	if (y->n == y->cap) {
		size_t cap = y->cap ? y->cap * 2 : 8;
		struct ynode **v = realloc(y->kids, cap * sizeof(*v));

		if (!v)
			return -1;
		y->kids = v;
		y->cap = cap;
	}
	y->kids[y->n++] = k;
	return 0;
}

static void yerr(struct yload *L, int line, int col, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
static void yerr(struct yload *L, int line, int col, const char *fmt, ...)
{
	char msg[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	sbx_diag_add(L->d, SBX_DIAG_ERROR, L->file, line, col, NULL, "%s", msg);
	L->failed = true;
}

static void yparse_error(struct yload *L)
{
	const yaml_parser_t *p = &L->p;
	size_t idx = p->problem_mark.index;
	int line = (int)p->problem_mark.line + 1, col = (int)p->problem_mark.column + 1;

	if (p->error == YAML_MEMORY_ERROR) {
		yerr(L, 0, 0, "out of memory while reading YAML");
		return;
	}
	if ((idx < L->len && L->buf[idx] == '\t') ||
	    (p->problem && strstr(p->problem, "tab"))) {
		yerr(L, line, col, "tab character: YAML indentation must use spaces, not tabs");
		return;
	}
	if (p->error == YAML_READER_ERROR) {
		/* the reader's mark is not meaningful; say where in bytes */
		yerr(L, 0, 0, "not valid UTF-8 text (%s at byte %zu)",
		     p->problem ? p->problem : "bad input", p->problem_offset);
		return;
	}
	yerr(L, line, col, "YAML syntax: %s%s%s%s", p->problem ? p->problem : "error",
	     p->context ? " " : "", p->context ? p->context : "",
	     p->problem && strstr(p->problem, "mapping values") ?
	     " (a value that contains ': ' must be quoted)" :
	     p->context && strstr(p->context, "flow") ?
	     " (inside [...] or {...}, quote values that contain '{', '}', ',' or ': ', "
	     "e.g. \"${PROJECT}/x\")" : "");
}

static bool ynext(struct yload *L, yaml_event_t *ev)
{
	if (!yaml_parser_parse(&L->p, ev)) {
		yparse_error(L);
		return false;
	}
	return true;
}

static struct ynode *yparse_node(struct yload *L, yaml_event_t *ev, int depth);

static struct ynode *yparse_collection(struct yload *L, yaml_event_t *ev, int depth)
{
	bool map = ev->type == YAML_MAPPING_START_EVENT;
	yaml_event_type_t end = map ? YAML_MAPPING_END_EVENT : YAML_SEQUENCE_END_EVENT;
	struct ynode *y = ynode_new(map ? Y_MAP : Y_SEQ, &ev->start_mark);

	if (!y) {
		yerr(L, 0, 0, "out of memory");
		return NULL;
	}
	if (depth > MAX_DEPTH) {
		yerr(L, y->line, y->col, "nesting too deep (more than %d levels)", MAX_DEPTH);
		ynode_free(y);
		return NULL;
	}
	for (;;) {
		yaml_event_t e;
		struct ynode *k, *v;

		if (!ynext(L, &e))
			goto fail;
		if (e.type == end) {
			yaml_event_delete(&e);
			return y;
		}
		k = yparse_node(L, &e, depth + 1);
		yaml_event_delete(&e);
		if (!k)
			goto fail;
		if (!map) {
			if (ynode_push(y, k)) {
				ynode_free(k);
				goto fail;
			}
			continue;
		}
		if (!ynext(L, &e)) {
			ynode_free(k);
			goto fail;
		}
		v = yparse_node(L, &e, depth + 1);
		yaml_event_delete(&e);
		if (!v) {
			ynode_free(k);
			goto fail;
		}
		if (k->type != Y_SCALAR) {
			yerr(L, k->line, k->col, "a key must be a plain name, not a %s",
			     k->type == Y_MAP ? "mapping" : "list");
			ynode_free(k);
			ynode_free(v);
			continue;
		}
		for (size_t i = 0; i < y->n; i += 2)
			if (y->kids[i]->len == k->len && !memcmp(y->kids[i]->str, k->str, k->len)) {
				yerr(L, k->line, k->col,
				     "duplicate key '%s' (first at line %d): keep one of them",
				     k->str, y->kids[i]->line);
				ynode_free(k);
				ynode_free(v);
				k = NULL;
				break;
			}
		if (!k)
			continue;
		if (ynode_push(y, k)) {
			ynode_free(k);
			ynode_free(v);
			goto fail;
		}
		if (ynode_push(y, v)) {
			ynode_free(v);
			goto fail;
		}
	}
fail:
	ynode_free(y);
	return NULL;
}

static struct ynode *yparse_node(struct yload *L, yaml_event_t *ev, int depth)
{
	struct ynode *y;

	switch (ev->type) {
	case YAML_SCALAR_EVENT:
		y = ynode_new(Y_SCALAR, &ev->start_mark);
		if (!y)
			return NULL;
		y->len = ev->data.scalar.length;
		y->str = malloc(y->len + 1);
		if (!y->str) {
			ynode_free(y);
			return NULL;
		}
		memcpy(y->str, ev->data.scalar.value, y->len);
		y->str[y->len] = 0;
		y->plain = ev->data.scalar.style == YAML_PLAIN_SCALAR_STYLE;
		if (memchr(y->str, 0, y->len)) {
			yerr(L, y->line, y->col, "NUL character in a string");
			ynode_free(y);
			return NULL;
		}
		return y;
	case YAML_SEQUENCE_START_EVENT:
	case YAML_MAPPING_START_EVENT:
		return yparse_collection(L, ev, depth);
	case YAML_ALIAS_EVENT:
		yerr(L, (int)ev->start_mark.line + 1, (int)ev->start_mark.column + 1,
		     "aliases (*name) are not supported: write the value out");
		return NULL;
	default:
		yerr(L, (int)ev->start_mark.line + 1, (int)ev->start_mark.column + 1,
		     "unexpected YAML event");
		return NULL;
	}
}

/* One document, or NULL with a diagnostic. */
static struct ynode *yparse(const char *file, const char *buf, size_t len,
			    struct sbx_diags *d)
{
	struct yload L = { .file = file, .buf = buf, .len = len, .d = d };
	struct ynode *root = NULL;
	yaml_event_t ev;
	bool done = false;

	if (!yaml_parser_initialize(&L.p)) {
		yerr(&L, 0, 0, "out of memory");
		return NULL;
	}
	yaml_parser_set_input_string(&L.p, (const unsigned char *)buf, len);
	while (!done) {
		if (!ynext(&L, &ev))
			break;
		switch (ev.type) {
		case YAML_STREAM_START_EVENT:
		case YAML_DOCUMENT_END_EVENT:
			break;
		case YAML_STREAM_END_EVENT:
			done = true;
			break;
		case YAML_DOCUMENT_START_EVENT:
			if (root) {
				yerr(&L, (int)ev.start_mark.line + 1, (int)ev.start_mark.column + 1,
				     "a second YAML document: a policy is one document (remove this '---')");
				done = true;
			}
			break;
		default:
			root = yparse_node(&L, &ev, 0);
			if (!root)
				done = true;
			break;
		}
		yaml_event_delete(&ev);
	}
	yaml_parser_delete(&L.p);
	if (L.failed) {
		ynode_free(root);
		return NULL;
	}
	if (!root || (root->type == Y_SCALAR && root->plain && root->len == 0)) {
		sbx_diag_add(d, SBX_DIAG_ERROR, file, 1, 1, NULL,
			     "empty policy: start with `version: 1`");
		ynode_free(root);
		return NULL;
	}
	return root;
}

/* ---- per-file results before merging ------------------------------------------ */

struct trule {
	enum sbx_section sec;
	char *key;		/* canonical order within the section */
	struct sbx_rule_info info;
	struct sbx_frule f;
	struct sbx_nrule nr;
	struct sbx_crule c;
};

struct defpos {
	bool set;
	uint8_t verdict;
	int line, col;
	char *field;
};

struct fdoc {
	char *file;		/* display name */
	char *dir;		/* for relative extends; NULL: cwd */
	struct trule *r;
	size_t n, cap;
	struct defpos fdef[SBX_ACC_MAX];
	bool fdef_scalar;	/* one id for all three */
	char *freason;
	struct defpos ndef, cdef;
	char *nreason, *creason;
	char *extends;
	int ext_line, ext_col;
	int sandbox[3];		/* userns, memfd_exec, setuid_exec: -1 unset, 0 deny, 1 allow */
};

struct pctx {
	struct sbx_diags *d;
	const struct sbx_policy_env *env;
	struct fdoc *doc;
	bool err;		/* this file had an error */
};

static void frule_free(struct sbx_frule *f)
{
	for (size_t i = 0; i < f->n_pats; i++) {
		free(f->pats[i].text);
		free(f->pats[i].pos.file);
		free(f->pats[i].pos.field);
	}
	free(f->pats);
}

static void nrule_free(struct sbx_nrule *n)
{
	for (size_t i = 0; i < n->n_items; i++) {
		free(n->items[i].text);
		free(n->items[i].pos.file);
		free(n->items[i].pos.field);
	}
	free(n->items);
	free(n->ports);
}

static void crule_free(struct sbx_crule *c)
{
	for (size_t i = 0; i < c->n_cmds; i++)
		free(c->cmds[i]);
	free(c->cmds);
	for (size_t i = 0; i < c->n_args; i++)
		free(c->args[i]);
	free(c->args);
}

static void info_free(struct sbx_rule_info *r)
{
	free(r->pattern);
	free(r->expanded);
	free(r->reason);
	free(r->file);
}

static void trule_free(struct trule *t)
{
	free(t->key);
	info_free(&t->info);
	frule_free(&t->f);
	nrule_free(&t->nr);
	crule_free(&t->c);
}

static void fdoc_free(struct fdoc *doc)
{
	if (!doc)
		return;
	for (size_t i = 0; i < doc->n; i++)
		trule_free(&doc->r[i]);
	free(doc->r);
	for (int a = 0; a < SBX_ACC_MAX; a++)
		free(doc->fdef[a].field);
	free(doc->ndef.field);
	free(doc->cdef.field);
	free(doc->freason);
	free(doc->nreason);
	free(doc->creason);
	free(doc->extends);
	free(doc->file);
	free(doc->dir);
	free(doc);
}

/* ---- schema helpers ------------------------------------------------------------ */

static void perr(struct pctx *c, int line, int col, const char *field,
		 const char *fmt, ...) __attribute__((format(printf, 5, 6)));
static void perr(struct pctx *c, int line, int col, const char *field,
		 const char *fmt, ...)
{
	char msg[768];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	sbx_diag_add(c->d, SBX_DIAG_ERROR, c->doc->file, line, col, field, "%s", msg);
	c->err = true;
}

static void pwarn(struct pctx *c, int line, int col, const char *field,
		  const char *fmt, ...) __attribute__((format(printf, 5, 6)));
static void pwarn(struct pctx *c, int line, int col, const char *field,
		  const char *fmt, ...)
{
	char msg[768];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	sbx_diag_add(c->d, SBX_DIAG_WARNING, c->doc->file, line, col, field, "%s", msg);
}

static const char *ytype_name(const struct ynode *y)
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

/* Reject keys that are not in `allowed` (NULL-terminated). */
static void check_keys(struct pctx *c, const struct ynode *map, const char *field,
		       const char *const *allowed)
{
	for (size_t i = 0; i < map->n; i += 2) {
		const struct ynode *k = map->kids[i];
		const char *best = NULL;
		size_t bestd = 3;
		char list[256] = "", f[FIELD_MAX];
		bool ok = false;

		for (const char *const *a = allowed; *a; a++) {
			size_t dist;

			if (!strcmp(k->str, *a)) {
				ok = true;
				break;
			}
			dist = edit_distance(k->str, *a);
			if (dist < bestd) {
				bestd = dist;
				best = *a;
			}
			if (list[0])
				strncat(list, ", ", sizeof(list) - strlen(list) - 1);
			strncat(list, *a, sizeof(list) - strlen(list) - 1);
		}
		if (ok)
			continue;
		snprintf(f, sizeof(f), "%s%s%s", field, *field ? "." : "", k->str);
		if (best)
			perr(c, k->line, k->col, f, "unknown key '%s': did you mean '%s'?", k->str, best);
		else
			perr(c, k->line, k->col, f, "unknown key '%s': expected one of %s", k->str, list);
	}
}

static const struct ynode *map_get(const struct ynode *map, const char *key)
{
	for (size_t i = 0; i + 1 < map->n; i += 2)
		if (!strcmp(map->kids[i]->str, key))
			return map->kids[i + 1];
	return NULL;
}

static bool want_scalar(struct pctx *c, const struct ynode *y, const char *field,
			const char *what)
{
	if (y->type == Y_SCALAR)
		return true;
	perr(c, y->line, y->col, field, "expected %s, found %s", what, ytype_name(y));
	return false;
}

static bool want_map(struct pctx *c, const struct ynode *y, const char *field,
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

/* A string, or a list of strings: fill items[] (borrowed), with fields. */
struct sitem {
	const struct ynode *y;
	char field[FIELD_MAX];
};

static struct sitem *string_or_list(struct pctx *c, const struct ynode *y,
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
		snprintf(v->field, sizeof(v->field), "%s", field);
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

		snprintf(f, sizeof(f), "%s[%zu]", field, i);
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
		snprintf(v[i].field, sizeof(v[i].field), "%s", f);
	}
	*n = y->n;
	return v;
}

static int parse_verdict(struct pctx *c, const struct ynode *y, const char *field)
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

static char *parse_reason(struct pctx *c, const struct ynode *y, const char *field)
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

static struct sbx_srcpos mkpos(struct pctx *c, const struct ynode *y, int off,
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

/* Column of byte `off` of a scalar's text (quotes shift it by one). */
static int scol(const struct ynode *y, size_t off)
{
	return y->col + (y->plain ? 0 : 1) + (int)off;
}

/* ---- variables and path patterns ----------------------------------------------- */

/*
 * Expand a leading "~" and ${HOME} / ${PROJECT} anywhere. Errors point at
 * the offending byte. Returns malloc'd text or NULL (error reported).
 */
static char *expand_vars(struct pctx *c, const struct ynode *y, const char *field)
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
		if (o + n_ + 1 > cap) {					\
			char *t_;					\
			cap = (o + n_ + 1) * 2;				\
			t_ = realloc(out, cap);				\
			if (!t_) { free(out); return NULL; }		\
			out = t_;					\
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

static const char shapes_help[] =
	"supported: an absolute path (/dir, /dir/, /dir/** = the path and everything below), "
	"a name anywhere (NAME, **/NAME, lit*, *lit), or /proc/*/environ|mem|fd";

static bool has_var_start(const char *s)
{
	return s[0] == '~' || s[0] == '/' || !strncmp(s, "${", 2);
}

/* Parse one files path pattern. */
static int parse_path(struct pctx *c, const struct ynode *y, const char *field,
		      struct sbx_path_pat *out)
{
	const char *s = y->str;
	size_t len = strlen(s);
	const char *star;

	memset(out, 0, sizeof(*out));
	for (const char *d = strchr(s, '$'); d; d = strchr(d + 1, '$'))
		if (d[1] != '{') {
			perr(c, y->line, scol(y, (size_t)(d - s)), field,
			     "'$' must start ${HOME} or ${PROJECT} (braces required)");
			return -1;
		}
	if (!strncmp(s, "/proc/*/", 8)) {
		const char *rest = s + 8;
		size_t rl = strlen(rest);
		static const char *const names[] = { "environ", "mem", "fd" };

		if (rl >= 3 && !strcmp(rest + rl - 3, "/**"))
			rl -= 3;
		while (rl > 0 && rest[rl - 1] == '/')
			rl--;
		for (size_t i = 0; i < 3; i++)
			if (rl == strlen(names[i]) && !strncmp(rest, names[i], rl)) {
				out->shape = SBX_PAT_PROC;
				out->text = strdup(names[i]);
				out->pos = mkpos(c, y, 0, field);
				return out->text ? 0 : -1;
			}
		perr(c, y->line, scol(y, 6), field,
		     "unsupported /proc pattern: only /proc/*/environ, /proc/*/mem and "
		     "/proc/*/fd (files of processes outside the session) are supported");
		return -1;
	}
	if (has_var_start(s)) {
		/* absolute: the path and everything below it */
		size_t n = len;
		char *lit, *exp, *norm;

		if (n >= 3 && !strcmp(s + n - 3, "/**"))
			n -= 3;
		while (n > 1 && s[n - 1] == '/')
			n--;
		star = memchr(s, '*', n);
		if (star) {
			perr(c, y->line, scol(y, (size_t)(star - s)), field,
			     "unsupported pattern: '*' inside a path; %s", shapes_help);
			return -1;
		}
		if (n == 0)	/* the pattern was the root, all below */
			n = 1;
		lit = strndup(s, n);
		if (!lit)
			return -1;
		{
			struct ynode tmp = *y;

			tmp.str = lit;
			tmp.len = n;
			exp = expand_vars(c, &tmp, field);
		}
		free(lit);
		if (!exp)
			return -1;
		if (exp[0] != '/') {
			perr(c, y->line, y->col, field,
			     "expands to a relative path '%s': HOME and PROJECT must be absolute", exp);
			free(exp);
			return -1;
		}
		norm = sbx_path_normalize(exp);
		free(exp);
		if (!norm)
			return -1;
		out->shape = SBX_PAT_ANCHORED;
		out->text = norm;
		out->pos = mkpos(c, y, 0, field);
		return 0;
	}
	/* a name anywhere: optional leading double-star slash, NAME, optional trailing slash or slash-double-star */
	{
		const char *b = s, *e = s + len;
		size_t n, stars = 0;

		while (e - b >= 3 && !strncmp(b, "**/", 3))
			b += 3;
		if (e - b >= 3 && !strncmp(e - 3, "/**", 3))
			e -= 3;
		while (e > b && e[-1] == '/')
			e--;
		n = (size_t)(e - b);
		if (n == 0) {
			perr(c, y->line, y->col, field, "empty name; %s", shapes_help);
			return -1;
		}
		if (memchr(b, '/', n)) {
			perr(c, y->line, y->col, field,
			     "relative path '%s': write ${PROJECT}/%.*s for a path in the project, "
			     "or **/NAME for a name anywhere", s, (int)n, b);
			return -1;
		}
		for (size_t i = 0; i < n; i++)
			if (b[i] == '*')
				stars++;
		if (memchr(b, '$', n)) {
			const char *d = memchr(b, '$', n);

			perr(c, y->line, scol(y, (size_t)(d - s)), field,
			     "variables can only start a path (${HOME}/..., ${PROJECT}/...)");
			return -1;
		}
		if (n == 1 && b[0] == '*') {
			perr(c, y->line, scol(y, (size_t)(b - s)), field,
			     "'*' alone matches everything: set the section's default instead");
			return -1;
		}
		if (stars == 0) {
			if ((n == 1 && b[0] == '.') || (n == 2 && b[0] == '.' && b[1] == '.')) {
				perr(c, y->line, y->col, field, "'%.*s' is not a name", (int)n, b);
				return -1;
			}
			if (n > SBX_NAME_MAX) {
				perr(c, y->line, y->col, field, "name longer than %d bytes", SBX_NAME_MAX);
				return -1;
			}
			out->shape = SBX_PAT_NAME_EXACT;
			out->text = strndup(b, n);
		} else if (stars == 1 && (b[0] == '*' || b[n - 1] == '*')) {
			if (n - 1 > SBX_GLOB_LIT_MAX) {
				perr(c, y->line, y->col, field,
				     "the literal part of a wildcard name is at most %d bytes", SBX_GLOB_LIT_MAX);
				return -1;
			}
			if (b[0] == '*') {
				out->shape = SBX_PAT_NAME_SUFFIX;
				out->text = strndup(b + 1, n - 1);
			} else {
				out->shape = SBX_PAT_NAME_PREFIX;
				out->text = strndup(b, n - 1);
			}
		} else {
			/* point at the '*' that makes it unsupported: the one in
			 * the middle, or the second one */
			const char *bad = memchr(b, '*', n);

			if (stars > 1 && bad == b)
				bad = memchr(b + 1, '*', n - 1);
			perr(c, y->line, scol(y, (size_t)(bad - s)), field,
			     "unsupported pattern: one '*' only, at the start or the end of a name; %s",
			     shapes_help);
			return -1;
		}
		if (!out->text)
			return -1;
		out->pos = mkpos(c, y, (int)(b - s), field);
		return 0;
	}
}

/* ---- files ---------------------------------------------------------------------- */

static int parse_access(struct pctx *c, const struct ynode *y, const char *field,
			uint8_t *mask)
{
	size_t n;
	struct sitem *it = string_or_list(c, y, field, "an access class (read, write, exec or all)", &n);

	*mask = 0;
	if (!it)
		return -1;
	for (size_t i = 0; i < n; i++) {
		const char *s = it[i].y->str;

		if (!strcmp(s, "read"))
			*mask |= SBX_ACCBIT(SBX_ACC_READ);
		else if (!strcmp(s, "write"))
			*mask |= SBX_ACCBIT(SBX_ACC_WRITE);
		else if (!strcmp(s, "exec"))
			*mask |= SBX_ACCBIT(SBX_ACC_EXEC);
		else if (!strcmp(s, "all"))
			*mask |= 7;
		else {
			perr(c, it[i].y->line, it[i].y->col, it[i].field,
			     "unknown access '%s': use read, write, exec or all", s);
			free(it);
			return -1;
		}
	}
	free(it);
	return 0;
}

static struct trule *doc_new_rule(struct fdoc *doc)
{
	if (doc->n == doc->cap) {
		size_t cap = doc->cap ? doc->cap * 2 : 16;
		struct trule *v = realloc(doc->r, cap * sizeof(*v));

		if (!v)
			return NULL;
		doc->r = v;
		doc->cap = cap;
	}
	memset(&doc->r[doc->n], 0, sizeof(doc->r[0]));
	return &doc->r[doc->n++];
}

/* Append s to a growing string with a separator. */
static int sappend(char **dst, const char *sep, const char *s)
{
	size_t a = *dst ? strlen(*dst) : 0, b = strlen(s), l = *dst && a ? strlen(sep) : 0;
	char *t = realloc(*dst, a + l + b + 1);

	if (!t)
		return -1;
	if (l)
		memcpy(t + a, sep, l);
	memcpy(t + a + l, s, b + 1);
	*dst = t;
	return 0;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/*
 * Canonical sort key of a rule: its parts as written, list items sorted,
 * so that neither the order of rules nor of items changes numbering.
 */
static char *make_key(const char *const *parts, size_t n, const char *tail)
{
	char **v = malloc((n ? n : 1) * sizeof(*v));
	char *key = NULL;

	if (!v)
		return NULL;
	memcpy(v, parts, n * sizeof(*v));
	qsort(v, n, sizeof(*v), cmp_str);
	for (size_t i = 0; i < n; i++)
		if (sappend(&key, "\x1f", v[i])) {
			free(v);
			free(key);
			return NULL;
		}
	free(v);
	if (sappend(&key, "\x1e", tail)) {
		free(key);
		return NULL;
	}
	return key;
}

static bool under(const char *path, const char *dir)
{
	size_t n = strlen(dir);

	return !strncmp(path, dir, n) && (path[n] == 0 || path[n] == '/');
}

static bool has_component(const char *path, const char *name)
{
	size_t n = strlen(name);

	for (const char *p = path; (p = strstr(p, name)); p++)
		if (p > path && p[-1] == '/' && (p[n] == 0 || p[n] == '/'))
			return true;
	return false;
}

/* Warn about rules that the built-in protections override. */
static void warn_builtin(struct pctx *c, const struct sbx_path_pat *pat, uint8_t access,
			 uint8_t verdict, const struct ynode *y, const char *field)
{
	static const char *const pseudo[] = {
		"/sys/fs/bpf", "/sys/fs/cgroup", "/sys/kernel/security",
		"/sys/kernel/debug", "/sys/kernel/tracing",
	};
	const char *why = NULL;

	if (!(access & SBX_ACCBIT(SBX_ACC_WRITE)) || verdict == SBX_V_DENY)
		return;
	if (pat->shape == SBX_PAT_NAME_EXACT && !strcmp(pat->text, ".sandbox"))
		why = "writes under any .sandbox directory are always denied";
	if (pat->shape == SBX_PAT_ANCHORED) {
		if (has_component(pat->text, ".sandbox"))
			why = "writes under any .sandbox directory are always denied";
		for (size_t i = 0; i < sizeof(pseudo) / sizeof(pseudo[0]); i++)
			if (under(pat->text, pseudo[i]))
				why = "writes to bpffs, cgroupfs, securityfs, debugfs and tracefs are always denied";
	}
	if (why)
		pwarn(c, y->line, y->col, field,
		      "%s (built in): the write part of this rule never takes effect", why);
}

static void parse_file_rule(struct pctx *c, const struct ynode *y, const char *field)
{
	static const char *const keys[] = { "path", "access", "verdict", "reason", NULL };
	const struct ynode *yp, *ya, *yv, *yr;
	struct trule *t;
	struct sitem *it = NULL;
	size_t n = 0;
	uint8_t access = 7;
	int verdict = -1, bad = 0;
	char *reason = NULL, f[FIELD_MAX];
	bool proc_only_some = false;

	if (!want_map(c, y, field, "a rule (a mapping with path, verdict and reason)"))
		return;
	check_keys(c, y, field, keys);
	yp = map_get(y, "path");
	ya = map_get(y, "access");
	yv = map_get(y, "verdict");
	yr = map_get(y, "reason");
	snprintf(f, sizeof(f), "%s.path", field);
	if (!yp)
		perr(c, y->line, y->col, f, "missing: every files rule needs a path");
	else
		it = string_or_list(c, yp, f, "a path pattern", &n);
	snprintf(f, sizeof(f), "%s.access", field);
	if (ya && parse_access(c, ya, f, &access))
		bad = 1;
	snprintf(f, sizeof(f), "%s.verdict", field);
	if (!yv)
		perr(c, y->line, y->col, f, "missing: write verdict: allow, deny, ask or audit");
	else
		verdict = parse_verdict(c, yv, f);
	snprintf(f, sizeof(f), "%s.reason", field);
	if (!yr)
		perr(c, y->line, y->col, f,
		     "missing: every rule needs a reason (people see it when the rule fires)");
	else
		reason = parse_reason(c, yr, f);
	if (!it || bad || verdict < 0 || !reason) {
		free(it);
		free(reason);
		return;
	}
	t = doc_new_rule(c->doc);
	if (!t) {
		free(it);
		free(reason);
		return;
	}
	t->sec = SBX_SEC_FILES;
	t->f.access = access;
	t->f.verdict = (uint8_t)verdict;
	t->f.pats = calloc(n, sizeof(*t->f.pats));
	t->info.section = SBX_SEC_FILES;
	t->info.verdict = (uint8_t)verdict;
	t->info.access = access;
	t->info.reason = reason;
	t->info.file = strdup(c->doc->file);
	t->info.line = y->line;
	t->info.col = y->col;
	if (!t->f.pats) {
		free(it);
		return;
	}
	{
		const char **raw = calloc(n, sizeof(*raw));
		unsigned proc_seen = 0;
		char tail[64];

		for (size_t i = 0; i < n; i++) {
			if (raw)
				raw[i] = it[i].y->str;
			if (parse_path(c, it[i].y, it[i].field, &t->f.pats[t->f.n_pats]))
				continue;
			warn_builtin(c, &t->f.pats[t->f.n_pats], access, (uint8_t)verdict,
				     it[i].y, it[i].field);
			if (t->f.pats[t->f.n_pats].shape == SBX_PAT_PROC)
				proc_seen |= 1u << (t->f.pats[t->f.n_pats].text[0] == 'e' ? 0 :
						    t->f.pats[t->f.n_pats].text[0] == 'm' ? 1 : 2);
			sappend(&t->info.pattern, ", ", it[i].y->str);
			sappend(&t->info.expanded, ", ", t->f.pats[t->f.n_pats].text);
			t->f.n_pats++;
		}
		if (proc_seen && proc_seen != 7)
			proc_only_some = true;
		snprintf(tail, sizeof(tail), "%u\x1f%d", access, verdict);
		if (raw) {
			char *k = make_key(raw, n, tail);

			if (k && sappend(&k, "\x1e", reason) == 0)
				t->key = k;
			else
				free(k);
		}
		free(raw);
	}
	if (proc_only_some)
		pwarn(c, yp->line, yp->col, field,
		      "the kernel protects /proc/*/environ, /proc/*/mem and /proc/*/fd of "
		      "processes outside the session together: this rule covers all three");
	free(it);
}

static void parse_default_files(struct pctx *c, const struct ynode *y, const char *field)
{
	static const char *const keys[] = { "read", "write", "exec", NULL };

	if (y->type == Y_SCALAR) {
		int v = parse_verdict(c, y, field);

		if (v < 0)
			return;
		c->doc->fdef_scalar = true;
		for (int a = 0; a < SBX_ACC_MAX; a++) {
			c->doc->fdef[a].set = true;
			c->doc->fdef[a].verdict = (uint8_t)v;
			c->doc->fdef[a].line = y->line;
			c->doc->fdef[a].col = y->col;
			c->doc->fdef[a].field = strdup(field);
		}
		return;
	}
	if (y->type != Y_MAP) {
		perr(c, y->line, y->col, field,
		     "expected a verdict or {read: V, write: V, exec: V}, found a list");
		return;
	}
	check_keys(c, y, field, keys);
	for (int a = 0; a < SBX_ACC_MAX; a++) {
		const struct ynode *v = map_get(y, sbx_access_name(a));
		char f[FIELD_MAX];
		int vv;

		if (!v)
			continue;
		snprintf(f, sizeof(f), "%s.%s", field, sbx_access_name(a));
		vv = parse_verdict(c, v, f);
		if (vv < 0)
			continue;
		c->doc->fdef[a].set = true;
		c->doc->fdef[a].verdict = (uint8_t)vv;
		c->doc->fdef[a].line = v->line;
		c->doc->fdef[a].col = v->col;
		c->doc->fdef[a].field = strdup(f);
	}
}

static void parse_section_default(struct pctx *c, const struct ynode *y, const char *field,
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

static void parse_rules(struct pctx *c, const struct ynode *y, const char *field,
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

		snprintf(f, sizeof(f), "%s[%zu]", field, i);
		fn(c, y->kids[i], f);
	}
}

static char *parse_opt_reason(struct pctx *c, const struct ynode *sec, const char *field)
{
	const struct ynode *y = map_get(sec, "default_reason");
	char f[FIELD_MAX];

	if (!y)
		return NULL;
	snprintf(f, sizeof(f), "%s.default_reason", field);
	return parse_reason(c, y, f);
}

/* network: and commands: share their frame: one default verdict, its
 * reason, and the rules (files: has a default per access class) */
static void parse_verdict_section(struct pctx *c, const struct ynode *y, const char *name,
				  const char *default_field, const char *rules_field,
				  struct defpos *def, char **reason,
				  void (*rule)(struct pctx *, const struct ynode *, const char *))
{
	static const char *const keys[] = { "default", "default_reason", "rules", NULL };
	const struct ynode *v;

	if (!want_map(c, y, name, "a mapping with default and rules"))
		return;
	check_keys(c, y, name, keys);
	if ((v = map_get(y, "default")))
		parse_section_default(c, v, default_field, def);
	*reason = parse_opt_reason(c, y, name);
	if ((v = map_get(y, "rules")))
		parse_rules(c, v, rules_field, rule);
}

static void parse_files(struct pctx *c, const struct ynode *y)
{
	static const char *const keys[] = { "default", "default_reason", "rules", NULL };
	const struct ynode *v;

	if (!want_map(c, y, "files", "a mapping with default and rules"))
		return;
	check_keys(c, y, "files", keys);
	if ((v = map_get(y, "default")))
		parse_default_files(c, v, "files.default");
	c->doc->freason = parse_opt_reason(c, y, "files");
	if ((v = map_get(y, "rules")))
		parse_rules(c, v, "files.rules", parse_file_rule);
}

/* ---- network -------------------------------------------------------------------- */

static bool valid_hostname(const char *s)
{
	size_t n = strlen(s);

	if (n == 0 || n > 253)
		return false;
	for (size_t i = 0; i < n; i++) {
		unsigned char ch = (unsigned char)s[i];

		if (!((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
		      (ch >= '0' && ch <= '9') || ch == '-' || ch == '.' || ch == '_'))
			return false;
	}
	return s[0] != '.' && s[0] != '-';
}

static void mask_addr(uint8_t *a, int bytes, int bits)
{
	for (int i = 0; i < bytes; i++) {
		int keep = bits - i * 8;

		if (keep <= 0)
			a[i] = 0;
		else if (keep < 8)
			a[i] &= (uint8_t)(0xff << (8 - keep));
	}
}

static int parse_cidr(struct pctx *c, const struct ynode *y, const char *field,
		      struct sbx_net_item *out)
{
	char buf[128];
	const char *s = y->str, *slash = strchr(s, '/');
	size_t alen = slash ? (size_t)(slash - s) : strlen(s);
	int maxbits, bits;
	uint8_t addr[16] = { 0 }, masked[16];

	if (!strcmp(s, "resolvers")) {
		out->kind = SBX_NI_RESOLVERS;
		out->text = strdup(s);
		return out->text ? 0 : -1;
	}
	if (alen >= sizeof(buf))
		goto bad;
	memcpy(buf, s, alen);
	buf[alen] = 0;
	if (inet_pton(AF_INET, buf, addr) == 1) {
		out->family = AF_INET;
		maxbits = 32;
	} else if (inet_pton(AF_INET6, buf, addr) == 1) {
		out->family = AF_INET6;
		maxbits = 128;
	} else {
		goto bad;
	}
	bits = maxbits;
	if (slash) {
		const char *b = slash + 1;
		char *end;
		long v;

		if (!*b || *b < '0' || *b > '9')
			goto bad;
		errno = 0;
		v = strtol(b, &end, 10);
		if (*end || errno || v < 0 || v > maxbits) {
			perr(c, y->line, scol(y, (size_t)(b - s)), field,
			     "prefix length /%s is out of range: use 0-%d for %s", b, maxbits,
			     maxbits == 32 ? "IPv4" : "IPv6");
			return -1;
		}
		bits = (int)v;
	}
	memcpy(masked, addr, 16);
	mask_addr(masked, maxbits / 8, bits);
	if (memcmp(masked, addr, (size_t)maxbits / 8)) {
		char net[INET6_ADDRSTRLEN];

		inet_ntop(out->family, masked, net, sizeof(net));
		perr(c, y->line, y->col, field,
		     "host bits set: %s has bits beyond /%d; write %s/%d for the network or %s/%d for the host",
		     s, bits, net, bits, buf, maxbits);
		return -1;
	}
	/* the kernel checks v4-mapped destinations as IPv4: store them so */
	if (out->family == AF_INET6 && bits >= 96) {
		static const uint8_t mapped[12] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff };

		if (!memcmp(addr, mapped, 12)) {
			out->family = AF_INET;
			memmove(addr, addr + 12, 4);
			memset(addr + 4, 0, 12);
			bits -= 96;
		}
	}
	out->kind = SBX_NI_CIDR;
	memcpy(out->addr, addr, 16);
	out->bits = (uint8_t)bits;
	out->text = strdup(s);
	return out->text ? 0 : -1;
bad:
	perr(c, y->line, y->col, field,
	     "bad CIDR '%s': write an IPv4 or IPv6 address with an optional /bits "
	     "(10.0.0.0/8, fd00::/8, 192.0.2.1), or the word resolvers", s);
	return -1;
}

static int parse_port_one(struct pctx *c, const struct ynode *y, const char *field,
			  struct sbx_port_range *out)
{
	const char *s = y->str, *dash = strchr(s, '-');
	unsigned long lo, hi;
	char *end;

	if (!*s || *s < '0' || *s > '9')
		goto bad;
	errno = 0;
	lo = strtoul(s, &end, 10);
	if (errno || (dash ? end != dash : *end != 0))
		goto bad;
	if (dash) {
		if (dash[1] < '0' || dash[1] > '9')
			goto bad;
		hi = strtoul(dash + 1, &end, 10);
		if (errno || *end)
			goto bad;
		if (lo > 65535 || hi > 65535) {
			perr(c, y->line, y->col, field, "port range '%s' is out of range: ports are 0-65535", s);
			return -1;
		}
		if (lo > hi) {
			perr(c, y->line, y->col, field,
			     "bad port range '%s': write LOW-HIGH with LOW <= HIGH", s);
			return -1;
		}
	} else {
		hi = lo;
		if (lo < 1 || lo > 65535) {
			perr(c, y->line, y->col, field, "port %s is out of range: use 1-65535", s);
			return -1;
		}
	}
	out->lo = (uint16_t)lo;
	out->hi = (uint16_t)hi;
	return 0;
bad:
	perr(c, y->line, y->col, field,
	     "bad port '%s': write a number (443), a range (\"8000-8999\") or a list of them", s);
	return -1;
}

static void parse_net_rule(struct pctx *c, const struct ynode *y, const char *field)
{
	static const char *const keys[] = { "host", "cidr", "port", "protocol", "verdict", "reason", NULL };
	const struct ynode *yh, *yc, *yp, *ypr, *yv, *yr;
	struct sitem *hs = NULL, *cs = NULL, *ps = NULL;
	size_t nh = 0, nc = 0, np = 0;
	int verdict = -1, proto = 0, bad = 0;
	char *reason = NULL, f[FIELD_MAX];
	struct trule *t;

	if (!want_map(c, y, field, "a rule (a mapping with host or cidr, verdict and reason)"))
		return;
	check_keys(c, y, field, keys);
	yh = map_get(y, "host");
	yc = map_get(y, "cidr");
	yp = map_get(y, "port");
	ypr = map_get(y, "protocol");
	yv = map_get(y, "verdict");
	yr = map_get(y, "reason");
	if (!yh && !yc) {
		snprintf(f, sizeof(f), "%s.host", field);
		perr(c, y->line, y->col, f,
		     "missing: a network rule needs host: or cidr: (for any address write "
		     "cidr: [0.0.0.0/0, \"::/0\"])");
		bad = 1;
	}
	snprintf(f, sizeof(f), "%s.host", field);
	if (yh && !(hs = string_or_list(c, yh, f, "a host name", &nh)))
		bad = 1;
	snprintf(f, sizeof(f), "%s.cidr", field);
	if (yc && !(cs = string_or_list(c, yc, f, "a CIDR", &nc)))
		bad = 1;
	snprintf(f, sizeof(f), "%s.port", field);
	if (yp && !(ps = string_or_list(c, yp, f, "a port", &np)))
		bad = 1;
	snprintf(f, sizeof(f), "%s.protocol", field);
	if (ypr && want_scalar(c, ypr, f, "tcp, udp or any")) {
		if (!strcmp(ypr->str, "tcp"))
			proto = 6;
		else if (!strcmp(ypr->str, "udp"))
			proto = 17;
		else if (!strcmp(ypr->str, "any"))
			proto = 0;
		else {
			perr(c, ypr->line, ypr->col, f, "unknown protocol '%s': use tcp, udp or any", ypr->str);
			bad = 1;
		}
	} else if (ypr) {
		bad = 1;
	}
	snprintf(f, sizeof(f), "%s.verdict", field);
	if (!yv)
		perr(c, y->line, y->col, f, "missing: write verdict: allow, deny, ask or audit");
	else
		verdict = parse_verdict(c, yv, f);
	snprintf(f, sizeof(f), "%s.reason", field);
	if (!yr)
		perr(c, y->line, y->col, f,
		     "missing: every rule needs a reason (people see it when the rule fires)");
	else
		reason = parse_reason(c, yr, f);
	if (bad || verdict < 0 || !reason)
		goto out;
	t = doc_new_rule(c->doc);
	if (!t)
		goto out;
	t->sec = SBX_SEC_NETWORK;
	t->nr.verdict = (uint8_t)verdict;
	t->nr.proto = (uint8_t)proto;
	t->nr.items = calloc(nh + nc, sizeof(*t->nr.items));
	t->nr.ports = np ? calloc(np, sizeof(*t->nr.ports)) : NULL;
	t->info.section = SBX_SEC_NETWORK;
	t->info.verdict = (uint8_t)verdict;
	t->info.reason = reason;
	reason = NULL;
	t->info.file = strdup(c->doc->file);
	t->info.line = y->line;
	t->info.col = y->col;
	if (!t->nr.items || (np && !t->nr.ports))
		goto out;
	for (size_t i = 0; i < nh; i++) {
		struct sbx_net_item *ni = &t->nr.items[t->nr.n_items];
		const char *h = hs[i].y->str;
		uint8_t tmp[16];

		if (strchr(h, '*')) {
			perr(c, hs[i].y->line, hs[i].y->col, hs[i].field,
			     "wildcard host names are not supported: list each host (names are "
			     "resolved when the policy is compiled)");
			continue;
		}
		if (!valid_hostname(h) && inet_pton(AF_INET6, h, tmp) != 1) {
			perr(c, hs[i].y->line, hs[i].y->col, hs[i].field,
			     "'%s' is not a host name: write a DNS name (example.com) or an address; "
			     "for networks use cidr:", h);
			continue;
		}
		ni->kind = SBX_NI_HOST;
		ni->text = strdup(h);
		ni->pos = mkpos(c, hs[i].y, 0, hs[i].field);
		t->nr.n_items++;
		sappend(&t->info.pattern, ", ", h);
	}
	for (size_t i = 0; i < nc; i++) {
		struct sbx_net_item *ni = &t->nr.items[t->nr.n_items];

		if (parse_cidr(c, cs[i].y, cs[i].field, ni))
			continue;
		ni->pos = mkpos(c, cs[i].y, 0, cs[i].field);
		t->nr.n_items++;
		sappend(&t->info.pattern, ", ", cs[i].y->str);
	}
	for (size_t i = 0; i < np; i++) {
		if (parse_port_one(c, ps[i].y, ps[i].field, &t->nr.ports[t->nr.n_ports]))
			continue;
		t->nr.n_ports++;
	}
	{
		char tail[64], *ports = NULL;
		const char **raw = calloc(nh + nc + 1, sizeof(*raw));
		size_t k = 0;

		for (size_t i = 0; i < np; i++)
			sappend(&ports, ",", ps[i].y->str);
		if (ports) {
			sappend(&t->info.pattern, " port ", ports);
		}
		if (proto)
			sappend(&t->info.pattern, " ", proto == 6 ? "tcp" : "udp");
		snprintf(tail, sizeof(tail), "%d\x1f%d\x1f", proto, verdict);
		if (raw) {
			for (size_t i = 0; i < nh; i++)
				raw[k++] = hs[i].y->str;
			for (size_t i = 0; i < nc; i++)
				raw[k++] = cs[i].y->str;
			t->key = make_key(raw, k, tail);
			if (t->key && ports)
				sappend(&t->key, "", ports);
			if (t->key)
				sappend(&t->key, "\x1e", t->info.reason);
		}
		free(raw);
		free(ports);
	}
out:
	free(reason);
	free(hs);
	free(cs);
	free(ps);
}

static void parse_network(struct pctx *c, const struct ynode *y)
{
	parse_verdict_section(c, y, "network", "network.default", "network.rules", &c->doc->ndef,
			      &c->doc->nreason, parse_net_rule);
}

/* ---- commands ------------------------------------------------------------------- */

static void parse_cmd_rule(struct pctx *c, const struct ynode *y, const char *field)
{
	static const char *const keys[] = { "command", "args", "verdict", "reason", NULL };
	const struct ynode *yc, *ya, *yv, *yr;
	struct sitem *cs = NULL, *as = NULL;
	size_t nc = 0, na = 0;
	int verdict = -1, bad = 0;
	char *reason = NULL, f[FIELD_MAX];
	struct trule *t;

	if (!want_map(c, y, field, "a rule (a mapping with command, verdict and reason)"))
		return;
	check_keys(c, y, field, keys);
	yc = map_get(y, "command");
	ya = map_get(y, "args");
	yv = map_get(y, "verdict");
	yr = map_get(y, "reason");
	snprintf(f, sizeof(f), "%s.command", field);
	if (!yc) {
		perr(c, y->line, y->col, f, "missing: write command: NAME (or a list, or an absolute path)");
		bad = 1;
	} else if (!(cs = string_or_list(c, yc, f, "a command name or absolute path", &nc))) {
		bad = 1;
	}
	snprintf(f, sizeof(f), "%s.args", field);
	if (ya && !(as = string_or_list(c, ya, f, "an argument glob", &na)))
		bad = 1;
	snprintf(f, sizeof(f), "%s.verdict", field);
	if (!yv)
		perr(c, y->line, y->col, f, "missing: write verdict: allow, deny, ask or audit");
	else
		verdict = parse_verdict(c, yv, f);
	snprintf(f, sizeof(f), "%s.reason", field);
	if (!yr)
		perr(c, y->line, y->col, f,
		     "missing: every rule needs a reason (people see it when the rule fires)");
	else
		reason = parse_reason(c, yr, f);
	if (bad || verdict < 0 || !reason)
		goto out;
	t = doc_new_rule(c->doc);
	if (!t)
		goto out;
	t->sec = SBX_SEC_COMMANDS;
	t->c.verdict = (uint8_t)verdict;
	t->c.cmds = calloc(nc, sizeof(char *));
	t->c.args = na ? calloc(na, sizeof(char *)) : NULL;
	t->info.section = SBX_SEC_COMMANDS;
	t->info.verdict = (uint8_t)verdict;
	t->info.reason = reason;
	reason = NULL;
	t->info.file = strdup(c->doc->file);
	t->info.line = y->line;
	t->info.col = y->col;
	if (!t->c.cmds || (na && !t->c.args))
		goto out;
	for (size_t i = 0; i < nc; i++) {
		const struct ynode *ci = cs[i].y;
		char *e;

		if (strchr(ci->str, '*') || strchr(ci->str, '?') || strchr(ci->str, '[')) {
			perr(c, ci->line, ci->col, cs[i].field,
			     "command names are matched exactly: no wildcards (use args: for arguments)");
			continue;
		}
		if (strchr(ci->str, ' ')) {
			perr(c, ci->line, ci->col, cs[i].field,
			     "a command is one word: put its arguments in args: (e.g. command: git, "
			     "args: \"push*--force*\")");
			continue;
		}
		if (has_var_start(ci->str)) {
			char *n;

			e = expand_vars(c, ci, cs[i].field);
			if (!e)
				continue;
			n = sbx_path_normalize(e);
			free(e);
			e = n;
		} else if (strchr(ci->str, '/')) {
			perr(c, ci->line, ci->col, cs[i].field,
			     "relative command path: write a basename (git) or an absolute path (/usr/bin/git)");
			continue;
		} else {
			e = strdup(ci->str);
		}
		if (!e)
			continue;
		t->c.cmds[t->c.n_cmds++] = e;
		sappend(&t->info.pattern, ", ", ci->str);
		sappend(&t->info.expanded, ", ", e);
	}
	for (size_t i = 0; i < na; i++) {
		t->c.args[t->c.n_args] = strdup(as[i].y->str);
		if (t->c.args[t->c.n_args])
			t->c.n_args++;
	}
	{
		char *args = NULL, tail[32];
		const char **raw = calloc(nc + 1, sizeof(*raw));

		for (size_t i = 0; i < na; i++)
			sappend(&args, " | ", as[i].y->str);
		if (args)
			sappend(&t->info.pattern, " ", args);
		snprintf(tail, sizeof(tail), "%d\x1f", verdict);
		if (raw) {
			for (size_t i = 0; i < nc; i++)
				raw[i] = cs[i].y->str;
			t->key = make_key(raw, nc, tail);
			if (t->key && args)
				sappend(&t->key, "", args);
			if (t->key)
				sappend(&t->key, "\x1e", t->info.reason);
		}
		free(raw);
		free(args);
	}
out:
	free(reason);
	free(cs);
	free(as);
}

static void parse_commands(struct pctx *c, const struct ynode *y)
{
	parse_verdict_section(c, y, "commands", "commands.default", "commands.rules",
			      &c->doc->cdef, &c->doc->creason, parse_cmd_rule);
}

/*
 * sandbox: switches for the built-in protections that some tools need
 * off. Each is allow or deny; all default to deny.
 */
static const char *const sandbox_keys[] = { "userns", "memfd_exec", "setuid_exec", NULL };
static const uint32_t sandbox_flags[] = {
	SBX_PF_ALLOW_USERNS, SBX_PF_ALLOW_MEMFD_EXEC, SBX_PF_ALLOW_SETUID,
};

static void parse_sandbox(struct pctx *c, const struct ynode *y)
{
	if (!want_map(c, y, "sandbox", "a mapping of userns, memfd_exec, setuid_exec to allow or deny"))
		return;
	check_keys(c, y, "sandbox", sandbox_keys);
	for (int i = 0; sandbox_keys[i]; i++) {
		const struct ynode *v = map_get(y, sandbox_keys[i]);
		char field[64];

		if (!v)
			continue;
		snprintf(field, sizeof(field), "sandbox.%s", sandbox_keys[i]);
		if (!want_scalar(c, v, field, "allow or deny"))
			continue;
		if (!strcmp(v->str, "allow"))
			c->doc->sandbox[i] = 1;
		else if (!strcmp(v->str, "deny"))
			c->doc->sandbox[i] = 0;
		else
			perr(c, v->line, v->col, field, "'%s': write allow or deny", v->str);
	}
}

/* ---- the top level ---------------------------------------------------------------- */

static void parse_root(struct pctx *c, const struct ynode *root)
{
	static const char *const keys[] = {
		"version", "name", "description", "extends", "files", "network", "commands",
		"sandbox", NULL
	};
	const struct ynode *v;

	if (root->type != Y_MAP) {
		perr(c, root->line, root->col, NULL,
		     "a policy is a mapping (key: value lines starting with `version: 1`), not %s",
		     ytype_name(root));
		return;
	}
	v = map_get(root, "version");
	if (!v) {
		perr(c, root->line, root->col, "version", "missing: start the policy with `version: 1`");
	} else if (want_scalar(c, v, "version", "the number 1") && strcmp(v->str, "1")) {
		perr(c, v->line, v->col, "version",
		     "unsupported version '%s': this bpfsbx reads version 1", v->str);
	}
	check_keys(c, root, "", keys);
	if ((v = map_get(root, "name")))
		want_scalar(c, v, "name", "a name");
	if ((v = map_get(root, "description")))
		want_scalar(c, v, "description", "text");
	if ((v = map_get(root, "extends")) && want_scalar(c, v, "extends",
			"a shipped policy name or a path")) {
		if (v->len == 0)
			perr(c, v->line, v->col, "extends", "empty: write a shipped policy name (agent-default) or a path");
		else {
			c->doc->extends = strdup(v->str);
			c->doc->ext_line = v->line;
			c->doc->ext_col = v->col;
		}
	}
	if ((v = map_get(root, "files")))
		parse_files(c, v);
	if ((v = map_get(root, "network")))
		parse_network(c, v);
	if ((v = map_get(root, "commands")))
		parse_commands(c, v);
	if ((v = map_get(root, "sandbox")))
		parse_sandbox(c, v);
}

/* ---- files, extends and merging ----------------------------------------------------- */

struct loader {
	const struct sbx_policy_env *env;
	struct sbx_diags *d;
	char *stack[MAX_EXTENDS + 2];	/* realpaths being loaded */
	size_t depth;
	struct fdoc *docs[MAX_EXTENDS + 2];	/* root ancestor first once done */
	size_t ndocs;
	char *sources[MAX_EXTENDS + 2];
	size_t nsources;
	bool failed;
};

static char *read_file(const char *path, size_t *len, int *err)
{
	FILE *f = fopen(path, "re");
	char *buf = NULL;
	size_t cap = 0, n = 0;

	*err = 0;
	if (!f) {
		*err = errno;
		return NULL;
	}
	{
		/* a FIFO or a device would block or never end */
		struct stat st;

		if (fstat(fileno(f), &st) || !S_ISREG(st.st_mode)) {
			*err = EINVAL;
			fclose(f);
			return NULL;
		}
	}
	for (;;) {
		size_t r;

		if (n + 4096 + 1 > cap) {
			char *t;

			cap = cap ? cap * 2 : 8192;
			t = realloc(buf, cap);
			if (!t) {
				*err = ENOMEM;
				goto fail;
			}
			buf = t;
		}
		r = fread(buf + n, 1, cap - n - 1, f);
		n += r;
		if (n > MAX_FILE_SIZE) {
			*err = EFBIG;
			goto fail;
		}
		if (r == 0) {
			if (ferror(f)) {
				*err = errno ? errno : EIO;
				goto fail;
			}
			break;
		}
	}
	fclose(f);
	buf[n] = 0;
	*len = n;
	return buf;
fail:
	fclose(f);
	free(buf);
	return NULL;
}

static char *dir_of(const char *path)
{
	const char *sl = strrchr(path, '/');

	if (!sl)
		return NULL;
	if (sl == path)
		return strdup("/");
	return strndup(path, (size_t)(sl - path));
}

static bool shipped_name_ok(const char *s)
{
	if (!*s)
		return false;
	for (; *s; s++)
		if (!((*s >= 'a' && *s <= 'z') || (*s >= '0' && *s <= '9') || *s == '-' || *s == '_'))
			return false;
	return true;
}

static char *exe_shipped_dir(void)
{
	char exe[PATH_MAX], *d, *p = NULL;
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);

	if (n <= 0)
		return NULL;
	exe[n] = 0;
	d = dir_of(exe);
	if (d && asprintf(&p, "%s/../policy/shipped", d) < 0)
		p = NULL;
	free(d);
	return p;
}

/* Find shipped policy NAME; NULL if none. *looked gets the dirs tried. */
static char *find_shipped(const struct sbx_policy_env *env, const char *name, char **looked)
{
	char *dirs[3] = { NULL, NULL, NULL };
	char *found = NULL;
	size_t nd = 0;

	if (env->shipped_dir) {
		dirs[nd++] = strdup(env->shipped_dir);
	} else {
		const char *e = getenv("BPFSBX_POLICY_DIR");

		if (e && *e)
			dirs[nd++] = strdup(e);
		dirs[nd++] = exe_shipped_dir();
		dirs[nd++] = strdup(SBX_SHIPPED_POLICY_DIR);
	}
	for (size_t i = 0; i < nd; i++) {
		char *p = NULL;

		if (!dirs[i])
			continue;
		sappend(looked, ", ", dirs[i]);
		if (!found && asprintf(&p, "%s/%s.yaml", dirs[i], name) >= 0) {
			if (access(p, R_OK) == 0)
				found = p;
			else
				free(p);
		}
	}
	for (size_t i = 0; i < nd; i++)
		free(dirs[i]);
	return found;
}

static struct fdoc *load_one(struct loader *ld, const char *file, const char *dir,
			     const char *buf, size_t len);

static void load_extends(struct loader *ld, struct fdoc *doc)
{
	char *path = NULL, *looked = NULL, *rp, *buf;
	const char *x = doc->extends;
	size_t len;
	int err;

	if (!strchr(x, '/') && !strstr(x, ".yaml") && !strstr(x, ".yml")) {
		if (!shipped_name_ok(x)) {
			sbx_diag_add(ld->d, SBX_DIAG_ERROR, doc->file, doc->ext_line, doc->ext_col,
				     "extends", "'%s' is not a shipped policy name (agent-default, "
				     "strict, audit-only) nor a path (write ./%s.yaml)", x, x);
			return;
		}
		path = find_shipped(ld->env, x, &looked);
		if (!path) {
			sbx_diag_add(ld->d, SBX_DIAG_ERROR, doc->file, doc->ext_line, doc->ext_col,
				     "extends", "unknown shipped policy '%s' (looked in %s): use "
				     "agent-default, strict or audit-only, or a path", x,
				     looked ? looked : "nowhere");
			free(looked);
			return;
		}
		free(looked);
	} else if (x[0] == '/') {
		path = strdup(x);
	} else if (doc->dir) {
		if (asprintf(&path, "%s/%s", doc->dir, x) < 0)
			path = NULL;
	} else {
		path = strdup(x);
	}
	if (!path)
		return;
	rp = realpath(path, NULL);
	if (!rp) {
		sbx_diag_add(ld->d, SBX_DIAG_ERROR, doc->file, doc->ext_line, doc->ext_col,
			     "extends", "cannot open '%s' (%s): %s", x, path, strerror(errno));
		free(path);
		return;
	}
	for (size_t i = 0; i < ld->depth; i++)
		if (ld->stack[i] && !strcmp(ld->stack[i], rp)) {
			sbx_diag_add(ld->d, SBX_DIAG_ERROR, doc->file, doc->ext_line, doc->ext_col,
				     "extends", "extends cycle: '%s' is already being loaded "
				     "(a policy cannot extend itself, directly or through others)", path);
			free(rp);
			free(path);
			return;
		}
	if (ld->depth >= MAX_EXTENDS) {
		sbx_diag_add(ld->d, SBX_DIAG_ERROR, doc->file, doc->ext_line, doc->ext_col,
			     "extends", "extends chain longer than %d files", MAX_EXTENDS);
		free(rp);
		free(path);
		return;
	}
	buf = read_file(rp, &len, &err);
	if (!buf) {
		sbx_diag_add(ld->d, SBX_DIAG_ERROR, doc->file, doc->ext_line, doc->ext_col,
			     "extends", "cannot read '%s': %s", path,
			     err == EFBIG ? "larger than 1 MiB" :
			     err == EINVAL ? "not a regular file" : strerror(err));
		free(rp);
		free(path);
		return;
	}
	ld->stack[ld->depth++] = rp;
	{
		char *pdir = dir_of(rp);

		load_one(ld, path, pdir, buf, len);
		free(pdir);
	}
	ld->depth--;
	if (ld->nsources < sizeof(ld->sources) / sizeof(ld->sources[0]))
		ld->sources[ld->nsources++] = rp;
	else
		free(rp);
	ld->stack[ld->depth] = NULL;
	free(buf);
	free(path);
}

/* Parse one file; its parents are loaded first and land before it in docs[]. */
static struct fdoc *load_one(struct loader *ld, const char *file, const char *dir,
			     const char *buf, size_t len)
{
	struct fdoc *doc = calloc(1, sizeof(*doc));
	struct pctx c = { .d = ld->d, .env = ld->env, .doc = doc };
	struct ynode *root;

	if (!doc) {
		ld->failed = true;
		return NULL;
	}
	doc->sandbox[0] = doc->sandbox[1] = doc->sandbox[2] = -1;
	doc->file = strdup(file);
	doc->dir = dir ? strdup(dir) : NULL;
	root = yparse(file, buf, len, ld->d);
	if (!root) {
		ld->failed = true;
		fdoc_free(doc);
		return NULL;
	}
	parse_root(&c, root);
	ynode_free(root);
	if (c.err)
		ld->failed = true;
	if (doc->extends)
		load_extends(ld, doc);
	if (ld->ndocs < sizeof(ld->docs) / sizeof(ld->docs[0]))
		ld->docs[ld->ndocs++] = doc;
	else
		fdoc_free(doc);
	return doc;
}

static int cmp_trule(const void *a, const void *b)
{
	const struct trule *x = a, *y = b;
	int r;

	if (x->sec != y->sec)
		return (int)x->sec - (int)y->sec;
	r = strcmp(x->key ? x->key : "", y->key ? y->key : "");
	if (r)
		return r;
	/* identical rules: their written position orders them */
	if (x->info.line != y->info.line)
		return x->info.line - y->info.line;
	return x->info.col - y->info.col;
}

static struct sbx_rule_info *add_info(struct sbx_policy *p)
{
	struct sbx_rule_info *v = realloc(p->rules, (p->n_rules + 1) * sizeof(*v));

	if (!v)
		return NULL;
	p->rules = v;
	memset(&v[p->n_rules], 0, sizeof(v[0]));
	v[p->n_rules].id = (uint32_t)(p->n_rules + 1);
	return &v[p->n_rules++];
}

static int add_default(struct sbx_policy *p, struct fdoc *doc, enum sbx_section sec,
		       const struct defpos *dp, uint8_t access, const char *reason,
		       uint32_t *id)
{
	struct sbx_rule_info *r = add_info(p);

	if (!r)
		return -1;
	r->section = sec;
	r->verdict = dp->verdict;
	r->access = access;
	r->pattern = strdup(dp->field ? dp->field : "default");
	r->reason = reason ? strdup(reason) : NULL;
	r->file = strdup(doc->file);
	r->line = dp->line;
	r->col = dp->col;
	r->is_default = true;
	*id = r->id;
	return 0;
}

/* Move a section's rules of doc into p, numbering them. */
static int take_rules(struct sbx_policy *p, struct fdoc *doc, enum sbx_section sec)
{
	for (size_t i = 0; i < doc->n; i++) {
		struct trule *t = &doc->r[i];
		struct sbx_rule_info *r;

		if (t->sec != sec)
			continue;
		r = add_info(p);
		if (!r)
			return -1;
		t->info.id = r->id;
		*r = t->info;
		memset(&t->info, 0, sizeof(t->info));
		if (sec == SBX_SEC_FILES) {
			struct sbx_frule *v = realloc(p->frules, (p->n_frules + 1) * sizeof(*v));

			if (!v)
				return -1;
			p->frules = v;
			t->f.id = r->id;
			v[p->n_frules++] = t->f;
			memset(&t->f, 0, sizeof(t->f));
		} else if (sec == SBX_SEC_NETWORK) {
			struct sbx_nrule *v = realloc(p->nrules, (p->n_nrules + 1) * sizeof(*v));

			if (!v)
				return -1;
			p->nrules = v;
			t->nr.id = r->id;
			v[p->n_nrules++] = t->nr;
			memset(&t->nr, 0, sizeof(t->nr));
		} else {
			struct sbx_crule *v = realloc(p->crules, (p->n_crules + 1) * sizeof(*v));

			if (!v)
				return -1;
			p->crules = v;
			t->c.id = r->id;
			v[p->n_crules++] = t->c;
			memset(&t->c, 0, sizeof(t->c));
		}
	}
	return 0;
}

static int merge_doc(struct sbx_policy *p, struct fdoc *doc)
{
	uint32_t id;

	if (doc->n)
		qsort(doc->r, doc->n, sizeof(doc->r[0]), cmp_trule);
	/* files: defaults first, then rules */
	if (doc->fdef_scalar) {
		if (add_default(p, doc, SBX_SEC_FILES, &doc->fdef[0], 7, doc->freason, &id))
			return -1;
		for (int a = 0; a < SBX_ACC_MAX; a++) {
			p->file_default[a] = doc->fdef[a].verdict;
			p->file_default_rule[a] = id;
		}
	} else {
		for (int a = 0; a < SBX_ACC_MAX; a++) {
			if (!doc->fdef[a].set)
				continue;
			if (add_default(p, doc, SBX_SEC_FILES, &doc->fdef[a], SBX_ACCBIT(a),
					doc->freason, &id))
				return -1;
			p->file_default[a] = doc->fdef[a].verdict;
			p->file_default_rule[a] = id;
		}
	}
	if (take_rules(p, doc, SBX_SEC_FILES))
		return -1;
	if (doc->ndef.set) {
		if (add_default(p, doc, SBX_SEC_NETWORK, &doc->ndef, 0, doc->nreason, &id))
			return -1;
		p->net_default = doc->ndef.verdict;
		p->net_default_rule = id;
	}
	if (take_rules(p, doc, SBX_SEC_NETWORK))
		return -1;
	if (doc->cdef.set) {
		if (add_default(p, doc, SBX_SEC_COMMANDS, &doc->cdef, 0, doc->creason, &id))
			return -1;
		p->cmd_default = doc->cdef.verdict;
		p->cmd_default_rule = id;
	}
	/* a child's switches override its parent's */
	for (int i = 0; i < 3; i++) {
		if (doc->sandbox[i] == 1)
			p->sandbox_flags |= sandbox_flags[i];
		else if (doc->sandbox[i] == 0)
			p->sandbox_flags &= ~sandbox_flags[i];
	}
	return take_rules(p, doc, SBX_SEC_COMMANDS);
}

void sbx_policy_free(struct sbx_policy *p)
{
	if (!p)
		return;
	for (size_t i = 0; i < p->n_rules; i++)
		info_free(&p->rules[i]);
	free(p->rules);
	for (size_t i = 0; i < p->n_frules; i++)
		frule_free(&p->frules[i]);
	free(p->frules);
	for (size_t i = 0; i < p->n_nrules; i++)
		nrule_free(&p->nrules[i]);
	free(p->nrules);
	for (size_t i = 0; i < p->n_crules; i++)
		crule_free(&p->crules[i]);
	free(p->crules);
	for (size_t i = 0; i < p->n_sources; i++)
		free(p->sources[i]);
	free(p->sources);
	free(p->home);
	free(p->project);
	free(p->resolv_conf);
	free(p);
}

static struct sbx_policy *load_common(const char *name, const char *dir, const char *buf,
				      size_t len, const char *self_real,
				      const struct sbx_policy_env *env, struct sbx_diags *diags)
{
	struct loader ld = { .env = env, .d = diags };
	struct sbx_policy *p = NULL;
	size_t errors_before = diags ? diags->errors : 0;
	struct sbx_diags local = { 0 };

	if (!diags)
		ld.d = diags = &local;
	if (!env || !env->home || env->home[0] != '/') {
		sbx_diag_add(diags, SBX_DIAG_ERROR, name, 0, 0, NULL,
			     "no home directory (an absolute HOME is required to expand ~)");
		goto out;
	}
	if (env->project && env->project[0] != '/') {
		sbx_diag_add(diags, SBX_DIAG_ERROR, name, 0, 0, NULL,
			     "the project directory must be an absolute path");
		goto out;
	}
	if (self_real)
		ld.stack[ld.depth++] = strdup(self_real);
	load_one(&ld, name, dir, buf, len);
	if (self_real) {
		ld.depth--;
		if (ld.stack[ld.depth])
			ld.sources[ld.nsources++] = ld.stack[ld.depth];
		ld.stack[ld.depth] = NULL;
	}
	if (ld.failed || diags->errors > errors_before || ld.ndocs == 0)
		goto out;
	p = calloc(1, sizeof(*p));
	if (!p)
		goto out;
	for (size_t i = 0; i < ld.ndocs; i++)
		if (merge_doc(p, ld.docs[i]))
			goto fail;
	/* the last doc is the file itself; its position names missing defaults */
	{
		struct fdoc *leaf = ld.docs[ld.ndocs - 1];

		for (int a = 0; a < SBX_ACC_MAX; a++)
			if (!p->file_default_rule[a]) {
				sbx_diag_add(diags, SBX_DIAG_ERROR, leaf->file, 1, 1, "files.default",
					     "missing %s verdict: a policy that extends nothing must set "
					     "files.default, e.g. `default: {read: allow, write: deny, exec: allow}`",
					     sbx_access_name(a));
				goto fail;
			}
		if (!p->net_default_rule) {
			sbx_diag_add(diags, SBX_DIAG_ERROR, leaf->file, 1, 1, "network.default",
				     "missing: a policy that extends nothing must set network.default "
				     "(allow, deny, ask or audit)");
			goto fail;
		}
		if (!p->cmd_default_rule)
			p->cmd_default = SBX_V_ALLOW;	/* classification only; the kernel decides */
	}
	p->sources = calloc(ld.nsources ? ld.nsources : 1, sizeof(char *));
	if (!p->sources)
		goto fail;
	/* root of the chain first: sources[] were appended as loads finished */
	for (size_t i = 0; i < ld.nsources; i++) {
		p->sources[p->n_sources++] = ld.sources[i];
		ld.sources[i] = NULL;
	}
	p->home = strdup(env->home);
	p->project = env->project ? strdup(env->project) : NULL;
	p->resolv_conf = strdup(env->resolv_conf ? env->resolv_conf : "/etc/resolv.conf");
	p->resolve = env->resolve;
	p->resolve_ctx = env->resolve_ctx;
	p->hardlink_scan_max = env->hardlink_scan_max ? env->hardlink_scan_max : SBX_HARDLINK_SCAN_MAX;
	if (!p->home || (env->project && !p->project) || !p->resolv_conf)
		goto fail;
	goto out;
fail:
	if (diags->errors == errors_before)
		sbx_diag_add(diags, SBX_DIAG_ERROR, name, 0, 0, NULL, "out of memory");
	sbx_policy_free(p);
	p = NULL;
out:
	for (size_t i = 0; i < ld.ndocs; i++)
		fdoc_free(ld.docs[i]);
	for (size_t i = 0; i < ld.nsources; i++)
		free(ld.sources[i]);
	for (size_t i = 0; i < ld.depth; i++)
		free(ld.stack[i]);
	sbx_diags_free(&local);
	return p;
}

struct sbx_policy *sbx_policy_load_buffer(const char *name, const char *buf, size_t len,
					  const struct sbx_policy_env *env,
					  struct sbx_diags *diags)
{
	char *dir = name ? dir_of(name) : NULL;
	struct sbx_policy *p;

	p = load_common(name ? name : "<buffer>", dir, buf, len, NULL, env, diags);
	free(dir);
	return p;
}

struct sbx_policy *sbx_policy_load_file(const char *path, const struct sbx_policy_env *env,
					struct sbx_diags *diags)
{
	struct sbx_policy *p = NULL;
	char *buf, *rp, *dir;
	size_t len;
	int err;

	buf = read_file(path, &len, &err);
	if (!buf) {
		sbx_diag_add(diags, SBX_DIAG_ERROR, path, 0, 0, NULL, "cannot read: %s",
			     err == EFBIG ? "larger than 1 MiB" :
			     err == EINVAL ? "not a regular file" : strerror(err));
		return NULL;
	}
	rp = realpath(path, NULL);
	dir = rp ? dir_of(rp) : dir_of(path);
	p = load_common(path, dir, buf, len, rp, env, diags);
	free(rp);
	free(dir);
	free(buf);
	return p;
}

size_t sbx_policy_rule_count(const struct sbx_policy *p)
{
	return p ? p->n_rules : 0;
}

const struct sbx_rule_info *sbx_policy_rule(const struct sbx_policy *p, uint32_t id)
{
	if (!p || id == 0 || id > p->n_rules)
		return NULL;
	return &p->rules[id - 1];
}

size_t sbx_policy_source_count(const struct sbx_policy *p)
{
	return p ? p->n_sources : 0;
}

const char *sbx_policy_source(const struct sbx_policy *p, size_t i)
{
	return p && i < p->n_sources ? p->sources[i] : NULL;
}
