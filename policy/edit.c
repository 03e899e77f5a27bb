// SPDX-License-Identifier: GPL-2.0
/*
 * edit.c - a rule added to a policy file as a person would add it.
 *
 * A policy file is the person's: it has comments, an order and quoting of
 * their choosing, and a round trip through a YAML emitter would lose all
 * of them. So the text is kept and only the rule's lines are inserted,
 * where libyaml's event marks say the section's list ends. A shape the
 * editor cannot extend in place (a flow-style {...} section or a
 * non-empty [...] list) is an error naming its line, never a rewrite.
 *
 * libyaml's marks count characters, not bytes (a CRLF counts as two, a
 * UTF-8 sequence as one), so every mark is turned into a byte offset by
 * walking the text.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <yaml.h>
#include "lib/alloc.h"
#include "lib/fileio.h"
#include "lib/text.h"
#include "policy/edit.h"

#define POLICY_MAX	(4u << 20)
#define DEPTH_MAX	64

static const char *const sec_names[] = {
	[SBX_SEC_FILES] = "files", [SBX_SEC_NETWORK] = "network", [SBX_SEC_COMMANDS] = "commands",
};

static void set_err(char **err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void set_err(char **err, const char *fmt, ...)
{
	va_list ap;

	if (!err || *err)
		return;
	va_start(ap, fmt);
	if (vasprintf(err, fmt, ap) < 0)
		*err = NULL;
	va_end(ap);
}

/* Where things are, as character indices (libyaml's) */
struct loc {
	bool sec, rules, rules_flow;
	size_t sec_col, sec_end;	/* the section's key column; its value's last character */
	size_t rules_col;		/* the rules: key's column */
	size_t seq_col;			/* block list: the "-" column */
	bool seq_props;			/* the list has a tag or an anchor */
	size_t flow_start, flow_end;	/* flow list: "[" and past "]" */
	size_t *item_start, *item_end, nitems;
	size_t doc_end;			/* the document's last character */
	size_t root_col;		/* the column of the sections' keys */
	yaml_mark_t sec_mark, rules_mark;
};

struct walk {
	yaml_parser_t p;
	yaml_event_t ev;
	bool have;
	const char *name;
	char **err;
	size_t last_end;		/* past the last scalar or flow collection */
	bool flow[DEPTH_MAX];
	int depth;
};

static int next(struct walk *w)
{
	if (w->have)
		yaml_event_delete(&w->ev);
	w->have = false;
	if (!yaml_parser_parse(&w->p, &w->ev)) {
		set_err(w->err, "%s:%zu:%zu: %s", w->name, w->p.problem_mark.line + 1,
			w->p.problem_mark.column + 1, w->p.problem ? w->p.problem : "not YAML");
		return -1;
	}
	w->have = true;
	switch (w->ev.type) {
	case YAML_SCALAR_EVENT:
	case YAML_ALIAS_EVENT:
		if (w->ev.end_mark.index > w->last_end)
			w->last_end = w->ev.end_mark.index;
		break;
	case YAML_SEQUENCE_START_EVENT:
	case YAML_MAPPING_START_EVENT:
		if (w->depth == DEPTH_MAX) {
			set_err(w->err, "%s:%zu: nested too deeply", w->name,
				w->ev.start_mark.line + 1);
			return -1;
		}
		w->flow[w->depth++] = w->ev.type == YAML_SEQUENCE_START_EVENT ?
			w->ev.data.sequence_start.style == YAML_FLOW_SEQUENCE_STYLE :
			w->ev.data.mapping_start.style == YAML_FLOW_MAPPING_STYLE;
		break;
	case YAML_SEQUENCE_END_EVENT:
	case YAML_MAPPING_END_EVENT:
		/* a block collection's end is marked at the next token, which
		 * may be lines further on: only a flow end is its own text */
		if (w->depth > 0 && w->flow[--w->depth] && w->ev.end_mark.index > w->last_end)
			w->last_end = w->ev.end_mark.index;
		break;
	default:
		break;
	}
	return 0;
}

/* The node that starts at the current event, to its end */
static int skip(struct walk *w)
{
	int depth = 0;

	for (;;) {
		switch (w->ev.type) {
		case YAML_SEQUENCE_START_EVENT:
		case YAML_MAPPING_START_EVENT:
			depth++;
			break;
		case YAML_SEQUENCE_END_EVENT:
		case YAML_MAPPING_END_EVENT:
			depth--;
			break;
		default:
			break;
		}
		if (depth <= 0)
			return 0;
		if (next(w))
			return -1;
	}
}

