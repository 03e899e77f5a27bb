// SPDX-License-Identifier: GPL-2.0
/*
 * server.c - the dashboard's HTTP layer (server.h): sockets, the token,
 * the checks every request passes, routing, and the decision workers.
 *
 * libmicrohttpd runs one internal epoll thread; handlers never block it.
 * A decision can run a command for minutes, so it goes to a worker thread
 * while its connection is suspended, and the reply is queued when the
 * worker resumes it. The live feed suspends its connection between
 * messages (feed.c). Idle connections cost a socket and a little memory,
 * and are closed after SBX_DASH_IDLE_S.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <netinet/in.h>
#include <pthread.h>
#include <pwd.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/random.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <microhttpd.h>
#include "bpf/bpfsbx.h"
#include "lib/alloc.h"
#include "lib/exit.h"
#include "lib/fileio.h"
#include "lib/sha256.h"
#include "lib/log.h"
#include "lib/text.h"
#include "queue/queue.h"
#include "user/control/control_client.h"
#include "user/dashboard/api.h"
#include "user/dashboard/dashboard_assets.h"
#include "user/dashboard/feed.h"
#include "user/dashboard/server.h"

#define TOKEN_HEX 64

struct dash {
	const struct sbx_dash_opts *o;
	struct sbx_feed *feed;
	struct MHD_Daemon *mhd;
	char token[TOKEN_HEX + 1], csrf[TOKEN_HEX + 1], cookie[40];
	bool unix_sock, unix_bound, kernel_protected, stopping;
	char *protect_note;		/* what the page says about the kernel's part */
	char *user;
	pthread_mutex_t wlock;
	pthread_cond_t wcond;
	unsigned workers;
};

enum phase { RECEIVING, RUNNING, FINISHED };

struct req {
	struct dash *d;
	struct MHD_Connection *conn;
	struct sbx_strbuf body;
	bool too_big, set_cookie;
	enum phase phase;
	struct sbx_api_decision dec;
	unsigned status;
	json_t *reply;
};

/* ---- responses ------------------------------------------------------------ */

static const char csp[] =
	"default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; "
	"connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

static void common_headers(struct MHD_Response *r)
{
	MHD_add_response_header(r, "Cache-Control", "no-store");
	MHD_add_response_header(r, "X-Content-Type-Options", "nosniff");
	MHD_add_response_header(r, "Referrer-Policy", "no-referrer");
	MHD_add_response_header(r, "X-Frame-Options", "DENY");
	MHD_add_response_header(r, "Cross-Origin-Opener-Policy", "same-origin");
	MHD_add_response_header(r, "Cross-Origin-Resource-Policy", "same-origin");
	MHD_add_response_header(r, "Content-Security-Policy", csp);
}

static enum MHD_Result send_buf(struct MHD_Connection *c, unsigned status, const char *type,
				char *buf, size_t len)
{
	struct MHD_Response *r = MHD_create_response_from_buffer(len, buf, MHD_RESPMEM_MUST_FREE);
	enum MHD_Result ret;

	if (!r) {
		free(buf);
		return MHD_NO;
	}
	common_headers(r);
	MHD_add_response_header(r, "Content-Type", type);
	ret = MHD_queue_response(c, status, r);
	MHD_destroy_response(r);
	return ret;
}

/* takes the reference */
static enum MHD_Result send_json(struct MHD_Connection *c, unsigned status, json_t *j)
{
	char *s = j ? json_dumps(j, JSON_COMPACT) : NULL;

	json_decref(j);
	if (!s)
		s = sbx_strdup("{\"ok\":false,\"error\":\"out of memory\",\"code\":\"internal\"}");
	return send_buf(c, status, "application/json; charset=utf-8", s, strlen(s));
}

static enum MHD_Result send_error(struct MHD_Connection *c, unsigned status, const char *code,
				  const char *msg)
{
	return send_json(c, status, sbx_api_error(code, "%s", msg));
}

