/*
 * emit.c: the fused kernel for deployment (emit.h). fs_emit takes its steps
 * in order, each stopping the rest where it fails: the op, its kernels, the
 * generated GEMM, the op's name, the PTX, the descriptor and the files.
 */
#include "emit.h"

#include "codegen.h"
#include "cuda.h"
#include "dims.h"
#include "emit_op.h"
#include "gemm_gen.h"
#include "text.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

enum { MAX_KERNELS = 2 * FS_MAX_BUCKETS + 1 }; /* the fallback, each bucket's and its exact-size kernel */

static int failed(struct fs_emit_result *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static int failed(struct fs_emit_result *r, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(r->text, sizeof(r->text), fmt, ap);
	va_end(ap);
	r->failed = 1;
	return -1;
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

static int write_one(struct fs_emit_result *r, const char *dir, const char *name, const char *ext, const char *data)
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
		int dup = p->s->types.dims[r->dim - 1].expr < 0 || fs_dims_text(p, &one, 0, 1, FS_LANG_PY, NULL, e, sizeof(e));
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
		fs_dims_py_sym(exact, i, e, sizeof(e));
		cJSON_AddStringToObject(x, "dim", e);
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

/* The op of region q with its kernel (k->source NULL: none), as every site
 * sharing it must generate it. */
static int region_op(const struct prog *q, struct fs_emit_op *e, struct fs_kernel *k)
{
	char why[256];
	memset(k, 0, sizeof(*k));
	if (fs_emit_op_init(e, q, why, sizeof(why)))
		return -1;
	e->kq.index64 = 1;
	struct fs_diags d;
	fs_diags_init(&d);
	int rc = e->kernel && fs_codegen(&e->kq, -1, FS_GEN_KERNEL, NULL, k, &d) ? -1 : 0;
	fs_diags_release(&d);
	return rc;
}

/* The op's program at site `site` with its kernel (k->source NULL: none). */
static int site_op(const struct prog *base, const struct fs_site *site, const uint32_t *nodes, const struct fs_site_opts *o,
		   struct prog *q, struct fs_emit_op *e, struct fs_kernel *k)
{
	struct fs_diags d;
	*q = (struct prog){.s = base->s, .g = base->g, .gelu_tanh = base->gelu_tanh};
	memset(k, 0, sizeof(*k));
	fs_diags_init(&d);
	int bad = fs_prog_build(q, nodes, site->n_nodes, o->tokens, &d);
	fs_diags_release(&d);
	return bad ? -1 : region_op(q, e, k);
}

#define OP_SEED 0x656d6974ull /* the hash of an op's text */

/* What must be the same at every site: the kernel, and what the op runs around it. */
static char *op_text(const struct fs_emit_op *e, const struct fs_kernel *k)
{
	cJSON *j = cJSON_CreateObject();
	struct fs_emit_sig sig = {0};
	struct fs_emit_op canon = *e; /* every tensor named by its value's place, not its node */
	uint32_t nv = e->p->n_in + e->p->n_ops + FS_GEMM_MAX;
	char why[256];
	canon.name = fs_xcalloc(nv, sizeof(*canon.name));
	for (uint32_t v = 0; v < nv; v++)
		snprintf(canon.name[v], sizeof(canon.name[v]), "t%u", v);
	fs_emit_op_json(&canon, k->source ? k : NULL, j, &sig, why, sizeof(why));
	free(canon.name);
	cJSON_DeleteItemFromObject(j, "inputs"), cJSON_DeleteItemFromObject(j, "outputs");
	cJSON_DeleteItemFromObject(j, "views"), cJSON_DeleteItemFromObject(j, "buffers");
	char *t = cJSON_PrintUnformatted(j);
	struct fs_text all = {0};
	fs_text_put(&all, "%s\n%s", t, k->source ? k->source : "");
	cJSON_free(t);
	cJSON_Delete(j);
	free(sig.sig.s), free(sig.args.s), free(sig.ret.s), free(sig.doc.s);
	return all.s;
}

int fs_emit_key(const struct prog *p, char key[20])
{
	struct fs_emit_op e = {0};
	struct fs_kernel k;
	key[0] = '\0';
	if (region_op(p, &e, &k) == 0) {
		char *text = op_text(&e, &k);
		snprintf(key, 20, "%016llx", (unsigned long long)fs_hash_bytes(text, strlen(text), OP_SEED));
		free(text);
	}
	fs_kernel_release(&k);
	if (e.name)
		fs_emit_op_release(&e);
	return key[0] ? 0 : -1;
}

/* The sites the op replaces, by node name: each one's program, bound as the
 * base, must generate the same kernel byte for byte and the same products
 * (names aside), so its values line up with the op's: its inputs in the
 * op's order, its outputs in the op's order, and its nodes (file order); and
 * the graph they are in. */
static int sites_json(const struct prog *base, const char *want, const struct fs_site_opts *o, cJSON *j, struct fs_emit_result *r)
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
		struct prog q;
		struct fs_emit_op e = {0};
		struct fs_kernel k;
		char *text = NULL;
		int bad = site_op(base, site, nodes, o, &q, &e, &k) || strcmp(text = op_text(&e, &k), want);
		const char *last = fs_scan_str(base->s, base->g->nodes[nodes[site->n_nodes - 1]].name);
		if (!bad) {
			int32_t v[FS_KERNEL_MAX_PARAMS];
			cJSON *x = cJSON_CreateObject(), *ins = cJSON_AddArrayToObject(x, "inputs"),
			      *outs = cJSON_AddArrayToObject(x, "outputs"), *all = cJSON_AddArrayToObject(x, "nodes");
			const struct fs_kernel *kk = k.source ? &k : NULL;
			for (uint32_t m = 0, n = fs_emit_op_inputs(&e, kk, v); m < n; m++)
				cJSON_AddItemToArray(ins, cJSON_CreateString(fs_scan_str(q.s, q.g->nodes[fs_prog_node(&q, v[m])].name)));
			for (uint32_t m = 0, n = fs_emit_op_outputs(&e, kk, v); m < n; m++)
				cJSON_AddItemToArray(outs, cJSON_CreateString(fs_scan_str(q.s, q.g->nodes[fs_prog_node(&q, v[m])].name)));
			for (uint32_t m = 0; m < site->n_nodes; m++)
				cJSON_AddItemToArray(all, cJSON_CreateString(fs_scan_str(q.s, q.g->nodes[nodes[m]].name)));
			cJSON_AddItemToArray(a, x);
		}
		free(text);
		fs_kernel_release(&k);
		if (e.name)
			fs_emit_op_release(&e);
		fs_prog_free(&q);
		free(nodes);
		if (bad)
			return failed(r, "the site at %%%s runs another kernel or other products than the first site's: it cannot share its op",
				      last);
	}
	return 0;
}

