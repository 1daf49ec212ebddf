/*
 * tune.c: the persistent tuning cache (see tune.h).
 */
#define _POSIX_C_SOURCE 200809L
#include "fusescan/tune.h"

#include "fusescan/base.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#define FORMAT_FAMILY "fusescan.tuning/" /* every version's name begins so */
#define FORMAT FORMAT_FAMILY "1"

int fs_cache_dir(char *dir, size_t n)
{
	const char *base = getenv("FUSESCAN_CACHE"), *home = getenv("HOME");
	if (base && *base)
		snprintf(dir, n, "%s", base);
	else if (home && *home) {
		char parent[1024];
		snprintf(parent, sizeof(parent), "%s/.cache", home);
		mkdir(parent, 0777);
		snprintf(dir, n, "%s/fusescan", parent);
	} else
		return -1;
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

/* The file parsed, or NULL with why (a missing file is an empty cache, no
 * why). *foreign: the file is there but no cache, not even a damaged one
 * (unreadable, too large, or without the format's name): never replaced, as
 * --cache naming some other file must not destroy it. */
static cJSON *read_cache(const char *path, char *why, size_t n, int *foreign)
{
	size_t len;
	char *text = fs_read_input(path, FS_IN_CACHE, &len);
	*foreign = !text && errno != ENOENT;
	if (!text) {
		if (*foreign)
			snprintf(why, n, "tuning cache %s: %s; ignored, and not replaced", path, fs_input_error(errno, FS_IN_CACHE));
		return NULL;
	}
	cJSON *root = parse_cache(path, text, len, why, n);
	const char *family = strstr(text, FORMAT_FAMILY);
	*foreign = !root && (!family || strncmp(family, FORMAT "\"", strlen(FORMAT) + 1));
	if (*foreign && family) /* another version's cache: kept for the fusescan that wrote it */
		snprintf(why, n, "%s:1:1: a tuning cache of another fusescan's format (%s expected); ignored, and not replaced", path,
			 FORMAT);
	else if (*foreign)
		snprintf(why, n, "%s:1:1: not a fusescan tuning cache (format %s expected); ignored, and not replaced", path, FORMAT);
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
	path = path ? path : def;
	int foreign;
	init(c, path, path[0] ? read_cache(path, c->warning, sizeof(c->warning), &foreign) : NULL);
}

/* a tactic must be one the generator can be asked for */
static int sane(const struct fs_tune_entry *e)
{
	const struct fs_tactic *t = &e->tactic;
	return t->vec >= 1 && t->vec <= 8 && t->threads >= 1 && t->threads <= 1024 && t->per >= 1 && t->per <= 1024 &&
	       t->fast <= 1 && t->l2 <= 2 && t->lin <= 1;
}

int fs_tune_lookup(struct fs_tune_cache *c, const struct fs_tune_key *k, struct fs_tune_entry *e)
{
	const cJSON *it;
	c->other_device = 0; /* for this key */
	if (c->retune) { /* fusescan tune: the entry ignored */
		c->misses++;
		return -1;
	}
	cJSON_ArrayForEach(it, cJSON_GetObjectItem((cJSON *)c->root, "entries"))
	{
		int m = key_matches(it, k);
		c->other_device += m == 2;
		if (m != 1)
			continue;
		const cJSON *t = cJSON_GetObjectItem(it, "tactic");
		memset(e, 0, sizeof(*e));
		e->key = *k;
		e->tactic = (struct fs_tactic){field(t, "vec"), field(t, "threads"), field(t, "per"), field(t, "fast"), field(t, "l2"),
					   field(t, "lin")};
		if (!sane(e))
			continue; /* a damaged entry: as if missing */
		snprintf(e->name, sizeof(e->name), "%s", str(it, "name") ? str(it, "name") : "");
		e->ms = num(it, "median_ms", 0), e->spread = num(it, "spread_ms", 0);
		e->timed = (uint32_t)num(it, "tactics_timed", 0), e->failed = (uint32_t)num(it, "tactics_failed", 0);
		snprintf(e->created, sizeof(e->created), "%s", str(it, "created") ? str(it, "created") : "");
		c->hits++;
		return 0;
	}
	c->misses++;
	return -1;
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

/* replaces the entries of root with e's key by e */
static void merge(cJSON *root, const cJSON *e)
{
	cJSON *entries = cJSON_GetObjectItem(root, "entries");
	struct fs_tune_key k;
	char *f[] = {k.kernel, k.bucket, k.device, k.nvrtc, k.policy};
	size_t sz[] = {sizeof(k.kernel), sizeof(k.bucket), sizeof(k.device), sizeof(k.nvrtc), sizeof(k.policy)};
	for (int i = 0; i < 5; i++) {
		const char *v = str(e, key_fields[i]);
		snprintf(f[i], sz[i], "%s", v ? v : "");
	}
	for (int i = cJSON_GetArraySize(entries) - 1; i >= 0; i--)
		if (key_matches(cJSON_GetArrayItem(entries, i), &k) == 1)
			cJSON_DeleteItemFromArray(entries, i);
	cJSON_AddItemToArray(entries, cJSON_Duplicate(e, 1));
}

void fs_tune_record(struct fs_tune_cache *c, const struct fs_tune_entry *e)
{
	cJSON *o = entry_json(e);
	merge(c->root, o);
	cJSON_AddItemToArray(c->mine, o);
	c->recorded++;
}

int fs_tune_save(struct fs_tune_cache *c)
{
	if (!c->recorded)
		return 0;
	if (!c->path[0]) {
		snprintf(c->warning, sizeof(c->warning), "tuning cache: no path (no HOME, no FUSESCAN_CACHE, no --cache); not saved");
		return -1;
	}
	char why[1200] = "";
	int foreign;
	cJSON *now = read_cache(c->path, why, sizeof(why), &foreign); /* merged with what others wrote since */
	if (foreign) {
		snprintf(c->warning, sizeof(c->warning), "%s", why);
		return -1;
	}
	if (!now)
		now = empty_cache();
	const cJSON *e;
	cJSON_ArrayForEach(e, (cJSON *)c->mine)
	merge(now, e);
	char *text = cJSON_Print(now);
	size_t len = strlen(text);
	text = fs_xrealloc(text, len + 2);
	text[len++] = '\n';
	int rc = fs_write_file_atomic(c->path, text, len);
	if (rc)
		snprintf(c->warning, sizeof(c->warning), "tuning cache %s: cannot write: %s", c->path, strerror(errno));
	free(text);
	cJSON_Delete(now);
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
