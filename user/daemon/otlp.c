// SPDX-License-Identifier: GPL-2.0
/*
 * otlp.c - every event also as an OpenTelemetry log record, POSTed as
 * OTLP/HTTP JSON (an ExportLogsServiceRequest to URL, usually a
 * collector's http://HOST:4318/v1/logs) with libcurl.
 *
 * Nothing is lost while the endpoint is down: each record is written to
 * the queue directory before the event handler returns, as one file
 * named by a sequence number, and one sender thread POSTs them oldest
 * first and removes each once the endpoint accepted it (2xx). So records
 * arrive in order, after an outage and across a daemon restart alike. A
 * failed POST is retried with a backoff from 0.2 to 5 s. A 4xx other
 * than 408 and 429 means the endpoint will never take that record: it is
 * moved to DIR/rejected/ and counted, and the queue moves on.
 *
 * The queue is bounded (--otlp-queue-max): once full, new records are
 * not queued, and each one is counted as lost (DIR/lost, kept across
 * restarts), which status and the metrics show. The files are written
 * without fsync: a daemon crash loses none of them, a machine crash may
 * lose the last few, and the event log keeps every event either way.
 *
 * Each record is its own request, because the resource (host, user,
 * project, session) is the session's: a collector groups by resource.
 *
 * libcurl is opened by the daemon when --otlp is given (lib/dynload.c),
 * not loaded by every bpfsbx.
 */
#include <curl/curl.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include "lib/json.h"
#include "lib/alloc.h"
#include "lib/dynload.h"
#include "lib/fileio.h"
#include "lib/log.h"
#include "user/daemon/otlp.h"

#define BACKOFF_MIN_MS 200
#define BACKOFF_MAX_MS 5000
#define POST_TIMEOUT_MS 5000
#define RECORD_MAX (1024 * 1024)

static const char *const libcurl_names[] = { "libcurl.so.4", "libcurl.so", NULL };
static struct sbx_dynlib libcurl = { .sonames = libcurl_names };

static struct {
	__typeof__(curl_global_init) *global_init;
	__typeof__(curl_easy_init) *init;
	__typeof__(curl_easy_setopt) *setopt;
	__typeof__(curl_easy_perform) *perform;
	__typeof__(curl_easy_getinfo) *getinfo;
	__typeof__(curl_easy_cleanup) *cleanup;
	__typeof__(curl_easy_strerror) *strerror;
	__typeof__(curl_slist_append) *slist_append;
	__typeof__(curl_slist_free_all) *slist_free_all;
} cu;

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cond = PTHREAD_COND_INITIALIZER;
static pthread_t sender;
static bool enabled, running, stopping, configured;
static char *url;
static int qdir = -1;
static uint64_t head, tail, max_queued;	/* files head..tail-1 are queued */
static uint64_t sent, lost, rejected, failures;

static bool load_curl(char **err)
{
#define SYM(f, n) (cu.f = sbx_dynsym(&libcurl, n))
	if (!SYM(global_init, "curl_global_init") || !SYM(init, "curl_easy_init") ||
	    !SYM(setopt, "curl_easy_setopt") || !SYM(perform, "curl_easy_perform") ||
	    !SYM(getinfo, "curl_easy_getinfo") || !SYM(cleanup, "curl_easy_cleanup") ||
	    !SYM(strerror, "curl_easy_strerror") || !SYM(slist_append, "curl_slist_append") ||
	    !SYM(slist_free_all, "curl_slist_free_all")) {
		*err = sbx_asprintf("--otlp: libcurl: %s (Debian package libcurl4)", libcurl.error);
		return false;
	}
#undef SYM
	return cu.global_init(CURL_GLOBAL_DEFAULT) == CURLE_OK ||
	       (*err = sbx_strdup("--otlp: curl_global_init failed"), false);
}

static void name_of(uint64_t seq, char *buf, size_t len)
{
	snprintf(buf, len, "%020llu.json", (unsigned long long)seq);
}

static void save_lost(void)
{
	char txt[32];

	snprintf(txt, sizeof(txt), "%llu\n", (unsigned long long)lost);
	sbx_write_atomic(qdir, "lost", txt, strlen(txt), SBX_W_REPLACE_NOSYNC, -1, -1);
}

