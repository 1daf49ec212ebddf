/*
 * test_bindings.c: every candidate discovery finds in every fixture dump
 * binds as a program (fuse/prog.h) at the token counts that stress symbolic
 * dims: 1, 63, 64, 65, 2048, and each pad / chunk boundary of the graph (a
 * Mod or floor division by a constant: that constant and one past it). A
 * region binds, or fails for an op's own limit (no semantics, an op of
 * several outputs the region takes without its getitems, a rounding mode the
 * dump does not print), or its shapes agree only up to a token count the
 * export fixed, named (and checked: the region binds there). Any other
 * shape error is a wrong evaluation of the dims, and fails the test.
 *
 * usage: test_bindings DATA_DIR   (the export_* fixture folders in it)
 */
#include "../../fuse/prog.h"
#include "fusescan/discover.h"
#include "fusescan/mine.h"

#include <dirent.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static uint32_t n_bound, n_fixed, n_other, n_bad;

/* the constants the graph's dims divide or take the remainder by (pad and chunk lengths) */
static uint32_t boundaries(const struct fs_scan *s, int64_t *out, uint32_t cap)
{
	uint32_t n = 0;
	for (uint32_t i = 0; i < s->types.n_exprs; i++) {
		const struct fs_expr *e = &s->types.exprs[i];
		if ((e->op != FS_EX_MOD && e->op != FS_EX_FLOORDIV) || e->rhs < 0)
			continue;
		const struct fs_expr *r = &s->types.exprs[e->rhs];
		int dup = r->op != FS_EX_INT || r->value < 2 || r->value > 65536;
		for (uint32_t k = 0; k < n && !dup; k++)
			dup = out[k] == r->value;
		if (!dup && n < cap)
			out[n++] = r->value;
	}
	return n;
}

/* region `nodes` bound at `tokens`: 0 bound, 1 a size the export fixed, 2 another reason of the graph's, -1 wrong */
static int bind_at(const struct fs_scan *s, const struct fs_graph *g, const struct fs_region *r, int64_t tokens, const char *where)
{
	struct prog q = {.s = s, .g = g};
	struct fs_diags d;
	fs_diags_init(&d);
	int bad = fs_prog_build(&q, r->nodes, r->n_nodes, tokens, &d);
	fs_prog_free(&q);
	int rc = 0;
	if (bad) {
		const char *m = d.n ? d.v[0].message : "";
		const char *up = strstr(m, "agree up to ");
		if (up) {
			long long lo = atoll(up + strlen("agree up to "));
			rc = lo >= 1 && lo < tokens && bind_at(s, g, r, lo, where) == 0 ? 1 : -1;
			if (rc < 0)
				fprintf(stderr, "FAIL %s at %" PRId64 " tokens: said to bind up to %lld, and does not: %s\n", where, tokens, lo, m);
		} else if (!strstr(m, " (at ")) { /* not a shape check's (shape_error's binding): an op's own limit */
			rc = 2;
		} else {
			rc = -1;
			fprintf(stderr, "FAIL %s at %" PRId64 " tokens: %s\n", where, tokens, m);
		}
	}
	fs_diags_release(&d);
	return rc;
}

static void check_dump(const char *path)
{
	struct fs_scan *s = fs_scan_new();
	struct fs_catalog catalog, *cat = &catalog;
	fs_scan_path(s, path);
	fs_catalog_init(cat, s);
	fs_catalog_load_default(cat, NULL, &s->diags);
	int64_t counts[64] = {1, 63, 64, 65, 2048};
	uint32_t nc = 5;
	int64_t b[24];
	for (uint32_t i = 0, nb = boundaries(s, b, 24); i < nb && nc + 2 <= 64; i++)
		counts[nc++] = b[i], counts[nc++] = b[i] + 1;
	for (uint32_t m = 0; m < s->n_modules; m++) {
		const struct fs_graph *g = s->modules[m].graph;
		struct fs_binding bind[8];
		uint32_t nbind = fs_bind_default(s, g, 8192, bind, 8);
		struct fs_mine_opts o = {cat, bind, nbind};
		struct fs_mine *mine = fs_mine_graph(s, g, &o);
		for (uint32_t c = 0; mine && c < mine->n_cands; c++) {
			const struct fs_candidate *cd = &mine->cands[c];
			const struct fs_region *r = &mine->regions[cd->instances[0]];
			char where[1200];
			snprintf(where, sizeof(where), "%s: %s", path, cd->id);
			for (uint32_t t = 0; t < nc; t++) {
				int rc = bind_at(s, g, r, counts[t], where);
				n_bound += rc == 0, n_fixed += rc == 1, n_other += rc == 2, n_bad += rc < 0;
			}
		}
		fs_mine_free(mine);
	}
	fs_catalog_release(cat);
	fs_scan_free(s);
}

static int by_name(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

int main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: test_bindings DATA_DIR\n");
		return 2;
	}
	DIR *dir = opendir(argv[1]);
	if (!dir) {
		fprintf(stderr, "test_bindings: cannot open %s\n", argv[1]);
		return 2;
	}
	char *names[256];
	uint32_t n = 0;
	for (struct dirent *e; (e = readdir(dir)) && n < 256;)
		if (!strncmp(e->d_name, "export_", 7))
			names[n++] = strdup(e->d_name);
	closedir(dir);
	qsort(names, n, sizeof(*names), by_name);
	for (uint32_t i = 0; i < n; i++) {
		char path[1024];
		snprintf(path, sizeof(path), "%s/%s", argv[1], names[i]);
		check_dump(path);
		free(names[i]);
	}
	printf("bindings: %u bound, %u beyond the size the export fixed, %u refused for the graph's own reason, %u wrong\n", n_bound,
	       n_fixed, n_other, n_bad);
	printf("%u passed, %u failed\n", n_bound + n_fixed + n_other, n_bad);
	return n_bad ? 1 : 0;
}