struct hex128 {
	char s[129];
};

static struct hex128 algo_hex(const uint64_t algo[8])
{
	struct hex128 h;
	unsigned char b[64];
	memcpy(b, algo, sizeof(b));
	for (int i = 0; i < 64; i++)
		snprintf(h.s + 2 * i, 3, "%02x", b[i]);
	return h;
}

/* The cuBLASLt algorithm of each product, as tuned at a bucket: each
 * cublasLtMatmulAlgo_t's 64 bytes in hex, in memory order, under the
 * version they hold for ("cublaslt": {"version", "products", "epilogue"}). */
static void algos_json(const struct fs_lt_algos *a, const struct fs_gemm_plan *pl, cJSON *q)
{
	cJSON *c = cJSON_AddObjectToObject(q, "cublaslt");
	cJSON_AddNumberToObject(c, "version", (double)a->version);
	cJSON *arr = cJSON_AddArrayToObject(c, "products");
	for (uint32_t k = 0; k < a->n && k < pl->n_calls && k < FS_MAX_PRODUCTS; k++)
		cJSON_AddItemToArray(arr, cJSON_CreateString(algo_hex(a->algo[k]).s));
	if (a->has_epilogue && pl->absorbs)
		cJSON_AddStringToObject(c, "epilogue", algo_hex(a->epilogue).s);
}

