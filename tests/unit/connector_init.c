// SPDX-License-Identifier: GPL-2.0
/*
 * `bpfsbx init` and `bpfsbx uninstall` on folders that already have agent
 * configuration: merges keep what was there, a second init changes no
 * byte, uninstall restores every byte (and mode), and refusals change
 * nothing.
 */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include <jansson.h>
#include "tests/unit/connector_helpers.h"
#include "tests/unit/unit.h"

/* Existing files, with formatting jansson would never produce. */
static const char settings_orig[] =
	"{\n    \"permissions\": {\"allow\": [\"Bash(npm test:*)\"]},\n"
	"    \"hooks\": {\"PreToolUse\": [{\"matcher\": \"Bash\", \"hooks\": "
	"[{\"type\": \"command\", \"command\": \"./audit.sh\"}]}]},\n"
	"    \"model\": \"x\"\n}";
static const char mcp_orig[] =
	"{\"mcpServers\": {\"other\": {\"command\": \"node\", \"args\": [\"srv.js\"]}}}\n";
static const char toml_orig[] =
	"model = \"o3\"\n\n[mcp_servers.other]\ncommand = \"node\"\nargs = [\"x.js\"]\n";

/* Every regular file under dir (relative name -> content), for comparison. */
static void snapshot(const char *dir, const char *rel, json_t *out)
{
	char *path = rel[0] ? tc_path(dir, rel) : strdup(dir);
	DIR *d = opendir(path);
	struct dirent *de;

	if (!d) {
		free(path);
		return;
	}
	while ((de = readdir(d))) {
		char *r, *full;
		struct stat st;

		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		if (asprintf(&r, "%s%s%s", rel, rel[0] ? "/" : "", de->d_name) < 0)
			abort();
		full = tc_path(dir, r);
		lstat(full, &st);
		if (S_ISDIR(st.st_mode)) {
			json_object_set_new(out, r, json_string("<dir>"));
			snapshot(dir, r, out);
		} else {
			size_t len;
			char *c = tc_read(full, &len);
			char mode[16];

			snprintf(mode, sizeof(mode), "%o:", st.st_mode & 07777);
			json_t *v = json_stringn(mode, strlen(mode));
			json_t *body = json_stringn(c ? c : "", c ? len : 0);
			json_object_set_new(out, r, json_pack("[o, o]", v, body));
			free(c);
		}
		free(full);
		free(r);
	}
	closedir(d);
	free(path);
}

static json_t *snap(const char *dir)
{
	json_t *o = json_object();

	snapshot(dir, "", o);
	return o;
}

static void make_folder(const char *dir)
{
	char *p;

	p = tc_path(dir, ".claude/settings.json");
	tc_write(p, settings_orig);
	chmod(p, 0640);
	free(p);
	p = tc_path(dir, ".mcp.json");
	tc_write(p, mcp_orig);
	free(p);
	p = tc_path(dir, ".codex/config.toml");
	tc_write(p, toml_orig);
	free(p);
	p = tc_path(dir, "src/main.c");
	tc_write(p, "int main(void) { return 0; }\n");
	free(p);
}

static int run(const char *const *args, char **out, char **err)
{
	return tc_run((char *const *)args, NULL, NULL, 0, out, err);
}

static void dump_diff(json_t *a, json_t *b)
{
	const char *k;
	json_t *v;

	json_object_foreach(a, k, v)
		if (!json_equal(v, json_object_get(b, k)))
			fprintf(stderr, "  differs: %s\n", k);
	json_object_foreach(b, k, v)
		if (!json_object_get(a, k))
			fprintf(stderr, "  only after: %s\n", k);
}

