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
 * (stopped with ^S, a full pty nobody reads) loses the line, not the
 * daemon's loop. What the agent controls (a path, a host name) is escaped
 * before it reaches the terminal: no escape sequence of a session's
 * choosing is ever written by root to a person's screen.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <jansson.h>
#include "lib/text.h"
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

void sbx_notice_close(struct sbx_session_rt *s)
{
	if (s->notice_fd > 0)
		close(s->notice_fd);
	s->notice_fd = 0;
}

/* printable ASCII as is, everything else as \xNN, at most max bytes of it */
static void escaped(struct sbx_strbuf *b, const char *s, size_t max)
{
	size_t n = 0;

	for (; s && *s && n < max; s++, n++) {
		unsigned char c = (unsigned char)*s;

		if (c >= 0x20 && c < 0x7f && c != '\\')
			sbx_sb_putc(b, (char)c);
		else
			sbx_sb_printf(b, "\\x%02x", c);
	}
	if (s && *s)
		sbx_sb_puts(b, "...");
}

static const char *jstr(json_t *o, const char *k)
{
	return json_string_value(json_object_get(o, k));
}

/* "read /home/u/.aws/credentials", "connect 10.0.0.1:22", "look up x.com" */
static void describe(struct sbx_strbuf *b, json_t *req)
{
	json_t *obj = json_object_get(req, "object");
	const char *kind = jstr(req, "kind");

	if (kind && !strcmp(kind, "host")) {
		sbx_sb_puts(b, "look up ");
		escaped(b, jstr(obj, "host"), 120);
	} else if (kind && !strcmp(kind, "net")) {
		sbx_sb_puts(b, "connect ");
		escaped(b, jstr(obj, "name") ? jstr(obj, "name") : jstr(obj, "addr"), 120);
		sbx_sb_printf(b, " port %lld", (long long)json_integer_value(json_object_get(obj, "port")));
	} else {
		escaped(b, jstr(obj, "access") ? jstr(obj, "access") : kind, 16);
		sbx_sb_putc(b, ' ');
		escaped(b, jstr(obj, "path"), 160);
	}
}

void sbx_notice_request(struct sbx_session_rt *s, const char *id, json_t *req)
{
	struct sbx_strbuf b = { 0 };
	struct pollfd p;

	if (s->notice_fd <= 0 || !id)
		return;
	p = (struct pollfd){ .fd = s->notice_fd, .events = POLLOUT };
	if (poll(&p, 1, 0) != 1 || !(p.revents & POLLOUT)) {
		if (p.revents & (POLLHUP | POLLERR | POLLNVAL))
			sbx_notice_close(s);	/* the terminal is gone */
		return;
	}
	sbx_sb_printf(&b, "\r\nbpfsbx: request %s is waiting for a person's decision: ", id);
	describe(&b, req);
	sbx_sb_printf(&b, " (`bpfsbx watch` or the dashboard decides; until then it is "
			    "refused, and once approved a retry succeeds)\r\n");
	if (b.p && !b.oom && write(s->notice_fd, b.p, b.len) < 0 && errno == EIO)
		sbx_notice_close(s);
	free(b.p);
}
