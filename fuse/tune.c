/*
 * tune.c: the persistent tuning cache (see tune.h).
 */
#define _POSIX_C_SOURCE 200809L
#include "fusescan/tune.h"

#include "fusescan/base.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define FORMAT_FAMILY "fusescan.tuning/" /* every version's name begins so */
#define FORMAT FORMAT_FAMILY "1"

int fs_cache_dir(char *dir, size_t n)
{
	const char *base = getenv("FUSESCAN_CACHE"), *home = getenv("HOME");
	if (base && *base)
		snprintf(dir, n, "%s", base);
	else if (home && *home)
		snprintf(dir, n, "%s/.cache/fusescan", home);
	else
		return -1;
	return 0;
}

int fs_cache_dir_make(char *dir, size_t n)
{
	if (fs_cache_dir(dir, n))
		return -1;
	const char *base = getenv("FUSESCAN_CACHE");
	char *slash = strrchr(dir, '/');
	if (!(base && *base) && slash) { /* ~/.cache first */
		*slash = '\0';
		mkdir(dir, 0777);
		*slash = '/';
	}
	mkdir(dir, 0777); /* errors show up when a file in it is opened */
	return 0;
}

/* text parsed as a cache, or NULL with why (path names it in messages) */
static cJSON *parse_cache(const char *path, const char *text, size_t len, char *why, size_t n)
{
	const char *end = NULL;
	cJSON *root = cJSON_ParseWithLengthOpts(text, len, &end, 0);
	if (!root) {
		/* line:col of where parsing stopped */
		const char *at = end && end >= text && end <= text + len ? end : text;
		uint32_t line = 1, col = 1;
		for (const char *q = text; q < at; q++)
			line += *q == '\n', col = *q == '\n' ? 1 : col + 1;
		snprintf(why, n, "%s:%u:%u: tuning cache is not JSON; ignored (it is rewritten at the next save)", path, line, col);
	} else if (!cJSON_IsString(cJSON_GetObjectItem(root, "format")) ||
		   strcmp(cJSON_GetObjectItem(root, "format")->valuestring, FORMAT) ||
		   !cJSON_IsArray(cJSON_GetObjectItem(root, "entries"))) {
		snprintf(why, n, "%s:1:1: not a fusescan tuning cache (format %s expected); ignored (it is rewritten at the next save)",
			 path, FORMAT);
		cJSON_Delete(root);
		root = NULL;
	}
	return root;
}

/* How every cache this fusescan writes begins (cJSON_Print of
 * empty_cache's order): a file that does not is none of its caches, and
 * never replaced, whatever else it says. */
#define SIGNATURE "{\n\t\"format\":\t\"" FORMAT "\","

/* The file parsed, or NULL with why (a missing file is an empty cache, no
 * why). *foreign: the file is there but no cache this fusescan may replace:
 * unreadable, too large, another version's, or not begun as this
 * fusescan's caches are (a text that merely mentions the format); a
 * damaged cache of its own (not JSON after the signature) is replaced. */
static cJSON *read_cache(const char *path, char *why, size_t n, int *foreign)
{
	size_t len;
	char *text = fs_read_input(path, FS_IN_CACHE, &len);
	*foreign = !text && errno != ENOENT;
	if (!text) {
		if (*foreign)
			snprintf(why, n, "tuning cache %s: %s; not replaced", path, fs_input_error(errno, FS_IN_CACHE));
		return NULL;
	}
	cJSON *root = parse_cache(path, text, len, why, n);
	const char *family = strstr(text, FORMAT_FAMILY);
	*foreign = !root && strncmp(text, SIGNATURE, strlen(SIGNATURE));
	if (*foreign && family && strncmp(family, FORMAT "\"", strlen(FORMAT) + 1)) /* kept for the fusescan that wrote it */
		snprintf(why, n, "%s:1:1: a tuning cache of another fusescan's format (%s expected); not replaced", path, FORMAT);
	else if (*foreign)
		snprintf(why, n, "%s:1:1: not a tuning cache this fusescan wrote (format %s expected); not replaced", path, FORMAT);
	free(text);
	return root;
}

static cJSON *empty_cache(void)
{
	cJSON *root = cJSON_CreateObject();
	cJSON_AddStringToObject(root, "format", FORMAT);
	cJSON_AddItemToObject(root, "entries", cJSON_CreateArray());
	return root;
}

static const char *str(const cJSON *o, const char *name)
{
	const cJSON *s = cJSON_GetObjectItem(o, name);
	return cJSON_IsString(s) ? s->valuestring : NULL;
}

