/*
 * render.c: Graphviz pictures (see fusescan/render.h). Nodes are created in
 * file order so the DOT text is deterministic. A site is a cluster with its
 * nodes filled; fused custom ops are drawn in blue, inputs and weights as
 * ellipses. A whole graph is folded: the layer of a node is the layer of the
 * `layers_N_` (`h_N_`, ...) weights it (or an input chain) reads; layer 0 is drawn, layers
 * 1..N-1 become one block marked xN, and everything after the last layer is
 * drawn again. Used by `fusescan render` and `fusescan --apply`.
 */
#include "fusescan/render.h"

#include <errno.h>
#include <graphviz/cgraph.h>
#include <graphviz/gvc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { HIDDEN = 0, SHOWN = 1, FOLD = UINT32_MAX - 1 };

static void set(void *obj, const char *k, const char *v)
{
	agsafeset(obj, (char *)k, (char *)v, (char *)"");
}

/* ---- which nodes -------------------------------------------------------------------- */

/* The k-hop neighbourhood of the focus, through producers and users. */
static void neighbourhood(const struct fs_graph *g, const struct fs_render_opts *o, uint8_t *shown)
{
	uint32_t *dist = fs_xmalloc((g->n_nodes + 1) * sizeof(uint32_t)), *q = fs_xmalloc((g->n_nodes + 1) * sizeof(uint32_t));
	uint32_t nq = 0;
	memset(dist, 0xff, (g->n_nodes + 1) * sizeof(uint32_t));
	for (uint32_t i = 0; i < o->n_focus; i++)
		if (o->focus[i] < g->n_nodes && dist[o->focus[i]] == UINT32_MAX) {
			dist[o->focus[i]] = 0;
			q[nq++] = o->focus[i];
		}
	for (uint32_t h = 0; h < nq; h++) {
		uint32_t v = q[h];
		shown[v] = SHOWN;
		if (dist[v] >= o->hops)
			continue;
		const struct fs_node *x = &g->nodes[v];
		for (uint32_t a = x->args; a < x->args + x->n_args; a++)
			if (g->args[a].kind == FS_ARG_NODE && dist[g->args[a].node] == UINT32_MAX) {
				dist[g->args[a].node] = dist[v] + 1;
				q[nq++] = g->args[a].node;
			}
		for (uint32_t u = 0; u < x->n_users; u++) {
			uint32_t y = g->users[x->users + u];
			if (dist[y] == UINT32_MAX) {
				dist[y] = dist[v] + 1;
				q[nq++] = y;
			}
		}
	}
	free(dist);
	free(q);
}

/* The layer index in a weight's name: `<list>_N_` where <list> is a module
 * list as Hugging Face names them (Llama `model_layers_N`, GPT-2 / Falcon
 * `transformer_h_N`, BERT `encoder_layer_N`, T5 / MPT `block(s)_N`); -1 if
 * none. Separators are `_` or `.`. */
static int32_t weight_layer(const struct fs_scan *s, const struct fs_node *n)
{
	static const char *const lists[] = {"layers", "layer", "h", "blocks", "block"};
	if (n->kind != FS_NODE_EXTERN)
		return -1;
	const char *name = fs_scan_str(s, n->name);
	for (const char *p = name; *p; p++) {
		if (p != name && p[-1] != '_' && p[-1] != '.')
			continue;
		for (size_t k = 0; k < sizeof(lists) / sizeof(lists[0]); k++) {
			size_t len = strlen(lists[k]);
			const char *d = p + len;
			if (strncmp(p, lists[k], len) || (*d != '_' && *d != '.') || d[1] < '0' || d[1] > '9')
				continue;
			char *end;
			long v = strtol(d + 1, &end, 10);
			if ((*end == '_' || *end == '.') && v < INT32_MAX)
				return (int32_t)v;
		}
	}
	return -1;
}

/* Folds layers 1..N-1; returns N (0: no layers found, nothing folded). */
static uint32_t fold_layers(const struct fs_scan *s, const struct fs_graph *g, uint8_t *shown)
{
	int32_t *layer = fs_xmalloc((g->n_nodes + 1) * sizeof(int32_t)), max = -1;
	uint32_t last_weighted = 0;
	for (uint32_t i = 0; i < g->n_nodes; i++) {
		const struct fs_node *x = &g->nodes[i];
		layer[i] = weight_layer(s, x);
		for (uint32_t a = x->args; a < x->args + x->n_args; a++)
			if (g->args[a].kind == FS_ARG_NODE && layer[g->args[a].node] > layer[i])
				layer[i] = layer[g->args[a].node];
		for (uint32_t a = x->args; a < x->args + x->n_args; a++)
			if (g->args[a].kind == FS_ARG_NODE && weight_layer(s, &g->nodes[g->args[a].node]) >= 0 && i > last_weighted)
				last_weighted = i; /* the last node that reads a layer's weights */
		if (layer[i] > max)
			max = layer[i];
	}
	for (uint32_t i = 0; i < g->n_nodes; i++) /* after the last layer: drawn, like layer 0 */
		shown[i] = layer[i] <= 0 || i > last_weighted ? SHOWN : HIDDEN;
	for (uint32_t i = g->n_nodes; i-- > 0;) { /* helpers only folded layers read go with them */
		const struct fs_node *x = &g->nodes[i];
		int all_hidden = x->n_users > 0 && !(x->flags & FS_NODE_OUTPUT) && layer[i] < 0;
		for (uint32_t u = 0; u < x->n_users && all_hidden; u++)
			all_hidden = shown[g->users[x->users + u]] == HIDDEN;
		if (all_hidden)
			shown[i] = HIDDEN;
	}
	free(layer);
	return max > 0 ? (uint32_t)max + 1 : 0;
}

