/*
 * test_report.c: report/'s private helpers (report_int.h): an evidence line
 * longer than a line's room is cut after a whole word (never inside a UTF-8
 * sequence) and says how much it left out.
 */
#include "report_int.h"
#include "harness.h"

#include <stdlib.h>

/* A line of n copies of word, separated by spaces. */
static char *words(const char *word, uint32_t n)
{
	size_t w = strlen(word);
	char *s = malloc(n * (w + 1) + 1), *p = s;
	for (uint32_t i = 0; i < n; i++, p += w + 1)
		memcpy(p, word, w), p[w] = ' ';
	p[n ? -1 : 0] = '\0';
	return s;
}

static void t_short_kept(void)
{
	struct lines l = {.n = 0};
	fs_lines_add(&l, "transform %s: %d", "fuse_rmsnorm", 3);
	CHECK_STR(l.v[0], "transform fuse_rmsnorm: 3");
}

static void t_long_cut_at_word(void)
{
	struct lines l = {.n = 0};
	char *s = words("abcdefg", 300); /* 2399 bytes */
	fs_lines_add(&l, "%s", s);
	const char *v = l.v[0], *tail = strstr(v, " ... (");
	CHECK(strlen(v) < LINE);
	CHECK(tail != NULL);
	if (tail) {
		CHECK((tail - v) % 8 == 7); /* whole words only */
		CHECK_EQ_U(strtoul(tail + 6, NULL, 10), strlen(s) - (size_t)(tail - v));
		CHECK(!strcmp(tail + strlen(tail) - 12, " more bytes)"));
	}
	free(s);
}

static void t_long_cut_utf8(void)
{
	struct lines l = {.n = 0};
	char *s = words("\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9", 1);
	char big[4000] = "x"; /* no space: 1 + 60 * 24 bytes */
	for (int i = 0; i < 60; i++)
		strcat(big, s);
	fs_lines_add(&l, "%s", big);
	const char *v = l.v[0], *tail = strstr(v, " ... (");
	CHECK(tail != NULL);
	if (tail)
		CHECK((tail - v) % 2 == 1); /* "x" then whole two-byte sequences */
	free(s);
}

#define TESTS(X) X(t_short_kept) X(t_long_cut_at_word) X(t_long_cut_utf8)
FS_TEST_MAIN()
