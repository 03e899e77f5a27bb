/* SPDX-License-Identifier: GPL-2.0 */
/*
 * alloc.h - allocation that aborts on failure: a daemon that cannot
 * allocate 100 bytes cannot do anything useful, and must not continue
 * half-done.
 */
#ifndef SBX_ALLOC_H
#define SBX_ALLOC_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>

char *sbx_asprintf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* vasprintf for messages that may be lost: NULL when memory runs out,
 * where the caller has a fallback (an error reply, a generic reason) */
char *sbx_vformat(const char *fmt, va_list ap) __attribute__((format(printf, 1, 0)));
char *sbx_strdup(const char *s);		/* NULL gives "" */
void *sbx_calloc(size_t n, size_t size);
void *sbx_realloc_array(void *p, size_t n, size_t size);

/*
 * Room for need elements of size bytes in p, which has room for *cap: the
 * room doubles (from first when it is 0) until need fits, so that n
 * appends copy O(n) elements. Returns p, or where it moved (*cap then
 * says the new room). Unlike the rest of this file it does not abort: on
 * no memory, or a size that would overflow, it returns NULL and leaves p
 * and *cap as they were, and the caller fails closed its own way (the
 * parsers are fuzzed and must never abort).
 */
void *sbx_grow(void *p, size_t *cap, size_t need, size_t size, size_t first);
/* the same for an array variable and its size_t cap: false on no memory */
#define SBX_GROW(arr, cap, need, first) __extension__ ({			\
		void *grow_p_ = sbx_grow((arr), &(cap), (need),			\
					 sizeof(*(arr)), (first));		\
		if (grow_p_)							\
			(arr) = grow_p_;					\
		grow_p_ != NULL;						\
	})

#endif
