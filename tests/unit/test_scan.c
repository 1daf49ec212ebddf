/*
 * test_scan.c: the dump parser and graph IR, one test per fact or quirk of
 * the format (REFERENCE.md section 1), on tiny hand-written dumps.
 */
#include "fusescan/scan.h"
#include "harness.h"

#include <stdlib.h>
#include <string.h>

static struct fs_scan *parse(const char *name, const char *text)
{
	struct fs_scan *s = fs_scan_new();
	fs_scan_buffer(s, name, text, strlen(text));
	return s;
}

static const struct fs_graph *graph0(const struct fs_scan *s)
{
	return s->n_modules ? s->modules[0].graph : NULL;
}

static const struct fs_node *node(const struct fs_scan *s, const struct fs_graph *g, const char *name)
{
	for (uint32_t i = 0; i < g->n_nodes; i++)
		if (!strcmp(fs_scan_str(s, g->nodes[i].name), name))
			return &g->nodes[i];
	return NULL;
}

static uint32_t node_index(const struct fs_scan *s, const struct fs_graph *g, const char *name)
{
	const struct fs_node *n = node(s, g, name);
	return n ? (uint32_t)(n - g->nodes) : UINT32_MAX;
}

static const char *op_target(const struct fs_scan *s, const struct fs_node *n)
{
	return fs_scan_str(s, s->ops[n->op].target);
}

static const char *shape_text(const struct fs_scan *s, const struct fs_graph *g, const struct fs_node *n, int k)
{
	return fs_scan_str(s, s->types.shapes[g->types[n->out + k].shape].text);
}

static int has_error(const struct fs_scan *s, uint32_t line, uint32_t col, const char *needle)
{
	for (uint32_t i = 0; i < s->diags.n; i++) {
		const struct fs_diag *d = &s->diags.v[i];
		if (d->severity == FS_ERROR && d->line == line && (!col || d->col == col) &&
		    strstr(d->message, needle))
			return 1;
	}
	fprintf(stderr, "  expected error at %u:%u containing '%s'; got:\n", line, col, needle);
	fs_diags_print(&s->diags, stderr);
	return 0;
}

static const char HEADER[] =
	"# Transform: match_rmsnorm_pattern\n"
	"# Stage: pattern_matcher\n"
	"# GraphModules found: 1\n\n\n"
	"================================================================================\n"
	"# GraphModule: (root)\n"
	"================================================================================\n\n";

static void t_header_and_sections(void)
{
	char buf[2048];
	snprintf(buf, sizeof(buf), "%s%s", HEADER,
		 "%x : 2x8 : torch.float16\n"
		 "%add = aten.add.Tensor(%x : 2x8 : torch.float16, 1) : 2x8 : torch.float16\n"
		 "output %add\n");
	struct fs_scan *s = parse("015_pattern_matcher_match_rmsnorm_pattern.txt", buf);
	CHECK_EQ_U(s->diags.n_errors, 0);
	const struct fs_dumpfile *f = &s->files[0];
	CHECK_STR(fs_scan_str(s, f->stage), "pattern_matcher");
	CHECK_STR(fs_scan_str(s, f->transform), "match_rmsnorm_pattern");
	CHECK_EQ_U(f->number, 15);
	CHECK_EQ_U(f->declared_modules, 1);
	CHECK_EQ_U(s->n_modules, 1);
	CHECK_STR(fs_scan_str(s, s->modules[0].name), "(root)");
	const struct fs_graph *g = graph0(s);
	CHECK_EQ_U(g->n_calls, 1);
	CHECK_EQ_U(g->n_placeholders, 1);
	CHECK_EQ_U(g->n_outputs, 1);
	CHECK(node(s, g, "add")->flags & FS_NODE_OUTPUT);
	CHECK_EQ_U(node(s, g, "add")->line, 11);
	fs_scan_free(s);
}

static void t_stage_from_file_name(void)
{
	/* stage names contain '_': split against the known stage list */
	struct fs_scan *s = parse("028_post_load_fusion_fuse_rmsnorm.txt", "%x : 4 : torch.float32\noutput %x\n");
	CHECK_STR(fs_scan_str(s, s->files[0].stage), "post_load_fusion");
	CHECK_STR(fs_scan_str(s, s->files[0].transform), "fuse_rmsnorm");
	fs_scan_free(s);
	s = parse("1042_cache_init_insert_cached_attention.txt", "%x : 4 : torch.float32\noutput %x\n");
	CHECK_EQ_U(s->files[0].number, 1042);
	CHECK_STR(fs_scan_str(s, s->files[0].stage), "cache_init");
	CHECK_STR(fs_scan_str(s, s->files[0].transform), "insert_cached_attention");
	fs_scan_free(s);
}

