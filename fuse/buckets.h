/*
 * buckets.h (private to fuse/): the fused kernel for every token count.
 * Serving runs one graph at every token count; the kernels take the dump's
 * symbolic dims at run time, and the tactic is chosen per bucket, as
 * TensorRT-LLM's AutoTuner does (gen_tuning_buckets / map_to_tuning_buckets):
 * the region is bound at each bucket's token count, its kernels run and
 * checked there, and the fused one tuned; a token count then takes the
 * smallest bucket at least as large. Every bucket is timed as replays of
 * CUDA graphs, as serving replays its steps and as scripts/bench_torch.py
 * times the op, of as many calls as fs_gpu_graph_calls gives for what the
 * region moves (its inputs and outputs). Launch by launch, a kernel's time
 * carries the gaps and ramps between launches and ranks tactics apart from
 * the graphed op's (SwiGLU at 2048 tokens on an H200: every tactic 45.4-46.2
 * us, +-0.2, in graphs 42.2 us, +-0.02, as the op reads; `v4 b128 e1 fast
 * l2i`, the pick launch by launch on an H100, read 0.947x torch.compile
 * through the op). The policy is in the tuning cache's key. With --emit,
 * every bucket's kernel is written (fuse/emit.h).
 */
#ifndef FUSESCAN_BUCKETS_H
#define FUSESCAN_BUCKETS_H

#include "emit.h"
#include "fusescan/site_types.h"
#include "prog.h"

#include <stdio.h>

/* the calls in a timed CUDA graph of the region q (bound at a bucket's
 * tokens); 1: launch by launch */
uint32_t fs_buckets_graph_calls(const struct prog *q);

/* A token count's bucket: the first power of two at least as large. */
int64_t fs_bucket_round(int64_t tokens);

/* The buckets' programs, and those --emit takes (a tuned bucket whose plans
 * pass, or an untuned one with its heuristic tactic), kept until the verdict
 * decides whether anything is emitted. */
struct fs_bucket_set {
	struct prog *q;                 /* the region bound at each bucket (but the run's own size, which is p) */
	uint32_t nb;
	struct fs_emit_bucket eb[FS_MAX_BUCKETS];
	uint32_t ne;
};

/* p: the site at the run's own sizes; r: its result so far (the GPU's says
 * whether tuning can run; r->buckets is filled). */
void fs_buckets_run(const struct prog *p, const struct fs_site *site, const struct fs_site_opts *o, uint64_t seed,
		    struct fs_site_result *r, struct fs_bucket_set *set);
void fs_bucket_set_release(struct fs_bucket_set *set);

#endif
