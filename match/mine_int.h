/*
 * mine_int.h: private to match/. The per-graph facts mining works from
 * (each node's role and whether its value is laid out contiguously), shared
 * by region building (regions.c), costing (cost.c), candidate assembly
 * (candidates.c) and cleanups (cleanup.c).
 */
#ifndef FUSESCAN_MINE_INT_H
#define FUSESCAN_MINE_INT_H

#include "fusescan/mine.h"

#include <string.h>

enum role {
	ROLE_NONE,    /* placeholder, external constant, side-effect node */
	ROLE_MATH,    /* elementwise, cast, fusible reduction, norm composite */
	ROLE_COPY,    /* data movement that launches a kernel: cat, clone, contiguous */
	ROLE_VIEW,    /* index-only view */
	ROLE_ANCHOR,  /* GEMM, attention, custom op, indexing, creation, ... */
};

/* Views feeding a region that a chain's `views` may name: the nearest few. */
enum { FEED_HOPS = 8 };

struct ctx {
	struct fs_mine *m;
	const struct fs_scan *s;
	const struct fs_graph *g;
	const struct fs_mine_opts *o;
	uint8_t *role;       /* per node */
	uint8_t *contig;     /* per node: output laid out contiguously */
	uint32_t *src;       /* per node: fs_mine_source */
	uint32_t *region_of; /* per node: region index or UINT32_MAX */
	uint64_t *merkle;    /* signature scratch, per node, kept zeroed */
	uint32_t *uses, *visit;
	uint8_t *mark;       /* per node scratch for trimming, kept zeroed */
	uint32_t *pos;       /* per node scratch: its index in a node set, UINT32_MAX outside (kept so) */
	uint32_t *count;     /* per node scratch, kept zeroed: producers in a set, readers, levels */
	uint32_t *key_n, *key_want; /* per op key (an interned symbol) scratch, kept zeroed: ops in a set, in a chain */
	struct fs_confirm *confirm; /* confirm.c: one per pattern naming a catalog entry */
	uint32_t n_confirm;
};

/* A pattern's matches in this graph, for confirming the entry it names. */
struct fs_confirm {
	int32_t entry;
	uint32_t pattern;    /* its index in the catalog's pattern library */
	uint32_t *match_of;  /* per node: the match covering it, or UINT32_MAX */
	uint32_t n_matches;
	uint32_t *stamp;     /* per match: the last count that saw it (fs_mine_pattern_count) */
	uint8_t *crossing;   /* per match: its nodes come from two modules of an inlined graph */
	uint32_t stamp_now;
};

void fs_mine_roles(struct ctx *c);
/* dropout(x, p, train) with p == 0 or train False: x itself at inference */
int fs_mine_noop_dropout(const struct fs_scan *s, const struct fs_graph *g, const struct fs_node *n);
/* grouping.c: the graph's maximal fusible regions, catalog chains split out and named */
void fs_mine_regions(struct ctx *c);
/* regions.c: a region of these nodes (its index; the regions may move), and
 * its views trimmed and its outputs, inputs and counts found */
uint32_t fs_mine_new_region(struct ctx *c, const uint32_t *nodes, uint32_t n);
/* Appends a region (nodes file order; inputs, outputs copied): its index. */
uint32_t fs_mine_add_region(struct ctx *c, const uint32_t *nodes, uint32_t n, const uint32_t *inputs,
			    uint32_t n_in, const uint32_t *outputs, uint32_t n_out);
void fs_mine_finish_region(struct ctx *c, uint32_t ri);
/* Counted by chains: math, copies, and views that copy (a reshape of a
 * strided value). Other views are only checked for presence. */
int fs_mine_counted(const struct ctx *c, uint32_t node);
/* Sorted keys of the counted ops of a node set (marked in c->pos), when keys
 * is not NULL, and the keys of its other views and of the views feeding it
 * (at most `max`). Returns the count of keys. */
