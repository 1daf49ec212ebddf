/*
 * test_half.c: bf16 / fp16 rounding (fuse/half.h), which the CPU executions'
 * eager emulation rests on: every finite value round trips, ties go to even,
 * a mantissa carry reaches the exponent, overflow is Inf, subnormals keep
 * their spacing. And the random inputs (fuse/rand.h, drawn alike on the GPU):
 * floats in [-2, 2] and never near zero, integers 1..7, bool 0 / 1, every
 * value reachable, a pure function of stream and index.
 */
#include "../../fuse/half.h"
#include "../../fuse/rand.h"
#include "harness.h"

static void t_f16_round_trip(void)
{
	unsigned bad = 0;
	for (unsigned h = 0; h < 0x10000; h++)
		if (((h >> 10) & 0x1f) != 31 && fs_f16_bits(fs_f16_value((uint16_t)h)) != h && fs_f16_value((uint16_t)h) != 0)
			bad++;
	CHECK_EQ_U(bad, 0);
}

static void t_f16_rounding(void)
{
	double one = fs_f16_value(0x3c00), up = fs_f16_value(0x3c01), up2 = fs_f16_value(0x3c02);
	CHECK_EQ_U(fs_f16_bits((one + up) / 2), 0x3c00);  /* tie: to the even mantissa */
	CHECK_EQ_U(fs_f16_bits((up + up2) / 2), 0x3c02);
	CHECK_EQ_U(fs_f16_bits(fs_f16_value(0x3bff) + 0x1p-12), 0x3c00); /* carry into the exponent */
	CHECK_EQ_U(fs_f16_bits(70000.0), 0x7c00);          /* overflow */
	CHECK_EQ_U(fs_f16_bits(-0x1p-24), 0x8001);         /* smallest subnormal */
	CHECK(fs_f16_value(0x7c00) > 65504 && isnan(fs_f16_value(0x7e00)));
}

static void t_bf16(void)
{
	unsigned bad = 0;
	for (unsigned h = 0; h < 0x10000; h++)
		if (((h >> 7) & 0xff) != 0xff && fs_bf16_bits(fs_bf16_value((uint16_t)h)) != h)
			bad++;
	CHECK_EQ_U(bad, 0);
	double one = fs_bf16_value(0x3f80), up = fs_bf16_value(0x3f81);
	CHECK_EQ_U(fs_bf16_bits((one + up) / 2), 0x3f80); /* tie: to even */
	CHECK(isnan(fs_bf16_value(fs_bf16_bits(NAN))));
}

static void t_rand(void)
{
	uint64_t s = fs_rand_stream(1, 0), s2 = fs_rand_stream(1, 1);
	unsigned bad = 0, ints[8] = {0}, bools[2] = {0}, same = 0;
	double sum = 0;
	for (int64_t i = 0; i < 1000000; i++) {
		float v = fs_rand(s, i, FS_RAND_FLOAT), n = fs_rand(s, i, FS_RAND_INT), b = fs_rand(s, i, FS_RAND_BOOL);
		bad += !(v >= -2 && v <= 2 && fabsf(v) >= 0.05f) || v != fs_rand(s, i, FS_RAND_FLOAT);
		bad += !(n >= 1 && n <= 7 && n == truncf(n)) || !(b == 0 || b == 1);
		ints[(int)n & 7]++, bools[b != 0]++;
		same += v == fs_rand(s2, i, FS_RAND_FLOAT);
		sum += v;
	}
	CHECK_EQ_U(bad, 0);
	for (int k = 1; k <= 7; k++)
		CHECK(ints[k] > 100000);
	CHECK(bools[0] > 400000 && bools[1] > 400000);
	CHECK(same < 1000);              /* another input, other values */
	CHECK(fabs(sum / 1e6) < 0.01);   /* centred */
}

#define TESTS(X)                \
	X(t_f16_round_trip)     \
	X(t_f16_rounding)       \
	X(t_bf16)               \
	X(t_rand)

FS_TEST_MAIN()
