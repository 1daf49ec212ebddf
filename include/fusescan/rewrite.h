/*
 * rewrite.h: approved rewrites on the dump text. Each site (a set of graph
 * nodes) becomes one fused node reading the site's external inputs; a site
 * with several outputs gets getitem nodes. The replaced outputs keep their
 * names (the fused node, or its getitems, take them), so every user reads
 * the fused result without any other line changing. Lines the rewrite does
 * not touch are copied from the input: a rewrite with no site reproduces the
 * input byte for byte. The result is parsed again and validated.
 *
 *   struct fs_site site = {nodes, n};                 // one instance
 *   struct fs_rewrite rw = {"add_rmsnorm", "ns.op.default", &site, 1, FS_LIT_EPS, 1};
 *   struct fs_rewritten out;
 *   if (fs_rewrite_apply(scan, module, text, len, &rw, 1, &out, &diags) == 0)
 *       fwrite(out.text, 1, out.len, f), fs_unified_diff(..., &out, f);
 *   fs_rewritten_release(&out);
 */
#ifndef FUSESCAN_REWRITE_H
#define FUSESCAN_REWRITE_H

#include <stdio.h>

#include "fusescan/scan.h"

struct fs_site {
	const uint32_t *nodes;    /* graph nodes replaced, any order */
	uint32_t n_nodes;
};

/* The site's nodes in file order: a copy, which the caller frees. */
uint32_t *fs_site_file_order(const struct fs_site *site);

struct fs_rewrite {
	const char *name;         /* candidate or pattern name: names the fused nodes */
	const char *target;       /* printed target of the fused op */
	const struct fs_site *sites;
	uint32_t n_sites;
	uint32_t literals;        /* FS_LIT_* (graph.h): literals the target takes after its
				     tensors, read from each site and written in this order */
	uint8_t norm_first;       /* outputs: the site's last value first (a norm's result,
				     then the sum it keeps), not file order */
};

/* One changed line of the input: deleted, or replaced by `text` (which may
 * hold several lines). */
struct fs_edit {
	uint32_t line;            /* 0-based line of the input */
	char *text;               /* NULL: deleted */
};

struct fs_rewritten {
	char *text;               /* the after-dump */
	size_t len;
	struct fs_edit *edits;    /* sorted by line */
	uint32_t n_edits, cap_edits;
	uint32_t applied, skipped;
	struct fs_site_ref {      /* per applied site, in order: which one */
		uint32_t rewrite, site;
	} *done;
	char **why;               /* per skipped site: the reason */
	uint32_t fused;           /* fused nodes in the validated after-graph */
};

/* Applies the rewrites to the text of the file holding `module`. Returns 0,
 * or -1 when the after-graph fails validation (diagnostics in d). */
int fs_rewrite_apply(const struct fs_scan *s, uint32_t module, const char *text, size_t len,
		     const struct fs_rewrite *rw, uint32_t n_rw, struct fs_rewritten *out, struct fs_diags *d);
void fs_rewritten_release(struct fs_rewritten *r);

/* A unified diff of the input and the after-dump, 3 lines of context. */
int fs_unified_diff(const char *a_name, const char *b_name, const char *text, size_t len,
		    const struct fs_rewritten *r, FILE *out);

#endif
