/*
 * match_out.c: what `fusescan match` prints: a line per dump and pattern in
 * AutoDeploy's summary form, a table, the overlaps resolved, near-miss
 * explanations (--explain), the gate results; and the same as JSON
 * (fusescan.match/1) or JUnit XML for CI.
 */
#include "fusescan/matchrun.h"
#include "report_int.h"
#include "fusescan/escape.h"

#include <stdlib.h>
#include <string.h>

static const char *gname(const struct fs_match_run *r, const struct fs_graph *g, uint32_t node)
{
	(void)g;
	return node == UINT32_MAX ? "?" : fs_scan_str(r->s, g->nodes[node].name);
}

static int show_module(const struct fs_scan *s, const struct fs_dumpfile *f)
{
	return f->n_modules > 1 || (f->n_modules == 1 && strcmp(fs_scan_str(s, s->modules[f->first_module].name), "(root)"));
}

static void summary_lines(const struct fs_match_run *r, FILE *out)
{
	const struct fs_scan *s = r->s;
	for (uint32_t f = 0; f < s->n_files; f++) {
		const struct fs_dumpfile *df = &s->files[f];
		for (uint32_t mi = df->first_module; mi < df->first_module + df->n_modules; mi++)
			for (uint32_t gi = 0; gi < r->n_groups; gi++) {
				fprintf(out, "[dump=%s, ", df->base);
				if (show_module(s, df))
					fprintf(out, "module=%s, ", fs_scan_str(s, s->modules[mi].name));
				fprintf(out, "pattern=%s] [SUMMARY] matches=%u\n", r->groups[gi].name, fs_match_count(r, mi, gi));
			}
	}
}

static void table(const struct fs_match_run *r, FILE *out)
{
	const struct fs_scan *s = r->s;
	fprintf(out, "\n%-20s", "pattern");
	for (uint32_t f = 0; f < s->n_files; f++)
		if (s->files[f].n_modules) {
			if (s->files[f].number >= 0)
				fprintf(out, " %4lld", (long long)s->files[f].number);
			else
				fprintf(out, " %4s", "f");
		}
	fputc('\n', out);
	for (uint32_t gi = 0; gi < r->n_groups; gi++) {
		fprintf(out, "%-20s", r->groups[gi].name);
		for (uint32_t f = 0; f < s->n_files; f++) {
			const struct fs_dumpfile *df = &s->files[f];
			if (!df->n_modules)
				continue;
			uint32_t n = 0;
			for (uint32_t mi = df->first_module; mi < df->first_module + df->n_modules; mi++)
				n += fs_match_count(r, mi, gi);
			fprintf(out, " %4u", n);
		}
		fputc('\n', out);
	}
}

static void overlaps(const struct fs_match_run *r, FILE *out)
{
	for (uint32_t k = 0; k < r->n_graphs; k++) {
		const struct fs_mgraph *G = &r->graphs[k];
		if (!G->n_overlaps)
			continue;
		const struct fs_dumpfile *f = &r->s->files[r->s->modules[G->module].file];
		fprintf(out, "\noverlaps resolved in %s (larger pattern first, then file order):\n", f->base);
		for (uint32_t a = 0; a < r->n_groups; a++)
			for (uint32_t b = 0; b < r->n_groups; b++) {
				uint32_t n = 0, ex = 0;
				for (uint32_t i = 0; i < G->n_overlaps; i++)
					if (G->overlaps[i].group == a && G->overlaps[i].winner == b && !n++)
						ex = i;
				if (n)
					fprintf(out, "  %s x%u inside %s (e.g. %%%s inside the match at %%%s)\n", r->groups[a].name, n,
						r->groups[b].name, gname(r, G->g, G->overlaps[ex].root),
						gname(r, G->g, G->overlaps[ex].winner_root));
			}
	}
}

/* ---- explanations ----------------------------------------------------------------- */

