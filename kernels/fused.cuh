// fused.cuh: the fixed part of every kernel fusescan generates (fuse/codegen.c
// puts `typedef float fs_real;` before it, or double in the float64 reference
// kernels, the index type fs_ix (int, or long long past 2^30 elements), FS_FAST
// and FS_L2, and appends the op table's functions and the kernel). Compiled
// with NVRTC, no headers: bf16 / fp16 conversions are PTX cvt instructions.
// Loads widen to fp32; stores round to the buffer's dtype (round to nearest even).

#define FS_SQRT1_2 ((fs_real)0.70710678118654752440)

// sympy's Max / Min in a symbolic dim (fuse/dims.c)
__device__ __forceinline__ long long fs_max_ix(long long a, long long b) { return a > b ? a : b; }
__device__ __forceinline__ long long fs_min_ix(long long a, long long b) { return a < b ? a : b; }

// n / d for n < 2^31 by the launcher's magic numbers of d (fuse/codegen.h, fs_div_magic)
__device__ __forceinline__ unsigned fs_udiv(unsigned n, unsigned m, unsigned l)
{
	return (unsigned)(((unsigned long long)__umulhi(n, m) + n) >> l);
}

__device__ __forceinline__ float ld_f32(const float *p, long long i) { return p[i]; }
__device__ __forceinline__ double ld_f64(const double *p, long long i) { return p[i]; }
__device__ __forceinline__ float ld_bf16(const unsigned short *p, long long i)
{
	return __uint_as_float(((unsigned)p[i]) << 16);
}
__device__ __forceinline__ float ld_f16(const unsigned short *p, long long i)
{
	float f;
	asm("cvt.f32.f16 %0, %1;" : "=f"(f) : "h"(p[i]));
	return f;
}
__device__ __forceinline__ double ld_i64(const long long *p, long long i) { return (double)p[i]; }
__device__ __forceinline__ float ld_i32(const int *p, long long i) { return (float)p[i]; }
__device__ __forceinline__ float ld_u8(const unsigned char *p, long long i) { return (float)p[i]; }

__device__ __forceinline__ unsigned short to_bf16(float f)
{
	unsigned short r;
	asm("cvt.rn.bf16.f32 %0, %1;" : "=h"(r) : "f"(f));
	return r;
}
__device__ __forceinline__ unsigned short to_f16(float f)
{
	unsigned short r;
	asm("cvt.rn.f16.f32 %0, %1;" : "=h"(r) : "f"(f));
	return r;
}
__device__ __forceinline__ void st_f32(float *p, long long i, float v) { p[i] = v; }
__device__ __forceinline__ void st_f64(double *p, long long i, float v) { p[i] = v; }
__device__ __forceinline__ void st_f64(double *p, long long i, double v) { p[i] = v; } // the reference's stored values
__device__ __forceinline__ void st_bf16(unsigned short *p, long long i, float v) { p[i] = to_bf16(v); }
__device__ __forceinline__ void st_f16(unsigned short *p, long long i, float v) { p[i] = to_f16(v); }
__device__ __forceinline__ void st_i64(long long *p, long long i, float v) { p[i] = (long long)v; }
__device__ __forceinline__ void st_i32(int *p, long long i, float v) { p[i] = (int)v; }
__device__ __forceinline__ void st_u8(unsigned char *p, long long i, float v) { p[i] = v != 0.0f; }

// a cast inside a region: the value rounded to the dtype, kept in fp32
__device__ __forceinline__ float rnd_f32(float v) { return v; }
__device__ __forceinline__ float rnd_f64(float v) { return v; }
__device__ __forceinline__ float rnd_bf16(float v) { return __uint_as_float(((unsigned)to_bf16(v)) << 16); }
__device__ __forceinline__ float rnd_f16(float v)
{
	float f;
	unsigned short h = to_f16(v);
	asm("cvt.f32.f16 %0, %1;" : "=f"(f) : "h"(h));
	return f;
}
__device__ __forceinline__ float rnd_i64(float v) { return truncf(v); }
__device__ __forceinline__ float rnd_i32(float v) { return truncf(v); }
__device__ __forceinline__ float rnd_u8(float v) { return v != 0.0f; }

