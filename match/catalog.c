/*
 * catalog.c: the kernel catalog (kernels/catalog.txt, format documented at
 * its top) and chain matching; and the source-tree index behind
 * --kernels-from, which finds custom-op and transform registrations with
 * PCRE2. Called by discovery to name regions and collect evidence.
 */
#define PCRE2_CODE_UNIT_WIDTH 8
#include "fusescan/catalog.h"
#include "fusescan/pattern.h"

#include <dirent.h>
#include <errno.h>
#include <pcre2.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static const char *const kind_names[] = {
	"elementwise", "norm", "gemm_epilogue", "attention_adjacent", "layout", "multi_output",
	"horizontal_gemm", "horizontal_elementwise", "reduction",
};
_Static_assert(sizeof(kind_names) / sizeof(kind_names[0]) == FS_KIND_COUNT, "kind names");

const char *fs_kind_name(enum fs_kind k)
{
	return k < FS_KIND_COUNT ? kind_names[k] : "unknown";
}

void fs_catalog_init(struct fs_catalog *c, struct fs_scan *s)
{
	memset(c, 0, sizeof(*c));
	c->scan = s;
}

/* ---- parsing: one function per line form --------------------------------- */

struct cparse {
	struct fs_catalog *c;
	const char *name;
	struct fs_diags *d;
	const char *line;
	size_t len;
	uint32_t no, errors;
	struct fs_catalog_entry *cur;
	uint32_t cap_wants;      /* of cur->wants */
};

static void cerr(struct cparse *P, const char *at, const char *msg)
{
	fs_diag_add(P->d, FS_ERROR, P->name, P->no, (uint32_t)(at - P->line) + 1, P->line, P->len,
		    "%s", msg);
	P->errors++;
}

static void trim(const char **p, const char **e)
{
	while (*p < *e && (**p == ' ' || **p == '\t'))
		(*p)++;
	while (*e > *p && ((*e)[-1] == ' ' || (*e)[-1] == '\t' || (*e)[-1] == '\r'))
		(*e)--;
}

/* A value's whitespace-separated words, interned. */
static uint32_t *words(struct cparse *P, const char *p, const char *e, uint32_t *n)
{
	uint32_t *v = NULL, cap = 0;
	*n = 0;
	while (p < e) {
		while (p < e && (*p == ' ' || *p == '\t'))
			p++;
		const char *w = p;
		while (p < e && *p != ' ' && *p != '\t')
			p++;
		if (p == w)
			break;
		FS_GROW(v, cap, *n + 1);
		v[(*n)++] = fs_strtab_intern(&P->c->scan->strs, w, (size_t)(p - w));
	}
	return v;
}

/* chain = ops...: the ops that launch kernels are a multiset, the last one
 * (the output) always among them (a reshape that copies, say); the other
 * index-only views must be present around the region. */
static void add_chain(struct cparse *P, const char *p, const char *e)
{
	uint32_t n;
	uint32_t *w = words(P, p, e, &n);
	if (!n) {
		free(w);
		return cerr(P, p, "empty chain");
	}
	struct fs_catalog_entry *en = P->cur;
	FS_GROW(en->chains, en->cap_chains, en->n_chains + 1);
	struct fs_chain *ch = &en->chains[en->n_chains++];
	memset(ch, 0, sizeof(*ch));
	ch->line = P->no;
	ch->root = w[n - 1];
	ch->ops = fs_xmalloc(n * sizeof(uint32_t));
	ch->views = fs_xmalloc(n * sizeof(uint32_t));
	const struct fs_scan *s = P->c->scan;
	for (uint32_t i = 0; i < n; i++) {
		const char *k = fs_scan_str(s, w[i]);
		int flags = fs_op_key_flags(s, k, strlen(k));
		if (i + 1 < n && flags >= 0 && (flags & FS_OPF_INDEX_ONLY))
			ch->views[ch->n_views++] = w[i];
		else
			ch->ops[ch->n_ops++] = w[i];
	}
	qsort(ch->ops, ch->n_ops, sizeof(uint32_t), fs_cmp_u32);
	free(w);
}

