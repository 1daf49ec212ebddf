/*
 * base.h: memory and string primitives shared by every fusescan module.
 *
 *   struct fs_arena a;  fs_arena_init(&a);
 *   char *p = fs_arena_alloc(&a, 64);      // freed only by fs_arena_release
 *   struct fs_strtab t; fs_strtab_init(&t);
 *   uint32_t id = fs_strtab_intern(&t, "aten.add", 8);  // same text -> same id
 *
 * Allocation failure is treated as a broken invariant: fs_xmalloc prints and
 * aborts (fusescan inputs are bounded by files on disk; running out of memory
 * is not a recoverable input error).
 */
#ifndef FUSESCAN_BASE_H
#define FUSESCAN_BASE_H

#include <stddef.h>
#include <stdio.h>
#include <stdint.h>

#define FS_VERSION "0.1.0"

void *fs_xmalloc(size_t n);
void *fs_xcalloc(size_t n, size_t size);
void *fs_xrealloc(void *p, size_t n);
/* n bytes for a buffer written end to end at once (the CPU check's values, GBs where a weight is
 * large): from 2 MiB up, aligned to 2 MiB and advised as transparent huge pages, so filling it takes
 * one page fault per 2 MiB rather than per 4 KiB; freed by free() */
void *fs_xmalloc_huge(size_t n);
char *fs_xstrndup(const char *s, size_t n);

/* A data file compiled into the binary (scripts/embed.cmake). */
struct fs_embedded {
	const char *name;
	const char *data;
	size_t len;
};

/* ---- files (scan/files.c) ---- */

/* errno of an input that is not a regular file (a FIFO, a device, a socket):
 * refused before it is read, so nothing hangs or floods. fs_strerror names it
 * and every other errno. */
#define FS_ENOTREG 0x4e52
const char *fs_strerror(int err);
struct stat;
/* Opens a regular file for reading: its fd (st filled), or -1 with errno set
 * (FS_ENOTREG, EISDIR, or open's). Never blocks. */
int fs_open_regular(const char *path, struct stat *st);

/* Every kind of file fusescan reads, and the most bytes it reads of one
 * (docs/limits.md): (enum tail, bound, the bound in words, what it is). */
#define FS_INPUTS(X)                                                            \
	X(DUMP, 1ull << 30, "1 GiB", "a dump")                                  \
	X(DUMPS, 4ull << 30, "4 GiB", "the dumps of one command together")      \
	X(LOG, 256ull << 20, "256 MiB", "a log")                                \
	X(EXPECT, 1ull << 20, "1 MiB", "an expectations file")                  \
	X(BASELINE, 64ull << 20, "64 MiB", "a baseline report")                 \
	X(CATALOG, 4ull << 20, "4 MiB", "a kernel catalog")                     \
	X(CONFIG, 4ull << 20, "4 MiB", "an AutoDeploy config (yaml)")           \
	X(PATTERN, 1ull << 20, "1 MiB", "a pattern file")                       \
	X(APPROVALS, 1ull << 20, "1 MiB", "an approvals file")                  \
	X(SOURCE, 16ull << 20, "16 MiB", "a source file of --kernels-from")     \
	X(CACHE, 64ull << 20, "64 MiB", "a tuning cache")                       \
	X(CUBIN, 64ull << 20, "64 MiB", "a compiled kernel of the NVRTC cache")

enum fs_input {
#define FS_X(e, bound, words, what) FS_IN_##e,
	FS_INPUTS(FS_X)
#undef FS_X
	FS_IN_COUNT
};

/* errno of an input larger than its kind's bound: refused before it is read. */
#define FS_ETOOBIG 0x4e53
uint64_t fs_input_bound(enum fs_input k);
/* fs_strerror's words, or for FS_ETOOBIG what kind k may hold. */
const char *fs_input_error(int err, enum fs_input k);
/* Reads a whole regular file, or a pipe to its end, of at most kind k's
 * bound (a regular file's size checked before anything is read), into a
 * NUL-terminated malloc'd buffer; NULL with errno set on failure
 * (FS_ETOOBIG, FS_ENOTREG for a device or socket, EISDIR, open's). */
char *fs_read_input(const char *path, enum fs_input k, size_t *len);

/* The file in every staging directory of an output directory (cli, fs_outdir):
 * a directory holding it is an output being written, never a run to scan. */
#define FS_STAGE_MARK ".fusescan-stage"

