/*
 * shape.c: shapes and symbolic dims. A printed shape ("s72xs70x4096",
 * "s70*s72x256", "s72xs70 + 1", "scalar", "?") is interned by its text and
 * parsed once per scan; each dim is an integer or an expression over
 * symbols, integers, + - * // and parentheses, and sympy's Mod, Max and Min
 * of two (padded sizes: "s70 + Mod(64 - Mod(s70, 64), 64)"), evaluated by
 * fs_dim_eval once symbols are bound (the cost model's job). Dims this
 * grammar cannot read keep their text and are marked opaque, and so do dims
 * nested deeper than EXPR_MAX_DEPTH or of more than EXPR_MAX_NODES terms: the
 * parser and the evaluator recurse, and their stacks stay bounded.
 */
#include "scan_int.h"

#include <stdlib.h>
#include <string.h>

/* ---- expression parser: one function per rule ----------------------------- */

/* Parentheses, function arguments and unary minus nest at most this deep;
 * a dim's tree holds at most this many nodes (so no evaluation recurses
 * deeper). Printed sympy dims hold a handful. */
enum { EXPR_MAX_DEPTH = 64, EXPR_MAX_NODES = 256 };

struct ep {
	struct fs_scan *s;
	const char *p, *end;
	int bad;
	uint32_t depth, first; /* first: the dim's first node in the pool */
};

static void ep_ws(struct ep *e)
{
	while (e->p < e->end && *e->p == ' ')
		e->p++;
}

static int32_t ep_node(struct ep *e, uint8_t op, int32_t lhs, int32_t rhs)
{
	struct fs_types *t = &e->s->types;
	if (t->n_exprs - e->first >= EXPR_MAX_NODES)
		return e->bad = 1, -1;
	FS_GROW(t->exprs, t->cap_exprs, t->n_exprs + 1);
	struct fs_expr *x = &t->exprs[t->n_exprs];
	memset(x, 0, sizeof(*x));
	x->op = op;
	x->lhs = lhs;
	x->rhs = rhs;
	return (int32_t)t->n_exprs++;
}

static int32_t ep_expr(struct ep *e);

/* expr, one level deeper */
static int32_t ep_nested(struct ep *e)
{
	if (e->depth == EXPR_MAX_DEPTH)
		return e->bad = 1, -1;
	e->depth++;
	int32_t x = ep_expr(e);
	e->depth--;
	return x;
}

/* Consumes c (after blanks), or marks the dim bad: 0 or -1 */
static int ep_expect(struct ep *e, char c)
{
	ep_ws(e);
	if (e->bad || e->p >= e->end || *e->p != c)
		return e->bad = 1, -1;
	e->p++;
	return 0;
}

/* '(' expr ')' */
static int32_t ep_paren(struct ep *e)
{
	e->p++;
	int32_t x = ep_nested(e);
	ep_ws(e);
	if (e->p >= e->end || *e->p != ')')
		return e->bad = 1, -1;
	e->p++;
	return x;
}

/* INT: decimal digits; one that overflows int64 marks the dim bad */
static int32_t ep_int(struct ep *e)
{
	int64_t v = 0;
	while (e->p < e->end && *e->p >= '0' && *e->p <= '9') {
		if (__builtin_mul_overflow(v, 10, &v) ||
		    __builtin_add_overflow(v, *e->p - '0', &v))
			return e->bad = 1, -1;
		e->p++;
	}
	int32_t x = ep_node(e, FS_EX_INT, -1, -1);
	if (x >= 0)
		e->s->types.exprs[x].value = v;
	return x;
}

static int ep_name_char(char c)
{
	return c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
}

/* SYMBOL | ('Mod' | 'Max' | 'Min') '(' expr ',' expr ')'; a function name without '('
 * is a symbol like any other */
static int32_t ep_name(struct ep *e)
{
	const char *q = e->p;
	while (e->p < e->end && ep_name_char(*e->p))
		e->p++;
	size_t n = (size_t)(e->p - q);
	uint8_t fn = n == 3 && !memcmp(q, "Mod", 3) ? FS_EX_MOD : n == 3 && !memcmp(q, "Max", 3) ? FS_EX_MAX
		   : n == 3 && !memcmp(q, "Min", 3)				       ? FS_EX_MIN
										       : FS_EX_SYM;
	if (fn != FS_EX_SYM && e->p < e->end && *e->p == '(') {
		e->p++;
		int32_t a = ep_nested(e);
		if (ep_expect(e, ',') < 0)
			return -1;
		int32_t b = ep_nested(e);
		if (ep_expect(e, ')') < 0)
			return -1;
		return ep_node(e, fn, a, b);
	}
	int32_t x = ep_node(e, FS_EX_SYM, -1, -1);
	if (x >= 0)
		e->s->types.exprs[x].sym = fs_strtab_intern(&e->s->strs, q, (size_t)(e->p - q));
	return x;
}

