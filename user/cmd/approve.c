// SPDX-License-Identifier: GPL-2.0
/*
 * bpfsbx approve ID [--scope once|session|always] [--dir DIR] [--note TEXT]
 *                   [--cmd-timeout SECONDS] [--yes]
 * bpfsbx approve ID --rule [--dry-run] [--yes]
 *
 * On a terminal, the full request (every line of a command, escaped) and
 * the user a command would run as are printed first and the person
 * confirms; --yes skips the question. A command approved on a terminal
 * runs there, as the person; without one, as the project's owner.
 *
 * Claim a pending request and approve it, without a terminal UI. A
 * request of kind command is run here (see queue/command.c) and its output
 * written to escalations/out/ID.txt. Exit 0 when decided; 1 when the id
 * is unknown, already decided or taken by another approver; 2 on usage.
 * deny.c shares the work through sbx_cli_decide().
 *
 * --rule widens the answer into a rule of the project's policy
 * (queue/propose.h): the rule, what it allows and keeps refused, and the
 * waiting requests it answers are shown first, and confirmed as above.
 */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "lib/project.h"
#include "queue/propose.h"
#include "queue/queue.h"
#include "user/cmd/cmd.h"
#include "user/cmd/watch_render.h"
#include "lib/json.h"

int sbx_cli_decide(int argc, char **argv, bool approve);

static void usage(FILE *out, bool approve)
{
	sbx_cmd_help(out, sbx_cmd_find(approve ? "approve" : "deny"));
}

static bool parse_seconds(const char *s, int *out)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || end == s || *end || v < 1 || v > 7 * 24 * 3600)
		return false;
	*out = (int)v;
	return true;
}

static void print_run(void *arg, const struct sbx_request *req)
{
	const char *user = arg;
	struct watch_text t;

	watch_text_build(&t, req, 0);
	printf("running as %s:\n", user ? user : "?");
	for (size_t i = 0; i < t.n; i++)
		printf("  %s\n", t.lines[i]);
	watch_text_free(&t);
	fflush(stdout);
}

/* The pending request id, decoded as it is read */
static bool read_pending(struct sbx_queue *q, const char *id, struct sbx_request *req)
{
	return sbx_request_read(q, SBX_QDIR_PENDING, id, req, NULL) == 0;
}

/* The fields, each line after its label, and the warning if anything was escaped */
static void print_fields(const struct sbx_render *r)
{
	char *warn;

	for (size_t i = 0; i < r->n; i++) {
		const char *p = r->f[i].text, *nl;

		printf("  %-11s", r->f[i].label);
		for (;; p = nl + 1) {
			nl = strchr(p, '\n');
			printf("%.*s\n", nl ? (int)(nl - p) : (int)strlen(p), p);
			if (!nl)
				break;
			printf("  %-11s", "");
		}
	}
	warn = sbx_render_warning(&r->c);
	if (warn)
		printf("  %s\n", warn);
	free(warn);
}

/* Everything the approval covers, escaped; then y/N from the terminal. */
static bool confirm(struct sbx_queue *q, const char *id, enum sbx_scope scope, const char *user)
{
	struct sbx_request req;
	struct sbx_render r;
	char line[64];
	bool yes;

	if (!read_pending(q, id, &req))
		return true;	/* resolve() says why it cannot be approved */
	/* the rule of queue/render.h, as watch and the dashboard show it */
	sbx_render_request(&req, NULL, &r);
	printf("request %s (%s)\n", id, req.kind_name ?: "?");
	print_fields(&r);
	sbx_render_free(&r);
	if (is_command(&req))
		printf("  runs as: %s, here, in %s\n", user ? user : "?",
		       req.cwd ?: sbx_queue_project(q));
	printf("Approve %s (%s)? [y/N] ", id, sbx_scope_name(scope));
	fflush(stdout);
	yes = fgets(line, sizeof(line), stdin) && (line[0] == 'y' || line[0] == 'Y');
	sbx_request_release(&req);
	return yes;
}

const struct sbx_opt sbx_approve_opts[] = {
	{ "scope", 's', 's', 0, "once|session|always", "once",
	  "once: this object, briefly or for one use; session: until the session ends; always: "
	  "also later sessions (remembered.yaml)", NULL },
	{ "dir", 'C', 'C', 'd', "DIR", "the current directory",
	  "the project whose queue holds ID", NULL },
	{ "note", 'n', 'n', 0, "TEXT", NULL, "a note for the agent and the audit log", NULL },
	{ "cmd-timeout", 't', 't', 0, "SECONDS", "600",
	  "how long an approved command (run here, as you) may run", NULL },
	{ "yes", 'y', 'y', 0, NULL, NULL,
	  "do not show the request and ask first (on a terminal)", NULL },
	{ "rule", 'r', 'r', 0, NULL, NULL,
	  "widen it into a rule of .sandbox/policy.yaml (the tool's directory, the host), "
	  "shown with what it allows first, and approve every waiting request it answers "
	  "for its session", NULL },
	{ "dry-run", 'N', 'N', 0, NULL, NULL,
	  "with --rule: show the rule and what it allows, write and decide nothing", NULL },
	{ 0 }
};

