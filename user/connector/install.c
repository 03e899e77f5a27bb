// SPDX-License-Identifier: GPL-2.0
/*
 * Merging bpfsbx into agents' configuration files, and out again. JSON is
 * jansson (unknown keys, other hooks and other servers are kept). TOML
 * has no library in the set we build with, so the Codex entry is a block
 * between two marker comments that is appended, replaced or cut out as
 * text; TOML is never parsed beyond finding an unmarked bpfsbx table,
 * which is refused.
 */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "user/connector/claude_hook.h"
#include "user/connector/install.h"
#include "user/connector/mcp/server.h"
#include "lib/alloc.h"
#include "lib/clock.h"
#include "lib/fileio.h"
#include "lib/log.h"
#include "lib/text.h"
#include "lib/json.h"

const char sbx_policy_template[] =
	"# bpfsbx policy for this project (written by `bpfsbx init`).\n"
	"#\n"
	"# It starts from the shipped agent-default policy: the project is read-write,\n"
	"# credentials, ~/.ssh, cloud keys, shell rc files and agent instruction files\n"
	"# (CLAUDE.md, .cursorrules) are protected; inside the session the kernel\n"
	"# refuses to run sudo, su, doas and pkexec, while a `sudo CMD` the agent asks\n"
	"# for becomes a request that a person approves and runs outside the session\n"
	"# (su is refused). Package registries and git hosts are allowed, other hosts\n"
	"# are asked about.\n"
	"# Rules added here join agent-default's; the most specific rule wins, and\n"
	"# between equally specific rules the stricter one. `bpfsbx policy check`\n"
	"# checks this file; `bpfsbx policy explain` says which rule decides what.\n"
	"version: 1\n"
	"extends: agent-default\n"
	"\n"
	"# Examples (uncomment and adapt):\n"
	"#\n"
	"# files:\n"
	"#   rules:\n"
	"#     - path: ${PROJECT}/deploy/secrets/\n"
	"#       access: [read, write]\n"
	"#       verdict: ask\n"
	"#       reason: deployment secrets; a person approves each use\n"
	"# network:\n"
	"#   rules:\n"
	"#     - host: api.example.com\n"
	"#       port: 443\n"
	"#       verdict: allow\n"
	"#       reason: the service this project talks to\n"
	"# commands:\n"
	"#   rules:\n"
	"#     - command: terraform\n"
	"#       args: [\"apply*\"]\n"
	"#       verdict: ask\n"
	"#       reason: changes real infrastructure\n";

char *sbx_sh_quote(const char *s)
{
	size_t n = 0;
	char *o, *p;
	bool safe = *s != 0;

	for (const char *c = s; *c; c++)
		if (!(isalnum((unsigned char)*c) || strchr("/._-+:,@%", *c)))
			safe = false;
	if (safe)
		return sbx_strdup(s);
	for (const char *c = s; *c; c++)
		n += *c == '\'' ? 4 : 1;
	o = p = malloc(n + 3);
	if (!o)
		return NULL;
	*p++ = '\'';
	for (const char *c = s; *c; c++) {
		if (*c == '\'') {
			memcpy(p, "'\\''", 4);
			p += 4;
		} else {
			*p++ = *c;
		}
	}
	*p++ = '\'';
	*p = 0;
	return o;
}

/* ---- JSON ------------------------------------------------------------------ */

static const char *const hook_events[][3] = {
	/* Claude event, matcher, our argument */
	{ "PreToolUse", "Bash|Read|Write|Edit|MultiEdit|NotebookEdit|WebFetch|Grep|Glob",
	  "pre-tool-use" },
	{ "PostToolUse", "*", "post-tool-use" },
	{ "SessionStart", NULL, "session-start" },
};

/* Is this hook command one of ours (any install path) for arg? */
static bool our_hook(const char *cmd, const char *arg)
{
	size_t n, a = strlen(arg);

	if (!cmd || !strstr(cmd, "bpfsbx"))
		return false;
	n = strlen(cmd);
	return n > a + 6 && !strcmp(cmd + n - a, arg) &&
	       !strncmp(cmd + n - a - 6, " hook ", 6);
}

