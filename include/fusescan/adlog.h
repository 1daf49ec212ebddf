/*
 * adlog.h: AutoDeploy's per-transform log lines, every generation of them
 * (docs/adlog.md has the grammar):
 *   [stage=S, transform=T] [SUMMARY] matches=N | time: ...   (or disabled / skipped)
 *   [stage=S, transform=T] [PRE-CLEANUP] / [APPLY] / [POST-CLEANUP] / [CUDA MEM DIFF ...]
 *   [stage=S, transform=T] enabled=True, num_matches=N, ...  (and "elapsed time: ...")
 *   stage=S, transform=T, num_matches=N, ...                  (the oldest)
 *
 *   struct fs_adlog l; fs_adlog_init(&l);
 *   fs_adlog_parse(&l, "ad.log", text, len, &diags);
 *   const struct fs_adlog_entry *e = fs_adlog_find(&l, "fuse_add_rms_norm");
 */
#ifndef FUSESCAN_ADLOG_H
#define FUSESCAN_ADLOG_H

#include <stddef.h>
#include <stdint.h>

#include "fusescan/diag.h"

enum fs_adlog_status {
	FS_AD_MATCHES,  /* ran; `matches` is its count */
	FS_AD_DISABLED, /* not enabled in the config */
	FS_AD_SKIPPED,  /* enabled but skipped (the oldest form also logs disabled ones so) */
	FS_AD_RAN,      /* its own lines are in the log, its summary is not (the log ends inside it) */
};

struct fs_adlog_entry {
	char *stage, *transform;
	enum fs_adlog_status status;
	int64_t matches;      /* FS_AD_MATCHES only */
	int32_t rank;         /* [RANK n] of the summary line, -1 without one */
	uint32_t line;        /* the summary's line (FS_AD_RAN: the transform's last line) */
	uint32_t n_detail;    /* the transform's own lines before its summary */
};

struct fs_adlog {
	char *path;
	struct fs_adlog_entry *v;
	uint32_t n, cap;
	uint32_t n_other;     /* non-empty lines that name no transform (warnings, progress bars) */
	uint32_t n_detail;    /* lines of a transform that are not its summary */
	int32_t min_rank;     /* the lowest [RANK n] seen, -1 without any */
};

void fs_adlog_init(struct fs_adlog *l);
/* Parses log text. Lines of a transform that are not its summary and lines
 * that name no transform are counted and ignored (one note); a line that
 * claims to be a summary but cannot be read is a warning (file:line:col); a
 * log with no transform at all is an error at file:1. Returns the warnings
 * and errors added. */
uint32_t fs_adlog_parse(struct fs_adlog *l, const char *path, const char *text, size_t len,
			struct fs_diags *d);
uint32_t fs_adlog_load(struct fs_adlog *l, const char *path, struct fs_diags *d);
/* Whether an entry is the run the dumps show: only rank 0 writes dumps, so
 * of a log several ranks wrote, the lowest rank's lines. */
int fs_adlog_primary(const struct fs_adlog *l, const struct fs_adlog_entry *e);
/* The last primary entry for a transform, or NULL. */
const struct fs_adlog_entry *fs_adlog_find(const struct fs_adlog *l, const char *transform);
const char *fs_adlog_status_name(enum fs_adlog_status s);
void fs_adlog_release(struct fs_adlog *l);

#endif
