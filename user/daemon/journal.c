// SPDX-License-Identifier: GPL-2.0
/*
 * journal.c - every event line also goes to the systemd journal, one
 * entry per event with its fields as SBX_* journal fields, so that
 * journald forwarding, Vector or Fluent Bit ship them without parsing
 * a message text.
 *
 * The entry is built from the same JSON object as the event log line
 * (events.c calls sbx_journal_event() from the one place that writes
 * it), so the log and the journal cannot drift apart: key "operation"
 * becomes SBX_OPERATION, nested "rule": {"id", "reason"} becomes
 * SBX_RULE_ID and SBX_RULE_REASON, and SBX_RULE is the rule's pattern.
 *
 * Without a journald (no /run/systemd/journal/socket) sd_journal_sendv
 * fails with ENOENT: that is counted, never fatal, and the event log
 * still has the line. libsystemd is opened by the daemon at its first
 * event (lib/dynload.c), not loaded by every bpfsbx; without it the
 * journal is off with one warning, and the event log is unchanged.
 */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <systemd/sd-journal.h>
#include "lib/alloc.h"
#include "lib/dynload.h"
#include "lib/log.h"
#include "user/daemon/journal.h"
#include "lib/json.h"

static const char *const libsystemd_names[] = { "libsystemd.so.0", "libsystemd.so", NULL };
static struct sbx_dynlib libsystemd = { .sonames = libsystemd_names };

/* journalctl MESSAGE_ID=... selects bpfsbx's events among all entries */
#define SBX_JOURNAL_MESSAGE_ID "5f0e1d6bb2c94c8f9a61c3e0b7d4a215"
#define MAX_FIELDS 48

static bool enabled = true;
static unsigned long failures;

void sbx_journal_enable(bool on)
{
	enabled = on;
}

unsigned long sbx_journal_failures(void)
{
	return failures;
}

struct fields {
	struct iovec iov[MAX_FIELDS];
	size_t n;
};

static void add(struct fields *f, char *text)
{
	if (f->n < MAX_FIELDS)
		f->iov[f->n++] = (struct iovec){ .iov_base = text, .iov_len = strlen(text) };
	else
		free(text);
}

/* "SBX_" + prefix + key in upper case; anything but [A-Z0-9_] becomes '_' */
static char *field_name(const char *prefix, const char *key)
{
	char *n = sbx_asprintf("SBX_%s%s", prefix, key);

	for (char *p = n + 4; *p; p++)
		*p = isalnum((unsigned char)*p) ? (char)toupper((unsigned char)*p) : '_';
	return n;
}

static void add_value(struct fields *f, const char *name, json_t *v)
{
	char *text = NULL;

	if (json_is_string(v))
		text = sbx_asprintf("%s=%s", name, json_string_value(v));
	else if (json_is_integer(v))
		text = sbx_asprintf("%s=%lld", name, (long long)json_integer_value(v));
	else if (json_is_boolean(v))
		text = sbx_asprintf("%s=%d", name, json_is_true(v));
	else if (json_is_real(v))
		text = sbx_asprintf("%s=%g", name, json_real_value(v));
	else if (json_is_array(v)) {
		char *j = json_dumps(v, JSON_COMPACT);

		text = j ? sbx_asprintf("%s=%s", name, j) : NULL;
		free(j);
	}
	if (text)
		add(f, text);
}

static void add_object(struct fields *f, const char *prefix, json_t *obj)
{
	const char *k;
	json_t *v;

	json_object_foreach(obj, k, v) {
		char *name;

		if (json_is_null(v))
			continue;
		if (json_is_object(v)) {
			char *p = sbx_asprintf("%s%s_", prefix, k);

			if (!strcmp(k, "rule") && json_is_string(json_object_get(v, "pattern"))) {
				name = field_name(prefix, k);
				add_value(f, name, json_object_get(v, "pattern"));
				free(name);
			}
			add_object(f, p, v);
			free(p);
			continue;
		}
		name = field_name(prefix, k);
		add_value(f, name, v);
		free(name);
	}
}

static int priority_of(const char *verdict)
{
	if (!verdict)
		return 6;
	if (!strcmp(verdict, "deny"))
		return 4;	/* warning */
	if (!strcmp(verdict, "ask"))
		return 5;	/* notice */
	return 6;		/* info: audit */
}

size_t sbx_journal_fields(json_t *line, struct iovec *iov, size_t max)
{
	struct fields f = { .n = 0 };
	const char *verdict = sbx_json_str(line, "verdict");
	const char *op = sbx_json_str(line, "operation");
	const char *obj = sbx_json_str(line, "object");
	const char *sess = sbx_json_str(line, "session");
	json_t *rule = json_object_get(line, "rule");
	const char *reason = sbx_json_str(rule, "reason");
	json_t *rep = json_object_get(line, "repeats");

	if (json_is_integer(rep))
		add(&f, sbx_asprintf("MESSAGE=%s %s %s, repeated %lld more times (session %s)",
				     verdict ? verdict : "?", op ? op : "?", obj ? obj : "?",
				     (long long)json_integer_value(rep), sess ? sess : "none"));
	else
		add(&f, sbx_asprintf("MESSAGE=%s %s %s (session %s)%s%s", verdict ? verdict : "?",
				     op ? op : "?", obj ? obj : "?", sess ? sess : "none",
				     reason ? ": " : "", reason ? reason : ""));
	add(&f, sbx_asprintf("PRIORITY=%d", priority_of(verdict)));
	add(&f, sbx_strdup("SYSLOG_IDENTIFIER=bpfsbx"));
	add(&f, sbx_strdup("MESSAGE_ID=" SBX_JOURNAL_MESSAGE_ID));
	add_object(&f, "", line);
	if (f.n > max) {
		for (size_t i = max; i < f.n; i++)
			free(f.iov[i].iov_base);
		f.n = max;
	}
	memcpy(iov, f.iov, f.n * sizeof(*iov));
	return f.n;
}

void sbx_journal_event(json_t *line)
{
	static __typeof__(sd_journal_sendv) *sendv;
	struct iovec iov[MAX_FIELDS];
	size_t n;
	int rc;

	if (!enabled)
		return;
	if (!sendv && !(sendv = sbx_dynsym(&libsystemd, "sd_journal_sendv"))) {
		sbx_warn("journal: libsystemd: %s (events stay in the event log)", libsystemd.error);
		enabled = false;
		return;
	}
	n = sbx_journal_fields(line, iov, MAX_FIELDS);
	rc = sendv(iov, (int)n);
	if (rc < 0 && failures++ == 0 && rc != -ENOENT)
		sbx_warn("journal: %s (events stay in the event log)", strerror(-rc));
	for (size_t i = 0; i < n; i++)
		free(iov[i].iov_base);
}
