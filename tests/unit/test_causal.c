/*
 * test_causal.c: attention masks proven causal (match/causal.c) on
 * hand-written graphs: Hugging Face's export and decomposed masks and a
 * float mask are proven, and the nodes only they read go; a mask that reads
 * an input, a sliding window, an offset, a chunked mask, the transposed and
 * the anti-causal mask, a reshape that moves dims, and an attention already
 * causal are refused; a cone past the budget is refused without harm. What
 * PyTorch computes otherwise is refused too: a symbolic dim broadcast (1 at
 * runtime), values that wrap in their dtype, negative and uint8 indices, a
 * longer prepend, a dtype view, storage written in place, a keyword argument
 * the dump does not print; a mask copied out stays.
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

/* the graph's attentions proven causal, and the nodes that go with their masks */
#define EXPECT(text, want_proven, want_freed)          \
	do {                                           \
		struct fix f_;                         \
		mine(&f_, text);                       \
		CHECK_EQ_U(proven(&f_), want_proven);  \
		CHECK_EQ_U(f_.m->n_freed, want_freed); \
		done(&f_);                             \
	} while (0)

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
	char text[8192];
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
	EXPECT(Q POSITIONS LE
		 "%o = aten.scaled_dot_product_attention.default(" QKV ", %le : 1x1xs70xs70 : torch.bool, 0.0, True) : 1x4xs70x64 : torch.bfloat16\n"
		 "output %o\n", 0, 0);
}

/* a mask that is also a graph output is proven, and stays */
static void t_mask_read_elsewhere_stays(void)
{
	EXPECT(Q POSITIONS LE
		 "%o = aten.scaled_dot_product_attention.default(" QKV ", %le : 1x1xs70xs70 : torch.bool) : 1x4xs70x64 : torch.bfloat16\n"
		 "output %o, %le\n", 1, 0);
}

/* what goes is every node only the mask reads, evaluated or not (new_ones'
 * template): the mask, the comparison, the template, the positions' views,
 * the arange and the size it reads */