static char *text_value(const char *p, const char *e)
{
	return fs_xstrndup(p, (size_t)(e - p));
}

/* [name] */
static void section_line(struct cparse *P, const char *p, const char *e)
{
	if (e[-1] != ']')
		return cerr(P, e - 1, "expected ']' closing the entry name");
	const char *n = p + 1, *ne = e - 1;
	trim(&n, &ne);
	if (n == ne)
		return cerr(P, p, "empty entry name");
	for (const char *q = n; q < ne; q++)
		if (!(*q == '_' || (*q >= 'a' && *q <= 'z') || (*q >= 'A' && *q <= 'Z') || (*q >= '0' && *q <= '9')))
			return cerr(P, q, "entry names are letters, digits and '_'");
	struct fs_catalog *c = P->c;
	for (uint32_t i = 0; i < c->n; i++)
		if (strlen(c->e[i].name) == (size_t)(ne - n) && !memcmp(c->e[i].name, n, (size_t)(ne - n)))
			return cerr(P, n, "duplicate entry name");
	FS_GROW(c->e, c->cap, c->n + 1);
	P->cur = &c->e[c->n++];
	P->cap_wants = 0;
	memset(P->cur, 0, sizeof(*P->cur));
	P->cur->name = text_value(n, ne);
	P->cur->kind = FS_KIND_ELEMENTWISE;
	P->cur->line = P->no;
}

static int set_kind(struct fs_catalog_entry *en, const char *v, const char *ve)
{
	for (int k = 0; k < FS_KIND_COUNT; k++)
		if (strlen(kind_names[k]) == (size_t)(ve - v) && !memcmp(kind_names[k], v, (size_t)(ve - v))) {
			en->kind = (enum fs_kind)k;
			return 0;
		}
	return -1;
}

static int key_is(const char *k, const char *ke, const char *lit)
{
	return strlen(lit) == (size_t)(ke - k) && !memcmp(k, lit, (size_t)(ke - k));
}

const char *fs_tdefault_name(enum fs_tdefault d)
{
	static const char *const names[] = {"on", "off", "unlisted"};
	_Static_assert(sizeof(names) / sizeof(names[0]) == FS_TDEF_COUNT, "default names");
	return d < FS_TDEF_COUNT ? names[d] : "?";
}

/* transforms = NAME[:off|:unlisted]...: the default in today's default.yaml (on when unsuffixed) */
static void transforms_value(struct cparse *P, const char *p, const char *e)
{
	struct fs_catalog_entry *en = P->cur;
	if (en->off_why)
		return cerr(P, p, "transforms = comes before off_because");
	free(en->transforms);
	free(en->tdefault);
	en->transforms = words(P, p, e, &en->n_transforms);
	en->tdefault = fs_xcalloc(en->n_transforms + 1, 1);
	for (uint32_t i = 0; i < en->n_transforms; i++) {
		const char *w = fs_scan_str(P->c->scan, en->transforms[i]), *colon = strchr(w, ':');
		if (!colon)
			continue;
		int d = 0;
		while (d < FS_TDEF_COUNT && strcmp(colon + 1, fs_tdefault_name((enum fs_tdefault)d)))
			d++;
		if (d == FS_TDEF_COUNT || colon == w)
			return cerr(P, p, "a transform's default is :off or :unlisted (on when not given)");
		en->tdefault[i] = (uint8_t)d;
		en->transforms[i] = fs_strtab_intern(&P->c->scan->strs, w, (size_t)(colon - w));
	}
}

/* The entry's transform named w[0..n), or -1. */
static int32_t transform_index(struct cparse *P, const char *w, size_t n)
{
	const struct fs_catalog_entry *en = P->cur;
	for (uint32_t i = 0; i < en->n_transforms; i++) {
		const char *t = fs_scan_str(P->c->scan, en->transforms[i]);
		if (strlen(t) == n && !memcmp(t, w, n))
			return (int32_t)i;
	}
	return -1;
}

