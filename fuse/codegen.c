/*
 * codegen.c: CUDA C for a program (prog.h). Every value is an expression of
 * its index: views, broadcasting, slices and cat change the index, math ops
 * combine operand expressions, and only buffers are loaded. The fused kernel
 * reads the region's inputs and writes its outputs; each unfused kernel is one
 * op reading its operands' buffers (views stay free, as in eager PyTorch).
 *
 * Two shapes of kernel, from the template in kernels/fused.cuh:
 *   elementwise  a grid-stride loop over groups of output elements;
 *   row          a group of threads per row of the last dim; the row's
 *                reductions (mean / sum / amax, softmax's max and sum, a
 *                norm's moments) are group reductions, then every column is
 *                computed.
 * Arithmetic is fp32 (fs_real); a cast rounds to its dtype; outputs are stored in
 * theirs. The float64 reference kernel is the same program with fs_real double,
 * casts ignored, and each output compared with a result under test instead of
 * stored (fs_codegen's FS_GEN_REF).
 *
 * Vector lanes: a thread computes `vec` consecutive elements of the last dim,
 * lane u of base j0. An index tracks whether it is "base + u" with the base a
 * multiple of vec; a buffer read whose last index is such and whose other
 * indices do not depend on u becomes one vector load (up to 16 bytes) hoisted
 * before the lane loop; any other read stays element by element.
 */
#include "codegen.h"
#include "dims.h"
#include "fusescan/site_types.h" /* FS_MAX_SITE_NODES */
#include "text.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- the generator's state ------------------------------------------------------------ */

enum { MAX_RED = 16, IDX_LEN = 2048, MAX_SITES = 32, DIM_LEN = 512 };

/* an index per dim of a value's shape: C text, and how it moves with the lane u */
struct ix {
	char t[MAX_RANK][IDX_LEN];
	uint8_t lane[MAX_RANK]; /* the index is t + u, t a multiple of the vector width */
	uint8_t dep[MAX_RANK];  /* t itself depends on u: read element by element */
};

/* a vector load hoisted before the lane loop */
struct site {
	int32_t param;
	uint8_t dtype;
	uint8_t reuse; /* kernels/fused.cuh's REUSE: 1 an input broadcast to the outputs (the grid reads it more
	                  than once), 2 a row kernel's pass over a row the next pass reads again, 0 read once */
	char *off, *guard;
};

struct gen {
	const struct prog *p;
	struct fs_kernel *k;  /* the kernel generated: its run-time requirements */
	int fused;            /* 1: the fused kernel; 0: the unfused kernel of op `only` */
	int32_t only;
	int emulate;          /* round every op like eager (triage) */
	int ref;              /* the float64 reference (double arithmetic, casts ignored, outputs compared with
	                         the result under test): 1, or 2 with that result in double, or 3: outputs stored
	                         in double instead (what the reference's later products read) */
	int plants;           /* the planted bugs apply (the fused kernel under test) */
	int epi;              /* the generated GEMM's epilogue (FS_GEN_EPILOGUE) */
	int vec;              /* lanes per thread */
	uint8_t *buffered;    /* per value: read from a buffer */
	/* per value, so the walks over the region's graph see each value once (a value read at many
	 * places would make them exponential): collect_reads' visit; reduction_free's answer (1 free,
	 * 2 not, 0 not yet) */
	uint8_t *walked;
	uint8_t *red_free;
	int32_t *param;       /* per value: kernel parameter index, -1 none */
	uint32_t n_params;
	int32_t red_op[MAX_RED];   /* the row's reductions: op index and which moment */
	uint8_t red_what[MAX_RED]; /* 0 sum / mean / amax / amin, 1 softmax max, 2 softmax sum, 3 norm mean, 4 norm var */
	uint32_t n_red;
	struct site sites[MAX_SITES];
	uint32_t n_sites;
	int cache;            /* row kernels: each thread's part of the row stays in registers, `cache` vectors */
	int tail;             /* cached: the last vectors may lie past the row's end (a symbolic row, bounded) */
	int first_in;         /* cached, a row of known length: every thread's first vector lies in it, and
	                         the reductions start from that vector instead of their identity */
	int32_t exp_slot[MAX_RED]; /* cached: softmax op whose exp(x - max) its sum pass kept in E<slot> */
	int32_t row_val;      /* cached: the value the first pass reduced, kept in R (at the row's own index), or -1 */
	const struct ten *lin; /* elementwise: the output shape whose element index is e0 */
	const struct ten *out; /* the largest output */
	uint32_t shape_first[FS_KERNEL_MAX_PARAMS]; /* elementwise: the output shapes, each by its first output */
	uint32_t n_shapes;
	uint32_t declared;    /* cached sites declared so far */
	struct fs_dim_names names; /* the derived dims the kernel computes once (SZ<i>) */
	char guard[IDX_LEN];  /* " && (cond)..." under which the current cat branch reads */
	int in_loop;          /* inside an in-thread reduction loop (inline_reduce): loads are scalar */
	uint32_t loops;       /* in-thread reduction loops so far: their variables' names */
	int failed;           /* the first failure is said in d: generation goes on, its kernel is dropped */
	struct fs_diags *d;
};

static int is_view(const struct op *op)
{
	uint8_t k = op->sem->kind;
	return k == VIEW || k == EXPAND || k == PERMUTE || k == SLICE || k == ID;
}

/* gelu in its tanh form (the program's gelu_tanh): fs_gelu_tanh, not op_gelu */
static int tanh_gelu(const struct prog *p, const struct op *op)
{
	return p->gelu_tanh && op->sem->id == SEM_gelu;
}

/* Whether the kernel computes exp or tanh, so has fast-math tactics: an op
 * it computes (the region's, or the one op) that sem.def flags EXP_TANH,
 * or gelu in its tanh form. */
static int transcendental(const struct gen *G)
{
	for (uint32_t i = 0; i < G->p->n_ops; i++)
		if ((G->fused || (int32_t)i == G->only) && ((G->p->ops[i].sem->flags & EXP_TANH) || tanh_gelu(G->p, &G->p->ops[i])))
			return 1;
	return 0;
}

static int given(const struct prog *p, int32_t v)
{
	return p->given && p->given[v];
}

/* the generated GEMM's product v is (its accumulators), or -1 */
static int member(const struct gen *G, int32_t v)
{
	return G->epi && G->p->member ? G->p->member[v] : -1;
}

int fs_gen_reference(enum fs_gen mode)
{
	switch (mode) {
	case FS_GEN_REF:
	case FS_GEN_REF_F64:
	case FS_GEN_REF_STORE:
		return 1;
	case FS_GEN_KERNEL:
	case FS_GEN_EMULATE:
	case FS_GEN_EPILOGUE:
	case FS_GEN_EXACT:
		return 0;
	}
	return 0;
}

const char *fs_dt_ctype(uint8_t dt)
{
	switch (dt) {
	case FS_DT_F64: return "double";
	case FS_DT_F32: return "float";
	case FS_DT_F16:
	case FS_DT_BF16: return "unsigned short";
	case FS_DT_I64: return "long long";
	case FS_DT_I32: return "int";
	case FS_DT_BOOL:
	case FS_DT_U8: return "unsigned char";
	default: return NULL;
	}
}

const char *fs_dt_suffix(uint8_t dt)
{
	switch (dt) {
	case FS_DT_F64: return "f64";
	case FS_DT_F32: return "f32";
	case FS_DT_F16: return "f16";
	case FS_DT_BF16: return "bf16";
	case FS_DT_I64: return "i64";
	case FS_DT_I32: return "i32";
	default: return "u8";
	}
}

/* the dtype an output is stored in, or (the reference) read back as */
static const char *out_sfx(const struct gen *G, const struct ten *t)
{
	return G->ref >= 2 ? "f64" : fs_dt_suffix(t->dtype);
}

/* outputs compared with a result under test (a reference), else stored */
static int compares(const struct gen *G)
{
	return G->ref == 1 || G->ref == 2;
}

static void fail(struct gen *G, const char *why)
{
	if (!G->failed)
		fs_diag_add(G->d, FS_ERROR, fs_prog_path(G->p->s, G->p->g), 0, 0, NULL, 0, "%s", why);
	G->failed = 1;
}

/* dims [from, to) of t multiplied, as C over the symbol parameters */
static const char *dims(struct gen *G, const struct ten *t, int from, int to, char out[DIM_LEN])
{
	if (fs_dims_text(G->p, t, from, to, FS_LANG_C, &G->names, out, DIM_LEN)) {
		fail(G, "a symbolic dim the generator cannot write");
		snprintf(out, DIM_LEN, "1");
	}
	return out;
}

/* a requirement of kernel K (implied by one it has: kept once); 0 where it has too many */
static int require(struct fs_kernel *K, struct fs_req r)
{
	for (uint32_t i = 0; i < K->n_req; i++) {
		const struct fs_req *q = &K->req[i];
		if (q->dim == r.dim && (r.div ? q->div && q->div % r.div == 0 : !q->div && q->max <= r.max))
			return 1;
	}
	if (K->n_req == FS_KERNEL_MAX_REQS)
		return 0;
	K->req[K->n_req++] = r;
	return 1;
}

/* Dim k of t is a multiple of V: a static dim by its value; a symbolic one
 * where its bound value is, which becomes a requirement of the kernel (the
 * launcher checks it at run time, and takes the fallback where it fails). */
static int divisible(struct gen *G, const struct ten *t, int k, int V)
{
	if (V <= 1 || !fs_dim_symbolic(t, k))
		return t->shape[k] % (V > 1 ? V : 1) == 0;
	if (t->shape[k] % V)
		return 0;
	return require(G->k, (struct fs_req){t->sym[k], (uint16_t)V, 0});
}

static void set_dim(struct ix *x, int k, const char *text, uint8_t lane, uint8_t dep)
{
	snprintf(x->t[k], IDX_LEN, "%s", text);
	x->lane[k] = lane, x->dep[k] = dep;
}

