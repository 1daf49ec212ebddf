/*
 * cmd_fuse.c: `fusescan fuse --apply ID PATH` (also `fusescan --apply ID
 * PATH`): applies approved rewrites to one graph. ID is a candidate id from
 * the discovery report or a pattern name; --approvals FILE lists several.
 * Writes into --out DIR: the after-dump (same file name), its unified diff,
 * the summary line and before / after renders of the first site; then the
 * numerics check, the generated kernels and their tuning (numerics.txt /
 * .json, fused.cu; --emit DIR: the kernel for ahead-of-time use; --scaffold
 * DIR: the transform). Each directory is written whole once the command has
 * succeeded, under a lock (cli.h, fs_outdir), and none may hold or be an
 * input (guard.c). `fusescan tune --apply ID... PATH` re-times every tactic
 * of each candidate's kernel and updates the tuning cache, writing nothing
 * else, and takes only the options that bear on it. Exit 2 on bad
 * input, an unknown id, an after-graph that fails validation, or a tune that
 * tuned nothing (no GPU ran the kernels); 1 when a numerics verdict fails.
 * Where stderr is a terminal, or with --progress, each phase of the work
 * says a line there as it begins.
 */
#include "plan.h"
#include "fusescan/discover.h"
#include "fusescan/matchrun.h"
#include "fusescan/site.h"
#include "fusescan/render.h"
#include "fusescan/rewrite.h"
#include "fusescan/scaffold.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

/* ---- outputs ----------------------------------------------------------------------------- */

static char *join(const char *dir, const char *name)
{
	size_t n = strlen(dir) + strlen(name) + 2;
	char *p = fs_xmalloc(n);
	snprintf(p, n, "%s/%s", dir, name);
	return p;
}

static int write_file(const char *dir, const char *name, const char *text, size_t len)
{
	char *path = join(dir, name);
	struct fs_out o;
	int rc = fs_out_open(&o, path);
	if (rc == 0) {
		rc = fs_out_finish(&o, fwrite(text, 1, len, o.f) != len);
	}
	free(path);
	return rc;
}

/* file.diff: the dump (base) against the after-dump */
static int write_diff(const char *dir, const char *file, const char *base, const char *text, size_t len,
		      const struct fs_rewritten *r)
{
	char name[320], a[320], b[320];
	snprintf(name, sizeof(name), "%s.diff", file);
	snprintf(a, sizeof(a), "a/%s", base);
	snprintf(b, sizeof(b), "b/%s", base);
	char *path = join(dir, name);
	struct fs_out o;
	int rc = fs_out_open(&o, path);
	if (rc == 0)
		rc = fs_out_finish(&o, fs_unified_diff(a, b, text, len, r, o.f));
	free(path);
	return rc;
}

/* before / after pictures of the first site */
static int renders(const struct fs_scan *s, const struct fs_graph *g, const struct fs_approval *a,
		   const struct fs_rewritten *r, const char *dir, uint32_t hops, struct fs_diags *d)
{
	if (!a->n_sites)
		return 0;
	const struct fs_site *site = &a->sites[0];
	char title[256], *path;
	int rc = 0;
	snprintf(title, sizeof(title), "before: %s, site 1 of %u", a->name, a->n_sites);
	struct fs_render_opts o = {site->nodes, NULL, site->n_nodes, hops, title};
	for (int k = 0; k < 2; k++) {
		path = join(dir, k ? "before.svg" : "before.dot");
		rc |= fs_render(s, g, &o, path, d);
		free(path);
	}
	/* after: the site's names that survive are its outputs (the fused node
	 * or its getitems); the fused node feeding a getitem joins them */
	struct fs_scan *after = fs_scan_new();
	fs_scan_buffer(after, "after", r->text, r->len);
	const struct fs_graph *ag = after->modules[0].graph;
	uint32_t *focus = fs_xmalloc((2 * ag->n_nodes + 1) * sizeof(uint32_t)), nf = 0;
	for (uint32_t i = 0; i < ag->n_nodes; i++)
		for (uint32_t k = 0; k < site->n_nodes; k++)
			if (!strcmp(fs_scan_str(after, ag->nodes[i].name), fs_scan_str(s, g->nodes[site->nodes[k]].name))) {
				focus[nf++] = i;
				const struct fs_node *x = &ag->nodes[i];
				if (x->n_args && ag->args[x->args].kind == FS_ARG_NODE &&
				    !strcmp(fs_scan_str(after, after->ops[ag->nodes[ag->args[x->args].node].op].target), a->target))
					focus[nf++] = ag->args[x->args].node;
			}
	snprintf(title, sizeof(title), "after: %s, site 1 of %u", a->name, a->n_sites);
	struct fs_render_opts oa = {focus, NULL, nf, hops, title};
	for (int k = 0; k < 2; k++) {
		path = join(dir, k ? "after.svg" : "after.dot");
		rc |= fs_render(after, ag, &oa, path, d);
		free(path);
	}
	free(focus);
	fs_scan_free(after);
	return rc;
}

