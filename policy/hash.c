// SPDX-License-Identifier: GPL-2.0
/*
 * hash.c - the user-space twins of the kernel's name hashes (bpf/bpfsbx.h)
 * and the names of verdicts and access classes.
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

static const char *const verdict_names[SBX_V_MAX] = {
	[SBX_V_NONE] = "none",
	[SBX_V_ALLOW] = "allow",
	[SBX_V_AUDIT] = "audit",
	[SBX_V_ASK] = "ask",
	[SBX_V_DENY] = "deny",
};

const char *sbx_verdict_name(uint8_t v)
{
	return v < SBX_V_MAX ? verdict_names[v] : "invalid";
}

int sbx_verdict_parse(const char *s)
{
	/* "none" is internal: a policy cannot write it */
	for (int v = SBX_V_ALLOW; v < SBX_V_MAX; v++)
		if (s && !strcmp(s, verdict_names[v]))
			return v;
	return -1;
}

const char *sbx_access_name(enum sbx_access a)
{
	switch (a) {
	case SBX_ACC_READ: return "read";
	case SBX_ACC_WRITE: return "write";
	case SBX_ACC_EXEC: return "exec";
	default: return "invalid";
	}
}
