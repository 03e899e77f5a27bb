/* SPDX-License-Identifier: GPL-2.0 */
/*
 * install.h - what `bpfsbx init` adds to an agent's project
 * configuration and how `bpfsbx uninstall` takes it out again.
 *
 *   .claude/settings.json  hooks (PreToolUse, PostToolUse, SessionStart)
 *                          running `bpfsbx hook ...`; enabledMcpjsonServers
 *   .mcp.json              mcpServers.bpfsbx (stdio)
 *   .cursor/mcp.json       mcpServers.bpfsbx
 *   .codex/config.toml     a marked [mcp_servers.bpfsbx] block
 *
 * Merges keep every key they do not own. The original bytes of every
 * file touched are kept under .sandbox/init-backup/ with a manifest.
 */
#ifndef SBX_CONNECTOR_INSTALL_H
#define SBX_CONNECTOR_INSTALL_H

#include <stdbool.h>
#include <stddef.h>
#include <jansson.h>

#define SBX_BACKUP_DIR		".sandbox/init-backup"
#define SBX_MANIFEST		".sandbox/init-backup/manifest.json"
#define SBX_MANIFEST_VERSION	1
#define SBX_TOML_BEGIN		"# >>> bpfsbx: added by `bpfsbx init`; `bpfsbx uninstall` removes it >>>"
#define SBX_TOML_END		"# <<< bpfsbx <<<"
#define SBX_MAX_CONFIG		(16u << 20)

enum sbx_cfg_kind {
	SBX_CFG_CLAUDE,		/* .claude/settings.json */
	SBX_CFG_MCP_JSON,	/* .mcp.json */
	SBX_CFG_CURSOR,		/* .cursor/mcp.json */
	SBX_CFG_CODEX,		/* .codex/config.toml */
	SBX_CFG_POLICY,		/* .sandbox/policy.yaml */
	SBX_CFG_GITIGNORE,	/* .gitignore: the machine's parts of .sandbox/ */
};

/* What init adds to .gitignore: the queue, the audit logs and the state
 * of this machine (backups, approvals, Claude's settings copies). The
 * policy stays out of it, so that a team commits it. NULL-terminated. */
extern const char *const sbx_gitignore_lines[];

struct sbx_install {
	const char *exe;	/* what the files run: "bpfsbx" (from PATH), else the
				 * absolute path of this binary */
	const char *project;	/* absolute */
	bool with_mcp;		/* --mcp: pre-approve the server in Claude's settings */
};

/*
 * New content of a configuration file: cur (NULL when the file does not
 * exist) merged with bpfsbx's entries. 0 with *out (malloc'd, *out_len);
 * -EINVAL with *err when cur cannot be merged (not JSON, wrong types, an
 * unmarked bpfsbx table in TOML).
 */
int sbx_install_merge(enum sbx_cfg_kind kind, const struct sbx_install *in,
		      const char *cur, size_t cur_len, char **out, size_t *out_len, char **err);

/*
 * Remove bpfsbx's entries from cur, keeping everything else (for files a
 * person changed after init, which cannot be restored byte for byte).
 * *empty is set when nothing but an empty object/file is left.
 */
int sbx_install_unmerge(enum sbx_cfg_kind kind, const char *cur, size_t cur_len,
			char **out, size_t *out_len, bool *empty, char **err);

/* "/path with space/bpfsbx" -> "'/path with space/bpfsbx'" for sh -c. */
char *sbx_sh_quote(const char *s);

/* The policy written by init when none is given. */
extern const char sbx_policy_template[];

#endif
