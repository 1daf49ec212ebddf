/*
 * ops.c: dtype and op-class names, and op interning: a printed target is
 * split into namespace / name / overload once, classified from the op table
 * (ops.def) and given a dense id. Called by the parser for every call node.
 */
#include "scan_int.h"

#include <stdio.h>
#include <string.h>

static const struct {
	const char *text;
	uint32_t size;
} dtypes[] = {
#define FS_X(e, text, size) {text, size},
	FS_DTYPES(FS_X)
#undef FS_X
};
_Static_assert(sizeof(dtypes) / sizeof(dtypes[0]) == FS_DT_COUNT, "dtype table size");

static const char *const class_names[] = {
#define FS_X(e, text) text,
	FS_OP_CLASSES(FS_X)
#undef FS_X
};
_Static_assert(sizeof(class_names) / sizeof(class_names[0]) == FS_OPC_COUNT, "class table size");

enum { C = FS_OPF_COMMUTATIVE, V = FS_OPF_INDEX_ONLY, N = FS_OPF_NOFUSE, S = FS_OPF_SOFTMAX, M = FS_OPF_SDPA_ARGS };

static const struct fs_op_row {
	const char *key;
	uint8_t cls;
	uint8_t flags;
} op_rows[] = {
#define FS_OP(key, cls, flags) {key, FS_OPC_##cls, flags},
#include "ops.def"
#undef FS_OP
};

static const struct fs_opsig {
	const char *key, *schema;
} opsigs[] = {
#define FS_OPSIG(key, schema) {key, schema},
#include "opsig.def"
#undef FS_OPSIG
};

const char *fs_dtype_name(enum fs_dtype d)
{
	return d < FS_DT_COUNT ? dtypes[d].text : "other";
}

uint32_t fs_dtype_size(enum fs_dtype d)
{
	return d < FS_DT_COUNT ? dtypes[d].size : 0;
}

enum fs_dtype fs_dtype_parse(const char *s, size_t n)
{
	for (int d = 1; d < FS_DT_COUNT - 1; d++)
		if (strlen(dtypes[d].text) == n && memcmp(dtypes[d].text, s, n) == 0)
			return (enum fs_dtype)d;
	if (n == 1 && s[0] == '?')
		return FS_DT_UNKNOWN;
	if (n == 4 && !memcmp(s, "None", 4)) /* a None element of a multi-output */
		return FS_DT_PY_NONE;
	return FS_DT_OTHER;
}

const char *fs_op_class_name(enum fs_op_class c)
{
	return c < FS_OPC_COUNT ? class_names[c] : "unknown";
}

/* Registers the table keys so classification is one interned lookup. */
void fs_ops_init(struct fs_scan *s)
{
	struct fs_scan_priv *p = s->priv;
	uint32_t n = (uint32_t)(sizeof(op_rows) / sizeof(op_rows[0]));
	for (uint32_t i = 0; i < n; i++) {
		uint32_t sym = fs_strtab_intern(&s->strs, op_rows[i].key, strlen(op_rows[i].key));
		FS_GROW(p->row_of_sym, p->cap_row_of_sym, sym + 1);
		while (p->n_row_of_sym <= sym)
			p->row_of_sym[p->n_row_of_sym++] = 0;
		p->row_of_sym[sym] = i + 1;
	}
	/* op 0: the empty op of placeholders and externs */
	FS_GROW(s->ops, s->cap_ops, 1);
	memset(&s->ops[0], 0, sizeof(s->ops[0]));
	s->ops[0].cls = FS_OPC_UNKNOWN;
	s->n_ops = 1;
}

static const struct fs_op_row *row_for(const struct fs_scan *s, const char *key, size_t n)
{
	const struct fs_scan_priv *p = s->priv;
	uint32_t sym = fs_strtab_find(&s->strs, key, n);
	if (sym == UINT32_MAX || sym >= p->n_row_of_sym || !p->row_of_sym[sym])
		return NULL;
	return &op_rows[p->row_of_sym[sym] - 1];
}

static int is_ident(const char *s, size_t n)
{
	if (!n || (s[0] >= '0' && s[0] <= '9'))
		return 0;
	for (size_t i = 0; i < n; i++) {
		char c = s[i];
		if (!(c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
		      (c >= '0' && c <= '9')))
			return 0;
	}
	return 1;
}

