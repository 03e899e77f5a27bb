// SPDX-License-Identifier: GPL-2.0
/*
 * sign.c - Ed25519 through libcrypto's EVP interface (EVP_DigestSign and
 * EVP_DigestVerify with no digest: Ed25519 hashes the message itself),
 * looked up at the first call, as sha256.c does.
 */
#include <openssl/bio.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include "lib/alloc.h"
#include "lib/dynload.h"
#include "lib/sign.h"


static struct {
	__typeof__(BIO_new_mem_buf) *bio_mem;
	__typeof__(BIO_free) *bio_free;
	__typeof__(PEM_read_bio_PUBKEY) *read_pub;
	__typeof__(PEM_read_bio_PrivateKey) *read_priv;
	__typeof__(EVP_PKEY_free) *pkey_free;
	int (*pkey_id)(const EVP_PKEY *);	/* EVP_PKEY_get_id, a macro's target in 3.0 */
	__typeof__(EVP_MD_CTX_new) *ctx_new;
	__typeof__(EVP_MD_CTX_free) *ctx_free;
	__typeof__(EVP_DigestSignInit) *sign_init;
	__typeof__(EVP_DigestSign) *sign;
	__typeof__(EVP_DigestVerifyInit) *verify_init;
	__typeof__(EVP_DigestVerify) *verify;
	__typeof__(EVP_EncodeBlock) *b64_enc;
	__typeof__(EVP_DecodeBlock) *b64_dec;
	bool loaded;
} evp;

#define LOOKUP(field, name) (*(void **)&evp.field = sbx_dynsym(&sbx_libcrypto, name))
#define ED25519_SIG 64

static bool load(char **err)
{
	if (__atomic_load_n(&evp.loaded, __ATOMIC_ACQUIRE))
		return true;
	if (!(LOOKUP(bio_mem, "BIO_new_mem_buf") && LOOKUP(bio_free, "BIO_free") &&
	      LOOKUP(read_pub, "PEM_read_bio_PUBKEY") &&
	      LOOKUP(read_priv, "PEM_read_bio_PrivateKey") &&
	      LOOKUP(pkey_free, "EVP_PKEY_free") && LOOKUP(pkey_id, "EVP_PKEY_get_id") &&
	      LOOKUP(ctx_new, "EVP_MD_CTX_new") && LOOKUP(ctx_free, "EVP_MD_CTX_free") &&
	      LOOKUP(sign_init, "EVP_DigestSignInit") && LOOKUP(sign, "EVP_DigestSign") &&
	      LOOKUP(verify_init, "EVP_DigestVerifyInit") && LOOKUP(verify, "EVP_DigestVerify") &&
	      LOOKUP(b64_enc, "EVP_EncodeBlock") && LOOKUP(b64_dec, "EVP_DecodeBlock"))) {
		*err = sbx_asprintf("libcrypto: %s",
				    sbx_libcrypto.error ? sbx_libcrypto.error : "a symbol is missing");
		return false;
	}
	__atomic_store_n(&evp.loaded, true, __ATOMIC_RELEASE);
	return true;
}

/* An Ed25519 key from PEM text, public or private; NULL with *err */
static EVP_PKEY *read_key(const char *pem, size_t len, bool private, char **err)
{
	EVP_PKEY *k = NULL;
	BIO *b;

	if (!load(err))
		return NULL;
	if (len > 64 * 1024 || !(b = evp.bio_mem(pem, (int)len))) {
		*err = sbx_strdup("not a PEM key");
		return NULL;
	}
	k = private ? evp.read_priv(b, NULL, NULL, NULL) : evp.read_pub(b, NULL, NULL, NULL);
	evp.bio_free(b);
	if (!k) {
		*err = sbx_strdup(private ? "not a PEM private key (openssl genpkey -algorithm ed25519)"
				  : "not a PEM public key (openssl pkey -pubout)");
		return NULL;
	}
	if (evp.pkey_id(k) != EVP_PKEY_ED25519) {
		evp.pkey_free(k);
		*err = sbx_strdup("not an Ed25519 key");
		return NULL;
	}
	return k;
}

