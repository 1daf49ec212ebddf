/*
 * adconfig.c: AutoDeploy's config layers and their deep merge (see
 * fusescan/adconfig.h), a registry entry's files, and the effective config
 * of a discovery: the tree's config/default.yaml, the files the model
 * registry lists for --model, then each --ad-config, in that order (AD's:
 * utils/_config.py merges yaml_default, then yaml_extra in order).
 * Called by the discover driver; reports read it through the catalog.
 */
#include "fusescan/adconfig.h"
#include "fusescan/catalog.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

void fs_adconfig_init(struct fs_adconfig *a)
{
	memset(a, 0, sizeof(*a));
	fs_yaml_init(&a->y);
	a->merged = -1;
}

void fs_adconfig_release(struct fs_adconfig *a)
{
	for (uint32_t i = 0; i < a->n_layers; i++)
		free(a->layers[i].path);
	free(a->layers);
	fs_yaml_release(&a->y);
	memset(a, 0, sizeof(*a));
}

int fs_adconfig_add_text(struct fs_adconfig *a, const char *path, const char *text, size_t len,
			 enum fs_layer_kind kind, struct fs_diags *d)
{
	if (a->n_layers >= UINT16_MAX)
		return -1;
	int32_t root = fs_yaml_parse(&a->y, (uint16_t)a->n_layers, path, text, len, d);
	if (root < 0)
		return -1;
	const struct fs_ynode *r = &a->y.v[root];
	if (r->kind != FS_Y_MAP && r->kind != FS_Y_NULL) {
		fs_diag_add(d, FS_ERROR, path, r->line, r->col, NULL, 0, "an AutoDeploy config is a mapping (key: value lines)");
		return -1;
	}
	FS_GROW(a->layers, a->cap_layers, a->n_layers + 1);
	a->layers[a->n_layers++] = (struct fs_adlayer){fs_xstrndup(path, strlen(path)), (uint8_t)kind, root};
	a->has_default |= kind == FS_LAYER_DEFAULT;
	return 0;
}

int fs_adconfig_add_file(struct fs_adconfig *a, const char *path, enum fs_layer_kind kind, const char *shown,
			 struct fs_diags *d)
{
	size_t len;
	char *text = fs_read_input(path, FS_IN_CONFIG, &len);
	if (!text) {
		fs_diag_add(d, FS_ERROR, shown ? shown : path, 0, 0, NULL, 0, "cannot read AutoDeploy config: %s",
			    fs_input_error(errno, FS_IN_CONFIG));
		return -1;
	}
	int r = fs_adconfig_add_text(a, path, text, len, kind, d);
	free(text);
	return r;
}

/* ---- merging ------------------------------------------------------------------------------- */

static int32_t copy(struct fs_yaml *y, int32_t src)
{
	FS_GROW(y->v, y->cap, y->n + 1);
	int32_t n = (int32_t)y->n++;
	y->v[n] = y->v[src];
	y->v[n].first = y->v[n].next = y->v[n].replaced = -1;
	for (int32_t c = y->v[src].first, prev = -1; c >= 0; c = y->v[c].next) {
		int32_t k = copy(y, c); /* may move y->v: links are set by index */
		if (prev < 0)
			y->v[n].first = k;
		else
			y->v[prev].next = k;
		prev = k;
	}
	return n;
}

struct keyed {
	const char *key;
	int32_t node;
};

static int by_key(const void *a, const void *b)
{
	return strcmp(((const struct keyed *)a)->key, ((const struct keyed *)b)->key);
}

/* dst's children by key, sorted (keys are unique: the reader refuses duplicates). */
static struct keyed *index_keys(const struct fs_yaml *y, int32_t dst, uint32_t *n, int32_t *last)
{
	uint32_t cap = 0;
	struct keyed *v = NULL;
	*n = 0, *last = -1;
	for (int32_t c = y->v[dst].first; c >= 0; c = y->v[c].next) {
		FS_GROW(v, cap, *n + 1);
		v[(*n)++] = (struct keyed){y->v[c].key, c};
		*last = c;
	}
	if (*n > 1)
		qsort(v, *n, sizeof(*v), by_key);
	return v;
}

/* dst (a merged mapping) takes src's keys: mappings merge, anything else replaces (in
 * place, the replaced value kept aside for what it said). */
static void merge_into(struct fs_yaml *y, int32_t dst, int32_t src)
{
	uint32_t n;
	int32_t last;
	struct keyed *v = index_keys(y, dst, &n, &last);
	for (int32_t c = y->v[src].first; c >= 0; c = y->v[c].next) {
		struct keyed want = {y->v[c].key, -1}, *hit = n ? bsearch(&want, v, n, sizeof(*v), by_key) : NULL;
		int32_t d = hit ? hit->node : -1;
		if (d >= 0 && y->v[d].kind == FS_Y_MAP && y->v[c].kind == FS_Y_MAP) {
			merge_into(y, d, c);
			continue;
		}
		int32_t k = copy(y, c);
		if (d < 0) {
			*(last < 0 ? &y->v[dst].first : &y->v[last].next) = k;
			last = k;
			continue;
		}
		FS_GROW(y->v, y->cap, y->n + 1);
		int32_t old = (int32_t)y->n++, next = y->v[d].next;
		y->v[old] = y->v[d];
		y->v[d] = y->v[k];
		y->v[d].next = next, y->v[d].replaced = old;
	}
	free(v);
}

