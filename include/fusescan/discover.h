/*
 * discover.h: fusescan's main job (`fusescan PATH...`): choose the graph to
 * analyse in each run (its last dump, or --dump) and each file given on its
 * own, mine it, gather evidence (catalog, source tree, ad.log, timeline) and
 * follow each candidate's count across the run's transforms; then report it
 * as text, versioned JSON (fusescan.discover/1) or Markdown.
 *
 *   struct fs_discover_opts o = {.tokens = 8192, .catalog = "kernels/catalog.txt"};
 *   struct fs_discovery *d = fs_discover(scan, &o);   // diagnostics in scan->diags
 *   fs_discover_text(d, stdout);
 *   fs_discovery_free(d);
 */
#ifndef FUSESCAN_DISCOVER_H
#define FUSESCAN_DISCOVER_H

#include <stdio.h>

#include "fusescan/adlog.h"
#include "fusescan/catalog.h"
#include "fusescan/mine.h"

#define FS_DISCOVER_SCHEMA "fusescan.discover/1"

/* The most symbols --dims binds (each a symbolic dim of the dumps). */
#define FS_DISCOVER_BIND 16

struct fs_discover_opts {
	const char *catalog;       /* catalog file */
	const char *kernels_from;  /* source tree to index, or NULL */
	const char *const *ad_configs; /* --ad-config files, merged in order over the rest */
	uint32_t n_ad_configs;
	const char *model;         /* --model: the registry entry whose files are merged, or NULL */
	const char *config_id;     /* --config-id: which of the model's entries, or NULL */
	const char *dump;          /* "NNN" or a file name: the dump to analyse in a run */
	const struct fs_binding *bind; /* --dims as fs_bind_parse read it (n_bind of them), or NULL */
	uint32_t n_bind;
	int64_t tokens;            /* with batch 1 when bind is NULL */
	uint32_t top;              /* candidates per graph in reports, 0 = all */
	uint8_t gelu;              /* enum fs_gelu: the model's GELU as the user stated it */
	uint8_t inline_calls;      /* a root calling its file's other GraphModules is analysed
				      as one graph (fs_scan_inline), for reports: sites then
				      name no one module, so a rewrite cannot take them */
};

/* The most MLIR kernels an analysis traces, and the distinct ops it names for each. */
enum { FS_MLIR_KERNELS = 64, FS_MLIR_OPS = 16 };

/* A kernel of AutoDeploy's MLIR pass (auto_deploy.mlir_fused_<hash>) in an
 * analysed graph, and what it took the place of: in the dump before the one
 * it first appears in, the chain ending at the node of its name, back to the
 * values the kernel still reads (match/mlirsrc.c). */
struct fs_mlir_kernel {
	uint32_t op;               /* index into scan->ops: its full target */
	uint32_t count;            /* nodes calling it */
	uint32_t n_inputs;         /* tensors the first one reads */
	uint32_t file;             /* the dump it first appears in (scan file), or UINT32_MAX */
	uint32_t before;           /* the dump before that one, or UINT32_MAX: none in the run */
	uint32_t n_replaced;       /* nodes of the chain it took the place of; 0: unknown */
	uint32_t ops[FS_MLIR_OPS]; /* their distinct ops (scan->ops), file order */
	uint32_t n_ops;
};

/* FP8 quantization sites (match/quant.c): what wrote the value a quantized
 * product quantizes, and how the product quantizes it. */
enum fs_quant_form { FS_QF_RMSNORM, FS_QF_ADD_RMSNORM, FS_QF_SWIGLU, FS_QF_GEGLU, FS_QF_RELU2, FS_QF_OTHER, FS_QF_COUNT };
enum fs_quant_flavour {
	FS_QV_AD,          /* an AutoDeploy FP8 linear with a static per-tensor input scale */
	FS_QV_PLAIN,       /* (x / s).clamp(-448, 448).to(float8) written out (plain export) */
	FS_QV_FINEGRAINED, /* a fine-grained FP8 linear: per token, 128-channel groups, dynamic */
	FS_QV_COUNT
};
const char *fs_quant_form_name(enum fs_quant_form f);
const char *fs_quant_flavour_name(enum fs_quant_flavour v);

/* The most quantization sites an analysis keeps. */
enum { FS_QUANT_SITES = 4096 };

/* One (value, scale) pair: the readers that quantize one value with one scale. */
struct fs_quant_site {
	uint32_t value;            /* the quantized value (node, views skipped) */
	uint32_t scale;            /* its scale's node, or UINT32_MAX (dynamic) */
	uint32_t reader;           /* the first reader: the FP8 linear, or the plain chain's cast */
	uint32_t n_readers;        /* readers with this scale */
	uint32_t n_other;          /* readers of the value that are no quantization (and the graph's output) */
	uint32_t launches;         /* kernels the fusion saves: each reader's quantization */
	int64_t bytes;             /* bytes saved (docs/fp8.md), -1 unknown */
	uint8_t form;              /* enum fs_quant_form */
	uint8_t flavour;           /* enum fs_quant_flavour */
};

