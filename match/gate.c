/*
 * gate.c: CI gating for `fusescan match`. --expect FILE checks counts
 * against expectations ("rmsnorm >= 2*layers+1", optionally "@015 ..." for
 * one dump); --baseline PATH fails on any count that dropped against another
 * run or a saved JSON report; --log ad.log cross-checks each transform's
 * reported matches with what changed between its before and after dumps.
 * Failures are gate results (exit 1); unreadable or malformed files are
 * input errors (exit 2).
 */
#include "fusescan/matchrun.h"
#include "fusescan/scan.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static void gate(struct fs_match_run *r, int ok, const char *check, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static void gate(struct fs_match_run *r, int ok, const char *check, const char *fmt, ...)
{
	char msg[600];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	FS_GROW(r->gates.v, r->gates.cap, r->gates.n + 1);
	struct fs_gate *g = &r->gates.v[r->gates.n++];
	g->ok = ok;
	g->check = fs_xstrndup(check, strlen(check));
	g->message = fs_xstrndup(msg, strlen(msg));
	r->gates.failed += !ok;
}

/* Matches of a group in a whole file (all its modules). */
static uint32_t file_count(const struct fs_match_run *r, uint32_t file, uint32_t group)
{
	const struct fs_dumpfile *f = &r->s->files[file];
	uint32_t n = 0;
	for (uint32_t mi = f->first_module; mi < f->first_module + f->n_modules; mi++)
		n += fs_match_count(r, mi, group);
	return n;
}

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

