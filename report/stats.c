/*
 * stats.c: per-graph statistics for summaries: op counts by target, op-class
 * counts, ops the table does not know. Computed once per distinct graph
 * (identical graphs share their original's statistics).
 */
#include "fusescan/report.h"

#include <stdlib.h>
#include <string.h>

static int op_count_cmp(const void *a, const void *b)
{
	const struct fs_op_count *x = a, *y = b;
	if (x->count != y->count)
		return x->count > y->count ? -1 : 1;
	return strcmp(x->target, y->target);
}

/* Counts call n if its arguments do not fit its op's schema; says the first. */
static void off_schema(const struct fs_scan *s, const struct fs_graph *g, const struct fs_node *n,
		       struct fs_graph_stats *st)
{
	char why[200];
	if (fs_op_args_fit(s, g, n, why, sizeof(why)))
		return;
	if (!st->n_off_schema++)
		snprintf(st->off_schema, sizeof(st->off_schema), "%%%s (%s): %s", fs_scan_str(s, n->name),
			 fs_scan_str(s, s->ops[n->op].target), why);
}

void fs_graph_stats_compute(const struct fs_scan *s, const struct fs_graph *g,
			    struct fs_graph_stats *st)
{
	memset(st, 0, sizeof(*st));
	uint32_t *count = fs_xcalloc(s->n_ops, sizeof(*count));
	for (uint32_t i = 0; i < g->n_nodes; i++) {
		const struct fs_node *n = &g->nodes[i];
		if (n->kind != FS_NODE_CALL)
			continue;
		const struct fs_op *op = fs_scan_op(s, n->op);
		st->class_counts[op->cls]++;
		st->n_unknown += !op->known;
		off_schema(s, g, n, st);
		if (!count[n->op]++)
			st->n_ops++;
	}
	st->ops = fs_xmalloc((st->n_ops ? st->n_ops : 1) * sizeof(*st->ops));
	uint32_t k = 0;
	for (uint32_t op = 0; op < s->n_ops; op++)
		if (count[op])
			st->ops[k++] = (struct fs_op_count){op, count[op],
							    fs_scan_str(s, s->ops[op].target)};
	qsort(st->ops, st->n_ops, sizeof(*st->ops), op_count_cmp);
	free(count);
}

void fs_graph_stats_release(struct fs_graph_stats *st)
{
	free(st->ops);
	memset(st, 0, sizeof(*st));
}

void fs_scan_report_build(struct fs_scan_report *r, const struct fs_scan *s)
{
	r->scan = s;
	r->n_distinct = 0;
	r->stats = fs_xcalloc(s->n_modules, sizeof(*r->stats));
	for (uint32_t i = 0; i < s->n_modules; i++) {
		const struct fs_module *m = &s->modules[i];
		if (m->same_as != i)
			continue;
		fs_graph_stats_compute(s, m->graph, &r->stats[i]);
		r->n_distinct++;
	}
}

void fs_scan_report_release(struct fs_scan_report *r)
{
	for (uint32_t i = 0; i < r->scan->n_modules; i++)
		if (r->scan->modules[i].same_as == i)
			fs_graph_stats_release(&r->stats[i]);
	free(r->stats);
	r->stats = NULL;
}
