/*
 * gpu_time.c: timing on the GPU (gpu_run.h): things run interleaved round
 * after round in a shuffled order, between events or as replays of CUDA
 * graphs, medians and their 95% intervals; the device's copy bandwidth; the
 * policy a tuning-cache entry records. Calls nothing else of fuse/gpu*.c.
 */
#include "gpu_run.h"
#include "rand.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

uint32_t fs_gpu_graph_calls(double bytes)
{
	if (bytes < FS_GRAPH_CALL_BYTES)
		return FS_GRAPH_CALLS;
	double calls = FS_GRAPH_BYTES / bytes;
	return calls < 1 ? 1 : calls > FS_GRAPH_CALLS ? FS_GRAPH_CALLS : (uint32_t)calls;
}

static int cmp_float(const void *a, const void *b)
{
	float x = *(const float *)a, y = *(const float *)b;
	return x < y ? -1 : x > y;
}

/* c->pairs buffer pairs of c->n bytes each: 0, or -1 with the error in
 * g->error (what was allocated is freed by copies_free either way) */
int fs_gpu_copies_alloc(struct run *R, struct copies *c)
{
	int rc = 0;
	for (uint32_t i = 0; i < c->pairs && !rc; i++)
		rc = fs_cuda_check(&R->c, R->c.cuMemAlloc(&c->src[i], c->n), "cuMemAlloc", R->g->error, sizeof(R->g->error)) ||
		     fs_cuda_check(&R->c, R->c.cuMemAlloc(&c->dst[i], c->n), "cuMemAlloc", R->g->error, sizeof(R->g->error));
	return rc ? -1 : 0;
}

void fs_gpu_copies_free(struct run *R, struct copies *c)
{
	for (uint32_t i = 0; i < c->pairs; i++) {
		if (c->src[i])
			R->c.cuMemFree(c->src[i]);
		if (c->dst[i])
			R->c.cuMemFree(c->dst[i]);
	}
}

int fs_gpu_run_copy(struct run *R, const void *what, uint32_t r)
{
	const struct copies *c = what;
	CK(R->c.cuMemcpyDtoDAsync(c->dst[r % c->pairs], c->src[r % c->pairs], c->n, R->stream));
	return 0;
}

/* the median of x[0..n) (sorted in place) and its distribution-free 95%
 * interval's ends: ranks n/2 -+ 0.98 sqrt(n) */
void fs_gpu_median_interval(float *x, uint32_t n, double *median, double *lo, double *hi)
{
	qsort(x, n, sizeof(float), cmp_float);
	double h = 0.98 * sqrt((double)n);
	int64_t a = (int64_t)floor(n / 2.0 - h), b = (int64_t)ceil(n / 2.0 + h);
	a = a < 0 ? 0 : a, b = b > (int64_t)n - 1 ? (int64_t)n - 1 : b;
	*median = x[n / 2], *lo = x[a], *hi = x[b];
}

/* The order of k things in round r, drawn by a Fisher-Yates shuffle seeded
 * by the round (no thing keeps one place, one predecessor). */
static void shuffled(uint32_t *order, uint32_t k, uint64_t r)
{
	for (uint32_t j = 0; j < k; j++) {
		uint32_t at = (uint32_t)(fs_mix((r << 32) | j) % (j + 1));
		order[j] = order[at], order[at] = j;
	}
}

/* Each of what[0..k-1] captured in `m` CUDA graphs of `calls` runs each
 * (input copies rotated within it), for timing as serving replays small
 * kernels: what[j]'s are exec[j * m ...]; NULL where a capture fails
 * (g->error says why). Captured round-robin, every thing's i-th graph in
 * an order drawn afresh for each i: a graph's time at decode sizes follows
 * its place in the capture order (all of one thing's graphs captured
 * together read up to 6% off another's, measured in bench_torch.py's A/A
 * control; round-robin and shuffled, within 1%). */
