/*
 * fuzz_library.c: libFuzzer target for the two user-written libraries a run
 * reads: the bytes as a kernel catalog (--catalog: [entries], key = value
 * lines, chains, word lists; match/catalog.c) and as a pattern file
 * (--patterns: the pattern language; match/pattern.c), and as an AutoDeploy
 * config layer (--ad-config: the YAML subset of match/yaml.c, merged over
 * itself and a registry lookup run on it). The diagnostics are
 * printed (their excerpts and carets) and everything is released after each
 * input. Built with -DFS_FUZZ=ON (clang); replay.c runs it over
 * tests/fuzz/corpus_library in every normal test run.
 */
#include "fusescan/adconfig.h"
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
	struct fs_adconfig a;
	struct fs_regfile files[8];
	struct fs_adsetting st;
	char why[200];
	fs_adconfig_init(&a);
	for (int i = 0; i < 2; i++)
		fs_adconfig_add_text(&a, "fuzz.yaml", (const char *)data, size, FS_LAYER_USER, &d);
	fs_adconfig_merge(&a);
	int listed = fs_adconfig_transform(&a, "fuse_gemms", &st);
	int files_n = a.n_layers ? fs_adconfig_registry(&a.y, a.layers[0].root, "m", NULL, files, 8, why, sizeof(why)) : -1;
	if (sink) {
		fprintf(sink, "%u entries, %u patterns, %u layers, %d %d\n", c.n, l.n, a.n_layers, listed, files_n);
		fs_diags_print(&d, sink);
	}
	fs_adconfig_release(&a);
	fs_patlib_release(&l);
	fs_catalog_release(&c);
	fs_diags_release(&d);
	fs_scan_free(s);
	return 0;
}
