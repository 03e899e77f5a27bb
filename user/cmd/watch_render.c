// SPDX-License-Identifier: GPL-2.0
/*
 * What the person at `bpfsbx watch` sees: the text of requests, made safe
 * for a terminal, and the screen (ANSI escapes, no curses), redrawn whole
 * each time. The loop, the keys and the queues are in watch.c.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include "lib/text.h"
#include "user/cmd/watch_render.h"

static struct termios saved_tio;
static bool tio_saved;

/* ---- text from requests ---------------------------------------------------- */

/*
 * Text from a request goes to a person's terminal, by the one rule of
 * queue/render.c (escaped, counted, line breaks marked). Here on one line,
 * stopped after max columns (0: no limit) with an ellipsis; returns the
 * columns used.
 */
static size_t sb_safe(struct sbx_strbuf *b, const char *s, size_t max)
{
	struct sbx_strbuf t = { 0 };
	struct sbx_render_counts c = { 0 };
	struct sbx_render_row *rows = NULL;
	size_t n, cols = 0;

	sbx_render_text(&t, s ? s : "", s ? strlen(s) : 0, true, &c);
	if (!t.p) {
		return 0;
	}
	n = sbx_render_wrap(t.p, max ? (max > 1 ? max - 1 : 1) : 0, &rows);
	sbx_sb_putn(b, t.p + rows[0].off, rows[0].len);
	if (n > 1)
		sbx_sb_puts(b, "\u2026");
	for (size_t i = 0; i < rows[0].len; i++)
		cols += ((unsigned char)t.p[i] & 0xc0) != 0x80;
	free(rows);
	free(t.p);
	return cols;
}

/* ---- the full text of a request ---------------------------------------- */

void watch_text_build(struct watch_text *t, const struct sbx_request *req, size_t cols)
{
	struct sbx_strbuf raw = { 0 }, txt = { 0 };
	struct sbx_render_row *rows = NULL;

	memset(t, 0, sizeof(*t));
	sbx_render_object_raw(&raw, req);
	sbx_render_text(&txt, raw.p ? raw.p : "", raw.len, false, &t->c);
	t->n = sbx_render_wrap(txt.p ? txt.p : "", cols, &rows);
	t->lines = calloc(t->n, sizeof(*t->lines));
	if (!t->lines)
		abort();
	for (size_t i = 0; i < t->n; i++) {
		t->lines[i] = strndup((txt.p ? txt.p : "") + rows[i].off, rows[i].len);
		if (!t->lines[i])
			abort();
	}
	free(rows);
	free(raw.p);
	free(txt.p);
}

void watch_text_free(struct watch_text *t)
{
	for (size_t i = 0; i < t->n; i++)
		free(t->lines[i]);
	free(t->lines);
	memset(t, 0, sizeof(*t));
}

char *watch_text_warning(const struct watch_text *t)
{
	return sbx_render_warning(&t->c);
}

/* ---- requests as text -------------------------------------------------- */

static void fmt_dur(char *buf, size_t n, long s)
{
	if (s < 0)
		s = 0;
	if (s < 60)
		snprintf(buf, n, "%lds", s);
	else if (s < 3600)
		snprintf(buf, n, "%ldm%02lds", s / 60, s % 60);
	else if (s < 86400)
		snprintf(buf, n, "%ldh%02ldm", s / 3600, s % 3600 / 60);
	else
		snprintf(buf, n, "%ldd%02ldh", s / 86400, s % 86400 / 3600);
}

void watch_sb_object_raw(struct sbx_strbuf *b, const struct sbx_request *req)
{
	bool cmd = req->kind == SBX_REQ_COMMAND;

	if (cmd)
		sbx_sb_putc(b, '`');
	sbx_render_object_raw(b, req);
	if (cmd)
		sbx_sb_putc(b, '`');
}

/* "~/.aws/credentials (read)", "10.0.0.5:5432/tcp", "`make deploy`" */
void watch_sb_object(struct sbx_strbuf *b, const struct sbx_request *req, size_t max)
{
	struct sbx_strbuf t = { 0 };

	watch_sb_object_raw(&t, req);
	sb_safe(b, t.p, max);
	free(t.p);
}

