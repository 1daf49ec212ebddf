/*
 * test_kernels.c: the set of a region's kernels (fuse/kernels.c), generated
 * with no compiler and no device: what it holds for an elementwise chain and
 * for a region with matrix products, the sources only a compile asks for,
 * the fused kernel under a tactic, and a region the generator refuses.
 */
#include "../../fuse/kernels.h"
#include "harness.h"
#include "region.h"

#include <stdio.h>
#include <string.h>

static const char chain[] = "%x : 4x64 : torch.float32\n"
			    "%y = aten.exp.default(%x : 4x64 : torch.float32) : 4x64 : torch.float32\n"
			    "%z = aten.mul.Tensor(%y : 4x64 : torch.float32, %x : 4x64 : torch.float32) : 4x64 : torch.float32\n"
			    "output %z\n";

/* the fused kernel, one per op, the reference; the CPU's reference and a
 * compile add the double-reading reference and the input fill */
static void t_chain(void)
{
	struct region r;
	region_build(&r, chain, 16, 0);
	CHECK(r.rc == 0);
	for (int full = 0; full < 2 && r.rc == 0; full++) {
		struct fs_kernels_opts o = {.cpu_ref = full, .compile = full};
		struct fs_kernels ks;
		struct fs_diags d;
		fs_diags_init(&d);
		CHECK(fs_kernels_generate(&r.p, &o, &ks, &d) == 0 && d.n == 0);
		fs_diags_release(&d);
		CHECK(!ks.gemm && ks.kernel);
		CHECK_EQ_U(ks.n, 3);
		for (uint32_t i = 0; i < ks.n; i++)
			CHECK(ks.l[i].k.source && !ks.l[i].gc);
		CHECK_EQ_U(ks.unfused_kernels, 2);
		CHECK_EQ_U(ks.ref_kernels, full ? 2 : 1);
		CHECK_EQ_U(ks.kernels, full ? 5 : 4);
		CHECK(ks.ref.source && !ks.store.source);
		CHECK(!ks.ref64.source == !full);
		CHECK(!ks.fill == !full);
		fs_kernels_release(&ks);
	}
	region_release(&r);
}

/* the fused kernel on demand: under the fallback for any size, under a
 * tactic of the compile-only list; the list begins with the fallback's, and
 * one of each kind is no more than every one */
static void t_fused_on_demand(void)
{
	struct region r;
	region_build(&r, chain, 16, 0);
	struct fs_kernels_opts o = {0};
	struct fs_kernels ks;
	struct fs_diags d;
	fs_diags_init(&d);
	CHECK(r.rc == 0 && fs_kernels_generate(&r.p, &o, &ks, &d) == 0);
	struct fs_tactic some[FS_MAX_TACTICS], all[FS_MAX_TACTICS];
	uint32_t n = fs_kernels_tactics(&ks.l[0].k, 0, some), m = fs_kernels_tactics(&ks.l[0].k, 1, all);
	CHECK(n >= 1 && n <= m);
	CHECK_EQ_U(some[0].vec, 1);
	struct fs_kernel k;
	CHECK(fs_kernels_fused(&ks, NULL, FS_GEN_KERNEL, 1, &k, &d) == 0 && k.source);
	fs_kernel_release(&k);
	CHECK(fs_kernels_fused(&ks, &some[n - 1], FS_GEN_EXACT, 0, &k, &d) == 0 && k.source && d.n == 0);
	fs_kernel_release(&k);
	fs_kernels_release(&ks);
	fs_diags_release(&d);
	region_release(&r);
}

/* The SwiGLU MLP: its three products run by cuBLASLt (no kernel of ours in
 * eager's chain), each with its float64 reference; the down projection reads
 * what the fused kernel writes, so the reference stores it; the generated
 * GEMM's tactics only where a compile asks. */
