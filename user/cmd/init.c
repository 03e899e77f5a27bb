// SPDX-License-Identifier: GPL-2.0
/*
 * bpfsbx init [DIR] [--claude] [--mcp] [--codex] [--cursor] [--policy FILE] [--nested]
 *
 * Sets a project up for confined agents: DIR/.sandbox/policy.yaml (extends
 * agent-default), Claude Code hooks, the MCP server registration for
 * Claude Code (.mcp.json), Codex and Cursor. Without any of --claude,
 * --mcp, --codex, --cursor it does --claude --mcp.
 *
 * Every file it changes is first copied, byte for byte, to
 * .sandbox/init-backup/ and listed in manifest.json (with the fact that a
 * file did not exist), so that `bpfsbx uninstall` can put everything
 * back. All new contents are computed before anything is written: a file
 * that cannot be merged stops init with nothing changed. Running init
 * again changes nothing unless something is missing or out of date.
 */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include <jansson.h>
#include "user/cmd/cmd.h"
#include "user/connector/install.h"
#include "user/connector/conn_policy.h"
#include "user/daemon/kernel.h"
#include "user/daemon/loop.h"
#include "lib/alloc.h"
#include "lib/clock.h"
#include "lib/fileio.h"
#include "lib/log.h"
#include "lib/project.h"
#include "lib/sha256.h"
#include "lib/text.h"
#include "lib/json.h"

struct plan {
	enum sbx_cfg_kind kind;
	const char *rel;
	char *path;
	char *cur;		/* NULL: does not exist */
	size_t cur_len;
	mode_t mode;
	char *next;		/* new content; NULL: leave alone */
	size_t next_len;
};

static json_t *manifest_load(const char *dir, char **err)
{
	char *path = sbx_asprintf("%s/%s", dir, SBX_MANIFEST), *buf = NULL;
	json_error_t je;
	json_t *m;
	size_t len;
	int rc;

	rc = sbx_read_file(path, SBX_MAX_CONFIG, &buf, &len);
	if (rc == -ENOENT) {
		free(path);
		return json_pack("{s:i, s:[], s:[]}", "version", SBX_MANIFEST_VERSION,
				 "files", "dirs");
	}
	if (rc < 0) {
		*err = sbx_asprintf("%s: %s", path, strerror(-rc));
		free(path);
		return NULL;
	}
	m = json_loadb(buf, len, 0, &je);
	free(buf);
	if (!m || !json_is_array(json_object_get(m, "files")) ||
	    !json_is_array(json_object_get(m, "dirs")) ||
	    json_integer_value(json_object_get(m, "version")) != SBX_MANIFEST_VERSION) {
		*err = sbx_asprintf("%s: not a bpfsbx init manifest%s%s", path,
				    m ? "" : ": ", m ? "" : je.text);
		json_decref(m);
		m = NULL;
	}
	free(path);
	return m;
}

static json_t *manifest_entry(json_t *man, const char *rel)
{
	json_t *e;
	size_t i;

	json_array_foreach(json_object_get(man, "files"), i, e)
		if (!strcmp(sbx_json_str(e, "path") ?: "", rel))
			return e;
	return NULL;
}

/* mkdir -p below dir, recording the directories this created. */
static int make_dirs(const char *dir, const char *rel, json_t *man)
{
	char buf[PATH_MAX];
	const char *p = rel;

	while ((p = strchr(p, '/'))) {
		struct stat st;
		int n = snprintf(buf, sizeof(buf), "%s/%.*s", dir, (int)(p - rel), rel);

		if (n < 0 || (size_t)n >= sizeof(buf))
			return -ENAMETOOLONG;
		if (lstat(buf, &st) < 0) {
			if (mkdir(buf, 0755) < 0)
				return -errno;
			json_array_append_new(json_object_get(man, "dirs"),
					      json_stringn(rel, p - rel));
		} else if (!S_ISDIR(st.st_mode)) {
			return -ENOTDIR;
		}
		p++;
	}
	return 0;
}

