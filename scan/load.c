/*
 * load.c: from paths to parsed dumps. A path is a dump file, a run directory
 * (NNN_<stage>_<transform>.txt files in NNN order, ad.log beside them), or a
 * directory of run directories. Each file is read in one piece (one read()
 * into one buffer: cheaper than mmap's page faults for dump-sized files) and
 * handed to parse.c; nothing is ever written.
 */
#include "scan_int.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

enum { MAX_DIR_DEPTH = 8 };

struct fs_scan *fs_scan_new(void)
{
	struct fs_scan *s = fs_xcalloc(1, sizeof(*s));
	s->priv = fs_xcalloc(1, sizeof(*s->priv));
	fs_strtab_init(&s->strs);
	fs_diags_init(&s->diags);
	fs_ops_init(s);
	fs_types_shape(s, "?", 1); /* shape 0: unknown */
	return s;
}

void fs_scan_free(struct fs_scan *s)
{
	if (!s)
		return;
	struct fs_scan_priv *p = s->priv;
	for (uint32_t i = 0; i < s->n_modules; i++)
		if (s->modules[i].same_as == i)
			fs_graph_free(s->modules[i].graph);
	for (uint32_t i = 0; i < p->n_kept; i++)
		free(p->kept[i]);
	for (uint32_t i = 0; i < s->n_files; i++)
		free(s->files[i].path);
	for (uint32_t i = 0; i < s->n_runs; i++) {
		free(s->runs[i].dir);
		free(s->runs[i].log);
	}
	for (uint32_t i = 0; i < s->n_skipped; i++) {
		free(s->skipped[i].path);
		free(s->skipped[i].reason);
	}
	free(p->row_of_sym);
	free(p->dtype_of_sym);
	free(p->bind);
	free(p->bodies);
	free(p->kept);
	free(p->spare);
	free(p->seen);
	free(p->seen_slots);
	free(p);
	free(s->ops);
	free(s->op_of_target);
	free(s->files);
	free(s->modules);
	free(s->runs);
	free(s->skipped);
	fs_types_release(&s->types);
	fs_strtab_release(&s->strs);
	fs_diags_release(&s->diags);
	free(s);
}

static void skip(struct fs_scan *s, const char *path, const char *reason)
{
	FS_GROW(s->skipped, s->cap_skipped, s->n_skipped + 1);
	s->skipped[s->n_skipped].path = fs_xstrndup(path, strlen(path));
	s->skipped[s->n_skipped].reason = fs_xstrndup(reason, strlen(reason));
	s->n_skipped++;
}

/* ---- file names: NNN_<stage>_<transform>.txt ------------------------------ */

static const char *const stages[] = {
#define FS_X(name) name,
	FS_STAGES(FS_X)
#undef FS_X
};

enum { NUMBER_NONE = -1, NUMBER_TOO_LARGE = -2 };

/* NNN of a dump's name, NUMBER_NONE when it has none, NUMBER_TOO_LARGE past
 * 18 digits (an error: such a file would otherwise be skipped unsaid). */
static int64_t name_number(const char *base, const char **rest)
{
	int64_t v = 0;
	int over = 0;
	const char *p = base;
	for (; *p >= '0' && *p <= '9'; p++)
		over |= __builtin_mul_overflow(v, 10, &v) || __builtin_add_overflow(v, *p - '0', &v);
	if (p == base || *p != '_')
		return NUMBER_NONE;
	*rest = p + 1;
	return over ? NUMBER_TOO_LARGE : v;
}

static int ends_with(const char *s, const char *suffix)
{
	size_t n = strlen(s), k = strlen(suffix);
	return n >= k && strcmp(s + n - k, suffix) == 0;
}

/* Stage names contain '_': match the longest known stage, not the first '_'. */
static void name_stage(struct fs_scan *s, struct fs_dumpfile *f)
{
	const char *rest = f->base;
	f->number = name_number(f->base, &rest);
	if (f->number == NUMBER_TOO_LARGE) {
		fs_diag_add(&s->diags, FS_ERROR, f->path, 0, 0, NULL, 0, "dump number %.*s is out of range (at most %lld)",
			    (int)(rest - 1 - f->base), f->base, (long long)INT64_MAX);
		f->n_errors++;
		f->number = NUMBER_NONE;
	}
	size_t n = strlen(rest);
	if (ends_with(rest, ".txt"))
		n -= 4;
	size_t best = 0;
	for (size_t i = 0; i < sizeof(stages) / sizeof(stages[0]); i++) {
		size_t k = strlen(stages[i]);
		if (k > best && k < n && memcmp(rest, stages[i], k) == 0 && rest[k] == '_')
			best = k;
	}
	f->stage = fs_strtab_intern(&s->strs, rest, best);
	const char *t = best ? rest + best + 1 : rest;
	f->transform = fs_strtab_intern(&s->strs, t, n - (size_t)(t - rest));
}

