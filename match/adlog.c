/*
 * adlog.c: reads AutoDeploy's per-transform log lines out of a log, every
 * generation of them (see fusescan/adlog.h; the grammar is docs/adlog.md).
 * A transform's summary becomes an entry; its other lines ([PRE-CLEANUP],
 * [APPLY], [POST-CLEANUP], [CUDA MEM DIFF ...], "elapsed time: ...") mark it
 * as one that ran; every other line (Python warnings, progress bars) is
 * counted and ignored. Only a line that claims to be a summary and cannot be
 * read is a warning. Used by discovery (transforms that exist but did not
 * run), the match cross-check and the run timeline of `diff`.
 */
#include "fusescan/adlog.h"
#include "fusescan/base.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

enum { NAME_MAX_LEN = 128 }; /* stage and transform names: identifiers, and short */

void fs_adlog_init(struct fs_adlog *l)
{
	memset(l, 0, sizeof(*l));
	l->min_rank = -1;
}

/* ---- a cursor over one line segment ------------------------------------------------------ */

struct span {
	const char *p;
	size_t n;
};

struct tag {
	struct span stage, transform;
	const char *start;   /* where the tag begins */
	int bare;            /* the oldest form: no brackets, a summary follows */
};

/* Spaces and ANSI colour sequences (ESC [ params letter): AutoDeploy colours
 * its labels when colours are switched on, always around whole words. */
static const char *skip_sp(const char *p, const char *e)
{
	while (p < e) {
		if (*p == ' ' || *p == '\t')
			p++;
		else if (*p == '\x1b' && p + 1 < e && p[1] == '[') {
			p += 2;
			while (p < e && ((*p >= '0' && *p <= '9') || *p == ';'))
				p++;
			p += p < e;
		} else
			break;
	}
	return p;
}

static int lit(const char *p, const char *e, const char *s)
{
	size_t n = strlen(s);
	return (size_t)(e - p) >= n && !memcmp(p, s, n);
}

static int name_char(char c)
{
	return c == '_' || c == '.' || c == '-' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
	       (c >= '0' && c <= '9');
}

/* NAME: the identifier at p up to `stop` (one char); NULL if none or too long. */
static const char *name_until(const char *p, const char *e, char stop, struct span *out)
{
	const char *q = p;
	while (q < e && name_char(*q) && q - p <= NAME_MAX_LEN)
		q++;
	if (q == p || q - p > NAME_MAX_LEN || q == e || *q != stop)
		return NULL;
	out->p = p;
	out->n = (size_t)(q - p);
	return q;
}

/* "stage=" NAME ", transform=" NAME, then `stop`; the text after it or NULL. */
static const char *stage_transform(const char *p, const char *e, char stop, struct tag *t)
{
	if (!lit(p, e, "stage=") || !(p = name_until(p + 6, e, ',', &t->stage)) || !lit(p, e, ", transform="))
		return NULL;
	p = name_until(p + 12, e, stop, &t->transform);
	return p ? p + 1 : NULL;
}

/* tag = "[stage=" NAME ", transform=" NAME "]"      (every generation but the oldest)
 *     | "stage=" NAME ", transform=" NAME ","       (the oldest, at a word's start)
 * Returns the text after the tag, or NULL when the segment has none. */
static const char *find_tag(const char *p, const char *e, struct tag *t)
{
	for (const char *q = p; (q = fs_find(q, e, "[stage=")); q++) {
		const char *r = stage_transform(q + 1, e, ']', t);
		if (r)
			return t->start = q, t->bare = 0, r;
	}
	for (const char *q = p; (q = fs_find(q, e, "stage=")); q++) {
		if (q > p && q[-1] != ' ' && q[-1] != ']')
			continue;
		const char *r = stage_transform(q, e, ',', t);
		if (r)
			return t->start = q, t->bare = 1, r;
	}
	return NULL;
}

/* The [RANK n] of the line head, before the tag; -1 without one. */
static int32_t rank_of(const char *p, const char *e)
{
	const char *r = fs_find(p, e, "[RANK ");
	int64_t v = 0;
	if (!r)
		return -1;
	for (r += 6; r < e && *r >= '0' && *r <= '9' && v < INT32_MAX; r++)
		v = v * 10 + (*r - '0');
	return r < e && *r == ']' && v <= INT32_MAX ? (int32_t)v : -1;
}

/* A count: decimal digits that fit int64. */
static const char *read_count(const char *p, const char *e, int64_t *v)
{
	const char *q = p;
	*v = 0;
	for (; q < e && *q >= '0' && *q <= '9'; q++) {
		if (*v > (INT64_MAX - (*q - '0')) / 10)
			return NULL;
		*v = *v * 10 + (*q - '0');
	}
	return q > p ? q : NULL;
}

/* ---- the parse ------------------------------------------------------------------------------ */

