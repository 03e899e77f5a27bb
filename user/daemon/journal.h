/* SPDX-License-Identifier: GPL-2.0 */
/* journal.h - events to the systemd journal with SBX_* fields (journal.c). */
#ifndef SBX_JOURNAL_H
#define SBX_JOURNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/uio.h>
#include <jansson.h>

/* One event log line (events.c's JSON object) as one journal entry. */
void sbx_journal_event(json_t *line);
/* The entry's fields ("NAME=value", allocated; the caller frees each). */
size_t sbx_journal_fields(json_t *line, struct iovec *iov, size_t max);
void sbx_journal_enable(bool on);	/* daemon --no-journal */
unsigned long sbx_journal_failures(void);

#endif
