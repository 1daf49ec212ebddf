/*
 * output.c: inputs in, reports out. Reports are written to a temporary file
 * in the destination's directory and renamed over it only once complete, so
 * a reader never sees a half-written report and a failure leaves no debris;
 * a report never replaces one of the inputs (guard.c). Output directories are
 * written whole, under a lock, through a stage marked as no run (scan skips
 * it) and removed on SIGINT, SIGTERM or SIGHUP.
 */
#include "cli.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/syscall.h>
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

/* ---- staging directories, removed on a signal ------------------------------------------ */

/* The one process-wide state of the CLI: a signal handler reaches nothing
 * else. Changed only with the signals blocked; read by the handler, which
 * calls only async-signal-safe functions. */
enum { MAX_STAGES = 8 };
static char stage_at[MAX_STAGES][PATH_MAX + 16], made_at[MAX_STAGES][PATH_MAX];
static volatile sig_atomic_t n_stages;
static const int stop_signals[] = {SIGINT, SIGTERM, SIGHUP};

/* A flat directory's entries and the directory removed (raw getdents64:
 * safe in a signal handler, where opendir is not). */
static void remove_flat(const char *dir)
{
	int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	char buf[4096];
	long n;
	while (fd >= 0 && (n = syscall(SYS_getdents64, fd, buf, sizeof(buf))) > 0)
		for (long at = 0; at < n;) {
			struct {
				uint64_t ino;
				int64_t off;
				unsigned short reclen;
				unsigned char type;
				char name[];
			} *de = (void *)(buf + at);
			if (strcmp(de->name, ".") && strcmp(de->name, ".."))
				unlinkat(fd, de->name, 0);
			at += de->reclen;
		}
	if (fd >= 0)
		close(fd);
	rmdir(dir);
}

static void on_stop(int sig)
{
	for (sig_atomic_t i = 0; i < n_stages; i++) {
		remove_flat(stage_at[i]);
		if (made_at[i][0])
			rmdir(made_at[i]); /* only if still empty */
	}
	signal(sig, SIG_DFL);
	raise(sig);
}

static void block(int how, sigset_t *old)
{
	sigset_t set;
	sigemptyset(&set);
	for (size_t i = 0; i < sizeof(stop_signals) / sizeof(stop_signals[0]); i++)
		sigaddset(&set, stop_signals[i]);
	sigprocmask(how, how == SIG_SETMASK ? old : &set, how == SIG_SETMASK ? NULL : old);
}

/* o's stage (and its directory, when made here) removed on a signal from now */
static void stage_watch(const struct fs_outdir *o)
{
	sigset_t old;
	block(SIG_BLOCK, &old);
	if (n_stages < MAX_STAGES) {
		snprintf(stage_at[n_stages], sizeof(stage_at[0]), "%s", o->stage);
		snprintf(made_at[n_stages], sizeof(made_at[0]), "%s", o->made ? o->path : "");
		n_stages++;
	}
	for (size_t i = 0; i < sizeof(stop_signals) / sizeof(stop_signals[0]); i++) {
		struct sigaction sa, was;
		if (sigaction(stop_signals[i], NULL, &was) == 0 && was.sa_handler != SIG_IGN) { /* nohup: still ignored */
			memset(&sa, 0, sizeof(sa));
			sa.sa_handler = on_stop;
			sigaction(stop_signals[i], &sa, NULL);
		}
	}
	block(SIG_SETMASK, &old);
}

static void stage_unwatch(const char *stage)
{
	sigset_t old;
	block(SIG_BLOCK, &old);
	for (sig_atomic_t i = 0; i < n_stages; i++)
		if (!strcmp(stage_at[i], stage)) {
			n_stages--;
			memcpy(stage_at[i], stage_at[n_stages], sizeof(stage_at[0]));
			memcpy(made_at[i], made_at[n_stages], sizeof(made_at[0]));
			break;
		}
	block(SIG_SETMASK, &old);
}

/* ---- output directories ---------------------------------------------------------------- */

/* A new stage, marked so that no scan takes it for a run: 0, or -1 */
static int make_stage(struct fs_outdir *o)
{
	if (!mkdtemp(o->stage))
		return -1;
	char mark[PATH_MAX + 40];
	snprintf(mark, sizeof(mark), "%s/" FS_STAGE_MARK, o->stage);
	int fd = open(mark, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
	if (fd < 0) {
		rmdir(o->stage);
		return -1;
	}
	close(fd);
	stage_watch(o);
	return 0;
}

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
			if (make_stage(o) == 0)
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

/* Calls each(o, cmd, name) on every staged file but the mark until one
 * fails: 0, or -1 */
static int each_staged(struct fs_outdir *o, const struct fs_command *cmd, int (*each)(struct fs_outdir *, const struct fs_command *, const char *))
{
	DIR *d = opendir(o->stage);
	int rc = d ? 0 : -1;
	struct dirent *de;
	while (d && rc == 0 && (de = readdir(d)))
		if (strcmp(de->d_name, ".") && strcmp(de->d_name, "..") && strcmp(de->d_name, FS_STAGE_MARK))
			rc = each(o, cmd, de->d_name);
	if (d)
		closedir(d);
	return rc;
}

/* a file, a link or nothing may be replaced, never a directory or a special file (a device node) */
static int replaceable(struct fs_outdir *o, const struct fs_command *cmd, const char *name)
{
	struct stat st;
	if (fstatat(o->fd, name, &st, AT_SYMLINK_NOFOLLOW) == 0 && !S_ISREG(st.st_mode) && !S_ISLNK(st.st_mode)) {
		fprintf(stderr, "fusescan %s: %s/%s is not a regular file: not replaced (nothing was written)\n", cmd->name, o->path, name);
		return -1;
	}
	return 0;
}

static int move_in(struct fs_outdir *o, const struct fs_command *cmd, const char *name)
{
	char stage_file[PATH_MAX + 300];
	snprintf(stage_file, sizeof(stage_file), "%s/%s", o->stage, name);
	if (renameat(AT_FDCWD, stage_file, o->fd, name) == 0)
		return 0;
	fprintf(stderr, "fusescan %s: cannot write %s/%s: %s\n", cmd->name, o->path, name, strerror(errno));
	return -1;
}

/* Each staged file moved into the directory once every one of them can
 * be (a failing check moves none), with the stop signals held off. */
int fs_outdir_publish(struct fs_outdir *o, const struct fs_command *cmd)
{
	sigset_t old;
	block(SIG_BLOCK, &old);
	int rc = each_staged(o, cmd, replaceable);
	if (rc == 0) {
		rc = each_staged(o, cmd, move_in);
		o->made = 0; /* what moved in stays */
	}
	fs_outdir_abort(o);
	block(SIG_SETMASK, &old);
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
	if (o->stage) {
		rmdir(o->stage);
		stage_unwatch(o->stage);
	}
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
