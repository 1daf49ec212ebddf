/*
 * parse.c: the dump grammar (see ../shared REFERENCE section 1), one
 * function per rule. Called by load.c for each file held in memory (one
 * large read); lines are views into that buffer, never copied. Errors are
 * recorded with file:line:col and parsing goes on with the next line.
 *
 *   dump      := header* (module | implicit-module)*
 *   header    := '# Transform: ' T | '# Stage: ' S | '# GraphModules found: ' N
 *   module    := '====' '# GraphModule: ' NAME '====' line* output
 *   line      := placeholder | node
 *   placeholder := '%' NAME ' : ' type
 *   node      := '%' NAME ' = ' TARGET '(' args ')' [' : ' type]
 *   output    := 'output' args
 *   type      := [shape ' : '] dtype | '(' shape, ... ')' ' : ' '(' dtype, ... ')'
 *   arg       := '%' NAME [' : ' type] | '[' elems ']' | '(' elems ')' | literal
 */
#include "scan_int.h"

#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

enum { MAX_ERRORS_PER_FILE = 20, MAX_DEPTH = 64 };

struct line {
	const char *p;   /* start of line */
	size_t n;        /* length without '\n' / '\r\n' */
	uint32_t no;     /* 1-based */
};

struct parser {
	struct fs_scan *s;
	uint32_t file;
	const char *data, *end;
	struct line ln;
	struct fs_graph *g;   /* module being parsed, NULL outside one */
	uint32_t module;
	int closed;           /* current module saw its output line */
	int kept;             /* a module body of this buffer is a dedupe original */
	int depth;
};

static struct fs_dumpfile *pfile(struct parser *P)
{
	return &P->s->files[P->file];
}