static int load_json(const char *cur, size_t len, json_t **out, char **err, const char *what)
{
	json_error_t je;

	if (!cur) {
		*out = json_object();
		return *out ? 0 : -ENOMEM;
	}
	*out = json_loadb(cur, len, 0, &je);
	if (!*out) {
		*err = sbx_asprintf("%s: not valid JSON: line %d, column %d: %s (nothing was "
				    "changed; fix or move the file and run init again)",
				    what, je.line, je.column, je.text);
		return -EINVAL;
	}
	if (!json_is_object(*out)) {
		*err = sbx_asprintf("%s: the top level is not a JSON object (nothing was changed)",
				    what);
		json_decref(*out);
		*out = NULL;
		return -EINVAL;
	}
	return 0;
}

/* The file's own layout, where bpfsbx only adds keys: a one-line file stays
 * one line, an indented one keeps its indent width; a new file gets 2. */
static size_t json_style(const char *cur, size_t len, bool *nl)
{
	size_t end = len;

	*nl = true;
	if (!cur || !len)
		return JSON_INDENT(2);
	while (end && (cur[end - 1] == '\n' || cur[end - 1] == '\r' || cur[end - 1] == ' '))
		end--;
	*nl = end < len;
	if (!memchr(cur, '\n', end))
		return JSON_COMPACT;
	for (const char *p = memchr(cur, '\n', end); p && p + 1 < cur + end;
	     p = memchr(p + 1, '\n', cur + end - p - 1)) {
		size_t n = strspn(p + 1, " ");

		if (n && p[1 + n] != '\n')
			return JSON_INDENT(n > 31 ? 31 : n);
	}
	return JSON_INDENT(2);
}

static int dump_json(json_t *j, const char *cur, size_t cur_len, char **out, size_t *len)
{
	bool nl;
	size_t style = json_style(cur, cur_len, &nl);
	char *t = json_dumps(j, style | JSON_PRESERVE_ORDER);

	if (!t)
		return -ENOMEM;
	*out = sbx_asprintf("%s%s", t, nl ? "\n" : "");
	*len = strlen(*out);
	free(t);
	return 0;
}

static json_t *obj_child(json_t *parent, const char *key, const char *what, char **err)
{
	json_t *c = json_object_get(parent, key);

	if (!c) {
		c = json_object();
		json_object_set_new(parent, key, c);
		return c;
	}
	if (!json_is_object(c)) {
		*err = sbx_asprintf("%s: \"%s\" is not an object (nothing was changed)", what, key);
		return NULL;
	}
	return c;
}

