/*
 * scaffold.c: the AutoDeploy transform of an applied fusion (scaffold.h).
 * The search function is the site's ops as the dump prints them (targets,
 * literals, argument order); its parameters the site's external operands in
 * first-use order; its results the op's outputs in the op's order, which
 * the site's program and its kernel's parameters give (as --emit does).
 */
#include "fusescan/scaffold.h"

#include "codegen.h"
#include "gemm.h"
#include "prog.h"
#include "text.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static int fail(char *why, size_t n, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

static int fail(char *why, size_t n, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(why, n, fmt, ap);
	va_end(ap);
	return -1;
}

/* text as a Python string literal */
static void put_str(struct fs_text *t, const char *text)
{
	fs_text_put(t, "\"");
	fs_esc_py(t, text);
	fs_text_put(t, "\"");
}

/* One variant as Python: the site's nodes (file order), each node's name
 * there (a site value "v<k>", an operand "in<k>"), the op's inputs and
 * outputs as those names, and each operand's bound shape. */
struct variant {
	uint32_t *nodes, n;
	int32_t *var;            /* per graph node: -1, v<k> (k >= 0) or in<k> (-2 - k) */
	uint32_t n_params;
	uint32_t *param;         /* operand k's node */
	struct prog p;           /* bound at the scaffold's tokens */
	struct fs_kernel k;      /* its fallback kernel: the op's parameter order */
};

static void var_name(const struct variant *v, uint32_t node, char *buf, size_t n)
{
	int32_t x = v->var[node];
	if (x >= 0)
		snprintf(buf, n, "v%d", x);
	else
		snprintf(buf, n, "in%d", -2 - x);
}

/* dt as torch names it ("torch.bfloat16"): 1, or 0 for what the dump prints of no tensor ("other", "N/A", "SymInt") */
static int torch_dtype(uint8_t dt)
{
	return !strncmp(fs_dtype_name((enum fs_dtype)dt), "torch.", 6);
}

/* the dumps print no keyword arguments: a copy's dtype is its output's, written as dtype= */
static int writes_dtype(const struct fs_scan *s, const struct fs_node *x)
{
	return fs_sem_copy_with_dtype(s, x) && x->n_out;
}

/* every dtype the scaffold writes (a copy's, each operand's) one torch names */
static int dtypes_named(const struct fs_scan *s, const struct fs_graph *g, const struct variant *v, char *why, size_t wn,
			const char *name)
{
	for (uint32_t i = 0; i < v->n; i++) {
		const struct fs_node *x = &g->nodes[v->nodes[i]];
		if (writes_dtype(s, x) && !torch_dtype(g->types[x->out].dtype))
			return fail(why, wn, "%.200s: %%%.200s is a copy to no torch dtype", name, fs_scan_str(s, x->name));
	}
	for (uint32_t i = 0; i < v->p.n_in; i++)
		if (!torch_dtype(v->p.in[i].dtype))
			return fail(why, wn, "%.200s: operand %%%.200s has no torch dtype", name,
				    fs_scan_str(s, g->nodes[v->p.in_node[i]].name));
	return 0;
}

static int variant_build(const struct fs_scan *s, const struct fs_graph *g, const struct fs_scaffold *sc,
			 const struct fs_scaffold_variant *sv, struct variant *v, char *why, size_t wn)
{
	memset(v, 0, sizeof(*v));
	v->n = sv->site->n_nodes;
	v->nodes = fs_site_file_order(sv->site);
	v->var = fs_xmalloc((g->n_nodes + 1) * sizeof(int32_t));
	v->param = fs_xmalloc((g->n_args + 1) * sizeof(uint32_t));
	for (uint32_t i = 0; i < g->n_nodes; i++)
		v->var[i] = -1;
	for (uint32_t i = 0; i < v->n; i++)
		v->var[v->nodes[i]] = (int32_t)i;
	for (uint32_t i = 0; i < v->n; i++) {
		const struct fs_node *x = &g->nodes[v->nodes[i]];
		const struct fs_op *op = &s->ops[x->op];
		const char *ov = fs_scan_str(s, op->overload);
		if (!fs_sem_is(s, x, SEM_getitem) &&
		    (!fs_py_ident(fs_scan_str(s, op->ns)) || !fs_py_ident(fs_scan_str(s, op->name)) || (ov[0] && !fs_py_ident(ov))))
			return fail(why, wn, "%.200s: target %.200s of %%%.200s is no torch.ops name", sc->name,
				    fs_scan_str(s, op->target), fs_scan_str(s, x->name));
		for (uint32_t a = x->args; a < x->args + x->n_args; a++)
			if (g->args[a].kind == FS_ARG_NODE && v->var[g->args[a].node] == -1) {
				v->var[g->args[a].node] = -2 - (int32_t)v->n_params;
				v->param[v->n_params++] = g->args[a].node;
			}
	}
	struct fs_diags d;
	fs_diags_init(&d);
	v->p = (struct prog){.s = s, .g = g, .gelu_tanh = sc->gelu_tanh};
	int rc = fs_prog_build(&v->p, v->nodes, v->n, sc->tokens, &d);
	if (rc)
		fail(why, wn, "%s: %s", sc->name, d.n ? d.v[0].message : "the site cannot be bound");
	fs_diags_release(&d);
	if (rc)
		return -1;
	if (dtypes_named(s, g, v, why, wn, sc->name))
		return -1;
	if (fs_gemm_any(&v->p))
		return fail(why, wn, "%s: a region with matrix products: --scaffold writes transforms of kernels alone (its op is in "
				     "--emit's directory)", sc->name);
	struct prog any = v->p;
	any.index64 = 1;
	fs_diags_init(&d);
	rc = fs_codegen(&any, -1, FS_GEN_KERNEL, NULL, &v->k, &d) ? fail(why, wn, "%s: no op to call (%.255s)", sc->name, fs_diags_last(&d)) : 0;
	fs_diags_release(&d);
	return rc;
}

