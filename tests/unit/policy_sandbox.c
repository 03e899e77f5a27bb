// SPDX-License-Identifier: GPL-2.0
/* The sandbox: section: switches for built-in protections. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "lib/names.h"
#include "policy/policy.h"
#include "tests/unit/unit.h"
#include "tests/unit/policy_helpers.h"

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

/* compile a policy with `extra` appended; NULL on an error, diagnostics in d */
static struct sbx_policy *compile_extra(const char *files_rules, const char *extra,
					struct sbx_compiled *c, struct sbx_diags *d)
{
	char *y = pt_path("version: 1\nfiles:\n  default: {read: allow, write: deny, exec: allow}\n"
			  "  rules:\n%s"
			  "network: {default: allow}\n%s", files_rules, extra);
	struct sbx_policy *p = pt_compile(y, "/home/u", "/proj", c, d);

	free(y);
	return p;
}

static bool diag_says(const struct sbx_diags *d, const char *what)
{
	for (size_t i = 0; i < d->n; i++)
		if (strstr(d->v[i].msg, what))
			return true;
	return false;
}

/* issue 12: switches for the socket allowlist, SCTP, MPTCP, command lines */
SBX_TEST(policy_sandbox, new_switches_and_lists)
{
	struct sbx_compiled c = {};
	struct sbx_diags d = {};
	struct sbx_policy *p;

	p = compile_extra("    - {path: /x, verdict: deny, reason: r}\n",
			  "sandbox: {raw_sockets: allow, sctp: allow, mptcp: deny, proc_cmdline: allow,\n"
			  "  ping: allow, socket_families: [can, vsock], netlink: audit, keep_env: [DISPLAY, TMUX]}\n",
			  &c, &d);
	CU_ASSERT_PTR_NOT_NULL_FATAL(p);
	CU_ASSERT_TRUE(c.hdr.flags & SBX_PF_ALLOW_RAW);
	CU_ASSERT_TRUE(c.hdr.flags & SBX_PF_ALLOW_SCTP);
	CU_ASSERT_FALSE(c.hdr.flags & SBX_PF_ALLOW_MPTCP);
	CU_ASSERT_TRUE(c.hdr.flags & SBX_PF_PROC_CMDLINE);
	CU_ASSERT_TRUE(c.hdr.flags & SBX_PF_ALLOW_PING);
	CU_ASSERT_EQUAL(c.hdr.family_allow, (1ull << 29) | (1ull << 40));
	CU_ASSERT_EQUAL(c.hdr.netlink_allow, SBX_NETLINK_DEFAULT | (1u << 9));
	CU_ASSERT_EQUAL(c.hdr.keep_env, (1u << sbx_scrubbed_env_index("DISPLAY")) |
					(1u << sbx_scrubbed_env_index("TMUX")));
	sbx_compiled_free(&c);
	sbx_policy_free(p);
	sbx_diags_free(&d);

	/* nothing said: the defaults of the allowlist */
	p = compile_extra("    - {path: /x, verdict: deny, reason: r}\n", "", &c, &d);
	CU_ASSERT_PTR_NOT_NULL_FATAL(p);
	CU_ASSERT_EQUAL(c.hdr.family_allow, 0);
	CU_ASSERT_FALSE(c.hdr.flags & SBX_PF_ALLOW_PING);
	CU_ASSERT_EQUAL(c.hdr.netlink_allow, SBX_NETLINK_DEFAULT);
	CU_ASSERT_EQUAL(c.hdr.keep_env, 0);
	CU_ASSERT_EQUAL(c.hdr.file_default[SBX_ACC_CONNECT], SBX_V_DENY);
	CU_ASSERT_EQUAL(c.hdr.file_default_rule[SBX_ACC_CONNECT], SBX_RULE_LISTENER_OUTSIDE);
	CU_ASSERT_EQUAL(c.hdr.loopback_outside, SBX_V_ASK);
	sbx_compiled_free(&c);
	sbx_policy_free(p);
	sbx_diags_free(&d);
}

