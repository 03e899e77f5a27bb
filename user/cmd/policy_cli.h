/* SPDX-License-Identifier: GPL-2.0 */
/*
 * policy_cli.h - what `bpfsbx policy`'s subcommands share: the parsed
 * options and loading a policy as a session start would (policy_cli.c);
 * suggest and diff live in policy_suggest.c, sign and verify in
 * policy_sign.c.
 */
#ifndef SBX_POLICY_CLI_H
#define SBX_POLICY_CLI_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include "policy/policy.h"
#include "policy/suggest.h"

/* The subcommand words dispatch by their .val: an index into policy_subs[]. */
enum policy_sub { PS_CHECK, PS_EXPLAIN, PS_COMPILE, PS_SUGGEST, PS_DIFF, PS_SIGN, PS_VERIFY };

struct popts {
	const char *file;	/* diff: OLD */
	const char *project;
	const char *home;
	const char *target;	/* diff: NEW */
	const char *paths_from;
	const char *events;
	const char **sessions;
	size_t nsessions;
	char **cmd;
	int ncmd;
	bool dump;
	bool no_resolve;
	bool learn;		/* --learn: as run --learn compiles it */
	/* diff (reload --shadow): every recorded access, the audits too,
	 * not only what was refused */
	bool all_recorded;
	uint32_t policy_id;
	const char *key;	/* sign: the private key */
	const char **files;	/* sign, verify: every FILE */
	size_t nfiles;
	char *found_project;	/* the project around the cwd, when not given */
	char *found_file;	/* its .sandbox/policy.yaml */
};

struct loaded {
	struct sbx_policy *p;
	struct sbx_compiled c;
	struct sbx_diags d;
	char *project;
	char *home;
};

/* L's project and home directories (--project, --home) and env pointing at them */
int policy_cli_env(const struct popts *o, struct loaded *L, struct sbx_policy_env *env);
/* Load and compile file; diagnostics are printed to diag_out. 0 on success. */
int policy_cli_load(const struct popts *o, const char *file, struct loaded *L, FILE *diag_out);
void policy_cli_free(struct loaded *L);

/* what an events file held: the refused accesses, with their strings */
struct recorded {
	struct sbx_seen *v;
	size_t n, cap;
	char **names;		/* sessions seen */
	size_t n_names;
	uint64_t events, refused, other;
	/* whose the wanted sessions' processes were: ~ in their policy is
	 * that user's home (policy_events_home) */
	long long uid;		/* -1: none seen */
	bool uid_mixed;
	size_t lines;		/* of the events file */
};

/*
 * The popts to load policies with for what r recorded: o itself, or, when
 * o names no --home and the events are one other user's, o with that
 * user's home (said on stderr): root suggesting for a user's session must
 * not read ~/.bashrc as /root/.bashrc. -1 (said) when the events are of
 * several users and no --home is given.
 */
int policy_events_home(const struct popts *o, const struct recorded *r, struct popts *out,
		       char **home);

/*
 * The denied and asked accesses of f (named path in errors) of the
 * sessions o names (every session without): 0, or -1 with the error
 * printed as path:line (a corrupt or cut line). r starts { .uid = -1 }.
 */
int policy_read_events(const struct popts *o, const char *path, FILE *f, struct recorded *r);
/* Every session o names has a line in r (events, or queue requests read
 * into it): 0, or -1 with the sessions there printed. */
int policy_sessions_seen(const struct popts *o, const char *path, const struct recorded *r);
void policy_recorded_free(struct recorded *r);

int policy_suggest(const struct popts *o);
int policy_diff(const struct popts *o);
/* sign and verify machine policy files (policy_sign.c) */
int policy_sign(const struct popts *o);
int policy_verify(const struct popts *o);

#endif
