// SPDX-License-Identifier: GPL-2.0
/*
 * libFuzzer target for the policy editor (policy/edit.c): every input is a
 * person's policy file that an approver adds a rule to. Whatever the text,
 * the editor either refuses it or gives a text whose files and network
 * lists end with exactly the rule added, read back by the same marks.
 *
 *   make fuzz && build/fuzz/fuzz_edit tools/fuzz/corpus/fuzz_edit
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "policy/edit.h"

static char *item[] = { "- path: ~/.local/share/tool/\n  access: write\n  verdict: allow\n"
			"  reason: 'approved by p, widened from request X'\n" };

/* the bytes that are not white space: a length that the editor's layout
 * changes (the spaces it trims) cannot make smaller */
static long graphs(const char *s, size_t n)
{
	long g = 0;

	for (size_t i = 0; i < n; i++)
		g += s[i] && !strchr(" \t\r\n", s[i]);
	return g;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const enum sbx_section secs[] = { SBX_SEC_FILES, SBX_SEC_NETWORK };
	char *text = malloc(size + 1);

	if (!text)
		return 0;
	memcpy(text, data, size);
	text[size] = 0;
	for (size_t k = 0; k < 2; k++) {
		char *out = NULL, *err = NULL, **items = NULL;
		size_t n = 0;

		if (sbx_policy_text_add("fuzz.yaml", text, size, secs[k], item, 1, "note", &out,
					&err)) {
			if (!err)
				abort();	/* a refusal always says why */
			free(err);
			continue;
		}
		/* nothing of the text is lost: only the spaces before an empty
		 * "rules: []" and its brackets may go, the rule is all added */
		if (graphs(out, strlen(out)) < graphs(text, size) - 2 + graphs(item[0],
									 strlen(item[0])))
			abort();
		/* the rule is the section's last, as written */
		if (sbx_policy_rule_items("fuzz.yaml", out, strlen(out), secs[k], &items, &n, &err) ||
		    !n || strcmp(items[n - 1], item[0])) {
			fprintf(stderr, "edit: the rule is not read back (%s):\n%s\n---\n%s\n",
				err ? err : n ? items[n - 1] : "no items", text, out);
			abort();
		}
		sbx_policy_items_free(items, n);
		free(out);
	}
	free(text);
	return 0;
}
