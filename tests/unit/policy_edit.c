// SPDX-License-Identifier: GPL-2.0
/*
 * The policy editor (policy/edit.c): a rule goes after the last rule of
 * its section, indented as that list is, and every other byte of the
 * person's file stays as it was (comments, quoting, UTF-8); a missing
 * section or rules: key is added; a shape it will not rewrite is an error
 * with the line; the file is replaced only by a text that loads, compiles
 * and keeps its owner and mode.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include "lib/alloc.h"
#include "lib/fileio.h"
#include "policy/edit.h"
#include "tests/unit/unit.h"
#include "tests/unit/policy_helpers.h"

static char *item_a[] = { "- path: ~/.local/share/pnpm/\n  access: write\n  verdict: allow\n"
			  "  reason: pnpm's store\n" };

static char *add(const char *text, enum sbx_section sec, const char *note)
{
	char *out = NULL, *err = NULL;

	if (sbx_policy_text_add("p.yaml", text, strlen(text), sec, item_a, 1, note, &out, &err)) {
		fprintf(stderr, "add: %s\n", err ? err : "?");
		free(err);
		return NULL;
	}
	return out;
}

SBX_TEST(policy_edit, after_the_last_rule_with_every_byte_kept)
{
	const char *in =
		"# my policy — ünïcode here\n"
		"version: 1\n"
		"extends: agent-default\n"
		"files:\n"
		"    rules:\n"
		"      # the build\n"
		"      - path: \"${PROJECT}/out/\"   # quoted, with a comment\n"
		"        access: [write]\n"
		"        verdict: allow\n"
		"        reason: |\n"
		"          a block scalar\n"
		"          of two lines\n"
		"    # end of the rules\n"
		"network:\n"
		"  default: ask\n";
	const char *want =
		"# my policy — ünïcode here\n"
		"version: 1\n"
		"extends: agent-default\n"
		"files:\n"
		"    rules:\n"
		"      # the build\n"
		"      - path: \"${PROJECT}/out/\"   # quoted, with a comment\n"
		"        access: [write]\n"
		"        verdict: allow\n"
		"        reason: |\n"
		"          a block scalar\n"
		"          of two lines\n"
		"      # from request X\n"
		"      - path: ~/.local/share/pnpm/\n"
		"        access: write\n"
		"        verdict: allow\n"
		"        reason: pnpm's store\n"
		"    # end of the rules\n"
		"network:\n"
		"  default: ask\n";
	char *out = add(in, SBX_SEC_FILES, "from request X");

	CU_ASSERT_PTR_NOT_NULL_FATAL(out);
	CU_ASSERT_STRING_EQUAL(out, want);
	free(out);
}

SBX_TEST(policy_edit, indentless_list_and_no_final_newline)
{
	char *out = add("version: 1\nextends: agent-default\nfiles:\n  rules:\n  - path: /opt/x/\n"
			"    verdict: allow\n    reason: r", SBX_SEC_FILES, NULL);

	CU_ASSERT_PTR_NOT_NULL_FATAL(out);
	CU_ASSERT_STRING_EQUAL(out, "version: 1\nextends: agent-default\nfiles:\n  rules:\n"
			       "  - path: /opt/x/\n    verdict: allow\n    reason: r\n"
			       "  - path: ~/.local/share/pnpm/\n    access: write\n"
			       "    verdict: allow\n    reason: pnpm's store\n");
	free(out);
}

SBX_TEST(policy_edit, missing_rules_key_and_missing_section)
{
	char *out = add("version: 1\nextends: agent-default\nfiles:\n  default: {write: ask}\n"
			"network:\n  default: ask\n", SBX_SEC_FILES, NULL);

	CU_ASSERT_PTR_NOT_NULL_FATAL(out);
	CU_ASSERT_STRING_EQUAL(out, "version: 1\nextends: agent-default\nfiles:\n"
			       "  default: {write: ask}\n  rules:\n"
			       "    - path: ~/.local/share/pnpm/\n      access: write\n"
			       "      verdict: allow\n      reason: pnpm's store\n"
			       "network:\n  default: ask\n");
	free(out);
	out = add("version: 1\nextends: agent-default\n", SBX_SEC_FILES, "n");
	CU_ASSERT_PTR_NOT_NULL_FATAL(out);
	CU_ASSERT_STRING_EQUAL(out, "version: 1\nextends: agent-default\nfiles:\n  rules:\n"
			       "    # n\n    - path: ~/.local/share/pnpm/\n      access: write\n"
			       "      verdict: allow\n      reason: pnpm's store\n");
	free(out);
}

SBX_TEST(policy_edit, empty_flow_list_becomes_a_block_list)
{
	char *out = add("version: 1\nfiles:\n  rules: []\n  default: allow\n", SBX_SEC_FILES, NULL);

	CU_ASSERT_PTR_NOT_NULL_FATAL(out);
	CU_ASSERT_STRING_EQUAL(out, "version: 1\nfiles:\n  rules:\n"
			       "    - path: ~/.local/share/pnpm/\n      access: write\n"
			       "      verdict: allow\n      reason: pnpm's store\n  default: allow\n");
	free(out);
}

/* a tag or an anchor on the empty list stays with the key (the list's
 * mark starts at it: the editor once cut from there, dropping it) */
