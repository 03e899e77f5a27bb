// SPDX-License-Identifier: GPL-2.0
/*
 * ldns_sym.c - ldns, opened at first use (see ldns_sym.h).
 */
#include <pthread.h>
#include <stdbool.h>
#include "lib/dynload.h"
#include "user/daemon/ldns_sym.h"

static const char *const libldns_names[] = { "libldns.so.3", "libldns.so", NULL };
static struct sbx_dynlib libldns = { .sonames = libldns_names };

#define SBX_LDNS_DEFINE(f) __typeof__(f) *sym_##f;
SBX_LDNS_SYMS(SBX_LDNS_DEFINE)
#undef SBX_LDNS_DEFINE

static pthread_once_t once = PTHREAD_ONCE_INIT;
static bool loaded;

static void load(void)
{
	/* all or nothing: one missing symbol leaves the resolver closed */
#define SBX_LDNS_LOOKUP(f) \
	if (!(sym_##f = sbx_dynsym(&libldns, #f))) \
		return;
	SBX_LDNS_SYMS(SBX_LDNS_LOOKUP)
#undef SBX_LDNS_LOOKUP
	loaded = true;
}

int sbx_ldns_load(const char **why)
{
	pthread_once(&once, load);
	if (loaded)
		return 0;
	if (why)
		*why = libldns.error ? libldns.error : "a symbol is missing";
	return -1;
}
