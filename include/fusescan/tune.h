/*
 * tune.h: the persistent tuning cache. An entry records which tactic of a
 * generated kernel was fastest, keyed by
 *
 *   kernel  hash of the fallback kernel's source at the shape bucket
 *   bucket  the dynamic dims rounded up to powers of two ("tokens<=16384")
 *   device  name and compute capability; entries of another device are kept
 *           in the file but never used
 *   nvrtc   the compiler version
 *   policy  how tactics were timed
 *
 * A cuBLASLt product of a region (fuse/gemm.h) has entries of its own:
 * kernel hashes the product's description, bucket is "M=<rows>", nvrtc is
 * cuBLASLt's version, and the tactic is vec 1, threads 1, per = the index
 * of the heuristic's algorithm + 1.
 *
 * The file is JSON (fusescan.tuning/1); a save locks PATH.lock, re-reads
 * the file, merges (linear: a hash of this run's keys) and replaces it
 * atomically, so concurrent runs lose no one's entries. A damaged cache of
 * this fusescan's (its signature, then not JSON) is reported (warning),
 * ignored and replaced at the next save; any other file (foreign set) is
 * never replaced, and the CLI refuses it.
 *
 *   struct fs_tune_cache c;
 *   fs_tune_open(&c, NULL);                  // the default per-user file
 *   if (!fs_tune_lookup(&c, &key, &e)) ...   // hit: e.tactic
 *   ... fs_tune_reject(&c);                  // e.tactic not usable: a miss after all
 *   fs_tune_record(&c, &e); fs_tune_save(&c);
 *   fs_tune_close(&c);
 */
#ifndef FUSESCAN_TUNE_H
#define FUSESCAN_TUNE_H

#include <stdint.h>
#include <stdio.h>

/* How a generated kernel maps work to threads (fuse/codegen.h generates
 * under it). Row kernels (reductions): `threads` per row, `per` rows per
 * block; elementwise kernels: blocks of `threads`, `per` vector groups per
 * thread. Both: `vec` consecutive elements of the last dim per access (16
 * bytes for 8 bf16); `fast`: exp and tanh from the approximate instructions;
 * `l2`: L2 hints, 1 shared inputs kept and stores streamed, 2 shared inputs
 * kept and once-read inputs streamed (kernels/fused.cuh, FS_L2); `lin` (row
 * kernels whose rows share an input, an attention mask): rows in memory
 * order instead of the rows that read one part of the shared input
 * together (fuse/codegen.c, row_order). */
struct fs_tactic {
	uint16_t vec, threads, per, fast, l2, lin;
};

struct fs_tune_key {
	char kernel[20], bucket[64], device[160], nvrtc[32], policy[256];
};

struct fs_tune_entry {
	struct fs_tune_key key;
	struct fs_tactic tactic;
	char name[32];               /* "v8 t128 r1" */
	double ms, spread;           /* median and p90 - p10 of the chosen tactic */
	char runner_up[32];
	double runner_up_ms;
	uint32_t timed, failed;      /* tactics timed / that failed */
	char version[16], created[32];
};

struct fs_tune_cache {
	char path[1024];
	void *root, *mine;           /* cJSON: the file as read, and what this run recorded */
	/* Each kernel's lookup counts once: a hit where its cached tactic is
	 * used, else a miss (no entry, a re-tune, an entry rejected). */
	uint32_t hits, misses, recorded, other_device;
	int retune;                  /* fusescan tune: every lookup a miss, every kernel timed again */
	int in_cache_dir;            /* path is tuning.json of fs_cache_dir, made at the first save */
	int foreign;                 /* the file is there and no cache this fusescan may replace (warning says why) */
	char warning[1200];          /* a corrupt file, a failed save */
};

/* The per-user directory of fusescan's caches ($FUSESCAN_CACHE, else
 * ~/.cache/fusescan); nothing is created. 0, or -1 when there is no home. */
int fs_cache_dir(char *dir, size_t n);
/* The same, created where missing (and ~/.cache for the default): called
 * only just before a file is stored in it. */
int fs_cache_dir_make(char *dir, size_t n);
/* Opens path (NULL: tuning.json in fs_cache_dir). Never fails: a missing
 * file is an empty cache; an unreadable or corrupt one sets warning. */
void fs_tune_open(struct fs_tune_cache *c, const char *path);
/* The same from text in memory (fuzzing, tests); path is where a save goes. */
void fs_tune_open_text(struct fs_tune_cache *c, const char *path, const char *text, size_t len);
/* 0 and the entry on a hit (counted); -1 on a miss (counted), always
 * where retune is set. */
int fs_tune_lookup(struct fs_tune_cache *c, const struct fs_tune_key *k, struct fs_tune_entry *e);
/* The last hit's tactic was not used (it fails its check, or is not one the
 * caller has): counted as a miss instead, so the lookup still counts once. */
void fs_tune_reject(struct fs_tune_cache *c);
void fs_tune_record(struct fs_tune_cache *c, const struct fs_tune_entry *e);
/* Merges the recorded entries into the file as it is now and replaces it.
 * 0, or -1 with the reason in warning. */
int fs_tune_save(struct fs_tune_cache *c);
void fs_tune_close(struct fs_tune_cache *c);
/* PATH.lock beside the file path's links name: the lock saves take (malloc'd) */
char *fs_tune_lock_path(const char *path);
/* "tuning cache PATH: 1 hit, 0 misses, 0 recorded, 0 other-device entries ignored" */
void fs_tune_print_stats(const struct fs_tune_cache *c, FILE *out);

#endif
