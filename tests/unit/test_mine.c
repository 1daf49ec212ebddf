/*
 * test_mine.c: discovery on tiny hand-written graphs: the legality rules
 * (second consumer, graph output, side-effect users, no cycles, independent
 * siblings), signatures
 * (different wiring never collides, commutative swaps do not split), the
 * cost arithmetic and bindings, and the catalog and ad.log parsers.
 */
#include "fusescan/adlog.h"
#include "fusescan/catalog.h"
#include "fusescan/mine.h"
#include "harness.h"

#include <stdlib.h>
#include <string.h>

struct fix {
	struct fs_scan *s;
	struct fs_catalog cat;
	struct fs_mine *m;
	struct fs_diags d;
};

static const char CATALOG[] =
	"[rmsnorm]\nkind = norm\nchain = cast pow mean add rsqrt mul cast mul\n"
	"kernels = auto_deploy.torch_rmsnorm\n"
	"[add_rmsnorm]\nkind = multi_output\nchain = add cast pow mean add rsqrt mul cast mul\n"
	"kernels = auto_deploy.flashinfer_fused_add_rms_norm\ntransforms = fuse_add_rms_norm\n";

static void mine(struct fix *f, const char *text, const char *dims)
{
	f->s = fs_scan_new();
	fs_diags_init(&f->d);
	fs_scan_buffer(f->s, "t.txt", text, strlen(text));
	CHECK_EQ_U(f->s->diags.n_errors, 0);
	fs_catalog_init(&f->cat, f->s);
	CHECK_EQ_U(fs_catalog_parse(&f->cat, "cat.txt", CATALOG, strlen(CATALOG), &f->d), 0);
	struct fs_binding b[8];
	char why[200];
	int nb = dims ? fs_bind_parse(f->s, dims, b, 8, why, sizeof(why)) : 0;
	struct fs_mine_opts o = {&f->cat, b, nb > 0 ? (uint32_t)nb : 0};
	f->m = fs_mine_graph(f->s, f->s->modules[0].graph, &o);
}

static void done(struct fix *f)
{
	fs_mine_free(f->m);
	fs_catalog_release(&f->cat);
	fs_diags_release(&f->d);
	fs_scan_free(f->s);
}

/* "b,c" for the first instance of the candidate at rank k */
static const char *sites(struct fix *f, uint32_t k, char *buf, size_t n)
{
	const struct fs_region *r = &f->m->regions[f->m->cands[k].instances[0]];
	size_t len = 0;
	buf[0] = '\0';
	for (uint32_t i = 0; i < r->n_nodes; i++)
		len += (size_t)snprintf(buf + len, n - len, "%s%s", i ? "," : "",
					fs_scan_str(f->s, f->m->g->nodes[r->nodes[i]].name));
	return buf;
}

static const struct fs_candidate *by_name(struct fix *f, const char *name)
{
	for (uint32_t i = 0; i < f->m->n_cands; i++)
		if (!strcmp(f->m->cands[i].name, name))
			return &f->m->cands[i];
	return NULL;
}

#define X4 "4x8 : torch.float32"

static void t_second_consumer_stops_a_region(void)
{
	struct fix f;
	char buf[256];
	mine(&f, "%x : " X4 "\n%w : 8x8 : torch.float32\n"
		 "%a = aten.exp.default(%x : " X4 ") : " X4 "\n"
		 "%b = aten.neg.default(%a : " X4 ") : " X4 "\n"
		 "%c = aten.abs.default(%b : " X4 ") : " X4 "\n"
		 "%m1 = aten.mm.default(%c : " X4 ", %w : 8x8 : torch.float32) : " X4 "\n"
		 "%m2 = aten.mm.default(%a : " X4 ", %w : 8x8 : torch.float32) : " X4 "\n"
		 "output %m1, %m2\n", NULL);
	CHECK_EQ_U(f.m->n_cands, 1);
	CHECK_STR(sites(&f, 0, buf, sizeof(buf)), "b,c"); /* a is read by m2 too */
	done(&f);
}

