// SPDX-License-Identifier: GPL-2.0
/*
 * queue/render.c: the one rule by which watch, bpfsbx approve and the
 * dashboard show a request. A hostile corpus, one class per row: each
 * input, the exact text shown and what is counted.
 */
#include <stdlib.h>
#include <string.h>
#include "queue/render.h"
#include "tests/unit/unit.h"

struct hostile {
	const char *in;
	size_t len;		/* 0: strlen */
	const char *out;
	struct sbx_render_counts c;
};

#define CTRL(n)	 { .ctrl = (n) }
#define BIDI(n)	 { .bidi = (n) }
#define INVIS(n) { .invisible = (n) }
#define BAD(n)	 { .invalid = (n) }

static const struct hostile corpus[] = {
	/* C0, DEL, C1 (as code points), the tab */
	{ "a\x1b[2Jb", 0, "a\\x1b[2Jb", CTRL(1) },
	{ "x\ry", 0, "x\\x0dy", CTRL(1) },
	{ "\x07\x08\x7f", 0, "\\x07\\x08\\x7f", CTRL(3) },
	{ "a\0b", 3, "a\\x00b", CTRL(1) },
	{ "t\tt", 0, "t\\tt", CTRL(1) },
	{ "\xc2\x85\xc2\x9b" "31m", 0, "\\x85\\x9b31m", CTRL(2) },
	/* bidi controls: every one of them */
	{ "\xe2\x80\xaa\xe2\x80\xab\xe2\x80\xac\xe2\x80\xad\xe2\x80\xae", 0,
	  "\\u202a\\u202b\\u202c\\u202d\\u202e", BIDI(5) },
	{ "\xe2\x81\xa6\xe2\x81\xa7\xe2\x81\xa8\xe2\x81\xa9", 0, "\\u2066\\u2067\\u2068\\u2069", BIDI(4) },
	{ "\xe2\x80\x8e\xe2\x80\x8f\xd8\x9c", 0, "\\u200e\\u200f\\u061c", BIDI(3) },
	/* zero-width, soft hyphen, word joiner, BOM */
	{ "z\xe2\x80\x8bw\xe2\x80\x8cj\xe2\x80\x8d", 0, "z\\u200bw\\u200cj\\u200d", INVIS(3) },
	{ "\xe2\x81\xa0\xef\xbb\xbf\xc2\xad", 0, "\\u2060\\ufeff\\u00ad", INVIS(3) },
	/* tag characters (hidden prompts), variation selectors */
	{ "\xf3\xa0\x80\x81\xf3\xa0\x81\xbf", 0, "\\U000e0001\\U000e007f", INVIS(2) },
	{ "\xe2\x9d\xa4\xef\xb8\x8f", 0, "\xe2\x9d\xa4\\ufe0f", INVIS(1) },
	{ "\xf3\xa0\x84\x80", 0, "\\U000e0100", INVIS(1) },
	/* look-alike spaces: not the space the shell splits at */
	{ "rm\xc2\xa0-rf\xe3\x80\x80/", 0, "rm\\u00a0-rf\\u3000/", INVIS(2) },
	{ "a\xe2\x80\xa8" "b", 0, "a\\u2028b", INVIS(1) },
	/* not UTF-8: a lone continuation, overlong, a surrogate, past
	 * U+10FFFF, cut short */
	{ "\x80", 0, "\\x80", BAD(1) },
	{ "\xc0\xaf", 0, "\\xc0\\xaf", BAD(2) },
	{ "\xed\xa0\x80", 0, "\\xed\\xa0\\x80", BAD(3) },
	{ "\xf5\x80\x80\x80", 0, "\\xf5\\x80\\x80\\x80", BAD(4) },
	{ "ab\xe2\x82", 0, "ab\\xe2\\x82", BAD(2) },
	/* real line breaks: marked and counted */
	{ "a\nb\n", 0, "a\xe2\x8f\x8e\nb\xe2\x8f\x8e\n", { .newlines = 2 } },
	/* spaces: 7 stay, 8 or more are shown as their length */
	{ "a       b", 0, "a       b", { 0 } },
	{ "a        b", 0, "a\xe2\x90\xa0\xc3\x97" "8b", { .space_runs = 1, .longest_run = 8 } },
	/* wide and combining text is text */
	{ "\xe4\xb8\xad\xe6\x96\x87\xf0\x9f\x99\x82 e\xcc\x81", 0, "\xe4\xb8\xad\xe6\x96\x87\xf0\x9f\x99\x82 e\xcc\x81", { 0 } },
	/* a backslash is itself */
	{ "\\x1b", 0, "\\x1b", { 0 } },
};

