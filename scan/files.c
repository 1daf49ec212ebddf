/*
 * files.c: how fusescan touches the file system (see fusescan/base.h).
 * Dumps are opened without blocking and read only when they are regular
 * files, so a FIFO or a device never hangs or floods a run; the small files
 * options name (expectations, logs, approvals) may also be pipes named by
 * their descriptor (/dev/stdin, `<(...)`), read to their end up to a bound. Outputs follow
 * symbolic links to the file they name and replace it atomically (a
 * temporary file beside it, renamed over it once complete); special files
 * (devices, FIFOs) and files named through an open descriptor (/dev/stdout)
 * are written in place, since renaming over them would destroy the node or
 * miss the file. Every write is checked up to the close.
 */
#define _POSIX_C_SOURCE 200809L
#include "fusescan/base.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

const char *fs_strerror(int err)
{
	return err == FS_ENOTREG ? "not a regular file" : err == FS_ETOOBIG ? "larger than fusescan reads" : strerror(err);
}

static const struct {
	uint64_t bound;
	const char *too_big;
} inputs[] = {
#define FS_X(e, bound, words, what) {bound, "larger than " words ", the most fusescan reads of " what " (docs/limits.md)"},
	FS_INPUTS(FS_X)
#undef FS_X
};
_Static_assert(sizeof(inputs) / sizeof(inputs[0]) == FS_IN_COUNT, "one bound per input kind");

uint64_t fs_input_bound(enum fs_input k)
{
	return inputs[k].bound;
}

const char *fs_input_error(int err, enum fs_input k)
{
	return err == FS_ETOOBIG ? inputs[k].too_big : fs_strerror(err);
}

/* 0 for a regular file, else the error that refuses it */
static int regular(const struct stat *st)
{
	return S_ISREG(st->st_mode) ? 0 : S_ISDIR(st->st_mode) ? EISDIR : FS_ENOTREG;
}

int fs_open_regular(const char *path, struct stat *st)
{
	if (stat(path, st) != 0)
		return -1;
	int err = regular(st); /* refused before it is opened: opening a device can act */
	if (err) {
		errno = err;
		return -1;
	}
	/* O_NONBLOCK: swapped for a FIFO since the stat, it still cannot hang */
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0)
		return -1;
	err = fstat(fd, st) != 0 ? errno : regular(st);
	if (err) {
		close(fd);
		errno = err;
		return -1;
	}
	fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
	return fd;
}

/* Whether a path as given names an open descriptor (/dev/stdin, /dev/fd/N,
 * /proc/self/fd/N: what `<(...)` gives): an anonymous pipe, whose open
 * never waits for a writer. */
static int names_fd(const char *path)
{
	return !strcmp(path, "/dev/stdin") || !strncmp(path, "/dev/fd/", 8) || !strncmp(path, "/proc/self/fd/", 14);
}

/* A regular file, or a pipe named by its descriptor (`--expect <(...)`,
 * `/dev/stdin`) read to its end. A FIFO in the file system (a run's ad.log,
 * a .pat file) is refused like any special file: opening it waits for a
 * writer that may never come. */
static int open_input(const char *path, struct stat *st)
{
	int fd = fs_open_regular(path, st);
	if (fd >= 0 || errno != FS_ENOTREG || !S_ISFIFO(st->st_mode) || !names_fd(path))
		return fd;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	st->st_size = 0;
	return fd;
}

char *fs_read_input(const char *path, enum fs_input k, size_t *len)
{
	struct stat st;
	int fd = open_input(path, &st);
	if (fd < 0)
		return NULL;
	size_t max = (size_t)inputs[k].bound;
	if ((uint64_t)st.st_size > max) {
		close(fd);
		errno = FS_ETOOBIG;
		return NULL;
	}
	size_t cap = (size_t)st.st_size + 4096, n = 0;
	char *buf = fs_xmalloc(cap + 1);
	for (;;) {
		ssize_t got = read(fd, buf + n, cap - n);
		if (got < 0 && errno == EINTR)
			continue;
		int err = got < 0 ? errno : n + (size_t)(got > 0 ? got : 0) > max ? FS_ETOOBIG : 0;
		if (got <= 0 || err) {
			close(fd);
			if (err) {
				free(buf);
				errno = err;
				return NULL;
			}
			break;
		}
		if ((n += (size_t)got) == cap) /* a pipe, or a file that grew while being read */
			buf = fs_xrealloc(buf, (cap = cap * 2 < max + 1 ? cap * 2 : max + 1) + 1);
	}
	buf[n] = '\0';
	*len = n;
	return buf;
}