static void t_graph_output_is_never_internal(void)
{
	struct fix f;
	char buf[256];
	mine(&f, "%x : " X4 "\n%w : 8x8 : torch.float32\n"
		 "%a = aten.exp.default(%x : " X4 ") : " X4 "\n"
		 "%b = aten.neg.default(%a : " X4 ") : " X4 "\n"
		 "%c = aten.abs.default(%b : " X4 ") : " X4 "\n"
		 "%d = aten.sqrt.default(%c : " X4 ") : " X4 "\n"
		 "%m = aten.mm.default(%d : " X4 ", %w : 8x8 : torch.float32) : " X4 "\n"
		 "output %m, %b\n", NULL);
	CHECK_EQ_U(f.m->n_cands, 2);
	for (uint32_t k = 0; k < f.m->n_cands; k++) {
		const char *s = sites(&f, k, buf, sizeof(buf));
		CHECK(!strcmp(s, "a,b") || !strcmp(s, "c,d")); /* b ends its region */
		const struct fs_region *r = &f.m->regions[f.m->cands[k].instances[0]];
		if (!strcmp(s, "a,b"))
			CHECK_STR(fs_scan_str(f.s, f.m->g->nodes[r->outputs[0]].name), "b");
	}
	done(&f);
}

static void t_side_effect_users_do_not_count(void)
{
	struct fix f;
	char buf[256];
	mine(&f, "%x : " X4 "\n%w : 8x8 : torch.float32\n"
		 "%a = aten.exp.default(%x : " X4 ") : " X4 "\n"
		 "%chk = aten._assert_tensor_metadata.default(%a : " X4 ") : ? : NoneType\n"
		 "%b = aten.neg.default(%a : " X4 ") : " X4 "\n"
		 "%m = aten.mm.default(%b : " X4 ", %w : 8x8 : torch.float32) : " X4 "\n"
		 "output %m\n", NULL);
	CHECK_EQ_U(f.m->n_cands, 1);
	CHECK_STR(sites(&f, 0, buf, sizeof(buf)), "a,b");
	done(&f);
}

/* Chains A and B read the GEMM output s and nothing else of each other:
 * siblings. Chain C reads s and A's output, so it cannot join them. */
static void t_siblings_are_independent(void)
{
	struct fix f;
	char buf[256];
	mine(&f, "%x : " X4 "\n%w : 8x8 : torch.float32\n"
		 "%s = aten.mm.default(%x : " X4 ", %w : 8x8 : torch.float32) : " X4 "\n"
		 "%a1 = aten.exp.default(%s : " X4 ") : " X4 "\n"
		 "%a2 = aten.neg.default(%a1 : " X4 ") : " X4 "\n"
		 "%b1 = aten.sin.default(%s : " X4 ") : " X4 "\n"
		 "%b2 = aten.abs.default(%b1 : " X4 ") : " X4 "\n"
		 "%c1 = aten.mul.Tensor(%s : " X4 ", %a2 : " X4 ") : " X4 "\n"
		 "%c2 = aten.neg.default(%c1 : " X4 ") : " X4 "\n"
		 "%ma = aten.mm.default(%a2 : " X4 ", %w : 8x8 : torch.float32) : " X4 "\n"
		 "%mb = aten.mm.default(%b2 : " X4 ", %w : 8x8 : torch.float32) : " X4 "\n"
		 "%mc = aten.mm.default(%c2 : " X4 ", %w : 8x8 : torch.float32) : " X4 "\n"
		 "output %ma, %mb, %mc\n", NULL);
	uint32_t found = 0;
	for (uint32_t k = 0; k < f.m->n_cands; k++) {
		if (f.m->cands[k].kind != FS_KIND_HORIZONTAL_ELEMENTWISE)
			continue;
		found++;
		CHECK_STR(sites(&f, k, buf, sizeof(buf)), "a1,a2,b1,b2");
		const struct fs_region *r = &f.m->regions[f.m->cands[k].instances[0]];
		CHECK_EQ_U(r->n_outputs, 2);
		CHECK_EQ_U(r->launches_saved, 1);
		CHECK(r->bytes_saved == 4 * 8 * 4); /* s read once instead of twice */
	}
	CHECK_EQ_U(found, 1);
	done(&f);
}

