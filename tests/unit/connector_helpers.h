/* SPDX-License-Identifier: GPL-2.0 */
/* Helpers for the connector tests: a scratch project with a policy, and
 * build/bpfsbx-san run as a child over pipes. */
#ifndef SBX_TEST_CONNECTOR_HELPERS_H
#define SBX_TEST_CONNECTOR_HELPERS_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

struct tc_env {
	char *tmp;		/* scratch root */
	char *home;		/* fake $HOME: tmp/home */
	char *project;		/* tmp/home/proj, with .sandbox/policy.yaml */
};

/* The test policy: agent-default plus `extra` (YAML appended; may be NULL). */
void tc_setup(struct tc_env *e, const char *extra);
void tc_teardown(struct tc_env *e);

char *tc_path(const char *a, const char *b);		/* a/b, malloc'd */
void tc_write(const char *path, const char *text);	/* mkdir -p of the dir too */
char *tc_read(const char *path, size_t *len);		/* NULL if missing */

/* build/bpfsbx-san next to the test binary; NULL (skip) when not built. */
const char *tc_bin(void);

struct tc_child {
	pid_t pid;
	int in, out, err;
	char *obuf, *ebuf;
	size_t olen, elen, opos;
};

/* argv[0] is replaced by tc_bin(). env: "K=V" strings added to ours. */
int tc_spawn(struct tc_child *c, char *const argv[], const char *const env[]);
void tc_send(struct tc_child *c, const char *text);
void tc_close_in(struct tc_child *c);
/* Next line of stdout (without "\n"), or NULL after timeout_ms / EOF. */
char *tc_line(struct tc_child *c, int timeout_ms);
/* Close stdin, collect the rest, reap. Returns the exit status (or 128+sig,
 * or -1 on timeout, after which the child is killed). */
int tc_finish(struct tc_child *c, int timeout_ms);
void tc_child_free(struct tc_child *c);

/* One-shot: run with input, collect stdout/stderr. */
int tc_run(char *const argv[], const char *const env[], const char *input, size_t len,
	   char **out, char **err);

/* Wait for the next pending request in project (up to timeout_ms) and
 * approve (running a command) or deny it. Returns its id or NULL. */
char *tc_decide_next(const char *project, bool approve, const char *note, int timeout_ms);

#endif
