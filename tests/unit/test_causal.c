/*
 * test_causal.c: attention masks proven causal (match/causal.c) on
 * hand-written graphs: Hugging Face's export and decomposed masks and a
 * float mask are proven, and the nodes only they read go; a mask that reads
 * an input, a sliding window, an offset, a chunked mask, the transposed and
 * the anti-causal mask, a reshape that moves dims, and an attention already
 * causal are refused; a cone past the budget is refused without harm.
 */
#include "fusescan/mine.h"
#include "harness.h"

#include <stdlib.h>
#include <string.h>

struct fix {
	struct fs_scan *s;
	struct fs_mine *m;
};

static void mine(struct fix *f, const char *text)
{
	f->s = fs_scan_new();
	fs_scan_buffer(f->s, "t.txt", text, strlen(text));
	CHECK_EQ_U(f->s->diags.n_errors, 0);
	struct fs_mine_opts o = {NULL, NULL, 0};
	f->m = fs_mine_graph(f->s, f->s->modules[0].graph, &o);
}

static uint32_t proven(const struct fix *f)
{
	uint32_t n = 0;
	for (uint32_t i = 0; i < f->m->n_cleanups; i++)
		n += f->m->cleanups[i].kind == FS_CLEAN_CAUSAL_MASK;
	return n;
}

static void done(struct fix *f)
{
	fs_mine_free(f->m);
	fs_scan_free(f->s);
}

#define Q "%q : 1x4xs70x64 : torch.bfloat16\n"
#define QKV "%q : 1x4xs70x64 : torch.bfloat16, %q : 1x4xs70x64 : torch.bfloat16, %q : 1x4xs70x64 : torch.bfloat16"
#define SDPA(mask, shape, dt) "%o = aten.scaled_dot_product_attention.default(" QKV ", %" mask " : " shape " : " dt ") : 1x4xs70x64 : torch.bfloat16\noutput %o\n"

/* the query and key positions, as Hugging Face's export builds them */
#define POSITIONS                                                                                           \
	"%ids : s72xs70 : torch.int64\n"                                                                   \
	"%n = aten.sym_size.int(%ids : s72xs70 : torch.int64, 1) : ? : SymInt\n"                           \
	"%ar = aten.arange.default(%n : ? : SymInt) : s70 : torch.int64\n"                                  \
	"%u1 = aten.unsqueeze.default(%ar : s70 : torch.int64, 0) : 1xs70 : torch.int64\n"                  \
	"%u2 = aten.unsqueeze.default(%u1 : 1xs70 : torch.int64, 1) : 1x1xs70 : torch.int64\n"              \
	"%qi = aten.unsqueeze.default(%u2 : 1x1xs70 : torch.int64, 3) : 1x1xs70x1 : torch.int64\n"          \
	"%kj = aten.unsqueeze.default(%u2 : 1x1xs70 : torch.int64, 2) : 1x1x1xs70 : torch.int64\n"

/* Hugging Face's export: key <= query, and the packed-sequence check (the
 * position ids' differences, all 1: one sequence) */
