/*
 * gemm.c: a region's matrix products as cuBLASLt calls, the fused plan's
 * concatenated products and cuBLASLt epilogue, and the float64 reference's
 * source (see gemm.h). gpu.c runs what this plans.
 */
#include "gemm.h"

#include "codegen.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Why product op takes no plan, in d at its line: -1. */
static int say(const struct prog *p, const struct op *op, struct fs_diags *d, const char *what)
{
	const struct fs_node *x = &p->g->nodes[op->node];
	fs_diag_add(d, FS_ERROR, fs_prog_path(p->s, p->g), x->line, 1, NULL, 0, "matrix product %%%s: %s", fs_scan_str(p->s, x->name), what);
	return -1;
}

int fs_gemm_any(const struct prog *p)
{
	for (uint32_t i = 0; i < p->n_ops; i++)
		if (p->ops[i].sem->kind == GEMM)
			return 1;
	return 0;
}

static int64_t norm_dim(int64_t d, uint8_t r)
{
	return d < 0 ? d + r : d;
}

/* a transpose of the last two dims, whatever the rank */
static int swaps_last_two(const struct op *op)
{
	uint8_t r = op->out.rank;
	if (r < 2)
		return 0;
	if (op->n_ints == 0)
		return r == 2;
	if (op->n_ints == 2) {
		int64_t a = norm_dim(op->ints[0], r), b = norm_dim(op->ints[1], r);
		return (a == r - 2 && b == r - 1) || (a == r - 1 && b == r - 2);
	}
	if (op->n_ints != r)
		return 0;
	for (uint8_t k = 0; k < r; k++)
		if (norm_dim(op->ints[k], r) != (k < r - 2 ? k : k == r - 2 ? r - 1 : r - 2))
			return 0;
	return 1;
}

/* where resolve stops: at any buffer eager has (the unfused run), at a
 * region input (the fused plan's products before its kernel), or at an input
 * or a value the fused kernel computes (after it) */
enum stop { AT_BUFFER, AT_INPUT, AT_KERNEL };

/* The buffer a product's operand v lies in: through reshapes and identities,
 * and at most one transpose of the last two dims below every reshape (a
 * reshape of a transpose is no dense layout). 0, or -1 where there is none. */
static int resolve(const struct prog *p, int32_t v, enum stop at, int32_t *base, int *transposed)
{
	int viewed = 0;
	*transposed = 0;
	while (v >= (int32_t)p->n_in && (at == AT_BUFFER ? !fs_codegen_buffered(p, v) : 1)) {
		const struct op *op = &p->ops[v - p->n_in];
		uint8_t k = op->sem->kind;
		if (at == AT_KERNEL && k != GEMM && k != VIEW && k != ID && k != PERMUTE)
			break; /* computed by the fused kernel */
		if (k == VIEW || (k == ID && op->n_src))
			viewed |= k == VIEW;
		else if (k == PERMUTE && !viewed && !*transposed && swaps_last_two(op))
			*transposed = 1;
		else
			return -1;
		v = op->src[0];
	}
	*base = v;
	return 0;
}

static int64_t batch_stride(int64_t elems, int64_t matrix, int64_t batch, int *ok)
{
	if (elems == matrix * batch)
		return batch > 1 ? matrix : 0;
	*ok &= elems == matrix;
	return 0; /* one matrix for every batch */
}

/* The bias of product op: a vector over N (the bias epilogue) or a matrix
 * like D (C, beta 1). */
static int bias_of(const struct prog *p, const struct op *op, int fused, struct fs_gemm_call *c, struct fs_diags *d)
{
	int32_t base;
	int tr;
	const struct ten *t = fs_prog_value(p, op->src[2]);
	if (resolve(p, op->src[2], fused ? AT_INPUT : AT_BUFFER, &base, &tr) || tr)
		return say(p, op, d, "a bias that is no buffer's layout");
	if (t->dtype != c->mm.dtype)
		return say(p, op, d, "a bias of another dtype than the product");
	if (t->n == c->mm.N)
		c->mm.bias = 1, c->bias = base;
	else if (t->n == c->mm.M * c->mm.N && c->mm.batch == 1)
		c->mm.add_c = 1, c->c = base;
	else
		return say(p, op, d, "a bias that is neither a vector over N nor a matrix like the output");
	return 0;
}

