// SPDX-License-Identifier: GPL-2.0
/*
 * compile_diag.c - the compiler's errors and warnings, at the source
 * position of the rule they are about; every pass reports through these.
 */
#include <stdarg.h>
#include <stdio.h>
#include "policy/compile.h"

void cerr(struct cstate *s, const struct sbx_srcpos *pos, const char *fmt, ...)
{
	char msg[768];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	sbx_diag_at(s->d, SBX_DIAG_ERROR, pos, "%s", msg);
	s->err = true;
}

void cwarn(struct cstate *s, const struct sbx_srcpos *pos, const char *fmt, ...)
{
	char msg[768];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	sbx_diag_at(s->d, SBX_DIAG_WARNING, pos, "%s", msg);
}