/* add -> RMSNorm, the add also read elsewhere; `between` goes after the add,
 * `scale` is the norm's weight operand. */
static char *norm_of_add(const char *between, const char *scale)
{
	static const char *const parts[] = {
		"%x : 4x8 : torch.bfloat16\n%y : 4x8 : torch.bfloat16\n%w : 8x8 : torch.bfloat16\n"
		"%add = aten.add.Tensor(%x : 4x8 : torch.bfloat16, %y : 4x8 : torch.bfloat16) : 4x8 : torch.bfloat16\n",
		NULL, /* between */
		"%t = aten.to.dtype(%add : 4x8 : torch.bfloat16, torch.float32) : 4x8 : torch.float32\n"
		"%p = aten.pow.Tensor_Scalar(%t : 4x8 : torch.float32, 2) : 4x8 : torch.float32\n"
		"%mean = aten.mean.dim(%p : 4x8 : torch.float32, [-1], True) : 4x1 : torch.float32\n"
		"%e = aten.add.Tensor(%mean : 4x1 : torch.float32, 1e-05) : 4x1 : torch.float32\n"
		"%r = aten.rsqrt.default(%e : 4x1 : torch.float32) : 4x1 : torch.float32\n"
		"%n = aten.mul.Tensor(%t : 4x8 : torch.float32, %r : 4x1 : torch.float32) : 4x8 : torch.float32\n"
		"%c = aten.to.dtype(%n : 4x8 : torch.float32, torch.bfloat16) : 4x8 : torch.bfloat16\n"
		"%out = aten.mul.Tensor(",
		NULL, /* scale */
		" : 8 : torch.bfloat16, %c : 4x8 : torch.bfloat16) : 4x8 : torch.bfloat16\n"
		"%m = aten.mm.default(%out : 4x8 : torch.bfloat16, %w : 8x8 : torch.bfloat16) : 4x8 : torch.bfloat16\n"
		"output %m, %res\n",
	};
	char *text = calloc(1, 4096);
	for (int i = 0; i < 5; i++)
		strcat(text, i == 1 ? between : i == 3 ? scale : parts[i]);
	return text;
}

static const char RES[] =
	"%res = aten.mm.default(%add : 4x8 : torch.bfloat16, %w : 8x8 : torch.bfloat16) : 4x8 : torch.bfloat16\n";

static void t_add_feeding_norm_is_multi_output(void)
{
	struct fix f;
	char *text = norm_of_add(RES, "%weight");
	mine(&f, text, NULL);
	const struct fs_candidate *norm = by_name(&f, "rmsnorm"), *mo = by_name(&f, "add_rmsnorm");
	CHECK(norm && norm->n_instances == 1);
	CHECK(mo && mo->n_instances == 1 && mo->kind == FS_KIND_MULTI_OUTPUT);
	CHECK(mo && (mo->risks & FS_RISK_MULTI_OUTPUT));
	done(&f);
	free(text);
}

static void t_no_cycle_through_outside(void)
{
	/* add -> mm (outside) -> the norm's scale: fusing the add into the norm
	 * would make the fused kernel wait for an mm that waits for it */
	struct fix f;
	char *text = norm_of_add(RES, "%res");
	mine(&f, text, NULL);
	CHECK(by_name(&f, "add_rmsnorm") == NULL);
	CHECK(by_name(&f, "rmsnorm") != NULL);
	done(&f);
	free(text);
}

