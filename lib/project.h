/* SPDX-License-Identifier: GPL-2.0 */
/*
 * project.h - which project a command acts on. Every command that works
 * on "the project" (run, watch, approve, deny, policy, reload, audit, the
 * hook, the MCP server) finds it here, so that each of them, started in a
 * subdirectory, acts on the same project.
 */
#ifndef SBX_PROJECT_H
#define SBX_PROJECT_H

/* A project's own files: the project policy, below its .sandbox */
#define SBX_SANDBOX_DIR		".sandbox"
#define SBX_POLICY_FILE		".sandbox/policy.yaml"

/*
 * The nearest of start and its ancestors that holds a .sandbox/
 * directory, found as git finds .git: the walk does not cross into
 * another file system (st_dev changes: a mount point, as git without
 * GIT_DISCOVERY_ACROSS_FILESYSTEM) and, from inside $HOME, does not go
 * above $HOME (a stray ~/../.sandbox must not capture every project of
 * the user). 0 and *project (canonical, malloc'd), -ENOENT or -errno.
 */
int sbx_project_find(const char *start, char **project);

/*
 * The project a command acts on: explicit (a DIR, --project or --dir
 * argument) as given, canonical; otherwise the one around the current
 * directory. When there is none: -ENOENT, and *err says so, naming the
 * directory and `bpfsbx init` (malloc'd, for the caller to print).
 */
int sbx_project_resolve(const char *explicit_dir, char **project, char **err);

#endif