static const char *content_type(const char *path)
{
	const char *dot = strrchr(path, '.');

	if (dot && !strcmp(dot, ".html"))
		return "text/html; charset=utf-8";
	if (dot && !strcmp(dot, ".js"))
		return "text/javascript; charset=utf-8";
	if (dot && !strcmp(dot, ".css"))
		return "text/css; charset=utf-8";
	if (dot && !strcmp(dot, ".svg"))
		return "image/svg+xml";
	return "application/octet-stream";
}

static const struct sbx_dash_asset *asset(const char *path)
{
	for (const struct sbx_dash_asset *a = sbx_dash_assets; a->path; a++)
		if (!strcmp(a->path, path))
			return a;
	return NULL;
}

static enum MHD_Result send_asset(struct MHD_Connection *c, const struct sbx_dash_asset *a)
{
	struct MHD_Response *r = MHD_create_response_from_buffer(a->len, (void *)a->data,
								 MHD_RESPMEM_PERSISTENT);
	enum MHD_Result ret;

	if (!r)
		return MHD_NO;
	common_headers(r);
	MHD_add_response_header(r, "Content-Type", content_type(a->path));
	ret = MHD_queue_response(c, MHD_HTTP_OK, r);
	MHD_destroy_response(r);
	return ret;
}

/* ---- checks ------------------------------------------------------------------- */

/* the host part of a Host header: "127.0.0.1:8080" -> 127.0.0.1 */
static bool loopback_host(const char *host)
{
	static const char *const ok[] = { "127.0.0.1", "localhost", "[::1]" };
	size_t n;

	if (!host)
		return false;
	n = host[0] == '[' ? strcspn(host, "]") + 1 : strcspn(host, ":");
	if (host[n] && host[n] != ':')
		return false;
	if (host[n] == ':') {
		const char *p = host + n + 1;

		if (!*p || strspn(p, "0123456789") != strlen(p) || strlen(p) > 5)
			return false;
	}
	for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++)
		if (strlen(ok[i]) == n && !strncasecmp(host, ok[i], n))
			return true;
	return false;
}

unsigned sbx_dash_check_origin(const char *host, const char *origin, const char **why)
{
	if (!loopback_host(host)) {
		*why = "the Host header must name this machine's loopback (127.0.0.1, localhost "
		       "or [::1]); a page of another site does not get an answer here";
		return 403;
	}
	if (origin && (strncmp(origin, "http://", 7) || strcasecmp(origin + 7, host))) {
		*why = "foreign Origin: only this dashboard's own page may call it";
		return 403;
	}
	return 0;
}

static bool token_eq(const char *given, const char *want)
{
	return given && strlen(given) == TOKEN_HEX && sbx_secret_eq(given, want, TOKEN_HEX);
}

static const char *header(struct MHD_Connection *c, const char *name)
{
	return MHD_lookup_connection_value(c, MHD_HEADER_KIND, name);
}

static const char *query(struct MHD_Connection *c, const char *name)
{
	return MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, name);
}

/* a unix socket's peer: this user or root, and outside every session */
static unsigned check_peer(struct MHD_Connection *c, const char **why)
{
	const union MHD_ConnectionInfo *ci =
		MHD_get_connection_info(c, MHD_CONNECTION_INFO_CONNECTION_FD);
	struct ucred cr;
	socklen_t l = sizeof(cr);

	if (!ci || getsockopt(ci->connect_fd, SOL_SOCKET, SO_PEERCRED, &cr, &l)) {
		*why = "cannot tell who is connected";
		return 403;
	}
	if (cr.uid != getuid() && cr.uid != 0) {
		*why = "this dashboard serves its own user only";
		return 403;
	}
	/* a peer /proc cannot place counts as inside, as for the daemon */
	if (sbx_pid_session(cr.pid, NULL) != 0) {
		*why = "nothing is served to a process inside a bpfsbx session";
		return 403;
	}
	return 0;
}

/* 0, or the status of a refusal already queued */
static unsigned check_access(struct dash *d, struct req *r, const char *url, bool post,
			     enum MHD_Result *ret)
{
	struct MHD_Connection *c = r->conn;
	const char *why = NULL, *auth, *tok = NULL, *site;
	unsigned st;

