/*
 * guard.c: no command writes what it reads. Every input a command reads
 * (dumps and the directories they were found in, logs, expectations,
 * baselines, catalogs, pattern and source trees, approvals, the tuning
 * cache) is recorded by identity, device and inode with links followed;
 * before anything is written, each output is checked: a file output must not
 * be an input nor lie inside an input directory, and an output directory
 * must not be an input, lie inside an input directory, or hold an input.
 * Called by every command before its first write (docs/limits.md).
 */
#include "cli.h"

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

struct fs_guarded {
	uint64_t dev, ino;
	int dir;
	char *what, *path; /* for messages: "--log", and the path as given */
};

void fs_guard_add(struct fs_guard *g, const char *what, const char *path)
{
	struct stat st;
	if (!path || stat(path, &st) != 0) /* what does not exist is not read */
		return;
	FS_GROW(g->v, g->cap, g->n + 1);
	g->v[g->n++] = (struct fs_guarded){(uint64_t)st.st_dev, (uint64_t)st.st_ino, S_ISDIR(st.st_mode),
					    fs_xstrndup(what, strlen(what)), fs_xstrndup(path, strlen(path))};
}

void fs_guard_add_scan(struct fs_guard *g, const struct fs_scan *s)
{
	uint32_t n;
	const struct fs_read *r = fs_scan_reads(s, &n);
	for (uint32_t i = 0; i < n; i++) {
		const char *path = fs_scan_str(s, r[i].path);
		FS_GROW(g->v, g->cap, g->n + 1);
		const char *what = r[i].dir ? "the dump directory" : "the dump";
		g->v[g->n++] = (struct fs_guarded){r[i].dev, r[i].ino, r[i].dir, fs_xstrndup(what, strlen(what)),
						    fs_xstrndup(path, strlen(path))};
	}
	for (uint32_t i = 0; i < s->n_runs; i++)
		fs_guard_add(g, "the run's log", s->runs[i].log);
}

void fs_guard_release(struct fs_guard *g)
{
	for (uint32_t i = 0; i < g->n; i++) {
		free(g->v[i].what);
		free(g->v[i].path);
	}
	free(g->v);
	memset(g, 0, sizeof(*g));
}

static int32_t find(const struct fs_guard *g, const struct stat *st, int dirs_only)
{
	for (uint32_t i = 0; i < g->n; i++)
		if (g->v[i].dev == (uint64_t)st->st_dev && g->v[i].ino == (uint64_t)st->st_ino && (g->v[i].dir || !dirs_only))
			return (int32_t)i;
	return -1;
}

/* Calls until(g, st, arg) on real_dir (an existing directory's real path)
 * and each directory above it, up to the root; the first index it returns
 * that is not -1, or -1. */
static int32_t walk_up(const struct fs_guard *g, const char *real_dir,
		       int32_t (*until)(const struct fs_guard *, const struct stat *, const void *), const void *arg)
{
	char *p = fs_xstrndup(real_dir, strlen(real_dir));
	int32_t hit = -1;
	for (;;) {
		struct stat st;
		if (stat(p, &st) == 0 && (hit = until(g, &st, arg)) >= 0)
			break;
		char *slash = strrchr(p, '/');
		if (!slash || !p[1]) /* "/" done */
			break;
		slash[slash == p] = '\0'; /* "/a/b" -> "/a", "/a" -> "/" */
	}
	free(p);
	return hit;
}

static int32_t input_dir(const struct fs_guard *g, const struct stat *st, const void *arg)
{
	(void)arg;
	return find(g, st, 1);
}

/* The real path of the directory a new or existing output lands in: the
 * output itself when it is a directory (dir), else the directory of the
 * file its links name; NULL when that directory does not exist. */
static char *landing_dir(const char *path, int dir)
{
	char *target = fs_resolve_links(path), real[PATH_MAX];
	if (!target)
		return NULL;
	struct stat st;
	if (!(dir && stat(target, &st) == 0 && S_ISDIR(st.st_mode))) {
		char *slash = strrchr(target, '/');
		if (!slash)
			snprintf(target, strlen(target) + 1, ".");
		else
			slash[slash == target] = '\0';
	}
	char *r = realpath(target, real) ? fs_xstrndup(real, strlen(real)) : NULL;
	free(target);
	return r;
}

static int refuse(const struct fs_command *cmd, const char *opt, const char *path, const char *why,
		  const struct fs_guarded *in)
{
	fprintf(stderr, "fusescan %s: refusing to write %s %s: %s %s %s (no command writes what it reads: docs/limits.md)\n",
		cmd->name, opt, path, why, in->what, in->path);
	return -1;
}

/* The output is an input, or lands inside an input directory. */
static int check_place(const struct fs_guard *g, const struct fs_command *cmd, const char *opt, const char *path, int dir)
{
	struct stat st;
	int32_t i = stat(path, &st) == 0 ? find(g, &st, 0) : -1;
	if (i >= 0)
		return refuse(cmd, opt, path, "it is", &g->v[i]);
	char *land = landing_dir(path, dir);
	i = land ? walk_up(g, land, input_dir, NULL) : -1;
	free(land);
	return i >= 0 ? refuse(cmd, opt, path, "it lies inside", &g->v[i]) : 0;
}

int fs_guard_file(const struct fs_guard *g, const struct fs_command *cmd, const char *opt, const char *path)
{
	if (!path || !strcmp(path, "-"))
		return 0;
	return check_place(g, cmd, opt, path, 0);
}

static int32_t is_dir(const struct fs_guard *g, const struct stat *st, const void *arg)
{
	(void)g;
	const struct stat *d = arg;
	return st->st_dev == d->st_dev && st->st_ino == d->st_ino ? 0 : -1;
}

int fs_guard_dir(const struct fs_guard *g, const struct fs_command *cmd, const char *opt, const char *path)
{
	if (check_place(g, cmd, opt, path, 1))
		return -1;
	struct stat d;
	if (stat(path, &d) != 0 || !S_ISDIR(d.st_mode)) /* nothing lies inside what is not there */
		return 0;
	for (uint32_t i = 0; i < g->n; i++) { /* an input lying under the output directory */
		char real[PATH_MAX];
		if (realpath(g->v[i].path, real) && walk_up(g, real, is_dir, &d) >= 0) {
			fprintf(stderr, "fusescan %s: refusing to write %s %s: it holds %s %s (no command writes what it reads: "
					"docs/limits.md)\n", cmd->name, opt, path, g->v[i].what, g->v[i].path);
			return -1;
		}
	}
	return 0;
}