/* The fused kernel of bucket program p (index64: of any size) under tactic t
 * (NULL: the heuristic one), at exactly its sizes where `exact`. */
static int bucket_kernel(const struct prog *p, const struct fs_tactic *t, int exact, int index64, struct fs_kernel *k, char *why,
			 size_t n)
{
	struct fs_emit_op e;
	if (fs_emit_op_init(&e, p, why, n))
		return -1;
	e.kq.index64 = (uint8_t)index64;
	struct fs_diags d;
	fs_diags_init(&d);
	int rc = fs_codegen(&e.kq, -1, exact ? FS_GEN_EXACT : FS_GEN_KERNEL, t, k, &d);
	if (rc)
		snprintf(why, n, "%s", fs_diags_last(&d));
	fs_diags_release(&d);
	fs_emit_op_release(&e);
	return rc;
}

/* The generated GEMM where a bucket chose it: its epilogue (64-bit
 * indices: valid for any size) under each tactic the buckets chose, each a
 * PTX of its own (every one defines fs_gemm; sm_90a's tactics compiled for
 * compute_90a, which runs on sm_90 alone); of_bucket[i] the one bucket i
 * runs, -1 none. */
struct gen_emit {
	struct fs_gemm_gen g;
	struct fs_kernel epi;
	uint32_t n;
	uint8_t tactic[FS_GEMM_GEN_TACTICS];
	char *src[FS_GEMM_GEN_TACTICS], *ptx[FS_GEMM_GEN_TACTICS];
	int32_t of_bucket[FS_MAX_BUCKETS];
};

static int gen_build(struct fs_cuda *c, const struct fs_emit_op *e, const struct fs_emit_bucket *b, uint32_t n, const char *varch,
		     struct gen_emit *ge, char *why, size_t wn)
{
	for (uint32_t i = 0; i < n; i++) {
		ge->of_bucket[i] = -1;
		if (b[i].variant != 2 || !b[i].algos || !b[i].algos->gen || b[i].algos->gen > FS_GEMM_GEN_TACTICS)
			continue;
		uint8_t t = (uint8_t)(b[i].algos->gen - 1);
		uint32_t k = 0;
		while (k < ge->n && ge->tactic[k] != t)
			k++;
		if (k == ge->n)
			ge->tactic[ge->n++] = t;
		ge->of_bucket[i] = (int32_t)k;
	}
	if (!ge->n)
		return 0;
	struct prog q = e->kq;
	q.index64 = 1;
	struct fs_diags d;
	fs_diags_init(&d);
	int rc = fs_gemm_gen_plan(&q, &e->pl, &ge->g, &d) || fs_gemm_gen_epilogue(&q, &ge->g, &ge->epi, &d);
	if (rc)
		snprintf(why, wn, "%s", fs_diags_last(&d));
	fs_diags_release(&d);
	if (rc)
		return -1;
	for (uint32_t k = 0; k < ge->n; k++) {
		const struct fs_gemm_gen_tactic *t = &fs_gemm_gen_tactics[ge->tactic[k]];
		size_t len;
		ge->src[k] = fs_gemm_gen_source(&ge->epi, t, ge->g.nm);
		if (fs_cuda_compile(c, ge->src[k], t->portable ? varch : "compute_90a", 1, &ge->ptx[k], &len, why, wn))
			return -1;
	}
	return 0;
}

static void gen_release(struct gen_emit *ge)
{
	for (uint32_t k = 0; k < ge->n; k++)
		free(ge->src[k]), free(ge->ptx[k]);
	fs_kernel_release(&ge->epi);
	fs_gemm_gen_release(&ge->g);
}

