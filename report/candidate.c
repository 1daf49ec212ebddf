/*
 * candidate.c: what every discovery report says about a candidate (see
 * report_int.h): pattern, existing kernel, evidence (catalog, source tree,
 * ad.log, the run's timeline, ops the graph already calls), assessment and
 * recommendation, and count evolution across a run.
 */
#include "report_int.h"

#include <stdarg.h>
#include <string.h>

void lines_add(struct lines *l, const char *fmt, ...)
{
	if (l->n == MAX_LINES)
		return;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(l->v[l->n++], LINE, fmt, ap);
	va_end(ap);
}

const char *human_bytes(int64_t b, char *buf, size_t n)
{
	if (b == INT64_MAX) /* the cost model's sums saturate there */
		snprintf(buf, n, "more than 9.2 EB");
	else if (b >= 1000000000)
		snprintf(buf, n, "%.2f GB", (double)b / 1e9);
	else if (b >= 1000000)
		snprintf(buf, n, "%.1f MB", (double)b / 1e6);
	else if (b >= 1000)
		snprintf(buf, n, "%.1f kB", (double)b / 1e3);
	else
		snprintf(buf, n, "%lld B", (long long)b);
	return buf;
}

void unbound_text(const struct fs_scan *s, const struct fs_analysis *a, char *buf, size_t n)
{
	size_t k = 0;
	buf[0] = '\0';
	for (uint32_t i = 0; i < a->n_unbound && i < 8 && k < n; i++)
		k += (size_t)snprintf(buf + k, n - k, "%s%s", i ? ", " : "", fs_scan_str(s, a->unbound[i]));
	if (a->n_unbound > 8 && k < n)
		snprintf(buf + k, n - k, " and %u more", a->n_unbound - 8);
}

void binding_text(const struct fs_discovery *d, const struct fs_analysis *a, char *buf, size_t n)
{
	size_t k = 0;
	buf[0] = '\0';
	for (uint32_t i = 0; i < a->n_bind && k < n; i++)
		k += (size_t)snprintf(buf + k, n - k, "%s%s=%lld", i ? " " : "",
				      fs_scan_str(d->scan, a->bind[i].sym), (long long)a->bind[i].value);
	if (!a->n_bind)
		snprintf(buf, n, "(none: symbolic sizes are not costed)");
	else if (a->n_unbound && k < n) { /* what the ranking assumed */
		char names[200];
		unbound_text(d->scan, a, names, sizeof(names));
		snprintf(buf + k, n - k, "; %s unbound: sizes that need %s are not costed, ranked by what is", names,
			 a->n_unbound == 1 ? "it" : "them");
	}
}

void cand_pattern(const struct fs_discovery *d, const struct fs_analysis *a,
		  const struct fs_candidate *k, char *buf, size_t n)
{
	const struct fs_mine *m = a->mine;
	const struct fs_region *r = &m->regions[k->instances[0]];
	const struct fs_graph *g = m->g;
	size_t len = 0;
	buf[0] = '\0';
	/* views are free and left out, unless the region is nothing but views
	 * (repeat_kv: the reshape of an expanded value is the copy) */
	for (int views = 0; views < 2 && !len; views++)
		for (uint32_t i = 0; i < r->n_nodes && len + 1 < n; i++) {
			const struct fs_op *op = &d->scan->ops[g->nodes[r->nodes[i]].op];
			if ((op->flags & FS_OPF_INDEX_ONLY) && !views)
				continue;
			len += (size_t)snprintf(buf + len, n - len, "%s%s", len ? " -> " : "", fs_scan_str(d->scan, op->key));
		}
}

const char *cand_kernel(const struct fs_discovery *d, const struct fs_candidate *k)
{
	if (k->entry < 0)
		return NULL;
	const struct fs_catalog_entry *e = &d->cat.e[k->entry];
	if (e->n_kernels || e->n_subsumed)
		return fs_scan_str(d->scan, e->n_kernels ? e->kernels[0] : e->subsumed[0]);
	return e->n_transforms ? fs_scan_str(d->scan, e->transforms[0]) : NULL;
}

/* The dump a transform wrote in run r, or NULL. */
static const struct fs_dumpfile *transform_dump(const struct fs_scan *s, uint32_t run, const char *t,
						const struct fs_dumpfile **prev)
{
	const struct fs_run *r = &s->runs[run];
	for (uint32_t i = 0; i < r->n_files; i++) {
		const struct fs_dumpfile *f = &s->files[r->first_file + i];
		if (!strcmp(fs_scan_str(s, f->transform), t)) {
			*prev = i ? f - 1 : NULL;
			return f;
		}
	}
	return NULL;
}

