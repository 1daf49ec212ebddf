/*
 * bind.c: symbolic dims bound to sizes (--tokens, --dims): the default
 * binding, a user's binding parsed and range-checked, the symbols a binding
 * leaves open, and the bytes of a value under a binding. Used by the cost
 * model (match/) and the numerics check (fuse/) alike.
 */
#include "scan_int.h"

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
		uint32_t nb = 0, sym_first = s->types.exprs[s->types.dims[sh->dims + (uint32_t)first].expr].sym,
			 sym_last = s->types.exprs[s->types.dims[sh->dims + (uint32_t)last].expr].sym;
		if (sym_first != sym_last && max >= 2) { /* one symbol in both places (s70xs70x64) is bound once */
			out[nb].sym = sym_first;
			out[nb++].value = 1;
		}
		out[nb].sym = sym_last;
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