static void **capture(struct run *R, run_fn one, const void *const *what, uint32_t k, uint32_t m, uint32_t calls)
{
	void **exec = fs_xcalloc((size_t)k * m, sizeof(void *));
	uint32_t *order = fs_xcalloc(k, sizeof(uint32_t));
	int rc = 0;
	for (uint32_t i = 0; i < k * m && !rc; i++) {
		if (i % k == 0) /* seeds apart from the timing rounds' */
			shuffled(order, k, UINT32_MAX - i / k);
		uint32_t j = order[i % k] * m + i / k;
		void *graph = NULL;
		rc = fs_cuda_check(&R->c, R->c.cuStreamBeginCapture(R->stream, 2 /* relaxed */), "cuStreamBeginCapture", R->g->error,
				   sizeof(R->g->error));
		for (uint32_t c = 0; c < calls && !rc; c++)
			rc = one(R, what[j / m], c);
		if (fs_cuda_check(&R->c, R->c.cuStreamEndCapture(R->stream, &graph), "cuStreamEndCapture", rc ? NULL : R->g->error,
				  rc ? 0 : sizeof(R->g->error)))
			rc = -1;
		if (!rc)
			rc = fs_cuda_check(&R->c, R->c.cuGraphInstantiate(&exec[j], graph, 0), "cuGraphInstantiate", R->g->error,
					   sizeof(R->g->error));
		if (graph)
			R->c.cuGraphDestroy(graph);
	}
	free(order);
	for (uint32_t j = 0; j < k * m && rc; j++)
		if (exec[j])
			R->c.cuGraphExecDestroy(exec[j]);
	if (rc) {
		free(exec);
		return NULL;
	}
	return exec;
}

/* Times k things, what[0..k-1], interleaved: each of `reps` rounds (after 5
 * warm-up rounds) runs every one once, on the round's input copy
 * (rotated), so a drift of the device's clocks or temperature falls on all
 * of them alike; the order is drawn afresh each round (what runs just
 * before a small kernel moves its time by a few percent: a fixed order would
 * give each its own bias). Every run sits between two events, all enqueued back to
 * back and read after the last: the GPU never waits for the host between
 * runs, so a run's time is the device's, without the host's launch latency.
 * With R->calls > 1 (fs_gpu_graph_calls: how serving replays a step, and
 * how bench_torch.py times the op) a run is the replay of a CUDA graph of
 * that many calls, and a time is per call;
 * each thing is captured FS_GRAPH_INSTANCES times and round r replays its
 * graph r mod FS_GRAPH_INSTANCES: two captures of the same calls differ by
 * up to 4% at decode sizes, alike round after round (measured on an H200):
 * one capture each would hand that to the comparison, and more rounds do
 * not average it; more captures, captured round-robin (capture), do. With
 * `before`, each run follows a run of it (captured alike, as graphs of as
 * many calls, launched outside the events): the company a run keeps. With
 * `rounds` (k x reps), each thing's time per call in every round, in round
 * order: paired comparisons. */