static void t_older_formats(void)
{
	/* no '# GraphModules found', no '=' sections: one implicit root module */
	struct fs_scan *s = parse("a.txt",
				  "# Transform: t\n# Stage: export\n\n"
				  "%x : 2x8 : torch.float16\n"
				  "%neg = aten.neg.default(%x : 2x8 : torch.float16) : 2x8 : torch.float16\n"
				  "output %neg\n");
	CHECK_EQ_U(s->diags.n_errors, 0);
	CHECK_EQ_U(s->n_modules, 1);
	CHECK_STR(fs_scan_str(s, s->modules[0].name), "(root)");
	CHECK_EQ_U(graph0(s)->n_calls, 1);
	fs_scan_free(s);
	/* oldest: dtypes only, no shapes */
	s = parse("b.txt", "%x : torch.float16\n%out = aten.add.Tensor(%x, %x, 1) : torch.float16\noutput %out\n");
	CHECK_EQ_U(s->diags.n_errors, 0);
	const struct fs_graph *g = graph0(s);
	const struct fs_node *out = node(s, g, "out");
	CHECK_EQ_U(g->types[out->out].dtype, FS_DT_F16);
	CHECK_EQ_U(g->types[out->out].shape, 0);
	CHECK_EQ_U(g->nodes[node_index(s, g, "x")].n_users, 1); /* add(x, x): one user */
	fs_scan_free(s);
}

static void t_target_forms(void)
{
	struct fs_scan *s = parse("t.txt",
		"%x : 4x8 : torch.bfloat16\n"
		"%a = aten.add.Tensor(%x : 4x8 : torch.bfloat16, 1) : 4x8 : torch.bfloat16\n"
		"%b = aten.transpose(%a : 4x8 : torch.bfloat16, 0, 1) : 8x4 : torch.bfloat16\n"
		"%c = auto_deploy.torch_rmsnorm.default(%b : 8x4 : torch.bfloat16, %w : 4 : torch.bfloat16, 1e-05) : 8x4 : torch.bfloat16\n"
		"%d = dist.trtllm_fused_allreduce_residual_rmsnorm.default(%c : 8x4 : torch.bfloat16) : 8x4 : torch.bfloat16\n"
		"%e = <built-in function getitem>(%t : ? : tuple, 0) : 8x4 : torch.bfloat16\n"
		"%f = <built-in method narrow of type object at 0x7f00deadbeef>(%d : 8x4 : torch.bfloat16, -1, 0, 2) : 8x2 : torch.bfloat16\n"
		"%g = <function f.<locals>.g at 0x7f0012345678>(%f : 8x2 : torch.bfloat16) : 8x2 : torch.bfloat16\n"
		"%h = _guards_fn(%x : 4x8 : torch.bfloat16) : ? : N/A\n"
		"%i = contiguous(%g : 8x2 : torch.bfloat16) : 8x2 : torch.bfloat16\n"
		"%j = model.layers.0.mlp(%i : 8x2 : torch.bfloat16) : 8x2 : torch.bfloat16\n"
		"%k = trtllm.noaux_tc_op.default(%j : 8x2 : torch.bfloat16) : 8x2 : torch.bfloat16\n"
		"output %k\n");
	CHECK_EQ_U(s->diags.n_errors, 0);
	const struct fs_graph *g = graph0(s);
	struct { const char *node, *target, *ns, *name, *ov; enum fs_op_class cls; } want[] = {
		{"a", "aten.add.Tensor", "aten", "add", "Tensor", FS_OPC_ELEMENTWISE},
		{"b", "aten.transpose", "aten", "transpose", "", FS_OPC_VIEW},
		{"c", "auto_deploy.torch_rmsnorm.default", "auto_deploy", "torch_rmsnorm", "default", FS_OPC_FUSED},
		{"d", "dist.trtllm_fused_allreduce_residual_rmsnorm.default", "dist",
		 "trtllm_fused_allreduce_residual_rmsnorm", "default", FS_OPC_COLLECTIVE},
		{"e", "<built-in function getitem>", "builtins", "getitem", "", FS_OPC_VIEW},
		{"f", "<built-in method narrow of type object at 0x7f00deadbeef>", "builtins", "narrow", "", FS_OPC_VIEW},
		{"g", "<function f.<locals>.g at 0x7f0012345678>", "python", "f.<locals>.g", "", FS_OPC_UNKNOWN},
		{"h", "_guards_fn", "", "_guards_fn", "", FS_OPC_SIDE_EFFECT},
		{"i", "contiguous", "", "contiguous", "", FS_OPC_VIEW},
		{"j", "model.layers.0.mlp", "", "model.layers.0.mlp", "", FS_OPC_UNKNOWN},
		{"k", "trtllm.noaux_tc_op.default", "trtllm", "noaux_tc_op", "default", FS_OPC_FUSED},
	};
	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		const struct fs_node *n = node(s, g, want[i].node);
		CHECK(n != NULL);
		if (!n)
			continue;
		const struct fs_op *op = &s->ops[n->op];
		CHECK_STR(op_target(s, n), want[i].target);
		CHECK_STR(fs_scan_str(s, op->ns), want[i].ns);
		CHECK_STR(fs_scan_str(s, op->name), want[i].name);
		CHECK_STR(fs_scan_str(s, op->overload), want[i].ov);
		CHECK_EQ_U(op->cls, want[i].cls);
	}
	/* same target text -> same interned op */
	CHECK_EQ_U(node(s, g, "c")->op, node(s, g, "c")->op);
	fs_scan_free(s);
}