// exp and tanh: in fp32 under a fast-math tactic (FS_FAST 1, defined by the
// generator) the approximate hardware instructions (ex2.approx, tanh.approx:
// about 2^-21 and 2^-11 relative error); the tuner checks such a tactic's
// results against the float64 reference like any other's.
__device__ __forceinline__ double fs_exp(double a) { return exp(a); }
__device__ __forceinline__ float fs_exp(float a) { return FS_FAST ? __expf(a) : expf(a); }
// a / b where b >= 1 or infinite (sigmoid's 1 + exp(-a)): fp32 division by
// reciprocal (div.full, 2 ulp) as Triton divides, instead of IEEE division's
// slow-path branch around every element
__device__ __forceinline__ double fs_quot(double a, double b) { return a / b; }
__device__ __forceinline__ float fs_quot(float a, float b) { return __fdividef(a, b); }
// 1 / sqrt(a): in fp32 rsqrtf (MUFU.RSQ, 2 ulp), what PyTorch's rsqrt and
// Triton's libdevice call, instead of an IEEE square root then an IEEE
// division on the norm's critical path (after the row's reduction)
__device__ __forceinline__ double fs_rsqrt(double a) { return 1 / sqrt(a); }
__device__ __forceinline__ float fs_rsqrt(float a) { return rsqrtf(a); }
__device__ __forceinline__ double fs_tanh(double a) { return tanh(a); }
__device__ __forceinline__ float fs_tanh(float a)
{
	if (!FS_FAST)
		return tanhf(a);
	float r;
	asm("tanh.approx.f32 %0, %1;" : "=f"(r) : "f"(a));
	return r;
}

// gelu's tanh form, a (1 + tanh(z)) / 2 with z = sqrt(2 / pi) (a + 0.044715 a^3),
// as a sigmoid: 1 + tanh(z) = 2 / (1 + exp(-2z)), so a / (1 + exp(-2z)). The
// same function (numerics.c's reference keeps the tanh form; in fp32 this one
// has no cancellation where tanh(z) nears -1), in one exp and a division by
// reciprocal instead of tanhf's longer sequence. A streaming kernel's
// arithmetic is not free: at an H200's bandwidth a GeGLU element (6 bytes) has
// about 40 instruction slots of its SM, and the tuner timed GeGLU at 8192
// tokens there at 166.3 us with tanhf (v8 b128 e1) against 162.5 with
// tanh.approx (v8 b256 e1 fast l2).
template <typename R> __device__ __forceinline__ R fs_gelu_tanh(R a)
{
	return fs_quot(a, (R)1 + fs_exp((R)-1.5957691216057308 * (a + (R)0.044715 * a * a * a)));
}

// Reductions over a row group: T consecutive threads (a power of two, at most
// 1024) share a row; every thread of the group gets the result. Every thread
// of the block must call it (it synchronises when T > 32). part: 32 values of
// shared memory (16-byte aligned: the partials are read four at a time), its
// own for each reduction of the kernel, so no barrier waits before the
// partials are written.
#define FS_NEG_INF __int_as_float(0xff800000)
struct fs_sum { template <typename R> __device__ __forceinline__ R operator()(R a, R b) const { return a + b; } };
struct fs_max { template <typename R> __device__ __forceinline__ R operator()(R a, R b) const { return fmax(a, b); } };
struct fs_min { template <typename R> __device__ __forceinline__ R operator()(R a, R b) const { return fmin(a, b); } };

// N partials pairwise: a tree of depth log2 N, not a chain of N - 1 (at decode
// sizes a row kernel's time is its latency: 16 warps' partials in 4 dependent
// steps instead of 15)
template <int N, typename F, typename R> __device__ __forceinline__ R fs_tree(const R *w, F op)
{
	if constexpr (N == 1)
		return w[0];
	else
		return op(fs_tree<N / 2>(w, op), fs_tree<N / 2>(w + N / 2, op));
}
template <int T, typename F, typename R> __device__ __forceinline__ R fs_group_reduce(R v, F op, R *part)
{
	for (int o = (T < 32 ? T : 32) / 2; o > 0; o >>= 1)
		v = op(v, __shfl_xor_sync(0xffffffffu, v, o));
	if constexpr (T <= 32)
		return v;
	else {
		if ((threadIdx.x & 31) == 0)
			part[threadIdx.x >> 5] = v;
		__syncthreads();
		return fs_tree<T / 32>(part + (threadIdx.x / T) * (T / 32), op);
	}
}