/* ---- reading one file -------------------------------------------------------- */

static void file_diag(struct fs_scan *s, const char *path, const char *what)
{
	fs_diag_add(&s->diags, FS_ERROR, path, 0, 0, NULL, 0, "%s: %s", what, strerror(errno));
}

static uint32_t new_file(struct fs_scan *s, const char *path, uint32_t run)
{
	FS_GROW(s->files, s->cap_files, s->n_files + 1);
	struct fs_dumpfile *f = &s->files[s->n_files];
	memset(f, 0, sizeof(*f));
	f->path = fs_xstrndup(path, strlen(path));
	const char *slash = strrchr(f->path, '/');
	f->base = slash ? slash + 1 : f->path;
	f->run = run;
	f->declared_modules = -1;
	f->first_module = s->n_modules;
	name_stage(s, f);
	return s->n_files++;
}

/* A buffer holding a dedupe original lives as long as the scan. */
static void keep_buffer(struct fs_scan *s, char *data)
{
	struct fs_scan_priv *p = s->priv;
	FS_GROW(p->kept, p->cap_kept, p->n_kept + 1);
	p->kept[p->n_kept++] = data;
}

/* Reads the whole file into the scan's spare buffer (reused across files
 * whose text need not be kept, so pages are faulted in once). */
static char *read_all(struct fs_scan_priv *p, int fd, size_t size)
{
	if (p->cap_spare < size + 1) {
		free(p->spare);
		p->cap_spare = size + 1 > 1u << 20 ? size + 1 : 1u << 20;
		p->spare = fs_xmalloc(p->cap_spare);
	}
	char *buf = p->spare;
	size_t got = 0;
	while (got < size) {
		ssize_t r = read(fd, buf + got, size - got);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0) {
			if (r == 0)
				errno = EIO; /* file shrank while being read */
			return NULL;
		}
		got += (size_t)r;
	}
	return buf;
}

const struct fs_read *fs_scan_reads(const struct fs_scan *s, uint32_t *n)
{
	*n = s->priv->n_seen;
	return s->priv->seen;
}

static uint32_t seen_slot(const struct fs_scan_priv *p, uint64_t dev, uint64_t ino)
{
	uint64_t key[2] = {dev, ino};
	uint32_t i = (uint32_t)fs_hash_bytes(key, sizeof(key), 0) & (p->n_seen_slots - 1);
	while (p->seen_slots[i] && (p->seen[p->seen_slots[i] - 1].dev != dev || p->seen[p->seen_slots[i] - 1].ino != ino))
		i = (i + 1) & (p->n_seen_slots - 1);
	return i;
}

/* Whether the file or directory st was read before (then skipped, saying as
 * what); else it is recorded. */
static int seen_before(struct fs_scan *s, const char *path, const struct stat *st)
{
	struct fs_scan_priv *p = s->priv;
	if ((p->n_seen + 1) * 2 > p->n_seen_slots) { /* rehash at half full */
		free(p->seen_slots);
		p->n_seen_slots = p->n_seen_slots ? 2 * p->n_seen_slots : 64;
		p->seen_slots = fs_xcalloc(p->n_seen_slots, sizeof(uint32_t));
		for (uint32_t i = 0; i < p->n_seen; i++)
			p->seen_slots[seen_slot(p, p->seen[i].dev, p->seen[i].ino)] = i + 1;
	}
	uint32_t slot = seen_slot(p, (uint64_t)st->st_dev, (uint64_t)st->st_ino);
	if (p->seen_slots[slot]) {
		char why[600];
		snprintf(why, sizeof(why), "already read as %s", fs_scan_str(s, p->seen[p->seen_slots[slot] - 1].path));
		skip(s, path, why);
		return 1;
	}
	FS_GROW(p->seen, p->cap_seen, p->n_seen + 1);
	p->seen[p->n_seen++] = (struct fs_read){(uint64_t)st->st_dev, (uint64_t)st->st_ino,
						fs_strtab_intern(&s->strs, path, strlen(path)), (uint8_t)S_ISDIR(st->st_mode)};
	p->seen_slots[slot] = p->n_seen;
	return 0;
}

