/*
 * mine.h: fusion-candidate discovery on one graph. Regions are maximal
 * fusible sets of nodes (elementwise / cast / row-reduction / data-movement
 * ops and the index-only views between them), split where a catalog chain
 * sits inside a larger region; per-layer instances with the same canonical
 * signature collapse into one candidate, costed in bytes and launches saved.
 *
 *   struct fs_binding b[8];
 *   uint32_t nb = fs_bind_default(scan, g, 8192, b, 8);
 *   struct fs_mine_opts o = {&catalog, b, nb};
 *   struct fs_mine *m = fs_mine_graph(scan, g, &o);
 *   for (uint32_t i = 0; i < m->n_cands; i++) use(&m->cands[i]);   // ranked
 *   fs_mine_free(m);
 */
#ifndef FUSESCAN_MINE_H
#define FUSESCAN_MINE_H

#include "fusescan/catalog.h"
#include "fusescan/scan.h"

/* Risks a fusion carries (strengths / weaknesses / risks in reports). */
enum {
	FS_RISK_NUMERICS = 1 << 0,   /* casts or reductions inside: rounding differs */
	FS_RISK_MULTI_OUTPUT = 1 << 1, /* more than one value leaves the region */
	FS_RISK_DYNAMIC = 1 << 2,    /* symbolic dims: kernel must handle any size */
	FS_RISK_LAYOUT = 1 << 3,     /* transposes / concatenation / copies inside */
};

enum fs_rec { FS_REC_USE_EXISTING, FS_REC_NEEDS_TRITON, FS_REC_DEFER };
const char *fs_rec_name(enum fs_rec r);

/* One fusible region (one instance of a candidate). */
struct fs_region {
	uint32_t *nodes;       /* graph node indices, file order; views included */
	uint32_t n_nodes;
	uint32_t *outputs;     /* nodes whose values are used outside the region */
	uint32_t n_outputs;
	uint32_t *inputs;      /* producers outside the region read directly */
	uint32_t n_inputs;
	uint32_t n_kernels;    /* nodes that launch a kernel when unfused */
	uint32_t n_math;       /* elementwise / cast / reduction nodes */
	uint64_t sig;          /* canonical structural signature */
	int32_t entry;         /* catalog entry whose chain it is, or -1 */
	uint8_t kind;          /* enum fs_kind */
	uint8_t absorbed;      /* merged into an attention core's region (match/attention.c) */
	uint8_t cost_known;    /* every tensor size could be evaluated */
	uint32_t risks;        /* FS_RISK_* */
	int64_t bytes_saved;
	uint32_t launches_saved;
};

struct fs_candidate {
	char id[80];           /* name + signature hash: stable for the same input */
	char name[64];         /* catalog entry name, or kind:op-op-... */
	uint8_t kind;          /* enum fs_kind */
	uint64_t sig;
	uint32_t *instances;   /* region indices, file order */
	uint32_t n_instances;
	uint32_t pairs;        /* instances pairing up through a shared input */
	int32_t pattern;       /* the library pattern confirming its name (index in the catalog's
				  pattern library), or -1 */
	uint32_t pattern_matches; /* that pattern's matches in these sites: the count `fusescan
				     match -p` gives for them */
	uint32_t pattern_crossing; /* matches in these sites that cross a module boundary of an
				      inlined graph: `fusescan match`, counting each GraphModule alone,
				      does not count them (nor pattern_matches) */
	int64_t bytes_per_instance; /* mean over instances */
	int64_t bytes_total;
	uint32_t launches_per_instance;
	uint64_t launches_total;
	uint8_t cost_known;
	int32_t entry;         /* catalog entry, or -1 */
	uint32_t risks;
	enum fs_rec rec;
	uint8_t absorbed;      /* an op absorbs it with the ops around it (attention): ranked last */
	char refused[256];     /* why fusescan's generator takes no kernel of it (then deferred), or "" */
	char ad_why[320];      /* why the AutoDeploy transform it names cannot help (it ran and matched
				  nothing, or AD keeps it off for a stated reason): then deferred; or "" */
};

enum fs_cleanup_kind {
	FS_CLEAN_NOOP_SLICE,   /* slice(x, d, 0, INT64_MAX) */
	FS_CLEAN_NOOP_MUL1,    /* x * 1.0 */
	FS_CLEAN_NOOP_ADD0,    /* x + 0 */
	FS_CLEAN_NOOP_EXPAND,  /* expand to the same shape */
	FS_CLEAN_NOOP_REINDEX, /* a chain of views that ends at the shape it began with */
	FS_CLEAN_DUPLICATE,    /* same target and inputs as an earlier node */
	FS_CLEAN_VIEW_MERGE,   /* two consecutive views that merge into one */
	FS_CLEAN_CAUSAL_MASK,  /* an attention's mask proven causal: is_causal=True instead (match/causal.c) */
	FS_CLEAN_NOOP_DROPOUT, /* dropout(x, 0.0, ...) or dropout(x, p, False): x at inference */
	FS_CLEAN_COUNT
};
const char *fs_cleanup_name(enum fs_cleanup_kind k);

struct fs_cleanup {
	uint8_t kind;
	uint32_t node;
	uint32_t other;        /* duplicate: the earlier node; view merge: the first view; causal
				  mask: the mask */
};

struct fs_mine_opts {
	const struct fs_catalog *cat;
	const struct fs_binding *bind;
	uint32_t n_bind;
};

struct fs_mine {
	const struct fs_scan *s;
	const struct fs_graph *g;
	struct fs_region *regions;
	uint32_t n_regions, cap_regions;
	struct fs_candidate *cands;  /* ranked: fusions before absorbed chains, then bytes_total
					desc, launches, name, id */
	uint32_t n_cands, cap_cands;
	struct fs_cleanup *cleanups;
	uint32_t n_cleanups, cap_cleanups;
	uint32_t n_freed;            /* nodes that only build the masks of the causal_mask cleanups */
	uint32_t *fused;             /* per catalog entry: nodes already calling its kernels */
	uint32_t *fused_op;          /* per catalog entry: one such op (key), or 0 */
	uint32_t *reference;         /* per catalog entry: nodes calling its reference ops
					(AutoDeploy's torch_* ops: matched, run unfused) */
	uint32_t *reference_op;      /* per catalog entry: one such op (key), or 0 */
	struct fs_arena arena;
};

struct fs_mine *fs_mine_graph(const struct fs_scan *s, const struct fs_graph *g,
			      const struct fs_mine_opts *o);
void fs_mine_free(struct fs_mine *m);

#endif