static bool is_key(const struct walk *w, const char *k)
{
	return w->ev.type == YAML_SCALAR_EVENT &&
	       w->ev.data.scalar.length == strlen(k) &&
	       !memcmp(w->ev.data.scalar.value, k, strlen(k));
}

static int walk_rules(struct walk *w, struct loc *l, const char *sec)
{
	size_t cap = 0;

	/* a key given twice: the last one is the list (as a YAML reader
	 * that does not refuse it takes it) */
	free(l->item_start);
	free(l->item_end);
	l->item_start = l->item_end = NULL;
	l->nitems = 0;
	l->rules = true;
	l->rules_mark = w->ev.start_mark;
	if (w->ev.type != YAML_SEQUENCE_START_EVENT) {
		set_err(w->err, "%s:%zu:%zu: %s.rules is not a list", w->name,
			w->ev.start_mark.line + 1, w->ev.start_mark.column + 1, sec);
		return -1;
	}
	l->rules_flow = w->ev.data.sequence_start.style == YAML_FLOW_SEQUENCE_STYLE;
	l->flow_start = w->ev.start_mark.index;
	l->seq_col = w->ev.start_mark.column;
	l->seq_props = w->ev.data.sequence_start.tag || w->ev.data.sequence_start.anchor;
	for (;;) {
		if (next(w))
			return -1;
		if (w->ev.type == YAML_SEQUENCE_END_EVENT)
			break;
		if (l->nitems == cap) {
			cap = cap ? 2 * cap : 16;
			l->item_start = sbx_realloc_array(l->item_start, cap, sizeof(size_t));
			l->item_end = sbx_realloc_array(l->item_end, cap, sizeof(size_t));
		}
		l->item_start[l->nitems] = w->ev.start_mark.index;
		if (skip(w))
			return -1;
		l->item_end[l->nitems++] = w->last_end;
	}
	l->flow_end = w->ev.end_mark.index;
	return 0;
}

static int walk_section(struct walk *w, struct loc *l, const char *sec)
{
	l->sec = true;
	l->rules = false;
	l->sec_mark = w->ev.start_mark;
	if (w->ev.type != YAML_MAPPING_START_EVENT ||
	    w->ev.data.mapping_start.style == YAML_FLOW_MAPPING_STYLE) {
		set_err(w->err, "%s:%zu:%zu: %s is not a block mapping (%s:, then its keys "
			"indented on lines of their own); add the rule by hand", w->name,
			w->ev.start_mark.line + 1, w->ev.start_mark.column + 1, sec, sec);
		return -1;
	}
	l->sec_col = w->ev.start_mark.column;
	for (;;) {
		bool rules;

		if (next(w))
			return -1;
		if (w->ev.type == YAML_MAPPING_END_EVENT)
			break;
		rules = is_key(w, "rules");
		if (rules)
			l->rules_col = w->ev.start_mark.column;
		if (skip(w) || next(w))
			return -1;
		if (rules ? walk_rules(w, l, sec) : skip(w))
			return -1;
	}
	l->sec_end = w->last_end;
	return 0;
}

static size_t byte_at(const char *text, size_t len, size_t chars);

static int locate(const char *name, const char *text, size_t len, const char *sec,
		  struct loc *l, char **err)
{
	struct walk w = { .name = name, .err = err };
	int rc = -1;