	st = sbx_dash_check_origin(header(c, "Host"), header(c, "Origin"), &why);
	site = header(c, "Sec-Fetch-Site");
	if (!st && site && !strcmp(site, "cross-site") && (post || !strncmp(url, "/api/", 5))) {
		st = 403;
		why = "cross-site request: only this dashboard's own page may call it";
	}
	if (!st && d->unix_sock)
		st = check_peer(c, &why);
	if (st) {
		*ret = send_error(c, st, "forbidden", why);
		return st;
	}
	auth = header(c, "Authorization");
	if (auth && !strncasecmp(auth, "Bearer ", 7))
		tok = auth + 7;
	if (!tok)
		tok = MHD_lookup_connection_value(c, MHD_COOKIE_KIND, d->cookie);
	if (!token_eq(tok, d->token) && !post && !strcmp(url, "/") && query(c, "token")) {
		tok = query(c, "token");
		r->set_cookie = true;
	}
	if (!token_eq(tok, d->token)) {
		static const char page[] =
			"<!doctype html><meta charset=utf-8><title>bpfsbx dashboard</title>"
			"<p>This page needs its token: open the URL that <code>bpfsbx dashboard"
			"</code> printed, or read it from its token file.</p>\n";

		if (!strncmp(url, "/api/", 5)) {
			*ret = send_error(c, 401, "unauthorized", "a token is needed (the cookie of "
					  "the page, or Authorization: Bearer TOKEN)");
		} else {
			char *b = sbx_strdup(page);

			*ret = send_buf(c, 401, "text/html; charset=utf-8", b, strlen(b));
		}
		return 401;
	}
	if (post) {
		const char *ct = header(c, "Content-Type");

		if (!token_eq(header(c, "X-CSRF-Token"), d->csrf)) {
			*ret = send_error(c, 403, "csrf", "a decision needs the CSRF token "
					  "(X-CSRF-Token, from GET /api/info)");
			return 403;
		}
		if (!ct || strncasecmp(ct, "application/json", 16) ||
		    (ct[16] && ct[16] != ';' && ct[16] != ' ')) {
			*ret = send_error(c, 415, "unsupported_media_type",
					  "the body must be application/json");
			return 415;
		}
	}
	return 0;
}

/* ---- decisions -------------------------------------------------------------------- */

static void *worker(void *arg)
{
	struct req *r = arg;
	struct dash *d = r->d;

	r->status = sbx_api_decide(&r->dec, &r->reply);
	sbx_feed_poke(d->feed);
	r->phase = FINISHED;
	/* r may be freed once resumed: nothing of it is touched after this */
	MHD_resume_connection(r->conn);
	pthread_mutex_lock(&d->wlock);
	d->workers--;
	pthread_cond_broadcast(&d->wcond);
	pthread_mutex_unlock(&d->wlock);
	return NULL;
}

static enum MHD_Result decide(struct dash *d, struct req *r, const char *id, bool approve,
			      bool rule)
{
	json_t *out = NULL;
	pthread_attr_t attr;
	pthread_t th;
	unsigned st;
	bool busy;

	st = sbx_api_prepare(d->feed, id, approve, rule, r->body.p, r->body.len, &r->dec, &out);
	if (st != 200)
		return send_json(r->conn, st, out);
	r->dec.cmd_timeout_s = d->o->cmd_timeout_s;
	pthread_mutex_lock(&d->wlock);
	busy = d->stopping || d->workers >= SBX_DASH_WORKERS_MAX;
	if (!busy)
		d->workers++;
	pthread_mutex_unlock(&d->wlock);
	if (busy)
		return send_error(r->conn, 503, "busy", d->stopping ? "the dashboard is stopping" :
				  "too many decisions in progress; try again");
	r->phase = RUNNING;
	MHD_suspend_connection(r->conn);
	pthread_attr_init(&attr);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	if (pthread_create(&th, &attr, worker, r)) {
		/* no thread: decide here, the reply goes out once resumed */
		worker(r);
	}
	pthread_attr_destroy(&attr);
	return MHD_YES;
}

/* ---- routes ------------------------------------------------------------------------ */

