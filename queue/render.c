// SPDX-License-Identifier: GPL-2.0
/* render.c - see render.h */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "queue/propose.h"
#include "queue/render.h"
#include "queue/request.h"
#include "lib/json.h"
#include "lib/names.h"

size_t sbx_utf8_decode(const unsigned char *p, size_t n, unsigned *cp)
{
	unsigned c = p[0], v;
	size_t len;

	if (c < 0x80) {
		*cp = c;
		return 1;
	}
	len = (c & 0xe0) == 0xc0 ? 2 : (c & 0xf0) == 0xe0 ? 3 : (c & 0xf8) == 0xf0 ? 4 : 0;
	if (!len || len > n)
		return 0;
	v = c & (0x7f >> len);
	for (size_t i = 1; i < len; i++) {
		if ((p[i] & 0xc0) != 0x80)
			return 0;
		v = (v << 6) | (p[i] & 0x3f);
	}
	/* overlong forms, UTF-16 surrogates and what is past Unicode are not
	 * text: each byte is shown as itself */
	if ((len == 2 && v < 0x80) || (len == 3 && v < 0x800) || (len == 4 && v < 0x10000) ||
	    (v >= 0xd800 && v <= 0xdfff) || v > 0x10ffff)
		return 0;
	*cp = v;
	return len;
}

/* Trojan Source (CVE-2021-42574): these reorder what is drawn */
static bool is_bidi(unsigned cp)
{
	return (cp >= 0x202a && cp <= 0x202e) || (cp >= 0x2066 && cp <= 0x2069) ||
	       cp == 0x200e || cp == 0x200f || cp == 0x061c;
}

/* They draw nothing, or draw a blank that is not the space the shell
 * splits words at: zero-width and other default-ignorable code points,
 * the tag characters that carry hidden prompts (Unicode TR 36, TR 31),
 * variation selectors, fillers, line and paragraph separators, and the
 * look-alike spaces */
static bool is_invisible(unsigned cp)
{
	return cp == 0x00a0 || cp == 0x00ad || cp == 0x034f || (cp >= 0x115f && cp <= 0x1160) ||
	       cp == 0x1680 || (cp >= 0x17b4 && cp <= 0x17b5) || (cp >= 0x180b && cp <= 0x180f) ||
	       (cp >= 0x2000 && cp <= 0x200d) || (cp >= 0x2028 && cp <= 0x2029) ||
	       cp == 0x202f || cp == 0x205f || (cp >= 0x2060 && cp <= 0x2065) || cp == 0x3000 ||
	       cp == 0x3164 || (cp >= 0xfe00 && cp <= 0xfe0f) || cp == 0xfeff || cp == 0xffa0 ||
	       (cp >= 0xfff0 && cp <= 0xfffb) || (cp >= 0x1bca0 && cp <= 0x1bca3) ||
	       (cp >= 0x1d173 && cp <= 0x1d17a) || (cp >= 0xe0000 && cp <= 0xe0fff);
}

/*
 * Over-estimated on purpose: below U+1100 one column, from there on two.
 * A row measured too wide only wraps early; one measured too narrow would
 * run past the edge of the terminal, and its tail would not be drawn.
 */
unsigned sbx_render_width(unsigned cp)
{
	return cp < 0x1100 ? 1 : 2;
}

void sbx_render_text(struct sbx_strbuf *b, const char *s, size_t len, bool oneline,
		     struct sbx_render_counts *c)
{
	const unsigned char *p = (const unsigned char *)(s ? s : "");
	size_t i = 0;
	char esc[24];

	while (i < len) {
		unsigned cp = 0;
		size_t n = sbx_utf8_decode(p + i, len - i, &cp);

		if (!n) {
			snprintf(esc, sizeof(esc), "\\x%02x", p[i]);
			sbx_sb_puts(b, esc);
			c->invalid++;
			i++;
			continue;
		}
		if (cp == '\n') {
			sbx_sb_puts(b, oneline ? SBX_RENDER_NL : SBX_RENDER_NL "\n");
			c->newlines++;
		} else if (cp == ' ' && i + 8 <= len && !memcmp(p + i, "        ", 8)) {
			size_t run = 0;

			while (i + run < len && p[i + run] == ' ')
				run++;
			snprintf(esc, sizeof(esc), "\u2420\u00d7%zu", run);
			sbx_sb_puts(b, esc);
			c->space_runs++;
			if (run > c->longest_run)
				c->longest_run = run;
			n = run;
		} else if (cp < 0x20 || cp == 0x7f || (cp >= 0x80 && cp <= 0x9f)) {
			if (cp == '\t')
				sbx_sb_puts(b, "\\t");
			else {
				snprintf(esc, sizeof(esc), "\\x%02x", cp);
				sbx_sb_puts(b, esc);
			}
			c->ctrl++;
		} else if (is_bidi(cp)) {
			snprintf(esc, sizeof(esc), "\\u%04x", cp);
			sbx_sb_puts(b, esc);
			c->bidi++;
		} else if (is_invisible(cp)) {
			snprintf(esc, sizeof(esc), cp > 0xffff ? "\\U%08x" : "\\u%04x", cp);
			sbx_sb_puts(b, esc);
			c->invisible++;
		} else {
			sbx_sb_putn(b, (const char *)p + i, n);
		}
		i += n;
	}
}

