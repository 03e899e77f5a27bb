/* SPDX-License-Identifier: GPL-2.0 */
/* clock.h - the clocks the project reads, and time as people read it. */
#ifndef SBX_CLOCK_H
#define SBX_CLOCK_H

#include <stddef.h>
#include <stdint.h>
#include <time.h>

/* CLOCK_MONOTONIC in ms: for timeouts and deadlines within one process */
int64_t sbx_now_ms(void);
/* CLOCK_BOOTTIME in ns: BPF's bpf_ktime_get_boot_ns() */
uint64_t sbx_boot_ns(void);
/* a CLOCK_BOOTTIME instant as wall-clock time */
struct timespec sbx_boot_to_real(uint64_t boot_ns);

/*
 * RFC 3339, UTC: 2026-11-30T10:15:03.123Z with ms_digits 3, or
 * 2026-11-30T10:15:03Z with 0 (the queue's format, which sbx_time_parse
 * in queue/ reads back).
 */
#define SBX_RFC3339_MAX 64
void sbx_rfc3339(char *buf, size_t len, const struct timespec *ts, int ms_digits);
void sbx_rfc3339_now(char *buf, size_t len);	/* with milliseconds */
/* The same without milliseconds, malloc'd (NULL on no memory). */
char *sbx_time_rfc3339(time_t t);
/* The parser: also accepts fractional seconds and +HH:MM offsets. */
int sbx_time_parse(const char *s, time_t *t);

#endif
