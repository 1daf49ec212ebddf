/*
 * gate.c: CI gating for `fusescan match`. --expect FILE checks counts
 * against expectations ("rmsnorm >= 2*layers+1", "fuse_rmsnorm > 0" from
 * the run's log, optionally "@015 ..." for one dump); --baseline PATH fails
 * on any count that dropped against another run or a saved JSON report (the
 * --log cross-check is adcheck.c). Failures are gate results (exit 1);
 * unreadable or malformed files and unknown names are input errors (exit 2).
 */
#include "gate_int.h"
#include "fusescan/catalog.h"
#include "fusescan/scan.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* ---- --expect ------------------------------------------------------------------ */

enum { EXPECT_MAX_DEPTH = 64 }; /* parentheses: the parser recurses once a level */

/* An expression being evaluated: err (with err_at) set at the first error. */
struct ex {
	const char *p, *e;
	int64_t layers;
	int depth, uses_layers;
	const char *err, *err_at;
};

static int64_t ex_fail(struct ex *x, const char *at, const char *why)
{
	if (!x->err)
		x->err = why, x->err_at = at;
	return 0;
}

static void ex_ws(struct ex *x)
{
	while (x->p < x->e && (*x->p == ' ' || *x->p == '\t'))
		x->p++;
}

static int64_t ex_sum(struct ex *x);

/* factor := INT | layers | '(' sum ')' */
static int64_t ex_factor(struct ex *x)
{
	ex_ws(x);
	const char *at = x->p;
	if (x->p < x->e && *x->p == '(') {
		if (x->depth == EXPECT_MAX_DEPTH)
			return ex_fail(x, at, "parentheses nested deeper than 64");
		x->p++, x->depth++;
		int64_t v = ex_sum(x);
		x->depth--;
		ex_ws(x);
		if (x->p >= x->e || *x->p != ')')
			return ex_fail(x, x->p, "expected ')'");
		x->p++;
		return v;
	}
	if ((size_t)(x->e - x->p) >= 6 && !memcmp(x->p, "layers", 6)) {
		x->p += 6;
		x->uses_layers = 1;
		return x->layers;
	}
	int64_t v = 0;
	int over = 0;
	for (; x->p < x->e && *x->p >= '0' && *x->p <= '9'; x->p++)
		over |= __builtin_mul_overflow(v, 10, &v) || __builtin_add_overflow(v, *x->p - '0', &v);
	if (x->p == at)
		return ex_fail(x, at, "expected an integer, 'layers' or '('");
	return over ? ex_fail(x, at, "integer out of range (at most 9223372036854775807)") : v;
}

/* term := factor (('*' | '/') factor)* */
static int64_t ex_term(struct ex *x)
{
	int64_t v = ex_factor(x);
	for (;;) {
		ex_ws(x);
		if (x->err || x->p >= x->e || (*x->p != '*' && *x->p != '/'))
			return v;
		const char *at = x->p;
		char op = *x->p++;
		int64_t w = ex_factor(x);
		if (op == '/' && w == 0)
			return ex_fail(x, at, "division by zero");
		if (op == '*' ? __builtin_mul_overflow(v, w, &v) : (v == INT64_MIN && w == -1))
			return ex_fail(x, at, "the value leaves the 64-bit range");
		v = op == '*' ? v : v / w;
	}
}

/* sum := term (('+' | '-') term)* */
static int64_t ex_sum(struct ex *x)
{
	int64_t v = ex_term(x);
	for (;;) {
		ex_ws(x);
		if (x->err || x->p >= x->e || (*x->p != '+' && *x->p != '-'))
			return v;
		const char *at = x->p;
		char op = *x->p++;
		int64_t w = ex_term(x);
		if (op == '+' ? __builtin_add_overflow(v, w, &v) : __builtin_sub_overflow(v, w, &v))
			return ex_fail(x, at, "the value leaves the 64-bit range");
	}
}

static int compare(int64_t g, const char *op, int64_t want)
{
	return !strcmp(op, "==") ? g == want : !strcmp(op, "!=") ? g != want : !strcmp(op, ">=") ? g >= want
	     : !strcmp(op, "<=") ? g <= want : !strcmp(op, ">") ? g > want : g < want;
}