char *fs_resolve_links(const char *path)
{
	char *p = fs_xstrndup(path, strlen(path));
	for (int hops = 0;; hops++) {
		struct stat st;
		if (lstat(p, &st) != 0 || !S_ISLNK(st.st_mode))
			return p;
		if (hops == 40) {
			free(p);
			errno = ELOOP;
			return NULL;
		}
		char link[PATH_MAX];
		ssize_t n = readlink(p, link, sizeof(link) - 1);
		if (n < 0) {
			int err = errno;
			free(p);
			errno = err;
			return NULL;
		}
		link[n] = '\0';
		const char *slash = strrchr(p, '/');
		size_t dir = link[0] == '/' || !slash ? 0 : (size_t)(slash - p) + 1;
		char *next = fs_xmalloc(dir + (size_t)n + 1);
		memcpy(next, p, dir);
		memcpy(next + dir, link, (size_t)n + 1);
		free(p);
		p = next;
	}
}

/* A special file (device, FIFO), or a file named by an open descriptor
 * (/dev/stdout, /proc/self/fd/N), written where it is: renaming over a
 * device destroys it, and a descriptor's path names no directory entry. */
static int open_in_place(struct fs_atomic *a, int truncate)
{
	int fd = open(a->path, O_WRONLY | O_CLOEXEC | (truncate ? O_TRUNC : 0));
	if (fd < 0)
		return -1;
	a->f = fdopen(fd, "wb");
	if (!a->f) {
		int err = errno;
		close(fd);
		errno = err;
		return -1;
	}
	return 0;
}

/* Whether a path reaches its file through an open descriptor's name. */
static int names_descriptor(const char *path)
{
	char *p = fs_xstrndup(path, strlen(path)), link[PATH_MAX];
	int hit = 0;
	for (int hops = 0; hops < 40 && !hit; hops++) {
		hit = !strncmp(p, "/proc/", 6) || !strncmp(p, "/dev/fd/", 8);
		ssize_t n = readlink(p, link, sizeof(link) - 1);
		if (n <= 0 || link[0] != '/')
			break;
		link[n] = '\0';
		free(p);
		p = fs_xstrndup(link, (size_t)n);
	}
	free(p);
	return hit;
}

/* A temporary file beside the target, with the mode the target has (a new
 * file: 0666 less the umask). */
static int open_beside(struct fs_atomic *a, const struct stat *old)
{
	size_t n = strlen(a->path) + 16;
	a->tmp = fs_xmalloc(n);
	snprintf(a->tmp, n, "%s.tmp.XXXXXX", a->path);
	int fd = mkstemp(a->tmp);
	if (fd < 0)
		return -1;
	mode_t mask = umask(0);
	umask(mask);
	fchmod(fd, old ? old->st_mode & 07777 : 0666 & ~mask);
	a->f = fdopen(fd, "wb");
	if (!a->f) {
		int err = errno;
		close(fd);
		unlink(a->tmp);
		errno = err;
		return -1;
	}
	return 0;
}

int fs_atomic_open(struct fs_atomic *a, const char *path)
{
	memset(a, 0, sizeof(*a));
	struct stat st;
	int exists = stat(path, &st) == 0, rc = -1;
	if (exists && S_ISDIR(st.st_mode))
		errno = EISDIR;
	else if (exists && (!S_ISREG(st.st_mode) || names_descriptor(path))) {
		a->path = fs_xstrndup(path, strlen(path));
		rc = open_in_place(a, S_ISREG(st.st_mode));
	} else if ((a->path = fs_resolve_links(path)))
		rc = open_beside(a, exists ? &st : NULL);
	if (rc == 0)
		return 0;
	int err = errno;
	free(a->path);
	free(a->tmp);
	memset(a, 0, sizeof(*a));
	errno = err;
	return -1;
}

int fs_atomic_commit(struct fs_atomic *a)
{
	int err = fflush(a->f) != 0 || ferror(a->f) ? (errno ? errno : EIO) : 0;
	if (!err && a->tmp && fsync(fileno(a->f)) != 0)
		err = errno;
	if (fclose(a->f) != 0 && !err)
		err = errno ? errno : EIO;
	if (!err && a->tmp && rename(a->tmp, a->path) != 0)
		err = errno;
	if (err && a->tmp)
		unlink(a->tmp);
	free(a->path);
	free(a->tmp);
	memset(a, 0, sizeof(*a));
	errno = err;
	return err ? -1 : 0;
}

void fs_atomic_abort(struct fs_atomic *a)
{
	if (a->f) {
		fclose(a->f);
		if (a->tmp)
			unlink(a->tmp);
	}
	free(a->path);
	free(a->tmp);
	memset(a, 0, sizeof(*a));
}

int fs_write_file_atomic(const char *path, const void *data, size_t len)
{
	struct fs_atomic a;
	if (fs_atomic_open(&a, path))
		return -1;
	if (fwrite(data, 1, len, a.f) != len) {
		int err = errno ? errno : EIO;
		fs_atomic_abort(&a);
		errno = err;
		return -1;
	}
	return fs_atomic_commit(&a);
}
