/*
 * catalog.h: the kernel catalog (kernels/catalog.txt: fused ops, the chains
 * they implement, constraints, evidence) and the index of a user's source
 * tree (--kernels-from DIR) that finds custom-op and transform registrations.
 *
 *   struct fs_catalog c; fs_catalog_init(&c, scan);
 *   fs_catalog_load(&c, "kernels/catalog.txt", &diags);   // file:line:col errors
 *   fs_catalog_index_tree(&c, "TensorRT-LLM/", &diags);    // PCRE2 scan of sources
 *   int e = fs_catalog_match(&c, keys, n_keys, views, n_views);
 *   fs_catalog_release(&c);
 */
#ifndef FUSESCAN_CATALOG_H
#define FUSESCAN_CATALOG_H

#include "fusescan/adconfig.h"
#include "fusescan/diag.h"
#include "fusescan/scan.h"

enum fs_kind {
	FS_KIND_ELEMENTWISE,
	FS_KIND_NORM,
	FS_KIND_GEMM_EPILOGUE,
	FS_KIND_ATTENTION_ADJACENT,
	FS_KIND_LAYOUT,
	FS_KIND_MULTI_OUTPUT,
	FS_KIND_HORIZONTAL_GEMM,
	FS_KIND_HORIZONTAL_ELEMENTWISE, /* sibling chains reading one input */
	FS_KIND_REDUCTION,  /* a reduction whose result is not combined with what it reduced */
	FS_KIND_COUNT
};

const char *fs_kind_name(enum fs_kind k);

/* One alternative form of a chain: a multiset of canonical op keys (struct
 * fs_op.key, interned in the scan's string table, sorted) plus views that must
 * be present. */
struct fs_chain {
	uint32_t *ops;      /* sorted syms */
	uint32_t n_ops;
	uint32_t *views;    /* required index-only views */
	uint32_t n_views;
	uint32_t root;      /* key of the chain's output op (listed last) */
	uint32_t line;
};

/* Where a kernel, wrapper or transform was found in a source tree. Symbols:
 * "ns::op" (a registered op), "transform:key" (a registered transform),
 * "wrapper:name" (a Python function calling a registered op; detail: that
 * op, "ns::op") and "alias:key" (a transform that runs another one under
 * its name; detail: that one, "mlir_elementwise_fusion"). */
struct fs_evidence {
	char *path;
	uint32_t line;
	char *symbol;
	char *detail;        /* NULL unless said above */
};

/* A transform's default in AutoDeploy's config: enabled, listed with
 * `enabled: false`, or not listed (it runs only where a config adds it). */
enum fs_tdefault { FS_TDEF_ON, FS_TDEF_OFF, FS_TDEF_UNLISTED, FS_TDEF_COUNT };
const char *fs_tdefault_name(enum fs_tdefault d);

/* A GELU's form: the dump never prints approximate= (a keyword argument), so
 * only the user can state it (--gelu). */
enum fs_gelu { FS_GELU_UNSTATED, FS_GELU_TANH, FS_GELU_ERF };

struct fs_catalog_entry {
	char *name;
	enum fs_kind kind;
	struct fs_chain *chains;
	uint32_t n_chains, cap_chains;
	uint32_t *kernels;       /* op keys ("auto_deploy.flashinfer_rms_norm") */
	uint32_t n_kernels;
	uint32_t *subsumed;      /* ops that absorb the chain with the ops around it
				    (attention absorbs its softmax): no drop-in replacement */
	uint32_t n_subsumed;
	uint32_t *reference;     /* AutoDeploy's reference ops for the chain (torch_*):
				    matched, but they run it unfused; never a fused kernel */
	uint32_t n_reference;
	uint32_t *wrappers;      /* Python functions AutoDeploy inserts that call the
				    first kernel ("python.name": `<function name at 0x...>`) */
	uint32_t n_wrappers;
	uint32_t *transforms;    /* AutoDeploy transform names */
	uint8_t *tdefault;       /* per transform: enum fs_tdefault in today's tree */
	char **off_why;          /* per transform: why AD keeps it off (off_because), or NULL */
	uint32_t n_transforms;
	struct fs_want *wants;   /* what a transform's pattern matches (wants = ...) */
	uint32_t n_wants;
	uint32_t literals;       /* FS_LIT_* (graph.h) */
	uint8_t norm_first;      /* multi-output kernels return (norm, sum), not file order */
	uint8_t gelu_tanh;       /* its kernels compute the tanh GELU only (gelu = tanh) */
	char *dtypes, *constraints, *evidence;
	uint32_t line;
};