static int merge_claude(const struct sbx_install *in, json_t *root, char **err)
{
	const char *what = ".claude/settings.json";
	json_t *hooks = obj_child(root, "hooks", what, err);
	char *qexe = sbx_sh_quote(in->exe);

	if (!hooks || !qexe) {
		free(qexe);
		return -EINVAL;
	}
	for (size_t e = 0; e < sizeof(hook_events) / sizeof(hook_events[0]); e++) {
		const char *ev = hook_events[e][0], *matcher = hook_events[e][1];
		const char *arg = hook_events[e][2];
		char *cmd = sbx_asprintf("%s hook %s", qexe, arg);
		json_t *arr = json_object_get(hooks, ev), *grp, *h;
		bool found = false;
		size_t i, j;

		if (!arr) {
			arr = json_array();
			json_object_set_new(hooks, ev, arr);
		}
		if (!json_is_array(arr)) {
			*err = sbx_asprintf("%s: hooks.%s is not an array (nothing was changed)",
					    what, ev);
			free(cmd);
			free(qexe);
			return -EINVAL;
		}
		json_array_foreach(arr, i, grp) {
			json_array_foreach(json_object_get(grp, "hooks"), j, h) {
				const char *c = sbx_json_str(h, "command");

				if (our_hook(c, arg)) {
					/* ours, maybe from another install path: point it here */
					if (strcmp(c, cmd))
						json_object_set_new(h, "command", json_string(cmd));
					found = true;
				}
			}
		}
		if (!found) {
			json_t *g = json_object();

			if (g && matcher)
				json_object_set_new(g, "matcher", json_string(matcher));
			if (g)
				json_object_set_new(g, "hooks",
					json_pack("[{s:s, s:s, s:i}]", "type", "command", "command",
						  cmd, "timeout", e == 0 ? SBX_HOOK_TIMEOUT_S : 30));
			json_array_append_new(arr, g);
		}
		free(cmd);
	}
	free(qexe);
	if (in->with_mcp) {
		json_t *en = json_object_get(root, "enabledMcpjsonServers"), *v;
		bool have = false;
		size_t i;

		if (!en) {
			en = json_array();
			json_object_set_new(root, "enabledMcpjsonServers", en);
		}
		if (!json_is_array(en)) {
			*err = sbx_asprintf("%s: enabledMcpjsonServers is not an array (nothing was "
					    "changed)", what);
			return -EINVAL;
		}
		json_array_foreach(en, i, v)
			have = have || (json_is_string(v) && !strcmp(json_string_value(v), "bpfsbx"));
		if (!have)
			json_array_append_new(en, json_string("bpfsbx"));
	}
	return 0;
}

static int merge_mcp(const struct sbx_install *in, json_t *root, bool with_type,
		     const char *what, char **err)
{
	json_t *servers = obj_child(root, "mcpServers", what, err), *s;

	if (!servers)
		return -EINVAL;
	/*
	 * Both files are committed: no path of this machine in them. From
	 * .mcp.json the server finds the project as every command does, from
	 * $CLAUDE_PROJECT_DIR or the directory Claude Code starts it in.
	 * Cursor may start a server outside the workspace, and expands
	 * ${workspaceFolder} in args to the folder it opened.
	 */
	s = with_type ? json_pack("{s:s, s:[s], s:{}}", "command", in->exe, "args", "mcp", "env") :
		json_pack("{s:s, s:[s, s, s], s:{}}", "command", in->exe, "args", "mcp",
			  "--project", "${workspaceFolder}", "env");
	if (!s)
		return -ENOMEM;
	if (with_type) {
		/* "type" first, as the docs write it */
		json_t *t = json_pack("{s:s}", "type", "stdio");
		json_object_update(t, s);
		json_decref(s);
		s = t;
	}
	/* keep a byte-identical file on a second run: replace only if different */
	if (!json_equal(json_object_get(servers, "bpfsbx"), s))
		json_object_set_new(servers, "bpfsbx", s);
	else
		json_decref(s);
	return 0;
}

static int unmerge_claude(json_t *root)
{
	json_t *hooks = json_object_get(root, "hooks"), *en;

	if (json_is_object(hooks)) {
		for (size_t e = 0; e < sizeof(hook_events) / sizeof(hook_events[0]); e++) {
			json_t *arr = json_object_get(hooks, hook_events[e][0]);
			size_t i = 0;

			if (!json_is_array(arr))
				continue;
			while (i < json_array_size(arr)) {
				json_t *grp = json_array_get(arr, i);
				json_t *hs = json_object_get(grp, "hooks");
				size_t j = 0;

				while (json_is_array(hs) && j < json_array_size(hs)) {
					const char *c = json_string_value(
						json_object_get(json_array_get(hs, j), "command"));

					if (our_hook(c, hook_events[e][2]))
						json_array_remove(hs, j);
					else
						j++;
				}
				if (json_is_array(hs) && json_array_size(hs) == 0)
					json_array_remove(arr, i);
				else
					i++;
			}
			if (json_array_size(arr) == 0)
				json_object_del(hooks, hook_events[e][0]);
		}
		if (json_object_size(hooks) == 0)
			json_object_del(root, "hooks");
	}
	en = json_object_get(root, "enabledMcpjsonServers");
	if (json_is_array(en)) {
		for (size_t i = 0; i < json_array_size(en);)
			if (!strcmp(json_string_value(json_array_get(en, i)) ?: "", "bpfsbx"))
				json_array_remove(en, i);
			else
				i++;
		if (json_array_size(en) == 0)
			json_object_del(root, "enabledMcpjsonServers");
	}
	return 0;
}

