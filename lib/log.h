/* SPDX-License-Identifier: GPL-2.0 */
/* log.h - one-line messages to stderr, prefixed "bpfsbx: " (or the daemon's prefix). */
#ifndef SBX_LOG_H
#define SBX_LOG_H

#include <stdbool.h>

void sbx_err(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void sbx_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void sbx_info(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void sbx_set_log_prefix(const char *prefix);	/* e.g. "bpfsbx daemon" */
void sbx_set_log_timestamps(bool on);
/* The prefix in force, for messages printed by other means (getopt). */
const char *sbx_log_prefix(void);

#endif