uint32_t fs_mine_keys(const struct ctx *c, const uint32_t *nodes, uint32_t n, uint32_t *keys, uint32_t *views,
		      uint32_t *n_views, uint32_t max);
/* The catalog entry that names these nodes as a whole (their multiset of
 * counted ops, confirmed), or -1. `keys`, `views`: scratch for the graph's
 * nodes each. */
int32_t fs_mine_name(struct ctx *c, const uint32_t *nodes, uint32_t n, uint32_t *keys, uint32_t *views);
/* Entries that name vertical regions: multi-output and horizontal entries are
 * for the passes that build those candidates. */
int fs_mine_vertical_entry(const struct fs_catalog_entry *e);
/* Catalog entry e may name these nodes: a library pattern for it covers
 * them (where it has one), and a layout entry is no broadcast's copy. */
int fs_mine_may_name(const struct ctx *c, int32_t e, const uint32_t *nodes, uint32_t n);
/* motif.c: the catalog chains carved out of region ri; 1 if it was split.
 * `scratch`: 5 x the graph's nodes. */
int fs_mine_split_motifs(struct ctx *c, uint32_t ri, uint32_t *scratch);
void fs_mine_region_cost(struct ctx *c, struct fs_region *r);
int fs_mine_is_kernel(const struct ctx *c, uint32_t node);
uint64_t fs_mine_signature(const struct ctx *c, const struct fs_region *r);
void fs_mine_candidates(struct ctx *c);
/* attention.c: the regions between an attention's two products, merged. */
void fs_mine_attention_cores(struct ctx *c, uint32_t n_vertical);
void fs_mine_cleanups(struct ctx *c);
/* causal.c: attention masks proven causal, as causal_mask cleanups; the nodes
 * that only build them lose their role (before regions are mined). */
void fs_mine_causal_masks(struct ctx *c);
/* confirm.c: whether a region of these nodes may carry entry's name (see there). */
void fs_mine_confirm_init(struct ctx *c);
int fs_mine_confirmed(const struct ctx *c, int32_t entry, const uint32_t *nodes, uint32_t n);
/* whether a match of entry's pattern lies in these nodes (a group of GEMMs
 * reading one input, which the pattern counts a pair at a time) */
int fs_mine_confirmed_any(const struct ctx *c, int32_t entry, const uint32_t *nodes, uint32_t n);
/* k's pattern (the first in the library confirming its entry, the one
 * discover tells the user to count) and how many of its matches lie in k's
 * instances */
void fs_mine_pattern_count(struct ctx *c, struct fs_candidate *k);
void fs_mine_confirm_release(struct ctx *c);

/* The value a node stands for, looking through index-only views that move
 * no data (a copying reshape is a kernel and stops the walk). */
uint32_t fs_mine_source(const struct ctx *c, uint32_t node);

static inline int fs_mine_is_real_user(const struct fs_graph *g, uint32_t u)
{
	return !(g->nodes[u].flags & FS_NODE_SIDE_EFFECT);
}

/* The k-th top-level argument of n (a list counts as one), or NULL. */
static inline const struct fs_arg *fs_mine_arg(const struct fs_graph *g, const struct fs_node *n, uint32_t k)
{
	uint32_t a = n->args;
	for (uint32_t i = 0; i < k && a < n->args + n->n_args; i++)
		a += g->args[a].span;
	return a < n->args + n->n_args ? &g->args[a] : NULL;
}

/* The node n's first argument reads, or UINT32_MAX. */
static inline uint32_t fs_mine_first_input(const struct fs_graph *g, const struct fs_node *n)
{
	const struct fs_arg *a = fs_mine_arg(g, n, 0);
	return a && a->kind == FS_ARG_NODE ? a->node : UINT32_MAX;
}

/* op's canonical key is k ("add", "cast", "reshape") */
static inline int fs_mine_op_is(const struct fs_scan *s, uint32_t op, const char *k)
{
	return !strcmp(fs_scan_str(s, s->ops[op].key), k);
}

#endif