static int selected(const struct fs_dumpfile *f, const char *sel, size_t n)
{
	if (f->n_errors || !f->n_modules)
		return 0;
	if (!n) /* no selector: the caller keeps the final graphs */
		return 1;
	char buf[64];
	snprintf(buf, sizeof(buf), "%.*s", (int)n, sel);
	char *end;
	long long v = strtoll(buf, &end, 10);
	return (!*end && f->number == v) || !strcmp(f->base, buf);
}

static int final_file(const struct fs_scan *s, uint32_t fi)
{
	const struct fs_dumpfile *f = &s->files[fi];
	if (f->run == UINT32_MAX)
		return 1;
	const struct fs_run *r = &s->runs[f->run];
	for (uint32_t k = r->first_file + r->n_files; k-- > r->first_file;)
		if (s->files[k].n_modules && !s->files[k].n_errors)
			return k == fi;
	return 0;
}

/* One expectation line, parsed: "[@SEL] NAME OP EXPR". */
struct expect {
	struct fs_match_run *r;
	const char *path, *line, *e; /* the file, the line's text and its end */
	uint32_t no;
	const char *sel, *name, *op, *expr;
	size_t nsel, nname;
	char nm[130];                /* the name, NUL-terminated */
	char check[300];
	struct fs_diags *d;
};