/* Records an error at `at` (a pointer into the current line). */
static void perr(struct parser *P, const char *at, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void perr(struct parser *P, const char *at, const char *fmt, ...)
{
	struct fs_dumpfile *f = pfile(P);
	f->n_errors++;
	if (P->g)
		P->s->modules[P->module].n_errors++;
	if (f->n_errors > MAX_ERRORS_PER_FILE)
		return;
	uint32_t col = (uint32_t)(at - P->ln.p) + 1;
	if (f->n_errors == MAX_ERRORS_PER_FILE) {
		fs_diag_add(&P->s->diags, FS_ERROR, f->path, P->ln.no, col, P->ln.p, P->ln.n,
			    "too many errors in this file; the rest are not shown");
		return;
	}
	char msg[256];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	fs_diag_add(&P->s->diags, FS_ERROR, f->path, P->ln.no, col, P->ln.p, P->ln.n, "%s", msg);
}

/* ---- small scanners ----------------------------------------------------------- */

static int starts(const char *p, const char *end, const char *lit)
{
	size_t n = strlen(lit);
	return (size_t)(end - p) >= n && memcmp(p, lit, n) == 0;
}

static void trim(const char **p, const char **e)
{
	while (*p < *e && (**p == ' ' || **p == '\t'))
		(*p)++;
	while (*e > *p && ((*e)[-1] == ' ' || (*e)[-1] == '\t'))
		(*e)--;
}

static const char *skip_quoted(const char *p, const char *end)
{
	char q = *p++;
	while (p < end && *p != q)
		p += (*p == '\\' && p + 1 < end) ? 2 : 1;
	return p < end ? p + 1 : NULL;
}

/* Returns the bracket closing the one at `open`, or NULL (error recorded). */
static const char *match_close(struct parser *P, const char *open, const char *end)
{
	char stack[MAX_DEPTH];
	int d = 0;
	for (const char *p = open; p < end; p++) {
		char c = *p;
		if (c == '\'' || c == '"') {
			const char *q = skip_quoted(p, end);
			if (!q)
				return perr(P, p, "unterminated string literal"), NULL;
			p = q - 1;
		} else if (c == '(' || c == '[' || c == '{') {
			if (d == MAX_DEPTH)
				return perr(P, p, "brackets nested deeper than 64"), NULL;
			stack[d++] = c == '(' ? ')' : c == '[' ? ']' : '}';
		} else if (c == ')' || c == ']' || c == '}') {
			if (!d || stack[d - 1] != c)
				return perr(P, p, "unbalanced brackets: unexpected '%s'",
					    c == ')' ? ")" : c == ']' ? "]" : "}"), NULL;
			if (--d == 0)
				return p;
		}
	}
	return perr(P, open, "unbalanced brackets: '%s' is never closed",
		    *open == '(' ? "(" : *open == '[' ? "[" : "{"), NULL;
}

/* Next element of a comma-separated list at bracket depth 0: [*p, *e). */
static int next_elem(struct parser *P, const char **cur, const char *end,
		     const char **b, const char **e)
{
	const char *p = *cur;
	if (p >= end)
		return 0;
	*b = p;
	while (p < end && *p != ',') {
		if (*p == '\'' || *p == '"' || *p == '(' || *p == '[' || *p == '{') {
			const char *q = (*p == '\'' || *p == '"') ? skip_quoted(p, end)
								 : match_close(P, p, end);
			if (!q)
				return -1;
			p = (*p == '\'' || *p == '"') ? q : q + 1;
			continue;
		}
		p++;
	}
	*e = p;
	*cur = p < end ? p + 1 : end;
	return 1;
}

/* ---- graph building -------------------------------------------------------------- */

static struct fs_bind *binding(struct parser *P, uint32_t sym)
{
	struct fs_scan_priv *pr = P->s->priv;
	if (sym >= pr->cap_bind) {
		uint32_t old = pr->cap_bind;
		FS_GROW(pr->bind, pr->cap_bind, sym + 1);
		memset(pr->bind + old, 0, (pr->cap_bind - old) * sizeof(*pr->bind));
	}
	return &pr->bind[sym];
}

/* Whether b binds a node of the module being read (gen counts modules) */
static int bound_here(const struct fs_bind *b, const struct parser *P)
{
	return b->gen == ((const struct fs_scan_priv *)P->s->priv)->gen;
}

static uint32_t new_node(struct parser *P, uint32_t name, uint8_t kind)
{
	struct fs_graph *g = P->g;
	FS_GROW(g->nodes, g->cap_nodes, g->n_nodes + 1);
	struct fs_node *n = &g->nodes[g->n_nodes];
	memset(n, 0, sizeof(*n));
	n->name = name;
	n->kind = kind;
	n->line = P->ln.no;
	n->out = g->n_types;
	struct fs_bind *b = binding(P, name);
	b->gen = ((struct fs_scan_priv *)P->s->priv)->gen;
	b->node = g->n_nodes;
	return g->n_nodes++;
}

static void push_type(struct fs_graph *g, uint32_t shape, enum fs_dtype dt)
{
	FS_GROW(g->types, g->cap_types, g->n_types + 1);
	g->types[g->n_types].shape = shape;
	g->types[g->n_types].dtype = (uint8_t)dt;
	g->n_types++;
}

/* A use of `name`: the defined node, or an external constant (a weight or
 * buffer: get_attr nodes are never printed) created at its first use. */
static uint32_t resolve(struct parser *P, const char *name, size_t n, const struct fs_type *ty)
{
	uint32_t sym = fs_strtab_intern(&P->s->strs, name, n);
	struct fs_bind *b = binding(P, sym);
	if (bound_here(b, P))
		return b->node;
	uint32_t id = new_node(P, sym, FS_NODE_EXTERN);
	struct fs_node *x = &P->g->nodes[id];
	x->n_out = 1;
	push_type(P->g, ty ? ty->shape : 0, ty ? (enum fs_dtype)ty->dtype : FS_DT_UNKNOWN);
	P->g->n_externs++;
	return id;
}

/* ---- types ------------------------------------------------------------------------ */

static const char *find_last_sep(const char *p, const char *e)
{
	for (const char *q = e - 3; q >= p; q--)
		if (q[0] == ' ' && q[1] == ':' && q[2] == ' ')
			return q;
	return NULL;
}

/* The dtype printed at [p, e); a torch name the table does not know is an error. */
static enum fs_dtype dtype_of(struct parser *P, const char *p, const char *e)
{
	enum fs_dtype d = fs_types_dtype(P->s, p, (size_t)(e - p));
	if (d == FS_DT_OTHER && starts(p, e, "torch."))
		perr(P, p, "unknown dtype '%.*s' (known: torch.bfloat16, torch.float8_e4m3fn, torch.float8_e5m2, ...)",
		     (int)(e - p), p);
	return d;
}

/* type := [shape ' : '] dtype | '(' shapes ')' ' : ' '(' dtypes ')'.
 * Appends the output types to the graph; returns how many (0 on error). */
static uint16_t parse_type(struct parser *P, const char *p, const char *e)
{
	trim(&p, &e);
	const char *sep = find_last_sep(p, e);
	const char *sp = p, *se = sep ? sep : p, *dp = sep ? sep + 3 : p, *de = e;
	if (!sep) { /* oldest format: dtype only */
		push_type(P->g, 0, dtype_of(P, dp, de));
		return 1;
	}
	if (!(de > dp && *dp == '(' && de[-1] == ')' && *sp == '(' && se[-1] == ')')) {
		push_type(P->g, fs_types_shape(P->s, sp, (size_t)(se - sp)), dtype_of(P, dp, de));
		return 1;
	}
	/* multi-output: (s1, s2) : (d1, d2) */
	const char *sc = sp + 1, *dc = dp + 1;
	uint16_t k = 0;
	for (;;) {
		const char *sb, *sx, *db, *dx;
		int a = next_elem(P, &sc, se - 1, &sb, &sx);
		int b = next_elem(P, &dc, de - 1, &db, &dx);
		if (a < 0 || b < 0)
			return 0;
		if (!a && !b)
			return k;
		if (a != b) {
			perr(P, p, "multi-output type has %s shapes than dtypes", a ? "more" : "fewer");
			return 0;
		}
		trim(&sb, &sx);
		trim(&db, &dx);
		push_type(P->g, fs_types_shape(P->s, sb, (size_t)(sx - sb)), dtype_of(P, db, dx));
		k++;
	}
}

/* ---- arguments ---------------------------------------------------------------------- */

static uint32_t push_arg(struct parser *P, uint8_t kind, const char *p, const char *e)
{
	struct fs_graph *g = P->g;
	FS_GROW(g->args, g->cap_args, g->n_args + 1);
	struct fs_arg *a = &g->args[g->n_args];
	memset(a, 0, sizeof(*a));
	a->kind = kind;
	a->span = 1;
	a->text = fs_strtab_intern(&P->s->strs, p, (size_t)(e - p));
	return g->n_args++;
}

static int is_name_char(char c)
{
	return c == '_' || c == '.' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
	       (c >= '0' && c <= '9');
}

static int parse_elems(struct parser *P, const char *p, const char *e, int in_list);

/* '%' NAME [' : ' type] */
static int parse_ref(struct parser *P, const char *p, const char *e)
{
	const char *q = p + 1;
	while (q < e && is_name_char(*q))
		q++;
	if (q == p + 1)
		return perr(P, p, "expected a node name after '%s'", "%"), -1;
	struct fs_type ty = {0, FS_DT_UNKNOWN};
	if (q < e) {
		if (!starts(q, e, " : "))
			return perr(P, q, "expected ' : <shape> : <dtype>' after the node name"), -1;
		uint32_t mark = P->g->n_types;
		if (parse_type(P, q + 3, e) != 1)
			return P->g->n_types = mark, perr(P, q, "bad type of a reference"), -1;
		ty = P->g->types[mark];
		P->g->n_types = mark;
	}
	uint32_t a = push_arg(P, FS_ARG_NODE, p + 1, q);
	P->g->args[a].node = resolve(P, p + 1, (size_t)(q - p - 1), &ty);
	P->g->args[a].type = ty;
	return 0;
}

static int is_int(const char *p, const char *e)
{
	if (p < e && *p == '-')
		p++;
	if (p == e)
		return 0;
	for (; p < e; p++)
		if (*p < '0' || *p > '9')
			return 0;
	return 1;
}

static int lit_is(const char *p, const char *e, const char *lit)
{
	return (size_t)(e - p) == strlen(lit) && memcmp(p, lit, (size_t)(e - p)) == 0;
}

/* A number: an integer (a float when it overflows int64), else a float strtod takes whole
 * (1e-5, .5, inf, nan). 1 if [p, e) is one and was pushed. */
static int number_literal(struct parser *P, const char *p, const char *e)
{
	char buf[64];
	size_t n = (size_t)(e - p);
	if (n >= sizeof(buf))
		return 0;
	memcpy(buf, p, n);
	buf[n] = '\0';
	if (is_int(p, e)) {
		errno = 0;
		long long v = strtoll(buf, NULL, 10);
		uint32_t a = push_arg(P, errno ? FS_ARG_FLOAT : FS_ARG_INT, p, e);
		if (errno)
			P->g->args[a].f = strtod(buf, NULL);
		else
			P->g->args[a].i = v;
		return 1;
	}
	if (!((*p >= '0' && *p <= '9') || *p == '-' || *p == '.' || lit_is(p, e, "inf") || lit_is(p, e, "nan")))
		return 0;
	char *end;
	double v = strtod(buf, &end);
	if (end != buf + n)
		return 0;
	uint32_t a = push_arg(P, FS_ARG_FLOAT, p, e);
	P->g->args[a].f = v;
	return 1;
}

/* torch.float16 and the like: 1 if [p, e) names a known dtype and was pushed */
static int dtype_literal(struct parser *P, const char *p, const char *e)
{
	if (!starts(p, e, "torch."))
		return 0;
	enum fs_dtype d = fs_types_dtype(P->s, p, (size_t)(e - p));
	if (d == FS_DT_OTHER)
		return 0;
	uint32_t a = push_arg(P, FS_ARG_DTYPE, p, e);
	P->g->args[a].type.dtype = (uint8_t)d;
	return 1;
}

/* A bare identifier inside a list names a node (its '%' is not printed there): 1 if pushed */
static int name_literal(struct parser *P, const char *p, const char *e)
{
	size_t n = (size_t)(e - p);
	if (memchr(p, '.', n))
		return 0;
	const char *q = p;
	while (q < e && is_name_char(*q))
		q++;
	if (q != e || (*p >= '0' && *p <= '9'))
		return 0;
	uint32_t a = push_arg(P, FS_ARG_NODE, p, e);
	P->g->args[a].node = resolve(P, p, n, NULL);
	P->g->args[a].type.dtype = FS_DT_UNKNOWN;
	return 1;
}

/* Python str() literals; inside lists a bare identifier names a node. */
static int parse_literal(struct parser *P, const char *p, const char *e, int in_list)
{
	if (lit_is(p, e, "True") || lit_is(p, e, "False")) {
		uint32_t a = push_arg(P, FS_ARG_BOOL, p, e);
		P->g->args[a].i = *p == 'T';
		return 0;
	}
	if (lit_is(p, e, "None"))
		return push_arg(P, FS_ARG_NONE, p, e), 0;
	if (*p == '\'' || *p == '"') {
		if (skip_quoted(p, e) != e)
			return perr(P, p, "bad string literal"), -1;
		return push_arg(P, FS_ARG_STR, p + 1, e - 1), 0;
	}
	if (number_literal(P, p, e) || dtype_literal(P, p, e) || (in_list && name_literal(P, p, e)))
		return 0;
	return push_arg(P, FS_ARG_STR, p, e), 0; /* bsnd, meta, cuda:0, ... */
}

static int parse_arg(struct parser *P, const char *p, const char *e, int in_list)
{
	trim(&p, &e);
	if (p == e)
		return perr(P, p, "empty argument"), -1;
	if (*p == '%')
		return parse_ref(P, p, e);
	if (*p != '[' && *p != '(')
		return parse_literal(P, p, e, in_list);
	const char *close = match_close(P, p, e);
	if (!close)
		return -1;
	if (close + 1 != e)
		return perr(P, close + 1, "unexpected text after a closing bracket"), -1;
	if (P->depth >= MAX_DEPTH)
		return perr(P, p, "lists nested deeper than 64"), -1;
	uint32_t a = push_arg(P, *p == '[' ? FS_ARG_LIST : FS_ARG_TUPLE, p, p);
	P->depth++;
	int r = parse_elems(P, p + 1, close, 1);
	P->depth--;
	P->g->args[a].span = P->g->n_args - a;
	return r;
}

/* elems := arg (',' arg)* [','] ; returns the count, -1 on error */
static int parse_elems(struct parser *P, const char *p, const char *e, int in_list)
{
	const char *b, *x, *cur = p;
	int k = 0, r;
	const char *tp = p, *te = e;
	trim(&tp, &te);
	if (tp == te)
		return 0;
	while ((r = next_elem(P, &cur, e, &b, &x)) > 0) {
		const char *bb = b, *xx = x;
		trim(&bb, &xx);
		if (bb == xx && cur == e && x == e && k > 0)
			break; /* trailing comma of a 1-tuple: "(a,)" */
		if (parse_arg(P, b, x, in_list) < 0)
			return -1;
		k++;
	}
	return r < 0 ? -1 : k;
}

/* ---- lines ---------------------------------------------------------------------------- */

/* Where a reference to node `name` first occurs in [p, e) (its '%', if it
 * has one), or p: the column of an error about it. */
static const char *ref_at(const char *p, const char *e, const char *name)
{
	size_t n = strlen(name);
	for (const char *q = p; n && q + n <= e; q++)
		if (!memcmp(q, name, n) && (q == p || !is_name_char(q[-1])) && (q + n == e || !is_name_char(q[n])))
			return q > p && q[-1] == '%' ? q - 1 : q;
	return p;
}

/* Drops what a bad line added: its node, the externs its references made
 * (a later line naming them makes them afresh), its arguments and types. */
static void drop_line(struct parser *P, uint32_t mark_nodes, uint32_t mark_args, uint32_t mark_types)
{
	struct fs_graph *g = P->g;
	for (uint32_t i = mark_nodes; i < g->n_nodes; i++) {
		binding(P, g->nodes[i].name)->gen = 0;
		g->n_externs -= g->nodes[i].kind == FS_NODE_EXTERN;
	}
	g->n_nodes = mark_nodes;
	g->n_args = mark_args;
	g->n_types = mark_types;
}

/* The name %NAME (sym, at p, ending at q) is already defined in this module: say so, 1 */
static int defined_before(struct parser *P, uint32_t sym, const char *p, const char *q)
{
	struct fs_bind *b = binding(P, sym);
	if (!bound_here(b, P))
		return 0;
	const struct fs_node *old = &P->g->nodes[b->node];
	int n = (int)(q - p - 1);
	if (old->kind == FS_NODE_EXTERN)
		perr(P, p, "'%%%.*s' is defined here but used before its definition (first use at line %u)",
		     n, p + 1, old->line);
	else
		perr(P, p, "duplicate definition of '%%%.*s' (first defined at line %u)", n, p + 1, old->line);
	return 1;
}

/* placeholder := '%' NAME ' : ' type ; t is the type. -1: the line is bad */
static int parse_placeholder(struct parser *P, uint32_t sym, const char *t, const char *e)
{
	uint32_t id = new_node(P, sym, FS_NODE_PLACEHOLDER);
	uint16_t k = parse_type(P, t, e);
	if (!k)
		return -1;
	P->g->nodes[id].n_out = k;
	P->g->n_placeholders++;
	return 0;
}

/* Whether a printed shape holds one element: `scalar`, or dims all 1 (unknown: not said otherwise). */
static int one_element(const struct fs_scan *s, uint32_t shape)
{
	const struct fs_shape *sh = fs_scan_shape(s, shape);
	if (sh->kind != FS_SHAPE_DIMS)
		return 1;
	for (uint16_t i = 0; i < sh->rank; i++) {
		const struct fs_dim *d = &s->types.dims[sh->dims + i];
		if (d->expr != FS_DIM_CONST || d->value != 1)
			return 0;
	}
	return 1;
}

/* A quantized product's per-tensor input scale (its schema's input_scale,
 * scan/opsig.def) must hold one element: an error at the argument if not. */
static void check_scale(struct parser *P, const struct fs_node *n, const char *open, const char *close)
{
	int k = fs_op_param(P->s, n, "input_scale");
	if (k < 0 || (uint32_t)k >= n->n_top)
		return;
	uint32_t at = n->args;
	for (int i = 0; i < k; i++)
		at += P->g->args[at].span;
	const struct fs_arg *a = &P->g->args[at];
	if (a->kind != FS_ARG_NODE || one_element(P->s, a->type.shape))
		return;
	const char *name = fs_scan_str(P->s, P->g->nodes[a->node].name);
	perr(P, ref_at(open, close, name), "the per-tensor input scale %%%s is %s, not a scalar: %s quantizes with one scale",
	     name, fs_scan_str(P->s, fs_scan_shape(P->s, a->type.shape)->text), fs_scan_str(P->s, P->s->ops[n->op].target));
}

/* node := '%' NAME ' = ' TARGET '(' args ')' [' : ' type] ; t is the target. -1: the line is bad */
static int parse_call(struct parser *P, uint32_t sym, const char *t, const char *e)
{
	const char *paren = memchr(t, '(', (size_t)(e - t));
	if (!paren || paren == t)
		return perr(P, t, "%s", paren ? "missing op target before '('" : "expected '(' after the op target"), -1;
	const char *close = match_close(P, paren, e);
	if (!close)
		return -1;
	const char *after = close + 1;
	if (after < e && !starts(after, e, " : "))
		return perr(P, after, "expected ' : <shape> : <dtype>' after the arguments"), -1;
	uint32_t first_arg = P->g->n_args;
	int n_top = parse_elems(P, paren + 1, close, 0);
	if (n_top < 0)
		return -1;
	if (bound_here(binding(P, sym), P)) /* an argument named the node itself */
		return perr(P, ref_at(paren, close, fs_scan_str(P->s, sym)),
			    "'%%%s' reads itself: a node cannot be its own argument", fs_scan_str(P->s, sym)), -1;
	uint32_t id = new_node(P, sym, FS_NODE_CALL);
	struct fs_node *n = &P->g->nodes[id];
	n->op = fs_ops_intern(P->s, t, (size_t)(paren - t));
	n->args = first_arg;
	n->n_args = P->g->n_args - first_arg;
	n->n_top = (uint32_t)n_top;
	if (fs_op_class_of(P->s, n->op) == FS_OPC_SIDE_EFFECT)
		n->flags |= FS_NODE_SIDE_EFFECT;
	uint16_t k = 1;
	if (after < e)
		k = parse_type(P, after + 3, e);
	else
		push_type(P->g, 0, FS_DT_UNKNOWN);
	if (!k)
		return -1;
	P->g->nodes[id].n_out = k;
	P->g->n_calls++;
	check_scale(P, &P->g->nodes[id], paren, close);
	return 0;
}

/* placeholder | node: a bad line leaves nothing behind (drop_line) */
static void parse_node_line(struct parser *P)
{
	const char *p = P->ln.p, *e = P->ln.p + P->ln.n;
	const char *q = p + 1;
	while (q < e && *q != ' ' && *q != ':' && *q != '=' && *q != '(')
		q++;
	if (q == p + 1)
		return perr(P, p, "expected a node name after '%s'", "%");
	uint32_t sym = fs_strtab_intern(&P->s->strs, p + 1, (size_t)(q - p - 1));
	if (defined_before(P, sym, p, q))
		return;
	int call = starts(q, e, " = ");
	if (!call && !starts(q, e, " : "))
		return perr(P, q, "expected ' = <target>(...)' or ' : <shape> : <dtype>' after the node name");
	uint32_t mark_args = P->g->n_args, mark_types = P->g->n_types, mark_nodes = P->g->n_nodes;
	if ((call ? parse_call(P, sym, q + 3, e) : parse_placeholder(P, sym, q + 3, e)) < 0)
		drop_line(P, mark_nodes, mark_args, mark_types);
}

/* output := 'output' elems */
static void parse_output_line(struct parser *P)
{
	const char *p = P->ln.p + 6, *e = P->ln.p + P->ln.n;
	if (p < e && *p != ' ')
		return perr(P, P->ln.p, "unexpected line; expected a node, 'output ...' or a '# ' header");
	struct fs_graph *g = P->g;
	uint32_t mark = g->n_args, mark_nodes = g->n_nodes, mark_types = g->n_types;
	g->output_line = P->ln.no;
	P->closed = 1; /* a bad output line is said once, not again as a missing one */
	if (parse_elems(P, p, e, 1) < 0) {
		drop_line(P, mark_nodes, mark, mark_types);
		return;
	}
	for (uint32_t i = mark; i < g->n_args; i++) /* a name no line has defined or read: a typo, or the line cut short */
		if (g->args[i].kind == FS_ARG_NODE && g->args[i].node >= mark_nodes) {
			const char *name = fs_scan_str(P->s, g->args[i].text);
			perr(P, ref_at(p, e, name), "output names '%s', which no line of this module defines (the line cut short?)", name);
			drop_line(P, mark_nodes, mark, mark_types);
			return;
		}
	for (uint32_t i = mark; i < g->n_args; i++) {
		if (g->args[i].kind != FS_ARG_NODE)
			continue;
		FS_GROW(g->outputs, g->cap_outputs, g->n_outputs + 1);
		g->outputs[g->n_outputs++] = g->args[i].node;
		g->nodes[g->args[i].node].flags |= FS_NODE_OUTPUT;
	}
	g->n_args = mark;
}

/* ---- modules and dedupe --------------------------------------------------------------- */

static int next_line(struct parser *P, const char **pos)
{
	const char *p = *pos;
	if (p >= P->end)
		return 0;
	const char *nl = memchr(p, '\n', (size_t)(P->end - p));
	const char *e = nl ? nl : P->end;
	*pos = nl ? nl + 1 : P->end;
	P->ln.p = p;
	P->ln.n = (size_t)(e - p);
	if (P->ln.n && p[P->ln.n - 1] == '\r')
		P->ln.n--;
	P->ln.no++;
	return 1;
}

/* End of the module body starting at p: just past its output line, or the
 * start of the next '# GraphModule:' header, or the end of the buffer. */
static const char *body_end(const char *p, const char *end)
{
	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		const char *next = nl ? nl + 1 : end;
		if (starts(p, end, "output"))
			return next;
		if (starts(p, end, "# GraphModule:"))
			return p;
		p = next;
	}
	return end;
}