struct split {
	const char *ns, *name, *ov;
	size_t nns, nname, nov;
};

/* "<built-in function getitem>", "<built-in method narrow of ...>",
 * "<function f.<locals>.g at 0x...>": Python callables. */
static void split_callable(const char *t, size_t n, struct split *sp)
{
	static const char fn[] = "<built-in function ", meth[] = "<built-in method ", pyfn[] = "<function ";
	const char *p = t;
	size_t k = 0;
	sp->ns = "builtins";
	if (n > sizeof(fn) - 1 && memcmp(t, fn, sizeof(fn) - 1) == 0)
		k = sizeof(fn) - 1;
	else if (n > sizeof(meth) - 1 && memcmp(t, meth, sizeof(meth) - 1) == 0)
		k = sizeof(meth) - 1;
	else if (n > sizeof(pyfn) - 1 && memcmp(t, pyfn, sizeof(pyfn) - 1) == 0) {
		k = sizeof(pyfn) - 1;
		sp->ns = "python";
	} else
		sp->ns = "python";
	sp->nns = strlen(sp->ns);
	p = t + k;
	size_t m = 0; /* builtins end at ' ' or '>', python functions at " at 0x" */
	while (k + m < n && !(p[m] == ' ' && (sp->ns[0] == 'b' || !strncmp(p + m, " at ", 4))) &&
	       !(p[m] == '>' && (sp->ns[0] == 'b' || k + m + 1 == n)))
		m++;
	sp->name = p;
	sp->nname = m;
	sp->ov = "";
	sp->nov = 0;
}

/* "aten.add.Tensor", "aten.transpose", "_guards_fn", "layers.0.mlp". */
static void split_dotted(const char *t, size_t n, struct split *sp)
{
	const char *d1 = memchr(t, '.', n);
	sp->ns = "";
	sp->nns = 0;
	sp->name = t;
	sp->nname = n;
	sp->ov = "";
	sp->nov = 0;
	if (!d1)
		return;
	const char *rest = d1 + 1;
	size_t nrest = n - (size_t)(rest - t);
	const char *d2 = memchr(rest, '.', nrest);
	size_t nname = d2 ? (size_t)(d2 - rest) : nrest;
	size_t nov = d2 ? nrest - nname - 1 : 0;
	if (!is_ident(t, (size_t)(d1 - t)) || !is_ident(rest, nname) ||
	    (d2 && !is_ident(d2 + 1, nov)))
		return; /* a submodule path such as layers.0.mlp: opaque name */
	sp->ns = t;
	sp->nns = (size_t)(d1 - t);
	sp->name = rest;
	sp->nname = nname;
	sp->ov = d2 ? d2 + 1 : "";
	sp->nov = nov;
}

static void classify(struct fs_scan *s, struct fs_op *op, const struct split *sp)
{
	char key[256];
	int n = snprintf(key, sizeof(key), "%.*s.%.*s", (int)sp->nns, sp->ns, (int)sp->nname, sp->name);
	const struct fs_op_row *r = NULL;
	if (n > 0 && (size_t)n < sizeof(key))
		r = row_for(s, key, (size_t)n);
	op->known = r != NULL;
	if (!r) {
		n = snprintf(key, sizeof(key), "%.*s.*", (int)sp->nns, sp->ns);
		if (n > 0 && (size_t)n < sizeof(key))
			r = row_for(s, key, (size_t)n);
	}
	op->cls = r ? r->cls : FS_OPC_UNKNOWN;
	op->flags = r ? r->flags : 0;
}

/* Canonical key: flavours of one op compare equal (aten.to.dtype and
 * aten._to_copy are both "cast"; mul.Tensor and mul.Scalar are "mul"). */
static uint32_t op_key(struct fs_scan *s, const struct fs_op *op, const struct split *sp)
{
	char key[256];
	if (op->cls == FS_OPC_CAST)
		return fs_strtab_intern(&s->strs, "cast", 4);
	if ((sp->nns == 4 && !memcmp(sp->ns, "aten", 4)) || !sp->nns ||
	    (sp->nns == 8 && !memcmp(sp->ns, "builtins", 8)))
		return fs_strtab_intern(&s->strs, sp->name, sp->nname);
	int n = snprintf(key, sizeof(key), "%.*s.%.*s", (int)sp->nns, sp->ns, (int)sp->nname, sp->name);
	if (n < 0 || (size_t)n >= sizeof(key))
		return op->target;
	return fs_strtab_intern(&s->strs, key, (size_t)n);
}