static json_t *info(struct dash *d)
{
	return json_pack("{s:b,s:s,s:s,s:b,s:s,s:o,s:b,s:I}", "ok", 1, "user", d->user,
			 "csrf", d->csrf, "kernel_protected", d->kernel_protected,
			 "protection", d->protect_note, "projects",
			 sbx_feed_projects_json(d->feed), "unix_socket", d->unix_sock,
			 "cursor", (json_int_t)sbx_feed_cursor(d->feed));
}

static enum MHD_Result redirect_home(struct dash *d, struct MHD_Connection *c)
{
	struct MHD_Response *r = MHD_create_response_from_buffer(0, (void *)"",
								 MHD_RESPMEM_PERSISTENT);
	char *cookie;
	enum MHD_Result ret;

	if (!r)
		return MHD_NO;
	/* the token leaves the URL (history, screen shares); the cookie
	 * is for this page alone: HttpOnly, and sent by no other site */
	cookie = sbx_asprintf("%s=%s; Path=/; HttpOnly; SameSite=Strict", d->cookie, d->token);
	common_headers(r);
	MHD_add_response_header(r, "Set-Cookie", cookie);
	MHD_add_response_header(r, "Location", "/");
	free(cookie);
	ret = MHD_queue_response(c, MHD_HTTP_SEE_OTHER, r);
	MHD_destroy_response(r);
	return ret;
}

static enum MHD_Result method_not_allowed(struct MHD_Connection *c, const char *allow)
{
	struct MHD_Response *r;
	char *msg = sbx_asprintf("{\"ok\":false,\"error\":\"method not allowed (%s)\","
				 "\"code\":\"method_not_allowed\"}", allow);
	enum MHD_Result ret;

	r = MHD_create_response_from_buffer(strlen(msg), msg, MHD_RESPMEM_MUST_FREE);
	if (!r) {
		free(msg);
		return MHD_NO;
	}
	common_headers(r);
	MHD_add_response_header(r, "Content-Type", "application/json; charset=utf-8");
	MHD_add_response_header(r, "Allow", allow);
	ret = MHD_queue_response(c, MHD_HTTP_METHOD_NOT_ALLOWED, r);
	MHD_destroy_response(r);
	return ret;
}

static enum MHD_Result feed(struct dash *d, struct MHD_Connection *c)
{
	const char *last = header(c, "Last-Event-ID"), *since = query(c, "since");
	const char *from = last && *last ? last : since;
	uint64_t cursor = sbx_feed_cursor(d->feed);
	struct MHD_Response *r;
	enum MHD_Result ret;
	long v;

	if (from && *from) {
		if (!sbx_parse_long(from, 0, LONG_MAX, &v))
			return send_error(c, 400, "bad_request", "since must be a cursor (a number)");
		cursor = (uint64_t)v;
	}
	r = sbx_feed_stream(d->feed, c, cursor);
	if (!r)
		return send_error(c, 503, "busy", "too many live feeds are open");
	common_headers(r);
	MHD_add_response_header(r, "Content-Type", "text/event-stream; charset=utf-8");
	ret = MHD_queue_response(c, MHD_HTTP_OK, r);
	MHD_destroy_response(r);
	return ret;
}

static enum MHD_Result route(struct dash *d, struct req *r, const char *url, bool get, bool post)
{
	struct MHD_Connection *c = r->conn;
	const struct sbx_dash_asset *a;
	json_t *out = NULL;
	unsigned st;

