/* SPDX-License-Identifier: GPL-2.0 */
/*
 * claude_json.h - ~/.claude.json's keys that start programs (mcpServers,
 * hooks, permissions) are put back at session end; see claude_json.c.
 */
#ifndef SBX_CLAUDE_JSON_H
#define SBX_CLAUDE_JSON_H

#include <jansson.h>
#include "user/daemon/state.h"

/* at session start: a copy of the user's ~/.claude.json (root only) */
void sbx_claude_json_snapshot(const struct sbx_session_rt *s);
/* at session end: the guarded keys back as they were; audit, and the
 * session's version kept in .sandbox/claude-json/ */
void sbx_claude_json_check(struct sbx_session_rt *s);
/* every daemon tick while the session runs: the same, when the file changed
 * since the last look; the copy from the session's start is kept */
void sbx_claude_json_watch(struct sbx_session_rt *s);
/* the comparison itself, for the unit tests: old's guarded keys into cur;
 * *what: the changed key names, *prop: the session's values. Returns how
 * many changed. */
int sbx_claude_json_restore(const struct sbx_session_rt *s, json_t *cur, const json_t *old,
			    json_t **what, json_t **prop);

#endif