static const char HF[] =
	Q POSITIONS
	"%pos = aten.expand.default(%u1 : 1xs70 : torch.int64, [1, -1]) : 1xs70 : torch.int64\n"
	"%first = aten.slice.Tensor(%pos : 1xs70 : torch.int64, 1, 0, 1) : 1x1 : torch.int64\n"
	"%pre = aten.sub.Tensor(%first : 1x1 : torch.int64, 1) : 1x1 : torch.int64\n"
	"%diff = aten.diff.default(%pos : 1xs70 : torch.int64, 1, -1, %pre : 1x1 : torch.int64) : 1xs70 : torch.int64\n"
	"%ne = aten.ne.Scalar(%diff : 1xs70 : torch.int64, 1) : 1xs70 : torch.bool\n"
	"%seq = aten.cumsum.default(%ne : 1xs70 : torch.bool, -1) : 1xs70 : torch.int64\n"
	"%b = aten.arange.default(1) : 1 : torch.int64\n"
	"%b4 = aten.view.default(%b : 1 : torch.int64, [1, 1, 1, 1]) : 1x1x1x1 : torch.int64\n"
	"%si = aten.index.Tensor(%seq : 1xs70 : torch.int64, [b4, qi]) : 1x1xs70x1 : torch.int64\n"
	"%sj = aten.index.Tensor(%seq : 1xs70 : torch.int64, [b4, kj]) : 1x1x1xs70 : torch.int64\n"
	"%same = aten.eq.Tensor(%si : 1x1xs70x1 : torch.int64, %sj : 1x1x1xs70 : torch.int64) : 1x1xs70xs70 : torch.bool\n"
	"%ones = aten.new_ones.default(%qi : 1x1xs70x1 : torch.int64, []) : scalar : torch.bool\n"
	"%le = aten.le.Tensor(%kj : 1x1x1xs70 : torch.int64, %qi : 1x1xs70x1 : torch.int64) : 1x1xs70xs70 : torch.bool\n"
	"%chk = aten._assert_tensor_metadata.default(%le : 1x1xs70xs70 : torch.bool) : ? : NoneType\n"
	"%to = aten.to.dtype_layout(%le : 1x1xs70xs70 : torch.bool) : 1x1xs70xs70 : torch.bool\n"
	"%a1 = aten.__and__.Tensor(%ones : scalar : torch.bool, %to : 1x1xs70xs70 : torch.bool) : 1x1xs70xs70 : torch.bool\n"
	"%mask = aten.__and__.Tensor(%a1 : 1x1xs70xs70 : torch.bool, %same : 1x1xs70xs70 : torch.bool) : 1x1xs70xs70 : torch.bool\n"
	"%rope = aten.mul.Tensor(%u1 : 1xs70 : torch.int64, 2) : 1xs70 : torch.int64\n" /* positions read elsewhere */
	"%o = aten.scaled_dot_product_attention.default(" QKV ", %mask : 1x1xs70xs70 : torch.bool) : 1x4xs70x64 : torch.bfloat16\n"
	"%o2 = aten.scaled_dot_product_attention.default(" QKV ", %mask : 1x1xs70xs70 : torch.bool) : 1x4xs70x64 : torch.bfloat16\n"
	"output %o, %o2, %rope\n";

static void t_export_mask_is_causal(void)
{
	struct fix f;
	mine(&f, HF);
	CHECK_EQ_U(proven(&f), 2);
	/* u2 qi kj pos first pre diff ne seq b b4 si sj same ones le to a1 mask go;
	 * ids n ar u1 stay (u1 is read by rope) */
	CHECK_EQ_U(f.m->n_freed, 19);
	done(&f);
}