static uint32_t scan_file(struct fs_scan *s, const char *path, uint32_t run)
{
	uint32_t before = s->diags.n_errors;
	struct stat st;
	int fd = fs_open_regular(path, &st);
	if (fd >= 0 && seen_before(s, path, &st)) {
		close(fd);
		return 0;
	}
	uint32_t fi = new_file(s, path, run);
	if (fd < 0) {
		int err = errno;
		fs_diag_add(&s->diags, FS_ERROR, path, 0, 0, NULL, 0, "cannot open: %s", fs_strerror(err));
		s->files[fi].n_errors++;
		return s->diags.n_errors - before;
	}
	uint64_t size = (uint64_t)st.st_size;
	enum fs_input bound = size > fs_input_bound(FS_IN_DUMP) ? FS_IN_DUMP
			    : s->bytes_read + size > fs_input_bound(FS_IN_DUMPS) ? FS_IN_DUMPS : FS_IN_COUNT;
	if (bound != FS_IN_COUNT) { /* refused before a byte is read (a sparse 20 GB file) */
		close(fd);
		fs_diag_add(&s->diags, FS_ERROR, path, 0, 0, NULL, 0, "cannot read: it holds %.1f %s, %s",
			    (double)size / (size >> 30 ? 1 << 30 : 1 << 20), size >> 30 ? "GiB" : "MiB", fs_input_error(FS_ETOOBIG, bound));
		s->files[fi].n_errors++;
		return s->diags.n_errors - before;
	}
	s->files[fi].size = size;
	s->bytes_read += size;
	struct fs_scan_priv *p = s->priv;
	char *data = read_all(p, fd, (size_t)size);
	close(fd);
	if (!data) {
		file_diag(s, path, "cannot read");
		s->files[fi].n_errors++;
		return s->diags.n_errors - before;
	}
	if (fs_parse_dump(s, fi, data, (size_t)size)) {
		keep_buffer(s, data); /* the spare now holds a dedupe original */
		p->spare = NULL;
		p->cap_spare = 0;
	}
	return s->diags.n_errors - before;
}

uint32_t fs_scan_buffer(struct fs_scan *s, const char *name, const char *data, size_t len)
{
	uint32_t before = s->diags.n_errors;
	uint32_t fi = new_file(s, name, UINT32_MAX);
	s->files[fi].size = len;
	s->bytes_read += len;
	char *copy = fs_xmalloc(len ? len : 1);
	memcpy(copy, data, len);
	if (fs_parse_dump(s, fi, copy, len))
		keep_buffer(s, copy);
	else
		free(copy);
	return s->diags.n_errors - before;
}

/* ---- directories ----------------------------------------------------------------- */

struct entry {
	char *name;
	int64_t number;
	int is_dir;
};

static int entry_cmp(const void *a, const void *b)
{
	const struct entry *x = a, *y = b;
	if (x->number != y->number)
		return x->number < y->number ? -1 : 1;
	return strcmp(x->name, y->name);
}

static char *join(const char *dir, const char *name)
{
	size_t a = strlen(dir), b = strlen(name);
	char *p = fs_xmalloc(a + b + 2);
	memcpy(p, dir, a);
	size_t k = a;
	if (!a || dir[a - 1] != '/')
		p[k++] = '/';
	memcpy(p + k, name, b + 1);
	return p;
}

static int is_dump_name(const char *name)
{
	const char *rest;
	return name_number(name, &rest) != NUMBER_NONE && ends_with(name, ".txt");
}

/* Lists a directory, sorted: dumps by NNN, everything else by name. */
static struct entry *list_dir(const char *dir, DIR *d, uint32_t *n)
{
	struct entry *v = NULL;
	uint32_t cap = 0;
	*n = 0;
	struct dirent *de;
	while ((de = readdir(d))) {
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		char *full = join(dir, de->d_name);
		struct stat st;
		int is_dir = stat(full, &st) == 0 && S_ISDIR(st.st_mode);
		free(full);
		FS_GROW(v, cap, *n + 1);
		const char *rest;
		v[*n].name = fs_xstrndup(de->d_name, strlen(de->d_name));
		v[*n].number = is_dump_name(de->d_name) ? name_number(de->d_name, &rest) : INT64_MAX;
		v[*n].is_dir = is_dir;
		(*n)++;
	}
	if (*n)
		qsort(v, *n, sizeof(*v), entry_cmp);
	return v;
}