/* An in-place elementwise aten op (div_, mul_, add_: an export that kept
 * the model's `scores.div_(8)`) computes what its functional form does, in
 * the one kernel eager launches either way: classified and keyed as that
 * form ("div"), so chains read the same in both export flavours. Other
 * in-place ops (copy_, fill_, index_put_) stay what they are. */
static void inplace_as_functional(struct fs_scan *s, struct fs_op *op, struct split *sp)
{
	if (op->known || sp->nns != 4 || memcmp(sp->ns, "aten", 4) || sp->nname < 2 || sp->name[sp->nname - 1] != '_' ||
	    sp->name[sp->nname - 2] == '_')
		return;
	struct split base = *sp;
	base.nname--;
	struct fs_op probe = {0};
	classify(s, &probe, &base);
	if (!probe.known || probe.cls != FS_OPC_ELEMENTWISE)
		return;
	*sp = base;
	op->cls = probe.cls, op->flags = probe.flags, op->known = 1;
}

/* max / min of two tensors (`aten.max.other`, `aten.min.other`: xIELU's
 * min(x, beta)) compute what maximum / minimum do, elementwise; the other
 * overloads reduce. Classified and keyed as those ops. */
static void binary_minmax(struct fs_scan *s, struct fs_op *op, struct split *sp)
{
	static const char *const binary[2] = {"maximum", "minimum"};
	if (sp->nns != 4 || memcmp(sp->ns, "aten", 4) || sp->nname != 3 || sp->nov != 5 || memcmp(sp->ov, "other", 5))
		return;
	int which = !memcmp(sp->name, "max", 3) ? 0 : !memcmp(sp->name, "min", 3) ? 1 : -1;
	if (which < 0)
		return;
	struct split elementwise = *sp;
	elementwise.name = binary[which];
	elementwise.nname = 7;
	struct fs_op probe = {0};
	classify(s, &probe, &elementwise);
	*sp = elementwise;
	op->cls = probe.cls, op->flags = probe.flags, op->known = probe.known;
}

/* The kernels AutoDeploy's mlir_elementwise_fusion generates are named by a
 * hash of their chain (`auto_deploy.mlir_fused_<hash>`): one family, keyed
 * `auto_deploy.mlir_fused`, so the catalog names them all. */
static void mlir_family(struct split *sp)
{
	static const char prefix[] = "mlir_fused_";
	if (sp->nns == 11 && !memcmp(sp->ns, "auto_deploy", 11) && sp->nname > sizeof(prefix) - 1 &&
	    !memcmp(sp->name, prefix, sizeof(prefix) - 1))
		sp->nname = sizeof(prefix) - 2;
}

uint32_t fs_ops_intern(struct fs_scan *s, const char *target, size_t n)
{
	uint32_t sym = fs_strtab_intern(&s->strs, target, n);
	if (sym < s->cap_op_of_target && s->op_of_target[sym])
		return s->op_of_target[sym] - 1;
	uint32_t old = s->cap_op_of_target;
	FS_GROW(s->op_of_target, s->cap_op_of_target, sym + 1);
	memset(s->op_of_target + old, 0, (s->cap_op_of_target - old) * sizeof(uint32_t));

	struct split sp;
	if (n && target[0] == '<')
		split_callable(target, n, &sp);
	else
		split_dotted(target, n, &sp);
	FS_GROW(s->ops, s->cap_ops, s->n_ops + 1);
	struct fs_op *op = &s->ops[s->n_ops];
	memset(op, 0, sizeof(*op));
	op->target = sym;
	op->ns = fs_strtab_intern(&s->strs, sp.ns, sp.nns);
	op->name = fs_strtab_intern(&s->strs, sp.name, sp.nname);
	op->overload = fs_strtab_intern(&s->strs, sp.ov, sp.nov);
	classify(s, op, &sp);
	inplace_as_functional(s, op, &sp);
	binary_minmax(s, op, &sp);
	mlir_family(&sp);
	op->key = op_key(s, op, &sp);
	s->op_of_target[sym] = ++s->n_ops;
	return s->n_ops - 1;
}