/* A near miss of one variant at a root another variant matched is no miss. */
static int root_matched(const struct fs_mgraph *G, const struct fs_pgroup *grp, uint32_t root)
{
	for (uint32_t v = 0; v < grp->n_variants; v++) {
		const struct fs_matches *M = &G->m[grp->variants[v]];
		for (uint32_t i = 0; i < M->n; i++)
			if (M->v[i].root == root)
				return 1;
	}
	return 0;
}

static void miss_detail(const struct fs_match_run *r, const struct fs_graph *g, const struct fs_pattern *p,
			const struct fs_miss *m, char *buf, size_t n)
{
	const struct fs_pnode *pn = &p->nodes[m->pnode];
	const char *gn = gname(r, g, m->gnode);
	const char *target = m->gnode == UINT32_MAX || g->nodes[m->gnode].kind != FS_NODE_CALL
				     ? "not an op" : fs_scan_str(r->s, r->s->ops[g->nodes[m->gnode].op].target);
	switch (m->cause) {
	case FS_MISS_EXTRA:
		snprintf(buf, n, "pattern node '%s' (%s) met %%%s = %s, a cast / view inside the chain: its input %%%s would match",
			 pn->name, pn->regex, gn, target, gname(r, g, m->other));
		break;
	case FS_MISS_CONSUMER:
		snprintf(buf, n, "%%%s (pattern node '%s') is also read by %%%s, outside the match", gn, pn->name,
			 m->other == m->gnode ? "the graph output" : gname(r, g, m->other));
		break;
	case FS_MISS_OP:
		if (m->gnode == UINT32_MAX)
			snprintf(buf, n, "no graph node matches pattern node '%s' (%s) with the bindings so far", pn->name,
				 pn->regex ? pn->regex : "input");
		else
			snprintf(buf, n, "pattern node '%s' wants %s, %%%s is %s", pn->name, pn->regex ? pn->regex : "a value", gn, target);
		break;
	case FS_MISS_WIRING:
		snprintf(buf, n, "pattern node '%s' is bound to %%%s, but here %%%s is read", pn->name,
			 gname(r, g, m->bind[m->pnode] != UINT32_MAX ? m->bind[m->pnode] : m->other), gn);
		break;
	case FS_MISS_COMPUTED:
		snprintf(buf, n, "pattern input '%s' wants a weight, %%%s is computed by %s", pn->name, gn, target);
		break;
	default:
		if (m->cause == FS_MISS_LITERAL || m->cause == FS_MISS_SHAPE) {
			if (m->other != UINT32_MAX && m->other < p->n_where) {
				snprintf(buf, n, "%%%s fails 'where %s' (line %u)", gn, p->where[m->other].text, p->where[m->other].line);
				break;
			}
		}
		snprintf(buf, n, "%%%s = %s: %s differs from pattern node '%s'", gn, target, fs_miss_name((enum fs_miss_cause)m->cause),
			 pn->name);
	}
}

static void best_partial(const struct fs_match_run *r, const struct fs_graph *g, const struct fs_pattern *p,
			 const struct fs_miss *m, FILE *out)
{
	fprintf(out, "  best partial match: %u of %u op nodes, at %%%s (line %u)\n   ", m->depth, p->n_ops,
		gname(r, g, m->root), g->nodes[m->root].line);
	for (uint32_t pn = 0; pn < p->n_nodes; pn++)
		fprintf(out, " %s=%s%s", p->nodes[pn].name, m->bind[pn] == UINT32_MAX ? "" : "%",
			m->bind[pn] == UINT32_MAX ? (pn == m->pnode ? "FAILED" : "-") : gname(r, g, m->bind[pn]));
	fputc('\n', out);
}

/* The explained group's near misses whose root no variant matched, in order:
 * for (struct miss_it it = {0}; (m = next_miss(r, G, &it, &p));) */
struct miss_it {
	uint32_t v, i;
};