static uint32_t body_slot(const struct fs_scan_priv *pr, uint64_t h)
{
	return (uint32_t)h & (pr->cap_bodies - 1);
}

static void body_insert(struct fs_scan_priv *pr, const struct fs_body *b)
{
	if ((pr->n_bodies + 1) * 2 > pr->cap_bodies) {
		struct fs_body *old = pr->bodies;
		uint32_t oldcap = pr->cap_bodies;
		pr->cap_bodies = oldcap ? oldcap * 2 : 256;
		pr->bodies = fs_xcalloc(pr->cap_bodies, sizeof(*pr->bodies));
		pr->n_bodies = 0;
		for (uint32_t i = 0; i < oldcap; i++)
			if (old[i].text)
				body_insert(pr, &old[i]);
		free(old);
	}
	uint32_t i = body_slot(pr, b->hash);
	while (pr->bodies[i].text)
		i = (i + 1) & (pr->cap_bodies - 1);
	pr->bodies[i] = *b;
	pr->n_bodies++;
}

static const struct fs_body *body_find(const struct fs_scan_priv *pr, const char *p, size_t n, uint64_t h)
{
	if (!pr->cap_bodies)
		return NULL;
	for (uint32_t i = body_slot(pr, h); pr->bodies[i].text; i = (i + 1) & (pr->cap_bodies - 1)) {
		const struct fs_body *b = &pr->bodies[i];
		if (b->hash == h && b->len == n && memcmp(b->text, p, n) == 0)
			return b;
	}
	return NULL;
}