/* Product i of the program as one cuBLASLt call writing its own output. */
static int call_of(const struct prog *p, uint32_t i, int fused, struct fs_gemm_call *c, struct fs_diags *d)
{
	const struct op *op = &p->ops[i];
	const struct ten *out = &op->out, *ta = fs_prog_value(p, op->src[0]), *tb = fs_prog_value(p, op->src[1]);
	int at, bt, ok = 1;
	memset(c, 0, sizeof(*c));
	c->a = c->b = c->bias = c->c = -1;
	c->out = (int32_t)(p->n_in + i), c->op = (int32_t)i;
	enum stop stop = fused ? AT_INPUT : AT_BUFFER;
	if (fused && resolve(p, op->src[0], AT_INPUT, &c->a, &at)) /* after the fused kernel, reading what it writes */
		c->post = 1, stop = AT_KERNEL;
	if (resolve(p, op->src[0], stop, &c->a, &at) || resolve(p, op->src[1], fused ? AT_INPUT : AT_BUFFER, &c->b, &bt))
		return say(p, op, d, fused ? "an operand that is no region input's or fused kernel output's layout (a product reading a "
					   "product, or a weight computed in the region)"
					 : "an operand that is no buffer's layout");
	if (at)
		return say(p, op, d, "a transposed first operand");
	if (ta->dtype != out->dtype || tb->dtype != out->dtype)
		return say(p, op, d, "operands of another dtype than the product");
	struct fs_lt_mm *m = &c->mm;
	m->dtype = out->dtype;
	m->N = out->rank ? out->shape[out->rank - 1] : 0;
	m->K = ta->rank ? ta->shape[ta->rank - 1] : 0;
	if (op->ints[0]) /* linear: x [.., K], w [N, K] */
		m->M = m->N ? out->n / m->N : 0, m->batch = 1, m->b_nk = (uint8_t)!bt;
	else
		m->M = out->shape[out->rank - 2], m->batch = m->M && m->N ? out->n / (m->M * m->N) : 0, m->b_nk = (uint8_t)bt;
	if (m->M < 1 || m->N < 1 || m->K < 1 || m->batch < 1)
		return say(p, op, d, "a product of no elements");
	m->stride_a = batch_stride(ta->n, m->M * m->K, m->batch, &ok);
	m->stride_b = batch_stride(tb->n, m->K * m->N, m->batch, &ok);
	m->stride_d = m->M * m->N, m->ldd = m->N;
	if (!ok)
		return say(p, op, d, "operands broadcast over some batch dims only");
	return op->n_src > 2 ? bias_of(p, op, fused, c, d) : 0;
}

/* A product that can join a concatenated group: a linear's form, its
 * columns whole 16-byte vectors (the fused kernel reads its slice of the
 * group's output with vector loads). */
static int groupable(const struct fs_gemm_call *c)
{
	return !c->post && c->mm.b_nk && c->mm.batch == 1 && !c->mm.add_c &&
	       c->mm.N % (16 / fs_dtype_size((enum fs_dtype)c->mm.dtype)) == 0;
}

static int same_group(const struct fs_gemm_call *x, const struct fs_gemm_call *y)
{
	return x->a == y->a && x->mm.K == y->mm.K && x->mm.M == y->mm.M && x->mm.dtype == y->mm.dtype && x->mm.bias == y->mm.bias;
}

/* The fused plan's products: those reading one input concatenated, each
 * member's output a slice of the group's, rows `pitch` apart. */
