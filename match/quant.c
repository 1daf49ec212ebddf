/*
 * quant.c: FP8 quantization a fused kernel could take over. Every quantized
 * product's input quantization (inside an AutoDeploy FP8 linear, or the
 * (x / s).clamp(-448, 448).to(float8) chain a plain export writes before
 * torch._scaled_mm) reads a value some kernel wrote: where that kernel is a
 * norm, add + norm or gated activation, it can write the FP8 tensor itself.
 * One site per (value, scale); called by discover.c after mining.
 */
#include "fusescan/discover.h"

#include <stdlib.h>
#include <string.h>

static const char *const form_names[FS_QF_COUNT] = {"rmsnorm", "add_rmsnorm", "swiglu", "geglu", "relu2", "other"};
static const char *const flavour_names[FS_QV_COUNT] = {"ad", "plain", "finegrained"};

const char *fs_quant_form_name(enum fs_quant_form f)
{
	return f < FS_QF_COUNT ? form_names[f] : "other";
}

const char *fs_quant_flavour_name(enum fs_quant_flavour v)
{
	return v < FS_QV_COUNT ? flavour_names[v] : "ad";
}

static const char *key_of(const struct fs_scan *s, const struct fs_node *n)
{
	return n->kind == FS_NODE_CALL ? fs_scan_str(s, s->ops[n->op].key) : "";
}

/* The preorder index of top-level argument k of n, or UINT32_MAX. */
static uint32_t top_arg(const struct fs_graph *g, const struct fs_node *n, uint32_t k)
{
	uint32_t at = n->args;
	for (uint32_t i = 0; i < n->n_top; i++) {
		if (i == k)
			return at;
		at += g->args[at].span;
	}
	return UINT32_MAX;
}

/* The node argument k names (the first element of a list there), or UINT32_MAX. */
static uint32_t arg_node(const struct fs_graph *g, const struct fs_node *n, uint32_t k)
{
	uint32_t at = top_arg(g, n, k);
	if (at == UINT32_MAX)
		return UINT32_MAX;
	if ((g->args[at].kind == FS_ARG_LIST || g->args[at].kind == FS_ARG_TUPLE) && g->args[at].span > 1)
		at++;
	return g->args[at].kind == FS_ARG_NODE ? g->args[at].node : UINT32_MAX;
}

/* The value under index-only views. */
static uint32_t unview(const struct fs_scan *s, const struct fs_graph *g, uint32_t v)
{
	for (int hop = 0; hop < 16 && v != UINT32_MAX; hop++) {
		const struct fs_node *n = &g->nodes[v];
		if (n->kind != FS_NODE_CALL || !(s->ops[n->op].flags & FS_OPF_INDEX_ONLY) || !strcmp(key_of(s, n), "getitem"))
			break;
		v = arg_node(g, n, 0);
	}
	return v;
}

static int is_fp8(uint8_t dt)
{
	return dt == FS_DT_F8E4M3 || dt == FS_DT_F8E4M3UZ || dt == FS_DT_F8E5M2 || dt == FS_DT_F8E5M2UZ;
}

static int operand_is(const struct fs_scan *s, const struct fs_graph *g, const struct fs_node *n, const char *key)
{
	for (uint32_t k = 0; k < 2; k++) {
		uint32_t a = arg_node(g, n, k);
		if (a != UINT32_MAX && !strcmp(key_of(s, &g->nodes[a]), key))
			return 1;
	}
	return 0;
}

/* The catalog entry of a mined region holding node v, one naming a residual
 * add (add_*) first, or NULL. */
static const char *region_entry(const struct fs_catalog *cat, const struct fs_mine *m, uint32_t v)
{
	const char *found = NULL;
	for (uint32_t r = 0; r < m->n_regions; r++) {
		const struct fs_region *x = &m->regions[r];
		for (uint32_t i = 0; x->entry >= 0 && i < x->n_nodes; i++)
			if (x->nodes[i] == v && (!found || !strncmp(cat->e[x->entry].name, "add_", 4)))
				found = cat->e[x->entry].name;
	}
	return found;
}

/* What wrote value v: an AutoDeploy kernel by its op, an unfused gated
 * activation by its ops, a norm by the catalog entry of its mined region. */