	memset(l, 0, sizeof(*l));
	if (!yaml_parser_initialize(&w.p)) {
		set_err(err, "%s: out of memory", name);
		return -1;
	}
	yaml_parser_set_input_string(&w.p, (const unsigned char *)text, len);
	if (next(&w) || next(&w))		/* stream, document */
		goto out;
	if (w.ev.type != YAML_DOCUMENT_START_EVENT || next(&w))
		goto not_map;
	if (w.ev.type != YAML_MAPPING_START_EVENT ||
	    w.ev.data.mapping_start.style == YAML_FLOW_MAPPING_STYLE)
		goto not_map;
	l->root_col = w.ev.start_mark.column;
	for (;;) {
		bool this;

		if (next(&w))
			goto out;
		if (w.ev.type == YAML_MAPPING_END_EVENT)
			break;
		this = is_key(&w, sec);
		if (skip(&w) || next(&w))
			goto out;
		if (this ? walk_section(&w, l, sec) : skip(&w))
			goto out;
	}
	l->doc_end = w.last_end;
	/* the rest of the text must be YAML too, and nothing more: text the
	 * reader stops before would hide whatever is appended after it */
	if (next(&w) || next(&w))
		goto out;
	if (w.ev.type != YAML_STREAM_END_EVENT) {
		set_err(err, "%s:%zu: more than one YAML document; a policy is one", name,
			w.ev.start_mark.line + 1);
		goto out;
	}
	/* a list's mark starts at its tag or anchor, on the key's line
	 * (rules: !!seq): its "-" column is its first item's indentation */
	if (l->rules && !l->rules_flow && l->seq_props && l->nitems) {
		size_t at = byte_at(text, len, l->item_start[0]), ls;

		/* the "-" before the item, lines before it too ("-\n  path:") */
		while (at > 0 && strchr(" \t\r\n", text[at - 1]))
			at--;
		if (at > 0 && text[at - 1] == '-')
			at--;
		for (ls = at; ls > 0 && text[ls - 1] != '\n';)
			ls--;
		for (l->seq_col = 0; ls + l->seq_col < at && text[ls + l->seq_col] == ' ';)
			l->seq_col++;
	}
	rc = 0;
	goto out;
not_map:
	set_err(err, "%s:%zu: the policy is not a block mapping of sections", name,
		w.ev.start_mark.line + 1);
out:
	if (w.have)
		yaml_event_delete(&w.ev);
	yaml_parser_delete(&w.p);
	if (rc) {
		free(l->item_start);
		free(l->item_end);
		memset(l, 0, sizeof(*l));
	}
	return rc;
}

static void loc_free(struct loc *l)
{
	free(l->item_start);
	free(l->item_end);
}

/* libyaml's character index -> byte offset */
static size_t byte_at(const char *text, size_t len, size_t chars)
{
	size_t i = 0;

	if (len >= 3 && !memcmp(text, "\xef\xbb\xbf", 3))
		i = 3;		/* the reader drops a BOM before it counts */
	/* one per code point: a continuation byte does not count */
	for (; i < len && chars; chars--)
		for (i++; i < len && ((unsigned char)text[i] & 0xc0) == 0x80; i++)
			;
	return i;
}

/* past the line break that ends the line where byte offset at falls
 * (at itself when the text just before it was a line break) */
static size_t line_end(const char *text, size_t len, size_t at)
{
	const char *nl;

	if (at > 0 && text[at - 1] == '\n')
		return at;
	nl = memchr(text + at, '\n', len - at);
	return nl ? (size_t)(nl - text) + 1 : len;
}

static size_t line_start(const char *text, size_t at)
{
	while (at > 0 && text[at - 1] != '\n')
		at--;
	return at;
}

int sbx_policy_rule_items(const char *name, const char *text, size_t len, enum sbx_section sec,
			  char ***items, size_t *n, char **err)
{
	struct loc l;

	*items = NULL;
	*n = 0;
	if (locate(name, text, len, sec_names[sec], &l, err))
		return -1;
	if (l.rules && l.rules_flow && l.nitems) {
		set_err(err, "%s:%zu:%zu: %s.rules is a flow-style list [...]", name,
			l.rules_mark.line + 1, l.rules_mark.column + 1, sec_names[sec]);
		loc_free(&l);
		return -1;
	}
	*items = sbx_calloc(l.nitems ? l.nitems : 1, sizeof(char *));
	for (size_t i = 0; i < l.nitems; i++) {
		size_t a = line_start(text, byte_at(text, len, l.item_start[i]));
		size_t b = line_end(text, len, byte_at(text, len, l.item_end[i]));
		struct sbx_strbuf o = { 0 };

		/* each line without the list's indentation */
		while (a < b) {
			const char *nl = memchr(text + a, '\n', b - a);
			size_t e = nl ? (size_t)(nl - text) + 1 : b, k = 0;

			while (k < l.seq_col && a + k < e && text[a + k] == ' ')
				k++;
			sbx_sb_putn(&o, text + a + k, e - a - k);
			a = e;
		}
		if (!o.len || o.p[o.len - 1] != '\n')
			sbx_sb_putc(&o, '\n');
		(*items)[i] = o.p;
	}
	*n = l.nitems;
	loc_free(&l);
	return 0;
}

void sbx_policy_items_free(char **items, size_t n)
{
	for (size_t i = 0; items && i < n; i++)
		free(items[i]);
	free(items);
}

