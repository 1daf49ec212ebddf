/*
 * matchrun.c: runs the pattern library over a scan (see matchrun.h): groups
 * variants by name, matches each distinct graph once, resolves overlaps
 * between patterns (larger pattern first, then file order), infers the
 * layer count the gates use and marks the modules that run (the root and
 * what it calls).
 */
#include "fusescan/matchrun.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

extern const struct fs_embedded fs_builtin_patterns[]; /* patterns/ (*.pat), embedded */
extern const size_t fs_builtin_patterns_count;

void fs_patlib_load_builtin(struct fs_patlib *lib, struct fs_diags *d)
{
	for (size_t i = 0; i < fs_builtin_patterns_count; i++) {
		char path[256];
		snprintf(path, sizeof(path), "patterns/%s (built in)", fs_builtin_patterns[i].name);
		fs_patlib_parse(lib, path, fs_builtin_patterns[i].data, fs_builtin_patterns[i].len, d);
	}
}

static int32_t group_of(const struct fs_match_run *r, const char *name)
{
	for (uint32_t i = 0; i < r->n_groups; i++)
		if (!strcmp(r->groups[i].name, name))
			return (int32_t)i;
	return -1;
}

int32_t fs_match_group(const struct fs_match_run *r, const char *name)
{
	return group_of(r, name);
}

static void add_to_group(struct fs_match_run *r, const struct fs_pattern *p, uint32_t vi)
{
	int32_t g = group_of(r, p->name);
	if (g < 0) {
		r->groups = fs_xrealloc(r->groups, (r->n_groups + 1) * sizeof(*r->groups));
		g = (int32_t)r->n_groups++;
		memset(&r->groups[g], 0, sizeof(r->groups[g]));
		r->groups[g].name = p->name;
	}
	struct fs_pgroup *G = &r->groups[g];
	G->variants = fs_xrealloc(G->variants, (G->n_variants + 1) * sizeof(uint32_t));
	G->variants[G->n_variants++] = vi;
	if (p->n_ops > G->size)
		G->size = p->n_ops;
}

/* layers_N_ / layers.N. in weight names, else one attention op per layer */
static uint32_t infer_layers(const struct fs_scan *s, const struct fs_graph *g)
{
	int64_t max = -1;
	uint32_t attn = 0;
	for (uint32_t i = 0; i < g->n_nodes; i++) {
		const struct fs_node *n = &g->nodes[i];
		if (n->kind == FS_NODE_CALL && s->ops[n->op].cls == FS_OPC_ATTENTION)
			attn++;
		if (n->kind != FS_NODE_EXTERN)
			continue;
		const char *name = fs_scan_str(s, n->name), *p = strstr(name, "layers");
		if (p && (p[6] == '_' || p[6] == '.') && p[7] >= '0' && p[7] <= '9') {
			int64_t v = strtoll(p + 7, NULL, 10);
			if (v > max && v < 100000)
				max = v;
		}
	}
	return max >= 0 ? (uint32_t)max + 1 : attn;
}

struct ranked {
	uint32_t size, root, group, variant, match;
};

static int ranked_cmp(const void *a, const void *b)
{
	const struct ranked *x = a, *y = b;
	if (x->size != y->size)
		return x->size > y->size ? -1 : 1;
	if (x->root != y->root)
		return x->root < y->root ? -1 : 1;
	return x->group < y->group ? -1 : x->group > y->group;
}

/* Claims matches pattern by pattern, larger first, then in file order; a
 * match touching a node already claimed is an overlap, resolved in favour of
 * the claim. */
