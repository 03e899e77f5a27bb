// SPDX-License-Identifier: GPL-2.0
/*
 * bpfsbx uninstall [DIR]: undo `bpfsbx init` from its manifest.
 *
 * A file init changed and nobody touched since is restored byte for byte
 * from .sandbox/init-backup/ (with its mode); a file init created is
 * deleted. A file changed by someone after init is not overwritten: only
 * bpfsbx's entries are taken out of it, and that is reported (a policy
 * file edited since init is kept as it is). Directories init created are
 * removed when empty. The queue (.sandbox/escalations), the audit log
 * (.sandbox/audit) and remembered approvals are records and stay.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <dirent.h>
#include <sys/stat.h>
#include <jansson.h>
#include "user/cmd/cmd.h"
#include "user/connector/install.h"
#include "lib/alloc.h"
#include "lib/clock.h"
#include "lib/fileio.h"
#include "lib/log.h"
#include "lib/sha256.h"
#include "lib/text.h"
#include "lib/json.h"

static int kind_of(const char *rel, enum sbx_cfg_kind *k)
{
	static const struct { const char *rel; enum sbx_cfg_kind k; } t[] = {
		{ ".claude/settings.json", SBX_CFG_CLAUDE }, { ".mcp.json", SBX_CFG_MCP_JSON },
		{ ".cursor/mcp.json", SBX_CFG_CURSOR }, { ".codex/config.toml", SBX_CFG_CODEX },
		{ ".sandbox/policy.yaml", SBX_CFG_POLICY }, { ".gitignore", SBX_CFG_GITIGNORE },
	};

	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++)
		if (!strcmp(rel, t[i].rel)) {
			*k = t[i].k;
			return 0;
		}
	return -EINVAL;
}

/* rel must be one of ours: a manifest is data, not a list of paths to trust */
static bool safe_rel(const char *rel)
{
	enum sbx_cfg_kind k;

	return rel && kind_of(rel, &k) == 0;
}

