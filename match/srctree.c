/*
 * srctree.c: what a TensorRT-LLM tree given with --kernels-from says beyond
 * its op and transform registrations (catalog.c indexes those): the Python
 * functions that call a registered op, which AutoDeploy's transforms insert
 * as graph nodes (the dump prints `<function name at 0x...>`), and each
 * transform's default in config/default.yaml. Then the choice, for a catalog
 * entry, of what to recommend: with a tree, only what the tree registers.
 * Called by the tree index (catalog.c), mining (candidates.c) and reports.
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

/* ---- config/default.yaml ---------------------------------------------------------------------- */

/* Whether path ends with t, and t begins a path component there when whole. */
static int ends_with(const char *s, const char *t, int whole)
{
	size_t n = strlen(s), k = strlen(t);
	return n >= k && !strcmp(s + n - k, t) && (!whole || n == k || s[n - k - 1] == '/');
}

static uint32_t indent(const char *p, const char *e)
{
	const char *q = p;
	while (q < e && *q == ' ')
		q++;
	return (uint32_t)(q - p);
}

/* transforms:            (the top-level key)
 *   NAME:                (a transform, at the first key's indentation)
 *     enabled: false     (deeper: its settings; without `enabled` it is on) */
static void index_defaults(struct fs_catalog *c, const char *path, const char *text, size_t len)
{
	int in = 0;
	uint32_t key_indent = 0, no = 0;
	int32_t cur = -1;
	char name[NAME_LEN + 1], sym[NAME_LEN + 16];
	for (const char *p = text, *end = text + len; p < end;) {
		const char *nl = memchr(p, '\n', (size_t)(end - p)), *e = nl ? nl : end;
		uint32_t ind = indent(p, e);
		const char *q = p + ind, *r;
		no++;
		p = nl ? nl + 1 : end;
		if (q == e || *q == '#' || *q == '\r')
			continue;
		if (!ind) {
			in = e - q >= 11 && !memcmp(q, "transforms:", 11);
			key_indent = 0, cur = -1;
		} else if (in && (!key_indent || ind == key_indent) && (r = ident(q, e, name)) && r < e && *r == ':') {
			key_indent = ind;
			snprintf(sym, sizeof(sym), "default:%s", name);
			fs_catalog_add_evidence(c, path, no, sym, "on");
			c->defaults_indexed++;
			cur = (int32_t)c->n_found - 1;
		} else if (in && cur >= 0 && ind > key_indent && e - q >= 8 && !memcmp(q, "enabled:", 8)) {
			const char *v = q + 8;
			while (v < e && *v == ' ')
				v++;
			int off = e - v >= 5 && !memcmp(v, "false", 5);
			free(c->found[cur].detail);
			c->found[cur].detail = fs_xstrndup(off ? "off" : "on", off ? 3 : 2);
			c->found[cur].line = no;
		}
	}
}

void fs_srctree_index_text(struct fs_catalog *c, const char *path, const char *text, size_t len)
{
	if (ends_with(path, ".py", 0))
		index_py(c, path, text, len);
	else if (ends_with(path, "config/default.yaml", 1))
		index_defaults(c, path, text, len);
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
				     int32_t *at)
{
	char sym[200];
	*at = -1;
	if (!c->defaults_indexed)
		return e->tdefault ? (enum fs_tdefault)e->tdefault[i] : FS_TDEF_ON;
	snprintf(sym, sizeof(sym), "default:%s", fs_scan_str(c->scan, e->transforms[i]));
	*at = fs_catalog_find_evidence(c, sym, 0);
	if (*at < 0)
		return FS_TDEF_UNLISTED;
	return !strcmp(c->found[*at].detail, "off") ? FS_TDEF_OFF : FS_TDEF_ON;
}
