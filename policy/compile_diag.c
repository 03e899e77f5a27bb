// SPDX-License-Identifier: GPL-2.0
/*
 * compile_diag.c - the compiler's errors and warnings, at the source
 * position of the rule they are about; every pass reports through these.
 */
#include <stdarg.h>
#include "policy/compile.h"

void cerr(struct cstate *s, const struct sbx_srcpos *pos, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	sbx_diag_vat(s->d, SBX_DIAG_ERROR, pos, fmt, ap);
	va_end(ap);
	s->err = true;
}

void cwarn(struct cstate *s, const struct sbx_srcpos *pos, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	sbx_diag_vat(s->d, SBX_DIAG_WARNING, pos, fmt, ap);
	va_end(ap);
}
