// SPDX-License-Identifier: GPL-2.0
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "lib/alloc.h"
#include "lib/log.h"

static void oom(void)
{
	fprintf(stderr, "%s: out of memory\n", sbx_log_prefix());
	abort();
}

char *sbx_asprintf(const char *fmt, ...)
{
	va_list ap;
	char *s;

	va_start(ap, fmt);
	if (vasprintf(&s, fmt, ap) < 0)
		oom();
	va_end(ap);
	return s;
}

char *sbx_vformat(const char *fmt, va_list ap)
{
	char *s;

	return vasprintf(&s, fmt, ap) < 0 ? NULL : s;
}

char *sbx_strdup(const char *s)
{
	char *d = strdup(s ? s : "");

	if (!d)
		oom();
	return d;
}

void *sbx_calloc(size_t n, size_t size)
{
	void *p = calloc(n ? n : 1, size ? size : 1);

	if (!p)
		oom();
	return p;
}

void *sbx_realloc_array(void *p, size_t n, size_t size)
{
	void *q = reallocarray(p, n ? n : 1, size ? size : 1);

	if (!q)
		oom();
	return q;
}

void *sbx_grow(void *p, size_t *cap, size_t need, size_t size, size_t first)
{
	size_t n = *cap ? *cap : (first ? first : 1);

	if (p && need <= *cap)
		return p;
	while (n < need) {
		if (n > SIZE_MAX / 2)
			return NULL;
		n *= 2;
	}
	p = reallocarray(p, n, size ? size : 1);
	if (p)
		*cap = n;
	return p;
}
