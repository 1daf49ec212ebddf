/*
 * plan.c: what `fusescan --apply` (and `tune`) will rewrite: each name the
 * user gave resolved to the sites of one graph. A name is, in this order,
 *   1. a candidate id of this graph (`add_rmsnorm-407262a5`);
 *   2. a candidate name (`add_rmsnorm`) that exactly one candidate of this
 *      graph has (said on stderr); two or more is an error listing their ids;
 *   3. a pattern name of the library (every match of every variant);
 *      `pattern:NAME` names the pattern whatever the candidates are called.
 * A name with no site in the graph (or none containing --site) is an error:
 * nothing runs on an empty plan. Called by cmd_fuse.c.
 */
#define _POSIX_C_SOURCE 200809L
#include "plan.h"
#include "fusescan/site.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

static uint32_t *own(struct fs_approval *a, uint32_t *nodes)
{
	a->nodes = fs_xrealloc(a->nodes, (a->n_owned + 1) * sizeof(*a->nodes));
	return a->nodes[a->n_owned++] = nodes;
}

static void add_site(struct fs_approval *a, const uint32_t *nodes, uint32_t n)
{
	a->sites = fs_xrealloc(a->sites, (a->n_sites + 1) * sizeof(*a->sites));
	uint32_t *copy = own(a, fs_xmalloc((n ? n : 1) * sizeof(uint32_t)));
	memcpy(copy, nodes, n * sizeof(uint32_t));
	a->sites[a->n_sites++] = (struct fs_site){copy, n};
}

/* Each site takes in the nodes feeding it that `takes` accepts and that
 * nothing else reads (side effects aside), recursively. Returns whether a
 * site grew. */
static int grow_sites(const struct fs_scan *s, const struct fs_graph *g, struct fs_approval *a,
		      int (*takes)(const struct fs_scan *, const struct fs_graph *, uint32_t))
{
	uint8_t *in = fs_xcalloc(g->n_nodes + 1, 1);
	int grew = 0;
	for (uint32_t i = 0; i < a->n_sites; i++) {
		uint32_t n = a->sites[i].n_nodes, cap = n;
		uint32_t *v = fs_xmalloc((n ? n : 1) * sizeof(uint32_t));
		memcpy(v, a->sites[i].nodes, n * sizeof(uint32_t));
		for (uint32_t k = 0; k < n; k++)
			in[v[k]] = 1;
		for (uint32_t k = 0; k < n; k++) { /* the list grows as nodes join */
			const struct fs_node *x = &g->nodes[v[k]];
			for (uint32_t t = x->args; t < x->args + x->n_args; t++) {
				uint32_t y = g->args[t].node;
				if (g->args[t].kind != FS_ARG_NODE || in[y] || !takes(s, g, y))
					continue;
				int only = 1;
				for (uint32_t u = 0; u < g->nodes[y].n_users && only; u++) {
					uint32_t user = g->users[g->nodes[y].users + u];
					only = in[user] || (g->nodes[user].flags & FS_NODE_SIDE_EFFECT);
				}
				if (only) {
					FS_GROW(v, cap, n + 1);
					in[y] = 1, v[n++] = y;
				}
			}
		}
		for (uint32_t k = 0; k < n; k++)
			in[v[k]] = 0;
		if (n > a->sites[i].n_nodes) {
			a->sites[i] = (struct fs_site){own(a, v), n};
			grew = 1;
		} else
			free(v);
	}
	free(in);
	return grew;
}

/* Matrix products (--with-gemm): the product and its epilogue one region. */
static int is_gemm(const struct fs_scan *s, const struct fs_graph *g, uint32_t y)
{
	return g->nodes[y].kind == FS_NODE_CALL && fs_op_class_of(s, g->nodes[y].op) == FS_OPC_GEMM;
}

/* The fused node's printed target: a kernel's OpOverload ("ns.op" gets
 * ".default"; a pattern's replace is printed as written), or, for a Python
 * wrapper ("python.name"), the form AutoDeploy's dumps print for the function
 * its transform inserts, with an address fusescan cannot know; else a
 * fusescan.<name> op. */
static void fused_target(char *buf, size_t n, const char *name, const char *kernel, int overload)
{
	if (kernel && !strncmp(kernel, "python.", 7)) {
		snprintf(buf, n, "<function %s at 0x0>", kernel + 7);
		return;
	}
	if (kernel) {
		snprintf(buf, n, "%s%s", kernel, overload ? ".default" : "");
		return;
	}
	size_t k = (size_t)snprintf(buf, n, "fusescan.");
	for (const char *p = name; *p && k + 9 < n; p++)
		buf[k++] = (*p == ':' || *p == '-' || *p == '.') ? '_' : *p;
	snprintf(buf + k, n - k, ".default");
}