static void t_signatures_follow_wiring(void)
{
	struct fix f;
	mine(&f, "%x : " X4 "\n%y : " X4 "\n%w : 8x8 : torch.float32\n"
		 /* A: x*y + x */
		 "%t1 = aten.mul.Tensor(%x : " X4 ", %y : " X4 ") : " X4 "\n"
		 "%o1 = aten.add.Tensor(%t1 : " X4 ", %x : " X4 ") : " X4 "\n"
		 "%m1 = aten.mm.default(%o1 : " X4 ", %w : 8x8 : torch.float32) : " X4 "\n"
		 /* B: same ops, x*y + (x*y): different wiring */
		 "%t2 = aten.mul.Tensor(%x : " X4 ", %y : " X4 ") : " X4 "\n"
		 "%o2 = aten.add.Tensor(%t2 : " X4 ", %t2 : " X4 ") : " X4 "\n"
		 "%m2 = aten.mm.default(%o2 : " X4 ", %w : 8x8 : torch.float32) : " X4 "\n"
		 /* C: A with commutative operands swapped: same structure */
		 "%t3 = aten.mul.Tensor(%y : " X4 ", %x : " X4 ") : " X4 "\n"
		 "%o3 = aten.add.Tensor(%x : " X4 ", %t3 : " X4 ") : " X4 "\n"
		 "%m3 = aten.mm.default(%o3 : " X4 ", %w : 8x8 : torch.float32) : " X4 "\n"
		 /* D: A with sub instead of add: different op */
		 "%t4 = aten.mul.Tensor(%x : " X4 ", %y : " X4 ") : " X4 "\n"
		 "%o4 = aten.sub.Tensor(%t4 : " X4 ", %x : " X4 ") : " X4 "\n"
		 "%m4 = aten.mm.default(%o4 : " X4 ", %w : 8x8 : torch.float32) : " X4 "\n"
		 "output %m1, %m2, %m3, %m4\n", NULL);
	uint32_t ones = 0, twos = 0;
	for (uint32_t i = 0; i < f.m->n_cands; i++) {
		if (f.m->cands[i].kind == FS_KIND_HORIZONTAL_GEMM)
			continue;
		ones += f.m->cands[i].n_instances == 1;
		twos += f.m->cands[i].n_instances == 2;
	}
	CHECK_EQ_U(twos, 1); /* A and C */
	CHECK_EQ_U(ones, 2); /* B, D */
	done(&f);
}

static void t_cost_arithmetic(void)
{
	struct fix f;
	/* a = exp(x) internal, written + read: 2 x 128 B; x read by exp and mul:
	 * one read saved, 128 B. s0 = 4: 4 x 8 x 4 B = 128 B. */
	mine(&f, "%x : s0x8 : torch.float32\n%w : 8x8 : torch.float32\n"
		 "%a = aten.exp.default(%x : s0x8 : torch.float32) : s0x8 : torch.float32\n"
		 "%b = aten.mul.Tensor(%a : s0x8 : torch.float32, %x : s0x8 : torch.float32) : s0x8 : torch.float32\n"
		 "%m = aten.mm.default(%b : s0x8 : torch.float32, %w : 8x8 : torch.float32) : s0x8 : torch.float32\n"
		 "output %m\n", "s0=4");
	CHECK_EQ_U(f.m->n_cands, 1);
	const struct fs_candidate *k = &f.m->cands[0];
	CHECK(k->cost_known);
	CHECK_EQ_U(k->bytes_per_instance, 384);
	CHECK_EQ_U(k->bytes_total, 384);
	CHECK_EQ_U(k->launches_per_instance, 1);
	CHECK(k->risks & FS_RISK_DYNAMIC);
	done(&f);
	/* unbound symbol: bytes unknown, launches still counted */
	mine(&f, "%x : s0x8 : torch.float32\n%w : 8x8 : torch.float32\n"
		 "%a = aten.exp.default(%x : s0x8 : torch.float32) : s0x8 : torch.float32\n"
		 "%b = aten.neg.default(%a : s0x8 : torch.float32) : s0x8 : torch.float32\n"
		 "%m = aten.mm.default(%b : s0x8 : torch.float32, %w : 8x8 : torch.float32) : s0x8 : torch.float32\n"
		 "output %m\n", NULL);
	CHECK(!f.m->cands[0].cost_known);
	CHECK_EQ_U(f.m->cands[0].launches_total, 1);
	done(&f);
}

