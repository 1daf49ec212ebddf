/*
 * layout.c: the memory layout eager PyTorch gives each value of a program
 * (prog.h, fs_prog_build). A kernel that writes its outputs as eager lays
 * them out reads and writes memory in the same order where eager keeps a
 * view's layout: RoPE's q.transpose(1, 2) * cos + ... comes out of eager
 * (and of torch.compile, which keeps eager's output strides) as a
 * [b, h, s, d] view of [b, s, h, d] memory; written row-major instead, one
 * side of the kernel jumps across the whole buffer at every row.
 *
 * The strides follow ATen's rules: a view's from its source (permute,
 * slice, expand; view and reshape by ATen's computeStride, a copy where
 * that fails); an elementwise op's (TensorIterator) the operands' own where
 * they all share one shape and one dense layout, else dense in the order
 * that sorts the operands' strides (the first operand that tells two dims
 * apart decides; broadcast dims tell nothing), casts included; clone
 * row-major (a dump drops its memory_format, and an exported graph's clones
 * are reshape's and .contiguous()'s copies), as are cat, pad and the rest.
 * Layouts are decided as at two tokens or more: at one token a dim of 1
 * changes no address, and every bucket's kernel shares the layout the op's
 * outputs are allocated in.
 */
#include "prog.h"

#include <stdlib.h>
#include <string.h>

/* dense strides with the dims in this order, outermost first (NULL: row-major) */
static void dense_in(const int64_t *shape, uint8_t rank, const uint8_t *order, int64_t *st)
{
	int64_t s = 1;
	for (int at = rank - 1; at >= 0; at--) {
		int k = order ? order[at] : at;
		st[k] = s;
		s *= shape[k] > 1 ? shape[k] : 1;
	}
}

static void row_major(const int64_t *shape, uint8_t rank, int64_t *st)
{
	dense_in(shape, rank, NULL, st);
}

/* dims of shape sorted outermost first by stride (ties: in order), a
 * dim of 1 (no address of its own) before them all; 1 where that order is
 * not row-major's */
static int order_of(const int64_t *shape, const int64_t *st, uint8_t rank, uint8_t order[MAX_RANK])
{
	uint8_t n = 0, moved = 0;
	rank = rank < MAX_RANK ? rank : MAX_RANK;
	for (uint8_t k = 0; k < rank; k++)
		if (shape[k] == 1)
			order[n++] = k;
	for (uint8_t k = 0; k < rank; k++)
		if (shape[k] != 1) {
			uint8_t j = n++;
			for (; j > 0 && shape[order[j - 1]] != 1 && st[order[j - 1]] < st[k]; j--)
				order[j] = order[j - 1];
			order[j] = k;
			moved |= j + 1 != n;
		}
	if (!moved)
		for (uint8_t k = 0; k < rank; k++)
			order[k] = k;
	return moved;
}

/* no two elements share memory and none is skipped */
static int dense(const int64_t *shape, const int64_t *st, uint8_t rank)
{
	uint8_t order[MAX_RANK];
	order_of(shape, st, rank, order);
	int64_t want = 1;
	for (int i = rank - 1; i >= 0; i--) {
		int64_t n = shape[order[i]];
		if (n == 1)
			continue;
		if (st[order[i]] != want)
			return 0;
		want *= n;
	}
	return 1;
}

/* ATen's computeStride: the strides of a view of (shape, st) as `to`, or -1 where no view has them */
static int view_strides(const int64_t *shape, const int64_t *st, uint8_t rank, const int64_t *to, uint8_t to_rank, int64_t *out)
{
	int64_t numel = 1;
	for (uint8_t k = 0; k < rank; k++)
		numel *= shape[k];
	if (!numel) {
		row_major(to, to_rank, out);
		return 0;
	}
	int view_d = to_rank - 1;
	int64_t chunk_base = rank ? st[rank - 1] : 1, tensor_numel = 1, view_numel = 1;
	for (int d = rank - 1; d >= 0; d--) {
		tensor_numel *= shape[d];
		if (d == 0 || (shape[d - 1] != 1 && st[d - 1] != tensor_numel * chunk_base)) {
			while (view_d >= 0 && (view_numel < tensor_numel || to[view_d] == 1)) {
				out[view_d] = view_numel * chunk_base;
				view_numel *= to[view_d];
				view_d--;
			}
			if (view_numel != tensor_numel)
				return -1;
			if (d > 0) {
				chunk_base = st[d - 1];
				tensor_numel = 1, view_numel = 1;
			}
		}
	}
	return view_d == -1 ? 0 : -1;
}