static void resolve_overlaps(struct fs_match_run *r, struct fs_mgraph *G)
{
	uint32_t n = 0;
	for (uint32_t gi = 0; gi < r->n_groups; gi++)
		for (uint32_t v = 0; v < r->groups[gi].n_variants; v++)
			n += G->m[r->groups[gi].variants[v]].n;
	struct ranked *rk = fs_xmalloc((n + 1) * sizeof(*rk));
	uint32_t k = 0;
	for (uint32_t gi = 0; gi < r->n_groups; gi++)
		for (uint32_t v = 0; v < r->groups[gi].n_variants; v++) {
			uint32_t vi = r->groups[gi].variants[v];
			for (uint32_t i = 0; i < G->m[vi].n; i++)
				rk[k++] = (struct ranked){r->lib->v[vi].n_ops, G->m[vi].v[i].root, gi, vi, i};
		}
	if (n)
		qsort(rk, n, sizeof(*rk), ranked_cmp);
	uint32_t *owner = fs_xmalloc((G->g->n_nodes + 1) * sizeof(uint32_t));
	memset(owner, 0xff, (G->g->n_nodes + 1) * sizeof(uint32_t));
	for (uint32_t i = 0; i < n; i++) {
		const struct fs_pattern *p = &r->lib->v[rk[i].variant];
		const struct fs_match *m = &G->m[rk[i].variant].v[rk[i].match];
		uint32_t clash = UINT32_MAX;
		for (uint32_t pn = 0; pn < p->n_nodes && clash == UINT32_MAX; pn++)
			if (p->nodes[pn].kind != FS_PN_INPUT && m->bind[pn] != UINT32_MAX && owner[m->bind[pn]] != UINT32_MAX)
				clash = owner[m->bind[pn]];
		if (clash != UINT32_MAX) {
			FS_GROW(G->overlaps, G->cap_overlaps, G->n_overlaps + 1);
			G->overlaps[G->n_overlaps++] = (struct fs_overlap){rk[i].group, m->root, rk[clash].group, rk[clash].root};
			continue;
		}
		G->kept[rk[i].group]++;
		for (uint32_t pn = 0; pn < p->n_nodes; pn++)
			if (p->nodes[pn].kind != FS_PN_INPUT && m->bind[pn] != UINT32_MAX)
				owner[m->bind[pn]] = i;
	}
	free(owner);
	free(rk);
}

static void match_graph(struct fs_match_run *r, struct fs_mgraph *G)
{
	G->m = fs_xcalloc(r->lib->n + 1, sizeof(*G->m));
	G->matches = fs_xcalloc(r->n_groups + 1, sizeof(uint32_t));
	G->kept = fs_xcalloc(r->n_groups + 1, sizeof(uint32_t));
	for (uint32_t gi = 0; gi < r->n_groups; gi++) {
		for (uint32_t v = 0; v < r->groups[gi].n_variants; v++)
			fs_match_pattern(&r->lib->v[r->groups[gi].variants[v]], r->s, G->g, &G->m[r->groups[gi].variants[v]]);
		fs_matches_merge_variants(r->lib, r->groups[gi].variants, r->groups[gi].n_variants, G->g->n_nodes, G->m);
		for (uint32_t v = 0; v < r->groups[gi].n_variants; v++)
			G->matches[gi] += G->m[r->groups[gi].variants[v]].n;
	}
	resolve_overlaps(r, G);
	G->layers = infer_layers(r->s, G->g);
}

/* ---- what runs: the root GraphModule and the modules it calls ---------------------- */

struct modname {
	uint32_t name, module;
};

static int modname_cmp(const void *a, const void *b)
{
	const struct modname *x = a, *y = b;
	return x->name < y->name ? -1 : x->name > y->name;
}

/* The module of the file named `name` (a sym), or UINT32_MAX. */
static uint32_t module_called(const struct modname *v, uint32_t n, uint32_t name)
{
	struct modname key = {name, 0}, *hit = bsearch(&key, v, n, sizeof(*v), modname_cmp);
	return hit ? hit->module : UINT32_MAX;
}

/* Marks what module mi calls: a call_module node's target, or a submodule
 * a higher-order op takes as an argument (printed as a reference to it). */
static void mark_calls(const struct fs_scan *s, uint32_t mi, const struct modname *v, uint32_t n, uint8_t *runs,
		       uint32_t *queue, uint32_t *nq)
{
	const struct fs_graph *g = s->modules[mi].graph;
	for (uint32_t i = 0; g && i < g->n_nodes; i++) {
		const struct fs_node *x = &g->nodes[i];
		uint32_t name = x->kind == FS_NODE_CALL ? s->ops[x->op].target : x->kind == FS_NODE_EXTERN ? x->name : UINT32_MAX;
		uint32_t m = name == UINT32_MAX ? UINT32_MAX : module_called(v, n, name);
		if (m != UINT32_MAX && !runs[m])
			runs[m] = 1, queue[(*nq)++] = m;
	}
}

/* A file's modules that run: from its root, what it calls, transitively; a
 * file without a (root) module runs all of them (one implicit root). */
