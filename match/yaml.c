/*
 * yaml.c: a reader for the YAML that AutoDeploy's configs are written in
 * (see fusescan/adconfig.h): block mappings and sequences by indentation,
 * flow lists and maps that end on their line, plain and quoted scalars,
 * comments (kept: AD states its reasons there). Anchors, aliases, tags,
 * block scalars and multi-line flows are refused with file:line:col, as are
 * tabs in indentation and duplicate keys. One line array, one function per
 * rule; errors skip the line and go on. Called by match/adconfig.c.
 */
#include "fusescan/adconfig.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>

struct yline {
	const char *raw;        /* the whole line, for excerpts */
	size_t raw_len;
	uint32_t indent, no;
	const char *p, *e;      /* its content: indentation, comment and trailing blanks off */
	const char *comment;    /* after '#', blanks off; NULL if none */
	size_t comment_len;
};

struct yp {
	struct fs_yaml *y;
	uint16_t layer;
	const char *name;
	struct fs_diags *d;
	struct yline *L;
	uint32_t n, cur, errors;
	int full;               /* FS_YAML_NODES reached (said once) */
};

void fs_yaml_init(struct fs_yaml *y)
{
	memset(y, 0, sizeof(*y));
	fs_arena_init(&y->arena);
}

void fs_yaml_release(struct fs_yaml *y)
{
	free(y->v);
	fs_arena_release(&y->arena);
	memset(y, 0, sizeof(*y));
}

static void yerr(struct yp *P, const struct yline *l, const char *at, const char *msg)
{
	fs_diag_add(P->d, FS_ERROR, P->name, l->no, (uint32_t)(at - l->raw) + 1, l->raw, l->raw_len, "%s", msg);
	P->errors++;
}

static int32_t node(struct yp *P, const struct yline *l, const char *at, uint8_t kind)
{
	struct fs_yaml *y = P->y;
	if (y->n >= FS_YAML_NODES) {
		if (!P->full)
			yerr(P, l, at, "more nodes than a config holds (262144)");
		P->full = 1;
		return -1;
	}
	FS_GROW(y->v, y->cap, y->n + 1);
	struct fs_ynode *n = &y->v[y->n];
	memset(n, 0, sizeof(*n));
	n->kind = kind, n->layer = P->layer, n->line = l->no, n->col = (uint32_t)(at - l->raw) + 1;
	n->first = n->next = n->replaced = -1;
	return (int32_t)y->n++;
}

struct keyed {
	const char *key;
	int32_t node;
};

static int by_key(const void *a, const void *b)
{
	const struct keyed *x = a, *y = b;
	int c = strcmp(x->key, y->key);
	return c ? c : (x->node > y->node) - (x->node < y->node);
}

/* Duplicate keys of a mapping (sorted once, so a big mapping stays n log n): one error each. */
static void duplicates(struct yp *P, int32_t m)
{
	uint32_t n = 0, cap = 0;
	struct keyed *v = NULL;
	for (int32_t c = P->y->v[m].first; c >= 0; c = P->y->v[c].next) {
		FS_GROW(v, cap, n + 1);
		v[n++] = (struct keyed){P->y->v[c].key, c};
	}
	if (n > 1)
		qsort(v, n, sizeof(*v), by_key);
	for (uint32_t i = 1; i < n; i++)
		if (!strcmp(v[i].key, v[i - 1].key)) {
			const struct fs_ynode *d = &P->y->v[v[i].node];
			yerr(P, &P->L[d->line - 1], P->L[d->line - 1].raw + d->col - 1, "duplicate key in a mapping");
		}
	free(v);
}

/* ---- lines ----------------------------------------------------------------------------------- */

