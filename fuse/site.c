/*
 * site.c: --apply's check of one site (fusescan/site.h). The site is bound
 * to the run's sizes once (its program, with any planted bug) and that
 * program is handed to each stage in turn: the CPU executions
 * (numerics.c), the generated kernels (gpu.c), the buckets (buckets.c), the
 * verdict (verdict.c) and --emit (emit.c), each filling its own part of the
 * result.
 */
#include "fusescan/site.h"

#include "buckets.h"
#include "codegen.h"
#include "emit.h"
#include "gemm.h"
#include "gpu.h"
#include "kernels.h"
#include "numerics.h"
#include "prog.h"
#include "text.h"
#include "verdict.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The planted dropped cast: the region's first widening cast keeps its
 * narrow input, and the ops after it, up to the next cast, compute at the
 * narrow dtype (narrow[op]); *dropped: the cast's op, or -1. */
static void plan_plants(const struct prog *p, int drop_cast, uint8_t *narrow, int32_t *dropped)
{
	*dropped = -1;
	if (!drop_cast)
		return;
	for (uint32_t i = 0; i < p->n_ops && *dropped < 0; i++) {
		const struct op *op = &p->ops[i];
		const struct ten *in = op->n_src ? (op->src[0] < (int32_t)p->n_in ? &p->in[op->src[0]] : &p->ops[op->src[0] - p->n_in].out) : NULL;
		if (op->sem->kind == CAST && in && fs_dtype_size(op->out.dtype) > fs_dtype_size(in->dtype) && fs_dt_is_float(in->dtype))
			*dropped = (int32_t)i, narrow[i] = in->dtype;
	}
	for (uint32_t i = *dropped < 0 ? p->n_ops : (uint32_t)*dropped + 1; i < p->n_ops; i++) {
		const struct op *op = &p->ops[i];
		if (op->sem->kind == CAST)
			continue;
		for (uint32_t k = 0; k < op->n_src; k++)
			if (op->src[k] >= (int32_t)p->n_in && narrow[op->src[k] - p->n_in])
				narrow[i] = narrow[op->src[k] - p->n_in];
	}
}

/* The debug plants on p (fused side only), said in r->planted. */
static void plant(struct prog *p, const struct fs_site_form *o, struct fs_site_shape *r)
{
	int32_t dropped;
	p->narrow = fs_xcalloc(p->n_ops + 1, 1);
	plan_plants(p, o->plant_drop_cast, p->narrow, &dropped);
	p->plant_eps = o->plant_eps;
	if (dropped >= 0)
		snprintf(r->planted, sizeof(r->planted), "dropped cast %%%s (and what follows computed narrow)",
			 fs_scan_str(p->s, p->g->nodes[p->ops[dropped].node].name));
	else if (o->plant_drop_cast)
		snprintf(r->planted, sizeof(r->planted), "dropped cast: the region has no widening cast");
	if (o->plant_eps > 0)
		snprintf(r->planted, sizeof(r->planted), "eps replaced by %g", o->plant_eps);
}

/* The outputs, and the rule their lowest-precision floating dtype picks. */
static void rule_of(const struct prog *p, struct fs_site_shape *sh, struct fs_rule *rule)
{
	sh->out_dtype = FS_DT_F64;
	for (uint32_t i = 0; i < p->n_ops; i++)
		if (p->is_output[i]) {
			sh->n_outputs++;
			sh->out_elems += (uint64_t)p->ops[i].out.n;
			if (fs_dt_is_float(p->ops[i].out.dtype) && fs_dtype_size(p->ops[i].out.dtype) < fs_dtype_size(sh->out_dtype))
				sh->out_dtype = p->ops[i].out.dtype;
		}
	sh->n_ops = p->n_ops;
	sh->n_inputs = p->n_in;
	rule->k = sh->out_dtype == FS_DT_BF16 || sh->out_dtype == FS_DT_F16 ? 3.0 : 2.0;
	rule->tol = 1e-5;
}

/* "%x 1x16x4096 bf16, ... -> %out 1x16x4096 bf16" and "s72=1 s70=16" */
static void describe(const struct prog *p, struct fs_site_shape *r)
{
	size_t k = 0;
	char buf[64];
	int arrow = 0;
	for (uint32_t i = 0; i < p->n_in + p->n_ops && k < sizeof(r->shapes); i++) {
		const struct ten *t = i < p->n_in ? &p->in[i] : &p->ops[i - p->n_in].out;
		if (i >= p->n_in && !p->is_output[i - p->n_in])
			continue;
		size_t b = 0;
		buf[0] = '\0';
		for (uint8_t d = 0; d < t->rank && b < sizeof(buf); d++)
			b += (size_t)snprintf(buf + b, sizeof(buf) - b, "%s%lld", d ? "x" : "", (long long)t->shape[d]);
		uint32_t node = i < p->n_in ? p->in_node[i] : p->ops[i - p->n_in].node;
		const char *dt = fs_dtype_name((enum fs_dtype)t->dtype);
		const char *sep = i >= p->n_in && !arrow ? " -> " : i ? ", " : "";
		arrow |= i >= p->n_in;
		k += (size_t)snprintf(r->shapes + k, sizeof(r->shapes) - k, "%s%%%s %s %s", sep,
				      fs_scan_str(p->s, p->g->nodes[node].name), t->rank ? buf : "scalar",
				      strncmp(dt, "torch.", 6) ? dt : dt + 6);
	}
	k = 0;
	for (uint32_t i = 0; i < p->n_bind && k < sizeof(r->binding); i++)
		k += (size_t)snprintf(r->binding + k, sizeof(r->binding) - k, "%s%s=%lld", i ? " " : "",
				      fs_scan_str(p->s, p->bind[i].sym), (long long)p->bind[i].value);
}

