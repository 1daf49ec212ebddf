/*
 * adlog.c: reads AutoDeploy's per-transform summary lines out of a log
 * (see fusescan/adlog.h). Everything else in the log is counted and ignored
 * (one note says how many lines); a line that names a transform but whose
 * summary cannot be read is a warning; a log with no summary at all is an
 * error (random bytes, the wrong file). Used by
 * discovery (transforms that exist but did not run) and the match cross-check.
 */
#include "fusescan/adlog.h"
#include "fusescan/base.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

void fs_adlog_init(struct fs_adlog *l)
{
	memset(l, 0, sizeof(*l));
}

static const char *find(const char *p, const char *e, const char *lit)
{
	size_t n = strlen(lit);
	for (; p + n <= e; p++)
		if (*p == *lit && !memcmp(p, lit, n))
			return p;
	return NULL;
}

static int read_int(const char *p, const char *e, int64_t *v)
{
	const char *q = p;
	*v = 0;
	while (q < e && *q >= '0' && *q <= '9' && *v < INT64_MAX / 10)
		*v = *v * 10 + (*q++ - '0');
	return q > p ? 0 : -1;
}

/* "[stage=S, transform=T]" -> S, T; returns the text after ']' or NULL. */
static const char *stage_transform(const char *p, const char *e, const char **s, size_t *ns,
				   const char **t, size_t *nt)
{
	const char *a = find(p, e, "[stage="), *b, *c;
	if (!a || !(b = find(a, e, ", transform=")) || !(c = memchr(b, ']', (size_t)(e - b))))
		return NULL;
	*s = a + 7;
	*ns = (size_t)(b - *s);
	*t = b + 12;
	*nt = (size_t)(c - *t);
	return c + 1;
}

/* The summary after the brackets: "[SUMMARY] matches=N | ...", "disabled",
 * "skipped", or the older "enabled=True, num_matches=N". */
static int summary(const char *p, const char *e, struct fs_adlog_entry *x)
{
	const char *m;
	if ((m = find(p, e, "[SUMMARY]"))) {
		p = m + 9;
		while (p < e && *p == ' ')
			p++;
		if (find(p, e, "disabled") == p)
			return x->status = FS_AD_DISABLED, 0;
		if (find(p, e, "skipped") == p)
			return x->status = FS_AD_SKIPPED, 0;
		if (find(p, e, "matches=") == p)
			return x->status = FS_AD_MATCHES, read_int(p + 8, e, &x->matches);
		return -1;
	}
	if (find(p, e, "enabled=False"))
		return x->status = FS_AD_DISABLED, 0;
	if ((m = find(p, e, "num_matches=")))
		return x->status = FS_AD_MATCHES, read_int(m + 12, e, &x->matches);
	return -1;
}

static void add_line(struct fs_adlog *l, const char *p, const char *e, uint32_t no,
		     struct fs_diags *d, uint32_t *warnings)
{
	const char *s, *t;
	size_t ns, nt;
	const char *rest = stage_transform(p, e, &s, &ns, &t, &nt);
	if (!rest) {
		l->n_other += e > p;
		return;
	}
	struct fs_adlog_entry x;
	memset(&x, 0, sizeof(x));
	if (summary(rest, e, &x) < 0) {
		fs_diag_add(d, FS_WARNING, l->path, no, (uint32_t)(rest - p) + 1, p, (size_t)(e - p),
			    "transform line without a readable summary (matches=N, disabled, skipped)");
		(*warnings)++;
		return;
	}
	x.stage = fs_xstrndup(s, ns);
	x.transform = fs_xstrndup(t, nt);
	x.line = no;
	FS_GROW(l->v, l->cap, l->n + 1);
	l->v[l->n++] = x;
}

uint32_t fs_adlog_parse(struct fs_adlog *l, const char *path, const char *text, size_t len,
			struct fs_diags *d)
{
	uint32_t warnings = 0, no = 0;
	free(l->path);
	l->path = fs_xstrndup(path, strlen(path));
	for (const char *p = text, *end = text + len; p < end;) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		const char *e = nl ? nl : end;
		no++;
		add_line(l, p, e > p && e[-1] == '\r' ? e - 1 : e, no, d, &warnings);
		p = nl ? nl + 1 : end;
	}
	if (!l->n) {
		fs_diag_add(d, FS_ERROR, path, 1, 0, NULL, 0, "no AutoDeploy [SUMMARY] lines found "
			    "(expected '[stage=S, transform=T] [SUMMARY] matches=N' lines)");
		return warnings + 1;
	}
	if (l->n_other)
		fs_diag_add(d, FS_NOTE, path, 0, 0, NULL, 0, "%u line%s without a transform summary ignored", l->n_other,
			    l->n_other == 1 ? "" : "s");
	return warnings;
}

uint32_t fs_adlog_load(struct fs_adlog *l, const char *path, struct fs_diags *d)
{
	size_t len;
	char *text = fs_read_input(path, FS_IN_LOG, &len);
	if (!text) {
		fs_diag_add(d, FS_ERROR, path, 0, 0, NULL, 0, "cannot read log: %s", fs_input_error(errno, FS_IN_LOG));
		return 1;
	}
	uint32_t n = fs_adlog_parse(l, path, text, len, d);
	free(text);
	return n;
}

const struct fs_adlog_entry *fs_adlog_find(const struct fs_adlog *l, const char *transform)
{
	for (uint32_t i = l->n; i-- > 0;)
		if (!strcmp(l->v[i].transform, transform))
			return &l->v[i];
	return NULL;
}

void fs_adlog_release(struct fs_adlog *l)
{
	for (uint32_t i = 0; i < l->n; i++) {
		free(l->v[i].stage);
		free(l->v[i].transform);
	}
	free(l->v);
	free(l->path);
	fs_adlog_init(l);
}
