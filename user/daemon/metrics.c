// SPDX-License-Identifier: GPL-2.0
/*
 * metrics.c - counters in the Prometheus text format (version 0.0.4),
 * written to DIR/bpfsbx.prom for node_exporter's textfile collector
 * (`bpfsbx daemon --metrics-dir DIR`).
 *
 * The file is replaced by rename once a second, so node_exporter never
 * reads half a file; the temporary name does not end in .prom, which the
 * collector ignores. Mode 0644: node_exporter usually runs as its own
 * user. The kernel's counters are read from the stats map each time
 * (they are per-CPU sums and never go down while the pins live); the
 * approval latency histogram is the daemon's own and restarts at zero
 * with it, which Prometheus's rate() handles as a counter reset.
 */
#include <dirent.h>
#include <stddef.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "lib/alloc.h"
#include "lib/fileio.h"
#include "lib/log.h"
#include "user/daemon/evrec.h"
#include "user/daemon/journal.h"
#include "user/daemon/metrics.h"
#include "user/daemon/otlp.h"
#include "user/daemon/syslog.h"

#define METRICS_FILE "bpfsbx.prom"

/* seconds from a request's creation to the decision reaching the daemon:
 * people answer in seconds to minutes, and a deadline ends it by then */
static const double latency_le[SBX_LATENCY_BUCKETS] = { 1, 2, 5, 10, 30, 60, 120, 300, 900 };

static char *dir;
static struct sbx_latency latency;
static bool warned;

int sbx_metrics_init(const char *path, char **err)
{
	struct stat st;

	if (stat(path, &st)) {
		*err = sbx_asprintf("--metrics-dir %s: %s (create it first)", path, strerror(errno));
		return -errno;
	}
	if (!S_ISDIR(st.st_mode)) {
		*err = sbx_asprintf("--metrics-dir %s: not a directory", path);
		return -ENOTDIR;
	}
	free(dir);
	dir = sbx_strdup(path);
	return 0;
}

void sbx_latency_observe(struct sbx_latency *l, double seconds)
{
	if (seconds < 0)
		seconds = 0;
	for (int i = 0; i < SBX_LATENCY_BUCKETS; i++)
		if (seconds <= latency_le[i])
			l->bucket[i]++;
	l->count++;
	l->sum += seconds;
}

void sbx_metrics_approval(double seconds)
{
	sbx_latency_observe(&latency, seconds);
}

/* Rules are counted one series each up to this many; the rest share
 * rule="(other)", so that a policy of 10,000 rules cannot make the
 * textfile (and the fleet's Prometheus) grow without bound. */
#define RULE_SERIES_MAX 512

static struct sbx_rule_hits *hits;
static size_t n_hits;

const struct sbx_rule_hits *sbx_metrics_rule_hits(size_t *n)
{
	*n = n_hits;
	return hits;
}

void sbx_metrics_rule_hit(const struct sbx_evrec *r)
{
	const char *rule = r->rule.rule.pattern ? r->rule.rule.pattern :
			   r->rule.rule.name ? r->rule.rule.name : "default";
	const char *verdict = r->verdict ? r->verdict : "?";
	uint64_t n = r->repeats ? r->repeats : 1;
	size_t i;

	for (i = 0; i < n_hits; i++)
		if (!strcmp(hits[i].rule, rule) && !strcmp(hits[i].verdict, verdict))
			break;
	if (i == n_hits && n_hits >= RULE_SERIES_MAX) {
		rule = "(other)";
		for (i = 0; i < n_hits; i++)
			if (!strcmp(hits[i].rule, rule) && !strcmp(hits[i].verdict, verdict))
				break;
	}
	if (i == n_hits) {
		hits = sbx_realloc_array(hits, n_hits + 1, sizeof(*hits));
		hits[n_hits++] = (struct sbx_rule_hits){
			.rule = sbx_strdup(rule), .verdict = sbx_strdup(verdict),
		};
	}
	hits[i].n += n;
}

/* A label value in the text format: backslash, quote and newline escaped. */
static void label(FILE *f, const char *v)
{
	for (; v && *v; v++) {
		if (*v == '\\' || *v == '"')
			fputc('\\', f);
		if (*v == '\n')
			fputs("\\n", f);
		else
			fputc(*v, f);
	}
}

static void help(FILE *f, const char *name, const char *type, const char *text)
{
	fprintf(f, "# HELP bpfsbx_%s %s\n# TYPE bpfsbx_%s %s\n", name, text, name, type);
}