static int unmerge_mcp(json_t *root)
{
	json_t *servers = json_object_get(root, "mcpServers");

	if (json_is_object(servers)) {
		json_object_del(servers, "bpfsbx");
		if (json_object_size(servers) == 0)
			json_object_del(root, "mcpServers");
	}
	return 0;
}

/* ---- TOML (Codex) ---------------------------------------------------------- */

/* TOML basic string: quotes, backslashes and control characters escaped. */
static void toml_str(FILE *f, const char *s)
{
	fputc('"', f);
	for (const unsigned char *c = (const unsigned char *)s; *c; c++) {
		if (*c == '"' || *c == '\\')
			fprintf(f, "\\%c", *c);
		else if (*c < 0x20 || *c == 0x7f)
			fprintf(f, "\\u%04x", *c);
		else
			fputc(*c, f);
	}
	fputc('"', f);
}

/* Find our marked block: [*b, *e) including the end marker's newline. */
static bool find_block(const char *s, size_t n, size_t *b, size_t *e, bool eat_blank)
{
	const char *p = memmem(s, n, SBX_TOML_BEGIN, strlen(SBX_TOML_BEGIN)), *q;

	if (!p)
		return false;
	q = memmem(p, n - (p - s), SBX_TOML_END, strlen(SBX_TOML_END));
	if (!q)
		return false;
	q += strlen(SBX_TOML_END);
	if (q < s + n && *q == '\n')
		q++;
	*b = p - s;
	/* the blank line init put before the block goes with it */
	if (eat_blank && *b >= 2 && s[*b - 1] == '\n' && s[*b - 2] == '\n')
		(*b)--;
	*e = q - s;
	return true;
}

/* A bpfsbx server defined outside our block? Header [mcp_servers.bpfsbx]
 * (any quoting or spacing), dotted keys, or a bpfsbx key in [mcp_servers]. */
static bool unmarked_bpfsbx(const char *s, size_t n)
{
	bool in_servers = false;
	const char *line = s, *end = s + n;

	while (line < end) {
		const char *nl = memchr(line, '\n', end - line);
		size_t len = nl ? (size_t)(nl - line) : (size_t)(end - line);
		char buf[512];
		size_t k = 0;

		/* squeeze out blanks and quotes, drop comments */
		for (size_t i = 0; i < len && k + 1 < sizeof(buf); i++) {
			char c = line[i];

			if (c == '#')
				break;
			if (c == ' ' || c == '\t' || c == '"' || c == '\'' || c == '\r')
				continue;
			buf[k++] = c;
		}
		buf[k] = 0;
		if (buf[0] == '[') {
			in_servers = !strcmp(buf, "[mcp_servers]");
			if (!strncmp(buf, "[mcp_servers.bpfsbx]", 20) ||
			    !strncmp(buf, "[mcp_servers.bpfsbx.", 20))
				return true;
		} else if (!strncmp(buf, "mcp_servers.bpfsbx", 18) ||
			   (in_servers && !strncmp(buf, "bpfsbx", 6) &&
			    (buf[6] == '=' || buf[6] == '.')) ||
			   (!strncmp(buf, "mcp_servers=", 12) && strstr(buf, "bpfsbx="))) {
			return true;
		}
		line = nl ? nl + 1 : end;
	}
	return false;
}