/* The queue as an earlier run left it: its lowest and next numbers. */
static int scan(char **err)
{
	DIR *dir;
	struct dirent *de;
	bool any = false;
	char *txt = NULL;
	size_t len;
	int fd = dup(qdir);

	if (fd < 0 || !(dir = fdopendir(fd))) {
		if (fd >= 0)
			close(fd);
		*err = sbx_asprintf("--otlp-queue: %s", strerror(errno));
		return -errno;
	}
	while ((de = readdir(dir))) {
		char *end;
		unsigned long long seq = strtoull(de->d_name, &end, 10);

		if (end == de->d_name || strcmp(end, ".json"))
			continue;
		if (!any || seq < head)
			head = seq;
		if (!any || seq + 1 > tail)
			tail = seq + 1;
		any = true;
	}
	closedir(dir);
	if (!sbx_read_file_at(qdir, "lost", 64, &txt, &len, NULL)) {
		lost = strtoull(txt, NULL, 10);
		free(txt);
	}
	return 0;
}

static size_t discard(char *p, size_t size, size_t n, void *u)
{
	(void)p;
	(void)u;
	return size * n;
}

/* POST body: the HTTP status, or -1 when none came (down, timeout). */
static long post(CURL *c, struct curl_slist *hdr, const char *body, size_t len)
{
	long code = -1;
	CURLcode rc;

	cu.setopt(c, CURLOPT_URL, url);
	cu.setopt(c, CURLOPT_HTTPHEADER, hdr);
	cu.setopt(c, CURLOPT_POSTFIELDS, body);
	cu.setopt(c, CURLOPT_POSTFIELDSIZE, (long)len);
	cu.setopt(c, CURLOPT_TIMEOUT_MS, (long)POST_TIMEOUT_MS);
	cu.setopt(c, CURLOPT_NOSIGNAL, 1L);
	cu.setopt(c, CURLOPT_WRITEFUNCTION, discard);
	rc = cu.perform(c);
	if (rc == CURLE_OK)
		cu.getinfo(c, CURLINFO_RESPONSE_CODE, &code);
	return code;
}

/* Wait ms, or less when stopping; with the lock held. */
static void nap(int ms)
{
	struct timespec t;

	clock_gettime(CLOCK_REALTIME, &t);
	t.tv_sec += ms / 1000;
	t.tv_nsec += (long)(ms % 1000) * 1000000;
	if (t.tv_nsec >= 1000000000) {
		t.tv_sec++;
		t.tv_nsec -= 1000000000;
	}
	pthread_cond_timedwait(&cond, &lock, &t);
}

static void *send_loop(void *arg)
{
	CURL *c = cu.init();
	struct curl_slist *hdr = cu.slist_append(NULL, "Content-Type: application/json");
	int backoff = BACKOFF_MIN_MS;

	(void)arg;
	pthread_mutex_lock(&lock);
	while (c && hdr) {
		char name[32], *body = NULL;
		size_t len = 0;
		uint64_t seq;
		long code;

		while (!stopping && head == tail)
			nap(1000);
		if (stopping)
			break;
		seq = head;
		pthread_mutex_unlock(&lock);
		name_of(seq, name, sizeof(name));
		if (sbx_read_file_at(qdir, name, RECORD_MAX, &body, &len, NULL)) {
			/* gone or unreadable: nothing to send for this number */
			pthread_mutex_lock(&lock);
			head++;
			continue;
		}
		code = post(c, hdr, body, len);
		free(body);
		pthread_mutex_lock(&lock);
		if (code >= 200 && code < 300) {
			unlinkat(qdir, name, 0);
			head++;
			sent++;
			backoff = BACKOFF_MIN_MS;
		} else if (code >= 400 && code < 500 && code != 408 && code != 429) {
			char aside[48];

			snprintf(aside, sizeof(aside), "rejected/%s", name);
			mkdirat(qdir, "rejected", 0700);
			if (renameat(qdir, name, qdir, aside))
				unlinkat(qdir, name, 0);
			head++;
			rejected++;
		} else {
			failures++;
			nap(backoff);
			backoff = backoff * 2 > BACKOFF_MAX_MS ? BACKOFF_MAX_MS : backoff * 2;
		}
	}
	pthread_mutex_unlock(&lock);
	if (hdr)
		cu.slist_free_all(hdr);
	if (c)
		cu.cleanup(c);
	return NULL;
}

