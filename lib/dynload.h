/* SPDX-License-Identifier: GPL-2.0 */
/*
 * dynload.h - a library that only some commands use, opened when one of
 * them first needs it (dlopen), so that every other start of bpfsbx does
 * not pay for loading and relocating it and its dependencies.
 */
#ifndef SBX_DYNLOAD_H
#define SBX_DYNLOAD_H

struct sbx_dynlib {
	const char *const *sonames;	/* tried in order, NULL-terminated */
	void *handle;
	const char *error;		/* the first failure, kept */
};

/* libcrypto, one handle for its users (sha256.c, sign.c) */
extern struct sbx_dynlib sbx_libcrypto;

/* SYM of LIB, opening LIB at the first call; NULL with lib->error set. */
void *sbx_dynsym(struct sbx_dynlib *lib, const char *sym);

#endif
