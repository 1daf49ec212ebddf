/*
 * candidate.c: what every discovery report says about a candidate (see
 * report_int.h): pattern, existing kernel, evidence (catalog, source tree,
 * ad.log, the run's timeline, ops the graph already calls), assessment and
 * recommendation, and count evolution across a run.
 */
#include "report_int.h"
#include "fusescan/pattern.h"

#include <stdarg.h>
#include <string.h>

/* Where a line of n bytes longer than room is cut: after the last word that
 * fits, else at the last UTF-8 sequence start that does (never inside one). */
static size_t cut_at(const char *s, size_t room)
{
	size_t k = room;
	while (k > room / 2 && s[k] != ' ')
		k--;
	if (s[k] == ' ')
		return k;
	for (k = room; k > 0 && ((unsigned char)s[k] & 0xc0) == 0x80; k--)
		;
	return k;
}

void fs_lines_add(struct lines *l, const char *fmt, ...)
{
	if (l->n == MAX_LINES)
		return;
	char *v = l->v[l->n++];
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(v, LINE, fmt, ap);
	va_end(ap);
	if (n < LINE)
		return;
	/* cut, and say so: " ... (N more bytes)" fits in what the cut frees */
	char tail[48];
	int tl = snprintf(tail, sizeof(tail), " ... (%d more bytes)", n);
	size_t k = cut_at(v, (size_t)(LINE - 1 - tl));
	snprintf(tail, sizeof(tail), " ... (%zu more bytes)", (size_t)n - k);
	memcpy(v + k, tail, strlen(tail) + 1);
}

const char *fs_human_bytes(int64_t b, char *buf, size_t n)
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

void fs_binding_text(const struct fs_discovery *d, const struct fs_analysis *a, char *buf, size_t n)
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
		fs_unbound_text(d->scan, a, names, sizeof(names));
		snprintf(buf + k, n - k, "; %s unbound: sizes that need %s are not costed, ranked by what is", names,
			 a->n_unbound == 1 ? "it" : "them");
	}
}