SBX_TEST(policy_sandbox, bad_lists_name_what_is_known)
{
	static const struct { const char *extra, *says; } bad[] = {
		{ "sandbox: {socket_families: [martian]}\n", "bluetooth" },
		{ "sandbox: {socket_families: inet}\n", "bluetooth" },	/* always allowed: not a name it takes */
		{ "sandbox: {netlink: [nope]}\n", "route" },
		{ "sandbox: {keep_env: [HOME]}\n", "kept anyway" },
		{ "sandbox: {keep_env: [\"a b\"]}\n", "environment variable" },
	};

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct sbx_compiled c = {};
		struct sbx_diags d = {};
		struct sbx_policy *p = compile_extra("    - {path: /x, verdict: deny, reason: r}\n",
						     bad[i].extra, &c, &d);

		CU_ASSERT_PTR_NULL(p);
		CU_ASSERT_TRUE(diag_says(&d, bad[i].says));
		if (p)
			sbx_compiled_free(&c);
		sbx_policy_free(p);
		sbx_diags_free(&d);
	}
}

/* abstract socket names: exact and prefix rules, decided as the kernel does */
SBX_TEST(policy_sandbox, abstract_names_decide_connect)
{
	struct sbx_compiled c = {};
	struct sbx_diags d = {};
	struct sbx_decision dec;
	struct sbx_policy *p;

	p = compile_extra("    - {path: \"@/tmp/dbus-*\", verdict: ask, reason: bus}\n"
			  "    - {path: \"@journal\", access: connect, verdict: allow, reason: log}\n"
			  "    - {path: \"@/tmp/dbus-ok\", verdict: allow, reason: one bus}\n", "", &c, &d);
	CU_ASSERT_PTR_NOT_NULL_FATAL(p);
	CU_ASSERT_EQUAL(sbx_decide_abstract(&c, "journal", 7, &dec), 0);
	CU_ASSERT_EQUAL(dec.verdict, SBX_V_ALLOW);
	CU_ASSERT_EQUAL(sbx_decide_abstract(&c, "/tmp/dbus-XYZ", 13, &dec), 0);
	CU_ASSERT_EQUAL(dec.verdict, SBX_V_ASK);
	/* the exact name is more specific than the prefix */
	CU_ASSERT_EQUAL(sbx_decide_abstract(&c, "/tmp/dbus-ok", 12, &dec), 0);
	CU_ASSERT_EQUAL(dec.verdict, SBX_V_ALLOW);
	/* nothing matches: the connect default */
	CU_ASSERT_EQUAL(sbx_decide_abstract(&c, "/tmp/.X11-unix/X0", 17, &dec), 0);
	CU_ASSERT_EQUAL(dec.verdict, SBX_V_DENY);
	CU_ASSERT_EQUAL(dec.rule_id, SBX_RULE_LISTENER_OUTSIDE);
	/* bytes after a NUL are part of the name */
	CU_ASSERT_EQUAL(sbx_decide_abstract(&c, "journal\0x", 9, &dec), 0);
	CU_ASSERT_EQUAL(dec.verdict, SBX_V_DENY);
	CU_ASSERT_NOT_EQUAL(c.hdr.abstract_len_mask & (1ull << 10), 0);	/* "/tmp/dbus-" */
	sbx_compiled_free(&c);
	sbx_policy_free(p);
	sbx_diags_free(&d);
}

SBX_TEST(policy_sandbox, abstract_names_bad_forms)
{
	static const struct { const char *rules, *says; } bad[] = {
		{ "    - {path: [\"@a\", /b], verdict: deny, reason: r}\n", "own" },
		{ "    - {path: \"@a\", access: read, verdict: deny, reason: r}\n", "connect" },
		{ "    - {path: \"@\", verdict: deny, reason: r}\n", "@" },
		{ "    - {path: \"@a*b\", verdict: deny, reason: r}\n", "*" },
	};

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct sbx_compiled c = {};
		struct sbx_diags d = {};
		struct sbx_policy *p = compile_extra(bad[i].rules, "", &c, &d);

		CU_ASSERT_PTR_NULL(p);
		if (!diag_says(&d, bad[i].says))
			fprintf(stderr, "case %zu: no diagnostic says '%s'\n", i, bad[i].says);
		CU_ASSERT_TRUE(diag_says(&d, bad[i].says));
		if (p)
			sbx_compiled_free(&c);
		sbx_policy_free(p);
		sbx_diags_free(&d);
	}
}
