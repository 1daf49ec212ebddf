/*
 * matcher.c: the structural matcher (see fusescan/pattern.h). For each graph
 * node whose op matches the pattern's first output (file order), match the
 * pattern backwards through the arguments. The search keeps a stack of goals
 * (pattern node, graph node) and backtracks over every choice: commutative
 * operands in either order, optional nodes present or passed through, and
 * the graph node for each further output. A structural match must also pass
 * single use (intermediates read only inside the match) and the `where`
 * constraints, else the search backtracks. Matches of one pattern never
 * overlap: a graph node an earlier match used is not taken again. The deepest
 * failure of each attempt, over all the outputs' trees, is its cause; attempts
 * that got far, or failed for a telling reason (an extra cast, a second
 * consumer), are near misses.
 */
#define PCRE2_CODE_UNIT_WIDTH 8
#include "fusescan/pattern.h"

#include <math.h>
#include <pcre2.h>
#include <stdlib.h>
#include <string.h>

static const char *const miss_names[] = {
	"op mismatch", "extra cast or view inside the chain", "second consumer", "dtype",
	"literal", "shape", "argument count", "wiring", "computed weight",
};
_Static_assert(sizeof(miss_names) / sizeof(miss_names[0]) == FS_MISS_COUNT, "miss names");

const char *fs_miss_name(enum fs_miss_cause c)
{
	return c < FS_MISS_COUNT ? miss_names[c] : "unknown";
}

enum { NONE = UINT32_MAX };

struct st {
	const struct fs_pattern *p;
	const struct fs_scan *s;
	const struct fs_graph *g;
	uint32_t *bind;        /* per pattern node */
	uint8_t *absent;       /* per pattern node: optional passed through */
	double *var;
	uint8_t *var_set;
	uint32_t *trail, n_trail;        /* bound pattern nodes, for rollback */
	uint32_t *vtrail, n_vtrail;      /* set variables */
	int8_t *opcache;       /* [pattern node * n_ops + op]: -1 unknown */
	uint8_t *claimed;      /* per graph node: taken by an earlier match */
	pcre2_match_data *md;
	struct fs_miss best;   /* deepest failure of the current attempt */
	uint32_t *best_bind;
	struct goal {
		uint32_t pn, gn;
		const struct fs_parg *pa; /* a literal check: pattern argument ... */
		const struct fs_arg *ga;  /* ... against this graph argument */
	} *goals;              /* what is left to match, top last */
	uint32_t n_goals, cap_goals;
	uint32_t next_out;     /* next pattern output to place */
	uint32_t base;         /* trail length when the current further output's
				  candidate was tried: bindings below it are earlier trees' */
	int in_final;          /* running the whole-match checks */
	int best_final;        /* the best failure came from them */
	uint32_t *seen, stamp; /* per graph node: last search that reached it */
	uint32_t *queue;       /* that search's frontier (one slot per graph node) */
	struct outcand {       /* per further output: its candidates, kept for the next site */
		uint32_t *v, n;        /* ascending (file order); one slot per graph node */
		uint32_t from;         /* v[..from) are claimed by matches kept */
		uint32_t pin, pin_gn;  /* found from pattern node pin bound to pin_gn (NONE: every node) */
		int set;
		struct { uint32_t gn, size; } *known; /* per pattern node as a pin: its set's size
						       from that graph node, or more than `size - 1` */
	} *oc;
};

/* ---- bindings ------------------------------------------------------------------ */

static void bind(struct st *S, uint32_t pn, uint32_t gn, int absent)
{
	S->bind[pn] = gn;
	S->absent[pn] = (uint8_t)absent;
	S->trail[S->n_trail++] = pn;
}

static void rollback(struct st *S, uint32_t mark, uint32_t vmark)
{
	while (S->n_trail > mark)
		S->bind[S->trail[--S->n_trail]] = NONE;
	while (S->n_vtrail > vmark)
		S->var_set[S->vtrail[--S->n_vtrail]] = 0;
}

/* How far an attempt got: op nodes matched (inputs bind to anything). */
static uint32_t depth(const struct st *S)
{
	uint32_t d = 0;
	for (uint32_t i = 0; i < S->n_trail; i++)
		d += S->p->nodes[S->trail[i]].kind != FS_PN_INPUT && !S->absent[S->trail[i]];
	return d;
}

/* How much a cause says: an op mismatch or a wiring conflict often comes from
 * a wrong choice earlier (the other operand order bound a free input). */
static int cause_rank(uint8_t cause)
{
	return cause == FS_MISS_OP ? 0 : cause == FS_MISS_WIRING ? 1 : 2;
}

/* Keeps the deepest failure; at equal depth only a more telling cause
 * replaces it, so the natural operand order wins ties. */
