/*
 * adcheck.c: AutoDeploy's log against the dumps of its run, for `fusescan
 * match`. Each primary entry (the rank that dumps) is mapped to the dump of
 * its stage and transform, in order; over that map, --log cross-checks the
 * run: every dump that changed the graph has its entry, every entry its
 * dump, and each count is what changed (the ops the catalog says its
 * transform inserts, where it says). gate.c reads --expect's transform
 * counts through the same map.
 */
#include "gate_int.h"
#include "fusescan/catalog.h"
#include "fusescan/scan.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

enum { MAX_INSERTED = 64 }; /* op keys a transform inserts, as the catalog lists them */

/* ---- entries mapped to dumps ------------------------------------------------------------ */

struct ekey {
	const char *stage, *transform;
	uint32_t at; /* the entry's index in the log */
};

static int ekey_cmp(const void *a, const void *b)
{
	const struct ekey *x = a, *y = b;
	int c = strcmp(x->transform, y->transform);
	if (!c)
		c = strcmp(x->stage, y->stage);
	return c ? c : x->at < y->at ? -1 : x->at > y->at;
}

/* The first entry of (stage, transform) at index `at` or later, or -1. */
static int32_t next_entry(const struct ekey *v, uint32_t n, const char *stage, const char *transform, uint32_t at)
{
	struct ekey k = {stage, transform, at};
	uint32_t lo = 0, hi = n;
	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;
		if (ekey_cmp(&v[mid], &k) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < n && !strcmp(v[lo].stage, stage) && !strcmp(v[lo].transform, transform) ? (int32_t)v[lo].at : -1;
}

/* In run order, each dump takes the next entry of its stage and transform
 * after the one the dump before it took (a sorted index: n log n). */
static void map_log(const struct fs_scan *s, const struct fs_run *run, struct fs_match_log *ml)
{
	const struct fs_adlog *l = ml->log;
	struct ekey *v = fs_xmalloc((l->n + 1) * sizeof(*v));
	uint32_t n = 0, at = 0;
	ml->entry_of_file = fs_xmalloc((run->n_files + 1) * sizeof(int32_t));
	ml->file_of_entry = fs_xmalloc((l->n + 1) * sizeof(int32_t));
	for (uint32_t i = 0; i < l->n; i++) {
		ml->file_of_entry[i] = -1;
		if (fs_adlog_primary(l, &l->v[i]))
			v[n++] = (struct ekey){l->v[i].stage, l->v[i].transform, i};
	}
	qsort(v, n, sizeof(*v), ekey_cmp);
	for (uint32_t k = 0; k < run->n_files; k++) {
		const struct fs_dumpfile *f = &s->files[run->first_file + k];
		int32_t e = next_entry(v, n, fs_scan_str(s, f->stage), fs_scan_str(s, f->transform), at);
		ml->entry_of_file[k] = e;
		if (e >= 0)
			ml->file_of_entry[e] = (int32_t)(run->first_file + k), at = (uint32_t)e + 1;
	}
	free(v);
	ml->state = 1;
}

const struct fs_match_log *fs_match_log_of(struct fs_match_run *r, uint32_t run, struct fs_diags *d)
{
	struct fs_match_log *ml = &r->logs[run];
	const struct fs_run *R = &r->s->runs[run];
	if (ml->state == 0 && R->log) {
		uint32_t errors = d->n_errors;
		fs_adlog_init(&ml->own);
		fs_adlog_load(&ml->own, R->log, d);
		if (d->n_errors == errors) {
			ml->log = &ml->own;
			map_log(r->s, R, ml);
		}
	}
	if (ml->state == 0)
		ml->state = -1;
	return ml->state == 1 ? ml : NULL;
}

static int32_t log_run(const struct fs_scan *s, const char *path)
{
	char a[PATH_MAX], b[PATH_MAX];
	if (realpath(path, a))
		for (uint32_t i = 0; i < s->n_runs; i++)
			if (s->runs[i].log && realpath(s->runs[i].log, b) && !strcmp(a, b))
				return (int32_t)i;
	return s->n_runs == 1 ? 0 : -1;
}

int fs_match_log_read(struct fs_match_run *r, const char *path, struct fs_diags *d)
{
	uint32_t errors = d->n_errors;
	fs_adlog_load(&r->log, path, d); /* unreadable summaries are warnings: the rest is checked */
	if (d->n_errors > errors)
		return -1;
	r->log_run = log_run(r->s, path);
	if (r->log_run < 0) {
		fs_diag_add(d, FS_ERROR, path, 0, 0, NULL, 0,
			    "--log: give the log's run directory (the log is not the ad.log of one of the %u runs)", r->s->n_runs);
		return -1;
	}
	struct fs_match_log *ml = &r->logs[r->log_run];
	ml->log = &r->log;
	map_log(r->s, &r->s->runs[r->log_run], ml);
	return 0;
}

int fs_match_is_transform(const struct fs_match_run *r, const char *name)
{
	const struct fs_scan *s = r->s;
	for (uint32_t i = 0; r->cat && i < r->cat->n; i++)
		for (uint32_t k = 0; k < r->cat->e[i].n_transforms; k++)
			if (!strcmp(fs_scan_str(r->cat->scan, r->cat->e[i].transforms[k]), name))
				return 1;
	for (uint32_t f = 0; f < s->n_files; f++)
		if (!strcmp(fs_scan_str(s, s->files[f].transform), name))
			return 1;
	for (uint32_t run = 0; run < s->n_runs; run++)
		for (uint32_t i = 0; r->logs[run].log && i < r->logs[run].log->n; i++)
			if (!strcmp(r->logs[run].log->v[i].transform, name))
				return 1;
	return 0;
}

/* ---- what a transform changed ---------------------------------------------------------- */

static void add_keys(uint32_t *keys, uint32_t *n, const uint32_t *v, uint32_t nv)
{
	for (uint32_t i = 0; i < nv && *n < MAX_INSERTED; i++)
		keys[(*n)++] = v[i];
}

/* The op keys the catalog says `transform` inserts: of every entry listing
 * it, its kernels, wrappers, reference and absorbing ops. 0 (not known)
 * when no entry lists it or one that does names no op. */
static uint32_t inserted_keys(const struct fs_catalog *c, const struct fs_scan *s, const char *transform, uint32_t *keys)
{
	uint32_t sym = c && c->scan == s ? fs_strtab_find(&s->strs, transform, strlen(transform)) : UINT32_MAX, n = 0;
	for (uint32_t i = 0; sym != UINT32_MAX && i < c->n; i++) {
		const struct fs_catalog_entry *e = &c->e[i];
		int lists = 0;
		for (uint32_t k = 0; k < e->n_transforms; k++)
			lists |= e->transforms[k] == sym;
		if (!lists)
			continue;
		if (!e->n_kernels && !e->n_wrappers && !e->n_reference && !e->n_subsumed)
			return 0;
		add_keys(keys, &n, e->kernels, e->n_kernels);
		add_keys(keys, &n, e->wrappers, e->n_wrappers);
		add_keys(keys, &n, e->reference, e->n_reference);
		add_keys(keys, &n, e->subsumed, e->n_subsumed);
	}
	return n;
}

static int has_key(const uint32_t *keys, uint32_t n, uint32_t key)
{
	for (uint32_t i = 0; i < n; i++)
		if (keys[i] == key)
			return 1;
	return 0;
}

/* Per op, how many nodes of dump b are new (no node of that name and op in
 * a: a transform that swaps a node for one of the same op leaves the op's
 * count as it was) and how many of a's were kept by name and op with their
 * arguments changed (rewired in place); with the nodes a had that b lost. */
struct delta {
	uint32_t *added, *rewired;
	uint32_t removed;
};

struct named {
	uint32_t name, node;
};

static int named_cmp(const void *x, const void *y)
{
	const struct named *a = x, *b = y;
	return a->name < b->name ? -1 : a->name > b->name ? 1 : a->node < b->node ? -1 : a->node > b->node;
}

/* The node of g named `name` with op `op`, through order (g's nodes sorted by name), or UINT32_MAX. */
static uint32_t node_named(const struct fs_graph *g, const struct named *order, uint32_t name, uint32_t op)
{
	uint32_t lo = 0, hi = g->n_nodes;
	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;
		if (order[mid].name < name)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (; lo < g->n_nodes && order[lo].name == name; lo++)
		if (g->nodes[order[lo].node].op == op && g->nodes[order[lo].node].kind == FS_NODE_CALL)
			return order[lo].node;
	return UINT32_MAX;
}

/* Whether nodes x of ga and y of gb print the same arguments. */
static int same_args(const struct fs_graph *ga, const struct fs_node *x, const struct fs_graph *gb, const struct fs_node *y)
{
	if (x->n_top != y->n_top)
		return 0;
	for (uint32_t i = 0, p = x->args, q = y->args; i < x->n_top; i++, p += ga->args[p].span, q += gb->args[q].span)
		if (ga->args[p].text != gb->args[q].text)
			return 0;
	return 1;
}

static void delta_module(const struct fs_graph *ga, const struct fs_graph *gb, struct delta *d)
{
	struct named *order = fs_xcalloc(ga->n_nodes + 1, sizeof(*order));
	uint32_t kept = 0;
	for (uint32_t i = 0; i < ga->n_nodes; i++)
		order[i] = (struct named){ga->nodes[i].name, i};
	qsort(order, ga->n_nodes, sizeof(*order), named_cmp);
	for (uint32_t i = 0; i < gb->n_nodes; i++) {
		const struct fs_node *y = &gb->nodes[i];
		if (y->kind != FS_NODE_CALL)
			continue;
		uint32_t x = node_named(ga, order, y->name, y->op);
		kept += x != UINT32_MAX;
		if (x == UINT32_MAX)
			d->added[y->op]++;
		else if (!same_args(ga, &ga->nodes[x], gb, y))
			d->rewired[y->op]++;
	}
	d->removed += ga->n_calls > kept ? ga->n_calls - kept : 0;
	free(order);
}

static struct delta delta_of(const struct fs_scan *s, const struct fs_dumpfile *a, const struct fs_dumpfile *b)
{
	struct delta d = {fs_xcalloc(s->n_ops + 1, sizeof(uint32_t)), fs_xcalloc(s->n_ops + 1, sizeof(uint32_t)), 0};
	for (uint32_t i = 0; a->n_modules == b->n_modules && i < a->n_modules; i++)
		delta_module(s->modules[a->first_module + i].graph, s->modules[b->first_module + i].graph, &d);
	return d;
}

/* What changed from dump prev to dump cur, said in buf: the ops that
 * appeared (+N target), those replaced or rewired in place, then each
 * pattern whose count moved. */
struct change {
	int rose;          /* some op appeared */
	int exact;         /* some op was added, replaced or rewired n times, or (none appeared) a pattern fell by n */
	int64_t inserted;  /* how many of the transform's own ops were added or replaced */
};

/* The ops that appeared (+N target); with nothing appeared, those replaced
 * or (with none replaced either) rewired in place. */
static size_t say_ops(const struct fs_scan *s, const uint32_t *ha, const uint32_t *hb, const struct delta *d,
		      int64_t added, char *buf, size_t len)
{
	size_t k = 0;
	for (uint32_t op = 1; op < s->n_ops && k < len; op++)
		if (hb[op] > ha[op])
			k += (size_t)snprintf(buf + k, len - k, "%s+%u %s", k ? "; " : "", hb[op] - ha[op],
					      fs_scan_str(s, s->ops[op].target));
	for (uint32_t op = 1, rose = k > 0; !rose && op < s->n_ops && k < len; op++) {
		uint32_t m = added ? d->added[op] : d->rewired[op];
		if (m)
			k += (size_t)snprintf(buf + k, len - k, "%s%u %s %s", k ? "; " : "", m,
					      fs_scan_str(s, s->ops[op].target), added ? "replaced" : "rewired");
	}
	return k < len ? k : len;
}

/* Each pattern whose count moved (a -> b), said in buf. */
static size_t say_patterns(const struct fs_match_run *r, uint32_t prev, uint32_t cur, int64_t n, struct change *c,
			   char *buf, size_t len)
{
	size_t k = 0;
	buf[0] = '\0';
	for (uint32_t gi = 0; gi < r->n_groups && k < len; gi++) {
		uint32_t a = fs_match_file_count(r, prev, gi, NULL, NULL), b = fs_match_file_count(r, cur, gi, NULL, NULL);
		if (a == b)
			continue;
		k += (size_t)snprintf(buf + k, len - k, "%s%s %u -> %u", k ? "; " : "", r->groups[gi].name, a, b);
		c->exact |= !c->rose && (int64_t)a - (int64_t)b == n;
	}
	return k;
}

static struct change what_changed(const struct fs_match_run *r, uint32_t prev, uint32_t cur, const uint32_t *keys,
				  uint32_t nk, int64_t n, char *buf, size_t len)
{
	const struct fs_scan *s = r->s;
	struct change c = {0, 0, 0};
	uint32_t *ha = fs_dumpfile_op_counts(s, &s->files[prev]), *hb = fs_dumpfile_op_counts(s, &s->files[cur]);
	struct delta d = delta_of(s, &s->files[prev], &s->files[cur]);
	int64_t added = 0;
	for (uint32_t op = 1; op < s->n_ops; op++) {
		c.rose |= hb[op] > ha[op];
		c.exact |= (int64_t)d.added[op] == n || (int64_t)d.rewired[op] == n;
		c.inserted += has_key(keys, nk, s->ops[op].key) ? d.added[op] : 0;
		added += d.added[op];
	}
	char pat[400];
	size_t np = say_patterns(r, prev, cur, n, &c, pat, sizeof(pat));
	size_t k = c.rose || added || !np ? say_ops(s, ha, hb, &d, added, buf, len) : 0;
	if (!added && d.removed && !np && k < len) /* a cleanup: each match removes a node at least */
		k += (size_t)snprintf(buf + k, len - k, "%s-%u nodes", k ? "; " : "", d.removed);
	c.exact |= !added && n > 0 && (int64_t)d.removed >= n;
	k = k < len ? k : len - 1;
	snprintf(buf + k, len - k, "%s%s", k && np ? "; " : "", pat);
	free(ha);
	free(hb);
	free(d.added);
	free(d.rewired);
	return c;
}

/* "a, b, c" of the first few keys, for a message. */
static void key_list(const struct fs_scan *s, const uint32_t *keys, uint32_t n, char *buf, size_t len)
{
	size_t k = 0;
	buf[0] = '\0';
	for (uint32_t i = 0; i < n && i < 4 && k < len; i++)
		k += (size_t)snprintf(buf + k, len - k, "%s%s", i ? ", " : "", fs_scan_str(s, keys[i]));
	if (n > 4 && k < len)
		snprintf(buf + k, len - k, ", ...");
}

/* A count of N: N of the ops the catalog says the transform inserts
 * appeared; where it does not say, one op appeared N times, or (a cleanup,
 * which only removes) a pattern's count fell by N. */
static void check_count(struct fs_match_run *r, const char *check, const struct fs_adlog_entry *e, uint32_t cur)
{
	uint32_t keys[MAX_INSERTED] = {0}, nk = inserted_keys(r->cat, r->s, e->transform, keys);
	char why[600], ops[200];
	struct change c = what_changed(r, cur - 1, cur, keys, nk, e->matches, why, sizeof(why));
	int ok = nk ? c.inserted == e->matches : c.exact;
	if (ok || !nk)
		return fs_match_gate_add(r, ok, check, "reported matches=%lld; %s%s", (long long)e->matches,
					 ok ? "" : "DISAGREES with the dumps: ", why[0] ? why : "nothing changed");
	key_list(r->s, keys, nk, ops, sizeof(ops));
	fs_match_gate_add(r, 0, check, "reported matches=%lld; DISAGREES with the dumps: %lld of the ops %s inserts (%s) appeared; %s",
			  (long long)e->matches, (long long)c.inserted, e->transform, ops, why[0] ? why : "nothing changed");
}

/* ---- the cross-check -------------------------------------------------------------------- */

static void check_entry(struct fs_match_run *r, const struct fs_adlog_entry *e, uint32_t cur, const struct fs_run *run)
{
	const struct fs_scan *s = r->s;
	char check[300];
	snprintf(check, sizeof(check), "%.200s:%u %s", r->log.path, e->line, e->transform);
	if (cur == run->first_file)
		return fs_match_gate_add(r, 1, check, "first dump of the run: nothing to compare with");
	const struct fs_dumpfile *a = &s->files[cur - 1], *b = &s->files[cur];
	if (a->n_errors || b->n_errors)
		return fs_match_gate_add(r, 0, check, "%s or the dump before it did not parse", b->base);
	int same = fs_dumpfiles_identical(s, a, b);
	if (e->status == FS_AD_RAN)
		return fs_match_gate_add(r, 0, check, "ran (%u lines) but the log ends before its summary: no count to check",
					 e->n_detail);
	if (e->status != FS_AD_MATCHES || e->matches == 0) {
		const char *st = e->status == FS_AD_DISABLED ? "disabled" : e->status == FS_AD_SKIPPED ? "skipped" : "matches=0";
		return fs_match_gate_add(r, same, check, "%s; %s %s", st, b->base,
					 same ? "is identical to the dump before it" : "CHANGED the graph although the log says nothing matched");
	}
	if (same)
		return fs_match_gate_add(r, 0, check, "reported matches=%lld but %s is identical to the dump before it",
					 (long long)e->matches, b->base);
	check_count(r, check, e, cur);
}

/* A dump without its entry: a failure where it changed the graph. */
static void unlogged_dump(struct fs_match_run *r, const struct fs_run *run, uint32_t cur)
{
	const struct fs_scan *s = r->s;
	const struct fs_dumpfile *a = &s->files[cur - (cur > run->first_file)], *b = &s->files[cur];
	if (cur == run->first_file || a->n_errors || b->n_errors || fs_dumpfiles_identical(s, a, b))
		return;
	char check[300], why[600];
	snprintf(check, sizeof(check), "%.200s: %s", r->log.path, b->base);
	what_changed(r, cur - 1, cur, NULL, 0, -1, why, sizeof(why));
	fs_match_gate_add(r, 0, check, "changed the graph (%s) but the log has no entry for stage=%s, transform=%s",
			  why[0] ? why : "its modules differ", fs_scan_str(s, b->stage), fs_scan_str(s, b->transform));
}

/* An entry without its dump: none of its stage and transform in order. */
static void loose_entry(struct fs_match_run *r, const struct fs_run *run, const struct fs_adlog_entry *e)
{
	const struct fs_scan *s = r->s;
	char check[300];
	const char *elsewhere = NULL;
	snprintf(check, sizeof(check), "%.200s:%u %s", r->log.path, e->line, e->transform);
	for (uint32_t k = run->first_file; k < run->first_file + run->n_files && !elsewhere; k++)
		if (!strcmp(fs_scan_str(s, s->files[k].transform), e->transform))
			elsewhere = s->files[k].base;
	fs_match_gate_add(r, 0, check, "stage=%s: no dump of this stage and transform in order in %s%s%s%s", e->stage, run->dir,
			  elsewhere ? " (misplaced: the dumps have this transform at " : "", elsewhere ? elsewhere : "",
			  elsewhere ? ")" : "");
}

void fs_match_check_log(struct fs_match_run *r)
{
	if (r->log_run < 0)
		return;
	const struct fs_match_log *ml = &r->logs[r->log_run];
	const struct fs_run *run = &r->s->runs[r->log_run];
	uint32_t next = 0; /* the next entry to say, in log order */
	for (uint32_t k = 0; k < run->n_files; k++) {
		int32_t e = ml->entry_of_file[k];
		if (e < 0) {
			unlogged_dump(r, run, run->first_file + k);
			continue;
		}
		for (; next < (uint32_t)e; next++)
			if (fs_adlog_primary(ml->log, &ml->log->v[next]))
				loose_entry(r, run, &ml->log->v[next]);
		check_entry(r, &ml->log->v[e], run->first_file + k, run);
		next = (uint32_t)e + 1;
	}
	for (; next < ml->log->n; next++)
		if (fs_adlog_primary(ml->log, &ml->log->v[next]))
			loose_entry(r, run, &ml->log->v[next]);
}