void fs_cand_pattern(const struct fs_discovery *d, const struct fs_analysis *a,
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

const char *fs_cand_kernel(const struct fs_discovery *d, const struct fs_candidate *k)
{
	if (k->ad_why[0])
		return NULL; /* what it would name cannot help (match/discover.c) */
	uint32_t wrapper, key = k->entry >= 0 ? fs_catalog_pick(&d->cat, &d->cat.e[k->entry], &wrapper) : 0;
	return key ? fs_scan_str(d->scan, key) : NULL;
}

const char *fs_cand_wrapper(const struct fs_discovery *d, const struct fs_candidate *k)
{
	uint32_t wrapper = 0;
	if (k->entry < 0 || !fs_catalog_pick(&d->cat, &d->cat.e[k->entry], &wrapper) || !wrapper)
		return NULL;
	const char *w = fs_scan_str(d->scan, wrapper), *dot = strchr(w, '.');
	return dot ? dot + 1 : w; /* python.name: the function's name */
}

/* Why AD's transform did not fire on the candidate, where it ran and matched nothing or is off:
 * the first step of its pattern (the catalog's wants) the chain does not have. */
static void why_not_fired(const struct fs_discovery *d, const struct fs_analysis *a, const struct fs_candidate *k,
			  const struct fs_catalog_entry *e, uint32_t ti, struct lines *out)
{
	const char *t = fs_scan_str(d->scan, e->transforms[ti]);
	const struct fs_adlog_entry *l = a->run != UINT32_MAX ? fs_adlog_find(&d->logs[a->run], t) : NULL;
	struct fs_adsetting st;
	enum fs_tdefault def = fs_catalog_tdefault(&d->cat, e, ti, &st);
	int idle = l ? l->status == FS_AD_DISABLED || l->status == FS_AD_SKIPPED || (l->status == FS_AD_MATCHES && !l->matches)
		     : def != FS_TDEF_ON;
	const struct fs_region *r = &a->mine->regions[k->instances[0]];
	char buf[600];
	if (idle && fs_catalog_why_not(&d->cat, e, ti, a->mine->g, r->nodes, r->n_nodes, buf, sizeof(buf)))
		fs_lines_add(out, "why AD did not fire: %s", buf);
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

/* Which layer of the effective config said it, in words. */
static const char *layer_words(const struct fs_discovery *d, uint32_t layer, int on, char *buf, size_t n)
{
	static const char *const by[] = {"by default", "for --model", "by --ad-config"};
	uint8_t kind = d->cat.cfg->layers[layer].kind;
	snprintf(buf, n, "%s %s%s%s", on ? "on" : "off", by[kind], kind == FS_LAYER_REGISTRY ? " " : "",
		 kind == FS_LAYER_REGISTRY && d->cat.model ? d->cat.model : "");
	return buf;
}

/* " (off by default: config/default.yaml:123, 'reason')": the effective config's layer that set
 * it, with the earlier one it overrode; else the catalog's default (and its reason) */
static void default_text(const struct fs_discovery *d, const struct fs_catalog_entry *e, uint32_t i, char *buf, size_t n)
{
	static const char *const says[] = {"on by default", "off by default", "not in default.yaml: runs where a config adds it",
					   "not in the tree's default.yaml: runs where a config adds it"};
	struct fs_adsetting st;
	enum fs_tdefault t = fs_catalog_tdefault(&d->cat, e, i, &st);
	const char *why = fs_catalog_off_reason(&d->cat, e, i, &st, t);
	char w1[200], w2[200], was[300] = "";
	if (st.layer == UINT32_MAX) {
		const int tree = t == FS_TDEF_UNLISTED && d->cat.cfg && d->cat.cfg->has_default;
		snprintf(buf, n, " (%s%s%.160s%s)", says[tree ? FS_TDEF_COUNT : t], why ? ": " : "", why ? why : "", "");
		return;
	}
	const struct fs_adlayer *l = &d->cat.cfg->layers[st.layer];
	if (st.was >= 0 && st.was != st.enabled)
		snprintf(was, sizeof(was), "; %s at %s:%u", layer_words(d, st.was_layer, st.was, w2, sizeof(w2)),
			 d->cat.cfg->layers[st.was_layer].path, st.was_line);
	snprintf(buf, n, " (%s%s: %s:%u%s%.160s%s%s)", layer_words(d, st.layer, t != FS_TDEF_OFF, w1, sizeof(w1)),
		 st.enabled < 0 && l->kind != FS_LAYER_DEFAULT ? ", listed without enabled" : "", l->path, st.line, why ? ", '" : "", why ? why : "",
		 why ? "'" : "", was);
}

/* What the run's log says of transform t, into what (the log decides over any config). */
static size_t log_text(const struct fs_discovery *d, const struct fs_analysis *a, const char *t, char *what, size_t n)
{
	const struct fs_adlog *log = &d->logs[a->run];
	const struct fs_adlog_entry *e = fs_adlog_find(log, t);
	if (!e)
		return 0;
	if (e->status == FS_AD_DISABLED)
		return (size_t)snprintf(what, n, "exists but is disabled (%s:%u; the log decides)", log->path, e->line);
	if (e->status == FS_AD_SKIPPED)
		return (size_t)snprintf(what, n, "exists but was skipped (%s:%u; the log decides)", log->path, e->line);
	if (e->status == FS_AD_RAN)
		return (size_t)snprintf(what, n, "ran, but the log ends before its summary (%s:%u; the log decides)", log->path,
					e->line);
	return (size_t)snprintf(what, n, "ran: matches=%lld (%s:%u; the log decides)", (long long)e->matches, log->path,
				e->line);
}

static void transform_evidence(const struct fs_discovery *d, const struct fs_analysis *a, const struct fs_candidate *k,
			       const struct fs_catalog_entry *en, uint32_t ti, struct lines *out)
{
	const struct fs_scan *s = d->scan;
	const char *t = fs_scan_str(s, en->transforms[ti]);
	char what[300] = "", def[600], alias[300] = "";
	size_t len = 0;
	default_text(d, en, ti, def, sizeof(def));
	int32_t al = fs_catalog_alias(&d->cat, en->transforms[ti]);
	if (al >= 0)
		snprintf(alias, sizeof(alias), "; alias of %s in this tree (%s:%u)", d->cat.found[al].detail,
			 d->cat.found[al].path, d->cat.found[al].line);
	if (a->run != UINT32_MAX) {
		len = log_text(d, a, t, what, sizeof(what));
		const struct fs_dumpfile *prev, *f = transform_dump(s, a->run, t, &prev);
		if (f && prev && len < sizeof(what))
			snprintf(what + len, sizeof(what) - len, "%sdump %s: graph %s", len ? "; " : "", f->base,
				 fs_dumpfiles_identical(s, prev, f) ? "unchanged (no rewrite)" : "changed");
	}
	fs_lines_add(out, "transform %s%s%s: %s", t, def, alias, what[0] ? what : "not in this run");
	why_not_fired(d, a, k, en, ti, out);
}

static void source_evidence(const struct fs_discovery *d, const char *sym, struct lines *out)
{
	int32_t i = fs_catalog_find_evidence(&d->cat, sym, 0);
	if (i >= 0)
		fs_lines_add(out, "source: %s:%u %s", d->cat.found[i].path, d->cat.found[i].line, sym);
	else if (d->cat.files_indexed)
		fs_lines_add(out, "source: %s not registered in the indexed tree (%u files)", sym, d->cat.files_indexed);
}

/* An op of the entry, as the tree has it: registered, a wrapper over a
 * registered op, or neither (then it is not recommended). */
static void op_evidence(const struct fs_discovery *d, uint32_t key, struct lines *out)
{
	const char *k = fs_scan_str(d->scan, key), *dot = strchr(k, '.');
	int32_t i = fs_catalog_registered(&d->cat, key);
	char sym[200];
	if (i == -2)
		return;
	if (dot && dot - k == 6 && !memcmp(k, "python", 6)) {
		snprintf(sym, sizeof(sym), "wrapper:%s", dot + 1);
		int32_t w = fs_catalog_find_evidence(&d->cat, sym, 0);
		if (w >= 0)
			return fs_lines_add(out, "source: %s:%u %s is a Python wrapper over %s%s", d->cat.found[w].path,
					    d->cat.found[w].line, dot + 1, d->cat.found[w].detail,
					    i >= 0 ? "" : ", which the tree does not register");
		return fs_lines_add(out, "source: no function %s calling a registered op in the indexed tree", dot + 1);
	}
	snprintf(sym, sizeof(sym), "%.*s::%s", dot ? (int)(dot - k) : 0, k, dot ? dot + 1 : k);
	source_evidence(d, sym, out);
}

static size_t list_ops(const struct fs_discovery *d, const char *head, const uint32_t *ops, uint32_t n, char *buf,
		       size_t len, size_t k)
{
	for (uint32_t i = 0; i < n && k < len; i++)
		k += (size_t)snprintf(buf + k, len - k, "%s%s", i ? ", " : k ? head : head + 2, fs_scan_str(d->scan, ops[i]));
	return k;
}

/* What mlir_elementwise_fusion's converter (mlir/fx_to_mlir.py) lowers: an
 * op key and, where it takes one overload only, that overload. Every other op
 * (comparisons, where, views, cat, softmax, ...) stays opaque to it: a chain
 * holding one is cut there. */
static const struct {
	const char *key, *overload;
} mlir_lowers[] = {
	{"add", NULL}, {"mul", NULL}, {"sub", NULL}, {"neg", NULL}, {"silu", NULL}, {"gelu", NULL},
	{"relu", NULL}, {"tanh", NULL}, {"sigmoid", NULL}, {"exp", NULL}, {"softplus", NULL}, {"rsqrt", NULL},
	{"sqrt", NULL}, {"pow", "Tensor_Scalar"}, {"mean", "dim"}, {"cast", NULL}, {"getitem", NULL},
	{"auto_deploy.torch_rmsnorm", NULL}, {"auto_deploy.flashinfer_rms_norm", NULL}, {"auto_deploy.triton_rms_norm", NULL},
};

static int mlir_lowered(const struct fs_scan *s, const struct fs_op *op)
{
	const char *key = fs_scan_str(s, op->key), *ov = fs_scan_str(s, op->overload);
	for (size_t j = 0; j < sizeof(mlir_lowers) / sizeof(mlir_lowers[0]); j++)
		if (!strcmp(key, mlir_lowers[j].key))
			return !mlir_lowers[j].overload || !strcmp(ov, mlir_lowers[j].overload);
	return 0;
}

/* Why mlir_elementwise_fusion would not take the whole chain, or NULL. */
static const char *mlir_gap(const struct fs_discovery *d, const struct fs_analysis *a, const struct fs_candidate *k,
			    char *buf, size_t n)
{
	const struct fs_scan *s = d->scan;
	const struct fs_region *r = &a->mine->regions[k->instances[0]];
	if (k->kind == FS_KIND_LAYOUT || k->kind == FS_KIND_HORIZONTAL_GEMM)
		return "views and GEMMs are not its to fuse";
	for (uint32_t i = 0; i < r->n_nodes; i++) {
		const struct fs_op *op = &s->ops[a->mine->g->nodes[r->nodes[i]].op];
		if (!mlir_lowered(s, op)) {
			snprintf(buf, n, "its converter leaves %s opaque: the chain is cut there", fs_scan_str(s, op->target));
			return buf;
		}
	}
	return NULL;
}

/* What AutoDeploy's generic fusion would do with the chain, were it on; what
 * the run's log says of it, where it says anything, decides over the default. */
static void mlir_evidence(const struct fs_discovery *d, const struct fs_analysis *a, const struct fs_candidate *k,
			  struct lines *out)
{
	static const char t[] = "mlir_elementwise_fusion";
	char why[256], def[300], what[300] = "", cover[400];
	for (uint32_t e = 0; e < d->cat.n; e++)
		for (uint32_t i = 0; i < d->cat.e[e].n_transforms; i++) {
			if (strcmp(fs_scan_str(d->scan, d->cat.e[e].transforms[i]), t))
				continue;
			const char *gap = mlir_gap(d, a, k, why, sizeof(why));
			const struct fs_adlog_entry *l = a->run != UINT32_MAX ? fs_adlog_find(&d->logs[a->run], t) : NULL;
			int ran = l && (l->status == FS_AD_RAN || l->status == FS_AD_MATCHES);
			default_text(d, &d->cat.e[e], i, def, sizeof(def));
			if (a->run != UINT32_MAX && log_text(d, a, t, what + 2, sizeof(what) - 2))
				memcpy(what, ": ", 2);
			if (gap)
				snprintf(cover, sizeof(cover), "does not cover it (%s)", gap);
			else
				snprintf(cover, sizeof(cover), "%s%s", ran ? "its converter takes every op of this chain, yet this graph still has it unfused"
									  : "would generate one Triton kernel for it",
					 k->kind == FS_KIND_GEMM_EPILOGUE ? ", after the GEMM, not in its epilogue" : "");
			return fs_lines_add(out, "transform %s%s%s%s%s", t, def, what, what[0] ? "; " : ": ", cover);
		}
}

const char *fs_cand_count_pattern(const struct fs_discovery *d, const struct fs_candidate *k)
{
	const struct fs_patlib *lib = d->cat.confirm;
	return lib && k->pattern >= 0 && (uint32_t)k->pattern < lib->n ? lib->v[k->pattern].name : NULL;
}

void fs_cand_evidence(const struct fs_discovery *d, const struct fs_analysis *a,
		      const struct fs_candidate *k, struct lines *out)
{
	const struct fs_region *r = &a->mine->regions[k->instances[0]];
	const struct fs_graph *g = a->mine->g;
	fs_lines_add(out, "first site: %%%s (line %u) .. %%%s (line %u)", fs_scan_str(d->scan, g->nodes[r->nodes[0]].name),
		     g->nodes[r->nodes[0]].line, fs_scan_str(d->scan, g->nodes[r->nodes[r->n_nodes - 1]].name),
		     g->nodes[r->nodes[r->n_nodes - 1]].line);
	if (k->entry < 0) {
		fs_lines_add(out, "catalog: no entry implements this chain");
		return mlir_evidence(d, a, k, out);
	}
	const struct fs_catalog_entry *e = &d->cat.e[k->entry];
	char ks[512] = "";
	size_t len = list_ops(d, "; ", e->kernels, e->n_kernels, ks, sizeof(ks), 0);
	len = list_ops(d, "; wrappers ", e->wrappers, e->n_wrappers, ks, sizeof(ks), len);
	len = list_ops(d, "; subsumed by ", e->subsumed, e->n_subsumed, ks, sizeof(ks), len);
	len = list_ops(d, "; reference ops (unfused) ", e->reference, e->n_reference, ks, sizeof(ks), len);
	fs_lines_add(out, "catalog: %s (line %u)%s%s%s%s", e->name, e->line, len ? " -> " : "", ks,
		     e->evidence ? "; " : "", e->evidence ? e->evidence : "");
	const char *pat = fs_cand_count_pattern(d, k);
	char cross[160] = "";
	if (k->pattern_crossing)
		snprintf(cross, sizeof(cross), "; %u more cross%s a module boundary: match counts each GraphModule alone",
			 k->pattern_crossing, k->pattern_crossing == 1 ? "es" : "");
	if (pat)
		fs_lines_add(out, "counted by pattern %s: %u match%s in these sites (fusescan match -p %s)%s", pat,
			     k->pattern_matches, k->pattern_matches == 1 ? "" : "es", pat, cross);
	const uint32_t *lists[] = {e->kernels, e->wrappers, e->subsumed};
	const uint32_t ns[] = {e->n_kernels, e->n_wrappers, e->n_subsumed};
	for (uint32_t l = 0; l < 3; l++)
		for (uint32_t i = 0; i < ns[l]; i++)
			op_evidence(d, lists[l][i], out);
	for (uint32_t i = 0; i < e->n_transforms; i++) {
		char sym[200];
		snprintf(sym, sizeof(sym), "transform:%s", fs_scan_str(d->scan, e->transforms[i]));
		transform_evidence(d, a, k, e, i, out);
		if (d->cat.files_indexed)
			source_evidence(d, sym, out);
	}
	if (a->mine->fused[k->entry])
		fs_lines_add(out, "this graph already calls %s x%u", fs_scan_str(d->scan, a->mine->fused_op[k->entry]),
			     a->mine->fused[k->entry]);
	if (a->mine->reference[k->entry])
		fs_lines_add(out, "this graph calls the reference op %s x%u (the chain matched, still unfused)",
			     fs_scan_str(d->scan, a->mine->reference_op[k->entry]), a->mine->reference[k->entry]);
	mlir_evidence(d, a, k, out);
}

/* A GELU inside: tanh or erf cannot be read from the dump (approximate= is a
 * keyword argument, never printed); only the user can say (--gelu). */
static void gelu_note(const struct fs_discovery *d, const struct fs_analysis *a, const struct fs_candidate *k,
		      struct lines *out)
{
	static const char *const said[] = {NULL, "tanh", "erf"};
	const struct fs_region *r = &a->mine->regions[k->instances[0]];
	int has = 0;
	for (uint32_t i = 0; i < r->n_nodes && !has; i++)
		has = !strcmp(fs_scan_str(d->scan, d->scan->ops[a->mine->g->nodes[r->nodes[i]].op].key), "gelu");
	if (has && d->cat.gelu == FS_GELU_UNSTATED)
		fs_lines_add(out, "! gelu: tanh or erf is unknowable from the dump (approximate= is a keyword argument, never "
			          "printed); state it with --gelu tanh|erf (a kernel for it assumes tanh until told)");
	else if (has)
		fs_lines_add(out, "+ gelu: %s, as stated (--gelu)", said[d->cat.gelu]);
}

static int among_keys(const struct fs_discovery *d, const char *key, const uint32_t *ops, uint32_t n)
{
	for (uint32_t i = 0; i < n; i++)
		if (!strcmp(fs_scan_str(d->scan, ops[i]), key))
			return 1;
	return 0;
}

void fs_cand_assessment(const struct fs_discovery *d, const struct fs_analysis *a,
		        const struct fs_candidate *k, struct lines *out)
{
	char b1[32], b2[32];
	(void)a;
	if (k->cost_known)
		fs_lines_add(out, "+ saves %s of memory traffic and %llu kernel launches per forward pass",
			     fs_human_bytes(k->bytes_total, b1, sizeof(b1)), (unsigned long long)k->launches_total);
	else
		fs_lines_add(out, "+ saves %llu kernel launches per forward pass (bytes: some sizes unknown)",
			     (unsigned long long)k->launches_total);
	if (k->n_instances > 1)
		fs_lines_add(out, "+ recurs %u times: one kernel serves every instance", k->n_instances);
	if (k->kind == FS_KIND_HORIZONTAL_ELEMENTWISE)
		fs_lines_add(out, "+ sibling chains read one value: one kernel reads it once and writes each output");
	if (k->pairs)
		fs_lines_add(out, "+ %u pairs of instances share an input (q/k, gate/up): one launch can serve a pair",
			     k->pairs);
	const char *kern = fs_cand_kernel(d, k);
	const struct fs_catalog_entry *e = k->entry >= 0 ? &d->cat.e[k->entry] : NULL;
	if (kern && !among_keys(d, kern, e->subsumed, e->n_subsumed))
		fs_lines_add(out, "+ an existing kernel implements it: no new code");
	else if (kern)
		fs_lines_add(out, "+ an existing kernel absorbs it with the ops around it: no new code");
	else if (k->refused[0])
		fs_lines_add(out, "- no existing kernel, and fusescan's generator does not take it: %s", k->refused);
	else if (e && d->cat.files_indexed && (e->n_kernels || e->n_subsumed))
		fs_lines_add(out, "- the indexed tree registers none of the catalog's kernels for it: a kernel is needed");
	else if (k->rec == FS_REC_NEEDS_TRITON)
		fs_lines_add(out, "- no existing kernel: needs a generated (Triton / fusescan) kernel");
	if (k->cost_known && k->bytes_total < (1 << 20))
		fs_lines_add(out, "- small: under %s per forward pass", fs_human_bytes(1 << 20, b2, sizeof(b2)));
	if (k->entry >= 0 && d->cat.e[k->entry].constraints)
		fs_lines_add(out, "- constraints: %s", d->cat.e[k->entry].constraints);
	if (k->risks & FS_RISK_NUMERICS)
		fs_lines_add(out, "! numerics: casts or reductions inside; the fused kernel keeps fp32 intermediates, "
			          "so results differ from eager by rounding (verify against float64)");
	if (k->risks & FS_RISK_MULTI_OUTPUT)
		fs_lines_add(out, "! multiple consumers: more than one value leaves the region (extra output)");
	if (k->risks & FS_RISK_DYNAMIC)
		fs_lines_add(out, "! dynamic dims: symbolic sizes; the kernel must handle any batch / sequence length");
	if (k->risks & FS_RISK_LAYOUT)
		fs_lines_add(out, "! layout changes inside (transpose / concatenation / copies): strided access");
	gelu_note(d, a, k, out);
}

void fs_cand_recommendation(const struct fs_discovery *d, const struct fs_candidate *k, char *buf, size_t n)
{
	const char *kern = fs_cand_kernel(d, k), *wrapper = fs_cand_wrapper(d, k);
	switch (k->rec) {
	case FS_REC_USE_EXISTING:
		if (wrapper)
			snprintf(buf, n, "use_existing_kernel (%s, through the Python wrapper %s, as AutoDeploy inserts it)",
				 kern ? kern : "?", wrapper);
		else
			snprintf(buf, n, "use_existing_kernel (%s)", kern ? kern : "?");
		break;
	case FS_REC_NEEDS_TRITON:
		snprintf(buf, n, "needs_triton_fallback (no existing kernel: a generated Triton / CUDA kernel is needed)");
		break;
	default:
		if (k->ad_why[0])
			snprintf(buf, n, "defer (%s)", k->ad_why);
		else if (k->refused[0])
			snprintf(buf, n, "defer (no existing kernel, and fusescan's generator does not take it: %s)", k->refused);
		else
			snprintf(buf, n, "defer (%s)",
				 k->kind == FS_KIND_HORIZONTAL_GEMM || k->kind == FS_KIND_LAYOUT
					 ? "needs a change inside a GEMM or attention kernel"
					 : "saves too little to justify a kernel");
	}
}

/* " (fused at 028 post_load_fusion/fuse_rmsnorm into OP)" and the like: how row's count fell. */
void fs_evo_fall(const struct fs_discovery *d, const struct fs_evolution *e, uint32_t row, char *buf, size_t n)
{
	const struct fs_scan *s = d->scan;
	const struct fs_evo_row *w = &e->rows[row];
	const struct fs_run *r = &s->runs[e->run];
	buf[0] = '\0';
	if (w->how == FS_EVO_KEPT)
		return;
	const struct fs_dumpfile *f = &s->files[r->first_file + w->at];
	const char *part = e->counts[(size_t)row * r->n_files + w->at] ? "partly " : "";
	char at[200];
	snprintf(at, sizeof(at), "at %03lld %s/%s", (long long)f->number, fs_scan_str(s, f->stage), fs_scan_str(s, f->transform));
	if (w->how == FS_EVO_FUSED)
		snprintf(buf, n, "%sfused %s into %s", part, at, fs_scan_str(s, w->op));
	else if (w->how == FS_EVO_REFERENCE)
		snprintf(buf, n, "%sreplaced by reference op %s %s, not fused", part, fs_scan_str(s, w->op), at);
	else if (w->how == FS_EVO_FORM)
		snprintf(buf, n, "%schanged form %s: now %s, still unfused", part, at, e->rows[w->now].id);
	else
		snprintf(buf, n, "%sgone %s: no fused op, reference op or other form in its place", part, at);
}

void fs_evo_summary(const struct fs_discovery *d, const struct fs_evolution *e, uint32_t row,
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
	char fall[400];
	fs_evo_fall(d, e, row, fall, sizeof(fall));
	if (fall[0] && len < n)
		snprintf(buf + len, n - len, "  (%s)", fall);
}

/* An op as a reader names it: aten's by name (with its overload where that
 * says something: to.dtype, mean.dim), others by key. */
static const char *op_short(const struct fs_scan *s, uint32_t op, char *buf, size_t n)
{
	const struct fs_op *o = &s->ops[op];
	const char *ov = fs_scan_str(s, o->overload);
	if (strcmp(fs_scan_str(s, o->ns), "aten"))
		return fs_scan_str(s, o->key);
	int plain = !ov[0] || !strcmp(ov, "default") || !strcmp(ov, "Tensor") || !strcmp(ov, "Scalar");
	snprintf(buf, n, "%s%s%s", fs_scan_str(s, o->name), plain ? "" : ".", plain ? "" : ov);
	return buf;
}

void fs_mlir_text(const struct fs_discovery *d, const struct fs_mlir_kernel *k, char *buf, size_t n)
{
	const struct fs_scan *s = d->scan;
	size_t len = 0;
	if (!k->n_replaced) {
		const char *why = k->file == UINT32_MAX ? "a file given on its own: no dump before it"
				  : k->before == UINT32_MAX ? "the run holds no dump before it"
							    : "the dump before it has no node of its name";
		snprintf(buf, n, "an MLIR kernel reading %u tensor%s (%s: the ops it replaced are unknown)", k->n_inputs,
			 k->n_inputs == 1 ? "" : "s", why);
		return;
	}
	len += (size_t)snprintf(buf, n, "replaced ");
	for (uint32_t i = 0; i < k->n_ops && len < n; i++) {
		char b[128];
		len += (size_t)snprintf(buf + len, n - len, "%s%s", i ? ", " : "", op_short(s, k->ops[i], b, sizeof(b)));
	}
	const struct fs_dumpfile *f = &s->files[k->file];
	if (len < n)
		snprintf(buf + len, n - len, " at %03lld %s/%s (%u node%s read from %s)", (long long)f->number,
			 fs_scan_str(s, f->stage), fs_scan_str(s, f->transform), k->n_replaced, k->n_replaced == 1 ? "" : "s",
			 s->files[k->before].base);
}