/* A site with a GELU whose form the user did not state: approximate= is a
 * keyword argument, which the dump never prints, so the numerics and the
 * kernel take the tanh form and say so. Always true (it only speaks). */
static int gelu_said(const struct fs_discovery *d, const struct fs_plan *pl, int gelu)
{
	const struct fs_scan *s = d->scan;
	const struct fs_graph *g = s->modules[d->a[0].module].graph;
	for (uint32_t i = 0; i < pl->n && gelu == FS_GELU_UNSTATED; i++)
		for (uint32_t k = 0; pl->v[i].n_sites && k < pl->v[i].sites[0].n_nodes; k++)
			if (!strcmp(fs_scan_str(s, s->ops[g->nodes[pl->v[i].sites[0].nodes[k]].op].key), "gelu")) {
				fprintf(stderr, "fusescan fuse: %s: the dump does not say whether its gelu is tanh or erf "
						"(approximate= is never printed): the tanh form is assumed; --gelu erf if the "
						"model's is exact\n", pl->v[i].name);
				return 1;
			}
	return 1;
}

/* The progress lines (fusescan/site.h) on stderr, each after what the
 * work is on ("add_rmsnorm site %mul_15"): with --progress, or where stderr
 * is a terminal (a test's captured stderr stays as it was). */
/* What --apply runs each site with: how its program is read, and the run. */
struct site_args {
	struct fs_site_form form;
	struct fs_site_opts run;
};

struct progress {
	struct fs_progress p;
	char about[200];
};

static void progress_say(void *ctx, const char *line)
{
	const struct progress *pr = ctx;
	fprintf(stderr, "fusescan: %s%s%s...\n", pr->about, pr->about[0] ? ": " : "", line);
}

/* What the next lines are about, and a line of the command's own (or NULL). */
static void progress_about(const struct site_args *no, const char *about, const char *line)
{
	if (!no->run.progress)
		return;
	struct progress *pr = no->run.progress->ctx;
	snprintf(pr->about, sizeof(pr->about), "%s", about);
	if (line)
		progress_say(pr, line);
}

/* The rewrite's line (fuse; tune rewrites nothing). Always true (it only speaks). */
static int rewrite_said(const struct site_args *no, const struct fs_plan *pl, int draw)
{
	uint32_t sites = 0;
	char line[80];
	for (uint32_t i = 0; i < pl->n; i++)
		sites += pl->v[i].n_sites;
	snprintf(line, sizeof(line), "rewriting %u site%s%s", sites, sites == 1 ? "" : "s", draw ? ", drawing the first" : "");
	progress_about(no, pl->n == 1 ? pl->v[0].name : "the approvals", line);
	return 1;
}

/* The graph to rewrite: a run's last dump (or --dump), or the one file given. */
static int32_t target_module(const struct fs_discovery *d)
{
	if (!d || d->n_a != 1) {
		fprintf(stderr, "fusescan fuse: --apply works on one graph: give one dump file, or one run (with --dump NNN)\n");
		return -1;
	}
	return (int32_t)d->a[0].module;
}

/* The numerics of one site of an approval: printed and, with a dir, added to
 * the text and the JSON array written as numerics.txt / .json (and the first
 * run's fused.cu). es: with --emit, the sites the emitted op replaces. 0
 * pass, 1 fail, -1 not run. */
struct runs {
	char *text;
	size_t len;
	FILE *mem;
	cJSON *json;          /* one object per run */
	char *fused;          /* the first run's fused kernel */
	const char *emit_stage, *emit_dir; /* --emit writes into its stage: the messages name the directory */
};

/* text naming files under `stage` names them under `dir` instead */
static void unstage(char *text, size_t n, const char *stage, const char *dir)
{
	char *at = stage ? strstr(text, stage) : NULL;
	size_t k = stage ? strlen(stage) : 0, m = dir ? strlen(dir) : 0;
	if (!at || strlen(text) - k + m >= n)
		return;
	memmove(at + m, at + k, strlen(at + k) + 1);
	memcpy(at, dir, m);
}

