/*
 * graph.h: fusescan's one IR. `scan/` builds it from dumps; every other layer
 * reads it (const). A graph is one GraphModule of one dump file: nodes in file
 * order, referenced by index; arguments as a flattened preorder tree; users in
 * CSR form with use counts; op identities, shapes and names interned in the
 * owning struct fs_scan so they compare as integers across graphs.
 *
 *   const struct fs_graph *g = m->graph;
 *   for (uint32_t i = 0; i < g->n_nodes; i++) {
 *       const struct fs_node *n = &g->nodes[i];
 *       if (n->kind == FS_NODE_CALL && fs_op_class_of(s, n->op) == FS_OPC_ELEMENTWISE) ...
 *   }
 */
#ifndef FUSESCAN_GRAPH_H
#define FUSESCAN_GRAPH_H

#include <stdint.h>

#include "fusescan/base.h"

/* ---- dtypes: (enum tail, printed text, bytes per element; 0 = not a tensor) */
#define FS_DTYPES(X)                                            \
	X(NONE, "", 0)                                          \
	X(F64, "torch.float64", 8)                              \
	X(F32, "torch.float32", 4)                              \
	X(F16, "torch.float16", 2)                              \
	X(BF16, "torch.bfloat16", 2)                            \
	X(F8E4M3, "torch.float8_e4m3fn", 1)                     \
	X(F8E4M3UZ, "torch.float8_e4m3fnuz", 1)                 \
	X(F8E5M2, "torch.float8_e5m2", 1)                       \
	X(F8E5M2UZ, "torch.float8_e5m2fnuz", 1)                 \
	X(F8E8M0, "torch.float8_e8m0fnu", 1)                    \
	X(F4X2, "torch.float4_e2m1fn_x2", 1)                    \
	X(C32, "torch.complex32", 4)                            \
	X(C64, "torch.complex64", 8)                            \
	X(C128, "torch.complex128", 16)                         \
	X(I64, "torch.int64", 8)                                \
	X(I32, "torch.int32", 4)                                \
	X(I16, "torch.int16", 2)                                \
	X(I8, "torch.int8", 1)                                  \
	X(U64, "torch.uint64", 8)                               \
	X(U32, "torch.uint32", 4)                               \
	X(U16, "torch.uint16", 2)                               \
	X(U8, "torch.uint8", 1)                                 \
	X(BOOL, "torch.bool", 1)                                \
	X(SYMINT, "SymInt", 0)                                  \
	X(SYMFLOAT, "SymFloat", 0)                              \
	X(SYMBOOL, "SymBool", 0)                                \
	X(PY_INT, "int", 0)                                     \
	X(PY_FLOAT, "float", 0)                                 \
	X(PY_BOOL, "bool", 0)                                   \
	X(PY_NONE, "NoneType", 0)                               \
	X(TUPLE, "tuple", 0)                                    \
	X(LIST, "list", 0)                                      \
	X(UNKNOWN, "unknown", 0)                                \
	X(NA, "N/A", 0)                                         \
	X(OTHER, "other", 0)

enum fs_dtype {
#define FS_X(e, text, size) FS_DT_##e,
	FS_DTYPES(FS_X)
#undef FS_X
	FS_DT_COUNT
};

const char *fs_dtype_name(enum fs_dtype d);
uint32_t fs_dtype_size(enum fs_dtype d);
/* Exact printed text -> dtype; FS_DT_OTHER when it is none of the table. */
enum fs_dtype fs_dtype_parse(const char *s, size_t n);

/* ---- op classes: one data table (scan/ops.def) maps each op to a class ---- */
#define FS_OP_CLASSES(X)                 \
	X(ELEMENTWISE, "elementwise")    \
	X(REDUCTION, "reduction")        \
	X(NORM, "norm")                  \
	X(CAST, "cast")                  \
	X(VIEW, "view")                  \
	X(GEMM, "gemm")                  \
	X(ATTENTION, "attention")        \
	X(INDEXING, "indexing")          \
	X(COLLECTIVE, "collective")      \
	X(FUSED, "fused")                \
	X(SIDE_EFFECT, "side_effect")    \
	X(CREATION, "creation")          \
	X(SYMBOLIC, "symbolic")          \
	X(UNKNOWN, "unknown")

