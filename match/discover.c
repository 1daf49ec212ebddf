/*
 * discover.c: runs discovery over a scan (see fusescan/discover.h): picks
 * the graphs to analyse, loads the catalog (built in, or --catalog), indexes
 * --kernels-from, reads each run's ad.log, mines, and counts every
 * candidate signature in every distinct graph of each run (identical graphs
 * are mined once) so the report can say at which transform a chain went away.
 */
#include "fusescan/discover.h"
#include "fusescan/matchrun.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

extern const struct fs_embedded fs_builtin_catalog[]; /* kernels/catalog.txt */

void fs_catalog_load_default(struct fs_catalog *c, const char *path, struct fs_diags *d)
{
	if (path)
		fs_catalog_load(c, path, d);
	else
		fs_catalog_parse(c, "kernels/catalog.txt (built in)", fs_builtin_catalog[0].data,
				 fs_builtin_catalog[0].len, d);
	c->confirm = fs_xmalloc(sizeof(*c->confirm));
	fs_patlib_init(c->confirm);
	fs_patlib_load_builtin(c->confirm, d);
}

static int names_dump(const struct fs_dumpfile *f, const char *dump)
{
	if (!strcmp(f->base, dump) || !strcmp(f->path, dump))
		return 1;
	char *end;
	long long v = strtoll(dump, &end, 10);
	return dump[0] >= '0' && dump[0] <= '9' && !*end && f->number == v;
}

/* The file to analyse in run r: its last parsed dump, or the one --dump names. */
static int32_t pick_file(const struct fs_scan *s, const struct fs_run *r, const char *dump)
{
	for (uint32_t i = r->n_files; i-- > 0;) {
		const struct fs_dumpfile *f = &s->files[r->first_file + i];
		if (f->n_modules && !f->n_errors && (!dump || names_dump(f, dump)))
			return (int32_t)(r->first_file + i);
	}
	return -1;
}

static uint32_t bind_dims(struct fs_scan *s, const struct fs_graph *g,
			  const struct fs_discover_opts *o, struct fs_binding *b)
{
	if (o->bind) {
		uint32_t n = o->n_bind < FS_DISCOVER_BIND ? o->n_bind : FS_DISCOVER_BIND;
		memcpy(b, o->bind, n * sizeof(*b));
		return n;
	}
	return fs_bind_default(s, g, o->tokens, b, FS_DISCOVER_BIND);
}

void fs_unbound_text(const struct fs_scan *s, const struct fs_analysis *a, char *buf, size_t n)
{
	size_t k = 0;
	buf[0] = '\0';
	for (uint32_t i = 0; i < a->n_unbound && i < 8 && k < n; i++)
		k += (size_t)snprintf(buf + k, n - k, "%s%s", i ? ", " : "", fs_scan_str(s, a->unbound[i]));
	if (a->n_unbound > 8 && k < n)
		snprintf(buf + k, n - k, " and %u more", a->n_unbound - 8);
}

/* inlined: the graph to mine instead of the module's (owned by the analysis) */
static void analyse(struct fs_discovery *d, uint32_t module, uint32_t run, struct fs_graph *inlined,
		    uint32_t n_inlined, const struct fs_discover_opts *o)
{
	FS_GROW(d->a, d->cap_a, d->n_a + 1);
	struct fs_analysis *a = &d->a[d->n_a++];
	memset(a, 0, sizeof(*a));
	a->module = module;
	a->run = run;
	a->inlined = inlined;
	a->n_inlined = n_inlined;
	const struct fs_graph *g = inlined ? inlined : d->scan->modules[module].graph;
	a->n_bind = bind_dims(d->scan, g, o, a->bind);
	a->n_unbound = fs_unbound_syms(d->scan, g, a->bind, a->n_bind, a->unbound, 8);
	if (a->n_unbound && a->n_bind) { /* without a binding nothing symbolic is costed, and the report says so */
		char names[200];
		fs_unbound_text(d->scan, a, names, sizeof(names));
		fs_diag_add(&d->scan->diags, FS_WARNING, d->scan->files[d->scan->modules[module].file].path, 0, 0, NULL, 0,
			    "%s unbound: the sizes that need %s are not costed (bind %s with --dims)", names,
			    a->n_unbound == 1 ? "it" : "them", a->n_unbound == 1 ? "it" : "them");
	}
	struct fs_mine_opts mo = {&d->cat, a->bind, a->n_bind};
	a->mine = fs_mine_graph(d->scan, g, &mo);
	fs_mlir_trace(d->scan, a);
	fs_quant_trace(&d->cat, a);
}

