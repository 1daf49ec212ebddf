/*
 * half.h (private to fuse/): bf16 and fp16 bit patterns, rounding to nearest
 * even, for the CPU executions (round to the grid).
 */
#ifndef FUSESCAN_HALF_H
#define FUSESCAN_HALF_H

#include <math.h>
#include <stdint.h>
#include <string.h>

/* via fp32, as a kernel computing in fp32 stores a bf16 */
static inline uint16_t fs_bf16_bits(double v)
{
	float f = (float)v;
	uint32_t u;
	memcpy(&u, &f, 4);
	if ((u & 0x7f800000u) == 0x7f800000u) /* Inf, or NaN kept a NaN */
		return (uint16_t)(u >> 16) | ((u & 0xffffu) ? 0x40 : 0);
	u += 0x7fffu + ((u >> 16) & 1u);
	return (uint16_t)(u >> 16);
}

static inline double fs_bf16_value(uint16_t h)
{
	uint32_t u = (uint32_t)h << 16;
	float f;
	memcpy(&f, &u, 4);
	return f;
}

static inline uint16_t fs_f16_bits(double v)
{
	if (isnan(v))
		return 0x7e00;
	uint16_t s = signbit(v) ? 0x8000 : 0;
	double a = fabs(v);
	if (a >= 65520.0)
		return s | 0x7c00;
	if (a < 0x1p-14) /* subnormal: spacing 2^-24; rounding up to 0x400 is the smallest normal */
		return s | (uint16_t)nearbyint(a * 0x1p24);
	int e;
	double m = frexp(a, &e);                 /* a = m 2^e, m in [0.5, 1) */
	unsigned q = (unsigned)nearbyint(m * 2048); /* 1024..2048: a carry bumps the exponent */
	return s | (uint16_t)(((unsigned)(e + 14) << 10) + (q - 1024));
}

static inline double fs_f16_value(uint16_t h)
{
	int e = (h >> 10) & 0x1f, m = h & 0x3ff;
	double v = e == 0 ? ldexp(m, -24) : e == 31 ? (m ? NAN : INFINITY) : ldexp(1024 + m, e - 25);
	return h & 0x8000 ? -v : v;
}

#endif