static void t_nested_lists_and_bare_names(void)
{
	struct fs_scan *s = parse("l.txt",
		"%x : s72xs70x64 : torch.bfloat16\n"
		"%sym_size_int_12 = aten.sym_size.int(%x : s72xs70x64 : torch.bfloat16, 0) : ? : SymInt\n"
		"%neg_2 = aten.neg.default(%x : s72xs70x64 : torch.bfloat16) : s72xs70x64 : torch.bfloat16\n"
		"%cat = aten.cat.default([neg_2, x], -1) : s72xs70x128 : torch.bfloat16\n"
		"%view = aten.view.default(%cat : s72xs70x128 : torch.bfloat16, [sym_size_int_12, -1, [2, (3, 'a,b]')]]) : ? : torch.bfloat16\n"
		"output (%view,)\n");
	CHECK_EQ_U(s->diags.n_errors, 0);
	const struct fs_graph *g = graph0(s);
	uint32_t x = node_index(s, g, "x"), neg = node_index(s, g, "neg_2"), cat = node_index(s, g, "cat");
	const struct fs_node *c = &g->nodes[cat];
	CHECK_EQ_U(c->n_top, 2);
	CHECK_EQ_U(g->args[c->args].kind, FS_ARG_LIST);
	CHECK_EQ_U(g->args[c->args].span, 3);
	CHECK_EQ_U(g->args[c->args + 1].node, neg);
	CHECK_EQ_U(g->args[c->args + 2].node, x);
	CHECK_EQ_U(g->args[c->args + 3].kind, FS_ARG_INT);
	CHECK_EQ_U(g->args[c->args + 3].i, (uint64_t)-1);
	CHECK_EQ_U(g->nodes[neg].n_users, 1);
	CHECK_EQ_U(g->users[g->nodes[neg].users], cat);
	CHECK_EQ_U(g->nodes[x].n_users, 3); /* sym_size, neg, cat */
	const struct fs_node *v = node(s, g, "view");
	CHECK_EQ_U(g->args[v->args + 2].node, node_index(s, g, "sym_size_int_12"));
	/* [sym, -1, [2, (3, 'a,b]')]]: list(3) + sym + -1 + list(2) + 2 + tuple(2) + 3 + str */
	CHECK_EQ_U(g->args[v->args + 1].span, 8);
	CHECK_EQ_U(g->args[v->args + 8].kind, FS_ARG_STR);
	CHECK_STR(fs_scan_str(s, g->args[v->args + 8].text), "a,b]");
	CHECK(g->nodes[node_index(s, g, "view")].flags & FS_NODE_OUTPUT);
	CHECK_EQ_U(g->n_externs, 0);
	fs_scan_free(s);
}

static void t_literals(void)
{
	struct fs_scan *s = parse("lit.txt",
		"%x : 2x8 : torch.float16\n"
		"%a = aten.f.default(%x : 2x8 : torch.float16, 1, -1, 1e-06, 1.0, True, None, torch.float32, meta, cuda:0, bsnd, 9223372036854775807, -inf, [False, 'q', \"r\"]) : 2x8 : torch.float16\n"
		"output %a\n");
	CHECK_EQ_U(s->diags.n_errors, 0);
	const struct fs_graph *g = graph0(s);
	const struct fs_node *n = node(s, g, "a");
	const struct fs_arg *a = &g->args[n->args];
	CHECK_EQ_U(n->n_top, 14);
	CHECK_EQ_U(a[1].kind, FS_ARG_INT);
	CHECK_EQ_U(a[1].i, 1);
	CHECK_EQ_U(a[2].i, (uint64_t)-1);
	CHECK_EQ_U(a[3].kind, FS_ARG_FLOAT);
	CHECK(a[3].f == 1e-06);
	CHECK_STR(fs_scan_str(s, a[3].text), "1e-06");
	CHECK_EQ_U(a[4].kind, FS_ARG_FLOAT);
	CHECK_EQ_U(a[5].kind, FS_ARG_BOOL);
	CHECK_EQ_U(a[5].i, 1);
	CHECK_EQ_U(a[6].kind, FS_ARG_NONE);
	CHECK_EQ_U(a[7].kind, FS_ARG_DTYPE);
	CHECK_EQ_U(a[7].type.dtype, FS_DT_F32);
	CHECK_EQ_U(a[8].kind, FS_ARG_STR);
	CHECK_STR(fs_scan_str(s, a[9].text), "cuda:0");
	CHECK_STR(fs_scan_str(s, a[10].text), "bsnd");
	CHECK_EQ_U(a[11].kind, FS_ARG_INT);
	CHECK_EQ_U(a[11].i, 9223372036854775807ull);
	CHECK_EQ_U(a[12].kind, FS_ARG_FLOAT);
	CHECK_EQ_U(a[13].kind, FS_ARG_LIST);
	CHECK_EQ_U(a[14].kind, FS_ARG_BOOL);
	CHECK_STR(fs_scan_str(s, a[15].text), "q");
	CHECK_STR(fs_scan_str(s, a[16].text), "r");
	fs_scan_free(s);
}