static int ex_error(const struct expect *x, const char *at, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* Bad input at `at` of the line (file:line:col); -1. */
static int ex_error(const struct expect *x, const char *at, const char *fmt, ...)
{
	char msg[600];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	fs_diag_add(x->d, FS_ERROR, x->path, x->no, (uint32_t)(at - x->line) + 1, x->line, (size_t)(x->e - x->line), "%s", msg);
	return -1;
}

/* The expression's value with `layers` = layers; -1 after an error. */
static int eval(const struct expect *x, int64_t layers, int64_t *want, int *uses_layers)
{
	struct ex v = {x->expr, x->e, layers, 0, 0, NULL, NULL};
	*want = ex_sum(&v);
	ex_ws(&v);
	if (!v.err && v.p != x->e)
		ex_fail(&v, v.p, "unexpected text");
	*uses_layers = v.uses_layers;
	if (v.err)
		return ex_error(x, v.err_at, "bad expression: %s (integers, layers, + - * / and parentheses)", v.err);
	return 0;
}

/* A gate on one count: got against EXPR with this graph's layers. */
static int judge(struct expect *x, const char *where, const char *what, int64_t got, uint32_t layers, const char *also)
{
	int64_t want;
	int uses;
	if (eval(x, layers, &want, &uses) < 0)
		return -1;
	if (uses && !layers)
		fs_match_gate_add(x->r, 0, x->check, "%s: cannot infer the layer count (no layers_N_ weights, no attention ops)", where);
	else if (compare(got, x->op, want))
		fs_match_gate_add(x->r, 1, x->check, "%s: %s=%lld%s", where, what, (long long)got, also);
	else
		fs_match_gate_add(x->r, 0, x->check, "%s: %s=%lld, expected %s %lld%s%s%s", where, what, (long long)got, x->op,
				  (long long)want, uses ? " (layers inferred)" : "",
				  !got && want > 0 ? ": ZERO matches where a positive count is expected" : "", also);
	return 0;
}

static uint32_t file_layers(const struct fs_match_run *r, uint32_t f)
{
	const struct fs_dumpfile *df = &r->s->files[f];
	return df->n_modules ? r->graphs[r->graph_of_module[df->first_module]].layers : 0;
}

/* A pattern's count in each selected dump (the modules that run). */
static int expect_pattern(struct expect *x, uint32_t gi)
{
	const struct fs_scan *s = x->r->s;
	int applied = 0;
	for (uint32_t f = 0; f < s->n_files; f++) {
		if (!selected(&s->files[f], x->sel, x->nsel) || (!x->nsel && !final_file(s, f)))
			continue;
		applied = 1;
		uint32_t off = 0;
		const char *where = NULL;
		char also[200] = "";
		uint32_t got = fs_match_file_count(x->r, f, gi, &off, &where);
		if (off)
			snprintf(also, sizeof(also), " (and %u in GraphModule '%.80s', which nothing calls: not counted)", off, where);
		if (judge(x, s->files[f].base, "matches", got, file_layers(x->r, f), also) < 0)
			return -1;
	}
	if (!applied)
		fs_match_gate_add(x->r, 0, x->check, "no dump matches the selector");
	return 0;
}

/* An AD transform's count in one log entry (mapped to dump f, or -1). */
static int judge_entry(struct expect *x, const struct fs_adlog *l, const struct fs_adlog_entry *e, int32_t f,
		       uint32_t final)
{
	char where[300];
	snprintf(where, sizeof(where), "%.200s:%u", l->path, e->line);
	if (e->status == FS_AD_RAN) {
		fs_match_gate_add(x->r, 0, x->check, "%s: ran but the log ends before its summary: no count", where);
		return 0;
	}
	const char *also = e->status == FS_AD_DISABLED ? " (disabled)" : e->status == FS_AD_SKIPPED ? " (skipped)" : "";
	return judge(x, where, "matches", e->status == FS_AD_MATCHES ? e->matches : 0,
		     file_layers(x->r, f >= 0 ? (uint32_t)f : final), also);
}

/* The transform's entries in one run's log: those of the selected dumps,
 * or (no selector) every entry of that name. */
static int expect_run(struct expect *x, uint32_t run, const struct fs_match_log *ml, int *applied)
{
	const struct fs_scan *s = x->r->s;
	const struct fs_run *R = &s->runs[run];
	uint32_t final = R->first_file + R->n_files - 1, n = 0;
	const char *name = x->nm;
	for (uint32_t k = 0; x->nsel && k < R->n_files; k++) {
		const struct fs_dumpfile *f = &s->files[R->first_file + k];
		int32_t e = ml->entry_of_file[k];
		if (!selected(f, x->sel, x->nsel))
			continue;
		*applied = 1;
		if (e < 0 || strcmp(ml->log->v[e].transform, name))
			fs_match_gate_add(x->r, 0, x->check, "%s is the dump of %s, not of %s%s", f->base, fs_scan_str(s, f->transform),
					  name, e < 0 ? " (and has no entry in the log)" : "");
		else if (judge_entry(x, ml->log, &ml->log->v[e], (int32_t)(R->first_file + k), final) < 0)
			return -1;
	}
	for (uint32_t i = 0; !x->nsel && i < ml->log->n; i++)
		if (fs_adlog_primary(ml->log, &ml->log->v[i]) && !strcmp(ml->log->v[i].transform, name) && ++n &&
		    judge_entry(x, ml->log, &ml->log->v[i], ml->file_of_entry[i], final) < 0)
			return -1;
	if (!x->nsel && !n)
		fs_match_gate_add(x->r, 0, x->check, "%s has no entry for %s: it did not run", ml->log->path, name);
	*applied |= !x->nsel;
	return 0;
}

/* An AD transform's count, read from each run's log ([SUMMARY] matches=N). */
static int expect_transform(struct expect *x)
{
	const struct fs_scan *s = x->r->s;
	int applied = 0;
	for (uint32_t run = 0; run < s->n_runs; run++) {
		int sel = !x->nsel;
		for (uint32_t k = 0; k < s->runs[run].n_files && !sel; k++)
			sel = selected(&s->files[s->runs[run].first_file + k], x->sel, x->nsel);
		if (!sel)
			continue;
		const struct fs_match_log *ml = fs_match_log_of(x->r, run, x->d);
		if (!ml)
			return ex_error(x, x->name, "'%s' is an AutoDeploy transform: its count is in the run's log, and %s has none "
				     "(give --log FILE, or put ad.log beside the dumps)", x->nm, s->runs[run].dir);
		if (expect_run(x, run, ml, &applied) < 0)
			return -1;
	}
	if (!s->n_runs)
		return ex_error(x, x->name, "'%s' is an AutoDeploy transform: its count is in a run's log; give the run "
				"directory (with its ad.log, or --log FILE)", x->nm);
	if (!applied)
		fs_match_gate_add(x->r, 0, x->check, "no dump matches the selector");
	return 0;
}
/* Every name an expectation may use: patterns, then AD transforms (the
 * catalog's, the dumps', the logs'), for a "did you mean". */
static const char *near_name(const struct fs_match_run *r, const char *w, size_t n)
{
	const struct fs_scan *s = r->s;
	uint32_t k = 0, cap = r->lib->n + s->n_files + 1;
	for (uint32_t i = 0; r->cat && i < r->cat->n; i++)
		cap += r->cat->e[i].n_transforms;
	for (uint32_t run = 0; run < s->n_runs; run++)
		cap += r->logs[run].log ? r->logs[run].log->n : 0;
	const char **v = fs_xmalloc(cap * sizeof(char *));
	for (uint32_t i = 0; i < r->lib->n; i++)
		v[k++] = r->lib->v[i].name;
	for (uint32_t i = 0; r->cat && i < r->cat->n; i++)
		for (uint32_t t = 0; t < r->cat->e[i].n_transforms; t++)
			v[k++] = fs_scan_str(r->cat->scan, r->cat->e[i].transforms[t]);
	for (uint32_t f = 0; f < s->n_files; f++)
		v[k++] = fs_scan_str(s, s->files[f].transform);
	for (uint32_t run = 0; run < s->n_runs; run++)
		for (uint32_t i = 0; r->logs[run].log && i < r->logs[run].log->n; i++)
			v[k++] = r->logs[run].log->v[i].transform;
	const char *near = fs_did_you_mean(w, n, v, k);
	free(v);
	return near;
}

/* NAME: a pattern of this run, else an AD transform; else bad input. */
static int expect_name(struct expect *x)
{
	int32_t gi = fs_match_group(x->r, x->nm);
	if (gi >= 0)
		return expect_pattern(x, (uint32_t)gi);
	if (fs_patlib_find(x->r->lib, x->nm) >= 0)
		return ex_error(x, x->name, "pattern '%s' is left out by --pattern", x->nm);
	if (fs_match_is_transform(x->r, x->nm))
		return expect_transform(x);
	const char *near = near_name(x->r, x->name, x->nname);
	char hint[200] = "";
	if (near)
		snprintf(hint, sizeof(hint), "; did you mean '%.150s'?", near);
	return ex_error(x, x->name, "unknown name '%s' (neither a pattern nor an AutoDeploy transform)%s", x->nm, hint);
}

static int name_char(char c)
{
	return c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
}

/* expect := [ "@" SEL ] NAME OP EXPR, SEL a dump's number or file name */
static int expect_line(struct fs_match_run *r, const char *path, uint32_t no, const char *p, const char *e,
		       struct fs_diags *d)
{
	struct expect x = {.r = r, .path = path, .line = p, .e = e, .no = no, .d = d};
	if (*p == '@') {
		x.sel = ++p;
		while (p < e && *p != ' ' && *p != '\t')
			p++;
		x.nsel = (size_t)(p - x.sel);
		while (p < e && (*p == ' ' || *p == '\t'))
			p++;
	}
	for (x.name = p; p < e && name_char(*p); p++)
		;
	x.nname = (size_t)(p - x.name);
	while (p < e && *p == ' ')
		p++;
	static const char *const ops[] = {"==", "!=", ">=", "<=", ">", "<"};
	for (size_t i = 0; i < 6 && !x.op; i++)
		if ((size_t)(e - p) >= strlen(ops[i]) && !memcmp(p, ops[i], strlen(ops[i])))
			x.op = ops[i];
	if (!x.nname || !x.op || x.nname >= sizeof(x.nm))
		return ex_error(&x, x.nname >= sizeof(x.nm) ? x.name : p, "expected '[@DUMP] NAME OP EXPR' with NAME a pattern "
				"or an AutoDeploy transform (at most 128 characters) and OP one of == != >= <= > <");
	x.expr = p + strlen(x.op);
	snprintf(x.nm, sizeof(x.nm), "%.*s", (int)x.nname, x.name);
	snprintf(x.check, sizeof(x.check), "%.*s (%.100s:%u)", (int)(e - x.line > 150 ? 150 : e - x.line), x.line, path, no);
	return expect_name(&x);
}

int fs_match_gate_expect_text(struct fs_match_run *r, const char *path, const char *text, size_t len, struct fs_diags *d)
{
	int rc = 0;
	uint32_t no = 0;
	for (const char *p = text, *end = text + len; p < end && rc == 0;) {
		const char *nl = memchr(p, '\n', (size_t)(end - p)), *e = nl ? nl : end, *q = p;
		no++;
		p = nl ? nl + 1 : end;
		while (e > q && (e[-1] == '\r' || e[-1] == ' ' || e[-1] == '\t'))
			e--;
		while (q < e && (*q == ' ' || *q == '\t'))
			q++;
		if (q < e && *q != '#')
			rc = expect_line(r, path, no, q, e, d);
	}
	return rc;
}

int fs_match_gate_expect(struct fs_match_run *r, const char *path, struct fs_diags *d)
{
	size_t len;
	char *text = fs_read_input(path, FS_IN_EXPECT, &len);
	if (!text) {
		fs_diag_add(d, FS_ERROR, path, 0, 0, NULL, 0, "cannot read expectations: %s", fs_input_error(errno, FS_IN_EXPECT));
		return -1;
	}
	int rc = fs_match_gate_expect_text(r, path, text, len, d);
	free(text);
	return rc;
}

/* ---- --baseline ------------------------------------------------------------------ */

struct base_row {
	char *dump, *module, *pattern;
	uint32_t matches;
};

static void base_add(struct base_row **v, uint32_t *n, uint32_t *cap, const char *dump, const char *module,
		     const char *pattern, uint32_t matches)
{
	FS_GROW(*v, *cap, *n + 1);
	(*v)[*n].dump = fs_xstrndup(dump, strlen(dump));
	(*v)[*n].module = fs_xstrndup(module, strlen(module));
	(*v)[*n].pattern = fs_xstrndup(pattern, strlen(pattern));
	(*v)[(*n)++].matches = matches;
}

/* One row of a saved report: its fields, each of the type it must have, and
 * the count an integer from 0 to UINT32_MAX; else an error naming the row. */
static int base_row_json(const char *path, int i, const cJSON *it, struct base_row **v, uint32_t *n, uint32_t *cap,
			 struct fs_diags *d)
{
	const cJSON *du = cJSON_GetObjectItemCaseSensitive(it, "dump"), *mo = cJSON_GetObjectItemCaseSensitive(it, "module"),
		    *pa = cJSON_GetObjectItemCaseSensitive(it, "pattern"), *ma = cJSON_GetObjectItemCaseSensitive(it, "matches");
	static const char bad_count[] = "matches: expected a count (an integer from 0 to 4294967295)";
	const char *bad = !cJSON_IsString(du) ? "dump: expected a string"
			: !cJSON_IsString(pa) ? "pattern: expected a string"
			: mo && !cJSON_IsString(mo) ? "module: expected a string"
			: !cJSON_IsNumber(ma) || !(ma->valuedouble >= 0 && ma->valuedouble <= UINT32_MAX) ||
				  ma->valuedouble != (double)(uint32_t)ma->valuedouble
			? bad_count
			: NULL;
	if (bad) { /* a count that is not one: what it was */
		char *got = ma && bad == bad_count ? cJSON_PrintUnformatted(ma) : NULL;
		fs_diag_add(d, FS_ERROR, path, 0, 0, NULL, 0, "results[%d].%s%s%.40s%s", i, bad, got ? ", got '" : "",
			    got ? got : "", got ? "'" : "");
		free(got);
		return -1;
	}
	base_add(v, n, cap, du->valuestring, mo ? mo->valuestring : "(root)", pa->valuestring, (uint32_t)ma->valuedouble);
	return 0;
}

static int base_from_json(const char *path, const char *text, size_t len, struct base_row **v, uint32_t *n,
			  uint32_t *cap, struct fs_diags *d)
{
	const char *end = NULL;
	cJSON *root = cJSON_ParseWithLengthOpts(text, len, &end, 0);
	cJSON *res = root ? cJSON_GetObjectItemCaseSensitive(root, "results") : NULL;
	if (!cJSON_IsArray(res)) {
		fs_diag_add(d, FS_ERROR, path, 0, 0, NULL, 0, "not a fusescan match JSON report (%s)",
			    root ? "no 'results' array" : "invalid JSON");
		cJSON_Delete(root);
		return -1;
	}
	int rc = 0, i = 0;
	const cJSON *it;
	cJSON_ArrayForEach(it, res)
	rc |= base_row_json(path, i++, it, v, n, cap, d);
	cJSON_Delete(root);
	return rc;
}

static int base_from_dumps(struct fs_match_run *r, const char *path, const struct fs_patlib *lib,
			   struct base_row **v, uint32_t *n, uint32_t *cap, struct fs_diags *d)
{
	struct fs_scan *s = fs_scan_new();
	fs_scan_path(s, path);
	int rc = 0;
	if (s->diags.n_errors) {
		fs_diag_add(d, FS_ERROR, path, 0, 0, NULL, 0, "baseline has %u input errors", s->diags.n_errors);
		rc = -1;
	} else {
		const char **names = fs_xmalloc((r->n_groups + 1) * sizeof(char *));
		for (uint32_t i = 0; i < r->n_groups; i++)
			names[i] = r->groups[i].name;
		struct fs_match_run *b = fs_match_run(s, lib, names, r->n_groups, d);
		for (uint32_t f = 0; b && f < s->n_files; f++)
			for (uint32_t mi = s->files[f].first_module; mi < s->files[f].first_module + s->files[f].n_modules; mi++)
				for (uint32_t gi = 0; gi < b->n_groups; gi++)
					base_add(v, n, cap, s->files[f].base, fs_scan_str(s, s->modules[mi].name), b->groups[gi].name,
						 fs_match_count(b, mi, gi));
		fs_match_run_free(b);
		free(names);
	}
	fs_scan_free(s);
	return rc;
}

/* The run's count of group gi in that dump's module, or -1 if it has none. */
static int64_t current(const struct fs_match_run *r, const char *dump, const char *module, uint32_t gi)
{
	const struct fs_scan *s = r->s;
	for (uint32_t f = 0; f < s->n_files; f++) {
		if (strcmp(s->files[f].base, dump))
			continue;
		for (uint32_t mi = s->files[f].first_module; mi < s->files[f].first_module + s->files[f].n_modules; mi++)
			if (!strcmp(fs_scan_str(s, s->modules[mi].name), module))
				return fs_match_count(r, mi, gi);
	}
	return -1;
}

/* A gate per pattern: no count of the baseline's rows dropped. */
static void baseline_gates(struct fs_match_run *r, const char *path, const struct base_row *v, uint32_t n)
{
	for (uint32_t gi = 0; gi < r->n_groups; gi++) {
		char check[300], msg[500] = "";
		size_t k = 0;
		uint32_t drops = 0, compared = 0;
		snprintf(check, sizeof(check), "baseline %s: %s", path, r->groups[gi].name);
		for (uint32_t i = 0; i < n; i++) {
			if (strcmp(v[i].pattern, r->groups[gi].name))
				continue;
			int64_t now = current(r, v[i].dump, v[i].module, gi);
			compared++;
			if (now >= v[i].matches)
				continue;
			drops++;
			if (k < sizeof(msg) - 80)
				k += (size_t)snprintf(msg + k, sizeof(msg) - k, "%s%s: %u -> %s%lld", drops > 1 ? "; " : "",
						      v[i].dump, v[i].matches, now < 0 ? "missing " : "", (long long)(now < 0 ? 0 : now));
		}
		if (!compared)
			fs_match_gate_add(r, 0, check, "the baseline has no counts for this pattern");
		else if (drops)
			fs_match_gate_add(r, 0, check, "%u count%s dropped: %s", drops, drops == 1 ? "" : "s", msg);
		else
			fs_match_gate_add(r, 1, check, "no drop in %u dump%s", compared, compared == 1 ? "" : "s");
	}
}

static void base_release(struct base_row *v, uint32_t n)
{
	for (uint32_t i = 0; i < n; i++) {
		free(v[i].dump);
		free(v[i].module);
		free(v[i].pattern);
	}
	free(v);
}

int fs_match_gate_baseline_json(struct fs_match_run *r, const char *path, const char *text, size_t len, struct fs_diags *d)
{
	struct base_row *v = NULL;
	uint32_t n = 0, cap = 0;
	int rc = base_from_json(path, text, len, &v, &n, &cap, d);
	if (rc == 0)
		baseline_gates(r, path, v, n);
	base_release(v, n);
	return rc;
}

int fs_match_gate_baseline(struct fs_match_run *r, const char *path, const struct fs_patlib *lib,
			   struct fs_diags *d)
{
	struct stat st;
	char *text = NULL;
	size_t len = 0;
	if (stat(path, &st) != 0 || !S_ISDIR(st.st_mode)) { /* a saved report, or one dump */
		if (!(text = fs_read_input(path, FS_IN_BASELINE, &len))) {
			fs_diag_add(d, FS_ERROR, path, 0, 0, NULL, 0, "cannot read baseline: %s", fs_input_error(errno, FS_IN_BASELINE));
			return -1;
		}
		const char *t = text;
		while (t < text + len && (*t == ' ' || *t == '\n' || *t == '\t' || *t == '\r'))
			t++;
		if (t < text + len && *t == '{') {
			int rc = fs_match_gate_baseline_json(r, path, text, len, d);
			free(text);
			return rc;
		}
		free(text);
	}
	struct base_row *v = NULL;
	uint32_t n = 0, cap = 0;
	int rc = base_from_dumps(r, path, lib, &v, &n, &cap, d);
	if (rc == 0)
		baseline_gates(r, path, v, n);
	base_release(v, n);
	return rc;
}