/* run_decompositions() writes diff as cat + two slices + sub */
static void t_decomposed_diff_is_causal(void)
{
	struct fix f;
	mine(&f, Q POSITIONS
		 "%pos = aten.expand.default(%u1 : 1xs70 : torch.int64, [1, -1]) : 1xs70 : torch.int64\n"
		 "%first = aten.slice.Tensor(%pos : 1xs70 : torch.int64, 1, 0, 1) : 1x1 : torch.int64\n"
		 "%pre = aten.sub.Tensor(%first : 1x1 : torch.int64, 1) : 1x1 : torch.int64\n"
		 "%cat = aten.cat.default([pre, pos], -1) : 1xs70 + 1 : torch.int64\n"
		 "%lo = aten.slice.Tensor(%cat : 1xs70 + 1 : torch.int64, -1, 0, %n : ? : SymInt) : 1xs70 : torch.int64\n"
		 "%hi = aten.slice.Tensor(%cat : 1xs70 + 1 : torch.int64, -1, 1, %n : ? : SymInt) : 1xs70 : torch.int64\n"
		 "%d = aten.sub.Tensor(%hi : 1xs70 : torch.int64, %lo : 1xs70 : torch.int64) : 1xs70 : torch.int64\n"
		 "%ne = aten.ne.Scalar(%d : 1xs70 : torch.int64, 1) : 1xs70 : torch.bool\n"
		 "%seq = aten.cumsum.default(%ne : 1xs70 : torch.bool, -1) : 1xs70 : torch.int64\n"
		 "%t = aten.full.default([], True) : scalar : torch.bool\n"
		 "%z = aten.zeros.default([1]) : 1 : torch.int64\n"
		 "%z4 = aten.view.default(%z : 1 : torch.int64, [1, 1, 1, 1]) : 1x1x1x1 : torch.int64\n"
		 "%si = aten.index.Tensor(%seq : 1xs70 : torch.int64, [z4, qi]) : 1x1xs70x1 : torch.int64\n"
		 "%sj = aten.index.Tensor(%seq : 1xs70 : torch.int64, [z4, kj]) : 1x1x1xs70 : torch.int64\n"
		 "%same = aten.eq.Tensor(%si : 1x1xs70x1 : torch.int64, %sj : 1x1x1xs70 : torch.int64) : 1x1xs70xs70 : torch.bool\n"
		 "%le = aten.le.Tensor(%kj : 1x1x1xs70 : torch.int64, %qi : 1x1xs70x1 : torch.int64) : 1x1xs70xs70 : torch.bool\n"
		 "%a = aten.bitwise_and.Tensor(%t : scalar : torch.bool, %le : 1x1xs70xs70 : torch.bool) : 1x1xs70xs70 : torch.bool\n"
		 "%mask = aten.bitwise_and.Tensor(%a : 1x1xs70xs70 : torch.bool, %same : 1x1xs70xs70 : torch.bool) : 1x1xs70xs70 : torch.bool\n"
		 SDPA("mask", "1x1xs70xs70", "torch.bool"));
	CHECK_EQ_U(proven(&f), 1);
	done(&f);
}

/* a mask of one comparison and its variants */
static uint32_t one_comparison(const char *extra, const char *mask, const char *shape, const char *dt)
{
	char text[4096];
	snprintf(text, sizeof(text), "%s%s%%o = aten.scaled_dot_product_attention.default(%s, %%%s : %s : %s) : 1x4xs70x64 : torch.bfloat16\n"
		 "output %%o\n", Q POSITIONS, extra, QKV, mask, shape, dt);
	struct fix f;
	mine(&f, text);
	uint32_t n = proven(&f);
	done(&f);
	return n;
}

#define LE "%le = aten.le.Tensor(%kj : 1x1x1xs70 : torch.int64, %qi : 1x1xs70x1 : torch.int64) : 1x1xs70xs70 : torch.bool\n"

