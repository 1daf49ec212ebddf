/* memplan.c: the unfused chain's buffers planned by lifetime (memplan.h) */
#include "memplan.h"

#include <stdlib.h>

#include "fusescan/base.h"

static int larger_first(const void *a, const void *b)
{
	const struct fs_memplan_item *x = *(const struct fs_memplan_item *const *)a, *y = *(const struct fs_memplan_item *const *)b;
	if (x->bytes != y->bytes)
		return x->bytes > y->bytes ? -1 : 1;
	if (x->first != y->first)
		return x->first < y->first ? -1 : 1;
	return x < y ? -1 : x > y; /* the earlier item (one array) */
}

static int lower_offset(const void *a, const void *b)
{
	const struct fs_memplan_item *x = *(const struct fs_memplan_item *const *)a, *y = *(const struct fs_memplan_item *const *)b;
	return x->offset < y->offset ? -1 : x->offset > y->offset;
}

static size_t rounded(size_t bytes, size_t align)
{
	return (bytes + align - 1) & ~(align - 1);
}

size_t fs_memplan_offsets(struct fs_memplan_item *it, uint32_t n, size_t align)
{
	struct fs_memplan_item **order = fs_xcalloc(n + 1, sizeof(*order));
	const struct fs_memplan_item **met = fs_xcalloc(n + 1, sizeof(*met));
	size_t size = 0;
	for (uint32_t i = 0; i < n; i++)
		order[i] = &it[i];
	qsort(order, n, sizeof(*order), larger_first);
	for (uint32_t j = 0; j < n; j++) {
		struct fs_memplan_item *x = order[j];
		size_t want = rounded(x->bytes, align), at = 0;
		uint32_t m = 0;
		for (uint32_t i = 0; i < j; i++) /* the placed ones alive at some launch with x */
			if (order[i]->first <= x->last && x->first <= order[i]->last)
				met[m++] = order[i];
		qsort(met, m, sizeof(*met), lower_offset);
		for (uint32_t i = 0; i < m && at + want > met[i]->offset; i++) { /* x does not fit below met[i] */
			size_t end = met[i]->offset + rounded(met[i]->bytes, align);
			at = end > at ? end : at;
		}
		x->offset = at;
		size = at + want > size ? at + want : size;
	}
	free(order);
	free(met);
	return size;
}