/* seconds from now to t; 0 when the record had no time */
static long secs_until(time_t t)
{
	return t ? (long)(t - time(NULL)) : 0;
}

void watch_sb_result(struct sbx_strbuf *b, const struct sbx_request *done, const char *sep)
{
	const json_t *r = done->decision.result;

	if (!r)
		return;
	sbx_sb_printf(b, ": exit %lld%s%s,%soutput in %s",
		  (long long)json_integer_value(json_object_get(r, "exit_code")),
		  json_is_true(json_object_get(r, "timed_out")) ? " (timed out)" : "",
		  json_is_true(json_object_get(r, "truncated")) ? " (output cut at 1 MiB)" : "",
		  sep, sbx_json_str(r, "output") ?: "?");
}

/* ---- the terminal UI ---------------------------------------------------- */

void watch_tty_restore(void)
{
	if (tio_saved) {
		/* leave the alternate screen, show the cursor */
		const char s[] = "\033[?7h\033[?25h\033[?1049l";

		if (write(STDOUT_FILENO, s, sizeof(s) - 1) < 0) {
			/* nothing left to tell */
		}
		tcsetattr(STDIN_FILENO, TCSAFLUSH, &saved_tio);
		tio_saved = false;
	}
}

int watch_tty_setup(void)
{
	struct termios t;
	/* autowrap off: a line never takes two rows, so the rows counted
	 * as drawn are the rows on the screen */
	const char s[] = "\033[?1049h\033[?25l\033[?7l";

	if (tcgetattr(STDIN_FILENO, &saved_tio) < 0)
		return -errno;
	t = saved_tio;
	/* keys one at a time, not echoed; ^C still interrupts */
	t.c_lflag &= ~(tcflag_t)(ICANON | ECHO);
	t.c_cc[VMIN] = 1;
	t.c_cc[VTIME] = 0;
	if (tcsetattr(STDIN_FILENO, TCSAFLUSH, &t) < 0)
		return -errno;
	tio_saved = true;
	atexit(watch_tty_restore);
	if (write(STDOUT_FILENO, s, sizeof(s) - 1) < 0)
		return -errno;
	return 0;
}

static void term_size(int *rows, int *cols)
{
	struct winsize ws;

	*rows = 24;
	*cols = 80;
	if (ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_row && ws.ws_col) {
		*rows = ws.ws_row;
		*cols = ws.ws_col;
	}
}

/* ---- the screen ----------------------------------------------------------- */

/* The screen is built as lines, then at most `rows` of them are written:
 * what is counted as drawn is what is on the screen. */
struct screen {
	struct sbx_strbuf *l;
	size_t n;
	size_t rows;
};

static struct sbx_strbuf *line(struct screen *s)
{
	s->l = realloc(s->l, (s->n + 1) * sizeof(*s->l));
	if (!s->l)
		abort();
	s->l[s->n] = (struct sbx_strbuf){ 0 };
	return &s->l[s->n++];
}

static void detail(struct screen *s, size_t cols, const char *label, const char *text)
{
	struct sbx_strbuf *b = line(s);

	sbx_sb_printf(b, "  \033[1m%-10s\033[0m ", label);
	sb_safe(b, text, cols > 15 ? cols - 15 : 1);
}

/* what the gutter takes: "  " + a label of 10 + " " */
#define GUTTER 13

struct drow {
	size_t field, off, len;
	bool cont;
};

/*
 * The selected request, every field whole, in rows of the terminal's
 * width. What does not fit is paged (space, b) by the rows drawn; each
 * byte of the rendering that reaches the screen is marked, and the
 * approve keys arm once every one has been: a command padded to push its
 * tail out of sight, or a reason of 60 lines, cannot be approved unseen.
 * The marks are of the text, not of rows, so a resize (SIGWINCH) that
 * wraps it anew keeps what was read.
 */