static const struct fs_miss *next_miss(const struct fs_match_run *r, const struct fs_mgraph *G, struct miss_it *it,
				       const struct fs_pattern **p)
{
	const struct fs_pgroup *grp = &r->groups[r->explain];
	for (; it->v < grp->n_variants; it->v++, it->i = 0) {
		const struct fs_matches *M = &G->m[grp->variants[it->v]];
		while (it->i < M->n_miss) {
			const struct fs_miss *m = &M->miss[it->i++];
			if (!root_matched(G, grp, m->root)) {
				*p = M->p;
				return m;
			}
		}
	}
	return NULL;
}

static void explain_graph(const struct fs_match_run *r, const struct fs_mgraph *G, FILE *out)
{
	const struct fs_pgroup *grp = &r->groups[r->explain];
	const struct fs_dumpfile *f = &r->s->files[r->s->modules[G->module].file];
	uint32_t n_miss = 0, by_cause[FS_MISS_COUNT] = {0};
	const struct fs_miss *best = NULL, *example[FS_MISS_COUNT] = {0};
	const struct fs_pattern *best_p = NULL, *ex_p[FS_MISS_COUNT] = {0}, *p;
	const struct fs_miss *m;
	for (struct miss_it it = {0, 0}; (m = next_miss(r, G, &it, &p));) {
		n_miss++;
		if (!by_cause[m->cause]++ || m->depth > example[m->cause]->depth) {
			example[m->cause] = m;
			ex_p[m->cause] = p;
		}
		if (!best || m->depth > best->depth) {
			best = m;
			best_p = p;
		}
	}
	fprintf(out, "\nexplain %s in %s: %u matches, %u near misses\n", grp->name, f->base,
		G->matches[r->explain], n_miss);
	char buf[600];
	for (int c = 0; c < FS_MISS_COUNT; c++) {
		if (!by_cause[c])
			continue;
		miss_detail(r, G->g, ex_p[c], example[c], buf, sizeof(buf));
		fprintf(out, "  %-38s x%-4u e.g. at %%%s (line %u): %s\n", fs_miss_name((enum fs_miss_cause)c), by_cause[c],
			gname(r, G->g, example[c]->root), G->g->nodes[example[c]->root].line, buf);
	}
	if (best)
		best_partial(r, G->g, best_p, best, out);
}

static void gates(const struct fs_match_run *r, FILE *out)
{
	if (!r->gates.n)
		return;
	fprintf(out, "\ngates: %u checks, %u failed\n", r->gates.n, r->gates.failed);
	for (uint32_t i = 0; i < r->gates.n; i++)
		fprintf(out, "  %-4s %s: %s\n", r->gates.v[i].ok ? "ok" : "FAIL", r->gates.v[i].check, r->gates.v[i].message);
}

int fs_match_text(const struct fs_match_run *r, FILE *out)
{
	summary_lines(r, out);
	table(r, out);
	overlaps(r, out);
	for (uint32_t k = 0; r->explain >= 0 && k < r->n_graphs; k++)
		explain_graph(r, &r->graphs[k], out);
	gates(r, out);
	return ferror(out) ? -1 : 0;
}

/* ---- JSON and JUnit ----------------------------------------------------------------- */

static cJSON *sites_json(const struct fs_match_run *r, const struct fs_mgraph *G, uint32_t gi)
{
	cJSON *a = cJSON_CreateArray();
	const struct fs_pgroup *grp = &r->groups[gi];
	for (uint32_t v = 0; v < grp->n_variants; v++) {
		const struct fs_matches *M = &G->m[grp->variants[v]];
		for (uint32_t i = 0; i < M->n; i++)
			cJSON_AddItemToArray(a, cJSON_CreateString(gname(r, G->g, M->v[i].root)));
	}
	return a;
}

