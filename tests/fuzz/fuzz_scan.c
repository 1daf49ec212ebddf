/*
 * fuzz_scan.c: libFuzzer target for the dump parser and the scan reports
 * built on its output. Built with -DFS_FUZZ=ON (clang); replay.c runs the
 * same entry point over the seed corpus in every normal test run.
 */
#include "fusescan/report.h"
#include "fusescan/scan.h"

#include <stdio.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static FILE *sink;
	if (!sink)
		sink = fopen("/dev/null", "w");
	struct fs_scan *s = fs_scan_new();
	fs_scan_buffer(s, "fuzz.txt", (const char *)data, size);
	fs_scan_buffer(s, "001_export_fuzz.txt", (const char *)data, size); /* dedupe path */
	struct fs_scan_report r;
	fs_scan_report_build(&r, s);
	if (sink) {
		fs_scan_report_text(&r, sink);
		fs_scan_report_json(&r, sink);
		fs_diags_print(&s->diags, sink);
	}
	fs_scan_report_release(&r);
	fs_scan_free(s);
	return 0;
}
