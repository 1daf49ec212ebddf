/*
 * inline.c: one graph for a dump whose root GraphModule calls others of the
 * same file (torch.fx's split_module; AutoDeploy's writer prints every
 * GraphModule of the model as a section of its own). Each call_module node
 * is replaced by its submodule's nodes, the submodule's placeholders read
 * the call's arguments and the getitems of the call its outputs, so chains
 * cut by a module boundary are whole again. Called by discovery; one level
 * of calls is inlined (a submodule's own calls stay opaque).
 */
#include "scan_int.h"

#include <stdlib.h>
#include <string.h>

enum { NONE = UINT32_MAX };

struct inliner {
	const struct fs_scan *s;
	struct fs_graph *out;
	uint32_t module;   /* the module copy_node copies from */
};

static uint32_t copy_node(struct inliner *I, const struct fs_graph *g, uint32_t i, const uint32_t *map)
{
	struct fs_graph *F = I->out;
	const struct fs_node *x = &g->nodes[i];
	FS_GROW(F->nodes, F->cap_nodes, F->n_nodes + 1);
	FS_GROW(F->origin, F->cap_origin, F->n_nodes + 1);
	F->origin[F->n_nodes] = I->module;
	struct fs_node *y = &F->nodes[F->n_nodes];
	*y = *x;
	y->flags = x->flags & FS_NODE_SIDE_EFFECT;
	y->users = y->n_users = y->n_real_users = 0;
	y->out = F->n_types;
	FS_GROW(F->types, F->cap_types, F->n_types + x->n_out);
	memcpy(F->types + F->n_types, g->types + x->out, x->n_out * sizeof(struct fs_type));
	F->n_types += x->n_out;
	y->args = F->n_args;
	FS_GROW(F->args, F->cap_args, F->n_args + x->n_args);
	for (uint32_t a = 0; a < x->n_args; a++) {
		struct fs_arg v = g->args[x->args + a];
		if (v.kind == FS_ARG_NODE)
			v.node = map[v.node];
		F->args[F->n_args++] = v;
	}
	F->n_calls += x->kind == FS_NODE_CALL;
	F->n_placeholders += x->kind == FS_NODE_PLACEHOLDER;
	F->n_externs += x->kind == FS_NODE_EXTERN;
	return F->n_nodes++;
}

/* The module of file f called `name` (not the caller), or NONE. */
static uint32_t module_named(const struct fs_scan *s, const struct fs_dumpfile *f, uint32_t name, uint32_t caller)
{
	for (uint32_t m = f->first_module; m < f->first_module + f->n_modules; m++)
		if (m != caller && s->modules[m].name == name && s->modules[m].graph)
			return m;
	return NONE;
}

/* Whether root node i can be inlined as module `sub`: every top-level
 * argument a node (the submodule's placeholders, in order), and the call
 * read only by getitems of a literal index (or, with one output, as is). */
static int inlinable(const struct fs_graph *g, uint32_t i, const struct fs_graph *sub)
{
	const struct fs_node *x = &g->nodes[i];
	if (x->n_top != sub->n_placeholders || !sub->n_outputs)
		return 0;
	for (uint32_t a = x->args, k = 0; k < x->n_top; a += g->args[a].span, k++)
		if (g->args[a].kind != FS_ARG_NODE)
			return 0;
	return 1;
}

static int getitem_of(const struct fs_scan *s, const struct fs_graph *g, uint32_t i, uint32_t call, uint32_t *k)
{
	const struct fs_node *x = &g->nodes[i];
	if (x->kind != FS_NODE_CALL || strcmp(fs_scan_str(s, s->ops[x->op].name), "getitem") || x->n_args != 2 ||
	    g->args[x->args].kind != FS_ARG_NODE || g->args[x->args].node != call || g->args[x->args + 1].kind != FS_ARG_INT)
		return 0;
	*k = (uint32_t)g->args[x->args + 1].i;
	return 1;
}

/* The submodule's nodes in place of call i; map[i] its one output, or NONE
 * (its getitems then take outs[]). */
