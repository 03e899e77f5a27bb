// SPDX-License-Identifier: GPL-2.0
/*
 * bpfsbx watch [DIR...] - the approver. It runs outside every session, in
 * a plain terminal (over SSH too: ANSI escapes, no curses, no browser).
 *
 * On a terminal it lists pending requests as they arrive (inotify on
 * pending/) with the context a person needs to decide, and takes one key:
 * o once, s session, a always, d deny; r shows the rule "always" widens
 * to (queue/propose.h) and y, once all of it was on the screen, writes
 * it; j/k or arrows move; q quits.
 * Without a terminal (stdin or stdout is not a TTY) it speaks lines, for
 * scripts: each new request is one JSON object on stdout, and stdin takes
 *     approve ID [once|session|always]
 *     deny ID [note...]
 *     rule ID [write]       the widened rule; with write, written and applied
 *     quit
 * each answered with {"ok":true|false,"id":ID,"error":null|TEXT,...}.
 * --auto approve|deny decides everything that arrives; --once handles
 * what is pending now and exits.
 *
 * Deciding always claims first (queue/resolve.c), so two approvers on one
 * queue never both decide a request; approving a command runs it here.
 *
 * What a person sees (the screen, the text of requests) is in
 * watch_render.c.
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
#include <time.h>
#include <unistd.h>
#include <sys/stat.h>
#include "lib/alloc.h"
#include "lib/text.h"
#include "lib/project.h"
#include "queue/queue.h"
#include "queue/request.h"
#include "queue/watch.h"
#include "user/cmd/cmd.h"
#include "user/cmd/watch_render.h"
#include "user/control/control_client.h"

static volatile sig_atomic_t stop, resized;

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
			live = !strcmp(w->items[j].req.id, w->seen[i]);
		if (live)
			w->seen[k++] = w->seen[i];
		else
			free(w->seen[i]);
	}
	w->nseen = k;
}

static int cmp_item(const void *a, const void *b)
{
	return strcmp(((const struct item *)a)->req.id, ((const struct item *)b)->req.id);
}

static void set_status(struct watch *w, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void set_status(struct watch *w, const char *fmt, ...)
{
	va_list ap;

	free(w->status);
	w->status = NULL;
	va_start(ap, fmt);
	w->status = sbx_vformat(fmt, ap);
	va_end(ap);
}

/*
 * A learning session records what it would have been refused instead of
 * asking: the person watching its project must know that nothing of it
 * reaches this screen. Asked of the daemon at most every 2 s.
 */
static void learning_refresh(struct watch *w)
{
	struct sbx_strbuf b = { 0 };
	json_t *req, *reply = NULL, *v;
	char *err = NULL;
	time_t now = time(NULL);
	size_t i;

	if (!w->tty || now - w->learning_at < 2)
		return;
	w->learning_at = now;
	req = json_pack("{s:s}", "op", "status");
	if (!req || sbx_ctl_call(req, &reply, &err)) {
		free(err);
		json_decref(req);
		return;		/* no daemon: the last answer stands */
	}
	json_decref(req);
	json_array_foreach(json_object_get(reply, "sessions"), i, v) {
		const char *proj = sbx_json_str(v, "project");
		bool mine = false;

		if (!json_is_true(json_object_get(v, "learning")) || !proj)
			continue;
		for (size_t k = 0; k < w->nq && !mine; k++)
			mine = !strcmp(w->qs[k].dir, proj);
		if (mine)
			sbx_sb_printf(&b, "%s%s (%s)", b.len ? ", " : "", sbx_json_str(v, "name") ?: "?",
				      proj);
	}
	json_decref(reply);
	free(w->learning);
	w->learning = b.len ? b.p : (free(b.p), NULL);
}

static void count_alike(struct watch *w)
{
	char **keys = sbx_calloc(w->n ? w->n : 1, sizeof(char *));

	for (size_t i = 0; i < w->n; i++)
		keys[i] = sbx_request_rule_key(&w->items[i].req);
	for (size_t i = 0; i < w->n; i++) {
		w->items[i].alike = 0;
		for (size_t k = 0; keys[i] && k < w->n; k++)
			w->items[i].alike += k != i && keys[k] && !strcmp(keys[i], keys[k]);
	}
	for (size_t i = 0; i < w->n; i++)
		free(keys[i]);
	free(keys);
}