/* Each module of a file; or, where its root calls the others, the root with
 * their nodes in place of the calls: chains a module boundary cuts are whole. */
static void analyse_file(struct fs_discovery *d, uint32_t file, uint32_t run,
			 const struct fs_discover_opts *o)
{
	const struct fs_dumpfile *f = &d->scan->files[file];
	uint32_t n = 0;
	struct fs_graph *g = o->inline_calls ? fs_scan_inline(d->scan, file, &n) : NULL;
	for (uint32_t m = 0; g && m < f->n_modules; m++)
		if (!strcmp(fs_scan_str(d->scan, d->scan->modules[f->first_module + m].name), "(root)"))
			return analyse(d, f->first_module + m, run, g, n, o);
	for (uint32_t m = 0; m < f->n_modules; m++)
		analyse(d, f->first_module + m, run, NULL, 0, o);
}

static uint32_t evo_row(struct fs_evolution *e, uint32_t n_files, const struct fs_candidate *k,
			uint32_t *cap)
{
	for (uint32_t i = 0; i < e->n_rows; i++)
		if (!strcmp(e->rows[i].id, k->id))
			return i;
	FS_GROW(e->rows, *cap, e->n_rows + 1);
	e->counts = fs_xrealloc(e->counts, (size_t)(e->n_rows + 1) * n_files * sizeof(uint32_t));
	memset(e->counts + (size_t)e->n_rows * n_files, 0, n_files * sizeof(uint32_t));
	struct fs_evo_row *w = &e->rows[e->n_rows];
	memset(w, 0, sizeof(*w));
	snprintf(w->id, sizeof(w->id), "%s", k->id);
	snprintf(w->name, sizeof(w->name), "%s", k->name);
	w->sig = k->sig;
	w->entry = k->entry;
	return e->n_rows++;
}

/* What every file of a run calls, per catalog entry: nodes of its fused
 * kernels and of its reference ops, with one such op each (fs_mine). */
struct evo_ops {
	uint32_t n_entries;
	uint32_t *fused, *fused_op, *reference, *reference_op; /* n_files x n_entries */
};

/* A graph's candidates and fused / reference ops, added to file fi's column. */
static void evo_add(struct fs_evolution *e, struct evo_ops *x, uint32_t n_files, uint32_t fi,
		    const struct fs_mine *m, uint32_t *cap)
{
	for (uint32_t c = 0; c < m->n_cands; c++) {
		uint32_t row = evo_row(e, n_files, &m->cands[c], cap); /* may move counts */
		e->counts[(size_t)row * n_files + fi] += m->cands[c].n_instances;
	}
	for (uint32_t i = 0; i < x->n_entries; i++) {
		size_t at = (size_t)fi * x->n_entries + i;
		x->fused[at] += m->fused[i];
		x->reference[at] += m->reference[i];
		x->fused_op[at] = x->fused_op[at] ? x->fused_op[at] : m->fused_op[i];
		x->reference_op[at] = x->reference_op[at] ? x->reference_op[at] : m->reference_op[i];
	}
}

/* Whether entry i's fused (or reference) ops rose from file fi-1 to fi: their op, or 0. */
static uint32_t evo_rose(const struct evo_ops *x, uint32_t fi, uint32_t i, int reference)
{
	const uint32_t *n = reference ? x->reference : x->fused, *op = reference ? x->reference_op : x->fused_op;
	size_t now = (size_t)fi * x->n_entries + i, was = now - x->n_entries;
	return n[now] > n[was] ? op[now] : 0;
}

/* Row r's fall at file fi, in words of enum fs_evo_how: its own entry's
 * fused kernel came in; else a candidate of its name rose (another form);
 * else its entry's reference op; else any entry's fused, then reference op. */
