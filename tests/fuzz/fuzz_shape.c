/*
 * fuzz_shape.c: libFuzzer target for the shape grammar and symbolic dims
 * (scan/shape.c) and what reads them: the bytes (newlines made spaces) as
 * the shape of a placeholder, a call and a multi-output call of a dump,
 * every dim then evaluated with each symbol bound to 1, to 7 and to
 * 2^31 - 1, every value costed (fs_type_bytes), the unbound symbols listed
 * (fs_unbound_syms); and the bytes as a --dims binding (fs_bind_parse).
 * Built with -DFS_FUZZ=ON (clang); replay.c runs the same entry point over
 * tests/fuzz/corpus_shape in every normal test run.
 */
#include "fusescan/mine.h"
#include "fusescan/scan.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static char *dump_of(const uint8_t *data, size_t size, size_t *len)
{
	char *shape = malloc(size + 1);
	for (size_t i = 0; i < size; i++)
		shape[i] = data[i] == '\n' || data[i] == '\r' || !data[i] ? ' ' : (char)data[i];
	shape[size] = '\0';
	size_t cap = 5 * size + 256; /* the shape five times */
	char *text = malloc(cap);
	*len = (size_t)snprintf(text, cap,
				"%%x : %s : torch.bfloat16\n"
				"%%y = aten.neg.default(%%x : %s : torch.bfloat16) : %s : torch.float32\n"
				"%%z = aten.split.Tensor(%%y, 2) : (%s, 4x%s) : (torch.float32, torch.float32)\n"
				"output %%z\n",
				shape, shape, shape, shape, shape);
	free(shape);
	return text;
}

static void evaluate(const struct fs_scan *s)
{
	const struct fs_types *t = &s->types;
	struct fs_binding b[64];
	uint32_t nb = 0;
	for (uint32_t i = 0; i < t->n_exprs && nb < 64; i++)
		if (t->exprs[i].op == FS_EX_SYM)
			b[nb++] = (struct fs_binding){t->exprs[i].sym, 0};
	static const int64_t values[] = {1, 7, INT32_MAX};
	for (int v = 0; v < 3; v++) {
		for (uint32_t i = 0; i < nb; i++)
			b[i].value = values[v];
		for (uint32_t i = 0; i < t->n_dims; i++) {
			int64_t out;
			fs_dim_eval(t, &t->dims[i], b, nb, &out);
		}
		for (uint32_t m = 0; m < s->n_modules; m++)
			for (uint32_t i = 0; i < s->modules[m].graph->n_types; i++)
				fs_type_bytes(s, &s->modules[m].graph->types[i], b, nb);
	}
	uint32_t unbound[8];
	for (uint32_t m = 0; m < s->n_modules; m++)
		fs_unbound_syms(s, s->modules[m].graph, b, nb / 2, unbound, 8);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	size_t len;
	char *text = dump_of(data, size, &len);
	struct fs_scan *s = fs_scan_new();
	fs_scan_buffer(s, "shape.txt", text, len);
	evaluate(s);
	char *dims = malloc(size + 1), why[200];
	memcpy(dims, data, size);
	dims[size] = '\0';
	struct fs_binding b[16];
	fs_bind_parse(s, dims, b, 16, why, sizeof(why));
	free(dims);
	fs_scan_free(s);
	free(text);
	return 0;
}