static void variant_free(struct variant *v)
{
	fs_kernel_release(&v->k);
	fs_prog_free(&v->p);
	free(v->nodes);
	free(v->var);
	free(v->param);
}

static uint32_t param_node(const struct variant *v, uint32_t i)
{
	int32_t x = v->k.value[i];
	return x < (int32_t)v->p.n_in ? v->p.in_node[x] : v->p.ops[x - v->p.n_in].node;
}

/* a number the dump prints: an integer past int64 (digits) as it is, else a float literal */
static void put_float(struct fs_text *t, const char *text, double v)
{
	size_t k = text[0] == '-';
	while (text[k] >= '0' && text[k] <= '9')
		k++;
	if (!text[k] && k > (size_t)(text[0] == '-'))
		fs_text_put(t, "%s", text);
	else
		fs_esc_py_float(t, v);
}

/* an argument subtree as Python: every literal written from its value, a
 * string escaped */
static uint32_t put_arg(struct fs_text *t, const struct fs_scan *s, const struct fs_graph *g, const struct variant *v, uint32_t a)
{
	const struct fs_arg *x = &g->args[a];
	char name[32];
	switch (x->kind) {
	case FS_ARG_NODE:
		var_name(v, x->node, name, sizeof(name));
		fs_text_put(t, "%s", name);
		break;
	case FS_ARG_INT: fs_text_put(t, "%lld", (long long)x->i); break;
	case FS_ARG_FLOAT: put_float(t, fs_scan_str(s, x->text), x->f); break;
	case FS_ARG_BOOL: fs_text_put(t, "%s", x->i ? "True" : "False"); break;
	case FS_ARG_NONE: fs_text_put(t, "None"); break;
	case FS_ARG_DTYPE: fs_text_put(t, "%s", fs_dtype_name((enum fs_dtype)x->type.dtype)); break;
	case FS_ARG_LIST:
	case FS_ARG_TUPLE: {
		uint32_t k = 0;
		fs_text_put(t, x->kind == FS_ARG_LIST ? "[" : "(");
		for (uint32_t c = a + 1; c < a + x->span; c += g->args[c].span, k++) {
			fs_text_put(t, k ? ", " : "");
			put_arg(t, s, g, v, c);
		}
		fs_text_put(t, x->kind == FS_ARG_LIST ? "]" : k == 1 ? ",)" : ")");
		break;
	}
	default: /* a string, and anything else as the string it prints */
		put_str(t, fs_scan_str(s, x->text));
	}
	return x->span;
}

/* The dump's target as a Python callable. */
static void put_target(struct fs_text *t, const struct fs_scan *s, const struct fs_node *x)
{
	const struct fs_op *op = &s->ops[x->op];
	const char *ns = fs_scan_str(s, op->ns), *name = fs_scan_str(s, op->name), *ov = fs_scan_str(s, op->overload);
	if (fs_sem_getitem_call(s, x))
		fs_text_put(t, "operator.getitem");
	else
		fs_text_put(t, "torch.ops.%s.%s.%s", ns, name, ov[0] ? ov : "default");
}

static const char *py_dtype(uint8_t dt)
{
	return fs_dtype_name((enum fs_dtype)dt);
}

