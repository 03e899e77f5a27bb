// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "lib/text.h"
#include "lib/alloc.h"

void sbx_sb_putn(struct sbx_strbuf *b, const char *s, size_t n)
{
	if (b->oom)
		return;
	if (!SBX_GROW(b->p, b->cap, b->len + n + 1, 64)) {
		b->oom = true;
		return;
	}
	memcpy(b->p + b->len, s, n);
	b->len += n;
	b->p[b->len] = 0;
}

void sbx_sb_putc(struct sbx_strbuf *b, char c)
{
	sbx_sb_putn(b, &c, 1);
}

void sbx_sb_puts(struct sbx_strbuf *b, const char *s)
{
	sbx_sb_putn(b, s, strlen(s));
}

void sbx_sb_printf(struct sbx_strbuf *b, const char *fmt, ...)
{
	char *s = NULL;
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vasprintf(&s, fmt, ap);
	va_end(ap);
	if (n < 0)
		b->oom = true;
	else
		sbx_sb_putn(b, s, (size_t)n);
	free(s);
}

char *sbx_utoa(unsigned long long v, char buf[SBX_UTOA_LEN])
{
	char *p = buf + SBX_UTOA_LEN;

	*--p = 0;
	do
		*--p = (char)('0' + v % 10);
	while (v /= 10);
	return p;
}

void sbx_sb_putu(struct sbx_strbuf *b, unsigned long long v)
{
	char buf[SBX_UTOA_LEN];

	sbx_sb_puts(b, sbx_utoa(v, buf));
}

void sbx_sb_join(struct sbx_strbuf *b, const char *sep, const char *s)
{
	if (b->len)
		sbx_sb_puts(b, sep);
	sbx_sb_puts(b, s);
}

int sbx_str_append(char **dst, const char *sep, const char *s)
{
	size_t a = *dst ? strlen(*dst) : 0, b = strlen(s), l = *dst && a ? strlen(sep) : 0;
	char *t = realloc(*dst, a + l + b + 1);

	if (!t)
		return -1;
	if (l)
		memcpy(t + a, sep, l);
	memcpy(t + a + l, s, b + 1);
	*dst = t;
	return 0;
}

bool sbx_parse_long(const char *s, long min, long max, long *out)
{
	char *end;
	long v;

	if (!s || !*s)
		return false;
	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || *end || v < min || v > max)
		return false;
	*out = v;
	return true;
}

bool sbx_path_within(const char *path, const char *dir)
{
	size_t n;

	if (!dir)
		return false;
	n = strlen(dir);
	if (n && dir[n - 1] == '/')
		n--;
	return !strncmp(path, dir, n) && (path[n] == '/' || path[n] == 0);
}

bool sbx_list_has(const char *list, const char *word)
{
	size_t n = strlen(word);

	for (const char *p = list; p && *p && *p != '\n'; p += strcspn(p, ",\n"), p += *p == ',')
		if (!strncmp(p, word, n) && (p[n] == ',' || p[n] == '\n' || !p[n]))
			return true;
	return false;
}