SBX_TEST(connector_init, merge_idempotent_restore)
{
	char *dir, *out, *err, *p, *txt;
	json_t *before, *after1, *after2, *restored, *j;
	int st;

	if (!tc_bin())
		SBX_SKIP("build/bpfsbx-san is not built (make build/bpfsbx-san)");
	dir = tc_path(sbx_unit_tmpdir(), "proj");
	make_folder(dir);
	before = snap(dir);

	const char *init[] = { "bpfsbx", "init", dir, "--claude", "--mcp", "--codex", "--cursor", NULL };
	st = run(init, &out, &err);
	CU_ASSERT_EQUAL(st, 0);
	if (st)
		fprintf(stderr, "init: %s%s\n", out, err);
	free(out);
	free(err);

	/* merged: theirs kept, ours added */
	p = tc_path(dir, ".claude/settings.json");
	j = json_load_file(p, 0, NULL);
	free(p);
	txt = json_dumps(j, JSON_COMPACT);
	CU_ASSERT_PTR_NOT_NULL(strstr(txt, "./audit.sh"));
	CU_ASSERT_PTR_NOT_NULL(strstr(txt, "Bash(npm test:*)"));
	CU_ASSERT_PTR_NOT_NULL(strstr(txt, "hook pre-tool-use"));
	CU_ASSERT_PTR_NOT_NULL(strstr(txt, "hook post-tool-use"));
	CU_ASSERT_PTR_NOT_NULL(strstr(txt, "hook session-start"));
	CU_ASSERT_PTR_NOT_NULL(strstr(txt, "Bash|Read|Write|Edit|MultiEdit|NotebookEdit|WebFetch|Grep|Glob"));
	CU_ASSERT_STRING_EQUAL(json_string_value(json_object_get(j, "model")) ?: "", "x");
	free(txt);
	json_decref(j);
	p = tc_path(dir, ".mcp.json");
	j = json_load_file(p, 0, NULL);
	free(p);
	CU_ASSERT_PTR_NOT_NULL(json_object_get(json_object_get(j, "mcpServers"), "other"));
	json_t *ours = json_object_get(json_object_get(j, "mcpServers"), "bpfsbx");
	CU_ASSERT_STRING_EQUAL(json_string_value(json_object_get(ours, "type")) ?: "", "stdio");
	/* no project path in a committed file: the server finds the project */
	CU_ASSERT_EQUAL(json_array_size(json_object_get(ours, "args")), 1);
	CU_ASSERT_STRING_EQUAL(json_string_value(json_array_get(json_object_get(ours, "args"), 0)) ?: "",
			       "mcp");
	json_decref(j);
	p = tc_path(dir, ".codex/config.toml");
	txt = tc_read(p, NULL);
	free(p);
	CU_ASSERT_TRUE(txt && !strncmp(txt, toml_orig, strlen(toml_orig)));
	CU_ASSERT_PTR_NOT_NULL(strstr(txt ?: "", "[mcp_servers.bpfsbx]"));
	CU_ASSERT_PTR_NOT_NULL(strstr(txt ?: "", "tool_timeout_sec = 60"));
	/* committed files name no path of this machine */
	CU_ASSERT_PTR_NOT_NULL(strstr(txt ?: "", "args = [\"mcp\"]\n"));
	CU_ASSERT_PTR_NULL(strstr(txt ?: "", dir));
	free(txt);
	p = tc_path(dir, ".cursor/mcp.json");
	txt = tc_read(p, NULL);
	free(p);
	CU_ASSERT_PTR_NOT_NULL(strstr(txt ?: "", "\"${workspaceFolder}\""));
	CU_ASSERT_PTR_NULL(strstr(txt ?: "", dir));
	free(txt);
	p = tc_path(dir, ".sandbox/policy.yaml");
	txt = tc_read(p, NULL);
	free(p);
	CU_ASSERT_PTR_NOT_NULL(strstr(txt ?: "", "extends: agent-default"));
	free(txt);

	/* twice: nothing changes */
	after1 = snap(dir);
	st = run(init, &out, &err);
	CU_ASSERT_EQUAL(st, 0);
	CU_ASSERT_PTR_NOT_NULL(strstr(out, "nothing changed"));
	free(out);
	free(err);
	after2 = snap(dir);
	CU_ASSERT_TRUE(json_equal(after1, after2));
	if (!json_equal(after1, after2))
		dump_diff(after1, after2);

	/* records made meanwhile are kept by uninstall */
	p = tc_path(dir, ".sandbox/audit/s.jsonl");
	tc_write(p, "{}\n");
	free(p);
	const char *un[] = { "bpfsbx", "uninstall", dir, NULL };
	st = run(un, &out, &err);
	CU_ASSERT_EQUAL(st, 0);
	CU_ASSERT_PTR_NOT_NULL(strstr(out, "kept .sandbox/"));
	free(out);
	free(err);
	p = tc_path(dir, ".sandbox/audit/s.jsonl");
	CU_ASSERT_EQUAL(access(p, F_OK), 0);
	unlink(p);
	free(p);
	p = tc_path(dir, ".sandbox/audit");
	rmdir(p);
	free(p);
	p = tc_path(dir, ".sandbox");
	rmdir(p);
	free(p);
	restored = snap(dir);
	CU_ASSERT_TRUE(json_equal(before, restored));
	if (!json_equal(before, restored))
		dump_diff(before, restored);

	json_decref(before);
	json_decref(after1);
	json_decref(after2);
	json_decref(restored);
	free(dir);
}