static void file_runs(const struct fs_scan *s, const struct fs_dumpfile *f, uint32_t root_name, uint8_t *runs)
{
	uint32_t n = f->n_modules, nq = 0, root = UINT32_MAX;
	struct modname *v = fs_xmalloc((n + 1) * sizeof(*v));
	uint32_t *queue = fs_xmalloc((n + 1) * sizeof(uint32_t));
	for (uint32_t k = 0; k < n; k++) {
		v[k] = (struct modname){s->modules[f->first_module + k].name, f->first_module + k};
		if (v[k].name == root_name && root == UINT32_MAX)
			root = v[k].module;
	}
	qsort(v, n, sizeof(*v), modname_cmp);
	for (uint32_t k = 0; k < n; k++)
		runs[f->first_module + k] = root == UINT32_MAX;
	if (root != UINT32_MAX)
		runs[root] = 1, queue[nq++] = root;
	for (uint32_t q = 0; q < nq; q++)
		mark_calls(s, queue[q], v, n, runs, queue, &nq);
	free(queue);
	free(v);
}

struct fs_match_run *fs_match_run(const struct fs_scan *s, const struct fs_patlib *lib,
				  const char *const *names, uint32_t n_names, struct fs_diags *d)
{
	struct fs_match_run *r = fs_xcalloc(1, sizeof(*r));
	r->s = s;
	r->lib = lib;
	r->explain = -1;
	r->log_run = -1;
	fs_adlog_init(&r->log);
	for (uint32_t i = 0; i < n_names; i++)
		if (fs_patlib_find(lib, names[i]) < 0) {
			fs_diag_add(d, FS_ERROR, names[i], 0, 0, NULL, 0, "unknown pattern '%s'", names[i]);
			fs_match_run_free(r);
			return NULL;
		}
	for (uint32_t vi = 0; vi < lib->n; vi++) {
		int wanted = !n_names;
		for (uint32_t i = 0; i < n_names && !wanted; i++)
			wanted = !strcmp(lib->v[vi].name, names[i]);
		if (wanted)
			add_to_group(r, &lib->v[vi], vi);
	}
	r->graph_of_module = fs_xcalloc(s->n_modules + 1, sizeof(uint32_t));
	r->graphs = fs_xcalloc(s->n_modules + 1, sizeof(*r->graphs));
	for (uint32_t mi = 0; mi < s->n_modules; mi++) {
		const struct fs_graph *g = s->modules[mi].graph;
		uint32_t k = 0;
		while (k < r->n_graphs && r->graphs[k].g != g)
			k++;
		if (k == r->n_graphs) {
			r->graphs[k].g = g;
			r->graphs[k].module = mi;
			match_graph(r, &r->graphs[r->n_graphs++]);
		}
		r->graph_of_module[mi] = k;
	}
	r->runs = fs_xcalloc(s->n_modules + 1, 1);
	uint32_t root_name = fs_strtab_find(&s->strs, "(root)", 6);
	for (uint32_t f = 0; f < s->n_files; f++)
		file_runs(s, &s->files[f], root_name, r->runs);
	r->logs = fs_xcalloc(s->n_runs + 1, sizeof(*r->logs));
	return r;
}

uint32_t fs_match_count(const struct fs_match_run *r, uint32_t module, uint32_t group)
{
	return r->graphs[r->graph_of_module[module]].matches[group];
}

void fs_match_run_free(struct fs_match_run *r)
{
	if (!r)
		return;
	for (uint32_t k = 0; k < r->n_graphs; k++) {
		struct fs_mgraph *G = &r->graphs[k];
		for (uint32_t vi = 0; vi < r->lib->n; vi++)
			fs_matches_release(&G->m[vi]);
		free(G->m);
		free(G->matches);
		free(G->kept);
		free(G->overlaps);
	}
	for (uint32_t i = 0; i < r->n_groups; i++)
		free(r->groups[i].variants);
	for (uint32_t i = 0; i < r->gates.n; i++) {
		free(r->gates.v[i].check);
		free(r->gates.v[i].message);
	}
	free(r->gates.v);
	free(r->groups);
	free(r->graphs);
	free(r->graph_of_module);
	free(r->runs);
	for (uint32_t i = 0; r->logs && i < r->s->n_runs; i++) {
		fs_adlog_release(&r->logs[i].own);
		free(r->logs[i].entry_of_file);
		free(r->logs[i].file_of_entry);
	}
	free(r->logs);
	fs_adlog_release(&r->log);
	free(r);
}
