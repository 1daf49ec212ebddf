/*
 * cost.c: the cost model. A fused kernel no longer moves its intermediates:
 * each internal tensor is written once and read by each kernel that consumes
 * it (numel x dtype size); a region output read again inside the region saves
 * those reads; an input read by k kernels of the region is read once (k - 1
 * reads saved). A region of pure data movement next to a GEMM or attention
 * saves its whole traffic, since it folds into that kernel's loads or stores.
 * Launches saved: kernels - 1 (all of them for folded data movement).
 * Symbolic dims are evaluated with the bindings of --dims / --tokens.
 */
#include "mine_int.h"

#include <stdlib.h>
#include <string.h>

int64_t fs_type_bytes(const struct fs_scan *s, const struct fs_type *t,
		      const struct fs_binding *b, uint32_t nb)
{
	const struct fs_shape *sh = &s->types.shapes[t->shape];
	int64_t n = 1, v;
	uint32_t size = fs_dtype_size((enum fs_dtype)t->dtype);
	if (!size || sh->kind == FS_SHAPE_UNKNOWN)
		return -1;
	for (uint32_t i = 0; i < sh->rank; i++) {
		if (fs_dim_eval(&s->types, &s->types.dims[sh->dims + i], b, nb, &v) || v < 0 ||
		    __builtin_mul_overflow(n, v, &n))
			return -1;
	}
	return __builtin_mul_overflow(n, (int64_t)size, &n) ? -1 : n;
}

static int64_t node_bytes(const struct ctx *c, uint32_t i, int *known)
{
	const struct fs_node *n = &c->g->nodes[i];
	int64_t total = 0;
	for (uint16_t k = 0; k < n->n_out; k++) {
		int64_t b = fs_type_bytes(c->s, &c->g->types[n->out + k], c->o->bind, c->o->n_bind);
		if (b < 0) {
			*known = 0;
			continue;
		}
		total = fs_sat_add(total, b);
	}
	return total;
}

/* For each value the kernels of region r read (directly or through views):
 * how many distinct kernels read it, in c->count (clear_readers zeroes it).
 * c->pos marks, per value, the last kernel counted. */
static void count_readers(struct ctx *c, const struct fs_region *r)
{
	const struct fs_graph *g = c->g;
	for (uint32_t k = 0; k < r->n_nodes; k++) {
		uint32_t i = r->nodes[k];
		if (!fs_mine_is_kernel(c, i))
			continue;
		const struct fs_node *x = &g->nodes[i];
		for (uint32_t a = x->args; a < x->args + x->n_args; a++) {
			uint32_t s = g->args[a].kind == FS_ARG_NODE ? fs_mine_source(c, g->args[a].node) : UINT32_MAX;
			if (s != UINT32_MAX && c->pos[s] != i)
				c->pos[s] = i, c->count[s]++;
		}
	}
}

static void clear_readers(struct ctx *c, const struct fs_region *r)
{
	const struct fs_graph *g = c->g;
	for (uint32_t k = 0; k < r->n_nodes; k++) {
		const struct fs_node *x = &g->nodes[r->nodes[k]];
		for (uint32_t a = x->args; a < x->args + x->n_args; a++)
			if (g->args[a].kind == FS_ARG_NODE) {
				uint32_t s = fs_mine_source(c, g->args[a].node);
				c->pos[s] = UINT32_MAX, c->count[s] = 0;
			}
	}
}

static int is_float(uint8_t dt)
{
	return dt == FS_DT_F64 || dt == FS_DT_F32 || dt == FS_DT_F16 || dt == FS_DT_BF16 ||
	       (dt >= FS_DT_F8E4M3 && dt <= FS_DT_F4X2);
}

/* Where rounding can differ from eager: a cast between float types, or a
 * reduction / norm over floats. */
static int float_math(const struct ctx *c, const struct fs_node *n, const struct fs_op *op)
{
	uint8_t out = c->g->types[n->out].dtype;
	if (op->cls == FS_OPC_REDUCTION || op->cls == FS_OPC_NORM)
		return is_float(out);
	if (op->cls != FS_OPC_CAST || !n->n_args || c->g->args[n->args].kind != FS_ARG_NODE)
		return 0;
	uint8_t in = c->g->types[c->g->nodes[c->g->args[n->args].node].out].dtype;
	return is_float(in) && is_float(out) && in != out;
}

