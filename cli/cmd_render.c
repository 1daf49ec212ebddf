/*
 * cmd_render.c: `fusescan render PATH [--node NAME | --candidate ID]
 * [--hops K] -o FILE.svg|.png|.dot`: a picture of one graph (a run's last
 * dump, or --dump): the neighbourhood of a node or of a candidate's first
 * site, or the whole graph with its repeated layers folded.
 */
#include "cli.h"
#include "fusescan/discover.h"
#include "fusescan/render.h"

#include <stdlib.h>
#include <string.h>

static int find_node(const struct fs_scan *s, const struct fs_graph *g, const char *name, uint32_t *out)
{
	if (*name == '%')
		name++;
	for (uint32_t i = 0; i < g->n_nodes; i++)
		if (!strcmp(fs_scan_str(s, g->nodes[i].name), name))
			return *out = i, 1;
	return 0;
}

static int draw(const struct fs_command *cmd, struct fs_discovery *d, const char *node, const char *cand,
		uint32_t hops, const char *out)
{
	const struct fs_scan *s = d->scan;
	const struct fs_analysis *a = &d->a[0];
	const struct fs_graph *g = s->modules[a->module].graph;
	char title[300];
	uint32_t one;
	struct fs_render_opts o = {NULL, NULL, 0, hops, title};
	snprintf(title, sizeof(title), "%s (%u nodes)", s->files[s->modules[a->module].file].base, g->n_calls);
	if (node) {
		if (!find_node(s, g, node, &one))
			return fprintf(stderr, "fusescan %s: no node %s in this graph\n", cmd->name, node), -1;
		o.focus = &one;
		o.n_focus = 1;
		snprintf(title, sizeof(title), "%%%s and %u hops", s->strs.ent[g->nodes[one].name].s, hops);
	} else if (cand) {
		const struct fs_candidate *k = NULL;
		for (uint32_t i = 0; i < a->mine->n_cands && !k; i++)
			if (!strcmp(a->mine->cands[i].id, cand))
				k = &a->mine->cands[i];
		if (!k)
			return fprintf(stderr, "fusescan %s: no candidate %s in this graph (see fusescan discover)\n", cmd->name, cand), -1;
		const struct fs_region *r = &a->mine->regions[k->instances[0]];
		o.focus = r->nodes;
		o.n_focus = r->n_nodes;
		snprintf(title, sizeof(title), "%s: site 1 of %u, %u hops", k->name, k->n_instances, hops);
	}
	return fs_render(s, g, &o, out, &d->scan->diags);
}

int fs_cmd_render(const struct fs_command *cmd, int argc, char **argv)
{
	const char *out = NULL, *node = NULL, *cand = NULL, *hops_s = NULL;
	struct fs_discover_opts o = {.tokens = 8192};
	const struct fs_option opts[] = {
		{"output", 'o', FS_OPT_STRING, "FILE", "the picture: .svg, .png or .dot (required)", &out, NULL},
		{"node", 0, FS_OPT_STRING, "NAME", "draw the neighbourhood of this node", &node, NULL},
		{"candidate", 0, FS_OPT_STRING, "ID", "draw the first site of this candidate (fusescan discover)", &cand, NULL},
		{"hops", 0, FS_OPT_STRING, "K", "neighbourhood radius (default 2)", &hops_s, NULL},
		{"dump", 0, FS_OPT_STRING, "NNN|FILE", "dump of a run to draw (default: the last)", &o.dump, NULL},
		{0},
	};
	int npos, r = fs_opts_parse(cmd, opts, argc, argv, &npos);
	if (r)
		return r > 0 ? FS_EXIT_OK : FS_EXIT_INPUT;
	long long hops = 2;
	if (fs_opt_int(cmd, "hops", hops_s, 0, 64, &hops))
		return FS_EXIT_INPUT;
	if (npos != 1 || !out || (node && cand)) {
		fprintf(stderr, "fusescan %s: give one dump or run, -o FILE, and at most one of --node / --candidate\n", cmd->name);
		return FS_EXIT_INPUT;
	}
	struct fs_scan *s = fs_cli_read(cmd, argv, npos, NULL, out);
	if (!s)
		return FS_EXIT_INPUT;
	struct fs_discovery *d = s->diags.n_errors ? NULL : fs_discover(s, &o);
	int rc = FS_EXIT_INPUT;
	if (d && d->n_a != 1)
		fprintf(stderr, "fusescan %s: one graph at a time: give one dump file, or one run with --dump\n", cmd->name);
	else if (d)
		rc = draw(cmd, d, node, cand, (uint32_t)hops, out) ? FS_EXIT_INPUT : FS_EXIT_OK;
	fs_diags_print(&s->diags, stderr);
	fs_discovery_free(d);
	fs_scan_free(s);
	return rc;
}
