/*
 * discover_json.c: the discovery report as versioned JSON (schema
 * fusescan.discover/1, documented in docs/discover.md). Candidates are in rank
 * order, ids are stable for the same input, so golden tests and CI diffs
 * work. Built with cJSON.
 */
#include "report_int.h"

#include <stdlib.h>

static cJSON *str_or_null(const char *s)
{
	return s ? cJSON_CreateString(s) : cJSON_CreateNull();
}

static cJSON *lines_json(const struct lines *l)
{
	cJSON *a = cJSON_CreateArray();
	for (uint32_t i = 0; i < l->n; i++)
		cJSON_AddItemToArray(a, cJSON_CreateString(l->v[i]));
	return a;
}

static cJSON *risks_json(uint32_t risks)
{
	static const char *const names[] = {"numerics", "multi_output", "dynamic_dims", "layout"};
	cJSON *a = cJSON_CreateArray();
	for (int i = 0; i < 4; i++)
		if (risks & (1u << i))
			cJSON_AddItemToArray(a, cJSON_CreateString(names[i]));
	return a;
}

static cJSON *region_names(const struct fs_discovery *d, const struct fs_graph *g, const uint32_t *v, uint32_t n)
{
	cJSON *a = cJSON_CreateArray();
	for (uint32_t i = 0; i < n; i++)
		cJSON_AddItemToArray(a, cJSON_CreateString(fs_scan_str(d->scan, g->nodes[v[i]].name)));
	return a;
}

static cJSON *candidate_json(const struct fs_discovery *d, const struct fs_analysis *a, uint32_t rank,
			     const struct fs_candidate *k)
{
	const struct fs_mine *m = a->mine;
	const struct fs_region *r0 = &m->regions[k->instances[0]];
	cJSON *o = cJSON_CreateObject(), *ops = cJSON_CreateArray(), *sites = cJSON_CreateArray();
	char pat[1024], rec[256];
	struct lines ev = {.n = 0}, as = {.n = 0};
	cJSON_AddNumberToObject(o, "rank", rank);
	cJSON_AddStringToObject(o, "id", k->id);
	cJSON_AddStringToObject(o, "name", k->name);
	cJSON_AddStringToObject(o, "kind", fs_kind_name((enum fs_kind)k->kind));
	for (uint32_t i = 0; i < r0->n_nodes; i++)
		cJSON_AddItemToArray(ops, cJSON_CreateString(fs_scan_str(d->scan, d->scan->ops[m->g->nodes[r0->nodes[i]].op].target)));
	cJSON_AddItemToObject(o, "ops", ops);
	fs_cand_pattern(d, a, k, pat, sizeof(pat));
	cJSON_AddStringToObject(o, "pattern", pat);
	cJSON_AddNumberToObject(o, "instances", k->n_instances);
	cJSON_AddNumberToObject(o, "pairs", k->pairs);
	const char *count = fs_cand_count_pattern(d, k);
	if (count) {
		cJSON *cp = cJSON_AddObjectToObject(o, "counted_by");
		cJSON_AddStringToObject(cp, "pattern", count);
		cJSON_AddNumberToObject(cp, "matches", k->pattern_matches);
		cJSON_AddNumberToObject(cp, "crossing", k->pattern_crossing);
	} else
		cJSON_AddNullToObject(o, "counted_by");
	for (uint32_t i = 0; i < k->n_instances; i++) {
		const struct fs_region *r = &m->regions[k->instances[i]];
		cJSON_AddItemToArray(sites, region_names(d, m->g, r->nodes, r->n_nodes));
	}
	cJSON_AddItemToObject(o, "sites", sites);
	cJSON_AddBoolToObject(o, "cost_known", k->cost_known);
	cJSON_AddNumberToObject(o, "bytes_saved_per_instance", (double)k->bytes_per_instance);
	cJSON_AddNumberToObject(o, "bytes_saved_total", (double)k->bytes_total);
	cJSON_AddNumberToObject(o, "launches_saved_per_instance", k->launches_per_instance);
	cJSON_AddNumberToObject(o, "launches_saved_total", (double)k->launches_total);
	cJSON *ek = cJSON_AddObjectToObject(o, "existing_kernel");
	const char *kern = fs_cand_kernel(d, k);
	cJSON_AddBoolToObject(ek, "found", kern != NULL);
	cJSON_AddItemToObject(ek, "name", str_or_null(kern));
	cJSON_AddItemToObject(ek, "wrapper", str_or_null(fs_cand_wrapper(d, k)));
	fs_cand_evidence(d, a, k, &ev);
	cJSON_AddItemToObject(ek, "evidence", lines_json(&ev));
	cJSON_AddStringToObject(o, "recommendation", fs_rec_name(k->rec));
	fs_cand_recommendation(d, k, rec, sizeof(rec));
	cJSON_AddStringToObject(o, "recommendation_text", rec);
	if (k->refused[0]) /* the generator's reason: --apply refuses it */
		cJSON_AddStringToObject(o, "generator_refuses", k->refused);
	cJSON_AddItemToObject(o, "risks", risks_json(k->risks));
	fs_cand_assessment(d, a, k, &as);
	cJSON_AddItemToObject(o, "assessment", lines_json(&as));
	return o;
}