/* a node's name (a dump's %name) escaped, as a comment or docstring may hold it */
static void put_node(struct fs_text *t, const struct fs_scan *s, const struct fs_graph *g, uint32_t node)
{
	fs_text_put(t, "%%");
	fs_esc_py(t, fs_scan_str(s, g->nodes[node].name));
}

/* the chain's ops, each "v<i> = target(args)  # %name" */
static void put_ops(struct fs_text *t, const struct fs_scan *s, const struct fs_graph *g, const struct variant *v)
{
	for (uint32_t i = 0; i < v->n; i++) {
		const struct fs_node *x = &g->nodes[v->nodes[i]];
		fs_text_put(t, "    v%u = ", i);
		put_target(t, s, x);
		fs_text_put(t, "(");
		uint32_t a = x->args, end = x->args + x->n_args, c = 0;
		while (a < end) {
			fs_text_put(t, c++ ? ", " : "");
			a += put_arg(t, s, g, v, a);
		}
		if (writes_dtype(s, x))
			fs_text_put(t, "%sdtype=%s", c ? ", " : "", py_dtype(g->types[x->out].dtype));
		fs_text_put(t, ")  # ");
		put_node(t, s, g, v->nodes[i]);
		fs_text_put(t, "\n");
	}
}

/* _chain_<k>: the ops, returning (outputs in the op's order, intermediates); the number of outputs */
static uint32_t put_chain(struct fs_text *t, const struct fs_scan *s, const struct fs_graph *g, uint32_t k, const struct variant *v,
			  const char *params)
{
	char name[32];
	fs_text_put(t, "\n\ndef _chain_%u(%s):\n", k, params);
	fs_text_put(t, "    \"\"\"the chain as the dump prints it (operands:");
	for (uint32_t i = 0; i < v->n_params; i++) {
		fs_text_put(t, "%s in%u = ", i ? "," : "", i);
		put_node(t, s, g, v->param[i]);
	}
	fs_text_put(t, " at the first site):\n    (outputs in the op's order, intermediates)\"\"\"\n");
	put_ops(t, s, g, v);
	fs_text_put(t, "    return (");
	uint32_t n_out = 0, n_mid = 0;
	for (uint32_t i = 0; i < v->k.n_params; i++)
		if (v->k.write[i]) {
			var_name(v, param_node(v, i), name, sizeof(name));
			fs_text_put(t, "%s%s", n_out++ ? ", " : "", name);
		}
	fs_text_put(t, "%s), (", n_out == 1 ? "," : "");
	for (uint32_t i = 0; i < v->n; i++) {
		int out = 0;
		for (uint32_t p = 0; p < v->k.n_params; p++)
			out |= v->k.write[p] && param_node(v, p) == v->nodes[i];
		if (!out)
			fs_text_put(t, "%sv%u", n_mid++ ? ", " : "", i);
	}
	fs_text_put(t, "%s)\n", n_mid == 1 ? "," : "");
	return n_out;
}

/* _dummy_args_<k>: the first site's operands at the scaffold's tokens, as meta tensors */
static void put_dummy(struct fs_text *t, const struct fs_scaffold *sc, uint32_t k, const struct variant *v)
{
	fs_text_put(t, "\n\ndef _dummy_args_%u():\n    \"\"\"operands of the first site's shapes at %lld tokens (meta tensors)\"\"\"\n    return [",
		    k, (long long)sc->tokens);
	for (uint32_t i = 0; i < v->n_params; i++) {
		const struct ten *in = NULL;
		for (uint32_t j = 0; j < v->p.n_in && !in; j++)
			if (v->p.in_node[j] == v->param[i])
				in = &v->p.in[j];
		fs_text_put(t, "%s", i ? ",\n            " : "");
		if (!in) { /* a size the site reads, not a tensor */
			fs_text_put(t, "%lld", (long long)sc->tokens);
			continue;
		}
		int fl = in->dtype == FS_DT_BF16 || in->dtype == FS_DT_F16 || in->dtype == FS_DT_F32 || in->dtype == FS_DT_F64;
		fs_text_put(t, "torch.%s((", fl ? "randn" : "zeros");
		for (uint8_t d = 0; d < in->rank; d++)
			fs_text_put(t, "%lld%s", (long long)in->shape[d], in->rank == 1 ? "," : d + 1 < in->rank ? ", " : "");
		fs_text_put(t, "), device=\"meta\", dtype=%s)", py_dtype(in->dtype));
	}
	fs_text_put(t, "]\n");
}