/* The name of the PTX file (without .ptx) of tactic t of op `name`'s generated GEMM. */
static void gen_file(const char *name, uint8_t t, char *out, size_t n)
{
	snprintf(out, n, "%s.g%u", name, t);
}

/* The descriptor's "generated": the product (with the kernel) it replaces,
 * its members and sizes, the epilogue's buffers, and per tactic its PTX and
 * launch (kernels/gemm_sm90.cuh, kernels/gemm_mma.cuh; fuse/gemm_gen.c). */
static cJSON *gen_json(const struct fs_emit_op *e, const struct gen_emit *ge, const char *name)
{
	cJSON *q = cJSON_CreateObject();
	cJSON_AddNumberToObject(q, "product", ge->g.call);
	cJSON_AddNumberToObject(q, "members", ge->g.nm);
	cJSON_AddNumberToObject(q, "columns", (double)ge->g.Nm);
	cJSON_AddNumberToObject(q, "K", (double)ge->g.K);
	cJSON_AddItemToObject(q, "args", fs_emit_op_args(e, &ge->epi));
	cJSON *ks = cJSON_AddArrayToObject(q, "kernels");
	for (uint32_t k = 0; k < ge->n; k++) {
		const struct fs_gemm_gen_tactic *t = &fs_gemm_gen_tactics[ge->tactic[k]];
		struct fs_gemm_gen_shape sh = fs_gemm_gen_shape(t);
		char stem[48], file[64], tname[64];
		cJSON *x = cJSON_CreateObject();
		gen_file(name, ge->tactic[k], stem, sizeof(stem));
		snprintf(file, sizeof(file), "%s.ptx", stem);
		fs_gemm_gen_name(t, tname, sizeof(tname));
		cJSON_AddStringToObject(x, "ptx", file);
		cJSON_AddStringToObject(x, "entry", "fs_gemm");
		cJSON_AddStringToObject(x, "tactic", tname);
		cJSON_AddBoolToObject(x, "sm_90a", !t->portable);
		cJSON_AddNumberToObject(x, "block_m", sh.bm);
		cJSON_AddNumberToObject(x, "block_n", sh.bn);
		cJSON_AddNumberToObject(x, "cluster", sh.cluster);
		cJSON_AddNumberToObject(x, "threads", sh.threads);
		cJSON_AddNumberToObject(x, "shared_bytes", fs_gemm_gen_smem(t));
		cJSON_AddNumberToObject(x, "member_rows", (double)fs_gemm_gen_member_rows(&ge->g, t));
		cJSON_AddNumberToObject(x, "weight_rows", (double)fs_gemm_gen_rows(&ge->g, t));
		cJSON_AddItemToArray(ks, x);
	}
	return q;
}

/* One --emit: the op; its kernels, the fallback first (index 0), then per
 * bucket its tactic's (buckets whose kernels come out the same share one)
 * and its exact-size one; the generated GEMM's tactics; the files' text. */
struct emit {
	const struct prog *base;
	const struct fs_emit_bucket *b;
	uint32_t n;
	const struct fs_site_opts *o;
	const struct fs_gpu_result *gpu; /* the run's GPU side: the device and NVRTC it was tuned with */
	struct fs_emit_result *r;
	struct fs_cuda c;
	struct fs_emit_op e;
	struct fs_kernel k[MAX_KERNELS];
	char *src[MAX_KERNELS], entry_buf[MAX_KERNELS][24];
	const char *entry[MAX_KERNELS];
	const struct prog *exact_at[MAX_KERNELS]; /* an exact-size kernel: the bucket's program */
	uint32_t nk;
	int32_t of_bucket[FS_MAX_BUCKETS], exact_of[FS_MAX_BUCKETS];
	struct gen_emit ge;
	char varch[24], name[40];
	char *want; /* op_text of the op: what every site must generate */
	struct fs_text cu;
	char *ptx;
	struct fs_emit_sig sig;
};

