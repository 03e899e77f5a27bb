// SPDX-License-Identifier: GPL-2.0
/*
 * oci_hook.c - `bpfsbx oci-hook [--project DIR] [STAGE]`: the OCI runtime
 * hook that makes a container a session (docs/CONTAINERS.md).
 *
 * runc, crun, podman and CRI-O run it at createRuntime with the
 * container's state on stdin, after they put the container's init into
 * its cgroup and before they let it run. It exits 0 only once the daemon
 * says the session's kernel entry exists; on any failure it exits 1,
 * and the runtime then destroys the container: a container that was to
 * be confined never runs unconfined.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "user/cmd/cmd.h"
#include "user/control/control_client.h"
#include "lib/json.h"
#include "lib/log.h"

#define STATE_MAX (1u << 20)	/* runtime-spec state: id, pid, bundle, annotations */
#define PROJECT_ANNOTATION "io.bpfsbx.project"

static const struct sbx_opt hook_opts[] = {
	{ "project", 'P', 'P', 'd', "DIR", NULL, "the project of containers that do not name "
	  "theirs in the annotation " PROJECT_ANNOTATION, NULL },
	{ 0 }
};

/* The state the runtime wrote on stdin; NULL with a message on error. */
static json_t *read_state(void)
{
	json_error_t je;
	json_t *st = json_loadf(stdin, JSON_REJECT_DUPLICATES, &je);

	if (!st) {
		sbx_err("oci-hook: stdin, line %d column %d: %s (the runtime gives the "
			"container's state there)", je.line, je.column, je.text);
		return NULL;
	}
	if (!json_is_object(st)) {
		sbx_err("oci-hook: stdin: the container's state is not a JSON object");
		json_decref(st);
		return NULL;
	}
	if ((size_t)je.position > STATE_MAX) {
		sbx_err("oci-hook: stdin: the container's state is over %u bytes", STATE_MAX);
		json_decref(st);
		return NULL;
	}
	return st;
}

static int adopt(json_t *state, const char *project_opt)
{
	const char *id = sbx_json_str(state, "id");
	const char *project = sbx_json_str(json_object_get(state, "annotations"),
					   PROJECT_ANNOTATION);
	json_t *req, *r = NULL;
	char *err = NULL;
	int rc;

	if (!project || !*project)
		project = project_opt;
	if (!project) {
		sbx_err("oci-hook: container %s: no project: set the annotation "
			PROJECT_ANNOTATION "=DIR or give the hook --project DIR",
			id ? id : "(no id)");
		return SBX_EXIT_FAIL;
	}
	req = json_pack("{s:s,s:O,s:s}", "op", "adopt", "state", state, "project", project);
	rc = sbx_ctl_call(req, &r, &err);
	json_decref(req);
	if (rc) {
		sbx_err("oci-hook: container %s: the bpfsbx daemon: %s, so the container is not "
			"started", id ? id : "(no id)", err ? err : "no reply");
		free(err);
		return SBX_EXIT_FAIL;
	}
	if (!json_is_true(json_object_get(r, "ok"))) {
		sbx_err("oci-hook: %s", sbx_json_str(r, "error") ? sbx_json_str(r, "error") : "?");
		json_decref(r);
		return SBX_EXIT_FAIL;
	}
	json_decref(r);
	return SBX_EXIT_OK;
}

static int cmd_oci_hook(int argc, char **argv)
{
	const char *project = NULL, *stage = "createRuntime";
	json_t *state;
	int c, rc;

	while ((c = sbx_getopt(argc, argv, hook_opts, "+")) != -1) {
		switch (c) {
		case 'P':
			project = optarg;
			break;
		case 'h':
			sbx_cmd_help(stdout, sbx_cmd_find("oci-hook"));
			return SBX_EXIT_OK;
		default:
			sbx_cmd_help(stderr, sbx_cmd_find("oci-hook"));
			return SBX_EXIT_USAGE;
		}
	}
	if (optind < argc)
		stage = argv[optind++];
	if (optind < argc) {
		sbx_err("oci-hook: unexpected argument '%s'", argv[optind]);
		return SBX_EXIT_USAGE;
	}
	/* a container's session ends when its cgroup empties (the daemon
	 * watches it), so there is nothing to do after it stops */
	if (!strcmp(stage, "poststop"))
		return SBX_EXIT_OK;
	if (strcmp(stage, "createRuntime") && strcmp(stage, "prestart")) {
		sbx_err("oci-hook: stage '%s': the hook adopts a container at createRuntime (or "
			"prestart), where its process is a host pid that has not run yet", stage);
		return SBX_EXIT_USAGE;
	}
	if (geteuid() != 0) {
		sbx_err("oci-hook: only root's container runtime can adopt a container");
		return SBX_EXIT_FAIL;
	}
	state = read_state();
	if (!state)
		return SBX_EXIT_FAIL;
	rc = adopt(state, project);
	json_decref(state);
	return rc;
}

SBX_COMMAND(oci_hook, "oci-hook", "[--project DIR] [STAGE]",
	    "the OCI runtime hook that makes a container a session", cmd_oci_hook, hook_opts);