static void t_bindings(void)
{
	struct fs_scan *s = fs_scan_new();
	const char *t = "%ids : s72xs70 : torch.int64\n%e = aten.abs.default(%ids : s72xs70 : torch.int64) : s72xs70 : torch.int64\noutput %e\n";
	fs_scan_buffer(s, "b.txt", t, strlen(t));
	struct fs_binding b[4];
	CHECK_EQ_U(fs_bind_default(s, s->modules[0].graph, 8192, b, 4), 2);
	CHECK_STR(fs_scan_str(s, b[0].sym), "s72");
	CHECK_EQ_U(b[0].value, 1);
	CHECK_STR(fs_scan_str(s, b[1].sym), "s70");
	CHECK_EQ_U(b[1].value, 8192);
	char why[200];
	CHECK(fs_bind_parse(s, "s72=2,s70=4096", b, 4, why, sizeof(why)) == 2);
	CHECK_EQ_U(b[1].value, 4096);
	CHECK(fs_bind_parse(s, "s72=2,s70", b, 4, why, sizeof(why)) == -1);
	CHECK_STR(why, "expected NAME=N at 's70'");
	CHECK(fs_bind_parse(s, "s72=x", b, 4, why, sizeof(why)) == -1);
	CHECK_STR(why, "expected a number after 's72=' at 'x'");
	CHECK(fs_bind_parse(s, "bogus=5", b, 4, why, sizeof(why)) == -1);
	CHECK_STR(why, "no dump has a symbolic dim named 'bogus'");
	CHECK(fs_bind_parse(s, "s70=5,s70=6", b, 4, why, sizeof(why)) == -1);
	CHECK_STR(why, "'s70' is bound twice");
	CHECK(fs_bind_parse(s, "s70=2147483648", b, 4, why, sizeof(why)) == -1);
	CHECK_STR(why, "s70=2147483648: a size is an integer from 1 to 2147483647");
	CHECK(fs_bind_parse(s, "s70=0", b, 4, why, sizeof(why)) == -1);
	CHECK(fs_bind_parse(s, "s70=99999999999999999999", b, 4, why, sizeof(why)) == -1);
	struct fs_type ty = {s->modules[0].graph->types[0].shape, FS_DT_BF16};
	struct fs_binding bb[2] = {{fs_strtab_find(&s->strs, "s72", 3), 2}, {fs_strtab_find(&s->strs, "s70", 3), 10}};
	CHECK(fs_type_bytes(s, &ty, bb, 2) == 40);
	CHECK(fs_type_bytes(s, &ty, bb, 1) == -1);
	fs_scan_free(s);
}

static int diag_has(const struct fs_diags *d, uint32_t line, uint32_t col, const char *text)
{
	for (uint32_t i = 0; i < d->n; i++)
		if (d->v[i].line == line && d->v[i].col == col && strstr(d->v[i].message, text))
			return 1;
	fs_diags_print(d, stderr);
	return 0;
}