static uint32_t region_risks(const struct ctx *c, const struct fs_region *r)
{
	uint32_t risks = r->n_outputs > 1 ? FS_RISK_MULTI_OUTPUT : 0;
	for (uint32_t k = 0; k < r->n_nodes; k++) {
		const struct fs_node *n = &c->g->nodes[r->nodes[k]];
		const struct fs_op *op = &c->s->ops[n->op];
		if (float_math(c, n, op))
			risks |= FS_RISK_NUMERICS;
		if (c->role[r->nodes[k]] == ROLE_COPY || (c->role[r->nodes[k]] == ROLE_VIEW && !c->contig[r->nodes[k]]))
			risks |= FS_RISK_LAYOUT;
		if (c->s->types.shapes[c->g->types[n->out].shape].symbolic)
			risks |= FS_RISK_DYNAMIC;
	}
	return risks;
}

/* Data movement only: everything it reads and writes is saved. */
static void layout_cost(struct ctx *c, struct fs_region *r, int *known)
{
	const struct fs_graph *g = c->g;
	for (uint32_t k = 0; k < r->n_nodes; k++) {
		uint32_t i = r->nodes[k];
		const struct fs_node *x = &g->nodes[i];
		if (!fs_mine_is_kernel(c, i))
			continue;
		r->bytes_saved = fs_sat_add(r->bytes_saved, node_bytes(c, i, known));
		if (x->n_args && g->args[x->args].kind == FS_ARG_NODE)
			r->bytes_saved = fs_sat_add(r->bytes_saved, node_bytes(c, fs_mine_source(c, g->args[x->args].node), known));
	}
	r->launches_saved = r->n_kernels;
}

void fs_mine_region_cost(struct ctx *c, struct fs_region *r)
{
	int known = 1;
	r->bytes_saved = 0;
	r->risks = region_risks(c, r);
	if (!r->n_math) {
		layout_cost(c, r, &known);
		r->cost_known = (uint8_t)known;
		return;
	}
	count_readers(c, r);
	for (uint32_t k = 0; k < r->n_outputs; k++)
		c->mark[r->outputs[k]] = 1;
	for (uint32_t k = 0; k < r->n_nodes; k++) {
		uint32_t i = r->nodes[k];
		if (!fs_mine_is_kernel(c, i))
			continue;
		int64_t b = node_bytes(c, i, &known), readers = c->count[i];
		r->bytes_saved = fs_sat_add(r->bytes_saved, fs_sat_mul(b, c->mark[i] ? readers : 1 + readers));
	}
	for (uint32_t k = 0; k < r->n_outputs; k++)
		c->mark[r->outputs[k]] = 0;
	/* an external value read by several kernels (maybe through different
	 * views of it) is read once by the fused kernel */
	for (uint32_t k = 0; k < r->n_inputs; k++) {
		uint32_t s = fs_mine_source(c, r->inputs[k]);
		if (c->count[s] >= 2 && !c->mark[s])
			r->bytes_saved = fs_sat_add(r->bytes_saved, fs_sat_mul(node_bytes(c, s, &known), c->count[s] - 1));
		c->mark[s] = 1; /* each source once */
	}
	for (uint32_t k = 0; k < r->n_inputs; k++)
		c->mark[fs_mine_source(c, r->inputs[k])] = 0;
	clear_readers(c, r);
	r->launches_saved = r->n_kernels ? r->n_kernels - 1 : 0;
	r->cost_known = (uint8_t)known;
}

/* ---- bindings -------------------------------------------------------------------- */

uint32_t fs_bind_default(const struct fs_scan *s, const struct fs_graph *g, int64_t tokens,
			 struct fs_binding *out, uint32_t max)
{
	for (uint32_t i = 0; i < g->n_nodes; i++) {
		const struct fs_node *n = &g->nodes[i];
		if (n->kind != FS_NODE_PLACEHOLDER)
			continue;
		const struct fs_shape *sh = &s->types.shapes[g->types[n->out].shape];
		int32_t first = -1, last = -1;
		for (uint32_t d = 0; d < sh->rank; d++) {
			const struct fs_dim *dim = &s->types.dims[sh->dims + d];
			if (dim->expr >= 0 && s->types.exprs[dim->expr].op == FS_EX_SYM) {
				if (first < 0)
					first = (int32_t)d;
				last = (int32_t)d;
			}
		}
		if (first < 0 || max < 1)
			continue;
		uint32_t nb = 0;
		if (first != last && max >= 2) {
			out[nb].sym = s->types.exprs[s->types.dims[sh->dims + (uint32_t)first].expr].sym;
			out[nb++].value = 1;
		}
		out[nb].sym = s->types.exprs[s->types.dims[sh->dims + (uint32_t)last].expr].sym;
		out[nb++].value = tokens;
		return nb;
	}
	return 0;
}