static int numerics(struct fs_discovery *d, const struct fs_approval *ap, const struct fs_site *site, const struct fs_emit_sites *es,
		    struct site_args *no, struct runs *out, struct fs_scaffold_variant *sv)
{
	struct fs_scan *s = d->scan;
	const struct fs_graph *g = s->modules[d->a[0].module].graph;
	uint32_t *nodes = fs_site_file_order(site);
	struct fs_site_result *r = fs_xcalloc(1, sizeof(*r));
	const char *last = fs_scan_str(s, g->nodes[nodes[site->n_nodes - 1]].name);
	char about[200];
	snprintf(about, sizeof(about), "%s site %%%s", ap->name, last);
	progress_about(no, about, NULL);
	no->run.emit_sites = es;
	int failed = fs_site_run(s, g, nodes, site->n_nodes, &no->form, &no->run, r, &s->diags);
	free(nodes);
	if (failed) {
		free(r);
		return -1;
	}
	unstage(r->emit.text, sizeof(r->emit.text), out->emit_stage, out->emit_dir);
	char head[300];
	snprintf(head, sizeof(head), "%s (site %%%s%s):\n", ap->name, last, es && es->n > 1 ? ", and the sites of its kernel" : "");
	fputs(head, stdout);
	fs_site_report_text(r, stdout);
	fputs(head, out->mem);
	fs_site_report_text(r, out->mem);
	cJSON *j = fs_site_report_json(r);
	cJSON_AddStringToObject(j, "candidate", ap->name);
	cJSON_AddStringToObject(j, "site", last);
	cJSON_AddItemToArray(out->json, j);
	if (!out->fused && r->gpu.fused_source)
		out->fused = fs_xstrndup(r->gpu.fused_source, strlen(r->gpu.fused_source));
	if (sv) { /* what --scaffold says of this kernel */
		const struct fs_errors *f = r->gpu.ran ? &r->gpu.fused : &r->cpu.fused, *u = r->gpu.ran ? &r->gpu.unfused : &r->cpu.unfused;
		snprintf(sv->op, sizeof(sv->op), "%s", r->emit.name);
		snprintf(sv->verdict, sizeof(sv->verdict), "%s on the %s (fused max abs %.3g, unfused %.3g: at most %g x unfused + %g)",
			 fs_verdict_name(r->verdict), r->gpu.ran ? "GPU" : "CPU", f->max_abs, u->max_abs, r->rule.k, r->rule.tol);
		sv->site = site;
		sv->n_sites = es ? es->n : 1;
	}
	int rc = 0;
	if (r->emit.failed) {
		fprintf(stderr, "fusescan: --emit: %s\n", r->emit.text);
		rc = -1;
	}
	int verdict = r->verdict;
	fs_site_release(r);
	free(r);
	return rc ? -1 : verdict == FS_VERDICT_FAIL;
}

/* numerics.txt, numerics.json (the first run's object; the others, with
 * --emit of several kernels, in its "also") and fused.cu */
static int write_runs(const char *dir, struct runs *out)
{
	fclose(out->mem);
	out->mem = NULL;
	cJSON *first = cJSON_DetachItemFromArray(out->json, 0);
	if (!first)
		return 0;
	if (cJSON_GetArraySize(out->json))
		cJSON_AddItemToObject(first, "also", cJSON_Duplicate(out->json, 1));
	char *json = cJSON_Print(first);
	size_t jl = strlen(json);
	json = fs_xrealloc(json, jl + 2);
	json[jl++] = '\n';
	int rc = write_file(dir, "numerics.txt", out->text, out->len) | write_file(dir, "numerics.json", json, jl);
	if (out->fused)
		rc |= write_file(dir, "fused.cu", out->fused, strlen(out->fused));
	free(json);
	cJSON_Delete(first);
	return rc;
}

/* The runs of approval i: its first applied site (its first site when none
 * was, and when tuning);
 * with --emit, one run per distinct kernel among its applied sites (RoPE's
 * q and k differ in heads), each naming the sites its op replaces. */
static int run_approval(struct fs_discovery *d, const struct fs_approval *ap, struct fs_site *sites, uint32_t n,
			struct site_args *no, struct runs *out, struct fs_scaffold *sc)
{
	struct fs_scan *s = d->scan;
	const struct fs_module *m = &s->modules[d->a[0].module];
	const struct fs_dumpfile *f = &s->files[m->file];
	if (!n) {
		printf("%s: no site was applied; the numerics of its first site:\n", ap->name);
		return numerics(d, ap, &ap->sites[0], NULL, no, out, NULL);
	}
	if (!no->run.emit_dir)
		return numerics(d, ap, &sites[0], NULL, no, out, NULL);
	char (*key)[20] = fs_xcalloc(n, sizeof(*key));
	uint8_t *done = fs_xcalloc(n, 1);
	struct fs_site *group = fs_xmalloc(n * sizeof(*group));
	sc->v = fs_xcalloc(n, sizeof(*sc->v));
	for (uint32_t i = 0; i < n; i++) {
		uint32_t *nodes = fs_site_file_order(&sites[i]);
		fs_site_kernel_key(s, m->graph, nodes, sites[i].n_nodes, no->form.gelu_tanh, no->run.tokens, key[i]);
		free(nodes);
	}
	int v = 0;
	for (uint32_t i = 0; i < n && v >= 0; i++) {
		if (done[i])
			continue;
		uint32_t ng = 0;
		for (uint32_t k = i; k < n; k++)
			if (!done[k] && (k == i || (key[i][0] && !strcmp(key[i], key[k]))))
				group[ng++] = sites[k], done[k] = 1;
		struct fs_emit_sites es = {ap->name, f->base, fs_scan_str(s, f->stage), fs_scan_str(s, f->transform), group, ng};
		int vi = numerics(d, ap, &sites[i], &es, no, out, &sc->v[sc->n++]);
		v = vi < 0 ? vi : v > vi ? v : vi;
	}
	free(group);
	free(done);
	free(key);
	return v;
}

