/*
 * numerics.c: the CPU executions of a region's program (prog.c), the
 * verdict, and the check --apply runs: the GPU's run (gpu.c), the buckets
 * (buckets.c) and --emit (emit.c) driven from here (see fusescan/numerics.h). Every value is a contiguous float64 array in the
 * node's dumped shape, bound to concrete sizes; an execution mode decides
 * where values are rounded to a narrower dtype.
 */
#include "fusescan/numerics.h"

#include "fusescan/mine.h"
#include "codegen.h"
#include "buckets.h"
#include "gemm.h"
#include "gpu.h"
#include "half.h"
#include "kernels.h"
#include "prog.h"
#include "rand.h"
#include "verdict.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* the result's tactic table holds every tactic the tuner times */
_Static_assert(sizeof(((struct fs_numerics *)0)->tactics) / sizeof(struct fs_numerics_tactic) == FS_MAX_TACTICS,
	       "one tactic table size");

enum { FS_CPU_ELEMS = 1 << 25 }; /* the CPU executions' values where a GPU will check larger ones (a few seconds) */

static double gelu_tanh(double a)
{
	return 0.5 * a * (1.0 + tanh(0.79788456080286535588 * (a + 0.044715 * a * a * a)));
}

/* ---- rounding -------------------------------------------------------------------- */

static double round_to(double v, uint8_t dt)
{
	switch (dt) {
	case FS_DT_F32:
		return (float)v;
	case FS_DT_BF16:
		return fs_bf16_value(fs_bf16_bits(v));
	case FS_DT_F16:
		return fs_f16_value(fs_f16_bits(v));
	case FS_DT_BOOL:
		return v != 0;
	case FS_DT_I64:
	case FS_DT_I32:
	case FS_DT_I16:
	case FS_DT_I8:
	case FS_DT_U8:
		return trunc(v);
	default:
		return v;
	}
}

static int is_float(uint8_t dt)
{
	return dt == FS_DT_F64 || dt == FS_DT_F32 || dt == FS_DT_F16 || dt == FS_DT_BF16;
}

/* ---- tensors -------------------------------------------------------------------------- */

static void unravel(int64_t i, const int64_t *shape, uint8_t rank, int64_t *idx)
{
	for (int k = rank - 1; k >= 0; k--) {
		idx[k] = shape[k] ? i % shape[k] : 0;
		i = shape[k] ? i / shape[k] : 0;
	}
}

/* Element of t at an output index of rank `orank`, broadcasting t (right-aligned). */
static double bcast(const struct ten *t, const int64_t *oidx, uint8_t orank)
{
	int64_t off = 0;
	for (uint8_t k = 0; k < t->rank; k++) {
		int64_t i = oidx[orank - t->rank + k];
		off = off * t->shape[k] + (t->shape[k] == 1 ? 0 : i);
	}
	return t->d[off];
}

/* ---- execution -------------------------------------------------------------------------- */

static void exec_elementwise(const struct op *op, const struct ten *v, struct ten *out, int tanh_gelu)
{
	int64_t idx[MAX_RANK];
	double x[3] = {0, 0, 0};
	int gelu = tanh_gelu && op->sem->id == SEM_gelu; /* the dump omits approximate= */
	for (int64_t i = 0; i < out->n; i++) {
		unravel(i, out->shape, out->rank, idx);
		for (uint32_t k = 0; k < op->n_args && k < 3; k++)
			x[k] = op->args[k].ten < 0 ? op->args[k].lit : bcast(&v[op->src[op->args[k].ten]], idx, out->rank);
		out->d[i] = gelu ? gelu_tanh(x[0]) : op->sem->f(x[0], x[1], x[2]);
	}
}

/* A matrix product (shapes checked): out[.., m, n] = sum_k a[.., m, k] b[.., k, n]
 * (b[n, k] for a linear, the batch dims broadcast) + bias, accumulated in
 * double, k ascending from 0 either way: a linear's as dot products of two
 * contiguous rows, others' as each row of a times the rows of b added into the
 * output row (b read in its own order, never transposed). Rows of a go in
 * blocks of GEMM_ROWS, so b streams from memory once a block, not once a row,
 * and a block's sums run side by side, each still in its own order. */
enum { GEMM_ROWS = 8 };

/* the index of operand t's matrix that output index idx (rank r) reads: its
 * batch dims (all but the last two), right-aligned, broadcast where 1 */
static int64_t batch_of(const struct ten *t, const int64_t *idx, uint8_t r)
{
	int64_t at = 0, stride = 1;
	for (int d = (int)r - 3; d >= 0; d--) {
		int dt = d + t->rank - r;
		if (dt >= 0)
			at += (t->shape[dt] == 1 ? 0 : idx[d]) * stride, stride *= t->shape[dt];
	}
	return at;
}

static void exec_gemm(const struct op *op, const struct ten *v, struct ten *out)
{
	const struct ten *a = &v[op->src[0]], *b = &v[op->src[1]];
	uint8_t r = out->rank;
	int linear = op->ints[0] != 0;
	int64_t K = a->shape[a->rank - 1], N = out->shape[r - 1];
	int64_t M = linear ? (N ? out->n / N : 0) : out->shape[r - 2], batches = M && N ? out->n / (M * N) : 0;
	int64_t idx[MAX_RANK];
	for (int64_t bi = 0; bi < batches; bi++) {
		unravel(bi * M * N, out->shape, r, idx);
		const double *A = a->d + (linear ? 0 : batch_of(a, idx, r)) * M * K, *B = b->d + (linear ? 0 : batch_of(b, idx, r)) * K * N;
		double *O = out->d + bi * M * N;
		for (int64_t i0 = 0; i0 < M; i0 += GEMM_ROWS) {
			int64_t i1 = i0 + GEMM_ROWS < M ? i0 + GEMM_ROWS : M;
			if (linear)
				for (int64_t j = 0; j < N; j++) {
					const double *w = B + j * K, *x = A + i0 * K;
					double acc[GEMM_ROWS] = {0}; /* the block's dot products side by side */
					for (int64_t k = 0; k < K; k++)
						for (int64_t i = 0; i < i1 - i0; i++)
							acc[i] += x[i * K + k] * w[k];
					for (int64_t i = i0; i < i1; i++)
						O[i * N + j] = acc[i - i0];
				}
			else {
				for (int64_t e = i0 * N; e < i1 * N; e++)
					O[e] = 0;
				for (int64_t k = 0; k < K; k++) {
					const double *w = B + k * N;
					for (int64_t i = i0; i < i1; i++) {
						const double xk = A[i * K + k];
						double *o = O + i * N;
						for (int64_t j = 0; j < N; j++)
							o[j] += xk * w[j];
					}
				}
			}
		}
		for (int64_t e = 0; e < M * N && op->n_src > 2; e++) {
			unravel(bi * M * N + e, out->shape, r, idx);
			O[e] += bcast(&v[op->src[2]], idx, r);
		}
	}
}

