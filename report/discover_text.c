/*
 * discover_text.c: the discovery report as text. Per graph, a summary table
 * of its ranked candidates, then each in the per-candidate template
 * AutoDeploy's fusion workflow uses (Candidate / Affected graph pattern /
 * Existing kernel lookup / Evidence / Recommendation / Strengths,
 * weaknesses, risks), already-fused chains and cleanups; per run the
 * timeline and each candidate's count across the transforms; last, the
 * commands to run next.
 */
#include "report_int.h"

#include <string.h>

static void timeline(const struct fs_scan *s, const struct fs_run *r, FILE *out)
{
	fprintf(out, "run %s: %u dumps%s%s\n", r->dir, r->n_files, r->log ? ", log " : "", r->log ? r->log : "");
	const struct fs_dumpfile *prev = NULL;
	for (uint32_t i = 0; i < r->n_files; i++) {
		const struct fs_dumpfile *f = &s->files[r->first_file + i];
		uint32_t n = fs_dumpfile_nodes(s, f);
		fprintf(out, "  %03lld %-16s %-40s %6u nodes  %s\n", (long long)f->number, fs_scan_str(s, f->stage),
			fs_scan_str(s, f->transform), n,
			f->n_errors ? "errors" : !prev ? "" : fs_dumpfiles_identical(s, prev, f) ? "unchanged" : "changed");
		prev = f;
	}
	fputc('\n', out);
}

static void print_lines(const struct lines *l, const char *indent, FILE *out)
{
	for (uint32_t i = 0; i < l->n; i++)
		fprintf(out, "%s%s\n", indent, l->v[i]);
}

static void sites(const struct fs_discovery *d, const struct fs_analysis *a, const struct fs_candidate *k, FILE *out)
{
	const struct fs_graph *g = a->mine->g;
	fprintf(out, "    sites:");
	for (uint32_t i = 0; i < k->n_instances && i < 6; i++) {
		const struct fs_region *r = &a->mine->regions[k->instances[i]];
		fprintf(out, "%s %%%s", i ? "," : "", fs_scan_str(d->scan, g->nodes[r->outputs[0]].name));
	}
	fprintf(out, "%s\n", k->n_instances > 6 ? ", ..." : "");
}

static void candidate(const struct fs_discovery *d, const struct fs_analysis *a, uint32_t rank,
		      const struct fs_candidate *k, FILE *out)
{
	char pat[1024], b1[32], b2[32], rec[256];
	struct lines ev = {.n = 0}, as = {.n = 0};
	fs_cand_pattern(d, a, k, pat, sizeof(pat));
	const char *kern = fs_cand_kernel(d, k);
	fprintf(out, "Candidate %u: %s  [%s, id %s]\n", rank, k->name, fs_kind_name((enum fs_kind)k->kind), k->id);
	fprintf(out, "  Affected graph pattern: %s  x%u\n", pat, k->n_instances);
	sites(d, a, k, out);
	if (k->cost_known)
		fprintf(out, "    saves %s per instance, %s in all; %u launch%s per instance, %llu in all\n",
			fs_human_bytes(k->bytes_per_instance, b1, sizeof(b1)), fs_human_bytes(k->bytes_total, b2, sizeof(b2)),
			k->launches_per_instance, k->launches_per_instance == 1 ? "" : "es",
			(unsigned long long)k->launches_total);
	else
		fprintf(out, "    bytes unknown (unbound or unknown sizes); %llu launches in all\n",
			(unsigned long long)k->launches_total);
	const char *wrapper = fs_cand_wrapper(d, k);
	fprintf(out, "  Existing kernel lookup: %s%s%s%s%s\n", kern ? "found (" : "not_found", kern ? kern : "",
		wrapper ? ", through the wrapper " : "", wrapper ? wrapper : "", kern ? ")" : "");
	fs_cand_evidence(d, a, k, &ev);
	fprintf(out, "  Evidence:\n");
	print_lines(&ev, "    - ", out);
	fs_cand_recommendation(d, k, rec, sizeof(rec));
	fprintf(out, "  Recommendation: %s\n", rec);
	fs_cand_assessment(d, a, k, &as);
	fprintf(out, "  Strengths / weaknesses / risks:\n");
	print_lines(&as, "    ", out);
	fputc('\n', out);
}