static void t_catalog_parser(void)
{
	struct fs_scan *s = fs_scan_new();
	struct fs_catalog c;
	struct fs_diags d;
	fs_diags_init(&d);
	fs_catalog_init(&c, s);
	const char *bad = "kind = norm\n[a]\nkind = nrom\ncolour = red\n[a]\n[b c]\n[d\nnonsense\nchain =\n";
	CHECK_EQ_U(fs_catalog_parse(&c, "bad.txt", bad, strlen(bad), &d), 8);
	CHECK(diag_has(&d, 1, 1, "outside an entry"));
	CHECK(diag_has(&d, 3, 8, "unknown kind"));
	CHECK(diag_has(&d, 4, 1, "unknown key"));
	CHECK(diag_has(&d, 5, 2, "duplicate entry name"));
	CHECK(diag_has(&d, 6, 3, "letters, digits"));
	CHECK(diag_has(&d, 7, 2, "expected ']'"));
	CHECK(diag_has(&d, 8, 1, "expected '[name]'"));
	CHECK(diag_has(&d, 9, 8, "empty chain"));
	fs_catalog_release(&c);
	fs_diags_release(&d);
	fs_diags_init(&d);
	fs_catalog_init(&c, s);
	const char *good = "[rope]\nkind = attention_adjacent\nchain = mul slice slice neg cat mul add\n"
			   "[rkv]\nchain = unsqueeze expand reshape\n";
	CHECK_EQ_U(fs_catalog_parse(&c, "good.txt", good, strlen(good), &d), 0);
	CHECK_EQ_U(c.e[0].chains[0].n_ops, 5);   /* slices are required views */
	CHECK_EQ_U(c.e[0].chains[0].n_views, 2);
	CHECK_EQ_U(c.e[1].chains[0].n_ops, 1);   /* the output reshape counts */
	CHECK_STR(fs_scan_str(s, c.e[1].chains[0].ops[0]), "reshape");
	fs_catalog_release(&c);
	fs_diags_release(&d);
	fs_scan_free(s);
}

/* The keys that say what today's AutoDeploy tree has: reference ops, Python
 * wrappers, each transform's default, the literals a kernel takes, and what
 * an entry recommends (fs_catalog_pick) with and without a source tree. */
static void t_catalog_autodeploy_keys(void)
{
	struct fs_scan *s = fs_scan_new();
	struct fs_catalog c;
	struct fs_diags d;
	fs_diags_init(&d);
	fs_catalog_init(&c, s);
	const char *text = "[add_rmsnorm]\nkernels = auto_deploy.inplace_op\nwrappers = python.wrapper\n"
			   "reference = auto_deploy.torch_ref\ntransforms = on_one off_one:off gone:unlisted\n"
			   "literals = eps\nreturns = norm sum\n"
			   "[geglu]\nkernels = auto_deploy.tanh_op\ngelu = tanh\n"
			   "[layout]\ntransforms = t_layout\n"
			   "[bad]\ntransforms = x:maybe\nliterals = scale\nreturns = both\ngelu = erf\n";
	CHECK_EQ_U(fs_catalog_parse(&c, "ad.txt", text, strlen(text), &d), 4);
	CHECK(diag_has(&d, 14, 14, ":off or :unlisted"));
	CHECK(diag_has(&d, 15, 12, "the literals known are: eps"));
	CHECK(diag_has(&d, 16, 11, "'norm sum' or 'sum norm'"));
	CHECK(diag_has(&d, 17, 8, "gelu is 'tanh'"));
	const struct fs_catalog_entry *e = &c.e[0];
	CHECK(e->n_reference == 1 && e->n_wrappers == 1 && e->literals == FS_LIT_EPS && e->norm_first);
	CHECK(e->n_transforms == 3 && e->tdefault[0] == FS_TDEF_ON && e->tdefault[1] == FS_TDEF_OFF &&
	      e->tdefault[2] == FS_TDEF_UNLISTED);
	CHECK_STR(fs_scan_str(s, e->transforms[1]), "off_one");
	struct fs_adsetting st;
	CHECK(fs_catalog_tdefault(&c, e, 1, &st) == FS_TDEF_OFF && st.layer == UINT32_MAX);
	uint32_t w;
	CHECK_STR(fs_scan_str(s, fs_catalog_pick(&c, e, &w)), "auto_deploy.inplace_op"); /* no tree: the catalog's */
	CHECK_STR(fs_scan_str(s, w), "python.wrapper");
	CHECK_STR(fs_scan_str(s, fs_catalog_pick(&c, &c.e[2], &w)), "t_layout"); /* no ops: its transform */
	c.gelu = FS_GELU_ERF; /* the user's GELU is exact: a tanh kernel is not it */
	CHECK(fs_catalog_pick(&c, &c.e[1], &w) == 0);
	c.gelu = FS_GELU_TANH;
	CHECK_STR(fs_scan_str(s, fs_catalog_pick(&c, &c.e[1], &w)), "auto_deploy.tanh_op");
	/* a tree that registers the wrapper's op under another name: nothing usable */
	const char *py = "import torch\n\n\n@torch.library.custom_op(\n    \"auto_deploy::other\", mutates_args=())\n"
			 "def other(x):\n    return x\n\n\ndef wrapper(x):\n    torch.ops.auto_deploy.inplace_op(x)\n";
	fs_srctree_index_text(&c, "t/wrap.py", py, strlen(py));
	fs_catalog_add_evidence(&c, "t/ops.py", 5, "auto_deploy::other", NULL);
	c.files_indexed = 2;
	CHECK(fs_catalog_registered(&c, e->wrappers[0]) == -1); /* calls an op the tree does not register */
	CHECK(fs_catalog_pick(&c, e, &w) == 0);
	fs_catalog_add_evidence(&c, "t/ops.py", 9, "auto_deploy::inplace_op", NULL);
	CHECK(fs_catalog_registered(&c, e->wrappers[0]) >= 0);
	CHECK(fs_catalog_pick(&c, e, &w) == e->kernels[0] && w == e->wrappers[0]);
	const char *yaml = "transforms:\n  on_one:\n    stage: x\n  off_one:\n    stage: y\n    enabled: false # oom\n"
			   "other:\n  gone:\n    enabled: false\n";
	c.cfg = fs_xmalloc(sizeof(*c.cfg));
	fs_adconfig_init(c.cfg);
	CHECK(fs_adconfig_add_text(c.cfg, "t/config/default.yaml", yaml, strlen(yaml), FS_LAYER_DEFAULT, &d) == 0);
	fs_adconfig_merge(c.cfg);
	CHECK(fs_catalog_tdefault(&c, e, 0, &st) == FS_TDEF_ON && st.layer == 0 && st.line == 2 && st.enabled == -1);
	CHECK(fs_catalog_tdefault(&c, e, 1, &st) == FS_TDEF_OFF && st.line == 6 && st.why && !strcmp(st.why, "oom"));
	CHECK_STR(fs_catalog_off_reason(&c, e, 1, &st, FS_TDEF_OFF), "oom");
	CHECK(fs_catalog_tdefault(&c, e, 2, &st) == FS_TDEF_UNLISTED && st.layer == UINT32_MAX); /* not under transforms: */
	fs_catalog_release(&c);
	fs_diags_release(&d);
	fs_scan_free(s);
}