static int read_cur(struct plan *pl, char **err)
{
	struct stat st;
	int rc;

	if (lstat(pl->path, &st) < 0) {
		if (errno == ENOENT)
			return 0;
		*err = sbx_asprintf("%s: %s", pl->path, strerror(errno));
		return -errno;
	}
	if (!S_ISREG(st.st_mode)) {
		*err = sbx_asprintf("%s: not a regular file (a symlink?); bpfsbx init does not "
				    "follow it (nothing was changed)", pl->path);
		return -EINVAL;
	}
	pl->mode = st.st_mode & 07777;
	rc = sbx_read_file(pl->path, SBX_MAX_CONFIG, &pl->cur, &pl->cur_len);
	if (rc < 0)
		*err = sbx_asprintf("%s: %s", pl->path, strerror(-rc));
	return rc;
}

static void usage(FILE *f)
{
	sbx_cmd_help(f, sbx_cmd_find("init"));
}

/* a git work tree (or a .gitignore already): then .gitignore gets .sandbox/ */
static bool in_git(const char *dir)
{
	struct stat st;
	char *g = sbx_asprintf("%s/.git", dir), *i = sbx_asprintf("%s/.gitignore", dir);
	bool r = stat(g, &st) == 0 || stat(i, &st) == 0;

	free(g);
	free(i);
	return r;
}

/* an executable NAME in a directory of $PATH */
static bool on_path(const char *name)
{
	const char *path = getenv("PATH");
	char *copy, *save = NULL;
	bool found = false;

	if (!path || !*path)
		return false;
	copy = sbx_strdup(path);
	for (char *d = strtok_r(copy, ":", &save); d && !found; d = strtok_r(NULL, ":", &save)) {
		char *p;
		struct stat st;

		if (d[0] != '/')	/* "." or "": relative to where the agent runs */
			continue;
		p = sbx_asprintf("%s/%s", d, name);
		found = stat(p, &st) == 0 && S_ISREG(st.st_mode) && access(p, X_OK) == 0;
		free(p);
	}
	free(copy);
	return found;
}

/* set up already (then nested or not was decided before) */
static bool has_sandbox_dir(const char *dir)
{
	struct stat st;
	char *s = sbx_asprintf("%s/.sandbox", dir);
	bool r = lstat(s, &st) == 0 && S_ISDIR(st.st_mode);

	free(s);
	return r;
}

static const struct sbx_opt init_opts[] = {
	{ "claude", 'c', 0, 0, NULL, NULL, "Claude Code hooks in DIR/.claude/settings.json", NULL },
	{ "mcp", 'm', 0, 0, NULL, NULL,
	  "the bpfsbx MCP server in DIR/.mcp.json (Claude Code)", NULL },
	{ "codex", 'x', 0, 0, NULL, NULL, "the MCP server in DIR/.codex/config.toml", NULL },
	{ "cursor", 'u', 0, 0, NULL, NULL, "the MCP server in DIR/.cursor/mcp.json", NULL },
	{ "policy", 'p', 0, 'y', "FILE", "the template",
	  "start DIR/.sandbox/policy.yaml from FILE", NULL },
	{ "nested", 'n', 0, 0, NULL, NULL,
	  "set DIR up even inside another project (an ancestor's .sandbox/)", NULL },
	{ 0 }
};