static bool plain_arg(const char *s, size_t len)
{
	if (!len)
		return false;
	for (size_t i = 0; i < len; i++) {
		unsigned char ch = (unsigned char)s[i];

		if (ch >= 0x80)
			continue;	/* rendered: escaped if it must be, which quotes */
		if (!((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
		      (ch >= '0' && ch <= '9') || strchr("_@%+=:,./-", ch)))
			return false;
	}
	return true;
}

void sbx_render_argv(struct sbx_strbuf *b, const json_t *argv, struct sbx_render_counts *c)
{
	size_t i;
	json_t *a;

	json_array_foreach(argv, i, a) {
		const char *s = json_string_value(a);
		size_t len = s ? json_string_length(a) : 0;
		struct sbx_strbuf t = { 0 };
		struct sbx_render_counts before = *c;

		if (i)
			sbx_sb_putc(b, ' ');
		if (!s) {
			sbx_sb_puts(b, "(not a string)");
			continue;
		}
		sbx_render_text(&t, s, len, false, c);
		if (plain_arg(s, len) && !memcmp(&before, c, sizeof(before))) {
			sbx_sb_putn(b, t.p, t.len);
		} else {
			/* shell quoting: the boundaries are where the quotes are */
			sbx_sb_putc(b, '\'');
			for (size_t k = 0; k < t.len; k++) {
				if (t.p[k] == '\'')
					sbx_sb_puts(b, "'\\''");
				else
					sbx_sb_putc(b, t.p[k]);
			}
			sbx_sb_putc(b, '\'');
		}
		free(t.p);
	}
}

void sbx_render_object_raw(struct sbx_strbuf *b, const struct sbx_request *req)
{
	if (req->kind == SBX_REQ_COMMAND) {
		sbx_sb_puts(b, req->command ?: "");
	} else if (req->kind == SBX_REQ_HOST) {
		/* a name, as the resolver was asked for it */
		sbx_sb_printf(b, "look up %s", req->host ?: "?");
	} else if (req->kind == SBX_REQ_NET || req->kind == SBX_REQ_ACCESS_HOST) {
		const char *a = req->addr ?: req->host ?: "?";
		bool v6 = strchr(a, ':') != NULL;

		sbx_sb_printf(b, "%s%s%s", v6 ? "[" : "", a, v6 ? "]" : "");
		if (req->has_port)
			sbx_sb_printf(b, ":%d", req->port);
		if (req->proto)
			sbx_sb_printf(b, "/%s", req->proto);
		if (req->learned)	/* the domain the address was learned from */
			sbx_sb_printf(b, " (%s)", req->learned);
	} else {
		sbx_sb_puts(b, req->path ?: "?");
		if (req->has_access)
			sbx_sb_printf(b, " (%s)", sbx_access_name(req->access));
	}
}

static void add(struct sbx_render *r, const char *label, const char *s, size_t len)
{
	struct sbx_strbuf t = { 0 };

	r->f = realloc(r->f, (r->n + 1) * sizeof(*r->f));
	if (!r->f)
		abort();
	sbx_render_text(&t, s, len, false, &r->c);
	r->f[r->n].label = label;
	r->f[r->n].text = t.p ? t.p : strdup("");
	if (!r->f[r->n].text || t.oom)
		abort();
	r->n++;
}

static void add_str(struct sbx_render *r, const char *label, const char *s)
{
	if (s)
		add(r, label, s, strlen(s));
}

static void add_sb(struct sbx_render *r, const char *label, struct sbx_strbuf *b)
{
	add(r, label, b->p ? b->p : "", b->len);
	free(b->p);
	*b = (struct sbx_strbuf){ 0 };
}

/* Someone: a request from bpfsbx always names the pid or the uid */
static bool has_process(const struct sbx_request *req)
{
	return req->process.pid >= 0 || req->process.uid >= 0 || req->process.comm ||
	       req->process.exe || req->process.cwd || req->process.cmdline;
}

void sbx_render_request(const struct sbx_request *req, const char *project, struct sbx_render *r)
{
	bool cmd = req->kind == SBX_REQ_COMMAND;
	struct sbx_strbuf b = { 0 };
	struct sbx_render_counts none = { 0 };

	memset(r, 0, sizeof(*r));
	add_str(r, "request", req->id);
	add_str(r, "project", project ? project : req->project);
	add_str(r, "session", req->session);
	if (req->container) {
		/* which container, as its runtime and orchestrator name it: the
		 * person knows the pod, not the session */
		const char *pod = sbx_json_str(req->container, "pod");
		const char *ns = sbx_json_str(req->container, "namespace");

		sbx_sb_printf(&b, "%s (id %.12s", sbx_json_str(req->container, "name") ?: "?",
			      sbx_json_str(req->container, "id") ?: "?");
		if (pod || ns)
			sbx_sb_printf(&b, ", pod %s%s%s", ns ?: "", ns && pod ? "/" : "", pod ?: "");
		sbx_sb_printf(&b, ")");
		add_sb(r, "container", &b);
	}
	add_str(r, "kind", req->kind_name);
	if (cmd) {
		add_str(r, "command", req->command);
		add_str(r, "runs in", req->cwd ?: "(project directory)");
	} else {
		sbx_render_object_raw(&b, req);
		add_sb(r, "object", &b);
		add_str(r, "operation", req->op);
	}
	if (has_process(req)) {
		/* one that is not known shows as 0 */
		sbx_sb_printf(&b, "pid %lld  uid %lld  comm %s",
			      req->process.pid < 0 ? 0 : req->process.pid,
			      req->process.uid < 0 ? 0 : req->process.uid,
			      req->process.comm ?: "?");
		add_sb(r, "process", &b);
		add_str(r, "exe", req->process.exe);
		if (req->process.cmdline) {
			struct sbx_strbuf t = { 0 };

			/* rendered here, not by add(): the quotes must not be */
			sbx_render_argv(&t, req->process.cmdline, &r->c);
			r->f = realloc(r->f, (r->n + 1) * sizeof(*r->f));
			if (!r->f)
				abort();
			r->f[r->n].label = "cmdline";
			r->f[r->n].text = t.p ? t.p : strdup("");
			if (!r->f[r->n].text || t.oom)
				abort();
			r->n++;
		}
		add_str(r, "cwd", req->process.cwd);
	}
	if (req->rule.present) {
		sbx_sb_printf(&b, "%s -> %s", req->rule.pattern ?: "?", req->rule.verdict ?: "?");
		if (req->rule.source)
			sbx_sb_printf(&b, "  (%s)", req->rule.source);
		add_sb(r, "rule", &b);
		add_str(r, "reason", req->rule.reason);
	}
	add_str(r, "agent says", req->agent_reason);
	add_str(r, "notice", req->notice);
	add_str(r, "origin", req->origin);
	if (req->nlink > 1 && req->ftype && !strcmp(req->ftype, "file")) {
		sbx_sb_printf(&b, "%lld hard links: other names reach the same file; "
			      "it cannot be approved", req->nlink);
		add_sb(r, "links", &b);
	}
	/* the summary repeats the object: its escapes are counted once */
	sbx_render_object_raw(&b, req);
	{
		struct sbx_strbuf t = { 0 };

		sbx_render_text(&t, b.p ? b.p : "", b.len, true, &none);
		r->summary = t.p ? t.p : strdup("");
		if (!r->summary)
			abort();
	}
	free(b.p);
}

/* one field a line: the line structure is ours, not the agent's, so it is
 * not marked as a line break inside a value would be */
static void add_lines(struct sbx_render *r, const char *label, const char *s)
{
	for (const char *p = s; p && *p;) {
		size_t n = strcspn(p, "\n");

		add(r, p == s ? label : "", p, n);
		p += n + (p[n] ? 1 : 0);
	}
}

void sbx_render_proposal(const struct sbx_proposal *p, struct sbx_render *r)
{
	struct sbx_strbuf b = { 0 };

	add_lines(r, "rule", p->rule);
	for (size_t i = 0; i < p->nexplain; i++)
		add_lines(r, p->explain[i].label, p->explain[i].text);
	for (size_t i = 0; i < p->ncovers; i++) {
		sbx_sb_printf(&b, "%s  %s", p->covers[i], p->covers_what[i] ?: "");
		add_sb(r, i ? "" : "answers", &b);
	}
	sbx_sb_printf(&b, "%s (%s.rules)%s; later sessions of the project start with it, and the "
		      "running ones get the objects of the requests it answers", p->file,
		      p->sec == SBX_SEC_FILES ? "files" : "network",
		      p->file_exists ? "" : ", a new file that extends agent-default");
	add_sb(r, "into", &b);
}

void sbx_render_free(struct sbx_render *r)
{
	for (size_t i = 0; i < r->n; i++)
		free(r->f[i].text);
	free(r->f);
	free(r->summary);
	memset(r, 0, sizeof(*r));
}

static void part(struct sbx_strbuf *b, bool *first, const char *sep, unsigned n,
		 const char *one, const char *many)
{
	if (!n)
		return;
	sbx_sb_printf(b, "%s%u %s", *first ? "" : sep, n, n == 1 ? one : many);
	*first = false;
}

char *sbx_render_warning(const struct sbx_render_counts *c)
{
	struct sbx_strbuf b = { 0 };
	bool first = true, any = false;

	if (!c->ctrl && !c->bidi && !c->invisible && !c->invalid && !c->newlines &&
	    !c->space_runs)
		return NULL;
	sbx_sb_puts(&b, "warning: ");
	if (c->ctrl || c->bidi || c->invisible || c->invalid) {
		sbx_sb_puts(&b, "shown escaped: ");
		part(&b, &first, ", ", c->ctrl, "control character", "control characters");
		part(&b, &first, ", ", c->bidi, "bidi control", "bidi controls");
		part(&b, &first, ", ", c->invisible, "invisible (zero-width, tag, look-alike space)",
		     "invisible (zero-width, tag, look-alike space)");
		part(&b, &first, ", ", c->invalid, "byte that is not UTF-8", "bytes that are not UTF-8");
		any = true;
	}
	if (c->newlines) {
		sbx_sb_printf(&b, "%s%u line break%s (marked " SBX_RENDER_NL ")", any ? "; " : "",
			      c->newlines, c->newlines == 1 ? "" : "s");
		any = true;
	}
	if (c->space_runs)
		sbx_sb_printf(&b, "%s%u run%s of spaces (longest %zu)", any ? "; " : "",
			      c->space_runs, c->space_runs == 1 ? "" : "s", c->longest_run);
	if (b.oom)
		abort();
	return b.p;
}

json_t *sbx_render_json(const struct sbx_render *r)
{
	json_t *fields = json_array();
	char *warn = sbx_render_warning(&r->c);
	json_t *j;

	for (size_t i = 0; i < r->n; i++)
		json_array_append_new(fields, json_pack("[s,s]", r->f[i].label, r->f[i].text));
	j = json_pack("{s:o, s:s, s:o, s:{s:I, s:I, s:I, s:I, s:I, s:I, s:I}}",
		      "fields", fields, "summary", r->summary ? r->summary : "",
		      "warning", warn ? json_string(warn) : json_null(),
		      "counts", "ctrl", (json_int_t)r->c.ctrl, "bidi", (json_int_t)r->c.bidi,
		      "invisible", (json_int_t)r->c.invisible, "invalid", (json_int_t)r->c.invalid,
		      "newlines", (json_int_t)r->c.newlines, "space_runs", (json_int_t)r->c.space_runs,
		      "longest_run", (json_int_t)r->c.longest_run);
	free(warn);
	return j;
}

/* the length of the escape sbx_render_text() wrote at s, or 0 */
static size_t escape_len(const char *s)
{
	static const char hex[] = "0123456789abcdef";
	size_t n;

	if (s[0] != '\\')
		return 0;
	if (s[1] == 't')
		return 2;
	n = s[1] == 'x' ? 2 : s[1] == 'u' ? 4 : s[1] == 'U' ? 8 : 0;
	for (size_t i = 0; n && i < n; i++)
		if (!s[2 + i] || !strchr(hex, s[2 + i]))
			return 0;
	return n ? n + 2 : 0;
}

size_t sbx_render_wrap(const char *text, size_t cols, struct sbx_render_row **rows)
{
	const unsigned char *p = (const unsigned char *)text;
	size_t len = strlen(text), i = 0, n = 0, w = 0;
	struct sbx_render_row cur = { 0 };

	*rows = NULL;
	for (;;) {
		size_t u, uw;
		unsigned cp;

		if (i >= len || p[i] == '\n') {
			cur.len = i - cur.off;
			*rows = realloc(*rows, (n + 1) * sizeof(**rows));
			if (!*rows)
				abort();
			(*rows)[n++] = cur;
			if (i >= len)
				return n;
			i++;
			cur = (struct sbx_render_row){ .off = i };
			w = 0;
			continue;
		}
		u = escape_len(text + i);
		if (u) {
			uw = u;
		} else {
			u = sbx_utf8_decode(p + i, len - i, &cp);
			uw = u ? sbx_render_width(cp) : 1;
			if (!u)
				u = 1;
		}
		if (cols && w && w + uw > cols) {
			cur.len = i - cur.off;
			*rows = realloc(*rows, (n + 1) * sizeof(**rows));
			if (!*rows)
				abort();
			(*rows)[n++] = cur;
			cur = (struct sbx_render_row){ .off = i, .cont = true };
			w = 0;
		}
		w += uw;
		i += u;
	}
}
