/* SPDX-License-Identifier: GPL-2.0 */
/*
 * render.h - the one rule by which a request is shown to a person, in
 * `bpfsbx watch` (a terminal) and in the dashboard (a browser, which gets
 * the text made here through the API). Everything in a request was
 * written, in the end, by the agent being confined; what the person reads
 * must be what runs:
 *
 *  - control characters (C0, DEL, C1), bidirectional controls, zero-width
 *    and other invisible code points, look-alike spaces and bytes that are
 *    not UTF-8 are shown escaped (\x1b, \u202e, \U000e0041) and counted;
 *  - a real line break is shown as "⏎" and then breaks, and is counted, so
 *    that it never looks like a soft-wrapped continuation;
 *  - a run of 8 or more spaces is shown as its length ("␠×400"), so it
 *    cannot push the rest of a line out of sight;
 *  - a process's arguments keep their boundaries: each one that is empty
 *    or holds anything but plain characters is single-quoted.
 */
#ifndef SBX_RENDER_H
#define SBX_RENDER_H

#include <stdbool.h>
#include <stddef.h>
#include <jansson.h>
#include "lib/text.h"
#include "queue/request.h"

struct sbx_render_counts {
	unsigned ctrl;		/* C0 (but a line break), DEL, C1 */
	unsigned bidi;		/* U+202A-202E, U+2066-2069, U+200E/200F, U+061C */
	unsigned invisible;	/* zero-width, default-ignorable, tags, variation
				 * selectors, look-alike spaces */
	unsigned invalid;	/* bytes that are not UTF-8 */
	unsigned newlines;	/* real line breaks */
	unsigned space_runs;	/* runs of 8 or more spaces */
	size_t longest_run;
};

/* A real line break is shown as this, then a new line */
#define SBX_RENDER_NL "\u23ce"

/* Append s (len bytes) as display text, counting into c. oneline: a line
 * break is shown as SBX_RENDER_NL without breaking (list rows, titles). */
void sbx_render_text(struct sbx_strbuf *b, const char *s, size_t len, bool oneline,
		     struct sbx_render_counts *c);
/* An argument vector (a JSON array of strings): each element rendered,
 * quoted when it is empty or holds anything but [A-Za-z0-9_@%+=:,./-] or
 * non-ASCII text, one space between them. */
void sbx_render_argv(struct sbx_strbuf *b, const json_t *argv, struct sbx_render_counts *c);

/* The object of a request in words, unrendered: "~/.aws/credentials (read)",
 * "10.0.0.5:5432/tcp", "look up example.com", a command as it is */
void sbx_render_object_raw(struct sbx_strbuf *b, const struct sbx_request *req);

/* A request as labelled fields, each field's text rendered (it may hold
 * line breaks after SBX_RENDER_NL); the counts are over every field. */
struct sbx_render_field {
	const char *label;
	char *text;
};
struct sbx_render {
	struct sbx_render_field *f;
	size_t n;
	char *summary;		/* the object on one line */
	struct sbx_render_counts c;
};
/* project: the project to show (NULL: the request's own). A record read
 * from the queue is rendered from its sbx_request_decode(). */
void sbx_render_request(const struct sbx_request *req, const char *project,
			struct sbx_render *r);
void sbx_render_free(struct sbx_render *r);
/* A widened rule (queue/propose.h) after the request it answers: the
 * rule's text, what it allows and keeps refused, the asked access before
 * and after, the waiting requests it answers, and where it is written.
 * Escaped by the same rule: the path in it is the agent's. */
struct sbx_proposal;
void sbx_render_proposal(const struct sbx_proposal *p, struct sbx_render *r);
/* "warning: shown escaped: ..." or NULL when nothing was (malloc'd) */
char *sbx_render_warning(const struct sbx_render_counts *c);
/* {"fields":[[label,text],...],"summary":..,"warning":..|null,"counts":{..}} */
json_t *sbx_render_json(const struct sbx_render *r);

/* UTF-8: the length of the code point at p (1-4) and *cp, or 0 when the
 * byte at p does not start a valid, shortest-form code point within n */
size_t sbx_utf8_decode(const unsigned char *p, size_t n, unsigned *cp);
/* Terminal columns of a printable code point: 0 (combining), 1 or 2 (East
 * Asian wide and fullwidth, emoji). Not locale-dependent: watch and its
 * tests must agree on where rows wrap. */
unsigned sbx_render_width(unsigned cp);

/* Rows of a field's text at cols columns: each row is [off, off+len) of
 * the text; cont: a soft-wrapped continuation (not after a line break).
 * An escape (\x1b, \u202e) is never split. Returns the number of rows,
 * *rows malloc'd. */
struct sbx_render_row {
	size_t off, len;
	bool cont;
};
size_t sbx_render_wrap(const char *text, size_t cols, struct sbx_render_row **rows);

#endif
