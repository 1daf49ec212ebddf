/*
 * semdiff.c: `fusescan diff`: what changed between two dumps, in the terms a
 * reviewer uses: node counts, the op histogram delta, nodes added and
 * removed (by name, where names persist), and chains (discovery candidates)
 * that disappeared, each paired with the op that appeared as many times.
 * On a run directory: one line per transform, with ad.log's report beside it.
 */
#include "fusescan/semdiff.h"
#include "fusescan/report.h"

#include <stdlib.h>
#include <string.h>

enum { SHOW_OPS = 12, SHOW_NAMES = 12 };

struct chain {
	uint64_t sig;
	char name[64];
	int64_t a, b;
};

/* Candidate counts of both files, by signature. */
static uint32_t chains(const struct fs_scan *s, const struct fs_catalog *cat, const struct fs_dumpfile *fa,
		       const struct fs_dumpfile *fb, struct chain **out)
{
	struct chain *v = NULL;
	uint32_t n = 0, cap = 0;
	const struct fs_dumpfile *files[2] = {fa, fb};
	for (int side = 0; side < 2; side++)
		for (uint32_t mi = files[side]->first_module; mi < files[side]->first_module + files[side]->n_modules; mi++) {
			struct fs_mine_opts o = {cat, NULL, 0};
			struct fs_mine *m = fs_mine_graph(s, s->modules[mi].graph, &o);
			for (uint32_t c = 0; c < m->n_cands; c++) {
				uint32_t k = 0;
				while (k < n && v[k].sig != m->cands[c].sig)
					k++;
				if (k == n) {
					FS_GROW(v, cap, n + 1);
					memset(&v[n], 0, sizeof(v[n]));
					v[n].sig = m->cands[c].sig;
					snprintf(v[n++].name, sizeof(v[0].name), "%s", m->cands[c].name);
				}
				*(side ? &v[k].b : &v[k].a) += m->cands[c].n_instances;
			}
			fs_mine_free(m);
		}
	*out = v;
	return n;
}

/* The op that took the place of `gone` chains: one that appeared as often,
 * else one that appeared half as often (one op per q/k pair of RoPE chains).
 * Only ops that compute can replace a chain: not views, casts, getitems,
 * SymInt arithmetic or tensor creation. 0 if none. */
static uint32_t replacing_op(const struct fs_scan *s, const uint32_t *ha, const uint32_t *hb, int64_t gone, int64_t *rise)
{
	uint32_t best = 0;
	for (uint32_t op = 1; op < s->n_ops; op++) {
		int64_t r = (int64_t)hb[op] - (int64_t)ha[op];
		uint8_t cls = s->ops[op].cls;
		int computes = cls == FS_OPC_FUSED || cls == FS_OPC_ELEMENTWISE || cls == FS_OPC_NORM ||
			       cls == FS_OPC_REDUCTION || cls == FS_OPC_GEMM || cls == FS_OPC_ATTENTION ||
			       cls == FS_OPC_COLLECTIVE;
		if ((r != gone && r * 2 != gone) || !computes || (s->ops[op].flags & FS_OPF_INDEX_ONLY))
			continue;
		if (!best || r > *rise)
			best = op, *rise = r;
	}
	return best;
}

/* A chain of the same name appeared as often as chain i went away: the same
 * fusion, its ops rewritten (add + RMSNorm once the norm is torch_rmsnorm). */
static int reformed(const struct chain *c, uint32_t nc, uint32_t i)
{
	for (uint32_t j = 0; j < nc; j++)
		if (j != i && !strcmp(c[j].name, c[i].name) && c[j].b - c[j].a == c[i].a - c[i].b)
			return 1;
	return 0;
}

/* "rmsnorm x65 replaced by auto_deploy.torch_rmsnorm.default" for each chain that went away */
/* The room an item keeps free at the end of a list: "; and 4294967295 more" */
#define MORE_ROOM 32

/* item appended to buf (k bytes used) after sep when it fits whole with
 * room left for how many more there are; else counted in *more */
static void put_item(char *buf, size_t len, size_t *k, const char *sep, const char *item, uint32_t *more)
{
	size_t need = (*k ? strlen(sep) : 0) + strlen(item);
	if (*more || *k + need + MORE_ROOM >= len) {
		(*more)++;
		return;
	}
	*k += (size_t)snprintf(buf + *k, len - *k, "%s%s", *k ? sep : "", item);
}

/* how many items did not fit, said at the end of buf */
static size_t put_more(char *buf, size_t len, size_t k, const char *sep, uint32_t more)
{
	if (more)
		k += (size_t)snprintf(buf + k, len - k, "%sand %u more", k ? sep : "", more);
	return k < len ? k : len - 1;
}

