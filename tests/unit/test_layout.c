/*
 * test_layout.c: the memory layouts fuse/layout.c gives a region's values,
 * against what eager PyTorch returns for the same ops (TensorIterator's
 * rule, ATen's view rules), on tiny hand-written dumps whose call nodes all
 * form the region.
 */
#include "../../fuse/prog.h"
#include "fusescan/scan.h"
#include "harness.h"
#include "region.h"

#include <stdlib.h>
#include <string.h>

/* the layout of op `name`'s output: "row-major", or its order ("0 2 1 3") */
static const char *layout(const struct region *b, const char *name, char out[64])
{
	snprintf(out, 64, "(no op %s)", name);
	for (uint32_t i = 0; i < b->p.n_ops; i++) {
		const struct op *op = &b->p.ops[i];
		if (strcmp(fs_scan_str(b->s, b->p.g->nodes[op->node].name), name))
			continue;
		if (!op->out.strided)
			return snprintf(out, 64, "row-major"), out;
		int at = 0;
		for (uint8_t d = 0; d < op->out.rank; d++)
			at += snprintf(out + at, (size_t)(64 - at), "%s%u", d ? " " : "", op->out.order[d]);
		return out;
	}
	return out;
}

/* the dump as one region at `tokens`: it builds, and each op named in
 * `want` (name, layout, ..., NULL) has that layout */
static void expect(const char *text, int64_t tokens, const char *const *want)
{
	char o[64];
	struct region b;
	region_build(&b, text, tokens, 0);
	CHECK(b.rc == 0);
	for (; want[0]; want += 2)
		if (strcmp(layout(&b, want[0], o), want[1])) {
			fprintf(stderr, "%s:%d: op %s: layout %s, expected %s\n", __FILE__, __LINE__, want[0], o, want[1]);
			fs_test_failed = 1;
		}
	region_release(&b);
}

/* RoPE as Llama writes it: q [b, s, h, d] seen as [b, h, s, d]; eager keeps
 * q's memory order through mul, neg and add, cat is row-major */
static const char *rope =
	"%q : 1xs0x8x64 : torch.bfloat16\n"
	"%cos : 1x1xs0x64 : torch.bfloat16\n"
	"%sin : 1x1xs0x64 : torch.bfloat16\n"
	"%t = aten.transpose.int(%q : 1xs0x8x64 : torch.bfloat16, 1, 2) : 1x8xs0x64 : torch.bfloat16\n"
	"%m1 = aten.mul.Tensor(%t : 1x8xs0x64 : torch.bfloat16, %cos : 1x1xs0x64 : torch.bfloat16) : 1x8xs0x64 : torch.bfloat16\n"
	"%hi = aten.slice.Tensor(%t : 1x8xs0x64 : torch.bfloat16, 3, 32, 9223372036854775807) : 1x8xs0x32 : torch.bfloat16\n"
	"%lo = aten.slice.Tensor(%t : 1x8xs0x64 : torch.bfloat16, 3, 0, 32) : 1x8xs0x32 : torch.bfloat16\n"
	"%ng = aten.neg.default(%hi : 1x8xs0x32 : torch.bfloat16) : 1x8xs0x32 : torch.bfloat16\n"
	"%ct = aten.cat.default([ng, lo], -1) : 1x8xs0x64 : torch.bfloat16\n"
	"%m2 = aten.mul.Tensor(%ct : 1x8xs0x64 : torch.bfloat16, %sin : 1x1xs0x64 : torch.bfloat16) : 1x8xs0x64 : torch.bfloat16\n"
	"%y = aten.add.Tensor(%m1 : 1x8xs0x64 : torch.bfloat16, %m2 : 1x8xs0x64 : torch.bfloat16) : 1x8xs0x64 : torch.bfloat16\n"
	"output %y\n";

static void t_rope(void)
{
	static const char *const want[] = {"m1", "0 2 1 3", "ng", "0 2 1 3", "ct", "row-major", "m2", "row-major", "y", "0 2 1 3",
					   "t", "row-major" /* a view no kernel writes */, NULL};
	expect(rope, 1, want); /* at one token: decided as at two */
	expect(rope, 16, want);
}