static void fail(struct st *S, uint8_t cause, uint32_t pn, uint32_t gn, uint32_t other)
{
	uint32_t d = depth(S);
	if (d < S->best.depth || (d == S->best.depth && d && cause_rank(cause) <= cause_rank(S->best.cause)))
		return;
	S->best.depth = d;
	S->best_final = S->in_final;
	S->best.cause = cause;
	S->best.pnode = pn;
	S->best.gnode = gn;
	S->best.other = other;
	memcpy(S->best_bind, S->bind, S->p->n_nodes * sizeof(uint32_t));
}

/* ---- node tests -------------------------------------------------------------------- */

static int op_ok(struct st *S, uint32_t pn, uint32_t op)
{
	int8_t *c = &S->opcache[(size_t)pn * S->s->n_ops + op];
	if (*c < 0) {
		const char *t = fs_scan_str(S->s, S->s->ops[op].target);
		/* 0 = matched with more groups than the ovector holds: still a match */
		*c = pcre2_match(S->p->nodes[pn].code, (PCRE2_SPTR)t, strlen(t), 0, 0, S->md, NULL) >= 0;
	}
	return *c;
}

/* dtype / rank of a graph value against a pattern node's flags: 0 ok, else a cause */
static int type_cause(const struct st *S, const struct fs_pnode *p, uint32_t gn)
{
	const struct fs_type *t = &S->g->types[S->g->nodes[gn].out];
	if (p->dtypes && !(p->dtypes & (1ull << t->dtype)))
		return FS_MISS_DTYPE;
	if (p->rank >= 0) {
		const struct fs_shape *sh = &S->s->types.shapes[t->shape];
		if (sh->kind != FS_SHAPE_DIMS || sh->rank != (uint32_t)p->rank)
			return FS_MISS_SHAPE;
	}
	return 0;
}

/* A graph op node taken by another pattern node of this match or an earlier match. */
static int taken(const struct st *S, uint32_t gn)
{
	if (S->claimed[gn])
		return 1;
	for (uint32_t i = 0; i < S->n_trail; i++) {
		uint32_t pn = S->trail[i];
		if (S->bind[pn] == gn && S->p->nodes[pn].kind != FS_PN_INPUT && !S->absent[pn])
			return 1;
	}
	return 0;
}

/* Pattern node pn was bound by an earlier output's tree, not by the candidate
 * being tried for a further output. */
static int bound_before(const struct st *S, uint32_t pn)
{
	for (uint32_t i = 0; i < S->base; i++)
		if (S->trail[i] == pn)
			return 1;
	return 0;
}

static int solve(struct st *S);
static int finish(struct st *S);

static void push_goal(struct st *S, uint32_t pn, uint32_t gn)
{
	FS_GROW(S->goals, S->cap_goals, S->n_goals + 1);
	S->goals[S->n_goals++] = (struct goal){pn, gn, NULL, NULL};
}

/* A literal argument is checked when its turn comes, after the arguments
 * before it: a near miss then shows how far the match got. */
static void push_check(struct st *S, uint32_t pn, uint32_t gn, const struct fs_parg *pa, const struct fs_arg *ga)
{
	FS_GROW(S->goals, S->cap_goals, S->n_goals + 1);
	S->goals[S->n_goals++] = (struct goal){pn, gn, pa, ga};
}

/* ---- arguments ---------------------------------------------------------------------- */

static int num_of(const struct fs_arg *a, double *v)
{
	if (a->kind == FS_ARG_INT || a->kind == FS_ARG_BOOL)
		return *v = (double)a->i, 1;
	if (a->kind == FS_ARG_FLOAT)
		return *v = a->f, 1;
	return 0;
}

static int same_num(double a, double b)
{
	return a == b || fabs(a - b) <= 1e-12 * fmax(fabs(a), fabs(b));
}

static void push_arg(struct st *S, uint32_t pn, uint32_t gn, const struct fs_parg *pa, const struct fs_arg *ga);

/* children of lists: pattern and graph preorder runs, pushed last-first */
static int push_list(struct st *S, uint32_t pn, uint32_t gn, const struct fs_parg *pa, const struct fs_arg *ga)
{
	const struct fs_parg *pk[64];
	const struct fs_arg *gk[64];
	uint32_t np = 0, ng = 0;
	int rest = 0;
	for (const struct fs_parg *pc = pa + 1; pc < pa + pa->span && np < 64; pc += pc->span) {
		if (pc->kind == FS_PA_REST) {
			rest = 1;
			break;
		}
		pk[np++] = pc;
	}
	for (const struct fs_arg *gc = ga + 1; gc < ga + ga->span && ng < 64; gc += gc->span)
		gk[ng++] = gc;
	if (np > ng || (!rest && np < ng))
		return fail(S, FS_MISS_LITERAL, pn, gn, NONE), 0;
	for (uint32_t k = np; k-- > 0;)
		push_arg(S, pn, gn, pk[k], gk[k]);
	return 1;
}

