/* SPDX-License-Identifier: GPL-2.0 */
/* Helpers for the queue and audit tests (tests/unit/queue_helpers.c): a
 * scratch queue, typical requests, and the CLI run as a child. */
#ifndef SBX_TEST_QUEUE_HELPERS_H
#define SBX_TEST_QUEUE_HELPERS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>
#include <jansson.h>

struct sbx_queue;

char *tq_dir(const char *name);			/* <tmp>/<name>, created; malloc'd */
struct sbx_queue *tq_open(const char *name);	/* a queue in tq_dir(name) */
json_t *tq_file_req(const char *path);		/* a file read request for path */
json_t *tq_cmd_req(const char *command, const char *cwd);	/* cwd may be NULL */
char *tq_submit(struct sbx_queue *q, json_t *req);	/* the id (malloc'd) or NULL */
/* a string of a done record's decision ("verdict", "scope", ...), or NULL */
const char *tq_decision(const json_t *done, const char *key);

/* entries of a directory fd whose names do (dot=1) or do not (0) start with '.' */
int tq_count(int dirfd, int dot);
bool tq_exists(int dirfd, const char *name);
int tq_write_raw(int dirfd, const char *name, const void *data, size_t len);
char *tq_read(int dirfd, const char *name);	/* contents of <dirfd>/<name> or NULL */
void tq_age(int dirfd, const char *name, time_t secs);	/* mtime secs into the past */
int64_t tq_ms(void);
char *tq_find(int dirfd, const char *sub);	/* first non-dot entry naming sub, or NULL */

/*
 * The sanitizer build of the CLI: $BPFSBX_SAN, else bpfsbx-san next to
 * this test binary; NULL when it was not built.
 */
const char *tq_bin(void);
/*
 * Run the CLI with argv (argv[0] ignored), in cwd (or NULL); stdin from
 * in (or /dev/null). Returns the exit status (128+sig if killed); *out
 * and *err get stdout and stderr (malloc'd).
 */
int tq_run(const char *cwd, char *const argv[], const char *in, char **out, char **err);

#endif