// Accesses of 4, 8 or 16 bytes, under one of two L2 policies (FS_L2):
// 1: a load of an input the grid reads more than once (REUSE 1: broadcast to
// the outputs) asks the L2 to keep the line (evict-last) and a store asks to
// evict it first (st.global.cs): outputs and once-read inputs stream past,
// the shared inputs stay. 2: the shared inputs kept as under 1, the inputs
// read once (REUSE 0) evicted first from L1 and L2, the stores plain: the
// outputs stay in L2 for the kernel that reads them next. The once-read
// load is Triton's for torch.compile's evict_first loads (add + RMSNorm at
// 512 tokens, H100: 1.015x torch.compile; 0.993x with ld.global.nc and
// L1::no_allocate). REUSE 2 (a row kernel's passes each reading the row): no hint.
#define FS_LD_POLICY(fn, policy, how)                                                                               \
	__device__ __forceinline__ uint4 fn(const uint4 *p)                                                        \
	{                                                                                                          \
		uint4 v;                                                                                           \
		asm("{\n\t.reg .b64 pol;\n\tcreatepolicy.fractional.L2::" policy ".b64 pol, 1.0;\n\t"             \
		    "ld.global" how ".L2::cache_hint.v4.u32 {%0, %1, %2, %3}, [%4], pol;\n\t}"                   \
		    : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w) : "l"(p));                                        \
		return v;                                                                                          \
	}                                                                                                          \
	__device__ __forceinline__ uint2 fn(const uint2 *p)                                                        \
	{                                                                                                          \
		uint2 v;                                                                                           \
		asm("{\n\t.reg .b64 pol;\n\tcreatepolicy.fractional.L2::" policy ".b64 pol, 1.0;\n\t"             \
		    "ld.global" how ".L2::cache_hint.v2.u32 {%0, %1}, [%2], pol;\n\t}"                           \
		    : "=r"(v.x), "=r"(v.y) : "l"(p));                                                              \
		return v;                                                                                          \
	}                                                                                                          \
	__device__ __forceinline__ unsigned fn(const unsigned *p)                                                  \
	{                                                                                                          \
		unsigned v;                                                                                        \
		asm("{\n\t.reg .b64 pol;\n\tcreatepolicy.fractional.L2::" policy ".b64 pol, 1.0;\n\t"             \
		    "ld.global" how ".L2::cache_hint.u32 %0, [%1], pol;\n\t}"                                    \
		    : "=r"(v) : "l"(p));                                                                           \
		return v;                                                                                          \
	}
FS_LD_POLICY(fs_ld_keep, "evict_last", ".nc")
FS_LD_POLICY(fs_ld_once, "evict_first", ".L1::evict_first")
// Loaded only if c, else zero bits. Nothing but the load depends on c, so
// the compiler predicates it: the loads of a pass are all in flight before
// any is used (a branch around load and conversion waits for each load).
template <int REUSE, typename W> __device__ __forceinline__ W fs_ld_word(bool c, const W *p)
{
	W v = {};
	if (c) {
		if constexpr (REUSE == 1 && FS_L2)
			v = fs_ld_keep(p);
		else if constexpr (REUSE == 0 && FS_L2 == 2)
			v = fs_ld_once(p);
		else
			v = *p;
	}
	return v;
}
template <typename W> __device__ __forceinline__ void fs_st_word(W *p, W v)
{
	if constexpr (FS_L2 == 1)
		__stcs(p, v);
	else
		*p = v;
}