static enum fs_quant_form form_of(const struct fs_catalog *cat, const struct fs_mine *m, uint32_t v)
{
	const struct fs_scan *s = m->s;
	const struct fs_graph *g = m->g;
	const struct fs_node *n = &g->nodes[v];
	const char *k = key_of(s, n), *e = region_entry(cat, m, v);
	if (e && !strncmp(e, "add_", 4) && strstr(e, "rmsnorm"))
		return FS_QF_ADD_RMSNORM;
	if (strstr(k, "fused_add_rms_norm"))
		return FS_QF_ADD_RMSNORM;
	if (!strcmp(k, "getitem")) {
		uint32_t src = arg_node(g, n, 0), at = top_arg(g, n, 1);
		if (src != UINT32_MAX && at != UINT32_MAX && g->args[at].kind == FS_ARG_INT && g->args[at].i == 0 &&
		    strstr(key_of(s, &g->nodes[src]), "fused_add_rms_norm"))
			return FS_QF_ADD_RMSNORM;
	}
	if (strstr(k, "rms_norm") || strstr(k, "rmsnorm"))
		return FS_QF_RMSNORM;
	if (strstr(k, "silu_and_mul") || (!strcmp(k, "mul") && operand_is(s, g, n, "silu")))
		return FS_QF_SWIGLU;
	if (strstr(k, "gelu_tanh_and_mul") || (!strcmp(k, "mul") && operand_is(s, g, n, "gelu")))
		return FS_QF_GEGLU;
	if ((!strcmp(k, "pow") || !strcmp(k, "square") || !strcmp(k, "mul")) && operand_is(s, g, n, "relu"))
		return FS_QF_RELU2;
	if (e && strstr(e, "rmsnorm") && e != strstr(e, "rmsnorm_add"))
		return FS_QF_RMSNORM;
	return FS_QF_OTHER;
}

/* The quantization reader r performs: its flavour, the value it quantizes and
 * its scale (UINT32_MAX: dynamic); 0 when r quantizes nothing. */
static int reader_of(const struct fs_scan *s, const struct fs_graph *g, uint32_t r, struct fs_quant_site *q)
{
	const struct fs_node *n = &g->nodes[r];
	if (n->kind != FS_NODE_CALL)
		return 0;
	int in = fs_op_param(s, n, "input_scale"), w = fs_op_param(s, n, "weight_scale");
	if (w >= 0 && s->ops[n->op].cls == FS_OPC_GEMM) {
		q->flavour = (uint8_t)(in >= 0 ? FS_QV_AD : FS_QV_FINEGRAINED);
		q->scale = in >= 0 ? arg_node(g, n, (uint32_t)in) : UINT32_MAX;
		q->value = unview(s, g, arg_node(g, n, 0));
		q->launches = 1;
		return q->value != UINT32_MAX;
	}
	/* plain: to(float8) <- clamp <- div(value, scale) */
	if (s->ops[n->op].cls != FS_OPC_CAST || n->n_out != 1 || !is_fp8(g->types[n->out].dtype))
		return 0;
	uint32_t c = arg_node(g, n, 0), d = c == UINT32_MAX ? c : arg_node(g, &g->nodes[c], 0);
	if (d == UINT32_MAX || strcmp(key_of(s, &g->nodes[c]), "clamp") || strcmp(key_of(s, &g->nodes[d]), "div"))
		return 0;
	q->flavour = FS_QV_PLAIN;
	q->scale = arg_node(g, &g->nodes[d], 1);
	q->value = unview(s, g, arg_node(g, &g->nodes[d], 0));
	q->launches = 3;
	return q->value != UINT32_MAX;
}

/* Bytes a site saves (docs/fp8.md): each reader's unfused quantization reads
 * the value and writes its FP8 codes (a plain chain also writes and reads its
 * div and clamp); the fused kernel writes the codes once, and the value too
 * where nodes other than quantizations read it. -1 when a size is unknown. */
static int64_t site_bytes(const struct fs_scan *s, const struct fs_graph *g, const struct fs_analysis *a,
			  const struct fs_quant_site *q, int first)
{
	const struct fs_node *v = &g->nodes[q->value];
	int64_t b = v->n_out == 1 ? fs_type_bytes(s, &g->types[v->out], a->bind, a->n_bind) : -1;
	uint32_t size = v->n_out == 1 ? fs_dtype_size((enum fs_dtype)g->types[v->out].dtype) : 0;
	if (b < 0 || !size)
		return -1;
	int64_t codes = b / size, per = q->flavour == FS_QV_PLAIN ? 5 * b : b + codes;
	if (q->flavour == FS_QV_FINEGRAINED)
		per += codes / 32; /* a float32 scale per 128 codes */
	int64_t saved = (int64_t)q->n_readers * per - (q->flavour == FS_QV_PLAIN ? 0 : codes);
	return saved + (first && !q->n_other ? b : 0);
}

static void add_site(struct fs_analysis *a, const struct fs_quant_site *q)
{
	for (uint32_t i = 0; i < a->n_quant; i++)
		if (a->quant[i].value == q->value && a->quant[i].scale == q->scale &&
		    a->quant[i].flavour == q->flavour) {
			a->quant[i].n_readers++;
			return;
		}
	if (a->n_quant == FS_QUANT_SITES)
		return;
	if (!a->quant)
		a->quant = fs_xcalloc(FS_QUANT_SITES, sizeof(*a->quant));
	a->quant[a->n_quant] = *q;
	a->quant[a->n_quant++].n_readers = 1;
}

