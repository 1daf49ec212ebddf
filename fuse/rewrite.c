/*
 * rewrite.c: approved rewrites as edits of the dump text (see rewrite.h),
 * and their unified diff. Called by `fusescan --apply`. A site's lines are
 * deleted, except the last, which becomes the fused node (and its getitems);
 * side-effect-only nodes that read a deleted intermediate (metadata asserts)
 * go with it. The after-dump is parsed again: it must have no errors, no
 * reference the input did not have, and the same graph outputs.
 */
#include "fusescan/rewrite.h"

#include "prog.h" /* fs_prog_path */
#include "sem.h"

#include <ctype.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

enum { NONE = UINT32_MAX };

struct lines {
	const char **p;   /* start of each line */
	uint32_t n;
	const char *end;
};

static void split_lines(struct lines *L, const char *text, size_t len)
{
	uint32_t cap = 0;
	L->p = NULL;
	L->n = 0;
	L->end = text + len;
	for (const char *q = text; q < L->end;) {
		FS_GROW(L->p, cap, L->n + 1);
		L->p[L->n++] = q;
		const char *nl = memchr(q, '\n', (size_t)(L->end - q));
		q = nl ? nl + 1 : L->end;
	}
	FS_GROW(L->p, cap, L->n + 1);
	L->p[L->n] = L->end;
}

static const char *eol(const struct lines *L, uint32_t i)
{
	const char *e = L->p[i + 1];
	return e - L->p[i] >= 2 && e[-1] == '\n' && e[-2] == '\r' ? "\r\n" : "\n";
}

/* ---- text building --------------------------------------------------------------- */

struct buf {
	char *p;
	size_t n, cap;
};

static void bput(struct buf *b, const char *s, size_t n)
{
	if (b->n + n + 1 > b->cap) {
		b->cap = (b->n + n + 1) * 2;
		b->p = fs_xrealloc(b->p, b->cap);
	}
	memcpy(b->p + b->n, s, n);
	b->n += n;
	b->p[b->n] = '\0';
}