/* Where a '#' begins a comment: at the start or after a blank, outside quotes. */
static const char *comment_at(const char *p, const char *e)
{
	char q = 0;
	for (const char *s = p; s < e; s++) {
		if (q) {
			if (*s == q && !(q == '\'' && s + 1 < e && s[1] == '\'') && !(q == '"' && s[-1] == '\\'))
				q = 0;
			else if (q == '\'' && *s == '\'')
				s++;
		} else if ((*s == '\'' || *s == '"') && (s == p || strchr(" [{,:", s[-1])))
			q = *s;
		else if (*s == '#' && (s == p || s[-1] == ' ' || s[-1] == '\t'))
			return s;
	}
	return NULL;
}

static void split_line(struct yline *l)
{
	const char *p = l->raw, *e = l->raw + l->raw_len;
	if (e > p && e[-1] == '\r')
		e--;
	while (p < e && *p == ' ')
		p++;
	l->indent = (uint32_t)(p - l->raw);
	const char *c = comment_at(p, e);
	if (c) {
		const char *t = c + 1, *te = e;
		while (t < te && (*t == ' ' || *t == '\t'))
			t++;
		l->comment = t, l->comment_len = (size_t)(te - t);
		e = c;
	}
	while (e > p && (e[-1] == ' ' || e[-1] == '\t'))
		e--;
	l->p = p, l->e = e;
}

static uint32_t read_lines(struct yp *P, const char *text, size_t len)
{
	uint32_t cap = 0;
	for (const char *p = text, *end = text + len; p < end;) {
		const char *nl = memchr(p, '\n', (size_t)(end - p)), *e = nl ? nl : end;
		FS_GROW(P->L, cap, P->n + 1);
		struct yline *l = &P->L[P->n];
		memset(l, 0, sizeof(*l));
		l->raw = p, l->raw_len = (size_t)(e - p), l->no = ++P->n;
		split_line(l);
		p = nl ? nl + 1 : end;
	}
	return P->n;
}

/* The next line with content at or after cur, or NULL (documents end at EOF). */
static struct yline *peek(struct yp *P)
{
	while (P->cur < P->n && P->L[P->cur].p == P->L[P->cur].e)
		P->cur++;
	return P->cur < P->n ? &P->L[P->cur] : NULL;
}

/* ---- scalars and flows ------------------------------------------------------------------------ */

static int plain_stop(char c, int in_flow)
{
	return in_flow && (c == ',' || c == ']' || c == '}');
}

/* A quoted scalar at p ('...' with '' for a quote, "..." with backslash escapes kept as
 * written but for \" and \\); its text into the arena, *end after it. */
static const char *quoted(struct yp *P, const struct yline *l, const char *p, const char **end)
{
	char q = *p, buf[FS_YAML_SCALAR];
	size_t n = 0;
	for (const char *s = p + 1; s < l->e; s++) {
		if (*s == q && q == '\'' && s + 1 < l->e && s[1] == '\'')
			s++;
		else if (*s == q) {
			*end = s + 1;
			return fs_arena_strndup(&P->y->arena, buf, n);
		} else if (q == '"' && *s == '\\' && s + 1 < l->e && (s[1] == '"' || s[1] == '\\'))
			s++;
		if (n == sizeof(buf) - 1) {
			yerr(P, l, p, "a scalar longer than 4096 bytes");
			return NULL;
		}
		buf[n++] = *s;
	}
	yerr(P, l, p, "a quoted scalar must end on its line");
	return NULL;
}

static int32_t scalar(struct yp *P, const struct yline *l, const char *p, int in_flow, const char **end)
{
	static const char refused[] = "&*!|>%@`";
	if (p < l->e && *p && strchr(refused, *p)) {
		yerr(P, l, p, "anchors, aliases, tags, block scalars and directives are not read in a config");
		return -1;
	}
	const char *text, *s = p;
	int q = *p == '\'' || *p == '"';
	if (q)
		text = quoted(P, l, p, end);
	else {
		while (s < l->e && !plain_stop(*s, in_flow) && !(in_flow && *s == ':' && (s + 1 == l->e || s[1] == ' ')))
			s++;
		const char *te = s;
		while (te > p && te[-1] == ' ')
			te--;
		if (te - p >= FS_YAML_SCALAR) {
			yerr(P, l, p, "a scalar longer than 4096 bytes");
			return -1;
		}
		text = fs_arena_strndup(&P->y->arena, p, (size_t)(te - p));
		*end = s;
	}
	if (!text)
		return -1;
	int32_t n = node(P, l, p, FS_Y_SCALAR);
	if (n >= 0) {
		struct fs_ynode *v = &P->y->v[n];
		v->text = text, v->quoted = (uint8_t)q;
		if (!q && (!*text || !strcmp(text, "~") || !strcasecmp(text, "null")))
			v->kind = FS_Y_NULL;
	}
	return n;
}

