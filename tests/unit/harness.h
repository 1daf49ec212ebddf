/*
 * harness.h: the unit-test harness. A test file includes it, defines its
 * tests, lists them in TESTS(X) and ends with FS_TEST_MAIN(): main() runs
 * them all and ends with the plain "N passed, N failed" line.
 *
 *   #include "harness.h"
 *   static void t_add(void) { CHECK(1 + 1 == 2); CHECK_EQ_U(g->n_nodes, 3); }
 *   #define TESTS(X) X(t_add)
 *   FS_TEST_MAIN()
 */
#ifndef FUSESCAN_TEST_HARNESS_H
#define FUSESCAN_TEST_HARNESS_H

#include <stdio.h>
#include <string.h>

static int fs_test_failed;

#define CHECK(cond)                                                                 \
	do {                                                                        \
		if (!(cond)) {                                                      \
			fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #cond); \
			fs_test_failed = 1;                                         \
		}                                                                   \
	} while (0)

#define CHECK_EQ_U(a, b)                                                            \
	do {                                                                        \
		unsigned long long va_ = (unsigned long long)(a), vb_ = (unsigned long long)(b); \
		if (va_ != vb_) {                                                   \
			fprintf(stderr, "%s:%d: CHECK failed: %s == %s (%llu != %llu)\n", \
				__FILE__, __LINE__, #a, #b, va_, vb_);              \
			fs_test_failed = 1;                                         \
		}                                                                   \
	} while (0)

#define CHECK_STR(a, b)                                                             \
	do {                                                                        \
		const char *sa_ = (a), *sb_ = (b);                                  \
		if (!sa_ || !sb_ || strcmp(sa_, sb_)) {                             \
			fprintf(stderr, "%s:%d: CHECK failed: %s == \"%s\" (got \"%s\")\n", \
				__FILE__, __LINE__, #a, sb_ ? sb_ : "(null)", sa_ ? sa_ : "(null)"); \
			fs_test_failed = 1;                                         \
		}                                                                   \
	} while (0)

#define FS_TEST_ENTRY(fn) {#fn, fn},

#define FS_TEST_MAIN()                                                              \
	int main(void)                                                              \
	{                                                                           \
		static const struct {                                               \
			const char *name;                                           \
			void (*fn)(void);                                           \
		} tests[] = {TESTS(FS_TEST_ENTRY)};                                 \
		int passed = 0, failed = 0;                                         \
		for (size_t i = 0; i < sizeof(tests) / sizeof(tests[0]); i++) {     \
			fs_test_failed = 0;                                         \
			tests[i].fn();                                              \
			printf("%s %s\n", fs_test_failed ? "FAIL" : "ok  ", tests[i].name); \
			failed += fs_test_failed;                                   \
			passed += !fs_test_failed;                                  \
		}                                                                   \
		printf("%d passed, %d failed\n", passed, failed);                   \
		return failed ? 1 : 0;                                              \
	}

#endif