/* the first operand whose strides tell two dims apart decides */
static void t_first_operand(void)
{
	expect("%x : 1xs0x8x64 : torch.float32\n"
	       "%r : 1x8xs0x64 : torch.float32\n"
	       "%t = aten.transpose.int(%x : 1xs0x8x64 : torch.float32, 1, 2) : 1x8xs0x64 : torch.float32\n"
	       "%a = aten.add.Tensor(%r : 1x8xs0x64 : torch.float32, %t : 1x8xs0x64 : torch.float32) : 1x8xs0x64 : torch.float32\n"
	       "%m = aten.mul.Tensor(%t : 1x8xs0x64 : torch.float32, %r : 1x8xs0x64 : torch.float32) : 1x8xs0x64 : torch.float32\n"
	       "%c = aten._to_copy.default(%m : 1x8xs0x64 : torch.float32, dtype = torch.bfloat16) : 1x8xs0x64 : torch.bfloat16\n"
	       "%k = aten.clone.default(%m : 1x8xs0x64 : torch.float32) : 1x8xs0x64 : torch.float32\n"
	       "%e = aten.sub.Tensor(%a : 1x8xs0x64 : torch.float32, %k : 1x8xs0x64 : torch.float32) : 1x8xs0x64 : torch.float32\n"
	       "output (%e, %c)\n",
	       16, (const char *const[]){"a", "row-major",
						  "m", "0 2 1 3",
						  "c", "0 2 1 3" /* a cast keeps its operand's layout */,
						  "k", "row-major" /* reshape's and .contiguous()'s copy */,
						  "e", "row-major", NULL});
}

/* a view of a permuted value keeps its strides where ATen's computeStride
 * finds them (dropping the batch dim), and copies where it does not
 * (merging s with d across the heads) */
static void t_views(void)
{
	expect("%x : 1xs0x8x64 : torch.float32\n"
	       "%t = aten.transpose.int(%x : 1xs0x8x64 : torch.float32, 1, 2) : 1x8xs0x64 : torch.float32\n"
	       "%v = aten.view.default(%t : 1x8xs0x64 : torch.float32, [8, s0, 64]) : 8xs0x64 : torch.float32\n"
	       "%a = aten.abs.default(%v : 8xs0x64 : torch.float32) : 8xs0x64 : torch.float32\n"
	       "%w = aten.reshape.default(%t : 1x8xs0x64 : torch.float32, [1, 8, 64*s0]) : 1x8x64*s0 : torch.float32\n"
	       "%n = aten.neg.default(%w : 1x8x64*s0 : torch.float32) : 1x8x64*s0 : torch.float32\n"
	       "output (%a, %n)\n",
	       16, (const char *const[]){"a", "1 0 2",
						  "n", "row-major", NULL});
}

/* the last dim moved out of the innermost place (a transpose of the last
 * two): the vectors could not run along it, so the region stays row-major;
 * so does a region with a reduction */
static void t_row_major_regions(void)
{
	expect("%x : s0x64 : torch.float32\n"
	       "%t = aten.transpose.int(%x : s0x64 : torch.float32, 0, 1) : 64xs0 : torch.float32\n"
	       "%a = aten.exp.default(%t : 64xs0 : torch.float32) : 64xs0 : torch.float32\n"
	       "output %a\n",
	       16, (const char *const[]){"a", "row-major", NULL});
	expect("%x : 1xs0x8x64 : torch.float32\n"
	       "%t = aten.transpose.int(%x : 1xs0x8x64 : torch.float32, 1, 2) : 1x8xs0x64 : torch.float32\n"
	       "%a = aten.exp.default(%t : 1x8xs0x64 : torch.float32) : 1x8xs0x64 : torch.float32\n"
	       "%s = aten._softmax.default(%a : 1x8xs0x64 : torch.float32, -1, False) : 1x8xs0x64 : torch.float32\n"
	       "output %s\n",
	       16, (const char *const[]){"a", "row-major",
						  "s", "row-major", NULL});
}

static void t_to_memory(void)
{
	/* a [1, 2, 3, 2] value laid out as [1, 3, 2, 2] memory: row-major source, memory destination */
	struct ten t = {.rank = 4, .shape = {1, 2, 3, 2}, .n = 12, .strided = 1, .order = {0, 2, 1, 3}};
	double src[12], dst[12];
	for (int i = 0; i < 12; i++)
		src[i] = i;
	fs_ten_to_memory(&t, src, dst);
	/* element (0, h, s, d) lies at s * 4 + h * 2 + d */
	for (int h = 0; h < 2; h++)
		for (int s = 0; s < 3; s++)
			for (int d = 0; d < 2; d++)
				CHECK(dst[s * 4 + h * 2 + d] == src[h * 6 + s * 2 + d]);
}

#define TESTS(X) X(t_rope) X(t_first_operand) X(t_views) X(t_row_major_regions) X(t_to_memory)
FS_TEST_MAIN()