/* off_because = NAME...: why: AD's reason for keeping them off (after transforms =) */
static void off_because_value(struct cparse *P, const char *p, const char *e)
{
	struct fs_catalog_entry *en = P->cur;
	const char *colon = memchr(p, ':', (size_t)(e - p)), *why = colon ? colon + 1 : e;
	trim(&why, &e);
	if (!colon || why == e)
		return cerr(P, p, "off_because is 'NAME...: the reason'");
	if (!en->off_why)
		en->off_why = fs_xcalloc(en->n_transforms + 1, sizeof(char *));
	for (const char *w = p; w < colon;) {
		while (w < colon && *w == ' ')
			w++;
		const char *we = w;
		while (we < colon && *we != ' ')
			we++;
		int32_t i = we > w ? transform_index(P, w, (size_t)(we - w)) : -2;
		if (i == -1)
			return cerr(P, w, "off_because names a transform the entry's transforms = does not list");
		if (i >= 0 && !en->off_why[i])
			en->off_why[i] = text_value(why, e);
		w = we;
	}
}

/* One step of a wants chain: alternatives a|b|c, interned. */
static int want_step(struct cparse *P, struct fs_want *w, const char *p, const char *e)
{
	uint32_t k = 0;
	for (const char *a = p; a < e;) {
		const char *ae = memchr(a, '|', (size_t)(e - a));
		ae = ae ? ae : e;
		if (ae == a || k == FS_WANT_ALTS)
			return -1;
		w->alt[w->n_steps][k++] = fs_strtab_intern(&P->c->scan->strs, a, (size_t)(ae - a));
		a = ae < e ? ae + 1 : e;
	}
	return k ? 0 : -1;
}

/* wants = NAME: op -> op|op -> op[; note]: the chain NAME's pattern matches */
static void wants_value(struct cparse *P, const char *p, const char *e)
{
	const char *colon = memchr(p, ':', (size_t)(e - p)), *semi = memchr(p, ';', (size_t)(e - p));
	const char *ce = semi ? semi : e;
	if (!colon || colon > ce)
		return cerr(P, p, "wants is 'TRANSFORM: op -> op|op -> ...[; note]'");
	struct fs_catalog_entry *en = P->cur;
	if (transform_index(P, p, (size_t)(colon - p)) < 0)
		return cerr(P, p, "wants names a transform the entry's transforms = does not list");
	struct fs_want w = {0};
	w.transform = fs_strtab_intern(&P->c->scan->strs, p, (size_t)(colon - p));
	for (const char *s = colon + 1; s < ce && w.n_steps <= FS_WANT_STEPS;) {
		const char *arrow = fs_find(s, ce, "->"), *se = arrow ? arrow : ce, *a = s;
		trim(&a, &se);
		if (w.n_steps == FS_WANT_STEPS || want_step(P, &w, a, se))
			return cerr(P, s, "a step is an op or ops joined by '|' (at most 8 steps of 4)");
		w.n_steps++;
		s = arrow ? arrow + 2 : ce;
	}
	const char *t = colon + 1, *te = ce, *n = semi ? semi + 1 : e, *ne = e;
	trim(&t, &te);
	trim(&n, &ne);
	w.text = text_value(t, te);
	w.note = semi && n < ne ? text_value(n, ne) : NULL;
	FS_GROW(en->wants, P->cap_wants, en->n_wants + 1);
	en->wants[en->n_wants++] = w;
}

/* literals = eps: what the kernels take after their tensors; returns = norm sum */
static void literals_value(struct cparse *P, const char *p, const char *e)
{
	if (!key_is(p, e, "eps"))
		return cerr(P, p, "the literals known are: eps");
	P->cur->literals = FS_LIT_EPS;
}