/* Closes the module being parsed: reports a missing output line, builds users. */
static void finish_module(struct parser *P)
{
	struct fs_module *m = &P->s->modules[P->module];
	if (!P->closed) {
		fs_diag_add(&P->s->diags, FS_ERROR, pfile(P)->path, P->ln.no, 1, P->ln.p, P->ln.n,
			    "GraphModule '%s' has no 'output' line (truncated file?)",
			    fs_scan_str(P->s, m->name));
		pfile(P)->n_errors++;
		m->n_errors++;
	}
	fs_graph_finish(P->g);
	P->g = NULL;
}

static void parse_body_line(struct parser *P)
{
	const char *lp = P->ln.p, *le = lp + P->ln.n;
	if (P->ln.n == 0 || lp[0] == '#' || (lp[0] == '=' && le[-1] == '='))
		return;
	if (P->closed)
		perr(P, lp, "text after the module's 'output' line");
	else if (lp[0] == '%')
		parse_node_line(P);
	else if (starts(lp, le, "output")) {
		/* the writer ends every line: an output line the file ends inside may
		 * have lost its last names and still name nodes that exist */
		if (le == P->end)
			perr(P, le, "the file ends inside the output line (no newline after it): cut short?");
		parse_output_line(P);
	} else
		perr(P, lp, "unexpected line; expected a node, 'output ...' or a '# ' header");
}

