// SPDX-License-Identifier: GPL-2.0
/*
 * lib/sha256.c against the FIPS 180-2 test vectors, in one piece and fed
 * in pieces (the approved-command path hashes output as it arrives), and
 * the token comparison.
 */
#include <string.h>
#include "lib/sha256.h"
#include "tests/unit/unit.h"

static const struct {
	const char *msg;
	const char *hex;
} vectors[] = {
	{ "", "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855" },
	{ "abc", "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad" },
	{ "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq",
	  "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1" },
};

SBX_TEST(lib, sha256_vectors_whole_and_in_pieces)
{
	for (size_t i = 0; i < sizeof(vectors) / sizeof(vectors[0]); i++) {
		const char *m = vectors[i].msg;
		size_t n = strlen(m);
		unsigned char md[SBX_SHA256_LEN];
		char hex[SBX_SHA256_HEX];
		struct sbx_sha256 s;

		CU_ASSERT_EQUAL(sbx_sha256_hex(m, n, hex), 0);
		CU_ASSERT_STRING_EQUAL(hex, vectors[i].hex);
		/* one byte at a time */
		CU_ASSERT_EQUAL_FATAL(sbx_sha256_init(&s), 0);
		for (size_t k = 0; k < n; k++)
			CU_ASSERT_EQUAL(sbx_sha256_update(&s, m + k, 1), 0);
		CU_ASSERT_EQUAL(sbx_sha256_final(&s, md), 0);
		CU_ASSERT_PTR_NULL(s.ctx);
		sbx_hex(md, sizeof(md), hex);
		CU_ASSERT_STRING_EQUAL(hex, vectors[i].hex);
	}
}

SBX_TEST(lib, sha256_million_a)
{
	static char block[1000];
	unsigned char md[SBX_SHA256_LEN];
	char hex[SBX_SHA256_HEX];
	struct sbx_sha256 s;

	memset(block, 'a', sizeof(block));
	CU_ASSERT_EQUAL_FATAL(sbx_sha256_init(&s), 0);
	for (int i = 0; i < 1000; i++)
		CU_ASSERT_EQUAL(sbx_sha256_update(&s, block, sizeof(block)), 0);
	CU_ASSERT_EQUAL(sbx_sha256_final(&s, md), 0);
	sbx_hex(md, sizeof(md), hex);
	CU_ASSERT_STRING_EQUAL(hex, "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
	CU_ASSERT_PTR_NULL(sbx_crypto_error());
}

SBX_TEST(lib, sha256_free_without_final_and_secret_eq)
{
	struct sbx_sha256 s;

	CU_ASSERT_EQUAL_FATAL(sbx_sha256_init(&s), 0);
	CU_ASSERT_EQUAL(sbx_sha256_update(&s, "x", 1), 0);
	sbx_sha256_free(&s);	/* ASan: nothing leaks */
	CU_ASSERT_PTR_NULL(s.ctx);
	sbx_sha256_free(&s);	/* twice is harmless */
	CU_ASSERT_EQUAL(sbx_sha256_update(&s, "x", 1), -1);
	CU_ASSERT_TRUE(sbx_secret_eq("0123456789abcdef", "0123456789abcdef", 16));
	CU_ASSERT_FALSE(sbx_secret_eq("0123456789abcdef", "0123456789abcdeF", 16));
	CU_ASSERT_FALSE(sbx_secret_eq("x123456789abcdef", "0123456789abcdef", 16));
}