SBX_TEST(policy_edit, empty_flow_list_keeps_its_tag_and_anchor)
{
	char *out = add("version: 1\nfiles:\n  rules: &r !!seq [ ]  # none yet\n", SBX_SEC_FILES,
			NULL);

	CU_ASSERT_PTR_NOT_NULL_FATAL(out);
	CU_ASSERT_STRING_EQUAL(out, "version: 1\nfiles:\n  rules: &r !!seq  # none yet\n"
			       "    - path: ~/.local/share/pnpm/\n      access: write\n"
			       "      verdict: allow\n      reason: pnpm's store\n");
	/* and then a block list with them: items at the "-" column */
	{
		char *again = add(out, SBX_SEC_FILES, NULL);

		CU_ASSERT_PTR_NOT_NULL(again);
		CU_ASSERT(again && strstr(again, "      reason: pnpm's store\n    - path:"));
		free(again);
	}
	/* a tagged list whose item begins on the line after its "-" */
	{
		char *again = add("version: 1\nfiles:\n  rules: !!seq\n  -\n    path: /a\n"
				  "    verdict: allow\n    reason: r\n", SBX_SEC_FILES, NULL);

		CU_ASSERT_PTR_NOT_NULL(again);
		CU_ASSERT(again && strstr(again, "    reason: r\n  - path: ~/.local/share/pnpm/\n"));
		free(again);
	}
	free(out);
}

SBX_TEST(policy_edit, shapes_it_will_not_rewrite_name_the_line)
{
	static const char *const bad[] = {
		"version: 1\nfiles:\n  rules: [{path: /a, verdict: allow, reason: r}]\n",
		"version: 1\nfiles: {default: allow}\n",
		"{version: 1}\n",
		"- a\n- b\n",
		"version: 1\nfiles:\n  rules: 3\n",
		"version: 1\nfiles: [\n",
	};
	static const char *const line[] = { "p.yaml:3:", "p.yaml:2:", "p.yaml:1", "p.yaml:1",
					     "p.yaml:3:", "p.yaml:" };

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		char *out = NULL, *err = NULL;

		CU_ASSERT_EQUAL(sbx_policy_text_add("p.yaml", bad[i], strlen(bad[i]), SBX_SEC_FILES,
						    item_a, 1, NULL, &out, &err), -1);
		CU_ASSERT_PTR_NULL(out);
		CU_ASSERT_PTR_NOT_NULL_FATAL(err);
		if (strncmp(err, line[i], strlen(line[i])))
			fprintf(stderr, "case %zu: %s\n", i, err);
		CU_ASSERT_EQUAL(strncmp(err, line[i], strlen(line[i])), 0);
		free(err);
	}
}

