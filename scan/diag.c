/*
 * diag.c: recording and printing diagnostics (see fusescan/diag.h).
 * The excerpt keeps at most EXCERPT bytes around the column so a 10 MB line
 * costs nothing to report; non-printable bytes are shown as '?'.
 */
#include "fusescan/diag.h"
#include "fusescan/base.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

enum { EXCERPT = 96, CONTEXT_BEFORE = 40 };

void fs_diags_init(struct fs_diags *d)
{
	memset(d, 0, sizeof(*d));
}

static char *excerpt(const char *text, size_t len, uint32_t col, uint32_t *caret)
{
	size_t at = col ? col - 1 : 0;
	if (at > len)
		at = len;
	size_t from = at > CONTEXT_BEFORE ? at - CONTEXT_BEFORE : 0;
	size_t to = from + EXCERPT < len ? from + EXCERPT : len;
	while (to > from && (text[to - 1] == '\r' || text[to - 1] == '\n'))
		to--;
	char *e = fs_xmalloc(to - from + 8);
	size_t k = 0;
	if (from) {
		memcpy(e, "...", 3);
		k = 3;
	}
	*caret = (uint32_t)(k + (at - from));
	for (size_t i = from; i < to; i++) {
		unsigned char c = (unsigned char)text[i];
		e[k++] = (c >= 0x20 && c < 0x7f) ? (char)c : (c == '\t' ? ' ' : '?');
	}
	if (to < len) {
		memcpy(e + k, "...", 3);
		k += 3;
	}
	e[k] = '\0';
	return e;
}

void fs_diag_add(struct fs_diags *d, enum fs_severity sev, const char *file,
		 uint32_t line, uint32_t col, const char *text, size_t text_len,
		 const char *fmt, ...)
{
	FS_GROW(d->v, d->cap, d->n + 1);
	struct fs_diag *g = &d->v[d->n++];
	memset(g, 0, sizeof(*g));
	g->severity = sev;
	g->file = fs_xstrndup(file, strlen(file));
	g->line = line;
	g->col = col;
	char buf[512];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	g->message = fs_xstrndup(buf, strlen(buf));
	if (text)
		g->excerpt = excerpt(text, text_len, col, &g->caret);
	if (sev == FS_ERROR)
		d->n_errors++;
	else if (sev == FS_WARNING)
		d->n_warnings++;
}

static const char *sev_name(enum fs_severity s)
{
	return s == FS_ERROR ? "error" : s == FS_WARNING ? "warning" : "note";
}

void fs_diag_print(const struct fs_diag *g, FILE *out)
{
	if (g->line && g->col)
		fprintf(out, "%s:%u:%u: %s: %s\n", g->file, g->line, g->col,
			sev_name(g->severity), g->message);
	else if (g->line) /* a whole line (or file) is meant, no column */
		fprintf(out, "%s:%u: %s: %s\n", g->file, g->line, sev_name(g->severity), g->message);
	else
		fprintf(out, "%s: %s: %s\n", g->file, sev_name(g->severity), g->message);
	if (!g->excerpt)
		return;
	fprintf(out, "    %s\n    %*s^\n", g->excerpt, (int)g->caret, "");
}

void fs_diags_print(const struct fs_diags *d, FILE *out)
{
	for (uint32_t i = 0; i < d->n; i++)
		fs_diag_print(&d->v[i], out);
}

void fs_diags_release(struct fs_diags *d)
{
	for (uint32_t i = 0; i < d->n; i++) {
		free(d->v[i].file);
		free(d->v[i].message);
		free(d->v[i].excerpt);
	}
	free(d->v);
	fs_diags_init(d);
}

const char *fs_diags_last(const struct fs_diags *d)
{
	for (uint32_t i = d->n; i-- > 0;)
		if (d->v[i].severity == FS_ERROR)
			return d->v[i].message;
	return "";
}

void fs_diag_reword(struct fs_diags *d, const char *fmt, ...)
{
	if (!d->n)
		return;
	char buf[512];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	struct fs_diag *g = &d->v[d->n - 1];
	free(g->message);
	g->message = fs_xstrndup(buf, strlen(buf));
}
