// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "lib/clock.h"

int64_t sbx_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

uint64_t sbx_boot_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_BOOTTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

struct timespec sbx_boot_to_real(uint64_t boot_ns)
{
	struct timespec real, out;
	uint64_t now_boot = sbx_boot_ns(), real_ns;

	clock_gettime(CLOCK_REALTIME, &real);
	real_ns = (uint64_t)real.tv_sec * 1000000000ull + real.tv_nsec;
	if (boot_ns <= now_boot)
		real_ns -= now_boot - boot_ns;
	out.tv_sec = real_ns / 1000000000ull;
	out.tv_nsec = real_ns % 1000000000ull;
	return out;
}

void sbx_rfc3339(char *buf, size_t len, const struct timespec *ts, int ms_digits)
{
	struct tm tm;

	gmtime_r(&ts->tv_sec, &tm);
	if (ms_digits)
		snprintf(buf, len, "%04d-%02d-%02dT%02d:%02d:%02d.%03ldZ", tm.tm_year + 1900,
			 tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec,
			 ts->tv_nsec / 1000000);
	else
		snprintf(buf, len, "%04d-%02d-%02dT%02d:%02d:%02dZ", tm.tm_year + 1900,
			 tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec);
}

void sbx_rfc3339_now(char *buf, size_t len)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	sbx_rfc3339(buf, len, &ts, 3);
}

char *sbx_time_rfc3339(time_t t)
{
	struct timespec ts = { .tv_sec = t };
	char buf[SBX_RFC3339_MAX];

	sbx_rfc3339(buf, sizeof(buf), &ts, 0);
	return strdup(buf);
}

static int digits(const char *s, int n, int *out)
{
	int v = 0;

	for (int i = 0; i < n; i++) {
		if (s[i] < '0' || s[i] > '9')
			return -1;
		v = v * 10 + (s[i] - '0');
	}
	*out = v;
	return 0;
}

int sbx_time_parse(const char *s, time_t *t)
{
	int Y, M, D, h, m, sec, oh = 0, om = 0, sign = 0;
	struct tm tm = { 0 };
	const char *p;

	if (!s || strlen(s) < 20)
		return -EINVAL;
	if (digits(s, 4, &Y) || s[4] != '-' || digits(s + 5, 2, &M) || s[7] != '-' ||
	    digits(s + 8, 2, &D) || (s[10] != 'T' && s[10] != 't') ||
	    digits(s + 11, 2, &h) || s[13] != ':' || digits(s + 14, 2, &m) ||
	    s[16] != ':' || digits(s + 17, 2, &sec))
		return -EINVAL;
	if (M < 1 || M > 12 || D < 1 || D > 31 || h > 23 || m > 59 || sec > 60)
		return -EINVAL;
	p = s + 19;
	if (*p == '.') {
		p++;
		if (*p < '0' || *p > '9')
			return -EINVAL;
		while (*p >= '0' && *p <= '9')
			p++;
	}
	if (*p == 'Z' || *p == 'z') {
		p++;
	} else if (*p == '+' || *p == '-') {
		sign = *p == '+' ? 1 : -1;
		if (digits(p + 1, 2, &oh) || p[3] != ':' || digits(p + 4, 2, &om) ||
		    oh > 23 || om > 59)
			return -EINVAL;
		p += 6;
	} else {
		return -EINVAL;
	}
	if (*p)
		return -EINVAL;
	tm.tm_year = Y - 1900;
	tm.tm_mon = M - 1;
	tm.tm_mday = D;
	tm.tm_hour = h;
	tm.tm_min = m;
	tm.tm_sec = sec;
	*t = timegm(&tm) - sign * (oh * 3600 + om * 60);
	return 0;
}