/* one chain that shrank, in words */
static void replaced_one(const struct fs_scan *s, const struct chain *c, uint32_t nc, uint32_t i, const uint32_t *ha,
			 const uint32_t *hb, char *item, size_t n)
{
	int64_t gone = c[i].a - c[i].b, rise = 0;
	uint32_t by = reformed(c, nc, i) ? 0 : replacing_op(s, ha, hb, gone, &rise);
	if (!by && reformed(c, nc, i))
		snprintf(item, n, "%s x%lld changed form (its ops were rewritten)", c[i].name, (long long)gone);
	else if (!by)
		snprintf(item, n, "%s x%lld gone (no op appeared as often)", c[i].name, (long long)gone);
	else
		snprintf(item, n, "%s x%lld replaced by %s%s", c[i].name, (long long)gone, fs_scan_str(s, s->ops[by].target),
			 rise == gone ? "" : " (one op a pair)");
}

/* The chains that shrank, whole items only, then how many more: bytes used */
static size_t replaced(const struct fs_scan *s, const struct chain *c, uint32_t nc, const uint32_t *ha,
		       const uint32_t *hb, char *buf, size_t len, const char *sep)
{
	size_t k = 0;
	uint32_t more = 0;
	buf[0] = '\0';
	for (uint32_t i = 0; i < nc; i++) {
		if (c[i].b >= c[i].a)
			continue;
		char item[512];
		replaced_one(s, c, nc, i, ha, hb, item, sizeof(item));
		put_item(buf, len, &k, sep, item, &more);
	}
	return put_more(buf, len, k, sep, more);
}

struct delta {
	uint32_t op;
	int64_t d;
};

static int delta_cmp(const void *a, const void *b)
{
	const struct delta *x = a, *y = b;
	int64_t ax = x->d < 0 ? -x->d : x->d, ay = y->d < 0 ? -y->d : y->d;
	return ax != ay ? (ax > ay ? -1 : 1) : (x->op < y->op ? -1 : x->op > y->op);
}

static uint32_t op_deltas(const struct fs_scan *s, const uint32_t *ha, const uint32_t *hb, struct delta **out)
{
	struct delta *v = fs_xmalloc((s->n_ops + 1) * sizeof(*v));
	uint32_t n = 0;
	for (uint32_t op = 1; op < s->n_ops; op++)
		if (ha[op] != hb[op])
			v[n++] = (struct delta){op, (int64_t)hb[op] - (int64_t)ha[op]};
	if (n)
		qsort(v, n, sizeof(*v), delta_cmp);
	*out = v;
	return n;
}

/* Names defined in one file's modules and not in the other's. */
static uint32_t names_only(const struct fs_scan *s, const struct fs_dumpfile *x, const struct fs_dumpfile *y,
			   uint32_t *shared, FILE *out)
{
	uint8_t *in_y = fs_xcalloc(s->strs.n + 1, 1);
	for (uint32_t mi = y->first_module; mi < y->first_module + y->n_modules; mi++) {
		const struct fs_graph *g = s->modules[mi].graph;
		for (uint32_t i = 0; i < g->n_nodes; i++)
			if (g->nodes[i].kind == FS_NODE_CALL)
				in_y[g->nodes[i].name] = 1;
	}
	uint32_t n = 0;
	*shared = 0;
	for (uint32_t mi = x->first_module; mi < x->first_module + x->n_modules; mi++) {
		const struct fs_graph *g = s->modules[mi].graph;
		for (uint32_t i = 0; i < g->n_nodes; i++) {
			if (g->nodes[i].kind != FS_NODE_CALL)
				continue;
			if (in_y[g->nodes[i].name]) {
				(*shared)++;
				continue;
			}
			if (out && n < SHOW_NAMES)
				fprintf(out, "%s%%%s", n ? ", " : "", fs_scan_str(s, g->nodes[i].name));
			n++;
		}
	}
	if (out && n > SHOW_NAMES)
		fprintf(out, ", ... (%u more)", n - SHOW_NAMES);
	free(in_y);
	return n;
}