/* module := body up to its output line. A body already parsed elsewhere
 * (same bytes) is linked to that graph instead of being parsed again. */
static void parse_module(struct parser *P, const char *name, size_t n, const char **pos)
{
	struct fs_scan *s = P->s;
	struct fs_scan_priv *pr = s->priv;
	FS_GROW(s->modules, s->cap_modules, s->n_modules + 1);
	uint32_t mi = s->n_modules++;
	struct fs_module *m = &s->modules[mi];
	memset(m, 0, sizeof(*m));
	m->file = P->file;
	m->name = fs_strtab_intern(&s->strs, name, n);
	m->line = P->ln.no;
	m->same_as = mi;
	pfile(P)->n_modules++;

	const char *b = *pos, *e = body_end(b, P->end);
	struct fs_body body = {b, (size_t)(e - b), fs_hash_bytes(b, (size_t)(e - b), 0), mi};
	const struct fs_body *orig = body_find(pr, b, body.len, body.hash);
	if (orig) {
		m->graph = s->modules[orig->module].graph;
		m->same_as = orig->module;
		for (const char *q = b; q < e && (q = memchr(q, '\n', (size_t)(e - q))); q++)
			P->ln.no++;
		*pos = e;
		return;
	}
	pr->gen++;
	m->graph = fs_xcalloc(1, sizeof(*m->graph));
	m->graph->hash = body.hash;
	s->bytes_parsed += body.len;
	P->g = m->graph;
	P->module = mi;
	P->closed = 0;
	while (*pos < e && next_line(P, pos))
		parse_body_line(P);
	finish_module(P);
	if (!s->modules[mi].n_errors) {
		body_insert(pr, &body);
		P->kept = 1;
	}
}

