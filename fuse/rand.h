/*
 * rand.h (private to fuse/): the random inputs of a numerics run. Element i
 * of input `stream` is a pure function of both, so the GPU draws a buffer of
 * any size where it lives (fs_rand in kernels/fused.cuh, the same function)
 * and the CPU executions see the very same values. Uniform in [-2, 2] away
 * from zero for floating dtypes (then rounded to the dtype), 1..7 for
 * integers, 0 / 1 for bool; computed in float so both sides round alike.
 */
#ifndef FUSESCAN_RAND_H
#define FUSESCAN_RAND_H

#include "fusescan/graph.h"

#include <math.h>
#include <stdint.h>

enum fs_rand_kind { FS_RAND_FLOAT, FS_RAND_INT, FS_RAND_BOOL };

/* what an input of dtype dt holds */
static inline enum fs_rand_kind fs_rand_kind_of(uint8_t dt)
{
	if (dt == FS_DT_BOOL)
		return FS_RAND_BOOL;
	return dt == FS_DT_F64 || dt == FS_DT_F32 || dt == FS_DT_F16 || dt == FS_DT_BF16 ? FS_RAND_FLOAT : FS_RAND_INT;
}

static inline uint64_t fs_mix(uint64_t z)
{
	z += 0x9e3779b97f4a7c15ull;
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

/* the stream of input `index` of a run seeded with `seed` */
static inline uint64_t fs_rand_stream(uint64_t seed, uint32_t index)
{
	return fs_mix(seed + index);
}

static inline float fs_rand(uint64_t stream, int64_t i, enum fs_rand_kind kind)
{
	float u = (float)(fs_mix(stream ^ fs_mix((uint64_t)i)) >> 40) * 5.9604644775390625e-8f; /* [0, 1), 24 bits */
	if (kind == FS_RAND_BOOL)
		return u < 0.5f ? 0.0f : 1.0f;
	if (kind == FS_RAND_INT)
		return (float)(1 + (int)(u * 7.0f));
	float v = (u - 0.5f) * 4.0f; /* exact */
	if (fabsf(v) < 0.05f)
		v += v < 0.0f ? -0.05f : 0.05f;
	return v;
}

#endif
