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

static void t_elementwise(void)
{
	struct fs_kernel k = {.row = 0, .cols = 4096, .work = 16 * 4096};
	struct fs_tactic list[FS_MAX_TACTICS], v[FS_TACTIC_VARIANTS];
	first_stage(&k, list);
	char name[32];
	/* a vectorised tactic under each L2 policy */
	CHECK_EQ_U(fs_tactic_variants(&k, &(struct fs_tactic){8, 128, 2, 0, 0, 0}, v), 2);
	fs_tactic_name(&v[0], 0, name, sizeof(name));
	CHECK_STR(name, "v8 b128 e2 l2");
	fs_tactic_name(&v[1], 0, name, sizeof(name));
	CHECK_STR(name, "v8 b128 e2 l2i");
	/* one element an access: no hint applies, no variant */
	CHECK_EQ_U(fs_tactic_variants(&k, &(struct fs_tactic){1, 256, 1, 0, 0, 0}, v), 0);
}

static void t_shared_rows(void)
{
	/* a softmax over 64 keys whose rows share a mask, at 64 tokens (2048 rows) */
	struct fs_kernel k = {.row = 1, .cols = 64, .work = 2048, .transcendental = 1, .reordered = 1};
	struct fs_tactic list[FS_MAX_TACTICS], v[FS_TACTIC_VARIANTS];
	uint32_t n = first_stage(&k, list), fast = 0;
	for (uint32_t i = 0; i < n; i++)
		fast += list[i].fast;
	CHECK(fast > 0);
	char name[32];
	CHECK_EQ_U(fs_tactic_variants(&k, &(struct fs_tactic){4, 16, 16, 1, 0, 0}, v), 3);
	const char *want[] = {"v4 t16 r16 fast l2", "v4 t16 r16 fast l2i", "v4 t16 r16 fast lin"};
	for (int i = 0; i < 3; i++) {
		fs_tactic_name(&v[i], 1, name, sizeof(name));
		CHECK_STR(name, want[i]);
	}
	/* rows of single elements: memory order only */
	CHECK_EQ_U(fs_tactic_variants(&k, &(struct fs_tactic){1, 1, 32, 0, 0, 0}, v), 1);
	CHECK(v[0].lin && !v[0].l2);
}

#define TESTS(X) X(t_elementwise) X(t_shared_rows)
FS_TEST_MAIN()