static uint32_t new_run(struct fs_scan *s, const char *dir)
{
	FS_GROW(s->runs, s->cap_runs, s->n_runs + 1);
	struct fs_run *r = &s->runs[s->n_runs];
	memset(r, 0, sizeof(*r));
	r->dir = fs_xstrndup(dir, strlen(dir));
	r->first_file = s->n_files;
	return s->n_runs++;
}

static void scan_dir(struct fs_scan *s, const char *dir, int depth, uint32_t *n_dumps);

/* Two dumps of a run with one number (a run numbers each transform once):
 * neither is a point of its timeline, and --dump NNN could name either. */
static void same_number(struct fs_scan *s, uint32_t a, uint32_t b)
{
	struct fs_dumpfile *x = &s->files[a], *y = &s->files[b];
	if (x->number < 0 || x->number != y->number)
		return;
	fs_diag_add(&s->diags, FS_ERROR, y->path, 0, 0, NULL, 0, "dump number %03lld is also the number of %s", (long long)y->number,
		    x->path);
	x->n_errors += !x->n_errors;
	y->n_errors++;
}

/* Dumps of this directory form one run; its subdirectories are runs of their own. */
static void scan_entries(struct fs_scan *s, const char *dir, struct entry *v, uint32_t n,
			 int depth, uint32_t *n_dumps)
{
	uint32_t run = UINT32_MAX;
	for (uint32_t i = 0; i < n; i++) {
		char *full = join(dir, v[i].name);
		if (v[i].is_dir) {
			/* handled after this directory's own dumps */
		} else if (is_dump_name(v[i].name)) {
			if (run == UINT32_MAX)
				run = new_run(s, dir);
			uint32_t files = s->n_files; /* none when read before */
			scan_file(s, full, run);
			s->runs[run].n_files += s->n_files - files;
			*n_dumps += s->n_files - files;
			if (s->n_files > files && s->runs[run].n_files > 1)
				same_number(s, s->n_files - 2, s->n_files - 1);
		} else if (ends_with(v[i].name, ".log")) {
			if (run == UINT32_MAX)
				run = new_run(s, dir);
			struct fs_run *r = &s->runs[run];
			if (!r->log || !strcmp(v[i].name, "ad.log")) {
				free(r->log);
				r->log = fs_xstrndup(full, strlen(full));
			}
		} else
			skip(s, full, "not a dump (expected NNN_<stage>_<transform>.txt)");
		free(full);
	}
	for (uint32_t i = 0; i < n; i++) {
		if (!v[i].is_dir)
			continue;
		char *full = join(dir, v[i].name);
		scan_dir(s, full, depth + 1, n_dumps);
		free(full);
	}
}

static void scan_dir(struct fs_scan *s, const char *dir, int depth, uint32_t *n_dumps)
{
	struct stat st;
	if (depth > MAX_DIR_DEPTH)
		return skip(s, dir, "directory nested too deep");
	if (stat(dir, &st) == 0 && seen_before(s, dir, &st))
		return;
	char *mark = join(dir, FS_STAGE_MARK);
	int staging = lstat(mark, &st) == 0;
	free(mark);
	if (staging)
		return skip(s, dir, "an output directory fusescan is writing (or was stopped writing), not a run");
	DIR *d = opendir(dir);
	if (!d) {
		file_diag(s, dir, "cannot open directory");
		return;
	}
	uint32_t n;
	struct entry *v = list_dir(dir, d, &n);
	closedir(d);
	scan_entries(s, dir, v, n, depth, n_dumps);
	for (uint32_t i = 0; i < n; i++)
		free(v[i].name);
	free(v);
}

uint32_t fs_scan_path(struct fs_scan *s, const char *path)
{
	uint32_t before = s->diags.n_errors;
	struct stat st;
	if (stat(path, &st) < 0) {
		file_diag(s, path, "cannot open");
		return s->diags.n_errors - before;
	}
	if (!S_ISDIR(st.st_mode))
		return scan_file(s, path, UINT32_MAX);
	uint32_t n_dumps = 0;
	scan_dir(s, path, 0, &n_dumps);
	if (!n_dumps)
		fs_diag_add(&s->diags, FS_ERROR, path, 0, 0, NULL, 0,
			    "no dump files (NNN_<stage>_<transform>.txt) in this directory");
	return s->diags.n_errors - before;
}