void fs_adconfig_merge(struct fs_adconfig *a)
{
	a->merged = -1;
	for (uint32_t i = 0; i < a->n_layers; i++) {
		int32_t r = a->layers[i].root;
		if (a->y.v[r].kind != FS_Y_MAP)
			continue; /* an empty file adds nothing */
		if (a->merged < 0)
			a->merged = copy(&a->y, r);
		else
			merge_into(&a->y, a->merged, r);
	}
}

int fs_adconfig_transform(const struct fs_adconfig *a, const char *t, struct fs_adsetting *s)
{
	const struct fs_yaml *y = &a->y;
	int32_t n = fs_yaml_get(y, fs_yaml_get(y, a->merged, "transforms"), t);
	if (n < 0)
		return 0;
	memset(s, 0, sizeof(*s));
	s->enabled = s->was = -1;
	s->layer = y->v[n].layer, s->line = y->v[n].line;
	int32_t e = fs_yaml_get(y, n, "enabled");
	if (e < 0 || fs_yaml_bool(&y->v[e]) < 0)
		return 1;
	s->enabled = (int8_t)fs_yaml_bool(&y->v[e]);
	s->layer = y->v[e].layer, s->line = y->v[e].line, s->why = y->v[e].comment;
	int32_t r = y->v[e].replaced;
	if (r >= 0 && fs_yaml_bool(&y->v[r]) >= 0)
		s->was = (int8_t)fs_yaml_bool(&y->v[r]), s->was_layer = y->v[r].layer, s->was_line = y->v[r].line;
	return 1;
}

/* ---- the model registry ----------------------------------------------------------------------- */

static const char *text_of(const struct fs_yaml *y, int32_t map, const char *key, const char *dflt)
{
	int32_t n = fs_yaml_get(y, map, key);
	return n >= 0 && y->v[n].kind == FS_Y_SCALAR ? y->v[n].text : dflt;
}

/* A listed name AD joins to a configs directory: no absolute path, no '..'. */
static int inside(const char *name)
{
	if (!*name || *name == '/')
		return 0;
	for (const char *p = name; (p = strstr(p, "..")); p += 2)
		if ((p == name || p[-1] == '/') && (!p[2] || p[2] == '/'))
			return 0;
	return 1;
}

static int list_files(const struct fs_yaml *y, int32_t entry, const char *key, uint8_t dir, struct fs_regfile *out,
		      uint32_t max, uint32_t *n, char *why, size_t why_n)
{
	int32_t l = fs_yaml_get(y, entry, key);
	if (l < 0 || y->v[l].kind == FS_Y_NULL)
		return 0;
	if (y->v[l].kind != FS_Y_SEQ)
		return snprintf(why, why_n, "%s (line %u) is not a list of file names", key, y->v[l].line), -1;
	for (int32_t c = y->v[l].first; c >= 0; c = y->v[c].next) {
		if (y->v[c].kind != FS_Y_SCALAR || !inside(y->v[c].text))
			return snprintf(why, why_n, "%s (line %u) lists something that is not a file name inside its configs "
					"directory", key, y->v[c].line), -1;
		if (*n == max)
			return snprintf(why, why_n, "%s (line %u) lists more than %u files", key, y->v[l].line, max), -1;
		out[(*n)++] = (struct fs_regfile){y->v[c].text, dir, y->v[c].line};
	}
	return 0;
}

/* Entries named model, narrowed by config_id as AD narrows them (_find_entry). */
static int32_t find_entry(const struct fs_yaml *y, int32_t models, const char *model, const char *config_id,
			  char *why, size_t why_n)
{
	int32_t found = -1, dflt = -1;
	uint32_t n = 0, n_dflt = 0;
	size_t k = 0;
	char ids[200] = "";
	for (int32_t c = y->v[models].first; c >= 0; c = y->v[c].next) {
		const char *id = text_of(y, c, "config_id", "default");
		if (strcmp(text_of(y, c, "name", ""), model) || (config_id && strcmp(id, config_id)))
			continue;
		found = c, n++;
		if (!strcmp(id, "default"))
			dflt = c, n_dflt++;
		if (k < sizeof(ids))
			k += (size_t)snprintf(ids + k, sizeof(ids) - k, "%s%s", n > 1 ? ", " : "", id);
	}
	if (n == 1)
		return found;
	if (n > 1 && n_dflt == 1)
		return dflt;
	if (n > 1)
		snprintf(why, why_n, "%u entries for %s (config_id %s): choose one with --config-id", n, model, ids);
	else
		snprintf(why, why_n, "no entry for %s%s%s", model, config_id ? " with config_id " : "", config_id ? config_id : "");
	return -1;
}

