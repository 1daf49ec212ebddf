/*
 * text.c: a phase's progress line (text.h).
 */
#include "text.h"

#include "fusescan/base.h"
#include "fusescan/site_types.h"

#include <stdarg.h>
#include <stdio.h>

void fs_progress_say(const struct fs_progress *p, const char *fmt, ...)
{
	if (!p || !p->say)
		return;
	char line[256];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	p->say(p->ctx, line);
}