/* A check goal: a literal, a list, or a captured $variable. */
static int check_arg(struct st *S, uint32_t pn, uint32_t gn, const struct fs_parg *pa, const struct fs_arg *ga)
{
	double v;
	switch (pa->kind) {
	case FS_PA_INT:
	case FS_PA_FLOAT:
		if (num_of(ga, &v) && ga->kind != FS_ARG_BOOL &&
		    same_num(v, pa->kind == FS_PA_INT ? (double)pa->i : pa->f))
			return 1;
		break;
	case FS_PA_BOOL:
		if (ga->kind == FS_ARG_BOOL && ga->i == pa->i)
			return 1;
		break;
	case FS_PA_NONE:
		if (ga->kind == FS_ARG_NONE)
			return 1;
		break;
	case FS_PA_DTYPE:
		if (ga->kind == FS_ARG_DTYPE && ga->type.dtype == pa->i)
			return 1;
		break;
	case FS_PA_STR:
		if (ga->kind == FS_ARG_STR && !strcmp(fs_scan_str(S->s, ga->text), pa->text))
			return 1;
		break;
	case FS_PA_LIST:
		if (ga->kind == FS_ARG_LIST || ga->kind == FS_ARG_TUPLE)
			return push_list(S, pn, gn, pa, ga);
		break;
	case FS_PA_VAR:
		if (!num_of(ga, &v))
			break;
		if (S->var_set[pa->ref])
			return same_num(S->var[pa->ref], v) ? 1 : (fail(S, FS_MISS_LITERAL, pn, gn, NONE), 0);
		S->var[pa->ref] = v;
		S->var_set[pa->ref] = 1;
		S->vtrail[S->n_vtrail++] = pa->ref;
		return 1;
	default:
		break;
	}
	fail(S, FS_MISS_LITERAL, pn, gn, NONE);
	return 0;
}

/* A node argument becomes a node goal, anything else a check goal. */
static void push_arg(struct st *S, uint32_t pn, uint32_t gn, const struct fs_parg *pa, const struct fs_arg *ga)
{
	if (pa->kind == FS_PA_ANY)
		return;
	if (pa->kind == FS_PA_REF && ga->kind == FS_ARG_NODE)
		push_goal(S, pa->ref, ga->node);
	else
		push_check(S, pn, gn, pa, ga);
}

/* The arguments of an op node as goals (operands 0 and 1 swapped when `swap`),
 * pushed last-first so the first argument is matched first. */
static int push_args(struct st *S, uint32_t pn, uint32_t gn, int swap)
{
	const struct fs_pnode *p = &S->p->nodes[pn];
	const struct fs_node *x = &S->g->nodes[gn];
	const struct fs_arg *top[64];
	const struct fs_parg *ptop[64];
	uint32_t nt = 0, np = 0;
	for (uint32_t a = x->args; a < x->args + x->n_args && nt < 64; a += S->g->args[a].span)
		top[nt++] = &S->g->args[a];
	if (swap && nt >= 2) {
		const struct fs_arg *t = top[0];
		top[0] = top[1];
		top[1] = t;
	}
	int rest = 0;
	for (const struct fs_parg *pa = p->args; pa < p->args + p->n_args && np < 64; pa += pa->span) {
		if (pa->kind == FS_PA_REST) {
			rest = 1;
			break;
		}
		ptop[np++] = pa;
	}
	if (np > nt || (!rest && np < nt))
		return fail(S, FS_MISS_ARITY, pn, gn, NONE), 0;
	for (uint32_t k = np; k-- > 0;)
		push_arg(S, pn, gn, ptop[k], top[k]);
	return 1;
}

/* ---- nodes ---------------------------------------------------------------------------- */

/* Why an op node did not match gn: an extra cast / view whose input would have. */
static void op_mismatch(struct st *S, uint32_t pn, uint32_t gn)
{
	const struct fs_node *x = &S->g->nodes[gn];
	uint8_t cls = x->kind == FS_NODE_CALL ? S->s->ops[x->op].cls : FS_OPC_UNKNOWN;
	if ((cls == FS_OPC_CAST || cls == FS_OPC_VIEW) && x->n_args && S->g->args[x->args].kind == FS_ARG_NODE) {
		uint32_t in = S->g->args[x->args].node;
		const struct fs_node *y = &S->g->nodes[in];
		if (y->kind == FS_NODE_CALL && op_ok(S, pn, y->op))
			return fail(S, FS_MISS_EXTRA, pn, gn, in);
	}
	fail(S, FS_MISS_OP, pn, gn, NONE);
}

/* An op node at gn: each operand order in turn, the rest of the search after it. */
static int solve_op(struct st *S, uint32_t pn, uint32_t gn)
{
	const struct fs_pnode *p = &S->p->nodes[pn];
	const struct fs_node *x = &S->g->nodes[gn];
	if (x->kind != FS_NODE_CALL || !op_ok(S, pn, x->op))
		return op_mismatch(S, pn, gn), 0;
	if (taken(S, gn))
		return fail(S, FS_MISS_WIRING, pn, gn, NONE), 0;
	int cause = type_cause(S, p, gn);
	if (cause)
		return fail(S, (uint8_t)cause, pn, gn, NONE), 0;
	uint32_t mark = S->n_trail, vmark = S->n_vtrail, gmark = S->n_goals;
	bind(S, pn, gn, 0);
	int orders = (p->flags & FS_PF_COMMUTATIVE) && x->n_top >= 2 ? 2 : 1;
	for (int swap = 0; swap < orders; swap++) {
		if (push_args(S, pn, gn, swap) && solve(S))
			return 1;
		S->n_goals = gmark;
		rollback(S, mark + 1, vmark);
	}
	rollback(S, mark, vmark);
	return 0;
}