/* wants = T: a -> b|c -> d; note: the chain transform T's pattern matches,
 * each step an op key or alternatives, each step reading the one before. */
enum { FS_WANT_STEPS = 8, FS_WANT_ALTS = 4 };
struct fs_want {
	uint32_t transform;                          /* interned name */
	uint32_t alt[FS_WANT_STEPS][FS_WANT_ALTS];   /* op keys, 0 past the last */
	uint32_t n_steps;
	char *text, *note;                           /* the steps as written; the note or NULL */
};

struct fs_patlib;

/* The model registries a tree may hold, by where (the first one naming
 * --model is read): config/model_registry_internal/, config/model_registry/,
 * examples/auto_deploy/model_registry/. */
enum { FS_TREE_REGISTRIES = 3 };

struct fs_catalog {
	struct fs_scan *scan;    /* whose string table keys are interned in */
	/* Patterns that confirm names (owned; NULL: none): a region whose ops
	 * match an entry's chain as a multiset is named by it only if a match of a
	 * pattern declaring `catalog <entry>` covers the region (match/confirm.c). */
	struct fs_patlib *confirm;
	struct fs_catalog_entry *e;
	uint32_t n, cap;
	struct fs_evidence *found;   /* registrations found by fs_catalog_index_tree */
	uint32_t n_found, cap_found;
	uint32_t files_indexed;
	char *tree_default;        /* the tree's config/default.yaml, or NULL */
	char *tree_registry[FS_TREE_REGISTRIES]; /* its models.yaml files, or NULL */
	char *tree_user_dir;       /* examples/auto_deploy/model_registry/configs of the tree, or NULL */
	struct fs_adconfig *cfg;   /* the effective config (owned), or NULL: the catalog's defaults */
	const char *model;         /* --model (not owned), or NULL */
	uint8_t gelu;              /* enum fs_gelu: what the user stated */
};

void fs_catalog_init(struct fs_catalog *c, struct fs_scan *s);
/* Parses catalog text; errors (file:line:col) go to d. Returns errors added. */
uint32_t fs_catalog_parse(struct fs_catalog *c, const char *name, const char *text, size_t len,
			  struct fs_diags *d);
uint32_t fs_catalog_load(struct fs_catalog *c, const char *path, struct fs_diags *d);
/* Indexes *.py, *.cpp, *.cu, *.cc, *.h, *.hpp, *.cuh under dir for
 * torch.library.custom_op / torch.library.define / TORCH_LIBRARY + m.def /
 * TransformRegistry.register registrations. */
uint32_t fs_catalog_index_tree(struct fs_catalog *c, const char *dir, struct fs_diags *d);

/* ---- what the tree says (match/srctree.c) ---- */

/* Records a registration or wrapper found at path:line (copied). */
void fs_catalog_add_evidence(struct fs_catalog *c, const char *path, uint32_t line, const char *sym, const char *detail);
/* Registrations whose symbol is `sym` ("auto_deploy::flashinfer_rms_norm",
 * "fuse_add_rms_norm"); returns the first index >= from, or -1. */