/* The file a path names, symbolic links followed (a dangling link names the
 * file it would create): malloc'd, or NULL with errno set (ELOOP, readlink's). */
char *fs_resolve_links(const char *path);

/* A file written whole or not at all. The path's symbolic links are followed
 * to the file they name. A regular or new file gets a temporary file in the
 * same directory (the old file's mode, or 0666 less the umask), flushed,
 * synced and renamed over it by commit; abort removes it. A special file
 * (device, FIFO), or a file named through an open descriptor (/dev/stdout,
 * /proc/self/fd/N), is written in place: renaming over it would destroy it.
 * A directory, or a directory that does not exist, is an error. A reader
 * never sees a half-written file, a failed write is never committed and a
 * failure leaves no debris. Open and commit: 0, or -1 with errno set;
 * commit and abort release a either way. */
struct fs_atomic {
	FILE *f;
	char *path, *tmp;
};
int fs_atomic_open(struct fs_atomic *a, const char *path);
int fs_atomic_commit(struct fs_atomic *a);
void fs_atomic_abort(struct fs_atomic *a);
/* The same for bytes in memory. */
int fs_write_file_atomic(const char *path, const void *data, size_t len);

/* Saturating arithmetic on byte counts (never negative): a sum or product
 * past INT64_MAX stays there instead of wrapping (the cost model at absurd
 * --tokens or --dims). */
static inline int64_t fs_sat_add(int64_t a, int64_t b)
{
	int64_t r;
	return __builtin_add_overflow(a, b, &r) ? INT64_MAX : r;
}

static inline int64_t fs_sat_mul(int64_t a, int64_t b)
{
	int64_t r;
	return __builtin_mul_overflow(a, b, &r) ? INT64_MAX : r;
}

/* Grow *p (element size `size`) so that it holds at least `need` elements. */
void fs_grow(void **p, size_t size, uint32_t *cap, size_t need);
#define FS_GROW(arr, cap, need) fs_grow((void **)&(arr), sizeof(*(arr)), &(cap), (need))

/* Chained-block arena: many small allocations, one release. 16-byte aligned. */
struct fs_arena_block;
struct fs_arena {
	struct fs_arena_block *head;
	size_t used;      /* bytes used in head */
	size_t cap;       /* capacity of head */
};

void fs_arena_init(struct fs_arena *a);
void *fs_arena_alloc(struct fs_arena *a, size_t n);
char *fs_arena_strndup(struct fs_arena *a, const char *s, size_t n);
void fs_arena_release(struct fs_arena *a);

/* 64-bit content hash (not cryptographic; equality is confirmed by memcmp). */
uint64_t fs_hash_bytes(const void *data, size_t n, uint64_t seed);
/* qsort order of uint32_t values, ascending. */
int fs_cmp_u32(const void *a, const void *b);
/* Every value of need is among have's (a linear scan each: short lists). */
int fs_u32_has_all(const uint32_t *need, uint32_t n_need, const uint32_t *have, uint32_t n_have);
/* The first s in [p, end) (text that need not end in NUL), or NULL. */
const char *fs_find(const char *p, const char *end, const char *s);
/* The name among v[0..n) that word[0..len) is most likely a typo of, for a
 * "did you mean" (case aside): the nearest within 1 edit up to 5 letters, 2
 * beyond (an insertion, deletion, substitution or swap of neighbours is one),
 * else the only name it begins (a name listed twice is one); NULL when none
 * is near. Used by the CLI (commands, options), the gates and --apply. */
const char *fs_did_you_mean(const char *word, size_t len, const char *const *v, uint32_t n);

/* String interner: text -> dense id (0 is the empty string). */
struct fs_strent {
	const char *s;        /* NUL-terminated, in the table's arena */
	uint32_t len;
	uint64_t hash;
};

struct fs_strtab {
	struct fs_arena arena;
	struct fs_strent *ent; /* id -> entry */
	uint32_t n, cap;
	uint32_t *slots;      /* open addressing: id + 1, 0 = empty */
	uint32_t nslots;      /* power of two */
};

void fs_strtab_init(struct fs_strtab *t);
uint32_t fs_strtab_intern(struct fs_strtab *t, const char *s, size_t n);
/* Returns the id or UINT32_MAX if the text was never interned. */
uint32_t fs_strtab_find(const struct fs_strtab *t, const char *s, size_t n);
static inline const char *fs_strtab_str(const struct fs_strtab *t, uint32_t id)
{
	return t->ent[id].s;
}
void fs_strtab_release(struct fs_strtab *t);

#endif
