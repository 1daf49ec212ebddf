/*
 * srctree.c: what a TensorRT-LLM tree given with --kernels-from says beyond
 * its op and transform registrations (catalog.c indexes those): the Python
 * functions that call a registered op, which AutoDeploy's transforms insert
 * as graph nodes (the dump prints `<function name at 0x...>`), and each
 * transform's default in config/default.yaml. Then the choice, for a catalog
 * entry, of what to recommend: with a tree, only what the tree registers.
 * Keeps the evidence records the tree index (catalog.c) adds. Called by the
 * tree index, mining (candidates.c) and reports.
 */
#include "fusescan/catalog.h"

#include <stdlib.h>
#include <string.h>

enum { NAME_LEN = 128 };

static int ident_char(char c)
{
	return c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
}

/* An identifier at p (at most NAME_LEN chars) into buf; its end, or NULL. */
static const char *ident(const char *p, const char *e, char *buf)
{
	const char *q = p;
	while (q < e && ident_char(*q) && q - p < NAME_LEN)
		q++;
	if (q == p || (q < e && ident_char(*q)))
		return NULL;
	memcpy(buf, p, (size_t)(q - p));
	buf[q - p] = '\0';
	return q;
}

/* ---- evidence records ----------------------------------------------------------------------- */

void fs_catalog_add_evidence(struct fs_catalog *c, const char *path, uint32_t line, const char *sym, const char *detail)
{
	FS_GROW(c->found, c->cap_found, c->n_found + 1);
	struct fs_evidence *e = &c->found[c->n_found++];
	e->path = fs_xstrndup(path, strlen(path));
	e->line = line;
	e->symbol = fs_xstrndup(sym, strlen(sym));
	e->detail = detail ? fs_xstrndup(detail, strlen(detail)) : NULL;
}

int32_t fs_catalog_find_evidence(const struct fs_catalog *c, const char *sym, uint32_t from)
{
	for (uint32_t i = from; i < c->n_found; i++)
		if (!strcmp(c->found[i].symbol, sym))
			return (int32_t)i;
	return -1;
}

/* ---- Python wrappers ------------------------------------------------------------------------- */

struct pyscan {
	struct fs_catalog *c;
	const char *path;
	char def[NAME_LEN + 1];  /* the undecorated top-level function we are in, "" if none */
	uint32_t def_line;
	int found;               /* its call of a registered op was recorded */
};

/* wrapper = "def" NAME "(" ... body calling "torch.ops." NS "." OP: an
 * undecorated top-level function (a decorated one is a registration, a fake,
 * a test) whose body calls an op. The first op it calls is the one it wraps. */
static void py_line(struct pyscan *S, const char *p, const char *e, uint32_t no, int decorated)
{
	if (p < e && *p != ' ' && *p != '\t' && *p != '#') {
		S->def[0] = '\0';
		if (!decorated && e - p > 4 && !memcmp(p, "def ", 4) && ident(p + 4, e, S->def))
			S->def_line = no, S->found = 0;
		return;
	}
	const char *t;
	char ns[NAME_LEN + 1], op[NAME_LEN + 1], sym[2 * NAME_LEN + 16], detail[2 * NAME_LEN + 4];
	if (!S->def[0] || S->found || !(t = fs_find(p, e, "torch.ops.")))
		return;
	const char *q = ident(t + 10, e, ns);
	if (!q || q == e || *q != '.' || !ident(q + 1, e, op))
		return;
	snprintf(sym, sizeof(sym), "wrapper:%s", S->def);
	snprintf(detail, sizeof(detail), "%s::%s", ns, op);
	fs_catalog_add_evidence(S->c, S->path, S->def_line, sym, detail);
	S->found = 1;
}

static void index_py(struct fs_catalog *c, const char *path, const char *text, size_t len)
{
	struct pyscan S = {c, path, "", 0, 0};
	int decorated = 0;
	uint32_t no = 0;
	for (const char *p = text, *end = text + len; p < end;) {
		const char *nl = memchr(p, '\n', (size_t)(end - p)), *e = nl ? nl : end;
		no++;
		py_line(&S, p, e, no, decorated);
		if (p < e && *p != ' ' && *p != '\t' && *p != '#' && *p != '\r')
			decorated = *p == '@' || (decorated && *p == ')'); /* a decorator's call may span lines */
		p = nl ? nl + 1 : end;
	}
}