enum fs_op_class {
#define FS_X(e, text) FS_OPC_##e,
	FS_OP_CLASSES(FS_X)
#undef FS_X
	FS_OPC_COUNT
};

const char *fs_op_class_name(enum fs_op_class c);

/* Op flags from the table. */
enum {
	FS_OPF_COMMUTATIVE = 1 << 0, /* operands 0 and 1 may be swapped */
	FS_OPF_INDEX_ONLY = 1 << 1,  /* view that moves no data (absorbable) */
	FS_OPF_NOFUSE = 1 << 2,      /* never part of a mined region (scans, sorts) */
	FS_OPF_SOFTMAX = 1 << 3,     /* softmax / log_softmax: attention's row normaliser */
	FS_OPF_SDPA_ARGS = 1 << 4,   /* attention(q, k, v, attn_mask, dropout_p, is_causal, ...): SDPA's
					arguments, none after them changing what the mask means */
};

/* An interned op target, split into namespace / name / overload. */
struct fs_op {
	uint32_t target;    /* full printed target text */
	uint32_t ns;        /* "aten", "auto_deploy", "builtins", "python", "" */
	uint32_t name;      /* "add", "torch_rmsnorm", "getitem", ... */
	uint32_t overload;  /* "Tensor", "default", "" for packets / callables */
	uint32_t key;       /* canonical key: aten ops by name ("mul"), casts as
			       "cast", others ns.name ("auto_deploy.torch_rmsnorm") */
	uint8_t cls;        /* enum fs_op_class */
	uint8_t flags;      /* FS_OPF_* */
	uint8_t known;      /* 1 if the op table has a row for it */
};

/* ---- shapes ---------------------------------------------------------------- */

/* A symbolic dim expression: symbols, integers, + - * // and parentheses. */
enum fs_expr_op { FS_EX_INT, FS_EX_SYM, FS_EX_ADD, FS_EX_SUB, FS_EX_MUL, FS_EX_FLOORDIV, FS_EX_NEG, FS_EX_MOD, FS_EX_MAX, FS_EX_MIN };

struct fs_expr {
	uint8_t op;       /* enum fs_expr_op */
	uint32_t sym;     /* FS_EX_SYM: interned symbol name */
	int64_t value;    /* FS_EX_INT */
	int32_t lhs, rhs; /* operand indices into the expr pool (-1 none) */
};

enum { FS_DIM_CONST = -1, FS_DIM_OPAQUE = -2 };

struct fs_dim {
	int64_t value;    /* valid when expr == FS_DIM_CONST */
	int32_t expr;     /* FS_DIM_CONST, FS_DIM_OPAQUE (text only) or expr root */
	uint32_t text;    /* interned printed text of this dim */
};

enum fs_shape_kind { FS_SHAPE_UNKNOWN, FS_SHAPE_SCALAR, FS_SHAPE_DIMS };

struct fs_shape {
	uint32_t text;     /* interned printed text ("s72xs70x4096", "?", "scalar") */
	uint8_t kind;      /* enum fs_shape_kind */
	uint8_t symbolic;  /* any dim not a constant */
	uint16_t rank;
	uint32_t dims;     /* first index into fs_types.dims */
};

/* Shape and expression pools, shared by all graphs of a scan. Shape 0 is the
 * unknown shape. Shapes are interned by their printed text. */
struct fs_types {
	struct fs_shape *shapes;
	uint32_t n_shapes, cap_shapes;
	struct fs_dim *dims;
	uint32_t n_dims, cap_dims;
	struct fs_expr *exprs;
	uint32_t n_exprs, cap_exprs;
	uint32_t *shape_of_text;   /* text sym -> shape id + 1 (0 = not parsed yet) */
	uint32_t cap_shape_of_text;
};

/* Symbol -> value bindings for evaluating dims (e.g. s72=1, s70=8192). */
struct fs_binding {
	uint32_t sym;
	int64_t value;
};

