/*
 * output.c: inputs in, reports out. Reports are written to a temporary file
 * in the destination's directory and renamed over it only once complete, so
 * a reader never sees a half-written report and a failure leaves no debris;
 * a report never replaces one of the inputs.
 */
#define _POSIX_C_SOURCE 200809L
#include "cli.h"

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Where a failed open of path comes from, in a user's words (the directory
 * that is missing is the one of the file a link names). */
static void open_error(const char *path, int err)
{
	char *dir = fs_resolve_links(path);
	dir = dir ? dir : fs_xstrndup(path, strlen(path));
	char *slash = strrchr(dir, '/');
	struct stat st;
	if (slash)
		*slash = '\0';
	if (err == ENOENT && slash && slash != dir && stat(dir, &st) != 0)
		fprintf(stderr, "fusescan: cannot write %s: directory %s does not exist\n", path, dir);
	else
		fprintf(stderr, "fusescan: cannot write %s: %s\n", path, strerror(err));
	free(dir);
}

int fs_out_open(struct fs_out *o, const char *path)
{
	memset(o, 0, sizeof(*o));
	if (!path || !strcmp(path, "-")) {
		o->f = stdout;
		return 0;
	}
	if (fs_atomic_open(&o->a, path) == 0) {
		o->f = o->a.f;
		return 0;
	}
	open_error(path, errno);
	return -1;
}

int fs_out_commit(struct fs_out *o)
{
	if (!o->a.f)
		return fs_stdout_check();
	char *path = fs_xstrndup(o->a.path, strlen(o->a.path));
	int r = fs_atomic_commit(&o->a);
	if (r)
		fprintf(stderr, "fusescan: %s: write failed: %s\n", path, strerror(errno));
	free(path);
	memset(o, 0, sizeof(*o));
	return r;
}

int fs_stdout_check(void)
{
	if (fflush(stdout) == 0 && !ferror(stdout))
		return 0;
	int err = errno ? errno : EIO;
	char name[PATH_MAX];
	ssize_t n = readlink("/proc/self/fd/1", name, sizeof(name) - 1);
	if (n > 0 && name[0] == '/')
		name[n] = '\0';
	else
		snprintf(name, sizeof(name), "standard output");
	fprintf(stderr, "fusescan: %s: write failed: %s\n", name, strerror(err));
	clearerr(stdout); /* said once */
	return -1;
}

int fs_out_finish(struct fs_out *o, int failed)
{
	if (!failed)
		return fs_out_commit(o);
	if (!o->a.f) /* stdout: a failed write is said once, at the end */
		return -1;
	if (ferror(o->f) || fflush(o->f) != 0)
		fprintf(stderr, "fusescan: %s: write failed: %s\n", o->a.path, strerror(errno ? errno : EIO));
	fs_atomic_abort(&o->a);
	memset(o, 0, sizeof(*o));
	return -1;
}

static int is_input(const struct fs_scan *s, const char *path)
{
	struct stat so, si;
	if (!path || !strcmp(path, "-") || stat(path, &so) != 0)
		return 0;
	for (uint32_t i = 0; i < s->n_files; i++)
		if (stat(s->files[i].path, &si) == 0 && si.st_dev == so.st_dev && si.st_ino == so.st_ino)
			return 1;
	return 0;
}

struct fs_scan *fs_cli_read(const struct fs_command *cmd, char **paths, int n, const char *out_path)
{
	struct fs_scan *s = fs_scan_new();
	for (int i = 0; i < n; i++)
		fs_scan_path(s, paths[i]);
	if (!is_input(s, out_path))
		return s;
	fprintf(stderr, "fusescan %s: refusing to write the report over input %s\n", cmd->name, out_path);
	fs_scan_free(s);
	return NULL;
}