/* The GPU's check of the chosen fused kernel, and with --triage on the
 * generated kernel itself: a failure that vanishes with FMA contraction off
 * or with eager rounding is rounding, else a bug. */
static void gpu_check(const struct fs_gpu_result *g, const struct fs_rule *rule, struct fs_gpu_check *c)
{
	fs_verdict_check(rule, &g->unfused, &g->fused, &c->check);
	if (!g->triaged)
		return;
	double bound = rule->k * g->unfused.max_abs + rule->tol;
	int passes = (!g->no_fma.nonfinite && g->no_fma.max_abs <= bound) || (!g->emulated.nonfinite && g->emulated.max_abs <= bound);
	c->triaged = 1;
	c->triage = c->check.verdict == FS_VERDICT_PASS ? FS_TRIAGE_NONE : passes ? FS_TRIAGE_ROUNDING : FS_TRIAGE_BUG;
}

/* The generated kernels: compiled always, run (and the fused one tuned) on
 * the GPU when asked and there is one; the verdict then rests on the GPU
 * results of the chosen tactic. ref: the CPU's reference values, or NULL. */
static void gpu_stage(const struct prog *p, const struct fs_site *site, const struct fs_site_opts *o, uint64_t seed, const struct ten *ref,
		      struct fs_site_result *r)
{
	char key[20];
	fs_codegen_tuning_key(p, site->nodes, site->n_nodes, fs_bucket_round(o->tokens), key, sizeof(key), r->shape.bucket,
			      sizeof(r->shape.bucket));
	struct fs_gpu_opts go = {.execute = o->gpu, .compile = !o->generate_only, .compile_all = o->compile_all, .triage = o->triage,
				 .reps = o->reps ? o->reps : 50, .cache = o->cache,
				 .kernel_key = key[0] ? key : NULL, .bucket = r->shape.bucket, .check = fs_verdict_check_tactic,
				 .ctx = &r->rule, .seed = seed, .cpu_ref = ref,
				 .graph_calls = fs_buckets_graph_calls(p), .progress = o->progress};
	fs_gpu_run(p, &go, &r->gpu);
	if (r->gpu.ran)
		gpu_check(&r->gpu, &r->rule, &r->gpu_check);
	r->triage = r->gpu_check.triaged ? r->gpu_check.triage : r->cpu.triage;
}

/* --emit, once the verdict is in: nothing where it fails (an op whose plans
 * fail their checks is never written), else every bucket's plan. */
static void emit_stage(const struct prog *p, const struct fs_bucket_set *set, const struct fs_site_opts *o, struct fs_site_result *r)
{
	struct fs_emit_result *e = &r->emit;
	if (r->verdict == FS_VERDICT_FAIL)
		snprintf(e->text, sizeof(e->text), "nothing (the verdict fails)");
	else if (set->ne) {
		fs_progress_say(o->progress, "--emit: compiling the op's kernels for %u bucket%s", set->ne, set->ne == 1 ? "" : "s");
		fs_emit(p, set->eb, set->ne, o, &r->gpu, e);
	} else {
		const struct fs_bucket_run *b = r->buckets.n ? &r->buckets.v[r->buckets.n - 1] : NULL;
		snprintf(e->text, sizeof(e->text), "no bucket has a kernel%s%.900s%s", b && b->error[0] ? " (" : "", b ? b->error : "",
			 b && b->error[0] ? ")" : "");
		e->failed = 1;
	}
}

/* Whether anything was checked: a region the generator refuses, or one
 * neither the CPU nor the GPU ran, is said in d (nothing tuned, settled or
 * emitted). 0 when checked. */
static int unchecked(const struct prog *p, const struct fs_site *site, const struct fs_site_result *r, struct fs_diags *d)
{
	const char *file = fs_prog_path(p->s, p->g);
	uint32_t line = p->g->nodes[site->nodes[0]].line;
	if (r->gpu.refused)
		fs_diag_add(d, FS_ERROR, file, line, 1, NULL, 0, "numerics: the generator does not take this region: %s", r->gpu.error);
	else if (!r->cpu.ran && !r->gpu.ran)
		fs_diag_add(d, FS_ERROR, file, line, 1, NULL, 0, "numerics: %s, and the GPU did not run (%s): lower --tokens%s", r->cpu.skipped,
			    r->gpu.skipped[0] ? r->gpu.skipped : r->gpu.error, r->cpu.over_memory ? " or raise --cpu-memory" : "");
	else
		return 0;
	return -1;
}

