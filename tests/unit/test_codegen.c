/*
 * test_codegen.c: what fuse/codegen.c says of the kernels it generates,
 * decided from the ops of the region (fuse/sem.def), on one-op regions of
 * every elementwise and row op of the table and on a few chains: whether a
 * kernel computes exp or tanh (its fast-math tactics, fs_tactics).
 */
#include "../../fuse/codegen.h"
#include "fusescan/scan.h"
#include "harness.h"
#include "region.h"

#include <stdlib.h>
#include <string.h>

static const struct row {
	const char *key;
	uint8_t kind, flags;
	const char *expr;
} rows[] = {
#define FS_SEM(id, key, kind, nt, flags, expr) {key, kind, flags, #expr},
#include "../../fuse/sem.def"
#undef FS_SEM
};
enum { N_ROWS = sizeof(rows) / sizeof(rows[0]) };

/* The fused kernel of every call node of `text` (at 16 tokens, gelu_tanh as
 * given): 0 and *k, or -1 where the region does not build or generate. */
static int generate(const char *text, int gelu_tanh, struct fs_kernel *k)
{
	struct region r;
	region_build(&r, text, 16, gelu_tanh);
	struct fs_diags d;
	fs_diags_init(&d);
	int rc = r.rc || fs_codegen(&r.p, -1, FS_GEN_KERNEL, NULL, k, &d) ? -1 : 0;
	fs_diags_release(&d);
	region_release(&r);
	return rc;
}

/* What the kernel's own text calls, after the template (kernels/fused.cuh,
 * which defines them all): the answer transcendental must agree with. */
static int calls_exp_or_tanh(const struct fs_kernel *k)
{
	const char *tpl = fs_kernel_file("fused.cuh"), *at = strstr(k->source, tpl);
	const char *body = at ? at + strlen(tpl) : k->source;
	return strstr(body, "fs_exp(") || strstr(body, "fs_tanh(") || strstr(body, "fs_gelu_tanh");
}

/* the one-op region of row r over a [4, 64] float32 input; 0 where its kind
 * has no such form here */
static int one_op(const struct row *r, char *buf, size_t n)
{
	static const char x[] = "%x : 4x64 : torch.float32", z[] = "%z : 4x64 : torch.float32", w[] = "%w : 4x64 : torch.float32";
	const char *out = r->kind == CMP ? "4x64 : torch.bool" : "4x64 : torch.float32";
	const char *ns = strchr(r->key, '.') ? "" : "aten.";
	switch (r->kind) {
	case UN:
		return snprintf(buf, n, "%s\n%%y = %s%s.default(%s) : %s\noutput %%y\n", x, ns, r->key, x, out) > 0;
	case BIN:
	case CMP:
		return snprintf(buf, n, "%s\n%s\n%%y = %s%s.Tensor(%s, %s) : %s\noutput %%y\n", x, z, ns, r->key, x, z, out) > 0;
	case TER:
		return snprintf(buf, n, "%s\n%s\n%s\n%%y = %s%s.default(%s, %s, %s) : %s\noutput %%y\n", x, z, w, ns, r->key, x, z, w, out) > 0;
	case SOFTMAX:
		return snprintf(buf, n, "%s\n%%y = %s%s.default(%s, -1, False) : %s\noutput %%y\n", x, ns, r->key, x, out) > 0;
	case RMSNORM:
		return snprintf(buf, n, "%s\n%%g : 64 : torch.float32\n%%y = %s%s.default(%s, %%g : 64 : torch.float32, 1e-06) : %s\noutput %%y\n", x, ns,
				r->key, x, out) > 0;
	default:
		return 0;
	}
}

/* the flag agrees with the row's expression: an elementwise op computes exp
 * or tanh exactly where its expression calls them */