/* A goal: bind pattern node pn to graph node gn, then solve what is left. */
static int step(struct st *S, uint32_t pn, uint32_t gn)
{
	const struct fs_pnode *p = &S->p->nodes[pn];
	if (S->bind[pn] != NONE) {
		if (S->bind[pn] == gn)
			return solve(S);
		/* a cast / view in front of the value this node stands for */
		const struct fs_node *x = &S->g->nodes[gn];
		uint8_t cls = x->kind == FS_NODE_CALL ? S->s->ops[x->op].cls : FS_OPC_UNKNOWN;
		int extra = (cls == FS_OPC_CAST || cls == FS_OPC_VIEW) && x->n_args &&
			    S->g->args[x->args].kind == FS_ARG_NODE && S->g->args[x->args].node == S->bind[pn];
		/* a further output's candidate that reads other values than the
		 * earlier trees is another site's output, not a miss of this one */
		if (!extra && bound_before(S, pn))
			return 0;
		return fail(S, extra ? FS_MISS_EXTRA : FS_MISS_WIRING, pn, gn, S->bind[pn]), 0;
	}
	if (p->kind == FS_PN_INPUT) {
		int cause = type_cause(S, p, gn);
		if (cause)
			return fail(S, (uint8_t)cause, pn, gn, NONE), 0;
		uint32_t mark = S->n_trail, vmark = S->n_vtrail;
		bind(S, pn, gn, 0);
		if (solve(S))
			return 1;
		rollback(S, mark, vmark);
		return 0;
	}
	if (p->kind == FS_PN_OP)
		return solve_op(S, pn, gn);
	/* optional: present, else passed through to its first argument */
	const struct fs_node *x = &S->g->nodes[gn];
	if (x->kind == FS_NODE_CALL && op_ok(S, pn, x->op) && solve_op(S, pn, gn))
		return 1;
	uint32_t mark = S->n_trail, vmark = S->n_vtrail, gmark = S->n_goals;
	bind(S, pn, gn, 1);
	push_goal(S, p->args[0].ref, gn);
	if (solve(S))
		return 1;
	S->n_goals = gmark;
	rollback(S, mark, vmark);
	return 0;
}

/* ---- whole-match checks --------------------------------------------------------------- */

static int is_bound_op(const struct st *S, uint32_t gn)
{
	for (uint32_t pn = 0; pn < S->p->n_nodes; pn++)
		if (S->bind[pn] == gn && S->p->nodes[pn].kind != FS_PN_INPUT && !S->absent[pn])
			return 1;
	return 0;
}

/* Intermediates (bound op nodes that are not outputs or `shared`) are read
 * only by nodes of the match; side-effect-only users do not count. */
static int single_use(struct st *S)
{
	for (uint32_t pn = 0; pn < S->p->n_nodes; pn++) {
		const struct fs_pnode *p = &S->p->nodes[pn];
		uint32_t gn = S->bind[pn];
		if (p->kind == FS_PN_INPUT || S->absent[pn] || gn == NONE || (p->flags & (FS_PF_OUTPUT | FS_PF_SHARED)))
			continue;
		const struct fs_node *x = &S->g->nodes[gn];
		if (x->flags & FS_NODE_OUTPUT)
			return fail(S, FS_MISS_CONSUMER, pn, gn, gn), 0;
		for (uint32_t u = 0; u < x->n_users; u++) {
			uint32_t user = S->g->users[x->users + u];
			if (!(S->g->nodes[user].flags & FS_NODE_SIDE_EFFECT) && !is_bound_op(S, user))
				return fail(S, FS_MISS_CONSUMER, pn, gn, user), 0;
		}
	}
	return 1;
}

/* `weight` inputs are bound to values the graph does not compute. Checked on
 * the whole match, so a near miss shows the full chain around the input. */
static int weights(struct st *S)
{
	for (uint32_t pn = 0; pn < S->p->n_nodes; pn++) {
		uint32_t gn = S->bind[pn];
		if ((S->p->nodes[pn].flags & FS_PF_WEIGHT) && gn != NONE && S->g->nodes[gn].kind == FS_NODE_CALL)
			return fail(S, FS_MISS_COMPUTED, pn, gn, NONE), 0;
	}
	return 1;
}

