// SPDX-License-Identifier: GPL-2.0
/*
 * bpfsbx watch [DIR...] - the approver. It runs outside every session, in
 * a plain terminal (over SSH too: ANSI escapes, no curses, no browser).
 *
 * On a terminal it lists pending requests as they arrive (inotify on
 * pending/) with the context a person needs to decide, and takes one key:
 * o once, s session, a always, d deny; j/k or arrows move; q quits.
 * Without a terminal (stdin or stdout is not a TTY) it speaks lines, for
 * scripts: each new request is one JSON object on stdout, and stdin takes
 *     approve ID [once|session|always]
 *     deny ID [note...]
 *     quit
 * each answered with {"ok":true|false,"id":ID,"error":null|TEXT,...}.
 * --auto approve|deny decides everything that arrives; --once handles
 * what is pending now and exits.
 *
 * Deciding always claims first (queue/run.c), so two approvers on one
 * queue never both decide a request; approving a command runs it here.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <termios.h>
#include <unistd.h>
#include <sys/inotify.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include "queue/queue.h"
#include "user/cmd.h"

struct wq {
	char *dir;
	struct sbx_queue *q;
};

struct item {
	json_t *req;
	struct wq *w;
};

enum automode { AUTO_NONE, AUTO_APPROVE, AUTO_DENY };

struct watch {
	struct wq *qs;
	size_t nq;
	int ifd;
	struct item *items;
	size_t n, sel;
	char **seen;		/* ids already shown (line, auto) or the --once set */
	size_t nseen;
	enum automode autom;
	enum sbx_scope auto_scope;
	bool once, line, tty;
	int cmd_timeout;
	char *status;		/* TTY: the last action's outcome */
	char *output;		/* TTY: the head of the last command's output */
};

static volatile sig_atomic_t stop, resized;
static struct termios saved_tio;
static bool tio_saved;

static void on_stop(int sig)
{
	(void)sig;
	stop = 1;
}

static void on_winch(int sig)
{
	(void)sig;
	resized = 1;
}

/* ---- a small string builder ---------------------------------------------- */

struct sb {
	char *p;
	size_t len, cap;
};

static void sb_add(struct sb *b, const char *s, size_t n)
{
	if (b->len + n + 1 > b->cap) {
		size_t cap = (b->len + n + 1) * 2;
		char *np = realloc(b->p, cap);

		if (!np)
			return;
		b->p = np;
		b->cap = cap;
	}
	memcpy(b->p + b->len, s, n);
	b->len += n;
	b->p[b->len] = 0;
}

static void sb_printf(struct sb *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void sb_printf(struct sb *b, const char *fmt, ...)
{
	char *s = NULL;
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vasprintf(&s, fmt, ap);
	va_end(ap);
	if (n >= 0)
		sb_add(b, s, (size_t)n);
	free(s);
}

/*
 * Text from a request goes to a person's terminal. Control characters,
 * C1 controls and bidirectional overrides could hide what is really
 * being asked (an ESC sequence that rewrites the line, a right-to-left
 * override that reverses a path), so they are shown as escapes. Also
 * stops after max display columns (0: no limit), counting code points.
 */
static size_t sb_safe(struct sb *b, const char *s, size_t max)
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
			sb_add(b, esc, strlen(esc));
			cols += 4;
			p++;
			continue;
		}
		if (cp < 0x20 || cp == 0x7f || (cp >= 0x80 && cp <= 0x9f) ||
		    (cp >= 0x202a && cp <= 0x202e) || (cp >= 0x2066 && cp <= 0x2069) ||
		    cp == 0x200e || cp == 0x200f || cp == 0x061c) {
			if (cp == '\n')
				snprintf(esc, sizeof(esc), "\\n");
			else if (cp == '\t')
				snprintf(esc, sizeof(esc), "\\t");
			else
				snprintf(esc, sizeof(esc), cp < 0x100 ? "\\x%02x" : "\\u%04x", cp);
			sb_add(b, esc, strlen(esc));
			cols += strlen(esc);
		} else {
			sb_add(b, (const char *)p, len);
			cols++;
		}
		p += len;
	}
	if (*p && max)
		sb_add(b, "…", strlen("…"));
	return cols;
}

/* ---- requests as text -------------------------------------------------- */