/* An MLIR kernel: {op, count, inputs, at (the dump it came in, or null), replaced: [op...] ([]:
 * unknown), replaced_nodes, text}. */
static cJSON *mlir_json(const struct fs_discovery *d, const struct fs_mlir_kernel *k)
{
	const struct fs_scan *s = d->scan;
	cJSON *o = cJSON_CreateObject(), *ops = cJSON_CreateArray();
	char text[600];
	cJSON_AddStringToObject(o, "op", fs_scan_str(s, s->ops[k->op].target));
	cJSON_AddNumberToObject(o, "count", k->count);
	cJSON_AddNumberToObject(o, "inputs", k->n_inputs);
	if (k->file == UINT32_MAX)
		cJSON_AddNullToObject(o, "at");
	else
		cJSON_AddNumberToObject(o, "at", (double)s->files[k->file].number);
	for (uint32_t i = 0; i < k->n_ops; i++)
		cJSON_AddItemToArray(ops, cJSON_CreateString(fs_scan_str(s, s->ops[k->ops[i]].target)));
	cJSON_AddItemToObject(o, "replaced", ops);
	cJSON_AddNumberToObject(o, "replaced_nodes", k->n_replaced);
	fs_mlir_text(d, k, text, sizeof(text));
	cJSON_AddStringToObject(o, "text", text);
	return o;
}

static cJSON *cleanups_json(const struct fs_scan *s, const struct fs_mine *m)
{
	cJSON *cl = cJSON_CreateArray();
	for (uint32_t i = 0; i < m->n_cleanups; i++) {
		cJSON *x = cJSON_CreateObject();
		cJSON_AddStringToObject(x, "kind", fs_cleanup_name((enum fs_cleanup_kind)m->cleanups[i].kind));
		cJSON_AddStringToObject(x, "node", fs_scan_str(s, m->g->nodes[m->cleanups[i].node].name));
		cJSON_AddStringToObject(x, "other", fs_scan_str(s, m->g->nodes[m->cleanups[i].other].name));
		cJSON_AddItemToArray(cl, x);
	}
	return cl;
}

static cJSON *analysis_json(const struct fs_discovery *d, const struct fs_analysis *a)
{
	const struct fs_scan *s = d->scan;
	const struct fs_module *mod = &s->modules[a->module];
	const struct fs_dumpfile *f = &s->files[mod->file];
	const struct fs_mine *m = a->mine;
	cJSON *o = cJSON_CreateObject(), *b = cJSON_CreateObject(), *c = cJSON_CreateArray();
	cJSON_AddStringToObject(o, "file", f->path);
	cJSON_AddStringToObject(o, "stage", fs_scan_str(s, f->stage));
	cJSON_AddStringToObject(o, "transform", fs_scan_str(s, f->transform));
	cJSON_AddStringToObject(o, "module", fs_scan_str(s, mod->name));
	cJSON_AddNumberToObject(o, "nodes", m->g->n_calls);
	cJSON_AddNumberToObject(o, "call_modules_inlined", a->n_inlined);
	for (uint32_t i = 0; i < a->n_bind; i++)
		cJSON_AddNumberToObject(b, fs_scan_str(s, a->bind[i].sym), (double)a->bind[i].value);
	cJSON_AddItemToObject(o, "binding", b);
	cJSON *ub = cJSON_AddArrayToObject(o, "unbound"); /* the first 8 of the symbols the binding leaves unbound */
	for (uint32_t i = 0; i < a->n_unbound && i < 8; i++)
		cJSON_AddItemToArray(ub, cJSON_CreateString(fs_scan_str(s, a->unbound[i])));
	uint32_t n = d->top && d->top < m->n_cands ? d->top : m->n_cands;
	cJSON_AddNumberToObject(o, "candidates_total", m->n_cands);
	for (uint32_t i = 0; i < n; i++)
		cJSON_AddItemToArray(c, candidate_json(d, a, i + 1, &m->cands[i]));
	cJSON_AddItemToObject(o, "candidates", c);
	for (int ref = 0; ref < 2; ref++) {
		cJSON *af = cJSON_AddArrayToObject(o, ref ? "reference_ops" : "already_fused");
		const uint32_t *count = ref ? m->reference : m->fused, *op = ref ? m->reference_op : m->fused_op;
		for (uint32_t e = 0; e < d->cat.n; e++) {
			if (!count[e])
				continue;
			cJSON *x = cJSON_CreateObject();
			cJSON_AddStringToObject(x, "name", d->cat.e[e].name);
			cJSON_AddStringToObject(x, "op", fs_scan_str(s, op[e]));
			cJSON_AddNumberToObject(x, "count", count[e]);
			cJSON_AddItemToArray(af, x);
		}
	}
	if (a->n_quant) /* only quantized graphs have the key */
		cJSON_AddItemToObject(o, "fp8_quant", fs_quant_json(d, a));
	cJSON *mk = cJSON_AddArrayToObject(o, "mlir_kernels");
	for (uint32_t i = 0; i < a->n_mlir; i++)
		cJSON_AddItemToArray(mk, mlir_json(d, &a->mlir[i]));
	cJSON_AddItemToObject(o, "cleanups", cleanups_json(s, m));
	cJSON_AddNumberToObject(o, "causal_mask_frees", m->n_freed);
	return o;
}