static void inline_call(struct inliner *I, const struct fs_graph *g, uint32_t i, uint32_t module,
			uint32_t *map, uint32_t *outs)
{
	const struct fs_graph *sub = I->s->modules[module].graph;
	uint32_t caller = I->module;
	I->module = module;
	const struct fs_node *x = &g->nodes[i];
	uint32_t *sm = fs_xmalloc((sub->n_nodes + 1) * sizeof(uint32_t)), a = x->args;
	for (uint32_t j = 0; j < sub->n_nodes; j++) {
		if (sub->nodes[j].kind == FS_NODE_PLACEHOLDER) {
			sm[j] = map[g->args[a].node];
			a += g->args[a].span;
		} else
			sm[j] = copy_node(I, sub, j, sm);
	}
	for (uint32_t k = 0; k < sub->n_outputs; k++)
		outs[k] = sm[sub->outputs[k]];
	map[i] = sub->n_outputs == 1 && x->n_out == 1 ? outs[0] : NONE;
	I->module = caller;
	free(sm);
}

struct fs_graph *fs_scan_inline(const struct fs_scan *s, uint32_t file, uint32_t *n_inlined)
{
	const struct fs_dumpfile *f = &s->files[file];
	uint32_t root = NONE, root_name = fs_strtab_find(&s->strs, "(root)", 6);
	*n_inlined = 0;
	for (uint32_t m = f->first_module; m < f->first_module + f->n_modules && root == NONE; m++)
		if (s->modules[m].name == root_name && s->modules[m].graph)
			root = m;
	if (root == NONE || f->n_errors)
		return NULL;
	const struct fs_graph *g = s->modules[root].graph;
	struct inliner I = {s, fs_xcalloc(1, sizeof(struct fs_graph)), root};
	uint32_t *map = fs_xmalloc((g->n_nodes + 1) * sizeof(uint32_t)), *outs_at = fs_xmalloc((g->n_nodes + 1) * sizeof(uint32_t));
	uint32_t *n_outs_of = fs_xmalloc((g->n_nodes + 1) * sizeof(uint32_t)), *outs = NULL, n_outs = 0, cap_outs = 0;
	for (uint32_t i = 0; i < g->n_nodes; i++) {
		const struct fs_node *x = &g->nodes[i];
		uint32_t sub = x->kind == FS_NODE_CALL ? module_named(s, f, s->ops[x->op].name, root) : NONE, k;
		outs_at[i] = NONE;
		if (sub != NONE && inlinable(g, i, s->modules[sub].graph)) {
			const struct fs_graph *sg = s->modules[sub].graph;
			FS_GROW(outs, cap_outs, n_outs + sg->n_outputs);
			outs_at[i] = n_outs;
			n_outs_of[i] = sg->n_outputs;
			inline_call(&I, g, i, sub, map, outs + n_outs);
			n_outs += sg->n_outputs;
			(*n_inlined)++;
		} else if (x->kind == FS_NODE_CALL && x->n_args && g->args[x->args].kind == FS_ARG_NODE &&
			   outs_at[g->args[x->args].node] != NONE && getitem_of(s, g, i, g->args[x->args].node, &k)) {
			uint32_t c = g->args[x->args].node;
			map[i] = k < n_outs_of[c] ? outs[outs_at[c] + k] : NONE;
		} else
			map[i] = copy_node(&I, g, i, map);
	}
	struct fs_graph *F = I.out;
	int whole = *n_inlined > 0;
	for (uint32_t i = 0; i < F->n_args && whole; i++) /* a call read other than by getitem: keep the modules */
		whole = F->args[i].kind != FS_ARG_NODE || F->args[i].node != NONE;
	F->outputs = fs_xmalloc((g->n_outputs + 1) * sizeof(uint32_t));
	for (uint32_t k = 0; k < g->n_outputs && whole; k++) {
		uint32_t o = map[g->outputs[k]];
		if (!(whole = o != NONE))
			break;
		F->outputs[F->n_outputs++] = o;
		F->nodes[o].flags |= FS_NODE_OUTPUT;
	}
	free(map);
	free(outs_at);
	free(n_outs_of);
	free(outs);
	if (!whole) {
		fs_graph_free(F);
		*n_inlined = 0;
		return NULL;
	}
	F->output_line = g->output_line;
	F->hash = g->hash;
	fs_graph_finish(F);
	return F;
}
