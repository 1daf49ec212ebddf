/*
 * emit.c: the fused kernel for deployment (emit.h).
 */
#include "emit.h"

#include "codegen.h"
#include "cuda.h"
#include "dims.h"
#include "text.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

enum { MAX_KERNELS = 2 * FS_MAX_BUCKETS + 1 }; /* the fallback, each bucket's and its exact-size kernel */

static uint32_t node_of(const struct prog *p, int32_t v)
{
	return v < (int32_t)p->n_in ? p->in_node[v] : p->ops[v - p->n_in].node;
}

static int failed(struct fs_numerics *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static int failed(struct fs_numerics *r, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(r->emitted, sizeof(r->emitted), fmt, ap);
	va_end(ap);
	r->emit_failed = 1;
	return -1;
}

/* A Python identifier for a node name: itself where it is one (and no
 * keyword), else with a prefix. */
static void py_name(const char *node, char *out, size_t n)
{
	static const char *const kw[] = {"False", "None", "True", "and", "as", "assert", "async", "await", "break", "class",
					 "continue", "def", "del", "elif", "else", "except", "finally", "for", "from", "global",
					 "if", "import", "in", "is", "lambda", "nonlocal", "not", "or", "pass", "raise",
					 "return", "try", "while", "with", "yield", "torch", NULL};
	size_t k = 0;
	int bad = !((*node >= 'a' && *node <= 'z') || (*node >= 'A' && *node <= 'Z') || *node == '_');
	for (const char *const *w = kw; *w && !bad; w++)
		bad = !strcmp(*w, node);
	if (bad && n > 3)
		k = (size_t)snprintf(out, n, "in_");
	for (const char *c = node; *c && k + 1 < n; c++)
		out[k++] = ((*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') || (*c >= '0' && *c <= '9')) ? *c : '_';
	out[k] = '\0';
}

/* a shape as JSON: a number per static dim, the Python expression of a symbolic one */
static cJSON *shape_json(const struct prog *p, const struct ten *t)
{
	cJSON *a = cJSON_CreateArray();
	char e[256];
	for (uint8_t d = 0; d < t->rank; d++) {
		if (fs_dim_symbolic(t, d) && fs_dims_text(p, t, d, d + 1, FS_LANG_PY, e, sizeof(e)) == 0)
			cJSON_AddItemToArray(a, cJSON_CreateString(e));
		else
			cJSON_AddItemToArray(a, cJSON_CreateNumber((double)t->shape[d]));
	}
	return a;
}

/* The bundle: every kernel in a namespace of its own (the template's
 * typedefs differ between kernels), its entry renamed. */
static void bundle(struct fs_text *out, const char *name, char *const *src, const char *const *entry, uint32_t n)
{
	fs_text_put(out, "// fusescan --emit: kernel %s, one entry per bucket's tactic and the fallback (see %s.json)\n", name, name);
	for (uint32_t i = 0; i < n; i++) {
		const char *at = strstr(src[i], " fs_k(");
		fs_text_put(out, "\n#undef FS_FAST\n#undef FS_L2\nnamespace %s_ns {\n%.*s %s(%s}\n", entry[i], (int)(at ? at - src[i] : 0),
		    src[i], entry[i], at ? at + 6 : src[i]);
	}
}

static int write_one(struct fs_numerics *r, const char *dir, const char *name, const char *ext, const char *data)
{
	char path[1100];
	snprintf(path, sizeof(path), "%.900s/%s.%s", dir, name, ext);
	if (fs_write_file_atomic(path, data, strlen(data)) == 0)
		return 0;
	return failed(r, "cannot write %s: %s", path, strerror(errno));
}

/* kernels/torch_op.py with its placeholders filled */
static char *module_text(const char *name, const char *sig, const char *args, const char *ret, const char *doc)
{
	const char *tpl = fs_kernel_file("torch_op.py");
	struct fs_text t = {0};
	static const char *const keys[] = {"@NAME@", "@SIGNATURE@", "@ARGS@", "@RETURNS@", "@DOC@"};
	const char *vals[] = {name, sig, args, ret, doc};
	while (tpl && *tpl) {
		const char *at = strchr(tpl, '@');
		size_t k = 0;
		while (at && k < 5) {
			for (k = 0; k < 5 && strncmp(at, keys[k], strlen(keys[k])); k++)
				;
			if (k == 5)
				at = strchr(at + 1, '@'), k = 0;
			else
				break;
		}
		if (!at) {
			fs_text_put(&t, "%s", tpl);
			break;
		}
		fs_text_put(&t, "%.*s%s", (int)(at - tpl), tpl, vals[k]);
		tpl = at + strlen(keys[k]);
	}
	return t.s;
}

/* The kernel of p at exactly its symbols' values: every dim static (shifts
 * and constants instead of the magic numbers), the same parameters. */
static int exact_kernel(const struct prog *p, const struct fs_tactic *t, struct fs_kernel *k, char *why, size_t n)
{
	struct prog q = *p;
	q.in = fs_xmalloc((p->n_in + 1) * sizeof(*q.in));
	q.ops = fs_xmalloc((p->n_ops + 1) * sizeof(*q.ops));
	memcpy(q.in, p->in, p->n_in * sizeof(*q.in));
	memcpy(q.ops, p->ops, p->n_ops * sizeof(*q.ops));
	for (uint32_t i = 0; i < p->n_in; i++)
		memset(q.in[i].sym, 0, sizeof(q.in[i].sym));
	for (uint32_t i = 0; i < p->n_ops; i++)
		memset(q.ops[i].out.sym, 0, sizeof(q.ops[i].out.sym));
	int rc = fs_codegen(&q, -1, FS_GEN_KERNEL, t, k, why, n);
	free(q.in);
	free(q.ops);
	return rc;
}

/* exact: the kernel of exactly these symbol values (each required equal) */
static cJSON *kernel_json(const struct prog *p, const struct fs_kernel *k, const char *entry, const struct prog *exact)
{
	cJSON *q = cJSON_CreateObject();
	char tname[32], e[256];
	fs_tactic_name(&k->tactic, k->row, tname, sizeof(tname));
	cJSON_AddStringToObject(q, "entry", entry);
	cJSON_AddStringToObject(q, "tactic", tname);
	cJSON_AddStringToObject(q, "kind", k->row ? "row" : "elementwise");
	cJSON_AddNumberToObject(q, "index_bits", k->index64 ? 64 : 32);
	/* a 32-bit kernel: the largest value the kernel indexes must hold at most 2^30 elements */
	cJSON_AddStringToObject(q, "max_elements", k->most_py);
	/* requirements on the symbolic dims: {"dim": formula, "multiple_of": n} or {"dim": formula, "at_most": n} */
	cJSON *req = cJSON_AddArrayToObject(q, "requires");
	for (uint32_t i = 0; i < k->n_req; i++) {
		const struct fs_req *r = &k->req[i];
		struct ten one = {.rank = 1, .sym = {r->dim}, .shape = {0}};
		const char *kind = r->div ? "multiple_of" : "at_most";
		double v = r->div ? (double)r->div : (double)r->max;
		int dup = p->s->types.dims[r->dim - 1].expr < 0 || fs_dims_text(p, &one, 0, 1, FS_LANG_PY, e, sizeof(e));
		for (cJSON *x = req->child; x && !dup; x = x->next) { /* one dim, several places in the shapes */
			const cJSON *w = cJSON_GetObjectItemCaseSensitive(x, kind);
			dup = w && !strcmp(cJSON_GetObjectItemCaseSensitive(x, "dim")->valuestring, e) &&
			      (r->div ? (int64_t)w->valuedouble % r->div == 0 : w->valuedouble <= v);
		}
		if (dup)
			continue;
		cJSON *x = cJSON_CreateObject();
		cJSON_AddStringToObject(x, "dim", e);
		cJSON_AddNumberToObject(x, kind, v);
		cJSON_AddItemToArray(req, x);
	}
	for (uint32_t i = 0; exact && i < exact->n_bind; i++) {
		cJSON *x = cJSON_CreateObject();
		cJSON_AddStringToObject(x, "dim", fs_scan_str(p->s, exact->bind[i].sym));
		cJSON_AddNumberToObject(x, "equals", (double)exact->bind[i].value);
		cJSON_AddItemToArray(req, x);
	}
	cJSON *l = cJSON_AddObjectToObject(q, "launch");
	cJSON *block = cJSON_AddArrayToObject(l, "block");
	cJSON_AddItemToArray(block, cJSON_CreateNumber((double)k->block));
	cJSON_AddItemToArray(block, cJSON_CreateNumber(1));
	cJSON_AddItemToArray(block, cJSON_CreateNumber(1));
	/* grid = (ceil(work / per_block), 1, 1), at least 1, at most 2^31 - 1 */
	cJSON *grid = cJSON_AddObjectToObject(l, "grid");
	cJSON_AddStringToObject(grid, "work", k->grid_work_py);
	cJSON_AddNumberToObject(grid, "per_block", (double)k->grid_per);
	cJSON_AddNumberToObject(l, "shared_bytes", 0);
	return q;
}

/* The sites the op replaces, by node name: each one's program, bound as the
 * base, must generate the op's fallback kernel k0 byte for byte, so its
 * values line up with the kernel's parameters: its inputs in the op's order,
 * its outputs in the op's order, and its nodes (file order); and the graph
 * they are in. */
static int sites_json(const struct prog *base, const struct fs_kernel *k0, const struct fs_numerics_opts *o, cJSON *j,
		      struct fs_numerics *r)
{
	const struct fs_emit_sites *es = o->emit_sites;
	cJSON *g = cJSON_AddObjectToObject(j, "graph");
	cJSON_AddStringToObject(g, "dump", es->dump);
	cJSON_AddStringToObject(g, "stage", es->stage);
	cJSON_AddStringToObject(g, "transform", es->transform);
	cJSON_AddStringToObject(j, "candidate", es->candidate);
	cJSON *a = cJSON_AddArrayToObject(j, "sites");
	for (uint32_t i = 0; i < es->n; i++) {
		const struct fs_site *site = &es->v[i];
		uint32_t *nodes = fs_site_file_order(site);
		struct prog q = {.s = base->s, .g = base->g, .gelu_tanh = base->gelu_tanh};
		struct fs_diags d;
		struct fs_kernel k = {0};
		char why[256];
		fs_diags_init(&d);
		int bad = fs_prog_build(&q, nodes, site->n_nodes, o->tokens, &d);
		q.index64 = 1;
		bad = bad || fs_codegen(&q, -1, FS_GEN_KERNEL, NULL, &k, why, sizeof(why)) || strcmp(k.source, k0->source);
		const char *last = fs_scan_str(base->s, base->g->nodes[nodes[site->n_nodes - 1]].name);
		if (!bad) {
			cJSON *x = cJSON_CreateObject(), *ins = cJSON_AddArrayToObject(x, "inputs"),
			      *outs = cJSON_AddArrayToObject(x, "outputs"), *all = cJSON_AddArrayToObject(x, "nodes");
			for (uint32_t p = 0; p < k.n_params; p++)
				cJSON_AddItemToArray(k.write[p] ? outs : ins,
						     cJSON_CreateString(fs_scan_str(q.s, q.g->nodes[node_of(&q, k.value[p])].name)));
			for (uint32_t m = 0; m < site->n_nodes; m++)
				cJSON_AddItemToArray(all, cJSON_CreateString(fs_scan_str(q.s, q.g->nodes[nodes[m]].name)));
			cJSON_AddItemToArray(a, x);
		}
		fs_kernel_release(&k);
		fs_prog_free(&q);
		fs_diags_release(&d);
		free(nodes);
		if (bad)
			return failed(r, "the site at %%%s runs another kernel than the first site's: it cannot share its op", last);
	}
	return 0;
}

void fs_emit(const struct prog *base, const struct fs_emit_bucket *b, uint32_t n, const struct fs_numerics_opts *o,
	     struct fs_numerics *r)
{
	const char *dir = o->emit_dir;
	struct fs_kernel k[MAX_KERNELS];
	char *src[MAX_KERNELS], entry_buf[MAX_KERNELS][24], why[1024], name[40];
	const char *entry[MAX_KERNELS];
	int32_t of_bucket[FS_MAX_BUCKETS], exact_of[FS_MAX_BUCKETS];
	const struct prog *exact_at[MAX_KERNELS] = {0}; /* an exact-size kernel: the bucket's program */
	uint32_t nk = 0;
	struct fs_text cu = {0}, sig = {0}, args = {0}, ret = {0}, doc = {0};
	char *ptx = NULL, *json = NULL, *py = NULL;
	cJSON *j = NULL;
	struct fs_cuda c;
	memset(k, 0, sizeof(k));
	fs_cuda_open(&c);
	if (n > FS_MAX_BUCKETS)
		n = FS_MAX_BUCKETS;
	if (!c.nvrtc) {
		failed(r, "nothing compiled (NVRTC not found)");
		goto out;
	}
	if (mkdir(dir, 0777) != 0 && errno != EEXIST) {
		failed(r, "cannot create %s: %s", dir, strerror(errno));
		goto out;
	}
	/* the fallback first (64-bit indices, one element a thread: any size), then each bucket's */
	struct prog any = *base;
	any.index64 = 1;
	if (fs_codegen(&any, -1, FS_GEN_KERNEL, NULL, &k[0], why, sizeof(why))) {
		failed(r, "the fallback kernel: %s", why);
		goto out;
	}
	src[nk] = k[0].source, entry[nk] = "fs_any";
	nk++;
	for (uint32_t i = 0; i < n; i++) {
		struct fs_kernel kb;
		if (fs_codegen(b[i].p, -1, FS_GEN_KERNEL, &b[i].t, &kb, why, sizeof(why))) {
			failed(r, "the kernel of bucket %lld: %s", (long long)b[i].tokens, why);
			goto out;
		}
		if (kb.n_params != k[0].n_params || memcmp(kb.value, k[0].value, sizeof(kb.value)) ||
		    memcmp(kb.write, k[0].write, sizeof(kb.write))) {
			fs_kernel_release(&kb);
			failed(r, "the kernel of bucket %lld takes other buffers than the fallback", (long long)b[i].tokens);
			goto out;
		}
		uint32_t same = 1;
		while (same < nk && (exact_at[same] || strcmp(src[same], kb.source)))
			same++;
		of_bucket[i] = (int32_t)same;
		if (same < nk)
			fs_kernel_release(&kb);
		else {
			k[nk] = kb;
			src[nk] = kb.source;
			snprintf(entry_buf[nk], sizeof(entry_buf[nk]), "fs_b%lld", (long long)b[i].tokens);
			entry[nk] = entry_buf[nk];
			nk++;
		}
		/* at the bucket's own size (serving pads to captured sizes), its dims as constants */
		exact_of[i] = -1;
		if (!b[i].p->n_bind)
			continue;
		if (exact_kernel(b[i].p, &b[i].t, &kb, why, sizeof(why))) {
			failed(r, "the exact-size kernel of bucket %lld: %s", (long long)b[i].tokens, why);
			goto out;
		}
		k[nk] = kb;
		src[nk] = kb.source;
		exact_at[nk] = b[i].p;
		snprintf(entry_buf[nk], sizeof(entry_buf[nk]), "fs_e%lld", (long long)b[i].tokens);
		entry[nk] = entry_buf[nk];
		exact_of[i] = (int32_t)nk++;
	}
	for (uint32_t i = 1; i < k[0].n_params; i++)
		if (k[0].write[i - 1] && !k[0].write[i]) {
			failed(r, "the kernel reads a buffer after the outputs: the descriptor cannot say so");
			goto out;
		}
	uint64_t h = 0x656d6974ull;
	for (uint32_t i = 0; i < nk; i++)
		h = fs_hash_bytes(src[i], strlen(src[i]), h);
	if (o->emit_sites) /* two candidates with one kernel: two ops, each naming its own sites */
		h = fs_hash_bytes(o->emit_sites->candidate, strlen(o->emit_sites->candidate), h);
	snprintf(name, sizeof(name), "fs_%016llx", (unsigned long long)h);
	bundle(&cu, name, src, entry, nk);
	char arch[16], varch[24];
	size_t len;
	fs_cuda_arch(&c, arch, sizeof(arch));
	snprintf(varch, sizeof(varch), "compute_%s", arch + 3);
	if (fs_cuda_compile(&c, cu.s, varch, 1, &ptx, &len, why, sizeof(why))) {
		failed(r, "no PTX: %.1000s", why);
		goto out;
	}

	j = cJSON_CreateObject();
	cJSON_AddStringToObject(j, "format", "fusescan.kernel/2");
	cJSON_AddStringToObject(j, "name", name);
	char opname[64];
	snprintf(opname, sizeof(opname), "fusescan::%s", name);
	cJSON_AddStringToObject(j, "op", opname);
	char file[64];
	snprintf(file, sizeof(file), "%s.cu", name);
	cJSON_AddStringToObject(j, "source", file);
	snprintf(file, sizeof(file), "%s.ptx", name);
	cJSON_AddStringToObject(j, "ptx", file);
	snprintf(file, sizeof(file), "%s.py", name);
	cJSON_AddStringToObject(j, "module", file);
	cJSON_AddStringToObject(j, "ptx_arch", varch);
	cJSON_AddStringToObject(j, "nvrtc", r->nvrtc);
	cJSON_AddStringToObject(j, "tuned_on", r->gpu_ran ? r->device : "");
	/* the symbols: kernel parameters after the buffers, each read from an input's dim */
	cJSON *syms = cJSON_AddArrayToObject(j, "symbols");
	struct fs_text tokens = {0};
	for (uint32_t s = 0; s < base->n_bind; s++) {
		const char *sname = fs_scan_str(base->s, base->bind[s].sym);
		int found = 0;
		cJSON *q = cJSON_CreateObject();
		cJSON_AddStringToObject(q, "name", sname);
		for (uint32_t i = 0, in = 0; i < k[0].n_params && !found; i++) {
			if (k[0].write[i])
				continue;
			const struct ten *t = fs_prog_value(base, k[0].value[i]);
			for (uint8_t d = 0; d < t->rank && !found; d++) {
				const struct fs_dim *dim = fs_dim_symbolic(t, d) ? &base->s->types.dims[t->sym[d] - 1] : NULL;
				if (dim && dim->expr >= 0 && base->s->types.exprs[dim->expr].op == FS_EX_SYM &&
				    base->s->types.exprs[dim->expr].sym == base->bind[s].sym) {
					cJSON *from = cJSON_AddObjectToObject(q, "from");
					cJSON_AddNumberToObject(from, "input", in);
					cJSON_AddNumberToObject(from, "dim", d);
					found = 1;
				}
			}
			in++;
		}
		cJSON_AddItemToArray(syms, q);
		fs_text_put(&tokens, "%s%s", s ? " * " : "", sname);
		if (!found) {
			failed(r, "symbol %s is no dim of any input: the op could not read it", sname);
			goto out;
		}
	}
	cJSON_AddStringToObject(j, "tokens", tokens.s ? tokens.s : "1");
	/* what every kernel takes, in order */
	cJSON_AddStringToObject(j, "params", "the inputs' and outputs' data pointers in the order listed; each symbol's value "
					     "(int64); each symbol's division magic (uint64: m | l << 32, l = ceil(log2 v), "
					     "m = 2^32 (2^l - v) // v + 1)");
	free(tokens.s);
	cJSON *ins = cJSON_AddArrayToObject(j, "inputs"), *outs = cJSON_AddArrayToObject(j, "outputs");
	uint32_t n_out = 0;
	char pyn[96];
	for (uint32_t i = 0; i < k[0].n_params; i++) {
		const struct ten *t = fs_prog_value(base, k[0].value[i]);
		const char *node = fs_scan_str(base->s, base->g->nodes[node_of(base, k[0].value[i])].name);
		cJSON *q = cJSON_CreateObject();
		py_name(node, pyn, sizeof(pyn));
		cJSON_AddStringToObject(q, "name", pyn);
		cJSON_AddStringToObject(q, "node", node);
		cJSON_AddItemToObject(q, "shape", shape_json(base, t));
		cJSON_AddStringToObject(q, "dtype", fs_dtype_name((enum fs_dtype)t->dtype));
		cJSON_AddItemToArray(k[0].write[i] ? outs : ins, q);
		if (k[0].write[i]) {
			n_out++;
			continue;
		}
		fs_text_put(&sig, "%s%s: torch.Tensor", sig.n ? ", " : "", pyn);
		fs_text_put(&args, "%s%s", args.n ? ", " : "", pyn);
		fs_text_put(&doc, "%s%s %s", doc.n ? ", " : "", pyn, fs_dtype_name((enum fs_dtype)t->dtype) + 6);
	}
	if (n_out == 1)
		fs_text_put(&ret, "torch.Tensor");
	else {
		fs_text_put(&ret, "typing.Tuple[");
		for (uint32_t i = 0; i < n_out; i++)
			fs_text_put(&ret, "%storch.Tensor", i ? ", " : "");
		fs_text_put(&ret, "]");
	}
	cJSON *kj = cJSON_AddArrayToObject(j, "kernels");
	for (uint32_t i = 0; i < nk; i++)
		cJSON_AddItemToArray(kj, kernel_json(base, &k[i], entry[i], exact_at[i]));
	cJSON_AddNumberToObject(j, "fallback", 0);
	if (o->emit_sites && sites_json(base, &k[0], o, j, r))
		goto out;
	/* a token count takes the smallest bucket at least as large (the largest past them all) */
	cJSON *bj = cJSON_AddArrayToObject(j, "buckets");
	for (uint32_t i = 0; i < n; i++) {
		cJSON *q = cJSON_CreateObject();
		char tname[32];
		fs_tactic_name(&b[i].t, k[0].row, tname, sizeof(tname));
		cJSON_AddNumberToObject(q, "tokens", (double)b[i].tokens);
		cJSON_AddNumberToObject(q, "kernel", of_bucket[i]);
		if (exact_of[i] >= 0)
			cJSON_AddNumberToObject(q, "exact", exact_of[i]);
		cJSON_AddStringToObject(q, "tactic", tname);
		cJSON_AddBoolToObject(q, "tuned", b[i].tuned);
		if (b[i].tuned)
			cJSON_AddNumberToObject(q, "median_ms", b[i].ms);
		cJSON_AddItemToArray(bj, q);
	}
	json = cJSON_Print(j);
	size_t jl = strlen(json);
	json = fs_xrealloc(json, jl + 2);
	json[jl] = '\n', json[jl + 1] = '\0';
	py = module_text(name, sig.s ? sig.s : "", args.s ? args.s : "", ret.s, doc.s ? doc.s : "");
	if (!py) {
		failed(r, "the module template is missing from the build");
		goto out;
	}
	if (!write_one(r, dir, name, "cu", cu.s) && !write_one(r, dir, name, "ptx", ptx) && !write_one(r, dir, name, "json", json) &&
	    !write_one(r, dir, name, "py", py)) {
		snprintf(r->emitted_name, sizeof(r->emitted_name), "%s", name);
		snprintf(r->emitted, sizeof(r->emitted), "%s/%s.py (op fusescan::%s), .json, .ptx, .cu: %u kernel%s for %u bucket%s",
			 dir, name, name, nk, nk == 1 ? "" : "s", n, n == 1 ? "" : "s");
	}
out:
	for (uint32_t i = 0; i < nk; i++)
		fs_kernel_release(&k[i]);
	cJSON_Delete(j);
	free(json);
	free(py);
	free(ptx);
	free(cu.s);
	free(sig.s);
	free(args.s);
	free(ret.s);
	free(doc.s);
	fs_cuda_close(&c);
}