static void session_series(FILE *f, const struct sbx_metrics *m, const char *name,
			   const char *type, const char *text, size_t off)
{
	help(f, name, type, text);
	for (size_t i = 0; i < m->n_session; i++) {
		const struct sbx_metrics_session *s = &m->session[i];

		fprintf(f, "bpfsbx_%s{session=\"", name);
		label(f, s->name);
		fprintf(f, "\"} %llu\n",
			(unsigned long long)*(const uint64_t *)((const char *)s + off));
	}
}

static void counter(FILE *f, const char *name, const char *help, uint64_t v)
{
	fprintf(f, "# HELP bpfsbx_%s %s\n# TYPE bpfsbx_%s counter\nbpfsbx_%s %llu\n", name, help,
		name, name, (unsigned long long)v);
}

static void gauge(FILE *f, const char *name, const char *help, uint64_t v)
{
	fprintf(f, "# HELP bpfsbx_%s %s\n# TYPE bpfsbx_%s gauge\nbpfsbx_%s %llu\n", name, help,
		name, name, (unsigned long long)v);
}

char *sbx_metrics_render(const struct sbx_metrics *m)
{
	const uint64_t *st = m->stats;
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	if (!f)
		return NULL;
	counter(f, "checks_total", "Confined operations checked by the kernel.",
		st[SBX_STAT_CHECKS]);
	counter(f, "verdict_cache_hits_total",
		"File decisions answered by the kernel's verdict cache.", st[SBX_STAT_CACHE_HIT]);
	counter(f, "denials_total", "Operations denied.", st[SBX_STAT_DENY]);
	counter(f, "asks_total", "Operations denied and sent to a person (ask).",
		st[SBX_STAT_ASK]);
	counter(f, "audits_total", "Operations allowed and recorded (audit).", st[SBX_STAT_AUDIT]);
	counter(f, "grants_used_total", "Operations allowed by a person's grant.",
		st[SBX_STAT_GRANT_USED]);
	counter(f, "internal_errors_total", "Checks that failed internally and were denied.",
		st[SBX_STAT_ERRORS]);
	counter(f, "walks_truncated_total",
		"Parent directory walks that hit their limit (decided by the default).",
		st[SBX_STAT_WALK_TRUNC]);
	counter(f, "events_sent_total", "Events the kernel put in the ring buffer.",
		st[SBX_STAT_EVENTS]);
	counter(f, "events_received_total", "Events this daemon read from the ring buffer.",
		m->events_received);
	counter(f, "events_lost_total", "Events lost because the ring buffer was full.",
		st[SBX_STAT_EVENT_DROPS]);
	gauge(f, "sessions", "Live sessions.", m->sessions);
	gauge(f, "pending_requests", "Requests waiting for a person's decision.",
	      m->pending_requests);
	counter(f, "syslog_sent_total", "Events sent to the syslog target.", m->syslog_sent);
	counter(f, "syslog_failures_total", "Events the syslog target did not get.",
		m->syslog_failures);
	counter(f, "journal_failures_total", "Events the systemd journal did not take.",
		m->journal_failures);
	gauge(f, "otlp_queued", "Events on disk waiting for the OTLP endpoint.", m->otlp_queued);
	counter(f, "otlp_sent_total", "Events the OTLP endpoint accepted.", m->otlp_sent);
	counter(f, "otlp_lost_total", "Events not queued for OTLP because the queue was full.",
		m->otlp_lost);
	counter(f, "otlp_rejected_total", "Events the OTLP endpoint refused as malformed.",
		m->otlp_rejected);
	counter(f, "otlp_failures_total", "OTLP deliveries that failed and were retried.",
		m->otlp_failures);
	help(f, "session_info", "gauge", "A live session (1), with its project and user.");
	for (size_t i = 0; i < m->n_session; i++) {
		fputs("bpfsbx_session_info{session=\"", f);
		label(f, m->session[i].name);
		fputs("\",project=\"", f);
		label(f, m->session[i].project);
		fprintf(f, "\",uid=\"%u\"} 1\n", m->session[i].uid);
	}
	session_series(f, m, "session_rules", "gauge", "Rules of the session's policy.",
		       offsetof(struct sbx_metrics_session, rules));
	session_series(f, m, "session_grants", "gauge", "A person's grants the session holds.",
		       offsetof(struct sbx_metrics_session, grants));
	session_series(f, m, "session_learned_addresses", "gauge",
		       "Addresses the session's lookups put in the kernel.",
		       offsetof(struct sbx_metrics_session, learned));
	session_series(f, m, "session_dns_queries_total", "counter",
		       "DNS queries the session made.",
		       offsetof(struct sbx_metrics_session, dns_queries));
	session_series(f, m, "session_dns_denied_total", "counter",
		       "DNS queries of the session that were denied.",
		       offsetof(struct sbx_metrics_session, dns_denied));
	help(f, "rule_hits_total", "counter",
	     "Events a rule decided (deny, ask, audit), by rule pattern and verdict.");
	for (size_t i = 0; i < m->n_hits; i++) {
		fputs("bpfsbx_rule_hits_total{rule=\"", f);
		label(f, m->hits[i].rule);
		fputs("\",verdict=\"", f);
		label(f, m->hits[i].verdict);
		fprintf(f, "\"} %llu\n", (unsigned long long)m->hits[i].n);
	}
	fprintf(f, "# HELP bpfsbx_approval_latency_seconds Time from a request to a person's "
		   "decision.\n# TYPE bpfsbx_approval_latency_seconds histogram\n");
	for (int i = 0; i < SBX_LATENCY_BUCKETS; i++)
		fprintf(f, "bpfsbx_approval_latency_seconds_bucket{le=\"%g\"} %llu\n",
			latency_le[i], (unsigned long long)m->latency.bucket[i]);
	fprintf(f, "bpfsbx_approval_latency_seconds_bucket{le=\"+Inf\"} %llu\n"
		   "bpfsbx_approval_latency_seconds_sum %.3f\n"
		   "bpfsbx_approval_latency_seconds_count %llu\n",
		(unsigned long long)m->latency.count, m->latency.sum,
		(unsigned long long)m->latency.count);
	if (fclose(f)) {
		free(buf);
		return NULL;
	}
	return buf;
}