/* ---- drawing --------------------------------------------------------------------------- */

static void label(const struct fs_scan *s, const struct fs_graph *g, uint32_t v, char *buf, size_t n)
{
	const struct fs_node *x = &g->nodes[v];
	const char *op = x->kind == FS_NODE_CALL ? fs_scan_str(s, s->ops[x->op].target)
		       : x->kind == FS_NODE_PLACEHOLDER ? "input" : "weight / constant";
	char shape[160] = "";
	size_t k = 0;
	for (uint16_t o = 0; o < x->n_out && k < sizeof(shape); o++) {
		const struct fs_type *t = &g->types[x->out + o];
		k += (size_t)snprintf(shape + k, sizeof(shape) - k, "%s%s %s", o ? ", " : "",
				      fs_scan_str(s, s->types.shapes[t->shape].text), fs_dtype_name((enum fs_dtype)t->dtype));
	}
	snprintf(buf, n, "%%%s\\n%.60s\\n%s", fs_scan_str(s, x->name), op, shape);
}

static Agnode_t *draw_node(Agraph_t *G, Agraph_t *sub, const struct fs_scan *s, const struct fs_graph *g,
			   uint32_t v, int focus)
{
	char lab[512];
	Agnode_t *n = agnode(G, (char *)fs_scan_str(s, g->nodes[v].name), 1);
	if (sub)
		agsubnode(sub, n, 1);
	label(s, g, v, lab, sizeof(lab));
	set(n, "label", lab);
	const struct fs_node *x = &g->nodes[v];
	if (x->kind != FS_NODE_CALL)
		set(n, "shape", "ellipse"), set(n, "color", "gray50");
	if (focus)
		set(n, "style", "filled"), set(n, "fillcolor", "#ffd54f");
	else if (x->kind == FS_NODE_CALL && s->ops[x->op].cls == FS_OPC_FUSED)
		set(n, "style", "filled"), set(n, "fillcolor", "#b3e5fc");
	return n;
}

/* The graph and its defaults: top to bottom, boxes, Helvetica */
static Agraph_t *open_graph(const struct fs_render_opts *o, uint32_t n_shown)
{
	Agraph_t *G = agopen((char *)"fusescan", Agstrictdirected, NULL); /* one edge a pair */
	agattr(G, AGRAPH, (char *)"rankdir", (char *)"TB");
	if (n_shown > FS_RENDER_BOUNDED) { /* dot's ranking and mincross grow fast: bound them */
		agattr(G, AGRAPH, (char *)"nslimit", (char *)"1");
		agattr(G, AGRAPH, (char *)"nslimit1", (char *)"1");
		agattr(G, AGRAPH, (char *)"mclimit", (char *)"0.1");
	}
	agattr(G, AGRAPH, (char *)"fontname", (char *)"Helvetica");
	agattr(G, AGNODE, (char *)"shape", (char *)"box");
	agattr(G, AGNODE, (char *)"fontname", (char *)"Helvetica");
	agattr(G, AGNODE, (char *)"fontsize", (char *)"10");
	if (o->title)
		set(G, "label", o->title), set(G, "labelloc", "t");
	return G;
}

/* The cluster of site k (0-based), made at its first node */
static Agraph_t *site_cluster(Agraph_t *G, uint32_t k)
{
	char cname[32], clab[48];
	snprintf(cname, sizeof(cname), "cluster_site_%u", k);
	snprintf(clab, sizeof(clab), "site %u", k + 1);
	Agraph_t *sub = agsubg(G, cname, 1);
	set(sub, "label", clab), set(sub, "style", "rounded"), set(sub, "color", "#f57c00");
	return sub;
}

/* The shown nodes in file order, focus nodes in their site's cluster; returns the
 * Graphviz node of each graph node (NULL: not drawn), for the edges. */
static Agnode_t **draw_nodes(Agraph_t *G, const struct fs_scan *s, const struct fs_graph *g,
			     const struct fs_render_opts *o, const uint8_t *shown)
{
	uint32_t *site = fs_xmalloc((g->n_nodes + 1) * sizeof(uint32_t));
	memset(site, 0xff, (g->n_nodes + 1) * sizeof(uint32_t));
	for (uint32_t i = 0; i < o->n_focus; i++)
		if (o->focus[i] < g->n_nodes)
			site[o->focus[i]] = o->group ? o->group[i] : 0;
	Agnode_t **nodes = fs_xcalloc(g->n_nodes + 1, sizeof(Agnode_t *));
	for (uint32_t v = 0; v < g->n_nodes; v++) {
		if (shown[v] != SHOWN)
			continue;
		Agraph_t *sub = site[v] != UINT32_MAX ? site_cluster(G, site[v]) : NULL;
		nodes[v] = draw_node(G, sub, s, g, v, site[v] != UINT32_MAX);
	}
	free(site);
	return nodes;
}

