/* SPDX-License-Identifier: GPL-2.0 */
/* util.h - small helpers shared by the subcommands. */
#ifndef SBX_UTIL_H
#define SBX_UTIL_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

/* Messages to stderr, prefixed "bpfsbx: " (or the daemon's log). */
void sbx_err(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void sbx_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void sbx_info(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void sbx_set_log_prefix(const char *prefix);	/* e.g. "bpfsbx daemon" */
void sbx_set_log_timestamps(bool on);

/* malloc'd printf; aborts on OOM (a daemon that cannot allocate 100 bytes
 * cannot do anything useful, and must not continue half-done) */
char *sbx_asprintf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
char *sbx_strdup(const char *s);
void *sbx_calloc(size_t n, size_t size);

/* RFC 3339 UTC with milliseconds: 2026-11-30T10:15:03.123Z */
void sbx_rfc3339(char *buf, size_t len, const struct timespec *ts);
void sbx_rfc3339_now(char *buf, size_t len);
/* CLOCK_BOOTTIME ns (BPF's bpf_ktime_get_boot_ns) to wall-clock time */
struct timespec sbx_boot_to_real(uint64_t boot_ns);
uint64_t sbx_boot_ns(void);

/* Whole file (up to max bytes) into a NUL-terminated buffer. */
int sbx_read_file(const char *path, size_t max, char **out, size_t *len);
/* Write a file atomically: tmp in the same dir, fsync, rename, fsync dir. */
int sbx_write_file_atomic(const char *path, const void *buf, size_t len, int mode);
int sbx_mkdir_p(const char *path, int mode);

/* Parse a decimal integer in [min, max]; false on anything else. */
bool sbx_parse_long(const char *s, long min, long max, long *out);

/* "a.yaml" -> "/cwd/a.yaml" (no symlink resolution); malloc'd */
char *sbx_abspath(const char *path);

#endif
