/*
 * wants.c: why an AutoDeploy transform did not fire on a chain. A catalog
 * entry states, as data, the chain each of its transforms' patterns matches
 * (wants = fuse_add_rms_norm: add -> cast -> auto_deploy.flashinfer_rms_norm);
 * one check walks the candidate's nodes and the nodes they read, finds the
 * longest prefix of that chain present as a path of direct reads, and says
 * where the graph departs from it. Called by the discovery reports.
 */
#include "fusescan/adlog.h"
#include "fusescan/catalog.h"
#include "fusescan/graph.h"

#include <stdlib.h>
#include <string.h>

static uint32_t key_of(const struct fs_catalog *c, const struct fs_graph *g, uint32_t x)
{
	return g->nodes[x].kind == FS_NODE_CALL ? c->scan->ops[g->nodes[x].op].key : 0;
}

static int step_has(const struct fs_want *w, uint32_t step, uint32_t key)
{
	for (uint32_t a = 0; a < FS_WANT_ALTS && w->alt[step][a]; a++)
		if (w->alt[step][a] == key)
			return 1;
	return 0;
}

/* The region's nodes and the nodes they read, ascending (file order), unique. */
static uint32_t *with_producers(const struct fs_graph *g, const uint32_t *nodes, uint32_t n, uint32_t *m)
{
	uint32_t cap = 0, k = 0, *v = NULL;
	for (uint32_t i = 0; i < n; i++) {
		const struct fs_node *x = &g->nodes[nodes[i]];
		FS_GROW(v, cap, k + 1 + x->n_args);
		v[k++] = nodes[i];
		for (uint32_t a = 0; a < x->n_args; a++)
			if (g->args[x->args + a].kind == FS_ARG_NODE)
				v[k++] = g->args[x->args + a].node;
	}
	qsort(v, k, sizeof(*v), fs_cmp_u32);
	*m = 0;
	for (uint32_t i = 0; i < k; i++)
		if (!*m || v[*m - 1] != v[i])
			v[(*m)++] = v[i];
	return v;
}

static int32_t index_in(const uint32_t *v, uint32_t n, uint32_t x)
{
	const uint32_t *p = bsearch(&x, v, n, sizeof(*v), fs_cmp_u32);
	return p ? (int32_t)(p - v) : -1;
}

/* best[i]: the longest prefix of w ending at set[i], along direct reads. */
static uint32_t longest(const struct fs_catalog *c, const struct fs_want *w, const struct fs_graph *g,
			const uint32_t *set, uint32_t n, uint32_t *best, uint32_t *at)
{
	uint32_t top = 0;
	for (uint32_t i = 0; i < n; i++) {
		const struct fs_node *x = &g->nodes[set[i]];
		uint32_t key = key_of(c, g, set[i]);
		best[i] = step_has(w, 0, key);
		for (uint32_t a = 0; a < x->n_args; a++) {
			int32_t p = g->args[x->args + a].kind == FS_ARG_NODE ? index_in(set, n, g->args[x->args + a].node) : -1;
			if (p >= 0 && best[p] && best[p] < w->n_steps && step_has(w, best[p], key) && best[p] + 1 > best[i])
				best[i] = best[p] + 1;
		}
		if (best[i] > top)
			top = best[i], *at = set[i];
	}
	return top;
}

/* "A|B" of step s */
static void alts(const struct fs_catalog *c, const struct fs_want *w, uint32_t s, char *buf, size_t len)
{
	size_t k = 0;
	buf[0] = '\0';
	for (uint32_t a = 0; a < FS_WANT_ALTS && w->alt[s][a] && k < len; a++)
		k += (size_t)snprintf(buf + k, len - k, "%s%s", a ? " or " : "", fs_scan_str(c->scan, w->alt[s][a]));
}

/* The ops that read node m: "mul, add", or "nothing". */
static void readers(const struct fs_catalog *c, const struct fs_graph *g, uint32_t m, char *buf, size_t len)
{
	const struct fs_node *x = &g->nodes[m];
	size_t k = 0;
	snprintf(buf, len, "nothing");
	for (uint32_t u = 0; u < x->n_users && u < 4 && k < len; u++)
		k += (size_t)snprintf(buf + k, len - k, "%s%s", u ? ", " : "", fs_scan_str(c->scan, key_of(c, g, g->users[x->users + u])));
}

int fs_catalog_want_check(const struct fs_catalog *c, const struct fs_want *w, const struct fs_graph *g,
			  const uint32_t *nodes, uint32_t n, char *buf, size_t len)
{
	uint32_t m, at = 0, *set = with_producers(g, nodes, n, &m), *best = fs_xcalloc(m + 1, sizeof(*best));
	uint32_t k = longest(c, w, g, set, m, best, &at);
	char want[160], got[160];
	free(set);
	free(best);
	const char *t = fs_scan_str(c->scan, w->transform);
	if (k == w->n_steps) {
		snprintf(buf, len, "%s wants %s, and the chain has it: what stops it is not in the chain's ops "
			 "(dtypes, shapes, or a value read elsewhere)", t, w->text);
		return 1;
	}
	alts(c, w, k, want, sizeof(want));
	if (!k)
		snprintf(buf, len, "%s wants %s%s%s; this chain has no %s", t, w->text, w->note ? ": " : "",
			 w->note ? w->note : "", want);
	else {
		readers(c, g, at, got, sizeof(got));
		snprintf(buf, len, "%s wants %s%s%s; here %s is read by %s, not %s", t, w->text, w->note ? ": " : "",
			 w->note ? w->note : "", fs_scan_str(c->scan, key_of(c, g, at)), got, want);
	}
	return 0;
}

int fs_catalog_why_not(const struct fs_catalog *c, const struct fs_catalog_entry *e, uint32_t ti,
		       const struct fs_graph *g, const uint32_t *nodes, uint32_t n, char *buf, size_t len)
{
	for (uint32_t i = 0; i < e->n_wants; i++)
		if (e->wants[i].transform == e->transforms[ti]) {
			fs_catalog_want_check(c, &e->wants[i], g, nodes, n, buf, len);
			return 1;
		}
	return 0;
}

int fs_catalog_ad_blocked(const struct fs_catalog *c, const struct fs_adlog *log, const struct fs_catalog_entry *e,
			  uint32_t ti, const struct fs_graph *g, const uint32_t *nodes, uint32_t n, char *buf, size_t len)
{
	const char *t = fs_scan_str(c->scan, e->transforms[ti]);
	const struct fs_adlog_entry *l = log ? fs_adlog_find(log, t) : NULL;
	char pre[512] = "";
	if (l && l->status == FS_AD_MATCHES && l->matches == 0) {
		if (fs_catalog_why_not(c, e, ti, g, nodes, n, pre, sizeof(pre)))
			snprintf(buf, len, "AutoDeploy's %s ran and matched nothing here (%s:%u): %s", t, log->path, l->line, pre);
		else
			snprintf(buf, len, "AutoDeploy's %s ran and matched nothing here (%s:%u)", t, log->path, l->line);
		return 1;
	}
	struct fs_adsetting s;
	enum fs_tdefault d = fs_catalog_tdefault(c, e, ti, &s);
	int off_in_log = l && (l->status == FS_AD_DISABLED || l->status == FS_AD_SKIPPED);
	if (off_in_log) /* the log decides: off; the reason is the config's */
		d = FS_TDEF_OFF;
	const char *why = !l || off_in_log ? fs_catalog_off_reason(c, e, ti, &s, d) : NULL;
	if (!why)
		return 0;
	snprintf(buf, len, "AutoDeploy keeps %s off: %.160s", t, why);
	return 1;
}
