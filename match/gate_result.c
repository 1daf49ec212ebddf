/*
 * gate_result.c: what both gates of `fusescan match` record and count
 * (gate_int.h): a gate result added to the run, and the matches of a
 * pattern group in one dump file. Called by gate.c (--expect, --baseline)
 * and adcheck.c (the --log cross-check).
 */
#include "gate_int.h"
#include "fusescan/scan.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

void fs_match_gate_add(struct fs_match_run *r, int ok, const char *check, const char *fmt, ...)
{
	char msg[600];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	FS_GROW(r->gates.v, r->gates.cap, r->gates.n + 1);
	struct fs_gate *g = &r->gates.v[r->gates.n++];
	g->ok = ok;
	g->check = fs_xstrndup(check, strlen(check));
	g->message = fs_xstrndup(msg, strlen(msg));
	r->gates.failed += !ok;
}

uint32_t fs_match_file_count(const struct fs_match_run *r, uint32_t file, uint32_t group, uint32_t *uncalled,
			     const char **where)
{
	const struct fs_dumpfile *f = &r->s->files[file];
	uint32_t n = 0, off = 0;
	for (uint32_t mi = f->first_module; mi < f->first_module + f->n_modules; mi++) {
		uint32_t c = fs_match_count(r, mi, group);
		if (r->runs[mi]) {
			n += c;
			continue;
		}
		if (c && !off && where)
			*where = fs_scan_str(r->s, r->s->modules[mi].name);
		off += c;
	}
	if (uncalled)
		*uncalled = off;
	return n;
}