static void t_symbolic_shapes(void)
{
	struct fs_scan *s = parse("sym.txt",
		"%x : s72xs70 + 1 : torch.int64\n"
		"%a = aten.view.default(%x : s72xs70 + 1 : torch.int64, [-1]) : s70*s72x256 : torch.int64\n"
		"%b = aten.view.default(%a : s70*s72x256 : torch.int64, [-1]) : 2*s70*s72 : torch.int64\n"
		"%c = aten.view.default(%b : 2*s70*s72 : torch.int64, [-1]) : 4x(s70 + 1)//2 : torch.int64\n"
		"%d = aten.view.default(%c : 4x(s70 + 1)//2 : torch.int64, [-1]) : Max(1, s70)x8 : torch.int64\n"
		"%e = aten.sum.default(%d : Max(1, s70)x8 : torch.int64) : scalar : torch.int64\n"
		"%f = aten.view.default(%d : Max(1, s70)x8 : torch.int64, [-1]) : s70 + Mod(64 - Mod(s70, 64), 64)xMin(s72, 2)xsqrt(s70) : torch.int64\n"
		"output %e\n");
	CHECK_EQ_U(s->diags.n_errors, 0);
	const struct fs_graph *g = graph0(s);
	uint32_t s70 = fs_strtab_find(&s->strs, "s70", 3), s72 = fs_strtab_find(&s->strs, "s72", 3);
	struct fs_binding b[] = {{s70, 7}, {s72, 3}};
	int64_t v;
	const struct fs_shape *sh = fs_scan_shape(s, g->types[node(s, g, "x")->out].shape);
	CHECK_EQ_U(sh->rank, 2);
	CHECK(sh->symbolic);
	CHECK(fs_dim_eval(&s->types, &s->types.dims[sh->dims + 1], b, 2, &v) == 0 && v == 8);
	CHECK_STR(shape_text(s, g, node(s, g, "a"), 0), "s70*s72x256");
	sh = fs_scan_shape(s, g->types[node(s, g, "a")->out].shape);
	CHECK_EQ_U(sh->rank, 2);
	CHECK(fs_dim_eval(&s->types, &s->types.dims[sh->dims], b, 2, &v) == 0 && v == 21);
	CHECK(fs_dim_eval(&s->types, &s->types.dims[sh->dims + 1], NULL, 0, &v) == 0 && v == 256);
	CHECK(fs_dim_eval(&s->types, &s->types.dims[sh->dims], b, 1, &v) == -1); /* s72 unbound */
	sh = fs_scan_shape(s, g->types[node(s, g, "b")->out].shape);
	CHECK_EQ_U(sh->rank, 1);
	CHECK(fs_dim_eval(&s->types, &s->types.dims[sh->dims], b, 2, &v) == 0 && v == 42);
	sh = fs_scan_shape(s, g->types[node(s, g, "c")->out].shape);
	CHECK_EQ_U(sh->rank, 2);
	CHECK(fs_dim_eval(&s->types, &s->types.dims[sh->dims + 1], b, 2, &v) == 0 && v == 4);
	sh = fs_scan_shape(s, g->types[node(s, g, "d")->out].shape);
	CHECK_EQ_U(sh->rank, 2);
	CHECK(fs_dim_eval(&s->types, &s->types.dims[sh->dims], b, 2, &v) == 0 && v == 7); /* sympy's Max */
	CHECK_STR(fs_scan_str(s, s->types.dims[sh->dims].text), "Max(1, s70)");
	sh = fs_scan_shape(s, g->types[node(s, g, "f")->out].shape);
	CHECK_EQ_U(sh->rank, 3);
	CHECK(fs_dim_eval(&s->types, &s->types.dims[sh->dims], b, 2, &v) == 0 && v == 64); /* 7 padded to 64 */
	CHECK(fs_dim_eval(&s->types, &s->types.dims[sh->dims + 1], b, 2, &v) == 0 && v == 2);
	CHECK(s->types.dims[sh->dims + 2].expr == FS_DIM_OPAQUE); /* a function the grammar does not know */
	sh = fs_scan_shape(s, g->types[node(s, g, "e")->out].shape);
	CHECK_EQ_U(sh->kind, FS_SHAPE_SCALAR);
	/* shapes are interned: the same text is one shape */
	CHECK_EQ_U(g->types[node(s, g, "a")->out].shape, g->args[node(s, g, "b")->args].type.shape);
	fs_scan_free(s);
}

/* one dim's text of n copies of `unit` joined by `sep`, inside `depth` parentheses */
static char *dim_text(const char *unit, const char *sep, uint32_t n, uint32_t depth)
{
	size_t k = 0, cap = 2 * depth + n * (strlen(unit) + strlen(sep)) + 1;
	char *t = malloc(cap);
	for (uint32_t i = 0; i < depth; i++)
		t[k++] = '(';
	for (uint32_t i = 0; i < n; i++)
		k += (size_t)snprintf(t + k, cap - k, "%s%s", i ? sep : "", unit);
	for (uint32_t i = 0; i < depth; i++)
		t[k++] = ')';
	t[k] = '\0';
	return t;
}

