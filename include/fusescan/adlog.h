/*
 * adlog.h: AutoDeploy's per-transform log lines (ad.log). Both formats:
 *   [stage=S, transform=T] [SUMMARY] matches=N | time: ...   (or disabled / skipped)
 *   [stage=S, transform=T] enabled=True, num_matches=N, ...  (older)
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

enum fs_adlog_status { FS_AD_MATCHES, FS_AD_DISABLED, FS_AD_SKIPPED };

struct fs_adlog_entry {
	char *stage, *transform;
	enum fs_adlog_status status;
	int64_t matches;      /* FS_AD_MATCHES only */
	uint32_t line;
};

struct fs_adlog {
	char *path;
	struct fs_adlog_entry *v;
	uint32_t n, cap;
	uint32_t n_other;     /* non-empty lines that name no transform */
};

void fs_adlog_init(struct fs_adlog *l);
/* Parses log text; lines that are not transform summaries are counted and
 * ignored (one note); a summary line it cannot read is a warning
 * (file:line:col); no summary line at all is an error at file:1. Returns the
 * warnings and errors added. */
uint32_t fs_adlog_parse(struct fs_adlog *l, const char *path, const char *text, size_t len,
			struct fs_diags *d);
uint32_t fs_adlog_load(struct fs_adlog *l, const char *path, struct fs_diags *d);
/* Last entry for a transform, or NULL. */
const struct fs_adlog_entry *fs_adlog_find(const struct fs_adlog *l, const char *transform);
void fs_adlog_release(struct fs_adlog *l);

#endif
