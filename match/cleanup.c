/*
 * cleanup.c: cleanup candidates, reported apart from fusions: no-op ops
 * (full slices, x * 1, x + 0, expand to the same shape, view chains that end
 * at the shape they began with), duplicate nodes (same target, same
 * arguments), dropout at inference (p 0 or train False) and consecutive
 * views that merge into one. Called by mine.c.
 */
#include "mine_int.h"

#include <stdlib.h>
#include <string.h>

static const char *const names[] = {
	"noop_slice", "noop_mul1", "noop_add0", "noop_expand", "noop_reindex", "duplicate", "view_merge", "causal_mask",
	"noop_dropout",
};
_Static_assert(sizeof(names) / sizeof(names[0]) == FS_CLEAN_COUNT, "cleanup names");

const char *fs_cleanup_name(enum fs_cleanup_kind k)
{
	return k < FS_CLEAN_COUNT ? names[k] : "unknown";
}

static void add(struct ctx *c, enum fs_cleanup_kind kind, uint32_t node, uint32_t other)
{
	struct fs_mine *m = c->m;
	FS_GROW(m->cleanups, m->cap_cleanups, m->n_cleanups + 1);
	m->cleanups[m->n_cleanups++] = (struct fs_cleanup){(uint8_t)kind, node, other};
}

static int is_num(const struct fs_arg *a, double v)
{
	return a && ((a->kind == FS_ARG_INT && a->i == (int64_t)v) || (a->kind == FS_ARG_FLOAT && a->f == v));
}

static uint32_t in_shape(const struct fs_graph *g, const struct fs_node *n)
{
	const struct fs_arg *a = fs_mine_arg(g, n, 0);
	return a && a->kind == FS_ARG_NODE ? g->types[g->nodes[a->node].out].shape : UINT32_MAX;
}

/* The value passes through unchanged (the op keeps shape and dtype). */
static int same_type_as_input(const struct fs_graph *g, const struct fs_node *n)
{
	const struct fs_arg *a = fs_mine_arg(g, n, 0);
	if (!a || a->kind != FS_ARG_NODE)
		return 0;
	const struct fs_type *in = &g->types[g->nodes[a->node].out], *out = &g->types[n->out];
	return in->shape == out->shape && in->dtype == out->dtype;
}

static void noops(struct ctx *c, uint32_t i)
{
	const struct fs_graph *g = c->g;
	const struct fs_node *n = &g->nodes[i];
	const struct fs_arg *a2 = fs_mine_arg(g, n, 2), *a3 = fs_mine_arg(g, n, 3), *a1 = fs_mine_arg(g, n, 1);
	if (fs_mine_op_is(c->s, n->op, "slice") && is_num(a2, 0) && a3 && a3->kind == FS_ARG_INT && a3->i == INT64_MAX)
		add(c, FS_CLEAN_NOOP_SLICE, i, i);
	else if (fs_mine_op_is(c->s, n->op, "mul") && n->n_top == 2 && is_num(a1, 1) && same_type_as_input(g, n))
		add(c, FS_CLEAN_NOOP_MUL1, i, i);
	else if (fs_mine_op_is(c->s, n->op, "add") && n->n_top == 2 && is_num(a1, 0) && same_type_as_input(g, n))
		add(c, FS_CLEAN_NOOP_ADD0, i, i);
	else if (fs_mine_op_is(c->s, n->op, "expand") && in_shape(g, n) == g->types[n->out].shape)
		add(c, FS_CLEAN_NOOP_EXPAND, i, i);
	else if (fs_mine_noop_dropout(c->s, g, n))
		add(c, FS_CLEAN_NOOP_DROPOUT, i, i);
}

/* A view whose input is a single-user view: merge them, or drop both when
 * the chain comes back to the shape it started from. */
static void view_chains(struct ctx *c, uint32_t i)
{
	const struct fs_graph *g = c->g;
	const struct fs_node *n = &g->nodes[i];
	const struct fs_arg *a = fs_mine_arg(g, n, 0);
	if (!a || a->kind != FS_ARG_NODE || c->role[a->node] != ROLE_VIEW)
		return;
	const struct fs_node *p = &g->nodes[a->node];
	if (p->n_real_users != 1 || (p->flags & FS_NODE_OUTPUT) || fs_mine_op_is(c->s, p->op, "slice") || fs_mine_op_is(c->s, n->op, "slice"))
		return;
	if (in_shape(g, p) == g->types[n->out].shape)
		add(c, FS_CLEAN_NOOP_REINDEX, i, a->node);
	else if ((fs_mine_op_is(c->s, n->op, "view") || fs_mine_op_is(c->s, n->op, "reshape")) && c->contig[a->node])
		add(c, FS_CLEAN_VIEW_MERGE, i, a->node);
}

/* Same target and identical argument text: the later node repeats the first. */
static void duplicates(struct ctx *c)
{
	const struct fs_graph *g = c->g;
	uint32_t cap = 1;
	while (cap < g->n_nodes * 2)
		cap <<= 1;
	uint32_t *slot = fs_xcalloc(cap, sizeof(uint32_t));
	for (uint32_t i = 0; i < g->n_nodes; i++) {
		const struct fs_node *n = &g->nodes[i];
		if (n->kind != FS_NODE_CALL || c->role[i] == ROLE_NONE ||
		    c->s->ops[n->op].cls == FS_OPC_CREATION)
			continue;
		uint64_t h = fs_hash_bytes(&n->op, sizeof(n->op), n->n_args);
		for (uint32_t a = n->args; a < n->args + n->n_args; a++)
			h = fs_hash_bytes(&g->args[a].text, sizeof(uint32_t), h ^ g->args[a].kind);
		for (uint32_t s = (uint32_t)h & (cap - 1);; s = (s + 1) & (cap - 1)) {
			if (!slot[s]) {
				slot[s] = i + 1;
				break;
			}
			const struct fs_node *o = &g->nodes[slot[s] - 1];
			int same = o->op == n->op && o->n_args == n->n_args;
			for (uint32_t k = 0; same && k < n->n_args; k++)
				same = g->args[o->args + k].kind == g->args[n->args + k].kind &&
				       g->args[o->args + k].text == g->args[n->args + k].text;
			if (same) {
				add(c, FS_CLEAN_DUPLICATE, i, slot[s] - 1);
				break;
			}
		}
	}
	free(slot);
}

void fs_mine_cleanups(struct ctx *c)
{
	for (uint32_t i = 0; i < c->g->n_nodes; i++) {
		if (c->g->nodes[i].kind != FS_NODE_CALL)
			continue;
		noops(c, i);
		if (c->role[i] == ROLE_VIEW)
			view_chains(c, i);
	}
	duplicates(c);
}