static void t_variants(void)
{
	CHECK_EQ_U(one_comparison(LE, "le", "1x1xs70xs70", "torch.bool"), 1);
	/* query >= key, and 2 key <= 2 query: the same mask */
	CHECK_EQ_U(one_comparison("%ge = aten.ge.Tensor(%qi : 1x1xs70x1 : torch.int64, %kj : 1x1x1xs70 : torch.int64) : 1x1xs70xs70 : torch.bool\n",
				  "ge", "1x1xs70xs70", "torch.bool"), 1);
	CHECK_EQ_U(one_comparison("%k2 = aten.mul.Tensor(%kj : 1x1x1xs70 : torch.int64, 2) : 1x1x1xs70 : torch.int64\n"
				  "%q2 = aten.mul.Tensor(%qi : 1x1xs70x1 : torch.int64, 2) : 1x1xs70x1 : torch.int64\n"
				  "%le = aten.le.Tensor(%k2 : 1x1x1xs70 : torch.int64, %q2 : 1x1xs70x1 : torch.int64) : 1x1xs70xs70 : torch.bool\n",
				  "le", "1x1xs70xs70", "torch.bool"), 1);
	/* key < query + 1 */
	CHECK_EQ_U(one_comparison("%q1 = aten.add.Tensor(%qi : 1x1xs70x1 : torch.int64, 1) : 1x1xs70x1 : torch.int64\n"
				  "%lt = aten.lt.Tensor(%kj : 1x1x1xs70 : torch.int64, %q1 : 1x1xs70x1 : torch.int64) : 1x1xs70xs70 : torch.bool\n",
				  "lt", "1x1xs70xs70", "torch.bool"), 1);
	/* a float mask: 0 where allowed, -inf elsewhere */
	CHECK_EQ_U(one_comparison(LE "%fm = aten.where.ScalarSelf(%le : 1x1xs70xs70 : torch.bool, 0.0, -inf) : 1x1xs70xs70 : torch.float32\n",
				  "fm", "1x1xs70xs70", "torch.float32"), 1);
	/* refused: key < query (the diagonal masked), key <= query + 1 (an offset) */
	CHECK_EQ_U(one_comparison("%lt = aten.lt.Tensor(%kj : 1x1x1xs70 : torch.int64, %qi : 1x1xs70x1 : torch.int64) : 1x1xs70xs70 : torch.bool\n",
				  "lt", "1x1xs70xs70", "torch.bool"), 0);
	CHECK_EQ_U(one_comparison("%q1 = aten.add.Tensor(%qi : 1x1xs70x1 : torch.int64, 1) : 1x1xs70x1 : torch.int64\n"
				  "%le = aten.le.Tensor(%kj : 1x1x1xs70 : torch.int64, %q1 : 1x1xs70x1 : torch.int64) : 1x1xs70xs70 : torch.bool\n",
				  "le", "1x1xs70xs70", "torch.bool"), 0);
	/* refused: the transposed mask (query <= key) */
	CHECK_EQ_U(one_comparison("%le = aten.le.Tensor(%qi : 1x1xs70x1 : torch.int64, %kj : 1x1x1xs70 : torch.int64) : 1x1xs70xs70 : torch.bool\n",
				  "le", "1x1xs70xs70", "torch.bool"), 0);
	/* refused: a sliding window (key > query - 4096 as well) */
	CHECK_EQ_U(one_comparison(LE "%w = aten.sub.Tensor(%qi : 1x1xs70x1 : torch.int64, 4096) : 1x1xs70x1 : torch.int64\n"
				     "%gt = aten.gt.Tensor(%kj : 1x1x1xs70 : torch.int64, %w : 1x1xs70x1 : torch.int64) : 1x1xs70xs70 : torch.bool\n"
				     "%sw = aten.__and__.Tensor(%le : 1x1xs70xs70 : torch.bool, %gt : 1x1xs70xs70 : torch.bool) : 1x1xs70xs70 : torch.bool\n",
				  "sw", "1x1xs70xs70", "torch.bool"), 0);
	/* refused: chunked attention (floor_divide is not followed) */
	CHECK_EQ_U(one_comparison(LE "%cq = aten.floor_divide.default(%qi : 1x1xs70x1 : torch.int64, 8192) : 1x1xs70x1 : torch.int64\n"
				     "%ck = aten.floor_divide.default(%kj : 1x1x1xs70 : torch.int64, 8192) : 1x1x1xs70 : torch.int64\n"
				     "%ch = aten.eq.Tensor(%ck : 1x1x1xs70 : torch.int64, %cq : 1x1xs70x1 : torch.int64) : 1x1xs70xs70 : torch.bool\n"
				     "%m = aten.__and__.Tensor(%le : 1x1xs70xs70 : torch.bool, %ch : 1x1xs70xs70 : torch.bool) : 1x1xs70xs70 : torch.bool\n",
				  "m", "1x1xs70xs70", "torch.bool"), 0);
	/* refused: a permute of a non-constant value */
	CHECK_EQ_U(one_comparison(LE "%r = aten.view.default(%le : 1x1xs70xs70 : torch.bool, [1, 1, s70, s70]) : 1x1xs70xs70 : torch.bool\n"
				     "%p = aten.permute.default(%r : 1x1xs70xs70 : torch.bool, [0, 1, 3, 2]) : 1x1xs70xs70 : torch.bool\n",
				  "p", "1x1xs70xs70", "torch.bool"), 0);
	/* refused: a padding mask read from the inputs */
	CHECK_EQ_U(one_comparison(LE "%pad : 1x1x1xs70 : torch.bool\n"
				     "%m = aten.__and__.Tensor(%le : 1x1xs70xs70 : torch.bool, %pad : 1x1x1xs70 : torch.bool) : 1x1xs70xs70 : torch.bool\n",
				  "m", "1x1xs70xs70", "torch.bool"), 0);
	CHECK_EQ_U(one_comparison("%pos : 1xs70 : torch.int64\n"
				  "%pq = aten.view.default(%pos : 1xs70 : torch.int64, [1, 1, s70, 1]) : 1x1xs70x1 : torch.int64\n"
				  "%pk = aten.view.default(%pos : 1xs70 : torch.int64, [1, 1, 1, s70]) : 1x1x1xs70 : torch.int64\n"
				  "%le = aten.le.Tensor(%pk : 1x1x1xs70 : torch.int64, %pq : 1x1xs70x1 : torch.int64) : 1x1xs70xs70 : torch.bool\n",
				  "le", "1x1xs70xs70", "torch.bool"), 0);
}

