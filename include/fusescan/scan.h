/*
 * scan.h: reading dumps into graphs. A struct fs_scan holds everything read
 * in one invocation: run directories, dump files, their GraphModules and the
 * interned symbols, ops and shapes those share. Identical module bodies are
 * detected by a content hash (confirmed byte for byte) and parsed once.
 *
 *   struct fs_scan *s = fs_scan_new();
 *   fs_scan_path(s, "dumps/");                // run dir, file, or dir of runs
 *   for (uint32_t i = 0; i < s->n_modules; i++) use(s->modules[i].graph);
 *   fs_diags_print(&s->diags, stderr);
 *   fs_scan_free(s);
 */
#ifndef FUSESCAN_SCAN_H
#define FUSESCAN_SCAN_H

#include <stddef.h>
#include <stdint.h>

#include "fusescan/base.h"
#include "fusescan/diag.h"
#include "fusescan/graph.h"

/* The AutoDeploy stages, in run order; file names are split against them. */
#define FS_STAGES(X)            \
	X("factory")            \
	X("export")             \
	X("post_export")        \
	X("pattern_matcher")    \
	X("sharding")           \
	X("weight_load")        \
	X("post_load_fusion")   \
	X("cache_init")         \
	X("visualize")          \
	X("export_onnx")        \
	X("compile")

/* One GraphModule section of one dump file. */
struct fs_module {
	uint32_t file;            /* index into fs_scan.files */
	uint32_t name;            /* interned: "(root)", "submod_0", ... */
	uint32_t line;            /* line of its '# GraphModule:' header (or 1st node) */
	struct fs_graph *graph;   /* shared with `same_as` when identical */
	uint32_t same_as;         /* module whose graph this is (itself if parsed) */
	uint32_t n_errors;        /* errors recorded while parsing it */
};

/* One file given on the command line or found in a run directory. */
struct fs_dumpfile {
	char *path;               /* as opened */
	const char *base;         /* file name part of path */
	uint32_t run;             /* index into fs_scan.runs, UINT32_MAX if none */
	int64_t number;           /* NNN prefix, -1 if the name has none */
	uint32_t stage;           /* interned; header wins over the file name */
	uint32_t transform;       /* interned */
	int32_t declared_modules; /* '# GraphModules found: N', -1 if absent */
	uint32_t first_module, n_modules;
	uint32_t n_errors;
	uint64_t size;            /* bytes */
};

/* A directory of dumps: a timeline of transforms. */
struct fs_run {
	char *dir;
	char *log;                /* path of ad.log (or another *.log), or NULL */
	uint32_t first_file, n_files; /* files of a run are contiguous, NNN order */
};

struct fs_skipped {
	char *path;
	char *reason;
};

struct fs_scan {
	struct fs_strtab strs;
	struct fs_types types;
	struct fs_op *ops;        /* op 0 is the empty op (placeholders, externs) */
	uint32_t n_ops, cap_ops;
	uint32_t *op_of_target;   /* target sym -> op id + 1 */
	uint32_t cap_op_of_target;

	struct fs_dumpfile *files;
	uint32_t n_files, cap_files;
	struct fs_module *modules;
	uint32_t n_modules, cap_modules;
	struct fs_run *runs;
	uint32_t n_runs, cap_runs;
	struct fs_skipped *skipped;
	uint32_t n_skipped, cap_skipped;
	struct fs_diags diags;

	uint64_t bytes_read;      /* all dump bytes read */
	uint64_t bytes_parsed;    /* module bytes actually parsed (not deduplicated) */

	struct fs_scan_priv *priv; /* parser state: name bindings, dedupe index */
};

/* A file or directory the scan read, by identity (links followed). */
struct fs_read {
	uint64_t dev, ino;
	uint32_t path;            /* interned: the path it was first read as */
	uint8_t dir;
};

/* Every file and directory read (a run's log is named by its fs_run): what
 * no command may write (cli/guard.c). */
const struct fs_read *fs_scan_reads(const struct fs_scan *s, uint32_t *n);

struct fs_scan *fs_scan_new(void);
void fs_scan_free(struct fs_scan *s);

/* Reads a dump file, a run directory, or a directory of run directories.
 * Errors go to s->diags; returns the number of errors this call added. */