/* Whether the entry's pick is one of its kernels (not an op that absorbs the
 * chain with other inputs, nor a transform): only then is it the target. */
static int is_kernel(const struct fs_catalog_entry *e, uint32_t key)
{
	for (uint32_t i = 0; i < e->n_kernels; i++)
		if (e->kernels[i] == key)
			return 1;
	return 0;
}

static const struct fs_catalog_entry *entry_named(const struct fs_catalog *cat, const char *name)
{
	for (uint32_t i = 0; cat && name && i < cat->n; i++)
		if (!strcmp(cat->e[i].name, name))
			return &cat->e[i];
	return NULL;
}

/* Candidate k of the discovery report: every instance is a site. */
static void from_candidate(const struct fs_discovery *d, const struct fs_candidate *k, struct fs_approval *a)
{
	const struct fs_mine *m = d->a[0].mine;
	const struct fs_catalog_entry *e = k->entry >= 0 ? &d->cat.e[k->entry] : NULL;
	uint32_t wrapper = 0, kernel = e ? fs_catalog_pick(&d->cat, e, &wrapper) : 0;
	const char *ks = kernel ? fs_scan_str(d->scan, kernel) : NULL, *ws = wrapper ? fs_scan_str(d->scan, wrapper) : NULL;
	int is_op = ks && is_kernel(e, kernel);
	snprintf(a->name, sizeof(a->name), "%s", k->name);
	snprintf(a->id, sizeof(a->id), "%s", k->id);
	a->rec = (int)k->rec;
	a->gemm_epilogue = k->kind == FS_KIND_GEMM_EPILOGUE;
	if (is_op)
		snprintf(a->kernel, sizeof(a->kernel), "%s%s%s", ks, ws ? " via " : "", ws ? ws + 7 : "");
	snprintf(a->recommendation, sizeof(a->recommendation), "%s%s%s%s", fs_rec_name(k->rec), a->kernel[0] ? " (" : "",
		 a->kernel, a->kernel[0] ? ")" : "");
	fused_target(a->target, sizeof(a->target), k->name, is_op ? (ws ? ws : ks) : NULL, 1);
	a->literals = e ? e->literals : 0;
	a->norm_first = e ? e->norm_first : 0;
	for (uint32_t j = 0; j < k->n_instances; j++) {
		const struct fs_region *r = &m->regions[k->instances[j]];
		add_site(a, r->nodes, r->n_nodes);
	}
}

/* A pattern name: every match of every variant. */
static void from_pattern(const struct fs_scan *s, const struct fs_graph *g, const struct fs_patlib *lib,
			 const struct fs_catalog *cat, const char *name, struct fs_approval *a)
{
	uint32_t *nodes = NULL, cap = 0;
	for (uint32_t vi = 0; vi < lib->n; vi++) {
		const struct fs_pattern *p = &lib->v[vi];
		if (strcmp(p->name, name))
			continue;
		snprintf(a->name, sizeof(a->name), "%s", name);
		snprintf(a->id, sizeof(a->id), "%s", name);
		a->rec = -1;
		fused_target(a->target, sizeof(a->target), name, p->replace, 0);
		const struct fs_catalog_entry *e = entry_named(cat, p->catalog);
		a->literals = e ? e->literals : 0;
		a->norm_first = e ? e->norm_first : 0;
		struct fs_matches m;
		fs_match_pattern(p, s, g, &m);
		for (uint32_t i = 0; i < m.n; i++) {
			uint32_t n = 0;
			for (uint32_t pn = 0; pn < p->n_nodes; pn++)
				if (p->nodes[pn].kind != FS_PN_INPUT && m.v[i].bind[pn] != UINT32_MAX) {
					FS_GROW(nodes, cap, n + 1);
					nodes[n++] = m.v[i].bind[pn];
				}
			add_site(a, nodes, n);
		}
		fs_matches_release(&m);
	}
	free(nodes);
}

/* Whether a node of site `a` (marked in `in_a`, its first node `lo`) is an
 * ancestor of a node of site b: dependent sites cannot share a launch. */