/* dim `i` (negative: from the end) of a bound value; 0 if unknown */
static int dim_of(const struct st *S, uint32_t pn, int32_t i, const struct fs_dim **d)
{
	uint32_t gn = S->bind[pn];
	if (gn == NONE)
		return 0;
	const struct fs_shape *sh = &S->s->types.shapes[S->g->types[S->g->nodes[gn].out].shape];
	if (sh->kind != FS_SHAPE_DIMS)
		return 0;
	int32_t k = i < 0 ? (int32_t)sh->rank + i : i;
	if (k < 0 || k >= (int32_t)sh->rank)
		return 0;
	*d = &S->s->types.dims[sh->dims + (uint32_t)k];
	return 1;
}

static int where_dim(const struct st *S, const struct fs_where *w)
{
	const struct fs_dim *a, *b;
	if (!dim_of(S, w->a, w->ai, &a))
		return 0;
	if (w->b == NONE)
		return a->expr == FS_DIM_CONST && a->value == w->c;
	if (!dim_of(S, w->b, w->bi, &b))
		return 0;
	if (a->expr == FS_DIM_CONST && b->expr == FS_DIM_CONST)
		return a->value == w->k * b->value + w->c;
	return w->k == 1 && w->c == 0 && a->text == b->text; /* symbolic: the same expression */
}

static int wheres(struct st *S)
{
	for (uint32_t i = 0; i < S->p->n_where; i++) {
		const struct fs_where *w = &S->p->where[i];
		if (w->kind == FS_WH_RANGE) {
			if (!S->var_set[w->var] || S->var[w->var] < w->lo || S->var[w->var] > w->hi)
				return fail(S, FS_MISS_LITERAL, S->p->outputs[0], S->bind[S->p->outputs[0]], i), 0;
		} else if (w->kind == FS_WH_RANK) {
			uint32_t gn = S->bind[w->a];
			const struct fs_shape *sh = gn == NONE ? NULL : &S->s->types.shapes[S->g->types[S->g->nodes[gn].out].shape];
			if (!sh || sh->kind != FS_SHAPE_DIMS || sh->rank != (uint32_t)w->c)
				return fail(S, FS_MISS_SHAPE, w->a, gn, i), 0;
		} else if (w->kind == FS_WH_DISTINCT) {
			if (S->bind[w->a] == S->bind[w->b])
				return fail(S, FS_MISS_WIRING, w->b, S->bind[w->b], i), 0;
		} else if (!where_dim(S, w))
			return fail(S, FS_MISS_SHAPE, w->a, S->bind[w->a], i), 0;
	}
	return 1;
}

/* ---- driver ------------------------------------------------------------------------------ */

/* How many argument edges lead from each pattern node up to pattern node pn
 * (the longest way; -1 where none does). Nodes are defined before use, so
 * one pass from pn down the indices sees every path. An optional node leads
 * only to its first argument: absent, it passes that one through, and its
 * other arguments are in no tree. */
static void pattern_hops(const struct fs_pattern *p, uint32_t pn, int32_t *hops)
{
	for (uint32_t i = 0; i < p->n_nodes; i++)
		hops[i] = -1;
	hops[pn] = 0;
	for (uint32_t i = pn + 1; i-- > 0;) {
		if (hops[i] < 0)
			continue;
		const struct fs_pnode *x = &p->nodes[i];
		uint32_t n_args = x->kind == FS_PN_OPTIONAL && x->n_args ? 1 : x->n_args;
		for (uint32_t a = 0; a < n_args; a++)
			if (x->args[a].kind == FS_PA_REF && hops[x->args[a].ref] < hops[i] + 1)
				hops[x->args[a].ref] = hops[i] + 1;
	}
}

/* The graph nodes within `reach` user steps of gn (gn itself not), left in
 * S->queue[1..]: their count, or limit + 1 as soon as there are more than limit. */
static uint32_t users_within(struct st *S, uint32_t gn, uint32_t reach, uint32_t limit)
{
	const struct fs_graph *g = S->g;
	uint32_t head = 0, tail = 0, n = 0;
	if (++S->stamp == 0) { /* wrapped: no mark may look fresh */
		memset(S->seen, 0, (g->n_nodes + 1) * sizeof(uint32_t));
		S->stamp = 1;
	}
	S->queue[tail++] = gn;
	S->seen[gn] = S->stamp;
	for (uint32_t level = 0; level < reach && head < tail; level++)
		for (uint32_t level_end = tail; head < level_end; head++) {
			const struct fs_node *x = &g->nodes[S->queue[head]];
			for (uint32_t u = 0; u < x->n_users; u++) {
				uint32_t y = g->users[x->users + u];
				if (S->seen[y] == S->stamp)
					continue;
				if (n == limit)
					return limit + 1;
				S->seen[y] = S->stamp;
				S->queue[tail++] = y;
				n++;
			}
		}
	return n;
}

/* The bound pattern nodes pn reads (hops[q] > 0: q is that many steps under pn), in
 * pin[], fewest steps first, then fewest users of their graph nodes; returns how many. */
