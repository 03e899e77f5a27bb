// SPDX-License-Identifier: GPL-2.0
/*
 * dynload.c - libraries opened at first use.
 *
 * Linking libmicrohttpd (the dashboard) and libsystemd (the daemon's
 * journal) brings in 16 more shared objects (gnutls, p11-kit, libtasn1,
 * nettle, gcrypt, lz4, zstd, ...). The dynamic loader relocates all of
 * them at every exec: 11.9 M instructions for a program that links
 * bpfsbx's libraries against 5.2 M without those two (callgrind, Debian
 * 12). bpfsbx runs once per agent tool call (the hook) and once per
 * command (`run`), so they are opened here, by the two commands that use
 * them, as systemd opens its optional libraries.
 */
#include <dlfcn.h>
#include <pthread.h>
#include <stddef.h>
#include <string.h>
#include "lib/dynload.h"

/* dlerror()'s text lives until the next dl call: keep a copy */
static const char *kept_error(void)
{
	const char *e = dlerror();
	char *c = e ? strdup(e) : NULL;

	return c ? c : "cannot be loaded";
}

static const char *const libcrypto_names[] = { "libcrypto.so.3", "libcrypto.so", NULL };
struct sbx_dynlib sbx_libcrypto = { .sonames = libcrypto_names };

static pthread_mutex_t dyn_lock = PTHREAD_MUTEX_INITIALIZER;

void *sbx_dynsym(struct sbx_dynlib *lib, const char *sym)
{
	void *p = NULL;

	pthread_mutex_lock(&dyn_lock);
	if (!lib->handle && !lib->error) {
		for (size_t i = 0; lib->sonames[i] && !lib->handle; i++)
			lib->handle = dlopen(lib->sonames[i], RTLD_NOW | RTLD_LOCAL);
		if (!lib->handle)
			lib->error = kept_error();
	}
	if (lib->handle) {
		p = dlsym(lib->handle, sym);
		if (!p && !lib->error)
			lib->error = kept_error();
	}
	pthread_mutex_unlock(&dyn_lock);
	return p;
}