int sbx_otlp_configure(const char *u, const char *dir, long max, char **err)
{
	int rc;

	if (strncmp(u, "http://", 7) && strncmp(u, "https://", 8)) {
		*err = sbx_asprintf("--otlp %s: the endpoint is an http:// or https:// URL "
				    "(a collector's is http://HOST:4318/v1/logs)", u);
		return -EINVAL;
	}
	if (running) {
		*err = sbx_strdup("--otlp: given twice");
		return -EINVAL;
	}
	if (!load_curl(err))
		return -ENOENT;
	rc = sbx_mkdir_p(dir, 0700);
	if (rc) {
		*err = sbx_asprintf("--otlp-queue %s: %s", dir, strerror(-rc));
		return rc;
	}
	qdir = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (qdir < 0) {
		*err = sbx_asprintf("--otlp-queue %s: %s", dir, strerror(errno));
		return -errno;
	}
	rc = scan(err);
	if (rc)
		return rc;
	url = sbx_strdup(u);
	max_queued = (uint64_t)max;
	{
		/* the daemon takes its signals through a signalfd: none may
		 * land on the sender */
		sigset_t all, old;

		sigfillset(&all);
		pthread_sigmask(SIG_SETMASK, &all, &old);
		rc = pthread_create(&sender, NULL, send_loop, NULL);
		pthread_sigmask(SIG_SETMASK, &old, NULL);
	}
	if (rc) {
		*err = sbx_asprintf("--otlp: the sender thread: %s", strerror(rc));
		return -rc;
	}
	running = enabled = configured = true;
	return 0;
}

static json_t *attr(const char *key, json_t *value)
{
	return json_pack("{s:s,s:o}", "key", key, "value", value);
}

static void attr_str(json_t *a, const char *key, const char *v)
{
	if (v)
		json_array_append_new(a, attr(key, json_pack("{s:s}", "stringValue", v)));
}

/* OTLP/JSON writes 64-bit integers as strings (the proto3 JSON mapping) */
static void attr_int(json_t *a, const char *key, long long v)
{
	char n[24];

	if (v < 0)
		return;
	snprintf(n, sizeof(n), "%lld", v);
	json_array_append_new(a, attr(key, json_pack("{s:s}", "intValue", n)));
}

