/*
 * site.h: --apply's check of one site, stage by stage. A site (a region's
 * nodes in file order) is bound to concrete shapes once (its program) and
 * that program is handed to each stage, which fills its own part of the
 * result:
 *
 *   CPU      (fuse/numerics.c) the region executed three ways from one
 *            op-semantics table (fuse/sem.def): reference (float64, casts to
 *            floating types ignored), unfused (eager PyTorch: every op's
 *            output rounded to its dumped dtype) and fused (fp32
 *            intermediates, rounded only where the region casts and at its
 *            outputs), on random inputs (never zeros), while its values fit
 *            `max_bytes`;
 *   GPU      (fuse/gpu.c) the same three as generated kernels, the fused one
 *            tuned, the reference checking the others on the device, so
 *            sizes beyond the CPU's budget are checked there alone;
 *   buckets  (fuse/buckets.c) the fused kernel tuned at every token count;
 *   emit     (fuse/emit.c) the op for deployment;
 *
 * and the verdict (fuse/verdict.c) is the worst check of every plan the run
 * would use: the fused error may be at most k x the unfused error plus a
 * per-dtype tolerance; NaN / Inf never pass. `triage` reruns the fused
 * execution with per-op rounding emulated and says whether a failure is
 * rounding or a bug. The reports are report/apply_text.c and apply_json.c.
 *
 *   struct fs_site_form form = {.gelu_tanh = 1};
 *   struct fs_site_opts o = {.tokens = 16, .seed = 1};
 *   struct fs_site_result *r = fs_xcalloc(1, sizeof(*r));
 *   if (fs_site_run(scan, graph, nodes, n, &form, &o, r, &diags) == 0)
 *       fs_site_report_text(r, stdout);
 *   fs_site_release(r);
 */
#ifndef FUSESCAN_SITE_H
#define FUSESCAN_SITE_H

#include "fusescan/diag.h"
#include "fusescan/graph.h"
#include "fusescan/scan.h"
#include "fusescan/site_types.h"

#include <stdio.h>

/* Runs every stage on the site (nodes in file order) into r (caller-owned,
 * released with fs_site_release). 0, or -1 with the reason in d (an op
 * without semantics, a shape that cannot be bound, a region the generator
 * does not take, nothing checked ...). */
int fs_site_run(const struct fs_scan *s, const struct fs_graph *g, const uint32_t *nodes, uint32_t n, const struct fs_site_form *form,
		const struct fs_site_opts *o, struct fs_site_result *r, struct fs_diags *d);
void fs_site_release(struct fs_site_result *r);
/* Whether the node is a view the kernels compute as index math that keeps
 * every dim of its input (transpose, permute, slice, unsqueeze, squeeze):
 * a region can read its input instead, every symbol still readable. */
int fs_site_is_view(const struct fs_scan *s, const struct fs_graph *g, uint32_t node);
/* The region's fused kernel at `tokens` as a key (a hash of its generated
 * source, 16 hex digits; of a region with matrix products, of the op --emit
 * writes for it): regions with one key run one kernel. 0, or -1 when no
 * kernel can be generated (then key is ""). nodes in file order. */
int fs_site_kernel_key(const struct fs_scan *s, const struct fs_graph *g, const uint32_t *nodes, uint32_t n, int gelu_tanh,
		       int64_t tokens, char key[20]);
/* Whether the generator takes the region at `tokens`: every kernel --apply would compile
 * generated, none compiled or run. 0 (it does, or the region's shapes do not bind at
 * `tokens`: nothing said), or -1 with why in d (one error). nodes in file order. */
int fs_site_generates(const struct fs_scan *s, const struct fs_graph *g, const uint32_t *nodes, uint32_t n, int gelu_tanh,
		      int64_t tokens, struct fs_diags *d);
/* The reports of a run (report/site_text.c, site_json.c): as text, and as a
 * cJSON object (cJSON *) owned by the caller. */
void fs_site_report_text(const struct fs_site_result *r, FILE *out);
void *fs_site_report_json(const struct fs_site_result *r);

#endif