static void transform_evidence(const struct fs_discovery *d, const struct fs_analysis *a,
			       const char *t, struct lines *out)
{
	const struct fs_scan *s = d->scan;
	char what[200] = "";
	size_t k = 0;
	if (a->run != UINT32_MAX) {
		const struct fs_adlog *log = &d->logs[a->run];
		const struct fs_adlog_entry *e = fs_adlog_find(log, t);
		if (e && e->status == FS_AD_DISABLED)
			k += (size_t)snprintf(what, sizeof(what), "exists but is disabled (%s:%u)", log->path, e->line);
		else if (e && e->status == FS_AD_SKIPPED)
			k += (size_t)snprintf(what, sizeof(what), "exists but was skipped (%s:%u)", log->path, e->line);
		else if (e)
			k += (size_t)snprintf(what, sizeof(what), "ran: matches=%lld (%s:%u)", (long long)e->matches,
					      log->path, e->line);
		const struct fs_dumpfile *prev, *f = transform_dump(s, a->run, t, &prev);
		if (f && prev && k < sizeof(what))
			snprintf(what + k, sizeof(what) - k, "%sdump %s: graph %s", k ? "; " : "", f->base,
				 fs_dumpfiles_identical(s, prev, f) ? "unchanged (no rewrite)" : "changed");
	}
	lines_add(out, "transform %s: %s", t, what[0] ? what : "not in this run");
}

static void source_evidence(const struct fs_discovery *d, const char *sym, struct lines *out)
{
	int32_t i = fs_catalog_find_evidence(&d->cat, sym, 0);
	if (i >= 0)
		lines_add(out, "source: %s:%u %s", d->cat.found[i].path, d->cat.found[i].line, sym);
	else if (d->cat.files_indexed)
		lines_add(out, "source: %s not registered in the indexed tree (%u files)", sym, d->cat.files_indexed);
}

void cand_evidence(const struct fs_discovery *d, const struct fs_analysis *a,
		   const struct fs_candidate *k, struct lines *out)
{
	const struct fs_region *r = &a->mine->regions[k->instances[0]];
	const struct fs_graph *g = a->mine->g;
	lines_add(out, "first site: %%%s (line %u) .. %%%s (line %u)", fs_scan_str(d->scan, g->nodes[r->nodes[0]].name),
		  g->nodes[r->nodes[0]].line, fs_scan_str(d->scan, g->nodes[r->nodes[r->n_nodes - 1]].name),
		  g->nodes[r->nodes[r->n_nodes - 1]].line);
	if (k->entry < 0)
		return lines_add(out, "catalog: no entry implements this chain");
	const struct fs_catalog_entry *e = &d->cat.e[k->entry];
	char ks[256] = "";
	size_t len = 0;
	for (uint32_t i = 0; i < e->n_kernels && len < sizeof(ks); i++)
		len += (size_t)snprintf(ks + len, sizeof(ks) - len, "%s%s", i ? ", " : "", fs_scan_str(d->scan, e->kernels[i]));
	for (uint32_t i = 0; i < e->n_subsumed && len < sizeof(ks); i++)
		len += (size_t)snprintf(ks + len, sizeof(ks) - len, "%s%s", i ? ", " : "subsumed by ",
					fs_scan_str(d->scan, e->subsumed[i]));
	lines_add(out, "catalog: %s (line %u)%s%s%s%s", e->name, e->line, len ? " -> " : "", ks,
		  e->evidence ? "; " : "", e->evidence ? e->evidence : "");
	for (uint32_t i = 0; i < e->n_kernels + e->n_subsumed; i++) {
		char sym[200];
		uint32_t op = i < e->n_kernels ? e->kernels[i] : e->subsumed[i - e->n_kernels];
		const char *key = fs_scan_str(d->scan, op), *dot = strchr(key, '.');
		snprintf(sym, sizeof(sym), "%.*s::%s", dot ? (int)(dot - key) : 0, key, dot ? dot + 1 : key);
		if (d->cat.files_indexed)
			source_evidence(d, sym, out);
	}
	for (uint32_t i = 0; i < e->n_transforms; i++) {
		char sym[200];
		snprintf(sym, sizeof(sym), "transform:%s", fs_scan_str(d->scan, e->transforms[i]));
		transform_evidence(d, a, fs_scan_str(d->scan, e->transforms[i]), out);
		if (d->cat.files_indexed)
			source_evidence(d, sym, out);
	}
	if (a->mine->fused[k->entry])
		lines_add(out, "this graph already calls %s x%u", fs_scan_str(d->scan, a->mine->fused_op[k->entry]),
			  a->mine->fused[k->entry]);
}

