/*
 * numerics.c: the CPU executions of a site's program (numerics.h). Every
 * value is a contiguous float64 array in the node's dumped shape, bound to
 * concrete sizes; an execution mode decides where values are rounded to a
 * narrower dtype.
 */
#include "numerics.h"

#include "half.h"
#include "rand.h"
#include "text.h"
#include "verdict.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static double gelu_tanh_value(double a)
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
		out->d[i] = gelu ? gelu_tanh_value(x[0]) : op->sem->f(x[0], x[1], x[2]);
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
static uint8_t round_dtype(const struct prog *p, uint32_t i, enum mode m)
{
	const uint8_t *narrow = p->narrow;
	const struct op *op = &p->ops[i];
	uint8_t dt = op->out.dtype;
	if (!fs_dt_is_float(dt) || m == UNFUSED)
		return dt;
	if (m == REF)
		return FS_DT_F64;
	if (narrow[i])
		return narrow[i];
	if (m == EMULATED || op->sem->kind == CAST || p->is_output[i])
		return dt;
	return dt == FS_DT_F64 ? FS_DT_F64 : FS_DT_F32;
}

static int run_mode(const struct prog *p, enum mode m, struct ten *vals)
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
		if (plant && p->plant_eps > 0 && op->sem->id == SEM_add)
			for (uint32_t k = 0; k < planted.n_args; k++)
				if (planted.args[k].ten < 0 && planted.args[k].lit > 0 && planted.args[k].lit < 1e-2)
					planted.args[k].lit = p->plant_eps;
		if (plant && p->plant_eps > 0 && (op->sem->kind == LAYERNORM || op->sem->kind == RMSNORM))
			planted.eps = p->plant_eps;
		switch (op->sem->kind) {
		case UN:
		case BIN:
		case TER:
		case CMP:
			exec_elementwise(&planted, vals, out, p->gelu_tanh);
			break;
		case RED:
			exec_reduce(&planted, &vals[op->src[0]], out, plant && p->narrow[i] ? p->narrow[i] : FS_DT_F64);
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
		uint8_t dt = round_dtype(p, i, m); /* a dropped cast rounds to its narrow input: a no-op */
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

/* What the CPU executions allocate, in bytes (run_mode, exec_gemm): every
 * input, each execution's op outputs, and the largest matrix product's
 * gathered operand; *elems: the values' elements. */
static int64_t cpu_bytes(const struct prog *p, int triage, int64_t *elems)
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
	int64_t modes = triage ? 4 : 3; /* reference, unfused, fused, and emulated with --triage */
	return fs_sat_mul((int64_t)sizeof(double), fs_sat_add(fs_sat_add(in, fs_sat_mul(modes, ops)), scratch));
}

/* The matrix products' multiply-adds. */
static int64_t cpu_macs(const struct prog *p)
{
	int64_t macs = 0;
	for (uint32_t i = 0; i < p->n_ops; i++)
		if (p->ops[i].sem->kind == GEMM) {
			const struct ten *a = fs_prog_value(p, p->ops[i].src[0]);
			macs += p->ops[i].out.n * (a->rank ? a->shape[a->rank - 1] : 1);
		}
	return macs;
}

/* Whether the executions run: where the values and the matrix products'
 * multiply-adds (a few seconds' worth in double) fit the budget, and past a
 * few seconds' worth of values only where no GPU will check them (its
 * float64 reference checks such sizes in a fraction of the CPU's minutes);
 * else c->skipped says why. */
static void decide(const struct prog *p, const struct fs_cpu_plan *pl, struct fs_cpu_result *c, int64_t *elems)
{
	int64_t bytes = cpu_bytes(p, pl->triage, elems), budget = pl->max_bytes > 0 ? pl->max_bytes : FS_CPU_BYTES;
	int64_t macs = cpu_macs(p), mac_budget = (int64_t)1 << 32;
	int gpu_checks = *elems > FS_CPU_ELEMS && pl->gpu_will_check;
	c->ran = !gpu_checks && bytes <= budget && macs <= mac_budget;
	c->over_memory = !gpu_checks && bytes > budget;
	if (gpu_checks)
		snprintf(c->skipped, sizeof(c->skipped),
			 "the region holds %lld elements at these sizes, more than the CPU executions' %lld where a GPU checks them",
			 (long long)*elems, (long long)FS_CPU_ELEMS);
	else if (c->over_memory)
		snprintf(c->skipped, sizeof(c->skipped),
			 "the region holds %lld elements at these sizes, %lld MiB in the CPU executions, more than their %lld MiB "
			 "(--cpu-memory)", (long long)*elems, (long long)(bytes >> 20), (long long)(budget >> 20));
	else if (!c->ran)
		snprintf(c->skipped, sizeof(c->skipped),
			 "the region's matrix products take %lld multiply-adds at these sizes, more than the CPU executions' %lld",
			 (long long)macs, (long long)mac_budget);
}

/* The errors against the reference, the check, and with triage whether a
 * failure vanishes once every op rounds like eager (rounding) or not (a bug). */
static void judge(const struct prog *p, const struct fs_cpu_values *v, const struct fs_rule *rule, int triage,
		  struct fs_cpu_result *c)
{
	errors_of(p, v->v[UNFUSED], v->v[REF], &c->unfused);
	errors_of(p, v->v[FUSED], v->v[REF], &c->fused);
	fs_verdict_check(rule, &c->unfused, &c->fused, &c->check);
	if (!triage)
		return;
	errors_of(p, v->v[EMULATED], v->v[REF], &c->emulated);
	c->triage = c->check.verdict == FS_VERDICT_PASS ? FS_TRIAGE_NONE
		  : !c->emulated.nonfinite && c->emulated.max_abs <= rule->k * c->unfused.max_abs + rule->tol ? FS_TRIAGE_ROUNDING
													      : FS_TRIAGE_BUG;
}

int fs_numerics_cpu(struct prog *p, const struct fs_cpu_plan *pl, struct fs_cpu_result *c, struct fs_cpu_values *v)
{
	int64_t elems = 0;
	memset(v, 0, sizeof(*v));
	decide(p, pl, c, &elems);
	if (!c->ran)
		return 0;
	for (uint32_t i = 0; i < p->n_in; i++) {
		p->in[i].d = fs_xmalloc_huge((size_t)(p->in[i].n ? p->in[i].n : 1) * sizeof(double));
		fill_random(&p->in[i], pl->seed, i);
	}
	fs_progress_say(pl->progress, "CPU check (float64 reference, %lld tokens, %lld values)", (long long)pl->tokens, (long long)elems);
	for (int m = 0; m < (pl->triage ? 4 : 3); m++) {
		v->v[m] = fs_xcalloc(p->n_in + p->n_ops + 1, sizeof(struct ten));
		memcpy(v->v[m], p->in, p->n_in * sizeof(struct ten));
		if (run_mode(p, (enum mode)m, v->v[m]))
			return -1;
	}
	judge(p, v, pl->rule, pl->triage, c);
	return 0;
}

void fs_numerics_values_release(const struct prog *p, struct fs_cpu_values *v)
{
	for (int m = 0; m < 4; m++) {
		for (uint32_t i = 0; v->v[m] && i < p->n_ops; i++)
			free(v->v[m][p->n_in + i].d);
		free(v->v[m]);
		v->v[m] = NULL;
	}
}