/* ---- aliases ------------------------------------------------------------------------------------ */

/* Helpers a transform calls to run another transform under its own name
 * (transform/library/_mlir_elementwise_alias.py): every transform a file
 * registers and that calls one is an alias of what the helper runs. */
static const struct {
	const char *call, *runs;
} alias_helpers[] = {{"apply_mlir_elementwise_alias(", "mlir_elementwise_fusion"}};

static uint32_t line_of(const char *text, const char *at)
{
	uint32_t n = 1;
	for (const char *p = text; (p = memchr(p, '\n', (size_t)(at - p))); p++)
		n++;
	return n;
}

/* A call, not the helper's definition ("def name("). */
static int calls(const char *text, const char *end, const char *call)
{
	for (const char *p = text; (p = fs_find(p, end, call)); p++)
		if (p - text < 4 || memcmp(p - 4, "def ", 4))
			return 1;
	return 0;
}

static void index_aliases(struct fs_catalog *c, const char *path, const char *text, size_t len)
{
	static const char reg[] = "TransformRegistry.register(";
	const char *end = text + len;
	for (size_t h = 0; h < sizeof(alias_helpers) / sizeof(alias_helpers[0]); h++) {
		if (!calls(text, end, alias_helpers[h].call))
			continue;
		for (const char *p = text; (p = fs_find(p, end, reg)); p++) {
			char name[NAME_LEN + 1], sym[NAME_LEN + 16];
			const char *q = p + sizeof(reg) - 1;
			while (q < end && (*q == ' ' || *q == '\n' || *q == '"' || *q == '\''))
				q++;
			if (!ident(q, end, name))
				continue;
			snprintf(sym, sizeof(sym), "alias:%s", name);
			fs_catalog_add_evidence(c, path, line_of(text, p), sym, alias_helpers[h].runs);
		}
	}
}

/* ---- where the config files are ----------------------------------------------------------------- */

/* Whether path ends with t, and t begins a path component there when whole. */
static int ends_with(const char *s, const char *t, int whole)
{
	size_t n = strlen(s), k = strlen(t);
	return n >= k && !strcmp(s + n - k, t) && (!whole || n == k || s[n - k - 1] == '/');
}

static void keep(char **slot, const char *path, size_t n)
{
	if (!*slot)
		*slot = fs_xstrndup(path, n);
}

/* The registries, by preference (FS_TREE_REGISTRIES), and the tree root each implies. */
static const char *const registries[FS_TREE_REGISTRIES] = {
	"tensorrt_llm/_torch/auto_deploy/config/model_registry_internal/models.yaml",
	"tensorrt_llm/_torch/auto_deploy/config/model_registry/models.yaml",
	"examples/auto_deploy/model_registry/models.yaml",
};

static void note_config(struct fs_catalog *c, const char *path)
{
	static const char ad_default[] = "tensorrt_llm/_torch/auto_deploy/config/default.yaml";
	if (ends_with(path, ad_default, 1) && c->tree_default && !ends_with(c->tree_default, ad_default, 1)) {
		/* AD's own beats any other config/default.yaml */
		free(c->tree_default);
		c->tree_default = NULL;
	}
	if (ends_with(path, "config/default.yaml", 1))
		keep(&c->tree_default, path, strlen(path));
	for (int r = 0; r < FS_TREE_REGISTRIES; r++) {
		if (!ends_with(path, registries[r], 1) || c->tree_registry[r])
			continue;
		keep(&c->tree_registry[r], path, strlen(path));
		size_t root = strlen(path) - strlen(registries[r]);
		char dir[4096];
		snprintf(dir, sizeof(dir), "%.*sexamples/auto_deploy/model_registry/configs", (int)root, path);
		keep(&c->tree_user_dir, dir, strlen(dir));
	}
}

void fs_srctree_index_text(struct fs_catalog *c, const char *path, const char *text, size_t len)
{
	if (ends_with(path, ".py", 0)) {
		index_py(c, path, text, len);
		index_aliases(c, path, text, len);
	} else
		note_config(c, path);
}

