// SPDX-License-Identifier: GPL-2.0
/*
 * unload.c - `bpfsbx unload [--force]`: remove every pin, on purpose.
 * With a daemon up, the daemon does it (and exits); otherwise this
 * process does. Nothing loaded is success: the state asked for. Live sessions are refused unless --force, which kills
 * them first: nothing is ever left running unconfined.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "user/cmd/cmd.h"
#include "user/control/control_client.h"
#include "user/daemon/kernel.h"
#include "user/daemon/loop.h"
#include "lib/alloc.h"
#include "lib/clock.h"
#include "lib/fileio.h"
#include "lib/log.h"
#include "lib/text.h"
#include "lib/json.h"

/* Session cgroups that still hold processes, with no daemon to ask. */
static int live_session_cgroups(bool kill_them)
{
	char *root = NULL, *err = NULL, *base;
	struct dirent *de;
	int live = 0;
	DIR *dir;

	if (sbx_cgroup_root(&root, &err)) {
		free(err);
		return 0;
	}
	base = sbx_asprintf("%s/" SBX_CGROUP_DIR_NAME, root);
	dir = opendir(base);
	while (dir && (de = readdir(dir))) {
		char *ev, *buf = NULL;

		if (de->d_name[0] == '.' || de->d_type != DT_DIR)
			continue;
		ev = sbx_asprintf("%s/%s/cgroup.events", base, de->d_name);
		if (sbx_read_file(ev, 4096, &buf, NULL) == 0 && strstr(buf, "populated 1")) {
			live++;
			if (kill_them) {
				char *k = sbx_asprintf("%s/%s/cgroup.kill", base, de->d_name);
				int fd = open(k, O_WRONLY | O_CLOEXEC);

				if (fd >= 0) {
					if (write(fd, "1", 1) != 1)
						sbx_warn("killing %s: %s", de->d_name, strerror(errno));
					close(fd);
				}
				free(k);
			}
		}
		free(buf);
		free(ev);
	}
	if (dir)
		closedir(dir);
	free(base);
	free(root);
	return live;
}

static const struct sbx_opt unload_opts[] = {
	{ "force", 'f', 0, 0, NULL, NULL, "kill the live sessions first", NULL },
	{ 0 }
};

static int cmd_unload(int argc, char **argv)
{
	bool force = false;
	char *err = NULL;
	json_t *req, *r = NULL;
	int c, live;

	while ((c = sbx_getopt(argc, argv, unload_opts, NULL)) != -1) {
		switch (c) {
		case 'f':
			force = true;
			break;
		case 'h':
			printf("usage: bpfsbx unload [--force]\n\n"
			       "Detach the programs and remove every pin under " SBX_PIN_DIR ". Refuses\n"
			       "while sessions live.\n\n"
			       "  --force     kill the live sessions first\n"
			       "  -h, --help  this help\n");
			return SBX_EXIT_OK;
		default:
			fprintf(stderr, "usage: bpfsbx unload [--force]\n");
			return SBX_EXIT_USAGE;
		}
	}
	if (optind != argc) {
		sbx_err("unload: unexpected argument '%s'", argv[optind]);
		return SBX_EXIT_USAGE;
	}
	if (geteuid() != 0) {
		sbx_err("unload: only root can unload bpfsbx");
		return SBX_EXIT_FAIL;
	}
	if (sbx_daemon_running(NULL)) {
		req = json_pack("{s:s,s:b}", "op", "unload", "force", force);
		if (sbx_ctl_call(req, &r, &err)) {
			sbx_err("unload: %s", err);
			free(err);
			json_decref(req);
			return SBX_EXIT_FAIL;
		}
		json_decref(req);
		if (!json_is_true(json_object_get(r, "ok"))) {
			sbx_err("unload: %s", sbx_json_str(r, "error"));
			json_decref(r);
			return SBX_EXIT_FAIL;
		}
		json_decref(r);
		printf("bpfsbx unloaded\n");
		return SBX_EXIT_OK;
	}
	/* like systemctl stop: the state asked for is already there */
	if (!sbx_kernel_pinned() && access(SBX_PIN_DIR, F_OK) < 0 && errno == ENOENT &&
	    !live_session_cgroups(false)) {
		printf("bpfsbx: nothing loaded (no pins under " SBX_PIN_DIR ")\n");
		return SBX_EXIT_OK;
	}
	live = live_session_cgroups(false);
	if (live && !force) {
		sbx_err("unload: %d live session(s); stop them first or use --force (which kills "
			"them)", live);
		return SBX_EXIT_FAIL;
	}
	if (live) {
		live_session_cgroups(true);
		usleep(200000);
	}
	if (sbx_kernel_unload(&err)) {
		sbx_err("unload: %s", err);
		free(err);
		return SBX_EXIT_FAIL;
	}
	printf("bpfsbx unloaded\n");
	return SBX_EXIT_OK;
}

SBX_COMMAND(unload, "unload", "[--force]", "remove bpfsbx from the kernel (root)", cmd_unload,
	    unload_opts);
