// SPDX-License-Identifier: GPL-2.0
/*
 * syslog.c - every event also as an RFC 5424 message with structured
 * data, to a unix datagram socket (/dev/log), or over UDP or TCP to a
 * relay (rsyslog, syslog-ng, a SIEM's collector), which is how many SIEMs
 * ingest. One SD element carries bpfsbx's fields, so a receiver needs no
 * parser for the message text.
 *
 * Best effort, as syslog is: a datagram that cannot be sent, or a TCP
 * connection that is down, loses the message, which is counted and
 * shown by the metrics (the event log and the journal still have it; the
 * OTLP sink is the one with a persistent queue). The daemon never waits
 * on a receiver: sends do not block, and after a failure the target is
 * reached again at the next event, at most once a second.
 *
 * TCP frames each message by octet counting, "LEN SP MSG" (RFC 6587,
 * 3.4.1), so that a message may hold a newline.
 */
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>
#include "lib/json.h"
#include "lib/alloc.h"
#include "lib/clock.h"
#include "lib/log.h"
#include "lib/text.h"
#include "queue/render.h"
#include "user/daemon/syslog.h"

#define RETRY_NS 1000000000ull
#define FACILITY_AUTH 4

static struct sbx_syslog_target target;
static bool enabled;
static int fd = -1;
static uint64_t last_try_ns;
static unsigned long sent, failures;

unsigned long sbx_syslog_sent(void)
{
	return sent;
}

unsigned long sbx_syslog_failures(void)
{
	return failures;
}

static int bad(char **err, const char *s, const char *why)
{
	*err = sbx_asprintf("--syslog %s: %s (unix:PATH, udp:HOST:PORT or tcp:HOST:PORT)", s, why);
	return -EINVAL;
}

int sbx_syslog_parse_target(const char *s, struct sbx_syslog_target *t, char **err)
{
	const char *hp, *colon;
	size_t hl;
	long port;

	memset(t, 0, sizeof(*t));
	if (!strncmp(s, "unix:", 5) || s[0] == '/') {
		const char *p = s[0] == '/' ? s : s + 5;

		if (p[0] != '/')
			return bad(err, s, "the socket path must be absolute");
		if (strlen(p) >= sizeof(t->path))
			return bad(err, s, "the socket path is too long");
		t->proto = SBX_SYSLOG_UNIX;
		memcpy(t->path, p, strlen(p) + 1);
		return 0;
	}
	if (!strncmp(s, "udp:", 4))
		t->proto = SBX_SYSLOG_UDP;
	else if (!strncmp(s, "tcp:", 4))
		t->proto = SBX_SYSLOG_TCP;
	else
		return bad(err, s, "unknown transport");
	hp = s + 4;
	if (hp[0] == '[') {
		const char *end = strchr(hp, ']');

		if (!end || end[1] != ':')
			return bad(err, s, "an IPv6 address is written [ADDRESS]:PORT");
		hl = (size_t)(end - hp - 1);
		hp++;
		colon = end + 1;
	} else {
		colon = strrchr(hp, ':');
		if (!colon)
			return bad(err, s, "no port");
		hl = (size_t)(colon - hp);
		if (memchr(hp, ':', hl))
			return bad(err, s, "an IPv6 address is written [ADDRESS]:PORT");
	}
	if (!hl || hl >= sizeof(t->host))
		return bad(err, s, "no host, or a host name that is too long");
	if (!sbx_parse_long(colon + 1, 1, 65535, &port))
		return bad(err, s, "the port must be a number from 1 to 65535");
	memcpy(t->host, hp, hl);
	t->host[hl] = 0;
	snprintf(t->port, sizeof(t->port), "%ld", port);
	return 0;
}

int sbx_syslog_configure(const char *s, char **err)
{
	int rc = sbx_syslog_parse_target(s, &target, err);

	enabled = !rc;
	return rc;
}

/* One SD-PARAM value: '"', '\\' and ']' escaped; invalid UTF-8 as '?'. */
static void put_value(struct sbx_strbuf *b, const char *v)
{
	const unsigned char *p = (const unsigned char *)v;
	size_t left = strlen(v);

	while (left) {
		unsigned cp;
		size_t n = sbx_utf8_decode(p, left, &cp);

		if (!n) {
			sbx_sb_putc(b, '?');
			n = 1;
		} else {
			if (*p == '"' || *p == '\\' || *p == ']')
				sbx_sb_putc(b, '\\');
			sbx_sb_putn(b, (const char *)p, n);
		}
		p += n;
		left -= n;
	}
}

static void param(struct sbx_strbuf *b, const char *name, const char *v)
{
	if (!v)
		return;
	sbx_sb_printf(b, " %s=\"", name);
	put_value(b, v);
	sbx_sb_putc(b, '"');
}

static void param_num(struct sbx_strbuf *b, const char *name, long long v)
{
	if (v >= 0)
		sbx_sb_printf(b, " %s=\"%lld\"", name, v);
}