static double num(const cJSON *o, const char *name, double dflt)
{
	const cJSON *v = cJSON_GetObjectItem(o, name);
	return cJSON_IsNumber(v) ? v->valuedouble : dflt;
}

/* a tactic field: 0 (rejected by sane) unless a small non-negative integer */
static uint16_t field(const cJSON *o, const char *name)
{
	double v = num(o, name, 0);
	return v >= 0 && v <= 65535 ? (uint16_t)v : 0;
}

/* a count: 0 unless an integer that fits (range-checked before the cast) */
static uint32_t count(const cJSON *o, const char *name)
{
	double v = num(o, name, 0);
	return v >= 0 && v <= 4294967295.0 ? (uint32_t)v : 0;
}

static const char *const key_fields[] = {"kernel", "bucket", "device", "nvrtc", "policy"};

static const char *key_field(const struct fs_tune_key *k, int i)
{
	const char *f[] = {k->kernel, k->bucket, k->device, k->nvrtc, k->policy};
	return f[i];
}

/* 1: the entry's key is k; 2: the same but for the device */
static int key_matches(const cJSON *e, const struct fs_tune_key *k)
{
	int device_differs = 0;
	for (int i = 0; i < 5; i++) {
		const char *s = str(e, key_fields[i]);
		if (!s)
			return 0;
		if (strcmp(s, key_field(k, i))) {
			if (i != 2)
				return 0;
			device_differs = 1;
		}
	}
	return device_differs ? 2 : 1;
}

/* path's cache, parsed from root (NULL: empty) */
static void init(struct fs_tune_cache *c, const char *path, cJSON *root)
{
	snprintf(c->path, sizeof(c->path), "%s", path);
	c->root = root ? root : empty_cache();
	c->mine = cJSON_CreateArray();
}

void fs_tune_open_text(struct fs_tune_cache *c, const char *path, const char *text, size_t len)
{
	memset(c, 0, sizeof(*c));
	init(c, path, parse_cache(path, text, len, c->warning, sizeof(c->warning)));
}

void fs_tune_open(struct fs_tune_cache *c, const char *path)
{
	char dir[900], def[1024] = "";
	memset(c, 0, sizeof(*c));
	if (!path && fs_cache_dir(dir, sizeof(dir)) == 0)
		snprintf(def, sizeof(def), "%s/tuning.json", dir);
	c->in_cache_dir = !path && def[0];
	path = path ? path : def;
	init(c, path, path[0] ? read_cache(path, c->warning, sizeof(c->warning), &c->foreign) : NULL);
}

/* a tactic must be one the generator can be asked for */
static int sane(const struct fs_tune_entry *e)
{
	const struct fs_tactic *t = &e->tactic;
	return t->vec >= 1 && t->vec <= 8 && t->threads >= 1 && t->threads <= 1024 && t->per >= 1 && t->per <= 1024 &&
	       t->fast <= 1 && t->l2 <= 2 && t->lin <= 1;
}

/* The tactic and figures of entry it (key k) into e: 0, or -1 for a
 * tactic the generator cannot take (a damaged entry: as if missing). */
static int read_entry(const cJSON *it, const struct fs_tune_key *k, struct fs_tune_entry *e)
{
	const cJSON *t = cJSON_GetObjectItem(it, "tactic");
	memset(e, 0, sizeof(*e));
	e->key = *k;
	e->tactic = (struct fs_tactic){field(t, "vec"), field(t, "threads"), field(t, "per"), field(t, "fast"), field(t, "l2"),
				   field(t, "lin")};
	if (!sane(e))
		return -1;
	snprintf(e->name, sizeof(e->name), "%s", str(it, "name") ? str(it, "name") : "");
	e->ms = num(it, "median_ms", 0), e->spread = num(it, "spread_ms", 0);
	e->timed = count(it, "tactics_timed"), e->failed = count(it, "tactics_failed");
	snprintf(e->created, sizeof(e->created), "%s", str(it, "created") ? str(it, "created") : "");
	return 0;
}

/* The last usable entry of arr with key k into e: 0, or -1; entries of
 * another device counted */
static int find_in(struct fs_tune_cache *c, const cJSON *arr, const struct fs_tune_key *k, struct fs_tune_entry *e)
{
	const cJSON *it;
	struct fs_tune_entry got;
	int found = -1;
	cJSON_ArrayForEach(it, arr)
	{
		int m = key_matches(it, k);
		c->other_device += m == 2;
		if (m == 1 && read_entry(it, k, &got) == 0)
			*e = got, found = 0;
	}
	return found;
}