static uint32_t sort_pins(const struct st *S, const int32_t *hops, uint32_t *pin)
{
	const struct fs_graph *g = S->g;
	uint32_t n_pins = 0;
	for (uint32_t q = 0; q < S->p->n_nodes; q++) {
		if (hops[q] <= 0 || S->bind[q] == NONE)
			continue;
		uint32_t at = n_pins++; /* insertion: (hops, users) ascending, pattern-sized */
		for (; at > 0; at--) {
			uint32_t r = pin[at - 1];
			if (hops[r] < hops[q] || (hops[r] == hops[q] && g->nodes[S->bind[r]].n_users <= g->nodes[S->bind[q]].n_users))
				break;
			pin[at] = r;
		}
		pin[at] = q;
	}
	return n_pins;
}

/* One pass of the pins under a budget of `limit` nodes: 1 when c holds a set (found
 * now, or the one kept from the last site), 0 when every search ran over the budget. */
static int search_pins(struct st *S, struct outcand *c, const uint32_t *pin, uint32_t n_pins,
		       const int32_t *hops, uint32_t limit)
{
	for (uint32_t i = 0; i < n_pins; i++) {
		uint32_t q = pin[i], gn = S->bind[q];
		if (c->known[q].gn == gn && c->known[q].size > limit)
			continue; /* searched from there before: larger */
		if (c->set && c->pin == q && c->pin_gn == gn)
			return 1; /* the set kept */
		uint32_t n = users_within(S, gn, (uint32_t)hops[q], limit);
		c->known[q].gn = gn, c->known[q].size = n;
		if (n <= limit) {
			memcpy(c->v, S->queue + 1, n * sizeof(uint32_t));
			qsort(c->v, n, sizeof(uint32_t), fs_cmp_u32);
			c->n = n, c->from = 0, c->pin = q, c->pin_gn = gn, c->set = 1;
			return 1;
		}
	}
	return 0;
}

/* Graph nodes that could be output k (pattern node pn), ascending (file
 * order), from the first not claimed by a match kept. Each bound pattern node
 * that pn reads (through its arguments) pins the search: pn's graph node is
 * reached from that node's graph node by following users, at most `hops`
 * steps, so the candidates come from the graph's adjacency, never from a scan
 * of every node. Every such node pins a set holding every valid candidate; the
 * smallest is taken, so a value every layer reads (RoPE's cos beside the
 * layer's own x) does not make each site try every layer's nodes. The pins
 * are searched in turn (fewest steps first, then fewest users) with a budget
 * of nodes, doubled until one search ends within it: at most twice the
 * smallest set per pin. A set is kept for the next site: where that site's
 * pin is the same graph node (the outputs share only such a value, as RoPE's
 * q and k share only cos and sin), it is not searched again, and the nodes
 * matches claimed are passed once, not at every site. With nothing bound
 * under pn (outputs that share nothing), every node is a candidate and
 * *anchored is 0. */
static const struct outcand *output_candidates(struct st *S, uint32_t k, uint32_t pn, int *anchored)
{
	const struct fs_graph *g = S->g;
	struct outcand *c = &S->oc[k];
	int32_t *hops = fs_xmalloc(S->p->n_nodes * sizeof(int32_t));
	uint32_t *pin = fs_xmalloc(S->p->n_nodes * sizeof(uint32_t));
	if (!c->v) {
		c->v = fs_xmalloc((g->n_nodes + 1) * sizeof(uint32_t));
		c->known = fs_xmalloc(S->p->n_nodes * sizeof(*c->known));
		for (uint32_t q = 0; q < S->p->n_nodes; q++)
			c->known[q].gn = NONE;
	}
	pattern_hops(S->p, pn, hops);
	uint32_t n_pins = sort_pins(S, hops, pin);
	*anchored = n_pins > 0;
	if (!n_pins && !(c->set && c->pin == NONE)) {
		for (uint32_t gn = 0; gn < g->n_nodes; gn++)
			c->v[gn] = gn;
		c->n = g->n_nodes, c->from = 0, c->pin = c->pin_gn = NONE, c->set = 1;
	}
	/* fewer than n_nodes always fit: the largest budget ends it */
	for (uint32_t limit = 64; n_pins && !search_pins(S, c, pin, n_pins, hops, limit);)
		limit = limit < g->n_nodes / 2 ? limit * 2 : g->n_nodes;
	free(hops);
	free(pin);
	while (c->from < c->n && S->claimed[c->v[c->from]])
		c->from++;
	return c;
}

/* Output pn at each candidate in turn. S->base marks what the earlier trees
 * bound: a candidate that contradicts them is another site's (see step). */
static int place_output(struct st *S, uint32_t pn, const uint32_t *cand, uint32_t n_cand)
{
	uint32_t base = S->base;
	int ok = 0;
	S->base = S->n_trail;
	for (uint32_t i = 0; i < n_cand && !ok; i++) {
		const struct fs_node *x = &S->g->nodes[cand[i]];
		if (x->kind != FS_NODE_CALL || !op_ok(S, pn, x->op) || taken(S, cand[i]))
			continue;
		push_goal(S, pn, cand[i]);
		ok = solve(S);
		if (!ok)
			S->n_goals--;
	}
	S->base = base;
	return ok;
}