/* Evaluates expr; returns 0 and sets *out, or -1 if a symbol is unbound, the
 * dim is opaque, or arithmetic overflows / divides by zero. */
int fs_dim_eval(const struct fs_types *t, const struct fs_dim *d,
		const struct fs_binding *b, uint32_t nb, int64_t *out);

/* ---- graph ---------------------------------------------------------------- */

struct fs_type {
	uint32_t shape;   /* index into fs_types.shapes (0 = unknown) */
	uint8_t dtype;    /* enum fs_dtype */
};

enum fs_arg_kind {
	FS_ARG_NODE,   /* %name or a bare name inside a list; .node, .type */
	FS_ARG_INT,    /* .i */
	FS_ARG_FLOAT,  /* .f */
	FS_ARG_BOOL,   /* .i = 0/1 */
	FS_ARG_NONE,
	FS_ARG_DTYPE,  /* .type.dtype */
	FS_ARG_STR,    /* quoted or bare string literal; .text (unquoted content) */
	FS_ARG_LIST,   /* [a, b]; children follow in preorder */
	FS_ARG_TUPLE,  /* (a, b) */
};

struct fs_arg {
	uint8_t kind;      /* enum fs_arg_kind */
	uint32_t span;     /* entries in this subtree, itself included */
	uint32_t text;     /* interned printed text of this argument */
	uint32_t node;     /* FS_ARG_NODE: node index */
	struct fs_type type; /* FS_ARG_NODE: type printed at the reference */
	union {
		int64_t i;
		double f;
	};
};

/* Literal arguments by role: the ones a fused kernel takes after its tensor
 * inputs, found in a site by their role (the catalog states them per entry;
 * the rewrite keeps them, in this order). */
enum { FS_LIT_EPS = 1 << 0 /* the float added to a mean / sum before rsqrt */ };

enum fs_node_kind {
	FS_NODE_PLACEHOLDER, /* %x : shape : dtype */
	FS_NODE_CALL,        /* %x = target(args) : type */
	FS_NODE_EXTERN,      /* referenced but never defined: weight / buffer */
};

enum {
	FS_NODE_OUTPUT = 1 << 0,       /* named by the graph's output line */
	FS_NODE_SIDE_EFFECT = 1 << 1,  /* its op is side-effect-only */
};

struct fs_node {
	uint32_t name;     /* interned, without '%' */
	uint32_t op;       /* index into fs_scan ops; 0 for placeholder / extern */
	uint32_t line;     /* 1-based line of the definition (first use for externs) */
	uint8_t kind;      /* enum fs_node_kind */
	uint8_t flags;     /* FS_NODE_* */
	uint16_t n_out;    /* number of output types (multi-output > 1) */
	uint32_t out;      /* first index into graph->types */
	uint32_t args;     /* first index into graph->args (preorder) */
	uint32_t n_args;   /* preorder entries */
	uint32_t n_top;    /* top-level arguments */
	uint32_t users;    /* first index into graph->users */
	uint32_t n_users;  /* distinct consuming nodes */
	uint32_t n_real_users; /* excluding side-effect-only consumers */
};

struct fs_graph {
	struct fs_node *nodes;
	uint32_t n_nodes, cap_nodes;
	struct fs_arg *args;
	uint32_t n_args, cap_args;
	struct fs_type *types;
	uint32_t n_types, cap_types;
	uint32_t *users;           /* CSR, see fs_node.users */
	uint32_t *outputs;         /* node indices in the output line, in order */
	uint32_t n_outputs, cap_outputs;
	uint32_t n_calls, n_placeholders, n_externs;
	uint32_t output_line;      /* 0 if the graph has no output line */
	uint64_t hash;             /* content hash of the module body */
	uint32_t *origin;          /* per node: the module (scan->modules) it was copied from, in
				      a graph fs_scan_inline made; NULL in a module's own graph */
	uint32_t cap_origin;
};

/* Graph lifetime (the scan owns graphs it builds). */
void fs_graph_free(struct fs_graph *g);

#endif