/* Whether sym names a symbolic dim of some shape of the scan. */
static int is_dim_symbol(const struct fs_scan *s, uint32_t sym)
{
	for (uint32_t i = 0; sym != UINT32_MAX && i < s->types.n_exprs; i++)
		if (s->types.exprs[i].op == FS_EX_SYM && s->types.exprs[i].sym == sym)
			return 1;
	return 0;
}

int fs_bind_parse(const struct fs_scan *s, const char *text, struct fs_binding *out, uint32_t max, char *why, size_t n_why)
{
	uint32_t n = 0;
	for (const char *p = text; *p;) {
		const char *name = p;
		while (*p && *p != '=' && *p != ',')
			p++;
		size_t len = (size_t)(p - name);
		if (*p != '=' || !len)
			return snprintf(why, n_why, "expected NAME=N at '%.40s'", name), -1;
		int64_t val = 0;
		int over = 0;
		const char *v = ++p;
		for (; *p >= '0' && *p <= '9'; p++)
			over |= __builtin_mul_overflow(val, 10, &val) || __builtin_add_overflow(val, *p - '0', &val);
		if (p == v || (*p && *p != ','))
			return snprintf(why, n_why, "expected a number after '%.*s=' at '%.40s'", (int)len, name, v), -1;
		if (over || val < 1 || val > FS_MAX_DIM)
			return snprintf(why, n_why, "%.*s=%.*s: a size is an integer from 1 to %lld", (int)len, name, (int)(p - v), v,
					(long long)FS_MAX_DIM), -1;
		uint32_t sym = fs_strtab_find(&s->strs, name, len);
		if (!is_dim_symbol(s, sym))
			return snprintf(why, n_why, "no dump has a symbolic dim named '%.*s'", (int)len, name), -1;
		for (uint32_t i = 0; i < n; i++)
			if (out[i].sym == sym)
				return snprintf(why, n_why, "'%.*s' is bound twice", (int)len, name), -1;
		if (n == max)
			return snprintf(why, n_why, "more than %u symbols bound", max), -1;
		out[n].sym = sym;
		out[n++].value = val;
		if (*p == ',')
			p++;
	}
	return (int)n;
}

static int bound(const struct fs_binding *b, uint32_t nb, uint32_t sym)
{
	for (uint32_t i = 0; i < nb; i++)
		if (b[i].sym == sym)
			return 1;
	return 0;
}

/* Symbols of one dim's expression tree not in b, marked in seen and listed. */
static void dim_unbound(const struct fs_types *t, int32_t root, const struct fs_binding *b, uint32_t nb, uint8_t *seen,
			uint32_t *out, uint32_t max, uint32_t *n)
{
	int32_t stack[256]; /* a dim's tree holds at most 256 nodes (shape.c) */
	uint32_t top = 0;
	stack[top++] = root;
	while (top) {
		const struct fs_expr *x = &t->exprs[stack[--top]];
		if (x->op == FS_EX_SYM && !seen[x->sym] && !bound(b, nb, x->sym)) {
			seen[x->sym] = 1;
			if (*n < max)
				out[*n] = x->sym;
			++*n;
		}
		for (int k = 0; k < 2 && top < 255; k++)
			if ((k ? x->rhs : x->lhs) >= 0)
				stack[top++] = k ? x->rhs : x->lhs;
	}
}

uint32_t fs_unbound_syms(const struct fs_scan *s, const struct fs_graph *g, const struct fs_binding *b, uint32_t nb,
			 uint32_t *out, uint32_t max)
{
	uint8_t *seen = fs_xcalloc(s->strs.n + 1, 1), *shape_seen = fs_xcalloc(s->types.n_shapes + 1, 1);
	uint32_t n = 0;
	for (uint32_t i = 0; i < g->n_types; i++) {
		const struct fs_type *ty = &g->types[i];
		if (shape_seen[ty->shape] || !fs_dtype_size((enum fs_dtype)ty->dtype))
			continue;
		shape_seen[ty->shape] = 1;
		const struct fs_shape *sh = &s->types.shapes[ty->shape];
		for (uint32_t d = 0; d < sh->rank; d++)
			if (s->types.dims[sh->dims + d].expr >= 0)
				dim_unbound(&s->types, s->types.dims[sh->dims + d].expr, b, nb, seen, out, max, &n);
	}
	free(shape_seen);
	free(seen);
	return n;
}