/* the items, each line after indent spaces, the note first */
static void put_items(struct sbx_strbuf *b, size_t indent, char *const *items, size_t n,
		      const char *note)
{
	if (note) {
		sbx_sb_printf(b, "%*s# ", (int)indent, "");
		for (const char *p = note; *p; p++)	/* one line, whatever it holds */
			sbx_sb_putc(b, *p == '\n' || *p == '\r' ? ' ' : *p);
		sbx_sb_putc(b, '\n');
	}
	for (size_t i = 0; i < n; i++)
		for (const char *p = items[i]; *p;) {
			const char *nl = strchr(p, '\n');
			size_t ln = nl ? (size_t)(nl - p) : strlen(p);

			if (ln)
				sbx_sb_printf(b, "%*s", (int)indent, "");
			sbx_sb_putn(b, p, ln);
			sbx_sb_putc(b, '\n');
			p += ln + (nl ? 1 : 0);
		}
}

int sbx_policy_text_add(const char *name, const char *text, size_t len, enum sbx_section sec,
			char *const *items, size_t n, const char *note, char **out, char **err)
{
	const char *sn = sec_names[sec];
	struct sbx_strbuf b = { 0 };
	struct loc l;
	size_t at;

	*out = NULL;
	if (locate(name, text, len, sn, &l, err))
		return -1;
	if (!l.sec) {
		/* no such section: a new one at the end */
		sbx_sb_putn(&b, text, len);
		if (len && text[len - 1] != '\n')
			sbx_sb_putc(&b, '\n');
		sbx_sb_printf(&b, "%*s%s:\n%*srules:\n", (int)l.root_col, "", sn,
			      (int)l.root_col + 2, "");
		put_items(&b, l.root_col + 4, items, n, note);
	} else if (!l.rules) {
		/* a section without rules: the key after its last line */
		at = line_end(text, len, byte_at(text, len, l.sec_end));
		sbx_sb_putn(&b, text, at);
		if (at && text[at - 1] != '\n')
			sbx_sb_putc(&b, '\n');
		sbx_sb_printf(&b, "%*srules:\n", (int)l.sec_col, "");
		put_items(&b, l.sec_col + 2, items, n, note);
		sbx_sb_putn(&b, text + at, len - at);
	} else if (l.rules_flow && l.nitems) {
		set_err(err, "%s:%zu:%zu: %s.rules is a flow-style list [...]; make it a block "
			"list (one \"- \" item a line) or add the rule by hand", name,
			l.rules_mark.line + 1, l.rules_mark.column + 1, sn);
		loc_free(&l);
		return -1;
	} else if (l.rules_flow) {
		/* rules: [] becomes a block list of the items; what followed
		 * "]" on its line (a comment) stays on the rules: line */
		size_t a = byte_at(text, len, l.flow_start), z = byte_at(text, len, l.flow_end);
		size_t e = line_end(text, len, z), lb = z;

		/* the list's mark starts at its tag or anchor (rules: !!seq []),
		 * which stay: only "[" to "]" goes */
		if (lb > a && text[lb - 1] == ']')
			lb--;
		while (lb > a && strchr(" \t\r\n", text[lb - 1]))
			lb--;
		if (lb <= a || text[lb - 1] != '[') {
			set_err(err, "%s:%zu:%zu: %s.rules is an empty flow-style list with more "
				"than white space in it; make it a block list or add the rule by hand",
				name, l.rules_mark.line + 1, l.rules_mark.column + 1, sn);
			loc_free(&l);
			return -1;
		}
		a = lb - 1;
		sbx_sb_putn(&b, text, a);
		while (b.len && b.p[b.len - 1] == ' ')
			b.len--;
		sbx_sb_putn(&b, text + z, e - z);
		if (!b.len || b.p[b.len - 1] != '\n')
			sbx_sb_putc(&b, '\n');
		put_items(&b, l.rules_col + 2, items, n, note);
		sbx_sb_putn(&b, text + e, len - e);
	} else {
		/* after the last item's last line, indented as the items */
		at = line_end(text, len, byte_at(text, len, l.item_end[l.nitems - 1]));
		sbx_sb_putn(&b, text, at);
		if (at && text[at - 1] != '\n')
			sbx_sb_putc(&b, '\n');
		put_items(&b, l.seq_col, items, n, note);
		sbx_sb_putn(&b, text + at, len - at);
	}
	loc_free(&l);
	if (b.oom) {
		free(b.p);
		set_err(err, "%s: out of memory", name);
		return -1;
	}
	/* what was written reads back as the list's last items, or the file's
	 * shape is one this editor misjudged: the person adds it by hand */
	{
		char **got = NULL;
		size_t m = 0;
		bool same = sbx_policy_rule_items(name, b.p, b.len, sec, &got, &m, NULL) == 0 &&
			    m >= n;

		for (size_t i = 0; same && i < n; i++)
			same = !strcmp(got[m - n + i], items[i]);
		sbx_policy_items_free(got, m);
		if (!same) {
			free(b.p);
			set_err(err, "%s: the rule cannot be added to this file's layout of %s "
				"(its keys are not where the editor expects them); add it by hand",
				name, sn);
			return -1;
		}
	}
	*out = b.p;
	return 0;
}