json_t *sbx_otlp_request(const struct sbx_evrec *r, const char *host)
{
	/* OpenTelemetry's SeverityNumber: INFO 9, INFO2 10, WARN 13 */
	static const struct { int num; const char *text; } sev[] = {
		[4] = { 13, "WARN" }, [5] = { 10, "INFO2" }, [6] = { 9, "INFO" },
	};
	int s = sbx_evrec_severity(r);
	char ts[24], now_ts[24], *msg = sbx_evrec_message(r);
	struct timespec now;
	json_t *res = json_array(), *at = json_array(), *rec;

	clock_gettime(CLOCK_REALTIME, &now);
	snprintf(ts, sizeof(ts), "%llu",
		 (unsigned long long)r->ts.tv_sec * 1000000000ull + (unsigned long long)r->ts.tv_nsec);
	snprintf(now_ts, sizeof(now_ts), "%llu",
		 (unsigned long long)now.tv_sec * 1000000000ull + (unsigned long long)now.tv_nsec);
	attr_str(res, "service.name", "bpfsbx");
	attr_str(res, "host.name", host);
	attr_str(res, "user.name", r->user);
	attr_str(res, "bpfsbx.project", r->project);
	attr_str(res, "bpfsbx.session", r->session);
	if (r->container) {
		/* OpenTelemetry's semantic conventions for containers and k8s */
		attr_str(res, "container.id", sbx_json_str(r->container, "id"));
		attr_str(res, "container.name", sbx_json_str(r->container, "name"));
		attr_str(res, "container.image.name", sbx_json_str(r->container, "image"));
		attr_str(res, "k8s.pod.name", sbx_json_str(r->container, "pod"));
		attr_str(res, "k8s.pod.uid", sbx_json_str(r->container, "pod_uid"));
		attr_str(res, "k8s.namespace.name", sbx_json_str(r->container, "namespace"));
		if (sbx_json_str(r->container, "pod"))
			attr_str(res, "k8s.container.name", sbx_json_str(r->container, "name"));
	}

	attr_str(at, "bpfsbx.event", r->kind);
	attr_str(at, "bpfsbx.verdict", r->verdict);
	attr_str(at, "bpfsbx.tier", r->tier);
	attr_str(at, "bpfsbx.operation", r->operation);
	attr_str(at, "bpfsbx.access", r->access);
	attr_str(at, "bpfsbx.object", r->object);
	if (r->rule.rule.present)
		attr_int(at, "bpfsbx.rule.id", r->rule.rule.id);
	attr_str(at, "bpfsbx.rule.pattern", r->rule.rule.pattern);
	attr_str(at, "bpfsbx.rule.reason", r->rule.rule.reason);
	attr_str(at, "bpfsbx.rule.source", r->rule.rule.source);
	attr_int(at, "process.pid", r->pid);
	attr_int(at, "bpfsbx.uid", r->uid);
	attr_str(at, "process.executable.path", r->exe);
	attr_str(at, "process.command", r->comm);
	attr_int(at, "bpfsbx.errno", r->err);
	if (r->repeats)
		attr_int(at, "bpfsbx.repeats", (long long)r->repeats);
	attr_str(at, "bpfsbx.name", r->name);
	attr_str(at, "bpfsbx.answer", r->answer);

	rec = json_pack("{s:s,s:s,s:i,s:s,s:{s:s},s:o}", "timeUnixNano", ts,
			"observedTimeUnixNano", now_ts, "severityNumber", sev[s].num,
			"severityText", sev[s].text, "body", "stringValue", msg ? msg : "",
			"attributes", at);
	free(msg);
	return json_pack("{s:[{s:{s:o},s:[{s:{s:s},s:[o]}]}]}", "resourceLogs", "resource",
			 "attributes", res, "scopeLogs", "scope", "name", "bpfsbx", "logRecords",
			 rec);
}

void sbx_otlp_event(const struct sbx_evrec *r)
{
	json_t *req;
	char *txt, name[32];
	uint64_t seq;
	bool full;

	if (!enabled)
		return;
	pthread_mutex_lock(&lock);
	full = tail - head >= max_queued;
	if (full) {
		lost++;
		save_lost();
	}
	seq = tail;
	pthread_mutex_unlock(&lock);
	if (full)
		return;
	req = sbx_otlp_request(r, sbx_evrec_host());
	txt = req ? json_dumps(req, JSON_COMPACT) : NULL;
	json_decref(req);
	name_of(seq, name, sizeof(name));
	if (!txt || sbx_write_atomic(qdir, name, txt, strlen(txt), SBX_W_REPLACE_NOSYNC, -1, -1)) {
		pthread_mutex_lock(&lock);
		lost++;
		save_lost();
		pthread_mutex_unlock(&lock);
		free(txt);
		return;
	}
	free(txt);
	pthread_mutex_lock(&lock);
	tail = seq + 1;
	pthread_cond_broadcast(&cond);
	pthread_mutex_unlock(&lock);
}

void sbx_otlp_stats(struct sbx_otlp_stats *st)
{
	pthread_mutex_lock(&lock);
	*st = (struct sbx_otlp_stats){
		.enabled = configured, .queued = tail - head, .sent = sent, .lost = lost,
		.rejected = rejected, .failures = failures,
	};
	pthread_mutex_unlock(&lock);
}

void sbx_otlp_stop(int wait_ms)
{
	if (!running)
		return;
	pthread_mutex_lock(&lock);
	for (int waited = 0; head != tail && waited < wait_ms; waited += 50)
		nap(50);
	stopping = true;
	pthread_cond_broadcast(&cond);
	pthread_mutex_unlock(&lock);
	pthread_join(sender, NULL);
	running = enabled = false;
}
