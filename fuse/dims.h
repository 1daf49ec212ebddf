/*
 * dims.h (private to fuse/): a bound shape's dims as text, for the kernels
 * that take the dump's symbolic dims at run time. A static dim prints as its
 * value; a symbolic one as its expression over the symbols: in generated
 * CUDA C the kernel's symbol parameters S<i> (i: the symbol's index in the
 * program's bindings), in Python the symbols' own names (s70), where each
 * is a name the formula can hold (fs_dims_py_sym).
 *
 *   char t[256];
 *   fs_dims_text(p, &x, 0, x.rank - 1, FS_LANG_C, t, sizeof(t)); // "(2048 * S1)"
 */
#ifndef FUSESCAN_DIMS_H
#define FUSESCAN_DIMS_H

#include "prog.h"

#include <stddef.h>

enum fs_lang { FS_LANG_C, FS_LANG_PY };

/* dim k of t is an expression of the symbols (not a value) */
static inline int fs_dim_symbolic(const struct ten *t, int k)
{
	return t->sym[k] != 0;
}
/* dim k of t is 1 whatever the symbols hold */
static inline int fs_dim_one(const struct ten *t, int k)
{
	return !t->sym[k] && t->shape[k] == 1;
}
/* A kernel's derived dims (an expression of the symbols other than one
 * symbol, such as a padded size), each distinct one once: the kernel
 * computes it as `const fs_ix SZ<i> = text[i];` and its index arithmetic
 * reads the name, so an expression repeated through nested views stays short. */
enum { FS_DIM_NAMES = 32 };
struct fs_dim_names {
	char *text[FS_DIM_NAMES];
	uint32_t n;
};
/* The product of dims [from, to) of t as one expression (constants folded,
 * "1" when empty). With names (C only), a derived dim reads as its name
 * (added where new; inline once the table is full). 0, or -1: too long, or a
 * symbol the program does not bind. */
int fs_dims_text(const struct prog *p, const struct ten *t, int from, int to, enum fs_lang lang, struct fs_dim_names *names, char *out,
		 size_t n);
void fs_dim_names_release(struct fs_dim_names *names);
/* Symbol i of p's bindings as a Python formula names it: its own name, or
 * where that is a keyword, max, min or a dunder "sym_<name>", with '_'
 * appended until it is no other symbol's name (at most 64 bytes). */
void fs_dims_py_sym(const struct prog *p, uint32_t i, char *out, size_t n);
/* dims [0, rank) of a and b are the same: equal values, or the same
 * expression of the symbols */
int fs_same_dims(const struct prog *p, const struct ten *a, const struct ten *b, int rank);
/* any dim of t is symbolic */
int fs_ten_symbolic(const struct ten *t);

#endif
