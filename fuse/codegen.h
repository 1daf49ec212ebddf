/*
 * codegen.h (private to fuse/): CUDA C for a program, the fused kernel or one
 * unfused op's kernel, under a tactic, with what a launch needs.
 */
#ifndef FUSESCAN_CODEGEN_H
#define FUSESCAN_CODEGEN_H

#include "fusescan/site_types.h" /* FS_MAX_TACTICS */
#include "fusescan/tune.h" /* struct fs_tactic */
#include "prog.h"

/* FS_VARIED: the fastest tactics of fs_tactics whose fs_tactic_variants the tuner times too */
enum { FS_KERNEL_MAX_PARAMS = 32, FS_TACTIC_VARIANTS = 3, FS_VARIED = 8,
       FS_FIRST_TACTICS = FS_MAX_TACTICS - FS_VARIED * FS_TACTIC_VARIANTS, FS_KERNEL_MAX_REQS = 8, FS_KERNEL_MAX_SYMS = 8 };

struct fs_kernel {
	char *source;                 /* a complete NVRTC translation unit; kernel fs_k */
	uint32_t n_params;            /* pointer parameters, in order */
	int32_t value[FS_KERNEL_MAX_PARAMS]; /* the value each one holds */
	uint8_t write[FS_KERNEL_MAX_PARAMS];
	uint8_t row;                  /* row kernel (reductions) or elementwise */
	int64_t cols;                 /* row length, or the smallest last dim written */
	int64_t vcols;                /* what every vector width must divide: cols, and with outputs of part of each
				       * row their widths too (gcd) */
	int64_t work;                 /* rows, or output elements */
	struct fs_tactic tactic;
	int64_t grid, block;
	int64_t bytes;                /* buffers read and written: the kernel's minimum traffic */
	uint8_t check;                /* a reference kernel: one more parameter, the fs_stats * it adds to */
	uint8_t transcendental;       /* computes exp or tanh: fast-math tactics differ */
	uint8_t reordered;            /* a row kernel whose rows run in another order than memory's (row_order) */
	/* The dump's symbolic dims are run-time parameters: after the pointers
	 * come the symbols' values (long long, the program's bindings in order),
	 * then each one's magic numbers for division (unsigned long long,
	 * fs_div_magic), then (a reference kernel) the fs_stats pointer. What a
	 * launcher at other symbol values needs: */
	uint32_t n_syms;
	int64_t sym_value[FS_KERNEL_MAX_SYMS]; /* the values this kernel was generated at */
	uint32_t n_req;                       /* requirements on the symbolic dims */
	struct fs_req {
		uint32_t dim; /* scan dims + 1 */
		uint16_t div; /* dim % div == 0; or, div 0: dim <= max */
		int64_t max;
	} req[FS_KERNEL_MAX_REQS];
	uint8_t index64;                      /* 64-bit indices; else the largest value must hold <= 2^30 elements */
	char most_py[1024];                   /* that value's elements, Python over the symbols */
	char grid_work_py[1024];              /* grid = ceil(work / grid_per), clamped to [1, 2^31 - 1] */
	int64_t grid_per;
};

/* What fs_codegen generates: the kernel (fp32 inside), the kernel rounding
 * every op's result to its dumped dtype as eager does (triage), or the
 * float64 reference of the region (casts ignored, as the CPU reference),
 * which does not store its outputs but compares them with a result under
 * test and adds the errors to an fs_stats (kernels/fused.cuh); REF_F64
 * reads that result as double (the CPU reference's values); REF_STORE
 * stores the reference's outputs in double instead (the operands of the
 * reference's later matrix products, fuse/gemm.h). EPILOGUE is the fused
 * kernel as the generated GEMM's epilogue (kernels/gemm_sm90.cuh): a device
 * function fs_epi of one output element pair, the products (p->member)
 * taken from the accumulators; its tactic must have vec 2. EXACT is the
 * kernel at exactly its symbols' values: every dim static (constants and
 * shifts instead of the run-time sizes and magic numbers), the same
 * parameters; what runs at a bucket's own size, so what the tuner times.
 * The last six are fused kernels only. */
