// SPDX-License-Identifier: GPL-2.0
/*
 * parse_yaml.c - YAML text to a tree of ynodes, with libyaml.
 *
 * Each node keeps the line and column of libyaml's start mark, so that
 * every diagnostic can name FILE:LINE:COL. Duplicate keys, aliases, tabs
 * and a second document are errors here, before the schema sees the tree.
 */
#include <ctype.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>
#include "policy/parse.h"

#define MAX_DEPTH	32	/* YAML nesting; the schema needs 5 */

/* ---- a YAML tree with positions ------------------------------------------ */

/*
 * Nodes, strings and lists come from blocks that the root owns and frees
 * at once: a 10,000-rule policy is some 400,000 of them, and freeing them
 * one by one cost a tenth of a compile.
 */
struct yblock {
	struct yblock *next;
	size_t used, cap;
	max_align_t data[];
};

#define YBLOCK_MIN	(64 * 1024)

struct yload {
	yaml_parser_t p;
	const char *file;
	const char *buf;
	size_t len;
	struct sbx_diags *d;
	struct yblock *arena;
	bool failed;
};

static void *yalloc(struct yload *L, size_t n)
{
	struct yblock *b = L->arena;
	size_t a = _Alignof(max_align_t);

	n = (n + a - 1) / a * a;
	if (!b || b->cap - b->used < n) {
		size_t cap = n > YBLOCK_MIN ? n : YBLOCK_MIN;

		b = malloc(sizeof(*b) + cap);
		if (!b)
			return NULL;
		b->used = 0;
		b->cap = cap;
		b->next = L->arena;
		L->arena = b;
	}
	b->used += n;
	return (char *)b->data + b->used - n;
}

static void yarena_free(struct yblock *b)
{
	while (b) {
		struct yblock *next = b->next;

		free(b);
		b = next;
	}
}

/* A tree from yparse: its root frees all of it. */
void ynode_free(struct ynode *y)
{
	if (y)
		yarena_free(y->arena);
}

static struct ynode *ynode_new(struct yload *L, enum ytype t, const yaml_mark_t *m)
{
	struct ynode *y = yalloc(L, sizeof(*y));

	if (y) {
		memset(y, 0, sizeof(*y));
		y->type = t;
		y->line = (int)m->line + 1;
		y->col = (int)m->column + 1;
	}
	return y;
}

