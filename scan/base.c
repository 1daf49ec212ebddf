/*
 * base.c: allocation helpers, the chained-block arena, the content hash and
 * the string interner. Used by every layer; depends on nothing but libc.
 */
#define _POSIX_C_SOURCE 200809L
#define _DEFAULT_SOURCE /* madvise's MADV_HUGEPAGE */
#include "fusescan/base.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

static void oom(size_t n)
{
	fprintf(stderr, "fusescan: out of memory (asked for %zu bytes)\n", n);
	abort();
}

void *fs_xmalloc(size_t n)
{
	void *p = malloc(n ? n : 1);
	if (!p)
		oom(n);
	return p;
}

void *fs_xcalloc(size_t n, size_t size)
{
	void *p = calloc(n ? n : 1, size ? size : 1);
	if (!p)
		oom(n * size);
	return p;
}

void *fs_xrealloc(void *p, size_t n)
{
	void *q = realloc(p, n ? n : 1);
	if (!q)
		oom(n);
	return q;
}

void *fs_xmalloc_huge(size_t n)
{
	enum { HUGE_PAGE = 2u << 20 };
	if (n < HUGE_PAGE)
		return fs_xmalloc(n);
	if (n > SIZE_MAX - HUGE_PAGE)
		oom(n);
	size_t rounded = (n + HUGE_PAGE - 1) / HUGE_PAGE * HUGE_PAGE;
	void *p = aligned_alloc(HUGE_PAGE, rounded);
	if (!p)
		oom(n);
#ifdef MADV_HUGEPAGE
	(void)madvise(p, rounded, MADV_HUGEPAGE); /* advice: where the kernel declines, 4 KiB pages serve */
#endif
	return p;
}

char *fs_xstrndup(const char *s, size_t n)
{
	char *p = fs_xmalloc(n + 1);
	memcpy(p, s, n);
	p[n] = '\0';
	return p;
}

void fs_grow(void **p, size_t size, uint32_t *cap, size_t need)
{
	size_t c = *cap;
	if (need <= c)
		return;
	if (need > UINT32_MAX)
		oom(need * size);
	c = c ? c : 8;
	while (c < need)
		c *= 2;
	if (c > UINT32_MAX)
		c = UINT32_MAX;
	*p = fs_xrealloc(*p, c * size);
	*cap = (uint32_t)c;
}

/* ---- arena ---------------------------------------------------------------- */

struct fs_arena_block {
	struct fs_arena_block *next;
	max_align_t align[];
};

enum { ARENA_BLOCK = 64 * 1024 };

void fs_arena_init(struct fs_arena *a)
{
	a->head = NULL;
	a->used = 0;
	a->cap = 0;
}

void *fs_arena_alloc(struct fs_arena *a, size_t n)
{
	n = (n + 15) & ~(size_t)15;
	if (!a->head || a->used + n > a->cap) {
		size_t cap = n > ARENA_BLOCK ? n : ARENA_BLOCK;
		struct fs_arena_block *b = fs_xmalloc(sizeof(*b) + cap);
		b->next = a->head;
		a->head = b;
		a->used = 0;
		a->cap = cap;
	}
	void *p = (char *)a->head->align + a->used;
	a->used += n;
	return p;
}

char *fs_arena_strndup(struct fs_arena *a, const char *s, size_t n)
{
	char *p = fs_arena_alloc(a, n + 1);
	memcpy(p, s, n);
	p[n] = '\0';
	return p;
}

void fs_arena_release(struct fs_arena *a)
{
	struct fs_arena_block *b = a->head;
	while (b) {
		struct fs_arena_block *next = b->next;
		free(b);
		b = next;
	}
	fs_arena_init(a);
}

/* ---- hash: 8 bytes a step, multiply-xorshift mixing (wyhash-like) ------- */

static inline uint64_t mix(uint64_t h, uint64_t v)
{
	h ^= v * 0x9E3779B97F4A7C15ull;
	h = (h ^ (h >> 29)) * 0xBF58476D1CE4E5B9ull;
	return h ^ (h >> 32);
}

uint64_t fs_hash_bytes(const void *data, size_t n, uint64_t seed)
{
	const unsigned char *p = data;
	uint64_t h = seed ^ (n * 0x94D049BB133111EBull);
	uint64_t h2 = h ^ 0x2545F4914F6CDD1Dull;
	while (n >= 16) {
		uint64_t v, w;
		memcpy(&v, p, 8);
		memcpy(&w, p + 8, 8);
		h = mix(h, v);
		h2 = mix(h2, w);
		p += 16;
		n -= 16;
	}
	uint64_t tail[2] = {0, 0};
	memcpy(tail, p, n);
	h = mix(h, tail[0]);
	h2 = mix(h2, tail[1]);
	return mix(h, h2);
}

/* ---- string interner ------------------------------------------------------ */

static void strtab_rehash(struct fs_strtab *t, uint32_t nslots)
{
	free(t->slots);
	t->slots = fs_xcalloc(nslots, sizeof(*t->slots));
	t->nslots = nslots;
	for (uint32_t id = 0; id < t->n; id++) {
		uint32_t i = (uint32_t)t->ent[id].hash & (nslots - 1);
		while (t->slots[i])
			i = (i + 1) & (nslots - 1);
		t->slots[i] = id + 1;
	}
}