enum fs_gen { FS_GEN_KERNEL, FS_GEN_EMULATE, FS_GEN_REF, FS_GEN_REF_F64, FS_GEN_REF_STORE, FS_GEN_EPILOGUE, FS_GEN_EXACT };
/* Whether a mode's kernel is a float64 reference (FS_GEN_REF, _F64, _STORE):
 * it computes in double and reads the products a region is given from their
 * float64 reference, where every other mode reads the fused plan's buffers.
 * A switch over every mode, so a new one is classified where it is added. */
int fs_gen_reference(enum fs_gen mode);

/* Values an unfused execution keeps in buffers: inputs and every op that
 * launches a kernel in eager PyTorch (views and dropout do not). */
int fs_codegen_buffered(const struct prog *p, int32_t v);

/* The fused kernel (only < 0) or the kernel of op `only`, under tactic t
 * (NULL: the fallback, valid for any shape; &fs_tactic_eager: eager's).
 * 0, or -1 with the reason in d (a tactic the shapes do not allow
 * included; the dump's file, line 0). */
int fs_codegen(const struct prog *p, int32_t only, enum fs_gen mode, const struct fs_tactic *t, struct fs_kernel *k,
	       struct fs_diags *d);
void fs_kernel_release(struct fs_kernel *k);
/* The magic numbers of division by d (1 <= d < 2^31) a kernel takes for
 * each symbol: m | l << 32, with l = ceil(log2 d) and
 * m = floor(2^32 (2^l - d) / d) + 1; then n / d = (umulhi(n, m) + n) >> l
 * for every n < 2^31 (kernels/fused.cuh, fs_udiv). */
uint64_t fs_div_magic(int64_t d);

/* A module drawing random inputs on the device (fuse/rand.h): one kernel
 * fs_fill_<f64|f32|bf16|f16|i64|i32|u8>(p, n, stream, kind) per storage
 * type. Owned by the caller. */
char *fs_codegen_fill(void);
/* A translation unit of float64 kernels: the template (fs_real double),
 * then `defines`, then kernels/`file` (embedded). Owned by the caller. */
char *fs_codegen_f64_source(const char *defines, const char *file);
/* The text of kernels/`name` (embedded in the binary), or "" where none. */
const char *fs_kernel_file(const char *name);
/* "unsigned short", "float", ...: the C type a buffer of dtype dt holds in
 * a kernel, or NULL for a dtype the kernels do not handle */
const char *fs_dt_ctype(uint8_t dt);
/* "bf16", "f32", ...: the suffix of the template's functions for a dtype */
const char *fs_dt_suffix(uint8_t dt);

/* The tactics worth timing for a kernel generated with the fallback (k),
 * the fallback first, then the vectorised ones, then (a kernel computing exp
 * or tanh) the vectorised ones with fast math. Returns how many, at most
 * FS_FIRST_TACTICS (room for the variants of the fastest). */
uint32_t fs_tactics(const struct fs_kernel *k, struct fs_tactic *out);
/* The variants of tactic t the tuner times where t is among the fastest of
 * fs_tactics': t under each L2 policy (the vectorised ones), and, a row
 * kernel whose rows share an input, with its rows in memory order. Returns
 * how many. */
uint32_t fs_tactic_variants(const struct fs_kernel *k, const struct fs_tactic *t, struct fs_tactic out[FS_TACTIC_VARIANTS]);
/* For unfused kernels: vectorised as eager's own kernels are (16-byte
 * accesses), or the fallback where the shapes do not allow it; fs_codegen
 * picks it from the shapes. */
extern const struct fs_tactic fs_tactic_eager;
/* "v8 t128 r2" */
void fs_tactic_name(const struct fs_tactic *t, int row, char *out, size_t n);

/* The tuning cache's kernel key (a hash of the fallback kernel generated at
 * bucket b) and bucket ("tokens<=b"). */
void fs_codegen_tuning_key(const struct prog *p, const uint32_t *nodes, uint32_t n, int64_t b, char *key, size_t kn,
			   char *bucket, size_t bn);

#endif