/* the expression parser and the evaluator recurse: dims nested past 64 levels
 * or of more than 256 terms stay text (opaque); within the bounds they are
 * read, and products that leave 64 bits are not evaluated */
static void t_shape_bounds(void)
{
	struct { const char *unit, *sep; uint32_t n, depth; int opaque; } v[] = {
		{"s70", "", 1, 64, 0},    {"s70", "", 1, 65, 1},     {"s70", "", 1, 100000, 1},
		{"s70", "*", 128, 0, 0},  {"s70", "*", 100000, 0, 1}, {"-s70", "", 1, 0, 0},
		{"Max(1, s70)", "+", 60, 0, 0},
	};
	for (size_t i = 0; i < sizeof(v) / sizeof(v[0]); i++) {
		char *d = dim_text(v[i].unit, v[i].sep, v[i].n, v[i].depth);
		size_t n = strlen(d) + 64;
		char *text = malloc(n);
		snprintf(text, n, "%%x : %sx4 : torch.float32\noutput %%x\n", d);
		struct fs_scan *s = parse("bounds.txt", text);
		const struct fs_shape *sh = fs_scan_shape(s, graph0(s)->types[0].shape);
		CHECK_EQ_U(sh->rank, 2);
		CHECK((s->types.dims[sh->dims].expr == FS_DIM_OPAQUE) == v[i].opaque);
		struct fs_binding b[] = {{fs_strtab_find(&s->strs, "s70", 3), 2}, {fs_strtab_find(&s->strs, "s70", 3), INT32_MAX}};
		int64_t got;
		if (!v[i].opaque && v[i].sep[0] == '*') {
			CHECK(fs_dim_eval(&s->types, &s->types.dims[sh->dims], b, 1, &got) == -1); /* 2^128 */
			CHECK(fs_dim_eval(&s->types, &s->types.dims[sh->dims], b + 1, 1, &got) == -1);
		}
		fs_scan_free(s);
		free(text);
		free(d);
	}
}

static void t_floordiv_and_negative(void)
{
	struct fs_scan *s = parse("fd.txt", "%x : (s0 - 9)//4x-(s1)x(2*(s0 + 3))xMod(s0 - 9, 4) : torch.int64\noutput %x\n");
	CHECK_EQ_U(s->diags.n_errors, 0);
	const struct fs_graph *g = graph0(s);
	const struct fs_shape *sh = fs_scan_shape(s, g->types[g->nodes[0].out].shape);
	uint32_t s0 = fs_strtab_find(&s->strs, "s0", 2), s1 = fs_strtab_find(&s->strs, "s1", 2);
	struct fs_binding b[] = {{s0, 2}, {s1, 5}};
	int64_t v;
	CHECK_EQ_U(sh->rank, 4);
	CHECK(fs_dim_eval(&s->types, &s->types.dims[sh->dims], b, 2, &v) == 0 && v == -2); /* -7//4 */
	CHECK(fs_dim_eval(&s->types, &s->types.dims[sh->dims + 1], b, 2, &v) == 0 && v == -5);
	CHECK(fs_dim_eval(&s->types, &s->types.dims[sh->dims + 2], b, 2, &v) == 0 && v == 10);
	CHECK(fs_dim_eval(&s->types, &s->types.dims[sh->dims + 3], b, 2, &v) == 0 && v == 1); /* sympy: Mod(-7, 4) = 1 */
	fs_scan_free(s);
}

static void t_multi_output(void)
{
	struct fs_scan *s = parse("mo.txt",
		"%q : 2x4x8 : torch.bfloat16\n"
		"%r = auto_deploy.flashinfer_rope.default(%q : 2x4x8 : torch.bfloat16, %q : 2x4x8 : torch.bfloat16, 1) : (2x4x8, 2x4x8) : (torch.bfloat16, torch.bfloat16)\n"
		"%v = aten.var_mean.correction(%q : 2x4x8 : torch.bfloat16, [-1]) : (2x4x1, None) : (torch.float32, None)\n"
		"%getitem = <built-in function getitem>(%r : ? : tuple, 0) : 2x4x8 : torch.bfloat16\n"
		"%getitem_1 = <built-in function getitem>(%r : ? : tuple, 1) : 2x4x8 : torch.bfloat16\n"
		"output %getitem, %getitem_1\n");
	CHECK_EQ_U(s->diags.n_errors, 0);
	const struct fs_graph *g = graph0(s);
	const struct fs_node *r = node(s, g, "r");
	CHECK_EQ_U(r->n_out, 2);
	CHECK_EQ_U(g->types[r->out + 1].dtype, FS_DT_BF16);
	const struct fs_node *v = node(s, g, "v");
	CHECK_EQ_U(v->n_out, 2);
	CHECK_EQ_U(fs_scan_shape(s, g->types[v->out + 1].shape)->kind, FS_SHAPE_UNKNOWN);
	CHECK_EQ_U(g->types[v->out + 1].dtype, FS_DT_PY_NONE);
	const struct fs_node *gi = node(s, g, "getitem");
	CHECK_EQ_U(g->args[gi->args].type.dtype, FS_DT_TUPLE);
	CHECK_EQ_U(r->n_users, 2);
	CHECK_EQ_U(g->n_outputs, 2);
	fs_scan_free(s);
}

