/*
 * output.c: inputs in, reports out. Reports are written to a temporary file
 * in the destination's directory and renamed over it only once complete, so
 * a reader never sees a half-written report and a failure leaves no debris;
 * a report never replaces one of the inputs (guard.c). Output directories are
 * written whole, under a lock.
 */
#include "cli.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
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

struct fs_scan *fs_cli_read(const struct fs_command *cmd, char **paths, int n, struct fs_guard *g, const char *out_path)
{
	struct fs_scan *s = fs_scan_new();
	for (int i = 0; i < n; i++)
		fs_scan_path(s, paths[i]);
	struct fs_guard own = {0};
	g = g ? g : &own;
	fs_guard_add_scan(g, s);
	int refused = fs_guard_file(g, cmd, "-o", out_path);
	fs_guard_release(&own);
	if (!refused)
		return s;
	fs_scan_free(s);
	return NULL;
}

/* ---- output directories ---------------------------------------------------------------- */

int fs_outdir_open(struct fs_outdir *o, const struct fs_command *cmd, const char *opt, const char *path)
{
	memset(o, 0, sizeof(*o));
	size_t n = strlen(path);
	while (n > 1 && path[n - 1] == '/')
		n--;
	o->path = fs_xstrndup(path, n);
	o->fd = -1;
	o->made = mkdir(o->path, 0777) == 0;
	const char *what = "cannot create";
	if ((o->made || errno == EEXIST) && (o->fd = open(o->path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) >= 0) {
		what = "cannot lock";
		/* where the file system has no locks (ENOLCK, some network ones), runs are not kept apart */
		if (flock(o->fd, LOCK_EX | LOCK_NB) == 0 || errno != EWOULDBLOCK) {
			char real[PATH_MAX]; /* beside the directory a link names: a rename never crosses file systems */
			what = "cannot write beside";
			o->stage = fs_xmalloc(PATH_MAX + 16);
			snprintf(o->stage, PATH_MAX + 16, "%s.tmp.XXXXXX", realpath(o->path, real) ? real : o->path);
			if (mkdtemp(o->stage))
				return 0;
		} else
			errno = 0, o->made = 0; /* made here, but another run locked it first: its directory now */
	}
	if (errno)
		fprintf(stderr, "fusescan %s: %s %s %s: %s\n", cmd->name, what, opt, o->path, strerror(errno == EEXIST ? ENOTDIR : errno));
	else
		fprintf(stderr, "fusescan %s: %s %s is being written by another fusescan; run again once it is done\n", cmd->name, opt,
			o->path);
	free(o->stage);
	o->stage = NULL;
	fs_outdir_abort(o);
	return -1;
}

/* Each staged file moved into the directory: a file, a link or nothing may
 * be replaced there, never a directory or a special file (a device node). */
int fs_outdir_publish(struct fs_outdir *o, const struct fs_command *cmd)
{
	DIR *d = opendir(o->stage);
	int rc = d ? 0 : -1;
	struct dirent *de;
	while (d && rc == 0 && (de = readdir(d))) {
		struct stat st;
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		if (fstatat(o->fd, de->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0 && !S_ISREG(st.st_mode) && !S_ISLNK(st.st_mode)) {
			fprintf(stderr, "fusescan %s: %s/%s is not a regular file: not replaced\n", cmd->name, o->path, de->d_name);
			rc = -1;
		} else if (renameat(dirfd(d), de->d_name, o->fd, de->d_name) != 0) {
			fprintf(stderr, "fusescan %s: cannot write %s/%s: %s\n", cmd->name, o->path, de->d_name, strerror(errno));
			rc = -1;
		}
	}
	if (d)
		closedir(d);
	o->made = 0; /* what moved in stays */
	fs_outdir_abort(o);
	return rc;
}

void fs_outdir_abort(struct fs_outdir *o)
{
	DIR *d = o->stage ? opendir(o->stage) : NULL;
	struct dirent *de;
	while (d && (de = readdir(d)))
		if (strcmp(de->d_name, ".") && strcmp(de->d_name, ".."))
			unlinkat(dirfd(d), de->d_name, 0);
	if (d)
		closedir(d);
	if (o->stage)
		rmdir(o->stage);
	if (o->made)
		rmdir(o->path); /* only if still empty */
	if (o->fd >= 0)
		close(o->fd); /* and the lock with it */
	free(o->stage);
	free(o->path);
	memset(o, 0, sizeof(*o));
	o->fd = -1;
}

int fs_outdir_same(const struct fs_outdir *o, const char *path)
{
	struct stat a, b;
	return o->path && stat(o->path, &a) == 0 && stat(path, &b) == 0 && a.st_dev == b.st_dev && a.st_ino == b.st_ino;
}
