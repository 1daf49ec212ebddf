/*
 * cli.h: private to cli/. Commands are declared in one table (main.c), each
 * in its own file; options are declared as tables and parsed by one shared
 * parser that also prints usage; outputs go through an atomic writer.
 */
#ifndef FUSESCAN_CLI_H
#define FUSESCAN_CLI_H

#include <stdio.h>

#include "fusescan/scan.h"

enum { FS_EXIT_OK = 0, FS_EXIT_GATE = 1, FS_EXIT_INPUT = 2 };

enum fs_opt_kind { FS_OPT_FLAG, FS_OPT_STRING, FS_OPT_CHOICE, FS_OPT_LIST };

/* FS_OPT_LIST: a repeatable option's values, in order (free v when done). */
struct fs_strlist {
	const char **v;
	uint32_t n, cap;
};

struct fs_option {
	const char *name;            /* long name without "--" */
	char short_name;             /* 0 if none */
	enum fs_opt_kind kind;
	const char *arg;             /* argument placeholder for usage */
	const char *help;
	void *dest;                  /* int* for flags/choices, const char** for strings,
					struct fs_strlist* for lists */
	const char *const *choices;  /* FS_OPT_CHOICE: NULL-terminated */
};

struct fs_command {
	const char *name;
	int (*run)(const struct fs_command *cmd, int argc, char **argv);
	const char *synopsis;        /* "[options] PATH..." */
	const char *summary;         /* one line */
	const char *prog;            /* argv[0]: fusescan as the user invoked it (set by main) */
};

/* Parses options, leaving positional arguments (in order) at argv[0..*npos).
 * Prints a usage error and returns -1 on a bad option; returns 1 after
 * printing help for --help; 0 otherwise. */
int fs_opts_parse(const struct fs_command *cmd, const struct fs_option *opts,
		  int argc, char **argv, int *npos);
void fs_opts_usage(const struct fs_command *cmd, const struct fs_option *opts, FILE *out);
/* An integer option's value in lo..hi into *out (left alone when text is
 * NULL). 0, or -1 after saying what it wants. */
int fs_opt_int(const struct fs_command *cmd, const char *name, const char *text, long long lo, long long hi,
	       long long *out);
/* A size in bytes, with an optional K, M, G or T (powers of 1024), in
 * lo..hi into *out (left alone when text is NULL). 0, or -1 after saying
 * what it wants. */
int fs_opt_size(const struct fs_command *cmd, const char *name, const char *text, long long lo, long long hi, long long *out);
/* A comma-separated list of increasing integers in lo..hi, at most max of
 * them, into out[0..*n) (left alone when text is NULL). 0, or -1 after
 * saying what it wants. */
int fs_opt_int_list(const struct fs_command *cmd, const char *name, const char *text, long long lo, long long hi,
		    int64_t *out, uint32_t max, uint32_t *n);
/* No path given: says so with the usage; 1 then, else 0. */
int fs_opts_no_input(const struct fs_command *cmd, const struct fs_option *opts, int npos);

/* Output: stdout for NULL or "-", else fs_atomic (a temporary file renamed
 * over the target on commit; a device or FIFO written in place). Open and
 * commit say what failed, with the path, and return -1. */
struct fs_out {
	FILE *f;              /* stdout, or a.f */
	struct fs_atomic a;
};

int fs_out_open(struct fs_out *o, const char *path);
int fs_out_commit(struct fs_out *o);   /* 0 ok, -1 on error (message printed) */
/* Commits when the writer succeeded, else discards the output (saying so when
 * the write itself failed); 0, or -1. */
int fs_out_finish(struct fs_out *o, int failed);
/* An output directory written whole (--out, --emit, --scaffold): its files
 * go to a private directory beside it (DIR.tmp.XXXXXX, `stage`) and move in
 * by fs_outdir_publish once the command has succeeded; fs_outdir_abort
 * removes them, and the directory too when this command made it and it is
 * still empty, so a failing command writes nothing. A lock on the directory,
 * held from open to publish, refuses a second fusescan writing it meanwhile.
 * Open and publish: 0, or -1 after saying why. */
struct fs_outdir {
	char *path;   /* the directory, as given (no trailing '/') */
	char *stage;  /* where its files are written meanwhile */
	int fd;       /* the directory, locked */
	int made;     /* this command made it */
};
int fs_outdir_open(struct fs_outdir *o, const struct fs_command *cmd, const char *opt, const char *path);
int fs_outdir_publish(struct fs_outdir *o, const struct fs_command *cmd);
void fs_outdir_abort(struct fs_outdir *o);
/* Whether path names the directory o writes (then its stage is shared). */
int fs_outdir_same(const struct fs_outdir *o, const char *path);

/* Flushes stdout: 0, or -1 after saying which file the write failed on. */
int fs_stdout_check(void);
/* The inputs of a command by identity (guard.c): no output may be one of
 * them, lie inside an input directory or, a directory, hold an input. Add
 * every file and directory the command reads (what: "the --log file"; a
 * path that does not exist is not read and not added); then check each
 * output before anything is written: 0, or -1 after saying why. */
struct fs_guard {
	struct fs_guarded *v;
	uint32_t n, cap;
};
void fs_guard_add(struct fs_guard *g, const char *what, const char *path);
void fs_guard_add_scan(struct fs_guard *g, const struct fs_scan *s);
int fs_guard_file(const struct fs_guard *g, const struct fs_command *cmd, const char *opt, const char *path);
int fs_guard_dir(const struct fs_guard *g, const struct fs_command *cmd, const char *opt, const char *path);
void fs_guard_release(struct fs_guard *g);

/* Reads every input path into a new scan and checks -o against everything
 * read: the guard's inputs (g, may be NULL) and the scan's. NULL after
 * saying why when the output would write an input. */
struct fs_scan *fs_cli_read(const struct fs_command *cmd, char **paths, int n, struct fs_guard *g, const char *out_path);

int fs_cmd_scan(const struct fs_command *cmd, int argc, char **argv);
int fs_cmd_discover(const struct fs_command *cmd, int argc, char **argv);
int fs_cmd_match(const struct fs_command *cmd, int argc, char **argv);
int fs_cmd_fuse(const struct fs_command *cmd, int argc, char **argv);
int fs_cmd_tune(const struct fs_command *cmd, int argc, char **argv);
int fs_cmd_render(const struct fs_command *cmd, int argc, char **argv);
int fs_cmd_diff(const struct fs_command *cmd, int argc, char **argv);

#endif