static int depends(const struct fs_graph *g, const uint8_t *in_a, uint32_t lo, const struct fs_site *b, uint8_t *seen,
		   uint32_t *stack)
{
	uint32_t n = 0;
	int hit = 0;
	for (uint32_t k = 0; k < b->n_nodes; k++)
		stack[n++] = b->nodes[k], seen[b->nodes[k]] = 1;
	for (uint32_t top = 0; top < n && !hit; top++) {
		const struct fs_node *x = &g->nodes[stack[top]];
		for (uint32_t k = x->args; k < x->args + x->n_args && !hit; k++) {
			uint32_t y = g->args[k].node;
			if (g->args[k].kind != FS_ARG_NODE || seen[y] || y < lo) /* file order is topological */
				continue;
			hit = in_a[y];
			seen[y] = 1, stack[n++] = y;
		}
	}
	for (uint32_t k = 0; k < n; k++)
		seen[stack[k]] = 0;
	return hit;
}

static uint32_t first_node(const struct fs_site *x)
{
	uint32_t lo = UINT32_MAX;
	for (uint32_t k = 0; k < x->n_nodes; k++)
		lo = x->nodes[k] < lo ? x->nodes[k] : lo;
	return lo;
}

/* merge_siblings' scratch, one slot a graph node; every mark is cleared after each pair */
struct sibling_marks {
	uint8_t *in_a, *in_b, *read_a, *seen;
	uint32_t *stack;
};

/* Whether y reads an activation (a call's typed output, outside y) that x reads too */
static int share_activation(const struct fs_graph *g, struct sibling_marks *m, const struct fs_site *x,
			    const struct fs_site *y)
{
	for (uint32_t k = 0; k < x->n_nodes; k++) {
		const struct fs_node *q = &g->nodes[x->nodes[k]];
		for (uint32_t t = q->args; t < q->args + q->n_args; t++)
			if (g->args[t].kind == FS_ARG_NODE && !m->in_a[g->args[t].node])
				m->read_a[g->args[t].node] = 1;
	}
	for (uint32_t k = 0; k < y->n_nodes; k++) {
		const struct fs_node *q = &g->nodes[y->nodes[k]];
		for (uint32_t t = q->args; t < q->args + q->n_args; t++) {
			uint32_t v = g->args[t].node;
			if (g->args[t].kind != FS_ARG_NODE || m->in_b[v])
				continue;
			if (m->read_a[v] && g->nodes[v].kind == FS_NODE_CALL && g->nodes[v].n_out &&
			    fs_dtype_size((enum fs_dtype)g->types[g->nodes[v].out].dtype) > 0)
				return 1;
		}
	}
	return 0;
}

/* Whether sites x and y (the same size) are siblings: disjoint, sharing an activation,
 * neither reading the other. */
static int siblings(const struct fs_graph *g, struct sibling_marks *m, const struct fs_site *x, const struct fs_site *y)
{
	int overlap = 0;
	for (uint32_t k = 0; k < x->n_nodes; k++)
		m->in_a[x->nodes[k]] = 1;
	for (uint32_t k = 0; k < y->n_nodes; k++)
		m->in_b[y->nodes[k]] = 1, overlap |= m->in_a[y->nodes[k]];
	int merge = share_activation(g, m, x, y) && !overlap &&
		    !depends(g, m->in_a, first_node(x), y, m->seen, m->stack) &&
		    !depends(g, m->in_b, first_node(y), x, m->seen, m->stack);
	for (uint32_t k = 0; k < x->n_nodes; k++) {
		const struct fs_node *q = &g->nodes[x->nodes[k]];
		m->in_a[x->nodes[k]] = 0;
		for (uint32_t t = q->args; t < q->args + q->n_args; t++)
			if (g->args[t].kind == FS_ARG_NODE)
				m->read_a[g->args[t].node] = 0;
	}
	for (uint32_t k = 0; k < y->n_nodes; k++)
		m->in_b[y->nodes[k]] = 0;
	return merge;
}

/* Sibling sites become one site: a site and the next one (instances are in
 * file order), the same size, disjoint, one activation tensor read by both,
 * neither reading the other, as RoPE's q and k reading cos and sin. One
 * launch, as AutoDeploy's RoPE op takes q and k together; each site is
 * compared with its successor only, so the pass stays linear. */
