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

// Block-wide reductions (blockDim.x a multiple of 32, at most 1024): every
// thread gets the result.
#define FS_NEG_INF __int_as_float(0xff800000)
#define FS_BLOCK_REDUCE(name, op, identity)                                      \
	__device__ __forceinline__ float name(float v)                           \
	{                                                                         \
		__shared__ float part[33];                                        \
		for (int o = 16; o > 0; o >>= 1)                                  \
			v = op(v, __shfl_xor_sync(0xffffffffu, v, o));            \
		__syncthreads();                                                  \
		if ((threadIdx.x & 31) == 0)                                      \
			part[threadIdx.x >> 5] = v;                               \
		__syncthreads();                                                  \
		if (threadIdx.x < 32) {                                           \
			v = threadIdx.x < (blockDim.x >> 5) ? part[threadIdx.x] : (identity); \
			for (int o = 16; o > 0; o >>= 1)                          \
				v = op(v, __shfl_xor_sync(0xffffffffu, v, o));    \
			if (threadIdx.x == 0)                                     \
				part[32] = v;                                     \
		}                                                                 \
		__syncthreads();                                                  \
		return part[32];                                                  \
	}
__device__ __forceinline__ float fs_add(float a, float b) { return a + b; }
FS_BLOCK_REDUCE(fs_block_sum, fs_add, 0.0f)
FS_BLOCK_REDUCE(fs_block_max, fmaxf, FS_NEG_INF)
FS_BLOCK_REDUCE(fs_block_min, fminf, -FS_NEG_INF)