SBX_TEST(connector_init, fresh_folder_round_trip)
{
	char *dir, *out, *err;
	json_t *before, *after;
	int st;

	if (!tc_bin())
		SBX_SKIP("build/bpfsbx-san is not built (make build/bpfsbx-san)");
	dir = tc_path(sbx_unit_tmpdir(), "fresh");
	mkdir(dir, 0755);
	before = snap(dir);
	const char *init[] = { "bpfsbx", "init", dir, NULL };	/* default: --claude --mcp */
	st = run(init, &out, &err);
	CU_ASSERT_EQUAL(st, 0);
	CU_ASSERT_PTR_NOT_NULL(strstr(out, "created .claude/settings.json"));
	CU_ASSERT_PTR_NOT_NULL(strstr(out, "created .mcp.json"));
	free(out);
	free(err);
	const char *un[] = { "bpfsbx", "uninstall", dir, NULL };
	st = run(un, &out, &err);
	CU_ASSERT_EQUAL(st, 0);
	free(out);
	free(err);
	after = snap(dir);
	CU_ASSERT_TRUE(json_equal(before, after));	/* .claude/, .sandbox/ gone too */
	if (!json_equal(before, after))
		dump_diff(before, after);
	json_decref(before);
	json_decref(after);
	free(dir);
}

SBX_TEST(connector_init, refusals_change_nothing)
{
	char *dir, *out, *err, *p;
	json_t *before, *after;
	int st;

	if (!tc_bin())
		SBX_SKIP("build/bpfsbx-san is not built (make build/bpfsbx-san)");
	/* uninstall of a folder never initialised */
	dir = tc_path(sbx_unit_tmpdir(), "never");
	mkdir(dir, 0755);
	const char *un[] = { "bpfsbx", "uninstall", dir, NULL };
	st = run(un, &out, &err);
	CU_ASSERT_EQUAL(st, 1);
	CU_ASSERT_PTR_NOT_NULL(strstr(err, "was not set up by `bpfsbx init`"));
	free(out);
	free(err);

	/* settings.json that is not JSON */
	p = tc_path(dir, ".claude/settings.json");
	tc_write(p, "{ not json");
	free(p);
	before = snap(dir);
	const char *init[] = { "bpfsbx", "init", dir, "--claude", NULL };
	st = run(init, &out, &err);
	CU_ASSERT_EQUAL(st, 1);
	CU_ASSERT_PTR_NOT_NULL(strstr(err, "settings.json: not valid JSON: line 1"));
	free(out);
	free(err);
	after = snap(dir);
	CU_ASSERT_TRUE(json_equal(before, after));
	json_decref(before);
	json_decref(after);

	/* a Codex config with a bpfsbx server that is not ours */
	p = tc_path(dir, ".claude/settings.json");
	unlink(p);
	free(p);
	p = tc_path(dir, ".codex/config.toml");
	tc_write(p, "[mcp_servers.\"bpfsbx\"]\ncommand = \"/opt/other\"\n");
	free(p);
	before = snap(dir);
	const char *initx[] = { "bpfsbx", "init", dir, "--codex", NULL };
	st = run(initx, &out, &err);
	CU_ASSERT_EQUAL(st, 1);
	CU_ASSERT_PTR_NOT_NULL(strstr(err, "already defines an MCP server named bpfsbx"));
	free(out);
	free(err);
	after = snap(dir);
	CU_ASSERT_TRUE(json_equal(before, after));
	json_decref(before);
	json_decref(after);
	free(dir);
}

SBX_TEST(connector_init, edited_after_init)
{
	char *dir, *out, *err, *p, *txt;
	json_t *j;
	int st;

	if (!tc_bin())
		SBX_SKIP("build/bpfsbx-san is not built (make build/bpfsbx-san)");
	dir = tc_path(sbx_unit_tmpdir(), "edited");
	make_folder(dir);
	const char *init[] = { "bpfsbx", "init", dir, "--claude", "--mcp", NULL };
	st = run(init, &out, &err);
	CU_ASSERT_EQUAL(st, 0);
	free(out);
	free(err);
	/* a person adds a server after init: uninstall must not lose it */
	p = tc_path(dir, ".mcp.json");
	j = json_load_file(p, 0, NULL);
	json_object_set_new(json_object_get(j, "mcpServers"), "added",
			    json_pack("{s:s}", "command", "x"));
	json_dump_file(j, p, 0);
	json_decref(j);
	const char *un[] = { "bpfsbx", "uninstall", dir, NULL };
	st = run(un, &out, &err);
	CU_ASSERT_EQUAL(st, 0);
	CU_ASSERT_PTR_NOT_NULL(strstr(out, "cleaned .mcp.json"));
	free(out);
	free(err);
	j = json_load_file(p, 0, NULL);
	CU_ASSERT_PTR_NOT_NULL(json_object_get(json_object_get(j, "mcpServers"), "added"));
	CU_ASSERT_PTR_NOT_NULL(json_object_get(json_object_get(j, "mcpServers"), "other"));
	CU_ASSERT_PTR_NULL(json_object_get(json_object_get(j, "mcpServers"), "bpfsbx"));
	json_decref(j);
	free(p);
	/* the untouched one is byte-identical */
	p = tc_path(dir, ".claude/settings.json");
	txt = tc_read(p, NULL);
	CU_ASSERT_STRING_EQUAL(txt ?: "", settings_orig);
	free(txt);
	free(p);
	free(dir);
}