void cand_assessment(const struct fs_discovery *d, const struct fs_analysis *a,
		     const struct fs_candidate *k, struct lines *out)
{
	char b1[32], b2[32];
	(void)a;
	if (k->cost_known)
		lines_add(out, "+ saves %s of memory traffic and %llu kernel launches per forward pass",
			  human_bytes(k->bytes_total, b1, sizeof(b1)), (unsigned long long)k->launches_total);
	else
		lines_add(out, "+ saves %llu kernel launches per forward pass (bytes: some sizes unknown)",
			  (unsigned long long)k->launches_total);
	if (k->n_instances > 1)
		lines_add(out, "+ recurs %u times: one kernel serves every instance", k->n_instances);
	if (k->kind == FS_KIND_HORIZONTAL_ELEMENTWISE)
		lines_add(out, "+ sibling chains read one value: one kernel reads it once and writes each output");
	if (k->pairs)
		lines_add(out, "+ %u pairs of instances share an input (q/k, gate/up): one launch can serve a pair",
			  k->pairs);
	if (k->entry >= 0 && (d->cat.e[k->entry].n_kernels || d->cat.e[k->entry].n_transforms))
		lines_add(out, "+ an existing kernel implements it: no new code");
	else if (k->entry >= 0 && d->cat.e[k->entry].n_subsumed)
		lines_add(out, "+ an existing kernel absorbs it with the ops around it: no new code");
	else if (k->rec == FS_REC_NEEDS_TRITON)
		lines_add(out, "- no existing kernel: needs a generated (Triton / fusescan) kernel");
	if (k->cost_known && k->bytes_total < (1 << 20))
		lines_add(out, "- small: under %s per forward pass", human_bytes(1 << 20, b2, sizeof(b2)));
	if (k->entry >= 0 && d->cat.e[k->entry].constraints)
		lines_add(out, "- constraints: %s", d->cat.e[k->entry].constraints);
	if (k->risks & FS_RISK_NUMERICS)
		lines_add(out, "! numerics: casts or reductions inside; the fused kernel keeps fp32 intermediates, "
			       "so results differ from eager by rounding (verify against float64)");
	if (k->risks & FS_RISK_MULTI_OUTPUT)
		lines_add(out, "! multiple consumers: more than one value leaves the region (extra output)");
	if (k->risks & FS_RISK_DYNAMIC)
		lines_add(out, "! dynamic dims: symbolic sizes; the kernel must handle any batch / sequence length");
	if (k->risks & FS_RISK_LAYOUT)
		lines_add(out, "! layout changes inside (transpose / concatenation / copies): strided access");
}

void cand_recommendation(const struct fs_discovery *d, const struct fs_candidate *k, char *buf, size_t n)
{
	const char *kern = cand_kernel(d, k);
	switch (k->rec) {
	case FS_REC_USE_EXISTING:
		snprintf(buf, n, "use_existing_kernel (%s)", kern ? kern : "?");
		break;
	case FS_REC_NEEDS_TRITON:
		snprintf(buf, n, "needs_triton_fallback (no existing kernel: a generated Triton / CUDA kernel is needed)");
		break;
	default:
		snprintf(buf, n, "defer (%s)",
			 k->kind == FS_KIND_HORIZONTAL_GEMM || k->kind == FS_KIND_LAYOUT
				 ? "needs a change inside a GEMM or attention kernel"
				 : "saves too little to justify a kernel");
	}
}

void evo_summary(const struct fs_discovery *d, const struct fs_evolution *e, uint32_t row,
		 char *buf, size_t n)
{
	const struct fs_scan *s = d->scan;
	const struct fs_run *r = &s->runs[e->run];
	const uint32_t *c = e->counts + (size_t)row * r->n_files;
	size_t len = 0;
	buf[0] = '\0';
	for (uint32_t i = 0, j; i < r->n_files && len < n; i = j) {
		for (j = i + 1; j < r->n_files && c[j] == c[i]; j++)
			;
		const struct fs_dumpfile *a = &s->files[r->first_file + i], *b = &s->files[r->first_file + j - 1];
		if (i == j - 1)
			len += (size_t)snprintf(buf + len, n - len, "%s%03lld: %u", len ? ", " : "", (long long)a->number, c[i]);
		else
			len += (size_t)snprintf(buf + len, n - len, "%s%03lld-%03lld: %u", len ? ", " : "",
						(long long)a->number, (long long)b->number, c[i]);
	}
	for (uint32_t i = 1; i < r->n_files && len < n; i++)
		if (c[i] < c[i - 1] && c[r->n_files - 1] < c[i - 1]) {
			const struct fs_dumpfile *f = &s->files[r->first_file + i];
			snprintf(buf + len, n - len, "  (%s at %03lld %s/%s)", c[i] ? "dropped" : "gone",
				 (long long)f->number, fs_scan_str(s, f->stage), fs_scan_str(s, f->transform));
			break;
		}
}
