/* SPDX-License-Identifier: GPL-2.0 */
/*
 * sign.h - Ed25519 signatures of whole files, by libcrypto (opened at the
 * first use, as for sha256.h): a fleet that pulls its machine policy over
 * the network has each file signed where it is written, and the daemon
 * takes only files that a key it was given signed (policy/machine.c).
 *
 * A signature is FILE.sig beside FILE: the 64 bytes in base64 on one
 * line. Keys are PEM files as `openssl genpkey -algorithm ed25519` and
 * `openssl pkey -pubout` write them.
 */
#ifndef SBX_SIGN_H
#define SBX_SIGN_H

#include <stdbool.h>
#include <stddef.h>

#define SBX_SIG_SUFFIX	".sig"
#define SBX_SIG_MAX	1024	/* a .sig file larger than this is not one */

struct sbx_keyring {
	void **keys;		/* libcrypto's EVP_PKEY */
	char **names;		/* the key files' names, for messages */
	size_t n;
};

/* Add the public key in PEM text (name: for messages); 0, or -1 with
 * *err (malloc'd) when it is not an Ed25519 public key. */
int sbx_keyring_add(struct sbx_keyring *kr, const char *name, const char *pem, size_t len,
		    char **err);
void sbx_keyring_free(struct sbx_keyring *kr);

/* The signature of buf by the Ed25519 private key in PEM text, as the
 * line of a .sig file (malloc'd, ending in a newline); NULL with *err. */
char *sbx_sign(const char *key_pem, size_t key_len, const void *buf, size_t len, char **err);

/* Does sig (a .sig file's text) sign buf under a key of kr? true with
 * *by (the key's name, kr's), or false with *err (malloc'd). */
bool sbx_verify(const struct sbx_keyring *kr, const void *buf, size_t len, const char *sig,
		const char **by, char **err);

#endif