	if (!strcmp(url, "/") || !strcmp(url, "/index.html")) {
		if (!get)
			return method_not_allowed(c, "GET, HEAD");
		if (r->set_cookie)
			return redirect_home(d, c);
		a = asset("/index.html");
		return a ? send_asset(c, a) : send_error(c, 500, "internal", "no page built in");
	}
	if (strncmp(url, "/api/", 5)) {
		a = strchr(url + 1, '/') ? NULL : asset(url);
		if (!a)
			return send_error(c, 404, "not_found", "no such page");
		return get ? send_asset(c, a) : method_not_allowed(c, "GET, HEAD");
	}
	url += 4;
	if (!strncmp(url, "/requests/", 10)) {
		const char *id = url + 10, *slash = strchr(id, '/');
		char idbuf[SBX_ID_MAX + 1];
		size_t n = slash ? (size_t)(slash - id) : strlen(id);

		if (n > SBX_ID_MAX)
			return send_error(c, 400, "bad_request", "not a request id");
		memcpy(idbuf, id, n);
		idbuf[n] = 0;
		if (!sbx_id_valid(idbuf))
			return send_error(c, 400, "bad_request", "not a request id (they look like "
					  "20261130T101503.123456Z-4242-1a2b3c4d)");
		if (!slash) {
			if (!get)
				return method_not_allowed(c, "GET, HEAD");
			st = sbx_api_request(d->feed, idbuf, &out);
			return send_json(c, st, out);
		}
		if (!strcmp(slash, "/approve") || !strcmp(slash, "/deny")) {
			if (!post)
				return method_not_allowed(c, "POST");
			return decide(d, r, idbuf, !strcmp(slash, "/approve"), false);
		}
		if (!strcmp(slash, "/rule")) {
			/* GET: the proposal; POST: the rule shown, written */
			if (post)
				return decide(d, r, idbuf, true, true);
			if (!get)
				return method_not_allowed(c, "GET, HEAD, POST");
			st = sbx_api_rule(d->feed, idbuf, &out);
			return send_json(c, st, out);
		}
		return send_error(c, 404, "not_found", "no such API (approve, deny or rule)");
	}
	if (!get) {
		static const char *const known[] = { "/info", "/sessions", "/requests", "/events",
						     "/audit/verify", "/feed" };

		for (size_t i = 0; i < sizeof(known) / sizeof(known[0]); i++)
			if (!strcmp(url, known[i]))
				return method_not_allowed(c, "GET, HEAD");
		return send_error(c, 404, "not_found", "no such API");
	}
	if (!strcmp(url, "/info"))
		return send_json(c, 200, info(d));
	if (!strcmp(url, "/sessions")) {
		out = sbx_feed_sessions_json(d->feed);
		json_object_set_new(out, "ok", json_true());
		return send_json(c, 200, out);
	}
	if (!strcmp(url, "/requests")) {
		st = sbx_api_requests(d->feed, query(c, "state"), query(c, "limit"), &out);
		return send_json(c, st, out);
	}
	if (!strcmp(url, "/events")) {
		st = sbx_api_events(d->feed, query(c, "since"), query(c, "limit"),
				    query(c, "project"), query(c, "session"), query(c, "verdict"),
				    query(c, "operation"), &out);
		return send_json(c, st, out);
	}
	if (!strcmp(url, "/audit/verify")) {
		st = sbx_api_verify(d->feed, &out);
		return send_json(c, st, out);
	}
	if (!strcmp(url, "/feed"))
		return feed(d, c);
	return send_error(c, 404, "not_found", "no such API");
}

static enum MHD_Result handle(void *cls, struct MHD_Connection *c, const char *url,
			      const char *method, const char *version, const char *upload,
			      size_t *upload_size, void **req_cls)
{
	struct dash *d = cls;
	struct req *r = *req_cls;
	bool get = !strcmp(method, MHD_HTTP_METHOD_GET) || !strcmp(method, MHD_HTTP_METHOD_HEAD);
	bool post = !strcmp(method, MHD_HTTP_METHOD_POST);
	enum MHD_Result ret = MHD_NO;

	(void)version;
	if (!r) {
		const char *cl;
		long len;

		r = sbx_calloc(1, sizeof(*r));
		r->d = d;
		r->conn = c;
		*req_cls = r;
		if (check_access(d, r, url, post, &ret))
			return ret;
		cl = header(c, "Content-Length");
		if (cl && (!sbx_parse_long(cl, 0, LONG_MAX, &len) || len > SBX_API_BODY_MAX))
			return send_error(c, 413, "too_large", "the body is larger than 64 KiB");
		return MHD_YES;
	}
	if (r->phase == FINISHED) {
		json_t *out = r->reply;

		r->reply = NULL;
		return send_json(c, r->status, out);
	}
	if (r->phase == RUNNING)
		return MHD_YES;	/* not called while suspended; harmless if it is */
	if (*upload_size) {
		if (!r->too_big && r->body.len + *upload_size <= SBX_API_BODY_MAX)
			sbx_sb_putn(&r->body, upload, *upload_size);
		else
			r->too_big = true;	/* chunked, without a length: read and drop */
		*upload_size = 0;
		return MHD_YES;
	}
	if (r->too_big || r->body.oom)
		return send_error(c, 413, "too_large", "the body is larger than 64 KiB");
	if (!get && !post)
		return method_not_allowed(c, "GET, HEAD, POST");
	return route(d, r, url, get, post);
}

