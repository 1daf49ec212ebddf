/*
 * scan_json.c: the scan report as versioned JSON (schema fusescan.scan/1,
 * documented in docs/dump-format.md). Keys and arrays are in a fixed order so the
 * output is deterministic for golden tests and CI diffs. Built with cJSON.
 */
#include "fusescan/report.h"
#include "report_int.h"

#include <stdlib.h>
#include <string.h>

static void add_str(cJSON *o, const char *k, const char *v)
{
	cJSON_AddItemToObject(o, k, v ? cJSON_CreateString(v) : cJSON_CreateNull());
}

static void add_num(cJSON *o, const char *k, double v)
{
	cJSON_AddItemToObject(o, k, cJSON_CreateNumber(v));
}

static void add_file_ident(const struct fs_scan *s, const struct fs_dumpfile *f, cJSON *o)
{
	add_str(o, "file", f->path);
	if (f->number >= 0)
		add_num(o, "number", (double)f->number);
	else
		cJSON_AddNullToObject(o, "number");
	add_str(o, "stage", fs_scan_str(s, f->stage));
	add_str(o, "transform", fs_scan_str(s, f->transform));
}

static cJSON *run_json(const struct fs_scan *s, const struct fs_run *r)
{
	cJSON *o = cJSON_CreateObject(), *tl = cJSON_CreateArray();
	add_str(o, "dir", r->dir);
	add_str(o, "log", r->log);
	add_num(o, "dumps", r->n_files);
	const struct fs_dumpfile *prev = NULL;
	for (uint32_t i = 0; i < r->n_files; i++) {
		const struct fs_dumpfile *f = &s->files[r->first_file + i];
		cJSON *row = cJSON_CreateObject();
		add_file_ident(s, f, row);
		if (prev)
			add_num(row, "nodes_before", fs_dumpfile_nodes(s, prev));
		else
			cJSON_AddNullToObject(row, "nodes_before");
		add_num(row, "nodes_after", fs_dumpfile_nodes(s, f));
		cJSON_AddBoolToObject(row, "changed", !prev || !fs_dumpfiles_identical(s, prev, f));
		add_num(row, "errors", f->n_errors);
		cJSON_AddItemToArray(tl, row);
		prev = f;
	}
	cJSON_AddItemToObject(o, "timeline", tl);
	return o;
}

static int op_name_cmp(const void *a, const void *b)
{
	const struct fs_op_count *x = a, *y = b;
	return strcmp(x->target, y->target);
}

static cJSON *counts_json(const struct fs_graph_stats *st, cJSON **unknown,
			  const struct fs_scan *s)
{
	struct fs_op_count *v = fs_xmalloc((st->n_ops ? st->n_ops : 1) * sizeof(*v));
	memcpy(v, st->ops, st->n_ops * sizeof(*v));
	qsort(v, st->n_ops, sizeof(*v), op_name_cmp);
	cJSON *o = cJSON_CreateObject();
	*unknown = cJSON_CreateArray();
	for (uint32_t i = 0; i < st->n_ops; i++) {
		add_num(o, v[i].target, v[i].count);
		if (!s->ops[v[i].op].known)
			cJSON_AddItemToArray(*unknown, cJSON_CreateString(v[i].target));
	}
	free(v);
	return o;
}

static cJSON *graph_json(const struct fs_scan_report *r, uint32_t mi)
{
	const struct fs_scan *s = r->scan;
	const struct fs_module *m = &s->modules[mi];
	const struct fs_graph *g = m->graph;
	const struct fs_graph_stats *st = &r->stats[m->same_as];
	cJSON *o = cJSON_CreateObject();
	char hash[24];
	add_file_ident(s, &s->files[m->file], o);
	add_str(o, "module", fs_scan_str(s, m->name));
	add_num(o, "line", m->line);
	add_num(o, "nodes", g->n_calls);
	add_num(o, "placeholders", g->n_placeholders);
	add_num(o, "externals", g->n_externs);
	add_num(o, "outputs", g->n_outputs);
	snprintf(hash, sizeof(hash), "%016llx", (unsigned long long)g->hash);
	add_str(o, "hash", hash);
	add_str(o, "identical_to", m->same_as == mi ? NULL : s->files[s->modules[m->same_as].file].path);
	add_num(o, "errors", m->n_errors);
	cJSON *cls = cJSON_CreateObject();
	for (int c = 0; c < FS_OPC_COUNT; c++)
		if (st->class_counts[c])
			add_num(cls, fs_op_class_name((enum fs_op_class)c), st->class_counts[c]);
	cJSON_AddItemToObject(o, "op_classes", cls);
	cJSON *unknown;
	cJSON_AddItemToObject(o, "op_counts", counts_json(st, &unknown, s));
	cJSON_AddItemToObject(o, "unknown_ops", unknown);
	return o;
}

int fs_scan_report_json(const struct fs_scan_report *r, FILE *out)
{
	const struct fs_scan *s = r->scan;
	cJSON *root = cJSON_CreateObject(), *a;
	add_str(root, "schema", FS_SCAN_SCHEMA);
	add_str(root, "version", FS_VERSION);
	cJSON *sum = cJSON_AddObjectToObject(root, "summary");
	add_num(sum, "files", s->n_files);
	add_num(sum, "graphs", s->n_modules);
	add_num(sum, "distinct_graphs", r->n_distinct);
	add_num(sum, "bytes", (double)s->bytes_read);
	add_num(sum, "errors", s->diags.n_errors);
	a = cJSON_AddArrayToObject(root, "runs");
	for (uint32_t i = 0; i < s->n_runs; i++)
		cJSON_AddItemToArray(a, run_json(s, &s->runs[i]));
	a = cJSON_AddArrayToObject(root, "graphs");
	for (uint32_t i = 0; i < s->n_modules; i++)
		cJSON_AddItemToArray(a, graph_json(r, i));
	a = cJSON_AddArrayToObject(root, "skipped");
	for (uint32_t i = 0; i < s->n_skipped; i++) {
		cJSON *o = cJSON_CreateObject();
		add_str(o, "path", s->skipped[i].path);
		add_str(o, "reason", s->skipped[i].reason);
		cJSON_AddItemToArray(a, o);
	}
	cJSON_AddItemToObject(root, "diagnostics", fs_json_diagnostics(&s->diags));
	return fs_json_write(root, out);
}
