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

/* One kernel after a GEMM (a non-gated MLP's activation): fused into the
 * GEMM's epilogue, the GEMM's output is neither written nor read again, and
 * the kernel's launch goes. Longer chains are costed as chains. */
static void epilogue_cost(struct ctx *c, struct fs_region *r, int *known)
{
	if (r->kind != FS_KIND_GEMM_EPILOGUE || r->n_kernels != 1)
		return;
	for (uint32_t k = 0; k < r->n_inputs; k++) {
		uint32_t s = fs_mine_source(c, r->inputs[k]);
		if (c->s->ops[c->g->nodes[s].op].cls == FS_OPC_GEMM) {
			r->bytes_saved = fs_sat_add(r->bytes_saved, fs_sat_mul(node_bytes(c, s, known), 2));
			r->launches_saved = 1;
			return;
		}
	}
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
	epilogue_cost(c, r, &known);
	r->cost_known = (uint8_t)known;
}
