/*
 * mlirsrc.c: what each kernel AutoDeploy's mlir_elementwise_fusion inserted
 * (auto_deploy.mlir_fused_<hash>) took the place of, read from the run
 * (see fusescan/discover.h): the dump before the one it first appears in
 * still holds the chain, ending at the node of the kernel's name, back to the
 * values the kernel still reads. Called by discover.c for each analysis.
 */
#include "fusescan/discover.h"

#include <stdlib.h>
#include <string.h>

/* The node of op `op` in any module of file f (named `name` where one is), or -1; *g its graph. */
static int64_t find_call(const struct fs_scan *s, const struct fs_dumpfile *f, uint32_t op, uint32_t name,
			 const struct fs_graph **g)
{
	int64_t any = -1;
	for (uint32_t m = 0; m < f->n_modules; m++) {
		const struct fs_graph *x = s->modules[f->first_module + m].graph;
		for (uint32_t i = 0; x && i < x->n_nodes; i++)
			if (x->nodes[i].op == op && (x->nodes[i].name == name || any < 0)) {
				any = i, *g = x;
				if (x->nodes[i].name == name)
					return any;
			}
	}
	return any;
}

/* The node named `name` in any module of file f, or -1; *g its graph. */
static int64_t find_name(const struct fs_scan *s, const struct fs_dumpfile *f, uint32_t name, const struct fs_graph **g)
{
	for (uint32_t m = 0; m < f->n_modules; m++) {
		const struct fs_graph *x = s->modules[f->first_module + m].graph;
		for (uint32_t i = 0; x && i < x->n_nodes; i++)
			if (x->nodes[i].name == name && x->nodes[i].kind == FS_NODE_CALL) {
				*g = x;
				return i;
			}
	}
	return -1;
}

static uint32_t node_inputs(const struct fs_graph *g, uint32_t v)
{
	uint32_t n = 0;
	for (uint32_t a = 0; a < g->nodes[v].n_args; a++)
		n += g->args[g->nodes[v].args + a].kind == FS_ARG_NODE;
	return n;
}

/* Marks in `in` (of was's nodes) the chain ending at `end` in graph was whose
 * names the graph now has not: what the kernel took the place of. */
static void mark_chain(const struct fs_graph *was, uint32_t end, const uint8_t *kept, uint8_t *in)
{
	uint32_t *stack = fs_xmalloc((was->n_nodes + 1) * sizeof(uint32_t)), n = 0;
	stack[n++] = end;
	in[end] = 1;
	while (n) {
		const struct fs_node *x = &was->nodes[stack[--n]];
		for (uint32_t a = 0; a < x->n_args; a++) {
			const struct fs_arg *arg = &was->args[x->args + a];
			if (arg->kind != FS_ARG_NODE || in[arg->node] || was->nodes[arg->node].kind != FS_NODE_CALL ||
			    kept[was->nodes[arg->node].name])
				continue;
			in[arg->node] = 1;
			stack[n++] = arg->node;
		}
	}
	free(stack);
}

/* k's chain in the dump before k->file: the nodes it replaced and their distinct ops. */
static void trace_before(const struct fs_scan *s, struct fs_mlir_kernel *k, const struct fs_graph *now, uint32_t name)
{
	const struct fs_graph *was = NULL;
	int64_t end = find_name(s, &s->files[k->before], name, &was);
	if (end < 0)
		return;
	uint8_t *kept = fs_xcalloc(s->strs.n + 1, 1), *in = fs_xcalloc(was->n_nodes + 1, 1);
	for (uint32_t i = 0; i < now->n_nodes; i++)
		kept[now->nodes[i].name] = 1;
	mark_chain(was, (uint32_t)end, kept, in);
	for (uint32_t i = 0; i < was->n_nodes; i++) {
		if (!in[i])
			continue;
		k->n_replaced++;
		uint32_t j = 0, op = was->nodes[i].op;
		while (j < k->n_ops && k->ops[j] != op)
			j++;
		if (j == k->n_ops && k->n_ops < FS_MLIR_OPS)
			k->ops[k->n_ops++] = op;
	}
	free(kept);
	free(in);
}

/* Where in run `run` kernel k first appears, and what it replaced there. */
static void trace(const struct fs_scan *s, uint32_t run, struct fs_mlir_kernel *k, uint32_t name)
{
	const struct fs_run *r = &s->runs[run];
	for (uint32_t i = 0; i < r->n_files; i++) {
		const struct fs_graph *g = NULL;
		int64_t v = find_call(s, &s->files[r->first_file + i], k->op, name, &g);
		if (v < 0)
			continue;
		k->file = r->first_file + i;
		if (i) {
			k->before = k->file - 1;
			trace_before(s, k, g, g->nodes[v].name);
		}
		return;
	}
}

void fs_mlir_trace(const struct fs_scan *s, struct fs_analysis *a)
{
	static const char family[] = "auto_deploy.mlir_fused";
	const struct fs_graph *g = a->mine->g;
	uint32_t key = fs_strtab_find(&s->strs, family, sizeof(family) - 1);
	if (key == UINT32_MAX)
		return;
	for (uint32_t i = 0; i < g->n_nodes; i++) {
		const struct fs_node *x = &g->nodes[i];
		if (x->kind != FS_NODE_CALL || s->ops[x->op].key != key)
			continue;
		uint32_t j = 0;
		while (j < a->n_mlir && a->mlir[j].op != x->op)
			j++;
		if (j == a->n_mlir) {
			if (j == FS_MLIR_KERNELS)
				continue;
			if (!a->mlir)
				a->mlir = fs_xcalloc(FS_MLIR_KERNELS, sizeof(*a->mlir));
			struct fs_mlir_kernel *k = &a->mlir[a->n_mlir++];
			*k = (struct fs_mlir_kernel){.op = x->op, .n_inputs = node_inputs(g, i), .file = UINT32_MAX, .before = UINT32_MAX};
			if (a->run != UINT32_MAX)
				trace(s, a->run, k, x->name);
		}
		a->mlir[j].count++;
	}
}
