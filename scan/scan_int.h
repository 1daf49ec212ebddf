/*
 * scan_int.h: private to scan/. Parser state kept on the scan between files:
 * the op-table index, name bindings (symbol -> node of the graph being
 * parsed, stamped with a generation so nothing is cleared between graphs),
 * the dedupe index of parsed module bodies, and the file buffers those
 * bodies live in.
 */
#ifndef FUSESCAN_SCAN_INT_H
#define FUSESCAN_SCAN_INT_H

#include "fusescan/scan.h"

struct fs_bind {
	uint32_t gen;   /* generation of the graph this binding belongs to */
	uint32_t node;
};

struct fs_body {        /* text of a parsed module, for dedupe confirmation */
	const char *text;
	size_t len;
	uint64_t hash;
	uint32_t module;
};

struct fs_scan_priv {
	uint32_t *row_of_sym;           /* op-table key sym -> row + 1 */
	uint32_t n_row_of_sym, cap_row_of_sym;
	uint8_t *dtype_of_sym;          /* dtype text sym -> dtype + 1 */
	uint32_t cap_dtype_of_sym;
	struct fs_bind *bind;           /* node-name sym -> binding */
	uint32_t cap_bind;
	uint32_t gen;
	struct fs_body *bodies;         /* open addressing by hash, power of two */
	uint32_t n_bodies, cap_bodies;
	char **kept;                    /* file buffers that hold parsed bodies */
	uint32_t n_kept, cap_kept;
	char *spare;                    /* read buffer reused across files */
	size_t cap_spare;
	struct fs_read *seen;           /* files and directories read, by identity: reached again through a
					   link, or named twice, one is not read again */
	uint32_t n_seen, cap_seen;
	uint32_t *seen_slots;           /* open addressing over seen: index + 1, 0 = empty; a power of two */
	uint32_t n_seen_slots;
};

void fs_ops_init(struct fs_scan *s);
uint32_t fs_ops_intern(struct fs_scan *s, const char *target, size_t n);
uint32_t fs_types_shape(struct fs_scan *s, const char *text, size_t n);
enum fs_dtype fs_types_dtype(struct fs_scan *s, const char *text, size_t n);
void fs_types_release(struct fs_types *t);

/* Parses one dump held in memory into s (file record `file` already made).
 * Returns 1 if a module body of this buffer is kept as a dedupe original
 * (the buffer must then outlive s), 0 otherwise. */
int fs_parse_dump(struct fs_scan *s, uint32_t file, const char *data, size_t len);

/* Users in CSR form and use counts, once a graph's nodes are all read. */
void fs_graph_finish(struct fs_graph *g);

#endif