static void group(const struct prog *p, struct fs_gemm_plan *pl)
{
	uint8_t taken[FS_GEMM_MAX] = {0};
	pl->pitch = fs_xcalloc(p->n_in + p->n_ops + 1, sizeof(int64_t));
	for (uint32_t i = 0; i < pl->n; i++) {
		if (taken[i])
			continue;
		struct fs_gemm_call *c = &pl->calls[pl->n_calls++];
		*c = pl->ref[i];
		for (uint32_t j = i; j < pl->n && c->n_members < FS_GEMM_GROUP && groupable(&pl->ref[i]); j++)
			if (!taken[j] && groupable(&pl->ref[j]) && same_group(&pl->ref[i], &pl->ref[j])) {
				taken[j] = 1;
				c->member[c->n_members] = pl->ref[j].out, c->member_b[c->n_members] = pl->ref[j].b;
				c->member_bias[c->n_members] = pl->ref[j].bias, c->col[c->n_members++] = j == i ? 0 : c->mm.N;
				if (j != i)
					c->mm.N += pl->ref[j].mm.N;
			}
		if (c->n_members < 2) {
			c->n_members = 0;
			continue;
		}
		c->mm.ldd = c->mm.N, c->mm.stride_d = c->mm.M * c->mm.N;
		c->b = c->bias = c->out = -1; /* the concatenated weight and bias: gpu.c builds them */
		for (uint32_t j = 0; j < c->n_members; j++)
			pl->pitch[c->member[j]] = c->mm.N;
	}
}

/* No op of the region reads value v. */
static int feeds_nothing(const struct prog *p, int32_t v)
{
	for (uint32_t j = 0; j < p->n_ops; j++)
		for (uint32_t s = 0; s < p->ops[j].n_src; s++)
			if (p->ops[j].src[s] == v && !p->ops[j].elided)
				return 0;
	return 1;
}

static int computes(const struct op *op)
{
	uint8_t k = op->sem->kind;
	return !op->elided && k != GEMM && k != VIEW && k != ID && k != PERMUTE && k != EXPAND;
}

/* The second variant: a single product whose region is its epilogue, one op
 * cuBLASLt applies (relu, gelu-tanh, a residual add as C). */
static void absorb(const struct prog *p, struct fs_gemm_plan *pl)
{
	const struct fs_gemm_call *g = &pl->ref[0];
	int32_t u = -1;
	for (uint32_t i = 0; i < p->n_ops; i++)
		if (computes(&p->ops[i])) {
			if (u >= 0)
				return;
			u = (int32_t)i;
		}
	if (pl->n != 1 || u < 0 || p->is_output[g->op] || !p->is_output[u] || p->ops[u].out.dtype != g->mm.dtype)
		return;
	for (uint32_t i = 0; i < p->n_ops; i++)
		if (p->is_output[i] && (int32_t)i != u && (int32_t)i != g->op)
			return;
	const struct op *op = &p->ops[u];
	struct fs_gemm_call c = *g;
	c.out = (int32_t)(p->n_in + (uint32_t)u);
	int reads[2] = {0, 0}; /* which of u's operands is the product */
	for (uint32_t a = 0; a < op->n_args && a < 2; a++)
		reads[a] = op->args[a].ten >= 0 && op->src[op->args[a].ten] == g->out;
	if (op->n_args == 1 && reads[0] && op->sem->id == SEM_relu)
		c.mm.relu = 1;
	else if (op->n_args == 1 && reads[0] && op->sem->id == SEM_gelu && p->gelu_tanh)
		c.mm.gelu = 1;
	else if (op->n_args == 2 && reads[0] != reads[1] && op->sem->id == SEM_add && !c.mm.add_c) {
		const struct arg *o = &op->args[reads[0] ? 1 : 0];
		int32_t r = o->ten >= 0 ? op->src[o->ten] : -1, base;
		int tr;
		if (r < 0 || fs_prog_value(p, r)->n != op->out.n || fs_prog_value(p, r)->dtype != c.mm.dtype || resolve(p, r, AT_INPUT, &base, &tr) || tr)
			return;
		c.mm.add_c = 1, c.c = base;
	} else
		return;
	pl->absorbs = 1, pl->absorbed = c;
	snprintf(pl->epilogue, sizeof(pl->epilogue), "%s%s", c.mm.bias ? "bias + " : "",
		 c.mm.relu ? "relu" : c.mm.gelu ? "gelu (tanh)" : "residual add (C, beta 1)");
}