/* the keys whose value is a list of words, and those whose value is its text */
#define WORDS(k, f) {k, offsetof(struct fs_catalog_entry, f), offsetof(struct fs_catalog_entry, n_##f)}
static const struct {
	const char *key;
	size_t list, count;
} word_keys[] = {WORDS("kernels", kernels), WORDS("subsumed_by", subsumed), WORDS("reference", reference),
		 WORDS("wrappers", wrappers)};
#undef WORDS
static const struct {
	const char *key;
	size_t text;
} text_keys[] = {{"dtypes", offsetof(struct fs_catalog_entry, dtypes)},
		 {"constraints", offsetof(struct fs_catalog_entry, constraints)},
		 {"evidence", offsetof(struct fs_catalog_entry, evidence)}};

/* key = value */
static void key_line(struct cparse *P, const char *p, const char *e, const char *eq)
{
	const char *k = p, *ke = eq, *v = eq + 1, *ve = e;
	trim(&k, &ke);
	trim(&v, &ve);
	struct fs_catalog_entry *en = P->cur;
	if (!en)
		return cerr(P, p, "'key = value' outside an entry; start one with [name]");
	for (size_t i = 0; i < sizeof(word_keys) / sizeof(word_keys[0]); i++)
		if (key_is(k, ke, word_keys[i].key)) {
			uint32_t **list = (uint32_t **)((char *)en + word_keys[i].list);
			free(*list);
			*list = words(P, v, ve, (uint32_t *)((char *)en + word_keys[i].count));
			return;
		}
	for (size_t i = 0; i < sizeof(text_keys) / sizeof(text_keys[0]); i++)
		if (key_is(k, ke, text_keys[i].key)) {
			char **text = (char **)((char *)en + text_keys[i].text);
			free(*text);
			*text = text_value(v, ve);
			return;
		}
	if (key_is(k, ke, "kind")) {
		if (set_kind(en, v, ve) < 0)
			cerr(P, v, "unknown kind (norm, elementwise, gemm_epilogue, attention_adjacent, "
				   "layout, multi_output, horizontal_gemm, horizontal_elementwise, reduction)");
	} else if (key_is(k, ke, "chain"))
		add_chain(P, v, ve);
	else if (key_is(k, ke, "transforms"))
		transforms_value(P, v, ve);
	else if (key_is(k, ke, "off_because"))
		off_because_value(P, v, ve);
	else if (key_is(k, ke, "wants"))
		wants_value(P, v, ve);
	else if (key_is(k, ke, "literals"))
		literals_value(P, v, ve);
	else if (key_is(k, ke, "gelu")) {
		if (!key_is(v, ve, "tanh"))
			cerr(P, v, "gelu is 'tanh' (the kernels compute the tanh form only)");
		en->gelu_tanh = 1;
	} else if (key_is(k, ke, "returns")) {
		if (key_is(v, ve, "norm sum"))
			en->norm_first = 1;
		else if (!key_is(v, ve, "sum norm"))
			cerr(P, v, "returns is 'norm sum' or 'sum norm'");
	} else
		cerr(P, k, "unknown key (kind, chain, kernels, subsumed_by, reference, wrappers, transforms, off_because, "
			   "wants, literals, returns, gelu, dtypes, constraints, evidence)");
}

uint32_t fs_catalog_parse(struct fs_catalog *c, const char *name, const char *text, size_t len,
			  struct fs_diags *d)
{
	struct cparse P = {c, name, d, NULL, 0, 0, 0, NULL, 0};
	const char *end = text + len;
	for (const char *pos = text; pos < end;) {
		const char *nl = memchr(pos, '\n', (size_t)(end - pos));
		const char *le = nl ? nl : end;
		P.line = pos;
		P.len = (size_t)(le - pos);
		P.no++;
		const char *p = pos, *e = le;
		pos = nl ? nl + 1 : end;
		trim(&p, &e);
		if (p == e || *p == '#')
			continue;
		if (memchr(p, '\0', (size_t)(e - p)))
			cerr(&P, p, "NUL byte in catalog");
		else if (*p == '[')
			section_line(&P, p, e);
		else if (memchr(p, '=', (size_t)(e - p)))
			key_line(&P, p, e, memchr(p, '=', (size_t)(e - p)));
		else
			cerr(&P, p, "expected '[name]' or 'key = value'");
	}
	return P.errors;
}