static void completed(void *cls, struct MHD_Connection *c, void **req_cls,
		      enum MHD_RequestTerminationCode why)
{
	struct req *r = *req_cls;

	(void)cls;
	(void)c;
	(void)why;
	if (!r)
		return;
	free(r->body.p);
	sbx_api_decision_free(&r->dec);
	json_decref(r->reply);
	free(r);
	*req_cls = NULL;
}

static void mhd_log(void *cls, const char *fmt, va_list ap)
{
	char *msg = NULL;

	(void)cls;
	if (vasprintf(&msg, fmt, ap) < 0)
		return;
	msg[strcspn(msg, "\n")] = 0;
	sbx_warn("http: %s", msg);
	free(msg);
}

/* ---- the listening socket ----------------------------------------------------------- */

static int listen_tcp(int port, int *bound, char **err)
{
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port),
				  .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t l = sizeof(sa);
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0), one = 1;

	if (fd < 0) {
		*err = sbx_asprintf("socket: %s", strerror(errno));
		return -1;
	}
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) || listen(fd, 1024) ||
	    getsockname(fd, (struct sockaddr *)&sa, &l)) {
		*err = sbx_asprintf("127.0.0.1:%d: %s", port, strerror(errno));
		close(fd);
		return -1;
	}
	*bound = ntohs(sa.sin_port);
	return fd;
}

static int listen_unix(const char *path, char **err)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	struct stat st;
	mode_t old;
	int fd;

	if (strlen(path) >= sizeof(sa.sun_path)) {
		*err = sbx_asprintf("%s: the path is too long for a unix socket", path);
		return -1;
	}
	strcpy(sa.sun_path, path);
	if (lstat(path, &st) == 0) {
		int probe;

		if (!S_ISSOCK(st.st_mode)) {
			*err = sbx_asprintf("%s exists and is not a socket", path);
			return -1;
		}
		probe = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
		if (probe >= 0 && connect(probe, (struct sockaddr *)&sa, sizeof(sa)) == 0) {
			close(probe);
			*err = sbx_asprintf("%s: another server listens there", path);
			return -1;
		}
		if (probe >= 0)
			close(probe);
		unlink(path);	/* left behind by a dashboard that died */
	}
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0) {
		*err = sbx_asprintf("socket: %s", strerror(errno));
		return -1;
	}
	old = umask(0177);	/* the socket is 0600: this user's alone */
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) || listen(fd, 1024)) {
		umask(old);
		*err = sbx_asprintf("%s: %s", path, strerror(errno));
		close(fd);
		return -1;
	}
	umask(old);
	return fd;
}

/*
 * The kernel's part: the daemon marks the socket so that no session can
 * connect to it. No daemon: say so and go on (a hooks-only machine has
 * no kernel side to ask). A daemon that refuses: stop (fail closed).
 */