static void t_flags_match_expressions(void)
{
	for (uint32_t i = 0; i < N_ROWS; i++) {
		const struct row *r = &rows[i];
		if (r->kind != UN && r->kind != BIN && r->kind != TER && r->kind != CMP)
			continue;
		int calls = strstr(r->expr, "fs_exp(") || strstr(r->expr, "fs_tanh(");
		if (calls != !!(r->flags & EXP_TANH)) {
			fprintf(stderr, "%s:%d: sem.def row %s: EXP_TANH %d, its expression %s\n", __FILE__, __LINE__, r->key, !!(r->flags & EXP_TANH), r->expr);
			fs_test_failed = 1;
		}
	}
}

/* every one-op region that generates: transcendental is the row's flag and
 * what the kernel's text calls */
static void t_one_op_regions(void)
{
	uint32_t generated = 0, flagged = 0;
	for (uint32_t i = 0; i < N_ROWS; i++) {
		char text[1024];
		struct fs_kernel k;
		if (!one_op(&rows[i], text, sizeof(text)) || generate(text, 0, &k))
			continue;
		generated++;
		flagged += !!(rows[i].flags & EXP_TANH);
		if (k.transcendental != !!(rows[i].flags & EXP_TANH) || k.transcendental != calls_exp_or_tanh(&k)) {
			fprintf(stderr, "%s:%d: %s: transcendental %u, flag %d, calls %d\n", __FILE__, __LINE__, rows[i].key, k.transcendental,
				!!(rows[i].flags & EXP_TANH), calls_exp_or_tanh(&k));
			fs_test_failed = 1;
		}
		fs_kernel_release(&k);
	}
	CHECK(generated >= 70); /* the table's elementwise ops, softmax and the norms */
	CHECK_EQ_U(flagged, 10); /* exp, tanh, sigmoid, silu, mish, softplus and the four softmax keys */
}

/* gelu computes exp in its tanh form only; a chain is transcendental where
 * one op of it is */
static void t_chains(void)
{
	static const char gelu[] = "%x : 4x64 : torch.float32\n"
				   "%y = aten.gelu.default(%x : 4x64 : torch.float32) : 4x64 : torch.float32\n"
				   "output %y\n";
	static const char swiglu[] = "%x : 4x64 : torch.bfloat16\n"
				     "%u : 4x64 : torch.bfloat16\n"
				     "%s = aten.silu.default(%x : 4x64 : torch.bfloat16) : 4x64 : torch.bfloat16\n"
				     "%y = aten.mul.Tensor(%s : 4x64 : torch.bfloat16, %u : 4x64 : torch.bfloat16) : 4x64 : torch.bfloat16\n"
				     "output %y\n";
	static const char add_norm[] = "%x : 4x64 : torch.bfloat16\n"
				       "%r : 4x64 : torch.bfloat16\n"
				       "%g : 64 : torch.bfloat16\n"
				       "%a = aten.add.Tensor(%x : 4x64 : torch.bfloat16, %r : 4x64 : torch.bfloat16) : 4x64 : torch.bfloat16\n"
				       "%y = auto_deploy.torch_rmsnorm.default(%a : 4x64 : torch.bfloat16, %g : 64 : torch.bfloat16, 1e-06) : 4x64 : torch.bfloat16\n"
				       "output (%a, %y)\n";
	static const struct {
		const char *text;
		int gelu_tanh, want;
	} cases[] = {{gelu, 0, 0}, {gelu, 1, 1}, {swiglu, 0, 1}, {add_norm, 0, 0}};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct fs_kernel k;
		if (generate(cases[i].text, cases[i].gelu_tanh, &k)) {
			fprintf(stderr, "%s:%d: case %zu does not generate\n", __FILE__, __LINE__, i);
			fs_test_failed = 1;
			continue;
		}
		CHECK_EQ_U(k.transcendental, cases[i].want);
		CHECK_EQ_U(k.transcendental, calls_exp_or_tanh(&k));
		fs_kernel_release(&k);
	}
}

#define TESTS(X) X(t_flags_match_expressions) X(t_one_op_regions) X(t_chains)
FS_TEST_MAIN()