static void merge_siblings(const struct fs_graph *g, struct fs_approval *a)
{
	struct sibling_marks m = {fs_xcalloc(g->n_nodes + 1, 1), fs_xcalloc(g->n_nodes + 1, 1),
				  fs_xcalloc(g->n_nodes + 1, 1), fs_xcalloc(g->n_nodes + 1, 1),
				  fs_xmalloc((g->n_nodes + 1) * sizeof(uint32_t))};
	uint32_t w = 0;
	for (uint32_t i = 0; i < a->n_sites; i++) {
		struct fs_site *x = &a->sites[i], *y = i + 1 < a->n_sites ? &a->sites[i + 1] : NULL;
		if (y && y->n_nodes == x->n_nodes && siblings(g, &m, x, y)) {
			uint32_t *u = own(a, fs_xmalloc((x->n_nodes + y->n_nodes) * sizeof(uint32_t)));
			memcpy(u, x->nodes, x->n_nodes * sizeof(uint32_t));
			memcpy(u + x->n_nodes, y->nodes, y->n_nodes * sizeof(uint32_t));
			a->sites[w++] = (struct fs_site){u, x->n_nodes + y->n_nodes};
			i++; /* y is in it */
			continue;
		}
		a->sites[w++] = *x;
	}
	a->n_sites = w;
	free(m.in_a);
	free(m.in_b);
	free(m.read_a);
	free(m.seen);
	free(m.stack);
}

/* Only the sites that contain node `site`. */
static void keep_site(const struct fs_scan *s, const struct fs_graph *g, struct fs_approval *a, const char *site)
{
	uint32_t w = 0;
	for (uint32_t i = 0; i < a->n_sites; i++) {
		int hit = 0;
		for (uint32_t k = 0; k < a->sites[i].n_nodes && !hit; k++)
			hit = !strcmp(fs_scan_str(s, g->nodes[a->sites[i].nodes[k]].name), site);
		if (hit)
			a->sites[w++] = a->sites[i];
	}
	a->n_sites = w;
}

/* "; did you mean 'X'?" over this graph's candidate ids and names and the
 * library's patterns (pattern: given, the patterns alone), or "". */
static void guess(const struct fs_mine *m, const struct fs_patlib *lib, const char *name, int patterns_only, char *hint,
		  size_t n)
{
	const char **v = fs_xmalloc((2 * m->n_cands + lib->n + 1) * sizeof(char *));
	uint32_t k = 0;
	for (uint32_t i = 0; !patterns_only && i < m->n_cands; i++)
		v[k++] = m->cands[i].id, v[k++] = m->cands[i].name;
	for (uint32_t i = 0; i < lib->n; i++)
		v[k++] = lib->v[i].name;
	const char *near = fs_did_you_mean(name, strlen(name), v, k);
	hint[0] = '\0';
	if (near)
		snprintf(hint, n, "; did you mean '%s%.100s'?", patterns_only ? "pattern:" : "", near);
	free(v);
}

/* Resolves one name (see the top of the file); 0, or -1 after saying why. */
static int resolve(const struct fs_discovery *d, const struct fs_patlib *lib, const char *name, struct fs_approval *a)
{
	const struct fs_mine *m = d->a[0].mine;
	const struct fs_candidate *named = NULL;
	uint32_t n_named = 0;
	char hint[160];
	if (!strncmp(name, "pattern:", 8)) { /* the pattern, whatever the candidates are called */
		if (fs_patlib_find(lib, name + 8) >= 0) {
			from_pattern(d->scan, d->scan->modules[d->a[0].module].graph, lib, &d->cat, name + 8, a);
			return 0;
		}
		guess(m, lib, name + 8, 1, hint, sizeof(hint));
		fprintf(stderr, "fusescan fuse: '%s': the library has no pattern '%s'%s (patterns/README.md lists them)\n", name,
			name + 8, hint);
		return -1;
	}
	for (uint32_t i = 0; i < m->n_cands; i++) {
		if (!strcmp(m->cands[i].id, name)) {
			from_candidate(d, &m->cands[i], a);
			return 0;
		}
		if (!strcmp(m->cands[i].name, name) && n_named++ == 0)
			named = &m->cands[i];
	}
	if (n_named == 1) {
		fprintf(stderr, "fusescan fuse: '%s' is candidate %s of this graph\n", name, named->id);
		from_candidate(d, named, a);
		return 0;
	}
	if (n_named > 1) {
		fprintf(stderr, "fusescan fuse: '%s' names %u candidates of this graph; give one id:", name, n_named);
		for (uint32_t i = 0; i < m->n_cands; i++)
			if (!strcmp(m->cands[i].name, name))
				fprintf(stderr, " %s", m->cands[i].id);
		fputc('\n', stderr);
		return -1;
	}
	if (fs_patlib_find(lib, name) >= 0) {
		from_pattern(d->scan, d->scan->modules[d->a[0].module].graph, lib, &d->cat, name, a);
		return 0;
	}
	guess(m, lib, name, 0, hint, sizeof(hint));
	fprintf(stderr, "fusescan fuse: '%s' is neither a candidate of this graph nor a pattern%s "
			"(ids and names are in 'fusescan discover', e.g. %s)\n", name, hint,
		m->n_cands ? m->cands[0].id : "none here");
	return -1;
}

