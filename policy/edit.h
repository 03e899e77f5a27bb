/* SPDX-License-Identifier: GPL-2.0 */
/*
 * edit.h - a rule added to a policy file the way a person would add it:
 * the file's own text is kept (comments, order, quoting) and the rule's
 * lines go after the last rule of its section. What an approver writes
 * when it widens "always" into a rule (queue/propose.c).
 */
#ifndef SBX_POLICY_EDIT_H
#define SBX_POLICY_EDIT_H

#include <stddef.h>
#include "policy/policy.h"

/*
 * The text of each item of SEC.rules in the policy text, as written,
 * dedented so that its "-" is in the first column (what sbx_policy_text_add
 * takes). 0 with *items (malloc'd, each malloc'd) and *n; -1 with *err
 * ("NAME:LINE:COL: ...") when the text is not a YAML mapping or its list
 * is not one the editor can cut (a flow-style [...] list).
 */
int sbx_policy_rule_items(const char *name, const char *text, size_t len, enum sbx_section sec,
			  char ***items, size_t *n, char **err);
void sbx_policy_items_free(char **items, size_t n);

/*
 * text with the items added at the end of SEC.rules, each after the
 * comment line note (without "#"; NULL: none), indented as that list's
 * items are. A section or a rules: key that is missing is added. 0 with
 * *out (malloc'd); -1 with *err naming the line when the text's shape is
 * one the editor will not rewrite (a flow-style section or non-empty
 * flow list, a document that is not a mapping).
 */
int sbx_policy_text_add(const char *name, const char *text, size_t len, enum sbx_section sec,
			char *const *items, size_t n, const char *note, char **out, char **err);

/*
 * The policy file path with the items added (created, extending
 * agent-default, when it does not exist). The new text is loaded and
 * compiled with env (the machine floor included) before it replaces the
 * file: under flock of the file's directory, through a temporary file
 * renamed over it, with the old file's owner and mode (a new one: the
 * directory's owner, 0644). A symlink is refused. 0, or -1 with *err and
 * the file unchanged. *text_out (may be NULL): the text written.
 */
int sbx_policy_file_add(const char *path, enum sbx_section sec, char *const *items, size_t n,
			const char *note, const struct sbx_policy_env *env, char **text_out,
			char **err);

#endif
