// SPDX-License-Identifier: GPL-2.0
/*
 * sinks.c - one event record, every sink. The JSON line is rendered once
 * and shared by the event log, the journal and the audit chain; syslog
 * and OTLP read the typed record itself. A sink that fails counts its
 * failure and never holds up the others: the event log line is written
 * first, whatever happens to the rest.
 */
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "lib/alloc.h"
#include "user/daemon/journal.h"
#include "user/daemon/metrics.h"
#include "user/daemon/otlp.h"
#include "user/daemon/sinks.h"
#include "user/daemon/syslog.h"

json_t *sbx_sinks_status(void)
{
	struct sbx_otlp_stats o;
	json_t *j;

	sbx_otlp_stats(&o);
	j = json_pack("{s:{s:I},s:{s:I,s:I}}", "journal", "failures",
		      (json_int_t)sbx_journal_failures(), "syslog", "sent",
		      (json_int_t)sbx_syslog_sent(), "failures", (json_int_t)sbx_syslog_failures());
	if (o.enabled)
		json_object_set_new(j, "otlp",
				    json_pack("{s:I,s:I,s:I,s:I,s:I}", "queued", (json_int_t)o.queued,
					      "sent", (json_int_t)o.sent, "lost", (json_int_t)o.lost,
					      "rejected", (json_int_t)o.rejected, "failures",
					      (json_int_t)o.failures));
	return j;
}

/* The session user's name; getpwuid may ask NSS over the network, so
 * the last answer is kept (a daemon serves few users). */
static const char *user_name(uid_t uid)
{
	static uid_t last = (uid_t)-1;
	static char name[64];
	struct passwd *pw;

	if (uid == last)
		return name;
	pw = getpwuid(uid);
	if (pw)
		snprintf(name, sizeof(name), "%s", pw->pw_name);
	else
		snprintf(name, sizeof(name), "%u", (unsigned)uid);
	last = uid;
	return name;
}

void sbx_sinks_emit(struct sbx_daemon *d, struct sbx_session_rt *s, const struct sbx_evrec *in)
{
	struct sbx_evrec r = *in;
	json_t *line;

	if (s && !r.user)
		r.user = user_name(s->uid);
	if (!r.tier)
		r.tier = sbx_tier_name(d->k.tier);
	line = sbx_evrec_json(&r);
	if (line) {
		sbx_journal_event(line);
		if (d->log) {
			char *txt = json_dumps(line, JSON_COMPACT);

			if (txt) {
				fprintf(d->log, "%s\n", txt);
				fflush(d->log);
				free(txt);
			}
		}
	}
	sbx_syslog_event(&r);
	sbx_otlp_event(&r);
	sbx_metrics_rule_hit(&r);
	if (s && line) {
		json_object_set_new(line, "event", json_string(r.kind));
		sbx_daemon_audit(s, line);
	}
	json_decref(line);
}
