/*
 * fuzz_adlog.c: libFuzzer target for the AutoDeploy log reader alone
 * (match/adlog.c): every generation's summaries, a transform's own lines,
 * ranks, colours and '\r' segments. Each entry is looked up again and the
 * diagnostics printed (their excerpts and carets). Built with -DFS_FUZZ=ON
 * (clang); replay.c runs it over the seed corpus in tests/fuzz/adlog in every
 * normal test run.
 */
#include "fusescan/adlog.h"

#include <stdio.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static FILE *sink;
	if (!sink)
		sink = fopen("/dev/null", "w");
	struct fs_adlog l;
	struct fs_diags d;
	fs_adlog_init(&l);
	fs_diags_init(&d);
	fs_adlog_parse(&l, "fuzz.log", (const char *)data, size, &d);
	for (uint32_t i = 0; i < l.n; i++) {
		const struct fs_adlog_entry *e = &l.v[i], *f = fs_adlog_find(&l, e->transform);
		if (fs_adlog_primary(&l, e) && (!f || strcmp(f->transform, e->transform)))
			__builtin_trap(); /* a primary entry is always found again */
		if (sink)
			fprintf(sink, "%s %s %s %lld %d %u\n", e->stage, e->transform, fs_adlog_status_name(e->status),
				(long long)e->matches, e->rank, e->n_detail);
	}
	if (sink)
		fs_diags_print(&d, sink);
	fs_diags_release(&d);
	fs_adlog_release(&l);
	return 0;
}
