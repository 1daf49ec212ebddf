/*
 * buckets.h (private to fuse/): the fused kernel for every token count.
 * Serving runs one graph at every token count; the kernels take the dump's
 * symbolic dims at run time, and the tactic is chosen per bucket, as
 * TensorRT-LLM's AutoTuner does (gen_tuning_buckets / map_to_tuning_buckets):
 * the region is bound at each bucket's token count, its kernels run and
 * checked there, and the fused one tuned; a token count then takes the
 * smallest bucket at least as large. A bucket of at most
 * FS_GRAPH_MAX_TOKENS tokens, or whose region moves under FS_GRAPH_MAX_BYTES
 * (its inputs and outputs: 50 us at 3 TB/s), is timed as replays of CUDA
 * graphs of FS_GRAPH_CALLS calls (launching is a large part of its cost, as
 * under serving's graphs), a larger one launch by launch; the policy is in
 * the tuning cache's key. With --emit, every bucket's kernel is written
 * (fuse/emit.h).
 */
#ifndef FUSESCAN_BUCKETS_H
#define FUSESCAN_BUCKETS_H

#include "fusescan/numerics.h"
#include "prog.h"

#include <stdio.h>

enum { FS_GRAPH_CALLS = 20, FS_GRAPH_MAX_TOKENS = 256 };
#define FS_GRAPH_MAX_BYTES 150e6

/* whether the region q, bound at `tokens`, is timed in CUDA graphs */
int fs_buckets_graphed(const struct prog *q, int64_t tokens);

/* p: the region at the run's own sizes; r: its numerics so far (the GPU
 * result says whether tuning can run; r->buckets and r->emitted are filled). */
void fs_buckets_run(const struct prog *p, const uint32_t *nodes, uint32_t n, const struct fs_numerics_opts *o, uint64_t seed,
		    struct fs_numerics *r);

/* The bucket table of a report, and its JSON (into the cJSON object parent). */
void fs_buckets_print(const struct fs_numerics *r, FILE *out);
void fs_buckets_json(const struct fs_numerics *r, void *parent);

/* numerics.c: a tactic's errors pass the verdict's bound (ctx: the fs_numerics) */
int fs_numerics_check_tactic(void *ctx, const struct fs_errors *unfused, const struct fs_errors *fused, char *why, size_t n);

#endif