static void t_already_causal_is_left(void)
{
	struct fix f;
	mine(&f, Q POSITIONS LE
		 "%o = aten.scaled_dot_product_attention.default(" QKV ", %le : 1x1xs70xs70 : torch.bool, 0.0, True) : 1x4xs70x64 : torch.bfloat16\n"
		 "output %o\n");
	CHECK_EQ_U(proven(&f), 0);
	CHECK_EQ_U(f.m->n_freed, 0);
	done(&f);
}

/* a mask that is also a graph output is proven, and stays */
static void t_mask_read_elsewhere_stays(void)
{
	struct fix f;
	mine(&f, Q POSITIONS LE
		 "%o = aten.scaled_dot_product_attention.default(" QKV ", %le : 1x1xs70xs70 : torch.bool) : 1x4xs70x64 : torch.bfloat16\n"
		 "output %o, %le\n");
	CHECK_EQ_U(proven(&f), 1);
	CHECK_EQ_U(f.m->n_freed, 0);
	done(&f);
}

/* a mask whose cone is past the budget: refused, each node evaluated once */
static void t_deep_cone_is_refused(void)
{
	size_t cap = 1 << 20, len = 0;
	char *text = malloc(cap);
	len += (size_t)snprintf(text + len, cap - len, "%s%%x0 = aten.add.Tensor(%%kj : 1x1x1xs70 : torch.int64, 0) : 1x1x1xs70 : torch.int64\n",
				Q POSITIONS);
	for (int i = 1; i < 2000; i++)
		len += (size_t)snprintf(text + len, cap - len,
					"%%x%d = aten.add.Tensor(%%x%d : 1x1x1xs70 : torch.int64, 0) : 1x1x1xs70 : torch.int64\n", i, i - 1);
	len += (size_t)snprintf(text + len, cap - len,
				"%%le = aten.le.Tensor(%%x1999 : 1x1x1xs70 : torch.int64, %%qi : 1x1xs70x1 : torch.int64) : 1x1xs70xs70 : torch.bool\n"
				"%%o = aten.scaled_dot_product_attention.default(%s, %%le : 1x1xs70xs70 : torch.bool) : 1x4xs70x64 : torch.bfloat16\n"
				"output %%o\n", QKV);
	struct fix f;
	mine(&f, text);
	CHECK_EQ_U(proven(&f), 0);
	done(&f);
	free(text);
}

#define TESTS(X) X(t_export_mask_is_causal) X(t_decomposed_diff_is_causal) X(t_variants) X(t_already_causal_is_left) \
	X(t_mask_read_elsewhere_stays) X(t_deep_cone_is_refused)
FS_TEST_MAIN()
