/*
 * fuzz_gate.c: libFuzzer target for the CI gates' grammars (match/gate.c):
 * the bytes as an --expect file ("[@DUMP] PATTERN OP EXPR" lines, checked
 * int64 arithmetic, nesting bounded) and as a --baseline saved report (the
 * JSON rows, their types and ranges), both against the built-in library's
 * match of two small dumps (a selector has something to select, `layers`
 * a value), made once; each input's gate results are dropped after it.
 * Built with -DFS_FUZZ=ON (clang); replay.c runs the same entry point over
 * tests/fuzz/corpus_gate in every normal test run.
 */
#include "fusescan/matchrun.h"
#include "fusescan/scan.h"

#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* an RMSNorm over layers_0_ and layers_1_ weights: rmsnorm matches once a layer */
static const char dump[] =
	"%x : 4x8 : torch.bfloat16\n"
	"%up = aten.to.dtype(%x : 4x8 : torch.bfloat16, torch.float32) : 4x8 : torch.float32\n"
	"%sq = aten.pow.Tensor_Scalar(%up : 4x8 : torch.float32, 2) : 4x8 : torch.float32\n"
	"%mean = aten.mean.dim(%sq : 4x8 : torch.float32, [-1], True) : 4x1 : torch.float32\n"
	"%eps = aten.add.Tensor(%mean : 4x1 : torch.float32, 1e-05) : 4x1 : torch.float32\n"
	"%rs = aten.rsqrt.default(%eps : 4x1 : torch.float32) : 4x1 : torch.float32\n"
	"%norm = aten.mul.Tensor(%up : 4x8 : torch.float32, %rs : 4x1 : torch.float32) : 4x8 : torch.float32\n"
	"%down = aten.to.dtype(%norm : 4x8 : torch.float32, torch.bfloat16) : 4x8 : torch.bfloat16\n"
	"%out = aten.mul.Tensor(%model_layers_0_norm_weight : 8 : torch.bfloat16, %down : 4x8 : torch.bfloat16) : 4x8 : torch.bfloat16\n"
	"%o2 = aten.mul.Tensor(%model_layers_1_norm_weight : 8 : torch.bfloat16, %out : 4x8 : torch.bfloat16) : 4x8 : torch.bfloat16\n"
	"output %o2\n";

/* the two dumps matched, made on the first input and kept (the harness's
 * own state: the library keeps none) */
static struct fs_match_run *matched(void)
{
	static struct fs_scan *s;
	static struct fs_patlib lib;
	static struct fs_match_run *r;
	if (!s) {
		s = fs_scan_new();
		fs_scan_buffer(s, "001_export_export_to_gm.txt", dump, sizeof(dump) - 1);
		fs_scan_buffer(s, "035_compile_compile_model.txt", dump, sizeof(dump) - 1);
		fs_patlib_init(&lib);
		fs_patlib_load_builtin(&lib, &s->diags);
		r = fs_match_run(s, &lib, NULL, 0, &s->diags);
	}
	return r;
}

static void drop_gates(struct fs_gates *g)
{
	for (uint32_t i = 0; i < g->n; i++) {
		free(g->v[i].check);
		free(g->v[i].message);
	}
	g->n = g->failed = 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fs_match_run *r = matched();
	struct fs_diags d;
	fs_diags_init(&d);
	fs_match_gate_expect_text(r, "fuzz.expect", (const char *)data, size, &d);
	fs_match_gate_baseline_json(r, "fuzz.json", (const char *)data, size, &d);
	drop_gates(&r->gates);
	fs_diags_release(&d);
	return 0;
}