int fs_gpu_time_set(struct run *R, run_fn one, const void *const *what, uint32_t k, uint32_t reps, const struct side *before,
		    struct timing *out, float *rounds)
{
	uint32_t n = (reps + 5) * k, calls = R->calls > 1 && one != fs_gpu_run_copy ? R->calls : 1;
	uint32_t m = calls > 1 ? FS_GRAPH_INSTANCES : 1;
	void **exec = calls > 1 ? capture(R, one, what, k, m, calls) : NULL;
	if (calls > 1 && !exec)
		return -1;
	void **pre = before ? capture(R, before->one, &before->what, 1, m, calls) : NULL;
	if (before && !pre) {
		for (uint32_t j = 0; exec && j < k * m; j++)
			R->c.cuGraphExecDestroy(exec[j]);
		free(exec);
		return -1;
	}
	void **ev = fs_xcalloc(2 * (size_t)n, sizeof(void *));
	float *t = fs_xmalloc(reps * sizeof(float));
	int rc = 0;
	for (uint32_t i = 0; i < 2 * n && !rc; i++)
		rc = fs_cuda_check(&R->c, R->c.cuEventCreate(&ev[i], 0), "cuEventCreate", R->g->error, sizeof(R->g->error));
	uint32_t *order = fs_xcalloc(k, sizeof(uint32_t)), last = 0;
	for (uint32_t i = 0; i < n && !rc; i++) {
		if (i % k == 0) /* a new round */
			shuffled(order, k, i / k);
		uint32_t j = order[i % k], e = i - i % k + j; /* what[j]'s events of this round */
		last = e;
		if (pre)
			rc = fs_cuda_check(&R->c, R->c.cuGraphLaunch(pre[i / k % m], R->stream), "cuGraphLaunch", R->g->error,
					   sizeof(R->g->error));
		if (!rc)
			rc = fs_cuda_check(&R->c, R->c.cuEventRecord(ev[2 * e], R->stream), "cuEventRecord", R->g->error, sizeof(R->g->error));
		if (!rc && exec)
			rc = fs_cuda_check(&R->c, R->c.cuGraphLaunch(exec[j * m + i / k % m], R->stream), "cuGraphLaunch", R->g->error,
					   sizeof(R->g->error));
		else if (!rc)
			rc = one(R, what[j], i / k);
		if (!rc)
			rc = fs_cuda_check(&R->c, R->c.cuEventRecord(ev[2 * e + 1], R->stream), "cuEventRecord", R->g->error,
					   sizeof(R->g->error));
	}
	free(order);
	if (!rc) /* the last run enqueued ends last */
		rc = fs_cuda_check(&R->c, R->c.cuEventSynchronize(ev[2 * last + 1]), "cuEventSynchronize", R->g->error, sizeof(R->g->error));
	for (uint32_t j = 0; j < k && !rc; j++) {
		for (uint32_t r = 0; r < reps && !rc; r++) {
			uint32_t i = (r + 5) * k + j;
			rc = fs_cuda_check(&R->c, R->c.cuEventElapsedTime(&t[r], ev[2 * i], ev[2 * i + 1]), "cuEventElapsedTime",
					   R->g->error, sizeof(R->g->error));
			t[r] /= (float)calls;
			if (rounds)
				rounds[(size_t)j * reps + r] = t[r];
		}
		if (rc)
			break;
		double med, lo, hi;
		fs_gpu_median_interval(t, reps, &med, &lo, &hi);
		out[j] = (struct timing){.ms = med, .spread = t[reps * 9 / 10 < reps ? reps * 9 / 10 : reps - 1] - t[reps / 10],
					 .ci = (hi - lo) / 2};
	}
	for (uint32_t i = 0; i < 2 * n; i++)
		if (ev[i])
			R->c.cuEventDestroy(ev[i]);
	for (uint32_t j = 0; exec && j < k * m; j++)
		R->c.cuGraphExecDestroy(exec[j]);
	for (uint32_t j = 0; pre && j < m; j++)
		R->c.cuGraphExecDestroy(pre[j]);
	free(exec);
	free(pre);
	free(ev);
	free(t);
	return rc ? -1 : 0;
}

/* Device-to-device copies of n bytes (2n moved each), timed like the
 * kernels, over enough buffer pairs to exceed twice the L2. */
int fs_gpu_copy_bandwidth(struct run *R, size_t n, int l2, double *gbs)
{
	struct copies c = {.n = n < 256 ? 256 : n};
	size_t pairs = (2 * (size_t)l2 + 2 * c.n - 1) / (2 * c.n);
	c.pairs = pairs < 1 ? 1 : pairs > 8 ? 8 : (uint32_t)pairs;
	struct timing tm = {0};
	const void *what = &c;
	int rc = fs_gpu_copies_alloc(R, &c);
	if (!rc)
		rc = fs_gpu_time_set(R, fs_gpu_run_copy, &what, 1, 20, NULL, &tm, NULL);
	fs_gpu_copies_free(R, &c);
	*gbs = rc ? 0 : 2.0 * (double)c.n / (tm.ms * 1e-3) / 1e9;
	return rc ? -1 : 0;
}

void fs_gpu_cache_key(const struct run *R, struct fs_tune_key *k)
{
	memset(k, 0, sizeof(*k));
	snprintf(k->kernel, sizeof(k->kernel), "%s", R->o->kernel_key ? R->o->kernel_key : "");
	snprintf(k->bucket, sizeof(k->bucket), "%s", R->o->bucket ? R->o->bucket : "");
	snprintf(k->device, sizeof(k->device), "%s", R->g->device);
	snprintf(k->nvrtc, sizeof(k->nvrtc), "%s", R->g->nvrtc);
	int at = snprintf(k->policy, sizeof(k->policy), "exact kernels; median of %u after 5 warm-up, all interleaved, inputs past 2x L2; %d finalists x %u interleaved, shuffled, fastest median",
			  R->o->reps, FS_FINALISTS, 4 * R->o->reps);
	if (R->calls > 1 && at > 0 && (size_t)at < sizeof(k->policy))
		snprintf(k->policy + at, sizeof(k->policy) - (size_t)at, "; graphs of %u calls, %d captures round-robin%s", R->calls,
			 FS_GRAPH_INSTANCES, R->calls >= FS_GRAPH_CALLS ? "; finalists in 3 companies, least worst ratio" : "");
}
