// SPDX-License-Identifier: GPL-2.0
/*
 * reload.c - `bpfsbx reload [SESSION] [--policy FILE] [--project DIR]`:
 * swap a running session's policy. The new policy is compiled and loaded
 * under a new id, then the session switches to it in one map update; a
 * policy that fails to compile or load leaves the old one in force.
 * Only the session's owner (or root), from outside every session, may do
 * it: an agent must never change its own rules.
 *
 * --shadow FILE switches nothing: it decides every access the session
 * recorded (its denies, asks and audits in the event log; a learning
 * session's would-be refusals) with the session's policy and with FILE,
 * as `policy diff` does (user/cmd/policy_suggest.c), and prints each
 * whose verdict would change, before anyone switches.
 */
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "user/cmd/cmd.h"
#include "user/cmd/policy_cli.h"
#include "user/daemon/state.h"
#include "user/control/control_client.h"
#include "lib/project.h"
#include "lib/shipped.h"
#include "lib/alloc.h"
#include "lib/clock.h"
#include "lib/fileio.h"
#include "lib/log.h"
#include "lib/text.h"
#include "lib/json.h"

static void usage(FILE *f)
{
	sbx_cmd_help(f, sbx_cmd_find("reload"));
}

/* The caller's one session in project (NULL: the one named *name), from
 * the daemon's status; its name, policy and project. */
static char *find_session(const char *project, const char *want, char **policy, char **proj)
{
	json_t *req = json_pack("{s:s}", "op", "status"), *r = NULL, *v, *found = NULL;
	char *err = NULL, *name = NULL;
	size_t i, n = 0;

	if (sbx_ctl_call(req, &r, &err)) {
		sbx_err("reload: %s", err);
		free(err);
		json_decref(req);
		return NULL;
	}
	json_decref(req);
	json_array_foreach(json_object_get(r, "sessions"), i, v) {
		const char *p = sbx_json_str(v, "project");

		if ((uid_t)json_integer_value(json_object_get(v, "uid")) != getuid() && getuid())
			continue;
		if (want ? strcmp(sbx_json_str(v, "name") ?: "", want) : !p || strcmp(p, project))
			continue;
		found = v;
		n++;
	}
	if (n == 1) {
		name = sbx_strdup(sbx_json_str(found, "name"));
		*policy = sbx_strdup(sbx_json_str(found, "policy"));
		*proj = sbx_strdup(sbx_json_str(found, "project"));
	} else if (n == 0 && want) {
		sbx_err("reload: no session of yours is named %s", want);
	} else if (n == 0) {
		sbx_err("reload: no session of yours has project %s", project);
	} else {
		sbx_err("reload: %zu sessions have project %s; name one (bpfsbx status lists them)",
			n, project);
	}
	json_decref(r);
	return name;
}

static const struct sbx_opt reload_opts[] = {
	{ "policy", 'p', 0, 'y', "FILE", "the session's policy file, read again",
	  "the new policy: a file, or a shipped policy's name", NULL },
	{ "project", 'P', 0, 'd', "DIR", "the nearest project above the current directory",
	  "without SESSION: the one session of yours whose project is DIR", NULL },
	{ "shadow", 's', 0, 'y', "FILE", NULL,
	  "switch nothing: print every access the session recorded whose verdict FILE would "
	  "change (policy diff over the daemon's event log)", NULL },
	{ "events", 'e', 0, 'f', "FILE", SBX_EVENT_LOG,
	  "with --shadow: the event log to read", NULL },
	{ 0 }
};

/* reload --shadow: the session's policy and FILE side by side (~ is the
 * home of the user its events carry: policy_events_home) */
static int shadow(const char *name, const char *cur, const char *next, const char *project,
		  const char *events)
{
	struct popts o = { .file = cur, .target = next, .project = project, .events = events,
			   .sessions = (const char *[]){ name }, .nsessions = 1,
			   .all_recorded = true, .no_resolve = true };

	printf("# reload --shadow: %s beside the policy of session %s (%s); nothing was "
	       "switched. Only what the session recorded is decided: what its policy allowed "
	       "without an event (no audit rule) is not in the log.\n", next, name, cur);
	fflush(stdout);
	return policy_diff(&o);
}

