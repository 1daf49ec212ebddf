/*
 * fuzz_scan.c: libFuzzer target for every parser of untrusted text: the dump
 * parser (and the scan and discovery reports built on its output), the
 * kernel-catalog parser and the ad.log parser, all fed the same bytes. Built
 * with -DFS_FUZZ=ON (clang); replay.c runs the same entry point over the
 * seed corpus in every normal test run.
 */
#include "fusescan/adlog.h"
#include "fusescan/discover.h"
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

	struct fs_discover_opts o = {.tokens = 64};
	struct fs_discovery *d = fs_discover(s, &o);
	if (d && sink)
		fs_discover_json(d, sink);
	fs_discovery_free(d);

	struct fs_catalog c;
	fs_catalog_init(&c, s);
	fs_catalog_parse(&c, "fuzz.catalog", (const char *)data, size, &s->diags);
	fs_catalog_release(&c);

	struct fs_adlog l;
	fs_adlog_init(&l);
	fs_adlog_parse(&l, "fuzz.log", (const char *)data, size, &s->diags);
	fs_adlog_release(&l);
	fs_scan_free(s);
	return 0;
}