int fs_tune_lookup(struct fs_tune_cache *c, const struct fs_tune_key *k, struct fs_tune_entry *e)
{
	c->other_device = 0; /* for this key */
	if (c->retune) { /* fusescan tune: the entry ignored */
		c->misses++;
		return -1;
	}
	struct fs_tune_entry saved, mine;
	int in_file = find_in(c, cJSON_GetObjectItem((cJSON *)c->root, "entries"), k, &saved);
	int in_run = find_in(c, c->mine, k, &mine); /* what this run recorded wins */
	if (in_file && in_run) {
		c->misses++;
		return -1;
	}
	*e = in_run ? saved : mine;
	c->hits++;
	return 0;
}

void fs_tune_reject(struct fs_tune_cache *c)
{
	if (!c->hits)
		return; /* no hit to take back */
	c->hits--;
	c->misses++;
}

static cJSON *entry_json(const struct fs_tune_entry *e)
{
	cJSON *o = cJSON_CreateObject();
	for (int i = 0; i < 5; i++)
		cJSON_AddStringToObject(o, key_fields[i], key_field(&e->key, i));
	cJSON *t = cJSON_AddObjectToObject(o, "tactic");
	cJSON_AddNumberToObject(t, "vec", e->tactic.vec);
	cJSON_AddNumberToObject(t, "threads", e->tactic.threads);
	cJSON_AddNumberToObject(t, "per", e->tactic.per);
	cJSON_AddNumberToObject(t, "fast", e->tactic.fast);
	cJSON_AddNumberToObject(t, "l2", e->tactic.l2);
	cJSON_AddNumberToObject(t, "lin", e->tactic.lin);
	cJSON_AddStringToObject(o, "name", e->name);
	cJSON_AddNumberToObject(o, "median_ms", e->ms);
	cJSON_AddNumberToObject(o, "spread_ms", e->spread);
	if (e->runner_up[0]) {
		cJSON *r = cJSON_AddObjectToObject(o, "runner_up");
		cJSON_AddStringToObject(r, "name", e->runner_up);
		cJSON_AddNumberToObject(r, "median_ms", e->runner_up_ms);
	}
	cJSON_AddNumberToObject(o, "tactics_timed", e->timed);
	cJSON_AddNumberToObject(o, "tactics_failed", e->failed);
	cJSON_AddStringToObject(o, "fusescan_version", FS_VERSION);
	char when[32];
	time_t now = time(NULL);
	struct tm tm;
	strftime(when, sizeof(when), "%Y-%m-%dT%H:%M:%SZ", gmtime_r(&now, &tm));
	cJSON_AddStringToObject(o, "created", e->created[0] ? e->created : when);
	return o;
}

/* ---- saving: the file re-read and merged under a lock, in one pass ---- */

/* e's five key fields into f: 0, or -1 for an entry without them */
static int entry_fields(const cJSON *e, const char *f[5])
{
	for (int i = 0; i < 5; i++)
		if (!(f[i] = str(e, key_fields[i])))
			return -1;
	return 0;
}

static uint64_t fields_hash(const char *const f[5])
{
	uint64_t h = 0x74756e65ull;
	for (int i = 0; i < 5; i++) {
		size_t k = strlen(f[i]);
		h = fs_hash_bytes(f[i], k, h + k);
	}
	return h;
}

static int fields_equal(const char *const f[5], const cJSON *e)
{
	for (int i = 0; i < 5; i++) {
		const char *v = str(e, key_fields[i]);
		if (!v || strcmp(f[i], v))
			return 0;
	}
	return 1;
}

/* The entries of this run by key (open addressing, at most half full) */
struct keyset {
	uint32_t cap;
	const cJSON **v;
};

/* the slot of f's key: its entry, or the empty slot where it goes */
static const cJSON **keyset_slot(const struct keyset *k, const char *const f[5])
{
	uint32_t i = (uint32_t)fields_hash(f) & (k->cap - 1);
	while (k->v[i] && !fields_equal(f, k->v[i]))
		i = (i + 1) & (k->cap - 1);
	return &k->v[i];
}

static void keyset_of(struct keyset *k, const cJSON *mine)
{
	uint32_t n = (uint32_t)cJSON_GetArraySize(mine);
	for (k->cap = 16; k->cap < 2 * n + 2; k->cap *= 2)
		;
	k->v = fs_xcalloc(k->cap, sizeof(*k->v));
	const cJSON *e;
	const char *f[5];
	cJSON_ArrayForEach(e, mine) if (entry_fields(e, f) == 0) *keyset_slot(k, f) = e; /* the last of a key wins */
}

/* now's entries of a key this run recorded dropped, then this run's (the
 * last of each key) added: linear in both */