char *sbx_syslog_format(const struct sbx_evrec *r, const char *host, int procid)
{
	struct sbx_strbuf b = { 0 };
	char when[SBX_RFC3339_MAX], *msg;

	sbx_rfc3339(when, sizeof(when), &r->ts, 3);
	sbx_sb_printf(&b, "<%d>1 %s %s bpfsbx %d %s [" SBX_SYSLOG_SDID,
		      FACILITY_AUTH * 8 + sbx_evrec_severity(r), when, host && *host ? host : "-",
		      procid, r->kind);
	param(&b, "session", r->session);
	param(&b, "project", r->project);
	param(&b, "container", sbx_json_str(r->container, "name"));
	param(&b, "container_id", sbx_json_str(r->container, "id"));
	param(&b, "pod", sbx_json_str(r->container, "pod"));
	param(&b, "namespace", sbx_json_str(r->container, "namespace"));
	param(&b, "user", r->user);
	param_num(&b, "uid", r->uid);
	param_num(&b, "pid", r->pid);
	param(&b, "comm", r->comm);
	param(&b, "exe", r->exe);
	param(&b, "operation", r->operation);
	param(&b, "access", r->access);
	param(&b, "object", r->object);
	param(&b, "verdict", r->verdict);
	param(&b, "tier", r->tier);
	if (r->rule.rule.present)
		param_num(&b, "rule_id", r->rule.rule.id);
	param(&b, "rule", r->rule.rule.pattern);
	param(&b, "reason", r->rule.rule.reason);
	param(&b, "source", r->rule.rule.source);
	param_num(&b, "errno", r->err);
	if (r->repeats)
		param_num(&b, "repeats", (long long)r->repeats);
	param(&b, "name", r->name);
	param(&b, "answer", r->answer);
	sbx_sb_puts(&b, "] ");
	msg = sbx_evrec_message(r);
	sbx_sb_puts(&b, msg);
	free(msg);
	if (b.oom) {
		free(b.p);
		return NULL;
	}
	return b.p;
}

static int open_target(void)
{
	struct addrinfo hints = { .ai_flags = AI_ADDRCONFIG }, *ai = NULL, *a;
	int s = -1, rc;

	if (target.proto == SBX_SYSLOG_UNIX) {
		struct sockaddr_un sun = { .sun_family = AF_UNIX };

		memcpy(sun.sun_path, target.path, sizeof(target.path));
		s = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
		if (s >= 0 && connect(s, (struct sockaddr *)&sun, sizeof(sun))) {
			close(s);
			return -1;
		}
		return s;
	}
	hints.ai_socktype = target.proto == SBX_SYSLOG_TCP ? SOCK_STREAM : SOCK_DGRAM;
	if (getaddrinfo(target.host, target.port, &hints, &ai))
		return -1;
	for (a = ai; a; a = a->ai_next) {
		s = socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
		if (s < 0)
			continue;
		rc = connect(s, a->ai_addr, a->ai_addrlen);
		if (rc && errno == EINPROGRESS) {
			/* a relay on the LAN answers within this, or is down */
			struct pollfd p = { .fd = s, .events = POLLOUT };
			int e = 0;
			socklen_t l = sizeof(e);

			rc = poll(&p, 1, 200) == 1 && !getsockopt(s, SOL_SOCKET, SO_ERROR, &e, &l) &&
			     !e ? 0 : -1;
		}
		if (!rc)
			break;
		close(s);
		s = -1;
	}
	freeaddrinfo(ai);
	return s;
}

static int send_msg(const char *msg)
{
	size_t len = strlen(msg);
	char *framed = NULL;
	const char *out = msg;
	ssize_t n;

	if (target.proto == SBX_SYSLOG_TCP) {
		framed = sbx_asprintf("%zu %s", len, msg);
		out = framed;
		len = strlen(framed);
	}
	n = send(fd, out, len, MSG_DONTWAIT | MSG_NOSIGNAL);
	free(framed);
	return n == (ssize_t)len ? 0 : -1;
}

void sbx_syslog_event(const struct sbx_evrec *r)
{
	char *msg;

	if (!enabled)
		return;
	if (fd < 0) {
		uint64_t now = sbx_boot_ns();

		if (last_try_ns && now - last_try_ns < RETRY_NS) {
			failures++;
			return;
		}
		last_try_ns = now;
		fd = open_target();
		if (fd < 0) {
			if (failures++ == 0)
				sbx_warn("syslog: cannot reach the target: %s (events stay in the "
					 "event log)", strerror(errno));
			return;
		}
	}
	msg = sbx_syslog_format(r, sbx_evrec_host(), (int)getpid());
	if (msg && !send_msg(msg)) {
		sent++;
	} else {
		/* a stream cut mid-message cannot be resumed, and a datagram
		 * socket stays connected to a receiver that has restarted
		 * (ECONNREFUSED): reconnect, at most once a second */
		failures++;
		close(fd);
		fd = -1;
	}
	free(msg);
}
