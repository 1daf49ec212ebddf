/*
 * kernels.c: every kernel of a region's plans, generated (see kernels.h).
 * Called by discover's question to the generator (fs_site_generates)
 * and by gpu.c before it compiles; it knows no compiler and no device.
 */
#include "kernels.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Op `only`'s kernel of q (only < 0: the fused kernel; the stored
 * reference: of ks->qs) under tactic t in mode: 0, or -1 with why in d,
 * naming the kernel. */
static int generate(const struct fs_kernels *ks, const struct prog *q, int32_t only, const struct fs_tactic *t, enum fs_gen mode,
		    struct fs_kernel *k, struct fs_diags *d)
{
	const struct prog *p = mode == FS_GEN_REF_STORE ? &ks->qs : q;
	memset(k, 0, sizeof(*k));
	if (fs_codegen(p, only, mode, t, k, d) == 0)
		return 0;
	fs_diag_reword(d, "%s kernel%s%s: %.255s", only >= 0 ? "unfused" : fs_gen_reference(mode) ? "reference" : "fused",
		       only < 0 ? "" : " of %", only < 0 ? "" : fs_scan_str(p->s, p->g->nodes[p->ops[only].node].name), fs_diags_last(d));
	return -1;
}

int fs_kernels_fused(const struct fs_kernels *ks, const struct fs_tactic *t, enum fs_gen mode, int index64, struct fs_kernel *k,
		     struct fs_diags *d)
{
	struct prog q = ks->q;
	if (index64)
		q.index64 = 1;
	return generate(ks, &q, -1, t, mode, k, d);
}

/* A region with matrix products: their plan (the products by cuBLASLt, read
 * by the fused kernel as given), the kernel's program and that of the later
 * products' operands alone, stored. Products no plan runs refuse the region. */
static int plan_products(const struct prog *p, struct fs_kernels *ks, struct fs_diags *d)
{
	ks->gemm = 1;
	int rc = fs_gemm_plan(p, &ks->gp, d);
	if (rc)
		ks->q.is_output = fs_xcalloc(p->n_ops + 1, 1), ks->kernel = 0;
	else
		ks->kernel = fs_gemm_kernel_prog(p, &ks->gp, &ks->q);
	ks->qs = ks->q, ks->qs.is_output = fs_xcalloc(p->n_ops + 1, 1);
	for (uint32_t i = 0; i < p->n_ops && !rc; i++)
		ks->qs.is_output[i] = ks->gp.kernel_out[p->n_in + i];
	return rc;
}

/* The fused kernel's fallback, then eager's launches in order: a kernel per
 * op (a view launches none), a matrix product the cuBLASLt call eager makes. */
static int launches(const struct prog *p, struct fs_kernels *ks, struct fs_diags *d)
{
	int rc = 0;
	for (int32_t i = -1, k = 0; i < (int32_t)p->n_ops && !rc; i++) {
		if (i >= 0 && !fs_codegen_buffered(p, (int32_t)p->n_in + i))
			continue; /* a view: no kernel in eager either */
		struct fs_kernels_item *L = &ks->l[ks->n++];
		if (i >= 0 && p->ops[i].sem->kind == GEMM) {
			L->gc = &ks->gp.unfused[k++]; /* as eager: cuBLASLt's first heuristic algorithm */
			continue;
		}
		if (i < 0 && !ks->kernel)
			continue; /* only products: no fused kernel */
		ks->kernels++;
		ks->unfused_kernels += i >= 0;
		rc = generate(ks, &ks->q, i, i >= 0 ? &fs_tactic_eager : NULL, FS_GEN_KERNEL, &L->k, d);
	}
	return rc;
}

/* Each product's float64 reference (fs_ref_gemm, with the check of its
 * dtype, fs_ref_cmp), and with cpu_ref the same checking in double. */
static void product_refs(const struct prog *p, const struct fs_kernels_opts *o, struct fs_kernels *ks)
{
	for (uint32_t k = 0; k < ks->gp.n; k++)
		for (int x = 0; x < (o->cpu_ref ? 2 : 1); x++) {
			const struct fs_gemm_call *c = &ks->gp.ref[k];
			ks->product_ref[k][x] = fs_gemm_ref_source(p, c, x ? FS_DT_F64 : fs_prog_value(p, c->out)->dtype);
			ks->kernels++, ks->ref_kernels++;
		}
}

/* The generated GEMM: its plan, its epilogue (q->member set to the plan's)
 * and, with compile, its kernel under every tactic; gen_why where the
 * region does not allow it. */
