// SPDX-License-Identifier: GPL-2.0
/*
 * sha256.c - SHA-256 through libcrypto's EVP interface, looked up at the
 * first call (see sha256.h for why it is not linked).
 */
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <stdbool.h>
#include "lib/dynload.h"
#include "lib/sha256.h"


static struct {
	__typeof__(EVP_MD_CTX_new) *ctx_new;
	__typeof__(EVP_MD_CTX_free) *ctx_free;
	__typeof__(EVP_sha256) *sha256;
	__typeof__(EVP_DigestInit_ex) *init;
	__typeof__(EVP_DigestUpdate) *update;
	__typeof__(EVP_DigestFinal_ex) *final;
	__typeof__(CRYPTO_memcmp) *memcmp;
	bool loaded;
} evp;

#define LOOKUP(field, name) (evp.field = sbx_dynsym(&sbx_libcrypto, name))

static bool load(void)
{
	/* each pointer is written once, with the same value, before
	 * `loaded` says so; a second thread that loads too writes the same */
	if (__atomic_load_n(&evp.loaded, __ATOMIC_ACQUIRE))
		return true;
	if (!(LOOKUP(ctx_new, "EVP_MD_CTX_new") && LOOKUP(ctx_free, "EVP_MD_CTX_free") &&
	      LOOKUP(sha256, "EVP_sha256") && LOOKUP(init, "EVP_DigestInit_ex") &&
	      LOOKUP(update, "EVP_DigestUpdate") && LOOKUP(final, "EVP_DigestFinal_ex") &&
	      LOOKUP(memcmp, "CRYPTO_memcmp")))
		return false;
	__atomic_store_n(&evp.loaded, true, __ATOMIC_RELEASE);
	return true;
}

const char *sbx_crypto_error(void)
{
	return load() ? NULL : sbx_libcrypto.error ? sbx_libcrypto.error : "a symbol is missing";
}

int sbx_sha256_init(struct sbx_sha256 *s)
{
	s->ctx = NULL;
	if (!load() || !(s->ctx = evp.ctx_new()))
		return -1;
	if (!evp.init(s->ctx, evp.sha256(), NULL)) {
		sbx_sha256_free(s);
		return -1;
	}
	return 0;
}

int sbx_sha256_update(struct sbx_sha256 *s, const void *p, size_t n)
{
	return s->ctx && evp.update(s->ctx, p, n) ? 0 : -1;
}

int sbx_sha256_final(struct sbx_sha256 *s, unsigned char md[SBX_SHA256_LEN])
{
	unsigned char buf[EVP_MAX_MD_SIZE];
	unsigned int len = 0;
	int ok = s->ctx && evp.final(s->ctx, buf, &len) && len == SBX_SHA256_LEN;

	sbx_sha256_free(s);
	if (!ok)
		return -1;
	for (unsigned int i = 0; i < SBX_SHA256_LEN; i++)
		md[i] = buf[i];
	return 0;
}

void sbx_sha256_free(struct sbx_sha256 *s)
{
	if (s->ctx)
		evp.ctx_free(s->ctx);
	s->ctx = NULL;
}

int sbx_sha256(const void *p, size_t n, unsigned char md[SBX_SHA256_LEN])
{
	struct sbx_sha256 s;

	if (sbx_sha256_init(&s) || sbx_sha256_update(&s, p, n)) {
		sbx_sha256_free(&s);
		return -1;
	}
	return sbx_sha256_final(&s, md);
}

void sbx_hex(const unsigned char *md, size_t n, char *out)
{
	static const char digits[] = "0123456789abcdef";

	for (size_t i = 0; i < n; i++) {
		out[2 * i] = digits[md[i] >> 4];
		out[2 * i + 1] = digits[md[i] & 15];
	}
	out[2 * n] = 0;
}

int sbx_sha256_hex(const void *p, size_t n, char out[SBX_SHA256_HEX])
{
	unsigned char md[SBX_SHA256_LEN];

	out[0] = 0;
	if (sbx_sha256(p, n, md))
		return -1;
	sbx_hex(md, sizeof(md), out);
	return 0;
}

int sbx_secret_eq(const void *a, const void *b, size_t n)
{
	/* without libcrypto nothing is equal: a token check fails closed */
	return load() && evp.memcmp(a, b, n) == 0;
}
