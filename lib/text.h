/* SPDX-License-Identifier: GPL-2.0 */
/* text.h - a growable string, and numbers from text. */
#ifndef SBX_TEXT_H
#define SBX_TEXT_H

#include <stdbool.h>
#include <stddef.h>

/*
 * A NUL-terminated string that grows. Zero-initialise it. When memory runs
 * out it stops growing and sets oom: parsers that must never abort (they
 * are fuzzed) check it at the end; p may be NULL while nothing was added.
 */
struct sbx_strbuf {
	char *p;
	size_t len, cap;
	bool oom;
};

void sbx_sb_putn(struct sbx_strbuf *b, const char *s, size_t n);
void sbx_sb_putc(struct sbx_strbuf *b, char c);
void sbx_sb_puts(struct sbx_strbuf *b, const char *s);
void sbx_sb_printf(struct sbx_strbuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* s, preceded by sep unless b is still empty */
void sbx_sb_join(struct sbx_strbuf *b, const char *sep, const char *s);

/* v in decimal, without printf: written at the end of buf, returns its start */
#define SBX_UTOA_LEN 21
char *sbx_utoa(unsigned long long v, char buf[SBX_UTOA_LEN]);
void sbx_sb_putu(struct sbx_strbuf *b, unsigned long long v);

/* *dst (malloc'd or NULL) += sep (unless *dst is empty) + s; -1 on no memory */
int sbx_str_append(char **dst, const char *sep, const char *s);

/* Parse a decimal integer in [min, max]; false on anything else. */
bool sbx_parse_long(const char *s, long min, long max, long *out);

/* Is word one of the items of a comma-separated list, such as
 * /sys/kernel/security/lsm (which ends in a newline)? NULL: no. */
bool sbx_list_has(const char *list, const char *word);

/* Is path dir itself or below it, by its text (no file system)? A
 * trailing '/' of dir is ignored, so "/" holds every absolute path.
 * NULL dir: no. */
bool sbx_path_within(const char *path, const char *dir);

#endif