/* Whether DIR/default.yaml is there and fusescan did not write it (an
 * AutoDeploy config, say): then it is never replaced. */
static int foreign_yaml(const char *dir)
{
	char path[PATH_MAX], head[sizeof(FS_SCAFFOLD_YAML_HEAD)] = "";
	struct stat st;
	snprintf(path, sizeof(path), "%s/default.yaml", dir);
	int fd = fs_open_regular(path, &st);
	if (fd < 0)
		return errno != ENOENT;
	ssize_t n = read(fd, head, sizeof(head) - 1);
	close(fd);
	return n < 0 || strncmp(head, FS_SCAFFOLD_YAML_HEAD, sizeof(head) - 1) != 0;
}

/* --scaffold DIR: the AutoDeploy transform of each approval (scaffold.h),
 * written into its stage; shown: DIR */
static int scaffold(struct fs_discovery *d, const struct fs_plan *pl, struct fs_scaffold *sc, const char *emit_dir, const char *dir,
		    const char *shown, const struct site_args *no)
{
	struct fs_scan *s = d->scan;
	const struct fs_module *m = &s->modules[d->a[0].module];
	char ops[PATH_MAX], why[512];
	if (!realpath(emit_dir, ops))
		snprintf(ops, sizeof(ops), "%s", emit_dir);
	for (uint32_t i = 0; i < pl->n; i++) {
		const struct fs_approval *a = &pl->v[i];
		sc[i].name = a->name, sc[i].id = a->id, sc[i].recommendation = a->recommendation, sc[i].kernel = a->kernel;
		sc[i].existing = a->rec == FS_REC_USE_EXISTING;
		sc[i].gelu_tanh = no->form.gelu_tanh;
		sc[i].dump = s->files[m->file].path;
		sc[i].ops_dir = ops;
		sc[i].all = a->sites;
		sc[i].sites = a->n_sites;
		sc[i].tokens = no->run.tokens;
	}
	if (fs_scaffold_write(s, m->graph, sc, pl->n, dir, why, sizeof(why))) {
		unstage(why, sizeof(why), dir, shown);
		fprintf(stderr, "fusescan: --scaffold: %s\n", why);
		return -1;
	}
	const char *yaml = "default.yaml";
	if (foreign_yaml(shown)) { /* the entries go beside it */
		char a[PATH_MAX], b[PATH_MAX];
		yaml = "fusescan.default.yaml";
		snprintf(a, sizeof(a), "%s/default.yaml", dir);
		snprintf(b, sizeof(b), "%s/%s", dir, yaml);
		if (rename(a, b) != 0)
			return fprintf(stderr, "fusescan: --scaffold: cannot write %s: %s\n", b, strerror(errno)), -1;
		printf("scaffold: %s/default.yaml is not one fusescan wrote: left as it is, the entries are in %s/%s\n", shown, shown,
		       yaml);
	}
	printf("scaffold: %s/fuse_<name>.py, test_fuse_<name>.py, fuse_<name>.md for %u transform%s, and %s\n", shown, pl->n,
	       pl->n == 1 ? "" : "s", yaml);
	return 0;
}

/* The after-dump's file name in --out: the dump's own, behind "after_"
 * where that is a name fusescan writes there itself (the summary, the
 * numerics, the renders, the scaffold's and --emit's files where they share
 * the directory), so no file of the run replaces another. */
static void after_name(const char *base, char *out, size_t n)
{
	static const char *const own[] = {"summary.txt", "numerics.txt", "numerics.json", "fused.cu", "before.svg",
					  "before.dot", "after.svg", "after.dot", "default.yaml", "fusescan.default.yaml", NULL};
	static const char *const prefix[] = {"fs_", "fuse_", "test_fuse_", NULL};
	int taken = 0;
	for (const char *const *w = own; *w && !taken; w++)
		taken = !strcasecmp(base, *w);
	for (const char *const *w = prefix; *w && !taken; w++)
		taken = !strncasecmp(base, *w, strlen(*w));
	snprintf(out, n, "%s%s", taken ? "after_" : "", base);
}

/* The rewrite, its diff and renders, written into dir (--out's stage), and
 * its summary line into summary (written last, once every check is done,
 * so a summary never speaks for a run that stopped); shown: --out */