int fs_op_key_flags(const struct fs_scan *s, const char *key, size_t n)
{
	static const char *const prefixes[] = {"aten.", "builtins.", "", "."};
	char buf[256];
	for (size_t i = 0; i < sizeof(prefixes) / sizeof(prefixes[0]); i++) {
		int k = snprintf(buf, sizeof(buf), "%s%.*s", prefixes[i], (int)n, key);
		if (k <= 0 || (size_t)k >= sizeof(buf))
			continue;
		const struct fs_op_row *r = row_for(s, buf, (size_t)k);
		if (r)
			return r->flags;
	}
	return -1;
}

/* ---- argument schemas (opsig.def) ---- */

struct param {
	char type[8], name[32];
	int optional, has_default;
};

/* The next parameter of the schema text at *p ("type name[=default]"), or 0 past its end. */
static int next_param(const char **p, struct param *q)
{
	const char *s = *p, *end = strchr(s, ',');
	if (!*s)
		return 0;
	end = end ? end : s + strlen(s);
	const char *sp = memchr(s, ' ', (size_t)(end - s)), *eq = memchr(s, '=', (size_t)(end - s));
	size_t tn = sp ? (size_t)(sp - s) : 0, nn = sp ? (size_t)((eq ? eq : end) - sp - 1) : 0;
	q->optional = tn && s[tn - 1] == '?';
	tn -= (size_t)q->optional;
	snprintf(q->type, sizeof(q->type), "%.*s", (int)tn, s);
	snprintf(q->name, sizeof(q->name), "%.*s", (int)nn, sp ? sp + 1 : s);
	q->has_default = eq != NULL;
	*p = *end ? end + 2 : end;
	return 1;
}

/* Whether an argument of kind k can stand for a parameter of type q. */
static int kind_fits(const struct param *q, uint8_t k)
{
	if (k == FS_ARG_NONE)
		return q->optional;
	if (!strcmp(q->type, "Tensor"))
		return k == FS_ARG_NODE;
	if (!strcmp(q->type, "float"))
		return k == FS_ARG_FLOAT || k == FS_ARG_INT || k == FS_ARG_NODE;
	if (!strcmp(q->type, "int"))
		return k == FS_ARG_INT || k == FS_ARG_NODE;
	if (!strcmp(q->type, "bool"))
		return k == FS_ARG_BOOL;
	if (!strcmp(q->type, "list"))
		return k == FS_ARG_LIST || k == FS_ARG_TUPLE;
	return !strcmp(q->type, "str") && k == FS_ARG_STR;
}

static const char *schema_of(const struct fs_scan *s, const struct fs_node *n)
{
	const char *key = fs_scan_str(s, s->ops[n->op].key);
	for (size_t i = 0; i < sizeof(opsigs) / sizeof(opsigs[0]); i++)
		if (!strcmp(opsigs[i].key, key))
			return opsigs[i].schema;
	return NULL;
}

int fs_op_param(const struct fs_scan *s, const struct fs_node *n, const char *name)
{
	const char *p = n->kind == FS_NODE_CALL ? schema_of(s, n) : NULL;
	struct param q;
	for (int k = 0; p && next_param(&p, &q); k++)
		if (!strcmp(q.name, name))
			return k;
	return -1;
}

int fs_op_args_fit(const struct fs_scan *s, const struct fs_graph *g, const struct fs_node *n, char *why,
		   size_t len)
{
	const char *p = n->kind == FS_NODE_CALL ? schema_of(s, n) : NULL;
	struct param q;
	uint32_t k = 0, at = n->args, required = 0;
	for (; p && next_param(&p, &q); k++) {
		required = q.has_default ? required : k + 1;
		if (k >= n->n_top)
			continue;
		const struct fs_arg *a = &g->args[at];
		at += a->span;
		if (!kind_fits(&q, a->kind)) {
			snprintf(why, len, "argument %u (%s) is %s, the schema's is %s%s", k, q.name,
				 fs_scan_str(s, a->text), q.type, q.optional ? "?" : "");
			return 0;
		}
	}
	if (k && (n->n_top > k || n->n_top < required)) {
		snprintf(why, len, "%u arguments, the schema has %u (%u without defaults)", n->n_top, k, required);
		return 0;
	}
	return 1;
}
