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
 * Text from a request goes to a person's terminal. Control characters,
 * C1 controls and bidirectional overrides could hide what is really
 * being asked (an ESC sequence that rewrites the line, a right-to-left
 * override that reverses a path), so they are shown as escapes. Also
 * stops after max display columns (0: no limit), counting code points.
 */
static size_t sb_safe(struct sbx_strbuf *b, const char *s, size_t max)
{
	const unsigned char *p = (const unsigned char *)(s ? s : "");
	size_t cols = 0;
	char esc[16];

	while (*p && (!max || cols < max)) {
		unsigned c = *p;
		size_t len = c < 0x80 ? 1 : (c & 0xe0) == 0xc0 ? 2 : (c & 0xf0) == 0xe0 ? 3 :
			     (c & 0xf8) == 0xf0 ? 4 : 0;
		bool valid = len > 0;
		unsigned cp = len == 1 ? c : len == 2 ? c & 0x1f : len == 3 ? c & 0x0f : c & 0x07;

		for (size_t i = 1; valid && i < len; i++) {
			if ((p[i] & 0xc0) != 0x80)
				valid = false;
			else
				cp = (cp << 6) | (p[i] & 0x3f);
		}
		if (!valid) {
			snprintf(esc, sizeof(esc), "\\x%02x", c);
			sbx_sb_putn(b, esc, strlen(esc));
			cols += 4;
			p++;
			continue;
		}
		if (cp < 0x20 || cp == 0x7f || (cp >= 0x80 && cp <= 0x9f) || watch_invisible(cp)) {
			if (cp == '\n')
				snprintf(esc, sizeof(esc), "\\n");
			else if (cp == '\t')
				snprintf(esc, sizeof(esc), "\\t");
			else
				snprintf(esc, sizeof(esc), cp < 0x100 ? "\\x%02x" : "\\u%04x", cp);
			sbx_sb_putn(b, esc, strlen(esc));
			cols += strlen(esc);
		} else {
			sbx_sb_putn(b, (const char *)p, len);
			cols++;
		}
		p += len;
	}
	if (*p && max)
		sbx_sb_putn(b, "…", strlen("…"));
	return cols;
}

bool watch_invisible(unsigned cp)
{
	/* bidirectional controls (CVE-2021-42574 "Trojan Source"), zero-width
	 * and other default-ignorable code points, and the tag characters
	 * that carry hidden prompts (Unicode TR 36 and TR 31) */
	return (cp >= 0x202a && cp <= 0x202e) || (cp >= 0x2066 && cp <= 0x2069) ||
	       cp == 0x200e || cp == 0x200f || cp == 0x061c || cp == 0x00ad || cp == 0x034f ||
	       (cp >= 0x115f && cp <= 0x1160) || (cp >= 0x17b4 && cp <= 0x17b5) ||
	       (cp >= 0x180b && cp <= 0x180f) || (cp >= 0x200b && cp <= 0x200d) ||
	       (cp >= 0x2028 && cp <= 0x2029) || (cp >= 0x2060 && cp <= 0x2065) ||
	       cp == 0x3164 || (cp >= 0xfe00 && cp <= 0xfe0f) || cp == 0xfeff || cp == 0xffa0 ||
	       (cp >= 0xfff0 && cp <= 0xfffb) || (cp >= 0x1d173 && cp <= 0x1d17a) ||
	       (cp >= 0xe0000 && cp <= 0xe0fff);
}

/* ---- the full text of a request ---------------------------------------- */

struct cell {
	size_t off, len, cols;
};

static void text_line(struct watch_text *t, const char *s, size_t n)
{
	t->lines = realloc(t->lines, (t->n + 1) * sizeof(*t->lines));
	if (!t->lines)
		abort();
	t->lines[t->n] = strndup(s, n);
	if (!t->lines[t->n])
		abort();
	t->n++;
}

