/*
 * errors.c — the analyzer's one error line (errors.h).
 */
#include "base/errors.h"

#include <stdarg.h>
#include <stdio.h>

void ia_err(const char *fmt, ...)
{
	va_list ap;
	fputs("ingero-analyze: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}
