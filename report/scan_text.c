/*
 * scan_text.c: the human-readable scan report. Per run: a timeline line per
 * transform (nodes before -> after, unchanged graphs noted); per graph: a
 * summary (file, stage/transform, module, node counts, op classes, top ops).
 * Called by the CLI's scan command.
 */
#include "fusescan/report.h"

#include <string.h>

enum { TOP_OPS = 8 };

static void stage_transform(const struct fs_scan *s, const struct fs_dumpfile *f,
			    char *buf, size_t n)
{
	const char *st = fs_scan_str(s, f->stage), *tr = fs_scan_str(s, f->transform);
	snprintf(buf, n, "%s%s%s", st, *st ? "/" : "", tr);
}

static void timeline(const struct fs_scan *s, const struct fs_run *r, FILE *out)
{
	fprintf(out, "run %s: %u dumps%s%s\n", r->dir, r->n_files, r->log ? ", log " : "",
		r->log ? r->log : "");
	fprintf(out, "  %-5s %-58s %7s    %7s  %s\n", "#", "stage/transform", "before", "after", "change");
	const struct fs_dumpfile *prev = NULL;
	for (uint32_t i = 0; i < r->n_files; i++) {
		const struct fs_dumpfile *f = &s->files[r->first_file + i];
		char name[256], num[24];
		stage_transform(s, f, name, sizeof(name));
		snprintf(num, sizeof(num), "%03lld", (long long)f->number);
		uint32_t after = fs_dumpfile_nodes(s, f);
		fprintf(out, "  %-5s %-58s ", num, name);
		if (!prev)
			fprintf(out, "%7s -> %7u  first graph", "-", after);
		else {
			uint32_t before = fs_dumpfile_nodes(s, prev);
			fprintf(out, "%7u -> %7u  ", before, after);
			if (fs_dumpfiles_identical(s, prev, f))
				fprintf(out, "unchanged (identical graph)");
			else
				fprintf(out, after == before ? "changed (same node count)" : "changed (%+lld nodes)",
					(long long)after - (long long)before);
		}
		if (f->n_errors)
			fprintf(out, "  [%u errors]", f->n_errors);
		fputc('\n', out);
		prev = f;
	}
	fputc('\n', out);
}

static void class_line(const struct fs_graph_stats *st, FILE *out)
{
	fprintf(out, "  classes  ");
	const char *sep = "";
	for (int c = 0; c < FS_OPC_COUNT; c++) {
		if (!st->class_counts[c])
			continue;
		fprintf(out, "%s%s %u", sep, fs_op_class_name((enum fs_op_class)c), st->class_counts[c]);
		sep = ", ";
	}
	fprintf(out, "%s\n", *sep ? "" : "-");
}

static void top_line(const struct fs_graph_stats *st, FILE *out)
{
	fprintf(out, "  top ops  ");
	for (uint32_t i = 0; i < st->n_ops && i < TOP_OPS; i++)
		fprintf(out, "%s%s %u", i ? ", " : "", st->ops[i].target, st->ops[i].count);
	fprintf(out, "%s\n", st->n_ops ? "" : "-");
}

static void graph_summary(const struct fs_scan_report *r, uint32_t mi, FILE *out)
{
	const struct fs_scan *s = r->scan;
	const struct fs_module *m = &s->modules[mi];
	const struct fs_dumpfile *f = &s->files[m->file];
	const struct fs_graph *g = m->graph;
	char name[256];
	stage_transform(s, f, name, sizeof(name));
	fprintf(out, "%s  [%s]  module %s\n", f->path, name, fs_scan_str(s, m->name));
	fprintf(out, "  nodes %u  placeholders %u  externals %u  outputs %u%s\n", g->n_calls,
		g->n_placeholders, g->n_externs, g->n_outputs, m->n_errors ? "  (partial: errors)" : "");
	if (m->same_as != mi) {
		const struct fs_module *o = &s->modules[m->same_as];
		fprintf(out, "  identical to %s module %s (analysed once)\n", s->files[o->file].path,
			fs_scan_str(s, o->name));
		return;
	}
	const struct fs_graph_stats *st = &r->stats[mi];
	class_line(st, out);
	top_line(st, out);
	if (st->n_unknown)
		fprintf(out, "  note     %u calls of ops the op table does not know\n", st->n_unknown);
	if (st->n_off_schema)
		fprintf(out, "  note     %u calls unlike their op's schema in the op table (scan/opsig.def), first %s\n",
			st->n_off_schema, st->off_schema);
}

int fs_scan_report_text(const struct fs_scan_report *r, FILE *out)
{
	const struct fs_scan *s = r->scan;
	fprintf(out, "fusescan %s: %u files, %u graphs (%u distinct), %.1f MB read, %u errors\n\n",
		FS_VERSION, s->n_files, s->n_modules, r->n_distinct, (double)s->bytes_read / 1e6,
		s->diags.n_errors);
	for (uint32_t i = 0; i < s->n_runs; i++)
		timeline(s, &s->runs[i], out);
	for (uint32_t i = 0; i < s->n_modules; i++)
		graph_summary(r, i, out);
	for (uint32_t i = 0; i < s->n_skipped; i++)
		fprintf(out, "skipped %s: %s\n", s->skipped[i].path, s->skipped[i].reason);
	return ferror(out) ? -1 : 0;
}
