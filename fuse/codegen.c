/*
 * codegen.c: CUDA C for a program (prog.h). Every value is an expression of
 * its index: views, broadcasting, slices and cat change the index, math ops
 * combine operand expressions, and only buffers are loaded. The fused kernel
 * reads the region's inputs and writes its outputs; each unfused kernel is one
 * op reading its operands' buffers (views stay free, as in eager PyTorch).
 *
 * Two shapes of kernel, from the template in kernels/fused.cuh:
 *   elementwise  a grid-stride loop over the output's elements;
 *   row          one block per row of the last dim; the row's reductions
 *                (mean / sum / amax, softmax's max and sum, a norm's moments)
 *                are block reductions, then every column is computed.
 * Arithmetic is fp32; a cast rounds to its dtype; outputs are stored in theirs.
 */
#include "codegen.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct buf {
	char *s;
	size_t n, cap;
};

static void put(struct buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void put(struct buf *b, const char *fmt, ...)
{
	va_list ap;
	for (;;) {
		va_start(ap, fmt);
		int k = vsnprintf(b->s ? b->s + b->n : NULL, b->s ? b->cap - b->n : 0, fmt, ap);
		va_end(ap);
		if (k < 0)
			return;
		if (b->s && b->n + (size_t)k < b->cap) {
			b->n += (size_t)k;
			return;
		}
		b->cap = (b->cap + (size_t)k + 1) * 2;
		b->s = fs_xrealloc(b->s, b->cap);
	}
}

/* ---- the generator's state ------------------------------------------------------------ */

enum { MAX_RED = 16, IDX_LEN = 1024 };

struct gen {
	const struct prog *p;
	int fused;            /* 1: the fused kernel; 0: the unfused kernel of op `only` */
	int32_t only;
	int emulate;          /* round every op like eager (triage) */
	uint8_t *buffered;    /* per value: read from a buffer */
	int32_t *param;       /* per value: kernel parameter index, -1 none */
	uint32_t n_params;
	int32_t red_op[MAX_RED];   /* the row's reductions: op index and which moment */
	uint8_t red_what[MAX_RED]; /* 0 sum / mean / amax / amin, 1 softmax max, 2 softmax sum, 3 norm mean, 4 norm var */
	uint32_t n_red;
	int failed;
	char why[160];
};

static const struct ten *shape_of(const struct prog *p, int32_t v)
{
	return v < (int32_t)p->n_in ? &p->in[v] : &p->ops[v - p->n_in].out;
}

static int is_view(const struct op *op)
{
	uint8_t k = op->sem->kind;
	return k == VIEW || k == EXPAND || k == PERMUTE || k == SLICE || k == ID;
}

static const char *ctype(uint8_t dt)
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

static const char *dt_suffix(uint8_t dt)
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

static void fail(struct gen *G, const char *why)
{
	if (!G->failed)
		snprintf(G->why, sizeof(G->why), "%s", why);
	G->failed = 1;
}

/* index expressions: idx[k] is C text for dim k of the value's shape */
typedef char idx_t[MAX_RANK][IDX_LEN];

static int64_t dim_of(int64_t d, uint8_t r)
{
	return d < 0 ? d + r : d;
}

/* Contiguous offset of idx in shape t. */
static void offset(const struct ten *t, idx_t idx, struct buf *b)
{
	put(b, "(0LL");
	int64_t stride = 1;
	for (int k = t->rank - 1; k >= 0; k--) {
		if (t->shape[k] != 1)
			put(b, " + (long long)(%s) * %lldLL", idx[k], (long long)stride);
		stride *= t->shape[k];
	}
	put(b, ")");
}

static void expr(struct gen *G, int32_t v, idx_t idx, struct buf *b);

/* the operand index of `src` for an output index of `out` (right-aligned broadcast) */
static void bcast_idx(const struct ten *src, const struct ten *out, idx_t idx, idx_t *to)
{
	for (uint8_t k = 0; k < src->rank; k++)
		snprintf((*to)[k], IDX_LEN, "%s", src->shape[k] == 1 ? "0" : idx[out->rank - src->rank + k]);
}

static void operand(struct gen *G, const struct op *op, uint32_t k, idx_t idx, struct buf *b)
{
	if (op->args[k].ten < 0) {
		double lit = op->args[k].lit;
		if (G->fused && G->p->plant_eps > 0 && !strcmp(op->sem->key, "add") && lit > 0 && lit < 1e-2)
			lit = G->p->plant_eps; /* planted bug: a wrong eps */
		put(b, "(float)(%.17g)", lit);
		return;
	}
	int32_t v = op->src[op->args[k].ten];
	idx_t *to = fs_xmalloc(sizeof(idx_t));
	bcast_idx(shape_of(G->p, v), &op->out, idx, to);
	expr(G, v, *to, b);
	free(to);
}

static int32_t red_slot(struct gen *G, int32_t op_index, uint8_t what)
{
	for (uint32_t i = 0; i < G->n_red; i++)
		if (G->red_op[i] == op_index && G->red_what[i] == what)
			return (int32_t)i;
	return -1;
}

static void expr(struct gen *G, int32_t v, idx_t idx, struct buf *b)
{
	const struct prog *p = G->p;
	if (G->buffered[v]) {
		const struct ten *t = shape_of(p, v);
		put(b, "ld_%s(p%d, ", dt_suffix(t->dtype), G->param[v]);
		offset(t, idx, b);
		put(b, ")");
		return;
	}
	if (v < (int32_t)p->n_in)
		return fail(G, "an input without a buffer");
	int32_t oi = v - (int32_t)p->n_in;
	const struct op *op = &p->ops[oi];
	const struct ten *out = &op->out;
	uint8_t narrow = G->fused && p->narrow ? p->narrow[oi] : 0; /* planted bug: computed narrow */
	uint8_t emulate = G->emulate && !is_view(op) && ctype(out->dtype) ? out->dtype : 0;
	if (narrow)
		put(b, "rnd_%s(", dt_suffix(narrow));
	if (emulate)
		put(b, "rnd_%s(", dt_suffix(emulate));
	idx_t *to = fs_xmalloc(sizeof(idx_t));
	switch (op->sem->kind) {
	case UN:
	case BIN:
	case TER:
	case CMP: {
		int gelu_tanh = !strcmp(op->sem->key, "gelu") && G->p->gelu_tanh;
		put(b, gelu_tanh ? "fs_gelu_tanh(" : "op_%s(", op->sem->key[0] == '_' ? op->sem->key + 1 : op->sem->key);
		for (uint32_t k = 0; k < (gelu_tanh ? 1u : 3u); k++) { /* op_* take (a, b, c) */
			put(b, k ? ", " : "");
			if (k < op->n_args)
				operand(G, op, k, idx, b);
			else
				put(b, "0.0f");
		}
		put(b, ")");
		break;
	}
	case CAST: /* the dropped cast keeps its input (narrow) */
		put(b, "rnd_%s(", dt_suffix(narrow ? narrow : out->dtype));
		operand(G, op, 0, idx, b);
		put(b, ")");
		break;
	case ID:
	case EXPAND:
		operand(G, op, 0, idx, b);
		break;
	case VIEW: { /* same linear index, another shape */
		const struct ten *src = shape_of(p, op->src[0]);
		struct buf lin = {0};
		offset(out, idx, &lin);
		int64_t stride = 1;
		for (int k = src->rank - 1; k >= 0; k--) {
			snprintf((*to)[k], IDX_LEN, "((%s / %lldLL) %% %lldLL)", lin.s, (long long)stride, (long long)src->shape[k]);
			if (strlen(lin.s) + 40 >= IDX_LEN)
				fail(G, "an index expression too long");
			stride *= src->shape[k];
		}
		free(lin.s);
		expr(G, op->src[0], *to, b);
		break;
	}
	case PERMUTE: {
		int64_t perm[MAX_RANK];
		for (uint8_t k = 0; k < out->rank; k++)
			perm[k] = k;
		if (op->n_ints == 2 || op->n_ints == 0) {
			int64_t a = op->n_ints ? dim_of(op->ints[0], out->rank) : 0, c = op->n_ints ? dim_of(op->ints[1], out->rank) : 1;
			perm[a] = c, perm[c] = a;
		} else
			for (uint8_t k = 0; k < out->rank; k++)
				perm[k] = dim_of(op->ints[k], out->rank);
		for (uint8_t k = 0; k < out->rank; k++)
			snprintf((*to)[perm[k]], IDX_LEN, "%s", idx[k]);
		expr(G, op->src[0], *to, b);
		break;
	}
	case SLICE: {
		const struct ten *src = shape_of(p, op->src[0]);
		int64_t d = dim_of(op->ints[0], out->rank), len = src->shape[d];
		int64_t start = op->ints[1] < 0 ? op->ints[1] + len : op->ints[1];
		start = start < 0 ? 0 : start > len ? len : start;
		memcpy(*to, idx, sizeof(idx_t));
		snprintf((*to)[d], IDX_LEN, "(%lldLL + (long long)(%s) * %lldLL)", (long long)start, idx[d], (long long)op->ints[3]);
		expr(G, op->src[0], *to, b);
		break;
	}
	case CAT: { /* nested selects along the cat dim */
		int64_t d = dim_of(op->ints[0], out->rank), at = 0;
		for (uint32_t k = 0; k < op->n_src; k++) {
			const struct ten *t = shape_of(p, op->src[k]);
			memcpy(*to, idx, sizeof(idx_t));
			snprintf((*to)[d], IDX_LEN, "((long long)(%s) - %lldLL)", idx[d], (long long)at);
			if (k + 1 < op->n_src)
				put(b, "((long long)(%s) < %lldLL ? ", idx[d], (long long)(at + t->shape[d]));
			expr(G, op->src[k], *to, b);
			if (k + 1 < op->n_src)
				put(b, " : ");
			at += t->shape[d];
		}
		for (uint32_t k = 0; k + 1 < op->n_src; k++)
			put(b, ")");
		break;
	}
	case RED: {
		int32_t r = red_slot(G, oi, 0);
		if (r < 0)
			fail(G, "a reduction outside a row kernel");
		put(b, "red[%d]", r);
		break;
	}
	case SOFTMAX: {
		int32_t mx = red_slot(G, oi, 1), sm = red_slot(G, oi, 2);
		if (mx < 0 || sm < 0)
			fail(G, "a softmax outside a row kernel");
		int logsm = strstr(op->sem->key, "log_") != NULL;
		put(b, logsm ? "((" : "(expf(");
		operand(G, op, 0, idx, b);
		put(b, logsm ? ") - red[%d] - logf(red[%d]))" : " - red[%d]) / red[%d])", mx, sm);
		break;
	}
	case LAYERNORM:
	case RMSNORM: {
		int ln = op->sem->kind == LAYERNORM;
		int32_t mean = ln ? red_slot(G, oi, 3) : -1, var = red_slot(G, oi, 4);
		if (var < 0 || (ln && mean < 0))
			fail(G, "a norm outside a row kernel");
		put(b, "((");
		expr(G, op->src[0], idx, b);
		if (ln)
			put(b, " - red[%d]", mean);
		put(b, ") * rsqrtf(red[%d] + (float)(%.17g)) * ", var,
		    G->fused && p->plant_eps > 0 ? p->plant_eps : op->eps);
		operand(G, op, 0, idx, b);
		put(b, " + ");
		operand(G, op, 1, idx, b);
		put(b, ")");
		break;
	}
	default:
		fail(G, "an op the generator does not know");
	}
	if (emulate)
		put(b, ")");
	if (narrow)
		put(b, ")");
	free(to);
}

/* ---- kernels ------------------------------------------------------------------------------- */

extern const struct fs_embedded fs_builtin_kernels[];
extern const size_t fs_builtin_kernels_count;

int fs_codegen_buffered(const struct prog *p, int32_t v)
{
	if (v < (int32_t)p->n_in)
		return 1;
	const struct op *op = &p->ops[v - p->n_in];
	const char *k = op->sem->key;
	if (p->is_output[v - p->n_in])
		return 1; /* a region output is compared, so it exists */
	return !is_view(op) || !strcmp(k, "clone") || !strcmp(k, "contiguous");
}

static int reduces(const struct op *op)
{
	uint8_t k = op->sem->kind;
	return k == RED || k == SOFTMAX || k == LAYERNORM || k == RMSNORM;
}

static void release_gen(struct gen *G)
{
	free(G->buffered);
	free(G->param);
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
	const struct ten *t = shape_of(G->p, v);
	k->bytes += t->n * (int64_t)fs_dtype_size((enum fs_dtype)t->dtype);
	return 0;
}

/* Buffers the expression of v reads: every buffered value reached through
 * views and math, stopping at buffers. */
static void collect_reads(struct gen *G, struct fs_kernel *k, int32_t v, int top)
{
	if (!top && G->buffered[v]) {
		add_param(G, k, v, 0);
		return;
	}
	if (v < (int32_t)G->p->n_in)
		return;
	const struct op *op = &G->p->ops[v - G->p->n_in];
	for (uint32_t i = 0; i < op->n_src; i++)
		collect_reads(G, k, op->src[i], 0);
}

/* lead index variables of a row kernel for a value of shape t */
static void row_idx(const struct ten *t, const char *last, idx_t *idx)
{
	for (uint8_t d = 0; d + 1 < t->rank; d++)
		snprintf((*idx)[d], IDX_LEN, "i%u", d);
	if (t->rank)
		snprintf((*idx)[t->rank - 1], IDX_LEN, "%s", last);
}

int fs_codegen(const struct prog *p, int32_t only, int emulate, struct fs_kernel *k, char *why, size_t n)
{
	struct gen G = {.p = p, .fused = only < 0, .only = only, .emulate = emulate && only < 0};
	uint32_t nv = p->n_in + p->n_ops;
	G.buffered = fs_xcalloc(nv + 1, 1);
	G.param = fs_xmalloc((nv + 1) * sizeof(int32_t));
	memset(k, 0, sizeof(*k));
	for (uint32_t v = 0; v < nv; v++) {
		G.param[v] = -1;
		G.buffered[v] = G.fused ? v < p->n_in : (uint8_t)fs_codegen_buffered(p, (int32_t)v);
	}
	/* what this kernel writes: the region's outputs, or the one op */
	int32_t outs[FS_KERNEL_MAX_PARAMS];
	uint32_t n_out = 0;
	for (uint32_t i = 0; i < p->n_ops && n_out < FS_KERNEL_MAX_PARAMS; i++)
		if (G.fused ? p->is_output[i] : (int32_t)i == only)
			outs[n_out++] = (int32_t)(p->n_in + i);
	if (!n_out) {
		snprintf(why, n, "nothing to write");
		release_gen(&G);
		return -1;
	}
	for (uint32_t o = 0; o < n_out; o++) {
		G.buffered[outs[o]] = 0; /* computed here, then stored */
		collect_reads(&G, k, outs[o], 1);
	}
	for (uint32_t o = 0; o < n_out; o++)
		add_param(&G, k, outs[o], 1);
	/* the row's reductions, in program order */
	int64_t H = 0;
	const struct ten *rowsh = NULL;
	for (uint32_t i = 0; i < p->n_ops && !G.failed; i++) {
		const struct op *op = &p->ops[i];
		if ((!G.fused && (int32_t)i != only) || !reduces(op))
			continue;
		const struct ten *in = shape_of(p, op->src[0]);
		if (op->sem->kind == RED && (op->n_ints != 1 || dim_of(op->ints[0], in->rank) != in->rank - 1))
			fail(&G, "a reduction over other dims than the last");
		if (op->sem->kind == SOFTMAX && op->n_ints && dim_of(op->ints[0], in->rank) != in->rank - 1)
			fail(&G, "a softmax over another dim than the last");
		if (op->sem->kind == LAYERNORM && op->n_ints != 1)
			fail(&G, "a layer norm over several dims");
		if (rowsh && (in->rank != rowsh->rank || memcmp(in->shape, rowsh->shape, in->rank * sizeof(int64_t))))
			fail(&G, "reductions over rows of different shapes");
		rowsh = in, H = in->rank ? in->shape[in->rank - 1] : 1;
		uint8_t what[2] = {0, 0}, nw = 1;
		if (op->sem->kind == SOFTMAX)
			what[0] = 1, what[1] = 2, nw = 2;
		else if (op->sem->kind == LAYERNORM)
			what[0] = 3, what[1] = 4, nw = 2;
		else if (op->sem->kind == RMSNORM)
			what[0] = 4;
		for (uint8_t w = 0; w < nw && G.n_red < MAX_RED; w++) {
			G.red_op[G.n_red] = (int32_t)i;
			G.red_what[G.n_red++] = what[w];
		}
	}
	k->row = rowsh != NULL;
	int64_t rows = rowsh ? rowsh->n / (H ? H : 1) : 0;
	for (uint32_t o = 0; o < n_out && !G.failed; o++) {
		const struct ten *t = shape_of(p, outs[o]);
		if (k->row && (t->rank != rowsh->rank || memcmp(t->shape, rowsh->shape, (t->rank ? t->rank - 1 : 0) * sizeof(int64_t)) ||
			       (t->rank && t->shape[t->rank - 1] != H && t->shape[t->rank - 1] != 1)))
			fail(&G, "outputs that are not rows of the reduced value");
	}
	struct buf b = {0};
	for (size_t i = 0; i < fs_builtin_kernels_count; i++)
		if (!strcmp(fs_builtin_kernels[i].name, "fused.cuh"))
			put(&b, "%s\n", fs_builtin_kernels[i].data);
	/* the op table's functions (fuse/sem.def), once per elementwise op used */
	uint8_t *emitted = fs_xcalloc(p->n_ops + 1, 1);
	for (uint32_t i = 0; i < p->n_ops; i++) {
		const struct op *op = &p->ops[i];
		uint8_t kd = op->sem->kind;
		int dup = 0;
		for (uint32_t j = 0; j < i; j++)
			dup |= emitted[j] && p->ops[j].sem == op->sem;
		if (dup || (kd != UN && kd != BIN && kd != TER && kd != CMP))
			continue;
		emitted[i] = 1;
		put(&b, "__device__ __forceinline__ float op_%s(float a, float b, float c) { return (float)(%s); }\n",
		    op->sem->key[0] == '_' ? op->sem->key + 1 : op->sem->key, op->sem->expr);
	}
	free(emitted);
	put(&b, "\nextern \"C\" __global__ void __launch_bounds__(256) fs_k(");
	for (uint32_t i = 0; i < k->n_params; i++) {
		const struct ten *t = shape_of(p, k->value[i]);
		const char *ct = ctype(t->dtype);
		if (!ct)
			fail(&G, "a dtype the kernels do not handle");
		put(&b, "%s%s%s *__restrict__ p%u", i ? ", " : "", k->write[i] ? "" : "const ", ct ? ct : "void", i);
	}
	put(&b, ")\n{\n");
	idx_t *idx = fs_xmalloc(sizeof(idx_t));
	if (k->row) {
		put(&b, "\tlong long row = blockIdx.x;\n");
		for (int d = rowsh->rank - 2; d >= 0; d--)
			put(&b, "\tlong long i%d = row %% %lldLL; row /= %lldLL;\n", d, (long long)rowsh->shape[d],
			    (long long)rowsh->shape[d]);
		put(&b, "\tfloat red[%u];\n", G.n_red ? G.n_red : 1);
		for (uint32_t r = 0; r < G.n_red; r++) {
			const struct op *op = &p->ops[G.red_op[r]];
			const char *key = op->sem->key;
			uint8_t what = G.red_what[r];
			int mx = what == 1 || !strcmp(key, "amax"), mn = what == 0 && !strcmp(key, "amin");
			/* planted dropped cast: thread 0 sums the row alone, at the narrow dtype,
			 * as a kernel that forgot to widen would */
			int narrow_acc = G.fused && p->narrow && p->narrow[G.red_op[r]] && !mx && !mn;
			put(&b, "\t{\n\t\tfloat acc = %s;\n\t\tfor (long long j = %s; j < %lldLL; j += %s) {\n",
			    mx ? "FS_NEG_INF" : mn ? "-FS_NEG_INF" : "0.0f", narrow_acc ? "threadIdx.x ? 0x7fffffffffffffffLL : 0" : "threadIdx.x",
			    (long long)H, narrow_acc ? "1" : "blockDim.x");
			row_idx(rowsh, "j", idx);
			struct buf x = {0};
			expr(&G, op->src[0], *idx, &x);
			put(&b, "\t\t\tfloat x = %s;\n", x.s ? x.s : "0.0f");
			free(x.s);
			/* softmax's sum and a layer norm's variance use the slot before (max, mean) */
			char step[96];
			int prev = (int)r - 1;
			if (mx || mn)
				snprintf(step, sizeof(step), "acc = %s(acc, x)", mx ? "fmaxf" : "fminf");
			else if (what == 2)
				snprintf(step, sizeof(step), "acc += expf(x - red[%d])", prev);
			else if (what == 4 && op->sem->kind == LAYERNORM)
				snprintf(step, sizeof(step), "acc += (x - red[%d]) * (x - red[%d])", prev, prev);
			else if (G.fused && p->narrow && p->narrow[G.red_op[r]]) /* planted: accumulates narrow */
				snprintf(step, sizeof(step), "acc = rnd_%s(acc + %s)", dt_suffix(p->narrow[G.red_op[r]]),
					 what == 4 ? "x * x" : "x");
			else
				snprintf(step, sizeof(step), "acc += %s", what == 4 ? "x * x" : "x");
			put(&b, "\t\t\t%s;\n\t\t}\n", step);
			int mean = what == 3 || what == 4 || !strcmp(key, "mean");
			put(&b, "\t\tred[%u] = %s(acc);\n\t}\n", r, mx ? "fs_block_max" : mn ? "fs_block_min" : "fs_block_sum");
			if (mean)
				put(&b, "\tred[%u] /= (float)%lldLL;\n", r, (long long)H);
		}
		put(&b, "\tfor (long long j = threadIdx.x; j < %lldLL; j += blockDim.x) {\n", (long long)H);
		for (uint32_t o = 0; o < n_out; o++) {
			const struct ten *t = shape_of(p, outs[o]);
			int one = t->rank && t->shape[t->rank - 1] == 1 && H != 1;
			row_idx(t, one ? "0" : "j", idx);
			struct buf x = {0}, off = {0};
			expr(&G, outs[o], *idx, &x);
			offset(t, *idx, &off);
			put(&b, "\t\t%sst_%s(p%d, %s, %s);\n", one ? "if (j == 0) " : "", dt_suffix(t->dtype), G.param[outs[o]],
			    off.s, x.s ? x.s : "0.0f");
			free(x.s);
			free(off.s);
		}
		put(&b, "\t}\n}\n");
		k->grid = rows, k->block = 256;
	} else { /* one grid-stride loop per output shape (RoPE's q and k chains) */
		int64_t most = 0;
		uint8_t *done = fs_xcalloc(n_out + 1, 1);
		for (uint32_t o = 0; o < n_out; o++) {
			if (done[o])
				continue;
			const struct ten *sh = shape_of(p, outs[o]);
			most = sh->n > most ? sh->n : most;
			put(&b, "\tfor (long long e = blockIdx.x * (long long)blockDim.x + threadIdx.x; e < %lldLL;"
				" e += (long long)gridDim.x * blockDim.x) {\n\t\tlong long rest = e;\n", (long long)sh->n);
			for (int d = sh->rank - 1; d >= 0; d--) {
				put(&b, "\t\tlong long d%d = rest %% %lldLL; rest /= %lldLL;\n", d, (long long)sh->shape[d],
				    (long long)sh->shape[d]);
				snprintf((*idx)[d], IDX_LEN, "d%d", d);
			}
			for (uint32_t q = o; q < n_out; q++) {
				const struct ten *t = shape_of(p, outs[q]);
				if (done[q] || t->rank != sh->rank || memcmp(t->shape, sh->shape, t->rank * sizeof(int64_t)))
					continue;
				done[q] = 1;
				struct buf x = {0};
				expr(&G, outs[q], *idx, &x);
				put(&b, "\t\tst_%s(p%d, e, %s);\n", dt_suffix(t->dtype), G.param[outs[q]], x.s ? x.s : "0.0f");
				free(x.s);
			}
			put(&b, "\t}\n");
		}
		free(done);
		put(&b, "}\n");
		int64_t blocks = (most + 255) / 256;
		k->grid = blocks < 1 ? 1 : blocks > 132 * 32 ? 132 * 32 : blocks, k->block = 256;
	}
	free(idx);
	k->source = b.s;
	if (G.failed) {
		snprintf(why, n, "%s", G.why);
		fs_kernel_release(k);
	}
	int rc = G.failed ? -1 : 0;
	release_gen(&G);
	return rc;
}