SBX_TEST(render, hostile_corpus_escaped_and_counted)
{
	for (size_t i = 0; i < sizeof(corpus) / sizeof(corpus[0]); i++) {
		const struct hostile *h = &corpus[i];
		struct sbx_strbuf b = { 0 };
		struct sbx_render_counts c = { 0 };

		sbx_render_text(&b, h->in, h->len ? h->len : strlen(h->in), false, &c);
		CU_ASSERT_STRING_EQUAL(b.p ? b.p : "", h->out);
		CU_ASSERT_EQUAL(memcmp(&c, &h->c, sizeof(c)), 0);
		if (strcmp(b.p ? b.p : "", h->out) || memcmp(&c, &h->c, sizeof(c)))
			fprintf(stderr, "render corpus %zu: got \"%s\"\n", i, b.p ? b.p : "");
		/* nothing the rule escapes survives in what is shown */
		for (const unsigned char *p = (const unsigned char *)(b.p ? b.p : ""); *p; p++)
			CU_ASSERT(*p == '\n' || (*p >= 0x20 && *p != 0x7f));
		CU_ASSERT_PTR_NULL(b.p ? strstr(b.p, "\xe2\x80\xae") : NULL);
		free(b.p);
	}
}

SBX_TEST(render, oneline_marks_line_breaks_without_breaking)
{
	struct sbx_strbuf b = { 0 };
	struct sbx_render_counts c = { 0 };

	sbx_render_text(&b, "a\nb", 3, true, &c);
	CU_ASSERT_STRING_EQUAL(b.p, "a\xe2\x8f\x8e" "b");
	CU_ASSERT_EQUAL(c.newlines, 1);
	free(b.p);
}

SBX_TEST(render, argv_keeps_boundaries)
{
	json_t *a = json_pack("[s,s,s,s,s,s,s]", "cat", "two words", "", "line\nbreak", "it's",
			      "-x=a/b.c", "\xe2\x80\xae" "fdp.sh");
	struct sbx_strbuf b = { 0 };
	struct sbx_render_counts c = { 0 };

	sbx_render_argv(&b, a, &c);
	CU_ASSERT_STRING_EQUAL(b.p, "cat 'two words' '' 'line\xe2\x8f\x8e\nbreak' 'it'\\''s' -x=a/b.c "
			       "'\\u202efdp.sh'");
	CU_ASSERT_EQUAL(c.newlines, 1);
	CU_ASSERT_EQUAL(c.bidi, 1);
	free(b.p);
	json_decref(a);
}

SBX_TEST(render, wrap_by_columns_never_splits_an_escape)
{
	struct sbx_render_row *r;
	size_t n;

	/* wide characters take two columns: 3 per row of 6 */
	n = sbx_render_wrap("\xe4\xb8\xad\xe4\xb8\xad\xe4\xb8\xad\xe4\xb8\xad", 6, &r);
	CU_ASSERT_EQUAL(n, 2);
	CU_ASSERT_EQUAL(r[0].len, 9);
	CU_ASSERT_TRUE(r[1].cont);
	free(r);
	/* "ab\u202e" at 4 columns: the escape goes whole to the next row */
	n = sbx_render_wrap("ab\\u202ecd", 4, &r);
	CU_ASSERT_EQUAL(n, 3);
	CU_ASSERT_EQUAL(r[0].len, 2);
	CU_ASSERT_EQUAL(r[1].len, 6);
	free(r);
	/* a line break is a new row, not a continuation */
	n = sbx_render_wrap("ab\xe2\x8f\x8e\ncd", 80, &r);
	CU_ASSERT_EQUAL(n, 2);
	CU_ASSERT_FALSE(r[1].cont);
	CU_ASSERT_EQUAL(r[1].off, 6);
	free(r);
	n = sbx_render_wrap("", 80, &r);
	CU_ASSERT_EQUAL(n, 1);
	free(r);
}