static int width(const char *s, int w)
{
	int n = (int)strlen(s);
	return n > w ? n : w;
}

/* The ranked candidates, a line each (fs_discover_summary_row), columns as
 * wide as their longest cell. */
static void summary(const struct fs_discovery *d, const struct fs_analysis *a, FILE *out)
{
	uint32_t rows = fs_discover_summary_rows(d, a), shown = fs_discover_cands_shown(d, a);
	struct summary_row r[SUMMARY_ROWS];
	int wn = 9, wk = 4, wb = 11, wl = 14, wx = 6; /* the headers' widths */
	for (uint32_t i = 0; i < rows; i++) {
		const struct fs_candidate *k = &a->mine->cands[i];
		fs_discover_summary_row(d, k, &r[i]);
		wn = width(k->name, wn), wk = width(r[i].kind, wk), wb = width(r[i].saves, wb), wx = width(r[i].kernel, wx);
	}
	if (!rows)
		return;
	fprintf(out, "  %2s  %-*s  %-*s  %5s  %*s  %*s  %-*s  %s\n", "#", wn, "candidate", wk, "kind", "sites", wb, "bytes saved",
		wl, "launches saved", wx, "kernel", "id");
	for (uint32_t i = 0; i < rows; i++) {
		const struct fs_candidate *k = &a->mine->cands[i];
		fprintf(out, "  %2u  %-*s  %-*s  %5u  %*s  %*llu  %-*s  %s\n", i + 1, wn, k->name, wk, r[i].kind, k->n_instances, wb,
			r[i].saves, wl, (unsigned long long)k->launches_total, wx, r[i].kernel, k->id);
	}
	if (shown > rows)
		fprintf(out, "  (%u more below)\n", shown - rows);
	fputc('\n', out);
}

static void already_fused(const struct fs_discovery *d, const struct fs_analysis *a, FILE *out)
{
	const struct fs_mine *m = a->mine;
	for (int ref = 0, any = 0; ref < 2; ref++, any = 0) {
		const uint32_t *count = ref ? m->reference : m->fused, *op = ref ? m->reference_op : m->fused_op;
		for (uint32_t e = 0; e < d->cat.n; e++) {
			if (!count[e])
				continue;
			if (!any++)
				fprintf(out, "%s\n", ref ? "Matched but not fused (AutoDeploy reference ops: the chain runs unfused):"
						      : "Already fused in this graph:");
			fprintf(out, "  %-18s x%-4u via %s\n", d->cat.e[e].name, count[e], fs_scan_str(d->scan, op[e]));
		}
		if (any)
			fputc('\n', out);
	}
}

/* The MLIR pass's kernels the graph calls, each with what it replaced. */
static void mlir_kernels(const struct fs_discovery *d, const struct fs_analysis *a, FILE *out)
{
	char buf[600];
	for (uint32_t i = 0; i < a->n_mlir; i++) {
		fs_mlir_text(d, &a->mlir[i], buf, sizeof(buf));
		fprintf(out, "%s  %s x%u: %s\n", i ? "" : "MLIR kernels in this graph (mlir_elementwise_fusion):\n",
			fs_scan_str(d->scan, d->scan->ops[a->mlir[i].op].target), a->mlir[i].count, buf);
	}
	if (a->n_mlir)
		fputc('\n', out);
}