/* --rule: the proposal shown, confirmed, written, and its requests approved */
static int decide_rule(struct sbx_queue *q, const char *id, struct sbx_resolve_opts *o,
		       bool yes, bool dry, bool tty)
{
	struct sbx_proposal p;
	struct sbx_render r = { 0 };
	struct sbx_request req;
	char *err = NULL, line[64];
	size_t decided;

	if (sbx_queue_propose(q, id, &p, &err)) {
		fprintf(stderr, "bpfsbx approve: %s\n", err ? err : "no rule to offer");
		free(err);
		return SBX_EXIT_FAIL;
	}
	if (read_pending(q, id, &req)) {
		sbx_render_request(&req, NULL, &r);
		sbx_request_release(&req);
	}
	sbx_render_proposal(&p, &r);
	printf("request %s, widened into a rule\n", id);
	print_fields(&r);
	sbx_render_free(&r);
	if (dry) {
		sbx_proposal_free(&p);
		return SBX_EXIT_OK;
	}
	if (tty && !yes) {
		printf("Write this rule and approve %zu request%s? [y/N] ", p.ncovers,
		       p.ncovers == 1 ? "" : "s");
		fflush(stdout);
		if (!fgets(line, sizeof(line), stdin) || (line[0] != 'y' && line[0] != 'Y')) {
			printf("nothing written; %s is still pending\n", id);
			sbx_proposal_free(&p);
			return SBX_EXIT_FAIL;
		}
	}
	if (sbx_queue_adopt(q, &p, o, &decided, NULL, &err)) {
		fprintf(stderr, "bpfsbx approve: %s\n", err ? err : "the rule was not written");
		free(err);
		sbx_proposal_free(&p);
		return SBX_EXIT_FAIL;
	}
	printf("rule written to %s; approved %zu of the %zu waiting request%s it answers "
	       "(session)\n", p.file, decided, p.ncovers, p.ncovers == 1 ? "" : "s");
	sbx_proposal_free(&p);
	return SBX_EXIT_OK;
}

const struct sbx_opt sbx_deny_opts[] = {
	{ "dir", 'C', 'C', 'd', "DIR", "the current directory",
	  "the project whose queue holds ID", NULL },
	{ "note", 'n', 'n', 0, "TEXT", NULL, "a note for the agent and the audit log", NULL },
	{ "yes", 'y', 'y', 0, NULL, NULL,
	  "do not show the request and ask first (on a terminal)", NULL },
	{ 0 }
};