static void draw_request(struct watch *w, struct screen *s, size_t width,
			 const struct sbx_request *req, size_t below)
{
	struct sbx_render r;
	struct sbx_strbuf doc = { 0 };
	struct drow *dr = NULL;
	size_t nd = 0, room, first, last, textw = width > GUTTER + 1 ? width - GUTTER : 1;
	size_t *base;
	char *warn;

	sbx_render_request(req, w->items[w->sel].w->dir, &r);
	if (w->prop && req->id && !strcmp(w->prop->id, req->id))
		sbx_render_proposal(w->prop, &r);
	base = calloc(r.n + 1, sizeof(*base));
	if (!base)
		abort();
	for (size_t i = 0; i < r.n; i++) {
		struct sbx_render_row *rows;
		size_t n = sbx_render_wrap(r.f[i].text, textw, &rows);

		base[i] = doc.len;
		sbx_sb_puts(&doc, r.f[i].label);
		sbx_sb_putc(&doc, '\t');
		sbx_sb_puts(&doc, r.f[i].text);
		sbx_sb_putc(&doc, '\n');
		base[i] += strlen(r.f[i].label) + 1;
		dr = realloc(dr, (nd + n) * sizeof(*dr));
		if (!dr)
			abort();
		for (size_t k = 0; k < n; k++)
			dr[nd++] = (struct drow){ i, rows[k].off, rows[k].len, rows[k].cont };
		free(rows);
	}
	if (doc.oom)
		abort();
	/* another request, or this one changed: nothing of it was seen */
	if (!w->view_id || strcmp(w->view_id, req->id ?: "") || !w->view_doc ||
	    strcmp(w->view_doc, doc.p ? doc.p : "")) {
		free(w->view_id);
		free(w->view_doc);
		free(w->seen_bytes);
		w->view_id = strdup(req->id ?: "");
		w->view_doc = strdup(doc.p ? doc.p : "");
		w->seen_len = doc.len;
		w->seen_bytes = calloc(doc.len + 1, 1);
		if (!w->view_id || !w->view_doc || !w->seen_bytes)
			abort();
		w->scroll = 0;
	}
	warn = sbx_render_warning(&r.c);
	if (warn) {
		/* whole, on as many lines as it takes */
		struct sbx_render_row *wr;
		size_t n = sbx_render_wrap(warn, width > 5 ? width - 4 : 1, &wr);

		for (size_t i = 0; i < n; i++)
			sbx_sb_printf(line(s), "  \033[1;31m%.*s\033[0m", (int)wr[i].len,
				      warn + wr[i].off);
		free(wr);
	}
	free(warn);
	/* the rows left once the lines below (the keys, the status) are kept */
	room = s->rows > s->n + below ? s->rows - s->n - below : 0;
	if (nd > room)
		room = room > 2 ? room - 1 : 1;		/* the "rows a-b of n" line */
	if (w->scroll + room > nd)
		w->scroll = nd > room ? nd - room : 0;
	first = w->scroll;
	last = first + room < nd ? first + room : nd;
	w->page = last - first ? last - first : 1;
	for (size_t i = first; i < last; i++) {
		struct sbx_strbuf *b = line(s);
		const struct sbx_render_field *f = &r.f[dr[i].field];

		if (i == 0 || dr[i].field != dr[i - 1].field)
			sbx_sb_printf(b, "  \033[1m%-10s\033[0m ", f->label);
		else if (dr[i].cont)
			sbx_sb_printf(b, "%*s\u21aa ", GUTTER - 2, "");	/* soft wrap */
		else
			sbx_sb_printf(b, "%*s", GUTTER, "");		/* after a line break */
		sbx_sb_putn(b, f->text + dr[i].off, dr[i].len);
		if (s->n <= s->rows) {
			size_t at = base[dr[i].field] + dr[i].off;

			memset(w->seen_bytes + at, 1, dr[i].len);
			/* the line break after it, and the label before a
			 * field's first row, go with the row */
			if (at + dr[i].len < w->seen_len && w->view_doc[at + dr[i].len] == '\n')
				w->seen_bytes[at + dr[i].len] = 1;
			if (!dr[i].off)
				memset(w->seen_bytes + at - strlen(f->label) - 1, 1,
				       strlen(f->label) + 1);
		}
	}
	w->unseen = 0;
	for (size_t i = 0; i < w->seen_len; i++)
		w->unseen += !w->seen_bytes[i];
	if (!w->armed && !w->unseen && w->status && !strncmp(w->status, "Not approved: scroll", 20)) {
		free(w->status);	/* it no longer holds */
		w->status = NULL;
	}
	w->armed = w->unseen == 0;
	if (nd > last - first || !w->armed) {
		size_t left = 0;

		for (size_t i = 0; i < nd; i++) {
			size_t at = base[dr[i].field] + dr[i].off;

			for (size_t k = 0; k <= dr[i].len && at + k < w->seen_len; k++)
				if (!w->seen_bytes[at + k]) {
					left++;
					break;
				}
		}
		sbx_sb_printf(line(s), "  \033[7m rows %zu-%zu of %zu%s \033[0m", first + 1, last, nd,
			      last < nd ? ": space for more, b back" : ": the end");
		if (left)
			sbx_sb_printf(&s->l[s->n - 1], "  %zu row%s not yet on the screen", left,
				      left == 1 ? "" : "s");
	}
	free(dr);
	free(base);
	free(doc.p);
	sbx_render_free(&r);
}