/* The op, and where it goes: NVRTC where it has a kernel, the directory. */
static int emit_open(struct emit *m)
{
	char why[1024];
	if (fs_emit_op_init(&m->e, m->base, why, sizeof(why)))
		return failed(m->r, "%s", why);
	if (m->e.kernel && !m->c.nvrtc)
		return failed(m->r, "nothing compiled (NVRTC not found)");
	if (mkdir(m->o->emit_dir, 0777) != 0 && errno != EEXIST)
		return failed(m->r, "cannot create %s: %s", m->o->emit_dir, strerror(errno));
	return 0;
}

static uint32_t kernel_add(struct emit *m, const struct fs_kernel *kb, const struct prog *exact, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

/* Kernel kb (now the bundle's) joins it as the entry named by fmt; exact:
 * the bucket program it is exactly the kernel of, or NULL. Its index. */
static uint32_t kernel_add(struct emit *m, const struct fs_kernel *kb, const struct prog *exact, const char *fmt, ...)
{
	uint32_t i = m->nk++;
	va_list ap;
	m->k[i] = *kb;
	m->src[i] = kb->source;
	va_start(ap, fmt);
	vsnprintf(m->entry_buf[i], sizeof(m->entry_buf[i]), fmt, ap);
	va_end(ap);
	m->entry[i] = m->entry_buf[i];
	m->exact_at[i] = exact;
	return i;
}

/* Bucket i's kernel under its tactic: an earlier one where the source is the
 * same, else a new entry; it must take the fallback's buffers. */
static int bucket_tactic(struct emit *m, uint32_t i)
{
	const struct fs_emit_bucket *b = &m->b[i];
	struct fs_kernel kb;
	char why[1024];
	if (bucket_kernel(b->p, &b->t, 0, 0, &kb, why, sizeof(why)))
		return failed(m->r, "the kernel of bucket %lld: %s", (long long)b->tokens, why);
	if (kb.n_params != m->k[0].n_params || memcmp(kb.value, m->k[0].value, sizeof(kb.value)) ||
	    memcmp(kb.write, m->k[0].write, sizeof(kb.write))) {
		fs_kernel_release(&kb);
		return failed(m->r, "the kernel of bucket %lld takes other buffers than the fallback", (long long)b->tokens);
	}
	uint32_t same = 1;
	while (same < m->nk && (m->exact_at[same] || strcmp(m->src[same], kb.source)))
		same++;
	m->of_bucket[i] = (int32_t)same;
	if (same < m->nk)
		fs_kernel_release(&kb);
	else
		kernel_add(m, &kb, NULL, "fs_b%lld", (long long)b->tokens);
	return 0;
}

/* Bucket i's kernel at its own size (serving pads to captured sizes), its
 * dims as constants; none (-1) where it has no symbols. */
static int bucket_exact(struct emit *m, uint32_t i)
{
	const struct fs_emit_bucket *b = &m->b[i];
	struct fs_kernel kb;
	char why[1024];
	m->exact_of[i] = -1;
	if (!b->p->n_bind)
		return 0;
	if (bucket_kernel(b->p, &b->t, 1, 0, &kb, why, sizeof(why)))
		return failed(m->r, "the exact-size kernel of bucket %lld: %s", (long long)b->tokens, why);
	m->exact_of[i] = (int32_t)kernel_add(m, &kb, b->p, "fs_e%lld", (long long)b->tokens);
	return 0;
}

/* The fallback first (64-bit indices, one element a thread: any size), then
 * each bucket's; none for an op without a kernel. */
static int emit_kernels(struct emit *m)
{
	struct fs_kernel kb;
	char why[1024];
	if (!m->e.kernel)
		return 0;
	if (bucket_kernel(m->base, NULL, 0, 1, &kb, why, sizeof(why)))
		return failed(m->r, "the fallback kernel: %s", why);
	kernel_add(m, &kb, NULL, "fs_any");
	for (uint32_t i = 0; i < m->n; i++)
		if (bucket_tactic(m, i) || bucket_exact(m, i))
			return -1;
	return 0;
}

/* The PTX's virtual arch (the device's), and the generated GEMM's tactics. */
static int emit_gen(struct emit *m)
{
	char arch[16], why[1024];
	if (!m->nk)
		return 0;
	fs_cuda_arch(&m->c, arch, sizeof(arch));
	snprintf(m->varch, sizeof(m->varch), "compute_%s", arch + 3);
	if (gen_build(&m->c, &m->e, m->b, m->n, m->varch, &m->ge, why, sizeof(why)))
		return failed(m->r, "the generated GEMM: %.1000s", why);
	return 0;
}

/* The op's name: a hash of its kernels and of what it runs around them. */
static void emit_name(struct emit *m)
{
	m->want = op_text(&m->e, &m->k[0]);
	uint64_t h = fs_hash_bytes(m->want, strlen(m->want), OP_SEED);
	for (uint32_t i = 1; i < m->nk; i++)
		h = fs_hash_bytes(m->src[i], strlen(m->src[i]), h);
	for (uint32_t i = 0; i < m->ge.n; i++)
		h = fs_hash_bytes(m->ge.src[i], strlen(m->ge.src[i]), h);
	if (m->o->emit_sites) /* two candidates with one kernel: two ops, each naming its own sites */
		h = fs_hash_bytes(m->o->emit_sites->candidate, strlen(m->o->emit_sites->candidate), h);
	snprintf(m->name, sizeof(m->name), "fs_%016llx", (unsigned long long)h);
}

/* The bundle of every kernel, and its one PTX. */
static int emit_ptx(struct emit *m)
{
	char why[1024];
	size_t len;
	if (!m->nk)
		return 0;
	bundle(&m->cu, m->name, m->src, m->entry, m->nk);
	if (fs_cuda_compile(&m->c, m->cu.s, m->varch, 1, &m->ptx, &len, why, sizeof(why)))
		return failed(m->r, "no PTX: %.1000s", why);
	return 0;
}

/* The descriptor's head: its format, the op's name and its files. */
static void desc_files(const struct emit *m, cJSON *j)
{
	char opname[64], file[64];
	cJSON_AddStringToObject(j, "format", "fusescan.kernel/3");
	cJSON_AddStringToObject(j, "name", m->name);
	snprintf(opname, sizeof(opname), "fusescan::%s", m->name);
	cJSON_AddStringToObject(j, "op", opname);
	snprintf(file, sizeof(file), "%s.cu", m->name);
	cJSON_AddItemToObject(j, "source", m->nk ? cJSON_CreateString(file) : cJSON_CreateNull());
	snprintf(file, sizeof(file), "%s.ptx", m->name);
	cJSON_AddItemToObject(j, "ptx", m->nk ? cJSON_CreateString(file) : cJSON_CreateNull());
	snprintf(file, sizeof(file), "%s.py", m->name);
	cJSON_AddStringToObject(j, "module", file);
	cJSON_AddStringToObject(j, "ptx_arch", m->varch);
	cJSON_AddStringToObject(j, "nvrtc", m->nk ? m->gpu->nvrtc : "");
	cJSON_AddStringToObject(j, "tuned_on", m->gpu->ran ? m->gpu->device : "");
}

/* What every kernel takes, the kernels, and the generated GEMM's. */
static void desc_kernels(const struct emit *m, cJSON *j)
{
	cJSON_AddStringToObject(j, "params", "the data pointers of `args` (each a tensor of the op and an element offset into it), in "
					     "order; each symbol's value (int64); each symbol's division magic (uint64: m | l << 32, "
					     "l = ceil(log2 v), m = 2^32 (2^l - v) // v + 1)");
	cJSON *kj = cJSON_AddArrayToObject(j, "kernels");
	for (uint32_t i = 0; i < m->nk; i++)
		cJSON_AddItemToArray(kj, kernel_json(m->base, &m->k[i], m->entry[i], m->exact_at[i]));
	cJSON_AddItemToObject(j, "fallback", m->nk ? cJSON_CreateNumber(0) : cJSON_CreateNull());
	if (m->ge.n)
		cJSON_AddItemToObject(j, "generated", gen_json(&m->e, &m->ge, m->name));
}

/* Bucket i in the descriptor: its kernels, its fused plan (products (if
 * any) then the kernel; a product with cuBLASLt's epilogue; or the
 * generated GEMM, its kernel in "generated"), its tactic and timing. */
static cJSON *bucket_json(const struct emit *m, uint32_t i)
{
	const struct fs_emit_bucket *b = &m->b[i];
	const struct gen_emit *ge = &m->ge;
	cJSON *q = cJSON_CreateObject();
	char tname[32] = "products";
	if (m->nk)
		fs_tactic_name(&b->t, m->k[0].row, tname, sizeof(tname));
	cJSON_AddNumberToObject(q, "tokens", (double)b->tokens);
	if (m->nk)
		cJSON_AddNumberToObject(q, "kernel", m->of_bucket[i]);
	if (m->nk && m->exact_of[i] >= 0)
		cJSON_AddNumberToObject(q, "exact", m->exact_of[i]);
	cJSON_AddStringToObject(q, "plan", b->variant == 1 && m->e.pl.absorbs ? "epilogue"
					   : ge->n && ge->of_bucket[i] >= 0 ? "generated"
					   : m->nk			     ? "kernel"
									     : "products");
	if (ge->n && ge->of_bucket[i] >= 0)
		cJSON_AddNumberToObject(q, "generated", ge->of_bucket[i]);
	if (m->e.gemm && b->tuned && b->algos && b->algos->version)
		algos_json(b->algos, &m->e.pl, q);
	cJSON_AddStringToObject(q, "tactic", tname);
	cJSON_AddBoolToObject(q, "tuned", b->tuned);
	if (b->tuned)
		cJSON_AddNumberToObject(q, "median_ms", b->ms);
	/* the fused plan timed slower than the unfused chain here: the op still runs it (it is correct),
	 * but a deployment should leave these sites unfused at this size */
	if (b->tuned)
		cJSON_AddBoolToObject(q, "profitable", !b->slower);
	return q;
}

/* The descriptor (.json's text, a line), or NULL with r->text saying why. */
static char *descriptor(struct emit *m)
{
	char why[1024];
	cJSON *j = cJSON_CreateObject();
	desc_files(m, j);
	if (fs_emit_op_json(&m->e, m->nk ? &m->k[0] : NULL, j, &m->sig, why, sizeof(why))) {
		failed(m->r, "%s", why);
		cJSON_Delete(j);
		return NULL;
	}
	desc_kernels(m, j);
	if (m->o->emit_sites && sites_json(m->base, m->want, m->o, j, m->r)) {
		cJSON_Delete(j);
		return NULL;
	}
	/* a token count takes the smallest bucket at least as large (the largest past them all) */
	cJSON *bj = cJSON_AddArrayToObject(j, "buckets");
	for (uint32_t i = 0; i < m->n; i++)
		cJSON_AddItemToArray(bj, bucket_json(m, i));
	char *json = fs_json_print(j);
	cJSON_Delete(j);
	size_t jl = strlen(json);
	json = fs_xrealloc(json, jl + 2);
	json[jl] = '\n', json[jl + 1] = '\0';
	return json;
}

/* r->text: what was written, and the sizes where the op is slower than the chain. */
static void emitted_say(const struct emit *m)
{
	struct fs_emit_result *r = m->r;
	const char *dir = m->o->emit_dir, *name = m->name;
	uint32_t nk = m->nk, n = m->n, gn = m->ge.n, slower = 0;
	snprintf(r->name, sizeof(r->name), "%s", name);
	int at = snprintf(r->text, sizeof(r->text), "%s/%s.py (op fusescan::%s), .json%s: %u kernel%s for %u bucket%s%s", dir, name,
			  name, nk ? ", .ptx, .cu" : "", nk, nk == 1 ? "" : "s", n, n == 1 ? "" : "s",
			  m->e.gemm ? ", its products through cuBLASLt" : "");
	if (gn && at > 0 && (size_t)at < sizeof(r->text))
		at += snprintf(r->text + at, sizeof(r->text) - (size_t)at, ", the generated GEMM (%u tactic%s, .g*.ptx)", gn,
			       gn == 1 ? "" : "s");
	for (uint32_t i = 0; i < n && at > 0 && (size_t)at < sizeof(r->text); i++)
		if (m->b[i].slower)
			at += snprintf(r->text + at, sizeof(r->text) - (size_t)at, "%s%lld", slower++ ? ", " : "; slower than the unfused chain at ",
				       (long long)m->b[i].tokens);
	if (slower && at > 0 && (size_t)at < sizeof(r->text))
		snprintf(r->text + at, sizeof(r->text) - (size_t)at, " tokens (profitable: false): leave its sites unfused at those sizes");
}

/* DIR/NAME.cu, .ptx, each generated GEMM tactic's NAME.gT.ptx, .json and .py. */
static int write_all(const struct emit *m, const char *json, const char *py)
{
	const char *dir = m->o->emit_dir;
	if (m->nk && (write_one(m->r, dir, m->name, "cu", m->cu.s) || write_one(m->r, dir, m->name, "ptx", m->ptx)))
		return -1;
	for (uint32_t i = 0; i < m->ge.n; i++) {
		char stem[48];
		gen_file(m->name, m->ge.tactic[i], stem, sizeof(stem));
		if (write_one(m->r, dir, stem, "ptx", m->ge.ptx[i]))
			return -1;
	}
	return write_one(m->r, dir, m->name, "json", json) || write_one(m->r, dir, m->name, "py", py) ? -1 : 0;
}

/* The descriptor and the module, written; r->text says what, or why not. */
static void emit_files(struct emit *m)
{
	const struct fs_emit_sig *sig = &m->sig;
	char *json = descriptor(m), *py = NULL;
	if (json)
		py = module_text(m->name, sig->sig.s ? sig->sig.s : "", sig->args.s ? sig->args.s : "", sig->ret.s,
				 sig->doc.s ? sig->doc.s : "");
	if (json && !py)
		failed(m->r, "the module template is missing from the build");
	else if (json && write_all(m, json, py) == 0)
		emitted_say(m);
	free(json);
	free(py);
}

static void emit_release(struct emit *m)
{
	for (uint32_t i = 0; i < m->nk; i++)
		fs_kernel_release(&m->k[i]);
	gen_release(&m->ge);
	if (m->e.name)
		fs_emit_op_release(&m->e);
	free(m->ptx);
	free(m->want);
	free(m->cu.s);
	free(m->sig.sig.s), free(m->sig.args.s), free(m->sig.ret.s), free(m->sig.doc.s);
	fs_cuda_close(&m->c);
}

void fs_emit(const struct prog *base, const struct fs_emit_bucket *b, uint32_t n, const struct fs_site_opts *o,
	     const struct fs_gpu_result *gpu, struct fs_emit_result *r)
{
	struct emit m = {.base = base, .b = b, .n = n > FS_MAX_BUCKETS ? FS_MAX_BUCKETS : n, .o = o, .gpu = gpu, .r = r};
	fs_cuda_open(&m.c);
	if (!emit_open(&m) && !emit_kernels(&m) && !emit_gen(&m)) {
		emit_name(&m);
		if (!emit_ptx(&m))
			emit_files(&m);
	}
	emit_release(&m);
}