static void t_all_the_mask_reads_goes(void)
{
	EXPECT(Q POSITIONS LE
		 "%tm = aten.unsqueeze.default(%u2 : 1x1xs70 : torch.int64, 0) : 1x1x1xs70 : torch.int64\n"
		 "%one = aten.new_ones.default(%tm : 1x1x1xs70 : torch.int64, []) : scalar : torch.bool\n"
		 "%m = aten.__and__.Tensor(%one : scalar : torch.bool, %le : 1x1xs70xs70 : torch.bool) : 1x1xs70xs70 : torch.bool\n"
		 "%o = aten.scaled_dot_product_attention.default(" QKV ", %m : 1x1xs70xs70 : torch.bool) : 1x4xs70x64 : torch.bfloat16\n"
		 "output %o\n", 1, 10); /* m one tm le kj qi u2 u1 ar n */
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


/* the batch size s72 is 1 at runtime: a query index over s72 broadcast over
 * s70 rows is 0 on every row (key <= 0), as is a mask whose query dim is s72
 * under an attention whose queries are s70 */
#define Q72                                                                                                  \
	"%m72 = aten.sym_size.int(%ids : s72xs70 : torch.int64, 0) : ? : SymInt\n"                            \
	"%a72 = aten.arange.default(%m72 : ? : SymInt) : s72 : torch.int64\n"                                  \
	"%b1 = aten.unsqueeze.default(%a72 : s72 : torch.int64, 0) : 1xs72 : torch.int64\n"                    \
	"%b2 = aten.unsqueeze.default(%b1 : 1xs72 : torch.int64, 1) : 1x1xs72 : torch.int64\n"                 \
	"%q72 = aten.unsqueeze.default(%b2 : 1x1xs72 : torch.int64, 3) : 1x1xs72x1 : torch.int64\n"

static void t_broadcast_of_a_symbolic_dim_is_refused(void)
{
	CHECK_EQ_U(one_comparison(Q72 "%le = aten.le.Tensor(%kj : 1x1x1xs70 : torch.int64, %q72 : 1x1xs72x1 : torch.int64) : 1x1xs70xs70 : torch.bool\n",
				  "le", "1x1xs70xs70", "torch.bool"), 0);
	CHECK_EQ_U(one_comparison(Q72 "%le = aten.le.Tensor(%kj : 1x1x1xs70 : torch.int64, %q72 : 1x1xs72x1 : torch.int64) : 1x1xs72xs70 : torch.bool\n",
				  "le", "1x1xs72xs70", "torch.bool"), 0);
	/* an index tensor broadcast against another the same way */
	CHECK_EQ_U(one_comparison(Q72 "%col = aten.unsqueeze.default(%ar : s70 : torch.int64, 1) : s70x1 : torch.int64\n"
				      "%x = aten.expand.default(%col : s70x1 : torch.int64, [-1, s70]) : s70xs70 : torch.int64\n"
				      "%g = aten.index.Tensor(%x : s70xs70 : torch.int64, [q72, kj]) : 1x1xs70xs70 : torch.int64\n"
				      "%le = aten.le.Tensor(%kj : 1x1x1xs70 : torch.int64, %g : 1x1xs70xs70 : torch.int64) : 1x1xs70xs70 : torch.bool\n",
				  "le", "1x1xs70xs70", "torch.bool"), 0);
}

/* -2^63 * j over two elements: in int64 still */
#define MIN63                                                                                                   \
	"%a2 = aten.arange.default(2) : 2 : torch.int64\n"                                                    \
	"%u = aten.unsqueeze.default(%a2 : 2 : torch.int64, 0) : 1x2 : torch.int64\n"                         \
	"%x = aten.mul.Tensor(%u : 1x2 : torch.int64, -9223372036854775808) : 1x2 : torch.int64\n"

/* values wrap in their dtype: an int8 position past 127, an int64 one near
 * 2^63; a comparison converts a literal to the tensor's dtype (-1 is 255 to
 * a uint8) */
static void t_wraparound_is_refused(void)
{
	CHECK_EQ_U(one_comparison("%k8 = aten._to_copy.default(%kj : 1x1x1xs70 : torch.int64) : 1x1x1xs70 : torch.int8\n"
				  "%q8 = aten._to_copy.default(%qi : 1x1xs70x1 : torch.int64) : 1x1xs70x1 : torch.int8\n"
				  "%le = aten.le.Tensor(%k8 : 1x1x1xs70 : torch.int8, %q8 : 1x1xs70x1 : torch.int8) : 1x1xs70xs70 : torch.bool\n",
				  "le", "1x1xs70xs70", "torch.bool"), 0);
	CHECK_EQ_U(one_comparison("%k1 = aten.add.Tensor(%kj : 1x1x1xs70 : torch.int64, 9223372036854775000) : 1x1x1xs70 : torch.int64\n"
				  "%q1 = aten.add.Tensor(%qi : 1x1xs70x1 : torch.int64, 9223372036854775000) : 1x1xs70x1 : torch.int64\n"
				  "%le = aten.le.Tensor(%k1 : 1x1x1xs70 : torch.int64, %q1 : 1x1xs70x1 : torch.int64) : 1x1xs70xs70 : torch.bool\n",
				  "le", "1x1xs70xs70", "torch.bool"), 0);
	CHECK_EQ_U(one_comparison(LE "%z = aten.zeros.default([]) : scalar : torch.uint8\n"
				     "%gt = aten.gt.Scalar(%z : scalar : torch.uint8, -1) : scalar : torch.bool\n"
				     "%m = aten.__and__.Tensor(%le : 1x1xs70xs70 : torch.bool, %gt : scalar : torch.bool) : 1x1xs70xs70 : torch.bool\n",
				  "m", "1x1xs70xs70", "torch.bool"), 0);
	/* coefficients of -2^63: no undefined negation in gcd or diff (the sanitizer build) */
	CHECK_EQ_U(one_comparison(MIN63 "%y = aten.le.Scalar(%x : 1x2 : torch.int64, 0) : 1x2 : torch.bool\n", "y", "1x2", "torch.bool"), 0);
	CHECK_EQ_U(one_comparison(MIN63 "%p = aten.slice.Tensor(%x : 1x2 : torch.int64, 1, 0, 1) : 1x1 : torch.int64\n"
					"%d = aten.diff.default(%x : 1x2 : torch.int64, 1, -1, %p : 1x1 : torch.int64) : 1x2 : torch.int64\n"
					"%e = aten.eq.Scalar(%d : 1x2 : torch.int64, 0) : 1x2 : torch.bool\n",
				  "e", "1x2", "torch.bool"), 0);
}

/* index tensors: a negative index counts from the end (seq[-1] is its last
 * element, not the line through it), a uint8 one is a mask */
static void t_odd_index_is_refused(void)
{
	CHECK_EQ_U(one_comparison("%qm = aten.sub.Tensor(%qi : 1x1xs70x1 : torch.int64, 1) : 1x1xs70x1 : torch.int64\n"
				  "%g = aten.index.Tensor(%ar : s70 : torch.int64, [qm]) : 1x1xs70x1 : torch.int64\n"
				  "%q2 = aten.add.Tensor(%g : 1x1xs70x1 : torch.int64, 1) : 1x1xs70x1 : torch.int64\n"
				  "%le = aten.le.Tensor(%kj : 1x1x1xs70 : torch.int64, %q2 : 1x1xs70x1 : torch.int64) : 1x1xs70xs70 : torch.bool\n",
				  "le", "1x1xs70xs70", "torch.bool"), 0);
	CHECK_EQ_U(one_comparison(LE "%t = aten.new_ones.default(%ar : s70 : torch.int64, [s70]) : s70 : torch.uint8\n"
				     "%g = aten.index.Tensor(%ar : s70 : torch.int64, [t]) : s70 : torch.int64\n"
				     "%e = aten.eq.Scalar(%g : s70 : torch.int64, 1) : s70 : torch.bool\n"
				     "%m = aten.__and__.Tensor(%le : 1x1xs70xs70 : torch.bool, %e : s70 : torch.bool) : 1x1xs70xs70 : torch.bool\n",
				  "m", "1x1xs70xs70", "torch.bool"), 0);
}

/* diff's prepend of two elements: the differences are 1, 0, 1, 1, ... and
 * the packed-sequence check splits the first position off */
static void t_long_prepend_is_refused(void)
{
	CHECK_EQ_U(one_comparison("%pos = aten.expand.default(%u1 : 1xs70 : torch.int64, [1, -1]) : 1xs70 : torch.int64\n"
				  "%pa = aten.arange.start(-1, 1) : 2 : torch.int64\n"
				  "%pre = aten.unsqueeze.default(%pa : 2 : torch.int64, 0) : 1x2 : torch.int64\n"
				  "%diff = aten.diff.default(%pos : 1xs70 : torch.int64, 1, -1, %pre : 1x2 : torch.int64) : 1xs70 + 1 : torch.int64\n"
				  "%ne = aten.ne.Scalar(%diff : 1xs70 + 1 : torch.int64, 1) : 1xs70 + 1 : torch.bool\n"
				  "%seq = aten.cumsum.default(%ne : 1xs70 + 1 : torch.bool, -1) : 1xs70 + 1 : torch.int64\n"
				  "%z = aten.zeros.default([1, 1, 1, 1]) : 1x1x1x1 : torch.int64\n"
				  "%si = aten.index.Tensor(%seq : 1xs70 + 1 : torch.int64, [z, qi]) : 1x1xs70x1 : torch.int64\n"
				  "%sj = aten.index.Tensor(%seq : 1xs70 + 1 : torch.int64, [z, kj]) : 1x1x1xs70 : torch.int64\n"
				  "%same = aten.eq.Tensor(%si : 1x1xs70x1 : torch.int64, %sj : 1x1x1xs70 : torch.int64) : 1x1xs70xs70 : torch.bool\n"
				  LE "%m = aten.__and__.Tensor(%le : 1x1xs70xs70 : torch.bool, %same : 1x1xs70xs70 : torch.bool) : 1x1xs70xs70 : torch.bool\n",
				  "m", "1x1xs70xs70", "torch.bool"), 0);
}

/* a view to another dtype reinterprets the bytes: int32 [1, 1] is the int64 2^32 + 1 */
static void t_dtype_view_is_refused(void)
{
	CHECK_EQ_U(one_comparison(LE "%f = aten.full.default([2], 1) : 2 : torch.int32\n"
				     "%v = aten.view.dtype(%f : 2 : torch.int32, torch.int64) : 1 : torch.int64\n"
				     "%e = aten.eq.Scalar(%v : 1 : torch.int64, 1) : 1 : torch.bool\n"
				     "%m = aten.__and__.Tensor(%le : 1x1xs70xs70 : torch.bool, %e : 1 : torch.bool) : 1x1xs70xs70 : torch.bool\n",
				  "m", "1x1xs70xs70", "torch.bool"), 0);
}

/* an in-place op changes what the later readers of its input (and of every
 * view sharing its storage) see: the key positions are j + 1 */
static void t_mutated_value_is_refused(void)
{
	CHECK_EQ_U(one_comparison("%k2 = aten.clone.default(%kj : 1x1x1xs70 : torch.int64) : 1x1x1xs70 : torch.int64\n"
				  "%bump = aten.add_.Tensor(%k2 : 1x1x1xs70 : torch.int64, 1) : 1x1x1xs70 : torch.int64\n"
				  "%le = aten.le.Tensor(%k2 : 1x1x1xs70 : torch.int64, %qi : 1x1xs70x1 : torch.int64) : 1x1xs70xs70 : torch.bool\n",
				  "le", "1x1xs70xs70", "torch.bool"), 0);
	/* through a view the op table does not know, and as an in-place op's
	 * second argument */
	CHECK_EQ_U(one_comparison("%k2 = aten.clone.default(%kj : 1x1x1xs70 : torch.int64) : 1x1x1xs70 : torch.int64\n"
				  "%k3 = aten.swapaxes.default(%k2 : 1x1x1xs70 : torch.int64, 0, 1) : 1x1x1xs70 : torch.int64\n"
				  "%bump = aten.add_.Tensor(%k3 : 1x1x1xs70 : torch.int64, 1) : 1x1x1xs70 : torch.int64\n"
				  "%le = aten.le.Tensor(%k2 : 1x1x1xs70 : torch.int64, %qi : 1x1xs70x1 : torch.int64) : 1x1xs70xs70 : torch.bool\n",
				  "le", "1x1xs70xs70", "torch.bool"), 0);
	CHECK_EQ_U(one_comparison("%k2 = aten.clone.default(%kj : 1x1x1xs70 : torch.int64) : 1x1x1xs70 : torch.int64\n"
				  "%h : 1x1x1xs70 : torch.int64\n"
				  "%w : s70 : torch.int64\n"
				  "%nrm = auto_deploy.flashinfer_fused_add_rms_norm_inplace.default(%h : 1x1x1xs70 : torch.int64, %k2 : 1x1x1xs70 : torch.int64, %w : s70 : torch.int64, 1e-06) : ? : NoneType\n"
				  "%le = aten.le.Tensor(%k2 : 1x1x1xs70 : torch.int64, %qi : 1x1xs70x1 : torch.int64) : 1x1xs70xs70 : torch.bool\n",
				  "le", "1x1xs70xs70", "torch.bool"), 0);
	CHECK_EQ_U(one_comparison("%k2 = aten.clone.default(%kj : 1x1x1xs70 : torch.int64) : 1x1x1xs70 : torch.int64\n"
				  "%k3 = aten.unsqueeze.default(%k2 : 1x1x1xs70 : torch.int64, 0) : 1x1x1x1xs70 : torch.int64\n"
				  "%bump = aten.add_.Tensor(%k3 : 1x1x1x1xs70 : torch.int64, 1) : 1x1x1x1xs70 : torch.int64\n"
				  "%le = aten.le.Tensor(%k2 : 1x1x1xs70 : torch.int64, %qi : 1x1xs70x1 : torch.int64) : 1x1xs70xs70 : torch.bool\n",
				  "le", "1x1xs70xs70", "torch.bool"), 0);
}


/* torch.diff(pos, append=a) as a Python callable: its keyword arguments are
 * never printed, so a left-out argument is not known to be the default
 * (the last position splits off where a is not pos[-1] + 1) */
static void t_unprinted_keyword_is_refused(void)
{
	CHECK_EQ_U(one_comparison("%pos = aten.expand.default(%u1 : 1xs70 : torch.int64, [1, -1]) : 1xs70 : torch.int64\n"
				  "%diff = <built-in method diff of type object at 0x7f00>(%pos : 1xs70 : torch.int64) : 1xs70 : torch.int64\n"
				  "%ne = aten.ne.Scalar(%diff : 1xs70 : torch.int64, 1) : 1xs70 : torch.bool\n"
				  "%seq = aten.cumsum.default(%ne : 1xs70 : torch.bool, -1) : 1xs70 : torch.int64\n"
				  "%z = aten.zeros.default([1, 1, 1, 1]) : 1x1x1x1 : torch.int64\n"
				  "%si = aten.index.Tensor(%seq : 1xs70 : torch.int64, [z, qi]) : 1x1xs70x1 : torch.int64\n"
				  "%sj = aten.index.Tensor(%seq : 1xs70 : torch.int64, [z, kj]) : 1x1x1xs70 : torch.int64\n"
				  "%same = aten.eq.Tensor(%si : 1x1xs70x1 : torch.int64, %sj : 1x1x1xs70 : torch.int64) : 1x1xs70xs70 : torch.bool\n"
				  LE "%m = aten.__and__.Tensor(%le : 1x1xs70xs70 : torch.bool, %same : 1x1xs70xs70 : torch.bool) : 1x1xs70xs70 : torch.bool\n",
				  "m", "1x1xs70xs70", "torch.bool"), 0);
}


/* a mask copied into a buffer stays with its cone: copy_ is a side effect
 * that reads it, not an assert about it */
static void t_mask_copied_elsewhere_stays(void)
{
	EXPECT(Q POSITIONS LE "%buf : 1x1xs70xs70 : torch.bool\n"
		 "%cp = aten.copy_.default(%buf : 1x1xs70xs70 : torch.bool, %le : 1x1xs70xs70 : torch.bool) : 1x1xs70xs70 : torch.bool\n"
		 SDPA("le", "1x1xs70xs70", "torch.bool"), 1, 0);
}

#define TESTS(X) X(t_export_mask_is_causal) X(t_decomposed_diff_is_causal) X(t_variants) X(t_already_causal_is_left) \
	X(t_mask_read_elsewhere_stays) X(t_all_the_mask_reads_goes) X(t_deep_cone_is_refused) \
	X(t_broadcast_of_a_symbolic_dim_is_refused) X(t_wraparound_is_refused) X(t_odd_index_is_refused) \
	X(t_long_prepend_is_refused) X(t_dtype_view_is_refused) X(t_mutated_value_is_refused) \
	X(t_unprinted_keyword_is_refused) X(t_mask_copied_elsewhere_stays)
FS_TEST_MAIN()