/* Whether the plan's last approval is one made before (a candidate named
 * by its name and by its id): then it is dropped, applied once. */
static int applied_before(struct fs_plan *pl, const char *given)
{
	struct fs_approval *a = &pl->v[pl->n - 1];
	for (uint32_t i = 0; i + 1 < pl->n; i++)
		if (!strcmp(pl->v[i].id, a->id)) {
			fprintf(stderr, "fusescan fuse: '%s' is %s again: applied once\n", given, a->id);
			for (uint32_t k = 0; k < a->n_owned; k++)
				free(a->nodes[k]);
			free(a->nodes);
			free(a->sites);
			memset(a, 0, sizeof(*a));
			pl->n--;
			return 1;
		}
	return 0;
}

int fs_plan_make(const struct fs_discovery *d, const struct fs_patlib *lib, const struct fs_strlist *ids,
		 const char *site, int with_gemm, struct fs_plan *pl)
{
	const struct fs_scan *s = d->scan;
	const struct fs_dumpfile *f = &s->files[s->modules[d->a[0].module].file];
	const struct fs_graph *g = s->modules[d->a[0].module].graph;
	pl->v = fs_xcalloc(ids->n + 1, sizeof(*pl->v));
	for (uint32_t i = 0; i < ids->n; i++) {
		struct fs_approval *a = &pl->v[pl->n++];
		if (resolve(d, lib, ids->v[i], a) < 0)
			return -1;
		if (applied_before(pl, ids->v[i]))
			continue;
		/* views become index math in the fused kernel, which then reads what
		 * they view: RoPE's site reads the projection's contiguous output
		 * instead of its transpose and two strided slices of it */
		grow_sites(s, g, a, fs_site_is_view);
		if (with_gemm && a->gemm_epilogue && grow_sites(s, g, a, is_gemm))
			grow_sites(s, g, a, fs_site_is_view); /* the products' own operand views (a transposed weight) */
		merge_siblings(g, a);
		if (site)
			keep_site(s, g, a, site);
		if (!a->n_sites) {
			fprintf(stderr, "fusescan fuse: '%s': no site%s%s in %s: nothing to apply\n", ids->v[i],
				site ? " contains %" : "", site ? site : "", f->path);
			return -1;
		}
		for (uint32_t k = 0; k < a->n_sites; k++)
			if (a->sites[k].n_nodes > FS_MAX_SITE_NODES) {
				fprintf(stderr, "fusescan fuse: '%s': a site of %u nodes, more than the %d one fused kernel is made of "
						"(docs/limits.md)\n", ids->v[i], a->sites[k].n_nodes, FS_MAX_SITE_NODES);
				return -1;
			}
	}
	return 0;
}

int fs_plan_read_approvals(const char *path, struct fs_strlist *ids, char **text_out)
{
	size_t len;
	char *text = fs_read_input(path, FS_IN_APPROVALS, &len);
	if (!text) {
		fprintf(stderr, "fusescan: cannot read approvals %s: %s\n", path, fs_input_error(errno, FS_IN_APPROVALS));
		return -1;
	}
	for (char *p = strtok(text, "\n"); p; p = strtok(NULL, "\n")) {
		while (*p == ' ' || *p == '\t')
			p++;
		char *e = p + strcspn(p, " \t\r#");
		if (p == e || *p == '#')
			continue;
		*e = '\0';
		FS_GROW(ids->v, ids->cap, ids->n + 1);
		ids->v[ids->n++] = p;
	}
	*text_out = text;
	return 0;
}

void fs_plan_release(struct fs_plan *pl)
{
	for (uint32_t i = 0; i < pl->n; i++) {
		for (uint32_t k = 0; k < pl->v[i].n_owned; k++)
			free(pl->v[i].nodes[k]);
		free(pl->v[i].nodes);
		free(pl->v[i].sites);
	}
	free(pl->v);
	memset(pl, 0, sizeof(*pl));
}