static int restore_one(const char *dir, json_t *e, int *warnings)
{
	const char *rel = sbx_json_str(e, "path");
	const char *installed = sbx_json_str(e, "sha256_installed");
	bool existed = json_is_true(json_object_get(e, "existed"));
	char *path, *cur = NULL, sha[65] = "";
	size_t cur_len = 0;
	enum sbx_cfg_kind kind;
	int rc = 0, r;

	if (!safe_rel(rel) || kind_of(rel, &kind) < 0) {
		fprintf(stderr, "bpfsbx uninstall: manifest names an unexpected file '%s'; "
			"skipped\n", rel ? rel : "(none)");
		(*warnings)++;
		return 0;
	}
	path = sbx_asprintf("%s/%s", dir, rel);
	r = sbx_read_file(path, SBX_MAX_CONFIG, &cur, &cur_len);
	if (r < 0 && r != -ENOENT) {
		fprintf(stderr, "bpfsbx uninstall: %s: %s\n", path, strerror(-r));
		free(path);
		return r;
	}
	if (cur)
		sbx_sha256_hex(cur, cur_len, sha);
	bool untouched = !cur ? false : (installed && !strcmp(sha, installed));

	if (existed && (untouched || !cur)) {
		const char *bname = sbx_json_str(e, "backup");
		const char *orig = sbx_json_str(e, "sha256_original");
		json_int_t mode = json_integer_value(json_object_get(e, "mode"));
		char *bpath, *bbuf = NULL, bsha[65];
		size_t blen = 0;

		if (!bname || strchr(bname, '/') || !orig) {
			fprintf(stderr, "bpfsbx uninstall: manifest entry for %s has no usable "
				"backup; left as it is\n", rel);
			rc = -EINVAL;
			goto out;
		}
		bpath = sbx_asprintf("%s/%s/%s", dir, SBX_BACKUP_DIR, bname);
		r = sbx_read_file(bpath, SBX_MAX_CONFIG, &bbuf, &blen);
		if (r == 0) {
			sbx_sha256_hex(bbuf, blen, bsha);
			if (strcmp(bsha, orig))
				r = -EBADMSG;
		}
		if (r < 0) {
			fprintf(stderr, "bpfsbx uninstall: backup %s of %s: %s; %s left as it is\n",
				bpath, rel, r == -EBADMSG ? "does not match its checksum"
							  : strerror(-r), rel);
			free(bpath);
			free(bbuf);
			rc = r;
			goto out;
		}
		r = sbx_write_file_atomic(path, bbuf, blen, 0600);
		if (r == 0 && chmod(path, mode > 0 && mode <= 07777 ? (mode_t)mode : 0644) < 0)
			r = -errno;
		free(bpath);
		free(bbuf);
		if (r < 0) {
			fprintf(stderr, "bpfsbx uninstall: %s: %s\n", path, strerror(-r));
			rc = r;
			goto out;
		}
		printf("restored %s\n", rel);
		goto out;
	}
	if (!existed && (untouched || !cur)) {
		if (cur && unlink(path) < 0) {
			rc = -errno;
			fprintf(stderr, "bpfsbx uninstall: %s: %s\n", path, strerror(errno));
			goto out;
		}
		printf("removed %s\n", rel);
		goto out;
	}
	/* changed by someone since init: take out only what is ours */
	if (kind == SBX_CFG_POLICY) {
		printf("kept %s (edited since init)\n", rel);
		(*warnings)++;
		goto out;
	}
	{
		char *next = NULL, *err = NULL;
		size_t next_len = 0;
		bool empty = false;

		r = sbx_install_unmerge(kind, cur, cur_len, &next, &next_len, &empty, &err);
		if (r < 0) {
			fprintf(stderr, "bpfsbx uninstall: %s/%s changed since init and could not be "
				"cleaned: %s; left as it is\n", dir, rel, err ? err : strerror(-r));
			free(err);
			rc = r;
			goto out;
		}
		if (!existed && empty) {
			r = unlink(path) < 0 ? -errno : 0;
			if (r == 0)
				printf("removed %s (it held nothing but bpfsbx's entries)\n", rel);
		} else {
			struct stat st;
			mode_t m = stat(path, &st) == 0 ? st.st_mode & 07777 : 0644;

			r = sbx_write_file_atomic(path, next, next_len, m);
			if (r == 0)
				chmod(path, m);
			if (r == 0)
				printf("cleaned %s: it changed since init, so only bpfsbx's entries were "
				       "removed (not byte-identical to the original)\n", rel);
		}
		free(next);
		if (r < 0) {
			fprintf(stderr, "bpfsbx uninstall: %s: %s\n", path, strerror(-r));
			rc = r;
		}
		(*warnings)++;
	}
out:
	free(cur);
	free(path);
	return rc;
}

static bool dir_empty(const char *path)
{
	DIR *d = opendir(path);
	struct dirent *de;
	bool empty = true;

	if (!d)
		return false;
	while ((de = readdir(d)))
		if (strcmp(de->d_name, ".") && strcmp(de->d_name, ".."))
			empty = false;
	closedir(d);
	return empty;
}

static int rm_backup_dir(const char *dir)
{
	char *b = sbx_asprintf("%s/%s", dir, SBX_BACKUP_DIR);
	DIR *d = opendir(b);
	struct dirent *de;
	int rc = 0;

	if (d) {
		while ((de = readdir(d))) {
			char *p;

			if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
				continue;
			p = sbx_asprintf("%s/%s", b, de->d_name);
			if (unlink(p) < 0)
				rc = -errno;
			free(p);
		}
		closedir(d);
	}
	if (rc == 0 && rmdir(b) < 0)
		rc = -errno;
	free(b);
	return rc;
}