static int compare(uint32_t got, const char *op, int64_t want)
{
	int64_t g = got;
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

/* "[@SEL] NAME OP EXPR" */
static int expect_line(struct fs_match_run *r, const char *path, uint32_t no, const char *p, const char *e,
		       struct fs_diags *d)
{
	const char *line = p, *sel = NULL, *name;
	size_t nsel = 0, nname;
	if (*p == '@') {
		sel = ++p;
		while (p < e && *p != ' ' && *p != '\t')
			p++;
		nsel = (size_t)(p - sel);
		while (p < e && (*p == ' ' || *p == '\t'))
			p++;
	}
	name = p;
	while (p < e && (*p == '_' || (*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9')))
		p++;
	nname = (size_t)(p - name);
	while (p < e && *p == ' ')
		p++;
	static const char *const ops[] = {"==", "!=", ">=", "<=", ">", "<"};
	const char *op = NULL;
	for (size_t i = 0; i < 6 && !op; i++)
		if ((size_t)(e - p) >= strlen(ops[i]) && !memcmp(p, ops[i], strlen(ops[i])))
			op = ops[i];
	if (!nname || !op) {
		fs_diag_add(d, FS_ERROR, path, no, (uint32_t)(p - line) + 1, line, (size_t)(e - line),
			    "expected '[@DUMP] PATTERN OP EXPR' with OP one of == != >= <= > <");
		return -1;
	}
	p += strlen(op);
	char pname[128], check[300];
	snprintf(pname, sizeof(pname), "%.*s", (int)nname, name);
	snprintf(check, sizeof(check), "%.*s (%s:%u)", (int)(e - line), line, path, no);
	int32_t gi = fs_match_group(r, pname);
	if (gi < 0) {
		gate(r, 0, check, "unknown pattern '%s'", pname);
		return 0;
	}
	const struct fs_scan *s = r->s;
	int applied = 0;
	for (uint32_t f = 0; f < s->n_files; f++) {
		if (!selected(&s->files[f], sel, nsel) || (!nsel && !final_file(s, f)))
			continue;
		applied = 1;
		const struct fs_mgraph *G = &r->graphs[r->graph_of_module[s->files[f].first_module]];
		struct ex x = {p, e, G->layers, 0, 0, NULL, NULL};
		int64_t want = ex_sum(&x);
		ex_ws(&x);
		if (!x.err && x.p != e)
			ex_fail(&x, x.p, "unexpected text");
		if (x.err) {
			fs_diag_add(d, FS_ERROR, path, no, (uint32_t)(x.err_at - line) + 1, line, (size_t)(e - line),
				    "bad expression: %s (integers, layers, + - * / and parentheses)", x.err);
			return -1;
		}
		uint32_t got = file_count(r, f, (uint32_t)gi);
		if (x.uses_layers && !G->layers)
			gate(r, 0, check, "%s: cannot infer the layer count (no layers_N_ weights, no attention ops)", s->files[f].base);
		else if (compare(got, op, want))
			gate(r, 1, check, "%s: matches=%u", s->files[f].base, got);
		else
			gate(r, 0, check, "%s: matches=%u, expected %s %lld%s%s", s->files[f].base, got, op, (long long)want,
			     x.uses_layers ? " (layers inferred)" : "",
			     !got && want > 0 ? ": ZERO matches where a positive count is expected" : "");
	}
	if (!applied)
		gate(r, 0, check, "no dump matches the selector");
	return 0;
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
			gate(r, 0, check, "the baseline has no counts for this pattern");
		else if (drops)
			gate(r, 0, check, "%u count%s dropped: %s", drops, drops == 1 ? "" : "s", msg);
		else
			gate(r, 1, check, "no drop in %u dump%s", compared, compared == 1 ? "" : "s");
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

/* ---- --log --------------------------------------------------------------------------- */

static int32_t log_run(const struct fs_scan *s, const char *path)
{
	char a[PATH_MAX], b[PATH_MAX];
	if (realpath(path, a))
		for (uint32_t i = 0; i < s->n_runs; i++)
			if (s->runs[i].log && realpath(s->runs[i].log, b) && !strcmp(a, b))
				return (int32_t)i;
	return s->n_runs == 1 ? 0 : -1;
}

/* What a transform with matches=N visibly did. A rewrite puts one new op per
 * match, so when ops appeared, one of them must have appeared N times; a
 * cleanup only removes, so then a pattern's count must have fallen by N. */
static int explain_change(const struct fs_match_run *r, uint32_t prev, uint32_t cur, int64_t n, char *buf, size_t len)
{
	const struct fs_scan *s = r->s;
	size_t k = 0;
	int rose = 0, found = 0;
	buf[0] = '\0';
	uint32_t *ha = fs_dumpfile_op_counts(s, &s->files[prev]), *hb = fs_dumpfile_op_counts(s, &s->files[cur]);
	for (uint32_t op = 1; op < s->n_ops; op++) {
		if (hb[op] <= ha[op])
			continue;
		rose = 1;
		if (k < len)
			k += (size_t)snprintf(buf + k, len - k, "%s+%u %s", k ? "; " : "", hb[op] - ha[op],
					      fs_scan_str(s, s->ops[op].target));
		found |= (int64_t)(hb[op] - ha[op]) == n;
	}
	free(ha);
	free(hb);
	for (uint32_t gi = 0; gi < r->n_groups && k < len; gi++) {
		uint32_t a = file_count(r, prev, gi), b = file_count(r, cur, gi);
		if (a == b)
			continue;
		k += (size_t)snprintf(buf + k, len - k, "%s%s %u -> %u", k ? "; " : "", r->groups[gi].name, a, b);
		found |= !rose && (int64_t)a - (int64_t)b == n;
	}
	return found;
}

static void check_entry(struct fs_match_run *r, const struct fs_adlog_entry *e, const struct fs_run *run)
{
	const struct fs_scan *s = r->s;
	char check[300], why[600];
	snprintf(check, sizeof(check), "ad.log:%u %s", e->line, e->transform);
	int32_t cur = -1;
	for (uint32_t i = 0; i < run->n_files && cur < 0; i++)
		if (!strcmp(fs_scan_str(s, s->files[run->first_file + i].transform), e->transform))
			cur = (int32_t)(run->first_file + i);
	if (cur < 0)
		return gate(r, 0, check, "no dump of this transform in %s", run->dir);
	if ((uint32_t)cur == run->first_file)
		return gate(r, 1, check, "first dump of the run: nothing to compare with");
	const struct fs_dumpfile *a = &s->files[cur - 1], *b = &s->files[cur];
	if (a->n_errors || b->n_errors)
		return gate(r, 0, check, "%s or the dump before it did not parse", b->base);
	int same = fs_dumpfiles_identical(s, a, b);
	if (e->status == FS_AD_RAN)
		return gate(r, 0, check, "ran (%u lines) but the log ends before its summary: no count to check", e->n_detail);
	if (e->status != FS_AD_MATCHES || e->matches == 0) {
		const char *st = e->status == FS_AD_DISABLED ? "disabled" : e->status == FS_AD_SKIPPED ? "skipped" : "matches=0";
		return gate(r, same, check, "%s; %s %s", st, b->base,
			    same ? "is identical to the dump before it" : "CHANGED the graph although the log says nothing matched");
	}
	if (same)
		return gate(r, 0, check, "reported matches=%lld but %s is identical to the dump before it",
			    (long long)e->matches, b->base);
	int ok = explain_change(r, (uint32_t)cur - 1, (uint32_t)cur, e->matches, why, sizeof(why));
	gate(r, ok, check, "reported matches=%lld; %s%s", (long long)e->matches, ok ? "" : "DISAGREES with the dumps: ",
	     why[0] ? why : "nothing changed");
}

int fs_match_check_log(struct fs_match_run *r, const char *path, struct fs_diags *d)
{
	uint32_t errors = d->n_errors;
	fs_adlog_load(&r->log, path, d); /* unreadable summaries are warnings: the rest is checked */
	if (d->n_errors > errors)
		return -1;
	r->log_run = log_run(r->s, path);
	if (r->log_run < 0) {
		fs_diag_add(d, FS_ERROR, path, 0, 0, NULL, 0,
			    "--log: give the log's run directory (the log is not the ad.log of one of the %u runs)", r->s->n_runs);
		return -1;
	}
	for (uint32_t i = 0; i < r->log.n; i++) /* the rank that wrote the dumps */
		if (fs_adlog_primary(&r->log, &r->log.v[i]))
			check_entry(r, &r->log.v[i], &r->s->runs[r->log_run]);
	return 0;
}
