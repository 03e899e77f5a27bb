/* SPDX-License-Identifier: GPL-2.0 */
/*
 * sha256.h - SHA-256, by libcrypto, which is opened at the first hash
 * (lib/dynload.c): linking it costs every start of bpfsbx 2.8 M
 * instructions of relocation, and only the audit chain, the queue's
 * markers, approved commands and `init` hash anything.
 *
 * Every function fails (returns -1) when libcrypto cannot be opened;
 * callers treat that as they treat any hashing error: fail closed.
 */
#ifndef SBX_SHA256_H
#define SBX_SHA256_H

#include <stddef.h>

#define SBX_SHA256_LEN 32
#define SBX_SHA256_HEX (2 * SBX_SHA256_LEN + 1)

struct sbx_sha256 {
	void *ctx;	/* libcrypto's EVP_MD_CTX */
};

int sbx_sha256_init(struct sbx_sha256 *s);
int sbx_sha256_update(struct sbx_sha256 *s, const void *p, size_t n);
/* writes the digest and frees the context, also on failure */
int sbx_sha256_final(struct sbx_sha256 *s, unsigned char md[SBX_SHA256_LEN]);
/* frees a context that was never finished (a no-op after final) */
void sbx_sha256_free(struct sbx_sha256 *s);

int sbx_sha256(const void *p, size_t n, unsigned char md[SBX_SHA256_LEN]);
/* lower-case hex of the digest; "" (and -1) when hashing failed */
int sbx_sha256_hex(const void *p, size_t n, char out[SBX_SHA256_HEX]);
void sbx_hex(const unsigned char *md, size_t n, char *out);

/* 1 when equal, compared in time independent of the contents (tokens) */
int sbx_secret_eq(const void *a, const void *b, size_t n);

/* why libcrypto could not be opened, or NULL */
const char *sbx_crypto_error(void);

#endif
