/* test_memplan.c: the unfused chain's buffers planned by lifetime (fuse/memplan.h) */
#include "../../fuse/memplan.h"
#include "harness.h"

#define G 1000000000ull

/* no two items alive at one launch share a byte, and every item lies inside the allocation */
static int disjoint(const struct fs_memplan_item *it, uint32_t n, size_t size)
{
	for (uint32_t i = 0; i < n; i++) {
		if (it[i].offset + it[i].bytes > size || it[i].offset % 256)
			return 0;
		for (uint32_t j = 0; j < i; j++)
			if (it[i].first <= it[j].last && it[j].first <= it[i].last && it[i].offset < it[j].offset + it[j].bytes &&
			    it[j].offset < it[i].offset + it[i].bytes)
				return 0;
	}
	return 1;
}

/* eager attention's softmax region at 16384 tokens (Llama, 32 heads): mul,
 * add (bf16), softmax (float32), to (bf16), dropout (bf16, the output) */
static void t_softmax_region(void)
{
	struct fs_memplan_item it[] = {
		{.bytes = 17179869184ull, .first = 0, .last = 1},          /* mul, read by add */
		{.bytes = 17179869184ull, .first = 1, .last = 2},          /* add, read by softmax */
		{.bytes = 34359738368ull, .first = 2, .last = 3},          /* softmax, read by to */
		{.bytes = 17179869184ull, .first = 3, .last = 4},          /* to, read by dropout */
		{.bytes = 17179869184ull, .first = 4, .last = UINT32_MAX}, /* dropout: the output, kept */
	};
	size_t size = fs_memplan_offsets(it, 5, 256);
	CHECK(disjoint(it, 5, size));
	CHECK_EQ_U(size, 51539607552ull); /* the largest live pair, 48 GiB: not the 96 GiB of five buffers */
}

/* values alive together all get their own bytes; a value dead before
 * another is born shares its bytes; sizes are rounded to the alignment */
static void t_lifetimes(void)
{
	struct fs_memplan_item all[] = {{.bytes = 3, .first = 0, .last = 5}, {.bytes = 300, .first = 1, .last = 2},
				      {.bytes = 5, .first = 2, .last = 4}};
	size_t size = fs_memplan_offsets(all, 3, 256);
	CHECK(disjoint(all, 3, size));
	CHECK_EQ_U(size, 256 + 512 + 256);
	struct fs_memplan_item chain[] = {{.bytes = G, .first = 0, .last = 1}, {.bytes = G, .first = 2, .last = 3},
					{.bytes = G, .first = 4, .last = 5}};
	size = fs_memplan_offsets(chain, 3, 256);
	CHECK(disjoint(chain, 3, size));
	CHECK_EQ_U(size, G); /* 1e9 is a multiple of 256: one value's bytes, three times over */
	CHECK_EQ_U(fs_memplan_offsets(chain, 0, 256), 0);
}

/* many values of mixed sizes and lifetimes: never overlapping, never
 * larger than giving each its own bytes */
static void t_random(void)
{
	struct fs_memplan_item it[64];
	unsigned long long s = 12345;
	for (int round = 0; round < 50; round++) {
		size_t own = 0;
		for (uint32_t i = 0; i < 64; i++) {
			s = s * 6364136223846793005ull + 1442695040888963407ull;
			uint32_t a = (uint32_t)(s >> 33) % 40, b = (uint32_t)(s >> 45) % 40;
			it[i] = (struct fs_memplan_item){.bytes = 1 + (s >> 20) % 100000, .first = a < b ? a : b, .last = a < b ? b : a};
			own += (it[i].bytes + 255) & ~(size_t)255;
		}
		size_t size = fs_memplan_offsets(it, 64, 256);
		CHECK(disjoint(it, 64, size));
		CHECK(size <= own);
	}
}

#define TESTS(X) X(t_softmax_region) X(t_lifetimes) X(t_random)
FS_TEST_MAIN()
