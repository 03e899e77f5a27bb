// SPDX-License-Identifier: GPL-2.0
/* The sandbox: section: switches for built-in protections. */
#include <stdlib.h>
#include <string.h>
#include "policy/policy.h"
#include "tests/unit/unit.h"

char *pt_path(const char *fmt, ...);
struct sbx_policy *pt_compile(const char *yaml, const char *home, const char *project,
			      struct sbx_compiled *c, struct sbx_diags *d);

static uint32_t flags_of(const char *extra, bool *ok)
{
	char *y = pt_path("version: 1\nfiles: {default: allow}\nnetwork: {default: allow}\n%s",
			  extra);
	struct sbx_compiled c = {};
	struct sbx_diags d = {};
	struct sbx_policy *p = pt_compile(y, "/home/u", "/proj", &c, &d);
	uint32_t f = p ? c.hdr.flags : 0;

	*ok = p != NULL;
	sbx_compiled_free(&c);
	sbx_policy_free(p);
	sbx_diags_free(&d);
	free(y);
	return f;
}

SBX_TEST(policy_sandbox, defaults_deny_everything)
{
	bool ok;
	uint32_t f = flags_of("", &ok);

	CU_ASSERT_TRUE(ok);
	CU_ASSERT_EQUAL(f & (SBX_PF_ALLOW_USERNS | SBX_PF_ALLOW_MEMFD_EXEC | SBX_PF_ALLOW_SETUID), 0);
}

SBX_TEST(policy_sandbox, switches_set_header_flags)
{
	bool ok;
	uint32_t f = flags_of("sandbox: {userns: allow, memfd_exec: deny, setuid_exec: allow}\n", &ok);

	CU_ASSERT_TRUE(ok);
	CU_ASSERT_TRUE(f & SBX_PF_ALLOW_USERNS);
	CU_ASSERT_FALSE(f & SBX_PF_ALLOW_MEMFD_EXEC);
	CU_ASSERT_TRUE(f & SBX_PF_ALLOW_SETUID);
}

SBX_TEST(policy_sandbox, bad_values_and_keys_are_errors)
{
	const char *bad[] = {
		"sandbox: {userns: maybe}\n",
		"sandbox: {ptrace: allow}\n",
		"sandbox: allow\n",
		"sandbox: {userns: [allow]}\n",
	};

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		char *y = pt_path("version: 1\nfiles: {default: allow}\nnetwork: {default: allow}\n%s",
				  bad[i]);
		struct sbx_compiled c = {};
		struct sbx_diags d = {};
		struct sbx_policy *p = pt_compile(y, "/home/u", "/proj", &c, &d);

		bool named = false;

		CU_ASSERT_PTR_NULL(p);
		/* the error names the field, with its line and column */
		for (size_t j = 0; j < d.n; j++)
			if (d.v[j].level == SBX_DIAG_ERROR && d.v[j].field &&
			    !strncmp(d.v[j].field, "sandbox", 7) && d.v[j].line == 4)
				named = true;
		CU_ASSERT_TRUE(named);
		sbx_compiled_free(&c);
		sbx_policy_free(p);
		sbx_diags_free(&d);
		free(y);
	}
}
