// fused.cuh: the fixed part of every kernel fusescan generates (fuse/codegen.c
// appends the op table's functions and the kernel). Compiled with NVRTC, no
// headers: bf16 / fp16 conversions are PTX cvt instructions.
// Loads widen to fp32; stores round to the buffer's dtype (round to nearest even).

#define FS_SQRT1_2 0.70710678118654752440f

__device__ __forceinline__ float ld_f32(const float *p, long long i) { return p[i]; }
__device__ __forceinline__ float ld_f64(const double *p, long long i) { return (float)p[i]; }
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
__device__ __forceinline__ float ld_i64(const long long *p, long long i) { return (float)p[i]; }
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

__device__ __forceinline__ float fs_gelu_tanh(float a)
{
	return 0.5f * a * (1.0f + tanhf(0.7978845608028654f * (a + 0.044715f * a * a * a)));
}

// Reductions over a row group: T consecutive threads (a power of two, at most
// 1024) share a row; every thread of the group gets the result. Every thread
// of the block must call it (it synchronises when T > 32). part: 32 floats of
// shared memory.
#define FS_NEG_INF __int_as_float(0xff800000)
struct fs_sum { __device__ __forceinline__ float operator()(float a, float b) const { return a + b; } };
struct fs_max { __device__ __forceinline__ float operator()(float a, float b) const { return fmaxf(a, b); } };
struct fs_min { __device__ __forceinline__ float operator()(float a, float b) const { return fminf(a, b); } };

template <int T, typename F> __device__ __forceinline__ float fs_group_reduce(float v, F op, float *part)
{
	for (int o = (T < 32 ? T : 32) / 2; o > 0; o >>= 1)
		v = op(v, __shfl_xor_sync(0xffffffffu, v, o));
	if (T <= 32)
		return v;
	__syncthreads(); // the previous reduction has read part
	if ((threadIdx.x & 31) == 0)
		part[threadIdx.x >> 5] = v;
	__syncthreads();
	const float *w = part + (threadIdx.x / T) * (T / 32);
	float r = w[0];
	for (int k = 1; k < T / 32; k++)
		r = op(r, w[k]);
	return r;
}

// V consecutive elements, i a multiple of V: one access of up to 16 bytes,
// or several, widened to fp32 / rounded from it.
template <int V, typename S> __device__ __forceinline__ void fs_ld_raw(const S *p, long long i, S *r)
{
	constexpr int B = V * (int)sizeof(S);
	if constexpr (B >= 16) {
		for (int c = 0; c < B / 16; c++)
			reinterpret_cast<uint4 *>(r)[c] = reinterpret_cast<const uint4 *>(p + i)[c];
	} else if constexpr (B == 8) {
		*reinterpret_cast<uint2 *>(r) = *reinterpret_cast<const uint2 *>(p + i);
	} else if constexpr (B == 4) {
		*reinterpret_cast<unsigned *>(r) = *reinterpret_cast<const unsigned *>(p + i);
	} else {
		for (int u = 0; u < V; u++)
			r[u] = p[i + u];
	}
}
template <int V, typename S> __device__ __forceinline__ void fs_st_raw(S *p, long long i, const S *r)
{
	constexpr int B = V * (int)sizeof(S);
	if constexpr (B >= 16) {
		for (int c = 0; c < B / 16; c++)
			reinterpret_cast<uint4 *>(p + i)[c] = reinterpret_cast<const uint4 *>(r)[c];
	} else if constexpr (B == 8) {
		*reinterpret_cast<uint2 *>(p + i) = *reinterpret_cast<const uint2 *>(r);
	} else if constexpr (B == 4) {
		*reinterpret_cast<unsigned *>(p + i) = *reinterpret_cast<const unsigned *>(r);
	} else {
		for (int u = 0; u < V; u++)
			p[i + u] = r[u];
	}
}
#define FS_VEC_IO(sfx, S)                                                                   \
	template <int V> __device__ __forceinline__ void ldv_##sfx(const S *p, long long i, float *f) \
	{                                                                                   \
		alignas(16) S r[V];                                                         \
		fs_ld_raw<V>(p, i, r);                                                      \
		for (int u = 0; u < V; u++)                                                 \
			f[u] = ld_##sfx(r, u);                                              \
	}                                                                                   \
	template <int V> __device__ __forceinline__ void stv_##sfx(S *p, long long i, const float *f) \
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