static int merge_codex(const struct sbx_install *in, const char *cur, size_t n,
		       char **out, size_t *out_len, char **err)
{
	char *blk = NULL, *res = NULL;
	size_t blen = 0, rlen = 0, b = 0, e = 0;
	bool have = cur && find_block(cur, n, &b, &e, false);
	FILE *f;

	if (cur) {
		/* an unmarked definition anywhere outside our block */
		char *rest = malloc(n + 1);

		if (!rest)
			return -ENOMEM;
		memcpy(rest, cur, have ? b : n);
		if (have)
			memcpy(rest + b, cur + e, n - e);
		size_t rn = have ? n - (e - b) : n;
		bool bad = unmarked_bpfsbx(rest, rn);

		free(rest);
		if (bad) {
			*err = sbx_strdup(".codex/config.toml already defines an MCP server named "
					  "bpfsbx outside bpfsbx's marked block; remove it (or rename "
					  "it) and run init again (nothing was changed)");
			return -EINVAL;
		}
	}
	f = open_memstream(&blk, &blen);
	if (!f)
		return -ENOMEM;
	fprintf(f, "%s\n[mcp_servers.bpfsbx]\ncommand = ", SBX_TOML_BEGIN);
	toml_str(f, in->exe);
	/* committed, so no project path: Codex starts the server in its own
	 * working directory, and the server searches upward for .sandbox/ */
	fprintf(f, "\nargs = [\"mcp\"]\nstartup_timeout_sec = 20\n"
		"# a call waits at most %d s for a person, then answers \"pending\"\n"
		"tool_timeout_sec = 60\n%s\n", SBX_MCP_WAIT_MS / 1000, SBX_TOML_END);
	fclose(f);

	f = open_memstream(&res, &rlen);
	if (!f) {
		free(blk);
		return -ENOMEM;
	}
	if (have) {
		fwrite(cur, 1, b, f);
		fputs(blk, f);
		fwrite(cur + e, 1, n - e, f);
	} else {
		if (cur && n) {
			fwrite(cur, 1, n, f);
			if (cur[n - 1] != '\n')
				fputc('\n', f);
			fputc('\n', f);
		}
		fputs(blk, f);
	}
	fclose(f);
	free(blk);
	*out = res;
	*out_len = rlen;
	return 0;
}

static int unmerge_codex(const char *cur, size_t n, char **out, size_t *out_len, bool *empty)
{
	size_t b, e;
	char *r = malloc(n + 1);

	if (!r)
		return -ENOMEM;
	if (find_block(cur, n, &b, &e, true)) {
		memcpy(r, cur, b);
		memcpy(r + b, cur + e, n - e);
		n -= e - b;
	} else {
		memcpy(r, cur, n);
	}
	r[n] = 0;
	*out = r;
	*out_len = n;
	*empty = true;
	for (size_t i = 0; i < n; i++)
		if (!strchr(" \t\r\n", r[i]))
			*empty = false;
	return 0;
}

/* ---- entry points ------------------------------------------------------------- */

static const char *cfg_name(enum sbx_cfg_kind k)
{
	switch (k) {
	case SBX_CFG_CLAUDE: return ".claude/settings.json";
	case SBX_CFG_MCP_JSON: return ".mcp.json";
	case SBX_CFG_CURSOR: return ".cursor/mcp.json";
	case SBX_CFG_CODEX: return ".codex/config.toml";
	case SBX_CFG_POLICY: return ".sandbox/policy.yaml";
	case SBX_CFG_GITIGNORE: return ".gitignore";
	}
	return "?";
}

/* Is a line of text exactly line? *at: its offset */
static bool has_line(const char *text, size_t len, const char *line, size_t *at)
{
	size_t l = strlen(line);

	for (size_t i = 0; i + l <= len; ) {
		const char *nl = memchr(text + i, '\n', len - i);
		size_t e = nl ? (size_t)(nl - text) : len;

		if (e - i == l && !memcmp(text + i, line, l)) {
			*at = i;
			return true;
		}
		if (!nl)
			break;
		i = e + 1;
	}
	return false;
}

const char *const sbx_gitignore_lines[] = {
	".sandbox/escalations/",
	".sandbox/audit/",
	".sandbox/init-backup/",
	".sandbox/claude-json/",
	".sandbox/remembered.yaml",
	NULL,
};