/* ---- answers ------------------------------------------------------------------------------------ */

int32_t fs_catalog_registered(const struct fs_catalog *c, uint32_t key)
{
	const char *k = fs_scan_str(c->scan, key), *dot = strchr(k, '.');
	char sym[300];
	if (!c->files_indexed || !dot)
		return -2; /* no tree, or a PyTorch op: nothing for a tree to register */
	if (dot - k == 6 && !memcmp(k, "python", 6)) {
		snprintf(sym, sizeof(sym), "wrapper:%s", dot + 1);
		int32_t w = fs_catalog_find_evidence(c, sym, 0);
		return w >= 0 && fs_catalog_find_evidence(c, c->found[w].detail, 0) >= 0 ? w : -1;
	}
	snprintf(sym, sizeof(sym), "%.*s::%s", (int)(dot - k), k, dot + 1);
	return fs_catalog_find_evidence(c, sym, 0);
}

/* The first usable op of a list, or 0. */
static uint32_t first_usable(const struct fs_catalog *c, const uint32_t *ops, uint32_t n)
{
	for (uint32_t i = 0; i < n; i++)
		if (fs_catalog_registered(c, ops[i]) != -1)
			return ops[i];
	return 0;
}

uint32_t fs_catalog_pick(const struct fs_catalog *c, const struct fs_catalog_entry *e, uint32_t *wrapper)
{
	*wrapper = 0;
	if (e->gelu_tanh && c->gelu == FS_GELU_ERF)
		return 0; /* the user's GELU is the exact one: a tanh kernel is not it */
	uint32_t k = first_usable(c, e->kernels, e->n_kernels);
	*wrapper = k && e->n_kernels && k == e->kernels[0] ? first_usable(c, e->wrappers, e->n_wrappers) : 0;
	if (k || (k = first_usable(c, e->subsumed, e->n_subsumed)))
		return k;
	if (e->n_kernels || e->n_subsumed)
		return 0; /* a transform is no use without the op it inserts */
	for (uint32_t i = 0; i < e->n_transforms; i++) {
		char sym[200];
		snprintf(sym, sizeof(sym), "transform:%s", fs_scan_str(c->scan, e->transforms[i]));
		if (!c->files_indexed || fs_catalog_find_evidence(c, sym, 0) >= 0)
			return e->transforms[i];
	}
	return 0;
}

enum fs_tdefault fs_catalog_tdefault(const struct fs_catalog *c, const struct fs_catalog_entry *e, uint32_t i,
				     struct fs_adsetting *s)
{
	enum fs_tdefault cat = e->tdefault ? (enum fs_tdefault)e->tdefault[i] : FS_TDEF_ON;
	const char *t = fs_scan_str(c->scan, e->transforms[i]);
	if (c->cfg && fs_adconfig_transform(c->cfg, t, s)) {
		if (s->enabled >= 0)
			return s->enabled ? FS_TDEF_ON : FS_TDEF_OFF;
		if (c->cfg->has_default || cat == FS_TDEF_UNLISTED)
			return FS_TDEF_ON; /* listed without `enabled`: AD runs it */
	}
	memset(s, 0, sizeof(*s));
	s->layer = UINT32_MAX, s->enabled = s->was = -1;
	return c->cfg && c->cfg->has_default ? FS_TDEF_UNLISTED : cat;
}

const char *fs_catalog_off_reason(const struct fs_catalog *c, const struct fs_catalog_entry *e, uint32_t i,
				  const struct fs_adsetting *s, enum fs_tdefault t)
{
	(void)c;
	if (t != FS_TDEF_OFF)
		return NULL;
	if (s->layer != UINT32_MAX)
		return s->why;
	return e->off_why ? e->off_why[i] : NULL;
}

int32_t fs_catalog_alias(const struct fs_catalog *c, uint32_t transform)
{
	char sym[200];
	snprintf(sym, sizeof(sym), "alias:%s", fs_scan_str(c->scan, transform));
	return c->files_indexed ? fs_catalog_find_evidence(c, sym, 0) : -1;
}
