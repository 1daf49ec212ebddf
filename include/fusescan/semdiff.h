/*
 * semdiff.h: semantic diffs of dumps (`fusescan diff`): node counts, the op
 * histogram delta, nodes added and removed by name (where names persist),
 * and the chains that disappeared with the op that replaced them; or, for a
 * run directory, one line per transform with ad.log's report beside it.
 *
 *   fs_semdiff_files(scan, &catalog, file_a, file_b, stdout);
 *   fs_semdiff_run(scan, &catalog, run, &log, stdout);    // log may be NULL
 */
#ifndef FUSESCAN_SEMDIFF_H
#define FUSESCAN_SEMDIFF_H

#include <stdio.h>

#include "fusescan/adlog.h"
#include "fusescan/mine.h"

int fs_semdiff_files(const struct fs_scan *s, const struct fs_catalog *cat, uint32_t fa, uint32_t fb, FILE *out);
int fs_semdiff_run(const struct fs_scan *s, const struct fs_catalog *cat, uint32_t run, const struct fs_adlog *log,
		   FILE *out);

#endif