/* .gitignore: add the lines that are missing, unless .sandbox is ignored
 * whole already (a person's choice, or an older init) */
static int merge_gitignore(const char *cur, size_t len, char **out, size_t *out_len)
{
	struct sbx_strbuf b = { 0 };
	size_t at;

	sbx_sb_putn(&b, cur ? cur : "", cur ? len : 0);
	if (!(cur && (has_line(cur, len, ".sandbox/", &at) || has_line(cur, len, ".sandbox", &at) ||
		      has_line(cur, len, "/.sandbox/", &at) || has_line(cur, len, "/.sandbox", &at)))) {
		bool nl = len && cur[len - 1] != '\n';

		for (size_t i = 0; sbx_gitignore_lines[i]; i++) {
			if (cur && has_line(cur, len, sbx_gitignore_lines[i], &at))
				continue;
			if (nl)
				sbx_sb_putc(&b, '\n');
			nl = false;
			sbx_sb_puts(&b, sbx_gitignore_lines[i]);
			sbx_sb_putc(&b, '\n');
		}
	}
	if (!b.p)
		b.p = sbx_strdup("");
	*out = b.p;
	*out_len = b.len;
	return 0;
}

/* remove exactly the lines init adds, nothing else */
static int unmerge_gitignore(const char *cur, size_t len, char **out, size_t *out_len, bool *empty)
{
	*out = malloc(len + 1);
	memcpy(*out, cur, len);
	*out_len = len;
	for (size_t i = 0; sbx_gitignore_lines[i]; i++) {
		size_t at, l = strlen(sbx_gitignore_lines[i]);

		if (has_line(*out, *out_len, sbx_gitignore_lines[i], &at)) {
			size_t drop = l + (at + l < *out_len);

			memmove(*out + at, *out + at + drop, *out_len - at - drop);
			*out_len -= drop;
		}
	}
	(*out)[*out_len] = 0;
	*empty = *out_len == 0;
	return 0;
}

int sbx_install_merge(enum sbx_cfg_kind kind, const struct sbx_install *in,
		      const char *cur, size_t cur_len, char **out, size_t *out_len, char **err)
{
	json_t *root = NULL;
	int rc;

	*out = NULL;
	*err = NULL;
	if (kind == SBX_CFG_CODEX)
		return merge_codex(in, cur, cur_len, out, out_len, err);
	if (kind == SBX_CFG_GITIGNORE)
		return merge_gitignore(cur, cur_len, out, out_len);
	if (kind == SBX_CFG_POLICY)
		return -EINVAL;
	rc = load_json(cur, cur_len, &root, err, cfg_name(kind));
	if (rc < 0)
		return rc;
	if (kind == SBX_CFG_CLAUDE)
		rc = merge_claude(in, root, err);
	else
		rc = merge_mcp(in, root, kind == SBX_CFG_MCP_JSON, cfg_name(kind), err);
	if (rc == 0)
		rc = dump_json(root, cur, cur_len, out, out_len);
	json_decref(root);
	return rc;
}

int sbx_install_unmerge(enum sbx_cfg_kind kind, const char *cur, size_t cur_len,
			char **out, size_t *out_len, bool *empty, char **err)
{
	json_t *root = NULL;
	int rc;

	*out = NULL;
	*err = NULL;
	*empty = false;
	if (kind == SBX_CFG_CODEX)
		return unmerge_codex(cur, cur_len, out, out_len, empty);
	if (kind == SBX_CFG_GITIGNORE)
		return unmerge_gitignore(cur, cur_len, out, out_len, empty);
	if (kind == SBX_CFG_POLICY)
		return -EINVAL;
	rc = load_json(cur, cur_len, &root, err, cfg_name(kind));
	if (rc < 0)
		return rc;
	if (kind == SBX_CFG_CLAUDE)
		unmerge_claude(root);
	else
		unmerge_mcp(root);
	*empty = json_object_size(root) == 0;
	rc = dump_json(root, cur, cur_len, out, out_len);
	json_decref(root);
	return rc;
}