static int cmd_reload(int argc, char **argv)
{
	const char *policy_arg = NULL, *project_arg = NULL, *shadow_arg = NULL, *events = NULL;
	char project[PATH_MAX], *name = NULL, *policy = NULL, *err = NULL, *given = NULL;
	char *proj = NULL;
	json_t *req, *r = NULL, *v;
	size_t i;
	int c, rc = SBX_EXIT_FAIL;

	while ((c = sbx_getopt(argc, argv, reload_opts, NULL)) != -1) {
		switch (c) {
		case 'p':
			policy_arg = optarg;
			break;
		case 'P':
			project_arg = optarg;
			break;
		case 's':
			shadow_arg = optarg;
			break;
		case 'e':
			events = optarg;
			break;
		case 'h':
			usage(stdout);
			return SBX_EXIT_OK;
		default:
			usage(stderr);
			return SBX_EXIT_USAGE;
		}
	}
	if (argc - optind > 1) {
		sbx_err("reload: unexpected argument '%s'", argv[optind + 1]);
		return SBX_EXIT_USAGE;
	}
	if (shadow_arg && policy_arg) {
		sbx_err("reload: --shadow FILE is the candidate policy; give it without --policy");
		return SBX_EXIT_USAGE;
	}
	if (events && !shadow_arg) {
		sbx_err("reload: --events goes with --shadow");
		return SBX_EXIT_USAGE;
	}
	if (shadow_arg)
		policy_arg = shadow_arg;
	if (policy_arg && !(given = sbx_policy_arg(policy_arg))) {
		sbx_err("reload: policy file '%s' not found (nor a shipped policy of that name: "
			"agent-default, strict, audit-only)", policy_arg);
		return SBX_EXIT_FAIL;
	}
	if (optind < argc && shadow_arg) {
		name = find_session(NULL, argv[optind], &policy, &proj);
		if (!name) {
			free(given);
			return SBX_EXIT_FAIL;
		}
	} else if (optind < argc) {
		name = sbx_strdup(argv[optind]);
	} else {
		char *found = NULL;
		bool ok;

		/* a subdirectory reloads the project around it */
		if (!project_arg && sbx_project_resolve(NULL, &found, NULL) == 0 &&
		    strlen(found) < sizeof(project)) {
			strcpy(project, found);
			ok = true;
		} else {
			ok = realpath(project_arg ? project_arg : ".", project) != NULL;
		}
		free(found);
		if (!ok) {
			sbx_err("reload: project directory '%s' does not exist",
				project_arg ? project_arg : ".");
			free(given);
			return SBX_EXIT_FAIL;
		}
		name = find_session(project, NULL, &policy, &proj);
		if (!name) {
			free(given);
			return SBX_EXIT_FAIL;
		}
	}
	if (shadow_arg) {
		rc = shadow(name, policy, given, proj, events);
		free(name);
		free(policy);
		free(given);
		free(proj);
		return rc;
	}
	if (given) {
		free(policy);
		policy = given;
	}
	if (!policy) {
		sbx_err("reload: give the policy with --policy FILE");
		free(name);
		return SBX_EXIT_USAGE;
	}
	req = json_pack("{s:s,s:s,s:s}", "op", "reload", "session", name, "policy_path", policy);
	if (sbx_ctl_call(req, &r, &err)) {
		sbx_err("reload: %s", err);
		free(err);
		goto out;
	}
	json_array_foreach(json_object_get(r, "diagnostics"), i, v)
		fprintf(stderr, "%s\n", json_string_value(v));
	if (!json_is_true(json_object_get(r, "ok"))) {
		sbx_err("reload: %s", sbx_json_str(r, "error"));
		goto out;
	}
	printf("session %s now runs %s\n", name, policy);
	rc = SBX_EXIT_OK;
out:
	json_decref(req);
	json_decref(r);
	free(name);
	free(policy);
	free(proj);
	return rc;
}

SBX_COMMAND(reload, "reload", "[SESSION] [OPTIONS]", "swap a running session's policy",
	    cmd_reload, reload_opts);