/* Whether r is the div of a plain quantization chain: div -> clamp -> to(float8). */
static int plain_div(const struct fs_scan *s, const struct fs_graph *g, uint32_t r)
{
	const struct fs_node *n = &g->nodes[r];
	if (strcmp(key_of(s, n), "div") || n->n_users != 1)
		return 0;
	const struct fs_node *c = &g->nodes[g->users[n->users]];
	if (strcmp(key_of(s, c), "clamp") || c->n_users != 1)
		return 0;
	const struct fs_node *t = &g->nodes[g->users[c->users]];
	return s->ops[t->op].cls == FS_OPC_CAST && t->n_out == 1 && is_fp8(g->types[t->out].dtype);
}

/* Readers of v that are not quantizations (views and side effects aside). */
static uint32_t other_readers(const struct fs_scan *s, const struct fs_graph *g, uint32_t v)
{
	uint32_t n = 0;
	const struct fs_node *x = &g->nodes[v];
	for (uint32_t u = 0; u < x->n_users; u++) {
		uint32_t r = g->users[x->users + u];
		struct fs_quant_site q;
		if (g->nodes[r].flags & FS_NODE_SIDE_EFFECT || s->ops[g->nodes[r].op].flags & FS_OPF_INDEX_ONLY)
			continue;
		n += !reader_of(s, g, r, &q) && !plain_div(s, g, r);
	}
	return n + ((x->flags & FS_NODE_OUTPUT) != 0);
}

void fs_quant_trace(const struct fs_catalog *cat, struct fs_analysis *a)
{
	const struct fs_mine *m = a->mine;
	const struct fs_scan *s = m->s;
	const struct fs_graph *g = m->g;
	for (uint32_t r = 0; r < g->n_nodes; r++) {
		struct fs_quant_site q;
		memset(&q, 0, sizeof(q));
		if (!reader_of(s, g, r, &q))
			continue;
		q.reader = r;
		q.form = (uint8_t)form_of(cat, m, q.value);
		add_site(a, &q);
	}
	for (uint32_t i = 0; i < a->n_quant; i++) {
		struct fs_quant_site *q = &a->quant[i];
		int first = 1;
		for (uint32_t j = 0; j < i; j++)
			first &= a->quant[j].value != q->value;
		q->n_other = other_readers(s, g, q->value);
		q->launches *= q->n_readers;
		q->bytes = site_bytes(s, g, a, q, first);
	}
}

/* AutoDeploy's transform for a form and flavour: the catalog entry that
 * declares it (its default read there), or none where AD has none. */
static const struct {
	uint8_t form, flavour;
	const char *entry, *transform;
} ad_transforms[] = {
	{FS_QF_RMSNORM, FS_QV_AD, "rmsnorm_quant", "fuse_rmsnorm_quant_fp8"},
	{FS_QF_RMSNORM, FS_QV_PLAIN, "rmsnorm_quant", "fuse_rmsnorm_quant_fp8"},
	{FS_QF_ADD_RMSNORM, FS_QV_AD, "rmsnorm_quant", "fuse_rmsnorm_quant_fp8"},
	{FS_QF_ADD_RMSNORM, FS_QV_PLAIN, "rmsnorm_quant", "fuse_rmsnorm_quant_fp8"},
	{FS_QF_RMSNORM, FS_QV_FINEGRAINED, NULL, "fuse_rmsnorm_fp8_finegrained"},
	{FS_QF_SWIGLU, FS_QV_FINEGRAINED, "finegrained_fp8", "fuse_finegrained_fp8_swiglu"},
};

const char *fs_quant_transform(const struct fs_catalog *c, const struct fs_quant_site *q, int *tdef)
{
	*tdef = -1;
	for (size_t i = 0; i < sizeof(ad_transforms) / sizeof(ad_transforms[0]); i++) {
		if (ad_transforms[i].form != q->form || ad_transforms[i].flavour != q->flavour)
			continue;
		for (uint32_t e = 0; ad_transforms[i].entry && e < c->n; e++) {
			const struct fs_catalog_entry *x = &c->e[e];
			if (strcmp(x->name, ad_transforms[i].entry))
				continue;
			for (uint32_t t = 0; t < x->n_transforms; t++) {
				struct fs_adsetting set;
				if (!strcmp(fs_scan_str(c->scan, x->transforms[t]), ad_transforms[i].transform))
					*tdef = (int)fs_catalog_tdefault(c, x, t, &set);
			}
		}
		return ad_transforms[i].transform;
	}
	return NULL;
}