static const char *blanks(const char *p, const char *e)
{
	while (p < e && *p == ' ')
		p++;
	return p;
}

static int32_t flow(struct yp *P, const struct yline *l, const char *p, uint32_t depth, const char **end);

/* flow item = flow | scalar; in a map: key ':' item */
static int32_t flow_item(struct yp *P, const struct yline *l, const char *p, int map, uint32_t depth, const char **end)
{
	const char *key = NULL;
	if (map) {
		int32_t k = scalar(P, l, p, 1, end);
		if (k < 0)
			return -1;
		key = P->y->v[k].text;
		p = blanks(*end, l->e);
		if (p == l->e || *p != ':') {
			yerr(P, l, p, "expected ':' after a key in a flow map");
			return -1;
		}
		p = blanks(p + 1, l->e);
	}
	int32_t v = p < l->e && (*p == '[' || *p == '{') ? flow(P, l, p, depth + 1, end) : scalar(P, l, p, 1, end);
	if (v >= 0 && key)
		P->y->v[v].key = key;
	return v;
}

/* flow = '[' (item (',' item)*)? ']' | '{' (key: item (',' ...)*)? '}', all on one line */
static int32_t flow(struct yp *P, const struct yline *l, const char *p, uint32_t depth, const char **end)
{
	if (depth > FS_YAML_DEPTH) {
		yerr(P, l, p, "nested deeper than 32 levels");
		return -1;
	}
	int map = *p == '{';
	char close = map ? '}' : ']';
	int32_t n = node(P, l, p, map ? FS_Y_MAP : FS_Y_SEQ), tail = -1;
	const char *s = blanks(p + 1, l->e);
	while (n >= 0 && s < l->e && *s != close) {
		int32_t c = flow_item(P, l, s, map, depth, &s);
		if (c < 0)
			return -1;
		*(tail < 0 ? &P->y->v[n].first : &P->y->v[tail].next) = c;
		tail = c;
		s = blanks(s, l->e);
		if (s < l->e && *s == ',')
			s = blanks(s + 1, l->e);
		else if (s < l->e && *s != close) {
			yerr(P, l, s, "expected ',' or the end of the flow collection");
			return -1;
		}
	}
	if (n >= 0 && map)
		duplicates(P, n);
	if (n >= 0 && s == l->e) {
		yerr(P, l, p, "a flow collection must end on its line");
		return -1;
	}
	*end = s + 1;
	return n;
}

/* A value that ends its line: a flow or a scalar, nothing after it. */
static int32_t inline_value(struct yp *P, const struct yline *l, const char *p, uint32_t depth)
{
	const char *end;
	int32_t v = *p == '[' || *p == '{' ? flow(P, l, p, depth, &end) : scalar(P, l, p, 0, &end);
	if (v >= 0 && blanks(end, l->e) != l->e) {
		yerr(P, l, end, "unexpected text after the value");
		return -1;
	}
	return v;
}

/* ---- blocks -------------------------------------------------------------------------------- */

static int32_t block(struct yp *P, uint32_t min_indent, uint32_t depth);

static int is_dash(const struct yline *l)
{
	return l->p < l->e && *l->p == '-' && (l->p + 1 == l->e || l->p[1] == ' ');
}