static uint64_t count_pending(struct sbx_queue *q)
{
	int n = q ? sbx_queue_count(q, SBX_QDIR_PENDING) : 0;

	return n > 0 ? (uint64_t)n : 0;
}

static int write_file(const char *text)
{
	char *tmp = sbx_asprintf("%s/.%s.%d", dir, METRICS_FILE, (int)getpid());
	char *dst = sbx_asprintf("%s/%s", dir, METRICS_FILE);
	int fd, rc = 0;

	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0644);
	if (fd < 0 || fchmod(fd, 0644) || sbx_write_all(fd, text, strlen(text)))
		rc = -errno ? -errno : -EIO;
	if (fd >= 0 && close(fd) && !rc)
		rc = -errno;
	if (!rc && rename(tmp, dst))
		rc = -errno;
	if (rc)
		unlink(tmp);
	free(tmp);
	free(dst);
	return rc;
}

void sbx_metrics_sinks(struct sbx_metrics *m)
{
	struct sbx_otlp_stats o;

	sbx_otlp_stats(&o);
	m->syslog_sent = sbx_syslog_sent();
	m->syslog_failures = sbx_syslog_failures();
	m->journal_failures = sbx_journal_failures();
	m->otlp_queued = o.queued;
	m->otlp_sent = o.sent;
	m->otlp_lost = o.lost;
	m->otlp_rejected = o.rejected;
	m->otlp_failures = o.failures;
}

void sbx_metrics_tick(struct sbx_daemon *d)
{
	struct sbx_metrics m = { .events_received = d->events_seen, .latency = latency };
	struct sbx_metrics_session *ms = NULL;
	char *text;
	int rc;

	if (!dir)
		return;
	sbx_kernel_stats(&d->k, m.stats);
	sbx_metrics_sinks(&m);
	m.hits = hits;
	m.n_hits = n_hits;
	for (struct sbx_session_rt *s = d->sessions; s; s = s->next) {
		bool seen = false;

		ms = sbx_realloc_array(ms, m.n_session + 1, sizeof(*ms));
		ms[m.n_session++] = (struct sbx_metrics_session){
			.name = s->name, .project = s->project, .uid = s->uid,
			.rules = s->rules ? s->rules->n : 0,
			.grants = s->n_grants + s->n_name_grants, .learned = s->n_learned,
			.dns_queries = s->dns.queries, .dns_denied = s->dns.denied,
		};
		m.session = ms;
		m.sessions++;
		/* sessions of one project share its queue: count it once */
		for (struct sbx_session_rt *o = d->sessions; o != s; o = o->next)
			if (o->project && s->project && !strcmp(o->project, s->project))
				seen = true;
		if (!seen && s->project)
			m.pending_requests += count_pending(s->queue);
	}
	text = sbx_metrics_render(&m);
	free(ms);
	rc = text ? write_file(text) : -ENOMEM;
	if (rc && !warned) {
		sbx_warn("metrics: writing %s/%s: %s", dir, METRICS_FILE, strerror(-rc));
		warned = true;
	} else if (!rc) {
		warned = false;
	}
	free(text);
}