/* Reductions over ops->ints dims (all when none); the output keeps its dumped
 * shape. acc: the accumulator's dtype (F64: exact; narrow under the planted
 * dropped cast, as a kernel that forgot to widen accumulates). */
static void exec_reduce(const struct op *op, const struct ten *in, struct ten *out, uint8_t acc)
{
	uint8_t red[MAX_RANK] = {0};
	int64_t cnt = 1, idx[MAX_RANK];
	for (uint8_t k = 0; k < in->rank; k++)
		red[k] = op->n_ints == 0;
	for (uint32_t k = 0; k < op->n_ints; k++) {
		int64_t d = fs_dim_at(op->ints[k], in->rank);
		if (d >= 0 && d < in->rank)
			red[d] = 1;
	}
	for (uint8_t k = 0; k < in->rank; k++)
		cnt *= red[k] ? in->shape[k] : 1;
	int amax = op->sem->id == SEM_amax, amin = op->sem->id == SEM_amin;
	for (int64_t i = 0; i < out->n; i++)
		out->d[i] = amax ? -INFINITY : amin ? INFINITY : 0.0;
	for (int64_t i = 0; i < in->n; i++) {
		unravel(i, in->shape, in->rank, idx);
		int64_t o = 0;
		for (uint8_t k = 0; k < in->rank; k++) /* kept dims in order; reduced ones drop or are 1 */
			if (!red[k])
				o = o * in->shape[k] + idx[k];
		double a = in->d[i], *r = &out->d[o];
		*r = amax ? (a > *r ? a : *r) : amin ? (a < *r ? a : *r) : round_to(*r + a, acc);
	}
	if (op->sem->id == SEM_mean)
		for (int64_t i = 0; i < out->n; i++)
			out->d[i] /= (double)cnt;
}

/* softmax / log_softmax along one dim, layer_norm over the trailing dims. */
static void exec_rows(const struct op *op, const struct ten *v, struct ten *out)
{
	const struct ten *in = &v[op->src[0]];
	int norm = op->sem->kind == LAYERNORM || op->sem->kind == RMSNORM;
	int64_t d = norm ? in->rank - (int64_t)op->n_ints : fs_dim_at(op->n_ints ? op->ints[0] : -1, in->rank);
	int64_t inner = 1, len = 1, outer = 1;
	for (int64_t k = 0; k < in->rank; k++)
		*(k < d ? &outer : norm || k == d ? &len : &inner) *= in->shape[k];
	int logsm = (op->sem->flags & LOG_OUT) != 0;
	int64_t idx[MAX_RANK];
	for (int64_t o = 0; o < outer; o++)
		for (int64_t j = 0; j < inner; j++) {
			const double *x = in->d + o * len * inner + j;
			double *y = out->d + o * len * inner + j;
			if (op->sem->kind == SOFTMAX) {
				double mx = -INFINITY, sum = 0;
				for (int64_t t = 0; t < len; t++)
					mx = x[t * inner] > mx ? x[t * inner] : mx;
				for (int64_t t = 0; t < len; t++)
					sum += exp(x[t * inner] - mx);
				for (int64_t t = 0; t < len; t++)
					y[t * inner] = logsm ? x[t * inner] - mx - log(sum) : exp(x[t * inner] - mx) / sum;
				continue;
			}
			double mean = 0, var = 0;
			for (int64_t t = 0; t < len && op->sem->kind == LAYERNORM; t++)
				mean += x[t];
			mean /= (double)len;
			for (int64_t t = 0; t < len; t++)
				var += (x[t] - mean) * (x[t] - mean);
			double rs = 1.0 / sqrt(var / (double)len + op->eps);
			for (int64_t t = 0; t < len; t++) {
				unravel(o * len + t, out->shape, out->rank, idx);
				double w = op->args[0].ten < 0 ? op->args[0].lit : bcast(&v[op->src[op->args[0].ten]], idx, out->rank);
				double b = op->args[1].ten < 0 ? op->args[1].lit : bcast(&v[op->src[op->args[1].ten]], idx, out->rank);
				y[t] = (x[t] - mean) * rs * w + b;
			}
		}
}

/* Views and data movement: each output element read from its source element. */
static int exec_move(const struct op *op, const struct ten *v, struct ten *out)
{
	const struct ten *in = &v[op->src[0]];
	int64_t idx[MAX_RANK], src[MAX_RANK];
	uint8_t kind = op->sem->kind;
	if (kind == VIEW) {
		if (in->n != out->n)
			return -1;
		memcpy(out->d, in->d, (size_t)out->n * sizeof(double));
		return 0;
	}
	int64_t perm[MAX_RANK];
	if (kind == PERMUTE && fs_op_perm(op, out->rank, perm))
		return -1;
	int64_t sd = kind == SLICE || kind == CAT || kind == STACK || kind == REPEAT ? fs_dim_at(op->ints[0], out->rank) : 0;
	if ((kind == SLICE || kind == CAT || kind == STACK || kind == REPEAT) && (sd < 0 || sd >= out->rank))
		return -1;
	int64_t start = 0;
	if (kind == SLICE) {
		int64_t len = in->shape[sd];
		start = op->ints[1] < 0 ? op->ints[1] + len : op->ints[1];
		start = start < 0 ? 0 : start > len ? len : start;
	}
	for (int64_t i = 0; i < out->n; i++) {
		unravel(i, out->shape, out->rank, idx);
		const struct ten *t = in;
		memcpy(src, idx, sizeof(idx));
		if (kind == EXPAND || kind == ID || kind == CAST) {
			out->d[i] = bcast(in, idx, out->rank);
			continue;
		}
		if (kind == TRIL) { /* tril keeps j - i <= diagonal, triu j - i >= diagonal */
			int64_t above = idx[out->rank - 1] - idx[out->rank - 2] - op->ints[0];
			out->d[i] = (op->sem->id != SEM_triu ? above <= 0 : above >= 0) ? in->d[i] : 0;
			continue;
		}
		if (kind == PAD) {
			int inside = 1;
			for (uint8_t k = 0; k < out->rank; k++) {
				src[k] = idx[k] - op->ints[k];
				inside &= src[k] >= 0 && src[k] < in->shape[k];
			}
			if (!inside) {
				out->d[i] = op->eps;
				continue;
			}
		}
		if (kind == PERMUTE)
			for (int64_t k = 0; k < out->rank; k++)
				src[perm[k]] = idx[k];
		else if (kind == SLICE)
			src[sd] = start + idx[sd] * op->ints[3];
		else if (kind == REPEAT)
			src[sd] = idx[sd] / op->ints[1];
		else if (kind == TILE)
			for (uint8_t k = 0; k < out->rank; k++)
				src[k] = idx[k] % in->shape[k];
		else if (kind == STACK) { /* part idx[sd], the other dims in order */
			t = &v[op->src[idx[sd]]];
			for (int64_t k = sd; k + 1 < out->rank; k++)
				src[k] = idx[k + 1];
		} else if (kind == CAT) { /* find the part holding idx[sd] */
			int64_t at = idx[sd];
			uint32_t part = 0;
			while (part + 1 < op->n_src && at >= v[op->src[part]].shape[sd])
				at -= v[op->src[part++]].shape[sd];
			t = &v[op->src[part]];
			src[sd] = at;
		}
		int64_t off = 0;
		for (uint8_t k = 0; k < t->rank; k++)
			off = off * t->shape[k] + src[k];
		out->d[i] = t->d[off];
	}
	return 0;
}

