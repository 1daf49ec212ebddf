/*
 * memplan.h: one allocation for the unfused chain's buffers, planned by
 * lifetime as PyTorch's caching allocator reuses eager's intermediates: two
 * values share bytes only where no launch sees both alive. Eager
 * attention's softmax of 32 x 16384 x 16384 scores (five unfused values:
 * four of 17 GB in bf16, one of 34 GB in float32) needs 52 GB so, not 103:
 * what lets its unfused baseline run on an 80 GB card.
 */
#ifndef FUSESCAN_MEMPLAN_H
#define FUSESCAN_MEMPLAN_H

#include <stddef.h>
#include <stdint.h>

struct fs_memplan_item {
	size_t bytes;
	uint32_t first, last; /* the launches that write it first and read it last (inclusive) */
	size_t offset;        /* set by fs_memplan_offsets */
};

/* Offsets for it[0..n): aligned to `align` (a power of two), and no two
 * items whose [first, last] intersect overlap. Largest first, each at the
 * lowest offset that fits between those already placed that it meets.
 * Returns the allocation's size. */
size_t fs_memplan_offsets(struct fs_memplan_item *it, uint32_t n, size_t align);

#endif