static int apply(struct fs_discovery *d, struct fs_plan *pl, const char *dir, const char *shown, uint32_t hops, int draw,
		 struct fs_rewritten *r_out, char *wrote, size_t n_wrote, char *summary, size_t n_summary)
{
	struct fs_scan *s = d->scan;
	uint32_t module = d->a[0].module;
	const struct fs_dumpfile *f = &s->files[s->modules[module].file];
	size_t len;
	char *text = fs_read_input(f->path, FS_IN_DUMP, &len);
	if (!text)
		return fprintf(stderr, "fusescan fuse: cannot read %s: %s\n", f->path, fs_input_error(errno, FS_IN_DUMP)), -1;
	struct fs_rewrite *rw = fs_xcalloc(pl->n + 1, sizeof(*rw));
	for (uint32_t i = 0; i < pl->n; i++)
		rw[i] = (struct fs_rewrite){pl->v[i].name, pl->v[i].target, pl->v[i].sites, pl->v[i].n_sites,
					    pl->v[i].literals, pl->v[i].norm_first};
	struct fs_rewritten r;
	char after[300];
	after_name(f->base, after, sizeof(after));
	int rc = fs_rewrite_apply(s, module, text, len, rw, pl->n, &r, &s->diags);
	snprintf(summary, n_summary, "[stage=fusescan, transform=apply %s] [SUMMARY] matches=%u | %u fused nodes, %u sites skipped\n",
			  pl->n == 1 ? pl->v[0].name : "approvals", r.applied, r.fused, r.skipped);
	if (rc == 0)
		rc = write_file(dir, after, r.text, r.len) | write_diff(dir, after, f->base, text, len, &r) |
		     (draw ? renders(s, s->modules[module].graph, &pl->v[0], &r, dir, hops, &s->diags) : 0);
	fputs(summary, stdout);
	for (uint32_t i = 0; i < r.skipped; i++)
		printf("  skipped %s\n", r.why[i]);
	snprintf(wrote, n_wrote, "wrote %s/%.255s, %.255s.diff, summary.txt%s\n", shown, after, after,
		 draw ? ", before.svg / .dot, after.svg / .dot" : "");
	*r_out = r;
	free(rw);
	free(text);
	return rc;
}

/* ---- the directories --apply writes ------------------------------------------------------ */

enum { OUT_DIR, OUT_EMIT, OUT_SCAFFOLD, N_OUTS };
static const char *const out_opts[N_OUTS] = {"--out", "--emit", "--scaffold"};

/* --out, --emit and --scaffold, each staged (cli.h, fs_outdir); two naming
 * one directory share its stage */
struct outs {
	struct fs_outdir dir[N_OUTS];
	const struct fs_outdir *of[N_OUTS]; /* the one each writes through, or NULL */
};

static const char *outs_stage(const struct outs *w, int i)
{
	return w->of[i] ? w->of[i]->stage : NULL;
}

/* Publishes every directory (ok) or aborts it: 0, or -1 after saying why. */
static int outs_close(struct outs *w, const struct fs_command *cmd, int ok)
{
	int rc = 0;
	for (int i = 0; i < N_OUTS; i++)
		if (w->dir[i].path && ok)
			rc |= fs_outdir_publish(&w->dir[i], cmd);
		else if (w->dir[i].path)
			fs_outdir_abort(&w->dir[i]);
	return rc;
}

/* The caches checked: the tuning cache is read and written by design, and
 * must be no other input; the kernel cache's directory ($FUSESCAN_CACHE) is an output directory like
 * --out. 0, or -1 after saying why. */
static int caches_checked(const struct fs_command *cmd, struct fs_guard *g, const struct fs_tune_cache *cache, int named)
{
	const char *env = getenv("FUSESCAN_CACHE");
	char dir[900];
	if (fs_cache_dir(dir, sizeof(dir)) == 0 && fs_guard_dir(g, cmd, env && *env ? "FUSESCAN_CACHE" : "the kernel cache", dir))
		return -1;
	if (cache->path[0] && fs_guard_file(g, cmd, named ? "--cache" : "the tuning cache", cache->path))
		return -1;
	fs_guard_add(g, "the tuning cache", cache->path);
	return 0;
}

/* The caches and the directories checked against the inputs, and the
 * tuning cache refused where it is a file this fusescan may not replace;
 * then the directories made, locked and staged: 0, or -1 after saying why. */
static int outs_open(struct outs *w, const struct fs_command *cmd, struct fs_guard *g, const struct fs_tune_cache *cache,
		     int named, const char *const dirs[N_OUTS])
{
	if (caches_checked(cmd, g, cache, named))
		return -1;
	for (int i = 0; i < N_OUTS; i++)
		if (dirs[i] && fs_guard_dir(g, cmd, out_opts[i], dirs[i]))
			return -1;
	if (cache->foreign) {
		fprintf(stderr, "fusescan %s: %s: refusing to use it (name another --cache, or move it away)\n", cmd->name, cache->warning);
		return -1;
	}
	for (int i = 0; i < N_OUTS; i++) {
		for (int k = 0; k < i && dirs[i] && !w->of[i]; k++)
			if (w->of[k] && fs_outdir_same(w->of[k], dirs[i]))
				w->of[i] = w->of[k];
		if (!dirs[i] || w->of[i])
			continue;
		if (fs_outdir_open(&w->dir[i], cmd, out_opts[i], dirs[i])) {
			outs_close(w, cmd, 0);
			return -1;
		}
		w->of[i] = &w->dir[i];
	}
	return 0;
}

enum { FUSE = 1, TUNE = 2, BOTH = FUSE | TUNE };
struct scoped {
	unsigned cmds; /* FUSE, TUNE or BOTH */
	struct fs_option o;
};

