/*
 * discover_quant.c: the FP8 quantization fusions of an analysed graph
 * (match/quant.c), grouped by what writes the value and how the products
 * quantize it, for discover's text and JSON reports.
 */
#include "report_int.h"

#include <stdio.h>
#include <string.h>

/* One group: the sites of one form and flavour. */
struct qgroup {
	uint32_t first, sites, values, launches;
	int64_t bytes; /* -1: some site's size is unknown */
};

static struct qgroup group_of(const struct fs_analysis *a, uint32_t first)
{
	const struct fs_quant_site *f = &a->quant[first];
	struct qgroup q = {first, 0, 0, 0, 0};
	for (uint32_t i = first; i < a->n_quant; i++) {
		const struct fs_quant_site *x = &a->quant[i];
		if (x->form != f->form || x->flavour != f->flavour)
			continue;
		int seen = 0;
		for (uint32_t j = first; j < i && !seen; j++)
			seen = a->quant[j].value == x->value && a->quant[j].form == f->form &&
			       a->quant[j].flavour == f->flavour;
		q.sites++, q.values += !seen, q.launches += x->launches;
		q.bytes = q.bytes < 0 || x->bytes < 0 ? -1 : q.bytes + x->bytes;
	}
	return q;
}

/* Whether site i opens its group (the first of its form and flavour). */
static int opens_group(const struct fs_analysis *a, uint32_t i)
{
	for (uint32_t j = 0; j < i; j++)
		if (a->quant[j].form == a->quant[i].form && a->quant[j].flavour == a->quant[i].flavour)
			return 0;
	return 1;
}

static void transform_text(const struct fs_discovery *d, const struct fs_quant_site *q, char *buf, size_t n)
{
	int tdef;
	const char *t = fs_quant_transform(&d->cat, q, &tdef);
	if (q->form == FS_QF_OTHER)
		snprintf(buf, n, "no norm or gated activation writes the value (an attention output, a copy): listed, not a candidate");
	else if (!t)
		snprintf(buf, n, "AutoDeploy has no transform for it");
	else if (tdef < 0)
		snprintf(buf, n, "transform %s (its default is not in the catalog)", t);
	else
		snprintf(buf, n, "transform %s (%s by default)", t, fs_tdefault_name((enum fs_tdefault)tdef));
}

static const char *node_name(const struct fs_discovery *d, const struct fs_analysis *a, uint32_t v)
{
	return v == UINT32_MAX ? "dynamic" : fs_scan_str(d->scan, a->mine->g->nodes[v].name);
}

static void group_text(const struct fs_discovery *d, const struct fs_analysis *a, const struct qgroup *q, FILE *out)
{
	const struct fs_quant_site *f = &a->quant[q->first];
	char bytes[32], t[160];
	transform_text(d, f, t, sizeof(t));
	fprintf(out, "  %s + FP8 quant [%s]  x%u (%u value%s)  saves %s, %u launch%s; %s\n",
		fs_quant_form_name((enum fs_quant_form)f->form), fs_quant_flavour_name((enum fs_quant_flavour)f->flavour),
		q->sites, q->values, q->values == 1 ? "" : "s", q->bytes < 0 ? "?" : fs_human_bytes(q->bytes, bytes, sizeof(bytes)),
		q->launches, q->launches == 1 ? "" : "es", t);
	for (uint32_t i = q->first, shown = 0; i < a->n_quant && shown < 3; i++) {
		const struct fs_quant_site *x = &a->quant[i];
		if (x->form != f->form || x->flavour != f->flavour)
			continue;
		fprintf(out, "    %%%s -> %%%s%s (scale %s%s%s)%s\n", node_name(d, a, x->value), node_name(d, a, x->reader),
			x->n_readers > 1 ? " and others" : "", x->scale == UINT32_MAX ? "" : "%", node_name(d, a, x->scale),
			x->n_other ? "; the value has other readers: the kernel also writes it" : "",
			++shown == 3 && q->sites > 3 ? " ..." : "");
	}
}

void fs_quant_text(const struct fs_discovery *d, const struct fs_analysis *a, FILE *out)
{
	if (!a->n_quant)
		return;
	fprintf(out, "FP8 quantization to fuse (the kernel writing the value a quantized product quantizes\n"
		     "writes its FP8 codes too; one site per value and scale):\n");
	for (uint32_t i = 0; i < a->n_quant; i++) {
		if (!opens_group(a, i))
			continue;
		struct qgroup q = group_of(a, i);
		group_text(d, a, &q, out);
	}
	fputc('\n', out);
}

static cJSON *site_json(const struct fs_discovery *d, const struct fs_analysis *a, const struct fs_quant_site *x)
{
	cJSON *o = cJSON_CreateObject();
	cJSON_AddStringToObject(o, "value", node_name(d, a, x->value));
	cJSON_AddStringToObject(o, "reader", node_name(d, a, x->reader));
	cJSON_AddItemToObject(o, "scale", x->scale == UINT32_MAX ? cJSON_CreateNull() :
								 cJSON_CreateString(node_name(d, a, x->scale)));
	cJSON_AddNumberToObject(o, "readers", x->n_readers);
	cJSON_AddNumberToObject(o, "other_readers", x->n_other);
	cJSON_AddItemToObject(o, "bytes_saved", x->bytes < 0 ? cJSON_CreateNull() : cJSON_CreateNumber((double)x->bytes));
	cJSON_AddNumberToObject(o, "launches_saved", x->launches);
	return o;
}

static cJSON *group_json(const struct fs_discovery *d, const struct fs_analysis *a, const struct qgroup *q)
{
	const struct fs_quant_site *f = &a->quant[q->first];
	cJSON *o = cJSON_CreateObject(), *sites = cJSON_CreateArray();
	int tdef;
	const char *t = fs_quant_transform(&d->cat, f, &tdef);
	cJSON_AddStringToObject(o, "form", fs_quant_form_name((enum fs_quant_form)f->form));
	cJSON_AddStringToObject(o, "flavour", fs_quant_flavour_name((enum fs_quant_flavour)f->flavour));
	cJSON_AddNumberToObject(o, "values", q->values);
	cJSON_AddItemToObject(o, "bytes_saved_total", q->bytes < 0 ? cJSON_CreateNull() : cJSON_CreateNumber((double)q->bytes));
	cJSON_AddNumberToObject(o, "launches_saved_total", q->launches);
	cJSON_AddItemToObject(o, "transform", t ? cJSON_CreateString(t) : cJSON_CreateNull());
	cJSON_AddItemToObject(o, "transform_default", tdef < 0 ? cJSON_CreateNull() :
						   cJSON_CreateString(fs_tdefault_name((enum fs_tdefault)tdef)));
	for (uint32_t i = q->first; i < a->n_quant; i++)
		if (a->quant[i].form == f->form && a->quant[i].flavour == f->flavour)
			cJSON_AddItemToArray(sites, site_json(d, a, &a->quant[i]));
	cJSON_AddItemToObject(o, "sites", sites);
	return o;
}

cJSON *fs_quant_json(const struct fs_discovery *d, const struct fs_analysis *a)
{
	cJSON *arr = cJSON_CreateArray();
	for (uint32_t i = 0; i < a->n_quant; i++) {
		if (!opens_group(a, i))
			continue;
		struct qgroup q = group_of(a, i);
		cJSON_AddItemToArray(arr, group_json(d, a, &q));
	}
	return arr;
}