struct lparse {
	struct fs_adlog *l;
	struct fs_diags *d;
	const char *line;        /* the physical line, for columns and excerpts */
	size_t len;
	uint32_t no, warnings;
	/* the transform whose own lines came last and whose summary has not yet */
	char pend_stage[NAME_MAX_LEN + 1], pend[NAME_MAX_LEN + 1];
	uint32_t pend_n, pend_line;
};

static void warn(struct lparse *P, const char *at, const char *msg)
{
	fs_diag_add(P->d, FS_WARNING, P->l->path, P->no, (uint32_t)(at - P->line) + 1, P->line, P->len, "%s", msg);
	P->warnings++;
}

static int span_is(const struct span *s, const char *z)
{
	return strlen(z) == s->n && !memcmp(s->p, z, s->n);
}

static void add_entry(struct lparse *P, const struct tag *t, enum fs_adlog_status st, int64_t matches, int32_t rank)
{
	struct fs_adlog *l = P->l;
	FS_GROW(l->v, l->cap, l->n + 1);
	struct fs_adlog_entry *x = &l->v[l->n++];
	memset(x, 0, sizeof(*x));
	x->stage = fs_xstrndup(t->stage.p, t->stage.n);
	x->transform = fs_xstrndup(t->transform.p, t->transform.n);
	x->status = st;
	x->matches = matches;
	x->rank = rank;
	x->line = P->no;
	if (P->pend_n && span_is(&t->transform, P->pend)) {
		x->n_detail = P->pend_n;
		P->pend_n = 0;
	}
	if (rank >= 0 && (l->min_rank < 0 || rank < l->min_rank))
		l->min_rank = rank;
}

/* A transform's own line: the transform ran (or is running). Lines after
 * its summary ("elapsed time: ...") are its own too. */
static void detail(struct lparse *P, const struct tag *t)
{
	struct fs_adlog *l = P->l;
	l->n_detail++;
	if (!P->pend_n && l->n && span_is(&t->transform, l->v[l->n - 1].transform)) {
		l->v[l->n - 1].n_detail++;
		return;
	}
	if (!P->pend_n || !span_is(&t->transform, P->pend)) {
		snprintf(P->pend_stage, sizeof(P->pend_stage), "%.*s", (int)t->stage.n, t->stage.p);
		snprintf(P->pend, sizeof(P->pend), "%.*s", (int)t->transform.n, t->transform.p);
		P->pend_n = 0;
	}
	P->pend_n++;
	P->pend_line = P->no;
}

/* summary = "[SUMMARY]" ( "matches=" COUNT | "skipped" | "disabled" ) [ "|" time ]  (today) */
static void summary(struct lparse *P, const struct tag *t, const char *p, const char *e, int32_t rank)
{
	static const char *const words[] = {"disabled", "skipped", "matches="};
	static const enum fs_adlog_status st[] = {FS_AD_DISABLED, FS_AD_SKIPPED, FS_AD_MATCHES};
	const char *at = p = skip_sp(p, e);
	int64_t v = 0;
	for (int k = 0; k < 3; k++) {
		if (!lit(p, e, words[k]))
			continue;
		p += strlen(words[k]);
		if (st[k] == FS_AD_MATCHES && !(p = read_count(p, e, &v)))
			break;
		p = skip_sp(p, e);
		if (p < e && (*p != '|' || st[k] == FS_AD_DISABLED))
			break;
		return add_entry(P, t, st[k], v, rank);
	}
	warn(P, at, "unreadable [SUMMARY] (expected matches=N, skipped or disabled, then '| time: ...')");
}

static int bool_value(const char *p, const char *q, int *b)
{
	if (q - p == 4 && !memcmp(p, "True", 4))
		return *b = 1, 0;
	if (q - p == 5 && !memcmp(p, "False", 5))
		return *b = 0, 0;
	return -1;
}

/* kvs = KEY "=" VALUE { ", " KEY "=" VALUE }   (the older generations)
 * with enabled=BOOL, skipped=BOOL, num_matches=COUNT among them; other keys
 * (is_clean, has_valid_shapes, ...) take any value. */
static void kv_summary(struct lparse *P, const struct tag *t, const char *p, const char *e, int32_t rank)
{
	int enabled = 1, skipped = 0, counted = 0, b;
	int64_t v = 0;
	const char *at = p = skip_sp(p, e);
	while (p < e) {
		const char *k = p, *eq = p, *q;
		while (eq < e && name_char(*eq))
			eq++;
		if (eq == k || eq == e || *eq != '=')
			return warn(P, k, "unreadable summary item (expected key=value)");
		for (q = ++eq; q < e && *q != ','; q++)
			;
		struct span key = {k, (size_t)(eq - 1 - k)};
		if (q == eq)
			return warn(P, eq, "summary item without a value");
		if (span_is(&key, "num_matches")) {
			const char *r = read_count(eq, q, &v);
			if (!r || skip_sp(r, q) != q)
				return warn(P, eq, "num_matches is not a count");
			counted = 1;
		} else if ((span_is(&key, "enabled") || span_is(&key, "skipped")) && bool_value(eq, q, &b) < 0)
			return warn(P, eq, "expected True or False");
		else if (span_is(&key, "enabled"))
			enabled = b;
		else if (span_is(&key, "skipped"))
			skipped = b;
		p = q < e ? skip_sp(q + 1, e) : e;
	}
	if (!enabled)
		return add_entry(P, t, FS_AD_DISABLED, 0, rank);
	if (skipped)
		return add_entry(P, t, FS_AD_SKIPPED, 0, rank);
	if (!counted)
		return warn(P, at, "summary without num_matches, skipped=True or enabled=False");
	add_entry(P, t, FS_AD_MATCHES, v, rank);
}