/* What fuse's or tune's options say, read and range-checked. */
struct args {
	const char *out_dir, *approvals, *site, *pdir, *cache_path, *emit_dir, *scaffold_dir;
	int gelu, plant, triage, cpu_only, no_render, with_gemm, compile_all, progress;
	long long hops, tokens, seed, reps, cpu_memory;
	int64_t buckets[FS_MAX_BUCKETS];
	uint32_t n_buckets;
	struct fs_strlist ids;
	struct fs_discover_opts o;
};

/* The options of fuse (tune: those it takes) into a: 0, 1 after --help,
 * -1 after saying what is wrong. *npos: the inputs left in argv. */
static int parse_args(const struct fs_command *cmd, int argc, char **argv, int tune, struct args *a, int *npos)
{
	const char *hops_s = NULL, *tokens_s = NULL, *seed_s = NULL, *reps_s = NULL, *buckets_s = NULL, *cpu_memory_s = NULL;
	static const char *const plants[] = {"none", "eps", "cast", NULL};
	static const char *const gelus[] = {"unstated", "tanh", "erf", NULL};
	*a = (struct args){.out_dir = "fusescan-apply", .gelu = FS_GELU_UNSTATED, .hops = 2, .tokens = FS_APPLY_TOKENS, .reps = 50,
			   .cpu_memory = FS_CPU_BYTES, .o = {.tokens = 8192}};
	/* each option with the commands that take it: tune writes nothing but the cache, and runs on the GPU */
	const struct scoped all[] = {
		{BOTH, {"apply", 'a', FS_OPT_LIST, "ID", "candidate id (fusescan discover) or pattern name to apply (repeatable)", &a->ids, NULL}},
		{BOTH, {"approvals", 0, FS_OPT_STRING, "FILE", "ids to apply, one a line", &a->approvals, NULL}},
		{BOTH, {"site", 0, FS_OPT_STRING, "NODE", "apply only the site that contains this node", &a->site, NULL}},
		{FUSE, {"out", 0, FS_OPT_STRING, "DIR", "where the after-dump, diff, summary and renders go (default fusescan-apply)", &a->out_dir,
			NULL}},
		{BOTH, {"dump", 0, FS_OPT_STRING, "NNN|FILE", "dump of a run to rewrite (default: the last)", &a->o.dump, NULL}},
		{FUSE, {"hops", 0, FS_OPT_STRING, "K", "neighbourhood drawn around the site (default 2)", &hops_s, NULL}},
		{BOTH, {"patterns", 0, FS_OPT_STRING, "DIR", "pattern files to use instead of the built-in library", &a->pdir, NULL}},
		{BOTH, {"catalog", 0, FS_OPT_STRING, "FILE", "kernel catalog to use instead of the built-in one", &a->o.catalog, NULL}},
		{BOTH, {"tokens", 0, FS_OPT_STRING, "N", "sequence length of the numerics check (default 16 on the CPU)", &tokens_s, NULL}},
		{BOTH, {"seed", 0, FS_OPT_STRING, "N", "seed of the random inputs (default: fixed)", &seed_s, NULL}},
		{FUSE, {"triage", 0, FS_OPT_FLAG, NULL, "rerun the fused execution with per-op rounding: rounding or bug", &a->triage, NULL}},
		{BOTH, {"with-gemm", 0, FS_OPT_FLAG, NULL, "a GEMM-epilogue candidate's sites take in the matrix products feeding them",
			&a->with_gemm, NULL}},
		{FUSE, {"cpu-only", 0, FS_OPT_FLAG, NULL, "do not run the generated kernels on the GPU (they are still compiled)", &a->cpu_only,
			NULL}},
		{FUSE, {"compile-all", 0, FS_OPT_FLAG, NULL, "where no GPU runs them: compile every tactic, not one of each kind",
			&a->compile_all, NULL}},
		{FUSE, {"no-render", 0, FS_OPT_FLAG, NULL, "skip the before / after pictures", &a->no_render, NULL}},
		{BOTH, {"gelu", 0, FS_OPT_CHOICE, "FORM", "the model's GELU, tanh or erf: the dump cannot say (default: tanh, said so)", &a->gelu,
			gelus}},
		{FUSE, {"plant-bug", 0, FS_OPT_CHOICE, "BUG", "debug: break the fused side on purpose (eps: eps 0.1; cast: drop the first widening cast)",
			&a->plant, plants}},
		{BOTH, {"cache", 0, FS_OPT_STRING, "FILE", "tuning cache (default $FUSESCAN_CACHE or ~/.cache/fusescan, tuning.json)", &a->cache_path,
			NULL}},
		{FUSE, {"emit", 0, FS_OPT_STRING, "DIR", "write the fused kernel for every token count: PTX, descriptor, PyTorch op module", &a->emit_dir,
			NULL}},
		{FUSE, {"scaffold", 0, FS_OPT_STRING, "DIR", "write each approval's AutoDeploy transform, its tests and iteration note (needs --emit)",
			&a->scaffold_dir, NULL}},
		{BOTH, {"buckets", 0, FS_OPT_STRING, "LIST", "token counts to tune at (default: powers of two from 1 to --tokens)", &buckets_s, NULL}},
		{BOTH, {"reps", 0, FS_OPT_STRING, "N", "timed runs per kernel on the GPU (default 50)", &reps_s, NULL}},
		{BOTH, {"cpu-memory", 0, FS_OPT_STRING, "SIZE", "memory of the CPU numerics executions, e.g. 512M, 16G (default 4G)", &cpu_memory_s,
			NULL}},
		{BOTH, {"progress", 0, FS_OPT_FLAG, NULL, "say each phase of the work on stderr (the default where stderr is a terminal)",
			&a->progress, NULL}},
	};
	struct fs_option opts[sizeof(all) / sizeof(all[0]) + 1];
	size_t n_opts = 0;
	for (size_t i = 0; i < sizeof(all) / sizeof(all[0]); i++)
		if (all[i].cmds & (tune ? TUNE : FUSE))
			opts[n_opts++] = all[i].o;
	opts[n_opts] = (struct fs_option){0};
	int r = fs_opts_parse(cmd, opts, argc, argv, npos);
	if (!r && (fs_opt_int(cmd, "hops", hops_s, 0, 64, &a->hops) || fs_opt_int(cmd, "tokens", tokens_s, 1, 1 << 20, &a->tokens) ||
		   fs_opt_int(cmd, "seed", seed_s, 0, LLONG_MAX, &a->seed) || fs_opt_int(cmd, "reps", reps_s, 10, 10000, &a->reps) ||
		   fs_opt_int_list(cmd, "buckets", buckets_s, 1, 1 << 20, a->buckets, FS_MAX_BUCKETS, &a->n_buckets) ||
		   fs_opt_size(cmd, "cpu-memory", cpu_memory_s, 1 << 20, (long long)1 << 44, &a->cpu_memory)))
		r = -1;
	if (!r && a->scaffold_dir && !a->emit_dir) {
		fprintf(stderr, "fusescan %s: --scaffold needs --emit DIR (its replacements call the emitted ops)\n", cmd->name);
		r = -1;
	}
	a->o.gelu = (uint8_t)a->gelu;
	return r;
}