int fs_gemm_plan(const struct prog *p, struct fs_gemm_plan *pl, struct fs_diags *d)
{
	memset(pl, 0, sizeof(*pl));
	for (uint32_t i = 0; i < p->n_ops; i++) {
		if (p->ops[i].sem->kind != GEMM)
			continue;
		if (pl->n == FS_GEMM_MAX) {
			fs_diag_add(d, FS_ERROR, fs_prog_path(p->s, p->g), p->g->nodes[p->ops[i].node].line, 1, NULL, 0,
				    "more matrix products than the GPU plan takes (16)");
			return -1;
		}
		if (call_of(p, i, 0, &pl->unfused[pl->n], d) || call_of(p, i, 1, &pl->ref[pl->n], d))
			return -1;
		pl->n++;
	}
	pl->given = fs_xcalloc(p->n_in + p->n_ops + 1, 1);
	pl->kernel_out = fs_xcalloc(p->n_in + p->n_ops + 1, 1);
	for (uint32_t i = 0; i < pl->n; i++) {
		const struct fs_gemm_call *c = &pl->ref[i];
		pl->given[c->out] = 1;
		if (!c->post)
			continue;
		if (!p->is_output[c->op] || !feeds_nothing(p, c->out))
			return say(p, &p->ops[c->op], d, "it reads the fused kernel's output and feeds the region (two kernels around it)");
		pl->kernel_out[c->a] = 1;
	}
	group(p, pl);
	absorb(p, pl);
	return 0;
}

void fs_gemm_plan_release(struct fs_gemm_plan *pl)
{
	free(pl->given);
	free(pl->pitch);
	free(pl->kernel_out);
	pl->given = pl->kernel_out = NULL, pl->pitch = NULL;
}

int fs_gemm_kernel_prog(const struct prog *p, const struct fs_gemm_plan *pl, struct prog *q)
{
	int kernel = 0;
	*q = *p;
	q->given = pl->given, q->pitch = pl->pitch;
	q->is_output = fs_xcalloc(p->n_ops + 1, 1);
	for (uint32_t i = 0; i < p->n_ops; i++) {
		q->is_output[i] = p->is_output[i] || pl->kernel_out[p->n_in + i];
		kernel |= q->is_output[i] && !pl->given[p->n_in + i];
	}
	return kernel;
}

char *fs_gemm_ref_source(const struct prog *p, const struct fs_gemm_call *c, uint8_t x)
{
	char defines[1024];
	uint8_t ta = c->post ? FS_DT_F64 : fs_prog_value(p, c->a)->dtype, tb = fs_prog_value(p, c->b)->dtype; /* post: the reference's double */
	uint8_t tbias = c->bias >= 0 ? fs_prog_value(p, c->bias)->dtype : c->c >= 0 ? fs_prog_value(p, c->c)->dtype : FS_DT_F32;
	snprintf(defines, sizeof(defines),
		 "#define FS_TA %s\n#define FS_LDA ld_%s\n#define FS_TB %s\n#define FS_LDB ld_%s\n#define FS_TBIAS %s\n#define FS_LDBIAS "
		 "ld_%s\n#define FS_TX %s\n#define FS_CMPX cmp_%s\n",
		 fs_dt_ctype(ta), fs_dt_suffix(ta), fs_dt_ctype(tb), fs_dt_suffix(tb), fs_dt_ctype(tbias), fs_dt_suffix(tbias), fs_dt_ctype(x), fs_dt_suffix(x));
	return fs_codegen_f64_source(defines, "gemm_ref.cuh");
}
