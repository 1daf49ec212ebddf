/*
 * dims.c: symbolic dims as C or Python text (dims.h).
 */
#include "dims.h"

#include "fusescan/escape.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct out {
	char *s;
	size_t n, at;
	int bad;
};

static void add(struct out *o, const char *text)
{
	size_t k = strlen(text);
	if (o->at + k >= o->n) {
		o->bad = 1;
		return;
	}
	memcpy(o->s + o->at, text, k + 1);
	o->at += k;
}

static int sym_plain(const char *s)
{
	return fs_py_ident(s) && strcmp(s, "max") && strcmp(s, "min") && strncmp(s, "__", 2);
}

/* name (of symbol i) taken by a symbol's own name, or by the Python name of one before i */
static int sym_taken(const struct prog *p, uint32_t i, const char *name, char (*py)[64])
{
	for (uint32_t j = 0; j < p->n_bind; j++)
		if ((j != i && !strcmp(fs_scan_str(p->s, p->bind[j].sym), name)) || (j < i && !strcmp(py[j], name)))
			return 1;
	return 0;
}

void fs_dims_py_sym(const struct prog *p, uint32_t i, char *out, size_t n)
{
	char (*py)[64] = fs_xcalloc(i + 1, sizeof(*py));
	for (uint32_t j = 0; j <= i; j++) {
		const char *name = fs_scan_str(p->s, p->bind[j].sym);
		size_t k = (size_t)snprintf(py[j], sizeof(py[j]), "%s%.50s", sym_plain(name) ? "" : "sym_", name);
		while (!sym_plain(name) && sym_taken(p, j, py[j], py) && k + 1 < sizeof(py[j]))
			py[j][k++] = '_', py[j][k] = '\0';
	}
	snprintf(out, n, "%s", py[i]);
	free(py);
}

static void expr_text(const struct prog *p, int32_t e, enum fs_lang lang, struct out *o)
{
	const struct fs_expr *x = &p->s->types.exprs[e];
	char tmp[64];
	switch (x->op) {
	case FS_EX_INT:
		snprintf(tmp, sizeof(tmp), "%lld", (long long)x->value);
		add(o, tmp);
		return;
	case FS_EX_SYM: {
		uint32_t i = 0;
		while (i < p->n_bind && p->bind[i].sym != x->sym)
			i++;
		if (i == p->n_bind) {
			o->bad = 1;
			return;
		}
		if (lang == FS_LANG_C)
			snprintf(tmp, sizeof(tmp), "S%u", i);
		else
			fs_dims_py_sym(p, i, tmp, sizeof(tmp));
		add(o, tmp);
		return;
	}
	case FS_EX_NEG:
		add(o, "(-");
		expr_text(p, x->lhs, lang, o);
		add(o, ")");
		return;
	case FS_EX_MOD: /* sizes: a >= 0, b > 0, where C's % is Python's */
	case FS_EX_MAX:
	case FS_EX_MIN:
		if (lang == FS_LANG_PY)
			add(o, x->op == FS_EX_MOD ? "((" : x->op == FS_EX_MAX ? "max((" : "min((");
		else
			add(o, x->op == FS_EX_MOD ? "((" : x->op == FS_EX_MAX ? "fs_max_ix((" : "fs_min_ix((");
		expr_text(p, x->lhs, lang, o);
		add(o, x->op == FS_EX_MOD ? ") % (" : "), (");
		expr_text(p, x->rhs, lang, o);
		add(o, "))");
		return;
	default: {
		static const char *const c_ops[] = {[FS_EX_ADD] = " + ", [FS_EX_SUB] = " - ", [FS_EX_MUL] = " * ",
						    [FS_EX_FLOORDIV] = " / "};
		add(o, "(");
		expr_text(p, x->lhs, lang, o);
		/* sizes are not negative: C's division truncates as Python's floors */
		add(o, x->op == FS_EX_FLOORDIV && lang == FS_LANG_PY ? " // " : c_ops[x->op]);
		expr_text(p, x->rhs, lang, o);
		add(o, ")");
	}
	}
}

/* expression e as C text through names: its name, added where new; -1 where it
 * is no derived dim or the table is full (then the caller writes it inline) */
static int named(const struct prog *p, int32_t e, struct fs_dim_names *names, struct out *o)
{
	if (!names || p->s->types.exprs[e].op == FS_EX_SYM)
		return -1;
	char text[512];
	struct out t = {text, sizeof(text), 0, 0};
	text[0] = '\0';
	expr_text(p, e, FS_LANG_C, &t);
	if (t.bad)
		return -1;
	uint32_t i = 0;
	while (i < names->n && strcmp(names->text[i], text))
		i++;
	if (i == names->n) {
		if (names->n == FS_DIM_NAMES)
			return -1;
		size_t len = strlen(text) + 1;
		names->text[names->n] = fs_xmalloc(len);
		memcpy(names->text[names->n++], text, len);
	}
	char name[16];
	snprintf(name, sizeof(name), "SZ%u", i);
	add(o, name);
	return 0;
}

void fs_dim_names_release(struct fs_dim_names *names)
{
	for (uint32_t i = 0; i < names->n; i++)
		free(names->text[i]);
	names->n = 0;
}

int fs_dims_text(const struct prog *p, const struct ten *t, int from, int to, enum fs_lang lang, struct fs_dim_names *names, char *out,
		 size_t n)
{
	struct out o = {out, n, 0, 0};
	int64_t k = 1;
	int any = 0;
	out[0] = '\0';
	int factors = 0, wrap;
	for (int d = from; d < to; d++) {
		factors += t->sym[d] != 0;
		k *= t->sym[d] ? 1 : t->shape[d];
	}
	wrap = factors > 1 || k != 1;
	for (int d = from; d < to; d++) {
		if (!t->sym[d])
			continue;
		const struct fs_dim *dim = &p->s->types.dims[t->sym[d] - 1];
		if (dim->expr < 0)
			return -1;
		add(&o, any ? " * " : wrap ? "(" : "");
		if (lang != FS_LANG_C || named(p, dim->expr, names, &o))
			expr_text(p, dim->expr, lang, &o);
		any = 1;
	}
	char tmp[40];
	if (!any) {
		snprintf(tmp, sizeof(tmp), "%lld", (long long)k);
		add(&o, tmp);
	} else {
		if (k != 1) {
			snprintf(tmp, sizeof(tmp), " * %lld", (long long)k);
			add(&o, tmp);
		}
		if (wrap)
			add(&o, ")");
	}
	return o.bad ? -1 : 0;
}

int fs_ten_symbolic(const struct ten *t)
{
	for (uint8_t d = 0; d < t->rank; d++)
		if (t->sym[d])
			return 1;
	return 0;
}

int fs_same_dims(const struct prog *p, const struct ten *a, const struct ten *b, int rank)
{
	for (int d = 0; d < rank; d++) {
		if (a->shape[d] != b->shape[d] || !a->sym[d] != !b->sym[d])
			return 0;
		if (a->sym[d] && p->s->types.dims[a->sym[d] - 1].text != p->s->types.dims[b->sym[d] - 1].text)
			return 0;
	}
	return 1;
}