SBX_TEST(render, request_fields_whole_and_counted_once)
{
	char reason[601];
	json_t *req;
	struct sbx_request typed;
	struct sbx_render r;
	char *w;
	json_t *j;

	memset(reason, 'r', 600);
	reason[600] = 0;
	req = json_pack("{s:s, s:s, s:{s:s, s:s}, s:{s:I, s:I, s:s, s:[s,s]}, s:{s:s, s:s, s:s}, s:s}",
			"id", "20261130T101503.123456Z-4242-1a2b3c4d", "kind", "file",
			"object", "path", "/tmp/a\nb\xe2\x80\xae", "access", "read",
			"process", "pid", (json_int_t)1, "uid", (json_int_t)2, "comm", "c\x1b",
			"cmdline", "cat", "/tmp/a\nb\xe2\x80\xae",
			"rule", "pattern", "/tmp/", "verdict", "ask", "reason", reason,
			"agent_reason", "why\x1b");
	sbx_request_view(req, &typed);
	sbx_render_request(&typed, "/p", &r);
	CU_ASSERT_STRING_EQUAL(r.f[0].label, "request");
	CU_ASSERT_STRING_EQUAL(r.f[1].label, "project");
	CU_ASSERT_STRING_EQUAL(r.f[1].text, "/p");
	for (size_t i = 0; i < r.n; i++) {
		if (!strcmp(r.f[i].label, "reason"))
			CU_ASSERT_STRING_EQUAL(r.f[i].text, reason);	/* whole */
		if (!strcmp(r.f[i].label, "object"))
			CU_ASSERT_STRING_EQUAL(r.f[i].text, "/tmp/a\xe2\x8f\x8e\nb\\u202e (read)");
		if (!strcmp(r.f[i].label, "cmdline"))
			CU_ASSERT_STRING_EQUAL(r.f[i].text, "cat '/tmp/a\xe2\x8f\x8e\nb\\u202e'");
		if (!strcmp(r.f[i].label, "agent says"))
			CU_ASSERT_STRING_EQUAL(r.f[i].text, "why\\x1b");
	}
	/* object and cmdline each: 1 break, 1 bidi; comm and agent: 1 ESC each;
	 * the summary is not counted again */
	CU_ASSERT_EQUAL(r.c.newlines, 2);
	CU_ASSERT_EQUAL(r.c.bidi, 2);
	CU_ASSERT_EQUAL(r.c.ctrl, 2);
	CU_ASSERT_STRING_EQUAL(r.summary, "/tmp/a\xe2\x8f\x8e" "b\\u202e (read)");
	w = sbx_render_warning(&r.c);
	CU_ASSERT_STRING_EQUAL(w, "warning: shown escaped: 2 control characters, 2 bidi controls; "
			       "2 line breaks (marked \xe2\x8f\x8e)");
	j = sbx_render_json(&r);
	CU_ASSERT_STRING_EQUAL(json_string_value(json_object_get(j, "warning")), w);
	CU_ASSERT_EQUAL(json_integer_value(json_object_get(json_object_get(j, "counts"), "newlines")), 2);
	CU_ASSERT_EQUAL(json_array_size(json_object_get(j, "fields")), r.n);
	free(w);
	json_decref(j);
	sbx_render_free(&r);
	json_decref(req);
}

SBX_TEST(render, nothing_to_warn_about)
{
	struct sbx_render_counts c = { 0 };

	CU_ASSERT_PTR_NULL(sbx_render_warning(&c));
}