static int cmd_init(int argc, char **argv)
{
	bool claude = false, mcp = false, codex = false, cursor = false, nested = false;
	const char *policy_file = NULL, *dir_arg = ".";
	struct plan plans[6];
	size_t np = 0;
	char *dir = NULL, exe[PATH_MAX], *err = NULL, *policy_text = NULL;
	size_t policy_len = 0;
	json_t *man = NULL;
	char *man_before = NULL;
	int c, rc = SBX_EXIT_FAIL, changed = 0;
	ssize_t n;

	optind = 1;
	while ((c = sbx_getopt(argc, argv, init_opts, NULL)) != -1) {
		switch (c) {
		case 'c': claude = true; break;
		case 'm': mcp = true; break;
		case 'x': codex = true; break;
		case 'u': cursor = true; break;
		case 'p': policy_file = optarg; break;
		case 'n': nested = true; break;
		case 'h': usage(stdout); return 0;
		default: usage(stderr); return SBX_EXIT_USAGE;
		}
	}
	if (optind < argc)
		dir_arg = argv[optind++];
	if (optind < argc) {
		fprintf(stderr, "bpfsbx init: unexpected argument '%s'\n", argv[optind]);
		return SBX_EXIT_USAGE;
	}
	if (!claude && !mcp && !codex && !cursor)
		claude = mcp = true;
	memset(plans, 0, sizeof(plans));
	dir = realpath(dir_arg, NULL);
	if (!dir) {
		fprintf(stderr, "bpfsbx init: %s: %s\n", dir_arg, strerror(errno));
		return SBX_EXIT_FAIL;
	}
	{
		struct stat st;

		if (stat(dir, &st) == 0 && !S_ISDIR(st.st_mode)) {
			fprintf(stderr, "bpfsbx init: %s is not a directory (init sets up a project "
				"directory: bpfsbx init [DIR])\n", dir_arg);
			free(dir);
			return SBX_EXIT_FAIL;
		}
	}
	/* every command run below dir would act on the outer project until
	 * dir has its own .sandbox/: one project inside another is a choice */
	if (!nested && strcmp(dir, "/") && !has_sandbox_dir(dir)) {
		char *parent = sbx_strdup(dir), *outer = NULL;

		*strrchr(parent, '/') = 0;
		if (sbx_project_find(parent[0] ? parent : "/", &outer) == 0) {
			fprintf(stderr, "bpfsbx init: %s is inside the project %s (it has .sandbox/); "
				"commands run there act on it. To make %s a project of its own, "
				"run bpfsbx init --nested\n", dir, outer, dir);
			free(parent);
			free(outer);
			free(dir);
			return SBX_EXIT_FAIL;
		}
		free(parent);
	}
	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (n <= 0) {
		fprintf(stderr, "bpfsbx init: cannot find my own path: %s\n", strerror(errno));
		goto out;
	}
	exe[n] = 0;
	/* the hooks and .mcp.json are committed: they name bpfsbx as PATH
	 * finds it, not where this machine keeps it */
	if (on_path("bpfsbx"))
		snprintf(exe, sizeof(exe), "bpfsbx");
	else
		fprintf(stderr, "bpfsbx init: warning: bpfsbx is not on PATH, so the hooks and the "
			"MCP registration name %s, a path of this machine; install bpfsbx (make "
			"install) and run init again before committing them\n", exe);
	if (policy_file) {
		int r = sbx_read_file(policy_file, SBX_MAX_CONFIG, &policy_text, &policy_len);

		if (r < 0) {
			fprintf(stderr, "bpfsbx init: --policy %s: %s\n", policy_file, strerror(-r));
			goto out;
		}
	} else {
		policy_text = sbx_strdup(sbx_policy_template);
		policy_len = strlen(policy_text);
	}
	man = manifest_load(dir, &err);
	if (!man) {
		fprintf(stderr, "bpfsbx init: %s\n", err);
		goto out;
	}
	man_before = json_dumps(man, JSON_INDENT(2) | JSON_PRESERVE_ORDER);

	/* 1. plan: read and merge everything before writing anything */
	struct sbx_install in = { .exe = exe, .project = dir, .with_mcp = mcp };
	struct { bool on; enum sbx_cfg_kind k; const char *rel; } want[] = {
		{ true, SBX_CFG_POLICY, SBX_POLICY_FILE },
		{ claude, SBX_CFG_CLAUDE, ".claude/settings.json" },
		{ mcp, SBX_CFG_MCP_JSON, ".mcp.json" },
		{ codex, SBX_CFG_CODEX, ".codex/config.toml" },
		{ cursor, SBX_CFG_CURSOR, ".cursor/mcp.json" },
		/* the queue and the audit logs are not for commits */
		{ in_git(dir), SBX_CFG_GITIGNORE, ".gitignore" },
	};
	for (size_t k = 0; k < sizeof(want) / sizeof(want[0]); k++) {
		struct plan *pl = &plans[np];

		if (!want[k].on)
			continue;
		np++;
		pl->kind = want[k].k;
		pl->rel = want[k].rel;
		pl->path = sbx_asprintf("%s/%s", dir, pl->rel);
		pl->mode = 0644;
		if (read_cur(pl, &err) < 0)
			goto fail;
		if (pl->kind == SBX_CFG_POLICY) {
			if (!pl->cur) {
				pl->next = malloc(policy_len + 1);
				memcpy(pl->next, policy_text, policy_len + 1);
				pl->next_len = policy_len;
			} else if (policy_file && (pl->cur_len != policy_len ||
						   memcmp(pl->cur, policy_text, policy_len))) {
				err = sbx_asprintf("%s exists and differs from --policy %s; move it "
						   "away first (nothing was changed)", pl->path,
						   policy_file);
				goto fail;
			}
			continue;
		}
		if (sbx_install_merge(pl->kind, &in, pl->cur, pl->cur_len, &pl->next,
				      &pl->next_len, &err) < 0) {
			if (!err)
				err = sbx_asprintf("%s: out of memory", pl->rel);
			else {
				char *e2 = sbx_asprintf("%s/%s", dir, err);
				free(err);
				err = e2;
			}
			goto fail;
		}
		if (pl->cur && pl->cur_len == pl->next_len && !memcmp(pl->cur, pl->next, pl->cur_len)) {
			free(pl->next);
			pl->next = NULL;
		}
	}

	/* 2. back up and write */
	{
		char *bdir = sbx_asprintf("%s/%s", dir, SBX_BACKUP_DIR);
		int r = make_dirs(dir, SBX_BACKUP_DIR "/x", man);

		free(bdir);
		if (r < 0) {
			err = sbx_asprintf("%s/%s: %s", dir, SBX_BACKUP_DIR, strerror(-r));
			goto fail;
		}
	}
	for (size_t k = 0; k < np; k++) {
		struct plan *pl = &plans[k];
		json_t *e = manifest_entry(man, pl->rel);
		char sha[65];
		int r;

		if (!pl->next)
			continue;
		if (!e) {
			e = json_pack("{s:s, s:b}", "path", pl->rel, "existed", pl->cur != NULL);
			if (pl->cur) {
				char *bname = sbx_asprintf("%zu.orig",
							   json_array_size(json_object_get(man, "files")) + 1);
				char *bpath = sbx_asprintf("%s/%s/%s", dir, SBX_BACKUP_DIR, bname);

				sbx_sha256_hex(pl->cur, pl->cur_len, sha);
				r = sbx_write_file_atomic(bpath, pl->cur, pl->cur_len, 0600);
				if (r < 0) {
					err = sbx_asprintf("%s: %s", bpath, strerror(-r));
					free(bname);
					free(bpath);
					json_decref(e);
					goto fail;
				}
				json_object_set_new(e, "backup", json_string(bname));
				json_object_set_new(e, "mode", json_integer(pl->mode));
				json_object_set_new(e, "sha256_original", json_string(sha));
				free(bname);
				free(bpath);
			}
			json_array_append_new(json_object_get(man, "files"), e);
			/* the manifest must know about the backup before the file changes */
			char *mpath = sbx_asprintf("%s/%s", dir, SBX_MANIFEST);
			char *mtxt = json_dumps(man, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
			r = mtxt ? sbx_write_file_atomic(mpath, mtxt, strlen(mtxt), 0644) : -ENOMEM;
			free(mtxt);
			free(mpath);
			if (r < 0) {
				err = sbx_asprintf("%s: %s", SBX_MANIFEST, strerror(-r));
				goto fail;
			}
		}
		r = make_dirs(dir, pl->rel, man);
		if (r == 0)
			r = sbx_write_file_atomic(pl->path, pl->next, pl->next_len, pl->mode);
		if (r == 0 && chmod(pl->path, pl->mode) < 0)
			r = -errno;
		if (r < 0) {
			err = sbx_asprintf("%s: %s", pl->path, strerror(-r));
			goto fail;
		}
		sbx_sha256_hex(pl->next, pl->next_len, sha);
		json_object_set_new(e, "sha256_installed", json_string(sha));
		printf("%s %s\n", pl->cur ? "updated" : "created", pl->rel);
		changed++;
	}
	{
		char *mtxt = json_dumps(man, JSON_INDENT(2) | JSON_PRESERVE_ORDER);

		if (mtxt && (!man_before || strcmp(mtxt, man_before))) {
			char *mpath = sbx_asprintf("%s/%s", dir, SBX_MANIFEST);
			int r = sbx_write_file_atomic(mpath, mtxt, strlen(mtxt), 0644);

			free(mpath);
			if (r < 0) {
				free(mtxt);
				err = sbx_asprintf("%s: %s", SBX_MANIFEST, strerror(-r));
				goto fail;
			}
		}
		free(mtxt);
	}
	/* which mode the agent will get: said plainly, whatever it is */
	if (sbx_daemon_running(NULL))
		printf("Mode: kernel-enforced: the bpfsbx daemon is running; start the agent "
		       "with `bpfsbx run -- claude`\n");
	else if (sbx_bpf_lsm_active(NULL))
		printf("Mode: hooks only: commands are classified, nothing is enforced by the "
		       "kernel (no bpfsbx daemon is running; `sudo systemctl start bpfsbx`, "
		       "`bpfsbx doctor` says what this kernel needs)\n");
	else	/* a daemon could not start here: do not send the person to one */
		printf("Mode: hooks only: commands are classified, nothing is enforced by the "
		       "kernel (this kernel has no BPF-LSM, so no bpfsbx daemon can run here; "
		       "`bpfsbx doctor` says how to enable it)\n");
	/* Codex and Cursor have no hooks: only what goes through the MCP
	 * server is checked; their own shell and file tools are not */
	if ((codex || cursor) && !sbx_daemon_running(NULL))
		printf("%s%s%s: MCP only: the bpfsbx tools are offered to the agent, but nothing "
		       "stops its own shell, file and network tools; only `bpfsbx run` (a kernel "
		       "with BPF-LSM and the daemon) confines them\n", codex ? "Codex" : "",
		       codex && cursor ? " and " : "", cursor ? "Cursor" : "");
	else if (codex || cursor)
		printf("%s%s%s: no hooks: start the agent with `bpfsbx run -- AGENT` to confine "
		       "its own tools; the MCP server only offers the bpfsbx tools\n",
		       codex ? "Codex" : "", codex && cursor ? " and " : "", cursor ? "Cursor" : "");
	if (!changed)
		printf("bpfsbx init: %s is already set up; nothing changed\n", dir);
	else
		printf("bpfsbx init: %s is set up (originals kept in %s; `bpfsbx uninstall %s` "
		       "restores them)\n", dir, SBX_BACKUP_DIR, dir_arg);
	{
		struct sbx_conn_policy *cp = NULL;
		char *perr = NULL;

		if (sbx_conn_policy_load(dir, &cp, &perr) < 0)
			fprintf(stderr, "bpfsbx init: warning: %s\nThe hooks fail closed until the "
				"policy loads.\n", perr ? perr : "the policy does not load");
		free(perr);
		sbx_conn_policy_free(cp);
	}
	rc = 0;
	goto out;
fail:
	fprintf(stderr, "bpfsbx init: %s\n", err ? err : "failed");
out:
	for (size_t k = 0; k < np; k++) {
		free(plans[k].path);
		free(plans[k].cur);
		free(plans[k].next);
	}
	free(man_before);
	json_decref(man);
	free(policy_text);
	free(err);
	free(dir);
	return rc;
}

SBX_COMMAND(init, "init", "[DIR] [OPTIONS]",
	    "set a project up: .sandbox/, agent hooks and MCP registration", cmd_init,
	    init_opts);
