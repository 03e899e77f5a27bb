// SPDX-License-Identifier: GPL-2.0
/*
 * bpfsbx approve ID [--scope once|session|always] [--dir DIR] [--note TEXT]
 *                   [--cmd-timeout SECONDS]
 *
 * Claim a pending request and approve it, without a terminal UI. A
 * request of kind command is run here (see queue/run.c) and its output
 * written to escalations/out/ID.txt. Exit 0 when decided; 1 when the id
 * is unknown, already decided or taken by another approver; 2 on usage.
 * deny.c shares the work through sbx_cli_decide().
 */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "queue/queue.h"
#include "user/cmd.h"

int sbx_cli_decide(int argc, char **argv, bool approve);

static void usage(FILE *out, bool approve)
{
	if (approve)
		fprintf(out,
			"usage: bpfsbx approve ID [--scope once|session|always] [--dir DIR]\n"
			"                         [--note TEXT] [--cmd-timeout SECONDS]\n"
			"  Claims the pending request ID in DIR (default: the current directory)\n"
			"  and approves it. once: this one object, briefly (%d s) or for one use;\n"
			"  session: until the agent's session ends; always: also every later\n"
			"  session (remembered.yaml). A request of kind command is run here,\n"
			"  outside the agent, and only with scope once (default limit %d s).\n",
			SBX_ONCE_TTL_S, SBX_CMD_TIMEOUT_S);
	else
		fprintf(out,
			"usage: bpfsbx deny ID [--dir DIR] [--note TEXT]\n"
			"  Claims the pending request ID in DIR (default: the current directory)\n"
			"  and denies it.\n");
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

static void print_run(void *arg, const json_t *req)
{
	const json_t *o = json_object_get(req, "object");

	printf("running: %s\n", json_string_value(json_object_get(o, "command")));
	fflush(stdout);
}

int sbx_cli_decide(int argc, char **argv, bool approve)
{
	static const struct option longopts[] = {
		{ "scope", required_argument, NULL, 's' },
		{ "dir", required_argument, NULL, 'C' },
		{ "note", required_argument, NULL, 'n' },
		{ "cmd-timeout", required_argument, NULL, 't' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *me = approve ? "approve" : "deny";
	struct sbx_resolve_opts o = { .approve = approve, .scope = SBX_SCOPE_ONCE };
	const char *dir = ".", *id;
	struct sbx_queue *q;
	json_t *done = NULL;
	char *err = NULL;
	int c, rc;

	opterr = 0;
	optind = 1;
	while ((c = getopt_long(argc, argv, "s:C:n:t:h", longopts, NULL)) != -1) {
		switch (c) {
		case 's':
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
	id = argv[optind];
	if (!sbx_id_valid(id)) {
		fprintf(stderr, "bpfsbx %s: '%s' is not a request id "
			"(they look like 20261130T101503.123456Z-4242-1a2b3c4d)\n", me, id);
		return SBX_EXIT_USAGE;
	}
	q = sbx_queue_open(dir, 0, (uid_t)-1, (gid_t)-1, &err);
	if (!q) {
		fprintf(stderr, "bpfsbx %s: %s\n", me, err ? err : "cannot open the queue");
		free(err);
		return SBX_EXIT_FAIL;
	}
	o.on_run = print_run;
	rc = sbx_queue_resolve(q, id, &o, &done, &err);
	if (rc) {
		fprintf(stderr, "bpfsbx %s: %s\n", me, err ? err : strerror(-rc));
		free(err);
		sbx_queue_close(q);
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
			       json_string_value(json_object_get(r, "output")));
		}
	} else {
		printf("denied %s\n", id);
	}
	json_decref(done);
	sbx_queue_close(q);
	return SBX_EXIT_OK;
}

static int cmd_approve(int argc, char **argv)
{
	return sbx_cli_decide(argc, argv, true);
}

SBX_COMMAND(approve, "approve", "ID [--scope once|session|always] [--dir DIR]",
	    "approve a pending request without the watch UI", cmd_approve);