static int protect(struct dash *d, int fd)
{
	char *err = NULL;
	int rc = sbx_ctl_protect_listener(fd, &err), n = 0, c;

	if (rc == -ENOENT || rc == -ECONNREFUSED) {
		sbx_warn("no bpfsbx daemon (%s): the kernel does NOT keep sessions from "
			 "connecting to this page; on this machine only the token protects it",
			 err ? err : sbx_control_path());
		d->protect_note = sbx_asprintf("not protected by the kernel: no bpfsbx daemon "
					       "runs (%s); only the token keeps agents out",
					       err ? err : "no control socket");
		free(err);
		return 0;
	}
	if (rc) {
		sbx_err("the daemon did not protect the page from sessions: %s; not serving it",
			err ? err : strerror(-rc));
		free(err);
		return rc;
	}
	free(err);
	d->kernel_protected = true;
	d->protect_note = sbx_strdup("the kernel refuses every session's connect to this page");
	/* a connection that came between listen() and now was not checked */
	while ((c = accept4(fd, NULL, NULL, SOCK_CLOEXEC)) >= 0) {
		close(c);
		n++;
	}
	if (n)
		sbx_warn("closed %d connection(s) made before the page was protected", n);
	return 0;
}

/* ---- the token ------------------------------------------------------------------------ */

static int random_hex(char *out, size_t bytes)
{
	unsigned char b[64];

	if (bytes > sizeof(b) || getrandom(b, bytes, 0) != (ssize_t)bytes)
		return -EIO;
	for (size_t i = 0; i < bytes; i++)
		sprintf(out + 2 * i, "%02x", b[i]);
	out[2 * bytes] = 0;
	return 0;
}

static char *default_token_file(void)
{
	const char *rt = getenv("XDG_RUNTIME_DIR"), *home = getenv("HOME");
	struct stat st;
	char *dir;

	if (rt && *rt == '/' && stat(rt, &st) == 0 && S_ISDIR(st.st_mode) && st.st_uid == getuid())
		dir = sbx_asprintf("%s/bpfsbx", rt);
	else if (home && *home == '/')
		dir = sbx_asprintf("%s/.local/state/bpfsbx", home);
	else
		return NULL;
	if (sbx_mkdir_p(dir, 0700) || stat(dir, &st) || st.st_uid != getuid()) {
		free(dir);
		return NULL;
	}
	chmod(dir, 0700);
	{
		char *p = sbx_asprintf("%s/dashboard-%d.json", dir, (int)getpid());

		free(dir);
		return p;
	}
}

static int write_token_file(const char *path, const char *url, const char *token,
			    const char *listen_on)
{
	json_t *j = json_pack("{s:s,s:s,s:i,s:s}", "url", url, "token", token, "pid",
			      (int)getpid(), "listen", listen_on);
	char *s = j ? json_dumps(j, JSON_INDENT(2)) : NULL;
	struct sbx_strbuf b = { 0 };
	int rc;

	json_decref(j);
	if (!s)
		return -ENOMEM;
	sbx_sb_printf(&b, "%s\n", s);
	free(s);
	rc = sbx_write_file_atomic(path, b.p, b.len, 0600);
	free(b.p);
	return rc;
}

/* ---- running ---------------------------------------------------------------------------- */

static void raise_fd_limit(void)
{
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max < 65536 ? rl.rlim_max : 65536;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
}

static char *me(void)
{
	struct passwd *pw = getpwuid(getuid());

	return pw ? sbx_strdup(pw->pw_name) : sbx_asprintf("uid %d", (int)getuid());
}

