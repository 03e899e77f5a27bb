// SPDX-License-Identifier: GPL-2.0
/*
 * notice.c - the one line a session's terminal gets when the session files
 * a request. An ask is refused at once with EPERM, exactly like a deny:
 * without this line the person at the session's terminal sees a tool fail
 * and concludes that bpfsbx is broken, while a request waits in the queue.
 *
 * `bpfsbx run` hands the daemon its stderr when that is a terminal (it
 * becomes CMD right after, so it cannot print later itself). The line is
 * written once per request: repeats folded into a request say nothing.
 * The write never blocks the daemon: a terminal that cannot take it now
 * (stopped with ^S, a full pty its reader has not drained yet) gets it
 * from the daemon's timer when it can, for a few seconds, and then loses
 * it, not the daemon's loop. What the agent controls (a path, a host name) goes
 * through the approvers' rendering first: no escape sequence of a
 * session's choosing is ever written by root to a person's screen.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <jansson.h>
#include "lib/log.h"
#include "lib/text.h"
#include "queue/render.h"
#include "user/daemon/notice.h"
#include "user/daemon/state.h"

void sbx_notice_adopt(struct sbx_session_rt *s, int fd)
{
	if (fd < 0 || !isatty(fd))
		return;
	sbx_notice_close(s);
	fd = fcntl(fd, F_DUPFD_CLOEXEC, 3);
	s->notice_fd = fd < 0 ? 0 : fd;
}

/* timer ticks a held line is tried again before it is dropped */
#define NOTICE_TRIES	50
#define NOTICE_HELD_MAX	4096

void sbx_notice_close(struct sbx_session_rt *s)
{
	if (s->notice_fd > 0)
		close(s->notice_fd);
	s->notice_fd = 0;
	free(s->notice_held);
	s->notice_held = NULL;
	s->notice_held_len = 0;
	s->notice_tries = 0;
}

/* 1: written; 0: no room now; -1: the terminal is gone (closed) */
static int notice_write(struct sbx_session_rt *s, const char *p, size_t len)
{
	struct pollfd pf = { .fd = s->notice_fd, .events = POLLOUT };

	if (poll(&pf, 1, 0) != 1 || !(pf.revents & POLLOUT)) {
		if (!(pf.revents & (POLLHUP | POLLERR | POLLNVAL)))
			return 0;
		sbx_notice_close(s);
		return -1;
	}
	if (write(s->notice_fd, p, len) < 0 && errno == EIO) {
		sbx_notice_close(s);
		return -1;
	}
	return 1;
}

/* behind what is held already, so that lines keep their order */
static void notice_hold(struct sbx_session_rt *s, const char *id, const char *p, size_t len)
{
	char *n;

	if (s->notice_held_len + len > NOTICE_HELD_MAX ||
	    !(n = realloc(s->notice_held, s->notice_held_len + len))) {
		sbx_info("session %s: request %s's line dropped: its terminal takes nothing",
			 s->name, id);
		return;
	}
	memcpy(n + s->notice_held_len, p, len);
	s->notice_held = n;
	s->notice_held_len += len;
	sbx_info("session %s: its terminal has no room for request %s's line now; "
		 "trying again", s->name, id);
}

void sbx_notice_retry(struct sbx_session_rt *s)
{
	int rc;

	if (!s->notice_held_len || s->notice_fd <= 0)
		return;
	rc = notice_write(s, s->notice_held, s->notice_held_len);
	if (rc < 0)
		return;
	if (rc == 0 && ++s->notice_tries < NOTICE_TRIES)
		return;
	if (rc == 0)
		sbx_info("session %s: its terminal took no line for %u ticks: dropped", s->name,
			 s->notice_tries);
	free(s->notice_held);
	s->notice_held = NULL;
	s->notice_held_len = 0;
	s->notice_tries = 0;
}

/* The approvers' rule (queue/render.c) on one line: nothing a terminal
 * would act on survives, line breaks are marked, not made */
static void describe(struct sbx_strbuf *b, const struct sbx_request *req)
{
	struct sbx_render_counts c = { 0 };
	struct sbx_strbuf raw = { 0 };

	sbx_render_object_raw(&raw, req);
	if (raw.p)
		sbx_render_text(b, raw.p, raw.len > 300 ? 300 : raw.len, true, &c);
	if (raw.len > 300)
		sbx_sb_puts(b, "...");
	free(raw.p);
}

void sbx_notice_request(struct sbx_session_rt *s, const char *id, const struct sbx_request *req)
{
	struct sbx_strbuf b = { 0 };

	if (s->notice_fd <= 0 || !id)
		return;
	sbx_sb_printf(&b, "\r\nbpfsbx: request %s is waiting for a person's decision: ", id);
	describe(&b, req);
	sbx_sb_printf(&b, " (`bpfsbx watch` or the dashboard decides; until then it is "
			    "refused, and once approved a retry succeeds)\r\n");
	if (b.p && !b.oom) {
		sbx_notice_retry(s);
		if (s->notice_held_len || (s->notice_fd > 0 && notice_write(s, b.p, b.len) == 0))
			notice_hold(s, id, b.p, b.len);
	}
	free(b.p);
}
