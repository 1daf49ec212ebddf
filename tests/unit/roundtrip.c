/*
 * roundtrip.c: printing a graph without a rewrite reproduces its input byte
 * for byte, and the printed graph passes the rewrite's validation. Runs over
 * every dump under the paths given (files with parse errors are not dumps
 * to print, and are counted as skipped).
 * usage: roundtrip PATH...
 */
#include "fusescan/rewrite.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv)
{
	struct fs_scan *s = fs_scan_new();
	for (int i = 1; i < argc; i++)
		fs_scan_path(s, argv[i]);
	int passed = 0, failed = 0, skipped = 0;
	for (uint32_t f = 0; f < s->n_files; f++) {
		const struct fs_dumpfile *df = &s->files[f];
		if (df->n_errors || !df->n_modules) {
			skipped++;
			continue;
		}
		size_t len;
		char *text = fs_read_input(df->path, FS_IN_DUMP, &len);
		struct fs_rewritten r;
		struct fs_diags d;
		fs_diags_init(&d);
		int rc = text ? fs_rewrite_apply(s, df->first_module, text, len, NULL, 0, &r, &d) : -1;
		int same = text && rc == 0 && r.len == len && !memcmp(r.text, text, len);
		if (same)
			passed++;
		else {
			failed++;
			printf("FAIL %s: %s\n", df->path, rc ? "validation failed" : "printed text differs");
			fs_diags_print(&d, stdout);
		}
		if (text)
			fs_rewritten_release(&r);
		fs_diags_release(&d);
		free(text);
	}
	fs_scan_free(s);
	printf("%d passed, %d failed, %d skipped\n", passed, failed, skipped);
	return failed ? 1 : passed ? 0 : 77;
}