/* printf into dst (IDX_LEN bytes); too long fails the generation */
static void fmt_idx(struct gen *G, char *dst, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

static void fmt_idx(struct gen *G, char *dst, const char *fmt, ...)
{
	struct fs_text b = {0};
	va_list ap;
	va_start(ap, fmt);
	int k = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	b.s = fs_xmalloc((size_t)(k < 0 ? 0 : k) + 1);
	va_start(ap, fmt);
	vsnprintf(b.s, (size_t)(k < 0 ? 0 : k) + 1, fmt, ap);
	va_end(ap);
	if (k < 0 || k >= IDX_LEN) {
		fail(G, "an index expression too long");
		dst[0] = '\0';
	} else
		memcpy(dst, b.s, (size_t)k + 1);
	free(b.s);
}

/* dim k's index as one expression (the lane added) */
static const char *flat(const struct ix *x, int k, char out[IDX_LEN + 16])
{
	if (!x->lane[k])
		return x->t[k];
	snprintf(out, IDX_LEN + 16, "((%s) + u)", x->t[k]);
	return out;
}

static int moves(const struct ix *x, int k)
{
	return x->lane[k] || x->dep[k];
}

/* The stride of dim k of a value laid out as t says (row-major, or dense
 * in its order), as C over the symbol parameters. */
static const char *stride_of(struct gen *G, const struct ten *t, int k, char out[DIM_LEN])
{
	if (!t->strided)
		return dims(G, t, k + 1, t->rank, out);
	char one[DIM_LEN];
	int at = 0, pos = 0, n = 0;
	while (pos < t->rank && t->order[pos] != k)
		pos++;
	for (int j = pos + 1; j < t->rank && at < DIM_LEN; j++) {
		if (fs_dim_one(t, t->order[j]))
			continue;
		at += snprintf(out + at, DIM_LEN - (size_t)at, "%s%s", n++ ? " * " : "(", dims(G, t, t->order[j], t->order[j] + 1, one));
	}
	if (at + 2 >= DIM_LEN)
		fail(G, "a stride expression too long");
	else if (n)
		snprintf(out + at, DIM_LEN - (size_t)at, ")");
	else
		snprintf(out, DIM_LEN, "1");
	return out;
}

/* Offset of x in a buffer holding a value of shape t: rows `pitch`
 * elements apart (0: dense), in t's memory layout; or (linear) the element's
 * row-major index whatever the layout. `base`: lane 0's. */
static void offset(struct gen *G, const struct ten *t, const struct ix *x, int base, int64_t pitch, int linear, struct fs_text *b)
{
	char tmp[IDX_LEN + 16], stride[DIM_LEN];
	fs_text_put(b, "(0");
	for (int k = t->rank - 1; k >= 0; k--) {
		if (fs_dim_one(t, k))
			continue;
		if (pitch && k < t->rank - 1)
			fs_text_put(b, " + (fs_ix)(%s) * %s * %lld", base ? x->t[k] : flat(x, k, tmp), dims(G, t, k + 1, t->rank - 1, stride),
			    (long long)pitch);
		else
			fs_text_put(b, " + (fs_ix)(%s) * %s", base ? x->t[k] : flat(x, k, tmp),
			    linear ? dims(G, t, k + 1, t->rank, stride) : stride_of(G, t, k, stride));
	}
	fs_text_put(b, ")");
}

/* a and b lie in memory alike (dims assumed equal) */
static int same_layout(const struct ten *a, const struct ten *b)
{
	return a->strided == b->strided && (!a->strided || !memcmp(a->order, b->order, a->rank));
}

static void expr(struct gen *G, int32_t v, const struct ix *x, struct fs_text *b);

/* the operand index of `src` for an output index of `out` (right-aligned broadcast) */
static void bcast_idx(const struct ten *src, const struct ten *out, const struct ix *x, struct ix *to)
{
	for (uint8_t k = 0; k < src->rank; k++) {
		int o = out->rank - src->rank + k;
		if (fs_dim_one(src, k))
			set_dim(to, k, "0", 0, 0);
		else
			set_dim(to, k, x->t[o], x->lane[o], x->dep[o]);
	}
}

/* a number as the kernel's fs_real */
static void literal(double lit, struct fs_text *b)
{
	if (isinf(lit) || isnan(lit)) /* no INFINITY without headers: the float's bits */
		fs_text_put(b, "(fs_real)__int_as_float(%s)", isnan(lit) ? "0x7fffffff" : lit > 0 ? "0x7f800000" : "(int)0xff800000");
	else
		fs_text_put(b, "(fs_real)(%.17g)", lit);
}

static void operand(struct gen *G, const struct op *op, uint32_t k, const struct ix *x, struct fs_text *b)
{
	if (op->args[k].ten < 0) {
		double lit = op->args[k].lit;
		if (G->plants && G->p->plant_eps > 0 && op->sem->id == SEM_add && lit > 0 && lit < 1e-2)
			lit = G->p->plant_eps; /* planted bug: a wrong eps */
		literal(lit, b);
		return;
	}
	int32_t v = op->src[op->args[k].ten];
	struct ix *to = fs_xmalloc(sizeof(*to));
	bcast_idx(fs_prog_value(G->p, v), &op->out, x, to);
	expr(G, v, to, b);
	free(to);
}

static int32_t red_slot(struct gen *G, int32_t op_index, uint8_t what)
{
	for (uint32_t i = 0; i < G->n_red; i++)
		if (G->red_op[i] == op_index && G->red_what[i] == what)
			return (int32_t)i;
	return -1;
}

/* a vector load of V elements at off (lane 0) under the current guard */
static int32_t site(struct gen *G, int32_t param, uint8_t dtype, uint8_t reuse, const char *off)
{
	for (uint32_t i = 0; i < G->n_sites; i++)
		if (G->sites[i].param == param && !strcmp(G->sites[i].off, off) && !strcmp(G->sites[i].guard, G->guard))
			return (int32_t)i;
	if (G->n_sites == MAX_SITES)
		return fail(G, "too many vector loads"), 0;
	struct site *s = &G->sites[G->n_sites];
	*s = (struct site){param, dtype, reuse, fs_xstrndup(off, strlen(off)), fs_xstrndup(G->guard, strlen(G->guard))};
	return (int32_t)G->n_sites++;
}

static void free_sites(struct gen *G)
{
	for (uint32_t i = 0; i < G->n_sites; i++) {
		free(G->sites[i].off);
		free(G->sites[i].guard);
	}
	G->n_sites = G->declared = 0;
}

/* The hoisted loads of the lane loop that follows. Uncached, they are then
 * forgotten; cached, a site is loaded once, at its first pass, into its
 * slot [it] of a register array declared before that pass (decl). */
static void emit_sites(struct gen *G, struct fs_text *decl, struct fs_text *b, const char *ind)
{
	uint32_t from = G->cache ? G->declared : 0;
	for (uint32_t i = from; i < G->n_sites; i++) {
		struct site *s = &G->sites[i];
		char slot[16] = "";
		if (G->cache) {
			snprintf(slot, sizeof(slot), "[it]");
			fs_text_put(decl, "\tfs_real L%u[%d][%d];\n", i, G->cache, G->vec);
		} else
			fs_text_put(b, "%sfs_real L%u[%d];\n", ind, i, G->vec);
		/* guarded (a cat's branch): zeros where the branch does not read */
		fs_text_put(b, "%sldv_%s<%d, %d>(1%s, p%d, %s, L%u%s);\n", ind, fs_dt_suffix(s->dtype), G->vec, s->reuse, s->guard, s->param,
		    s->off, i, slot);
	}
	if (G->cache)
		G->declared = G->n_sites;
	else
		free_sites(G);
}

/* t is broadcast to out (right-aligned): a dim of 1, or missing, where out's is larger */
static int broadcast(const struct ten *t, const struct ten *out)
{
	for (int k = 1; k <= out->rank; k++)
		if ((k > t->rank || fs_dim_one(t, t->rank - k)) && !fs_dim_one(out, out->rank - k))
			return 1;
	return 0;
}

/* the dtype a kernel reads v in: its own, or double where the reference reads a given value */
static uint8_t read_dtype(const struct gen *G, int32_t v)
{
	return G->ref && given(G->p, v) ? FS_DT_F64 : fs_prog_value(G->p, v)->dtype;
}

static void load(struct gen *G, int32_t v, const struct ix *x, struct fs_text *b)
{
	const struct ten *t = fs_prog_value(G->p, v);
	/* a slice of a concatenated product, in the fused kernel only (the
	 * unfused kernels and the reference read dense buffers of their own) */
	int64_t pitch = G->fused && !G->ref && G->p->pitch && member(G, v) < 0 ? G->p->pitch[v] : 0;
	int r = t->rank, vector = !G->in_loop && G->vec > 1 && r && x->lane[r - 1] && divisible(G, t, r - 1, G->vec);
	for (int k = 0; k + 1 < r; k++)
		vector &= !moves(x, k);
	int same = !pitch && G->lin && vector && t->rank == G->lin->rank && fs_same_dims(G->p, t, G->lin, r) && same_layout(t, G->lin);
	for (int k = 0; same && k < r; k++) { /* the output's own index: its element index */
		char name[16];
		snprintf(name, sizeof(name), "d%d", k);
		same = !strcmp(x->t[k], name) || (fs_dim_one(t, k) && !strcmp(x->t[k], "0"));
	}
	if (member(G, v) >= 0) { /* a product of the GEMM: its accumulator of this element */
		if (!same)
			fail(G, "an epilogue reading a product at another element than its own");
		fs_text_put(b, "a[%d][u]", member(G, v));
		return;
	}
	if (vector) {
		struct fs_text off = {0};
		if (same)
			fs_text_put(&off, "e0");
		else
			offset(G, t, x, 1, pitch, 0, &off);
		uint8_t reuse = broadcast(t, G->out) ? 1 : G->n_red && !G->cache ? 2 : 0;
		fs_text_put(b, G->cache ? "L%d[it][u]" : "L%d[u]", site(G, G->param[v], read_dtype(G, v), reuse, off.s));
		free(off.s);
		return;
	}
	/* under a guard (a row's tail past its end, a cat's or pad's branch) the
	 * load itself is predicated, as the vector loads are: the value is
	 * discarded there, but its address can lie past the buffer's end */
	if (G->guard[0])
		fs_text_put(b, "((1%s) ? ", G->guard);
	fs_text_put(b, "ld_%s(p%d, ", fs_dt_suffix(read_dtype(G, v)), G->param[v]);
	offset(G, t, x, 0, pitch, 0, b);
	fs_text_put(b, G->guard[0] ? ") : (fs_real)0)" : ")");
}

/* x is the row kernel's own index into a value of shape t (i0, i1, ..., j0 in the lanes) */
static int own_index(const struct ten *t, const struct ix *x)
{
	char name[16];
	for (int k = 0; k < t->rank; k++) {
		snprintf(name, sizeof(name), k + 1 < t->rank ? "i%d" : "j0", k);
		if (x->dep[k])
			return 0;
		if (fs_dim_one(t, k) && !strcmp(x->t[k], "0"))
			continue; /* a dim of size 1 (a row of one key): its one index, whatever the lane */
		if (strcmp(x->t[k], name) || x->lane[k] != (k + 1 == t->rank))
			return 0;
	}
	return 1;
}

/* A reduction over some dims that leaves the last one: each output element
 * reduces a strided set of its input (a sum over the experts of an MoE's
 * [tokens, experts, hidden]), computed in the thread where it is read
 * (inline_reduce), not over a row. */
static int reduces_across(const struct op *op, uint8_t rank)
{
	if (op->sem->kind != RED || !op->n_ints)
		return 0;
	for (uint32_t k = 0; k < op->n_ints; k++)
		if (fs_dim_at(op->ints[k], rank) == rank - 1)
			return 0;
	return 1;
}

static int reduction_free(const struct gen *G, int32_t v);

/* A reduction across dims (reduces_across) where it is read: a loop in the
 * thread over each reduced dim, its operand read at every point and folded
 * in fs_real (fp32, double in the reference; the identity first, the mean
 * divided by the count after), as a lambda called in place so it stays one
 * expression. Its loads are scalar: a vector load hoisted before the lane
 * loop would read one point only. */
static void inline_reduce(struct gen *G, const struct op *op, const struct ix *x, struct fs_text *b)
{
	const struct ten *in = fs_prog_value(G->p, op->src[0]);
	enum sem_id id = op->sem->id;
	int mx = id == SEM_amax, mn = id == SEM_amin, mean = id == SEM_mean;
	uint8_t red[MAX_RANK] = {0};
	for (uint32_t k = 0; k < op->n_ints; k++)
		red[fs_dim_at(op->ints[k], in->rank)] = 1;
	struct ix *to = fs_xcalloc(1, sizeof(*to));
	struct fs_text count = {0};
	char len[DIM_LEN], var[24];
	fs_text_put(b, "([&]() -> fs_real { fs_real acc = %s; ", mx ? "FS_NEG_INF" : mn ? "-FS_NEG_INF" : "(fs_real)0");
	for (int k = 0, o = 0; k < in->rank; k++) {
		if (!red[k]) {
			set_dim(to, k, x->t[o], x->lane[o], x->dep[o]);
			o++;
			continue;
		}
		snprintf(var, sizeof(var), "r%u_%d", G->loops, k);
		dims(G, in, k, k + 1, len);
		fs_text_put(b, "for (fs_ix %s = 0; %s < (fs_ix)(%s); %s++) ", var, var, len, var);
		fs_text_put(&count, "%s(fs_real)(%s)", count.s ? " * " : "", len);
		set_dim(to, k, var, 0, 0);
		o += op->keepdim; /* a kept reduced dim reads index 0 of the output */
	}
	if (!reduction_free(G, op->src[0]))
		fail(G, "a reduction across dims of a row's reduction");
	G->loops++;
	G->in_loop++;
	fs_text_put(b, "{ const fs_real v = ");
	expr(G, op->src[0], to, b);
	G->in_loop--;
	fs_text_put(b, "; acc = %s; } return acc%s%s; }())", mx ? "fmax(acc, v)" : mn ? "fmin(acc, v)" : "acc + v", mean ? " / " : "",
		    mean ? count.s : "");
	free(count.s);
	free(to);
}

/* The dtype op oi is computed in by a planted bug (--plant-bug cast: the
 * dropped widening cast), or 0. */
static uint8_t planted_narrow(const struct gen *G, int32_t oi)
{
	return G->plants && G->p->narrow ? G->p->narrow[oi] : 0;
}

/* Each kind's value at index x (GEMM: none, the products run apart). */
typedef void expr_rule(struct gen *G, const struct op *op, const struct ix *x, struct ix *to, struct fs_text *b);

/* an elementwise op: op_<key>(a, b, c), or GELU in its tanh form */
static void expr_math(struct gen *G, const struct op *op, const struct ix *x, struct ix *to, struct fs_text *b)
{
	(void)to;
	int gelu_tanh = tanh_gelu(G->p, op);
	fs_text_put(b, gelu_tanh ? "fs_gelu_tanh<fs_real>(" : "op_%s(", op->sem->key[0] == '_' ? op->sem->key + 1 : op->sem->key);
	for (uint32_t k = 0; k < (gelu_tanh ? 1u : 3u); k++) { /* op_* take (a, b, c) */
		fs_text_put(b, k ? ", " : "");
		if (k < op->n_args)
			operand(G, op, k, x, b);
		else
			fs_text_put(b, "0.0f");
	}
	fs_text_put(b, ")");
}

/* the dropped cast keeps its input (narrow); the reference ignores casts */
static void expr_cast(struct gen *G, const struct op *op, const struct ix *x, struct ix *to, struct fs_text *b)
{
	const struct ten *out = &op->out;
	uint8_t narrow = planted_narrow(G, (int32_t)(op - G->p->ops));
	(void)to;
	if (G->ref)
		fs_text_put(b, "(");
	else
		fs_text_put(b, "rnd_%s(", fs_dt_suffix(narrow ? narrow : out->dtype));
	operand(G, op, 0, x, b);
	fs_text_put(b, ")");
}

/* identity in inference (dropout, clone) and broadcasting: the operand, read at its own index */
static void expr_same(struct gen *G, const struct op *op, const struct ix *x, struct ix *to, struct fs_text *b)
{
	(void)to;
	operand(G, op, 0, x, b);
}

/* same linear index, another shape */
static void expr_view(struct gen *G, const struct op *op, const struct ix *x, struct ix *to, struct fs_text *b)
{
	const struct prog *p = G->p;
	const struct ten *out = &op->out;
	int V = G->vec;
	const struct ten *src = fs_prog_value(p, op->src[0]);
	int r = out->rank, keep = r && src->rank && x->lane[r - 1] && divisible(G, out, r - 1, V) &&
				   divisible(G, src, src->rank - 1, V);
	int any = 0;
	for (int k = 0; k < r; k++) {
		keep &= k == r - 1 || !moves(x, k);
		any |= moves(x, k);
	}
	/* lane 0's linear index is a multiple of V; with V | both last dims
	 * the lane stays inside one row of the source */
	struct fs_text lin = {0};
	offset(G, out, x, keep, 0, 1, &lin);
	char stride[DIM_LEN], len[DIM_LEN];
	for (int k = src->rank - 1; k >= 0; k--) {
		fmt_idx(G, to->t[k], "((%s / %s) %% %s)", lin.s, dims(G, src, k + 1, src->rank, stride), dims(G, src, k, k + 1, len));
		to->lane[k] = (uint8_t)(keep && k == src->rank - 1), to->dep[k] = (uint8_t)(!keep && any);
	}
	free(lin.s);
	expr(G, op->src[0], to, b);
}

/* a permutation: the operand read with its dims swapped */
static void expr_permute(struct gen *G, const struct op *op, const struct ix *x, struct ix *to, struct fs_text *b)
{
	const struct ten *out = &op->out;
	int64_t perm[MAX_RANK];
	if (fs_op_perm(op, out->rank, perm)) {
		fail(G, "a permutation the generator cannot read");
		return;
	}
	for (uint8_t k = 0; k < out->rank; k++)
		set_dim(to, (int)perm[k], x->t[k], x->lane[k], x->dep[k]);
	expr(G, op->src[0], to, b);
}

/* a slice: the operand read from its start, by its step */
static void expr_slice(struct gen *G, const struct op *op, const struct ix *x, struct ix *to, struct fs_text *b)
{
	const struct prog *p = G->p;
	const struct ten *out = &op->out;
	char tmp[IDX_LEN + 16];
	int V = G->vec;
	const struct ten *src = fs_prog_value(p, op->src[0]);
	int64_t d = fs_dim_at(op->ints[0], out->rank), len = src->shape[d];
	int64_t start = op->ints[1] < 0 ? op->ints[1] + len : op->ints[1];
	start = start < 0 ? 0 : start > len ? len : start;
	/* from the end of a symbolic dim: the start moves with the symbols */
	int moving = fs_dim_symbolic(src, (int)d) && op->ints[1] < 0;
	char from[DIM_LEN + 32], lent[DIM_LEN];
	if (moving)
		snprintf(from, sizeof(from), "(%s - %lld)", dims(G, src, (int)d, (int)d + 1, lent), (long long)-op->ints[1]);
	else
		snprintf(from, sizeof(from), "%lld", (long long)start);
	memcpy(to, x, sizeof(*to));
	if (x->lane[d] && op->ints[3] == 1 && !moving && start % V == 0) {
		fmt_idx(G, to->t[d], "(%s + (fs_ix)(%s))", from, x->t[d]);
		to->lane[d] = 1, to->dep[d] = 0;
	} else {
		fmt_idx(G, to->t[d], "(%s + (fs_ix)(%s) * %lld)", from, flat(x, (int)d, tmp), (long long)op->ints[3]);
		to->lane[d] = 0, to->dep[d] = (uint8_t)moves(x, (int)d);
	}
	expr(G, op->src[0], to, b);
}

/* the input where the index falls inside it, else the fill value; the input's vector loads
 * only there (a guard) when the last dim is not padded (the condition is the same for every lane) */
static void expr_pad(struct gen *G, const struct op *op, const struct ix *x, struct ix *to, struct fs_text *b)
{
	const struct prog *p = G->p;
	const struct ten *out = &op->out;
	char tmp[IDX_LEN + 16];
	const struct ten *src = fs_prog_value(p, op->src[0]);
	char saved[IDX_LEN], cond[IDX_LEN] = "1", ext[DIM_LEN], oext[DIM_LEN], at[IDX_LEN + 16];
	int last = 0;
	memcpy(saved, G->guard, sizeof(saved));
	memcpy(to, x, sizeof(*to));
	for (int d = 0; d < out->rank; d++) {
		if (!op->ints[d] && !strcmp(dims(G, src, d, d + 1, ext), dims(G, out, d, d + 1, oext)))
			continue; /* not padded, whatever the symbols' values */
		snprintf(at, sizeof(at), "%s", flat(x, d, tmp));
		fmt_idx(G, to->t[d], "((fs_ix)(%s) - %lld)", at, (long long)op->ints[d]);
		to->lane[d] = 0, to->dep[d] = (uint8_t)moves(x, d);
		fmt_idx(G, cond, "%s && (fs_ix)(%s) >= %lld && (fs_ix)(%s) < %lld + %s", cond, at, (long long)op->ints[d], at,
			(long long)op->ints[d], dims(G, src, d, d + 1, ext));
		last |= d == out->rank - 1;
	}
	if (!last)
		fmt_idx(G, G->guard, "%s && %s", saved, cond);
	fs_text_put(b, "((%s) ? (fs_real)(", cond);
	expr(G, op->src[0], to, b);
	fs_text_put(b, ") : ");
	literal(op->eps, b);
	fs_text_put(b, ")");
	memcpy(G->guard, saved, sizeof(saved));
}

/* nested selects on the stack dim's index; each part read at the other dims */
static void expr_stack(struct gen *G, const struct op *op, const struct ix *x, struct ix *to, struct fs_text *b)
{
	const struct ten *out = &op->out;
	char tmp[IDX_LEN + 16];
	int64_t d = fs_dim_at(op->ints[0], out->rank);
	char at[IDX_LEN + 16];
	snprintf(at, sizeof(at), "%s", flat(x, (int)d, tmp));
	for (int k = 0; k + 1 < out->rank; k++) {
		int o = k < d ? k : k + 1;
		set_dim(to, k, x->t[o], x->lane[o], x->dep[o]);
	}
	for (uint32_t k = 0; k < op->n_src; k++) {
		if (k + 1 < op->n_src)
			fs_text_put(b, "((fs_ix)(%s) == %u ? ", at, k);
		expr(G, op->src[k], to, b);
		if (k + 1 < op->n_src)
			fs_text_put(b, " : ");
	}
	for (uint32_t k = 0; k + 1 < op->n_src; k++)
		fs_text_put(b, ")");
}

/* element i of the repeated dim reads element i / repeats */
static void expr_repeat(struct gen *G, const struct op *op, const struct ix *x, struct ix *to, struct fs_text *b)
{
	const struct ten *out = &op->out;
	char tmp[IDX_LEN + 16];
	int64_t d = fs_dim_at(op->ints[0], out->rank);
	memcpy(to, x, sizeof(*to));
	fmt_idx(G, to->t[d], "((fs_ix)(%s) / %lld)", flat(x, (int)d, tmp), (long long)op->ints[1]);
	to->lane[d] = 0, to->dep[d] = (uint8_t)moves(x, (int)d);
	expr(G, op->src[0], to, b);
}

/* element i of a tiled dim reads element i mod the input's size */
static void expr_tile(struct gen *G, const struct op *op, const struct ix *x, struct ix *to, struct fs_text *b)
{
	const struct prog *p = G->p;
	const struct ten *out = &op->out;
	char tmp[IDX_LEN + 16];
	const struct ten *in = fs_prog_value(p, op->src[0]);
	memcpy(to, x, sizeof(*to));
	for (int k = 0; k < out->rank; k++)
		if (op->ints[k] > 1) {
			char d[DIM_LEN];
			fmt_idx(G, to->t[k], "((fs_ix)(%s) %% (fs_ix)(%s))", flat(x, k, tmp), dims(G, in, k, k + 1, d));
			to->lane[k] = 0, to->dep[k] = (uint8_t)moves(x, k);
		}
	expr(G, op->src[0], to, b);
}

/* the input (same index) on one side of the diagonal, else 0 */
static void expr_tril(struct gen *G, const struct op *op, const struct ix *x, struct ix *to, struct fs_text *b)
{
	const struct ten *out = &op->out;
	char tmp[IDX_LEN + 16];
	(void)to;
	char i[IDX_LEN + 16];
	int r = out->rank;
	snprintf(i, sizeof(i), "%s", flat(x, r - 2, tmp));
	fs_text_put(b, "((fs_ix)(%s) - (fs_ix)(%s) %s %lld ? (fs_real)(", flat(x, r - 1, tmp), i,
		    op->sem->id != SEM_triu ? "<=" : ">=", (long long)op->ints[0]);
	expr(G, op->src[0], x, b);
	fs_text_put(b, ") : (fs_real)0)");
}

/* nested selects along the cat dim. The select is uniform over the lanes where the cat dim's index
 * is the same for every lane, or is the lanes' dim and every part is whole vectors: then each part's
 * vector loads happen only where it is selected (a guard); the other parts' offsets there lie outside
 * them. Else, or where the guard would not fit an index's length, each lane reads its part element
 * by element, inside the select. */
static void expr_cat(struct gen *G, const struct op *op, const struct ix *x, struct ix *to, struct fs_text *b)
{
	const struct prog *p = G->p;
	const struct ten *out = &op->out;
	char tmp[IDX_LEN + 16];
	int V = G->vec;
	int64_t d = fs_dim_at(op->ints[0], out->rank);
	int still = !moves(x, (int)d), uniform = still || x->lane[d];
	for (uint32_t k = 0; x->lane[d] && k < op->n_src; k++)
		uniform &= divisible(G, fs_prog_value(p, op->src[k]), (int)d, V);
	const char *at_d = uniform ? x->t[d] : flat(x, (int)d, tmp);
	char saved[IDX_LEN], at[IDX_LEN] = "0", end[IDX_LEN], part[DIM_LEN];
	memcpy(saved, G->guard, sizeof(saved));
	for (uint32_t k = 0; k < op->n_src; k++) { /* this part is [at, end) of the cat dim */
		const struct ten *t = fs_prog_value(p, op->src[k]);
		fmt_idx(G, end, "(%s + %s)", at, dims(G, t, (int)d, (int)d + 1, part));
		memcpy(to, x, sizeof(*to));
		fmt_idx(G, to->t[d], "((fs_ix)(%s) - %s)", at_d, at);
		char guard[IDX_LEN];
		int fits = uniform && snprintf(guard, sizeof(guard), "%s && (fs_ix)(%s) >= %s && (fs_ix)(%s) < %s", saved, at_d, at, at_d,
					       end) < IDX_LEN;
		if (uniform && !still && !fits) /* the lanes' vector loads need it */
			fail(G, "an index expression too long");
		to->lane[d] = (uint8_t)(uniform && x->lane[d]);
		to->dep[d] = (uint8_t)((!uniform && moves(x, (int)d)) || (still && !fits)); /* dep: element by element */
		if (k + 1 < op->n_src)
			fs_text_put(b, "((fs_ix)(%s) < %s ? ", at_d, end);
		if (fits)
			memcpy(G->guard, guard, sizeof(guard));
		expr(G, op->src[k], to, b);
		if (k + 1 < op->n_src)
			fs_text_put(b, " : ");
		memcpy(at, end, sizeof(at));
	}
	memcpy(G->guard, saved, sizeof(saved));
	for (uint32_t k = 0; k + 1 < op->n_src; k++)
		fs_text_put(b, ")");
}

/* a reduction: across a non-last dim computed inline, else the row's reduced value */
static void expr_red(struct gen *G, const struct op *op, const struct ix *x, struct ix *to, struct fs_text *b)
{
	const struct prog *p = G->p;
	int32_t oi = (int32_t)(op - G->p->ops);
	(void)to;
	if (reduces_across(op, fs_prog_value(p, op->src[0])->rank)) {
		inline_reduce(G, op, x, b);
		return;
	}
	int32_t r = red_slot(G, oi, 0);
	if (r < 0)
		fail(G, "a reduction outside a row kernel");
	fs_text_put(b, "red[%d]", r);
}

/* softmax (log_softmax) from the row's max and sum */
static void expr_softmax(struct gen *G, const struct op *op, const struct ix *x, struct ix *to, struct fs_text *b)
{
	const struct ten *out = &op->out;
	int32_t oi = (int32_t)(op - G->p->ops);
	(void)to;
	int32_t mx = red_slot(G, oi, 1), sm = red_slot(G, oi, 2);
	if (mx < 0 || sm < 0)
		fail(G, "a softmax outside a row kernel");
	int logsm = (op->sem->flags & LOG_OUT) != 0;
	/* the sum is at least 1 (the max's own term): its reciprocal by
	 * fs_quot, without IEEE division's slow-path branch on every row */
	if (!logsm && G->cache && G->exp_slot[sm] == oi && own_index(out, x)) { /* the sum pass kept exp(x - max) */
		fs_text_put(b, "(E%d[it][u] * fs_quot((fs_real)1, red[%d]))", sm, sm);
		return;
	}
	fs_text_put(b, logsm ? "((" : "(fs_exp(");
	operand(G, op, 0, x, b);
	fs_text_put(b, logsm ? ") - red[%d] - log(red[%d]))" : " - red[%d]) * fs_quot((fs_real)1, red[%d]))", mx, sm);
}

/* layer norm / RMS norm from the row's statistics, weight and bias */
static void expr_norm(struct gen *G, const struct op *op, const struct ix *x, struct ix *to, struct fs_text *b)
{
	const struct prog *p = G->p;
	int32_t oi = (int32_t)(op - G->p->ops);
	(void)to;
	int ln = op->sem->kind == LAYERNORM;
	int32_t mean = ln ? red_slot(G, oi, 3) : -1, var = red_slot(G, oi, 4);
	if (var < 0 || (ln && mean < 0))
		fail(G, "a norm outside a row kernel");
	fs_text_put(b, "((");
	expr(G, op->src[0], x, b);
	if (ln)
		fs_text_put(b, " - red[%d]", mean);
	fs_text_put(b, ") * fs_rsqrt(red[%d] + (fs_real)(%.17g)) * ", var, G->plants && p->plant_eps > 0 ? p->plant_eps : op->eps);
	operand(G, op, 0, x, b);
	fs_text_put(b, " + ");
	operand(G, op, 1, x, b);
	fs_text_put(b, ")");
}

static expr_rule *const expr_rules[GEMM + 1] = {
	[UN] = expr_math,
	[BIN] = expr_math,
	[TER] = expr_math,
	[CMP] = expr_math,
	[CAST] = expr_cast,
	[ID] = expr_same,
	[RED] = expr_red,
	[SOFTMAX] = expr_softmax,
	[LAYERNORM] = expr_norm,
	[RMSNORM] = expr_norm,
	[VIEW] = expr_view,
	[EXPAND] = expr_same,
	[PERMUTE] = expr_permute,
	[SLICE] = expr_slice,
	[CAT] = expr_cat,
	[STACK] = expr_stack,
	[PAD] = expr_pad,
	[TRIL] = expr_tril,
	[REPEAT] = expr_repeat,
	[TILE] = expr_tile,
};

/* A value the region reads at several places is written out at each, so a region whose
 * values fan out again and again (x * x, squared again) doubles its expression at each
 * level: past this much source the generator stops. */
enum { MAX_EXPR = 1 << 20 };

static void expr(struct gen *G, int32_t v, const struct ix *x, struct fs_text *b)
{
	const struct prog *p = G->p;
	if (G->failed)
		return;
	if (b->n > MAX_EXPR)
		return fail(G, "an expression past 1 MiB of source: values the region reads at many places (apply a smaller region)");
	if (G->buffered[v])
		return load(G, v, x, b);
	if (v == G->row_val && own_index(fs_prog_value(p, v), x)) {
		fs_text_put(b, "R[it][u]");
		return;
	}
	if (v < (int32_t)p->n_in)
		return fail(G, "an input without a buffer");
	int32_t oi = v - (int32_t)p->n_in;
	const struct op *op = &p->ops[oi];
	const struct ten *out = &op->out;
	uint8_t narrow = planted_narrow(G, oi);
	uint8_t emulate = G->emulate && !is_view(op) && fs_dt_ctype(out->dtype) ? out->dtype : 0;
	if (narrow)
		fs_text_put(b, "rnd_%s(", fs_dt_suffix(narrow));
	if (emulate)
		fs_text_put(b, "rnd_%s(", fs_dt_suffix(emulate));
	struct ix *to = fs_xmalloc(sizeof(*to));
	expr_rule *rule = expr_rules[op->sem->kind];
	if (rule)
		rule(G, op, x, to, b);
	else
		fail(G, "an op the generator does not know");
	if (emulate)
		fs_text_put(b, ")");
	if (narrow)
		fs_text_put(b, ")");
	free(to);
}

/* a stored output's value: the store rounds to the buffer's dtype as a cast
 * to it does (to nearest even; idempotent), so a cast at the top of the
 * expression (softmax's .to(bf16), under an eval dropout's identity) is left
 * to the store, not done twice */
static void stored_expr(struct gen *G, int32_t v, const struct ix *x, struct fs_text *b)
{
	const struct prog *p = G->p;
	int32_t oi = v - (int32_t)p->n_in;
	const struct op *op = oi >= 0 ? &p->ops[oi] : NULL;
	if (G->ref || !op || !op->n_args || G->buffered[v] || v == G->row_val || op->args[0].ten < 0 || (G->plants && p->narrow && p->narrow[oi]))
		return expr(G, v, x, b);
	int32_t src = op->src[op->args[0].ten];
	const struct ten *st = fs_prog_value(p, src);
	if (op->sem->kind == ID && st->dtype == op->out.dtype && st->rank == op->out.rank && fs_same_dims(p, st, &op->out, st->rank))
		return stored_expr(G, src, x, b);
	if (op->sem->kind == CAST)
		return operand(G, op, 0, x, b);
	expr(G, v, x, b);
}

/* ---- kernels ------------------------------------------------------------------------------- */

extern const struct fs_embedded fs_builtin_kernels[];
extern const size_t fs_builtin_kernels_count;

const char *fs_kernel_file(const char *name)
{
	for (size_t i = 0; i < fs_builtin_kernels_count; i++)
		if (!strcmp(fs_builtin_kernels[i].name, name))
			return fs_builtin_kernels[i].data;
	return "";
}

int fs_codegen_buffered(const struct prog *p, int32_t v)
{
	if (v < (int32_t)p->n_in)
		return 1;
	const struct op *op = &p->ops[v - p->n_in];
	if (p->is_output[v - p->n_in])
		return 1; /* a region output is compared, so it exists */
	return !is_view(op) || op->sem->id == SEM_clone || op->sem->id == SEM_contiguous;
}

/* kernels/fused.cuh, after the arithmetic type */
static void template(struct fs_text *b, const char *real, const char *ix, int fast, int l2)
{
	fs_text_put(b, "typedef %s fs_real;\ntypedef %s fs_ix;\ntypedef unsigned %s fs_uix;\n#define FS_FAST %d\n#define FS_L2 %d\n", real, ix, ix,
	    fast, l2);
	fs_text_put(b, "%s\n", fs_kernel_file("fused.cuh"));
}

/* a reduction along the row (its last dim): the row kernel's */
static int reduces(const struct op *op, const struct prog *p)
{
	uint8_t k = op->sem->kind;
	return (k == RED && !reduces_across(op, fs_prog_value(p, op->src[0])->rank)) || k == SOFTMAX || k == LAYERNORM || k == RMSNORM;
}

static void release_gen(struct gen *G)
{
	free_sites(G);
	free(G->buffered);
	free(G->walked);
	free(G->red_free);
	free(G->param);
	fs_dim_names_release(&G->names);
}

uint64_t fs_div_magic(int64_t d)
{
	if (d < 1 || d >= ((int64_t)1 << 31))
		return 0; /* no symbol takes it: the 32-bit kernels need d < 2^31 */
	uint32_t l = 0;
	while (((int64_t)1 << l) < d)
		l++;
	uint64_t m = (((uint64_t)1 << 32) * (((uint64_t)1 << l) - (uint64_t)d)) / (uint64_t)d + 1;
	return m | (uint64_t)l << 32;
}

void fs_kernel_release(struct fs_kernel *k)
{
	free(k->source);
	memset(k, 0, sizeof(*k));
}

static int add_param(struct gen *G, struct fs_kernel *k, int32_t v, int write)
{
	if (G->param[v] >= 0)
		return 0;
	if (k->n_params >= FS_KERNEL_MAX_PARAMS)
		return fail(G, "too many buffers"), -1;
	G->param[v] = (int32_t)k->n_params;
	k->value[k->n_params] = v;
	k->write[k->n_params++] = (uint8_t)write;
	const struct ten *t = fs_prog_value(G->p, v);
	k->bytes += t->n * (int64_t)fs_dtype_size((enum fs_dtype)t->dtype);
	return 0;
}

/* Buffers the expression of v reads: every buffered value reached through
 * views and math, stopping at buffers. */
static void collect_reads(struct gen *G, struct fs_kernel *k, int32_t v, int top)
{
	if (!top && G->walked[v])
		return;
	G->walked[v] = 1;
	if (!top && G->buffered[v]) {
		if (member(G, v) < 0)
			add_param(G, k, v, 0);
		return;
	}
	if (v < (int32_t)G->p->n_in)
		return;
	const struct op *op = &G->p->ops[v - G->p->n_in];
	for (uint32_t i = 0; i < op->n_src; i++)
		collect_reads(G, k, op->src[i], 0);
}

/* the index of a row kernel's value of shape t at column `last` (a lane base, or "0") */
static void row_idx(const struct ten *t, const char *last, struct ix *x)
{
	char name[16];
	for (uint8_t d = 0; d + 1 < t->rank; d++) {
		snprintf(name, sizeof(name), "i%u", d);
		set_dim(x, d, name, 0, 0);
	}
	if (t->rank)
		set_dim(x, t->rank - 1, last, strcmp(last, "0") != 0, 0);
}

static int64_t gcd64(int64_t a, int64_t b)
{
	while (b) {
		int64_t t = a % b;
		a = b, b = t;
	}
	return a;
}

/* The index of dim d of t (named c<d>, c: 'i' or 'd') split off x: x % ext,
 * and x becomes x / ext. By a dim that is one symbol, in a 32-bit kernel,
 * a multiply and a shift with the launcher's magic numbers for that symbol
 * (DM<i>, DL<i>: division by an invariant integer, Granlund and Montgomery)
 * instead of a division's ~30 dependent instructions before the loads;
 * indices are never negative: unsigned arithmetic, no sign fix-ups. */
static void split(struct gen *G, struct fs_text *b, const char *ind, char c, int d, const char *x, const struct ten *t, const char *ext)
{
	int32_t s = -1;
	if (fs_dim_symbolic(t, d)) {
		const struct fs_dim *dim = &G->p->s->types.dims[t->sym[d] - 1];
		const struct fs_expr *e = dim->expr >= 0 ? &G->p->s->types.exprs[dim->expr] : NULL;
		for (uint32_t i = 0; e && e->op == FS_EX_SYM && i < G->p->n_bind; i++)
			if (G->p->bind[i].sym == e->sym)
				s = (int32_t)i;
	}
	if (s < 0)
		fs_text_put(b, "%sfs_ix %c%d = (fs_ix)((fs_uix)%s %% (fs_uix)%s); %s = (fs_ix)((fs_uix)%s / (fs_uix)%s);\n", ind, c, d, x, ext, x, x,
		    ext);
	else if (!G->k->index64)
		fs_text_put(b, "%sfs_ix %c%d; { const fs_ix q = (fs_ix)fs_udiv((unsigned)%s, DM%d, DL%d); %c%d = %s - q * S%d; %s = q; }\n", ind, c,
		    d, x, s, s, c, d, x, s, x);
	else /* 64-bit indices: the magic numbers where the value is below 2^31 (a row index always), else a 64-bit division */
		fs_text_put(b,
		    "%sfs_ix %c%d; { const fs_ix q = %s < 0x80000000ll ? (fs_ix)fs_udiv((unsigned)%s, DM%d, DL%d) : (fs_ix)((fs_uix)%s / (fs_uix)S%d); "
		    "%c%d = %s - q * S%d; %s = q; }\n",
		    ind, c, d, x, x, s, s, x, s, c, d, x, s, x);
}

/* the row's reductions, in program order; the reduced shape, or NULL */
static const struct ten *plan_rows(struct gen *G)
{
	const struct prog *p = G->p;
	const struct ten *rowsh = NULL;
	for (uint32_t i = 0; i < p->n_ops && !G->failed; i++) {
		const struct op *op = &p->ops[i];
		if ((!G->fused && (int32_t)i != G->only) || !reduces(op, p))
			continue;
		const struct ten *in = fs_prog_value(p, op->src[0]);
		if (op->sem->kind == RED && (op->n_ints != 1 || fs_dim_at(op->ints[0], in->rank) != in->rank - 1))
			fail(G, "a reduction over other dims than the last");
		if (op->sem->kind == SOFTMAX && op->n_ints && fs_dim_at(op->ints[0], in->rank) != in->rank - 1)
			fail(G, "a softmax over another dim than the last");
		if (op->sem->kind == LAYERNORM && op->n_ints != 1)
			fail(G, "a layer norm over several dims");
		if (rowsh && (in->rank != rowsh->rank || !fs_same_dims(p, in, rowsh, in->rank)))
			fail(G, "reductions over rows of different shapes");
		rowsh = in;
		uint8_t what[2] = {0, 0}, nw = 1;
		if (op->sem->kind == SOFTMAX)
			what[0] = 1, what[1] = 2, nw = 2;
		else if (op->sem->kind == LAYERNORM)
			what[0] = 3, what[1] = 4, nw = 2;
		else if (op->sem->kind == RMSNORM)
			what[0] = 4;
		for (uint8_t w = 0; w < nw && G->n_red < MAX_RED; w++) {
			G->red_op[G->n_red] = (int32_t)i;
			G->red_what[G->n_red++] = what[w];
		}
	}
	return rowsh;
}

/* The row dims, fastest first: the last one, unless an input is broadcast
 * along some dims while it varies along others (an attention mask shared by
 * the heads): those dims go first, so the rows that read one part of it run
 * together and find it in L2 instead of reading it again from memory
 * (unless lin: a tactic's rows in memory order). */
static int row_order(const struct prog *p, const struct ten *rowsh, int lin, int order[MAX_RANK])
{
	int R = rowsh->rank - 1, n = 0;
	uint8_t shared[MAX_RANK] = {0};
	for (uint32_t i = 0; i < p->n_in && !lin; i++) {
		const struct ten *t = &p->in[i];
		uint8_t bc[MAX_RANK] = {0};
		int any_bc = 0, varies = 0;
		for (int d = 0; d < R && t->rank <= rowsh->rank; d++) {
			int k = d - (rowsh->rank - t->rank);
			bc[d] = rowsh->shape[d] > 1 && (k < 0 || t->shape[k] == 1);
			any_bc |= bc[d];
			varies |= rowsh->shape[d] > 1 && k >= 0 && t->shape[k] == rowsh->shape[d];
		}
		for (int d = 0; d < R && any_bc && varies; d++)
			shared[d] |= bc[d];
	}
	for (int pass = 1; pass >= 0; pass--)
		for (int d = R - 1; d >= 0; d--)
			if (shared[d] == pass)
				order[n++] = d;
	return n;
}

/* a pass's loop over this thread's vectors of the row */
static void row_loop(struct gen *G, const char *H, int T, int narrow, struct fs_text *b, const char *ind)
{
	int V = G->vec;
	if (narrow)
		fs_text_put(b, "%sfor (fs_ix j0 = live && t == 0 ? 0 : %s; j0 < %s; j0 += %d) {\n", ind, H, H, V);
	else if (G->cache) { /* dead rows read row 0 (in bounds) and store nothing */
		fs_text_put(b, "%s#pragma unroll\n%sfor (int it = 0; it < %d; it++) {\n%s\tfs_ix j0 = t * %d + it * %lld;\n", ind, ind,
		    G->cache, ind, V, (long long)T * V);
		if (G->tail) /* no branch: the loads of every vector stay in flight together */
			fs_text_put(b, "%s\tconst bool in = j0 < %s;\n", ind, H);
	}
	else
		fs_text_put(b, "%sfor (fs_ix j0 = live ? t * %d : %s; j0 < %s; j0 += %lld) {\n", ind, V, H, H, (long long)T * V);
}

/* v's expression reaches no reduction */
static int reduction_free(const struct gen *G, int32_t v)
{
	if (G->buffered[v] || v < (int32_t)G->p->n_in)
		return 1;
	if (G->red_free[v])
		return G->red_free[v] == 1;
	const struct op *op = &G->p->ops[v - G->p->n_in];
	int r = !reduces(op, G->p);
	for (uint32_t i = 0; r && i < op->n_src; i++)
		r = reduction_free(G, op->src[i]);
	G->red_free[v] = r ? 1 : 2;
	return r;
}

/* an output of whole rows whose values need no reduction: stored in the first pass */
static int early_out(const struct gen *G, int32_t v, const struct ten *rowsh)
{
	const struct ten *t = fs_prog_value(G->p, v);
	return t->rank == rowsh->rank && !fs_dim_one(t, t->rank - 1) && reduction_free(G, v);
}

/* An output holding part of each row (fewer columns than the row): the
 * condition "j0 < W" into cond (uniform over the lanes: V | W, fs_codegen's
 * vcols), "" for whole rows. Its stores take it, and so do its loads (the
 * guard): an operand W wide is read only inside its rows. */
static void part_of_row(struct gen *G, const struct ten *t, const struct ten *rowsh, char cond[DIM_LEN + 16])
{
	char w[DIM_LEN];
	cond[0] = '\0';
	if (t->rank && !fs_dim_one(t, t->rank - 1) && t->shape[t->rank - 1] != rowsh->shape[rowsh->rank - 1])
		snprintf(cond, DIM_LEN + 16, "j0 < (fs_ix)(%s)", dims(G, t, t->rank - 1, t->rank, w));
}

/* stored_expr of output v under its part-of-row condition (part_of_row), if any */
static void part_expr(struct gen *G, int32_t v, const char *part, const struct ix *x, struct fs_text *b)
{
	char saved[IDX_LEN];
	memcpy(saved, G->guard, sizeof(saved));
	if (part[0])
		fmt_idx(G, G->guard, "%s && %s", saved, part);
	stored_expr(G, v, x, b);
	memcpy(G->guard, saved, sizeof(saved));
}

/* what the passes of a row kernel share (row_body) */
struct row {
	const struct ten *sh; /* the reduced rows */
	const int32_t *outs;  /* what the kernel writes */
	uint32_t n_out;
	int T;                /* threads per row */
	char H[DIM_LEN];      /* the row's length, as C */
	struct ix *x;         /* scratch: the index of the value at hand */
};

/* A row part of at most 8 vectors per thread stays in registers between
 * passes (not with the planted narrow accumulation, which reads alone).
 * A symbolic row length gets the slots its value here (the bucket's)
 * needs: the kernel requires the run-time length at most what they hold,
 * and skips the vectors past the row's end; the kernel for any size keeps
 * no cache. */
static void row_cache(struct gen *G, struct fs_kernel *k, const struct ten *rowsh)
{
	const struct prog *p = G->p;
	int64_t H = k->cols;
	int V = G->vec, T = k->tactic.threads, last = rowsh->rank - 1;
	int narrow_any = 0;
	for (uint32_t r = 0; r < G->n_red; r++)
		narrow_any |= G->plants && p->narrow && p->narrow[G->red_op[r]];
	int64_t per_thread = (int64_t)T * V, slots = (H + per_thread - 1) / per_thread;
	int sym = fs_dim_symbolic(rowsh, last);
	G->cache = !narrow_any && slots <= 8 && (!sym || (!p->index64 && require(k, (struct fs_req){rowsh->sym[last], 0, slots * per_thread}))) ? (int)slots : 0;
	G->tail = G->cache && (sym || H % per_thread);
	G->first_in = G->cache && !sym && (int64_t)(T - 1) * V < H;
	if (G->tail) /* the vectors past the row's end: loads predicated off, reductions and stores skip them */
		snprintf(G->guard, sizeof(G->guard), " && in");
	for (uint32_t r = 0; r < MAX_RED; r++)
		G->exp_slot[r] = -1;
}

/* the row kernel's prologue: the thread's row and place t in its group, the
 * row's dims split off the row index (in row_order), the reductions' slots */
static void row_head(struct gen *G, struct fs_kernel *k, const struct ten *rowsh, struct fs_text *b)
{
	char rows[DIM_LEN], ext[DIM_LEN];
	int T = k->tactic.threads;
	dims(G, rowsh, 0, rowsh->rank - 1, rows);
	fs_text_put(b, "\t__shared__ __align__(16) fs_real part[%u][32];\n\tconst int t = threadIdx.x %% %d;\n", G->n_red ? G->n_red : 1, T);
	fs_text_put(b, "\tfs_ix row = (fs_ix)blockIdx.x * %d + threadIdx.x / %d;\n", k->tactic.per, T);
	fs_text_put(b, "\tconst bool live = row < %s;\n\trow = live ? row : 0;\n", rows);
	int order[MAX_RANK], n_order = row_order(G->p, rowsh, k->tactic.lin, order);
	for (int o = 0; o < n_order; o++)
		k->reordered |= order[o] != rowsh->rank - 2 - o;
	for (int o = 0; o < n_order; o++) { /* the last is all that is left */
		dims(G, rowsh, order[o], order[o] + 1, ext);
		if (o + 1 < n_order)
			split(G, b, "\t", 'i', order[o], "row", rowsh, ext);
		else
			fs_text_put(b, "\tfs_ix i%d = row;\n", order[o]);
	}
	fs_text_put(b, "\tfs_real red[%u];\n", G->n_red ? G->n_red : 1);
}

/* how reduction r combines: 1 a max (amax, softmax's), -1 a min (amin), 0 a sum */
static int red_extremum(const struct gen *G, uint32_t r)
{
	enum sem_id id = G->p->ops[G->red_op[r]].sem->id;
	uint8_t what = G->red_what[r];
	return what == 1 || id == SEM_amax ? 1 : what == 0 && id == SEM_amin ? -1 : 0;
}

/* The first pass's stores: outputs that need no reduction (add + RMSNorm's
 * sum) are stored as the row is read, so their writes drain while it is
 * reduced. Their vectors into decl, lane values into lanes, stores into after. */
static void early_outs(struct gen *G, struct row *R, struct fs_text *decl, struct fs_text *lanes, struct fs_text *after)
{
	int V = G->vec;
	for (uint32_t o = 0; o < R->n_out; o++) {
		const struct ten *t = fs_prog_value(G->p, R->outs[o]);
		if (!early_out(G, R->outs[o], R->sh))
			continue;
		struct fs_text eo = {0}, off = {0};
		char part[DIM_LEN + 16], cond[DIM_LEN + 64];
		part_of_row(G, t, R->sh, part);
		row_idx(t, "j0", R->x);
		part_expr(G, R->outs[o], part, R->x, &eo);
		offset(G, t, R->x, 1, 0, 0, &off);
		snprintf(cond, sizeof(cond), "%s%s%s", G->tail ? "live && in" : G->cache ? "live" : "", part[0] && (G->tail || G->cache) ? " && " : "",
			 part);
		fs_text_put(decl, "\t\t\tfs_real o%u[%d];\n", o, V);
		fs_text_put(lanes, "\t\t\t\to%u[u] = %s;\n", o, eo.s ? eo.s : "0.0f");
		fs_text_put(after, "\t\t\t%s%s%s%s_%s<%d>(p%d, %s, o%u%s);\n", cond[0] ? "if (" : "", cond, cond[0] ? ") " : "",
		    compares(G) ? "cmpv" : "stv", out_sfx(G, t), V, G->param[R->outs[o]], off.s, o, compares(G) ? ", err" : "");
		free(eo.s);
		free(off.s);
	}
}

/* Reduction r's step over the element x into acc, as C into step (n bytes).
 * Softmax's sum and a layer norm's variance use the slot before (max,
 * mean); a cached softmax keeps exp(x - max) in E<r> (declared into b) for
 * the output pass. */
static void red_step(struct gen *G, uint32_t r, int narrow_acc, struct fs_text *b, char *step, size_t n)
{
	const struct op *op = &G->p->ops[G->red_op[r]];
	uint8_t what = G->red_what[r];
	int ext = red_extremum(G, r), mx = ext > 0, mn = ext < 0;
	char term[64], pre[64] = "", with[96];
	int prev = (int)r - 1, ln_var = what == 4 && op->sem->kind == LAYERNORM;
	if (what == 2 && G->cache) { /* kept for the output pass */
		fs_text_put(b, "\tfs_real E%u[%d][%d];\n", r, G->cache, G->vec);
		snprintf(pre, sizeof(pre), "E%u[it][u] = fs_exp(x - red[%d]);\n\t\t\t\t", r, prev);
		snprintf(term, sizeof(term), "E%u[it][u]", r);
		G->exp_slot[r] = G->red_op[r];
	} else if (what == 2)
		snprintf(term, sizeof(term), "fs_exp(x - red[%d])", prev);
	else if (ln_var)
		snprintf(term, sizeof(term), "(x - red[%d]) * (x - red[%d])", prev, prev);
	else
		snprintf(term, sizeof(term), "%s", what == 4 ? "x * x" : "x");
	snprintf(with, sizeof(with), mx || mn ? "%s(acc, %s)" : "%sacc + %s", mx ? "fmax" : mn ? "fmin" : "", term);
	if (narrow_acc && what != 2 && !ln_var) /* planted: a plain sum accumulates narrow */
		snprintf(step, n, "acc = rnd_%s(%s)", fs_dt_suffix(G->p->narrow[G->red_op[r]]), with);
	else if (G->first_in) /* the first vector (unrolled: a constant test) starts the reduction */
		snprintf(step, n, "%sacc = it + u == 0 ? %s : %s", pre, term, with);
	else
		snprintf(step, n, "%sacc = %s", pre, with);
}

/* Pass r over the row: reduction r's loop (the first pass with the early
 * stores), then its group reduction into red[r]. */
static void row_pass(struct gen *G, struct row *R, uint32_t r, struct fs_text *b)
{
	const struct prog *p = G->p;
	const struct op *op = &p->ops[G->red_op[r]];
	int V = G->vec, ext = red_extremum(G, r), mx = ext > 0, mn = ext < 0;
	/* planted dropped cast: the group's first thread sums the row alone, at
	 * the narrow dtype, as a kernel that forgot to widen would */
	int narrow_acc = G->plants && p->narrow && p->narrow[G->red_op[r]] && !mx && !mn;
	struct fs_text pass = {0}, e = {0}, early = {0}, early_lanes = {0}, early_after = {0};
	fs_text_put(&pass, "\t{\n\t\tfs_real acc = %s;\n", mx ? "FS_NEG_INF" : mn ? "-FS_NEG_INF" : "0.0f");
	row_loop(G, R->H, R->T, narrow_acc, &pass, "\t\t");
	row_idx(R->sh, "j0", R->x);
	expr(G, op->src[0], R->x, &e);
	if (r == 0 && !narrow_acc)
		early_outs(G, R, &early, &early_lanes, &early_after);
	emit_sites(G, b, &pass, "\t\t\t");
	char step[256];
	red_step(G, r, narrow_acc, b, step, sizeof(step));
	/* cached, the first pass keeps the value it reduces (not a plain load:
	 * those are kept already) for the passes after, so its inputs die here */
	int keep = r == 0 && G->cache && !G->buffered[op->src[0]];
	if (keep)
		fs_text_put(b, "\tfs_real R[%d][%d];\n", G->cache, V);
	/* past the row's end the step is computed too (no branch) and its sum
	 * dropped; a first vector that starts the reduction is always kept */
	const char *drop = !G->tail ? "" : G->first_in ? "\t\t\t\tacc = in || it + u == 0 ? acc : a0;\n" : "\t\t\t\tacc = in ? acc : a0;\n";
	fs_text_put(&pass, "%s\t\t\t#pragma unroll\n\t\t\tfor (int u = 0; u < %d; u++) {\n\t\t\t\tfs_real x = %s;\n\t\t\t\t%s%s%s;\n%s%s\t\t\t}\n%s\t\t}\n",
	    early.s ? early.s : "", V, e.s ? e.s : "0.0f", keep ? "R[it][u] = x;\n\t\t\t\t" : "", G->tail ? "const fs_real a0 = acc;\n\t\t\t\t" : "",
	    step, drop, early_lanes.s ? early_lanes.s : "", early_after.s ? early_after.s : "");
	if (keep)
		G->row_val = op->src[0];
	free(early.s);
	free(early_lanes.s);
	free(early_after.s);
	uint8_t what = G->red_what[r];
	fs_text_put(&pass, "\t\tred[%u] = fs_group_reduce<%d>(acc, %s(), part[%u]);\n\t}\n", r, R->T, mx ? "fs_max" : mn ? "fs_min" : "fs_sum", r);
	if (what == 3 || what == 4 || op->sem->id == SEM_mean) /* a mean */
		fs_text_put(&pass, "\tred[%u] /= (fs_real)%s;\n", r, R->H);
	fs_text_put(b, "%s", pass.s);
	free(pass.s);
	free(e.s);
}

/* Output o in the output pass: a keepdim reduction's value stored once per
 * row (into after), else a vector of the row: declared into pass, its lanes
 * into lanes, its store into after. */
static void row_out(struct gen *G, struct row *R, uint32_t o, struct fs_text *pass, struct fs_text *lanes, struct fs_text *after)
{
	const struct ten *t = fs_prog_value(G->p, R->outs[o]);
	int V = G->vec;
	int one = t->rank && fs_dim_one(t, t->rank - 1) && !fs_dim_one(R->sh, R->sh->rank - 1);
	char part[DIM_LEN + 16];
	part_of_row(G, t, R->sh, part);
	row_idx(t, one ? "0" : "j0", R->x);
	struct fs_text e = {0}, off = {0};
	part_expr(G, R->outs[o], part, R->x, &e);
	offset(G, t, R->x, 1, 0, 0, &off);
	if (one)
		fs_text_put(after, "\t\tif (j0 == 0) %s_%s(p%d, %s, %s%s);\n", compares(G) ? "cmp" : "st", out_sfx(G, t),
		    G->param[R->outs[o]], off.s, e.s ? e.s : "0.0f", compares(G) ? ", err" : "");
	else {
		fs_text_put(pass, "\t\tfs_real o%u[%d];\n", o, V);
		fs_text_put(lanes, "\t\t\to%u[u] = %s;\n", o, e.s ? e.s : "0.0f");
		fs_text_put(after, "\t\t%s%s%s%s_%s<%d>(p%d, %s, o%u%s);\n", part[0] ? "if (" : "", part, part[0] ? ") " : "",
		    compares(G) ? "cmpv" : "stv", out_sfx(G, t), V, G->param[R->outs[o]], off.s, o, compares(G) ? ", err" : "");
	}
	free(e.s);
	free(off.s);
}

/* A cached row's output pass: the loads only it needs (a norm's weight) are
 * issued before the reductions, at offset `at` of b: their latency hides
 * behind the row's. */
static void row_hoist(struct gen *G, struct row *R, size_t at, struct fs_text *b)
{
	struct fs_text decl = {0}, loads = {0}, hoist = {0};
	emit_sites(G, &decl, &loads, "\t\t");
	if (loads.s) {
		fs_text_put(&hoist, "%s", decl.s ? decl.s : "");
		row_loop(G, R->H, R->T, 0, &hoist, "\t");
		fs_text_put(&hoist, "%s\t}\n", loads.s);
	}
	if (hoist.s) {
		fs_text_put(b, "%s", hoist.s); /* room for it, then moved into place */
		memmove(b->s + at + hoist.n, b->s + at, b->n - hoist.n - at);
		memcpy(b->s + at, hoist.s, hoist.n);
	}
	free(decl.s);
	free(loads.s);
	free(hoist.s);
}

/* the output pass: every output the first pass did not store; a cached
 * row's own loads go at offset `before_passes` of b (row_hoist) */
static void row_outputs(struct gen *G, struct row *R, size_t before_passes, struct fs_text *b)
{
	const struct prog *p = G->p;
	struct fs_text pass = {0}, lanes = {0}, after = {0};
	row_loop(G, R->H, R->T, 0, &pass, "\t");
	int narrow0 = G->n_red && G->plants && p->narrow && p->narrow[G->red_op[0]];
	for (uint32_t o = 0; o < R->n_out; o++)
		if (!G->n_red || narrow0 || !early_out(G, R->outs[o], R->sh)) /* else stored in the first pass */
			row_out(G, R, o, &pass, &lanes, &after);
	if (G->cache)
		row_hoist(G, R, before_passes, b);
	else
		emit_sites(G, b, &pass, "\t\t");
	fs_text_put(b, "%s\t\t#pragma unroll\n\t\tfor (int u = 0; u < %d; u++) {\n%s\t\t}\n%s%s%s\t}\n", pass.s, G->vec, lanes.s ? lanes.s : "",
	    G->tail ? "\t\tif (live && in) {\n" : G->cache ? "\t\tif (live) {\n" : "", after.s ? after.s : "", G->cache ? "\t\t}\n" : "");
	free(pass.s);
	free(lanes.s);
	free(after.s);
}

/* the row kernel's body: each reduction a pass over the row, then the outputs */
static void row_body(struct gen *G, struct fs_kernel *k, const struct ten *rowsh, const int32_t *outs, uint32_t n_out,
		     struct fs_text *b)
{
	struct row R = {.sh = rowsh, .outs = outs, .n_out = n_out, .T = k->tactic.threads};
	dims(G, rowsh, rowsh->rank - 1, rowsh->rank, R.H);
	R.x = fs_xmalloc(sizeof(*R.x));
	row_cache(G, k, rowsh);
	row_head(G, k, rowsh, b);
	size_t before_passes = b->n; /* where the output pass's own loads go when the row is cached */
	for (uint32_t r = 0; r < G->n_red; r++)
		row_pass(G, &R, r, b);
	row_outputs(G, &R, before_passes, b);
	free(R.x);
}

/* The output shapes (RoPE's q and k), each once, by its first output. */
static void out_shapes(struct gen *G, const int32_t *outs, uint32_t n_out)
{
	uint32_t *first = G->shape_first, n = 0;
	for (uint32_t o = 0; o < n_out; o++) {
		const struct ten *t = fs_prog_value(G->p, outs[o]);
		uint32_t s = 0;
		const struct ten *f;
		while (s < n && !((f = fs_prog_value(G->p, outs[first[s]]))->rank == t->rank && fs_same_dims(G->p, f, t, t->rank) &&
				  same_layout(f, t)))
			s++;
		if (s == n)
			first[n++] = o;
	}
	G->n_shapes = n;
}

/* The loop over the groups g of V elements: one pair of the GEMM's
 * accumulators (the epilogue); a group per thread (the grid covers them:
 * 32-bit sizes never reach its limit): one guard; else a grid-stride loop.
 * total: the groups of every output shape, as C. */
static void group_loop(struct gen *G, const int32_t *outs, const char *total, struct fs_text *b)
{
	if (G->epi) { /* one pair of the GEMM's accumulators: row `row`, columns col, col + 1 */
		const struct ten *sh = fs_prog_value(G->p, outs[0]);
		if (G->n_shapes != 1 || G->vec != 2 || !sh->rank || fs_dim_symbolic(sh, sh->rank - 1))
			fail(G, "an epilogue whose outputs are not one shape of static rows");
		fs_text_put(b, "\t{\n\t\tconst fs_ix g = ((fs_ix)row * %lld + col) / 2;\n", (long long)(sh->rank ? sh->shape[sh->rank - 1] : 1));
	} else if (G->k->tactic.per == 1 && !G->k->index64)
		fs_text_put(b, "\tif (const fs_ix g = blockIdx.x * (fs_ix)blockDim.x + threadIdx.x; g < %s) {\n", total);
	else
		fs_text_put(b, "\tfor (fs_ix g = blockIdx.x * (fs_ix)blockDim.x + threadIdx.x; g < %s; g += (fs_ix)gridDim.x * blockDim.x) {\n",
		    total);
}

/* the dims of shape sh's element e0 (its offset in memory) split off it
 * into x, innermost in memory first */
static void shape_index(struct gen *G, const struct ten *sh, struct ix *x, struct fs_text *b)
{
	char ext[DIM_LEN], name[16];
	for (int at = sh->rank - 1; at >= 0; at--) {
		int d = sh->strided ? sh->order[at] : at;
		dims(G, sh, d, d + 1, ext);
		if (at) /* the outermost is all that is left */
			split(G, b, "\t\t", 'd', d, "rest", sh, ext);
		else
			fs_text_put(b, "\t\tfs_ix d%d = rest;\n", d);
		snprintf(name, sizeof(name), "d%d", d);
		set_dim(x, d, name, (uint8_t)(d == sh->rank - 1), 0);
	}
}

/* The vectors of output shape s, after those of the shapes before (from,
 * which gains this one's): under the guard that picks it, its element
 * index, then every output of that shape computed and stored. */
static void shape_body(struct gen *G, const int32_t *outs, uint32_t n_out, uint32_t s, struct fs_text *from, struct ix *x,
		       struct fs_text *b)
{
	const struct prog *p = G->p;
	int V = G->vec;
	const uint32_t n_sh = G->n_shapes;
	const struct ten *sh = fs_prog_value(p, outs[G->shape_first[s]]);
	char n[DIM_LEN];
	dims(G, sh, 0, sh->rank, n);
	if (n_sh > 1 && s + 1 == n_sh) /* the last shape: what the guard leaves */
		fs_text_put(b, "\telse {\n");
	else if (n_sh > 1)
		fs_text_put(b, "\t%sif (g < %s%s%s / %d) {\n", s ? "else " : "", from->s ? from->s : "", from->s ? " + " : "", n, V);
	fs_text_put(b, "\t\tconst fs_ix e0 = (g%s%s%s) * %d;\n\t\tfs_ix rest = e0;\n", from->s ? " - (" : "", from->s ? from->s : "",
	    from->s ? ")" : "", V);
	G->lin = sh;
	shape_index(G, sh, x, b);
	struct fs_text lanes = {0}, after = {0};
	for (uint32_t q = 0; q < n_out; q++) {
		const struct ten *t = fs_prog_value(p, outs[q]);
		if (t->rank != sh->rank || !fs_same_dims(p, t, sh, t->rank) || !same_layout(t, sh))
			continue;
		struct fs_text e = {0};
		stored_expr(G, outs[q], x, &e);
		fs_text_put(b, "\t\tfs_real o%u[%d];\n", q, V);
		fs_text_put(&lanes, "\t\t\to%u[u] = %s;\n", q, e.s ? e.s : "0.0f");
		fs_text_put(&after, "\t\t%s_%s<%d>(p%d, e0, o%u%s);\n", compares(G) ? "cmpv" : "stv", out_sfx(G, t), V, G->param[outs[q]], q,
		    compares(G) ? ", err" : "");
		free(e.s);
	}
	emit_sites(G, NULL, b, "\t\t");
	fs_text_put(b, "\t\t#pragma unroll\n\t\tfor (int u = 0; u < %d; u++) {\n%s\t\t}\n%s%s", V, lanes.s ? lanes.s : "",
	    after.s ? after.s : "", n_sh > 1 ? "\t}\n" : "");
	fs_text_put(from, "%s%s / %d", from->s ? " + " : "", n, V);
	free(lanes.s);
	free(after.s);
	G->lin = NULL;
}

/* One index space over the vectors of every output shape, one after the
 * other (RoPE's q, then k): each thread computes one vector of one of them,
 * so the shapes' loads are in flight together. */
static void elementwise_body(struct gen *G, const int32_t *outs, uint32_t n_out, struct fs_text *b)
{
	struct ix *x = fs_xmalloc(sizeof(*x));
	struct fs_text total = {0}, from = {0}; /* from: the vectors of the shapes before */
	char n[DIM_LEN];
	for (uint32_t s = 0; s < G->n_shapes; s++) {
		const struct ten *sh = fs_prog_value(G->p, outs[G->shape_first[s]]);
		fs_text_put(&total, "%s%s / %d", s ? " + " : "", dims(G, sh, 0, sh->rank, n), G->vec);
	}
	group_loop(G, outs, total.s, b);
	for (uint32_t s = 0; s < G->n_shapes; s++)
		shape_body(G, outs, n_out, s, &from, x, b);
	fs_text_put(b, "\t}\n");
	free(total.s);
	free(from.s);
	free(x);
}

static const struct fs_tactic fallback = {1, 256, 1, 0, 0, 0};

const struct fs_tactic fs_tactic_eager = {0, 0, 0, 0, 0, 0};

/* eager's tactic for a kernel whose shapes are known */
static struct fs_tactic eager_for(const struct fs_kernel *k)
{
	struct fs_tactic t = fallback;
	for (uint16_t vec = 8; vec > 1; vec /= 2)
		if (k->vcols % vec == 0) {
			t.vec = vec;
			break;
		}
	if (k->row) /* a row group no wider than the row needs */
		while (t.threads > 32 && (int64_t)t.threads * t.vec / 2 >= k->cols)
			t.threads /= 2;
	return t;
}

/* FS_GEN_EXACT: p with every dim static, generated as the kernel */
static int exact(const struct prog *p, const struct fs_tactic *t, struct fs_kernel *k, struct fs_diags *d)
{
	struct prog q = *p;
	q.in = fs_xmalloc((p->n_in + 1) * sizeof(*q.in));
	q.ops = fs_xmalloc((p->n_ops + 1) * sizeof(*q.ops));
	memcpy(q.in, p->in, p->n_in * sizeof(*q.in));
	memcpy(q.ops, p->ops, p->n_ops * sizeof(*q.ops));
	for (uint32_t i = 0; i < p->n_in; i++)
		memset(q.in[i].sym, 0, sizeof(q.in[i].sym));
	for (uint32_t i = 0; i < p->n_ops; i++)
		memset(q.ops[i].out.sym, 0, sizeof(q.ops[i].out.sym));
	int rc = fs_codegen(&q, -1, FS_GEN_KERNEL, t, k, d);
	free(q.in);
	free(q.ops);
	return rc;
}

/* G for kernel k (zeroed, under tactic tac or the fallback) of p: the fused
 * kernel under mode (only < 0) or op only's; every value's parameter none,
 * each buffered as the kernel reads it */
static void gen_init(struct gen *G, const struct prog *p, int32_t only, enum fs_gen mode, const struct fs_tactic *tac,
		     struct fs_kernel *k)
{
	*G = (struct gen){.p = p, .fused = only < 0, .only = only, .row_val = -1};
	if (only < 0) {
		G->emulate = mode == FS_GEN_EMULATE;
		G->ref = !fs_gen_reference(mode) ? 0 : mode == FS_GEN_REF ? 1 : mode == FS_GEN_REF_F64 ? 2 : 3;
		G->plants = !G->ref;
		G->epi = mode == FS_GEN_EPILOGUE;
	}
	uint32_t nv = p->n_in + p->n_ops;
	G->buffered = fs_xcalloc(nv + 1, 1);
	G->walked = fs_xcalloc(nv + 1, 1);
	G->red_free = fs_xcalloc(nv + 1, 1);
	G->param = fs_xmalloc((nv + 1) * sizeof(int32_t));
	memset(k, 0, sizeof(*k));
	G->k = k;
	k->tactic = tac ? *tac : fallback;
	for (uint32_t v = 0; v < nv; v++) {
		G->param[v] = -1;
		G->buffered[v] = G->fused ? v < p->n_in || given(p, (int32_t)v) : (uint8_t)fs_codegen_buffered(p, (int32_t)v);
	}
}

/* What this kernel writes, into outs: the region's outputs, or the one op;
 * how many. Each is computed here, then stored: the buffers it reads are
 * parameters, then the outputs; G's out is the largest. */
static uint32_t kernel_outputs(struct gen *G, int32_t outs[FS_KERNEL_MAX_PARAMS])
{
	const struct prog *p = G->p;
	uint32_t n_out = 0;
	for (uint32_t i = 0; i < p->n_ops && n_out < FS_KERNEL_MAX_PARAMS; i++)
		if (G->fused ? p->is_output[i] && !given(p, (int32_t)(p->n_in + i)) : (int32_t)i == G->only)
			outs[n_out++] = (int32_t)(p->n_in + i);
	for (uint32_t o = 0; o < n_out; o++) {
		G->buffered[outs[o]] = 0;
		collect_reads(G, G->k, outs[o], 1);
	}
	for (uint32_t o = 0; o < n_out; o++) {
		add_param(G, G->k, outs[o], 1);
		if (!G->out || fs_prog_value(p, outs[o])->n > G->out->n)
			G->out = fs_prog_value(p, outs[o]);
	}
	return n_out;
}

/* The kernel's shape: a row kernel over the rows its reductions reduce
 * (returned), or elementwise (NULL); its columns, what every vector width
 * must divide (vcols) and its work (rows, or output elements). */
static const struct ten *kernel_shape(struct gen *G, const int32_t *outs, uint32_t n_out)
{
	const struct prog *p = G->p;
	struct fs_kernel *k = G->k;
	for (uint32_t i = 0; i < p->n_ops; i++)
		if (p->ops[i].sem->kind == GEMM && !given(p, (int32_t)(p->n_in + i)) && (G->fused || (int32_t)i == G->only))
			fail(G, "a matrix product inside the kernel (products run before it, fuse/gemm.h, or as the generated GEMM)");
	const struct ten *rowsh = plan_rows(G);
	k->row = rowsh != NULL;
	if (G->epi && k->row)
		fail(G, "an epilogue with a reduction (the generated GEMM's epilogue is elementwise)");
	int64_t H = rowsh && rowsh->rank ? rowsh->shape[rowsh->rank - 1] : 1;
	k->cols = k->row ? H : 0;
	k->vcols = k->cols;
	for (uint32_t o = 0; o < n_out && !G->failed; o++) {
		const struct ten *t = fs_prog_value(p, outs[o]);
		/* an output is the rows (or one value a row), or part of each row: the
		 * columns a slice keeps (softmax with sinks drops the sink's), stored
		 * where the row's index falls inside them (row_body) */
		if (k->row && (t->rank != rowsh->rank || !fs_same_dims(p, t, rowsh, t->rank ? t->rank - 1 : 0)))
			fail(G, "outputs that are not rows of the reduced value");
		else if (k->row && t->rank && t->shape[t->rank - 1] > H)
			fail(G, "an output wider than the row it is computed from");
		else if (k->row && t->rank && t->shape[t->rank - 1] != H && !fs_dim_one(t, t->rank - 1))
			k->vcols = gcd64(k->vcols, t->shape[t->rank - 1]);
		if (!k->row)
			k->cols = k->vcols = gcd64(k->cols, t->rank ? t->shape[t->rank - 1] : 1);
	}
	if (!k->row) { /* the elements of every output shape, one after the other */
		out_shapes(G, outs, n_out);
		for (uint32_t s = 0; s < G->n_shapes; s++)
			k->work += fs_prog_value(p, outs[G->shape_first[s]])->n;
	}
	if (k->row)
		k->work = rowsh->n / (H ? H : 1);
	return rowsh;
}

/* The kernel's tactic (eager's picked from the shapes), checked against
 * them; every parameter's dtype one the kernels handle. Vectors along a
 * symbolic last dim: the kernel requires it a multiple of vec (a row
 * kernel's row, and each output holding part of each row). */
static void kernel_tactic(struct gen *G, const struct fs_tactic *tac, const struct ten *rowsh, const int32_t *outs, uint32_t n_out)
{
	struct fs_kernel *k = G->k;
	for (uint32_t i = 0; i < k->n_params; i++)
		if (!fs_dt_ctype(fs_prog_value(G->p, k->value[i])->dtype))
			fail(G, "a dtype the kernels do not handle");
	if (tac == &fs_tactic_eager)
		k->tactic = eager_for(k);
	G->vec = k->tactic.vec;
	const struct fs_tactic *tc = &k->tactic;
	int T = tc->threads;
	if (!G->failed && (tc->vec < 1 || tc->vec > 8 || (tc->vec & (tc->vec - 1)) || (k->vcols % tc->vec) || T < 1 || (T & (T - 1)) ||
			   tc->per < 1 || (int64_t)T * (k->row ? tc->per : 1) > 1024 || tc->fast > 1 || tc->l2 > 2 || tc->lin > !!k->row))
		fail(G, "a tactic these shapes do not allow");
	for (uint32_t o = 0; o < n_out && !G->failed; o++) {
		const struct ten *t = fs_prog_value(G->p, outs[o]);
		if (k->row && !(t->rank && !fs_dim_one(t, t->rank - 1) && t->shape[t->rank - 1] != k->cols))
			t = rowsh;
		if (t->rank && !divisible(G, t, t->rank - 1, tc->vec))
			fail(G, "a tactic these shapes do not allow");
	}
}

/* Index arithmetic in 32 bits where every value fits in 2^30 elements
 * (fewer registers: more threads resident); literals take the type their
 * value needs. With symbolic dims the launcher checks the largest value's
 * size (most_py) before it takes a 32-bit kernel. */
static void index_width(struct gen *G)
{
	const struct prog *p = G->p;
	struct fs_kernel *k = G->k;
	uint32_t nv = p->n_in + p->n_ops;
	const struct ten *most = NULL;
	for (uint32_t v = 0; v < nv; v++)
		if (!most || fs_prog_value(p, (int32_t)v)->n > most->n)
			most = fs_prog_value(p, (int32_t)v);
	k->index64 = p->index64 || most->n > (1 << 30);
	for (uint32_t v = 0; p->pitch && v < nv; v++) { /* a slice of a wider buffer spans its rows at the pitch */
		const struct ten *t = fs_prog_value(p, (int32_t)v);
		k->index64 |= p->pitch[v] && t->rank && t->shape[t->rank - 1] && t->n / t->shape[t->rank - 1] * p->pitch[v] > (1 << 30);
	}
	if (fs_dims_text(p, most, 0, most->rank, FS_LANG_PY, NULL, k->most_py, sizeof(k->most_py)))
		fail(G, "a symbolic dim the generator cannot write");
}

/* the template, then the op table's functions (fuse/sem.def), once per elementwise op used */
static void prelude(struct gen *G, struct fs_text *b)
{
	const struct prog *p = G->p;
	const struct fs_tactic *tc = &G->k->tactic;
	template(b, G->ref ? "double" : "float", G->k->index64 ? "long long" : "int", tc->fast, tc->l2);
	for (uint32_t i = 0; i < p->n_ops; i++) {
		const struct op *op = &p->ops[i];
		uint8_t kd = op->sem->kind;
		int dup = 0;
		for (uint32_t j = 0; j < i; j++)
			dup |= p->ops[j].sem == op->sem;
		if (dup || (kd != UN && kd != BIN && kd != TER && kd != CMP))
			continue;
		fs_text_put(b, "__device__ __forceinline__ fs_real op_%s(fs_real a, fs_real b, fs_real c) { return (fs_real)(%s); }\n",
		    op->sem->key[0] == '_' ? op->sem->key + 1 : op->sem->key, op->sem->expr);
	}
}

/* The parameters, each after a comma, into par, and their names, as the
 * arguments that pass them on, into arg: the buffers, the symbols' values
 * and their divisors' magic numbers, then (a reference) the statistics it
 * adds to. */
static void kernel_params(struct gen *G, struct fs_text *par, struct fs_text *arg)
{
	const struct prog *p = G->p;
	struct fs_kernel *k = G->k;
	for (uint32_t i = 0; i < k->n_params; i++) {
		const struct ten *t = fs_prog_value(p, k->value[i]);
		const char *ct = G->ref >= 2 && k->write[i] ? "double" : fs_dt_ctype(k->write[i] ? t->dtype : read_dtype(G, k->value[i]));
		/* a row kernel reads its inputs through the read-only path (restrict:
		 * ld.global.nc, better for its passes over a row); an elementwise one
		 * reads each element once, where the plain path has the shorter latency */
		int plain = !k->row && !k->write[i];
		fs_text_put(par, ", %s%s *%sp%u", k->write[i] && !compares(G) ? "" : "const ", ct ? ct : "void", plain ? "" : "__restrict__ ", i);
		fs_text_put(arg, ", p%u", i);
	}
	for (uint32_t i = 0; i < p->n_bind; i++) {
		fs_text_put(par, ", long long S%u_", i);
		fs_text_put(arg, ", S%u_", i);
		k->sym_value[k->n_syms++] = p->bind[i].value;
	}
	for (uint32_t i = 0; i < p->n_bind; i++) {
		fs_text_put(par, ", unsigned long long F%u_", i);
		fs_text_put(arg, ", F%u_", i);
	}
	k->check = (uint8_t)compares(G);
	if (k->check)
		fs_text_put(par, ", fs_stats *__restrict__ st");
}

/* the kernel fs_k's head (or the epilogue fs_epi's), then the symbols' sizes and divisors */
static void kernel_head(struct gen *G, struct fs_text *b)
{
	const struct fs_kernel *k = G->k;
	const struct fs_tactic *tc = &k->tactic;
	struct fs_text par = {0}, arg = {0};
	kernel_params(G, &par, &arg);
	if (G->epi) /* the GEMM's kernel takes these parameters after its own and passes them on */
		fs_text_put(b, "\n#define FS_EPI_PARAMS %s\n#define FS_EPI_ARGS %s\n"
			       "__device__ __forceinline__ void fs_epi(int row, int col, const float a[][2] FS_EPI_PARAMS)\n{\n",
		    par.s, arg.s);
	else
		fs_text_put(b, "\n// tactic: vec %u, threads %u, %s %u\nextern \"C\" __global__ void __launch_bounds__(%lld) fs_k(%s)\n{\n%s",
		    tc->vec, tc->threads, k->row ? "rows per block" : "groups per thread", tc->per, (long long)k->block, par.s + 2,
		    k->check ? "\tfs_acc err = {};\n" : "");
	free(par.s);
	free(arg.s);
	for (uint32_t i = 0; i < G->p->n_bind; i++)
		fs_text_put(b, "\tconst fs_ix S%u = (fs_ix)S%u_;\n\tconst unsigned DM%u = (unsigned)F%u_, DL%u = (unsigned)(F%u_ >> 32);\n", i, i, i,
		    i, i, i);
}

/* The body into b, with the grid that covers the kernel's work and that
 * work in Python over the symbols (grid_work_py): a row kernel's rows, or
 * the elements of every output shape, one after the other. */
static void kernel_body(struct gen *G, const struct ten *rowsh, const int32_t *outs, uint32_t n_out, struct fs_text *b)
{
	const struct prog *p = G->p;
	struct fs_kernel *k = G->k;
	const struct fs_tactic *tc = &k->tactic;
	if (G->failed)
		return;
	if (k->row) {
		row_body(G, k, rowsh, outs, n_out, b);
		k->grid = (k->work + tc->per - 1) / tc->per;
		k->grid_per = tc->per;
		if (fs_dims_text(p, rowsh, 0, rowsh->rank - 1, FS_LANG_PY, NULL, k->grid_work_py, sizeof(k->grid_work_py)))
			fail(G, "a symbolic dim the generator cannot write");
		return;
	}
	elementwise_body(G, outs, n_out, b);
	int64_t groups = k->work / tc->vec, per_block = (int64_t)tc->threads * tc->per;
	k->grid = (groups + per_block - 1) / per_block;
	k->grid_per = per_block * tc->vec;
	for (uint32_t s = 0, at = 0; s < G->n_shapes && at + 4 < sizeof(k->grid_work_py); s++) {
		const struct ten *t = fs_prog_value(p, outs[G->shape_first[s]]);
		at += (uint32_t)snprintf(k->grid_work_py + at, sizeof(k->grid_work_py) - at, "%s", s ? " + " : "");
		if (fs_dims_text(p, t, 0, t->rank, FS_LANG_PY, NULL, k->grid_work_py + at, sizeof(k->grid_work_py) - at))
			fail(G, "a symbolic dim the generator cannot write");
		at += (uint32_t)strlen(k->grid_work_py + at);
	}
}

int fs_codegen(const struct prog *p, int32_t only, enum fs_gen mode, const struct fs_tactic *tac, struct fs_kernel *k,
	       struct fs_diags *d)
{
	if (p->n_ops > FS_MAX_SITE_NODES) { /* the generator recurses along the region's chains */
		memset(k, 0, sizeof(*k));
		fs_diag_add(d, FS_ERROR, fs_prog_path(p->s, p->g), 0, 0, NULL, 0, "a region of %u ops, more than the %d one fused kernel is made of",
			    p->n_ops, FS_MAX_SITE_NODES);
		return -1;
	}
	if (mode == FS_GEN_EXACT)
		return exact(p, tac, k, d);
	struct gen G;
	gen_init(&G, p, only, mode, tac, k);
	G.d = d;
	int32_t outs[FS_KERNEL_MAX_PARAMS];
	uint32_t n_out = kernel_outputs(&G, outs);
	if (!n_out) {
		fail(&G, "nothing to write");
		release_gen(&G);
		return -1;
	}
	const struct ten *rowsh = kernel_shape(&G, outs, n_out);
	kernel_tactic(&G, tac, rowsh, outs, n_out);
	index_width(&G);
	struct fs_text b = {0}, body = {0};
	prelude(&G, &b);
	k->block = k->row ? (int64_t)k->tactic.threads * k->tactic.per : k->tactic.threads;
	kernel_head(&G, &b);
	kernel_body(&G, rowsh, outs, n_out, &body); /* after the derived dims it names, which it tells */
	for (uint32_t i = 0; i < G.names.n; i++)
		fs_text_put(&b, "\tconst fs_ix SZ%u = (fs_ix)(%s);\n", i, G.names.text[i]);
	fs_text_put(&b, "%s%s}\n", body.s ? body.s : "", k->check ? "\tfs_acc_flush(err, st);\n" : "");
	free(body.s);
	k->grid = k->grid < 1 ? 1 : k->grid > 0x7fffffff ? 0x7fffffff : k->grid;
	k->source = b.s;
	k->transcendental = (uint8_t)transcendental(&G);
	if (G.failed)
		fs_kernel_release(k);
	int rc = G.failed ? -1 : 0;
	release_gen(&G);
	return rc;
}

char *fs_codegen_f64_source(const char *defines, const char *file)
{
	struct fs_text b = {0};
	template(&b, "double", "long long", 0, 0);
	fs_text_put(&b, "%s\n", defines);
	fs_text_put(&b, "%s\n", fs_kernel_file(file));
	return b.s;
}

char *fs_codegen_fill(void)
{
	struct fs_text b = {0};
	template(&b, "float", "long long", 0, 0);
	static const char *const dts[] = {"f64", "f32", "bf16", "f16", "i64", "i32", "u8"};
	static const uint8_t dtv[] = {FS_DT_F64, FS_DT_F32, FS_DT_BF16, FS_DT_F16, FS_DT_I64, FS_DT_I32, FS_DT_U8};
	for (size_t i = 0; i < sizeof(dts) / sizeof(*dts); i++)
		fs_text_put(&b,
		    "extern \"C\" __global__ void fs_fill_%s(%s *__restrict__ p, long long n, unsigned long long stream, int kind)\n{\n"
		    "\tfor (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n; i += (long long)gridDim.x * blockDim.x)\n"
		    "\t\tst_%s(p, i, fs_rand(stream, i, kind));\n}\n",
		    dts[i], fs_dt_ctype(dtv[i]), dts[i]);
	return b.s;
}

/* ---- tactics --------------------------------------------------------------------------- */

/* a block of `size` (elements, or rows of a row kernel) where one of half
 * the size would still hold all the work: the same one block, more threads
 * to launch and retire for nothing */
static int oversized(const struct fs_kernel *k, int64_t size)
{
	return size / 2 >= k->work;
}

/* parts that fill the GPU: two waves of 132 SMs */
enum { FILL = 2 * 132 };

/* An elementwise kernel's tactics of vector width vec, into out from n:
 * blocks of 128 to 512 threads (64 with few elements), a thread taking more
 * than one group only where the grid still fills the GPU. How many then. */
static uint32_t elementwise_tactics(const struct fs_kernel *k, int small, uint16_t vec, struct fs_tactic *out, uint32_t n)
{
	for (uint16_t t = small ? 64 : 128; t <= 512; t *= 2)
		for (uint16_t per = 1; per <= 4 && n < FS_FIRST_TACTICS; per *= 2)
			if ((per == 1 || k->work / ((int64_t)vec * t * per) >= FILL) && !(vec == fallback.vec && t == fallback.threads && per == 1) &&
			    !oversized(k, (int64_t)vec * t * per))
				out[n++] = (struct fs_tactic){vec, t, per, 0, 0, 0};
	return n;
}

/* A row kernel's tactics of vector width vec, into out from n: a row group
 * of at least a warp, every thread at least one vector and at most 32;
 * blocks of 128 to 1024 threads (64 with few rows). How many then. */
static uint32_t row_tactics(const struct fs_kernel *k, int small, uint16_t vec, struct fs_tactic *out, uint32_t n)
{
	for (uint16_t t = 32; t <= 1024; t *= 2) {
		if ((int64_t)t * vec > k->cols || k->cols / ((int64_t)t * vec) > 32)
			continue;
		for (uint16_t per = 1; per <= 4 && n < FS_FIRST_TACTICS; per *= 2)
			if (t * per >= (small ? 64 : 128) && t * per <= 1024)
				out[n++] = (struct fs_tactic){vec, t, per, 0, 0, 0};
	}
	return n;
}

/* Short rows (a softmax over few keys), into out from n: groups of fewer
 * than a warp, many rows a block: blocks of 256 and 1024 threads (and of
 * 32, 64 and 128, with few rows). How many then. */
static uint32_t short_row_tactics(const struct fs_kernel *k, int small, struct fs_tactic *out, uint32_t n)
{
	for (uint16_t vec = 1; vec <= 8; vec *= 2) {
		if (k->vcols % vec)
			continue;
		for (uint16_t t = 1; t < 32; t *= 2) {
			if ((int64_t)t * vec > k->cols || k->cols / ((int64_t)t * vec) > 32)
				continue;
			for (uint16_t per = (uint16_t)(32 / t); small && per <= 128 / t && n < FS_FIRST_TACTICS; per = (uint16_t)(per * 2))
				if (per == 32 / t || !oversized(k, per))
					out[n++] = (struct fs_tactic){vec, t, per, 0, 0, 0};
			for (uint16_t per = (uint16_t)(256 / t); per <= 1024 / t && n < FS_FIRST_TACTICS; per = (uint16_t)(per * 4))
				if (!oversized(k, per))
					out[n++] = (struct fs_tactic){vec, t, per, 0, 0, 0};
		}
	}
	return n;
}

uint32_t fs_tactics(const struct fs_kernel *k, struct fs_tactic *out)
{
	uint32_t n = 0;
	out[n++] = fallback;
	/* Few elements or rows (decode sizes): latency, not bandwidth, is the
	 * cost, so narrower vectors and smaller blocks spread them over more
	 * threads and SMs; a thread or block takes more than one part only
	 * where the grid still fills the GPU (FILL). An elementwise kernel at
	 * any size tries 2 elements a thread too: the narrower of Triton's two
	 * pointwise shapes (512 elements over 8 warps, beside 1024 over 4) that
	 * torch.compile's autotuning chooses from. */
	int small = k->row ? k->work < FILL * 8 : k->work < (1 << 17);
	for (uint16_t vec = k->row ? 4 : small ? 1 : 2; vec <= 8; vec *= 2)
		if (k->vcols % vec == 0)
			n = k->row ? row_tactics(k, small, vec, out, n) : elementwise_tactics(k, small, vec, out, n);
	if (k->row)
		n = short_row_tactics(k, small, out, n);
	/* a kernel with exp or tanh: every vectorised tactic again, with fast math */
	for (uint32_t i = 1, m = n; k->transcendental && i < m && n < FS_FIRST_TACTICS; i++) {
		out[n] = out[i];
		out[n++].fast = 1;
	}
	return n;
}

uint32_t fs_tactic_variants(const struct fs_kernel *k, const struct fs_tactic *t, struct fs_tactic out[FS_TACTIC_VARIANTS])
{
	uint32_t n = 0;
	/* under each L2 policy (kernels/fused.cuh, FS_L2): a hint takes an
	 * access of 4 bytes or more, two elements at least */
	for (uint16_t l2 = 1; t->vec > 1 && l2 <= 2; l2++) {
		out[n] = *t;
		out[n++].l2 = l2;
	}
	/* rows that share an input in memory order instead (without L2 hints:
	 * the input's reuse is what the default order keeps in L2), where it
	 * fits in L2 anyway and the other order's reads jump across the buffer
	 * (an attention mask over few keys) */
	if (k->reordered) {
		out[n] = *t;
		out[n++].lin = 1;
	}
	return n;
}

void fs_tactic_name(const struct fs_tactic *t, int row, char *out, size_t n)
{
	snprintf(out, n, "v%u %s%u %s%u%s%s%s", t->vec, row ? "t" : "b", t->threads, row ? "r" : "e", t->per, t->fast ? " fast" : "",
		 t->l2 == 1 ? " l2" : t->l2 ? " l2i" : "", t->lin ? " lin" : "");
}

/* The tuning cache's kernel key: a hash of the fallback fused kernel
 * generated at the bucket b, so every token count of a bucket shares one
 * entry. */
void fs_codegen_tuning_key(const struct prog *p, const uint32_t *nodes, uint32_t n, int64_t b, char *key, size_t kn,
			char *bucket, size_t bn)
{
	snprintf(bucket, bn, "tokens<=%lld", (long long)b);
	struct prog q = {.s = p->s, .g = p->g, .gelu_tanh = p->gelu_tanh};
	struct fs_diags d;
	struct fs_kernel k;
	fs_diags_init(&d); /* a region with no kernel has no key: nothing said */
	key[0] = '\0';
	if (fs_prog_build(&q, nodes, n, b, &d) == 0 && fs_codegen(&q, -1, 0, NULL, &k, &d) == 0) {
		snprintf(key, kn, "%016llx", (unsigned long long)fs_hash_bytes(k.source, strlen(k.source), 0x74756e65ull));
		fs_kernel_release(&k);
	}
	fs_prog_free(&q);
	fs_diags_release(&d);
}