void fs_strtab_init(struct fs_strtab *t)
{
	memset(t, 0, sizeof(*t));
	fs_arena_init(&t->arena);
	strtab_rehash(t, 1024);
	fs_strtab_intern(t, "", 0);
}

static uint32_t strtab_lookup(const struct fs_strtab *t, const char *s, size_t n,
			      uint64_t h, uint32_t *slot)
{
	uint32_t i = (uint32_t)h & (t->nslots - 1);
	for (;; i = (i + 1) & (t->nslots - 1)) {
		uint32_t e = t->slots[i];
		if (!e)
			break;
		e--;
		const struct fs_strent *x = &t->ent[e];
		if (x->hash == h && x->len == n && memcmp(x->s, s, n) == 0)
			return e;
	}
	*slot = i;
	return UINT32_MAX;
}

uint32_t fs_strtab_find(const struct fs_strtab *t, const char *s, size_t n)
{
	uint32_t slot;
	return strtab_lookup(t, s, n, fs_hash_bytes(s, n, 0), &slot);
}

uint32_t fs_strtab_intern(struct fs_strtab *t, const char *s, size_t n)
{
	uint64_t h = fs_hash_bytes(s, n, 0);
	uint32_t slot;
	uint32_t id = strtab_lookup(t, s, n, h, &slot);
	if (id != UINT32_MAX)
		return id;
	FS_GROW(t->ent, t->cap, t->n + 1);
	id = t->n++;
	t->ent[id].s = fs_arena_strndup(&t->arena, s, n);
	t->ent[id].len = (uint32_t)n;
	t->ent[id].hash = h;
	t->slots[slot] = id + 1;
	if (t->n * 2 > t->nslots)
		strtab_rehash(t, t->nslots * 2);
	return id;
}

void fs_strtab_release(struct fs_strtab *t)
{
	free(t->ent);
	free(t->slots);
	fs_arena_release(&t->arena);
	memset(t, 0, sizeof(*t));
}

int fs_cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
	return x < y ? -1 : x > y;
}

int fs_u32_has_all(const uint32_t *need, uint32_t n_need, const uint32_t *have, uint32_t n_have)
{
	for (uint32_t i = 0; i < n_need; i++) {
		uint32_t k = 0;
		while (k < n_have && have[k] != need[i])
			k++;
		if (k == n_have)
			return 0;
	}
	return 1;
}

const char *fs_find(const char *p, const char *end, const char *s)
{
	size_t n = strlen(s);
	for (; p + n <= end; p++)
		if (*p == *s && !memcmp(p, s, n))
			return p;
	return NULL;
}

/* ---- "did you mean" ---------------------------------------------------------- */

enum { NEAR_MAX = 64 }; /* a longer word is near no name */

static int same(char x, char y)
{
	return tolower((unsigned char)x) == tolower((unsigned char)y);
}

/* The edit distance of a[0..n) and b[0..m), both at most NEAR_MAX long,
 * where a swap of neighbours counts one (optimal string alignment). */
static size_t distance(const char *a, size_t n, const char *b, size_t m)
{
	size_t d[3][NEAR_MAX + 1]; /* the table's rows i - 2, i - 1 and i, row i at d[i % 3] */
	for (size_t j = 0; j <= m; j++)
		d[0][j] = j;
	for (size_t i = 1; i <= n; i++) {
		size_t *r = d[i % 3], *up = d[(i - 1) % 3], *up2 = d[(i + 1) % 3];
		r[0] = i;
		for (size_t j = 1; j <= m; j++) {
			size_t c = up[j - 1] + !same(a[i - 1], b[j - 1]);
			if (up[j] + 1 < c)
				c = up[j] + 1;
			if (r[j - 1] + 1 < c)
				c = r[j - 1] + 1;
			if (i > 1 && j > 1 && same(a[i - 1], b[j - 2]) && same(a[i - 2], b[j - 1]) && up2[j - 2] + 1 < c)
				c = up2[j - 2] + 1;
			r[j] = c;
		}
	}
	return d[n % 3][m];
}

const char *fs_did_you_mean(const char *word, size_t len, const char *const *v, uint32_t n)
{
	const char *near = NULL, *begun = NULL;
	size_t best = len <= 5 ? 2 : 3; /* nearer than this */
	uint32_t n_begun = 0;
	for (uint32_t i = 0; i < n && len && len <= NEAR_MAX; i++) {
		size_t m = strlen(v[i]), k = 0;
		if (m > NEAR_MAX)
			continue;
		size_t e = distance(word, len, v[i], m);
		if (e < best)
			best = e, near = v[i];
		while (k < len && k < m && same(word[k], v[i][k]))
			k++;
		if (len >= 2 && k == len && m > len && (!begun || strcmp(begun, v[i])))
			begun = begun ? begun : v[i], n_begun++; /* a name listed twice is one */
	}
	return near ? near : n_begun == 1 ? begun : NULL;
}
