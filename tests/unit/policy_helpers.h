/* SPDX-License-Identifier: GPL-2.0 */
/* Helpers for the policy tests (tests/unit/policy_common.c): scratch
 * trees, loading and compiling a policy text, and the rules, probes and
 * tree of the permutation test (policy_permute.c), which the Landlock
 * tier's differential test reuses. */
#ifndef SBX_TEST_POLICY_HELPERS_H
#define SBX_TEST_POLICY_HELPERS_H

#include <stdbool.h>
#include <stddef.h>
#include "policy/policy.h"

int pt_resolve(const char *host, struct sbx_addr **out, size_t *n, void *ctx);
void pt_env(struct sbx_policy_env *env, const char *home, const char *project);
char *pt_path(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void pt_mkdirs(const char *path);
int pt_write(const char *path, const char *text);
void pt_dirs(const char *tmp, char **home, char **proj);
struct sbx_policy *pt_load(const char *yaml, const char *home, const char *project,
			   struct sbx_diags *d);
char *pt_dump(const struct sbx_compiled *c, const struct sbx_policy *p);
struct sbx_policy *pt_compile(const char *yaml, const char *home, const char *project,
			      struct sbx_compiled *c, struct sbx_diags *d);
int pt_verdict(const struct sbx_compiled *c, const char *path, enum sbx_access a);
bool pt_has_diag(const struct sbx_diags *d, enum sbx_diag_level lvl, const char *substr);

extern const char *const pt_permute_file_rules[];
extern const size_t pt_permute_n_file_rules;
extern const char *const pt_permute_probes[];
extern const size_t pt_permute_n_probes;
void pt_permute_tree(const char *home, const char *proj);

#endif