static void t_externals(void)
{
	struct fs_scan *s = parse("w.txt",
		"%x : 2x4096 : torch.bfloat16\n"
		"%l = auto_deploy.torch_linear_simple.default(%x : 2x4096 : torch.bfloat16, %m_model_layers_0_mlp_up_proj_weight : 14336x4096 : torch.bfloat16, None) : 2x14336 : torch.bfloat16\n"
		"%l2 = auto_deploy.torch_linear_simple.default(%x : 2x4096 : torch.bfloat16, %m_model_layers_0_mlp_up_proj_weight : 14336x4096 : torch.bfloat16, None) : 2x14336 : torch.bfloat16\n"
		"output %l\n");
	CHECK_EQ_U(s->diags.n_errors, 0);
	const struct fs_graph *g = graph0(s);
	CHECK_EQ_U(g->n_externs, 1);
	const struct fs_node *w = node(s, g, "m_model_layers_0_mlp_up_proj_weight");
	CHECK(w && w->kind == FS_NODE_EXTERN);
	CHECK_STR(shape_text(s, g, w, 0), "14336x4096");
	CHECK_EQ_U(g->types[w->out].dtype, FS_DT_BF16);
	CHECK_EQ_U(w->n_users, 2);
	CHECK_EQ_U(w->line, 2);
	fs_scan_free(s);
}

static void t_side_effect_users(void)
{
	struct fs_scan *s = parse("se.txt",
		"%x : 2x8 : torch.bool\n"
		"%_guards_fn = _guards_fn(%x : 2x8 : torch.bool) : ? : N/A\n"
		"%le = aten.le.Tensor(%x : 2x8 : torch.bool, %x : 2x8 : torch.bool) : 2x8 : torch.bool\n"
		"%_assert_tensor_metadata_default = aten._assert_tensor_metadata.default(%le : 2x8 : torch.bool) : ? : NoneType\n"
		"%to = aten.to.dtype_layout(%le : 2x8 : torch.bool) : 2x8 : torch.bool\n"
		"output %to\n");
	CHECK_EQ_U(s->diags.n_errors, 0);
	const struct fs_graph *g = graph0(s);
	const struct fs_node *le = node(s, g, "le");
	CHECK_EQ_U(le->n_users, 2);
	CHECK_EQ_U(le->n_real_users, 1);
	CHECK(node(s, g, "_assert_tensor_metadata_default")->flags & FS_NODE_SIDE_EFFECT);
	const struct fs_node *x = node(s, g, "x");
	CHECK_EQ_U(x->n_users, 2);
	CHECK_EQ_U(x->n_real_users, 1);
	CHECK_EQ_U(s->ops[node(s, g, "_guards_fn")->op].cls, FS_OPC_SIDE_EFFECT);
	fs_scan_free(s);
}

static void t_crlf(void)
{
	struct fs_scan *s = parse("crlf.txt",
		"# Transform: t\r\n# Stage: export\r\n# GraphModules found: 1\r\n\r\n"
		"================================================================================\r\n"
		"# GraphModule: (root)\r\n"
		"================================================================================\r\n\r\n"
		"%x : 2x8 : torch.float16\r\n"
		"%a = aten.abs.default(%x : 2x8 : torch.float16) : 2x8 : torch.float16\r\n"
		"output %a\r\n");
	CHECK_EQ_U(s->diags.n_errors, 0);
	CHECK_STR(fs_scan_str(s, s->files[0].transform), "t");
	const struct fs_graph *g = graph0(s);
	CHECK_EQ_U(g->n_calls, 1);
	CHECK_EQ_U(g->types[node(s, g, "a")->out].dtype, FS_DT_F16);
	CHECK_STR(fs_scan_str(s, s->modules[0].name), "(root)");
	fs_scan_free(s);
}

static void t_long_line(void)
{
	/* a 4 MB argument list on one line parses like any other */
	size_t n = 400000;
	size_t cap = n * 12 + 256;
	char *buf = malloc(cap);
	size_t k = (size_t)snprintf(buf, cap, "%%x : 8 : torch.int64\n%%c = aten.cat.default([");
	for (size_t i = 0; i < n; i++)
		k += (size_t)snprintf(buf + k, cap - k, "%sx", i ? ", " : "");
	k += (size_t)snprintf(buf + k, cap - k, "], 0) : 3200000 : torch.int64\noutput %%c\n");
	struct fs_scan *s = fs_scan_new();
	fs_scan_buffer(s, "long.txt", buf, k);
	CHECK_EQ_U(s->diags.n_errors, 0);
	const struct fs_graph *g = graph0(s);
	CHECK_EQ_U(g->nodes[node_index(s, g, "c")].n_args, n + 2);
	CHECK_EQ_U(node(s, g, "x")->n_users, 1);
	fs_scan_free(s);
	free(buf);
}