// V consecutive elements, i a multiple of V: one access of up to 16 bytes,
// or several, widened to fp32 / rounded from it.
template <int V, int REUSE, typename S> __device__ __forceinline__ void fs_ld_raw(bool c, const S *p, long long i, S *r)
{
	constexpr int B = V * (int)sizeof(S);
	if constexpr (B >= 16) {
		for (int k = 0; k < B / 16; k++)
			reinterpret_cast<uint4 *>(r)[k] = fs_ld_word<REUSE>(c, reinterpret_cast<const uint4 *>(p + i) + k);
	} else if constexpr (B == 8) {
		*reinterpret_cast<uint2 *>(r) = fs_ld_word<REUSE>(c, reinterpret_cast<const uint2 *>(p + i));
	} else if constexpr (B == 4) {
		*reinterpret_cast<unsigned *>(r) = fs_ld_word<REUSE>(c, reinterpret_cast<const unsigned *>(p + i));
	} else {
		for (int u = 0; u < V; u++)
			r[u] = c ? p[i + u] : (S)0;
	}
}
template <int V, typename S> __device__ __forceinline__ void fs_st_raw(S *p, long long i, const S *r)
{
	constexpr int B = V * (int)sizeof(S);
	if constexpr (B >= 16) {
		for (int k = 0; k < B / 16; k++)
			fs_st_word(reinterpret_cast<uint4 *>(p + i) + k, reinterpret_cast<const uint4 *>(r)[k]);
	} else if constexpr (B == 8) {
		fs_st_word(reinterpret_cast<uint2 *>(p + i), *reinterpret_cast<const uint2 *>(r));
	} else if constexpr (B == 4) {
		fs_st_word(reinterpret_cast<unsigned *>(p + i), *reinterpret_cast<const unsigned *>(r));
	} else {
		for (int u = 0; u < V; u++)
			p[i + u] = r[u];
	}
}
#define FS_VEC_IO(sfx, S)                                                                   \
	template <int V, int REUSE, typename R>                                             \
	__device__ __forceinline__ void ldv_##sfx(bool c, const S *p, long long i, R *f)    \
	{                                                                                   \
		alignas(16) S r[V];                                                         \
		fs_ld_raw<V, REUSE>(c, p, i, r);                                            \
		for (int u = 0; u < V; u++)                                                 \
			f[u] = ld_##sfx(r, u);                                              \
	}                                                                                   \
	template <int V, typename R> __device__ __forceinline__ void stv_##sfx(S *p, long long i, const R *f) \
	{                                                                                   \
		alignas(16) S r[V];                                                         \
		for (int u = 0; u < V; u++)                                                 \
			st_##sfx(r, u, f[u]);                                               \
		fs_st_raw<V>(p, i, r);                                                      \
	}
FS_VEC_IO(f32, float)
FS_VEC_IO(f64, double)
FS_VEC_IO(bf16, unsigned short)
FS_VEC_IO(f16, unsigned short)
FS_VEC_IO(i64, long long)
FS_VEC_IO(i32, int)
FS_VEC_IO(u8, unsigned char)

// ---- the float64 reference kernels -------------------------------------------------------
// Instead of storing, they compare each output element with the result under
// test (an unfused or a fused run), as fuse/numerics.c's errors_of does on the
// CPU: poison left (all bits set, which floats read as NaN) is unwritten;
// NaN / Inf where the reference is finite is non-finite; else the absolute
// and relative (|ref| floored at 1e-6) errors and the sums of squares.
struct fs_stats { // in global memory, zeroed before the kernel; maxima as bits (non-negative doubles order as integers)
	unsigned long long max_abs, max_rel;
	double se, sr;
	unsigned long long unwritten, nonfinite;
};
struct fs_acc { double max_abs, max_rel, se, sr; unsigned long long unwritten, nonfinite; };

__device__ __forceinline__ void fs_check(fs_acc &a, double x, double y)
{
	if (isnan(x) && !isnan(y)) {
		a.unwritten++, a.nonfinite++;
		return;
	}
	if (!isfinite(x)) {
		a.nonfinite += isfinite(y) != 0;
		return;
	}
	double d = fabs(x - y), rel = d / (fabs(y) > 1e-6 ? fabs(y) : 1e-6);
	a.max_abs = d > a.max_abs ? d : a.max_abs;
	a.max_rel = rel > a.max_rel ? rel : a.max_rel;
	a.se += d * d, a.sr += y * y;
}

