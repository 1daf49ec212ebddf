/*
 * discover_md.c: the discovery report as Markdown for a pull-request
 * comment: a ranked table per analysed graph (the text report's), then each
 * candidate's evidence and assessment in a collapsible block; per run, each
 * candidate's count across its dumps; last, the commands to run next.
 */
#include "report_int.h"
#include "fusescan/escape.h"

#include <stdlib.h>

/* s as a code span: in a table, or in running text */
static void code(FILE *out, const char *s, int in_table)
{
	struct fs_text t = {0};
	fs_esc_md_code(&t, s, in_table);
	fputs(t.s, out);
	free(t.s);
}

static void md_lines(const struct lines *l, FILE *out)
{
	for (uint32_t i = 0; i < l->n; i++)
	{
		fputs("- ", out);
		fs_esc_fputs(out, fs_esc_md_text, l->v[i]);
		fputc('\n', out);
	}
}

static void details(const struct fs_discovery *d, const struct fs_analysis *a, uint32_t rank,
		    const struct fs_candidate *k, FILE *out)
{
	char pat[1024], rec[256];
	struct lines ev = {.n = 0}, as = {.n = 0};
	fs_cand_pattern(d, a, k, pat, sizeof(pat));
	fs_cand_evidence(d, a, k, &ev);
	fs_cand_assessment(d, a, k, &as);
	fs_cand_recommendation(d, k, rec, sizeof(rec));
	fprintf(out, "<details><summary>%u. <code>", rank);
	fs_esc_fputs(out, fs_esc_xml, k->name);
	fprintf(out, "</code> x%u: ", k->n_instances);
	fs_esc_fputs(out, fs_esc_xml, rec);
	fputs("</summary>\n\nPattern: ", out);
	code(out, pat, 0);
	fputs(" (id ", out);
	code(out, k->id, 0);
	fprintf(out, ", kind %s)\n\n**Evidence**\n\n", fs_kind_name((enum fs_kind)k->kind));
	md_lines(&ev, out);
	fprintf(out, "\n**Strengths / weaknesses / risks**\n\n");
	md_lines(&as, out);
	fprintf(out, "\n</details>\n\n");
}

/* The text report's summary table (fs_discover_summary_row). */
static void summary(const struct fs_discovery *d, const struct fs_analysis *a, FILE *out)
{
	uint32_t rows = fs_discover_summary_rows(d, a), shown = fs_discover_cands_shown(d, a);
	if (!rows)
		return;
	fprintf(out, "| # | candidate | kind | sites | bytes saved | launches saved | kernel | id |\n");
	fprintf(out, "|---|---|---|---|---|---|---|---|\n");
	for (uint32_t i = 0; i < rows; i++) {
		const struct fs_candidate *k = &a->mine->cands[i];
		struct summary_row r;
		fs_discover_summary_row(d, k, &r);
		fprintf(out, "| %u | ", i + 1);
		code(out, k->name, 1);
		fprintf(out, " | %s | %u | %s | %llu | ", r.kind, k->n_instances, r.saves, (unsigned long long)k->launches_total);
		if (fs_cand_kernel(d, k)) /* a kernel's name as code, not "generate" */
			code(out, r.kernel, 1);
		else
			fputs(r.kernel, out);
		fputs(" | ", out);
		code(out, k->id, 1);
		fputs(" |\n", out);
	}
	if (shown > rows)
		fprintf(out, "\n(%u more below)\n", shown - rows);
	fputc('\n', out);
}

/* `entry` xN via `op` */
static void via(FILE *out, const char *entry, uint32_t n, const char *op)
{
	code(out, entry, 0);
	fprintf(out, " x%u via ", n);
	code(out, op, 0);
	fputc('\n', out);
}

static void analysis(const struct fs_discovery *d, const struct fs_analysis *a, FILE *out)
{
	const struct fs_scan *s = d->scan;
	const struct fs_module *mod = &s->modules[a->module];
	const struct fs_dumpfile *f = &s->files[mod->file];
	const struct fs_mine *m = a->mine;
	char bind[512];
	fs_binding_text(d, a, bind, sizeof(bind));
	fputs("### ", out);
	code(out, f->base, 0);
	fputs(" (", out);
	fs_esc_fputs(out, fs_esc_md_text, fs_scan_str(s, f->stage));
	fputc('/', out);
	fs_esc_fputs(out, fs_esc_md_text, fs_scan_str(s, f->transform));
	fputs(", module ", out);
	fs_esc_fputs(out, fs_esc_md_text, fs_scan_str(s, mod->name));
	fprintf(out, ", %u nodes)\n\nSizes: ", m->g->n_calls);
	fs_esc_fputs(out, fs_esc_md_text, bind);
	fprintf(out, ". %u candidates.\n\n", m->n_cands);
	summary(d, a, out);
	uint32_t n = fs_discover_cands_shown(d, a);
	for (uint32_t i = 0; i < n; i++)
		details(d, a, i + 1, &m->cands[i], out);
	for (uint32_t e = 0, any = 0; e < d->cat.n; e++)
		if (m->fused[e]) {
			fprintf(out, "%s- ", any++ ? "" : "Already fused:\n\n");
			via(out, d->cat.e[e].name, m->fused[e], fs_scan_str(s, m->fused_op[e]));
		}
	for (uint32_t i = 0; i < a->n_mlir; i++) {
		char buf[600];
		fs_mlir_text(d, &a->mlir[i], buf, sizeof(buf));
		fprintf(out, "%s- ", i ? "" : "\nMLIR kernels (mlir_elementwise_fusion):\n\n");
		code(out, fs_scan_str(s, s->ops[a->mlir[i].op].target), 0);
		fprintf(out, " x%u: ", a->mlir[i].count);
		fs_esc_fputs(out, fs_esc_md_text, buf);
		fputc('\n', out);
	}
	for (uint32_t e = 0, any = 0; e < d->cat.n; e++)
		if (m->reference[e]) {
			fprintf(out, "%s- ", any++ ? "" : "\nMatched but not fused (AutoDeploy reference ops):\n\n");
			via(out, d->cat.e[e].name, m->reference[e], fs_scan_str(s, m->reference_op[e]));
		}
	fputc('\n', out);
}

/* A run's candidates across its dumps: a table row per candidate id (fs_evo_summary). */
static void evolution(const struct fs_discovery *d, const struct fs_evolution *e, FILE *out)
{
	if (!e->n_rows)
		return;
	fputs("### Candidate counts across ", out);
	code(out, d->scan->runs[e->run].dir, 0);
	fputs("\n\n| id | counts by dump |\n|---|---|\n", out);
	char buf[1024];
	for (uint32_t i = 0; i < e->n_rows; i++) {
		fs_evo_summary(d, e, i, buf, sizeof(buf));
		fputs("| ", out);
		code(out, e->rows[i].id, 1);
		fputs(" | ", out);
		fs_esc_fputs(out, fs_esc_md_text, buf);
		fputs(" |\n", out);
	}
	fputc('\n', out);
}

int fs_discover_markdown(const struct fs_discovery *d, FILE *out)
{
	fprintf(out, "## fusescan %s: fusion candidates\n\n", FS_VERSION);
	for (uint32_t i = 0; i < d->n_a; i++)
		analysis(d, &d->a[i], out);
	for (uint32_t r = 0; r < d->scan->n_runs; r++)
		evolution(d, &d->evo[r], out);
	fs_discover_next_steps(d, "### Next\n\n```sh\n", "", "```\n", out);
	return ferror(out) ? -1 : 0;
}