static void t_adlog_parser(void)
{
	struct fs_adlog l;
	struct fs_diags d;
	fs_adlog_init(&l);
	fs_diags_init(&d);
	const char *log =
		/* today: the transform's own lines, then its summary */
		"[11/21/2026-10:00:00] [TRT-LLM AUTO-DEPLOY] [RANK 0] [I] [stage=pattern_matcher, transform=match_rmsnorm_pattern] [PRE-CLEANUP] skipped (graph already clean)\n"
		"[11/21/2026-10:00:00] [TRT-LLM AUTO-DEPLOY] [RANK 0] [I] [stage=pattern_matcher, transform=match_rmsnorm_pattern] [APPLY] applying transform...\n"
		"[11/21/2026-10:00:00] [TRT-LLM AUTO-DEPLOY] [RANK 0] [I] [stage=pattern_matcher, transform=match_rmsnorm_pattern] [SUMMARY] matches=65 | time: 0.1s\r\n"
		"noise line\n"
		"[I] [stage=post_load_fusion, transform=fuse_add_rms_norm] [SUMMARY] disabled\n"
		/* colours on, and a progress bar redrawn with '\r' before a log line */
		"50%|###  | 1/2\r100%|#####| 2/2\r[I] [stage=compile, transform=compile_model] \x1b[32m[SUMMARY]\x1b[0m \x1b[2mskipped\x1b[0m | time: 0.002s\n"
		/* the older forms: brackets and key=value, then without brackets */
		"[stage=sharding, transform=detect_sharding] enabled=True, num_matches=3, is_clean=False, has_valid_shapes=True\n"
		"[stage=sharding, transform=detect_sharding] elapsed time: total=0.1s, pre_cleanup=0.0s, apply=0.1s, post_cleanup=0.0s\n"
		"[stage=sharding, transform=old_off] enabled=False, skipped=True, is_clean=False, has_valid_shapes=False\n"
		"[I] stage=export, transform=oldest, num_matches=7, is_clean=False, has_valid_shapes=False\n"
		"[I] stage=export, transform=oldest_off, skipped=True, is_clean=False, has_valid_shapes=False\n"
		/* another rank: not the one that dumps */
		"[RANK 1] [I] [stage=pattern_matcher, transform=match_rmsnorm_pattern] [SUMMARY] matches=64 | time: 0.1s\n"
		/* summaries that cannot be read: warnings at their column */
		"[I] [stage=x, transform=broken] [SUMMARY] ???\n"
		"[I] [SUMMARY] matches=3\n"
		"[I] stage=x, transform=huge, num_matches=99999999999999999999\n"
		"[I] [stage=x, transform=cut] [APPLY] applying transform...\n";
	CHECK_EQ_U(fs_adlog_parse(&l, "ad.log", log, strlen(log), &d), 4);
	CHECK(diag_has(&d, 13, 43, "unreadable [SUMMARY]"));
	CHECK(diag_has(&d, 14, 5, "without [stage=S, transform=T]"));
	CHECK(diag_has(&d, 15, 42, "num_matches is not a count"));
	CHECK(diag_has(&d, 16, 0, "the log ends inside transform cut"));
	const struct fs_adlog_entry *e = fs_adlog_find(&l, "match_rmsnorm_pattern");
	CHECK(e && e->status == FS_AD_MATCHES && e->matches == 65 && e->line == 3 && e->rank == 0);
	CHECK(e && !strcmp(e->stage, "pattern_matcher") && e->n_detail == 2);
	e = fs_adlog_find(&l, "fuse_add_rms_norm");
	CHECK(e && e->status == FS_AD_DISABLED && e->rank == -1);
	e = fs_adlog_find(&l, "compile_model");
	CHECK(e && e->status == FS_AD_SKIPPED && e->line == 6);
	e = fs_adlog_find(&l, "detect_sharding");
	CHECK(e && e->status == FS_AD_MATCHES && e->matches == 3 && e->n_detail == 1);
	e = fs_adlog_find(&l, "old_off");
	CHECK(e && e->status == FS_AD_DISABLED);
	e = fs_adlog_find(&l, "oldest");
	CHECK(e && e->status == FS_AD_MATCHES && e->matches == 7 && !strcmp(e->stage, "export"));
	e = fs_adlog_find(&l, "oldest_off");
	CHECK(e && e->status == FS_AD_SKIPPED);
	e = fs_adlog_find(&l, "cut");
	CHECK(e && e->status == FS_AD_RAN && e->n_detail == 1 && e->line == 16);
	CHECK(fs_adlog_find(&l, "broken") == NULL && fs_adlog_find(&l, "nothing") == NULL);
	CHECK_EQ_U(l.n_other, 3); /* noise line and two progress-bar redraws */
	CHECK_EQ_U(l.n_detail, 4);
	fs_adlog_release(&l);
	fs_diags_release(&d);
}

#define TESTS(X)                               \
	X(t_second_consumer_stops_a_region)    \
	X(t_graph_output_is_never_internal)    \
	X(t_side_effect_users_do_not_count)    \
	X(t_add_feeding_norm_is_multi_output)  \
	X(t_no_cycle_through_outside)          \
	X(t_siblings_are_independent)          \
	X(t_signatures_follow_wiring)          \
	X(t_cost_arithmetic)                   \
	X(t_bindings)                          \
	X(t_catalog_parser)                    \
	X(t_catalog_autodeploy_keys)           \
	X(t_adlog_parser)

FS_TEST_MAIN()
