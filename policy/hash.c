// SPDX-License-Identifier: GPL-2.0
/*
 * hash.c - the user-space twins of the kernel's name hashes (bpf/bpfsbx.h).
 *
 * The kernel never compares names as strings: it hashes dentry names and
 * looks the hashes up. These functions must give bit-identical results;
 * tests/unit/policy_hash.c pins them with vectors.
 */
#include <string.h>
#include "policy/policy.h"

uint64_t sbx_hash_name(const char *s, size_t len)
{
	uint64_t h = SBX_FNV_OFFSET;

	for (size_t i = 0; i < len; i++) {
		h ^= (uint8_t)s[i];
		h *= SBX_FNV_PRIME;
	}
	return h;
}

uint64_t sbx_hash_suffix(const char *lit, size_t len)
{
	uint64_t h = SBX_FNV_OFFSET;

	/* reversed, so that the kernel can hash the last L bytes of a name
	 * walking backwards from its end without knowing L in advance */
	for (size_t i = len; i > 0; i--) {
		h ^= (uint8_t)lit[i - 1];
		h *= SBX_FNV_PRIME;
	}
	return h;
}

uint64_t sbx_hash_chain(const char *const *names, size_t m)
{
	uint64_t h = SBX_CHAIN_SEED;

	for (size_t i = 0; i < m; i++)
		h = sbx_mix64(h ^ sbx_hash_name(names[i], strlen(names[i])));
	return h;
}