/* Whether the older generations' summary starts here (a key they always write first). */
static int kv_start(const char *p, const char *e)
{
	return lit(p, e, "enabled=") || lit(p, e, "num_matches=") || lit(p, e, "skipped=");
}

static void segment(struct lparse *P, const char *p, const char *e)
{
	struct tag t;
	const char *rest = find_tag(p, e, &t);
	if (!rest) {
		const char *s = fs_find(p, e, "[SUMMARY]");
		if (s)
			warn(P, s, "[SUMMARY] without [stage=S, transform=T] before it");
		else
			P->l->n_other += skip_sp(p, e) < e;
		return;
	}
	int32_t rank = rank_of(p, t.start);
	rest = skip_sp(rest, e);
	if (t.bare)
		kv_summary(P, &t, rest, e, rank);
	else if (lit(rest, e, "[SUMMARY]"))
		summary(P, &t, rest + 9, e, rank);
	else if (kv_start(rest, e))
		kv_summary(P, &t, rest, e, rank);
	else
		detail(P, &t);
}

/* A physical line: segments end at '\r' too (a progress bar redraws its line
 * with '\r', and a log line can follow its last redraw). */
static void line(struct lparse *P, const char *p, const char *e)
{
	P->line = p;
	P->len = (size_t)(e - p);
	while (p < e) {
		const char *cr = memchr(p, '\r', (size_t)(e - p));
		const char *se = cr ? cr : e;
		segment(P, p, se);
		p = cr ? cr + 1 : e;
	}
}

/* At the end: a transform whose own lines came but whose summary did not. */
static void unfinished(struct lparse *P)
{
	if (!P->pend_n)
		return;
	struct tag t = {{P->pend_stage, strlen(P->pend_stage)}, {P->pend, strlen(P->pend)}, NULL, 0};
	uint32_t n = P->pend_n;
	P->no = P->pend_line;
	P->line = NULL, P->len = 0;
	add_entry(P, &t, FS_AD_RAN, 0, -1);
	fs_diag_add(P->d, FS_WARNING, P->l->path, P->no, 0, NULL, 0,
		    "the log ends inside transform %s (%u of its lines, no summary)", P->pend, n);
	P->warnings++;
}

uint32_t fs_adlog_parse(struct fs_adlog *l, const char *path, const char *text, size_t len,
			struct fs_diags *d)
{
	struct lparse P;
	memset(&P, 0, sizeof(P));
	P.l = l, P.d = d;
	free(l->path);
	l->path = fs_xstrndup(path, strlen(path));
	for (const char *p = text, *end = text + len; p < end;) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		const char *e = nl ? nl : end;
		P.no++;
		line(&P, p, e);
		p = nl ? nl + 1 : end;
	}
	unfinished(&P);
	if (!l->n) {
		fs_diag_add(d, FS_ERROR, path, 1, 0, NULL, 0, "no AutoDeploy transform lines found "
			    "(expected '[stage=S, transform=T] [SUMMARY] matches=N' lines; docs/adlog.md)");
		return P.warnings + 1;
	}
	if (l->n_other + l->n_detail)
		fs_diag_add(d, FS_NOTE, path, 0, 0, NULL, 0,
			    "%u line%s without a transform summary ignored (%u a transform's own, %u other)",
			    l->n_other + l->n_detail, l->n_other + l->n_detail == 1 ? "" : "s", l->n_detail, l->n_other);
	return P.warnings;
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

int fs_adlog_primary(const struct fs_adlog *l, const struct fs_adlog_entry *e)
{
	return e->rank < 0 || e->rank == l->min_rank;
}

const struct fs_adlog_entry *fs_adlog_find(const struct fs_adlog *l, const char *transform)
{
	for (uint32_t i = l->n; i-- > 0;)
		if (fs_adlog_primary(l, &l->v[i]) && !strcmp(l->v[i].transform, transform))
			return &l->v[i];
	return NULL;
}

const char *fs_adlog_status_name(enum fs_adlog_status s)
{
	static const char *const names[] = {"matches", "disabled", "skipped", "ran, no summary"};
	return s <= FS_AD_RAN ? names[s] : "?";
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