/* The ':' ending a block mapping's key on this line (a blank or the end after it), or NULL. */
static const char *key_colon(const struct yline *l)
{
	const char *s = l->p;
	if (s < l->e && (*s == '[' || *s == '{'))
		return NULL;
	if (s < l->e && (*s == '\'' || *s == '"')) {
		const char *q = memchr(s + 1, *s, (size_t)(l->e - s - 1));
		s = q ? blanks(q + 1, l->e) : l->e;
		return s < l->e && *s == ':' && (s + 1 == l->e || s[1] == ' ') ? s : NULL;
	}
	for (; s < l->e; s++)
		if (*s == ':' && (s + 1 == l->e || s[1] == ' '))
			return s;
	return NULL;
}

/* Lines deeper than ind that nothing opened: one error, all skipped. */
static void skip_deeper(struct yp *P, uint32_t ind)
{
	struct yline *l = peek(P);
	if (!l || l->indent <= ind)
		return;
	yerr(P, l, l->p, "unexpected indentation");
	while ((l = peek(P)) && l->indent > ind)
		P->cur++;
}

/* A mapping entry's value: on its line, or the block below it (deeper, or a
 * sequence at the key's own indentation, as `models:\n- name: x` writes it). */
static int32_t entry_value(struct yp *P, struct yline *l, const char *colon, uint32_t ind, uint32_t depth)
{
	const char *v = blanks(colon + 1, l->e);
	if (v < l->e) {
		P->cur++;
		int32_t r = inline_value(P, l, v, depth);
		skip_deeper(P, ind);
		return r;
	}
	P->cur++;
	struct yline *nx = peek(P);
	if (nx && (nx->indent > ind || (nx->indent == ind && is_dash(nx))))
		return block(P, nx->indent > ind ? ind + 1 : ind, depth + 1);
	return node(P, l, colon, FS_Y_NULL);
}

/* mapping = (key ':' value)+ at one indentation */
static int32_t mapping(struct yp *P, uint32_t ind, uint32_t depth)
{
	struct yline *l = peek(P);
	int32_t m = node(P, l, l->p, FS_Y_MAP), tail = -1;
	while (m >= 0 && (l = peek(P)) && l->indent == ind && !is_dash(l)) {
		const char *colon = key_colon(l), *end;
		if (!colon) {
			yerr(P, l, l->p, "expected 'key: value' in a mapping");
			P->cur++;
			skip_deeper(P, ind);
			continue;
		}
		struct yline kl = *l;
		kl.e = colon;
		int32_t k = scalar(P, &kl, l->p, 0, &end);
		const char *key = k >= 0 ? P->y->v[k].text : NULL;
		int32_t v = entry_value(P, l, colon, ind, depth);
		if (!key || v < 0)
			continue;
		struct fs_ynode *n = &P->y->v[v];
		n->key = key, n->line = kl.no, n->col = kl.indent + 1;
		n->comment = l->comment && n->kind != FS_Y_MAP ? fs_arena_strndup(&P->y->arena, l->comment, l->comment_len)
							   : NULL;
		if (tail < 0)
			P->y->v[m].first = v;
		else
			P->y->v[tail].next = v;
		tail = v;
	}
	if (m >= 0)
		duplicates(P, m);
	return m;
}

/* sequence = ('-' value)+ at one indentation; `- key: v` opens a mapping at the key's column */
static int32_t sequence(struct yp *P, uint32_t ind, uint32_t depth)
{
	struct yline *l = peek(P);
	int32_t s = node(P, l, l->p, FS_Y_SEQ), tail = -1;
	while (s >= 0 && (l = peek(P)) && l->indent == ind && is_dash(l)) {
		const char *v = blanks(l->p + 1, l->e);
		int32_t c;
		if (v == l->e) {
			P->cur++;
			struct yline *nx = peek(P);
			c = nx && nx->indent > ind ? block(P, ind + 1, depth + 1) : node(P, l, l->p, FS_Y_NULL);
		} else {
			l->indent = (uint32_t)(v - l->raw), l->p = v; /* the rest is a block of its own */
			c = block(P, l->indent, depth + 1);
		}
		if (c >= 0 && tail < 0)
			P->y->v[s].first = c;
		else if (c >= 0)
			P->y->v[tail].next = c;
		tail = c >= 0 ? c : tail;
	}
	return s;
}