/* How a candidate's count fell for good: null, or {how, at (the dump's number), op, now, text}. */
static cJSON *fall_json(const struct fs_discovery *d, const struct fs_evolution *e, uint32_t k)
{
	static const char *const how[] = {"kept", "fused", "reference_op", "changed_form", "gone"};
	const struct fs_evo_row *w = &e->rows[k];
	if (w->how == FS_EVO_KEPT)
		return cJSON_CreateNull();
	const struct fs_run *r = &d->scan->runs[e->run];
	cJSON *o = cJSON_CreateObject();
	char text[400];
	cJSON_AddStringToObject(o, "how", how[w->how]);
	cJSON_AddNumberToObject(o, "at", (double)d->scan->files[r->first_file + w->at].number);
	cJSON_AddItemToObject(o, "op", str_or_null(w->op ? fs_scan_str(d->scan, w->op) : NULL));
	cJSON_AddItemToObject(o, "now", str_or_null(w->how == FS_EVO_FORM ? e->rows[w->now].id : NULL));
	fs_evo_fall(d, e, k, text, sizeof(text));
	cJSON_AddStringToObject(o, "text", text);
	return o;
}

static cJSON *run_json(const struct fs_discovery *d, uint32_t ri)
{
	const struct fs_scan *s = d->scan;
	const struct fs_run *r = &s->runs[ri];
	const struct fs_evolution *e = &d->evo[ri];
	cJSON *o = cJSON_CreateObject(), *tl = cJSON_CreateArray(), *ev = cJSON_CreateArray();
	cJSON_AddStringToObject(o, "dir", r->dir);
	cJSON_AddItemToObject(o, "log", str_or_null(r->log));
	for (uint32_t i = 0; i < r->n_files; i++) {
		const struct fs_dumpfile *f = &s->files[r->first_file + i];
		cJSON *x = cJSON_CreateObject();
		cJSON_AddStringToObject(x, "file", f->path);
		cJSON_AddNumberToObject(x, "number", (double)f->number);
		cJSON_AddStringToObject(x, "stage", fs_scan_str(s, f->stage));
		cJSON_AddStringToObject(x, "transform", fs_scan_str(s, f->transform));
		cJSON_AddNumberToObject(x, "nodes", fs_dumpfile_nodes(s, f));
		cJSON_AddBoolToObject(x, "changed", !i || !fs_dumpfiles_identical(s, f - 1, f));
		cJSON_AddItemToArray(tl, x);
	}
	cJSON_AddItemToObject(o, "timeline", tl);
	for (uint32_t k = 0; k < e->n_rows; k++) {
		cJSON *x = cJSON_CreateObject(), *cn = cJSON_CreateArray();
		char sig[24], sum[1024];
		snprintf(sig, sizeof(sig), "%016llx", (unsigned long long)e->rows[k].sig);
		cJSON_AddStringToObject(x, "id", e->rows[k].id);
		cJSON_AddStringToObject(x, "name", e->rows[k].name);
		cJSON_AddStringToObject(x, "signature", sig);
		cJSON_AddItemToObject(x, "fall", fall_json(d, e, k));
		for (uint32_t i = 0; i < r->n_files; i++)
			cJSON_AddItemToArray(cn, cJSON_CreateNumber(e->counts[(size_t)k * r->n_files + i]));
		cJSON_AddItemToObject(x, "counts", cn);
		fs_evo_summary(d, e, k, sum, sizeof(sum));
		cJSON_AddStringToObject(x, "summary", sum);
		cJSON_AddItemToArray(ev, x);
	}
	cJSON_AddItemToObject(o, "evolution", ev);
	return o;
}

int fs_discover_json(const struct fs_discovery *d, FILE *out)
{
	const struct fs_scan *s = d->scan;
	cJSON *root = cJSON_CreateObject();
	cJSON_AddStringToObject(root, "schema", FS_DISCOVER_SCHEMA);
	cJSON_AddStringToObject(root, "version", FS_VERSION);
	cJSON *a = cJSON_AddArrayToObject(root, "runs");
	for (uint32_t r = 0; r < s->n_runs; r++)
		cJSON_AddItemToArray(a, run_json(d, r));
	a = cJSON_AddArrayToObject(root, "analyses");
	for (uint32_t i = 0; i < d->n_a; i++)
		cJSON_AddItemToArray(a, analysis_json(d, &d->a[i]));
	cJSON_AddItemToObject(root, "diagnostics", fs_json_diagnostics(&s->diags));
	return fs_json_write(root, out);
}