int fs_semdiff_files(const struct fs_scan *s, const struct fs_catalog *cat, uint32_t fa, uint32_t fb, FILE *out)
{
	const struct fs_dumpfile *a = &s->files[fa], *b = &s->files[fb];
	uint32_t na = fs_dumpfile_nodes(s, a), nb = fs_dumpfile_nodes(s, b), shared;
	fprintf(out, "diff %s -> %s\n  nodes %u -> %u (%+lld)%s\n", a->path, b->path, na, nb, (long long)nb - (long long)na,
		fs_dumpfiles_identical(s, a, b) ? ", identical graphs" : "");
	uint32_t *ha = fs_dumpfile_op_counts(s, a), *hb = fs_dumpfile_op_counts(s, b);
	struct chain *c;
	uint32_t nc = chains(s, cat, a, b, &c);
	char buf[4096];
	if (replaced(s, c, nc, ha, hb, buf, sizeof(buf), "\n    "))
		fprintf(out, "  chains:\n    %s\n", buf);
	for (uint32_t i = 0; i < nc; i++)
		if (c[i].b > c[i].a && !reformed(c, nc, i))
			fprintf(out, "  new chain: %s x%lld\n", c[i].name, (long long)(c[i].b - c[i].a));
	struct delta *dv;
	uint32_t nd = op_deltas(s, ha, hb, &dv);
	if (nd)
		fprintf(out, "  ops (before -> after):\n");
	for (uint32_t i = 0; i < nd && i < SHOW_OPS; i++)
		fprintf(out, "    %-56s %5u -> %5u  (%+lld)\n", fs_scan_str(s, s->ops[dv[i].op].target), ha[dv[i].op],
			hb[dv[i].op], (long long)dv[i].d);
	if (nd > SHOW_OPS)
		fprintf(out, "    ... %u more ops changed\n", nd - SHOW_OPS);
	uint32_t removed = names_only(s, a, b, &shared, NULL);
	if (na && shared * 2 < na)
		fprintf(out, "  node names do not persist (%u of %u shared): compared by structure (ops and chains) only\n",
			shared, na);
	else {
		fprintf(out, "  removed (%u): ", removed);
		names_only(s, a, b, &shared, out);
		fprintf(out, "\n  added (%u): ", names_only(s, b, a, &shared, NULL));
		names_only(s, b, a, &shared, out);
		fputc('\n', out);
	}
	free(dv);
	free(c);
	free(ha);
	free(hb);
	return ferror(out) ? -1 : 0;
}

int fs_semdiff_run(const struct fs_scan *s, const struct fs_catalog *cat, uint32_t run, const struct fs_adlog *log,
		   FILE *out)
{
	const struct fs_run *r = &s->runs[run];
	fprintf(out, "run %s: %u dumps%s%s\n", r->dir, r->n_files, log ? ", log " : "", log ? log->path : "");
	for (uint32_t i = 0; i < r->n_files; i++) {
		const struct fs_dumpfile *f = &s->files[r->first_file + i];
		char what[600] = "first dump", rep[96] = "";
		if (log) {
			const struct fs_adlog_entry *e = fs_adlog_find(log, fs_scan_str(s, f->transform));
			if (e && e->status == FS_AD_MATCHES)
				snprintf(rep, sizeof(rep), "  [ad.log: matches=%lld]", (long long)e->matches);
			else if (e)
				snprintf(rep, sizeof(rep), "  [ad.log: %s]", fs_adlog_status_name(e->status));
		}
		if (i && fs_dumpfiles_identical(s, f - 1, f))
			snprintf(what, sizeof(what), "unchanged");
		else if (i) {
			uint32_t *ha = fs_dumpfile_op_counts(s, f - 1), *hb = fs_dumpfile_op_counts(s, f);
			struct chain *c;
			uint32_t nc = chains(s, cat, f - 1, f, &c);
			char ch[400];
			size_t k = replaced(s, c, nc, ha, hb, ch, sizeof(ch), "; ");
			struct delta *dv;
			uint32_t nd = op_deltas(s, ha, hb, &dv);
			uint32_t more = 0;
			for (uint32_t j = 0; j < nd && j < 2; j++) { /* and the two largest op changes, whole */
				char item[300];
				snprintf(item, sizeof(item), "%s%+lld %s", j ? "" : "ops ", (long long)dv[j].d,
					 fs_scan_str(s, s->ops[dv[j].op].target));
				put_item(ch, sizeof(ch), &k, j ? ", " : "; ", item, &more);
			}
			k = put_more(ch, sizeof(ch), k, "; ", more);
			free(dv);
			uint32_t a = fs_dumpfile_nodes(s, f - 1), b = fs_dumpfile_nodes(s, f);
			snprintf(what, sizeof(what), "%u -> %u nodes%s%s", a, b, k ? "; " : "", ch);
			free(c);
			free(ha);
			free(hb);
		}
		fprintf(out, "  %03lld %-16s %-36s %s%s\n", (long long)f->number, fs_scan_str(s, f->stage),
			fs_scan_str(s, f->transform), what, rep);
	}
	return ferror(out) ? -1 : 0;
}