/* Everything placed: the next output (the first graph node, file order, that
 * works), then the whole-match checks. A further output's candidate that fails
 * is part of the partial match: its depth counts the trees already placed, so
 * a miss inside any output's tree is the attempt's cause. Where no bound node
 * ties pn to those trees (outputs that share nothing), every graph node is a
 * candidate and their failures say nothing about this site: they are
 * forgotten, and the miss is "no node for this output". */
static int finish(struct st *S)
{
	if (S->next_out == S->p->n_outputs) {
		S->in_final = 1;
		int ok = single_use(S) && weights(S) && wheres(S);
		S->in_final = 0;
		return ok;
	}
	uint32_t pn = S->p->outputs[S->next_out++];
	if (S->bind[pn] != NONE) {
		if (finish(S))
			return 1;
		S->next_out--;
		return 0;
	}
	int anchored;
	const struct outcand *c = output_candidates(S, S->next_out - 1, pn, &anchored);
	struct fs_miss best = S->best;
	int best_final = S->best_final;
	uint32_t *best_bind = anchored ? NULL : fs_xmalloc(S->p->n_nodes * sizeof(uint32_t));
	if (best_bind)
		memcpy(best_bind, S->best_bind, S->p->n_nodes * sizeof(uint32_t));
	int ok = place_output(S, pn, c->v + c->from, c->n - c->from);
	if (!ok && best_bind && !S->best_final) { /* keep failures of the whole-match checks */
		S->best = best;
		S->best_final = best_final;
		memcpy(S->best_bind, best_bind, S->p->n_nodes * sizeof(uint32_t));
	}
	free(best_bind);
	if (ok)
		return 1;
	S->next_out--;
	fail(S, FS_MISS_OP, pn, NONE, NONE);
	return 0;
}

static int check(struct st *S, const struct goal *g)
{
	uint32_t vmark = S->n_vtrail, gmark = S->n_goals;
	if (g->pa->kind == FS_PA_REF) /* a node argument met a literal */
		return fail(S, FS_MISS_LITERAL, g->pn, g->gn, NONE), 0;
	if (check_arg(S, g->pn, g->gn, g->pa, g->ga) && solve(S))
		return 1;
	S->n_goals = gmark;
	rollback(S, S->n_trail, vmark);
	return 0;
}

/* Takes the top goal; on failure puts it back, so callers can backtrack. */
static int solve(struct st *S)
{
	if (!S->n_goals)
		return finish(S);
	struct goal g = S->goals[--S->n_goals];
	if (g.pa ? check(S, &g) : step(S, g.pn, g.gn))
		return 1;
	S->goals[S->n_goals++] = g;
	return 0;
}

static void keep_match(struct st *S, struct fs_matches *out, uint32_t root)
{
	FS_GROW(out->v, out->cap, out->n + 1);
	struct fs_match *m = &out->v[out->n++];
	m->root = root;
	m->bind = fs_arena_alloc(&out->arena, S->p->n_nodes * sizeof(uint32_t));
	for (uint32_t pn = 0; pn < S->p->n_nodes; pn++) {
		m->bind[pn] = S->absent[pn] ? NONE : S->bind[pn];
		if (S->bind[pn] != NONE && S->p->nodes[pn].kind != FS_PN_INPUT && !S->absent[pn])
			S->claimed[S->bind[pn]] = 1;
	}
}

static void keep_miss(struct st *S, struct fs_matches *out, uint32_t root)
{
	uint32_t threshold = (S->p->n_ops + 1) / 2 > 2 ? (S->p->n_ops + 1) / 2 : 2;
	int telling = S->best.cause == FS_MISS_EXTRA || S->best.cause == FS_MISS_CONSUMER;
	if (S->best.depth < (telling ? 1 : threshold))
		return;
	FS_GROW(out->miss, out->cap_miss, out->n_miss + 1);
	struct fs_miss *m = &out->miss[out->n_miss++];
	*m = S->best;
	m->root = root;
	m->bind = fs_arena_alloc(&out->arena, S->p->n_nodes * sizeof(uint32_t));
	memcpy(m->bind, S->best_bind, S->p->n_nodes * sizeof(uint32_t));
}