uint32_t fs_catalog_load(struct fs_catalog *c, const char *path, struct fs_diags *d)
{
	size_t len;
	char *text = fs_read_input(path, FS_IN_CATALOG, &len);
	if (!text) {
		fs_diag_add(d, FS_ERROR, path, 0, 0, NULL, 0, "cannot read kernel catalog: %s", fs_input_error(errno, FS_IN_CATALOG));
		return 1;
	}
	uint32_t n = fs_catalog_parse(c, path, text, len, d);
	free(text);
	return n;
}

/* ---- matching -------------------------------------------------------------- */

int32_t fs_catalog_match(const struct fs_catalog *c, const uint32_t *keys, uint32_t n,
			 const uint32_t *views, uint32_t n_views, uint32_t from)
{
	for (uint32_t i = from; i < c->n; i++)
		for (uint32_t k = 0; k < c->e[i].n_chains; k++) {
			const struct fs_chain *ch = &c->e[i].chains[k];
			if (ch->n_ops == n && !memcmp(ch->ops, keys, n * sizeof(*keys)) &&
			    fs_u32_has_all(ch->views, ch->n_views, views, n_views))
				return (int32_t)i;
		}
	return -1;
}

/* ---- source-tree index ----------------------------------------------------- */

enum { RX_CUSTOM_OP, RX_DEFINE, RX_LIBRARY, RX_MDEF, RX_TRANSFORM, RX_COUNT };

static const char *const patterns[RX_COUNT] = {
	"torch\\.library\\.custom_op\\(\\s*[\"']([\\w.]+)::(\\w+)",
	"torch\\.library\\.define\\(\\s*[\"']([\\w.]+)::(\\w+)",
	"TORCH_LIBRARY(?:_FRAGMENT)?\\(\\s*(\\w+)\\s*,",
	"\\bm\\.def\\(\\s*\"(\\w+)",
	"TransformRegistry\\.register\\(\\s*[\"'](\\w+)[\"']",
};

struct indexer {
	struct fs_catalog *c;
	pcre2_code *rx[RX_COUNT];
	pcre2_match_data *md;
	struct fs_diags *d;
};

/* Line numbers of increasing offsets, each newline counted once. */
struct lines {
	const char *text;
	size_t at;
	uint32_t line; /* of offset at */
};

static uint32_t line_at(struct lines *L, size_t off)
{
	if (off < L->at) /* the next pattern starts over */
		L->at = 0, L->line = 1;
	for (const char *p = L->text + L->at; (p = memchr(p, '\n', off - (size_t)(p - L->text))); p++)
		L->line++;
	L->at = off;
	return L->line;
}

/* The TORCH_LIBRARY blocks of a file: where each one's opening ends, and
 * its namespace (group 1). */
struct libs {
	PCRE2_SIZE *end, *ns;
	uint32_t n, cap;
};

static void find_libs(struct indexer *X, const char *text, size_t len, struct libs *L)
{
	for (PCRE2_SIZE at = 0; at <= len && pcre2_match(X->rx[RX_LIBRARY], (PCRE2_SPTR)text, len, at, 0, X->md, NULL) > 0;) {
		const PCRE2_SIZE *ov = pcre2_get_ovector_pointer(X->md);
		FS_GROW(L->end, L->cap, L->n + 1);
		L->ns = fs_xrealloc(L->ns, L->cap * 2 * sizeof(PCRE2_SIZE));
		L->end[L->n] = ov[1], L->ns[2 * L->n] = ov[2], L->ns[2 * L->n++ + 1] = ov[3];
		at = ov[1] > at ? ov[1] : at + 1;
	}
}