/* The stages after the check: the buckets tuned (a region with matrix
 * products: for --emit alone, each bucket times its products too), the
 * verdict, --emit. */
static void settle(const struct prog *p, const struct fs_site *site, const struct fs_site_opts *o, uint64_t seed,
		   struct fs_site_result *r)
{
	struct fs_bucket_set set = {0};
	if (!o->generate_only && (o->emit_dir || (r->gpu.ran && !fs_gemm_any(p))))
		fs_buckets_run(p, site, o, seed, r, &set);
	fs_verdict_settle(r, fs_prog_path(p->s, p->g));
	if (o->emit_dir && !o->generate_only) {
		emit_stage(p, &set, o, r);
		fs_verdict_emit(r);
	}
	fs_bucket_set_release(&set);
}

int fs_site_run(const struct fs_scan *s, const struct fs_graph *g, const uint32_t *nodes, uint32_t n, const struct fs_site_form *form,
		const struct fs_site_opts *o, struct fs_site_result *r, struct fs_diags *d)
{
	struct prog p = {.s = s, .g = g, .gelu_tanh = form->gelu_tanh};
	struct fs_cpu_values vals = {{NULL}};
	const struct fs_site site = {.nodes = nodes, .n_nodes = n};
	memset(r, 0, sizeof(*r));
	int rc = fs_prog_build(&p, nodes, n, o->tokens, d);
	if (rc == 0) {
		uint64_t seed = o->seed ? o->seed : 0x9e3779b97f4a7c15ull;
		rule_of(&p, &r->shape, &r->rule);
		plant(&p, form, &r->shape);
		struct fs_cpu_plan cp = {.tokens = o->tokens, .seed = seed, .triage = o->triage, .max_bytes = o->max_bytes,
					 .gpu_will_check = o->gpu && !o->generate_only && fs_gpu_present(), .rule = &r->rule,
					 .progress = o->progress};
		rc = fs_numerics_cpu(&p, &cp, &r->cpu, &vals);
		if (rc)
			fs_diag_add(d, FS_ERROR, fs_prog_path(s, g), 0, 0, NULL, 0, "numerics: a view does not fit its input");
		else {
			describe(&p, &r->shape);
			gpu_stage(&p, &site, o, seed, vals.v[REF], r);
			rc = unchecked(&p, &site, r, d);
		}
		if (rc == 0)
			settle(&p, &site, o, seed, r);
	}
	fs_numerics_values_release(&p, &vals);
	free(p.narrow);
	fs_prog_free(&p);
	if (rc)
		fs_site_release(r);
	return rc;
}

void fs_site_release(struct fs_site_result *r)
{
	fs_gpu_release(&r->gpu);
}

int fs_site_is_view(const struct fs_scan *s, const struct fs_graph *g, uint32_t node)
{
	const struct fs_node *x = &g->nodes[node];
	const struct sem *m = x->kind == FS_NODE_CALL ? fs_sem_of(s, x) : NULL;
	return m && (m->kind == PERMUTE || m->kind == SLICE || m->id == SEM_unsqueeze || m->id == SEM_squeeze);
}

int fs_site_kernel_key(const struct fs_scan *s, const struct fs_graph *g, const uint32_t *nodes, uint32_t n, int gelu_tanh,
		       int64_t tokens, char key[20])
{
	struct prog p = {.s = s, .g = g, .gelu_tanh = gelu_tanh};
	struct fs_diags d;
	char bucket[64];
	fs_diags_init(&d);
	key[0] = '\0';
	if (fs_prog_build(&p, nodes, n, tokens, &d) == 0) {
		fs_codegen_tuning_key(&p, nodes, n, tokens, key, 20, bucket, sizeof(bucket));
		if (!key[0] && fs_gemm_any(&p)) /* a region with products: the op it is emitted as */
			fs_emit_key(&p, key);
	}
	fs_prog_free(&p);
	fs_diags_release(&d);
	return key[0] ? 0 : -1;
}

int fs_site_generates(const struct fs_scan *s, const struct fs_graph *g, const uint32_t *nodes, uint32_t n, int gelu_tanh,
		      int64_t tokens, struct fs_diags *d)
{
	struct prog p = {.s = s, .g = g, .gelu_tanh = gelu_tanh};
	struct fs_diags unbound; /* shapes that do not bind at `tokens`: nothing said */
	fs_diags_init(&unbound);
	int rc = 0;
	if (fs_prog_build(&p, nodes, n, tokens, &unbound) == 0) {
		struct fs_kernels_opts o = {0}; /* generated only: neither compiler nor device */
		struct fs_kernels *ks = fs_xcalloc(1, sizeof(*ks));
		rc = fs_kernels_generate(&p, &o, ks, d);
		fs_kernels_release(ks);
		free(ks);
	}
	fs_prog_free(&p);
	fs_diags_release(&unbound);
	return rc;
}