/* The search state for pattern p on graph g: every buffer sized here, once */
static void st_init(struct st *S, const struct fs_pattern *p, const struct fs_scan *s, const struct fs_graph *g)
{
	uint32_t n = p->n_nodes;
	*S = (struct st){
		.p = p, .s = s, .g = g,
		.bind = fs_xmalloc(n * sizeof(uint32_t)),
		.absent = fs_xcalloc(n, 1),
		.var = fs_xcalloc(p->n_vars + 1, sizeof(double)),
		.var_set = fs_xcalloc(p->n_vars + 1, 1),
		.trail = fs_xmalloc((4 * n + 4) * sizeof(uint32_t)),
		.vtrail = fs_xmalloc((4 * p->n_vars + 4) * sizeof(uint32_t)),
		.opcache = fs_xmalloc((size_t)n * s->n_ops + 1),
		.claimed = fs_xcalloc(g->n_nodes + 1, 1),
		.md = pcre2_match_data_create(1, NULL),
		.best_bind = fs_xmalloc(n * sizeof(uint32_t)),
		.seen = fs_xcalloc(g->n_nodes + 1, sizeof(uint32_t)),
		.queue = fs_xmalloc((g->n_nodes + 1) * sizeof(uint32_t)),
		.oc = fs_xcalloc(p->n_outputs, sizeof(*S->oc)),
	};
	memset(S->bind, 0xff, n * sizeof(uint32_t));
	memset(S->opcache, -1, (size_t)n * s->n_ops + 1);
}

static void st_release(struct st *S)
{
	pcre2_match_data_free(S->md);
	free(S->bind);
	free(S->absent);
	free(S->var);
	free(S->var_set);
	free(S->trail);
	free(S->vtrail);
	free(S->opcache);
	free(S->claimed);
	free(S->best_bind);
	free(S->goals);
	free(S->seen);
	free(S->queue);
	for (uint32_t k = 0; k < S->p->n_outputs; k++) {
		free(S->oc[k].v);
		free(S->oc[k].known);
	}
	free(S->oc);
}

/* One attempt a graph node that may be the first output, in file order: a match is
 * kept (and claims its nodes), else the attempt's deepest failure may be a near miss. */
static void match_roots(struct st *S, struct fs_matches *out)
{
	const struct fs_graph *g = S->g;
	uint32_t root = S->p->outputs[0];
	for (uint32_t gn = 0; gn < g->n_nodes; gn++) {
		const struct fs_node *x = &g->nodes[gn];
		if (x->kind != FS_NODE_CALL || S->claimed[gn] || !op_ok(S, root, x->op))
			continue;
		memset(&S->best, 0, sizeof(S->best));
		S->best_final = 0;
		S->n_goals = 0;
		S->next_out = 1;
		S->base = 0;
		push_goal(S, root, gn);
		if (solve(S))
			keep_match(S, out, gn);
		else
			keep_miss(S, out, gn);
		rollback(S, 0, 0);
	}
}

void fs_match_pattern(const struct fs_pattern *p, const struct fs_scan *s, const struct fs_graph *g,
		      struct fs_matches *out)
{
	memset(out, 0, sizeof(*out));
	fs_arena_init(&out->arena);
	out->p = p;
	struct st S;
	st_init(&S, p, s, g);
	match_roots(&S, out);
	/* a near miss whose root a later match took is no miss */
	uint32_t w = 0;
	for (uint32_t i = 0; i < out->n_miss; i++)
		if (!S.claimed[out->miss[i].root])
			out->miss[w++] = out->miss[i];
	out->n_miss = w;
	st_release(&S);
}

void fs_matches_release(struct fs_matches *m)
{
	free(m->v);
	free(m->miss);
	fs_arena_release(&m->arena);
	memset(m, 0, sizeof(*m));
}

/* Variants of one pattern count as one pattern, whose matches never
 * overlap: a variant's match that holds a node a larger variant's match
 * holds (an unbiased LayerNorm inside a biased one) is dropped. */
void fs_matches_merge_variants(const struct fs_patlib *lib, const uint32_t *variants, uint32_t n, uint32_t n_nodes,
			       struct fs_matches *m)
{
	if (n < 2)
		return;
	uint32_t *order = fs_xmalloc(n * sizeof(uint32_t));
	for (uint32_t v = 0; v < n; v++) { /* larger first, then file order (insertion) */
		uint32_t vi = variants[v], at = v;
		while (at > 0 && lib->v[order[at - 1]].n_ops < lib->v[vi].n_ops) {
			order[at] = order[at - 1];
			at--;
		}
		order[at] = vi;
	}
	uint8_t *held = fs_xcalloc(n_nodes + 1, 1);
	for (uint32_t v = 0; v < n; v++) {
		const struct fs_pattern *p = &lib->v[order[v]];
		struct fs_matches *M = &m[order[v]];
		uint32_t w = 0;
		for (uint32_t i = 0; i < M->n; i++) {
			const struct fs_match *x = &M->v[i];
			int clash = 0;
			for (uint32_t pn = 0; pn < p->n_nodes && !clash; pn++)
				clash = p->nodes[pn].kind != FS_PN_INPUT && x->bind[pn] != UINT32_MAX && held[x->bind[pn]];
			if (clash)
				continue;
			for (uint32_t pn = 0; pn < p->n_nodes; pn++)
				if (p->nodes[pn].kind != FS_PN_INPUT && x->bind[pn] != UINT32_MAX)
					held[x->bind[pn]] = 1;
			M->v[w++] = *x;
		}
		M->n = w;
	}
	free(held);
	free(order);
}