int fs_adconfig_registry(const struct fs_yaml *y, int32_t root, const char *model, const char *config_id,
			 struct fs_regfile *out, uint32_t max, char *why, size_t why_n)
{
	int32_t models = fs_yaml_get(y, root, "models");
	if (models < 0 || y->v[models].kind != FS_Y_SEQ)
		return snprintf(why, why_n, "no 'models:' list"), -1;
	int32_t e = find_entry(y, models, model, config_id, why, why_n);
	uint32_t n = 0;
	if (e < 0 || list_files(y, e, "yaml_extra", FS_REG_EITHER, out, max, &n, why, why_n) ||
	    list_files(y, e, "ad_defaults", FS_REG_AD, out, max, &n, why, why_n) ||
	    list_files(y, e, "user_configs", FS_REG_USER, out, max, &n, why, why_n))
		return -1;
	return (int)n;
}

/* ---- the effective config of a discovery --------------------------------------------------- */

static int is_file(const char *path)
{
	struct stat st;
	return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

/* Where AD looks for a listed name: the registry's configs/ (ad_defaults), the
 * user configs of examples/ (user_configs), either for yaml_extra. */
static char *resolve(const struct fs_catalog *c, uint32_t reg, const struct fs_regfile *f)
{
	const char *dirs[2] = {NULL, NULL};
	char *regdir = fs_xstrndup(c->tree_registry[reg], strlen(c->tree_registry[reg]));
	char *slash = strrchr(regdir, '/');
	if (slash)
		*slash = '\0';
	if (f->dir != FS_REG_USER)
		dirs[0] = regdir;
	if (f->dir != FS_REG_AD)
		dirs[1] = c->tree_user_dir;
	for (int i = 0; i < 2; i++) {
		if (!dirs[i])
			continue;
		size_t n = strlen(dirs[i]) + strlen(f->name) + 16;
		char *p = fs_xmalloc(n);
		snprintf(p, n, "%s/configs/%s", dirs[i], f->name);
		if (i == 1)
			snprintf(p, n, "%s/%s", dirs[i], f->name);
		if (is_file(p)) {
			free(regdir);
			return p;
		}
		free(p);
	}
	free(regdir);
	return NULL;
}

enum { REG_FILES = 64 };

/* The registry (of those the tree holds) that has the model, read. */
static int registry_layers(struct fs_catalog *c, struct fs_adconfig *a, const char *model, const char *config_id,
			   struct fs_diags *d)
{
	char why[300] = "no model registry (models.yaml) in the indexed tree";
	for (uint32_t r = 0; r < FS_TREE_REGISTRIES; r++) {
		if (!c->tree_registry[r])
			continue;
		struct fs_adconfig reg;
		fs_adconfig_init(&reg);
		struct fs_regfile files[REG_FILES];
		int n = fs_adconfig_add_file(&reg, c->tree_registry[r], FS_LAYER_REGISTRY, NULL, d) ? -2
		      : fs_adconfig_registry(&reg.y, reg.layers[0].root, model, config_id, files, REG_FILES, why, sizeof(why));
		for (int i = 0; i < n; i++) {
			char *p = resolve(c, r, &files[i]);
			if (p)
				fs_adconfig_add_file(a, p, FS_LAYER_REGISTRY, NULL, d);
			else
				fs_diag_add(d, FS_ERROR, c->tree_registry[r], files[i].line, 0, NULL, 0,
					    "--model %s: %s is in no configs directory of the tree", model, files[i].name);
			free(p);
		}
		fs_adconfig_release(&reg);
		if (n >= 0 || n == -2)
			return n;
	}
	fs_diag_add(d, FS_ERROR, "--model", 0, 0, NULL, 0, "%s: %s", model, why);
	return -1;
}

void fs_catalog_configure(struct fs_catalog *c, const char *const *files, uint32_t n, const char *model,
			  const char *config_id, struct fs_diags *d)
{
	if (!c->tree_default && !model && !n)
		return;
	struct fs_adconfig *a = c->cfg = fs_xmalloc(sizeof(*a));
	fs_adconfig_init(a);
	if (c->tree_default)
		fs_adconfig_add_file(a, c->tree_default, FS_LAYER_DEFAULT, NULL, d);
	if (model && !c->files_indexed)
		fs_diag_add(d, FS_ERROR, "--model", 0, 0, NULL, 0, "%s: the registry is the tree's: give --kernels-from", model);
	else if (model)
		registry_layers(c, a, model, config_id, d);
	for (uint32_t i = 0; i < n; i++)
		fs_adconfig_add_file(a, files[i], FS_LAYER_USER, NULL, d);
	fs_adconfig_merge(a);
}
