/*
 * text.c: a growing string, and a phase's progress line (text.h).
 */
#include "text.h"

#include "fusescan/base.h"
#include "fusescan/numerics.h"

#include <stdarg.h>
#include <stdio.h>

void fs_text_put(struct fs_text *t, const char *fmt, ...)
{
	va_list ap;
	for (;;) {
		va_start(ap, fmt);
		int k = vsnprintf(t->s ? t->s + t->n : NULL, t->s ? t->cap - t->n : 0, fmt, ap);
		va_end(ap);
		if (k < 0)
			return;
		if (t->s && t->n + (size_t)k < t->cap) {
			t->n += (size_t)k;
			return;
		}
		t->cap = (t->cap + (size_t)k + 1) * 2;
		t->s = fs_xrealloc(t->s, t->cap);
	}
}

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