static void header_line(struct parser *P, const char **pos)
{
	const char *lp = P->ln.p, *le = lp + P->ln.n;
	struct fs_dumpfile *f = pfile(P);
	const char *v;
	if (starts(lp, le, "# Transform: ")) {
		v = lp + 13;
		trim(&v, &le);
		f->transform = fs_strtab_intern(&P->s->strs, v, (size_t)(le - v));
	} else if (starts(lp, le, "# Stage: ")) {
		v = lp + 9;
		trim(&v, &le);
		f->stage = fs_strtab_intern(&P->s->strs, v, (size_t)(le - v));
	} else if (starts(lp, le, "# GraphModules found: ")) {
		v = lp + 22;
		trim(&v, &le);
		if (!is_int(v, le) || *v == '-' || le - v > 6)
			return perr(P, v, "expected a module count");
		int32_t k = 0;
		for (; v < le; v++) /* bounded: the buffer is not NUL-terminated */
			k = k * 10 + (*v - '0');
		f->declared_modules = k;
	} else if (starts(lp, le, "# GraphModule:")) {
		v = lp + 14;
		trim(&v, &le);
		parse_module(P, v, (size_t)(le - v), pos);
	}
}

static void binary_error(struct parser *P, const char *nul)
{
	uint32_t line = 1;
	const char *ls = P->data;
	for (const char *q = P->data; (q = memchr(q, '\n', (size_t)(nul - q))); q++, line++)
		ls = q + 1;
	const char *le = memchr(nul, '\n', (size_t)(P->end - nul));
	fs_diag_add(&P->s->diags, FS_ERROR, pfile(P)->path, line, (uint32_t)(nul - ls) + 1, ls,
		    (size_t)((le ? le : P->end) - ls), "binary data (NUL byte): not a graph dump");
	pfile(P)->n_errors++;
}