/* TensorIterator's output strides over operands (shapes, strides) broadcast to shape */
static void iterator_strides(const int64_t *shape, uint8_t rank, const int64_t (*osh)[MAX_RANK], const int64_t (*ost)[MAX_RANK],
			     const uint8_t *orank, uint32_t n, int64_t *st)
{
	int64_t b[MAX_ARGS][MAX_RANK];
	int same = n > 0;
	for (uint32_t i = 0; i < n; i++) {
		same &= orank[i] == rank && dense(osh[i], ost[i], rank) && !memcmp(ost[i], ost[0], rank * sizeof(int64_t));
		for (uint8_t k = 0; k < rank; k++) {
			int j = k - (rank - orank[i]);
			same &= j >= 0 && osh[i][j] == shape[k];
			b[i][k] = j < 0 || (osh[i][j] == 1 && shape[k] != 1) ? 0 : ost[i][j];
		}
	}
	if (same) { /* one shape, one dense layout: the output takes it */
		memcpy(st, ost[0], rank * sizeof(int64_t));
		return;
	}
	int perm[MAX_RANK]; /* innermost first */
	for (int i = 0; i < rank; i++)
		perm[i] = rank - 1 - i;
	for (int i = 1; i < rank; i++) {
		int d1 = i;
		for (int d0 = i - 1; d0 >= 0; d0--) {
			int cmp = 0;
			for (uint32_t o = 0; o < n && !cmp; o++) {
				int64_t s0 = b[o][perm[d0]], s1 = b[o][perm[d1]];
				if (!s0 || !s1)
					continue;
				if (s0 != s1)
					cmp = s0 < s1 ? -1 : 1;
				else if (shape[perm[d0]] > shape[perm[d1]])
					cmp = 1;
			}
			if (cmp > 0) {
				int t = perm[d0];
				perm[d0] = perm[d1], perm[d1] = t;
				d1 = d0;
			} else if (cmp < 0)
				break;
		}
	}
	uint8_t order[MAX_RANK];
	for (int i = 0; i < rank; i++)
		order[rank - 1 - i] = (uint8_t)perm[i];
	dense_in(shape, rank, order, st);
}

/* value strides by eager's rules (shapes as bound) */
static void strides(const struct prog *p, int64_t (*st)[MAX_RANK])
{
	for (uint32_t i = 0; i < p->n_in; i++)
		row_major(p->in[i].shape, p->in[i].rank, st[i]);
	for (uint32_t i = 0; i < p->n_ops; i++) {
		const struct op *op = &p->ops[i];
		const struct ten *out = &op->out, *in = op->n_src ? fs_prog_value(p, op->src[0]) : NULL;
		const int64_t *is = op->n_src ? st[op->src[0]] : NULL;
		int64_t *os = st[p->n_in + i];
		uint8_t k = op->sem->kind;
		int64_t perm[MAX_RANK];
		row_major(out->shape, out->rank, os);
		if (!in)
			continue;
		if (k == VIEW) {
			if (view_strides(in->shape, is, in->rank, out->shape, out->rank, os))
				row_major(out->shape, out->rank, os); /* reshape copies */
		} else if (k == PERMUTE && !fs_op_perm(op, out->rank, perm)) {
			for (uint8_t d = 0; d < out->rank; d++)
				os[d] = is[perm[d]];
		} else if (k == SLICE && in->rank == out->rank) {
			memcpy(os, is, out->rank * sizeof(int64_t));
			os[fs_dim_at(op->ints[0], out->rank)] *= op->ints[3];
		} else if (k == EXPAND) {
			for (uint8_t d = 0; d < out->rank; d++) {
				int j = d - (out->rank - in->rank);
				os[d] = j < 0 || (in->shape[j] == 1 && out->shape[d] != 1) ? 0 : is[j];
			}
		} else if (k == ID && op->sem->id != SEM_contiguous && op->sem->id != SEM_clone && in->rank == out->rank) {
			memcpy(os, is, out->rank * sizeof(int64_t)); /* an alias */
		} else if (k == UN || k == BIN || k == TER || k == CMP || k == CAST) {
			int64_t sh[MAX_ARGS][MAX_RANK], ss[MAX_ARGS][MAX_RANK];
			uint8_t r[MAX_ARGS];
			uint32_t n = 0;
			for (uint32_t a = 0; a < op->n_src && n < MAX_ARGS; a++, n++) {
				const struct ten *t = fs_prog_value(p, op->src[a]);
				r[n] = t->rank;
				memcpy(sh[n], t->shape, sizeof(sh[n]));
				memcpy(ss[n], st[op->src[a]], sizeof(ss[n]));
			}
			iterator_strides(out->shape, out->rank, (const int64_t(*)[MAX_RANK])sh, (const int64_t(*)[MAX_RANK])ss, r, n, os);
		}
	}
}

