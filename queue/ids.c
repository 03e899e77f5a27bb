// SPDX-License-Identifier: GPL-2.0
/*
 * ids.c - what the folder queue adds to lib/fileio: request ids, the
 * approver's name, error messages. The file primitives themselves (beneath
 * a directory, atomic, bounded) are in lib/fileio.c.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pwd.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <linux/openat2.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include "lib/fileio.h"
#include "queue/queue.h"

/* ---- ids ------------------------------------------------------------- */

/*
 * "YYYYMMDDTHHMMSS.uuuuuuZ-PID-RAND": the time part has a fixed width, so
 * string order is time order. Within one process the microseconds are
 * made strictly increasing; pid and 32 random bits separate processes.
 */
char *sbx_id_new(void)
{
	static uint64_t last_us;
	struct timespec ts;
	uint64_t us, prev;
	struct tm tm;
	time_t secs;
	char buf[SBX_ID_MAX + 1];

	clock_gettime(CLOCK_REALTIME, &ts);
	us = (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
	prev = __atomic_load_n(&last_us, __ATOMIC_RELAXED);
	do {
		if (us <= prev)
			us = prev + 1;
	} while (!__atomic_compare_exchange_n(&last_us, &prev, us, false,
					      __ATOMIC_RELAXED, __ATOMIC_RELAXED));
	secs = (time_t)(us / 1000000u);
	gmtime_r(&secs, &tm);
	snprintf(buf, sizeof(buf), "%04d%02d%02dT%02d%02d%02d.%06uZ-%d-%08x",
		 tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min,
		 tm.tm_sec, (unsigned)(us % 1000000u), (int)getpid(), sbx_rand32());
	return strdup(buf);
}

bool sbx_id_valid(const char *id)
{
	static const char shape[] = "DDDDDDDDTDDDDDD.DDDDDDZ-";
	size_t n, i;
	const char *p;

	if (!id)
		return false;
	n = strnlen(id, SBX_ID_MAX + 1);
	if (n > SBX_ID_MAX || n < sizeof(shape) - 1 + 3)
		return false;
	for (i = 0; i < sizeof(shape) - 1; i++) {
		if (shape[i] == 'D') {
			if (id[i] < '0' || id[i] > '9')
				return false;
		} else if (id[i] != shape[i]) {
			return false;
		}
	}
	p = id + i;
	/* pid: 1..10 digits */
	for (i = 0; p[i] >= '0' && p[i] <= '9'; i++)
		;
	if (i < 1 || i > 10 || p[i] != '-')
		return false;
	p += i + 1;
	/* random part: 8..32 lowercase hex digits */
	for (i = 0; (p[i] >= '0' && p[i] <= '9') || (p[i] >= 'a' && p[i] <= 'f'); i++)
		;
	return i >= 8 && i <= 32 && p[i] == 0;
}

const char *sbx_queue_user(void)
{
	static char name[64];
	struct passwd *pw;

	if (!name[0]) {
		pw = getpwuid(getuid());
		if (pw && pw->pw_name && pw->pw_name[0])
			snprintf(name, sizeof(name), "%s", pw->pw_name);
		else
			snprintf(name, sizeof(name), "uid %u", (unsigned)getuid());
	}
	return name;
}

void sbx_queue_set_err(char **err, const char *fmt, ...)
{
	va_list ap;

	if (!err)
		return;
	free(*err);
	*err = NULL;
	va_start(ap, fmt);
	if (vasprintf(err, fmt, ap) < 0)
		*err = NULL;
	va_end(ap);
}
