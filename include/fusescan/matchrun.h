/*
 * matchrun.h: `fusescan match`: every selected pattern on every dump, the
 * AutoDeploy-style summary lines, near-miss explanations, and the CI gates
 * (--expect, --baseline) and the ad.log cross-check (--log).
 *
 *   struct fs_match_run *r = fs_match_run(scan, &lib, names, n_names, &diags);
 *   r->cat = &catalog;                          // what each AD transform inserts
 *   fs_match_log_read(r, "run/ad.log", &diags); // --log, before the gates read it
 *   fs_match_gate_expect(r, "expect.txt", &diags);
 *   fs_match_check_log(r);
 *   fs_match_text(r, stdout);
 *   fs_match_run_free(r);
 */
#ifndef FUSESCAN_MATCHRUN_H
#define FUSESCAN_MATCHRUN_H

#include <stdio.h>

#include "fusescan/adlog.h"
#include "fusescan/pattern.h"

#define FS_MATCH_SCHEMA "fusescan.match/1"

/* A pattern name and its variants in the library. */
struct fs_pgroup {
	const char *name;
	uint32_t *variants;   /* indices into the library */
	uint32_t n_variants;
	uint32_t size;        /* the largest variant's op count: overlap priority */
};

/* One distinct graph, matched once; modules with identical graphs share it. */
struct fs_mgraph {
	const struct fs_graph *g;
	uint32_t module;      /* first module holding it */
	struct fs_matches *m; /* per library pattern (variant) */
	uint32_t *matches;    /* per group: matches of all its variants */
	uint32_t *kept;       /* per group: after cross-pattern priority */
	struct fs_overlap {
		uint32_t group, root, winner, winner_root;
	} *overlaps;
	uint32_t n_overlaps, cap_overlaps;
	uint32_t layers;      /* inferred layer count, 0 if unknown */
};

struct fs_gate {
	int ok;
	char *check;          /* what was checked */
	char *message;        /* why it failed / what it saw */
};

struct fs_gates {
	struct fs_gate *v;
	uint32_t n, cap, failed;
};

/* A run's log as the gates read it: its primary entries (the rank that
 * dumps) mapped to the run's dumps in order, by stage and transform. */
struct fs_match_log {
	const struct fs_adlog *log; /* &fs_match_run.log (--log), or &own; NULL: none */
	struct fs_adlog own;        /* the log beside the run, read when a gate needs it */
	int32_t *entry_of_file;     /* per file of the run: its entry, -1 for none */
	int32_t *file_of_entry;     /* per entry: its file, -1 for none (or not primary) */
	int state;                  /* 0 not looked at, 1 mapped, -1 none or unreadable */
};

struct fs_catalog;

struct fs_match_run {
	const struct fs_scan *s;
	const struct fs_patlib *lib;
	struct fs_pgroup *groups;
	uint32_t n_groups;
	struct fs_mgraph *graphs;
	uint32_t n_graphs;
	uint32_t *graph_of_module; /* module -> index into graphs */
	int explain;               /* group to explain, or -1 */
	struct fs_gates gates;
	struct fs_adlog log;       /* --log, when given */
	int32_t log_run;           /* the run the log belongs to, -1 if none */
	struct fs_match_log *logs; /* per run */
	uint8_t *runs;             /* per module: the root, or a module it calls (what runs) */
	const struct fs_catalog *cat; /* optional: the ops each AD transform inserts */
};

/* The library compiled into fusescan (patterns/, embedded at build time). */
void fs_patlib_load_builtin(struct fs_patlib *lib, struct fs_diags *d);

/* Groups the library by name (only `names` when n_names > 0; an unknown name
 * is an error in diags) and matches every graph. NULL on an unknown name. */
struct fs_match_run *fs_match_run(const struct fs_scan *s, const struct fs_patlib *lib,
				  const char *const *names, uint32_t n_names, struct fs_diags *d);
void fs_match_run_free(struct fs_match_run *r);
int32_t fs_match_group(const struct fs_match_run *r, const char *name);
uint32_t fs_match_count(const struct fs_match_run *r, uint32_t module, uint32_t group);

/* Gates: each adds results to r->gates; bad input (unreadable or malformed
 * files, a number out of range, an unknown name, an AD transform's count
 * with no log to read it from) goes to d and returns -1. --expect names a
 * pattern (its matches in what runs) or an AD transform (its log entries). The _text and
 * _json forms take the file's bytes (path names it in messages). */
int fs_match_gate_expect(struct fs_match_run *r, const char *path, struct fs_diags *d);
int fs_match_gate_expect_text(struct fs_match_run *r, const char *path, const char *text, size_t len, struct fs_diags *d);
/* path: a saved `match --format json` report, a dump or a run directory */
int fs_match_gate_baseline(struct fs_match_run *r, const char *path, const struct fs_patlib *lib,
			   struct fs_diags *d);
int fs_match_gate_baseline_json(struct fs_match_run *r, const char *path, const char *text, size_t len, struct fs_diags *d);
/* --log: reads the log and ties it to its run (the one whose ad.log it is,
 * or the only run); -1 on bad input. Then --expect reads AD transform
 * counts from it, and fs_match_check_log cross-checks it: every dump that
 * changed the graph needs its entry, every entry its dump in order, and a
 * count of N needs N new ops (the ops r->cat says the transform inserts,
 * where it says). */
int fs_match_log_read(struct fs_match_run *r, const char *path, struct fs_diags *d);
void fs_match_check_log(struct fs_match_run *r);

int fs_match_text(const struct fs_match_run *r, FILE *out);
int fs_match_json(const struct fs_match_run *r, FILE *out);
int fs_match_junit(const struct fs_match_run *r, FILE *out);

#endif