/* one logical line (no newline in it), escaped, cut into rows of cols */
static void text_logical(struct watch_text *t, const unsigned char *p, size_t n, size_t cols)
{
	struct sbx_strbuf b = { 0 };
	struct cell *cells = NULL;
	size_t nc = 0, i = 0, row_cols = 0, row_off = 0;
	char esc[40];

	while (i < n) {
		unsigned c = p[i];
		size_t len = c < 0x80 ? 1 : (c & 0xe0) == 0xc0 ? 2 : (c & 0xf0) == 0xe0 ? 3 :
			     (c & 0xf8) == 0xf0 ? 4 : 0;
		bool valid = len > 0 && i + len <= n;
		unsigned cp = len == 1 ? c : len == 2 ? c & 0x1f : len == 3 ? c & 0x0f : c & 0x07;
		struct cell cl = { .off = b.len };

		for (size_t k = 1; valid && k < len; k++) {
			if ((p[i + k] & 0xc0) != 0x80)
				valid = false;
			else
				cp = (cp << 6) | (p[i + k] & 0x3f);
		}
		if (c == ' ' && i + 8 <= n && !memcmp(p + i, "        ", 8)) {
			/* a run of spaces can push the rest of a command off the
			 * screen: it is shown as its length */
			size_t run = 0;

			while (i + run < n && p[i + run] == ' ')
				run++;
			snprintf(esc, sizeof(esc), "\u2420\u00d7%zu", run);
			sbx_sb_puts(&b, esc);
			t->space_runs++;
			if (run > t->longest_run)
				t->longest_run = run;
			i += run;
		} else if (!valid) {
			snprintf(esc, sizeof(esc), "\\x%02x", c);
			sbx_sb_puts(&b, esc);
			t->ctrl++;
			i++;
		} else if (cp == '\t') {
			sbx_sb_puts(&b, "\\t");
			i += len;
		} else if (cp < 0x20 || cp == 0x7f || (cp >= 0x80 && cp <= 0x9f)) {
			snprintf(esc, sizeof(esc), "\\x%02x", cp);
			sbx_sb_puts(&b, esc);
			t->ctrl++;
			i += len;
		} else if (watch_invisible(cp)) {
			snprintf(esc, sizeof(esc), cp > 0xffff ? "\\U%08x" : "\\u%04x", cp);
			sbx_sb_puts(&b, esc);
			t->invisible++;
			i += len;
		} else {
			sbx_sb_putn(&b, (const char *)p + i, len);
			i += len;
		}
		cl.len = b.len - cl.off;
		/* an escape counts its characters, any other code point one column */
		cl.cols = cl.len == len && valid ? 1 : cl.len;
		cells = realloc(cells, (nc + 1) * sizeof(*cells));
		if (!cells)
			abort();
		cells[nc++] = cl;
	}
	if (!nc) {
		text_line(t, "", 0);
		free(b.p);
		return;
	}
	for (size_t k = 0; k < nc; k++) {
		if (cols && row_cols && row_cols + cells[k].cols > cols) {
			text_line(t, b.p + row_off, cells[k].off - row_off);
			row_off = cells[k].off;
			row_cols = 0;
		}
		row_cols += cells[k].cols;
	}
	text_line(t, b.p + row_off, b.len - row_off);
	free(cells);
	free(b.p);
}