uint32_t fs_scan_path(struct fs_scan *s, const char *path);

/* Parses an in-memory dump as if it were file `name` (tests, fuzzing). */
uint32_t fs_scan_buffer(struct fs_scan *s, const char *name, const char *data, size_t len);

/* Call nodes of all modules of a file. */
uint32_t fs_dumpfile_nodes(const struct fs_scan *s, const struct fs_dumpfile *f);
/* 1 if two files hold the same graphs (identical bodies share one graph). */
int fs_dumpfiles_identical(const struct fs_scan *s, const struct fs_dumpfile *a,
			   const struct fs_dumpfile *b);
/* Occurrences of each op (indexed by op id) in a dump file, all its modules;
 * free() it. */
uint32_t *fs_dumpfile_op_counts(const struct fs_scan *s, const struct fs_dumpfile *f);

/* Op-table flags (FS_OPF_*) of a canonical op key ("unsqueeze", "cast",
 * "auto_deploy.torch_rmsnorm"), or -1 if the table has no row for it. */
int fs_op_key_flags(const struct fs_scan *s, const char *key, size_t n);

/* The position of parameter `name` in call n's schema (scan/opsig.def), or
 * -1: no schema, or none of that name. */
int fs_op_param(const struct fs_scan *s, const struct fs_node *n, const char *name);
/* Whether call n's printed arguments fit its op's schema (scan/opsig.def:
 * the AutoDeploy ops read by position): 1 when they do or the op has no
 * schema there, 0 when not, the first misfit said in why. */
int fs_op_args_fit(const struct fs_scan *s, const struct fs_graph *g, const struct fs_node *n, char *why,
		   size_t len);

static inline const char *fs_scan_str(const struct fs_scan *s, uint32_t sym)
{
	return fs_strtab_str(&s->strs, sym);
}

static inline const struct fs_op *fs_scan_op(const struct fs_scan *s, uint32_t op)
{
	return &s->ops[op];
}

static inline const struct fs_shape *fs_scan_shape(const struct fs_scan *s, uint32_t shape)
{
	return &s->types.shapes[shape];
}

/* The op class of a call node's op (placeholders / externs: FS_OPC_UNKNOWN). */
static inline enum fs_op_class fs_op_class_of(const struct fs_scan *s, uint32_t op)
{
	return (enum fs_op_class)s->ops[op].cls;
}

/* scan/inline.c: the graph of a dump whose root GraphModule calls other
 * GraphModules of the same file, each call_module node replaced by the
 * called module's nodes (one level); NULL when nothing could be inlined.
 * *n_inlined: calls inlined. The caller frees it (fs_graph_free). */
struct fs_graph *fs_scan_inline(const struct fs_scan *s, uint32_t file, uint32_t *n_inlined);

/* The largest value a symbolic dim is bound to (--tokens, --dims): sizes
 * are products of dims, and their sums saturate rather than wrap. */
#define FS_MAX_DIM INT32_MAX

/* scan/bind.c: symbol bindings, for the cost model and the numerics check.
 * fs_bind_default binds the first symbolic dim of the first placeholder that
 * has any to 1 (batch) and its last one to `tokens`; fs_bind_parse reads "s72=1,s70=4096": each name a symbolic dim of
 * some shape of the scan, bound once, to 1..FS_MAX_DIM (else -1, with why).
 * Both return the count. */
uint32_t fs_bind_default(const struct fs_scan *s, const struct fs_graph *g, int64_t tokens,
			 struct fs_binding *out, uint32_t max);
int fs_bind_parse(const struct fs_scan *s, const char *text, struct fs_binding *out, uint32_t max, char *why, size_t n_why);
/* The symbols of the graph's tensor shapes that b leaves unbound: their
 * count, the first max of them in out (their sizes cannot be costed). */
uint32_t fs_unbound_syms(const struct fs_scan *s, const struct fs_graph *g, const struct fs_binding *b, uint32_t nb,
			 uint32_t *out, uint32_t max);
/* Bytes of a typed value, or -1 if a dim is unknown or unbound. */
int64_t fs_type_bytes(const struct fs_scan *s, const struct fs_type *t,
		      const struct fs_binding *b, uint32_t nb);

#endif