/* block = sequence | mapping | scalar, at the next line's indentation (>= min_indent) */
static int32_t block(struct yp *P, uint32_t min_indent, uint32_t depth)
{
	struct yline *l = peek(P);
	if (!l || l->indent < min_indent)
		return -2; /* nothing here */
	if (depth > FS_YAML_DEPTH) {
		yerr(P, l, l->p, "nested deeper than 32 levels");
		while ((l = peek(P)) && l->indent >= min_indent)
			P->cur++;
		return -1;
	}
	if (is_dash(l))
		return sequence(P, l->indent, depth);
	if (key_colon(l))
		return mapping(P, l->indent, depth);
	P->cur++;
	return inline_value(P, l, l->p, depth);
}

static void doc_markers(struct yp *P)
{
	for (uint32_t i = 0; i < P->n; i++) {
		struct yline *l = &P->L[i];
		size_t n = (size_t)(l->e - l->p);
		if (l->indent || n < 3 || (memcmp(l->p, "---", 3) && memcmp(l->p, "...", 3)) || (n > 3 && l->p[3] != ' '))
			continue;
		if (l->p[0] == '-' && i == 0 && n == 3)
			l->e = l->p; /* a leading document start: nothing to read */
		else
			yerr(P, l, l->p, "one document per config file ('---' or '...' here)");
		l->e = l->p;
	}
}

int32_t fs_yaml_parse(struct fs_yaml *y, uint16_t layer, const char *name, const char *text, size_t len,
		      struct fs_diags *d)
{
	struct yp P = {y, layer, name, d, NULL, 0, 0, 0, 0};
	read_lines(&P, text, len);
	for (uint32_t i = 0; i < P.n; i++) {
		struct yline *l = &P.L[i];
		const char *bad = memchr(l->raw, '\0', l->raw_len);
		if (bad || (l->p < l->e && *l->p == '\t')) {
			yerr(&P, l, bad ? bad : l->p, bad ? "NUL byte in a config" : "a tab in indentation (YAML indents with spaces)");
			l->e = l->p; /* the line is skipped */
		}
	}
	doc_markers(&P);
	struct yline *first = peek(&P);
	int32_t root = block(&P, 0, 0);
	struct yline *rest = peek(&P);
	if (rest)
		yerr(&P, rest, rest->p, "unexpected text after the document (indentation?)");
	if (root == -2) {
		struct yline none = {text, 0, 0, 1, text, text, NULL, 0};
		root = node(&P, first ? first : &none, text, FS_Y_NULL);
	}
	free(P.L);
	return P.errors ? -1 : root;
}

int32_t fs_yaml_get(const struct fs_yaml *y, int32_t map, const char *key)
{
	if (map < 0 || y->v[map].kind != FS_Y_MAP)
		return -1;
	for (int32_t c = y->v[map].first; c >= 0; c = y->v[c].next)
		if (y->v[c].key && !strcmp(y->v[c].key, key))
			return c;
	return -1;
}

/* PyYAML's three spellings of each: lower, Capitalised, UPPER */
static int spelled(const char *t, const char *w)
{
	size_t n = strlen(w);
	if (strlen(t) != n || strcasecmp(t, w))
		return 0;
	int up = 0;
	for (size_t i = 1; i < n; i++)
		up += t[i] >= 'A' && t[i] <= 'Z';
	return up == 0 || (up == (int)n - 1 && t[0] >= 'A' && t[0] <= 'Z');
}

int fs_yaml_bool(const struct fs_ynode *n)
{
	static const char *const yes[] = {"true", "yes", "on"}, *const no[] = {"false", "no", "off"};
	if (n->kind != FS_Y_SCALAR || n->quoted)
		return -1;
	for (int i = 0; i < 3; i++) {
		if (spelled(n->text, yes[i]))
			return 1;
		if (spelled(n->text, no[i]))
			return 0;
	}
	return -1;
}
