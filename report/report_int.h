/*
 * report_int.h: private to report/. What the three discovery formats (text,
 * JSON, Markdown) say about a candidate is computed once here, so they never
 * disagree: the pattern, the existing kernel, the evidence lines, the
 * strengths / weaknesses / risks, and the evolution of a count across a run.
 * Also the helpers every JSON report shares.
 */
#ifndef FUSESCAN_REPORT_INT_H
#define FUSESCAN_REPORT_INT_H

#include <cjson/cJSON.h>

#include "fusescan/discover.h"

/* The "diagnostics" array of every JSON report. */
cJSON *fs_json_diagnostics(const struct fs_diags *d);
/* Prints root, frees it; 0, or -1 if writing failed. */
int fs_json_write(cJSON *root, FILE *out);

enum { LINE = 768, MAX_LINES = 24 }; /* a catalog line fits; longer ones are cut, saying so */

struct lines {
	char v[MAX_LINES][LINE];
	uint32_t n;
};

void fs_lines_add(struct lines *l, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* "cast -> pow -> mean -> ..." of the first instance's kernels (GEMMs for
 * horizontal candidates), file order. */
void fs_cand_pattern(const struct fs_discovery *d, const struct fs_analysis *a,
		     const struct fs_candidate *k, char *buf, size_t n);
/* What the candidate's entry recommends (fs_catalog_pick: with a tree, only
 * what it registers): a kernel, an op that absorbs it, or a transform; NULL. */
const char *fs_cand_kernel(const struct fs_discovery *d, const struct fs_candidate *k);
/* The library pattern that confirms the candidate's name (its count is the
 * candidate's pattern_matches, what `fusescan match -p` gives), or NULL. */
const char *fs_cand_count_pattern(const struct fs_discovery *d, const struct fs_candidate *k);
/* The Python wrapper AutoDeploy calls the picked kernel through, or NULL. */
const char *fs_cand_wrapper(const struct fs_discovery *d, const struct fs_candidate *k);
void fs_cand_evidence(const struct fs_discovery *d, const struct fs_analysis *a,
		      const struct fs_candidate *k, struct lines *out);
void fs_cand_assessment(const struct fs_discovery *d, const struct fs_analysis *a,
		        const struct fs_candidate *k, struct lines *out);
/* The recommendation with its reason, one line. */
void fs_cand_recommendation(const struct fs_discovery *d, const struct fs_candidate *k, char *buf, size_t n);
/* "001-014: 5, 015-035: 0  (replaced by reference op auto_deploy.torch_rmsnorm at 015
 * pattern_matcher/match_rmsnorm_pattern: ...)": the counts, then fs_evo_fall */
void fs_evo_summary(const struct fs_discovery *d, const struct fs_evolution *e, uint32_t row,
		    char *buf, size_t n);
/* How row's count fell for good (enum fs_evo_how in words: "fused at NNN stage/transform into
 * OP", "replaced by reference op OP at ...", "changed form at ...: now ID", "gone at ..."), or "". */
void fs_evo_fall(const struct fs_discovery *d, const struct fs_evolution *e, uint32_t row, char *buf, size_t n);
/* What an MLIR kernel took the place of: "replaced silu, mul at 002 stage/transform (2 nodes
 * read from FILE)", or "an MLIR kernel reading 2 tensors (why the ops are unknown)". */
void fs_mlir_text(const struct fs_discovery *d, const struct fs_mlir_kernel *k, char *buf, size_t n);
/* The FP8 quantization fusions of a graph (discover_quant.c): a text section, and the
 * JSON array "fp8_quant". */
void fs_quant_text(const struct fs_discovery *d, const struct fs_analysis *a, FILE *out);
cJSON *fs_quant_json(const struct fs_discovery *d, const struct fs_analysis *a);
/* Human-readable byte count: "1.5 GB", "302.0 MB", "4.1 kB", "12 B". */
const char *fs_human_bytes(int64_t b, char *buf, size_t n);
/* The bindings the cost model used ("s72=1 s70=8192"), and the symbols it left unbound. */
void fs_binding_text(const struct fs_discovery *d, const struct fs_analysis *a, char *buf, size_t n);

/* The summary table both formats open a graph's report with (its first
 * SUMMARY_ROWS candidates shown) and the commands they end with (for the
 * first NEXT_CANDIDATES of each of the first NEXT_DUMPS dumps with any):
 * discover_next.c. */
enum { SUMMARY_ROWS = 20, NEXT_CANDIDATES = 3, NEXT_DUMPS = 4 };

/* The candidates a graph's report shows (--top), and how many of them the table does. */
uint32_t fs_discover_cands_shown(const struct fs_discovery *d, const struct fs_analysis *a);
uint32_t fs_discover_summary_rows(const struct fs_discovery *d, const struct fs_analysis *a);

/* A row's cells beside the candidate's own fields (rank, name, instances,
 * launches_total, id): kernel is the existing kernel (or the op or
 * transform that absorbs the chain), else "generate" or "defer" as
 * recommended; saves is bytes_total, or "?" where not costed. */
struct summary_row {
	const char *kind, *kernel;
	char saves[32];
};
void fs_discover_summary_row(const struct fs_discovery *d, const struct fs_candidate *k, struct summary_row *r);

/* The commands to run next, shell comments and command lines, each after
 * indent; head before the first and tail after the last, nothing where no
 * graph has a candidate. Words that need it are quoted: a line pasted runs
 * as printed. */
void fs_discover_next_steps(const struct fs_discovery *d, const char *head, const char *indent, const char *tail, FILE *out);

#endif