static void t_products(void)
{
	static const char mlp[] = "%x : 1x16x64 : torch.bfloat16\n%wg : 128x64 : torch.bfloat16\n%wu : 128x64 : torch.bfloat16\n"
				  "%wd : 64x128 : torch.bfloat16\n"
				  "%g = aten.linear.default(%x : 1x16x64 : torch.bfloat16, %wg : 128x64 : torch.bfloat16) : 1x16x128 : torch.bfloat16\n"
				  "%a = aten.silu.default(%g : 1x16x128 : torch.bfloat16) : 1x16x128 : torch.bfloat16\n"
				  "%u = aten.linear.default(%x : 1x16x64 : torch.bfloat16, %wu : 128x64 : torch.bfloat16) : 1x16x128 : torch.bfloat16\n"
				  "%h = aten.mul.Tensor(%a : 1x16x128 : torch.bfloat16, %u : 1x16x128 : torch.bfloat16) : 1x16x128 : torch.bfloat16\n"
				  "%y = aten.linear.default(%h : 1x16x128 : torch.bfloat16, %wd : 64x128 : torch.bfloat16) : 1x16x64 : torch.bfloat16\n"
				  "output %y\n";
	struct region r;
	region_build(&r, mlp, 16, 0);
	CHECK(r.rc == 0);
	for (int compile = 0; compile < 2 && r.rc == 0; compile++) {
		struct fs_kernels_opts o = {.compile = compile};
		struct fs_kernels ks;
		struct fs_diags d;
		fs_diags_init(&d);
		CHECK(fs_kernels_generate(&r.p, &o, &ks, &d) == 0 && d.n == 0);
		fs_diags_release(&d);
		CHECK(ks.gemm && ks.kernel);
		CHECK_EQ_U(ks.gp.n, 3);
		uint32_t products = 0;
		for (uint32_t i = 1; i < ks.n; i++)
			products += ks.l[i].gc != NULL && !ks.l[i].k.source;
		CHECK_EQ_U(products, 3);
		for (uint32_t k = 0; k < ks.gp.n; k++)
			CHECK(ks.product_ref[k][0] && !ks.product_ref[k][1]);
		CHECK(ks.store.source && ks.ref.source);
		CHECK_EQ_U(ks.ref_kernels, 3 + 1 + 1);
		CHECK_EQ_U(ks.kernels, 1 + ks.unfused_kernels + ks.ref_kernels);
		for (uint32_t t = 0; t < FS_GEMM_GEN_TACTICS; t++)
			CHECK(!ks.gen_source[t] == !(compile && ks.epi.source));
		CHECK(ks.epi.source || ks.gen_why[0]);
		fs_kernels_release(&ks);
	}
	region_release(&r);
}

/* a region whose expression doubles at every level: refused, saying why */
static void t_refused(void)
{
	char text[8192];
	size_t at = (size_t)snprintf(text, sizeof(text), "%%x0 : 4x64 : torch.float32\n");
	for (int i = 1; i <= 40; i++)
		at += (size_t)snprintf(text + at, sizeof(text) - at,
				       "%%x%d = aten.mul.Tensor(%%x%d : 4x64 : torch.float32, %%x%d : 4x64 : torch.float32) : 4x64 : torch.float32\n", i,
				       i - 1, i - 1);
	snprintf(text + at, sizeof(text) - at, "output (%%x40,)\n");
	struct region r;
	region_build(&r, text, 16, 0);
	CHECK(r.rc == 0);
	struct fs_kernels_opts o = {0};
	struct fs_kernels ks;
	struct fs_diags d;
	fs_diags_init(&d);
	CHECK(fs_kernels_generate(&r.p, &o, &ks, &d) != 0);
	CHECK(d.n == 1 && d.n_errors == 1 && strncmp(fs_diags_last(&d), "fused kernel: an expression past 1 MiB", 38) == 0);
	fs_diags_release(&d);
	CHECK_EQ_U(ks.kernels, 1);
	fs_kernels_release(&ks);
	region_release(&r);
}

#define TESTS(X) X(t_chain) X(t_fused_on_demand) X(t_products) X(t_refused)
FS_TEST_MAIN()
