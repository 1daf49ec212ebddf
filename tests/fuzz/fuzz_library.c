/*
 * fuzz_library.c: libFuzzer target for the two user-written libraries a run
 * reads: the bytes as a kernel catalog (--catalog: [entries], key = value
 * lines, chains, word lists; match/catalog.c) and as a pattern file
 * (--patterns: the pattern language; match/pattern.c). The diagnostics are
 * printed (their excerpts and carets) and everything is released after each
 * input. Built with -DFS_FUZZ=ON (clang); replay.c runs it over
 * tests/fuzz/corpus_library in every normal test run.
 */
#include "fusescan/catalog.h"
#include "fusescan/pattern.h"
#include "fusescan/scan.h"

#include <stdio.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static FILE *sink;
	if (!sink)
		sink = fopen("/dev/null", "w");
	struct fs_scan *s = fs_scan_new();
	struct fs_catalog c;
	struct fs_patlib l;
	struct fs_diags d;
	fs_diags_init(&d);
	fs_catalog_init(&c, s);
	fs_catalog_parse(&c, "fuzz.catalog", (const char *)data, size, &d);
	fs_patlib_init(&l);
	fs_patlib_parse(&l, "fuzz.pat", (const char *)data, size, &d);
	if (sink) {
		fprintf(sink, "%u entries, %u patterns\n", c.n, l.n);
		fs_diags_print(&d, sink);
	}
	fs_patlib_release(&l);
	fs_catalog_release(&c);
	fs_diags_release(&d);
	fs_scan_free(s);
	return 0;
}