int sbx_cli_decide(int argc, char **argv, bool approve)
{
	const char *me = approve ? "approve" : "deny";
	struct sbx_resolve_opts o = { .approve = approve, .scope = SBX_SCOPE_ONCE };
	const char *dir = NULL, *id, *typed;
	char *project = NULL, *full = NULL;
	struct sbx_queue *q;
	json_t *done = NULL;
	char *err = NULL, *user = NULL;
	bool yes = false, rule = false, dry = false, scoped = false;
	bool tty = isatty(STDIN_FILENO) && isatty(STDOUT_FILENO);
	int c, rc;

	opterr = 0;
	optind = 1;
	while ((c = sbx_getopt(argc, argv, approve ? sbx_approve_opts : sbx_deny_opts, NULL)) != -1) {
		switch (c) {
		case 'y':
			yes = true;
			break;
		case 'r':
		case 'N':
			if (!approve) {
				fprintf(stderr, "bpfsbx deny: unknown option '%s'\n", argv[optind - 1]);
				return SBX_EXIT_USAGE;
			}
			*(c == 'r' ? &rule : &dry) = true;
			break;
		case 's':
			scoped = true;
			if (!approve || sbx_scope_parse(optarg) < 0) {
				fprintf(stderr, approve ?
					"bpfsbx %s: --scope must be once, session or always\n" :
					"bpfsbx %s: deny takes no --scope\n", me);
				return SBX_EXIT_USAGE;
			}
			o.scope = (enum sbx_scope)sbx_scope_parse(optarg);
			break;
		case 'C':
			dir = optarg;
			break;
		case 'n':
			o.note = optarg;
			break;
		case 't':
			if (!approve || !parse_seconds(optarg, &o.cmd_timeout_s)) {
				fprintf(stderr, "bpfsbx %s: --cmd-timeout takes a number of seconds\n", me);
				return SBX_EXIT_USAGE;
			}
			break;
		case 'h':
			usage(stdout, approve);
			return SBX_EXIT_OK;
		default:
			fprintf(stderr, "bpfsbx %s: unknown option '%s'\n", me, argv[optind - 1]);
			usage(stderr, approve);
			return SBX_EXIT_USAGE;
		}
	}
	if (argc - optind != 1) {
		fprintf(stderr, "bpfsbx %s: %s\n", me,
			argc == optind ? "which request? (an ID from bpfsbx watch)" :
					 "one request ID at a time");
		usage(stderr, approve);
		return SBX_EXIT_USAGE;
	}
	if (dry && !rule) {
		fprintf(stderr, "bpfsbx %s: --dry-run goes with --rule\n", me);
		return SBX_EXIT_USAGE;
	}
	if (rule && scoped) {
		fprintf(stderr, "bpfsbx %s: --rule approves for the session and writes the rule for "
			"later ones: no --scope\n", me);
		return SBX_EXIT_USAGE;
	}
	typed = argv[optind];
	if (!sbx_id_valid(typed) && strspn(typed, "0123456789abcdefTZ.-") != strlen(typed)) {
		fprintf(stderr, "bpfsbx %s: '%s' is not a request id "
			"(they look like 20261130T101503.123456Z-4242-1a2b3c4d)\n", me, typed);
		return SBX_EXIT_USAGE;
	}
	if (sbx_project_resolve(dir, &project, &err) < 0) {
		fprintf(stderr, "bpfsbx %s: %s\n", me, err ? err : "no project");
		free(err);
		return SBX_EXIT_FAIL;
	}
	q = sbx_queue_open(project, 0, (uid_t)-1, (gid_t)-1, &err);
	free(project);
	if (!q) {
		fprintf(stderr, "bpfsbx %s: %s\n", me, err ? err : "cannot open the queue");
		free(err);
		return SBX_EXIT_FAIL;
	}
	/* a unique start of an id will do, as git takes a short hash */
	{
		size_t which;

		rc = sbx_queue_find_id(&q, 1, typed, &full, &which, &err);
		if (rc) {
			fprintf(stderr, "bpfsbx %s: %s\n", me, err ? err : strerror(-rc));
			free(err);
			sbx_queue_close(q);
			return rc == -EINVAL ? SBX_EXIT_USAGE : SBX_EXIT_FAIL;
		}
		id = full;
	}
	o.on_run = print_run;
	if (rule) {
		rc = decide_rule(q, id, &o, yes, dry, tty);
		sbx_queue_close(q);
		free(full);
		return rc;
	}
	if (approve) {
		struct sbx_request req;
		uid_t uid;
		gid_t gid;

		o.interactive = tty;
		if (read_pending(q, id, &req) && is_command(&req) &&
		    sbx_queue_command_user(q, o.interactive, req.process.uid, &uid, &gid, &user,
					   &err)) {
			fprintf(stderr, "bpfsbx approve: %s: %s\n", id, err ? err : "?");
			free(err);
			sbx_request_release(&req);
			sbx_queue_close(q);
			free(full);
			return SBX_EXIT_FAIL;
		}
		sbx_request_release(&req);
		o.arg = user;
		if (tty && !yes && !confirm(q, id, o.scope, user)) {
			printf("not approved; %s is still pending\n", id);
			free(user);
			sbx_queue_close(q);
			free(full);
			return SBX_EXIT_FAIL;
		}
	}
	rc = sbx_queue_resolve(q, id, &o, &done, &err);
	free(user);
	if (rc) {
		fprintf(stderr, "bpfsbx %s: %s\n", me, err ? err : strerror(-rc));
		free(err);
		sbx_queue_close(q);
		free(full);
		return SBX_EXIT_FAIL;
	}
	if (approve) {
		const json_t *r = json_object_get(done, "result");

		printf("approved %s (%s)\n", id, sbx_scope_name(o.scope));
		if (r) {
			printf("command exited %lld%s%s; output in %s/.sandbox/escalations/%s\n",
			       (long long)json_integer_value(json_object_get(r, "exit_code")),
			       json_is_true(json_object_get(r, "timed_out")) ? " (timed out)" : "",
			       json_is_true(json_object_get(r, "truncated")) ?
					" (output cut at 1 MiB)" : "",
			       sbx_queue_project(q),
			       sbx_json_str(r, "output"));
		}
	} else {
		printf("denied %s\n", id);
	}
	json_decref(done);
	sbx_queue_close(q);
	free(full);
	return SBX_EXIT_OK;
}

static int cmd_approve(int argc, char **argv)
{
	return sbx_cli_decide(argc, argv, true);
}

SBX_COMMAND(approve, "approve", "ID [OPTIONS]",
	    "approve a pending request without the watch UI", cmd_approve,
	    sbx_approve_opts);