static void cleanups(const struct fs_discovery *d, const struct fs_analysis *a, FILE *out)
{
	const struct fs_mine *m = a->mine;
	if (!m->n_cleanups)
		return;
	fprintf(out, "Cleanup candidates:\n");
	for (int kind = 0; kind < FS_CLEAN_COUNT; kind++) {
		uint32_t n = 0;
		for (uint32_t i = 0; i < m->n_cleanups; i++)
			n += m->cleanups[i].kind == kind;
		if (!n)
			continue;
		fprintf(out, "  %-13s x%-4u", fs_cleanup_name((enum fs_cleanup_kind)kind), n);
		uint32_t shown = 0;
		for (uint32_t i = 0; i < m->n_cleanups && shown < 4; i++) {
			const struct fs_cleanup *c = &m->cleanups[i];
			if (c->kind != kind)
				continue;
			fprintf(out, "%s%%%s", shown++ ? ", " : " ", fs_scan_str(d->scan, m->g->nodes[c->node].name));
			if (c->other != c->node)
				fprintf(out, " (%s %%%s)",
					kind == FS_CLEAN_DUPLICATE ? "=" : kind == FS_CLEAN_CAUSAL_MASK ? "mask" : "after",
					fs_scan_str(d->scan, m->g->nodes[c->other].name));
		}
		fprintf(out, "%s\n", n > shown ? ", ..." : "");
		if (kind == FS_CLEAN_CAUSAL_MASK)
			fprintf(out, "  %-19s each mask is key <= query at every size: pass is_causal=True instead (the\n"
				     "  %-19s flash path); %u node%s only build%s masks and go%s (not mined)\n",
				"", "", m->n_freed, m->n_freed == 1 ? "" : "s", m->n_freed == 1 ? "s" : "",
				m->n_freed == 1 ? "es" : "");
	}
	fputc('\n', out);
}

static void analysis(const struct fs_discovery *d, const struct fs_analysis *a, FILE *out)
{
	const struct fs_scan *s = d->scan;
	const struct fs_module *mod = &s->modules[a->module];
	const struct fs_dumpfile *f = &s->files[mod->file];
	char bind[512];
	fs_binding_text(d, a, bind, sizeof(bind));
	fprintf(out, "== %s  [%s/%s]  module %s, %u nodes", f->path, fs_scan_str(s, f->stage),
		fs_scan_str(s, f->transform), fs_scan_str(s, mod->name), a->mine->g->n_calls);
	if (a->n_inlined)
		fprintf(out, " (%u call_module node%s inlined: %u GraphModules as one graph)", a->n_inlined,
			a->n_inlined == 1 ? "" : "s", f->n_modules);
	fputc('\n', out);
	fprintf(out, "   sizes: %s; %u candidates\n\n", bind, a->mine->n_cands);
	summary(d, a, out);
	uint32_t n = fs_discover_cands_shown(d, a);
	for (uint32_t i = 0; i < n; i++)
		candidate(d, a, i + 1, &a->mine->cands[i], out);
	if (n < a->mine->n_cands)
		fprintf(out, "(%u more candidates; --top 0 shows all)\n\n", a->mine->n_cands - n);
	fs_quant_text(d, a, out);
	already_fused(d, a, out);
	mlir_kernels(d, a, out);
	cleanups(d, a, out);
}

static void evolution(const struct fs_discovery *d, const struct fs_evolution *e, FILE *out)
{
	if (!e->n_rows)
		return;
	fprintf(out, "Candidate counts across %s (by dump, a row per candidate id):\n", d->scan->runs[e->run].dir);
	char buf[1024];
	int w = 40;
	for (uint32_t i = 0; i < e->n_rows; i++)
		w = width(e->rows[i].id, w);
	for (uint32_t i = 0; i < e->n_rows; i++) {
		fs_evo_summary(d, e, i, buf, sizeof(buf));
		fprintf(out, "  %-*s %s\n", w, e->rows[i].id, buf);
	}
	fputc('\n', out);
}

int fs_discover_text(const struct fs_discovery *d, FILE *out)
{
	const struct fs_scan *s = d->scan;
	for (uint32_t i = 0; i < d->n_a; i++)
		analysis(d, &d->a[i], out);
	for (uint32_t r = 0; r < s->n_runs; r++) {
		timeline(s, &s->runs[r], out);
		evolution(d, &d->evo[r], out);
	}
	fs_discover_next_steps(d, "Next (commands to copy; 'fusescan fuse --help' lists every option):\n", "  ", "\n", out);
	return ferror(out) ? -1 : 0;
}
