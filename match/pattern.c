/*
 * pattern.c: the pattern-file parser (language in docs/patterns.md), one
 * function per statement. Op regexes are compiled once with PCRE2, anchored,
 * and JIT-compiled where the platform allows; a bad regex is reported at its
 * file:line:col with PCRE2's own message. Called by `fusescan match`.
 */
#define PCRE2_CODE_UNIT_WIDTH 8
#include "fusescan/pattern.h"

#include <dirent.h>
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <pcre2.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

void fs_patlib_init(struct fs_patlib *l)
{
	memset(l, 0, sizeof(*l));
}

struct pparse {
	const char *path;
	struct fs_diags *d;
	const char *line, *end; /* current line */
	uint32_t no, errors;
	struct fs_pattern *p;   /* the variant being read */
	struct fs_pattern *done; /* variants already read */
	uint32_t n_done;
	uint32_t pattern_line;  /* the 'pattern NAME' statement */
};

/* An error about a whole statement on an earlier line: line:1, no excerpt. */
static void perr_line(struct pparse *P, uint32_t line, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

static void perr_line(struct pparse *P, uint32_t line, const char *fmt, ...)
{
	char msg[320];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	fs_diag_add(P->d, FS_ERROR, P->path, line, 1, NULL, 0, "%s", msg);
	P->errors++;
}

static void perr(struct pparse *P, const char *at, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

static void perr(struct pparse *P, const char *at, const char *fmt, ...)
{
	char msg[320];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (at < P->line || at > P->end)
		at = P->line;
	fs_diag_add(P->d, FS_ERROR, P->path, P->no, (uint32_t)(at - P->line) + 1, P->line,
		    (size_t)(P->end - P->line), "%s", msg);
	P->errors++;
}

static void ws(const char **p, const char *e)
{
	while (*p < e && (**p == ' ' || **p == '\t'))
		(*p)++;
}

static int is_word(char c)
{
	return c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
}

/* A word: letters, digits, '_'. Returns its length (0 if none). */
static size_t word(const char **p, const char *e, const char **w)
{
	ws(p, e);
	*w = *p;
	while (*p < e && is_word(**p))
		(*p)++;
	return (size_t)(*p - *w);
}

static int kw(const char *w, size_t n, const char *lit)
{
	return strlen(lit) == n && !memcmp(w, lit, n);
}

static int32_t find_node(const struct fs_pattern *p, const char *w, size_t n)
{
	for (uint32_t i = 0; i < p->n_nodes; i++)
		if (strlen(p->nodes[i].name) == n && !memcmp(p->nodes[i].name, w, n))
			return (int32_t)i;
	return -1;
}

static uint32_t var_index(struct fs_pattern *p, const char *w, size_t n)
{
	for (uint32_t i = 0; i < p->n_vars; i++)
		if (strlen(p->vars[i]) == n && !memcmp(p->vars[i], w, n))
			return i;
	p->vars = fs_xrealloc(p->vars, (p->n_vars + 1) * sizeof(char *));
	p->vars[p->n_vars] = fs_xstrndup(w, n);
	return p->n_vars++;
}

/* ---- dtypes ------------------------------------------------------------------- */

static int dtype_word(const char *w, size_t n)
{
	static const struct {
		const char *name;
		enum fs_dtype dt;
	} alias[] = {
		{"fp32", FS_DT_F32}, {"float32", FS_DT_F32}, {"float", FS_DT_F32}, {"fp16", FS_DT_F16},
		{"float16", FS_DT_F16}, {"half", FS_DT_F16}, {"bf16", FS_DT_BF16}, {"bfloat16", FS_DT_BF16},
		{"fp64", FS_DT_F64}, {"float64", FS_DT_F64}, {"int64", FS_DT_I64}, {"int32", FS_DT_I32},
		{"int8", FS_DT_I8}, {"uint8", FS_DT_U8}, {"bool", FS_DT_BOOL},
	};
	if (n > 6 && !memcmp(w, "torch.", 6)) {
		enum fs_dtype d = fs_dtype_parse(w, n);
		return d == FS_DT_OTHER ? -1 : (int)d;
	}
	for (size_t i = 0; i < sizeof(alias) / sizeof(alias[0]); i++)
		if (kw(w, n, alias[i].name))
			return (int)alias[i].dt;
	return -1;
}

/* ---- arguments ------------------------------------------------------------------ */

static void push_arg(struct fs_pnode *pn, uint32_t *cap, struct fs_parg a)
{
	FS_GROW(pn->args, *cap, pn->n_args + 1);
	pn->args[pn->n_args++] = a;
}

static int parse_args(struct pparse *P, struct fs_pnode *pn, uint32_t *cap, const char **p, char close);

/* '[' args ']' | '(' args ')': a FS_PA_LIST arg followed by its members; its span counts
 * itself and every arg inside, so a matcher can skip the whole list. */
static int list_arg(struct pparse *P, struct fs_pnode *pn, uint32_t *cap, const char **p, struct fs_parg a)
{
	char close = **p == '[' ? ']' : ')';
	uint32_t at = pn->n_args;
	a.kind = FS_PA_LIST;
	push_arg(pn, cap, a);
	(*p)++;
	if (parse_args(P, pn, cap, p, close) < 0)
		return -1;
	pn->args[at].span = pn->n_args - at;
	return 0;
}

/* 'str' | "str": no escapes; the string ends at the next quote of the same kind */
static int str_arg(struct pparse *P, struct fs_parg *a, const char **p)
{
	const char *s = *p, *q = memchr(s + 1, *s, (size_t)(P->end - s - 1));
	if (!q)
		return perr(P, s, "unterminated string"), -1;
	a->kind = FS_PA_STR;
	a->text = fs_xstrndup(s + 1, (size_t)(q - s - 1));
	*p = q + 1;
	return 0;
}

/* $var: captured into (or compared with) the pattern's variable of that name */
static int var_arg(struct pparse *P, struct fs_parg *a, const char **p)
{
	const char *s = *p, *w;
	(*p)++;
	size_t n = word(p, P->end, &w);
	if (!n)
		return perr(P, s, "expected a variable name after '$'"), -1;
	a->kind = FS_PA_VAR;
	a->ref = var_index(P->p, w, n);
	return 0;
}

enum { NUMBER_MAX = 64 }; /* longest number literal, with its NUL */

/* number: an integer if strtoll takes all of it, else a float */
static int number_arg(struct pparse *P, struct fs_parg *a, const char *s, size_t n)
{
	char buf[NUMBER_MAX], *end;
	memcpy(buf, s, n);
	buf[n] = '\0';
	long long v = strtoll(buf, &end, 10);
	if (*end == '\0') {
		a->kind = FS_PA_INT;
		a->i = v;
		return 0;
	}
	a->f = strtod(buf, &end);
	if (*end)
		return perr(P, s, "bad number '%s'", buf), -1;
	a->kind = FS_PA_FLOAT;
	return 0;
}

/* A bare token up to ',', ')', ']' or ' ': _ | True | False | None | torch.dtype | number | NAME */
static int bare_arg(struct pparse *P, struct fs_parg *a, const char **p)
{
	const char *s = *p, *t = s, *e = P->end;
	while (t < e && *t != ',' && *t != ')' && *t != ']' && *t != ' ')
		t++;
	size_t n = (size_t)(t - s);
	*p = t;
	if (kw(s, n, "_"))
		a->kind = FS_PA_ANY;
	else if (kw(s, n, "True") || kw(s, n, "False")) {
		a->kind = FS_PA_BOOL;
		a->i = *s == 'T';
	} else if (kw(s, n, "None"))
		a->kind = FS_PA_NONE;
	else if (n > 6 && !memcmp(s, "torch.", 6)) {
		a->kind = FS_PA_DTYPE;
		a->i = dtype_word(s, n);
		if (a->i < 0)
			return perr(P, s, "unknown dtype '%.*s'", (int)n, s), -1;
	} else if (n && n < NUMBER_MAX && ((*s >= '0' && *s <= '9') || *s == '-' || *s == '.'))
		return number_arg(P, a, s, n);
	else {
		int32_t ref = n ? find_node(P->p, s, n) : -1;
		if (ref < 0)
			return perr(P, s, "unknown node '%.*s' (define inputs and nodes before using them)", (int)n, s), -1;
		a->kind = FS_PA_REF;
		a->ref = (uint32_t)ref;
	}
	return 0;
}

/* arg := NAME | _ | ... | $var | number | True | False | None | torch.dtype | 'str' | [args] | (args) */
static int parse_arg(struct pparse *P, struct fs_pnode *pn, uint32_t *cap, const char **p)
{
	const char *e = P->end, *s;
	struct fs_parg a;
	memset(&a, 0, sizeof(a));
	a.span = 1;
	ws(p, e);
	s = *p;
	if (s >= e)
		return perr(P, s, "expected an argument"), -1;
	if (*s == '[' || *s == '(')
		return list_arg(P, pn, cap, p, a);
	int rc;
	if (*s == '\'' || *s == '"')
		rc = str_arg(P, &a, p);
	else if (e - s >= 3 && !memcmp(s, "...", 3)) {
		a.kind = FS_PA_REST;
		*p = s + 3;
		rc = 0;
	} else if (*s == '$')
		rc = var_arg(P, &a, p);
	else
		rc = bare_arg(P, &a, p);
	if (rc < 0)
		return -1;
	push_arg(pn, cap, a);
	return 0;
}

/* args := '(' [arg (',' arg)*] ')' ; the opening bracket is consumed */
static int parse_args(struct pparse *P, struct fs_pnode *pn, uint32_t *cap, const char **p, char close)
{
	ws(p, P->end);
	if (*p < P->end && **p == close) {
		(*p)++;
		return 0;
	}
	for (;;) {
		if (parse_arg(P, pn, cap, p) < 0)
			return -1;
		ws(p, P->end);
		if (*p < P->end && **p == ',') {
			(*p)++;
			continue;
		}
		if (*p < P->end && **p == close) {
			(*p)++;
			return 0;
		}
		return perr(P, *p, "expected ',' or '%c'", close), -1;
	}
}

/* ---- statements ---------------------------------------------------------------------- */

/* flags := (commutative | shared | weight | dtype=D[|D...] | rank=N)* */
static int parse_flags(struct pparse *P, struct fs_pnode *pn, const char *p)
{
	const char *e = P->end, *w;
	for (;;) {
		size_t n = word(&p, e, &w);
		if (!n)
			break;
		if (kw(w, n, "commutative") && pn->kind != FS_PN_INPUT)
			pn->flags |= FS_PF_COMMUTATIVE;
		else if (kw(w, n, "shared"))
			pn->flags |= FS_PF_SHARED;
		else if (kw(w, n, "weight") && pn->kind == FS_PN_INPUT)
			pn->flags |= FS_PF_WEIGHT;
		else if ((kw(w, n, "dtype") || kw(w, n, "rank")) && p < e && *p == '=') {
			p++;
			if (kw(w, n, "rank")) {
				const char *v = p;
				pn->rank = (int32_t)strtol(p, (char **)&p, 10);
				if (p == v)
					return perr(P, v, "expected a number after rank="), -1;
				continue;
			}
			do {
				const char *d = p;
				while (p < e && *p != '|' && *p != ' ')
					p++;
				int dt = dtype_word(d, (size_t)(p - d));
				if (dt < 0)
					return perr(P, d, "unknown dtype '%.*s'", (int)(p - d), d), -1;
				pn->dtypes |= 1ull << dt;
			} while (p < e && *p == '|' && ++p);
		} else
			return perr(P, w, "unknown flag '%.*s' (commutative, shared, weight, dtype=, rank=)", (int)n, w), -1;
	}
	ws(&p, e);
	if (p < e)
		return perr(P, p, "unexpected text"), -1;
	return 0;
}

static struct fs_pnode *new_pnode(struct pparse *P, const char *w, size_t n, uint8_t kind)
{
	struct fs_pattern *pt = P->p;
	if (find_node(pt, w, n) >= 0)
		return perr(P, w, "node '%.*s' is defined twice", (int)n, w), NULL;
	FS_GROW(pt->nodes, pt->cap_nodes, pt->n_nodes + 1);
	struct fs_pnode *pn = &pt->nodes[pt->n_nodes++];
	memset(pn, 0, sizeof(*pn));
	pn->name = fs_xstrndup(w, n);
	pn->kind = kind;
	pn->rank = -1;
	pn->line = P->no;
	return pn;
}

static int compile_regex(struct pparse *P, struct fs_pnode *pn, const char *re, size_t n)
{
	static const char pre[] = "^(?:", post[] = ")$";
	size_t len = sizeof(pre) - 1 + n + sizeof(post) - 1;
	char *full = fs_xmalloc(len + 1);
	snprintf(full, len + 1, "%s%.*s%s", pre, (int)n, re, post);
	int err;
	PCRE2_SIZE off;
	pcre2_code *code = pcre2_compile((PCRE2_SPTR)full, len, 0, &err, &off, NULL);
	free(full);
	if (!code) {
		PCRE2_UCHAR msg[256];
		pcre2_get_error_message(err, msg, sizeof(msg));
		size_t at = off >= sizeof(pre) - 1 ? off - (sizeof(pre) - 1) : 0;
		if (at > n)
			at = n;
		return perr(P, re + at, "bad op regex: %s (PCRE2, offset %zu)", (const char *)msg, at), -1;
	}
	pcre2_jit_compile(code, PCRE2_JIT_COMPLETE); /* the interpreter serves when JIT is unavailable */
	pn->code = code;
	pn->regex = fs_xstrndup(re, n);
	return 0;
}

/* node NAME REGEX (ARGS) FLAGS | optional NAME REGEX (ARGS) FLAGS */
static void op_statement(struct pparse *P, const char *p, uint8_t kind)
{
	const char *e = P->end, *w;
	size_t n = word(&p, e, &w);
	if (!n)
		return perr(P, p, "expected a node name");
	struct fs_pnode *pn = new_pnode(P, w, n, kind);
	if (!pn)
		return;
	ws(&p, e);
	const char *re = p;
	while (p < e && *p != ' ' && *p != '\t')
		p++;
	if (p == re)
		return perr(P, re, "expected an op regex");
	if (compile_regex(P, pn, re, (size_t)(p - re)) < 0)
		return;
	ws(&p, e);
	if (p >= e || *p != '(')
		return perr(P, p, "expected '(' and the arguments after the op regex");
	p++;
	uint32_t cap = 0;
	if (parse_args(P, pn, &cap, &p, ')') < 0)
		return;
	if (kind == FS_PN_OPTIONAL && (!pn->n_args || pn->args[0].kind != FS_PA_REF))
		return perr(P, w, "an optional node passes its first argument through: it must name a node");
	parse_flags(P, pn, p);
}

static void input_statement(struct pparse *P, const char *p)
{
	const char *w;
	size_t n = word(&p, P->end, &w);
	if (!n)
		return perr(P, p, "expected an input name");
	struct fs_pnode *pn = new_pnode(P, w, n, FS_PN_INPUT);
	if (pn)
		parse_flags(P, pn, p);
}

static void output_statement(struct pparse *P, const char *p)
{
	struct fs_pattern *pt = P->p;
	for (;;) {
		const char *w;
		size_t n = word(&p, P->end, &w);
		int32_t i = n ? find_node(pt, w, n) : -1;
		if (i < 0)
			return perr(P, w, "output names an unknown node");
		if (pt->nodes[i].kind != FS_PN_OP)
			return perr(P, w, "an output must be an op node");
		pt->nodes[i].flags |= FS_PF_OUTPUT;
		pt->outputs = fs_xrealloc(pt->outputs, (pt->n_outputs + 1) * sizeof(uint32_t));
		pt->outputs[pt->n_outputs++] = (uint32_t)i;
		ws(&p, P->end);
		if (p < P->end && *p == ',') {
			p++;
			continue;
		}
		if (p < P->end)
			perr(P, p, "expected ',' or the end of the line");
		return;
	}
}

/* dim(NAME, INT) */
static int dim_ref(struct pparse *P, const char **p, uint32_t *node, int32_t *idx)
{
	const char *e = P->end, *w;
	size_t n = word(p, e, &w);
	if (!kw(w, n, "dim") || *p >= e || **p != '(')
		return perr(P, w, "expected dim(node, index)"), -1;
	(*p)++;
	n = word(p, e, &w);
	int32_t i = n ? find_node(P->p, w, n) : -1;
	if (i < 0)
		return perr(P, w, "unknown node in dim()"), -1;
	ws(p, e);
	if (*p >= e || **p != ',')
		return perr(P, *p, "expected ','"), -1;
	(*p)++;
	ws(p, e);
	char *end;
	*idx = (int32_t)strtol(*p, &end, 10);
	if (end == *p || end > e)
		return perr(P, *p, "expected a dim index"), -1;
	*p = end;
	ws(p, e);
	if (*p >= e || **p != ')')
		return perr(P, *p, "expected ')'"), -1;
	(*p)++;
	*node = (uint32_t)i;
	return 0;
}

static int number(struct pparse *P, const char **p, double *v)
{
	char *end;
	ws(p, P->end);
	*v = strtod(*p, &end);
	if (end == *p || end > P->end)
		return perr(P, *p, "expected a number"), -1;
	*p = end;
	return 0;
}

static int expect(struct pparse *P, const char **p, const char *lit)
{
	ws(p, P->end);
	size_t n = strlen(lit);
	if ((size_t)(P->end - *p) < n || memcmp(*p, lit, n))
		return perr(P, *p, "expected '%s'", lit), -1;
	*p += n;
	return 0;
}

/* RANGE: $v in [lo, hi] */
static int where_range(struct pparse *P, const char **p, struct fs_where *wh)
{
	const char *w;
	(*p)++;
	size_t n = word(p, P->end, &w);
	if (!n)
		return perr(P, *p, "expected a variable name after '$'"), -1;
	wh->kind = FS_WH_RANGE;
	wh->var = var_index(P->p, w, n);
	if (expect(P, p, "in") < 0 || expect(P, p, "[") < 0 || number(P, p, &wh->lo) < 0 ||
	    expect(P, p, ",") < 0 || number(P, p, &wh->hi) < 0 || expect(P, p, "]") < 0)
		return -1;
	return 0;
}

/* RANK: rank(a) == n */
static int where_rank(struct pparse *P, const char **p, struct fs_where *wh)
{
	const char *w;
	double v;
	word(p, P->end, &w);
	if (expect(P, p, "(") < 0)
		return -1;
	size_t n = word(p, P->end, &w);
	int32_t i = n ? find_node(P->p, w, n) : -1;
	if (i < 0)
		return perr(P, w, "unknown node in rank()"), -1;
	if (expect(P, p, ")") < 0 || expect(P, p, "==") < 0 || number(P, p, &v) < 0)
		return -1;
	wh->kind = FS_WH_RANK;
	wh->a = (uint32_t)i;
	wh->c = (int64_t)v;
	return 0;
}

/* DIM: dim(a, i) == [k *] dim(b, j) [+|- c]  |  dim(a, i) == c */
static int where_dim(struct pparse *P, const char **p, struct fs_where *wh)
{
	wh->kind = FS_WH_DIM;
	if (dim_ref(P, p, &wh->a, &wh->ai) < 0 || expect(P, p, "==") < 0)
		return -1;
	ws(p, P->end);
	if (*p < P->end && ((**p >= '0' && **p <= '9') || **p == '-')) {
		double v;
		if (number(P, p, &v) < 0)
			return -1;
		ws(p, P->end);
		if (*p >= P->end || **p != '*') {
			wh->c = (int64_t)v; /* a constant: b stays UINT32_MAX */
			return 0;
		}
		(*p)++;
		wh->k = (int64_t)v;
	}
	if (dim_ref(P, p, &wh->b, &wh->bi) < 0)
		return -1;
	ws(p, P->end);
	if (*p < P->end && (**p == '+' || **p == '-')) {
		int neg = **p == '-';
		double v;
		(*p)++;
		if (number(P, p, &v) < 0)
			return -1;
		wh->c = neg ? -(int64_t)v : (int64_t)v;
	}
	return 0;
}

/* DISTINCT: a != b (two pattern names bound to different graph values) */
static int where_distinct(struct pparse *P, const char **p, struct fs_where *wh)
{
	const char *w;
	size_t n = word(p, P->end, &w);
	int32_t a = n ? find_node(P->p, w, n) : -1;
	if (a < 0)
		return perr(P, w, "unknown node in '!='"), -1;
	if (expect(P, p, "!=") < 0)
		return -1;
	ws(p, P->end);
	n = word(p, P->end, &w);
	int32_t b = n ? find_node(P->p, w, n) : -1;
	if (b < 0)
		return perr(P, w, "unknown node after '!='"), -1;
	wh->kind = FS_WH_DISTINCT;
	wh->a = (uint32_t)a;
	wh->b = (uint32_t)b;
	return 0;
}

/* NAME != NAME (after a word, not a call) */
static int is_distinct(const char *p, const char *end)
{
	while (p < end && (isalnum((unsigned char)*p) || *p == '_'))
		p++;
	while (p < end && *p == ' ')
		p++;
	return end - p >= 2 && p[0] == '!' && p[1] == '=';
}

static void where_statement(struct pparse *P, const char *p)
{
	struct fs_pattern *pt = P->p;
	struct fs_where wh;
	memset(&wh, 0, sizeof(wh));
	wh.line = P->no;
	wh.b = UINT32_MAX;
	wh.k = 1;
	ws(&p, P->end);
	const char *text = p;
	int r = p < P->end && *p == '$' ? where_range(P, &p, &wh)
	      : (P->end - p > 5 && !memcmp(p, "rank(", 5)) ? where_rank(P, &p, &wh)
	      : is_distinct(p, P->end)			  ? where_distinct(P, &p, &wh)
							  : where_dim(P, &p, &wh);
	if (r < 0)
		return;
	ws(&p, P->end);
	if (p < P->end)
		return perr(P, p, "unexpected text after the constraint");
	wh.text = fs_xstrndup(text, (size_t)(P->end - text));
	FS_GROW(pt->where, pt->cap_where, pt->n_where + 1);
	pt->where[pt->n_where++] = wh;
}

static void set_text(struct pparse *P, char **dst, const char *p, const char *what)
{
	ws(&p, P->end);
	if (p == P->end)
		return perr(P, p, "expected %s", what);
	free(*dst);
	*dst = fs_xstrndup(p, (size_t)(P->end - p));
}

/* pattern NAME: NAME := [A-Za-z_][A-Za-z0-9_]* (at most 64 bytes), for it
 * becomes identifiers and file names (fuse_<name>) in what fusescan writes */
static void name_statement(struct pparse *P, const char *p)
{
	ws(&p, P->end);
	const char *q = p;
	while (q < P->end && (*q == '_' || (*q >= 'a' && *q <= 'z') || (*q >= 'A' && *q <= 'Z') || (q > p && *q >= '0' && *q <= '9')))
		q++;
	const char *e = q;
	ws(&e, P->end);
	if (q == p || e != P->end || q - p > 64)
		return perr(P, q == p || e != P->end ? q : p, "a pattern name is [A-Za-z_][A-Za-z0-9_]*, at most 64 characters");
	free(P->p->name);
	P->p->name = fs_xstrndup(p, (size_t)(q - p));
}

static void validate(struct pparse *P);
static void free_pattern(struct fs_pattern *p);

static char *dup_or_null(const char *s)
{
	return s ? fs_xstrndup(s, strlen(s)) : NULL;
}

/* variant NAME: closes the variant being read (if it has nodes) and starts
 * another with the same name, description, replacement and catalog entry. */
static void variant_statement(struct pparse *P, const char *p)
{
	const char *w;
	size_t n = word(&p, P->end, &w);
	if (!n)
		return perr(P, p, "expected a variant name");
	struct fs_pattern *cur = P->p;
	if (cur->n_nodes) {
		validate(P);
		P->done = fs_xrealloc(P->done, (P->n_done + 1) * sizeof(*P->done));
		P->done[P->n_done++] = *cur;
		struct fs_pattern next;
		memset(&next, 0, sizeof(next));
		next.name = dup_or_null(cur->name);
		next.description = dup_or_null(cur->description);
		next.replace = dup_or_null(cur->replace);
		next.catalog = dup_or_null(cur->catalog);
		*cur = next;
	}
	free(cur->variant);
	cur->variant = fs_xstrndup(w, n);
}

/* One statement per line: the first word says which. */
static void statement(struct pparse *P, const char *p)
{
	const char *w;
	size_t n = word(&p, P->end, &w);
	if (kw(w, n, "pattern")) {
		name_statement(P, p);
		P->pattern_line = P->no;
	}
	else if (!P->p->name)
		perr(P, w, "a pattern file starts with 'pattern NAME'");
	else if (kw(w, n, "description"))
		set_text(P, &P->p->description, p, "a description");
	else if (kw(w, n, "replace"))
		set_text(P, &P->p->replace, p, "the replacement op");
	else if (kw(w, n, "catalog"))
		set_text(P, &P->p->catalog, p, "a catalog entry name");
	else if (kw(w, n, "input"))
		input_statement(P, p);
	else if (kw(w, n, "node"))
		op_statement(P, p, FS_PN_OP);
	else if (kw(w, n, "optional"))
		op_statement(P, p, FS_PN_OPTIONAL);
	else if (kw(w, n, "output"))
		output_statement(P, p);
	else if (kw(w, n, "where"))
		where_statement(P, p);
	else if (kw(w, n, "variant"))
		variant_statement(P, p);
	else
		perr(P, w, "unknown statement (pattern, description, replace, catalog, variant, input, node, optional, output, where)");
}

static void free_pattern(struct fs_pattern *p)
{
	for (uint32_t i = 0; i < p->n_nodes; i++) {
		struct fs_pnode *n = &p->nodes[i];
		for (uint32_t k = 0; k < n->n_args; k++)
			free(n->args[k].text);
		free(n->args);
		free(n->name);
		free(n->regex);
		pcre2_code_free(n->code);
	}
	for (uint32_t i = 0; i < p->n_vars; i++)
		free(p->vars[i]);
	for (uint32_t i = 0; i < p->n_where; i++)
		free(p->where[i].text);
	free(p->vars);
	free(p->where);
	free(p->nodes);
	free(p->outputs);
	free(p->name);
	free(p->path);
	free(p->description);
	free(p->replace);
	free(p->catalog);
	free(p->variant);
}

/* Whole-pattern checks, reported on the statement concerned: an output, every
 * node used, every constrained variable captured. */
static void validate(struct pparse *P)
{
	struct fs_pattern *pt = P->p;
	if (!pt->name)
		return perr_line(P, P->no, "missing 'pattern NAME'");
	if (!pt->n_outputs)
		return perr_line(P, P->pattern_line, "pattern '%s'%s%s has no 'output' line", pt->name,
				 pt->variant ? ", variant " : "", pt->variant ? pt->variant : "");
	uint8_t *used = fs_xcalloc(pt->n_nodes + 1, 1), *captured = fs_xcalloc(pt->n_vars + 1, 1);
	for (uint32_t i = 0; i < pt->n_nodes; i++)
		for (uint32_t k = 0; k < pt->nodes[i].n_args; k++) {
			const struct fs_parg *a = &pt->nodes[i].args[k];
			if (a->kind == FS_PA_REF)
				used[a->ref] = 1;
			else if (a->kind == FS_PA_VAR)
				captured[a->ref] = 1;
		}
	for (uint32_t i = 0; i < pt->n_nodes; i++) {
		if (pt->nodes[i].kind != FS_PN_INPUT)
			pt->n_ops++;
		if (!used[i] && !(pt->nodes[i].flags & FS_PF_OUTPUT))
			perr_line(P, pt->nodes[i].line, "node '%s' is not used by any output", pt->nodes[i].name);
	}
	for (uint32_t w = 0; w < pt->n_where; w++)
		if (pt->where[w].kind == FS_WH_RANGE && !captured[pt->where[w].var])
			perr_line(P, pt->where[w].line, "variable $%s is constrained but never captured",
				  pt->vars[pt->where[w].var]);
	free(used);
	free(captured);
}

/* Sets P->line..P->end to the next line from *pos, its comment ('#' at the start or after a
 * space) and trailing blanks cut; *pos moves past the newline. */
static void next_line(struct pparse *P, const char **pos, const char *end)
{
	const char *nl = memchr(*pos, '\n', (size_t)(end - *pos));
	const char *e = nl ? nl : end;
	P->line = *pos;
	P->no++;
	*pos = nl ? nl + 1 : end;
	if (e > P->line && e[-1] == '\r')
		e--;
	const char *hash = P->line;
	while ((hash = memchr(hash, '#', (size_t)(e - hash))) && hash > P->line && hash[-1] != ' ' && hash[-1] != '\t')
		hash++;
	P->end = hash ? hash : e;
	while (P->end > P->line && (P->end[-1] == ' ' || P->end[-1] == '\t'))
		P->end--;
}

/* The file's variants join the library only if the whole file parsed: all or none. */
static void keep_variants(struct fs_patlib *l, struct pparse *P)
{
	for (uint32_t i = 0; i < P->n_done; i++) {
		if (P->errors) {
			free_pattern(&P->done[i]);
			continue;
		}
		P->done[i].path = fs_xstrndup(P->path, strlen(P->path));
		FS_GROW(l->v, l->cap, l->n + 1);
		l->v[l->n++] = P->done[i];
	}
	free(P->done);
}

uint32_t fs_patlib_parse(struct fs_patlib *l, const char *path, const char *text, size_t len,
			 struct fs_diags *d)
{
	struct fs_pattern pt;
	memset(&pt, 0, sizeof(pt));
	struct pparse P = {path, d, NULL, NULL, 0, 0, &pt, NULL, 0, 0};
	const char *end = text + len;
	for (const char *pos = text; pos < end;) {
		next_line(&P, &pos, end);
		const char *p = P.line;
		ws(&p, P.end);
		if (p == P.end)
			continue;
		if (memchr(p, '\0', (size_t)(P.end - p))) {
			perr(&P, p, "NUL byte in pattern file");
			continue;
		}
		statement(&P, p);
	}
	if (!P.errors)
		validate(&P);
	if (!P.errors && pt.name && fs_patlib_find(l, pt.name) >= 0)
		perr_line(&P, P.pattern_line, "pattern '%s' is defined twice (also in %s)", pt.name,
			  l->v[fs_patlib_find(l, pt.name)].path);
	uint32_t errors = P.errors;
	P.done = fs_xrealloc(P.done, (P.n_done + 1) * sizeof(*P.done));
	P.done[P.n_done++] = pt;
	keep_variants(l, &P);
	return errors;
}

static int name_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

uint32_t fs_patlib_load_dir(struct fs_patlib *l, const char *dir, struct fs_diags *d)
{
	DIR *dp = opendir(dir);
	if (!dp) {
		fs_diag_add(d, FS_ERROR, dir, 0, 0, NULL, 0, "cannot open pattern directory: %s", strerror(errno));
		return 1;
	}
	char **names = NULL;
	uint32_t n = 0, cap = 0, errors = 0;
	struct dirent *de;
	while ((de = readdir(dp))) {
		size_t k = strlen(de->d_name);
		if (k > 4 && !strcmp(de->d_name + k - 4, ".pat")) {
			FS_GROW(names, cap, n + 1);
			names[n++] = fs_xstrndup(de->d_name, k);
		}
	}
	closedir(dp);
	if (n)
		qsort(names, n, sizeof(*names), name_cmp);
	for (uint32_t i = 0; i < n; i++) {
		size_t len = strlen(dir) + strlen(names[i]) + 2, tl;
		char *path = fs_xmalloc(len);
		snprintf(path, len, "%s/%s", dir, names[i]);
		char *text = fs_read_input(path, FS_IN_PATTERN, &tl);
		if (!text) {
			fs_diag_add(d, FS_ERROR, path, 0, 0, NULL, 0, "cannot read: %s", fs_input_error(errno, FS_IN_PATTERN));
			errors++;
		} else
			errors += fs_patlib_parse(l, path, text, tl, d);
		free(text);
		free(path);
		free(names[i]);
	}
	free(names);
	if (!n) {
		fs_diag_add(d, FS_ERROR, dir, 0, 0, NULL, 0, "no *.pat pattern files in this directory");
		errors++;
	}
	return errors;
}

int32_t fs_patlib_find(const struct fs_patlib *l, const char *name)
{
	for (uint32_t i = 0; i < l->n; i++)
		if (!strcmp(l->v[i].name, name))
			return (int32_t)i;
	return -1;
}

void fs_patlib_release(struct fs_patlib *l)
{
	for (uint32_t i = 0; i < l->n; i++)
		free_pattern(&l->v[i]);
	free(l->v);
	fs_patlib_init(l);
}