static void bprintf(struct buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void bprintf(struct buf *b, const char *fmt, ...)
{
	char tmp[1024];
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(tmp, sizeof(tmp), fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	if ((size_t)n < sizeof(tmp)) {
		bput(b, tmp, (size_t)n);
		return;
	}
	char *big = fs_xmalloc((size_t)n + 1);
	va_start(ap, fmt);
	vsnprintf(big, (size_t)n + 1, fmt, ap);
	va_end(ap);
	bput(b, big, (size_t)n);
	free(big);
}

static const char *shape_of(const struct fs_scan *s, const struct fs_type *t)
{
	return fs_scan_str(s, s->types.shapes[t->shape].text);
}

/* "%name : shape : dtype" as an argument */
static void put_ref(struct buf *b, const struct fs_scan *s, const struct fs_graph *g, uint32_t node)
{
	const struct fs_node *n = &g->nodes[node];
	if (n->n_out != 1)
		return bprintf(b, "%%%s : ? : tuple", fs_scan_str(s, n->name));
	const struct fs_type *t = &g->types[n->out];
	bprintf(b, "%%%s : %s : %s", fs_scan_str(s, n->name), shape_of(s, t), fs_dtype_name((enum fs_dtype)t->dtype));
}

/* ---- sites ---------------------------------------------------------------------------- */

struct ctx {
	const struct fs_scan *s;
	const struct fs_graph *g;
	struct lines L;
	uint32_t *line;        /* per node: input line, NONE if not in this module's text */
	uint8_t *in_site;      /* per node: 1 in the current site, 2 claimed by an earlier site */
	struct fs_rewritten *out;
	uint8_t *node_sym;     /* per interned string of the scan: 1 names a node of g */
	struct fs_strtab made; /* fused names made so far */
	uint32_t next_k;       /* fresh_name: the next suffix to try for `last_base` */
	uint32_t last_base;    /* its base, interned in `made` */
};

static void skip(struct ctx *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void skip(struct ctx *c, const char *fmt, ...)
{
	char msg[400];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	c->out->why = fs_xrealloc(c->out->why, (c->out->skipped + 1) * sizeof(char *));
	c->out->why[c->out->skipped++] = fs_xstrndup(msg, strlen(msg));
}

static void add_edit(struct fs_rewritten *r, uint32_t line, char *text)
{
	FS_GROW(r->edits, r->cap_edits, r->n_edits + 1);
	r->edits[r->n_edits].line = line;
	r->edits[r->n_edits++].text = text;
}

static int name_taken(const struct ctx *c, const char *name)
{
	size_t n = strlen(name);
	uint32_t sym = fs_strtab_find(&c->s->strs, name, n);
	return (sym != UINT32_MAX && c->node_sym[sym]) || fs_strtab_find(&c->made, name, n) != UINT32_MAX;
}

/* "<base>_fused[_k]", the base made an identifier ("multi_output:add-mul"
 * gives multi_output_add_mul), unused in the graph and in this rewrite. The
 * suffixes of one base are tried from where the last site left off. */
static const char *fresh_name(struct ctx *c, const char *rewrite_name)
{
	char base[120], name[200];
	size_t n = 0;
	for (const char *p = rewrite_name; *p && n + 1 < sizeof(base); p++)
		base[n++] = (isalnum((unsigned char)*p) || *p == '_') ? *p : '_';
	base[n] = '\0';
	uint32_t b = fs_strtab_intern(&c->made, base, n);
	uint32_t k = b == c->last_base ? c->next_k : 0;
	for (;; k++) {
		if (k)
			snprintf(name, sizeof(name), "%s_fused_%u", base, k);
		else
			snprintf(name, sizeof(name), "%s_fused", base);
		if (!name_taken(c, name))
			break;
	}
	c->last_base = b;
	c->next_k = k + 1;
	return fs_strtab_str(&c->made, fs_strtab_intern(&c->made, name, strlen(name)));
}

static int real_user(const struct fs_graph *g, uint32_t u)
{
	return !(g->nodes[u].flags & FS_NODE_SIDE_EFFECT);
}

/* Inputs (first use, file order) and outputs (file order) of the marked site. */
static void site_io(struct ctx *c, const uint32_t *nodes, uint32_t n, uint32_t *in, uint32_t *n_in,
		    uint32_t *outs, uint32_t *n_out)
{
	const struct fs_graph *g = c->g;
	*n_in = *n_out = 0;
	for (uint32_t k = 0; k < n; k++) {
		const struct fs_node *x = &g->nodes[nodes[k]];
		for (uint32_t a = x->args; a < x->args + x->n_args; a++) {
			uint32_t p = g->args[a].node, j = 0;
			if (g->args[a].kind != FS_ARG_NODE || c->in_site[p] == 1)
				continue;
			while (j < *n_in && in[j] != p)
				j++;
			if (j == *n_in)
				in[(*n_in)++] = p;
		}
		int escapes = (x->flags & FS_NODE_OUTPUT) != 0;
		for (uint32_t u = 0; u < x->n_users && !escapes; u++) {
			uint32_t user = g->users[x->users + u];
			escapes = real_user(g, user) && c->in_site[user] != 1;
		}
		if (escapes)
			outs[(*n_out)++] = nodes[k];
	}
}

/* The eps of a site: the float a mean / sum is added to before rsqrt (the
 * chain written out), or the float a norm op of the site already takes
 * (add + flashinfer_rms_norm(x, w, eps): an op of a namespace, not aten's
 * arithmetic, whose floats are the model's constants, Gemma's 1 + w among
 * them). Its printed text, or NULL where the site has neither. */
static const char *site_eps(const struct ctx *c, const uint32_t *nodes, uint32_t n)
{
	const struct fs_graph *g = c->g;
	const char *taken = NULL;
	for (uint32_t k = 0; k < n; k++) {
		const struct fs_node *x = &g->nodes[nodes[k]];
		const struct fs_arg *a = &g->args[x->args];
		int norm_op = strchr(fs_scan_str(c->s, c->s->ops[x->op].key), '.') != NULL;
		for (uint32_t i = 0; i < x->n_args && norm_op; i += g->args[x->args + i].span)
			if (a[i].kind == FS_ARG_FLOAT)
				taken = fs_scan_str(c->s, a[i].text);
		if (fs_sem_is(c->s, x, SEM_add) && x->n_args == 2 && a[0].kind == FS_ARG_NODE && a[1].kind == FS_ARG_FLOAT &&
		    (fs_sem_is(c->s, &g->nodes[a[0].node], SEM_mean) || fs_sem_is(c->s, &g->nodes[a[0].node], SEM_sum)))
			return fs_scan_str(c->s, a[1].text);
	}
	return taken;
}

/* The residual sum of an add + norm site: its add of two computed values. */
static uint32_t site_sum(const struct ctx *c, const uint32_t *nodes, uint32_t n)
{
	const struct fs_graph *g = c->g;
	for (uint32_t k = 0; k < n; k++) {
		const struct fs_node *x = &g->nodes[nodes[k]];
		if (fs_sem_is(c->s, x, SEM_add) && x->n_args == 2 && g->args[x->args].kind == FS_ARG_NODE &&
		    g->args[x->args + 1].kind == FS_ARG_NODE)
			return nodes[k];
	}
	return NONE;
}

/* The fused node (and its getitems) that replace the site's last line: the
 * site's tensor inputs, then the literals the target takes (a norm's eps).
 * A kernel returning (norm, sum) returns both even where nothing reads the
 * sum: its tuple, then a getitem for each value read. */
static char *fused_lines(struct ctx *c, const struct fs_rewrite *rw, const uint32_t *nodes, uint32_t n,
			 const uint32_t *in, uint32_t n_in, const uint32_t *outs, uint32_t n_out, const char *nl)
{
	const struct fs_scan *s = c->s;
	const struct fs_graph *g = c->g;
	struct buf b = {0};
	uint32_t vals[2] = {outs[0], n_out > 1 ? outs[1] : NONE}, n_val = n_out, n_read = n_out;
	if (rw->norm_first && n_out == 2 && vals[0] < vals[1]) /* (norm, sum) */
		vals[0] = outs[1], vals[1] = outs[0];
	if (rw->norm_first && n_out == 1 && (vals[1] = site_sum(c, nodes, n)) != NONE)
		n_val = 2;
	const char *fused = n_val == 1 ? fs_scan_str(s, g->nodes[vals[0]].name) : fresh_name(c, rw->name);
	const char *eps = rw->literals & FS_LIT_EPS ? site_eps(c, nodes, n) : NULL;
	bprintf(&b, "%%%s = %s(", fused, rw->target);
	for (uint32_t k = 0; k < n_in; k++) {
		if (k)
			bput(&b, ", ", 2);
		put_ref(&b, s, g, in[k]);
	}
	if (eps)
		bprintf(&b, "%s%s", n_in ? ", " : "", eps);
	bput(&b, ") : ", 4);
	const uint32_t *v = n_val <= 2 && rw->norm_first ? vals : outs;
	if (n_val == 1) {
		const struct fs_type *t0 = &g->types[g->nodes[v[0]].out];
		bprintf(&b, "%s : %s%s", shape_of(s, t0), fs_dtype_name((enum fs_dtype)t0->dtype), nl);
		return b.p;
	}
	bput(&b, "(", 1);
	for (uint32_t k = 0; k < n_val; k++)
		bprintf(&b, "%s%s", k ? ", " : "", shape_of(s, &g->types[g->nodes[v[k]].out]));
	bput(&b, ") : (", 5);
	for (uint32_t k = 0; k < n_val; k++)
		bprintf(&b, "%s%s", k ? ", " : "", fs_dtype_name((enum fs_dtype)g->types[g->nodes[v[k]].out].dtype));
	bprintf(&b, ")%s", nl);
	for (uint32_t k = 0; k < n_read; k++) {
		const struct fs_type *t = &g->types[g->nodes[v[k]].out];
		bprintf(&b, "%%%s = <built-in function getitem>(%%%s : ? : tuple, %u) : %s : %s%s",
			fs_scan_str(s, g->nodes[v[k]].name), fused, k, shape_of(s, t),
			fs_dtype_name((enum fs_dtype)t->dtype), nl);
	}
	return b.p;
}

/* Where an output is read before the site's last line (parallel GEMMs: q's
 * reshape comes before the v GEMM): the site's first line after every
 * input is defined, the earliest the fused node can take. */
static uint32_t earliest_line(const struct ctx *c, const struct fs_site *site, uint32_t last, const uint32_t *in, uint32_t n_in)
{
	uint32_t need = 0, at = last;
	for (uint32_t k = 0; k < n_in; k++)
		if (c->line[in[k]] != NONE && c->line[in[k]] >= need)
			need = c->line[in[k]] + 1;
	for (uint32_t k = 0; k < site->n_nodes; k++) {
		uint32_t l = c->line[site->nodes[k]];
		if (l >= need && l < at)
			at = l;
	}
	return at;
}

/* Why a site cannot be replaced in place: a code the caller acts on (a
 * value read before the fused node's place moves that place earlier), its
 * words for the skip list. */
enum site_problem { SITE_OK, SITE_UNUSED, SITE_NOT_CALL, SITE_OVERLAPS, SITE_NO_EPS, SITE_TUPLE, SITE_READ_BEFORE };

static const char *const site_problem_words[] = {
	[SITE_UNUSED] = "nothing of it is used",
	[SITE_NOT_CALL] = "a node of the site is not a call in this module",
	[SITE_OVERLAPS] = "it overlaps a site replaced before it",
	[SITE_NO_EPS] = "no eps: no float is added to a mean or sum, and no norm op of the site takes one",
	[SITE_TUPLE] = "an output is a tuple",
};

/* Problem p of replacing a site by a fused node at line `last`, in d. */
static enum site_problem said(const struct ctx *c, uint32_t last, struct fs_diags *d, enum site_problem p)
{
	fs_diag_add(d, FS_ERROR, fs_prog_path(c->s, c->g), last + 1, 0, NULL, 0, "%s", site_problem_words[p]);
	return p;
}

/* The problem of replacing the site by a fused node at line `last` (its
 * words in d), or SITE_OK. */
static enum site_problem site_problem(struct ctx *c, const struct fs_rewrite *rw, const struct fs_site *site, uint32_t last,
				      const uint32_t *outs, uint32_t n_out, struct fs_diags *d)
{
	const struct fs_graph *g = c->g;
	if (!n_out)
		return said(c, last, d, SITE_UNUSED);
	for (uint32_t k = 0; k < site->n_nodes; k++) {
		uint32_t v = site->nodes[k];
		if (v >= g->n_nodes || g->nodes[v].kind != FS_NODE_CALL || c->line[v] == NONE)
			return said(c, last, d, SITE_NOT_CALL);
		if (c->in_site[v] == 2)
			return said(c, last, d, SITE_OVERLAPS);
	}
	if (rw->literals & FS_LIT_EPS && !site_eps(c, site->nodes, site->n_nodes))
		return said(c, last, d, SITE_NO_EPS);
	for (uint32_t k = 0; k < n_out; k++) {
		const struct fs_node *x = &g->nodes[outs[k]];
		if (x->n_out != 1)
			return said(c, last, d, SITE_TUPLE);
		for (uint32_t u = 0; u < x->n_users; u++) {
			uint32_t user = g->users[x->users + u];
			if (c->in_site[user] != 1 && c->line[user] != NONE && c->line[user] < last) {
				fs_diag_add(d, FS_ERROR, fs_prog_path(c->s, g), c->line[user] + 1, 0, NULL, 0,
					    "%%%s is read at line %u, before the fused node's place at line %u", fs_scan_str(c->s, x->name),
					    c->line[user] + 1, last + 1);
				return SITE_READ_BEFORE;
			}
		}
	}
	return SITE_OK;
}

static void apply_site(struct ctx *c, const struct fs_rewrite *rw, const struct fs_site *site, struct fs_site_ref ref)
{
	const struct fs_graph *g = c->g;
	uint32_t n = site->n_nodes, last = 0, n_in, n_out;
	uint32_t *in = fs_xmalloc((g->n_args + 1) * sizeof(uint32_t)), *outs = fs_xmalloc((n + 1) * sizeof(uint32_t));
	struct fs_diags why; /* a site skipped is the rewrite's result (out->why), not an error of the run */
	fs_diags_init(&why);
	for (uint32_t k = 0; k < n; k++)
		if (site->nodes[k] < g->n_nodes && c->in_site[site->nodes[k]] == 0)
			c->in_site[site->nodes[k]] = 1;
	site_io(c, site->nodes, n, in, &n_in, outs, &n_out);
	for (uint32_t k = 0; k < n; k++)
		if (site->nodes[k] < g->n_nodes && c->line[site->nodes[k]] != NONE && c->line[site->nodes[k]] > last)
			last = c->line[site->nodes[k]];
	enum site_problem problem = site_problem(c, rw, site, last, outs, n_out, &why);
	if (problem == SITE_READ_BEFORE) { /* earlier, where its inputs allow */
		last = earliest_line(c, site, last, in, n_in);
		problem = site_problem(c, rw, site, last, outs, n_out, &why);
	}
	if (problem != SITE_OK) {
		skip(c, "site at %%%s: %.299s", n ? fs_scan_str(c->s, g->nodes[site->nodes[n - 1] < g->n_nodes ? site->nodes[n - 1] : 0].name) : "?",
		     fs_diags_last(&why));
		for (uint32_t k = 0; k < n; k++)
			if (site->nodes[k] < g->n_nodes && c->in_site[site->nodes[k]] == 1)
				c->in_site[site->nodes[k]] = 0;
	}
	fs_diags_release(&why);
	if (problem != SITE_OK) {
		free(in);
		free(outs);
		return;
	}
	for (uint32_t k = 0; k < n; k++) {
		uint32_t v = site->nodes[k];
		const struct fs_node *x = &g->nodes[v];
		if (c->line[v] != last)
			add_edit(c->out, c->line[v], NULL);
		for (uint32_t u = 0; u < x->n_users; u++) { /* asserts about a value that goes away */
			uint32_t user = g->users[x->users + u];
			if (!real_user(g, user) && c->in_site[user] != 1 && c->line[user] != NONE && c->in_site[user] != 2) {
				int is_out = 0;
				for (uint32_t j = 0; j < n_out; j++)
					is_out |= outs[j] == v;
				if (!is_out) {
					c->in_site[user] = 2;
					add_edit(c->out, c->line[user], NULL);
				}
			}
		}
	}
	add_edit(c->out, last, fused_lines(c, rw, site->nodes, n, in, n_in, outs, n_out, eol(&c->L, last)));
	for (uint32_t k = 0; k < n; k++)
		c->in_site[site->nodes[k]] = 2;
	c->out->done = fs_xrealloc(c->out->done, (c->out->applied + 1) * sizeof(*c->out->done));
	c->out->done[c->out->applied++] = ref;
	free(in);
	free(outs);
}

/* ---- lines of the module ----------------------------------------------------------------- */

static uint32_t module_end_line(const struct fs_scan *s, uint32_t module)
{
	const struct fs_module *m = &s->modules[module];
	const struct fs_dumpfile *f = &s->files[m->file];
	if (module + 1 < f->first_module + f->n_modules)
		return s->modules[module + 1].line - 1;
	return UINT32_MAX;
}

/* line[node] for every node defined in the module's part of the text */
static void map_lines(struct ctx *c, uint32_t module)
{
	const struct fs_graph *g = c->g;
	const struct fs_scan *s = c->s;
	uint32_t *node_of_sym = fs_xcalloc(s->strs.n + 1, sizeof(uint32_t));
	for (uint32_t i = 0; i < g->n_nodes; i++)
		node_of_sym[g->nodes[i].name] = i + 1;
	uint32_t first = s->modules[module].line ? s->modules[module].line - 1 : 0, end = module_end_line(s, module);
	for (uint32_t i = first; i < c->L.n && i < end; i++) {
		const char *p = c->L.p[i], *e = c->L.p[i + 1];
		if (p >= e || *p != '%')
			continue;
		const char *q = p + 1;
		while (q < e && *q != ' ' && *q != ':' && *q != '\r' && *q != '\n')
			q++;
		uint32_t sym = fs_strtab_find(&s->strs, p + 1, (size_t)(q - p - 1));
		if (sym != UINT32_MAX && node_of_sym[sym] && c->line[node_of_sym[sym] - 1] == NONE)
			c->line[node_of_sym[sym] - 1] = i;
	}
	free(node_of_sym);
}

static int edit_cmp(const void *a, const void *b)
{
	const struct fs_edit *x = a, *y = b;
	return x->line < y->line ? -1 : x->line > y->line;
}

static void build_text(struct ctx *c)
{
	struct fs_rewritten *r = c->out;
	struct buf b = {0};
	bput(&b, "", 0);
	if (r->n_edits)
		qsort(r->edits, r->n_edits, sizeof(*r->edits), edit_cmp);
	uint32_t e = 0;
	for (uint32_t i = 0; i < c->L.n; i++) {
		if (e < r->n_edits && r->edits[e].line == i) {
			if (r->edits[e].text)
				bput(&b, r->edits[e].text, strlen(r->edits[e].text));
			e++;
			continue;
		}
		bput(&b, c->L.p[i], (size_t)(c->L.p[i + 1] - c->L.p[i]));
	}
	r->text = b.p;
	r->len = b.n;
}

/* ---- validation ------------------------------------------------------------------------------ */

/* Whether `name` (of another scan) names an external input of g. */
static int has_extern(const struct ctx *c, const uint8_t *extern_sym, const char *name)
{
	uint32_t sym = fs_strtab_find(&c->s->strs, name, strlen(name));
	return sym != UINT32_MAX && extern_sym[sym];
}

static int validate(const struct ctx *c, uint32_t module, const struct fs_rewrite *rw, uint32_t n_rw,
		    struct fs_diags *d)
{
	const struct fs_scan *s = c->s;
	const char *path = s->files[s->modules[module].file].path;
	struct fs_scan *a = fs_scan_new();
	fs_scan_buffer(a, path, c->out->text, c->out->len);
	int bad = 0;
	for (uint32_t i = 0; i < a->diags.n; i++) {
		const struct fs_diag *x = &a->diags.v[i];
		fs_diag_add(d, FS_ERROR, x->file, x->line, x->col, NULL, 0, "after the rewrite: %s", x->message);
		bad = 1;
	}
	uint32_t am = module - s->files[s->modules[module].file].first_module;
	if (!bad && am < a->n_modules) {
		const struct fs_graph *before = c->g, *after = a->modules[am].graph;
		uint8_t *extern_sym = fs_xcalloc(s->strs.n + 1, 1);
		for (uint32_t i = 0; i < before->n_nodes; i++)
			if (before->nodes[i].kind == FS_NODE_EXTERN)
				extern_sym[before->nodes[i].name] = 1;
		for (uint32_t i = 0; i < after->n_nodes && !bad; i++)
			if (after->nodes[i].kind == FS_NODE_EXTERN &&
			    !has_extern(c, extern_sym, fs_scan_str(a, after->nodes[i].name))) {
				fs_diag_add(d, FS_ERROR, path, after->nodes[i].line, 1, NULL, 0,
					    "after the rewrite: %%%s is used but never defined", fs_scan_str(a, after->nodes[i].name));
				bad = 1;
			}
		free(extern_sym);
		int same = before->n_outputs == after->n_outputs;
		for (uint32_t i = 0; same && i < before->n_outputs; i++)
			same = !strcmp(fs_scan_str(s, before->nodes[before->outputs[i]].name),
				       fs_scan_str(a, after->nodes[after->outputs[i]].name));
		if (!same && !bad) {
			fs_diag_add(d, FS_ERROR, path, after->output_line, 1, NULL, 0, "after the rewrite: the graph outputs changed");
			bad = 1;
		}
		for (uint32_t i = 0; i < after->n_nodes; i++)
			for (uint32_t k = 0; k < n_rw; k++)
				c->out->fused += after->nodes[i].kind == FS_NODE_CALL &&
						 !strcmp(fs_scan_str(a, a->ops[after->nodes[i].op].target), rw[k].target);
	}
	fs_scan_free(a);
	return bad ? -1 : 0;
}

struct order {
	uint32_t n_nodes;
	struct fs_site_ref ref;
};

static int order_cmp(const void *a, const void *b)
{
	const struct order *x = a, *y = b;
	if (x->n_nodes != y->n_nodes)
		return x->n_nodes > y->n_nodes ? -1 : 1;
	if (x->ref.rewrite != y->ref.rewrite)
		return x->ref.rewrite < y->ref.rewrite ? -1 : 1;
	return x->ref.site < y->ref.site ? -1 : x->ref.site > y->ref.site;
}

int fs_rewrite_apply(const struct fs_scan *s, uint32_t module, const char *text, size_t len,
		     const struct fs_rewrite *rw, uint32_t n_rw, struct fs_rewritten *out, struct fs_diags *d)
{
	memset(out, 0, sizeof(*out));
	const struct fs_graph *g = s->modules[module].graph;
	struct ctx c = {.s = s, .g = g, .line = fs_xmalloc((g->n_nodes + 1) * sizeof(uint32_t)),
			.in_site = fs_xcalloc(g->n_nodes + 1, 1), .out = out,
			.node_sym = fs_xcalloc(s->strs.n + 1, 1), .last_base = UINT32_MAX};
	memset(c.line, 0xff, (g->n_nodes + 1) * sizeof(uint32_t));
	for (uint32_t i = 0; i < g->n_nodes; i++)
		c.node_sym[g->nodes[i].name] = 1;
	fs_strtab_init(&c.made);
	split_lines(&c.L, text, len);
	map_lines(&c, module);
	/* larger sites first (where two overlap, the one holding more of the
	 * graph wins: add + RMSNorm over RMSNorm), else in the order given */
	uint32_t n_all = 0;
	for (uint32_t k = 0; k < n_rw; k++)
		n_all += rw[k].n_sites;
	struct order *ord = fs_xmalloc((n_all + 1) * sizeof(*ord));
	n_all = 0;
	for (uint32_t k = 0; k < n_rw; k++)
		for (uint32_t i = 0; i < rw[k].n_sites; i++)
			ord[n_all++] = (struct order){rw[k].sites[i].n_nodes, {k, i}};
	qsort(ord, n_all, sizeof(*ord), order_cmp);
	for (uint32_t i = 0; i < n_all; i++)
		apply_site(&c, &rw[ord[i].ref.rewrite], &rw[ord[i].ref.rewrite].sites[ord[i].ref.site], ord[i].ref);
	free(ord);
	build_text(&c);
	int rc = validate(&c, module, rw, n_rw, d);
	fs_strtab_release(&c.made);
	free(c.node_sym);
	free(c.line);
	free(c.in_site);
	free(c.L.p);
	return rc;
}

uint32_t *fs_site_file_order(const struct fs_site *site)
{
	uint32_t *nodes = fs_xmalloc((site->n_nodes + 1) * sizeof(uint32_t));
	memcpy(nodes, site->nodes, site->n_nodes * sizeof(uint32_t));
	qsort(nodes, site->n_nodes, sizeof(uint32_t), fs_cmp_u32);
	return nodes;
}

void fs_rewritten_release(struct fs_rewritten *r)
{
	free(r->text);
	for (uint32_t i = 0; i < r->n_edits; i++)
		free(r->edits[i].text);
	free(r->edits);
	free(r->done);
	for (uint32_t i = 0; i < r->skipped; i++)
		free(r->why[i]);
	free(r->why);
	memset(r, 0, sizeof(*r));
}

/* ---- unified diff ------------------------------------------------------------------------------- */

struct dline {
	char tag;              /* ' ', '-', '+' */
	const char *p;
	size_t n;              /* without the line end */
};

static void push_dline(struct dline **v, uint32_t *n, uint32_t *cap, char tag, const char *p, const char *e)
{
	while (e > p && (e[-1] == '\n' || e[-1] == '\r'))
		e--;
	FS_GROW(*v, *cap, *n + 1);
	(*v)[(*n)++] = (struct dline){tag, p, (size_t)(e - p)};
}

/* The diff as one sequence: kept lines, deleted lines, added lines. */
static uint32_t diff_lines(const char *text, size_t len, const struct fs_rewritten *r, struct dline **v)
{
	struct lines L;
	uint32_t n = 0, cap = 0, e = 0;
	split_lines(&L, text, len);
	*v = NULL;
	for (uint32_t i = 0; i < L.n; i++) {
		if (e < r->n_edits && r->edits[e].line == i) {
			push_dline(v, &n, &cap, '-', L.p[i], L.p[i + 1]);
			for (const char *t = r->edits[e].text; t && *t;) {
				const char *nl = strchr(t, '\n'), *te = nl ? nl + 1 : t + strlen(t);
				push_dline(v, &n, &cap, '+', t, te);
				t = te;
			}
			e++;
		} else
			push_dline(v, &n, &cap, ' ', L.p[i], L.p[i + 1]);
	}
	free(L.p);
	return n;
}

enum { CONTEXT = 3 };

int fs_unified_diff(const char *a_name, const char *b_name, const char *text, size_t len,
		    const struct fs_rewritten *r, FILE *out)
{
	struct dline *v;
	uint32_t n = diff_lines(text, len, r, &v), old_no = 1, new_no = 1, i = 0;
	fprintf(out, "--- %s\n+++ %s\n", a_name, b_name);
	while (i < n) {
		uint32_t first = i;
		while (first < n && v[first].tag == ' ')
			first++;
		if (first == n)
			break;
		uint32_t start = first > CONTEXT ? first - CONTEXT : 0, end = first;
		for (;;) { /* extend while the next change is within 2 x CONTEXT lines */
			while (end < n && v[end].tag != ' ')
				end++;
			uint32_t next = end;
			while (next < n && v[next].tag == ' ')
				next++;
			if (next < n && next - end <= 2 * CONTEXT)
				end = next;
			else
				break;
		}
		end = end + CONTEXT < n ? end + CONTEXT : n;
		for (; i < start; i++) /* count the kept lines before the hunk */
			old_no++, new_no++;
		uint32_t oc = 0, nc = 0;
		for (uint32_t k = start; k < end; k++) {
			oc += v[k].tag != '+';
			nc += v[k].tag != '-';
		}
		fprintf(out, "@@ -%u,%u +%u,%u @@\n", oc ? old_no : old_no - 1, oc, nc ? new_no : new_no - 1, nc);
		for (uint32_t k = start; k < end; k++) {
			fprintf(out, "%c%.*s\n", v[k].tag, (int)v[k].n, v[k].p);
			old_no += v[k].tag != '+';
			new_no += v[k].tag != '-';
		}
		i = end;
	}
	free(v);
	return ferror(out) ? -1 : 0;
}
