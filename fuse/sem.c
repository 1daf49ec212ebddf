/*
 * sem.c: the op-semantics table (sem.def) and a node's row of it (sem.h).
 */
#include "sem.h"

#include <math.h>
#include <string.h>

/* sem.def's expressions as C over doubles: the CPU executions */
#define FS_SQRT1_2 0.70710678118654752440
#define fs_exp exp
#define fs_tanh tanh
#define fs_quot(a, b) ((a) / (b))
#define fs_rsqrt(a) (1 / sqrt(a))
#define FS_SEM(id, key, kind, nt, flags, expr)              \
	static double sem_##id(double a, double b, double c) \
	{                                                  \
		(void)a, (void)b, (void)c;                 \
		return (double)(expr);                     \
	}
#include "sem.def"
#undef FS_SEM
#define FS_SEM(id, key, kind, nt, flags, expr) {key, kind, nt, flags, sem_##id, #expr, SEM_##id},
static const struct sem sems[] = {
#include "sem.def"
};
#undef FS_SEM

static const struct sem *sem_by_key(const char *key)
{
	for (size_t i = 0; i < sizeof(sems) / sizeof(sems[0]); i++)
		if (!strcmp(sems[i].key, key))
			return &sems[i];
	return NULL;
}

/* ops whose tuple form (values, indices) reduces like another row */
static const struct {
	const char *key;
	enum sem_id values;
} tuple_rows[] = {{"max", SEM_amax}, {"min", SEM_amin}};

static const struct sem *tuple_row(const struct fs_scan *s, const struct fs_node *x)
{
	const char *key = fs_scan_str(s, s->ops[x->op].key);
	for (size_t i = 0; x->kind == FS_NODE_CALL && x->n_out == 2 && i < sizeof(tuple_rows) / sizeof(tuple_rows[0]); i++)
		if (!strcmp(tuple_rows[i].key, key))
			return &sems[tuple_rows[i].values];
	return NULL;
}

const struct sem *fs_sem_of(const struct fs_scan *s, const struct fs_node *x)
{
	const struct sem *t = tuple_row(s, x);
	return t ? t : sem_by_key(fs_scan_str(s, s->ops[x->op].key));
}

int fs_sem_tuple_reduction(const struct fs_scan *s, const struct fs_node *x)
{
	return tuple_row(s, x) != NULL;
}

int fs_sem_is(const struct fs_scan *s, const struct fs_node *x, enum sem_id id)
{
	const struct sem *m = x->kind == FS_NODE_CALL ? fs_sem_of(s, x) : NULL;
	return m && m->id == id;
}

/* Below, the three questions of an op's spelling rather than its meaning:
 * the one other place fuse/ reads an op's text. */

int fs_sem_rounding_div(const struct fs_scan *s, const struct fs_node *x)
{
	return strstr(fs_scan_str(s, s->ops[x->op].target), "_mode") != NULL;
}

int fs_sem_copy_with_dtype(const struct fs_scan *s, const struct fs_node *x)
{
	const struct fs_op *op = &s->ops[x->op];
	return !strcmp(fs_scan_str(s, op->name), "_to_copy") || !strcmp(fs_scan_str(s, op->overload), "dtype_layout");
}

int fs_sem_getitem_call(const struct fs_scan *s, const struct fs_node *x)
{
	return !strcmp(fs_scan_str(s, s->ops[x->op].name), "getitem");
}