static void refresh(struct watch *w)
{
	const char *sel_id = w->n ? w->items[w->sel].req.id : NULL;
	char *keep = sel_id ? strdup(sel_id) : NULL;
	struct item *items = NULL;
	size_t n = 0;

	learning_refresh(w);
	for (size_t k = 0; k < w->nq; k++) {
		json_t *a = NULL, *r;
		char *err = NULL;
		size_t i;

		sbx_queue_expire(w->qs[k].q, time(NULL), NULL);	/* denied at their deadline */
		if (sbx_queue_list(w->qs[k].q, SBX_QDIR_PENDING, &a, &err) < 0) {
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
		/* listed records were validated (malformed ones are quarantined):
		 * each is decoded here, once, and used as the struct after */
		json_array_foreach(a, i, r) {
			if (!sbx_request_decode(r, false, &items[n].req, NULL))
				continue;
			items[n].w = &w->qs[k];
			n++;
		}
		json_decref(a);
	}
	for (size_t i = 0; i < w->n; i++)
		sbx_request_release(&w->items[i].req);
	free(w->items);
	if (n)
		qsort(items, n, sizeof(*items), cmp_item);
	if (w->once && w->tty) {
		/* --once: only what was pending at the start */
		size_t k = 0;

		for (size_t i = 0; i < n; i++) {
			if (seen(w, items[i].req.id))
				items[k++] = items[i];
			else
				sbx_request_release(&items[i].req);
		}
		n = k;
	}
	w->items = items;
	w->n = n;
	count_alike(w);
	w->sel = 0;
	for (size_t i = 0; keep && i < n; i++)
		if (!strcmp(items[i].req.id, keep))
			w->sel = i;
	free(keep);
}

/* the whole id that typed starts, and the queue that holds it */
static int find_id(struct watch *w, const char *typed, char **id, struct wq **wq, char **err)
{
	struct sbx_queue **qs = calloc(w->nq, sizeof(*qs));
	size_t which = 0;
	int rc;

	if (!qs)
		return -ENOMEM;
	for (size_t k = 0; k < w->nq; k++)
		qs[k] = w->qs[k].q;
	rc = sbx_queue_find_id(qs, w->nq, typed, id, &which, err);
	free(qs);
	*wq = &w->qs[which < w->nq ? which : 0];
	return rc;
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
		const struct sbx_request *req = &w->items[i].req;
		json_t *j;

		if (seen(w, req->id))
			continue;
		mark_seen(w, req->id);
		j = json_deep_copy(req->json);
		json_object_set_new(j, "queue", json_string(w->items[i].w->dir));
		{
			/* the request is carried whole; what a screen would have
			 * escaped is counted for the reader too */
			struct sbx_render r;
			char *warn;

			sbx_render_request(req, w->items[i].w->dir, &r);
			warn = sbx_render_warning(&r.c);
			if (warn)
				json_object_set_new(j, "warning", json_string(warn));
			json_object_set_new(j, "render", sbx_render_json(&r));
			free(warn);
			sbx_render_free(&r);
		}
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

/* rule ID [write]: the proposal as JSON; with write, written and applied */
static void line_rule(struct sbx_queue *q, const char *id, char *arg)
{
	struct sbx_proposal p;
	struct sbx_resolve_opts o = { 0 };
	char *err = NULL;
	size_t decided = 0;
	bool write;
	json_t *j;

	if (arg)
		arg[strcspn(arg, " \t\r")] = 0;
	write = arg && !strcmp(arg, "write");
	if (arg && !write) {
		answer(id, -EINVAL, "rule ID shows the rule, rule ID write writes it", NULL);
		return;
	}
	if (sbx_queue_propose(q, id, &p, &err) ||
	    (write && sbx_queue_adopt(q, &p, &o, &decided, NULL, &err))) {
		answer(id, -EINVAL, err ? err : "no rule", NULL);
		free(err);
		return;
	}
	j = json_pack("{s:b,s:s,s:n,s:o}", "ok", 1, "id", id, "error", "proposal",
		      sbx_proposal_json(&p));
	if (write)
		json_object_set_new(j, "approved", json_integer((json_int_t)decided));
	emit_json(j);
	sbx_proposal_free(&p);
}

static void line_command(struct watch *w, char *line)
{
	char *save = NULL, *verb, *id, *arg, *full = NULL;
	struct sbx_resolve_opts o = { .scope = SBX_SCOPE_ONCE, .cmd_timeout_s = w->cmd_timeout };
	struct wq *wq;
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
	if (strcmp(verb, "approve") && strcmp(verb, "deny") && strcmp(verb, "rule")) {
		answer(id, -EINVAL, "unknown command (approve ID [once|session|always], "
		       "deny ID [note], rule ID [write], quit)", NULL);
		return;
	}
	if (!id) {
		answer(id, -EINVAL, "which request? (approve ID, deny ID)", NULL);
		return;
	}
	/* a unique start of an id will do (queue/queue.c), as for approve */
	rc = find_id(w, id, &full, &wq, &err);
	if (rc) {
		answer(id, rc, err, NULL);
		free(err);
		return;
	}
	id = full;
	if (!strcmp(verb, "rule")) {
		line_rule(wq->q, id, arg);
		free(full);
		return;
	}
	o.approve = !strcmp(verb, "approve");
	if (o.approve && arg) {
		char *end = arg + strcspn(arg, " \t\r");

		*end = 0;
		if (sbx_scope_parse(arg) < 0) {
			answer(id, -EINVAL, "scope must be once, session or always", NULL);
			free(full);
			return;
		}
		o.scope = (enum sbx_scope)sbx_scope_parse(arg);
	} else if (!o.approve && arg) {
		arg[strcspn(arg, "\r")] = 0;
		o.note = arg;
	}
	rc = sbx_queue_resolve(wq->q, id, &o, &done, &err);
	answer(id, rc, err, done);
	json_decref(done);
	free(err);
	free(full);
}

/* ---- deciding (auto mode and keys) ---------------------------------------- */

/* The decision resolve() wrote, decoded as it is read back, in words */
static void result_of(struct sbx_strbuf *b, json_t *done, const char *sep)
{
	struct sbx_request d;

	if (!done || !sbx_request_decode(done, true, &d, NULL))
		return;
	watch_sb_result(b, &d, sep);
	sbx_request_release(&d);
}

static void auto_decide(struct watch *w)
{
	for (size_t i = 0; i < w->n && !stop; i++) {
		const struct sbx_request *req = &w->items[i].req;
		const char *id = req->id;
		struct sbx_resolve_opts o = {
			.approve = w->autom == AUTO_APPROVE, .scope = w->auto_scope,
			.cmd_timeout_s = w->cmd_timeout, .note = "bpfsbx watch --auto",
		};
		struct sbx_strbuf b = { 0 };
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
			sbx_sb_printf(&b, "%s %s", o.approve ? "approved" : "denied", id);
			if (o.approve)
				sbx_sb_printf(&b, " %s", sbx_scope_name(o.scope));
			sbx_sb_printf(&b, ": %s ", req->kind_name ?: "?");
			watch_sb_object(&b, req, 200);
			result_of(&b, done, " ");
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

/* ---- the terminal UI: keys --------------------------------------------- */

/* the first lines of a command's output, for the screen */
static char *output_head(struct wq *q, const json_t *done)
{
	char *buf = NULL;
	size_t len;

	if (sbx_queue_read_output(q->q, done, &buf, &len))
		return NULL;
	if (len > 2000)
		buf[2000] = 0;
	return buf;
}

static void key_decide(struct watch *w, int key)
{
	const struct sbx_request *req;
	struct sbx_resolve_opts o = { .cmd_timeout_s = w->cmd_timeout };
	struct sbx_strbuf b = { 0 };
	json_t *done = NULL;
	char *err = NULL, *id;
	int rc;

	if (!w->n)
		return;
	req = &w->items[w->sel].req;
	id = strdup(req->id);
	o.approve = key != 'd';
	o.scope = key == 's' ? SBX_SCOPE_SESSION : key == 'a' ? SBX_SCOPE_ALWAYS : SBX_SCOPE_ONCE;
	if (o.approve && is_command(req) && key != 'o') {
		set_status(w, "A command can only be approved once (o): it runs here, now, "
			   "and its output goes back to the agent.");
		goto out;
	}
	if (o.approve && is_command(req) && w->tty) {
		struct sbx_strbuf t = { 0 };
		char *user = NULL, *uerr = NULL;
		uid_t uid;
		gid_t gid;

		/* the command runs here, in this terminal, as the person at it:
		 * leave the screen so that sudo can ask for a password */
		o.interactive = true;
		if (sbx_queue_command_user(w->items[w->sel].w->q, true, -1, &uid, &gid, &user,
					   &uerr)) {
			set_status(w, "%s", uerr ? uerr : "cannot tell who would run it");
			free(uerr);
			goto out;
		}
		{
			/* its lines as lines, by the rule the screen used */
			const char *c = req->command ?: "";
			struct sbx_render_counts rc0 = { 0 };

			sbx_render_text(&t, c, strlen(c), false, &rc0);
		}
		watch_tty_restore();
		printf("\n--- bpfsbx: request %s, running as %s (uid %u) in %s ---\n%s\n---\n", id,
		       user, (unsigned)uid, req->cwd ?: req->project ?: "the project",
		       t.p ? t.p : "");
		fflush(stdout);
		free(t.p);
		free(user);
		free(w->output);
		w->output = NULL;
	} else if (o.approve && is_command(req)) {
		struct sbx_strbuf t = { 0 };

		watch_sb_object(&t, req, 0);
		set_status(w, "running %s ... (output goes to out/%s.txt)", t.p ? t.p : "", id);
		free(t.p);
		free(w->output);
		w->output = NULL;
		if (watch_draw(w) < 0)
			stop = 1;
	}
	rc = sbx_queue_resolve(w->items[w->sel].w->q, id, &o, &done, &err);
	if (o.interactive) {
		printf("--- bpfsbx: %s ---\n", rc ? "not run" : "done; back to watch");
		fflush(stdout);
		if (watch_tty_setup() < 0)
			stop = 1;
	}
	if (rc == -EBUSY) {
		set_status(w, "%s: taken by another approver", id);
	} else if (rc) {
		set_status(w, "%s", err ? err : strerror(-rc));
	} else {
		sbx_sb_printf(&b, "%s %s", o.approve ? "approved" : "denied", id);
		if (o.approve)
			sbx_sb_printf(&b, " (%s)", sbx_scope_name(o.scope));
		result_of(&b, done, "\n");
		set_status(w, "%s", b.p ? b.p : "");
		free(w->output);
		w->output = output_head(w->items[w->sel].w, done);
	}
out:
	free(b.p);
	free(err);
	free(id);
	json_decref(done);
	refresh(w);
}

static void prop_drop(struct watch *w)
{
	if (w->prop) {
		sbx_proposal_free(w->prop);
		free(w->prop);
		w->prop = NULL;
	}
}

/* r: the rule "always" widens to, shown after the request */
static void key_rule(struct watch *w)
{
	const struct item *it;
	char *err = NULL;

	if (!w->n)
		return;
	it = &w->items[w->sel];
	prop_drop(w);
	w->prop = sbx_calloc(1, sizeof(*w->prop));
	if (sbx_queue_propose(it->w->q, it->req.id, w->prop, &err)) {
		set_status(w, "%s", err ? err : "no rule to offer");
		free(err);
		prop_drop(w);
		return;
	}
	set_status(w, "The rule for it is below the request: read it to the end, then y "
		   "writes it; any other key puts it away.");
}

/* y: the rule on the screen written, what it answers approved */
static void key_rule_write(struct watch *w)
{
	const struct item *it = &w->items[w->sel];
	struct sbx_resolve_opts o = { 0 };
	char *err = NULL;
	size_t decided;

	if (sbx_queue_adopt(it->w->q, w->prop, &o, &decided, NULL, &err))
		set_status(w, "not written: %s", err ? err : "?");
	else
		set_status(w, "rule written to %s\napproved %zu of the %zu waiting requests it "
			   "answers, for their sessions", w->prop->file, decided, w->prop->ncovers);
	free(err);
	prop_drop(w);
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
		if (w->prop && c != ' ' && c != 'b' && c != 0x0c) {
			/* y, once every byte of request and rule was on the
			 * screen, writes it; any other key puts it away */
			bool mine = w->n && w->view_id && !strcmp(w->prop->id, w->view_id) &&
				    !strcmp(w->view_id, w->items[w->sel].req.id ?: "");

			if (c == 'y' && mine && w->armed) {
				key_rule_write(w);
			} else if (c == 'y' && mine) {
				set_status(w, "Not written: scroll to the end of the rule to arm y "
					   "(space).");
			} else {
				prop_drop(w);
				set_status(w, "The rule was put away; nothing written.");
			}
			continue;
		}
		switch (c) {
		case 'r':
			key_rule(w);
			break;
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
		case ' ':
			watch_scroll(w, 1);
			break;
		case 'b':
			watch_scroll(w, -1);
			break;
		case 'o': case 's': case 'a':
			/* armed by the last draw, of this request, at this size */
			if (!w->armed || !w->n || !w->view_id ||
			    strcmp(w->view_id, w->items[w->sel].req.id ?: "")) {
				set_status(w, "Not approved: scroll to the end to arm approve (space).");
				break;
			}
			key_decide(w, c);
			break;
		case 'd':
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
	w->qw = sbx_qwatch_new();
	if (!w->qw)
		return -errno;
	for (size_t k = 0; k < w->nq; k++) {
		int rc = sbx_qwatch_add(w->qw, w->qs[k].q, SBX_QDIR_PENDING,
					SBX_QW_ARRIVED | SBX_QW_CREATED | SBX_QW_LEFT);

		if (rc < 0) {
			errno = -rc;
			return rc;
		}
	}
	return 0;
}

static int run(struct watch *w)
{
	char inbuf[8192];
	size_t inlen = 0;
	bool stdin_open = w->autom == AUTO_NONE;

	refresh(w);
	if (w->once && w->tty)
		for (size_t i = 0; i < w->n; i++)
			mark_seen(w, w->items[i].req.id);
	if (w->autom != AUTO_NONE)
		auto_decide(w);
	else if (w->line)
		print_new(w);
	if (w->once && w->autom != AUTO_NONE)
		return SBX_EXIT_OK;

	while (!stop) {
		struct pollfd p[2] = {
			{ .fd = stdin_open ? STDIN_FILENO : -1, .events = POLLIN },
			{ .fd = w->once ? -1 : sbx_qwatch_fd(w->qw), .events = POLLIN },
		};
		int r;

		if (w->tty) {
			if (w->once && !w->n)
				break;
			if (resized)
				resized = 0;
			if (watch_draw(w) < 0)
				stop = 1;
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
			sbx_qwatch_read(w->qw, NULL, NULL);
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
	prop_drop(w);
	return SBX_EXIT_OK;
}

static void usage(FILE *out)
{
	sbx_cmd_help(out, sbx_cmd_find("watch"));
}

static const struct sbx_opt watch_opts[] = {
	{ "auto", 'A', 0, 0, "approve|deny", NULL,
	  "decide everything that arrives (tests, demos)", NULL },
	{ "scope", 's', 0, 0, "once|session|always", "once", "the scope of --auto approve", NULL },
	{ "once", '1', 0, 0, NULL, NULL, "handle what is pending now, then exit", NULL },
	{ "cmd-timeout", 't', 0, 0, "SECONDS", "600",
	  "how long an approved command may run", NULL },
	{ "lines", 'l', 0, 0, NULL, NULL,
	  "one JSON line per request on stdout and commands on stdin, also on a terminal", NULL },
	{ 0 }
};

static int cmd_watch(int argc, char **argv)
{
	struct watch w = { .auto_scope = SBX_SCOPE_ONCE };
	bool force_lines = false, scope_given = false;
	int c, status;
	char *end;
	long v;

	opterr = 0;
	optind = 1;
	while ((c = sbx_getopt(argc, argv, watch_opts, NULL)) != -1) {
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
		const char *dir = optind < argc ? argv[optind + (int)k] : NULL;
		char *err = NULL, *sbx = NULL, *found = NULL;
		struct stat st;
		unsigned fl = 0;

		if (!dir) {
			if (sbx_project_resolve(NULL, &found, &err) < 0) {
				fprintf(stderr, "bpfsbx watch: %s\n", err ? err : "no project");
				free(err);
				status = SBX_EXIT_FAIL;
				goto out;
			}
			dir = found;
		}
		/* create escalations/ only in a project that has .sandbox */
		if (asprintf(&sbx, "%s/.sandbox", dir) >= 0 && lstat(sbx, &st) == 0 &&
		    S_ISDIR(st.st_mode))
			fl = SBX_Q_CREATE;
		free(sbx);
		/* shown as the project of its requests: the same absolute path
		 * the dashboard shows */
		w.qs[k].dir = realpath(dir, NULL) ?: strdup(dir);
		w.qs[k].q = sbx_queue_open(dir, fl, (uid_t)-1, (gid_t)-1, &err);
		free(found);
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
	if (w.tty && watch_tty_setup() < 0) {
		fprintf(stderr, "bpfsbx watch: cannot set up the terminal: %s\n", strerror(errno));
		status = SBX_EXIT_FAIL;
		goto out;
	}
	status = run(&w);
	watch_tty_restore();
out:
	for (size_t i = 0; i < w.n; i++)
		sbx_request_release(&w.items[i].req);
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
	free(w.learning);
	free(w.view_id);
	free(w.view_doc);
	free(w.seen_bytes);
	free(w.output);
	sbx_qwatch_free(w.qw);
	return status;
}

SBX_COMMAND(watch, "watch", "[DIR...] [OPTIONS]",
	    "show pending requests and approve or deny them", cmd_watch,
	    watch_opts);