/* .mcp.json and .claude/settings.json are committed: bpfsbx as PATH finds
 * it and no path of this machine; .gitignore keeps the policy committable */
SBX_TEST(connector_init, committed_files_are_portable)
{
	char *dir, *bindir, *link, *pathenv, *out, *err, *txt, *p;
	const char *env[2];
	int st;

	if (!tc_bin())
		SBX_SKIP("build/bpfsbx-san is not built (make build/bpfsbx-san)");
	dir = tc_path(sbx_unit_tmpdir(), "portable");
	bindir = tc_path(sbx_unit_tmpdir(), "bin");
	make_folder(dir);
	mkdir(bindir, 0755);
	link = tc_path(bindir, "bpfsbx");
	CU_ASSERT_EQUAL(symlink(tc_bin(), link), 0);
	p = tc_path(dir, ".git");
	mkdir(p, 0755);
	free(p);
	if (asprintf(&pathenv, "PATH=%s:/usr/bin:/bin", bindir) < 0)
		abort();
	env[0] = pathenv;
	env[1] = NULL;
	{
		char *const init[] = { "bpfsbx", "init", dir, "--claude", "--mcp", NULL };

		st = tc_run(init, env, NULL, 0, &out, &err);
		CU_ASSERT_EQUAL(st, 0);
		CU_ASSERT_PTR_NULL(strstr(err, "not on PATH"));
		free(out);
		free(err);
	}
	for (int i = 0; i < 2; i++) {
		json_t *j;

		p = tc_path(dir, i ? ".mcp.json" : ".claude/settings.json");
		txt = tc_read(p, NULL);
		CU_ASSERT_PTR_NOT_NULL_FATAL(txt);
		CU_ASSERT_PTR_NULL(strstr(txt, dir));
		CU_ASSERT_PTR_NULL(strstr(txt, tc_bin()));
		CU_ASSERT_PTR_NULL(strstr(txt, sbx_unit_tmpdir()));
		j = json_loads(txt, 0, NULL);
		if (i) {
			CU_ASSERT_STRING_EQUAL(json_string_value(json_object_get(json_object_get(
				json_object_get(j, "mcpServers"), "bpfsbx"), "command")) ?: "", "bpfsbx");
		} else {
			CU_ASSERT_PTR_NOT_NULL(strstr(txt, "\"bpfsbx hook pre-tool-use\""));
		}
		json_decref(j);
		free(txt);
		free(p);
	}
	p = tc_path(dir, ".gitignore");
	txt = tc_read(p, NULL);
	CU_ASSERT_PTR_NOT_NULL(txt && strstr(txt, ".sandbox/escalations/\n"));
	CU_ASSERT_PTR_NOT_NULL(txt && strstr(txt, ".sandbox/audit/\n"));
	CU_ASSERT_PTR_NULL(txt && strstr(txt, ".sandbox/\n") == txt ? txt : NULL);
	CU_ASSERT_PTR_NULL(txt ? strstr(txt, "\n.sandbox/\n") : NULL);
	free(txt);
	free(p);
	/* the template says what agent-default does with sudo */
	p = tc_path(dir, ".sandbox/policy.yaml");
	txt = tc_read(p, NULL);
	CU_ASSERT_PTR_NULL(txt ? strstr(txt, "sudo/su/doas are refused") : NULL);
	CU_ASSERT_PTR_NOT_NULL(txt ? strstr(txt, "a person approves") : NULL);
	free(txt);
	free(p);
	{
		/* not on PATH: the absolute path, and a warning that says so */
		char *d2 = tc_path(sbx_unit_tmpdir(), "portable2");
		const char *env2[] = { "PATH=/usr/bin:/bin", NULL };
		char *const init[] = { "bpfsbx", "init", d2, "--mcp", NULL };

		make_folder(d2);
		st = tc_run(init, env2, NULL, 0, &out, &err);
		CU_ASSERT_EQUAL(st, 0);
		CU_ASSERT_PTR_NOT_NULL(strstr(err, "not on PATH"));
		free(out);
		free(err);
		free(d2);
	}
	free(link);
	free(pathenv);
	free(bindir);
	free(dir);
}
