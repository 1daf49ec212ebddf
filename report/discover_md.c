/*
 * discover_md.c: the discovery report as Markdown for a pull-request
 * comment: a ranked table per analysed graph (the text report's), then each
 * candidate's evidence and assessment in a collapsible block; last, the
 * commands to run next.
 */
#include "report_int.h"

static void md_lines(const struct lines *l, FILE *out)
{
	for (uint32_t i = 0; i < l->n; i++)
		fprintf(out, "- %s\n", l->v[i]);
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
	fprintf(out, "<details><summary>%u. <code>%s</code> x%u: %s</summary>\n\n", rank, k->name, k->n_instances, rec);
	fprintf(out, "Pattern: `%s` (id `%s`, kind %s)\n\n**Evidence**\n\n", pat, k->id, fs_kind_name((enum fs_kind)k->kind));
	md_lines(&ev, out);
	fprintf(out, "\n**Strengths / weaknesses / risks**\n\n");
	md_lines(&as, out);
	fprintf(out, "\n</details>\n\n");
}

/* The text report's summary table (summary_row). */
static void summary(const struct fs_discovery *d, const struct fs_analysis *a, FILE *out)
{
	uint32_t rows = summary_rows(d, a), shown = cands_shown(d, a);
	if (!rows)
		return;
	fprintf(out, "| # | candidate | kind | sites | bytes saved | launches saved | kernel | id |\n");
	fprintf(out, "|---|---|---|---|---|---|---|---|\n");
	for (uint32_t i = 0; i < rows; i++) {
		const struct fs_candidate *k = &a->mine->cands[i];
		struct summary_row r;
		summary_row(d, k, &r);
		const char *q = fs_cand_kernel(d, k) ? "`" : ""; /* a kernel's name as code, not "generate" */
		fprintf(out, "| %u | `%s` | %s | %u | %s | %llu | %s%s%s | `%s` |\n", i + 1, k->name, r.kind, k->n_instances, r.saves,
			(unsigned long long)k->launches_total, q, r.kernel, q, k->id);
	}
	if (shown > rows)
		fprintf(out, "\n(%u more below)\n", shown - rows);
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
	fprintf(out, "### `%s` (%s/%s, module %s, %u nodes)\n\nSizes: %s. %u candidates.\n\n", f->base,
		fs_scan_str(s, f->stage), fs_scan_str(s, f->transform), fs_scan_str(s, mod->name),
		m->g->n_calls, bind, m->n_cands);
	summary(d, a, out);
	uint32_t n = cands_shown(d, a);
	for (uint32_t i = 0; i < n; i++)
		details(d, a, i + 1, &m->cands[i], out);
	for (uint32_t e = 0, any = 0; e < d->cat.n; e++)
		if (m->fused[e]) {
			fprintf(out, "%s- `%s` x%u via `%s`\n", any++ ? "" : "Already fused:\n\n", d->cat.e[e].name,
				m->fused[e], fs_scan_str(s, m->fused_op[e]));
		}
	for (uint32_t e = 0, any = 0; e < d->cat.n; e++)
		if (m->reference[e]) {
			fprintf(out, "%s- `%s` x%u via `%s`\n",
				any++ ? "" : "\nMatched but not fused (AutoDeploy reference ops):\n\n", d->cat.e[e].name,
				m->reference[e], fs_scan_str(s, m->reference_op[e]));
		}
	fputc('\n', out);
}

int fs_discover_markdown(const struct fs_discovery *d, FILE *out)
{
	fprintf(out, "## fusescan %s: fusion candidates\n\n", FS_VERSION);
	for (uint32_t i = 0; i < d->n_a; i++)
		analysis(d, &d->a[i], out);
	next_steps(d, "### Next\n\n```sh\n", "", "```\n", out);
	return ferror(out) ? -1 : 0;
}