/* one page on (or back, pages < 0): by the rows the last draw showed */
void watch_scroll(struct watch *w, int pages)
{
	size_t page = w->page ? w->page : 1;

	if (pages > 0)
		w->scroll += page;
	else
		w->scroll = w->scroll > page ? w->scroll - page : 0;
}

static size_t count_lines(const char *s, size_t max)
{
	size_t n = 0;

	for (const char *p = s; p && *p && n < max; n++) {
		p = strchr(p, '\n');
		if (!p)
			return n + 1;
		p++;
	}
	return n;
}

int watch_draw(struct watch *w)
{
	struct sbx_strbuf out = { 0 };
	struct screen s = { 0 };
	int trows, tcols, rc = 0;
	size_t width, first = 0, list_rows, nstatus;

	term_size(&trows, &tcols);
	width = (size_t)tcols;
	s.rows = (size_t)trows;
	{
		struct sbx_strbuf *b = line(&s);

		sbx_sb_printf(b, "\033[1mbpfsbx watch\033[0m  %zu pending", w->n);
		if (w->nq == 1) {
			sbx_sb_putn(b, " in ", 4);
			sb_safe(b, w->qs[0].dir, width > 40 ? width - 40 : 1);
		} else {
			sbx_sb_printf(b, " in %zu projects", w->nq);
		}
	}
	if (w->learning) {
		struct sbx_strbuf *b = line(&s);

		sbx_sb_puts(b, "\033[1;7m LEARNING \033[0m ");
		sb_safe(b, w->learning, width > 80 ? width - 80 : 20);
		sbx_sb_puts(b, ": denies and asks recorded, not enforced (run --learn)");
	}
	line(&s);

	/* the list: at most a third of the screen */
	list_rows = (size_t)(trows / 3 > 3 ? trows / 3 : 3);
	if (w->sel >= list_rows)
		first = w->sel - list_rows + 1;
	if (!w->n)
		sbx_sb_puts(line(&s), "  No pending requests; waiting for new ones.");
	for (size_t i = first; i < w->n && i < first + list_rows; i++) {
		const struct sbx_request *req = &w->items[i].req;
		long dl;
		char age[32], left[32];
		struct sbx_strbuf *b = line(&s);

		dl = secs_until(req->deadline);
		fmt_dur(age, sizeof(age), -secs_until(req->created));
		fmt_dur(left, sizeof(left), dl < 0 ? -dl : dl);
		sbx_sb_putn(b, i == w->sel ? "\033[7m> " : "  ", i == w->sel ? 6 : 2);
		sbx_sb_printf(b, "%-7s ", req->kind_name ?: "?");
		watch_sb_object(b, req, width > 70 ? width - 50 : 20);
		sbx_sb_printf(b, "  x%lld", req->count);
		if (w->items[i].alike)
			sbx_sb_printf(b, "  +%zu alike: r", w->items[i].alike);
		sbx_sb_printf(b, "  age %s  %s %s", age, dl < 0 ? "overdue" : "decide within", left);
		if (i == w->sel)
			sbx_sb_putn(b, "\033[0m", 4);
	}
	line(&s);

	/* below the request: the keys, and the status (at most 3 lines) */
	nstatus = w->status ? 1 + count_lines(w->status, 3) : 0;
	if (w->n) {
		const struct sbx_request *req = &w->items[w->sel].req;
		long dl;
		char age[32], left[32];
		struct sbx_strbuf t = { 0 };

		dl = secs_until(req->deadline);
		fmt_dur(age, sizeof(age), -secs_until(req->created));
		fmt_dur(left, sizeof(left), dl < 0 ? -dl : dl);
		/* the deadline as the record gives it (its zone and fraction) */
		sbx_sb_printf(&t, "%lld  age %s  deadline %s (%s %s)", req->count,
			      age, sbx_json_str(req->json, "deadline") ?: "?",
			      dl < 0 ? "overdue by" : "in", left);
		detail(&s, width, "count", t.p);
		free(t.p);
		draw_request(w, &s, width, req, 1 + nstatus);
		if (w->prop && req->id && !strcmp(w->prop->id, req->id))
			sbx_sb_printf(line(&s), "  %s   \033[1many other key\033[0m put the rule "
				      "away", w->armed ? "\033[1my\033[0m write the rule and approve "
				      "what it answers" : "\033[1;33mscroll to the end of the rule to "
				      "arm y\033[0m   \033[1mspace\033[0m more   \033[1mb\033[0m back");
		else if (!w->armed)
			sbx_sb_printf(line(&s), "  \033[1;33mscroll to the end to arm approve\033[0m"
				      "   \033[1mspace\033[0m more   \033[1mb\033[0m back   "
				      "\033[1md\033[0m deny   \033[1mj/k\033[0m move   \033[1mq\033[0m quit");
		else
			sbx_sb_puts(line(&s), is_command(req) ?
			  "  \033[1mo\033[0m run it once here   \033[1md\033[0m deny   "
			  "\033[1mj/k\033[0m move   \033[1mq\033[0m quit" :
			  "  \033[1mo\033[0m once   \033[1ms\033[0m session   \033[1ma\033[0m always"
			  "   \033[1mr\033[0m a rule   \033[1md\033[0m deny   \033[1mj/k\033[0m move"
			  "   \033[1mq\033[0m quit");
	} else {
		w->armed = false;
		sbx_sb_puts(line(&s), "  \033[1mq\033[0m quit");
	}
	if (w->status) {
		/* one screen line per line of the status, each clipped */
		char *save = NULL, *copy = strdup(w->status), *ln;
		size_t k = 0;

		line(&s);
		for (ln = strtok_r(copy, "\n", &save); ln && k < 3; ln = strtok_r(NULL, "\n", &save), k++) {
			struct sbx_strbuf *b = line(&s);

			sbx_sb_putn(b, "  ", 2);
			sb_safe(b, ln, width > 4 ? width - 4 : 1);
		}
		free(copy);
	}
	if (w->output) {
		char *save = NULL, *copy = strdup(w->output), *ln;

		for (ln = strtok_r(copy, "\n", &save); ln && s.n < s.rows;
		     ln = strtok_r(NULL, "\n", &save)) {
			struct sbx_strbuf *b = line(&s);

			sbx_sb_putn(b, "  | ", 4);
			sb_safe(b, ln, width > 6 ? width - 6 : 1);
		}
		free(copy);
	}
	/* no line break after the last row: it would scroll the screen */
	sbx_sb_putn(&out, "\033[H", 3);
	for (size_t i = 0; i < s.n && i < s.rows; i++) {
		sbx_sb_putn(&out, "\033[K", 3);
		if (s.l[i].p)
			sbx_sb_putn(&out, s.l[i].p, s.l[i].len);
		if (i + 1 < s.n && i + 1 < s.rows)
			sbx_sb_putn(&out, "\r\n", 2);
	}
	sbx_sb_putn(&out, "\033[J", 3);	/* clear what is below */
	if (out.p && write(STDOUT_FILENO, out.p, out.len) < 0)
		rc = -1;
	for (size_t i = 0; i < s.n; i++)
		free(s.l[i].p);
	free(s.l);
	free(out.p);
	return rc;
}