static void group(const char *text, const PCRE2_SIZE *ov, int g, char *buf, size_t n)
{
	size_t len = ov[2 * g + 1] - ov[2 * g];
	snprintf(buf, n, "%.*s", (int)len, text + ov[2 * g]);
}

/* Each registration in one file; m.def takes the nearest TORCH_LIBRARY above
 * it. Every pattern scans the file once (matches come in file order). */
static void index_text(struct indexer *X, const char *path, const char *text, size_t len)
{
	char a[128], b[128], sym[300];
	struct lines ln = {text, 0, 1};
	struct libs libs = {0};
	uint32_t lib = 0; /* libraries opened before the current m.def */
	find_libs(X, text, len, &libs);
	for (int r = 0; r < RX_COUNT; r++) {
		PCRE2_SIZE at = 0;
		while (r != RX_LIBRARY && at <= len && pcre2_match(X->rx[r], (PCRE2_SPTR)text, len, at, 0, X->md, NULL) > 0) {
			const PCRE2_SIZE *ov = pcre2_get_ovector_pointer(X->md);
			at = ov[1] > at ? ov[1] : at + 1;
			group(text, ov, 1, a, sizeof(a));
			if (r == RX_CUSTOM_OP || r == RX_DEFINE) {
				group(text, ov, 2, b, sizeof(b));
				snprintf(sym, sizeof(sym), "%s::%s", a, b);
			} else if (r == RX_MDEF) {
				while (lib < libs.n && libs.end[lib] <= ov[0])
					lib++;
				if (lib)
					snprintf(sym, sizeof(sym), "%.*s::%s", (int)(libs.ns[2 * lib - 1] - libs.ns[2 * lib - 2]),
						 text + libs.ns[2 * lib - 2], a);
				else
					snprintf(sym, sizeof(sym), "?::%s", a);
			} else
				snprintf(sym, sizeof(sym), "transform:%s", a);
			fs_catalog_add_evidence(X->c, path, line_at(&ln, ov[0]), sym, NULL);
		}
	}
	free(libs.end);
	free(libs.ns);
}

static int indexed_ext(const char *name)
{
	static const char *const ext[] = {".py", ".cpp", ".cc", ".cu", ".cuh", ".h", ".hpp"};
	size_t n = strlen(name);
	for (size_t i = 0; i < sizeof(ext) / sizeof(ext[0]); i++) {
		size_t k = strlen(ext[i]);
		if (n > k && !strcmp(name + n - k, ext[i]))
			return 1;
	}
	return 0;
}

static int name_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static void index_dir(struct indexer *X, const char *dir, int depth)
{
	DIR *dp = depth < 32 ? opendir(dir) : NULL;
	if (!dp) {
		if (depth < 32)
			fs_diag_add(X->d, FS_WARNING, dir, 0, 0, NULL, 0, "cannot open directory: %s", strerror(errno));
		return;
	}
	char **names = NULL;
	uint32_t n = 0, cap = 0;
	struct dirent *de;
	while ((de = readdir(dp))) {
		if (de->d_name[0] == '.')
			continue; /* ., .., .git and other hidden trees */
		FS_GROW(names, cap, n + 1);
		names[n++] = fs_xstrndup(de->d_name, strlen(de->d_name));
	}
	closedir(dp);
	if (n)
		qsort(names, n, sizeof(*names), name_cmp); /* deterministic evidence order */
	for (uint32_t i = 0; i < n; i++) {
		size_t len = strlen(dir) + strlen(names[i]) + 2;
		char *full = fs_xmalloc(len);
		snprintf(full, len, "%s/%s", dir, names[i]);
		struct stat st;
		if (lstat(full, &st) == 0 && S_ISDIR(st.st_mode))
			index_dir(X, full, depth + 1);
		else if (S_ISREG(st.st_mode) && (indexed_ext(names[i]) || !strcmp(names[i], "default.yaml") ||
						     !strcmp(names[i], "models.yaml"))) {
			size_t tl;
			char *text = fs_read_input(full, FS_IN_SOURCE, &tl);
			if (text) {
				if (indexed_ext(names[i]))
					index_text(X, full, text, tl);
				fs_srctree_index_text(X->c, full, text, tl); /* wrappers, aliases, config files */
				X->c->files_indexed++;
				free(text);
			} else /* a tree holds generated files (kernel binaries as C arrays): evidence, not input */
				fs_diag_add(X->d, FS_WARNING, full, 0, 0, NULL, 0, "not indexed: %s", fs_input_error(errno, FS_IN_SOURCE));
		}
		free(full);
		free(names[i]);
	}
	free(names);
}