static const char *str(const json_t *o, const char *k)
{
	return json_string_value(json_object_get(o, k));
}

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
static void sb_object(struct sb *b, const json_t *req, size_t max)
{
	const char *kind = str(req, "kind") ?: "";
	const json_t *o = json_object_get(req, "object");
	struct sb t = { 0 };

	if (!strcmp(kind, "command")) {
		sb_add(&t, "`", 1);
		sb_add(&t, str(o, "command") ?: "", strlen(str(o, "command") ?: ""));
		sb_add(&t, "`", 1);
	} else if (!strcmp(kind, "net") || (!strcmp(kind, "access") && str(o, "host"))) {
		const char *a = str(o, "addr") ?: str(o, "host") ?: "?";
		bool v6 = strchr(a, ':') != NULL;

		sb_printf(&t, "%s%s%s", v6 ? "[" : "", a, v6 ? "]" : "");
		if (json_object_get(o, "port"))
			sb_printf(&t, ":%lld", (long long)json_integer_value(json_object_get(o, "port")));
		if (str(o, "proto"))
			sb_printf(&t, "/%s", str(o, "proto"));
	} else {
		const char *path = str(o, "path") ?: "?";

		sb_add(&t, path, strlen(path));
		if (str(o, "access"))
			sb_printf(&t, " (%s)", str(o, "access"));
	}
	sb_safe(b, t.p, max);
	free(t.p);
}

static long secs_until(const json_t *req, const char *key)
{
	time_t t;

	if (sbx_time_parse(str(req, key), &t))
		return 0;
	return (long)(t - time(NULL));
}

/* ---- queues -------------------------------------------------------------- */

static bool seen(struct watch *w, const char *id)
{
	for (size_t i = 0; i < w->nseen; i++)
		if (!strcmp(w->seen[i], id))
			return true;
	return false;
}

static void mark_seen(struct watch *w, const char *id)
{
	char **ns;

	if (seen(w, id))
		return;
	ns = realloc(w->seen, (w->nseen + 1) * sizeof(*ns));
	if (!ns)
		return;
	w->seen = ns;
	w->seen[w->nseen++] = strdup(id);
}

/* ids no longer pending will never be pending again: forget them */
static void prune_seen(struct watch *w)
{
	size_t k = 0;

	for (size_t i = 0; i < w->nseen; i++) {
		bool live = false;

		for (size_t j = 0; j < w->n && !live; j++)
			live = !strcmp(str(w->items[j].req, "id"), w->seen[i]);
		if (live)
			w->seen[k++] = w->seen[i];
		else
			free(w->seen[i]);
	}
	w->nseen = k;
}

static int cmp_item(const void *a, const void *b)
{
	return strcmp(str(((const struct item *)a)->req, "id"),
		      str(((const struct item *)b)->req, "id"));
}