static void t_several_modules_and_dedupe(void)
{
	static const char body[] =
		"================================================================================\n"
		"# GraphModule: %s\n"
		"================================================================================\n\n"
		"%%x : 4 : torch.float32\n"
		"%%e = aten.exp.default(%%x : 4 : torch.float32) : 4 : torch.float32\n"
		"output %%e\n";
	char buf[2048], m1[512], m2[512];
	snprintf(m1, sizeof(m1), body, "submod_0");
	snprintf(m2, sizeof(m2), body, "submod_1");
	snprintf(buf, sizeof(buf), "# Transform: t\n# Stage: compile\n# GraphModules found: 2\n\n%s\n%s", m1, m2);
	struct fs_scan *s = fs_scan_new();
	fs_scan_buffer(s, "001_compile_t.txt", buf, strlen(buf));
	fs_scan_buffer(s, "002_compile_u.txt", buf, strlen(buf));
	CHECK_EQ_U(s->diags.n_errors, 0);
	CHECK_EQ_U(s->n_modules, 4);
	CHECK_STR(fs_scan_str(s, s->modules[1].name), "submod_1");
	/* same bodies: one parse, one graph, across modules and across files */
	CHECK(s->modules[0].graph == s->modules[1].graph);
	CHECK(s->modules[2].graph == s->modules[0].graph);
	CHECK_EQ_U(s->modules[3].same_as, 0);
	CHECK_EQ_U(s->modules[1].line, 14);
	CHECK(fs_dumpfiles_identical(s, &s->files[0], &s->files[1]));
	fs_scan_free(s);
}

static void t_dedupe_only_exact(void)
{
	struct fs_scan *s = fs_scan_new();
	const char *a = "%x : 4 : torch.float32\n%e = aten.exp.default(%x : 4 : torch.float32) : 4 : torch.float32\noutput %e\n";
	const char *b = "%x : 4 : torch.float32\n%e = aten.exp.default(%x : 4 : torch.float32) : 4 : torch.float16\noutput %e\n";
	fs_scan_buffer(s, "a.txt", a, strlen(a));
	fs_scan_buffer(s, "b.txt", b, strlen(b));
	CHECK(s->modules[0].graph != s->modules[1].graph);
	CHECK(!fs_dumpfiles_identical(s, &s->files[0], &s->files[1]));
	fs_scan_free(s);
}

static void t_error_duplicate_and_use_before_def(void)
{
	struct fs_scan *s = parse("dup.txt",
		"%x : 4 : torch.float32\n"
		"%a = aten.exp.default(%x : 4 : torch.float32) : 4 : torch.float32\n"
		"%a = aten.exp.default(%x : 4 : torch.float32) : 4 : torch.float32\n"
		"%b = aten.exp.default(%later : 4 : torch.float32) : 4 : torch.float32\n"
		"%later = aten.exp.default(%x : 4 : torch.float32) : 4 : torch.float32\n"
		"output %b\n");
	CHECK(has_error(s, 3, 1, "duplicate definition of '%a' (first defined at line 2)"));
	CHECK(has_error(s, 5, 1, "'%later' is defined here but used before its definition (first use at line 4)"));
	CHECK_EQ_U(graph0(s)->n_calls, 2); /* the good lines are kept */
	fs_scan_free(s);
}

/* a node named among its own arguments, an output line naming a value no line
 * defines or reads (a typo, or the line cut in the middle of a name) */
static void t_error_self_reference_and_output(void)
{
	struct fs_scan *s = parse("self.txt",
		"%x : 4 : torch.float32\n"
		"%neg = aten.neg.default(%neg : 4 : torch.float32) : 4 : torch.float32\n"
		"%b = aten.cat.default([x, b], 0) : 8 : torch.float32\n"
		"%c = aten.exp.default(%x : 4 : torch.float32) : 4 : torch.float32\n"
		"output %view_\n");
	CHECK(has_error(s, 2, 25, "'%neg' reads itself: a node cannot be its own argument"));
	CHECK(has_error(s, 3, 27, "'%b' reads itself"));
	CHECK(has_error(s, 5, 8, "output names 'view_', which no line of this module defines (the line cut short?)"));
	CHECK_EQ_U(s->diags.n_errors, 3); /* no "missing output line" besides */
	const struct fs_graph *g = graph0(s);
	CHECK_EQ_U(g->n_calls, 1);
	CHECK_EQ_U(g->n_externs, 0); /* the bad lines left no node behind */
	CHECK_EQ_U(g->n_outputs, 0);
	fs_scan_free(s);
	s = parse("ok.txt", "%x : 4 : torch.float32\n"
			    "%a = aten.mul.Tensor(%x : 4 : torch.float32, %w : 4 : torch.float32) : 4 : torch.float32\n"
			    "output (%a, %w)\n");
	CHECK_EQ_U(s->diags.n_errors, 0); /* a weight read before is no typo */
	CHECK_EQ_U(graph0(s)->n_outputs, 2);
	fs_scan_free(s);
}