/* One analysed graph. */
struct fs_analysis {
	uint32_t module;           /* index into scan->modules */
	uint32_t run;              /* UINT32_MAX for a file given on its own */
	struct fs_mine *mine;      /* mine->g: the module's graph, or the inlined one */
	struct fs_graph *inlined;  /* owned: the root with its call_modules inlined, or NULL */
	uint32_t n_inlined;        /* call_module nodes inlined */
	struct fs_binding bind[FS_DISCOVER_BIND];
	uint32_t n_bind;
	uint32_t unbound[8];       /* symbols of its shapes left unbound: sizes that need them are not costed */
	uint32_t n_unbound;        /* all of them (the first 8 in unbound) */
	struct fs_mlir_kernel *mlir; /* the MLIR kernels it calls (the first FS_MLIR_KERNELS) */
	uint32_t n_mlir;
	struct fs_quant_site *quant; /* its FP8 quantization sites, reader order (the first FS_QUANT_SITES) */
	uint32_t n_quant;
};

/* The FP8 quantization sites of analysis a's mined graph. */
void fs_quant_trace(const struct fs_catalog *cat, struct fs_analysis *a);

/* AutoDeploy's transform that fuses site q's quantization into the kernel
 * writing its value, or NULL where AD has none; *tdef its enum fs_tdefault in
 * the effective config, or -1 where the catalog does not declare it. */
const char *fs_quant_transform(const struct fs_catalog *c, const struct fs_quant_site *q, int *tdef);

/* The MLIR kernels analysis a's graph calls, each traced back to what it took the place of. */
void fs_mlir_trace(const struct fs_scan *s, struct fs_analysis *a);

/* How a candidate's count fell for good at a dump (its first fall that the
 * run's last dump does not recover from), read from the graphs on either
 * side and what the catalog says of the ops that came in. */
enum fs_evo_how {
	FS_EVO_KEPT,      /* never fell for good */
	FS_EVO_FUSED,     /* a fused kernel (a catalog entry's kernels or wrappers) took its place */
	FS_EVO_REFERENCE, /* AutoDeploy's reference op (torch_*) took its place: the same work, unfused */
	FS_EVO_FORM,      /* the same chain in another form (a candidate of its name rose): still unfused */
	FS_EVO_GONE       /* no fused op, reference op or other form took its place */
};

/* One candidate of a run's evolution: one row per candidate id. */
struct fs_evo_row {
	char id[80], name[64];
	uint64_t sig;
	int32_t entry;             /* catalog entry, or -1 */
	uint8_t how;               /* enum fs_evo_how */
	uint32_t at;               /* the file (index in the run) where it fell, how != KEPT */
	uint32_t op;               /* FUSED / REFERENCE: the op key that came in */
	uint32_t now;              /* FORM: the row it became */
};

/* Candidate counts across a run: rows are candidate ids, columns the run's files. */
struct fs_evolution {
	uint32_t run;
	struct fs_evo_row *rows;
	uint32_t n_rows;
	uint32_t *counts;          /* n_rows x run->n_files */
};

enum { FS_DISCOVER_TMP_MAX = 4096 };

struct fs_discovery {
	struct fs_scan *scan;
	struct fs_catalog cat;
	struct fs_adlog *logs;     /* per run */
	struct fs_analysis *a;
	uint32_t n_a, cap_a;
	struct fs_evolution *evo;  /* per run */
	uint32_t top;
	const char *catalog;       /* --catalog (not owned), or NULL: the commands a report
				      suggests repeat it */
	const char *prog;          /* the command those call (not owned): fusescan as the
				      user invoked it (argv[0]), or NULL for "fusescan" */
	const char *tmp;           /* the folder their outputs go under (not owned, at most
				      FS_DISCOVER_TMP_MAX bytes): $TMPDIR, or NULL for /tmp */
};

/* The catalog compiled into fusescan (kernels/catalog.txt), or `path`. */
void fs_catalog_load_default(struct fs_catalog *c, const char *path, struct fs_diags *d);

/* NULL only when nothing could be analysed at all (errors in scan->diags). */
struct fs_discovery *fs_discover(struct fs_scan *scan, const struct fs_discover_opts *o);
void fs_discovery_free(struct fs_discovery *d);
/* The symbols left unbound, comma-separated. */
void fs_unbound_text(const struct fs_scan *s, const struct fs_analysis *a, char *buf, size_t n);

/* Each returns 0, or -1 if writing failed. */
int fs_discover_text(const struct fs_discovery *d, FILE *out);
int fs_discover_json(const struct fs_discovery *d, FILE *out);
int fs_discover_markdown(const struct fs_discovery *d, FILE *out);

#endif
