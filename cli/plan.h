/*
 * plan.h: private to cli/: the rewrites `fusescan --apply` and `tune` will
 * make, each name resolved to its sites in one graph (plan.c says how).
 */
#ifndef FUSESCAN_CLI_PLAN_H
#define FUSESCAN_CLI_PLAN_H

#include "cli.h"
#include "fusescan/discover.h"
#include "fusescan/pattern.h"
#include "fusescan/rewrite.h"

struct fs_approval {
	char name[96];
	char id[96];           /* the candidate's id, or the pattern's name */
	int rec;               /* the candidate's enum fs_rec, or -1 for a pattern */
	char recommendation[200]; /* in words, or "" */
	char kernel[160];      /* the existing kernel the catalog names, or "" */
	char target[200];      /* the op the rewrite puts in the sites' place */
	uint32_t literals;     /* FS_LIT_*: literals the target takes after its tensors */
	uint8_t norm_first;    /* its outputs: (norm, sum) */
	uint8_t gemm_epilogue; /* a GEMM-epilogue candidate: with_gemm takes its GEMMs in */
	struct fs_site *sites;
	uint32_t n_sites;
	uint32_t **nodes;      /* owned node arrays of the sites */
	uint32_t n_owned;
};

struct fs_plan {
	struct fs_approval *v;
	uint32_t n;
};

/* Resolves every id against the one graph of d: 0, or -1 after saying why
 * (unknown or ambiguous name, no site). with_gemm: each site of a
 * GEMM-epilogue candidate takes in the matrix products feeding it whose
 * output nothing else reads (--with-gemm). */
int fs_plan_make(const struct fs_discovery *d, const struct fs_patlib *lib, const struct fs_strlist *ids,
		 const char *site, int with_gemm, struct fs_plan *pl);
/* Appends the ids of an approvals file (one a line, # comments) to ids; they
 * point into *text_out, which the caller frees. 0, or -1 after saying why. */
int fs_plan_read_approvals(const char *path, struct fs_strlist *ids, char **text_out);
void fs_plan_release(struct fs_plan *pl);

#endif
