// SPDX-License-Identifier: GPL-2.0
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include "lib/clock.h"
#include "lib/log.h"

static const char *log_prefix = "bpfsbx";
static bool log_ts;

void sbx_set_log_prefix(const char *prefix) { log_prefix = prefix; }
void sbx_set_log_timestamps(bool on) { log_ts = on; }
const char *sbx_log_prefix(void) { return log_prefix; }

/* One fprintf per line: stderr is unbuffered, and one call is one write,
 * so lines from two threads or processes do not interleave. */
static void vlog(const char *level, const char *fmt, va_list ap)
{
	char ts[40] = "", *msg = NULL;

	if (log_ts)
		sbx_rfc3339_now(ts, sizeof(ts));
	if (vasprintf(&msg, fmt, ap) < 0)
		msg = NULL;
	fprintf(stderr, "%s%s%s: %s%s\n", ts, log_ts ? " " : "", log_prefix, level,
		msg ? msg : fmt);
	free(msg);
}

void sbx_err(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vlog("", fmt, ap);
	va_end(ap);
}

void sbx_warn(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vlog("warning: ", fmt, ap);
	va_end(ap);
}

void sbx_info(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vlog("", fmt, ap);
	va_end(ap);
}