static void evo_how(struct fs_evolution *e, const struct evo_ops *x, uint32_t n_files, uint32_t r, uint32_t fi)
{
	struct fs_evo_row *w = &e->rows[r];
	w->at = fi;
	if (w->entry >= 0 && (w->op = evo_rose(x, fi, (uint32_t)w->entry, 0))) {
		w->how = FS_EVO_FUSED;
		return;
	}
	for (uint32_t o = 0; o < e->n_rows; o++) {
		const uint32_t *c = e->counts + (size_t)o * n_files;
		if (o != r && !strcmp(e->rows[o].name, w->name) && c[fi] > c[fi - 1]) {
			w->how = FS_EVO_FORM, w->now = o;
			return;
		}
	}
	if (w->entry >= 0 && (w->op = evo_rose(x, fi, (uint32_t)w->entry, 1))) {
		w->how = FS_EVO_REFERENCE;
		return;
	}
	for (int ref = 0; ref < 2; ref++)
		for (uint32_t i = 0; i < x->n_entries; i++)
			if ((w->op = evo_rose(x, fi, i, ref))) {
				w->how = ref ? FS_EVO_REFERENCE : FS_EVO_FUSED;
				return;
			}
	w->how = FS_EVO_GONE;
}

/* Each row's first fall that the run's last file does not recover from. */
static void evo_falls(struct fs_evolution *e, const struct evo_ops *x, uint32_t n_files)
{
	for (uint32_t r = 0; r < e->n_rows; r++) {
		const uint32_t *c = e->counts + (size_t)r * n_files;
		for (uint32_t i = 1; i < n_files; i++)
			if (c[i] < c[i - 1] && c[n_files - 1] < c[i - 1]) {
				evo_how(e, x, n_files, r, i);
				break;
			}
	}
}

/* The mine of graph g, mined once per distinct graph (seen / mines, n_seen of them). */
static const struct fs_mine *evo_mine(struct fs_discovery *d, const struct fs_graph *g, const struct fs_graph **seen,
				      struct fs_mine **mines, uint32_t *n_seen, const struct fs_discover_opts *o)
{
	uint32_t k = 0;
	while (k < *n_seen && seen[k] != g)
		k++;
	if (k == *n_seen) {
		struct fs_binding b[16];
		struct fs_mine_opts mo = {&d->cat, b, bind_dims(d->scan, g, o, b)};
		seen[k] = g;
		mines[(*n_seen)++] = fs_mine_graph(d->scan, g, &mo);
	}
	return mines[k];
}

/* Counts of every candidate in every file of a run, and how each fell; each
 * distinct graph is mined once. */
static void evolve(struct fs_discovery *d, uint32_t run, const struct fs_discover_opts *o)
{
	const struct fs_scan *s = d->scan;
	const struct fs_run *r = &s->runs[run];
	struct fs_evolution *e = &d->evo[run];
	const struct fs_graph **seen = fs_xcalloc(s->n_modules + 1, sizeof(*seen));
	struct fs_mine **mines = fs_xcalloc(s->n_modules + 1, sizeof(*mines));
	uint32_t n_seen = 0, cap = 0, ne = d->cat.n;
	size_t cells = (size_t)r->n_files * ne + 1;
	struct evo_ops x = {ne, fs_xcalloc(cells, 4), fs_xcalloc(cells, 4), fs_xcalloc(cells, 4), fs_xcalloc(cells, 4)};
	e->run = run;
	for (uint32_t fi = 0; fi < r->n_files; fi++) {
		const struct fs_dumpfile *f = &s->files[r->first_file + fi];
		uint32_t n_inlined;
		struct fs_graph *inl = o->inline_calls ? fs_scan_inline(s, r->first_file + fi, &n_inlined) : NULL;
		if (inl) { /* the file as one graph, as analyse_file takes it */
			struct fs_binding b[16];
			struct fs_mine_opts mo = {&d->cat, b, bind_dims(d->scan, inl, o, b)};
			struct fs_mine *mi = fs_mine_graph(s, inl, &mo);
			evo_add(e, &x, r->n_files, fi, mi, &cap);
			fs_mine_free(mi);
			fs_graph_free(inl);
			continue;
		}
		for (uint32_t mi = 0; mi < f->n_modules && !f->n_errors; mi++)
			evo_add(e, &x, r->n_files, fi, evo_mine(d, s->modules[f->first_module + mi].graph, seen, mines, &n_seen, o),
				&cap);
	}
	evo_falls(e, &x, r->n_files);
	for (uint32_t k = 0; k < n_seen; k++)
		fs_mine_free(mines[k]);
	free(mines);
	free(seen);
	free(x.fused), free(x.fused_op), free(x.reference), free(x.reference_op);
}