/* the kernels' part of it: in a region of elementwise ops only, every
 * value a kernel writes (an op's output but a view's, a region output) dense
 * in eager's order where each keeps its last dim innermost (the vectors run
 * along it); else (a reduction's rows, a product's operands) row-major */
static void decide(struct prog *p)
{
	uint32_t nv = p->n_in + p->n_ops;
	for (uint32_t i = 0; i < p->n_ops; i++) {
		uint8_t k = p->ops[i].sem->kind;
		if (k == RED || k == SOFTMAX || k == LAYERNORM || k == RMSNORM || k == GEMM)
			return;
	}
	int64_t (*st)[MAX_RANK] = fs_xcalloc(nv + 1, sizeof(*st));
	strides(p, st);
	int any = 0, ok = 1;
	for (uint32_t i = 0; i < p->n_ops; i++) {
		const struct op *op = &p->ops[i];
		struct ten *t = &p->ops[i].out;
		uint8_t k = op->sem->kind;
		int copies = k == ID && (op->sem->id == SEM_clone || op->sem->id == SEM_contiguous);
		if ((k == VIEW || k == EXPAND || k == PERMUTE || k == SLICE || (k == ID && !copies)) && !p->is_output[i])
			continue; /* a view no kernel writes: read through to its source */
		t->strided = (uint8_t)order_of(t->shape, st[p->n_in + i], t->rank, t->order);
		/* where a vector runs along the last dim, it lies innermost */
		ok &= !t->strided || t->order[t->rank - 1] == t->rank - 1;
		any |= t->strided;
	}
	free(st);
	if (any && ok)
		return;
	for (uint32_t i = 0; i < p->n_ops; i++)
		p->ops[i].out.strided = 0;
}

int fs_prog_build(struct prog *p, const uint32_t *nodes, uint32_t n, int64_t tokens, struct fs_diags *d)
{
	if (fs_prog_bind(p, nodes, n, tokens, d))
		return -1;
	if (tokens >= 2) {
		decide(p);
		return 0;
	}
	struct prog q = {.s = p->s, .g = p->g, .gelu_tanh = p->gelu_tanh};
	struct fs_diags dq;
	fs_diags_init(&dq);
	if (fs_prog_bind(&q, nodes, n, 2, &dq) == 0 && q.n_ops == p->n_ops) {
		decide(&q);
		for (uint32_t i = 0; i < p->n_ops; i++) {
			p->ops[i].out.strided = q.ops[i].out.strided;
			memcpy(p->ops[i].out.order, q.ops[i].out.order, sizeof(q.ops[i].out.order));
		}
	}
	fs_prog_free(&q);
	fs_diags_release(&dq);
	return 0;
}

void fs_ten_to_memory(const struct ten *t, const double *src, double *dst)
{
	int64_t st[MAX_RANK], idx[MAX_RANK] = {0};
	dense_in(t->shape, t->rank, t->strided ? t->order : NULL, st);
	for (int64_t i = 0, off = 0; i < t->n; i++) { /* src in row-major order; off follows idx */
		dst[off] = src[i];
		for (int k = t->rank - 1; k >= 0; k--) {
			off += st[k];
			if (++idx[k] < t->shape[k])
				break;
			off -= st[k] * t->shape[k];
			idx[k] = 0;
		}
	}
}