static void merge(cJSON *now, const cJSON *mine)
{
	struct keyset k;
	keyset_of(&k, mine);
	cJSON *entries = cJSON_GetObjectItem(now, "entries");
	const char *f[5];
	for (cJSON *e = entries->child, *next; e; e = next) {
		next = e->next;
		if (entry_fields(e, f) == 0 && *keyset_slot(&k, f))
			cJSON_Delete(cJSON_DetachItemViaPointer(entries, e));
	}
	const cJSON *e;
	cJSON_ArrayForEach(e, mine) if (entry_fields(e, f) == 0 && *keyset_slot(&k, f) == e)
		cJSON_AddItemToArray(entries, cJSON_Duplicate(e, 1));
	free(k.v);
}

void fs_tune_record(struct fs_tune_cache *c, const struct fs_tune_entry *e)
{
	cJSON_AddItemToArray(c->mine, entry_json(e));
	c->recorded++;
}

char *fs_tune_lock_path(const char *path)
{
	char *real = fs_resolve_links(path);
	real = real ? real : fs_xstrndup(path, strlen(path));
	size_t n = strlen(real) + 6;
	real = fs_xrealloc(real, n);
	strcat(real, ".lock");
	return real;
}

/* An exclusive lock on the cache's lock file, waited for up to 60 s: its
 * fd, or -1 with why. Where the file system has no locks (ENOLCK), saves
 * are not kept apart. */
static int lock_cache(const char *path, char *why, size_t n)
{
	char *lock = fs_tune_lock_path(path);
	int fd = open(lock, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0666);
	if (fd < 0)
		snprintf(why, n, "tuning cache %s: cannot open its lock %s: %s; not saved", path, lock, strerror(errno));
	for (int waited = 0; fd >= 0 && flock(fd, LOCK_EX | LOCK_NB) != 0 && (errno == EWOULDBLOCK || errno == EINTR); waited++) {
		if (waited == 6000) {
			snprintf(why, n, "tuning cache %s: locked by another fusescan for 60 s; not saved", path);
			close(fd);
			fd = -1;
		}
		nanosleep(&(struct timespec){0, 10 * 1000 * 1000}, NULL);
	}
	free(lock);
	return fd;
}

/* Under the lock: the file as it is now, this run's entries merged, written
 * whole and renamed over it. 0, or -1 with why. */
static int merge_and_write(struct fs_tune_cache *c, char *why, size_t n)
{
	int foreign;
	cJSON *now = read_cache(c->path, why, n, &foreign); /* merged with what others wrote since */
	if (foreign)
		return -1;
	now = now ? now : empty_cache();
	merge(now, c->mine);
	char *text = cJSON_Print(now);
	size_t len = strlen(text);
	text = fs_xrealloc(text, len + 2);
	text[len++] = '\n';
	int rc = strncmp(text, SIGNATURE, strlen(SIGNATURE)) ? (errno = EINVAL, -1) : fs_write_file_atomic(c->path, text, len);
	if (rc)
		snprintf(why, n, "tuning cache %s: cannot write: %s", c->path, strerror(errno));
	free(text);
	cJSON_Delete(now);
	return rc;
}

int fs_tune_save(struct fs_tune_cache *c)
{
	if (!c->recorded || c->foreign) /* a foreign file: warning says why, and it stays */
		return c->recorded ? -1 : 0;
	if (!c->path[0]) {
		snprintf(c->warning, sizeof(c->warning), "tuning cache: no path (no HOME, no FUSESCAN_CACHE, no --cache); not saved");
		return -1;
	}
	char why[1200] = "", dir[900];
	if (c->in_cache_dir)
		fs_cache_dir_make(dir, sizeof(dir));
	int lock = lock_cache(c->path, why, sizeof(why));
	int rc = lock < 0 ? -1 : merge_and_write(c, why, sizeof(why));
	if (lock >= 0)
		close(lock); /* and the lock with it */
	if (rc)
		snprintf(c->warning, sizeof(c->warning), "%s", why);
	return rc;
}

void fs_tune_close(struct fs_tune_cache *c)
{
	cJSON_Delete(c->root);
	cJSON_Delete(c->mine);
	memset(c, 0, sizeof(*c));
}

void fs_tune_print_stats(const struct fs_tune_cache *c, FILE *out)
{
	fprintf(out, "tuning cache %s: %u hit%s, %u miss%s, %u recorded, %u other-device entr%s ignored\n",
		c->path[0] ? c->path : "(none)", c->hits, c->hits == 1 ? "" : "s", c->misses, c->misses == 1 ? "" : "es",
		c->recorded, c->other_device, c->other_device == 1 ? "y" : "ies");
	if (c->warning[0])
		fprintf(out, "  warning: %s\n", c->warning);
}