static void file_error(struct parser *P, const char *msg)
{
	fs_diag_add(&P->s->diags, FS_ERROR, pfile(P)->path, 0, 0, NULL, 0, "%s", msg);
	pfile(P)->n_errors++;
}

/* dump := (header | module | implicit-module)* */
int fs_parse_dump(struct fs_scan *s, uint32_t file, const char *data, size_t len)
{
	struct parser P;
	memset(&P, 0, sizeof(P));
	P.s = s;
	P.file = file;
	P.data = data;
	P.end = data + len;
	if (!len)
		return file_error(&P, "empty file: no graph"), 0;
	const char *nul = memchr(data, '\0', len);
	if (nul)
		return binary_error(&P, nul), 0;
	uint32_t header_line_no = 0;
	for (const char *pos = data; pos < P.end;) {
		const char *start = pos;
		uint32_t no = P.ln.no;
		next_line(&P, &pos);
		const char *lp = P.ln.p, *le = lp + P.ln.n;
		if (!P.ln.n || (lp[0] == '=' && le[-1] == '='))
			continue;
		if (lp[0] == '#') {
			if (starts(lp, le, "# GraphModules found:"))
				header_line_no = P.ln.no;
			header_line(&P, &pos);
		} else if ((lp[0] == '%' || starts(lp, le, "output")) && !s->files[file].n_modules) {
			pos = start; /* older formats: one implicit root module */
			P.ln.no = no;
			parse_module(&P, "(root)", 6, &pos);
		} else if (lp[0] == '%' || starts(lp, le, "output"))
			perr(&P, lp, "node outside a GraphModule section (after the graph's output line)");
		else
			perr(&P, lp, "unexpected line; expected a node, 'output ...' or a '# ' header");
	}
	struct fs_dumpfile *f = &s->files[file];
	if (!f->n_modules && !f->n_errors)
		file_error(&P, "no graph in file (no '# GraphModule:' section and no node lines)");
	if (f->declared_modules >= 0 && (uint32_t)f->declared_modules != f->n_modules) {
		char msg[96];
		snprintf(msg, sizeof(msg), "header says %d GraphModules, found %u (truncated file?)",
			 f->declared_modules, f->n_modules);
		fs_diag_add(&s->diags, FS_ERROR, f->path, header_line_no, 1, NULL, 0, "%s", msg);
		f->n_errors++;
	}
	return P.kept;
}
