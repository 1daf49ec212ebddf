/*
 * pattern.h: the pattern library (the .pat files of patterns/, language in
 * docs/patterns.md) and the structural matcher behind `fusescan match`.
 * A pattern is a small graph of named nodes: op nodes match graph nodes by a
 * PCRE2 regex over the printed target, with their arguments (other nodes,
 * literals, captured $variables, _ and ...); inputs bind to any value;
 * optional nodes (casts, views) may be present or not. Matches are found
 * from the pattern's outputs backwards, checked for single use and `where`
 * constraints, and never overlap within one pattern. Failed attempts that got
 * far are kept as near misses with their cause.
 *
 *   struct fs_patlib lib; fs_patlib_init(&lib);
 *   fs_patlib_load_dir(&lib, "patterns", &diags);     // file:line:col errors
 *   struct fs_matches m; fs_match_pattern(&lib.v[0], scan, graph, &m);
 *   printf("matches=%u\n", m.n);
 *   fs_matches_release(&m); fs_patlib_release(&lib);
 */
#ifndef FUSESCAN_PATTERN_H
#define FUSESCAN_PATTERN_H

#include "fusescan/diag.h"
#include "fusescan/scan.h"

enum fs_pnode_kind { FS_PN_INPUT, FS_PN_OP, FS_PN_OPTIONAL };

enum fs_parg_kind {
	FS_PA_REF,    /* another pattern node; .ref */
	FS_PA_ANY,    /* _ */
	FS_PA_REST,   /* ... (any further arguments) */
	FS_PA_INT,    /* .i */
	FS_PA_FLOAT,  /* .f */
	FS_PA_BOOL,   /* .i */
	FS_PA_NONE,
	FS_PA_DTYPE,  /* .i = enum fs_dtype */
	FS_PA_STR,    /* .text */
	FS_PA_LIST,   /* [...] or (...); children follow, .span covers them */
	FS_PA_VAR,    /* $name: captures a number; .ref = variable index */
};

struct fs_parg {
	uint8_t kind;
	uint32_t span;
	uint32_t ref;
	int64_t i;
	double f;
	char *text;
};

enum {
	FS_PF_COMMUTATIVE = 1 << 0, /* operands 0 and 1 may be swapped */
	FS_PF_SHARED = 1 << 1,      /* may be read outside the match */
	FS_PF_OUTPUT = 1 << 2,      /* an output of the pattern */
	FS_PF_WEIGHT = 1 << 3,      /* input: a weight / buffer / graph input, not computed */
};

struct fs_pnode {
	char *name;
	uint8_t kind;              /* enum fs_pnode_kind */
	uint32_t flags;            /* FS_PF_* */
	char *regex;               /* op nodes: the regex as written */
	void *code;                /* pcre2_code*, anchored, JIT-compiled when possible */
	struct fs_parg *args;
	uint32_t n_args;
	uint64_t dtypes;           /* allowed output dtypes (bit per enum fs_dtype), 0 = any */
	int32_t rank;              /* required rank, -1 = any */
	uint32_t line;
};

enum fs_where_kind { FS_WH_RANGE, FS_WH_DIM, FS_WH_RANK, FS_WH_DISTINCT };

/* where $v in [lo, hi] | where dim(a, i) OP k * dim(b, j) + c | where rank(a) == n */
struct fs_where {
	uint8_t kind;
	uint32_t var;              /* RANGE */
	double lo, hi;
	uint32_t a, b;             /* DIM: node indices (b = UINT32_MAX: constant); DISTINCT: a != b */
	int32_t ai, bi;            /* dim indices, negative from the end */
	int64_t k, c;              /* DIM: dim(a, ai) == k * dim(b, bi) + c */
	uint32_t line;
	char *text;
};

struct fs_pattern {
	char *name, *path, *description, *replace, *catalog;
	char *variant;             /* NULL, or the variant's name: variants of one
				      pattern are counted together under its name */
	struct fs_pnode *nodes;
	uint32_t n_nodes, cap_nodes;
	uint32_t *outputs;         /* node indices, matched in this order */
	uint32_t n_outputs;
	char **vars;
	uint32_t n_vars;
	struct fs_where *where;
	uint32_t n_where, cap_where;
	uint32_t n_ops;            /* op + optional nodes: the pattern's size */
};

struct fs_patlib {
	struct fs_pattern *v;
	uint32_t n, cap;
};

void fs_patlib_init(struct fs_patlib *l);
/* Parses one pattern file's text (one pattern, maybe in several variants);
 * errors (file:line:col, PCRE2's message and offset for a bad regex) go to d.
 * Returns the errors added; a file with errors adds nothing. */
uint32_t fs_patlib_parse(struct fs_patlib *l, const char *path, const char *text, size_t len,
			 struct fs_diags *d);
/* Every *.pat of a directory, in name order. */
uint32_t fs_patlib_load_dir(struct fs_patlib *l, const char *dir, struct fs_diags *d);
/* First variant of the pattern called name, or -1. */
int32_t fs_patlib_find(const struct fs_patlib *l, const char *name);
void fs_patlib_release(struct fs_patlib *l);

/* ---- matching ------------------------------------------------------------------ */

enum fs_miss_cause {
	FS_MISS_OP,              /* a node has another op */
	FS_MISS_EXTRA,           /* an extra cast or view sits inside the chain */
	FS_MISS_CONSUMER,        /* an intermediate has a second consumer */
	FS_MISS_DTYPE,
	FS_MISS_LITERAL,         /* a literal argument or a `where` on a variable */
	FS_MISS_SHAPE,           /* rank or a `where` on dims */
	FS_MISS_ARITY,           /* argument count */
	FS_MISS_WIRING,          /* a value that should be shared is not, or two that must differ are one */
	FS_MISS_COMPUTED,        /* a weight input is computed in the graph */
	FS_MISS_COUNT
};
const char *fs_miss_name(enum fs_miss_cause c);

struct fs_match {
	uint32_t *bind;            /* graph node per pattern node (UINT32_MAX: absent optional / unbound) */
	uint32_t root;             /* graph node of the first output */
};

struct fs_miss {
	uint32_t root;             /* graph node where the attempt started */
	uint32_t depth;            /* op nodes matched before the failure, over all outputs' trees */
	uint8_t cause;
	uint32_t pnode;            /* pattern node that failed */
	uint32_t gnode;            /* graph node it failed on */
	uint32_t other;            /* cause detail: the second consumer, the cast's input, ... */
	uint32_t *bind;            /* the partial match */
};

struct fs_matches {
	const struct fs_pattern *p;
	struct fs_match *v;
	uint32_t n, cap;
	struct fs_miss *miss;      /* near misses: attempts that matched half the op nodes
				      (at least 2), or failed on an extra cast / a second consumer */
	uint32_t n_miss, cap_miss;
	struct fs_arena arena;
};

void fs_match_pattern(const struct fs_pattern *p, const struct fs_scan *s, const struct fs_graph *g,
		      struct fs_matches *out);
void fs_matches_release(struct fs_matches *m);
/* Variants of one pattern count as one pattern: drops each variant's match
 * that holds a node a larger variant's match holds. m is indexed like lib->v;
 * variants lists the n variants (lib indices) of the pattern. */
void fs_matches_merge_variants(const struct fs_patlib *lib, const uint32_t *variants, uint32_t n, uint32_t n_nodes,
			       struct fs_matches *m);

#endif
