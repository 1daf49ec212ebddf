/*
 * emit_op.c: the tensors of the op `--emit` writes, and its products (emit_op.h).
 */
#include "emit_op.h"

#include "dims.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The names kernels/torch_op.py gives beside the op's parameters: its module's
 * public names and the locals of the functions taking the op's signature
 * (tests/scripts/check_generated.py fails where a parameter takes one), and the names
 * torch.library's schema treats apart. Its private names begin with '_',
 * the op's and its groups' with "fs_": a parameter never does. */
static const char *const module_names[] = {"DESC", "PATHS", "ctypes", "gemm_paths", "json", "launch", "os", "re", "torch",
					   "typing", "weakref", "inputs", "s", "outs", "shape", "dtype", "strides", "out",
					   "self", NULL};

static int module_name(const char *s)
{
	for (const char *const *w = module_names; *w; w++)
		if (!strcmp(*w, s))
			return 1;
	return s[0] == '_' || !strncmp(s, "fs_", 3) || fs_py_reserved(s);
}

/* A Python identifier for a node name: its letters, digits and '_' (any
 * other character as '_'), behind "in_" where that begins with no letter
 * or is a name of the module (a keyword, a builtin, the module's own). */
static void py_name(const char *node, char *out, size_t n)
{
	size_t k = 0;
	char clean[80];
	for (const char *c = node; *c && k + 1 < sizeof(clean); c++)
		clean[k++] = ((*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') || (*c >= '0' && *c <= '9')) ? *c : '_';
	clean[k] = '\0';
	int letter = (clean[0] >= 'a' && clean[0] <= 'z') || (clean[0] >= 'A' && clean[0] <= 'Z');
	snprintf(out, n, "%s%s", !letter || module_name(clean) ? "in_" : "", clean);
}

/* name[v] made unlike every name before it: "_2", "_3", ... appended (the first free) */
static void py_unique(char (*name)[96], uint32_t v)
{
	char base[96];
	snprintf(base, sizeof(base), "%s", name[v]);
	for (uint32_t dup = 1, u = 0; u < v; u++)
		if (!strcmp(name[u], name[v])) {
			snprintf(name[v], sizeof(name[v]), "%.80s_%u", base, ++dup);
			u = (uint32_t)-1; /* again from the first: the new name may be taken too */
		}
}

int fs_emit_op_init(struct fs_emit_op *e, const struct prog *p, char *why, size_t n)
{
	uint32_t nv = p->n_in + p->n_ops;
	memset(e, 0, sizeof(*e));
	e->p = p, e->kq = *p, e->kernel = 1;
	e->gemm = fs_gemm_any(p);
	if (e->gemm) {
		struct fs_diags d;
		fs_diags_init(&d);
		int rc = fs_gemm_plan(p, &e->pl, &d);
		if (rc)
			snprintf(why, n, "%s", fs_diags_last(&d));
		fs_diags_release(&d);
		if (rc) {
			fs_gemm_plan_release(&e->pl);
			return -1;
		}
		e->kernel = fs_gemm_kernel_prog(p, &e->pl, &e->kq);
	}
	e->name = fs_xcalloc(nv + FS_GEMM_MAX, sizeof(*e->name));
	for (uint32_t v = 0; v < nv; v++) {
		py_name(fs_scan_str(p->s, p->g->nodes[fs_prog_node(p, (int32_t)v)].name), e->name[v], sizeof(e->name[v]));
		py_unique(e->name, v);
	}
	for (uint32_t k = 0; k < e->pl.n_calls; k++)
		snprintf(e->name[nv + k], sizeof(e->name[nv + k]), "fs_cat%u", k);
	return 0;
}

void fs_emit_op_release(struct fs_emit_op *e)
{
	if (e->gemm) {
		free(e->kq.is_output);
		fs_gemm_plan_release(&e->pl);
	}
	free(e->name);
	e->name = NULL;
}

uint32_t fs_emit_op_inputs(const struct fs_emit_op *e, const struct fs_kernel *k, int32_t *v)
{
	uint32_t n = 0;
	if (!e->gemm) {
		for (uint32_t i = 0; k && i < k->n_params; i++)
			if (!k->write[i])
				v[n++] = k->value[i];
		return n;
	}
	for (uint32_t i = 0; i < e->p->n_in && n < FS_KERNEL_MAX_PARAMS; i++)
		v[n++] = (int32_t)i;
	return n;
}

uint32_t fs_emit_op_outputs(const struct fs_emit_op *e, const struct fs_kernel *k, int32_t *v)
{
	uint32_t n = 0;
	if (!e->gemm) {
		for (uint32_t i = 0; k && i < k->n_params; i++)
			if (k->write[i])
				v[n++] = k->value[i];
		return n;
	}
	for (uint32_t i = 0; i < e->p->n_ops && n < FS_KERNEL_MAX_PARAMS; i++)
		if (e->p->is_output[i])
			v[n++] = (int32_t)(e->p->n_in + i);
	return n;
}

/* The concatenated group whose output holds value v's columns (*col on), or -1. */
static int32_t group_of(const struct fs_emit_op *e, int32_t v, int64_t *col)
{
	for (uint32_t k = 0; e->gemm && e->pl.pitch[v] && k < e->pl.n_calls; k++)
		for (uint32_t m = 0; m < e->pl.calls[k].n_members; m++)
			if (e->pl.calls[k].member[m] == v) {
				*col = e->pl.calls[k].col[m];
				return (int32_t)k;
			}
	return -1;
}

/* dims [from, to) of t as one formula: their product, a number where all are static */
static cJSON *formula(const struct prog *p, const struct ten *t, int from, int to)
{
	int64_t v = 1;
	int sym = 0;
	char e[256];
	for (int d = from; d < to; d++)
		sym |= fs_dim_symbolic(t, d), v *= t->shape[d];
	if (sym && fs_dims_text(p, t, from, to, FS_LANG_PY, NULL, e, sizeof(e)) == 0)
		return cJSON_CreateString(e);
	return cJSON_CreateNumber((double)v);
}

static cJSON *shape_json(const struct prog *p, const struct ten *t)
{
	cJSON *a = cJSON_CreateArray();
	for (uint8_t d = 0; d < t->rank; d++)
		cJSON_AddItemToArray(a, formula(p, t, d, d + 1));
	return a;
}

static void tensor_json(const struct fs_emit_op *e, cJSON *list, int32_t v, const struct ten *t, cJSON *shape)
{
	const struct prog *p = e->p;
	cJSON *q = cJSON_CreateObject();
	cJSON_AddStringToObject(q, "name", e->name[v]);
	if (v < (int32_t)(p->n_in + p->n_ops))
		cJSON_AddStringToObject(q, "node", fs_scan_str(p->s, p->g->nodes[fs_prog_node(p, v)].name));
	cJSON_AddItemToObject(q, "shape", shape ? shape : shape_json(p, t));
	cJSON_AddStringToObject(q, "dtype", fs_dtype_name((enum fs_dtype)t->dtype));
	if (t->strided) { /* dense, dims outermost first in this order, as eager lays it out */
		cJSON *o = cJSON_AddArrayToObject(q, "order");
		for (uint8_t d = 0; d < t->rank; d++)
			cJSON_AddItemToArray(o, cJSON_CreateNumber(t->order[d]));
	}
	cJSON_AddItemToArray(list, q);
}

/* The shape of group k's output: its first member's, the columns of all. */
static cJSON *group_shape(const struct fs_emit_op *e, uint32_t k, const struct ten **t)
{
	const struct fs_gemm_call *c = &e->pl.calls[k];
	*t = fs_prog_value(e->p, c->member[0]);
	cJSON *s = shape_json(e->p, *t);
	cJSON_ReplaceItemInArray(s, (*t)->rank - 1, cJSON_CreateNumber((double)c->mm.N));
	return s;
}

static cJSON *names(const struct fs_emit_op *e, const int32_t *v, uint32_t n)
{
	cJSON *a = cJSON_CreateArray();
	for (uint32_t i = 0; i < n; i++)
		cJSON_AddItemToArray(a, cJSON_CreateString(e->name[v[i]]));
	return a;
}

/* One product as PyTorch runs it: D (batch, M, N) = A (batch, M, K) B
 * (batch, K, N) (+ bias) (+ C), then the activation; B the weight (or the
 * weights concatenated), stored [N, K] (b_nk) or [K, N]. */
static cJSON *product_json(const struct fs_emit_op *e, const struct fs_gemm_call *c, int32_t out)
{
	const struct prog *p = e->p;
	const struct op *op = &p->ops[c->op];
	const struct ten *t = &op->out, *a = fs_prog_value(p, op->src[0]);
	int32_t w[FS_GEMM_GROUP], b[FS_GEMM_GROUP];
	uint32_t nw = 0, nb = 0;
	cJSON *q = cJSON_CreateObject();
	cJSON_AddStringToObject(q, "a", e->name[c->a]);
	for (uint32_t m = 0; m < (c->n_members ? c->n_members : 1); m++) {
		w[nw++] = c->n_members ? c->member_b[m] : c->b;
		if (c->n_members ? c->member_bias[m] >= 0 : c->bias >= 0)
			b[nb++] = c->n_members ? c->member_bias[m] : c->bias;
	}
	cJSON_AddItemToObject(q, "weights", names(e, w, nw));
	cJSON_AddItemToObject(q, "biases", names(e, b, nb));
	if (c->c >= 0)
		cJSON_AddStringToObject(q, "c", e->name[c->c]);
	if (c->mm.relu || c->mm.gelu)
		cJSON_AddStringToObject(q, "activation", c->mm.relu ? "relu" : "gelu_tanh");
	cJSON_AddBoolToObject(q, "b_nk", c->mm.b_nk);
	int linear = op->ints[0] != 0;
	cJSON_AddItemToObject(q, "batch", linear ? cJSON_CreateNumber(1) : formula(p, t, 0, t->rank - 2));
	cJSON_AddItemToObject(q, "M", linear ? formula(p, t, 0, t->rank - 1) : formula(p, t, t->rank - 2, t->rank - 1));
	cJSON_AddItemToObject(q, "N", c->n_members ? cJSON_CreateNumber((double)c->mm.N) : formula(p, t, t->rank - 1, t->rank));
	cJSON_AddItemToObject(q, "K", formula(p, a, a->rank - 1, a->rank));
	cJSON_AddBoolToObject(q, "a_batched", c->mm.stride_a != 0);
	cJSON_AddBoolToObject(q, "b_batched", c->mm.stride_b != 0);
	cJSON_AddStringToObject(q, "out", e->name[out]);
	cJSON_AddBoolToObject(q, "after_kernel", c->post);
	return q;
}

/* The degree of symbol sym in expression e: 0 where it is absent, NONPOLY
 * where it lies under //, %, max or min (no polynomial of it). */
enum { NONPOLY = 1000 };

static uint32_t degree(const struct fs_types *t, int32_t e, uint32_t sym)
{
	const struct fs_expr *x = &t->exprs[e];
	uint32_t l = x->lhs >= 0 ? degree(t, x->lhs, sym) : 0, r = x->rhs >= 0 ? degree(t, x->rhs, sym) : 0;
	switch (x->op) {
	case FS_EX_INT: return 0;
	case FS_EX_SYM: return x->sym == sym;
	case FS_EX_NEG: return l;
	case FS_EX_ADD:
	case FS_EX_SUB: return l > r ? l : r;
	case FS_EX_MUL: return l + r > NONPOLY ? NONPOLY : l + r;
	default: return l || r ? NONPOLY : 0;
	}
}

/* the largest degree of symbol b in any dim of any value of p (0: p does not read it) */
static uint32_t value_degree(const struct prog *p, uint32_t b)
{
	uint32_t most = 0;
	for (uint32_t v = 0; v < p->n_in + p->n_ops; v++) {
		const struct ten *t = fs_prog_value(p, (int32_t)v);
		for (uint8_t d = 0; d < t->rank; d++) {
			const struct fs_dim *dim = fs_dim_symbolic(t, d) ? &p->s->types.dims[t->sym[d] - 1] : NULL;
			uint32_t k = dim && dim->expr >= 0 ? degree(&p->s->types, dim->expr, p->bind[b].sym) : dim ? NONPOLY : 0;
			most = k > most ? k : most;
		}
	}
	return most;
}

/* Every dim of every value of p is the same at (b, c) = (x, y) as at (1,
 * x * y), the other symbols at their bound values: p reads b and c only as
 * their product. Each dim is a polynomial of degree at most 3 in b and c
 * (the caller checks), so agreeing on a 4 x 4 grid proves it. */
static int product_only(const struct prog *p, uint32_t b, uint32_t c)
{
	static const int64_t xs[4] = {2, 3, 5, 7}, ys[4] = {3, 4, 11, 13};
	struct fs_binding at[8], one[8];
	memcpy(at, p->bind, p->n_bind * sizeof(*at));
	memcpy(one, p->bind, p->n_bind * sizeof(*one));
	for (uint32_t i = 0; i < 16; i++) {
		at[b].value = xs[i / 4], at[c].value = ys[i % 4];
		one[b].value = 1, one[c].value = xs[i / 4] * ys[i % 4];
		for (uint32_t v = 0; v < p->n_in + p->n_ops; v++) {
			const struct ten *t = fs_prog_value(p, (int32_t)v);
			for (uint8_t d = 0; d < t->rank; d++) {
				const struct fs_dim *dim = fs_dim_symbolic(t, d) ? &p->s->types.dims[t->sym[d] - 1] : NULL;
				int64_t u, w;
				if (dim && (fs_dim_eval(&p->s->types, dim, at, p->n_bind, &u) ||
					    fs_dim_eval(&p->s->types, dim, one, p->n_bind, &w) || u != w))
					return 0;
			}
		}
	}
	return 1;
}

/* Input i's dim d is exactly symbol b */
static int dim_is(const struct prog *p, const struct ten *t, uint8_t d, uint32_t b)
{
	const struct fs_dim *dim = fs_dim_symbolic(t, d) ? &p->s->types.dims[t->sym[d] - 1] : NULL;
	return dim && dim->expr >= 0 && p->s->types.exprs[dim->expr].op == FS_EX_SYM && p->s->types.exprs[dim->expr].sym == p->bind[b].sym;
}

/* dim d of t is linear in symbol c, its other symbols known, and grows with c at
 * the bound sizes: c = (dim - f(c = 0)) / (f(c = 1) - f(c = 0)) */
static int solvable(const struct prog *p, const struct fs_emit_sym *known, const struct ten *t, uint8_t d, uint32_t c)
{
	const struct fs_dim *dim = fs_dim_symbolic(t, d) ? &p->s->types.dims[t->sym[d] - 1] : NULL;
	if (!dim || dim->expr < 0 || degree(&p->s->types, dim->expr, p->bind[c].sym) != 1)
		return 0;
	for (uint32_t o = 0; o < p->n_bind; o++)
		if (o != c && known[o].how == FS_SYM_NONE && degree(&p->s->types, dim->expr, p->bind[o].sym))
			return 0;
	struct fs_binding at[8];
	int64_t lo, hi;
	memcpy(at, p->bind, p->n_bind * sizeof(*at));
	for (uint32_t o = 0; o < p->n_bind; o++)
		at[o].value = known[o].value;
	at[c].value = 1;
	if (fs_dim_eval(&p->s->types, dim, at, p->n_bind, &lo))
		return 0;
	at[c].value = 2;
	return !fs_dim_eval(&p->s->types, dim, at, p->n_bind, &hi) && hi > lo;
}

void fs_emit_op_symbols(const struct fs_emit_op *e, const int32_t *in, uint32_t n_in, struct fs_emit_sym *out)
{
	const struct prog *p = e->p;
	for (uint32_t b = 0; b < p->n_bind; b++) {
		struct fs_emit_sym *q = &out[b];
		*q = (struct fs_emit_sym){.how = FS_SYM_NONE, .value = p->bind[b].value};
		for (uint32_t i = 0; i < n_in && q->how == FS_SYM_NONE; i++)
			for (uint8_t d = 0; d < fs_prog_value(p, in[i])->rank && q->how == FS_SYM_NONE; d++)
				if (dim_is(p, fs_prog_value(p, in[i]), d, b))
					q->how = FS_SYM_DIM, q->input = i, q->dim = d;
		if (q->how == FS_SYM_NONE && !value_degree(p, b))
			q->how = FS_SYM_UNUSED;
	}
	/* a symbol read only through its product with one the op reads (a batch of 1 flattened
	 * into the tokens: 32*s70*s72) is 1, the other carrying the product */
	for (uint32_t b = 0; b < p->n_bind; b++)
		for (uint32_t c = 0; c < p->n_bind && out[b].how == FS_SYM_NONE; c++)
			if (c != b && out[c].how == FS_SYM_NONE && p->bind[b].value == 1 && value_degree(p, b) <= 3 &&
			    value_degree(p, c) <= 3 && product_only(p, b, c))
				out[b].how = FS_SYM_FOLDED, out[b].value = 1, out[b].into = c;
	/* then each left, in turn, solved from an input's dim linear in it over the symbols known */
	for (uint32_t step = 0, again = 1; again;) {
		again = 0;
		for (uint32_t c = 0; c < p->n_bind; c++)
			for (uint32_t i = 0; i < n_in && out[c].how == FS_SYM_NONE; i++)
				for (uint8_t d = 0; d < fs_prog_value(p, in[i])->rank && out[c].how == FS_SYM_NONE; d++)
					if (solvable(p, out, fs_prog_value(p, in[i]), d, c))
						out[c] = (struct fs_emit_sym){FS_SYM_SOLVE, i, d, p->bind[c].value, 0, step++}, again = 1;
	}
}
/* The symbols, in the kernel's parameter order, each with how the op gets
 * it (fs_emit_op_symbols); "tokens" their product. -1 (why) where one
 * cannot be had from the inputs. */
static int symbols_json(const struct fs_emit_op *e, const int32_t *in, uint32_t n_in, cJSON *j, char *why, size_t n)
{
	const struct prog *p = e->p;
	struct fs_emit_sym how[8];
	cJSON *syms = cJSON_AddArrayToObject(j, "symbols");
	struct fs_text tokens = {0};
	fs_emit_op_symbols(e, in, n_in, how);
	for (uint32_t b = 0; b < p->n_bind; b++) {
		char sname[64], into[64];
		fs_dims_py_sym(p, b, sname, sizeof(sname));
		if (how[b].how == FS_SYM_NONE) {
			snprintf(why, n, "symbol %s cannot be had from the op's inputs: no input's dim is it or linear in it, and the "
					 "op's shapes read it other than through its product with another symbol", sname);
			free(tokens.s);
			return -1;
		}
		cJSON *q = cJSON_CreateObject();
		cJSON_AddStringToObject(q, "name", sname);
		cJSON_AddItemToArray(syms, q);
		fs_text_put(&tokens, "%s%s", b ? " * " : "", sname);
		if (how[b].how == FS_SYM_DIM || how[b].how == FS_SYM_SOLVE) {
			cJSON *from = cJSON_AddObjectToObject(q, "from");
			cJSON_AddNumberToObject(from, "input", how[b].input);
			cJSON_AddNumberToObject(from, "dim", how[b].dim);
			if (how[b].how == FS_SYM_SOLVE)
				cJSON_AddNumberToObject(from, "solve", how[b].step);
			continue;
		}
		cJSON_AddNumberToObject(q, "value", (double)how[b].value);
		if (how[b].how == FS_SYM_FOLDED) {
			fs_dims_py_sym(p, how[b].into, into, sizeof(into));
			cJSON_AddStringToObject(q, "folded_into", into);
		}
	}
	cJSON_AddStringToObject(j, "tokens", tokens.s ? tokens.s : "1");
	free(tokens.s);
	return 0;
}

/* The inputs, and the op's signature, call arguments and docstring from them. */
static void inputs_json(const struct fs_emit_op *e, const int32_t *in, uint32_t n_in, cJSON *j, struct fs_emit_sig *s)
{
	cJSON *ins = cJSON_AddArrayToObject(j, "inputs");
	for (uint32_t i = 0; i < n_in; i++) {
		const struct ten *t = fs_prog_value(e->p, in[i]);
		tensor_json(e, ins, in[i], t, NULL);
		fs_text_put(&s->sig, "%s%s: torch.Tensor", i ? ", " : "", e->name[in[i]]);
		fs_text_put(&s->args, "%s%s", i ? ", " : "", e->name[in[i]]);
		fs_text_put(&s->doc, "%s%s %s", i ? ", " : "", e->name[in[i]], fs_dtype_name((enum fs_dtype)t->dtype) + 6);
	}
}

/* What the op returns: each output, a concatenated group's whole output
 * once (its members views of it); returned[v] marks what is returned (a
 * group g as n_in + n_ops + g). The number of tensors returned. */
static uint32_t outputs_json(const struct fs_emit_op *e, const int32_t *out, uint32_t n_out, cJSON *j, uint8_t *returned)
{
	const struct prog *p = e->p;
	uint32_t nv = p->n_in + p->n_ops, n_ret = 0;
	cJSON *rets = cJSON_AddArrayToObject(j, "outputs"), *views = cJSON_AddArrayToObject(j, "views");
	for (uint32_t i = 0; i < n_out; i++) {
		int64_t col = 0;
		int32_t g = group_of(e, out[i], &col), r = g >= 0 ? (int32_t)nv + g : out[i];
		const struct ten *t = fs_prog_value(p, out[i]), *gt = t;
		if (!returned[r]) {
			cJSON *shape = g >= 0 ? group_shape(e, (uint32_t)g, &gt) : NULL;
			returned[r] = 1;
			tensor_json(e, rets, r, gt, shape);
			n_ret++;
		}
		if (g >= 0) {
			cJSON *q = cJSON_CreateObject();
			cJSON_AddStringToObject(q, "name", e->name[out[i]]);
			cJSON_AddStringToObject(q, "of", e->name[r]);
			cJSON_AddNumberToObject(q, "col", (double)col);
			cJSON_AddNumberToObject(q, "width", (double)t->shape[t->rank - 1]);
			cJSON_AddItemToArray(views, q);
		}
	}
	return n_ret;
}

/* The buffers between the op's steps: what the products write and the
 * kernel reads, or the kernel writes and later products read. */
static void buffers_json(const struct fs_emit_op *e, const uint8_t *returned, cJSON *j)
{
	const struct prog *p = e->p;
	uint32_t nv = p->n_in + p->n_ops;
	cJSON *bufs = cJSON_AddArrayToObject(j, "buffers");
	for (uint32_t k = 0; e->gemm && k < e->pl.n_calls; k++) {
		const struct ten *t;
		if (e->pl.calls[k].n_members && !returned[nv + k]) {
			cJSON *shape = group_shape(e, k, &t);
			tensor_json(e, bufs, (int32_t)(nv + k), t, shape);
		}
	}
	for (uint32_t v = p->n_in; e->gemm && v < nv; v++)
		if (!p->is_output[v - p->n_in] && ((e->pl.given[v] && !e->pl.pitch[v]) || e->pl.kernel_out[v]))
			tensor_json(e, bufs, (int32_t)v, fs_prog_value(p, (int32_t)v), NULL);
}

cJSON *fs_emit_op_args(const struct fs_emit_op *e, const struct fs_kernel *k)
{
	uint32_t nv = e->p->n_in + e->p->n_ops;
	cJSON *args = cJSON_CreateArray();
	for (uint32_t i = 0; k && i < k->n_params; i++) {
		int64_t col = 0;
		int32_t g = group_of(e, k->value[i], &col);
		cJSON *q = cJSON_CreateObject();
		cJSON_AddStringToObject(q, "tensor", e->name[g >= 0 ? (int32_t)nv + g : k->value[i]]);
		cJSON_AddNumberToObject(q, "offset", (double)col);
		cJSON_AddItemToArray(args, q);
	}
	return args;
}

/* The kernel's arguments, then the products and cuBLASLt's epilogue. */
static void steps_json(const struct fs_emit_op *e, const struct fs_kernel *k, cJSON *j)
{
	uint32_t nv = e->p->n_in + e->p->n_ops;
	cJSON_AddItemToObject(j, "args", fs_emit_op_args(e, k));
	cJSON *prods = cJSON_AddArrayToObject(j, "products");
	for (uint32_t c = 0; e->gemm && c < e->pl.n_calls; c++) {
		const struct fs_gemm_call *call = &e->pl.calls[c];
		cJSON_AddItemToArray(prods, product_json(e, call, call->n_members ? (int32_t)(nv + c) : call->out));
	}
	if (e->gemm && e->pl.absorbs)
		cJSON_AddItemToObject(j, "epilogue", product_json(e, &e->pl.absorbed, e->pl.absorbed.out));
}

int fs_emit_op_json(const struct fs_emit_op *e, const struct fs_kernel *k, cJSON *j, struct fs_emit_sig *s, char *why, size_t n)
{
	const struct prog *p = e->p;
	int32_t in[FS_KERNEL_MAX_PARAMS], out[FS_KERNEL_MAX_PARAMS];
	uint32_t n_in = fs_emit_op_inputs(e, k, in), n_out = fs_emit_op_outputs(e, k, out);
	if (e->gemm && (p->n_in > FS_KERNEL_MAX_PARAMS || n_out == FS_KERNEL_MAX_PARAMS)) {
		snprintf(why, n, "more than %d inputs or outputs", FS_KERNEL_MAX_PARAMS - 1);
		return -1;
	}
	if (!n_out) { /* nothing the op could return (its signature would end "-> typing.Tuple[") */
		snprintf(why, n, "the region writes no output the graph reads");
		return -1;
	}
	for (uint32_t i = 0; i < n_in + n_out; i++) { /* each a tensor of a dtype torch names (its docstring drops "torch.") */
		const char *dt = fs_dtype_name((enum fs_dtype)fs_prog_value(p, i < n_in ? in[i] : out[i - n_in])->dtype);
		if (strncmp(dt, "torch.", 6)) {
			snprintf(why, n, "an %s of the op has no torch dtype (%s)", i < n_in ? "input" : "output", dt);
			return -1;
		}
	}
	if (symbols_json(e, in, n_in, j, why, n))
		return -1;
	inputs_json(e, in, n_in, j, s);
	uint8_t *returned = fs_xcalloc(p->n_in + p->n_ops + FS_GEMM_MAX, 1);
	uint32_t n_ret = outputs_json(e, out, n_out, j, returned);
	buffers_json(e, returned, j);
	cJSON_AddItemToObject(j, "results", names(e, out, n_out));
	fs_text_put(&s->ret, n_ret == 1 ? "torch.Tensor" : "typing.Tuple[");
	for (uint32_t i = 0; n_ret > 1 && i < n_ret; i++)
		fs_text_put(&s->ret, "%storch.Tensor%s", i ? ", " : "", i + 1 == n_ret ? "]" : "");
	steps_json(e, k, j);
	free(returned);
	return 0;
}