static void set_status(struct watch *w, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void set_status(struct watch *w, const char *fmt, ...)
{
	va_list ap;

	free(w->status);
	w->status = NULL;
	va_start(ap, fmt);
	if (vasprintf(&w->status, fmt, ap) < 0)
		w->status = NULL;
	va_end(ap);
}

static void refresh(struct watch *w)
{
	const char *sel_id = w->n ? str(w->items[w->sel].req, "id") : NULL;
	char *keep = sel_id ? strdup(sel_id) : NULL;
	struct item *items = NULL;
	size_t n = 0;

	for (size_t k = 0; k < w->nq; k++) {
		json_t *a = NULL, *r;
		char *err = NULL;
		size_t i;

		if (sbx_queue_list(w->qs[k].q, "pending", &a, &err) < 0) {
			if (w->tty)
				set_status(w, "%s: %s", w->qs[k].dir, err ? err : "cannot list");
			else
				fprintf(stderr, "bpfsbx watch: %s: %s\n", w->qs[k].dir,
					err ? err : "cannot list");
			free(err);
			continue;
		}
		if (err) {
			/* malformed files were moved to quarantine/: say so */
			if (w->tty)
				set_status(w, "%s: %s", w->qs[k].dir, err);
			else
				fprintf(stderr, "bpfsbx watch: %s: %s\n", w->qs[k].dir, err);
			free(err);
		}
		{
			struct item *ni = realloc(items, (n + json_array_size(a) + 1) *
						  sizeof(*items));

			if (!ni) {
				json_decref(a);
				continue;
			}
			items = ni;
		}
		json_array_foreach(a, i, r) {
			items[n].req = json_incref(r);
			items[n].w = &w->qs[k];
			n++;
		}
		json_decref(a);
	}
	for (size_t i = 0; i < w->n; i++)
		json_decref(w->items[i].req);
	free(w->items);
	if (n)
		qsort(items, n, sizeof(*items), cmp_item);
	if (w->once && w->tty) {
		/* --once: only what was pending at the start */
		size_t k = 0;

		for (size_t i = 0; i < n; i++) {
			if (seen(w, str(items[i].req, "id")))
				items[k++] = items[i];
			else
				json_decref(items[i].req);
		}
		n = k;
	}
	w->items = items;
	w->n = n;
	w->sel = 0;
	for (size_t i = 0; keep && i < n; i++)
		if (!strcmp(str(items[i].req, "id"), keep))
			w->sel = i;
	free(keep);
}

/* the queue that holds ID (pending, else anywhere), for line commands */
static struct wq *queue_of(struct watch *w, const char *id)
{
	static const char *const subs[] = { "pending", "claimed", "done" };
	char name[SBX_ID_MAX + 8];

	snprintf(name, sizeof(name), "%s.json", id);
	for (size_t s = 0; s < 3; s++)
		for (size_t k = 0; k < w->nq; k++)
			if (faccessat(sbx_queue_dirfd(w->qs[k].q, subs[s]), name, F_OK,
				      AT_SYMLINK_NOFOLLOW) == 0)
				return &w->qs[k];
	return &w->qs[0];
}

static bool is_command(const json_t *req)
{
	return !strcmp(str(req, "kind") ?: "", "command");
}

/* ---- line mode ------------------------------------------------------------- */

static void emit_json(json_t *j)
{
	char *s = json_dumps(j, JSON_COMPACT);

	if (s) {
		if (printf("%s\n", s) < 0 || fflush(stdout) == EOF)
			stop = 1;	/* the reader is gone */
		free(s);
	}
	json_decref(j);
}

static void print_new(struct watch *w)
{
	for (size_t i = 0; i < w->n; i++) {
		const char *id = str(w->items[i].req, "id");
		json_t *j;

		if (seen(w, id))
			continue;
		mark_seen(w, id);
		j = json_deep_copy(w->items[i].req);
		json_object_set_new(j, "queue", json_string(w->items[i].w->dir));
		emit_json(j);
	}
	prune_seen(w);
}

static void answer(const char *id, int rc, const char *err, const json_t *done)
{
	json_t *j = json_pack("{s:b, s:o, s:o}", "ok", rc == 0,
			      "id", id ? json_string(id) : json_null(),
			      "error", rc ? json_string(err ? err : strerror(-rc)) : json_null());
	const json_t *d = json_object_get(done, "decision");

	if (d) {
		json_object_set(j, "verdict", json_object_get(d, "verdict"));
		json_object_set(j, "scope", json_object_get(d, "scope"));
	}
	if (json_object_get(done, "result"))
		json_object_set(j, "result", json_object_get(done, "result"));
	emit_json(j);
}

static void line_command(struct watch *w, char *line)
{
	char *save = NULL, *verb, *id, *arg;
	struct sbx_resolve_opts o = { .scope = SBX_SCOPE_ONCE, .cmd_timeout_s = w->cmd_timeout };
	json_t *done = NULL;
	char *err = NULL;
	int rc;

	verb = strtok_r(line, " \t\r", &save);
	if (!verb)
		return;
	if (!strcmp(verb, "quit") || !strcmp(verb, "q")) {
		stop = 1;
		return;
	}
	id = strtok_r(NULL, " \t\r", &save);
	arg = save ? save + strspn(save, " \t") : NULL;
	if (arg && !*arg)
		arg = NULL;
	if (strcmp(verb, "approve") && strcmp(verb, "deny")) {
		answer(id, -EINVAL, "unknown command (approve ID [once|session|always], "
		       "deny ID [note], quit)", NULL);
		return;
	}
	if (!id || !sbx_id_valid(id)) {
		answer(id, -EINVAL, id ? "not a request id" : "which request? (approve ID, deny ID)",
		       NULL);
		return;
	}
	o.approve = !strcmp(verb, "approve");
	if (o.approve && arg) {
		char *end = arg + strcspn(arg, " \t\r");

		*end = 0;
		if (sbx_scope_parse(arg) < 0) {
			answer(id, -EINVAL, "scope must be once, session or always", NULL);
			return;
		}
		o.scope = (enum sbx_scope)sbx_scope_parse(arg);
	} else if (!o.approve && arg) {
		arg[strcspn(arg, "\r")] = 0;
		o.note = arg;
	}
	rc = sbx_queue_resolve(queue_of(w, id)->q, id, &o, &done, &err);
	answer(id, rc, err, done);
	json_decref(done);
	free(err);
}

/* ---- deciding (auto mode and keys) ---------------------------------------- */

static void sb_result(struct sb *b, const json_t *done, const char *sep)
{
	const json_t *r = json_object_get(done, "result");

	if (!r)
		return;
	sb_printf(b, ": exit %lld%s%s,%soutput in %s",
		  (long long)json_integer_value(json_object_get(r, "exit_code")),
		  json_is_true(json_object_get(r, "timed_out")) ? " (timed out)" : "",
		  json_is_true(json_object_get(r, "truncated")) ? " (output cut at 1 MiB)" : "",
		  sep, str(r, "output") ?: "?");
}

static void auto_decide(struct watch *w)
{
	for (size_t i = 0; i < w->n && !stop; i++) {
		const json_t *req = w->items[i].req;
		const char *id = str(req, "id");
		struct sbx_resolve_opts o = {
			.approve = w->autom == AUTO_APPROVE, .scope = w->auto_scope,
			.cmd_timeout_s = w->cmd_timeout, .note = "bpfsbx watch --auto",
		};
		struct sb b = { 0 };
		json_t *done = NULL;
		char *err = NULL;
		int rc;

		if (seen(w, id))
			continue;
		mark_seen(w, id);
		if (o.approve && is_command(req))
			o.scope = SBX_SCOPE_ONCE;	/* the only scope a command has */
		rc = sbx_queue_resolve(w->items[i].w->q, id, &o, &done, &err);
		if (rc) {
			printf("%s %s: %s\n", rc == -EBUSY || rc == -EEXIST ? "skipped" : "failed",
			       id, err ? err : strerror(-rc));
		} else {
			sb_printf(&b, "%s %s", o.approve ? "approved" : "denied", id);
			if (o.approve)
				sb_printf(&b, " %s", sbx_scope_name(o.scope));
			sb_printf(&b, ": %s ", str(req, "kind") ?: "?");
			sb_object(&b, req, 200);
			sb_result(&b, done, " ");
			printf("%s\n", b.p ? b.p : "");
		}
		if (fflush(stdout) == EOF)
			stop = 1;
		free(b.p);
		free(err);
		json_decref(done);
	}
	prune_seen(w);
}

/* ---- the terminal UI ---------------------------------------------------- */

static void tty_restore(void)
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

static int tty_setup(void)
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
	atexit(tty_restore);
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
static void line_start(struct sb *b)
{
	sb_add(b, "\033[K", 3);
}

static void line_end(struct sb *b, int *row)
{
	sb_add(b, "\r\n", 2);
	(*row)++;
}

static void detail(struct sb *b, int *row, size_t cols, const char *label,
		   const char *text)
{
	line_start(b);
	sb_printf(b, "  \033[1m%-9s\033[0m ", label);
	sb_safe(b, text, cols > 14 ? cols - 14 : 1);
	line_end(b, row);
}

static void draw(struct watch *w)
{
	struct sb b = { 0 };
	int rows, cols, row = 0;
	size_t width, first = 0, list_rows;

	term_size(&rows, &cols);
	width = (size_t)cols;
	sb_add(&b, "\033[H", 3);
	line_start(&b);
	sb_printf(&b, "\033[1mbpfsbx watch\033[0m  %zu pending", w->n);
	if (w->nq == 1) {
		sb_add(&b, " in ", 4);
		sb_safe(&b, w->qs[0].dir, width > 40 ? width - 40 : 1);
	} else {
		sb_printf(&b, " in %zu projects", w->nq);
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
		sb_add(&b, "  No pending requests; waiting for new ones.", 44);
		line_end(&b, &row);
	}
	for (size_t i = first; i < w->n && i < first + list_rows; i++) {
		const json_t *req = w->items[i].req;
		long dl = secs_until(req, "deadline");
		char age[32], left[32];

		fmt_dur(age, sizeof(age), -secs_until(req, "created"));
		fmt_dur(left, sizeof(left), dl < 0 ? -dl : dl);
		line_start(&b);
		sb_add(&b, i == w->sel ? "\033[7m> " : "  ", i == w->sel ? 6 : 2);
		sb_printf(&b, "%-7s ", str(req, "kind") ?: "?");
		sb_object(&b, req, width > 70 ? width - 50 : 20);
		sb_printf(&b, "  x%lld  age %s  %s %s", (long long)json_integer_value(
				  json_object_get(req, "count")), age,
			  dl < 0 ? "overdue" : "decide within", left);
		if (i == w->sel)
			sb_add(&b, "\033[0m", 4);
		line_end(&b, &row);
	}
	line_start(&b);
	line_end(&b, &row);

	if (w->n) {
		const json_t *req = w->items[w->sel].req;
		const json_t *p = json_object_get(req, "process");
		const json_t *r = json_object_get(req, "rule");
		const json_t *cl = json_object_get(p, "cmdline");
		struct sb t = { 0 };
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
		sb_object(&t, req, 0);
		detail(&b, &row, width, is_command(req) ? "command" : "object", t.p);
		free(t.p);
		t = (struct sb){ 0 };
		if (is_command(req)) {
			const char *cwd = str(json_object_get(req, "object"), "cwd");

			detail(&b, &row, width, "runs in", cwd ? cwd : "(project directory)");
		}
		if (json_is_object(p)) {
			sb_printf(&t, "pid %lld  uid %lld  comm %s",
				  (long long)json_integer_value(json_object_get(p, "pid")),
				  (long long)json_integer_value(json_object_get(p, "uid")),
				  str(p, "comm") ?: "?");
			detail(&b, &row, width, "process", t.p);
			free(t.p);
			t = (struct sb){ 0 };
			if (str(p, "exe"))
				detail(&b, &row, width, "exe", str(p, "exe"));
			json_array_foreach(cl, i, a) {
				sb_add(&t, i ? " " : "", i ? 1 : 0);
				sb_add(&t, json_string_value(a) ?: "", strlen(json_string_value(a) ?: ""));
			}
			if (t.p)
				detail(&b, &row, width, "cmdline", t.p);
			free(t.p);
			t = (struct sb){ 0 };
			if (str(p, "cwd"))
				detail(&b, &row, width, "cwd", str(p, "cwd"));
		}
		if (json_is_object(r)) {
			sb_printf(&t, "%s -> %s", str(r, "pattern") ?: "?", str(r, "verdict") ?: "?");
			if (str(r, "source"))
				sb_printf(&t, "  (%s)", str(r, "source"));
			detail(&b, &row, width, "rule", t.p);
			free(t.p);
			t = (struct sb){ 0 };
			if (str(r, "reason"))
				detail(&b, &row, width, "reason", str(r, "reason"));
		}
		if (str(req, "agent_reason"))
			detail(&b, &row, width, "agent", str(req, "agent_reason"));
		{
			long dl = secs_until(req, "deadline");
			char age[32], left[32];

			fmt_dur(age, sizeof(age), -secs_until(req, "created"));
			fmt_dur(left, sizeof(left), dl < 0 ? -dl : dl);
			sb_printf(&t, "%lld  age %s  deadline %s (%s %s)",
				  (long long)json_integer_value(json_object_get(req, "count")),
				  age, str(req, "deadline") ?: "?", dl < 0 ? "overdue by" : "in", left);
			detail(&b, &row, width, "count", t.p);
			free(t.p);
			t = (struct sb){ 0 };
		}
		line_start(&b);
		line_end(&b, &row);
		line_start(&b);
		sb_printf(&b, "%s", is_command(req) ?
			  "  \033[1mo\033[0m run it once here   \033[1md\033[0m deny   "
			  "\033[1mj/k\033[0m move   \033[1mq\033[0m quit" :
			  "  \033[1mo\033[0m once   \033[1ms\033[0m session   \033[1ma\033[0m always"
			  "   \033[1md\033[0m deny   \033[1mj/k\033[0m move   \033[1mq\033[0m quit");
		line_end(&b, &row);
	} else {
		line_start(&b);
		sb_add(&b, "  \033[1mq\033[0m quit", strlen("  \033[1mq\033[0m quit"));
		line_end(&b, &row);
	}
	if (w->status) {
		/* one screen line per line of the status, each clipped */
		char *save = NULL, *copy = strdup(w->status), *ln;

		line_start(&b);
		line_end(&b, &row);
		for (ln = strtok_r(copy, "\n", &save); ln; ln = strtok_r(NULL, "\n", &save)) {
			line_start(&b);
			sb_add(&b, "  ", 2);
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
			sb_add(&b, "  | ", 4);
			sb_safe(&b, ln, width > 6 ? width - 6 : 1);
			line_end(&b, &row);
		}
		free(copy);
	}
	sb_add(&b, "\033[J", 3);	/* clear what is below */
	if (b.p && write(STDOUT_FILENO, b.p, b.len) < 0)
		stop = 1;
	free(b.p);
}

/* the first lines of a command's output, for the screen */
static char *output_head(struct wq *q, const json_t *done)
{
	const char *out = str(json_object_get(done, "result"), "output");
	char *buf = NULL;
	size_t len;
	int fd;

	if (!out || strncmp(out, "out/", 4))
		return NULL;
	fd = sbx_queue_dirfd(q->q, "out");
	if (sbx_read_file_at(fd, out + 4, SBX_CMD_OUTPUT_MAX, &buf, &len, NULL))
		return NULL;
	if (len > 2000)
		buf[2000] = 0;
	return buf;
}

static void key_decide(struct watch *w, int key)
{
	const json_t *req;
	struct sbx_resolve_opts o = { .cmd_timeout_s = w->cmd_timeout };
	struct sb b = { 0 };
	json_t *done = NULL, *hold;
	char *err = NULL, *id;
	int rc;

	if (!w->n)
		return;
	hold = json_incref(w->items[w->sel].req);
	req = hold;
	id = strdup(str(req, "id"));
	o.approve = key != 'd';
	o.scope = key == 's' ? SBX_SCOPE_SESSION : key == 'a' ? SBX_SCOPE_ALWAYS : SBX_SCOPE_ONCE;
	if (o.approve && is_command(req) && key != 'o') {
		set_status(w, "A command can only be approved once (o): it runs here, now, "
			   "and its output goes back to the agent.");
		goto out;
	}
	if (o.approve && is_command(req)) {
		struct sb t = { 0 };

		sb_object(&t, req, 0);
		set_status(w, "running %s ... (output goes to out/%s.txt)", t.p ? t.p : "", id);
		free(t.p);
		free(w->output);
		w->output = NULL;
		draw(w);
	}
	rc = sbx_queue_resolve(w->items[w->sel].w->q, id, &o, &done, &err);
	if (rc == -EBUSY) {
		set_status(w, "%s: taken by another approver", id);
	} else if (rc) {
		set_status(w, "%s", err ? err : strerror(-rc));
	} else {
		sb_printf(&b, "%s %s", o.approve ? "approved" : "denied", id);
		if (o.approve)
			sb_printf(&b, " (%s)", sbx_scope_name(o.scope));
		sb_result(&b, done, "\n");
		set_status(w, "%s", b.p ? b.p : "");
		free(w->output);
		w->output = output_head(w->items[w->sel].w, done);
	}
out:
	free(b.p);
	free(err);
	free(id);
	json_decref(done);
	json_decref(hold);
	refresh(w);
}

/* returns the number of bytes of buf used (an escape sequence may be cut) */
static size_t handle_keys(struct watch *w, const char *buf, size_t n)
{
	size_t i = 0;

	while (i < n && !stop) {
		unsigned char c = (unsigned char)buf[i];

		if (c == 0x1b) {
			if (i + 2 >= n)
				return i;	/* wait for the rest of it */
			if ((buf[i + 1] == '[' || buf[i + 1] == 'O') &&
			    (buf[i + 2] == 'A' || buf[i + 2] == 'B')) {
				c = buf[i + 2] == 'A' ? 'k' : 'j';
				i += 3;
			} else {
				i++;
				continue;
			}
		} else {
			i++;
		}
		switch (c) {
		case 'q':
			stop = 1;
			break;
		case 'j':
			if (w->sel + 1 < w->n)
				w->sel++;
			break;
		case 'k':
			if (w->sel)
				w->sel--;
			break;
		case 'o': case 's': case 'a': case 'd':
			key_decide(w, c);
			break;
		case 0x0c:	/* ^L */
			break;
		default:
			break;
		}
	}
	return i;
}

/* ---- main loop ---------------------------------------------------------- */

static int add_watches(struct watch *w)
{
	char path[64];

	w->ifd = inotify_init1(IN_CLOEXEC | IN_NONBLOCK);
	if (w->ifd < 0)
		return -errno;
	for (size_t k = 0; k < w->nq; k++) {
		snprintf(path, sizeof(path), "/proc/self/fd/%d",
			 sbx_queue_dirfd(w->qs[k].q, "pending"));
		if (inotify_add_watch(w->ifd, path, IN_MOVED_TO | IN_CLOSE_WRITE | IN_CREATE |
				      IN_MOVED_FROM | IN_DELETE) < 0)
			return -errno;
	}
	return 0;
}

static void drain_inotify(int fd)
{
	char buf[4096] __attribute__((aligned(__alignof__(struct inotify_event))));

	while (read(fd, buf, sizeof(buf)) > 0)
		;
}

static int run(struct watch *w)
{
	char inbuf[8192];
	size_t inlen = 0;
	bool stdin_open = w->autom == AUTO_NONE;

	refresh(w);
	if (w->once && w->tty)
		for (size_t i = 0; i < w->n; i++)
			mark_seen(w, str(w->items[i].req, "id"));
	if (w->autom != AUTO_NONE)
		auto_decide(w);
	else if (w->line)
		print_new(w);
	if (w->once && w->autom != AUTO_NONE)
		return SBX_EXIT_OK;

	while (!stop) {
		struct pollfd p[2] = {
			{ .fd = stdin_open ? STDIN_FILENO : -1, .events = POLLIN },
			{ .fd = w->once ? -1 : w->ifd, .events = POLLIN },
		};
		int r;

		if (w->tty) {
			if (w->once && !w->n)
				break;
			if (resized)
				resized = 0;
			draw(w);
		}
		if (!stdin_open && w->once)
			break;
		r = poll(p, 2, w->tty ? 1000 : 5000);
		if (r < 0) {
			if (errno == EINTR)
				continue;
			break;
		}
		if (p[1].fd >= 0 && (r == 0 || (p[1].revents & POLLIN))) {
			/* also on the timeout: a missed event cannot hide a request */
			drain_inotify(w->ifd);
			refresh(w);
			if (w->autom != AUTO_NONE)
				auto_decide(w);
			else if (w->line)
				print_new(w);
		}
		if (p[0].fd >= 0 && (p[0].revents & (POLLIN | POLLHUP | POLLERR))) {
			ssize_t n = read(STDIN_FILENO, inbuf + inlen, sizeof(inbuf) - 1 - inlen);

			if (n <= 0) {
				if (n < 0 && (errno == EINTR || errno == EAGAIN))
					continue;
				stdin_open = false;
				if (w->line && inlen) {
					inbuf[inlen] = 0;
					line_command(w, inbuf);
					inlen = 0;
				}
				if (w->autom == AUTO_NONE)
					break;	/* the script is done */
				continue;
			}
			inlen += (size_t)n;
			if (w->tty) {
				size_t used = handle_keys(w, inbuf, inlen);

				memmove(inbuf, inbuf + used, inlen - used);
				inlen -= used;
			} else {
				char *nl;

				while (!stop && (nl = memchr(inbuf, '\n', inlen))) {
					size_t len = (size_t)(nl - inbuf);

					*nl = 0;
					line_command(w, inbuf);
					memmove(inbuf, nl + 1, inlen - len - 1);
					inlen -= len + 1;
				}
				if (inlen == sizeof(inbuf) - 1) {
					answer(NULL, -E2BIG, "command line too long", NULL);
					inlen = 0;
				}
			}
		}
	}
	return SBX_EXIT_OK;
}

static void usage(FILE *out)
{
	fprintf(out,
		"usage: bpfsbx watch [DIR...] [--auto approve|deny [--scope S]] [--once]\n"
		"                    [--cmd-timeout SECONDS] [--lines]\n"
		"  Shows pending requests of the projects DIR (default: the current directory)\n"
		"  and decides them: o once, s for the session, a always, d deny, q quit.\n"
		"  A request of kind command is run here when approved (once only).\n"
		"  Without a terminal (or with --lines): one JSON line per new request on\n"
		"  stdout; stdin takes 'approve ID [once|session|always]', 'deny ID [note]',\n"
		"  'quit', each answered by {\"ok\":..,\"id\":..,\"error\":..}.\n"
		"  --auto approve|deny  decide everything that arrives (tests, demos)\n"
		"  --once               handle what is pending now, then exit\n");
}

static int cmd_watch(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "auto", required_argument, NULL, 'A' },
		{ "scope", required_argument, NULL, 's' },
		{ "once", no_argument, NULL, '1' },
		{ "cmd-timeout", required_argument, NULL, 't' },
		{ "lines", no_argument, NULL, 'l' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct watch w = { .ifd = -1, .auto_scope = SBX_SCOPE_ONCE };
	bool force_lines = false, scope_given = false;
	int c, status;
	char *end;
	long v;

	opterr = 0;
	optind = 1;
	while ((c = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
		switch (c) {
		case 'A':
			if (!strcmp(optarg, "approve")) {
				w.autom = AUTO_APPROVE;
			} else if (!strcmp(optarg, "deny")) {
				w.autom = AUTO_DENY;
			} else {
				fprintf(stderr, "bpfsbx watch: --auto takes approve or deny\n");
				return SBX_EXIT_USAGE;
			}
			break;
		case 's':
			if (sbx_scope_parse(optarg) < 0) {
				fprintf(stderr, "bpfsbx watch: --scope must be once, session or always\n");
				return SBX_EXIT_USAGE;
			}
			w.auto_scope = (enum sbx_scope)sbx_scope_parse(optarg);
			scope_given = true;
			break;
		case '1':
			w.once = true;
			break;
		case 't':
			errno = 0;
			v = strtol(optarg, &end, 10);
			if (errno || end == optarg || *end || v < 1 || v > 7 * 24 * 3600) {
				fprintf(stderr, "bpfsbx watch: --cmd-timeout takes a number of seconds\n");
				return SBX_EXIT_USAGE;
			}
			w.cmd_timeout = (int)v;
			break;
		case 'l':
			force_lines = true;
			break;
		case 'h':
			usage(stdout);
			return SBX_EXIT_OK;
		default:
			fprintf(stderr, "bpfsbx watch: unknown option '%s'\n", argv[optind - 1]);
			usage(stderr);
			return SBX_EXIT_USAGE;
		}
	}
	if (scope_given && w.autom != AUTO_APPROVE) {
		fprintf(stderr, "bpfsbx watch: --scope goes with --auto approve\n");
		return SBX_EXIT_USAGE;
	}
	w.nq = optind < argc ? (size_t)(argc - optind) : 1;
	w.qs = calloc(w.nq, sizeof(*w.qs));
	for (size_t k = 0; k < w.nq; k++) {
		const char *dir = optind < argc ? argv[optind + (int)k] : ".";
		char *err = NULL, *sbx = NULL;
		struct stat st;
		unsigned fl = 0;

		/* create escalations/ only in a project that has .sandbox */
		if (asprintf(&sbx, "%s/.sandbox", dir) >= 0 && lstat(sbx, &st) == 0 &&
		    S_ISDIR(st.st_mode))
			fl = SBX_Q_CREATE;
		free(sbx);
		w.qs[k].dir = strdup(dir);
		w.qs[k].q = sbx_queue_open(dir, fl, (uid_t)-1, (gid_t)-1, &err);
		if (!w.qs[k].q) {
			fprintf(stderr, "bpfsbx watch: %s\n", err ? err : dir);
			free(err);
			status = SBX_EXIT_FAIL;
			goto out;
		}
	}
	w.tty = !force_lines && w.autom == AUTO_NONE && isatty(STDIN_FILENO) &&
		isatty(STDOUT_FILENO);
	w.line = !w.tty;
	if (add_watches(&w) < 0) {
		fprintf(stderr, "bpfsbx watch: inotify: %s\n", strerror(errno));
		status = SBX_EXIT_FAIL;
		goto out;
	}
	signal(SIGPIPE, SIG_IGN);
	{
		struct sigaction sa = { .sa_handler = on_stop };

		sigaction(SIGINT, &sa, NULL);
		sigaction(SIGTERM, &sa, NULL);
		sigaction(SIGHUP, &sa, NULL);
		sa.sa_handler = on_winch;
		sigaction(SIGWINCH, &sa, NULL);
	}
	if (w.tty && tty_setup() < 0) {
		fprintf(stderr, "bpfsbx watch: cannot set up the terminal: %s\n", strerror(errno));
		status = SBX_EXIT_FAIL;
		goto out;
	}
	status = run(&w);
	tty_restore();
out:
	for (size_t i = 0; i < w.n; i++)
		json_decref(w.items[i].req);
	free(w.items);
	for (size_t i = 0; i < w.nseen; i++)
		free(w.seen[i]);
	free(w.seen);
	for (size_t k = 0; k < w.nq; k++) {
		sbx_queue_close(w.qs[k].q);
		free(w.qs[k].dir);
	}
	free(w.qs);
	free(w.status);
	free(w.output);
	if (w.ifd >= 0)
		close(w.ifd);
	return status;
}

SBX_COMMAND(watch, "watch", "[DIR...] [--auto approve|deny] [--once]",
	    "show pending requests and approve or deny them", cmd_watch);