/* per match: pattern node -> graph node (absent optional nodes left out) */
static cJSON *bindings_json(const struct fs_match_run *r, const struct fs_mgraph *G, uint32_t gi)
{
	cJSON *a = cJSON_CreateArray();
	const struct fs_pgroup *grp = &r->groups[gi];
	for (uint32_t v = 0; v < grp->n_variants; v++) {
		const struct fs_matches *M = &G->m[grp->variants[v]];
		for (uint32_t i = 0; i < M->n; i++) {
			cJSON *o = cJSON_CreateObject();
			for (uint32_t pn = 0; pn < M->p->n_nodes; pn++)
				if (M->v[i].bind[pn] != UINT32_MAX)
					cJSON_AddStringToObject(o, M->p->nodes[pn].name, gname(r, G->g, M->v[i].bind[pn]));
			cJSON_AddItemToArray(a, o);
		}
	}
	return a;
}

static cJSON *explain_json(const struct fs_match_run *r, const struct fs_mgraph *G)
{
	cJSON *a = cJSON_CreateArray();
	char buf[600];
	const struct fs_pattern *p;
	const struct fs_miss *m;
	for (struct miss_it it = {0, 0}; (m = next_miss(r, G, &it, &p));) {
		cJSON *o = cJSON_CreateObject();
		cJSON_AddStringToObject(o, "site", gname(r, G->g, m->root));
		cJSON_AddStringToObject(o, "cause", fs_miss_name((enum fs_miss_cause)m->cause));
		cJSON_AddStringToObject(o, "pattern_node", p->nodes[m->pnode].name);
		cJSON_AddStringToObject(o, "graph_node", gname(r, G->g, m->gnode));
		cJSON_AddNumberToObject(o, "depth", m->depth);
		miss_detail(r, G->g, p, m, buf, sizeof(buf));
		cJSON_AddStringToObject(o, "detail", buf);
		cJSON_AddItemToArray(a, o);
	}
	return a;
}

static cJSON *results_json(const struct fs_match_run *r)
{
	const struct fs_scan *s = r->s;
	cJSON *a = cJSON_CreateArray();
	for (uint32_t f = 0; f < s->n_files; f++) {
		const struct fs_dumpfile *df = &s->files[f];
		for (uint32_t mi = df->first_module; mi < df->first_module + df->n_modules; mi++) {
			const struct fs_mgraph *G = &r->graphs[r->graph_of_module[mi]];
			for (uint32_t gi = 0; gi < r->n_groups; gi++) {
				cJSON *o = cJSON_CreateObject();
				cJSON_AddStringToObject(o, "dump", df->base);
				cJSON_AddStringToObject(o, "path", df->path);
				cJSON_AddStringToObject(o, "module", fs_scan_str(s, s->modules[mi].name));
				cJSON_AddStringToObject(o, "pattern", r->groups[gi].name);
				cJSON_AddNumberToObject(o, "matches", G->matches[gi]);
				cJSON_AddNumberToObject(o, "kept", G->kept[gi]);
				cJSON_AddItemToObject(o, "sites", sites_json(r, G, gi));
				cJSON_AddItemToObject(o, "bindings", bindings_json(r, G, gi));
				if (r->explain == (int)gi)
					cJSON_AddItemToObject(o, "near_misses", explain_json(r, G));
				cJSON_AddItemToArray(a, o);
			}
		}
	}
	return a;
}

