/* SPDX-License-Identifier: GPL-2.0 */
/*
 * alloc.h - allocation that aborts on failure: a daemon that cannot
 * allocate 100 bytes cannot do anything useful, and must not continue
 * half-done.
 */
#ifndef SBX_ALLOC_H
#define SBX_ALLOC_H

#include <stddef.h>

char *sbx_asprintf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
char *sbx_strdup(const char *s);		/* NULL gives "" */
void *sbx_calloc(size_t n, size_t size);
void *sbx_realloc_array(void *p, size_t n, size_t size);

#endif