int sbx_dash_run(const struct sbx_dash_opts *o)
{
	struct dash d = { .o = o };
	char *err = NULL, *url = NULL, *listen_on = NULL, *tfile = NULL;
	int fd = -1, port = 0, status = SBX_EXIT_FAIL, sig;
	sigset_t set;

	pthread_mutex_init(&d.wlock, NULL);
	pthread_cond_init(&d.wcond, NULL);
	d.user = me();
	d.unix_sock = o->socket_path != NULL;
	d.feed = sbx_feed_new();
	for (size_t i = 0; i < o->ndirs; i++) {
		if (sbx_feed_add_project(d.feed, o->dirs[i], true, &err)) {
			sbx_err("%s", err ? err : o->dirs[i]);
			goto out;
		}
	}
	if (random_hex(d.token, TOKEN_HEX / 2) || random_hex(d.csrf, TOKEN_HEX / 2)) {
		sbx_err("getrandom failed");
		goto out;
	}
	{
		char tag[17];

		if (random_hex(tag, 8))
			goto out;
		snprintf(d.cookie, sizeof(d.cookie), "bpfsbx_dash_%s", tag);
	}
	raise_fd_limit();
	fd = d.unix_sock ? listen_unix(o->socket_path, &err) : listen_tcp(o->port, &port, &err);
	if (fd < 0) {
		sbx_err("cannot listen: %s", err);
		goto out;
	}
	d.unix_bound = d.unix_sock;
	if (protect(&d, fd)) {
		close(fd);
		fd = -1;
		goto out;
	}

	/* the threads of MHD and of the feed take no signals: this one waits */
	sigemptyset(&set);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGHUP);
	pthread_sigmask(SIG_BLOCK, &set, NULL);
	signal(SIGPIPE, SIG_IGN);

	if (sbx_feed_start(d.feed, true)) {
		sbx_err("cannot start the feed: %s", strerror(errno));
		goto out;
	}
	d.mhd = MHD_start_daemon(MHD_USE_EPOLL_INTERNAL_THREAD | MHD_ALLOW_SUSPEND_RESUME |
				 MHD_USE_ERROR_LOG, 0, NULL, NULL, handle, &d,
				 MHD_OPTION_EXTERNAL_LOGGER, mhd_log, NULL,
				 MHD_OPTION_LISTEN_SOCKET, fd,
				 MHD_OPTION_CONNECTION_LIMIT, (unsigned int)SBX_DASH_CONN_MAX,
				 MHD_OPTION_CONNECTION_TIMEOUT, (unsigned int)SBX_DASH_IDLE_S,
				 MHD_OPTION_NOTIFY_COMPLETED, completed, NULL,
				 MHD_OPTION_END);
	if (!d.mhd) {
		sbx_err("cannot start the HTTP server");
		goto out;
	}
	fd = -1;	/* MHD's now */

	if (d.unix_sock) {
		listen_on = sbx_asprintf("unix:%s", o->socket_path);
		url = sbx_asprintf("http://localhost:PORT/?token=%s", d.token);
	} else {
		listen_on = sbx_asprintf("127.0.0.1:%d", port);
		url = sbx_asprintf("http://127.0.0.1:%d/?token=%s", port, d.token);
	}
	tfile = o->token_file ? sbx_strdup(o->token_file) : default_token_file();
	if (!tfile || write_token_file(tfile, url, d.token, listen_on)) {
		sbx_err("cannot write the token file %s", tfile ? tfile : "(no HOME)");
		free(tfile);
		tfile = NULL;
		goto out;
	}
	if (d.unix_sock) {
		printf("bpfsbx dashboard: listening on the unix socket %s\n"
		       "  through an SSH tunnel: ssh -L 8080:%s HOST, then open\n"
		       "  http://localhost:8080/?token=%s\n", o->socket_path, o->socket_path,
		       d.token);
	} else {
		printf("bpfsbx dashboard: open this URL (it carries the token):\n  %s\n", url);
	}
	printf("  token file: %s\n  %s\n", tfile, d.protect_note);
	fflush(stdout);

	for (;;) {
		if (sigwait(&set, &sig) == 0 && (sig == SIGINT || sig == SIGTERM || sig == SIGHUP))
			break;
	}
	status = SBX_EXIT_OK;
out:
	pthread_mutex_lock(&d.wlock);
	d.stopping = true;
	if (d.workers)
		sbx_info("waiting for %u decision(s) in progress", d.workers);
	while (d.workers)
		pthread_cond_wait(&d.wcond, &d.wlock);
	pthread_mutex_unlock(&d.wlock);
	sbx_feed_stop(d.feed);
	if (d.mhd)
		MHD_stop_daemon(d.mhd);
	if (fd >= 0)
		close(fd);
	if (d.unix_bound)
		unlink(o->socket_path);
	if (tfile)
		unlink(tfile);
	sbx_feed_free(d.feed);
	free(tfile);
	free(url);
	free(listen_on);
	free(err);
	free(d.user);
	free(d.protect_note);
	pthread_cond_destroy(&d.wcond);
	pthread_mutex_destroy(&d.wlock);
	return status;
}
