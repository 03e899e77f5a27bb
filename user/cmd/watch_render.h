/* SPDX-License-Identifier: GPL-2.0 */
/*
 * watch_render.h - what the two parts of `bpfsbx watch` share: watch.c
 * (the loop, the keys, line mode, the queues) and watch_render.c (what a
 * person sees: the text of requests made safe for a terminal, and the
 * screen).
 */
#ifndef SBX_WATCH_RENDER_H
#define SBX_WATCH_RENDER_H

#include <stdbool.h>
#include <stddef.h>
#include <time.h>
#include <jansson.h>
#include "lib/text.h"
#include "queue/propose.h"
#include "queue/queue.h"
#include "queue/render.h"
#include "queue/request.h"
#include "lib/json.h"

/* ---- the approver's state (watch.c) ------------------------------------------ */

struct wq {
	char *dir;
	struct sbx_queue *q;
};

/* A pending request, decoded once when its queue is listed */
struct item {
	struct sbx_request req;
	struct wq *w;
	/* the other waiting requests of its session asking the same access
	 * below the same tool directory (policy suggest's): one rule (r)
	 * would answer them all */
	size_t alike;
};

enum automode { AUTO_NONE, AUTO_APPROVE, AUTO_DENY };

struct watch {
	struct wq *qs;
	size_t nq;
	struct sbx_qwatch *qw;
	struct item *items;
	size_t n, sel;
	char **seen;		/* ids already shown (line, auto) or the --once set */
	size_t nseen;
	enum automode autom;
	enum sbx_scope auto_scope;
	bool once, line, tty;
	int cmd_timeout;
	char *status;		/* TTY: the last action's outcome */
	/* TTY: the selected request as last drawn (its id and rendering),
	 * its first shown row, the rows of the last page, and which bytes of
	 * the rendering have been on the screen: the approve keys arm once
	 * every one has (armed) */
	char *view_id, *view_doc;
	size_t scroll, page;
	unsigned char *seen_bytes;
	size_t seen_len, unseen;
	bool armed;
	char *output;		/* TTY: the head of the last command's output */
	/* TTY: the watched projects' learning sessions (run --learn), as
	 * the daemon's status lists them, "NAME (PROJECT)" joined; NULL:
	 * none, or no daemon to ask */
	char *learning;
	time_t learning_at;
	/* TTY: the rule proposed for a request (r), shown after it until it
	 * is written (y, once armed by the whole of it on the screen) or
	 * put away (any other key) */
	struct sbx_proposal *prop;
};

static inline bool is_command(const struct sbx_request *req)
{
	return req->kind == SBX_REQ_COMMAND;
}

/* ---- what a person sees (watch_render.c) ------------------------------------- */

/* The request's object on one line, made safe, cut after max columns (0:
 * no limit): "~/.aws/credentials (read)", "10.0.0.5:5432/tcp", "`make deploy`" */
void watch_sb_object(struct sbx_strbuf *b, const struct sbx_request *req, size_t max);
/* the same, unescaped and uncut */
void watch_sb_object_raw(struct sbx_strbuf *b, const struct sbx_request *req);

/*
 * The request's object in full, by the rule of queue/render.h: each line
 * of a command on its own rows (after its mark), cut into rows of at most
 * cols columns (0: not cut), what is escaped counted.
 */
struct watch_text {
	char **lines;
	size_t n;
	struct sbx_render_counts c;
};
void watch_text_build(struct watch_text *t, const struct sbx_request *req, size_t cols);
void watch_text_free(struct watch_text *t);
/* "warning: shown escaped: 2 control characters, ..." or NULL (malloc'd) */
char *watch_text_warning(const struct watch_text *t);

/* ": exit N, output in FILE" when the decision (done, decoded with its
 * decision) ran a command; sep goes before "output" */
void watch_sb_result(struct sbx_strbuf *b, const struct sbx_request *done, const char *sep);
/* The alternate screen, keys one at a time without echo; restored at exit
 * too. Returns 0 or -errno. */
int watch_tty_setup(void);
void watch_tty_restore(void);
/* The whole screen: the list, the selected request, the keys, the status
 * and the head of the last command's output. -1: the terminal is gone. */
int watch_draw(struct watch *w);
/* space / b: the selected request a page (the rows last drawn) on or back */
void watch_scroll(struct watch *w, int pages);

#endif