int32_t fs_catalog_find_evidence(const struct fs_catalog *c, const char *sym, uint32_t from);
/* Wrappers and aliases in one indexed file, and where its config files are (called by the index). */
void fs_srctree_index_text(struct fs_catalog *c, const char *path, const char *text, size_t len);
/* Whether an op key ("auto_deploy.torch_rmsnorm", "python.wrapper") is
 * usable: registered in the indexed tree (a wrapper: calling a registered
 * op), or any op when no tree was indexed. The evidence index, or -1 for
 * "not registered"; -2 when there is no tree. */
int32_t fs_catalog_registered(const struct fs_catalog *c, uint32_t key);
/* What an entry recommends: its first usable kernel, else the first usable
 * op that absorbs it; an entry without ops, its first registered transform;
 * nothing for a tanh-GELU entry where the user stated erf.
 * The key is interned in the scan (0: nothing usable). *wrapper: the usable
 * wrapper over that kernel, or 0. */
uint32_t fs_catalog_pick(const struct fs_catalog *c, const struct fs_catalog_entry *e, uint32_t *wrapper);
/* The effective config (match/adconfig.c): the tree's config/default.yaml,
 * the files its model registry lists for `model` (NULL: none), then the
 * user's files in order, deep-merged; errors to d. Nothing to merge: c->cfg
 * stays NULL. */
void fs_catalog_configure(struct fs_catalog *c, const char *const *files, uint32_t n, const char *model,
			  const char *config_id, struct fs_diags *d);
/* A transform's default: the effective config's where it says (s filled,
 * s->layer its layer), else the catalog's (s->layer UINT32_MAX); a tree's
 * default.yaml not listing it is FS_TDEF_UNLISTED. */
enum fs_tdefault fs_catalog_tdefault(const struct fs_catalog *c, const struct fs_catalog_entry *e, uint32_t i,
				     struct fs_adsetting *s);
/* Why AD keeps the transform off, when it is off: the comment on the line
 * that turned it off, else the catalog's off_because; NULL when none is said. */
const char *fs_catalog_off_reason(const struct fs_catalog *c, const struct fs_catalog_entry *e, uint32_t i,
				  const struct fs_adsetting *s, enum fs_tdefault t);
/* The alias evidence of a transform ("alias:T"), or -1. */
int32_t fs_catalog_alias(const struct fs_catalog *c, uint32_t transform);
/* Why transform w->transform would not match this chain (nodes of g, file
 * order): the first step its pattern wants that the graph does not have,
 * in a sentence into buf; 0 then, 1 when the whole pattern is there. */
struct fs_graph;
int fs_catalog_want_check(const struct fs_catalog *c, const struct fs_want *w, const struct fs_graph *g,
			  const uint32_t *nodes, uint32_t n, char *buf, size_t len);
/* The entry's wants for its transform ti, checked against the chain: 1 with
 * the sentence in buf, 0 when the catalog states no wants for it. */
int fs_catalog_why_not(const struct fs_catalog *c, const struct fs_catalog_entry *e, uint32_t ti,
		       const struct fs_graph *g, const uint32_t *nodes, uint32_t n, char *buf, size_t len);
/* Whether AD's transform ti cannot help this chain: the log (NULL: none) shows
 * it ran and matched nothing (buf then adds the precondition the chain
 * fails), or, the log silent on it, AD keeps it off for a stated reason. */
struct fs_adlog;
int fs_catalog_ad_blocked(const struct fs_catalog *c, const struct fs_adlog *log, const struct fs_catalog_entry *e,
			  uint32_t ti, const struct fs_graph *g, const uint32_t *nodes, uint32_t n, char *buf, size_t len);
/* The first entry at index `from` or later one of whose chains is exactly
 * this multiset (sorted keys) with its required views among `views`; -1 if
 * none. Several entries can hold one multiset (rotate-half and interleaved
 * RoPE once decomposed): callers that confirm a name go on from the next. */
int32_t fs_catalog_match(const struct fs_catalog *c, const uint32_t *keys, uint32_t n,
			 const uint32_t *views, uint32_t n_views, uint32_t from);
void fs_catalog_release(struct fs_catalog *c);

#endif