uint32_t fs_catalog_index_tree(struct fs_catalog *c, const char *dir, struct fs_diags *d)
{
	struct indexer X = {c, {0}, NULL, d};
	uint32_t before = d->n_errors;
	for (int r = 0; r < RX_COUNT; r++) {
		int err;
		PCRE2_SIZE off;
		X.rx[r] = pcre2_compile((PCRE2_SPTR)patterns[r], PCRE2_ZERO_TERMINATED, 0, &err, &off, NULL);
		if (!X.rx[r]) {
			PCRE2_UCHAR msg[256];
			pcre2_get_error_message(err, msg, sizeof(msg));
			fs_diag_add(d, FS_ERROR, "fusescan", 0, 0, NULL, 0, "internal regex %d at %zu: %s", r,
				    (size_t)off, (const char *)msg);
			goto done;
		}
		pcre2_jit_compile(X.rx[r], PCRE2_JIT_COMPLETE); /* falls back to the interpreter */
	}
	X.md = pcre2_match_data_create(8, NULL);
	struct stat st;
	if (stat(dir, &st) != 0 || !S_ISDIR(st.st_mode))
		fs_diag_add(d, FS_ERROR, dir, 0, 0, NULL, 0, "--kernels-from: not a directory");
	else
		index_dir(&X, dir, 0);
done:
	pcre2_match_data_free(X.md);
	for (int r = 0; r < RX_COUNT; r++)
		pcre2_code_free(X.rx[r]);
	return d->n_errors - before;
}

void fs_catalog_release(struct fs_catalog *c)
{
	if (c->confirm) {
		fs_patlib_release(c->confirm);
		free(c->confirm);
	}
	for (uint32_t i = 0; i < c->n; i++) {
		struct fs_catalog_entry *e = &c->e[i];
		for (uint32_t k = 0; k < e->n_chains; k++) {
			free(e->chains[k].ops);
			free(e->chains[k].views);
		}
		free(e->chains);
		free(e->kernels);
		free(e->subsumed);
		free(e->reference);
		free(e->wrappers);
		for (uint32_t k = 0; e->off_why && k < e->n_transforms; k++)
			free(e->off_why[k]);
		free(e->off_why);
		for (uint32_t k = 0; k < e->n_wants; k++) {
			free(e->wants[k].text);
			free(e->wants[k].note);
		}
		free(e->wants);
		free(e->transforms);
		free(e->tdefault);
		free(e->name);
		free(e->dtypes);
		free(e->constraints);
		free(e->evidence);
	}
	free(c->e);
	for (uint32_t i = 0; i < c->n_found; i++) {
		free(c->found[i].path);
		free(c->found[i].symbol);
		free(c->found[i].detail);
	}
	free(c->found);
	free(c->tree_default);
	for (int r = 0; r < FS_TREE_REGISTRIES; r++)
		free(c->tree_registry[r]);
	free(c->tree_user_dir);
	if (c->cfg) {
		fs_adconfig_release(c->cfg);
		free(c->cfg);
	}
	memset(c, 0, sizeof(*c));
}
