// SPDX-License-Identifier: GPL-2.0
/*
 * libFuzzer target for the policy editor (policy/edit.c): every input is a
 * person's policy file that an approver adds a rule to. Whatever the text,
 * the editor either refuses it or gives a text whose files and network
 * lists end with exactly the rule added, read back by the same marks.
 *
 *   make fuzz && build/fuzz/fuzz_edit tools/fuzz/corpus/fuzz_edit
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "policy/edit.h"

static char *item[] = { "- path: ~/.local/share/tool/\n  access: write\n  verdict: allow\n"
			"  reason: 'approved by p, widened from request X'\n" };

/* the text without white space (and without NULs, which end the text the
 * editor reads): what the editor's layout, the spaces it trims, leaves */
static char *graphs(const char *s, size_t n)
{
	char *g = malloc(n + 1), *o = g;

	if (!g)
		abort();
	for (size_t i = 0; i < n; i++)
		if (s[i] && !strchr(" \t\r\n", s[i]))
			*o++ = s[i];
	*o = 0;
	return g;
}

/* is every byte of a in b, in order? */
static bool kept(const char *a, const char *b)
{
	for (; *a; a++) {
		b = strchr(b, *a);
		if (!b)
			return false;
		b++;
	}
	return true;
}

/* Nothing of the text is lost: each byte that is not white space is in
 * the output, in order; only an empty list's "[]" may go. */
static bool nothing_lost(const char *text, size_t size, const char *out)
{
	char *in = graphs(text, size), *got = graphs(out, strlen(out)), *b;
	bool ok = kept(in, got);

	for (b = in; !ok && (b = strstr(b, "[]")); b++) {
		char *cut = strdup(in);

		if (!cut)
			abort();
		memmove(cut + (b - in), cut + (b - in) + 2, strlen(b + 2) + 1);
		ok = kept(cut, got);
		free(cut);
	}
	free(in);
	free(got);
	return ok;
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
		if (!nothing_lost(text, size, out)) {
			fprintf(stderr, "edit: bytes lost:\n%s\n---\n%s\n", text, out);
			abort();
		}
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
