/*
 * fuzz_scan.c: libFuzzer target for every parser of untrusted text: the dump
 * parser (and the scan, discovery and match reports built on its output),
 * the kernel-catalog parser, the ad.log parser and the pattern-file parser,
 * all fed the same bytes; patterns that parse are matched against the graph,
 * the built-in library against whatever graph the bytes made, the graph
 * is printed back through the rewriter, and the first sites of the first
 * candidates are executed by the CPU numerics check and their CUDA kernels
 * generated (not compiled); the bytes are also read as a tuning cache,
 * looked up and merged with a new entry. Built with
 * -DFS_FUZZ=ON (clang); replay.c runs the same entry point over the seed
 * corpus in every normal test run.
 */
#include "fusescan/adlog.h"
#include "fusescan/discover.h"
#include "fusescan/matchrun.h"
#include "fusescan/site.h"
#include "fusescan/rewrite.h"
#include "fusescan/report.h"
#include "fusescan/scan.h"
#include "fusescan/tune.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void fuzz_patterns(struct fs_scan *s, const uint8_t *data, size_t size, FILE *sink)
{
	struct fs_patlib own, lib;
	fs_patlib_init(&own);
	fs_patlib_init(&lib);
	fs_patlib_parse(&own, "fuzz.pat", (const char *)data, size, &s->diags);
	for (uint32_t i = 0; i < own.n; i++)
		for (uint32_t m = 0; m < s->n_modules; m++) {
			struct fs_matches r;
			fs_match_pattern(&own.v[i], s, s->modules[m].graph, &r);
			fs_matches_release(&r);
		}
	fs_patlib_load_builtin(&lib, &s->diags);
	struct fs_match_run *r = fs_match_run(s, &lib, NULL, 0, &s->diags);
	if (r) {
		r->explain = 0;
		if (sink)
			fs_match_json(r, sink);
	}
	fs_match_run_free(r);
	fs_patlib_release(&lib);
	fs_patlib_release(&own);
}

static void fuzz_tuning_cache(const uint8_t *data, size_t size, FILE *sink)
{
	struct fs_tune_cache c;
	struct fs_tune_entry e, got;
	memset(&e, 0, sizeof(e));
	snprintf(e.key.kernel, sizeof(e.key.kernel), "e6eae1d3a57ecb59");
	snprintf(e.key.bucket, sizeof(e.key.bucket), "tokens<=16384");
	e.tactic = (struct fs_tactic){1, 1, 1, 0, 0, 0};
	fs_tune_open_text(&c, "fuzz.json", (const char *)data, size);
	fs_tune_lookup(&c, &e.key, &got);
	fs_tune_record(&c, &e);
	fs_tune_lookup(&c, &e.key, &got);
	if (sink)
		fs_tune_print_stats(&c, sink);
	fs_tune_close(&c);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static FILE *sink;
	if (!sink)
		sink = fopen("/dev/null", "w");
	fuzz_tuning_cache(data, size, sink);
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

	struct fs_discover_opts o = {.tokens = 64, .inline_calls = 1}; /* a root's call_modules inlined */
	struct fs_discovery *d = fs_discover(s, &o);
	if (d && sink)
		fs_discover_json(d, sink);
	for (uint32_t a = 0; d && a < d->n_a; a++) { /* numerics on tiny sizes, a few candidates */
		const struct fs_mine *m = d->a[a].mine;
		for (uint32_t k = 0; m && k < m->n_cands && k < 4; k++) {
			const struct fs_region *site = &m->regions[m->cands[k].instances[0]];
			struct fs_site_form form = {.plant_drop_cast = (int)(k & 1)};
			struct fs_site_opts no = {.tokens = 2, .triage = 1,
						      .max_bytes = 1 << 19, .generate_only = 1};
			struct fs_site_result *nr = fs_xcalloc(1, sizeof(*nr));
			struct fs_diags why;
			fs_diags_init(&why);
			if (fs_site_generates(s, m->g, site->nodes, site->n_nodes, 1, 16, &why) && sink)
				fputs(fs_diags_last(&why), sink); /* discover's question to the generator */
			fs_diags_release(&why);
			if (fs_site_run(s, m->g, site->nodes, site->n_nodes, &form, &no, nr, &s->diags) == 0) {
				if (sink)
					fs_site_report_text(nr, sink);
				fs_site_release(nr);
			}
			free(nr);
		}
	}
	fs_discovery_free(d);

	struct fs_catalog c;
	fs_catalog_init(&c, s);
	fs_catalog_parse(&c, "fuzz.catalog", (const char *)data, size, &s->diags);
	fs_catalog_release(&c);

	fuzz_patterns(s, data, size, sink);

	if (s->n_files && s->files[0].n_modules) { /* the after-dump printer, no rewrite */
		struct fs_rewritten rw;
		fs_rewrite_apply(s, s->files[0].first_module, (const char *)data, size, NULL, 0, &rw, &s->diags);
		fs_rewritten_release(&rw);
	}

	struct fs_adlog l;
	fs_adlog_init(&l);
	fs_adlog_parse(&l, "fuzz.log", (const char *)data, size, &s->diags);
	fs_adlog_release(&l);
	fs_scan_free(s);
	return 0;
}