static void t_error_brackets_and_garbage(void)
{
	struct fs_scan *s = parse("br.txt",
		"%x : 4 : torch.float32\n"
		"%a = aten.cat.default([x, x) : 4 : torch.float32\n"
		"%b = aten.cat.default([x, x], 0 : 4 : torch.float32\n"
		"hello world\n"
		"%c = aten.exp.default(%x : 4 : torch.float32) trailing\n"
		"output %x\n");
	CHECK(has_error(s, 2, 28, "unexpected ')'"));
	CHECK(has_error(s, 3, 22, "'(' is never closed"));
	CHECK(has_error(s, 4, 1, "unexpected line"));
	CHECK(has_error(s, 5, 46, "expected ' : <shape> : <dtype>' after the arguments"));
	CHECK_EQ_U(s->diags.n_errors, 4);
	fs_scan_free(s);
}

static void t_error_truncated_empty_binary(void)
{
	struct fs_scan *s = parse("tr.txt",
		"# Transform: t\n# Stage: export\n# GraphModules found: 1\n\n"
		"================================================================================\n"
		"# GraphModule: (root)\n"
		"================================================================================\n\n"
		"%x : 4 : torch.float32\n"
		"%a = aten.exp.default(%x : 4 : torch.fl");
	CHECK(has_error(s, 10, 22, "'(' is never closed"));
	CHECK(has_error(s, 10, 1, "has no 'output' line"));
	fs_scan_free(s);
	s = parse("empty.txt", "");
	CHECK(has_error(s, 0, 0, "empty file"));
	fs_scan_free(s);
	s = fs_scan_new();
	fs_scan_buffer(s, "bin.txt", "%x : 4\n\x7f" "ELF\0\x01\x02", 13);
	CHECK(has_error(s, 2, 5, "binary data"));
	fs_scan_free(s);
	s = parse("hdr.txt", "# Transform: t\n# GraphModules found: 2\n# GraphModule: a\n%x : 4 : torch.float32\noutput %x\n");
	CHECK(has_error(s, 2, 1, "header says 2 GraphModules, found 1"));
	fs_scan_free(s);
	s = parse("eof.txt", "# GraphModules found: 12"); /* count at EOF, no newline */
	CHECK(has_error(s, 0, 0, "no graph in file"));
	fs_scan_free(s);
	s = parse("nog.txt", "# Transform: t\n# Stage: export\n");
	CHECK(has_error(s, 0, 0, "no graph in file"));
	fs_scan_free(s);
}

static void t_error_limit(void)
{
	/* a file of garbage reports a bounded number of errors */
	char buf[64 * 100 + 1];
	size_t k = 0;
	for (int i = 0; i < 100; i++)
		k += (size_t)snprintf(buf + k, sizeof(buf) - k, "garbage line %d\n", i);
	struct fs_scan *s = parse("garbage.txt", buf);
	CHECK_EQ_U(s->diags.n_errors, 20);
	CHECK(has_error(s, 20, 1, "too many errors"));
	CHECK_EQ_U(s->files[0].n_errors, 100);
	fs_scan_free(s);
}

static void t_dtypes(void)
{
	CHECK_EQ_U(fs_dtype_parse("torch.bfloat16", 14), FS_DT_BF16);
	CHECK_EQ_U(fs_dtype_parse("SymInt", 6), FS_DT_SYMINT);
	CHECK_EQ_U(fs_dtype_parse("N/A", 3), FS_DT_NA);
	CHECK_EQ_U(fs_dtype_parse("torch.qint8", 11), FS_DT_OTHER);
	CHECK_EQ_U(fs_dtype_size(FS_DT_BF16), 2);
	CHECK_EQ_U(fs_dtype_size(FS_DT_F32), 4);
	CHECK_STR(fs_dtype_name(FS_DT_I64), "torch.int64");
	CHECK_STR(fs_op_class_name(FS_OPC_SIDE_EFFECT), "side_effect");
}

#define TESTS(X)                                  \
	X(t_header_and_sections)                  \
	X(t_stage_from_file_name)                 \
	X(t_older_formats)                        \
	X(t_target_forms)                         \
	X(t_nested_lists_and_bare_names)          \
	X(t_literals)                             \
	X(t_symbolic_shapes)                      \
	X(t_shape_bounds)                         \
	X(t_floordiv_and_negative)                \
	X(t_multi_output)                         \
	X(t_externals)                            \
	X(t_side_effect_users)                    \
	X(t_crlf)                                 \
	X(t_long_line)                            \
	X(t_several_modules_and_dedupe)           \
	X(t_dedupe_only_exact)                    \
	X(t_error_duplicate_and_use_before_def)   \
	X(t_error_self_reference_and_output)      \
	X(t_error_brackets_and_garbage)           \
	X(t_error_truncated_empty_binary)         \
	X(t_error_limit)                          \
	X(t_dtypes)

FS_TEST_MAIN()