int sbx_keyring_add(struct sbx_keyring *kr, const char *name, const char *pem, size_t len,
		    char **err)
{
	EVP_PKEY *k = read_key(pem, len, false, err);

	if (!k)
		return -1;
	kr->keys = sbx_realloc_array(kr->keys, kr->n + 1, sizeof(*kr->keys));
	kr->names = sbx_realloc_array(kr->names, kr->n + 1, sizeof(*kr->names));
	kr->keys[kr->n] = k;
	kr->names[kr->n++] = sbx_strdup(name);
	return 0;
}

void sbx_keyring_free(struct sbx_keyring *kr)
{
	for (size_t i = 0; i < kr->n; i++) {
		evp.pkey_free(kr->keys[i]);
		free(kr->names[i]);
	}
	free(kr->keys);
	free(kr->names);
	memset(kr, 0, sizeof(*kr));
}

char *sbx_sign(const char *key_pem, size_t key_len, const void *buf, size_t len, char **err)
{
	unsigned char sig[ED25519_SIG];
	size_t sl = sizeof(sig);
	EVP_PKEY *k = read_key(key_pem, key_len, true, err);
	EVP_MD_CTX *c;
	char *out;
	bool ok;

	if (!k)
		return NULL;
	c = evp.ctx_new();
	ok = c && evp.sign_init(c, NULL, NULL, NULL, k) == 1 &&
	     evp.sign(c, sig, &sl, buf, len) == 1 && sl == sizeof(sig);
	evp.ctx_free(c);
	evp.pkey_free(k);
	if (!ok) {
		*err = sbx_strdup("libcrypto could not sign");
		return NULL;
	}
	out = sbx_calloc(1, 4 * ((sizeof(sig) + 2) / 3) + 2);
	sl = (size_t)evp.b64_enc((unsigned char *)out, sig, sizeof(sig));
	out[sl] = '\n';
	out[sl + 1] = 0;
	return out;
}

/* The 64 bytes of a .sig file's base64 line; false if it is not one. */
static bool decode_sig(const char *text, unsigned char sig[ED25519_SIG])
{
	unsigned char raw[3 * ((SBX_SIG_MAX + 3) / 4)];
	size_t n = strlen(text), pad = 0;

	while (n && (text[n - 1] == '\n' || text[n - 1] == '\r' || text[n - 1] == ' '))
		n--;
	if (n != 4 * ((ED25519_SIG + 2) / 3) || memchr(text, '\n', n))
		return false;
	while (pad < 2 && text[n - 1 - pad] == '=')
		pad++;
	/* EVP_DecodeBlock counts the padding as zero bytes */
	if (evp.b64_dec(raw, (const unsigned char *)text, (int)n) != (int)(3 * n / 4) ||
	    3 * n / 4 - pad != ED25519_SIG)
		return false;
	memcpy(sig, raw, ED25519_SIG);
	return true;
}

bool sbx_verify(const struct sbx_keyring *kr, const void *buf, size_t len, const char *sig,
		const char **by, char **err)
{
	unsigned char raw[ED25519_SIG];

	*by = NULL;
	if (!load(err))
		return false;
	if (!decode_sig(sig, raw)) {
		*err = sbx_strdup("not a signature (one line: 64 bytes in base64)");
		return false;
	}
	for (size_t i = 0; i < kr->n; i++) {
		EVP_MD_CTX *c = evp.ctx_new();
		bool ok = c && evp.verify_init(c, NULL, NULL, NULL, kr->keys[i]) == 1 &&
			  evp.verify(c, raw, sizeof(raw), buf, len) == 1;

		evp.ctx_free(c);
		if (ok) {
			*by = kr->names[i];
			return true;
		}
	}
	*err = sbx_asprintf("the signature is not by any of the %zu key(s) given, or the file "
			    "changed after it was signed", kr->n);
	return false;
}