#define FS_CMP(sfx, S, POISONED)                                                             \
	__device__ __forceinline__ void cmp_##sfx(const S *p, long long i, double y, fs_acc &a)    \
	{                                                                                      \
		S r[1] = {p[i]};                                                               \
		fs_check(a, POISONED ? __longlong_as_double(-1ll) : (double)ld_##sfx(r, 0), y);   \
	}                                                                                      \
	template <int V> __device__ __forceinline__ void cmpv_##sfx(const S *p, long long i, const double *y, fs_acc &a) \
	{                                                                                      \
		alignas(16) S r[V];                                                            \
		fs_ld_raw<V, 0>(true, p, i, r);                                                \
		for (int u = 0; u < V; u++)                                                    \
			cmp_##sfx(r, u, y[u], a);                                              \
	}
FS_CMP(f32, float, 0)
FS_CMP(f64, double, 0)
FS_CMP(bf16, unsigned short, 0)
FS_CMP(f16, unsigned short, 0)
FS_CMP(i64, long long, r[0] == -1ll)
FS_CMP(i32, int, r[0] == -1)
FS_CMP(u8, unsigned char, r[0] == 0xff)

// Every thread of the block calls it once, at the end: block totals, one
// atomic per field and block.
__device__ __forceinline__ void fs_acc_flush(fs_acc a, fs_stats *st)
{
	__shared__ fs_acc w[32];
	for (int o = 16; o > 0; o >>= 1) {
		a.max_abs = fmax(a.max_abs, __shfl_xor_sync(0xffffffffu, a.max_abs, o));
		a.max_rel = fmax(a.max_rel, __shfl_xor_sync(0xffffffffu, a.max_rel, o));
		a.se += __shfl_xor_sync(0xffffffffu, a.se, o);
		a.sr += __shfl_xor_sync(0xffffffffu, a.sr, o);
		a.unwritten += __shfl_xor_sync(0xffffffffu, a.unwritten, o);
		a.nonfinite += __shfl_xor_sync(0xffffffffu, a.nonfinite, o);
	}
	if ((threadIdx.x & 31) == 0)
		w[threadIdx.x >> 5] = a;
	__syncthreads();
	if (threadIdx.x != 0)
		return;
	for (unsigned k = 1; k < (blockDim.x + 31) / 32; k++) {
		a.max_abs = fmax(a.max_abs, w[k].max_abs), a.max_rel = fmax(a.max_rel, w[k].max_rel);
		a.se += w[k].se, a.sr += w[k].sr, a.unwritten += w[k].unwritten, a.nonfinite += w[k].nonfinite;
	}
	atomicMax(&st->max_abs, (unsigned long long)__double_as_longlong(a.max_abs));
	atomicMax(&st->max_rel, (unsigned long long)__double_as_longlong(a.max_rel));
	atomicAdd(&st->se, a.se);
	atomicAdd(&st->sr, a.sr);
	atomicAdd(&st->unwritten, a.unwritten);
	atomicAdd(&st->nonfinite, a.nonfinite);
}

// ---- random inputs, drawn on the device -----------------------------------------------------
// The same function as fuse/rand.h on the CPU (element i of input `stream`):
// uniform in [-2, 2] away from zero for floats, 1..7 for integers, 0 / 1 for bool.
__device__ __forceinline__ unsigned long long fs_mix(unsigned long long z)
{
	z += 0x9e3779b97f4a7c15ull;
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}
__device__ __forceinline__ float fs_rand(unsigned long long stream, long long i, int kind)
{
	float u = (float)(fs_mix(stream ^ fs_mix((unsigned long long)i)) >> 40) * 5.9604644775390625e-8f; // [0, 1), 24 bits
	if (kind == 2)
		return u < 0.5f ? 0.0f : 1.0f;
	if (kind == 1)
		return (float)(1 + (int)(u * 7.0f));
	float v = (u - 0.5f) * 4.0f;
	if (fabsf(v) < 0.05f)
		v = __fadd_rn(v, v < 0.0f ? -0.05f : 0.05f);
	return v;
}