/* Each approval checked (tune: tuned) at the sites the rewrite applied,
 * the runs' reports written, then the scaffold: the worst verdict (1 a
 * failed check), or -1 where a run or a write failed. */
static int run_plan(struct fs_discovery *d, struct fs_plan *pl, const struct fs_rewritten *rr, struct site_args *no,
		    struct outs *w, const struct args *a, int tune)
{
	int v = 0;
	struct runs out = {.json = cJSON_CreateArray(), .emit_stage = no->run.emit_dir, .emit_dir = a->emit_dir};
	out.mem = open_memstream(&out.text, &out.len);
	struct fs_site *applied = fs_xmalloc((rr->applied + 1) * sizeof(*applied)); /* by approval */
	struct fs_scaffold *sc = fs_xcalloc(pl->n + 1, sizeof(*sc));
	for (uint32_t i = 0, at = 0; i < pl->n && v >= 0 && out.mem; i++) {
		uint32_t n = 0;
		for (uint32_t k = 0; k < rr->applied; k++)
			if (rr->done[k].rewrite == i)
				applied[at + n++] = pl->v[i].sites[rr->done[k].site];
		int vi = tune ? numerics(d, &pl->v[i], &pl->v[i].sites[0], NULL, no, &out, NULL)
			      : run_approval(d, &pl->v[i], applied + at, n, no, &out, &sc[i]);
		v = vi < 0 ? vi : v > vi ? v : vi;
		sc[i].fused = n, sc[i].skipped = pl->v[i].n_sites - n;
		at += n;
	}
	if (!out.mem || (!tune && write_runs(outs_stage(w, OUT_DIR), &out)))
		v = -1;
	if (out.mem)
		fclose(out.mem);
	if (v >= 0 && a->scaffold_dir && scaffold(d, pl, sc, a->emit_dir, outs_stage(w, OUT_SCAFFOLD), a->scaffold_dir, no))
		v = -1;
	for (uint32_t i = 0; i < pl->n; i++)
		free(sc[i].v);
	free(sc);
	free(out.text);
	free(out.fused);
	cJSON_Delete(out.json);
	free(applied);
	return v;
}

/* The exit status of a plan's runs (v: run_plan's), the cache saved where
 * the command did its job (a failed command writes nothing, the cache
 * included) and its counts said. */
static int finish_runs(int v, int tune, struct fs_tune_cache *cache)
{
	int rc = v == 0 ? FS_EXIT_OK : v > 0 ? FS_EXIT_GATE : FS_EXIT_INPUT;
	int tuned = cache->hits || cache->misses;
	if (tune && !tuned && v >= 0) { /* tune could not do its one job: a failure, not a verdict */
		fprintf(stderr, "fusescan tune: nothing tuned: the kernels did not run on a GPU (see the GPU line above)\n");
		rc = FS_EXIT_INPUT;
	}
	if (rc != FS_EXIT_INPUT && fs_tune_save(cache) == 0 && tuned)
		fs_tune_print_stats(cache, stdout);
	else if (tuned)
		fs_tune_print_stats(cache, stderr);
	return rc;
}

