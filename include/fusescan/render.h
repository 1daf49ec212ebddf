/*
 * render.h: pictures of graphs with Graphviz (cgraph + gvc): the k-hop
 * neighbourhood of a site (its nodes highlighted and grouped), or a whole
 * graph with its repeated layers folded into one block marked xN. The format
 * follows the file name: .dot (deterministic text, no layout), .svg, .png.
 *
 *   struct fs_render_opts o = {site_nodes, NULL, n, 2, "rmsnorm at %mul_3"};
 *   fs_render(scan, graph, &o, "site.svg", &diags);
 */
#ifndef FUSESCAN_RENDER_H
#define FUSESCAN_RENDER_H

#include "fusescan/scan.h"

struct fs_render_opts {
	const uint32_t *focus;     /* nodes to highlight; none: the whole graph, folded */
	const uint32_t *group;     /* per focus node: its site (clusters), or NULL: one site */
	uint32_t n_focus;
	uint32_t hops;             /* neighbourhood radius around the focus */
	const char *title;
};

/* Largest picture drawn: more nodes (after folding) is refused with advice. */
enum { FS_RENDER_MAX_NODES = 500 };
/* Above this many nodes dot's ranking and crossing minimisation run with
 * bounded effort (nslimit, mclimit): unbounded, 400 nodes can take minutes. */
enum { FS_RENDER_BOUNDED = 200 };

/* Writes the picture atomically. 0, or -1 with the reason in d. */
int fs_render(const struct fs_scan *s, const struct fs_graph *g, const struct fs_render_opts *o,
	      const char *path, struct fs_diags *d);

#endif