static void put_variant(struct fs_text *t, const struct fs_scan *s, const struct fs_graph *g, const struct fs_scaffold *sc,
			uint32_t k, const struct variant *v)
{
	const struct fs_scaffold_variant *sv = &sc->v[k];
	struct fs_text params = {0};
	char name[32];
	for (uint32_t i = 0; i < v->n_params; i++)
		fs_text_put(&params, "%sin%u", i ? ", " : "", i);
	const char *ps = params.s ? params.s : "";
	fs_text_put(t, "\n\n# ---- kernel %u: %u site%s, the first ending at ", k, sv->n_sites, sv->n_sites == 1 ? "" : "s");
	put_node(t, s, g, v->nodes[v->n - 1]);
	fs_text_put(t, "; op fusescan::%s\n# numerics: ", sv->op);
	fs_esc_py(t, sv->verdict);
	fs_text_put(t, "\n");
	uint32_t n_out = put_chain(t, s, g, k, v, ps);
	fs_text_put(t, "\n\ndef _search_%u(%s):\n    return _chain_%u(%s)[0]%s\n", k, ps, k, ps, n_out == 1 ? "[0]" : "");
	fs_text_put(t, "\n\ndef _replace_%u(%s):\n    return _op(\"%s\")(", k, ps, sv->op);
	uint32_t c = 0;
	for (uint32_t i = 0; i < v->k.n_params; i++)
		if (!v->k.write[i]) {
			var_name(v, param_node(v, i), name, sizeof(name));
			fs_text_put(t, "%s%s", c++ ? ", " : "", name);
		}
	fs_text_put(t, ")\n");
	put_dummy(t, sc, k, v);
	free(params.s);
}

