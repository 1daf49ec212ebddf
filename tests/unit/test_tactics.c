/*
 * test_tactics.c: the tactics the tuner times (fuse/codegen.c): the first
 * stage's list (fs_tactics) and the variants of its fastest
 * (fs_tactic_variants), with their names.
 */
#include "../../fuse/codegen.h"
#include "harness.h"

#include <string.h>

/* every tactic of the first stage: no L2 policy, rows in the default order */
static uint32_t first_stage(const struct fs_kernel *k, struct fs_tactic *list)
{
	uint32_t n = fs_tactics(k, list);
	CHECK(n >= 1 && n <= FS_FIRST_TACTICS);
	CHECK_EQ_U(list[0].vec, 1); /* the fallback first */
	for (uint32_t i = 0; i < n; i++)
		CHECK(!list[i].l2 && !list[i].lin);
	return n;
}

/* t's variants: as many as want names, named so */
static void expect_variants(const struct fs_kernel *k, struct fs_tactic t, const char *const *want)
{
	struct fs_tactic v[FS_TACTIC_VARIANTS];
	uint32_t n = fs_tactic_variants(k, &t, v), w = 0;
	while (want[w])
		w++;
	CHECK_EQ_U(n, w);
	for (uint32_t i = 0; i < n && i < w; i++) {
		char name[32];
		fs_tactic_name(&v[i], k->row, name, sizeof(name));
		CHECK_STR(name, want[i]);
	}
}

static void t_elementwise(void)
{
	struct fs_kernel k = {.row = 0, .cols = 4096, .work = 16 * 4096};
	struct fs_tactic list[FS_MAX_TACTICS];
	first_stage(&k, list);
	/* past the decode sizes: Triton's narrower pointwise shape (2 elements
	 * a thread, 256 threads) beside its 16-byte accesses */
	struct fs_kernel big = {.row = 0, .cols = 4096, .work = 8192 * 4096};
	uint32_t n = first_stage(&big, list);
	int narrow = 0, wide = 0;
	for (uint32_t i = 0; i < n; i++) {
		narrow += list[i].vec == 2 && list[i].threads == 256 && list[i].per == 1;
		wide += list[i].vec == 8 && list[i].threads == 128 && list[i].per == 1;
	}
	CHECK(narrow && wide);
	/* a vectorised tactic under each L2 policy */
	expect_variants(&k, (struct fs_tactic){8, 128, 2, 0, 0, 0}, (const char *const[]){"v8 b128 e2 l2", "v8 b128 e2 l2i", NULL});
	/* one element an access: no hint applies, no variant */
	expect_variants(&k, (struct fs_tactic){1, 256, 1, 0, 0, 0}, (const char *const[]){NULL});
}

static void t_shared_rows(void)
{
	/* a softmax over 64 keys whose rows share a mask, at 64 tokens (2048 rows) */
	struct fs_kernel k = {.row = 1, .cols = 64, .work = 2048, .transcendental = 1, .reordered = 1};
	struct fs_tactic list[FS_MAX_TACTICS];
	uint32_t n = first_stage(&k, list), fast = 0;
	for (uint32_t i = 0; i < n; i++)
		fast += list[i].fast;
	CHECK(fast > 0);
	expect_variants(&k, (struct fs_tactic){4, 16, 16, 1, 0, 0},
			(const char *const[]){"v4 t16 r16 fast l2", "v4 t16 r16 fast l2i", "v4 t16 r16 fast lin", NULL});
	/* rows of single elements: memory order only */
	expect_variants(&k, (struct fs_tactic){1, 1, 32, 0, 0, 0}, (const char *const[]){"v1 t1 r32 lin", NULL});
}

#define TESTS(X) X(t_elementwise) X(t_shared_rows)
FS_TEST_MAIN()