static int ynode_push(struct yload *L, struct ynode *y, struct ynode *k)
{
	if (y->n == y->cap) {
		size_t cap = y->cap ? y->cap * 2 : 8;
		struct ynode **v = yalloc(L, cap * sizeof(*v));

		if (!v)
			return -1;
		if (y->n)
			memcpy(v, y->kids, y->n * sizeof(*v));
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
	va_list ap;

	va_start(ap, fmt);
	sbx_diag_vadd(L->d, SBX_DIAG_ERROR, L->file, line, col, NULL, fmt, ap);
	va_end(ap);
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
		/* the reader's mark is not meaningful: count lines up to the byte */
		size_t off = p->problem_offset < L->len ? p->problem_offset : L->len, bol = 0;
		int ln = 1;

		for (size_t i = 0; i < off; i++)
			if (L->buf[i] == '\n') {
				ln++;
				bol = i + 1;
			}
		yerr(L, ln, (int)(off - bol) + 1, "byte 0x%02x is not valid UTF-8 (%s): save the "
		     "file as UTF-8", off < L->len ? (unsigned char)L->buf[off] : 0,
		     p->problem ? p->problem : "bad input");
		return;
	}
	if ((p->context && strstr(p->context, "alias")) ||
	    (p->problem && strstr(p->problem, "alias"))) {
		yerr(L, line, col, "an unquoted '*' starts a YAML alias: quote the pattern, "
		     "e.g. path: \"*.pem\"");
		return;
	}
	if (p->context && strstr(p->context, "quoted scalar") &&
	    p->problem && strstr(p->problem, "end of stream")) {
		yerr(L, (int)p->context_mark.line + 1, (int)p->context_mark.column + 1,
		     "unterminated quote: the string that starts here has no closing quote");
		return;
	}
	if (p->problem && (strstr(p->problem, "did not find expected '-' indicator") ||
			   strstr(p->problem, "did not find expected key"))) {
		yerr(L, line, col, "wrong indentation: this line does not line up with the "
		     "block it belongs to (the keys of one rule, e.g. path, verdict and reason, "
		     "start in the same column; YAML %s)", p->problem);
		return;
	}
	if (p->problem && strstr(p->problem, "mapping values") && idx <= L->len) {
		/* "key: v" on a line of its own, indented deeper than the key
		 * above it: an indentation mistake, not a value to quote */
		size_t bol = idx, k;

		while (bol > 0 && L->buf[bol - 1] != '\n')
			bol--;
		k = bol;
		while (k < L->len && L->buf[k] == ' ')
			k++;
		while (k < L->len && (isalnum((unsigned char)L->buf[k]) || L->buf[k] == '_'))
			k++;
		if (k == idx && k > bol) {
			yerr(L, line, (int)(strspn(L->buf + bol, " ")) + 1, "wrong indentation: this "
			     "key is indented deeper than the key above it; the keys of one block "
			     "(e.g. path, verdict and reason of one rule) start in the same column");
			return;
		}
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
	struct ynode *y = ynode_new(L, map ? Y_MAP : Y_SEQ, &ev->start_mark);

	if (!y) {
		yerr(L, 0, 0, "out of memory");
		return NULL;
	}
	if (depth > MAX_DEPTH) {
		yerr(L, y->line, y->col, "nesting too deep (more than %d levels)", MAX_DEPTH);
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
			if (ynode_push(L, y, k))
				goto fail;
			continue;
		}
		if (!ynext(L, &e))
			goto fail;
		v = yparse_node(L, &e, depth + 1);
		yaml_event_delete(&e);
		if (!v)
			goto fail;
		if (k->type != Y_SCALAR) {
			yerr(L, k->line, k->col, "a key must be a plain name, not a %s",
			     k->type == Y_MAP ? "mapping" : "list");
			continue;
		}
		for (size_t i = 0; i < y->n; i += 2)
			if (y->kids[i]->len == k->len && !memcmp(y->kids[i]->str, k->str, k->len)) {
				yerr(L, k->line, k->col,
				     "duplicate key '%s' (first at line %d): keep one of them",
				     k->str, y->kids[i]->line);
				k = NULL;
				break;
			}
		if (!k)
			continue;
		if (ynode_push(L, y, k) || ynode_push(L, y, v))
			goto fail;
	}
fail:
	return NULL;	/* its nodes go with the arena */
}

static struct ynode *yparse_node(struct yload *L, yaml_event_t *ev, int depth)
{
	struct ynode *y;

	switch (ev->type) {
	case YAML_SCALAR_EVENT:
		y = ynode_new(L, Y_SCALAR, &ev->start_mark);
		if (!y)
			return NULL;
		y->len = ev->data.scalar.length;
		y->str = yalloc(L, y->len + 1);
		if (!y->str)
			return NULL;
		memcpy(y->str, ev->data.scalar.value, y->len);
		y->str[y->len] = 0;
		y->plain = ev->data.scalar.style == YAML_PLAIN_SCALAR_STYLE;
		if (memchr(y->str, 0, y->len)) {
			yerr(L, y->line, y->col, "NUL character in a string");
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

struct ynode *yparse(const char *file, const char *buf, size_t len, struct sbx_diags *d)
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
	if (L.failed || !root || (root->type == Y_SCALAR && root->plain && root->len == 0)) {
		if (!L.failed)
			sbx_diag_add(d, SBX_DIAG_ERROR, file, 1, 1, NULL,
				     "empty policy: start with `version: 1`");
		yarena_free(L.arena);
		return NULL;
	}
	root->arena = L.arena;
	return root;
}