/* A candidate whose advice is an AD transform that cannot help it (it ran and
 * matched nothing, or AD keeps it off for a reason) is deferred, and says why. */
static void ad_verdicts(struct fs_discovery *d, struct fs_analysis *a)
{
	const struct fs_adlog *log = a->run != UINT32_MAX ? &d->logs[a->run] : NULL;
	for (uint32_t i = 0; a->mine && i < a->mine->n_cands; i++) {
		struct fs_candidate *k = &a->mine->cands[i];
		uint32_t w, pick = k->entry >= 0 && k->rec == FS_REC_USE_EXISTING ? fs_catalog_pick(&d->cat, &d->cat.e[k->entry], &w) : 0;
		const struct fs_catalog_entry *e = pick ? &d->cat.e[k->entry] : NULL;
		const struct fs_region *r = &a->mine->regions[k->instances[0]];
		for (uint32_t t = 0; e && t < e->n_transforms; t++)
			if (e->transforms[t] == pick &&
			    fs_catalog_ad_blocked(&d->cat, log, e, t, a->mine->g, r->nodes, r->n_nodes, k->ad_why, sizeof(k->ad_why)))
				k->rec = FS_REC_DEFER;
	}
}

struct fs_discovery *fs_discover(struct fs_scan *s, const struct fs_discover_opts *o)
{
	struct fs_discovery *d = fs_xcalloc(1, sizeof(*d));
	d->scan = s;
	d->top = o->top;
	d->catalog = o->catalog;
	fs_catalog_init(&d->cat, s);
	d->cat.gelu = o->gelu;
	fs_catalog_load_default(&d->cat, o->catalog, &s->diags);
	if (o->kernels_from)
		fs_catalog_index_tree(&d->cat, o->kernels_from, &s->diags);
	d->cat.model = o->model;
	fs_catalog_configure(&d->cat, o->ad_configs, o->n_ad_configs, o->model, o->config_id, &s->diags);
	d->logs = fs_xcalloc(s->n_runs + 1, sizeof(*d->logs));
	d->evo = fs_xcalloc(s->n_runs + 1, sizeof(*d->evo));
	for (uint32_t r = 0; r < s->n_runs; r++) {
		fs_adlog_init(&d->logs[r]);
		if (s->runs[r].log)
			fs_adlog_load(&d->logs[r], s->runs[r].log, &s->diags);
		int32_t f = pick_file(s, &s->runs[r], o->dump);
		if (f < 0 && o->dump)
			fs_diag_add(&s->diags, FS_ERROR, s->runs[r].dir, 0, 0, NULL, 0,
				    "--dump %s: no such parsed dump in this run", o->dump);
		if (f >= 0)
			analyse_file(d, (uint32_t)f, r, o);
		evolve(d, r, o);
	}
	for (uint32_t f = 0; f < s->n_files; f++) {
		const struct fs_dumpfile *x = &s->files[f];
		if (x->run != UINT32_MAX || !x->n_modules)
			continue;
		if (o->dump && !names_dump(x, o->dump))
			fs_diag_add(&s->diags, FS_ERROR, x->path, 0, 0, NULL, 0, "--dump %s: this file is not that dump", o->dump);
		else
			analyse_file(d, f, UINT32_MAX, o);
	}
	if (!d->n_a) {
		fs_discovery_free(d);
		return NULL;
	}
	for (uint32_t i = 0; i < d->n_a; i++)
		ad_verdicts(d, &d->a[i]);
	return d;
}

void fs_discovery_free(struct fs_discovery *d)
{
	if (!d)
		return;
	for (uint32_t i = 0; i < d->n_a; i++) {
		fs_mine_free(d->a[i].mine);
		fs_graph_free(d->a[i].inlined);
		free(d->a[i].mlir);
		free(d->a[i].quant);
	}
	free(d->a);
	for (uint32_t r = 0; r < d->scan->n_runs; r++) {
		fs_adlog_release(&d->logs[r]);
		free(d->evo[r].rows);
		free(d->evo[r].counts);
	}
	free(d->logs);
	free(d->evo);
	fs_catalog_release(&d->cat);
	free(d);
}