static void camel(const char *name, char *out, size_t n)
{
	size_t k = (size_t)snprintf(out, n, "Fuse");
	int up = 1;
	for (const char *c = name; *c && k + 1 < n; c++) {
		if (!((*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') || (*c >= '0' && *c <= '9'))) {
			up = 1;
			continue;
		}
		out[k++] = up && *c >= 'a' && *c <= 'z' ? (char)(*c - 'a' + 'A') : *c;
		up = 0;
	}
	out[k] = '\0';
}

static void key_of(const char *name, char *out, size_t n)
{
	size_t k = (size_t)snprintf(out, n, "fuse_");
	for (const char *c = name; *c && k + 1 < n; c++)
		out[k++] = (*c >= 'A' && *c <= 'Z') ? (char)(*c - 'A' + 'a')
			   : ((*c >= 'a' && *c <= 'z') || (*c >= '0' && *c <= '9')) ? *c
										 : '_';
	out[k] = '\0';
}

static const char *path_of(const struct fs_scaffold *sc)
{
	return sc->existing ? "existing_kernel_path" : sc->recommendation[0] ? "triton_fallback_path" : "other";
}

/* The module's docstring, its imports and its constants: every input's text escaped. */
static void put_head(struct fs_text *t, const struct fs_scaffold *sc, const char *key)
{
	fs_text_put(t, "\"\"\"%s: the AutoDeploy transform of fusescan's candidate ", key);
	fs_esc_py(t, sc->id);
	fs_text_put(t, ".\n\nWritten by `fusescan --apply ");
	fs_esc_py(t, sc->id);
	fs_text_put(t, " --emit ... --scaffold ...` from\n");
	fs_esc_py(t, sc->dump);
	fs_text_put(t, ",\nwhere the chain has %u site%s. Each search function is one kernel's chain as the dump\n"
		       "prints it (its targets and literals); each replacement calls the op fusescan\n"
		       "emitted for that kernel and validated (fusescan::fs_..., from OPS_DIR).\n",
		    sc->sites, sc->sites == 1 ? "" : "s");
	if (sc->existing) {
		fs_text_put(t, "Discovery names an existing kernel for this chain,\n");
		fs_esc_py(t, sc->kernel);
		fs_text_put(t, ": calling it instead\nis the production path once its arguments are mapped.\n");
	}
	fs_text_put(t, "\nIn TensorRT-LLM: place this file under\n"
		       "tensorrt_llm/_torch/auto_deploy/transform/library/ and add default.yaml's\n"
		       "entry. Elsewhere find_sites(gm) runs the search functions with torch.fx.\n"
		       "Regenerate it with fusescan rather than editing it.\n\"\"\"\n\n");
	fs_text_put(t, "import operator  # noqa: F401 (a chain may read a getitem)\nimport os\nimport sys\nfrom typing import Tuple\n\n"
		       "import torch\nfrom torch.fx import GraphModule\n\n"
		       "try:  # inside TensorRT-LLM's transform library\n"
		       "    from ...models.factory import ModelFactory\n"
		       "    from ...shim.interface import CachedSequenceInterface\n"
		       "    from ...utils.pattern_matcher import ADPatternMatcherPass, register_ad_pattern\n"
		       "    from ..interface import BaseTransform, SharedConfig, TransformInfo, TransformRegistry\n"
		       "except ImportError:  # elsewhere: the search and replacement functions and find_sites\n"
		       "    BaseTransform = None\n\n");
	fs_text_put(t, "CANDIDATE = ");
	put_str(t, sc->name);
	fs_text_put(t, "\nOPS_DIR = os.environ.get(\"FUSESCAN_OPS\", ");
	put_str(t, sc->ops_dir);
	fs_text_put(t, ")\n");
}

/* _op, each kernel's functions, VARIANTS and find_sites */
static void put_body(struct fs_text *t, const struct fs_scan *s, const struct fs_graph *g, const struct fs_scaffold *sc,
		     const struct variant *v)
{
	fs_text_put(t, "\n\ndef _op(name):\n"
		       "    \"\"\"the emitted op fusescan::name, its module imported from OPS_DIR once\"\"\"\n"
		       "    if not hasattr(torch.ops.fusescan, name):\n"
		       "        sys.path.insert(0, OPS_DIR)\n"
		       "        try:\n"
		       "            __import__(name)\n"
		       "        finally:\n"
		       "            sys.path.remove(OPS_DIR)\n"
		       "    return getattr(torch.ops.fusescan, name).default\n");
	for (uint32_t k = 0; k < sc->n; k++)
		put_variant(t, s, g, sc, k, &v[k]);
	fs_text_put(t, "\n\n# (search, replacement, dummy operands, chain) per kernel\nVARIANTS = [");
	for (uint32_t k = 0; k < sc->n; k++)
		fs_text_put(t, "%s(_search_%u, _replace_%u, _dummy_args_%u, _chain_%u)", k ? ",\n            " : "", k, k, k, k);
	fs_text_put(t, "]\n");
	fs_text_put(t, "\n_ASSERTS = (\"_assert_tensor_metadata\", \"_assert_scalar\", \"sym_constrain_range\")\n");
	fs_text_put(t, "\n\ndef find_sites(gm, kernels=None):\n"
		       "    \"\"\"the search functions' matches on gm's graph with torch.fx (those of the\n"
		       "    kernels listed, default all), each a list of gm's nodes; matched on a copy\n"
		       "    without export's metadata asserts (as AutoDeploy's export cleanup leaves\n"
		       "    the graph: an assert would read as a second consumer); a node joins one\n"
		       "    match at most\"\"\"\n"
		       "    from torch.fx.passes.utils.matcher_utils import SubgraphMatcher\n\n"
		       "    graph = torch.fx.Graph()\n"
		       "    graph.output(graph.graph_copy(gm.graph, {}))\n"
		       "    for n in reversed(list(graph.nodes)):\n"
		       "        if n.op == \"call_function\" and not n.users and any(a in str(n.target) for a in _ASSERTS):\n"
		       "            graph.erase_node(n)\n"
		       "    by_name = {n.name: n for n in gm.graph.nodes}\n"
		       "    order = {n.name: i for i, n in enumerate(gm.graph.nodes)}\n"
		       "    taken, sites = set(), []\n"
		       "    for k, (search, *_) in enumerate(VARIANTS):\n"
		       "        if kernels is not None and k not in kernels:\n"
		       "            continue\n"
		       "        pattern = torch.fx.symbolic_trace(search).graph\n"
		       "        matcher = SubgraphMatcher(pattern, match_output=False, match_placeholder=False,\n"
		       "                                  remove_overlapping_matches=True, ignore_literals=False)\n"
		       "        for m in matcher.match(graph):\n"
		       "            names = {n.name for p, n in m.nodes_map.items() if p.op not in (\"placeholder\", \"output\")}\n"
		       "            if not names & taken:\n"
		       "                taken |= names\n"
		       "                sites.append([by_name[x] for x in sorted(names, key=order.get)])\n"
		       "    return sites\n");
}

/* The transform's class, where TensorRT-LLM is present */
static void put_class(struct fs_text *t, const struct fs_scaffold *sc, const char *key)
{
	char cls[128];
	camel(key + 5, cls, sizeof(cls));
	fs_text_put(t, "\n\nif BaseTransform is not None:\n\n"
		       "    @TransformRegistry.register(\"%s\")\n"
		       "    class %s(BaseTransform):\n"
		       "        \"\"\"Fuse the ", key, cls);
	fs_esc_py(t, sc->name);
	fs_text_put(t, " chain (fusescan candidate ");
	fs_esc_py(t, sc->id);
	fs_text_put(t, ") into fusescan's validated op:\n"
		       "        one search / replacement pair per kernel its sites need.\"\"\"\n\n"
		       "        def _apply(\n"
		       "            self,\n"
		       "            gm: GraphModule,\n"
		       "            cm: CachedSequenceInterface,\n"
		       "            factory: ModelFactory,\n"
		       "            shared_config: SharedConfig,\n"
		       "        ) -> Tuple[GraphModule, TransformInfo]:\n"
		       "            patterns = ADPatternMatcherPass()\n"
		       "            for search, replace, dummy_args, _ in VARIANTS:\n"
		       "                register_ad_pattern(\n"
		       "                    search_fn=search,\n"
		       "                    replace_fn=replace,\n"
		       "                    patterns=patterns,\n"
		       "                    dummy_args=dummy_args(),\n"
		       "                )\n"
		       "            num_matches = patterns.apply(gm.graph)\n"
		       "            info = TransformInfo(\n"
		       "                skipped=False,\n"
		       "                num_matches=num_matches,\n"
		       "                is_clean=num_matches == 0,\n"
		       "                has_valid_shapes=num_matches == 0,\n"
		       "            )\n"
		       "            return gm, info\n");
}

static void put_test(struct fs_text *t, const char *key)
{
	fs_text_put(t, "\"\"\"Tests of %s (written by fusescan --scaffold). Per kernel: a micrograph\n"
		       "of its chain alone must fuse (one match), the chain with an intermediate also\n"
		       "returned (a second consumer) must not, and on a GPU the replacement computes\n"
		       "what the chain computes. Run with pytest, or as a script.\n\"\"\"\n"
		       "import os\nimport sys\n\nimport torch\n\n"
		       "sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))\n"
		       "import %s as t  # noqa: E402\n\n\n",
		    key, key);
	fs_text_put(t, "def _export(fn, args):\n"
		       "    class Micro(torch.nn.Module):\n"
		       "        def forward(self, *a):\n"
		       "            return fn(*a)\n\n"
		       "    return torch.export.export(Micro(), tuple(args), strict=False).module()\n\n\n"
		       "def _tapped(chain):\n"
		       "    def fn(*a):\n"
		       "        outs, mids = chain(*a)\n"
		       "        return outs + mids[:1]\n"
		       "    return fn\n\n\n"
		       "def test_chain_fuses():\n"
		       "    for k, (_, _, dummy, chain) in enumerate(t.VARIANTS):\n"
		       "        sites = t.find_sites(_export(lambda *a: chain(*a)[0], dummy()), kernels=[k])\n"
		       "        assert len(sites) == 1, f\"kernel {k}: {len(sites)} matches, expected 1\"\n\n\n"
		       "def test_second_consumer_keeps_the_chain():\n"
		       "    for k, (_, _, dummy, chain) in enumerate(t.VARIANTS):\n"
		       "        if chain(*dummy())[1]:\n"
		       "            sites = t.find_sites(_export(_tapped(chain), dummy()), kernels=[k])\n"
		       "            assert not sites, f\"kernel {k}: fused although an intermediate has a second consumer\"\n\n\n"
		       "def test_replacement_numerics():\n"
		       "    if not torch.cuda.is_available():\n"
		       "        return \"skipped (no GPU)\"\n"
		       "    # fusescan's verdict: against the chain on float64 operands (its casts kept), the\n"
		       "    # replacement's error is at most 3x the chain's own (eager rounding) + 1e-5\n"
		       "    gen = torch.Generator(device=\"cuda\").manual_seed(0)\n"
		       "    tup = lambda x: x if isinstance(x, tuple) else (x,)  # noqa: E731\n"
		       "    for k, (search, replace, dummy, _) in enumerate(t.VARIANTS):\n"
		       "        args = [torch.randn(a.shape, device=\"cuda\", generator=gen).to(a.dtype) if a.is_floating_point()\n"
		       "                else torch.zeros(a.shape, device=\"cuda\", dtype=a.dtype) for a in dummy()]\n"
		       "        ref = tup(search(*[a.double() if a.is_floating_point() else a for a in args]))\n"
		       "        for r, w, g in zip(ref, tup(search(*args)), tup(replace(*args))):\n"
		       "            eager, fused = (w.double() - r).abs().max().item(), (g.double() - r).abs().max().item()\n"
		       "            assert fused <= 3 * eager + 1e-5, f\"kernel {k}: max abs error {fused:.3g}, eager's {eager:.3g}\"\n\n\n"
		       "if __name__ == \"__main__\":\n"
		       "    for name, fn in list(globals().items()):\n"
		       "        if name.startswith(\"test_\"):\n"
		       "            print(f\"%s: {name}: {fn() or 'pass'}\")\n",
		    key);
}

static void md_code(struct fs_text *t, const char *s)
{
	fs_esc_md_code(t, s, 0);
}

/* The note's first lines: the candidate, its path and rationale (every input's text escaped) */
static void put_note_head(struct fs_text *t, const struct fs_scaffold *sc, const char *key)
{
	fs_text_put(t, "# Iteration note: %s\n\n- **Candidate**: ", key);
	md_code(t, sc->id);
	fs_text_put(t, " (");
	md_code(t, sc->name);
	fs_text_put(t, "), %u site%s in ", sc->sites, sc->sites == 1 ? "" : "s");
	md_code(t, sc->dump);
	fs_text_put(t, "\n- **Path**: %s\n", path_of(sc));
	fs_text_put(t, "- **Rationale**: %s", sc->recommendation[0] ? "discovery recommends " : "a pattern of the library, ");
	fs_esc_md_text(t, sc->recommendation[0] ? sc->recommendation : "no discovery recommendation");
	if (sc->existing) {
		fs_text_put(t, ". The catalog's kernel ");
		md_code(t, sc->kernel);
		fs_text_put(t, " implements the chain; fusescan generated and validated its own CUDA kernel for it, which the "
			       "replacement calls until the existing kernel's arguments are mapped.\n");
	}
	else
		fs_text_put(t, ". No existing kernel implements it: fusescan generated, validated and tuned a CUDA kernel "
			       "(loaded as a PyTorch custom op), which the replacement calls.\n");
}

static void put_note(struct fs_text *t, const struct fs_scaffold *sc, const char *key)
{
	put_note_head(t, sc, key);
	fs_text_put(t, "- **Graph validation**: %s (the after-graph parsed again and validated, the graph's outputs "
		       "unchanged: %u fused node%s)\n",
		    sc->fused ? "pass" : "fail", sc->fused, sc->fused == 1 ? "" : "s");
	fs_text_put(t, "- **Summary logs**: matches before: %u chain%s in the dump; after: ", sc->sites, sc->sites == 1 ? "" : "s");
	struct fs_text line = {0};
	fs_text_put(&line, "[stage=fusescan, transform=apply %s] [SUMMARY] matches=%u", sc->name, sc->fused);
	md_code(t, line.s);
	free(line.s);
	fs_text_put(t, "; %u site%s skipped (inside a larger approved site, or with no valid place: summary.txt says which)\n",
		    sc->skipped, sc->skipped == 1 ? "" : "s");
	fs_text_put(t, "- **Numerics** (fusescan's verdict against a float64 reference, per kernel):\n");
	for (uint32_t k = 0; k < sc->n; k++) {
		fs_text_put(t, "  - kernel %u (`fusescan::%s`, %u site%s): ", k, sc->v[k].op, sc->v[k].n_sites,
			    sc->v[k].n_sites == 1 ? "" : "s");
		fs_esc_md_text(t, sc->v[k].verdict);
		fs_text_put(t, "\n");
	}
	fs_text_put(t, "- **Tests**: `test_%s.py`: per kernel a micrograph that must fuse, one that must not (an "
		       "intermediate with a second consumer), the replacement's numerics on a GPU; the whole model: "
		       "`scripts/validate_in_model.py` (replaced sites, logits, top-1, timings)\n",
		    key);
	fs_text_put(t, "- **Open risks**:\n"
		       "  - the search functions carry the dump's literals (eps, dims, head sizes): a model with other "
		       "literals needs another pattern, and the replacement's op was generated for these shapes;\n"
		       "  - the ops take the token count at run time; counts past the largest tuned bucket run its kernel "
		       "where its requirements hold, else the fallback;\n"
		       "  - the ops need contiguous operands: where the graph's operand is a strided view, a copy goes in "
		       "front of them;\n"
		       "  - the dumps print no keyword arguments: a copy's dtype is written from its output type; other "
		       "keyword arguments are not in the search functions.\n");
}

static void put_sites(struct fs_text *t, const struct fs_scan *s, const struct fs_graph *g, const struct fs_scaffold *sc)
{
	cJSON *j = cJSON_CreateObject(), *a;
	cJSON_AddStringToObject(j, "candidate", sc->name);
	cJSON_AddStringToObject(j, "id", sc->id);
	cJSON_AddStringToObject(j, "dump", sc->dump);
	a = cJSON_AddArrayToObject(j, "sites");
	for (uint32_t i = 0; i < sc->sites; i++) {
		uint32_t *nodes = fs_site_file_order(&sc->all[i]);
		cJSON *x = cJSON_CreateArray();
		for (uint32_t k = 0; k < sc->all[i].n_nodes; k++)
			cJSON_AddItemToArray(x, cJSON_CreateString(fs_scan_str(s, g->nodes[nodes[k]].name)));
		cJSON_AddItemToArray(a, x);
		free(nodes);
	}
	char *text = fs_json_print(j);
	fs_text_put(t, "%s\n", text);
	free(text);
	cJSON_Delete(j);
}

static int write_text(const char *dir, const char *name, const struct fs_text *t, char *why, size_t n)
{
	char path[PATH_MAX];
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	if (fs_write_file_atomic(path, t->s ? t->s : "", t->n))
		return fail(why, n, "cannot write %s: %s", path, strerror(errno));
	return 0;
}

/* Each approval's transform key: fuse_<name> (lower case, [a-z0-9_]), the
 * second and later of one key given _2, _3, ... (the first free), so every
 * approval has its own files and default.yaml entry. keys[i]: 128 bytes. */
static void keys_of(const struct fs_scaffold *sc, uint32_t n, char (*keys)[128])
{
	for (uint32_t i = 0; i < n; i++) {
		char base[100];
		key_of(sc[i].name, base, sizeof(base));
		snprintf(keys[i], sizeof(keys[i]), "%s", base);
		for (uint32_t dup = 1, j = 0; j < i; j++)
			if (!strcmp(keys[j], keys[i])) {
				snprintf(keys[i], sizeof(keys[i]), "%s_%u", base, ++dup);
				j = (uint32_t)-1; /* again from the first: the new key may be taken too */
			}
	}
}

/* the four files of one approval under key */
static int write_files(const struct fs_scan *s, const struct fs_graph *g, const struct fs_scaffold *sc, const struct variant *v,
		       const char *key, const char *dir, char *why, size_t why_n)
{
	struct fs_text text[4] = {{0}};
	static const char *const pre[4] = {"", "test_", "", ""}, *const ext[4] = {".py", ".py", ".md", ".sites.json"};
	put_head(&text[0], sc, key);
	put_body(&text[0], s, g, sc, v);
	put_class(&text[0], sc, key);
	put_test(&text[1], key);
	put_note(&text[2], sc, key);
	put_sites(&text[3], s, g, sc);
	int rc = 0;
	for (int f = 0; f < 4; f++) {
		char file[160];
		snprintf(file, sizeof(file), "%s%s%s", pre[f], key, ext[f]);
		rc = rc ? rc : write_text(dir, file, &text[f], why, why_n);
		free(text[f].s);
	}
	return rc;
}

/* One approval's transform: its variants built, its files written */
static int scaffold_one(const struct fs_scan *s, const struct fs_graph *g, const struct fs_scaffold *sc, const char *key,
			const char *dir, char *why, size_t why_n)
{
	if (!sc->n)
		return fail(why, why_n, "%s: no site was applied: nothing to scaffold", sc->name);
	struct variant *v = fs_xcalloc(sc->n + 1, sizeof(*v));
	uint32_t built = 0;
	int rc = 0;
	for (uint32_t k = 0; k < sc->n && !rc; k++, built++) {
		if (!sc->v[k].op[0])
			rc = fail(why, why_n, "%s: no op was emitted for its site: --scaffold needs the ops --emit writes", sc->name);
		else
			rc = variant_build(s, g, sc, &sc->v[k], &v[k], why, why_n);
	}
	if (!rc)
		rc = write_files(s, g, sc, v, key, dir, why, why_n);
	for (uint32_t k = 0; k < built; k++)
		variant_free(&v[k]);
	free(v);
	return rc;
}

int fs_scaffold_write(const struct fs_scan *s, const struct fs_graph *g, const struct fs_scaffold *sc, uint32_t n,
		      const char *dir, char *why, size_t why_n)
{
	if (mkdir(dir, 0777) != 0 && errno != EEXIST)
		return fail(why, why_n, "cannot create %s: %s", dir, strerror(errno));
	char (*keys)[128] = fs_xcalloc(n + 1, sizeof(*keys));
	keys_of(sc, n, keys);
	struct fs_text yaml = {0};
	fs_text_put(&yaml, FS_SCAFFOLD_YAML_HEAD "entries for tensorrt_llm/_torch/auto_deploy/config/default.yaml\n"
			   "transforms:\n");
	int rc = 0;
	for (uint32_t i = 0; i < n && !rc; i++) {
		rc = scaffold_one(s, g, &sc[i], keys[i], dir, why, why_n);
		fs_text_put(&yaml, "  %s:\n    stage: post_load_fusion\n    enabled: false\n", keys[i]);
	}
	if (!rc)
		rc = write_text(dir, "default.yaml", &yaml, why, why_n);
	free(yaml.s);
	free(keys);
	return rc;
}