/* the first error of a load or a compile, for a person */
static void diags_err(const struct sbx_diags *d, const char *what, char **err)
{
	for (size_t i = 0; i < d->n; i++)
		if (d->v[i].level == SBX_DIAG_ERROR) {
			set_err(err, "%s: %s:%d:%d: %s%s%s", what, d->v[i].file ?: "?",
				d->v[i].line, d->v[i].col, d->v[i].field ?: "",
				d->v[i].field ? ": " : "", d->v[i].msg ?: "");
			return;
		}
	set_err(err, "%s", what);
}

int sbx_policy_file_add(const char *path, enum sbx_section sec, char *const *items, size_t n,
			const char *note, const struct sbx_policy_env *env, char **text_out,
			char **err)
{
	char *dcopy = sbx_strdup(path), *bcopy = sbx_strdup(path);
	const char *dir = dirname(dcopy), *base = basename(bcopy);
	struct sbx_diags diags = { 0 };
	struct sbx_compiled c = { 0 };
	struct sbx_policy *p = NULL;
	char *old = NULL, *neu = NULL;
	size_t len = 0;
	struct stat st, dst;
	uid_t uid = (uid_t)-1;
	gid_t gid = (gid_t)-1;
	mode_t mode = 0644;
	int dfd, rc = -1, r;

	if (text_out)
		*text_out = NULL;
	dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0 || fstat(dfd, &dst)) {
		set_err(err, "%s: %s", dir, strerror(errno));
		goto out;
	}
	/* two approvers adding rules at once must not lose one */
	if (flock(dfd, LOCK_EX)) {
		set_err(err, "%s: lock: %s", dir, strerror(errno));
		goto out;
	}
	r = sbx_read_file_at(dfd, base, POLICY_MAX, &old, &len, &st);
	if (r == -ENOENT) {
		old = sbx_strdup("version: 1\nextends: agent-default\n");
		len = strlen(old);
		uid = dst.st_uid;
		gid = dst.st_gid;
	} else if (r) {
		set_err(err, "%s: %s", path, r == -ENOTSUP || r == -ELOOP ?
			"not a regular file (a symlink?): add the rule by hand" : strerror(-r));
		goto out;
	} else {
		uid = st.st_uid;
		gid = st.st_gid;
		mode = st.st_mode & 07777;
	}
	if (sbx_policy_text_add(path, old, len, sec, items, n, note, &neu, err))
		goto out;
	/* what is written is a policy that loads and compiles, floor and all */
	p = sbx_policy_load_buffer(path, neu, strlen(neu), env, &diags);
	if (!p || diags.errors) {
		diags_err(&diags, "the policy with the rule does not load", err);
		goto out;
	}
	if (sbx_policy_compile(p, 0, &c, &diags) || diags.errors) {
		diags_err(&diags, "the policy with the rule does not compile", err);
		goto out;
	}
	if (geteuid() != 0)
		uid = (uid_t)-1, gid = (gid_t)-1;
	r = sbx_write_atomic_perm(dfd, base, neu, strlen(neu), SBX_W_REPLACE, uid, gid, mode);
	if (r) {
		set_err(err, "%s: writing: %s", path, strerror(-r));
		goto out;
	}
	if (text_out) {
		*text_out = neu;
		neu = NULL;
	}
	rc = 0;
out:
	if (p) {
		sbx_compiled_free(&c);
		sbx_policy_free(p);
	}
	sbx_diags_free(&diags);
	if (dfd >= 0)
		close(dfd);	/* drops the lock */
	free(old);
	free(neu);
	free(dcopy);
	free(bcopy);
	return rc;
}