/* Where each op's result is rounded in each mode (see numerics.h). The planted
 * dropped cast: the region's first widening cast becomes a no-op and the ops
 * after it, up to the next cast, compute at the narrow dtype. */
static uint8_t round_dtype(const struct prog *p, uint32_t i, enum mode m, const uint8_t *narrow)
{
	const struct op *op = &p->ops[i];
	uint8_t dt = op->out.dtype;
	if (!is_float(dt) || m == UNFUSED)
		return dt;
	if (m == REF)
		return FS_DT_F64;
	if (narrow[i])
		return narrow[i];
	if (m == EMULATED || op->sem->kind == CAST || p->is_output[i])
		return dt;
	return dt == FS_DT_F64 ? FS_DT_F64 : FS_DT_F32;
}

static void plan_plants(const struct prog *p, const struct fs_numerics_opts *o, uint8_t *narrow, int32_t *dropped)
{
	*dropped = -1;
	if (!o->plant_drop_cast)
		return;
	for (uint32_t i = 0; i < p->n_ops && *dropped < 0; i++) {
		const struct op *op = &p->ops[i];
		const struct ten *in = op->n_src ? (op->src[0] < (int32_t)p->n_in ? &p->in[op->src[0]] : &p->ops[op->src[0] - p->n_in].out) : NULL;
		if (op->sem->kind == CAST && in && fs_dtype_size(op->out.dtype) > fs_dtype_size(in->dtype) && is_float(in->dtype))
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

static int run_mode(const struct prog *p, enum mode m, const struct fs_numerics_opts *o, const uint8_t *narrow,
		    struct ten *vals)
{
	for (uint32_t i = 0; i < p->n_ops; i++) {
		const struct op *op = &p->ops[i];
		struct ten *out = &vals[p->n_in + i];
		*out = op->out;
		if (op->elided)
			continue;
		out->d = fs_xmalloc_huge((size_t)(out->n ? out->n : 1) * sizeof(double));
		for (int64_t e = 0; e < out->n; e++)
			out->d[e] = NAN; /* poison: every element must be written */
		struct op planted = *op;
		int plant = m == FUSED || m == EMULATED;
		if (plant && o->plant_eps > 0 && op->sem->id == SEM_add)
			for (uint32_t k = 0; k < planted.n_args; k++)
				if (planted.args[k].ten < 0 && planted.args[k].lit > 0 && planted.args[k].lit < 1e-2)
					planted.args[k].lit = o->plant_eps;
		if (plant && o->plant_eps > 0 && (op->sem->kind == LAYERNORM || op->sem->kind == RMSNORM))
			planted.eps = o->plant_eps;
		switch (op->sem->kind) {
		case UN:
		case BIN:
		case TER:
		case CMP:
			exec_elementwise(&planted, vals, out, o->gelu_tanh);
			break;
		case RED:
			exec_reduce(&planted, &vals[op->src[0]], out, plant && narrow[i] ? narrow[i] : FS_DT_F64);
			break;
		case SOFTMAX:
		case LAYERNORM:
		case RMSNORM:
			exec_rows(&planted, vals, out);
			break;
		case GEMM:
			exec_gemm(&planted, vals, out);
			break;
		default: /* CAST, ID, VIEW, EXPAND, PERMUTE, SLICE, CAT, STACK, PAD, TRIL, REPEAT, TILE */
			if (exec_move(&planted, vals, out))
				return -1;
		}
		uint8_t dt = round_dtype(p, i, m, narrow); /* a dropped cast rounds to its narrow input: a no-op */
		for (int64_t e = 0; e < out->n; e++)
			out->d[e] = round_to(out->d[e], dt);
	}
	return 0;
}

/* ---- inputs, errors, verdict ---------------------------------------------------------- */

/* Input `index` as the GPU draws it (rand.h). */
static void fill_random(struct ten *t, uint64_t seed, uint32_t index)
{
	uint64_t stream = fs_rand_stream(seed, index);
	enum fs_rand_kind kind = fs_rand_kind_of(t->dtype);
	for (int64_t i = 0; i < t->n; i++)
		t->d[i] = round_to(fs_rand(stream, i, kind), t->dtype);
}

static void errors_of(const struct prog *p, const struct ten *got, const struct ten *ref, struct fs_errors *e)
{
	double se = 0, sr = 0;
	memset(e, 0, sizeof(*e));
	for (uint32_t i = 0; i < p->n_ops; i++) {
		if (!p->is_output[i])
			continue;
		const struct ten *a = &got[p->n_in + i], *r = &ref[p->n_in + i];
		for (int64_t k = 0; k < a->n; k++) {
			double x = a->d[k], y = r->d[k];
			if (isnan(x) && !isnan(y)) {
				e->unwritten++; /* poison left (or a NaN computed where the reference has a number) */
				e->nonfinite++;
				continue;
			}
			if (!isfinite(x)) {
				e->nonfinite += isfinite(y) != 0;
				continue;
			}
			double d = fabs(x - y), rel = d / (fabs(y) > 1e-6 ? fabs(y) : 1e-6);
			e->max_abs = d > e->max_abs ? d : e->max_abs;
			e->max_rel = rel > e->max_rel ? rel : e->max_rel;
			se += d * d, sr += y * y;
		}
	}
	e->nrmse = sr > 0 ? sqrt(se / sr) : sqrt(se);
}

/* fused <= k x unfused + tol on max abs error; NaN, Inf or unwritten never pass */
static void describe(const struct prog *p, struct fs_numerics *r)
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

/* The generated kernels: compiled always, run (and the fused one tuned) on
 * the GPU when asked and there is one; the verdict then rests on the GPU
 * results of the chosen tactic. */
static void gpu(const struct prog *p, const struct fs_numerics_opts *o, uint64_t seed, const struct ten *ref, const char *key,
		struct fs_numerics *r)
{
	struct fs_gpu_result *g = fs_xcalloc(1, sizeof(*g));
	struct fs_gpu_opts go = {.execute = o->gpu, .compile = !o->generate_only, .compile_all = o->compile_all, .triage = o->triage,
				 .reps = o->reps ? o->reps : 50, .cache = o->cache,
				 .kernel_key = key[0] ? key : NULL, .bucket = r->bucket, .check = fs_numerics_check_tactic, .ctx = r,
				 .seed = seed, .cpu_ref = ref,
				 .graph_calls = fs_buckets_graph_calls(p), .progress = o->progress};
	fs_gpu_run(p, &go, g);
	r->gpu_seconds = g->seconds;
	r->kernels = g->kernels, r->compiled = g->compiled, r->ref_kernels = g->ref_kernels, r->gemm_kernels = g->gemm_kernels;
	snprintf(r->arch, sizeof(r->arch), "%s", g->arch);
	snprintf(r->nvrtc, sizeof(r->nvrtc), "%s", g->nvrtc);
	snprintf(r->device, sizeof(r->device), "%s", g->device);
	snprintf(r->kernel_error, sizeof(r->kernel_error), "%s", g->error);
	r->refused = g->refused;
	r->gpu_failed = g->error[0] && !g->refused;
	snprintf(r->gpu_skipped, sizeof(r->gpu_skipped), "%s", g->skipped);
	snprintf(r->gemm, sizeof(r->gemm), "%s", g->gemm);
	r->flops = g->flops;
	r->fused_source = g->fused_source, g->fused_source = NULL;
	r->n_tactics = g->n_tactics, r->n_failed = g->n_failed, r->unfused_kernels = g->unfused_kernels;
	r->chosen = g->chosen, r->runner_up = g->runner_up, r->cache_hit = g->cache_hit, r->variant = g->variant;
	r->algos = g->algos;
	for (uint32_t i = 0; i < g->n_tactics; i++)
		r->tactics[i] = g->tactics[i].rec;
	if (g->chosen >= 0)
		r->chosen_tactic = g->tactics[g->chosen].t;
	if (g->ran) {
		r->gpu_ran = 1;
		r->gpu_unfused = g->unfused, r->gpu_fused = g->fused;
		r->ref_checked = g->ref_checked, r->ref_vs_cpu = g->ref_vs_cpu;
		r->fused_ms = g->fused_ms, r->unfused_ms = g->unfused_ms, r->copy_gbs = g->copy_gbs, r->copy_same_gbs = g->copy_same_gbs;
		r->fused_ci = g->fused_ci, r->unfused_ci = g->unfused_ci, r->timed_apart = g->apart;
		r->speedup = g->speedup, r->speedup_lo = g->speedup_lo, r->speedup_hi = g->speedup_hi;
		snprintf(r->plan_failed, sizeof(r->plan_failed), "%s", g->plan_failed);
		r->fused_bytes = g->fused_bytes, r->unfused_bytes = g->unfused_bytes;
		r->reps = g->reps, r->rotate = g->rotate, r->unfused_launches = g->unfused_launches;
		fs_verdict_check(r, &r->gpu_unfused, &r->gpu_fused, &r->gpu_check);
		if (g->triaged) {
			/* on the generated kernel itself: a failure that vanishes with FMA
			 * contraction off or with eager rounding is rounding, else a bug */
			r->gpu_no_fma = g->no_fma, r->gpu_emulated = g->emulated;
			double bound = r->k * r->gpu_unfused.max_abs + r->tol;
			int passes = (!r->gpu_no_fma.nonfinite && r->gpu_no_fma.max_abs <= bound) ||
				     (!r->gpu_emulated.nonfinite && r->gpu_emulated.max_abs <= bound);
			r->gpu_triaged = 1;
			r->cpu_triage = r->triage;
			r->triage = r->gpu_check.verdict == FS_VERDICT_PASS ? FS_TRIAGE_NONE : passes ? FS_TRIAGE_ROUNDING : FS_TRIAGE_BUG;
		}
	}
	fs_gpu_release(g);
	free(g);
}

static void release(struct prog *p, struct ten *vals[4])
{
	for (int m = 0; m < 4; m++) {
		for (uint32_t i = 0; vals[m] && i < p->n_ops; i++)
			free(vals[m][p->n_in + i].d);
		free(vals[m]);
	}
	fs_prog_free(p);
}

int fs_numerics_is_view(const struct fs_scan *s, const struct fs_graph *g, uint32_t node)
{
	const struct fs_node *x = &g->nodes[node];
	const struct sem *m = x->kind == FS_NODE_CALL ? fs_sem_of(s, x) : NULL;
	return m && (m->kind == PERMUTE || m->kind == SLICE || m->id == SEM_unsqueeze || m->id == SEM_squeeze);
}

int fs_numerics_kernel_key(const struct fs_scan *s, const struct fs_graph *g, const uint32_t *nodes, uint32_t n, int gelu_tanh,
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

int fs_numerics_generates(const struct fs_scan *s, const struct fs_graph *g, const uint32_t *nodes, uint32_t n, int gelu_tanh,
			  int64_t tokens, char *why, size_t wn)
{
	struct prog p = {.s = s, .g = g, .gelu_tanh = gelu_tanh};
	struct fs_diags d;
	fs_diags_init(&d);
	int rc = 0;
	if (fs_prog_build(&p, nodes, n, tokens, &d) == 0) {
		struct fs_kernels_opts o = {0}; /* generated only: neither compiler nor device */
		struct fs_kernels *ks = fs_xcalloc(1, sizeof(*ks));
		if (fs_kernels_generate(&p, &o, ks))
			snprintf(why, wn, "%s", ks->error), rc = -1;
		fs_kernels_release(ks);
		free(ks);
	}
	fs_prog_free(&p);
	fs_diags_release(&d);
	return rc;
}

/* --emit, once the verdict is in: nothing where it fails (an op whose plans
 * fail their checks is never written), else every bucket's plan. */
static void emit(const struct prog *p, const struct fs_bucket_set *set, const struct fs_numerics_opts *o, struct fs_numerics *r)
{
	if (r->verdict == FS_VERDICT_FAIL)
		snprintf(r->emitted, sizeof(r->emitted), "nothing (the verdict fails)");
	else if (set->ne) {
		fs_progress_say(o->progress, "--emit: compiling the op's kernels for %u bucket%s", set->ne, set->ne == 1 ? "" : "s");
		fs_emit(p, set->eb, set->ne, o, r);
	} else {
		const struct fs_bucket_run *b = r->n_buckets ? &r->buckets[r->n_buckets - 1] : NULL;
		snprintf(r->emitted, sizeof(r->emitted), "no bucket has a kernel%s%.900s%s", b && b->error[0] ? " (" : "",
			 b ? b->error : "", b && b->error[0] ? ")" : "");
		r->emit_failed = 1;
	}
}

/* What the CPU executions allocate, in bytes (run_mode, exec_gemm): every
 * input, each execution's op outputs, and the largest matrix product's
 * gathered operand; *elems: the values' elements. */
static int64_t cpu_bytes(const struct prog *p, const struct fs_numerics_opts *o, int64_t *elems)
{
	int64_t in = 0, ops = 0, scratch = 0;
	for (uint32_t v = 0; v < p->n_in; v++)
		in = fs_sat_add(in, p->in[v].n);
	for (uint32_t i = 0; i < p->n_ops; i++) {
		const struct op *op = &p->ops[i];
		ops = fs_sat_add(ops, op->elided ? 0 : op->out.n);
		if (op->sem->kind == GEMM && !op->ints[0]) {
			const struct ten *a = fs_prog_value(p, op->src[0]);
			int64_t k = a->rank ? a->shape[a->rank - 1] : 1, nn = op->out.rank ? op->out.shape[op->out.rank - 1] : 1;
			scratch = fs_sat_mul(k, nn) > scratch ? fs_sat_mul(k, nn) : scratch;
		}
	}
	*elems = fs_sat_add(in, ops);
	int64_t modes = o->triage ? 4 : 3; /* reference, unfused, fused, and emulated with --triage */
	return fs_sat_mul((int64_t)sizeof(double), fs_sat_add(fs_sat_add(in, fs_sat_mul(modes, ops)), scratch));
}

int fs_numerics_run(const struct fs_scan *s, const struct fs_graph *g, const uint32_t *nodes, uint32_t n,
		    const struct fs_numerics_opts *o, struct fs_numerics *r, struct fs_diags *d)
{
	struct prog p = {.s = s, .g = g, .gelu_tanh = o->gelu_tanh};
	struct ten *vals[4] = {NULL, NULL, NULL, NULL};
	memset(r, 0, sizeof(*r));
	if (fs_prog_build(&p, nodes, n, o->tokens, d)) {
		release(&p, vals);
		return -1;
	}
	int64_t elems = 0, bytes = cpu_bytes(&p, o, &elems), budget = o->max_bytes > 0 ? o->max_bytes : FS_CPU_BYTES;
	r->out_dtype = FS_DT_F64;
	for (uint32_t i = 0; i < p.n_ops; i++)
		if (p.is_output[i]) {
			r->n_outputs++;
			r->out_elems += (uint64_t)p.ops[i].out.n;
			if (is_float(p.ops[i].out.dtype) && fs_dtype_size(p.ops[i].out.dtype) < fs_dtype_size(r->out_dtype))
				r->out_dtype = p.ops[i].out.dtype;
		}
	r->n_ops = p.n_ops;
	r->n_inputs = p.n_in;
	r->k = r->out_dtype == FS_DT_BF16 || r->out_dtype == FS_DT_F16 ? 3.0 : 2.0;
	r->tol = 1e-5;
	uint64_t seed = o->seed ? o->seed : 0x9e3779b97f4a7c15ull;
	uint8_t *narrow = fs_xcalloc(p.n_ops + 1, 1);
	int32_t dropped;
	plan_plants(&p, o, narrow, &dropped);
	p.narrow = narrow;
	p.plant_eps = o->plant_eps;
	if (dropped >= 0)
		snprintf(r->planted, sizeof(r->planted), "dropped cast %%%s (and what follows computed narrow)",
			 fs_scan_str(s, g->nodes[p.ops[dropped].node].name));
	else if (o->plant_drop_cast)
		snprintf(r->planted, sizeof(r->planted), "dropped cast: the region has no widening cast");
	if (o->plant_eps > 0)
		snprintf(r->planted, sizeof(r->planted), "eps replaced by %g", o->plant_eps);
	/* the CPU executions, where the values and the matrix products' multiply-adds
	 * (a few seconds' worth in double) fit the budget; else the GPU alone */
	int64_t macs = 0, mac_budget = (int64_t)1 << 32;
	for (uint32_t i = 0; i < p.n_ops; i++)
		if (p.ops[i].sem->kind == GEMM) {
			const struct ten *a = fs_prog_value(&p, p.ops[i].src[0]);
			macs += p.ops[i].out.n * (a->rank ? a->shape[a->rank - 1] : 1);
		}
	/* past a few seconds' worth of values the CPU runs only where no GPU
	 * will: its float64 reference checks such sizes in a fraction of the
	 * CPU's minutes */
	int gpu_checks = elems > FS_CPU_ELEMS && o->gpu && !o->generate_only && fs_gpu_present();
	r->cpu_ran = !gpu_checks && bytes <= budget && macs <= mac_budget;
	int over_memory = !gpu_checks && bytes > budget; /* --cpu-memory would let them run */
	if (gpu_checks)
		snprintf(r->cpu_skipped, sizeof(r->cpu_skipped),
			 "the region holds %lld elements at these sizes, more than the CPU executions' %lld where a GPU checks them",
			 (long long)elems, (long long)FS_CPU_ELEMS);
	else if (over_memory)
		snprintf(r->cpu_skipped, sizeof(r->cpu_skipped),
			 "the region holds %lld elements at these sizes, %lld MiB in the CPU executions, more than their %lld MiB "
			 "(--cpu-memory)", (long long)elems, (long long)(bytes >> 20), (long long)(budget >> 20));
	else if (!r->cpu_ran)
		snprintf(r->cpu_skipped, sizeof(r->cpu_skipped),
			 "the region's matrix products take %lld multiply-adds at these sizes, more than the CPU executions' %lld",
			 (long long)macs, (long long)mac_budget);
	for (uint32_t i = 0; r->cpu_ran && i < p.n_in; i++) {
		p.in[i].d = fs_xmalloc_huge((size_t)(p.in[i].n ? p.in[i].n : 1) * sizeof(double));
		fill_random(&p.in[i], seed, i);
	}
	int rc = 0;
	if (r->cpu_ran)
		fs_progress_say(o->progress, "CPU check (float64 reference, %lld tokens, %lld values)", (long long)o->tokens, (long long)elems);
	for (int m = 0; r->cpu_ran && m < 4 && !rc; m++) {
		if (m == EMULATED && !o->triage)
			break;
		vals[m] = fs_xcalloc(p.n_in + p.n_ops + 1, sizeof(struct ten));
		memcpy(vals[m], p.in, p.n_in * sizeof(struct ten));
		rc = run_mode(&p, (enum mode)m, o, narrow, vals[m]);
	}
	if (rc) {
		free(narrow);
		fs_diag_add(d, FS_ERROR, fs_prog_path(s, g), 0, 0, NULL, 0, "numerics: a view does not fit its input");
		release(&p, vals);
		return -1;
	}
	if (r->cpu_ran) {
		errors_of(&p, vals[UNFUSED], vals[REF], &r->unfused);
		errors_of(&p, vals[FUSED], vals[REF], &r->fused);
		fs_verdict_check(r, &r->unfused, &r->fused, &r->cpu_check);
	}
	if (r->cpu_ran && o->triage) {
		errors_of(&p, vals[EMULATED], vals[REF], &r->emulated);
		/* the failure vanishes once every op rounds like eager: rounding; else a bug */
		r->triage = r->cpu_check.verdict == FS_VERDICT_PASS ? FS_TRIAGE_NONE
			  : !r->emulated.nonfinite && r->emulated.max_abs <= r->k * r->unfused.max_abs + r->tol ? FS_TRIAGE_ROUNDING
												      : FS_TRIAGE_BUG;
	}
	describe(&p, r);
	char key[20];
	int64_t b = 1; /* the main run's bucket: tokens rounded up to a power of two */
	while (b < o->tokens)
		b *= 2;
	fs_codegen_tuning_key(&p, nodes, n, b, key, sizeof(key), r->bucket, sizeof(r->bucket));
	gpu(&p, o, seed, vals[REF], key, r);
	if (r->refused) { /* no kernel fusescan can generate: nothing to check, emit or tune */
		fs_diag_add(d, FS_ERROR, fs_prog_path(s, g), g->nodes[nodes[0]].line, 1, NULL, 0, "numerics: the generator does not take this region: %s",
			    r->kernel_error);
		free(narrow);
		release(&p, vals);
		fs_numerics_release(r);
		return -1;
	}
	if (!r->cpu_ran && !r->gpu_ran) { /* nothing checked: nothing tuned, settled or emitted */
		fs_diag_add(d, FS_ERROR, fs_prog_path(s, g), g->nodes[nodes[0]].line, 1, NULL, 0,
			    "numerics: %s, and the GPU did not run (%s): lower --tokens%s", r->cpu_skipped,
			    r->gpu_skipped[0] ? r->gpu_skipped : r->kernel_error, over_memory ? " or raise --cpu-memory" : "");
		free(narrow);
		release(&p, vals);
		fs_numerics_release(r);
		return -1;
	}
	/* tuned per bucket (a region with matrix products: for --emit alone, each bucket times its products too) */
	struct fs_bucket_set set = {0};
	if (!o->generate_only && (o->emit_dir || (r->gpu_ran && !fs_gemm_any(&p))))
		fs_buckets_run(&p, nodes, n, o, seed, r, &set);
	fs_verdict_settle(r);
	if (o->emit_dir && !o->generate_only)
		emit(&p, &set, o, r);
	fs_bucket_set_release(&set);
	free(narrow);
	release(&p, vals);
	return 0;
}

void fs_numerics_release(struct fs_numerics *r)
{
	free(r->fused_source);
	r->fused_source = NULL;
}

/* the last line: the one verdict (fs_verdict_settle) */
static void print_verdict(const struct fs_numerics *r, FILE *out)
{
	fprintf(out, "  verdict: %s%s%s\n", fs_verdict_name(r->verdict), r->why[0] ? ": " : "", r->why);
}

/* The CPU executions' errors, check and triage. */
static void print_cpu(const struct fs_numerics *r, FILE *out)
{
	fprintf(out, "numerics (CPU, float64 reference; %s):\n  %s\n", r->binding, r->shapes);
	if (r->planted[0])
		fprintf(out, "  planted bug (debug): %s\n", r->planted);
	if (!r->cpu_ran)
		fprintf(out, "  CPU executions skipped: %s\n", r->cpu_skipped);
	const struct {
		const char *name;
		const struct fs_errors *e;
	} rows[] = {{"unfused (eager rounding)", &r->unfused}, {"fused (fp32 inside)", &r->fused},
		    {"fused, per-op rounding", &r->emulated}};
	if (r->cpu_ran)
		fprintf(out, "  %-26s %11s %11s %11s %9s\n", "execution", "max abs", "max rel", "nrmse", "non-fin.");
	for (int i = 0; r->cpu_ran && i < (r->triage != FS_TRIAGE_NONE || r->emulated.max_abs > 0 ? 3 : 2); i++)
		fprintf(out, "  %-26s %11.3e %11.3e %11.3e %9llu\n", rows[i].name, rows[i].e->max_abs, rows[i].e->max_rel,
			rows[i].e->nrmse, (unsigned long long)rows[i].e->nonfinite);
	if (r->cpu_ran)
		fprintf(out, "  CPU check: %s (fused <= %.0f x unfused + %.0e; minimum tolerance that passes: %.3e)%s%s\n",
			fs_verdict_name(r->cpu_check.verdict), r->k, r->tol, r->cpu_check.min_tol, r->cpu_check.why[0] ? ": " : "",
			r->cpu_check.why);
	enum fs_triage cpu = r->gpu_triaged ? r->cpu_triage : r->triage;
	if (cpu != FS_TRIAGE_NONE)
		fprintf(out, "  triage (CPU): %s (%s)\n", fs_triage_name(cpu),
			cpu == FS_TRIAGE_ROUNDING ? "the difference vanishes when every op rounds like eager"
						  : "the difference stays when every op rounds like eager");
}

/* What was generated and compiled. */
static void print_kernels(const struct fs_numerics *r, FILE *out)
{
	uint32_t fused = r->gpu_ran ? r->n_tactics : r->kernels - r->unfused_kernels - r->ref_kernels - r->gemm_kernels;
	char gemm[64] = "";
	if (r->gemm_kernels)
		snprintf(gemm, sizeof(gemm), ", the GEMM with its epilogue under %u", r->gemm_kernels);
	fprintf(out, "  kernels: %u generated (fused under %u tactic%s%s, %u unfused, %u float64 reference), %u compiled for %s with %s%s%s\n",
		r->kernels, fused, fused == 1 ? "" : "s", gemm, r->unfused_kernels, r->ref_kernels, r->compiled, r->arch,
		r->nvrtc[0] ? r->nvrtc : "no NVRTC", r->kernel_error[0] ? "; error: " : "", r->kernel_error);
}

/* The tuning: the tactic chosen and how, the finalists, each failure. */
static void print_tuning(const struct fs_numerics *r, FILE *out)
{
	if (!r->n_tactics)
		return;
	if (r->chosen < 0)
		fprintf(out, "  tuning: %u tactic%s timed, none passed its check: the fallback kernel (any size) runs\n", r->n_tactics,
			r->n_tactics == 1 ? "" : "s");
	else if (r->cache_hit)
		fprintf(out, "  tuning: cache hit (%s, bucket %s): no tactic profiled\n", r->tactics[r->chosen].name, r->bucket);
	else {
		uint32_t fin = 0;
		for (uint32_t i = 0; i < r->n_tactics; i++)
			fin += r->tactics[i].final != 0;
		fprintf(out,
			"  tuning: %u tactics timed, %u failed, %u finalist%s timed again interleaved;"
			" chosen %s %.4f ms (+-%.4f, p90-p10 %.4f)",
			r->n_tactics, r->n_failed, fin, fin == 1 ? "" : "s", r->tactics[r->chosen].name, r->tactics[r->chosen].ms, r->tactics[r->chosen].ci,
			r->tactics[r->chosen].spread);
		if (r->runner_up >= 0)
			fprintf(out, ", runner-up %s %.4f ms", r->tactics[r->runner_up].name, r->tactics[r->runner_up].ms);
		fprintf(out, "\n");
		for (uint32_t i = 0; i < r->n_tactics; i++)
			if (r->tactics[i].worst > 0)
				fprintf(out, "    %-22s finalist: %.4f ms among the finalists, %.4f after the unfused chain, %.4f after a copy;"
					     " worst ratio to a company's fastest %.3f\n", r->tactics[i].name, r->tactics[i].company_ms[0],
					r->tactics[i].company_ms[1], r->tactics[i].company_ms[2], r->tactics[i].worst);
	}
	for (uint32_t i = 0; i < r->n_tactics; i++)
		if (r->tactics[i].failed[0])
			fprintf(out, "    %-16s failed: %s\n", r->tactics[i].name, r->tactics[i].failed);
}

/* The GPU executions' errors against the float64 reference, check and triage. */
static void print_gpu_check(const struct fs_numerics *r, FILE *out)
{
	fprintf(out, "  GPU %s, float64 reference on the GPU", r->device);
	if (r->ref_checked)
		fprintf(out, " (against the CPU's: max abs %.2e, max rel %.2e, %llu non-finite)", r->ref_vs_cpu.max_abs,
			r->ref_vs_cpu.max_rel, (unsigned long long)(r->ref_vs_cpu.nonfinite + r->ref_vs_cpu.unwritten));
	else
		fprintf(out, " (no CPU reference at these sizes)");
	fprintf(out, ":\n");
	fprintf(out, "  %-26s %11.3e %11.3e %11.3e %9llu\n", "unfused kernels", r->gpu_unfused.max_abs, r->gpu_unfused.max_rel,
		r->gpu_unfused.nrmse, (unsigned long long)(r->gpu_unfused.nonfinite + r->gpu_unfused.unwritten));
	fprintf(out, "  %-26s %11.3e %11.3e %11.3e %9llu\n", "fused kernel", r->gpu_fused.max_abs, r->gpu_fused.max_rel,
		r->gpu_fused.nrmse, (unsigned long long)(r->gpu_fused.nonfinite + r->gpu_fused.unwritten));
	if (r->gpu_triaged) {
		fprintf(out, "  %-26s %11.3e %11.3e %11.3e %9llu\n", "fused, FMA contraction off", r->gpu_no_fma.max_abs,
			r->gpu_no_fma.max_rel, r->gpu_no_fma.nrmse, (unsigned long long)r->gpu_no_fma.nonfinite);
		fprintf(out, "  %-26s %11.3e %11.3e %11.3e %9llu\n", "fused, per-op rounding", r->gpu_emulated.max_abs,
			r->gpu_emulated.max_rel, r->gpu_emulated.nrmse, (unsigned long long)r->gpu_emulated.nonfinite);
	}
	fprintf(out, "  GPU check: %s (minimum tolerance that passes: %.3e)%s%s\n", fs_verdict_name(r->gpu_check.verdict),
		r->gpu_check.min_tol, r->gpu_check.why[0] ? ": " : "", r->gpu_check.why);
	if (r->gpu_triaged && r->triage != FS_TRIAGE_NONE)
		fprintf(out, "  triage (GPU): %s (%s)\n", fs_triage_name(r->triage),
			r->triage == FS_TRIAGE_ROUNDING ? "the kernel passes with FMA contraction off or eager rounding"
							: "the kernel fails with FMA contraction off and with eager rounding");
}

/* Fused against unfused, side by side. */
static void print_time(const struct fs_numerics *r, FILE *out)
{
	double fg = (double)r->fused_bytes / (r->fused_ms * 1e-3) / 1e9, ug = (double)r->unfused_bytes / (r->unfused_ms * 1e-3) / 1e9;
	fprintf(out, "  time (median of %u, %u input copies rotated, %s): fused %.4f ms (+-%.4f), ", r->reps, r->rotate,
		r->timed_apart ? "timed apart: both do not fit the device at once" : "fused and unfused side by side", r->fused_ms,
		r->fused_ci);
	if (r->flops > 0) /* matrix products: their rate, not a copy's */
		fprintf(out, "%.1f TFLOP/s, %.0f GB/s; unfused %.4f ms (+-%.4f, %u launches), %.1f TFLOP/s", r->flops / (r->fused_ms * 1e-3) / 1e12,
			fg, r->unfused_ms, r->unfused_ci, r->unfused_launches, r->flops / (r->unfused_ms * 1e-3) / 1e12);
	else
		fprintf(out, "%.0f GB/s, %.0f%% of copy %.0f GB/s (%.0f%% of a copy of the same bytes, %.0f GB/s); unfused %.4f ms (+-%.4f, "
			     "%u kernels), %.0f GB/s",
			fg, 100 * fg / r->copy_gbs, r->copy_gbs, 100 * fg / r->copy_same_gbs, r->copy_same_gbs, r->unfused_ms, r->unfused_ci,
			r->unfused_launches, ug);
	fprintf(out, "; speedup %.3fx [%.3f, %.3f]\n", r->speedup, r->speedup_lo, r->speedup_hi);
}

void fs_numerics_print(const struct fs_numerics *r, FILE *out)
{
	print_cpu(r, out);
	print_kernels(r, out);
	if (r->emitted[0])
		fprintf(out, "  %s: %s\n", r->emit_failed ? "emit failed" : "emitted", r->emitted);
	if (!r->gpu_ran) {
		fprintf(out, "  GPU: %s\n", r->gpu_skipped[0] ? r->gpu_skipped : "not run (see the error above)");
		print_verdict(r, out);
		return;
	}
	if (r->gemm[0])
		fprintf(out, "  matrix products: %s\n", r->gemm);
	print_tuning(r, out);
	print_gpu_check(r, out);
	print_time(r, out);
	fs_buckets_print(r, out);
	print_verdict(r, out);
}

static cJSON *errors_json(const struct fs_errors *e)
{
	cJSON *o = cJSON_CreateObject();
	cJSON_AddNumberToObject(o, "max_abs", e->max_abs);
	cJSON_AddNumberToObject(o, "max_rel", e->max_rel);
	cJSON_AddNumberToObject(o, "nrmse", e->nrmse);
	cJSON_AddNumberToObject(o, "nonfinite", (double)e->nonfinite);
	cJSON_AddNumberToObject(o, "unwritten", (double)e->unwritten);
	return o;
}

static cJSON *check_json(const struct fs_check *c)
{
	cJSON *o = cJSON_CreateObject();
	cJSON_AddStringToObject(o, "verdict", fs_verdict_name(c->verdict));
	cJSON_AddNumberToObject(o, "min_passing_tolerance", c->min_tol);
	cJSON_AddStringToObject(o, "reason", c->why);
	return o;
}

/* The kernels generated and compiled, under "kernels". */
static void kernels_json(const struct fs_numerics *r, cJSON *o)
{
	cJSON *k = cJSON_AddObjectToObject(o, "kernels");
	cJSON_AddNumberToObject(k, "generated", r->kernels);
	cJSON_AddNumberToObject(k, "compiled", r->compiled);
	cJSON_AddStringToObject(k, "arch", r->arch);
	cJSON_AddStringToObject(k, "nvrtc", r->nvrtc);
	cJSON_AddStringToObject(k, "error", r->kernel_error);
	cJSON_AddNumberToObject(k, "unfused", r->unfused_kernels);
	cJSON_AddNumberToObject(k, "reference", r->ref_kernels);
	cJSON_AddNumberToObject(k, "gemm", r->gemm_kernels);
	if (r->emitted[0])
		cJSON_AddStringToObject(k, "emitted", r->emitted);
}

/* The tuning of the fused kernel (and its buckets), under gp's "tuning". */
static void tuning_json(const struct fs_numerics *r, cJSON *gp)
{
	cJSON *t = cJSON_AddObjectToObject(gp, "tuning");
	cJSON_AddStringToObject(t, "bucket", r->bucket);
	fs_buckets_json(r, t);
	cJSON_AddBoolToObject(t, "cache_hit", r->cache_hit);
	cJSON_AddStringToObject(t, "chosen", r->chosen >= 0 ? r->tactics[r->chosen].name : "");
	cJSON_AddStringToObject(t, "runner_up", r->runner_up >= 0 ? r->tactics[r->runner_up].name : "");
	cJSON_AddNumberToObject(t, "failed", r->n_failed);
	cJSON *tab = cJSON_AddArrayToObject(t, "tactics");
	for (uint32_t i = 0; i < r->n_tactics; i++)
		cJSON_AddItemToArray(tab, fs_tactic_json(&r->tactics[i]));
}

/* What the GPU ran: errors, times, speedup, tuning, under "gpu". */
static void gpu_json(const struct fs_numerics *r, cJSON *o)
{
	cJSON *gp = cJSON_AddObjectToObject(o, "gpu");
	cJSON_AddBoolToObject(gp, "ran", r->gpu_ran);
	if (!r->gpu_ran) {
		cJSON_AddStringToObject(gp, "skipped", r->gpu_skipped);
		return;
	}
	cJSON_AddStringToObject(gp, "device", r->device);
	if (r->gemm[0])
		cJSON_AddStringToObject(gp, "matrix_products", r->gemm);
	if (r->ref_checked)
		cJSON_AddItemToObject(gp, "reference_vs_cpu", errors_json(&r->ref_vs_cpu));
	cJSON_AddItemToObject(gp, "unfused", errors_json(&r->gpu_unfused));
	cJSON_AddItemToObject(gp, "fused", errors_json(&r->gpu_fused));
	cJSON_AddNumberToObject(gp, "fused_ms", r->fused_ms);
	cJSON_AddNumberToObject(gp, "unfused_ms", r->unfused_ms);
	cJSON_AddNumberToObject(gp, "fused_ci95_ms", r->fused_ci);
	cJSON_AddNumberToObject(gp, "unfused_ci95_ms", r->unfused_ci);
	cJSON_AddItemToObject(gp, "speedup", cJSON_CreateDoubleArray((const double[]){r->speedup, r->speedup_lo, r->speedup_hi}, 3));
	cJSON_AddBoolToObject(gp, "timed_apart", r->timed_apart);
	if (r->plan_failed[0])
		cJSON_AddStringToObject(gp, "plan_failed", r->plan_failed);
	cJSON_AddNumberToObject(gp, "fused_bytes", (double)r->fused_bytes);
	cJSON_AddNumberToObject(gp, "unfused_bytes", (double)r->unfused_bytes);
	cJSON_AddNumberToObject(gp, "copy_gbs", r->copy_gbs);
	cJSON_AddNumberToObject(gp, "copy_same_size_gbs", r->copy_same_gbs);
	if (r->flops > 0)
		cJSON_AddNumberToObject(gp, "flops", r->flops);
	cJSON_AddNumberToObject(gp, "reps", r->reps);
	cJSON_AddNumberToObject(gp, "input_copies", r->rotate);
	cJSON_AddNumberToObject(gp, "unfused_launches", r->unfused_launches);
	tuning_json(r, gp);
	if (r->gpu_triaged) {
		cJSON_AddItemToObject(gp, "fused_no_fma", errors_json(&r->gpu_no_fma));
		cJSON_AddItemToObject(gp, "fused_per_op_rounding", errors_json(&r->gpu_emulated));
	}
}

void *fs_numerics_json(const struct fs_numerics *r)
{
	cJSON *o = cJSON_CreateObject();
	cJSON_AddStringToObject(o, "device", "cpu");
	cJSON_AddStringToObject(o, "binding", r->binding);
	cJSON_AddStringToObject(o, "shapes", r->shapes);
	cJSON_AddNumberToObject(o, "ops", r->n_ops);
	cJSON_AddNumberToObject(o, "inputs", r->n_inputs);
	cJSON_AddNumberToObject(o, "outputs", r->n_outputs);
	cJSON_AddBoolToObject(o, "cpu_ran", r->cpu_ran);
	if (r->cpu_ran) {
		cJSON_AddItemToObject(o, "unfused", errors_json(&r->unfused));
		cJSON_AddItemToObject(o, "fused", errors_json(&r->fused));
	} else
		cJSON_AddStringToObject(o, "cpu_skipped", r->cpu_skipped);
	if (r->triage != FS_TRIAGE_NONE)
		cJSON_AddItemToObject(o, "fused_per_op_rounding", errors_json(&r->emulated));
	cJSON_AddNumberToObject(o, "k", r->k);
	cJSON_AddNumberToObject(o, "tolerance", r->tol);
	if (r->cpu_ran)
		cJSON_AddItemToObject(o, "cpu_check", check_json(&r->cpu_check));
	if (r->gpu_ran)
		cJSON_AddItemToObject(o, "gpu_check", check_json(&r->gpu_check));
	cJSON_AddStringToObject(o, "verdict", fs_verdict_name(r->verdict));
	cJSON_AddStringToObject(o, "reason", r->why);
	cJSON_AddStringToObject(o, "triage", fs_triage_name(r->triage));
	cJSON_AddStringToObject(o, "triage_on", r->gpu_triaged ? "gpu" : "cpu");
	kernels_json(r, o);
	gpu_json(r, o);
	if (r->planted[0])
		cJSON_AddStringToObject(o, "planted_bug", r->planted);
	return o;
}