SBX_TEST(policy_edit, items_read_back_as_written)
{
	const char *text = "network:\n  rules:\n    # c\n    - host: a.example\n      verdict: allow\n"
			   "      reason: \"x: y\"\n    - {cidr: 10.0.0.0/8, verdict: deny, reason: r}\n";
	char **items = NULL, *err = NULL;
	size_t n = 0;

	CU_ASSERT_EQUAL_FATAL(sbx_policy_rule_items("p", text, strlen(text), SBX_SEC_NETWORK,
						    &items, &n, &err), 0);
	CU_ASSERT_EQUAL_FATAL(n, 2);
	CU_ASSERT_STRING_EQUAL(items[0], "- host: a.example\n  verdict: allow\n  reason: \"x: y\"\n");
	CU_ASSERT_STRING_EQUAL(items[1], "- {cidr: 10.0.0.0/8, verdict: deny, reason: r}\n");
	sbx_policy_items_free(items, n);
	CU_ASSERT_EQUAL(sbx_policy_rule_items("p", text, strlen(text), SBX_SEC_FILES, &items, &n,
					      &err), 0);
	CU_ASSERT_EQUAL(n, 0);
	sbx_policy_items_free(items, n);
}

SBX_TEST(policy_edit, file_replaced_only_by_a_policy_that_loads)
{
	char *home, *proj, *path, *text = NULL, *err = NULL, *before = NULL;
	struct sbx_policy_env env;
	static char *bad_item[] = { "- path: ~/x\n  verdict: maybe\n  reason: r\n" };
	struct stat st;
	size_t len;

	pt_dirs(sbx_unit_tmpdir(), &home, &proj);
	env = (struct sbx_policy_env){ .home = home, .project = proj, .shipped_dir = "policy/shipped",
				       .no_machine = true };
	path = sbx_asprintf("%s/policy.yaml", proj);
	/* a new file extends agent-default */
	CU_ASSERT_EQUAL_FATAL(sbx_policy_file_add(path, SBX_SEC_FILES, item_a, 1, "n", &env, &text,
						  &err), 0);
	CU_ASSERT_PTR_NOT_NULL(strstr(text, "extends: agent-default\n"));
	free(text);
	CU_ASSERT_EQUAL(stat(path, &st), 0);
	CU_ASSERT_EQUAL(st.st_mode & 07777, 0644);
	CU_ASSERT_EQUAL(chmod(path, 0640), 0);
	CU_ASSERT_EQUAL(sbx_read_file(path, 1 << 20, &before, &len), 0);
	/* a rule that does not load: refused, the file untouched */
	CU_ASSERT_EQUAL(sbx_policy_file_add(path, SBX_SEC_FILES, bad_item, 1, NULL, &env, NULL,
					    &err), -1);
	CU_ASSERT_PTR_NOT_NULL(err && strstr(err, "does not load"));
	free(err);
	err = NULL;
	CU_ASSERT_EQUAL(sbx_read_file(path, 1 << 20, &text, &len), 0);
	CU_ASSERT_STRING_EQUAL(text, before);
	free(text);
	/* a second rule keeps the mode */
	CU_ASSERT_EQUAL(sbx_policy_file_add(path, SBX_SEC_NETWORK, (char *[]){ "- host: a.example\n"
			"  verdict: allow\n  reason: r\n" }, 1, NULL, &env, NULL, &err), 0);
	CU_ASSERT_EQUAL(stat(path, &st), 0);
	CU_ASSERT_EQUAL(st.st_mode & 07777, 0640);
	/* a symlink is not followed */
	{
		char *link = sbx_asprintf("%s/link.yaml", proj);

		CU_ASSERT_EQUAL(symlink(path, link), 0);
		CU_ASSERT_EQUAL(sbx_policy_file_add(link, SBX_SEC_FILES, item_a, 1, NULL, &env, NULL,
						    &err), -1);
		free(err);
		free(link);
	}
	free(before);
	free(path);
	free(home);
	free(proj);
}
