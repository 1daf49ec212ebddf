/*
 * gate_int.h: what the gates of `fusescan match` share (gate.c: --expect and
 * --baseline; adcheck.c: the log, mapped to the dumps, and its cross-check;
 * gate_result.c: the results both add).
 */
#ifndef FUSESCAN_GATE_INT_H
#define FUSESCAN_GATE_INT_H

#include "fusescan/matchrun.h"

/* gate_result.c. Adds a gate result: ok or failed, what was checked, what was seen. */
void fs_match_gate_add(struct fs_match_run *r, int ok, const char *check, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
/* Matches of a group in a file's modules that run (the root and what it
 * calls); *uncalled (may be NULL): those in modules nothing calls, and in
 * *where the first such module's name. */
uint32_t fs_match_file_count(const struct fs_match_run *r, uint32_t file, uint32_t group, uint32_t *uncalled,
			     const char **where);
/* adcheck.c. The log of run `run`, mapped to its dumps (--log, or the log beside the
 * run, read on first use; errors reading it go to d); NULL when it has none. */
const struct fs_match_log *fs_match_log_of(struct fs_match_run *r, uint32_t run, struct fs_diags *d);
/* Whether `name` is an AutoDeploy transform fusescan knows: one the catalog
 * lists, a dump of the scan is named after, or a log read so far has. */
int fs_match_is_transform(const struct fs_match_run *r, const char *name);

#endif