/* atom := INT | SYMBOL | ('Mod' | 'Max' | 'Min') '(' expr ',' expr ')' | '(' expr ')' */
static int32_t ep_atom(struct ep *e)
{
	ep_ws(e);
	if (e->p >= e->end)
		return e->bad = 1, -1;
	char c = *e->p;
	if (c == '(')
		return ep_paren(e);
	if (c >= '0' && c <= '9')
		return ep_int(e);
	if (c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'))
		return ep_name(e);
	return e->bad = 1, -1;
}

/* unary := '-' unary | atom */
static int32_t ep_unary(struct ep *e)
{
	ep_ws(e);
	if (e->p < e->end && *e->p == '-') {
		if (e->depth == EXPR_MAX_DEPTH)
			return e->bad = 1, -1;
		e->p++, e->depth++;
		int32_t x = ep_unary(e);
		e->depth--;
		return e->bad ? -1 : ep_node(e, FS_EX_NEG, x, -1);
	}
	return ep_atom(e);
}

/* term := unary (('*' | '//') unary)* */
static int32_t ep_term(struct ep *e)
{
	int32_t x = ep_unary(e);
	while (!e->bad) {
		ep_ws(e);
		uint8_t op;
		if (e->p + 1 < e->end && e->p[0] == '/' && e->p[1] == '/') {
			op = FS_EX_FLOORDIV;
			e->p += 2;
		} else if (e->p < e->end && *e->p == '*' && (e->p + 1 >= e->end || e->p[1] != '*')) {
			op = FS_EX_MUL;
			e->p++;
		} else
			break;
		int32_t y = ep_unary(e);
		x = e->bad ? -1 : ep_node(e, op, x, y);
	}
	return x;
}

/* expr := term (('+' | '-') term)* */
static int32_t ep_expr(struct ep *e)
{
	int32_t x = ep_term(e);
	while (!e->bad) {
		ep_ws(e);
		if (e->p >= e->end || (*e->p != '+' && *e->p != '-'))
			break;
		uint8_t op = *e->p == '+' ? FS_EX_ADD : FS_EX_SUB;
		e->p++;
		int32_t y = ep_term(e);
		x = e->bad ? -1 : ep_node(e, op, x, y);
	}
	return x;
}

/* ---- evaluation ------------------------------------------------------------ */

static int64_t floordiv(int64_t a, int64_t b)
{
	int64_t q = a / b;
	return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
}

/* l op r for the two-operand ops; -1 where the result is undefined or overflows int64 */
static int binary_eval(uint8_t op, int64_t l, int64_t r, int64_t *out)
{
	switch (op) {
	case FS_EX_ADD:
		return __builtin_add_overflow(l, r, out) ? -1 : 0;
	case FS_EX_SUB:
		return __builtin_sub_overflow(l, r, out) ? -1 : 0;
	case FS_EX_MUL:
		return __builtin_mul_overflow(l, r, out) ? -1 : 0;
	case FS_EX_FLOORDIV:
		if (r == 0 || (l == INT64_MIN && r == -1))
			return -1;
		*out = floordiv(l, r);
		return 0;
	case FS_EX_MOD: /* sympy's (Python's): the sign of r */
		if (r == 0 || (l == INT64_MIN && r == -1))
			return -1;
		*out = l - floordiv(l, r) * r;
		return 0;
	case FS_EX_MAX:
		*out = l > r ? l : r;
		return 0;
	case FS_EX_MIN:
		*out = l < r ? l : r;
		return 0;
	default:
		return -1;
	}
}

static int expr_eval(const struct fs_types *t, int32_t i, const struct fs_binding *b,
		     uint32_t nb, int64_t *out)
{
	const struct fs_expr *x = &t->exprs[i];
	int64_t l = 0, r = 0;
	switch (x->op) {
	case FS_EX_INT:
		*out = x->value;
		return 0;
	case FS_EX_SYM:
		for (uint32_t k = 0; k < nb; k++)
			if (b[k].sym == x->sym)
				return *out = b[k].value, 0;
		return -1;
	case FS_EX_NEG:
		if (expr_eval(t, x->lhs, b, nb, &l) || l == INT64_MIN)
			return -1;
		*out = -l;
		return 0;
	default:
		break;
	}
	if (expr_eval(t, x->lhs, b, nb, &l) || expr_eval(t, x->rhs, b, nb, &r))
		return -1;
	return binary_eval(x->op, l, r, out);
}

int fs_dim_eval(const struct fs_types *t, const struct fs_dim *d,
		const struct fs_binding *b, uint32_t nb, int64_t *out)
{
	if (d->expr == FS_DIM_CONST)
		return *out = d->value, 0;
	if (d->expr == FS_DIM_OPAQUE)
		return -1;
	return expr_eval(t, d->expr, b, nb, out);
}

/* ---- shapes ---------------------------------------------------------------- */

static void parse_dim(struct fs_scan *s, const char *p, size_t n, struct fs_dim *d)
{
	while (n && p[0] == ' ')
		p++, n--;
	while (n && p[n - 1] == ' ')
		n--;
	d->text = fs_strtab_intern(&s->strs, p, n);
	uint32_t mark = s->types.n_exprs;
	struct ep e = {s, p, p + n, 0, 0, mark};
	int32_t root = ep_expr(&e);
	if (e.bad || e.p != e.end || root < 0) {
		s->types.n_exprs = mark; /* drop the partial tree */
		d->expr = FS_DIM_OPAQUE;
		return;
	}
	int64_t v;
	if (expr_eval(&s->types, root, NULL, 0, &v) == 0) {
		s->types.n_exprs = mark; /* constant: no tree needed */
		d->expr = FS_DIM_CONST;
		d->value = v;
		return;
	}
	d->expr = root;
}

/* A dim separator: 'x' at paren depth 0 right after a digit, a symbol's
 * trailing digit or ')' ("s72xs70", "4x(s0 + 1)"), never inside "Max(". */
static int is_sep(const char *p, const char *start, int depth)
{
	if (*p != 'x' || depth || p == start)
		return 0;
	char c = p[-1];
	return (c >= '0' && c <= '9') || c == ')';
}

static void parse_shape(struct fs_scan *s, struct fs_shape *sh, const char *p, size_t n)
{
	if ((n == 1 && p[0] == '?') || (n == 4 && memcmp(p, "None", 4) == 0) || n == 0) {
		sh->kind = FS_SHAPE_UNKNOWN;
		return;
	}
	if (n == 6 && memcmp(p, "scalar", 6) == 0) {
		sh->kind = FS_SHAPE_SCALAR;
		return;
	}
	struct fs_types *t = &s->types;
	sh->kind = FS_SHAPE_DIMS;
	sh->dims = t->n_dims;
	const char *d0 = p, *end = p + n;
	int depth = 0;
	for (const char *q = p;; q++) {
		if (q < end && (*q == '(' || *q == ')')) {
			depth += *q == '(' ? 1 : -1;
			continue;
		}
		if (q < end && !is_sep(q, p, depth))
			continue;
		FS_GROW(t->dims, t->cap_dims, t->n_dims + 1);
		struct fs_dim *d = &t->dims[t->n_dims++];
		memset(d, 0, sizeof(*d));
		parse_dim(s, d0, (size_t)(q - d0), d);
		if (d->expr != FS_DIM_CONST)
			sh->symbolic = 1;
		sh->rank++;
		if (q >= end)
			break;
		d0 = q + 1;
	}
}

uint32_t fs_types_shape(struct fs_scan *s, const char *text, size_t n)
{
	struct fs_types *t = &s->types;
	uint32_t sym = fs_strtab_intern(&s->strs, text, n);
	if (sym < t->cap_shape_of_text && t->shape_of_text[sym])
		return t->shape_of_text[sym] - 1;
	uint32_t old = t->cap_shape_of_text;
	FS_GROW(t->shape_of_text, t->cap_shape_of_text, sym + 1);
	memset(t->shape_of_text + old, 0, (t->cap_shape_of_text - old) * sizeof(uint32_t));
	FS_GROW(t->shapes, t->cap_shapes, t->n_shapes + 1);
	uint32_t id = t->n_shapes++;
	struct fs_shape sh;
	memset(&sh, 0, sizeof(sh));
	sh.text = sym;
	parse_shape(s, &sh, text, n);
	t->shapes[id] = sh;
	t->shape_of_text[sym] = id + 1;
	return id;
}

enum fs_dtype fs_types_dtype(struct fs_scan *s, const char *text, size_t n)
{
	struct fs_scan_priv *p = s->priv;
	uint32_t sym = fs_strtab_intern(&s->strs, text, n);
	if (sym < p->cap_dtype_of_sym && p->dtype_of_sym[sym])
		return (enum fs_dtype)(p->dtype_of_sym[sym] - 1);
	uint32_t old = p->cap_dtype_of_sym;
	FS_GROW(p->dtype_of_sym, p->cap_dtype_of_sym, sym + 1);
	memset(p->dtype_of_sym + old, 0, p->cap_dtype_of_sym - old);
	enum fs_dtype d = fs_dtype_parse(text, n);
	p->dtype_of_sym[sym] = (uint8_t)(d + 1);
	return d;
}

void fs_types_release(struct fs_types *t)
{
	free(t->shapes);
	free(t->dims);
	free(t->exprs);
	free(t->shape_of_text);
	memset(t, 0, sizeof(*t));
}