static int fuse_or_tune(const struct fs_command *cmd, int argc, char **argv, int tune)
{
	struct args a;
	int npos, r = parse_args(cmd, argc, argv, tune, &a, &npos);
	char *approvals_text = NULL;
	struct fs_tune_cache cache;
	fs_tune_open(&cache, a.cache_path);
	cache.retune = tune;
	struct site_args no = {.form = {.gelu_tanh = a.gelu != FS_GELU_ERF, .plant_eps = a.plant == 1 ? 0.1 : 0, .plant_drop_cast = a.plant == 2},
			       .run = {.tokens = a.tokens,
				       .seed = (uint64_t)a.seed,
				       .triage = a.triage,
				       .gpu = !a.cpu_only,
				       .compile_all = a.compile_all,
				       .max_bytes = a.cpu_memory,
				       .reps = (uint32_t)a.reps,
				       .cache = &cache,
				       .emit_dir = a.emit_dir,
				       .buckets = a.buckets,
				       .n_buckets = a.n_buckets}};
	struct progress pr = {.p = {progress_say, &pr}};
	no.run.progress = a.progress || isatty(STDERR_FILENO) ? &pr.p : NULL;
	if (r || (a.approvals && fs_plan_read_approvals(a.approvals, &a.ids, &approvals_text) < 0) || !npos || !a.ids.n) {
		if (!r && (!npos || !a.ids.n))
			fprintf(stderr, "fusescan %s: give --apply ID (or --approvals FILE) and one dump or run\n", cmd->name);
		free(a.ids.v);
		free(approvals_text);
		fs_tune_close(&cache);
		return r > 0 ? FS_EXIT_OK : FS_EXIT_INPUT;
	}
	const char *dirs[N_OUTS] = {tune ? NULL : a.out_dir, a.emit_dir, a.scaffold_dir};
	struct fs_guard g = {0};
	struct outs w = {0};
	fs_guard_add(&g, "the --approvals file", a.approvals);
	fs_guard_add(&g, "the --patterns directory", a.pdir);
	fs_guard_add(&g, "the --catalog file", a.o.catalog);
	struct fs_scan *s = fs_cli_read(cmd, argv, npos, &g, NULL);
	int refused = outs_open(&w, cmd, &g, &cache, a.cache_path != NULL, dirs);
	fs_guard_release(&g);
	no.run.emit_dir = outs_stage(&w, OUT_EMIT);
	struct fs_patlib lib;
	fs_patlib_init(&lib);
	if (a.pdir)
		fs_patlib_load_dir(&lib, a.pdir, &s->diags);
	else
		fs_patlib_load_builtin(&lib, &s->diags);
	struct fs_discovery *d = refused || s->diags.n_errors ? NULL : fs_discover(s, &a.o);
	struct fs_plan pl = {0};
	int rc = FS_EXIT_INPUT;
	struct fs_rewritten rr = {0};
	char wrote[600] = "", summary[600] = "";
	if (d && target_module(d) >= 0 && fs_plan_make(d, &lib, &a.ids, a.site, a.with_gemm, &pl) == 0 && gelu_said(d, &pl, a.gelu) &&
	    (tune || (rewrite_said(&no, &pl, !a.no_render) &&
		      apply(d, &pl, outs_stage(&w, OUT_DIR), a.out_dir, (uint32_t)a.hops, !a.no_render, &rr, wrote, sizeof(wrote), summary, sizeof(summary)) == 0)))
		rc = finish_runs(run_plan(d, &pl, &rr, &no, &w, &a, tune), tune, &cache);
	if (rc != FS_EXIT_INPUT && !tune && write_file(outs_stage(&w, OUT_DIR), "summary.txt", summary, strlen(summary)))
		rc = FS_EXIT_INPUT;
	if (outs_close(&w, cmd, rc != FS_EXIT_INPUT))
		rc = FS_EXIT_INPUT;
	else if (rc != FS_EXIT_INPUT)
		fputs(wrote, stdout);
	fs_tune_close(&cache);
	fs_diags_print(&s->diags, stderr);
	fs_rewritten_release(&rr);
	fs_plan_release(&pl);
	fs_discovery_free(d);
	fs_patlib_release(&lib);
	fs_scan_free(s);
	free(a.ids.v);
	free(approvals_text);
	return rc;
}

int fs_cmd_fuse(const struct fs_command *cmd, int argc, char **argv)
{
	return fuse_or_tune(cmd, argc, argv, 0);
}

int fs_cmd_tune(const struct fs_command *cmd, int argc, char **argv)
{
	return fuse_or_tune(cmd, argc, argv, 1);
}