/* The one block that stands for layers 1..layers-1 */
static Agnode_t *draw_fold(Agraph_t *G, uint32_t layers)
{
	char lab[96];
	Agnode_t *fold = agnode(G, (char *)"folded_layers", 1);
	snprintf(lab, sizeof(lab), "layers 1..%u\\nas layer 0\\nx%u", layers - 1, layers - 1);
	set(fold, "label", lab), set(fold, "shape", "box3d"), set(fold, "style", "filled");
	set(fold, "fillcolor", "#e0e0e0");
	return fold;
}

/* Edges, producer -> user; a hidden op of a folded layer is drawn as the fold */
static void draw_edges(Agraph_t *G, const struct fs_graph *g, Agnode_t *const *nodes, Agnode_t *fold)
{
	for (uint32_t v = 0; v < g->n_nodes; v++) {
		const struct fs_node *x = &g->nodes[v];
		Agnode_t *to = nodes[v] ? nodes[v] : (fold && x->kind == FS_NODE_CALL ? fold : NULL);
		if (!to)
			continue;
		for (uint32_t a = x->args; a < x->args + x->n_args; a++) {
			if (g->args[a].kind != FS_ARG_NODE)
				continue;
			uint32_t p = g->args[a].node;
			Agnode_t *from = nodes[p] ? nodes[p] : (fold && g->nodes[p].kind == FS_NODE_CALL ? fold : NULL);
			if (from && from != to)
				agedge(G, from, to, NULL, 1);
		}
	}
}

static Agraph_t *build(const struct fs_scan *s, const struct fs_graph *g, const struct fs_render_opts *o,
		       const uint8_t *shown, uint32_t n_shown, uint32_t layers)
{
	Agraph_t *G = open_graph(o, n_shown);
	Agnode_t **nodes = draw_nodes(G, s, g, o, shown);
	Agnode_t *fold = layers ? draw_fold(G, layers) : NULL;
	draw_edges(G, g, nodes, fold);
	free(nodes);
	return G;
}

static const char *extension(const char *path)
{
	const char *dot = strrchr(path, '.');
	return dot ? dot + 1 : "";
}

/* One Graphviz context for the whole process: Graphviz 2.42's pango text
 * layout keeps a pointer to the last font name, which lives in the context's
 * font table, so a second context would read freed memory (--apply renders
 * before and after in one run). */
static GVC_t *the_gvc;

static void free_gv_context(void)
{
	gvFreeContext(the_gvc);
}

static GVC_t *gv_context(void)
{
	if (!the_gvc) {
		the_gvc = gvContext();
		atexit(free_gv_context);
	}
	return the_gvc;
}

int fs_render(const struct fs_scan *s, const struct fs_graph *g, const struct fs_render_opts *o,
	      const char *path, struct fs_diags *d)
{
	const char *ext = extension(path);
	if (strcmp(ext, "dot") && strcmp(ext, "svg") && strcmp(ext, "png")) {
		fs_diag_add(d, FS_ERROR, path, 0, 0, NULL, 0, "render to .dot, .svg or .png");
		return -1;
	}
	uint8_t *shown = fs_xcalloc(g->n_nodes + 1, 1);
	uint32_t layers = 0, n = 0;
	if (o->n_focus)
		neighbourhood(g, o, shown);
	else
		layers = fold_layers(s, g, shown);
	for (uint32_t v = 0; v < g->n_nodes; v++)
		n += shown[v] == SHOWN;
	if (n > FS_RENDER_MAX_NODES) {
		fs_diag_add(d, FS_ERROR, path, 0, 0, NULL, 0,
			    "%u nodes to draw%s: too many for a readable picture; render a neighbourhood "
			    "(--node NAME or --candidate ID, --hops K)", n, layers ? " after folding layers" : " and no repeated layers to fold");
		free(shown);
		return -1;
	}
	Agraph_t *G = build(s, g, o, shown, n, layers);
	free(shown);
	struct fs_atomic out;
	int rc = fs_atomic_open(&out, path);
	errno = rc ? errno : 0;
	if (rc == 0 && !strcmp(ext, "dot"))
		rc = agwrite(G, out.f) == 0 ? 0 : -1;
	else if (rc == 0) {
		GVC_t *gvc = gv_context();
		rc = gvLayout(gvc, G, "dot") == 0 && gvRender(gvc, G, ext, out.f) == 0 ? 0 : -1;
		gvFreeLayout(gvc, G);
	}
	agclose(G);
	if (out.f)
		rc = rc ? (fs_atomic_abort(&out), -1) : fs_atomic_commit(&out);
	if (rc)
		fs_diag_add(d, FS_ERROR, path, 0, 0, NULL, 0, "cannot render: %s", errno ? strerror(errno) : "Graphviz failed");
	return rc;
}