int fs_match_json(const struct fs_match_run *r, FILE *out)
{
	cJSON *root = cJSON_CreateObject();
	cJSON_AddStringToObject(root, "schema", FS_MATCH_SCHEMA);
	cJSON_AddStringToObject(root, "version", FS_VERSION);
	cJSON *pats = cJSON_AddArrayToObject(root, "patterns");
	for (uint32_t gi = 0; gi < r->n_groups; gi++) {
		const struct fs_pattern *p = &r->lib->v[r->groups[gi].variants[0]];
		cJSON *o = cJSON_CreateObject();
		cJSON_AddStringToObject(o, "name", p->name);
		cJSON_AddStringToObject(o, "description", p->description ? p->description : "");
		cJSON_AddNumberToObject(o, "variants", r->groups[gi].n_variants);
		cJSON_AddNumberToObject(o, "size", r->groups[gi].size);
		cJSON_AddItemToArray(pats, o);
	}
	cJSON_AddItemToObject(root, "results", results_json(r));
	cJSON *ov = cJSON_AddArrayToObject(root, "overlaps");
	for (uint32_t k = 0; k < r->n_graphs; k++) {
		const struct fs_mgraph *G = &r->graphs[k];
		for (uint32_t i = 0; i < G->n_overlaps; i++) {
			cJSON *o = cJSON_CreateObject();
			cJSON_AddStringToObject(o, "dump", r->s->files[r->s->modules[G->module].file].base);
			cJSON_AddStringToObject(o, "pattern", r->groups[G->overlaps[i].group].name);
			cJSON_AddStringToObject(o, "site", gname(r, G->g, G->overlaps[i].root));
			cJSON_AddStringToObject(o, "inside", r->groups[G->overlaps[i].winner].name);
			cJSON_AddStringToObject(o, "inside_site", gname(r, G->g, G->overlaps[i].winner_root));
			cJSON_AddItemToArray(ov, o);
		}
	}
	cJSON *gt = cJSON_AddArrayToObject(root, "gates");
	for (uint32_t i = 0; i < r->gates.n; i++) {
		cJSON *o = cJSON_CreateObject();
		cJSON_AddStringToObject(o, "check", r->gates.v[i].check);
		cJSON_AddBoolToObject(o, "ok", r->gates.v[i].ok);
		cJSON_AddStringToObject(o, "message", r->gates.v[i].message);
		cJSON_AddItemToArray(gt, o);
	}
	cJSON_AddItemToObject(root, "diagnostics", fs_json_diagnostics(&r->s->diags));
	return fs_json_write(root, out);
}

static void xml_text(FILE *out, const char *s)
{
	fs_esc_fputs(out, fs_esc_xml, s);
}

int fs_match_junit(const struct fs_match_run *r, FILE *out)
{
	const struct fs_scan *s = r->s;
	uint32_t counts = 0;
	for (uint32_t f = 0; f < s->n_files; f++)
		counts += s->files[f].n_modules * r->n_groups;
	fprintf(out, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites tests=\"%u\" failures=\"%u\">\n",
		r->gates.n + counts, r->gates.failed);
	fprintf(out, "  <testsuite name=\"fusescan.match.gates\" tests=\"%u\" failures=\"%u\">\n", r->gates.n, r->gates.failed);
	for (uint32_t i = 0; i < r->gates.n; i++) {
		fputs("    <testcase classname=\"gates\" name=\"", out);
		xml_text(out, r->gates.v[i].check);
		fputs("\">", out);
		if (!r->gates.v[i].ok) {
			fputs("<failure message=\"", out);
			xml_text(out, r->gates.v[i].message);
			fputs("\"/>", out);
		}
		fputs("</testcase>\n", out);
	}
	fprintf(out, "  </testsuite>\n  <testsuite name=\"fusescan.match.counts\" tests=\"%u\" failures=\"0\">\n", counts);
	for (uint32_t f = 0; f < s->n_files; f++) {
		const struct fs_dumpfile *df = &s->files[f];
		for (uint32_t mi = df->first_module; mi < df->first_module + df->n_modules; mi++)
			for (uint32_t gi = 0; gi < r->n_groups; gi++) {
				fputs("    <testcase classname=\"", out);
				xml_text(out, df->base);
				fputs("\" name=\"", out);
				xml_text(out, r->groups[gi].name);
				fprintf(out, " matches=%u\"/>\n", fs_match_count(r, mi, gi));
			}
	}
	fputs("  </testsuite>\n</testsuites>\n", out);
	return ferror(out) ? -1 : 0;
}