static void gemm_gen(const struct fs_kernels_opts *o, struct fs_kernels *ks)
{
	struct fs_diags d; /* no generated GEMM is a plan less, not a refusal: said in gen_why */
	fs_diags_init(&d);
	if (fs_gemm_gen_plan(&ks->q, &ks->gp, &ks->gen, &d))
		snprintf(ks->gen_why, sizeof(ks->gen_why), "%.159s", fs_diags_last(&d));
	else if ((ks->gen_planned = 1) && fs_gemm_gen_epilogue(&ks->q, &ks->gen, &ks->epi, &d))
		snprintf(ks->gen_why, sizeof(ks->gen_why), "its epilogue: %.140s", fs_diags_last(&d));
	else
		for (uint32_t t = 0; t < FS_GEMM_GEN_TACTICS && o->compile; t++)
			ks->gen_source[t] = fs_gemm_gen_source(&ks->epi, &fs_gemm_gen_tactics[t], ks->gen.nm);
	fs_diags_release(&d);
}

/* The float64 references: of the later products' operands, stored (where a
 * product reads what the fused kernel writes), then the region's, and with
 * cpu_ref the same reading the CPU reference's values. */
static int references(const struct fs_kernels_opts *o, struct fs_kernels *ks, struct fs_diags *d)
{
	int rc = 0;
	for (uint32_t i = 0; ks->gemm && i < ks->gp.n; i++)
		if (ks->gp.ref[i].post) {
			ks->kernels++, ks->ref_kernels++;
			rc = generate(ks, &ks->q, -1, &fs_tactic_eager, FS_GEN_REF_STORE, &ks->store, d);
			break;
		}
	for (int k = 0; k < (o->cpu_ref ? 2 : 1) && !rc && ks->kernel; k++) {
		ks->kernels++, ks->ref_kernels++;
		rc = generate(ks, &ks->q, -1, &fs_tactic_eager, k ? FS_GEN_REF_F64 : FS_GEN_REF, k ? &ks->ref64 : &ks->ref, d);
	}
	return rc;
}

int fs_kernels_generate(const struct prog *p, const struct fs_kernels_opts *o, struct fs_kernels *ks, struct fs_diags *d)
{
	memset(ks, 0, sizeof(*ks));
	ks->q = *p, ks->kernel = 1;
	ks->l = fs_xcalloc(p->n_ops + 2, sizeof(*ks->l));
	int rc = fs_gemm_any(p) ? plan_products(p, ks, d) : 0;
	rc = rc || launches(p, ks, d);
	if (ks->gemm && !rc)
		product_refs(p, o, ks);
	if (ks->gemm && ks->kernel && !rc)
		gemm_gen(o, ks);
	rc = rc || references(o, ks, d);
	if (!rc && o->compile)
		ks->fill = fs_codegen_fill();
	return rc ? -1 : 0;
}

void fs_kernels_release(struct fs_kernels *ks)
{
	for (uint32_t i = 0; i < ks->n; i++)
		fs_kernel_release(&ks->l[i].k);
	free(ks->l);
	fs_kernel_release(&ks->ref);
	fs_kernel_release(&ks->ref64);
	fs_kernel_release(&ks->store);
	fs_kernel_release(&ks->epi);
	for (uint32_t k = 0; k < FS_GEMM_MAX; k++)
		free(ks->product_ref[k][0]), free(ks->product_ref[k][1]);
	for (uint32_t t = 0; t < FS_GEMM_GEN_TACTICS; t++)
		free(ks->gen_source[t]);
	free(ks->fill);
	fs_gemm_gen_release(&ks->gen);
	if (ks->gemm) {
		free(ks->q.is_output);
		free(ks->qs.is_output);
	}
	fs_gemm_plan_release(&ks->gp);
	memset(ks, 0, sizeof(*ks));
}

/* list[0..n) cut to one tactic of each kind, in order: the first (the
 * fallback's vector width), the first vectorised, the first with fast math.
 * How many. */
static uint32_t representatives(struct fs_tactic *list, uint32_t n)
{
	uint32_t m = n ? 1 : 0;
	int vec = 0, fast = 0;
	for (uint32_t i = 1; i < n; i++)
		if ((!vec && list[i].vec > 1 && !list[i].fast) || (!fast && list[i].fast)) {
			vec |= list[i].vec > 1 && !list[i].fast, fast |= list[i].fast != 0;
			list[m++] = list[i];
		}
	return m;
}

uint32_t fs_kernels_tactics(const struct fs_kernel *fallback, int all, struct fs_tactic list[FS_MAX_TACTICS])
{
	uint32_t n = fs_tactics(fallback, list);
	if (!all)
		n = representatives(list, n);
	for (uint32_t i = 1; i < n; i++)
		if (list[i].vec > 1) {
			n += fs_tactic_variants(fallback, &list[i], list + n);
			break;
		}
	return n;
}