static int cmd_uninstall(int argc, char **argv)
{
	const char *dir_arg = ".";
	char *dir, *mpath, *buf = NULL;
	size_t len;
	json_t *man, *e, *dirs;
	json_error_t je;
	size_t i;
	int r, failures = 0, warnings = 0;

	if (argc > 1 && (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help"))) {
		printf("usage: bpfsbx uninstall [DIR]\nUndo `bpfsbx init`: restore the agent "
		       "configuration files it changed and remove what it created.\nThe queue "
		       "(.sandbox/escalations) and the audit log (.sandbox/audit) are kept.\n");
		return 0;
	}
	if (argc > 2) {
		fprintf(stderr, "usage: bpfsbx uninstall [DIR]\n");
		return SBX_EXIT_USAGE;
	}
	if (argc == 2)
		dir_arg = argv[1];
	dir = realpath(dir_arg, NULL);
	if (!dir) {
		fprintf(stderr, "bpfsbx uninstall: %s: %s\n", dir_arg, strerror(errno));
		return SBX_EXIT_FAIL;
	}
	mpath = sbx_asprintf("%s/%s", dir, SBX_MANIFEST);
	r = sbx_read_file(mpath, SBX_MAX_CONFIG, &buf, &len);
	if (r < 0) {
		if (r == -ENOENT)
			fprintf(stderr, "bpfsbx uninstall: %s was not set up by `bpfsbx init` (there is "
				"no %s); nothing to undo\n", dir, SBX_MANIFEST);
		else
			fprintf(stderr, "bpfsbx uninstall: %s: %s\n", mpath, strerror(-r));
		free(mpath);
		free(dir);
		return SBX_EXIT_FAIL;
	}
	man = json_loadb(buf, len, 0, &je);
	free(buf);
	if (!man || !json_is_array(json_object_get(man, "files")) ||
	    !json_is_array(json_object_get(man, "dirs")) ||
	    json_integer_value(json_object_get(man, "version")) != SBX_MANIFEST_VERSION) {
		fprintf(stderr, "bpfsbx uninstall: %s: not a bpfsbx init manifest%s%s; nothing "
			"was changed\n", mpath, man ? "" : ": ", man ? "" : je.text);
		json_decref(man);
		free(mpath);
		free(dir);
		return SBX_EXIT_FAIL;
	}
	free(mpath);
	json_array_foreach(json_object_get(man, "files"), i, e)
		if (restore_one(dir, e, &warnings) < 0)
			failures++;
	if (failures) {
		fprintf(stderr, "bpfsbx uninstall: %d file(s) could not be restored; the backups "
			"stay in %s/%s\n", failures, dir, SBX_BACKUP_DIR);
		json_decref(man);
		free(dir);
		return SBX_EXIT_FAIL;
	}
	r = rm_backup_dir(dir);
	if (r < 0)
		fprintf(stderr, "bpfsbx uninstall: %s/%s: %s\n", dir, SBX_BACKUP_DIR, strerror(-r));
	/* directories init created, deepest first, if nothing else lives there */
	dirs = json_object_get(man, "dirs");
	for (i = json_array_size(dirs); i-- > 0;) {
		const char *rel = json_string_value(json_array_get(dirs, i));
		char *p;

		if (!rel || strstr(rel, "..") || rel[0] == '/' || !strcmp(rel, SBX_BACKUP_DIR))
			continue;
		p = sbx_asprintf("%s/%s", dir, rel);
		if (dir_empty(p) && rmdir(p) == 0)
			printf("removed %s/\n", rel);
		free(p);
	}
	{
		char *sb = sbx_asprintf("%s/.sandbox", dir);
		struct stat st;

		if (stat(sb, &st) == 0) {
			if (dir_empty(sb) && rmdir(sb) == 0)
				printf("removed .sandbox/\n");
			else
				printf("kept .sandbox/ (the queue in .sandbox/escalations, the audit log "
				       "in .sandbox/audit and remembered approvals are records, not "
				       "configuration)\n");
		}
		free(sb);
	}
	printf("bpfsbx uninstall: %s is back to its state before `bpfsbx init`%s\n", dir,
	       warnings ? " (except as noted above)" : "");
	json_decref(man);
	free(dir);
	return 0;
}

SBX_COMMAND(uninstall, "uninstall", "[DIR]",
	    "undo `bpfsbx init`: restore the files it changed", cmd_uninstall,
	    NULL);
