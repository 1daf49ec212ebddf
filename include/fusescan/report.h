/*
 * report.h: what fusescan prints. Graph statistics are computed once per
 * distinct graph; the scan report (text or versioned JSON) covers every
 * run's timeline, every graph, the skipped files and the diagnostics.
 *
 *   struct fs_scan_report r;
 *   fs_scan_report_build(&r, scan);
 *   fs_scan_report_text(&r, stdout);      // or fs_scan_report_json
 *   fs_scan_report_release(&r);
 */
#ifndef FUSESCAN_REPORT_H
#define FUSESCAN_REPORT_H

#include <stdio.h>

#include "fusescan/scan.h"

#define FS_SCAN_SCHEMA "fusescan.scan/1"

struct fs_op_count {
	uint32_t op;          /* op id in the scan */
	uint32_t count;
	const char *target;   /* the op's printed target */
};

struct fs_graph_stats {
	uint32_t class_counts[FS_OPC_COUNT];
	struct fs_op_count *ops;  /* by count (desc), then target text */
	uint32_t n_ops;
	uint32_t n_unknown;       /* calls whose op the table does not know */
	uint32_t n_off_schema;    /* calls whose arguments do not fit their op's schema */
	char off_schema[240];     /* the first of them: "%name: why" */
};

struct fs_scan_report {
	const struct fs_scan *scan;
	struct fs_graph_stats *stats; /* per module; dups point at their original's */
	uint32_t n_distinct;
};

void fs_graph_stats_compute(const struct fs_scan *s, const struct fs_graph *g,
			    struct fs_graph_stats *st);
void fs_graph_stats_release(struct fs_graph_stats *st);

void fs_scan_report_build(struct fs_scan_report *r, const struct fs_scan *s);
void fs_scan_report_release(struct fs_scan_report *r);

/* Both return 0, or -1 if writing failed (errno set). */
int fs_scan_report_text(const struct fs_scan_report *r, FILE *out);
int fs_scan_report_json(const struct fs_scan_report *r, FILE *out);

#endif
