// SPDX-License-Identifier: GPL-2.0
/*
 * Hash vectors that pin the user-space hashes to the kernel's
 * (bpf/bpfsbx.h). FNV-1a 64 values for "", "a" and "foobar" are the
 * published test vectors; the others were computed by an independent
 * implementation (Python) of the definitions in bpfsbx.h.
 */
#include <string.h>
#include "policy/policy.h"
#include "tests/unit/unit.h"

SBX_TEST(policy_hash, fnv1a_vectors)
{
	CU_ASSERT_EQUAL(sbx_hash_name("", 0), 0xcbf29ce484222325ULL);
	CU_ASSERT_EQUAL(sbx_hash_name("a", 1), 0xaf63dc4c8601ec8cULL);
	CU_ASSERT_EQUAL(sbx_hash_name("foobar", 6), 0x85944171f73967e8ULL);
	CU_ASSERT_EQUAL(sbx_hash_name(".env", 4), 0x3d265ca7884fe860ULL);
	CU_ASSERT_EQUAL(sbx_hash_name("id_rsa", 6), 0xe6ac194ff59ffa61ULL);
	/* only the first len bytes count: a prefix hash of a longer name */
	CU_ASSERT_EQUAL(sbx_hash_name("foobarbaz", 6), 0x85944171f73967e8ULL);
}

SBX_TEST(policy_hash, suffix_is_reversed)
{
	CU_ASSERT_EQUAL(sbx_hash_suffix(".pem", 4), 0x432e48a2e339d801ULL);
	CU_ASSERT_EQUAL(sbx_hash_suffix(".pem", 4), sbx_hash_name("mep.", 4));
	CU_ASSERT_NOT_EQUAL(sbx_hash_suffix(".pem", 4), sbx_hash_name(".pem", 4));
}

SBX_TEST(policy_hash, mix_and_chain_vectors)
{
	const char *one[] = { ".aws" };
	const char *two[] = { ".aws", "credentials" };
	const char *rev[] = { "credentials", ".aws" };
	const char *aa[] = { "a", "a" };

	CU_ASSERT_EQUAL(sbx_mix64(0), 0);
	CU_ASSERT_EQUAL(sbx_mix64(1), 0x5692161d100b05e5ULL);
	CU_ASSERT_EQUAL(sbx_hash_chain(one, 1), 0x0cb723103b7b6fdfULL);
	CU_ASSERT_EQUAL(sbx_hash_chain(two, 2), 0x0b4f4b362b2397f5ULL);
	/* top-down order matters, and equal names do not cancel */
	CU_ASSERT_NOT_EQUAL(sbx_hash_chain(rev, 2), sbx_hash_chain(two, 2));
	CU_ASSERT_EQUAL(sbx_hash_chain(aa, 2), 0xacb6476e8cf50220ULL);
	CU_ASSERT_EQUAL(sbx_hash_chain(NULL, 0), SBX_CHAIN_SEED);
}

SBX_TEST(policy_hash, verdict_names)
{
	CU_ASSERT_EQUAL(sbx_verdict_parse("deny"), SBX_V_DENY);
	CU_ASSERT_EQUAL(sbx_verdict_parse("ask"), SBX_V_ASK);
	CU_ASSERT_EQUAL(sbx_verdict_parse("audit"), SBX_V_AUDIT);
	CU_ASSERT_EQUAL(sbx_verdict_parse("allow"), SBX_V_ALLOW);
	CU_ASSERT_EQUAL(sbx_verdict_parse("none"), -1);
	CU_ASSERT_EQUAL(sbx_verdict_parse("Deny"), -1);
	CU_ASSERT_STRING_EQUAL(sbx_verdict_name(SBX_V_ASK), "ask");
	CU_ASSERT_STRING_EQUAL(sbx_access_name(SBX_ACC_EXEC), "exec");
	/* deny wins ties by being the largest */
	CU_ASSERT(SBX_V_DENY > SBX_V_ASK && SBX_V_ASK > SBX_V_AUDIT && SBX_V_AUDIT > SBX_V_ALLOW);
}