void watch_text_build(struct watch_text *t, const json_t *req, size_t cols)
{
	const json_t *o = json_object_get(req, "object");
	struct sbx_strbuf raw = { 0 };
	const char *p, *nl;

	memset(t, 0, sizeof(*t));
	if (is_command(req)) {
		sbx_sb_puts(&raw, str(o, "command") ?: "");
	} else {
		watch_sb_object_raw(&raw, req);
	}
	p = raw.p ? raw.p : "";
	for (;;) {
		nl = strchr(p, '\n');
		text_logical(t, (const unsigned char *)p, nl ? (size_t)(nl - p) : strlen(p), cols);
		if (!nl)
			break;
		p = nl + 1;
	}
	free(raw.p);
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
	struct sbx_strbuf b = { 0 };

	if (!t->ctrl && !t->invisible && !t->space_runs)
		return NULL;
	sbx_sb_puts(&b, "warning: shown escaped:");
	if (t->ctrl)
		sbx_sb_printf(&b, " %u control character%s", t->ctrl, t->ctrl == 1 ? "" : "s");
	if (t->invisible)
		sbx_sb_printf(&b, "%s %u invisible character%s (bidi, zero-width or tag)",
			      t->ctrl ? "," : "", t->invisible, t->invisible == 1 ? "" : "s");
	if (t->space_runs)
		sbx_sb_printf(&b, "%s %u run%s of spaces (longest %zu)",
			      t->ctrl || t->invisible ? "," : "", t->space_runs,
			      t->space_runs == 1 ? "" : "s", t->longest_run);
	return b.p;
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

/* "~/.aws/credentials (read)", "10.0.0.5:5432/tcp", "`make deploy`" */
void watch_sb_object(struct sbx_strbuf *b, const json_t *req, size_t max)
{
	struct sbx_strbuf t = { 0 };

	watch_sb_object_raw(&t, req);
	sb_safe(b, t.p, max);
	free(t.p);
}

void watch_sb_object_raw(struct sbx_strbuf *b, const json_t *req)
{
	int kind = sbx_request_kind(req);
	const json_t *o = json_object_get(req, "object");
	struct sbx_strbuf t = { 0 };

	if (kind == SBX_REQ_COMMAND) {
		sbx_sb_putn(&t, "`", 1);
		sbx_sb_putn(&t, str(o, "command") ?: "", strlen(str(o, "command") ?: ""));
		sbx_sb_putn(&t, "`", 1);
	} else if (kind == SBX_REQ_HOST) {
		/* a name, as the resolver was asked for it */
		sbx_sb_printf(&t, "look up %s", str(o, "host") ?: "?");
	} else if (kind == SBX_REQ_NET || kind == SBX_REQ_ACCESS_HOST) {
		const char *a = str(o, "addr") ?: str(o, "host") ?: "?";
		bool v6 = strchr(a, ':') != NULL;

		sbx_sb_printf(&t, "%s%s%s", v6 ? "[" : "", a, v6 ? "]" : "");
		if (json_object_get(o, "port"))
			sbx_sb_printf(&t, ":%lld", (long long)json_integer_value(json_object_get(o, "port")));
		if (str(o, "proto"))
			sbx_sb_printf(&t, "/%s", str(o, "proto"));
		if (str(o, "name"))	/* the domain the address was learned from */
			sbx_sb_printf(&t, " (%s)", str(o, "name"));
	} else {
		const char *path = str(o, "path") ?: "?";

		sbx_sb_putn(&t, path, strlen(path));
		if (str(o, "access"))
			sbx_sb_printf(&t, " (%s)", str(o, "access"));
	}
	if (t.p)
		sbx_sb_putn(b, t.p, t.len);
	free(t.p);
}

static long secs_until(const json_t *req, const char *key)
{
	time_t t;

	if (sbx_time_parse(str(req, key), &t))
		return 0;
	return (long)(t - time(NULL));
}

void watch_sb_result(struct sbx_strbuf *b, const json_t *done, const char *sep)
{
	const json_t *r = json_object_get(done, "result");

	if (!r)
		return;
	sbx_sb_printf(b, ": exit %lld%s%s,%soutput in %s",
		  (long long)json_integer_value(json_object_get(r, "exit_code")),
		  json_is_true(json_object_get(r, "timed_out")) ? " (timed out)" : "",
		  json_is_true(json_object_get(r, "truncated")) ? " (output cut at 1 MiB)" : "",
		  sep, str(r, "output") ?: "?");
}

/* ---- the terminal UI ---------------------------------------------------- */

void watch_tty_restore(void)
{
	if (tio_saved) {
		/* leave the alternate screen, show the cursor */
		const char s[] = "\033[?25h\033[?1049l";

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
	const char s[] = "\033[?1049h\033[?25l";

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

/* one screen line, clipped to the width */
static void line_start(struct sbx_strbuf *b)
{
	sbx_sb_putn(b, "\033[K", 3);
}

static void line_end(struct sbx_strbuf *b, int *row)
{
	sbx_sb_putn(b, "\r\n", 2);
	(*row)++;
}

static void detail(struct sbx_strbuf *b, int *row, size_t cols, const char *label,
		   const char *text)
{
	line_start(b);
	sbx_sb_printf(b, "  \033[1m%-9s\033[0m ", label);
	sb_safe(b, text, cols > 14 ? cols - 14 : 1);
	line_end(b, row);
}

/*
 * The object (a command, a path) in full, above the keys. What does not
 * fit is scrolled (space, b), and the approve keys work only once the
 * last row has been on the screen: a command padded to push its tail
 * out of sight cannot be approved unseen.
 */
static int draw_text(struct watch *w, struct sbx_strbuf *b, int row, int rows, size_t width,
		     const json_t *req)
{
	struct watch_text t;
	char *warn;
	size_t room, first, last;
	/* what is left below: a blank, the keys, the status (2 or more) */
	int reserve = 4 + (w->status ? 2 : 0);

	if (!w->view_id || strcmp(w->view_id, str(req, "id") ?: "")) {
		free(w->view_id);
		w->view_id = strdup(str(req, "id") ?: "");
		w->scroll = 0;
		w->end_seen = false;
	}
	watch_text_build(&t, req, width > 16 ? width - 16 : 1);
	warn = watch_text_warning(&t);
	if (warn) {
		line_start(b);
		sbx_sb_printf(b, "  \033[1;31m%s\033[0m", warn);
		line_end(b, &row);
		free(warn);
	}
	room = rows - row - reserve > 3 ? (size_t)(rows - row - reserve) : 3;
	if (t.n > room)
		room--;		/* the "rows a-b of n" line */
	if (w->scroll + room > t.n)
		w->scroll = t.n > room ? t.n - room : 0;
	first = w->scroll;
	last = first + room < t.n ? first + room : t.n;
	for (size_t i = first; i < last; i++) {
		line_start(b);
		sbx_sb_printf(b, "  \033[1m%-9s\033[0m ", i == 0 ?
			      (is_command(req) ? "command" : "object") : "");
		sbx_sb_puts(b, t.lines[i]);
		line_end(b, &row);
	}
	if (t.n > room) {
		line_start(b);
		sbx_sb_printf(b, "  \033[7m rows %zu-%zu of %zu%s \033[0m", first + 1, last, t.n,
			      last < t.n ? ": space for more" : ": the end");
		line_end(b, &row);
	}
	if (last >= t.n)
		w->end_seen = true;
	watch_text_free(&t);
	return row;
}

/* one page on (or back, pages < 0) in the selected request's text */
void watch_scroll(struct watch *w, int pages)
{
	int rows, cols;

	term_size(&rows, &cols);
	if (pages > 0)
		w->scroll += (size_t)(rows / 2 > 1 ? rows / 2 : 1);
	else
		w->scroll = w->scroll > (size_t)(rows / 2) ? w->scroll - (size_t)(rows / 2) : 0;
}

int watch_draw(struct watch *w)
{
	struct sbx_strbuf b = { 0 };
	int rows, cols, row = 0, rc = 0;
	size_t width, first = 0, list_rows;

	term_size(&rows, &cols);
	width = (size_t)cols;
	sbx_sb_putn(&b, "\033[H", 3);
	line_start(&b);
	sbx_sb_printf(&b, "\033[1mbpfsbx watch\033[0m  %zu pending", w->n);
	if (w->nq == 1) {
		sbx_sb_putn(&b, " in ", 4);
		sb_safe(&b, w->qs[0].dir, width > 40 ? width - 40 : 1);
	} else {
		sbx_sb_printf(&b, " in %zu projects", w->nq);
	}
	line_end(&b, &row);
	line_start(&b);
	line_end(&b, &row);

	/* the list: at most a third of the screen */
	list_rows = (size_t)(rows / 3 > 3 ? rows / 3 : 3);
	if (w->sel >= list_rows)
		first = w->sel - list_rows + 1;
	if (!w->n) {
		line_start(&b);
		sbx_sb_putn(&b, "  No pending requests; waiting for new ones.", 44);
		line_end(&b, &row);
	}
	for (size_t i = first; i < w->n && i < first + list_rows; i++) {
		const json_t *req = w->items[i].req;
		long dl = secs_until(req, "deadline");
		char age[32], left[32];

		fmt_dur(age, sizeof(age), -secs_until(req, "created"));
		fmt_dur(left, sizeof(left), dl < 0 ? -dl : dl);
		line_start(&b);
		sbx_sb_putn(&b, i == w->sel ? "\033[7m> " : "  ", i == w->sel ? 6 : 2);
		sbx_sb_printf(&b, "%-7s ", str(req, "kind") ?: "?");
		watch_sb_object(&b, req, width > 70 ? width - 50 : 20);
		sbx_sb_printf(&b, "  x%lld  age %s  %s %s", (long long)json_integer_value(
				  json_object_get(req, "count")), age,
			  dl < 0 ? "overdue" : "decide within", left);
		if (i == w->sel)
			sbx_sb_putn(&b, "\033[0m", 4);
		line_end(&b, &row);
	}
	line_start(&b);
	line_end(&b, &row);

	if (w->n) {
		const json_t *req = w->items[w->sel].req;
		const json_t *p = json_object_get(req, "process");
		const json_t *r = json_object_get(req, "rule");
		const json_t *cl = json_object_get(p, "cmdline");
		struct sbx_strbuf t = { 0 };
		size_t i;
		json_t *a;

		detail(&b, &row, width, "request", str(req, "id"));
		if (w->nq > 1)
			detail(&b, &row, width, "project", w->items[w->sel].w->dir);
		else if (str(req, "project"))
			detail(&b, &row, width, "project", str(req, "project"));
		if (str(req, "session"))
			detail(&b, &row, width, "session", str(req, "session"));
		detail(&b, &row, width, "kind", str(req, "kind"));
		if (is_command(req)) {
			const char *cwd = str(json_object_get(req, "object"), "cwd");

			detail(&b, &row, width, "runs in", cwd ? cwd : "(project directory)");
		}
		if (json_is_object(p)) {
			sbx_sb_printf(&t, "pid %lld  uid %lld  comm %s",
				  (long long)json_integer_value(json_object_get(p, "pid")),
				  (long long)json_integer_value(json_object_get(p, "uid")),
				  str(p, "comm") ?: "?");
			detail(&b, &row, width, "process", t.p);
			free(t.p);
			t = (struct sbx_strbuf){ 0 };
			if (str(p, "exe"))
				detail(&b, &row, width, "exe", str(p, "exe"));
			json_array_foreach(cl, i, a) {
				sbx_sb_putn(&t, i ? " " : "", i ? 1 : 0);
				sbx_sb_putn(&t, json_string_value(a) ?: "", strlen(json_string_value(a) ?: ""));
			}
			if (t.p)
				detail(&b, &row, width, "cmdline", t.p);
			free(t.p);
			t = (struct sbx_strbuf){ 0 };
			if (str(p, "cwd"))
				detail(&b, &row, width, "cwd", str(p, "cwd"));
		}
		if (json_is_object(r)) {
			sbx_sb_printf(&t, "%s -> %s", str(r, "pattern") ?: "?", str(r, "verdict") ?: "?");
			if (str(r, "source"))
				sbx_sb_printf(&t, "  (%s)", str(r, "source"));
			detail(&b, &row, width, "rule", t.p);
			free(t.p);
			t = (struct sbx_strbuf){ 0 };
			if (str(r, "reason"))
				detail(&b, &row, width, "reason", str(r, "reason"));
		}
		if (str(req, "agent_reason"))
			detail(&b, &row, width, "agent says", str(req, "agent_reason"));
		if (str(req, "notice"))
			detail(&b, &row, width, "notice", str(req, "notice"));
		{
			const json_t *o = json_object_get(req, "object");
			const json_t *nl = json_object_get(o, "nlink");

			if (json_is_integer(nl) && json_integer_value(nl) > 1 &&
			    str(o, "type") && !strcmp(str(o, "type"), "file")) {
				sbx_sb_printf(&t, "%lld hard links: other names reach the same file; "
					      "it cannot be approved", (long long)json_integer_value(nl));
				detail(&b, &row, width, "links", t.p);
				free(t.p);
				t = (struct sbx_strbuf){ 0 };
			}
		}
		{
			long dl = secs_until(req, "deadline");
			char age[32], left[32];

			fmt_dur(age, sizeof(age), -secs_until(req, "created"));
			fmt_dur(left, sizeof(left), dl < 0 ? -dl : dl);
			sbx_sb_printf(&t, "%lld  age %s  deadline %s (%s %s)",
				  (long long)json_integer_value(json_object_get(req, "count")),
				  age, str(req, "deadline") ?: "?", dl < 0 ? "overdue by" : "in", left);
			detail(&b, &row, width, "count", t.p);
			free(t.p);
			t = (struct sbx_strbuf){ 0 };
		}
		row = draw_text(w, &b, row, rows, width, req);
		line_start(&b);
		if (!w->end_seen)
			sbx_sb_printf(&b, "  \033[1mspace\033[0m show more (approve keys wait for the "
				      "end)   \033[1mb\033[0m back   \033[1md\033[0m deny   "
				      "\033[1mj/k\033[0m move   \033[1mq\033[0m quit");
		else
			sbx_sb_printf(&b, "%s", is_command(req) ?
			  "  \033[1mo\033[0m run it once here   \033[1md\033[0m deny   "
			  "\033[1mj/k\033[0m move   \033[1mq\033[0m quit" :
			  "  \033[1mo\033[0m once   \033[1ms\033[0m session   \033[1ma\033[0m always"
			  "   \033[1md\033[0m deny   \033[1mj/k\033[0m move   \033[1mq\033[0m quit");
		line_end(&b, &row);
	} else {
		line_start(&b);
		sbx_sb_putn(&b, "  \033[1mq\033[0m quit", strlen("  \033[1mq\033[0m quit"));
		line_end(&b, &row);
	}
	if (w->status) {
		/* one screen line per line of the status, each clipped */
		char *save = NULL, *copy = strdup(w->status), *ln;

		line_start(&b);
		line_end(&b, &row);
		for (ln = strtok_r(copy, "\n", &save); ln; ln = strtok_r(NULL, "\n", &save)) {
			line_start(&b);
			sbx_sb_putn(&b, "  ", 2);
			sb_safe(&b, ln, width > 4 ? width - 4 : 1);
			line_end(&b, &row);
		}
		free(copy);
	}
	if (w->output) {
		char *save = NULL, *copy = strdup(w->output), *ln;

		for (ln = strtok_r(copy, "\n", &save); ln && row < rows - 1;
		     ln = strtok_r(NULL, "\n", &save)) {
			line_start(&b);
			sbx_sb_putn(&b, "  | ", 4);
			sb_safe(&b, ln, width > 6 ? width - 6 : 1);
			line_end(&b, &row);
		}
		free(copy);
	}
	sbx_sb_putn(&b, "\033[J", 3);	/* clear what is below */
	if (b.p && write(STDOUT_FILENO, b.p, b.len) < 0)
		rc = -1;
	free(b.p);
	return rc;
}
