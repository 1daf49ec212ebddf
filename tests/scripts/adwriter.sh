#!/usr/bin/env bash
# Dumps as AutoDeploy's graph writer prints them (utils/graph_writer.py: the
# target's str(), node.args only, every GraphModule a section of its own),
# fixtures derived from the bundled 2-layer run, and kernel lookup in a source
# tree laid out as TensorRT-LLM's (tests/data/srctree):
#   - AD's fuse_add_rms_norm leaves its Python wrapper, printed
#     `<function flashinfer_fused_add_rms_norm at 0x...>`: add + RMSNorm counts as fused;
#   - torch_swiglu_mlp is a reference op: matched, unfused (repeat_kv is folded into the attention);
#   - a GELU's form is not in the dump: the candidate says so, --gelu states it;
#   - a root calling submodules (call_module) is analysed as one graph: a chain the
#     module boundary cuts is whole, every count that of the unsplit dump;
#   - with a tree, only what it registers is recommended (a wrapper named as one), and
#     transform defaults come from its config/default.yaml;
#   - SDPA's decomposition (its guard for fully masked rows) goes to the attention
#     kernel as one recommendation, after the fusions; a chain is `norm` only if it normalises.
# usage: adwriter.sh FUSESCAN TESTS_DIR
set -u
exe=$1 tests=$2
# shellcheck source=tests/scripts/lib.sh
. "$(dirname "$0")/lib.sh"
run=$tests/data/adrun_tiny_llama_2l
tree=$tests/data/srctree
json() { python3 -c "import json, sys; a = json.load(open(sys.argv[1]))['analyses'][0]; $2" "$1"; }

# the wrapper AD's transform inserts: the chain is fused
wrapped=$tests/data/adwriter_wrapper/035_compile_compile_model.txt
check "wrapper dump" 0 "$exe" discover --format json -o "$tmp/w.json" "$wrapped"
check "add + RMSNorm fused through the wrapper" 0 json "$tmp/w.json" "
f = {x['name']: (x['op'], x['count']) for x in a['already_fused']}
assert f['add_rmsnorm'] == ('python.flashinfer_fused_add_rms_norm', 4), f
assert 'add_rmsnorm' not in {k['name'] for k in a['candidates']}"
# reference ops: matched, not fused (the final dump of the run keeps the SwiGLU one; match_grouped_attention
# folded repeat_kv into the attention)
check "final dump" 0 "$exe" discover --format json -o "$tmp/f.json" "$run"
check "reference ops are not fused kernels" 0 json "$tmp/f.json" "
f = {x['name'] for x in a['already_fused']}
r = {x['name']: (x['op'], x['count']) for x in a['reference_ops']}
assert not f & {'swiglu', 'repeat_kv'}, f
assert r == {'swiglu': ('auto_deploy.torch_swiglu_mlp', 2)}, r"

# GELU: tanh or erf is not in the dump
gemma=$tests/data/export_gemma2_2l/001_export_export_to_gm.txt
check "gelu unstated" 0 "$exe" discover "$gemma"
contains "gelu: said unknowable" "$tmp/out" "! gelu: tanh or erf is unknowable from the dump"
check "gelu erf" 0 "$exe" discover --format json --gelu erf -o "$tmp/g.json" "$gemma"
check "gelu erf: no tanh kernel" 0 json "$tmp/g.json" "
k = next(k for k in a['candidates'] if k['name'] == 'geglu_tanh')
assert k['recommendation'] == 'needs_triton_fallback' and not k['existing_kernel']['found'], k['recommendation']
assert '+ gelu: erf, as stated (--gelu)' in k['assessment']"
check "gelu tanh" 0 "$exe" discover --gelu tanh "$gemma"
contains "gelu tanh: the kernel" "$tmp/out" "Recommendation: use_existing_kernel (auto_deploy.gelu_tanh_and_mul)"
check "fuse says the form it assumes" 0 "$exe" --apply geglu_tanh-38faf084 --cpu-only --no-render --out "$tmp/ge" "$gemma"
contains "fuse: tanh assumed" "$tmp/err" "the tanh form is assumed; --gelu erf"
check "fuse with --gelu: nothing to say" 0 "$exe" --apply geglu_tanh-38faf084 --gelu tanh --cpu-only --no-render --out "$tmp/ge2" "$gemma"
count "fuse with --gelu: quiet" "$tmp/err" "is assumed" 0

# a root calling submodules, cut between the layers (after layer 0's residual sum)
split=$tests/data/adwriter_split/001_export_export_to_gm.txt
check "split dump" 0 "$exe" discover --format json -o "$tmp/s.json" "$split"
check "unsplit dump" 0 "$exe" discover --format json -o "$tmp/u.json" "$run/001_export_export_to_gm.txt"
check "one graph across the call_modules, every count the unsplit one's" 0 python3 -c "
import json, sys
s, u = (json.load(open(p))['analyses'] for p in sys.argv[1:3])
assert len(s) == 1 and s[0]['module'] == '(root)' and s[0]['call_modules_inlined'] == 2, [x['module'] for x in s]
c = lambda a: sorted((k['name'], k['instances']) for k in a['candidates'])
assert c(s[0]) == c(u[0]), (c(s[0]), c(u[0]))
assert s[0]['nodes'] == u[0]['nodes']
assert ('add_rmsnorm', 4) in c(s[0])  # one of them crosses the boundary" "$tmp/s.json" "$tmp/u.json"
check "match still counts per module" 0 "$exe" match --pattern add_rmsnorm "$split"
contains "match: submod_0" "$tmp/out" "module=submod_0, pattern=add_rmsnorm] [SUMMARY] matches=1"
check "discover counts what match counts, per module" 0 python3 -c "
import json, sys
k = [k for k in json.load(open(sys.argv[1]))['analyses'][0]['candidates'] if k['name'] == 'add_rmsnorm']
assert len(k) == 1 and k[0]['counted_by'] == {'pattern': 'add_rmsnorm', 'matches': 3, 'crossing': 1}, k" "$tmp/s.json"

# kernel lookup in a tree: registered ops only, defaults from its default.yaml
check "with the tree" 0 "$exe" discover --format json --kernels-from "$tree" -o "$tmp/t.json" "$run"
check "nothing recommended that the tree does not register" 0 json "$tmp/t.json" "
for k in a['candidates']:
    name = k['existing_kernel']['name']
    if name and '.' in name:
        ns, op = name.split('.', 1)
        assert not any(f'{ns}::{op} not registered in the indexed tree' in e for e in k['existing_kernel']['evidence']), name
k = next(k for k in a['candidates'] if k['name'] == 'add_rmsnorm')
assert k['existing_kernel']['name'] == 'auto_deploy.flashinfer_fused_add_rms_norm_inplace', k['existing_kernel']
assert k['existing_kernel']['wrapper'] == 'flashinfer_fused_add_rms_norm'
ev = ' | '.join(k['existing_kernel']['evidence'])
assert 'flashinfer_fused_add_rms_norm is a Python wrapper over auto_deploy::flashinfer_fused_add_rms_norm_inplace' in ev, ev
assert 'transform fuse_add_rms_norm (off by default: ' in ev and 'config/default.yaml:44)' in ev, ev"
# the tree's default.yaml decides
cp -r "$tree" "$tmp/tree_on"
sed -i '/^  fuse_add_rms_norm:/,/enabled/s/enabled: false/enabled: true/' "$tmp/tree_on/tensorrt_llm/_torch/auto_deploy/config/default.yaml"
check "default from the tree" 0 "$exe" discover --kernels-from "$tmp/tree_on" "$run"
contains "default from the tree: on" "$tmp/out" "transform fuse_add_rms_norm (on by default: "
# a tree without the in-place op: the wrapper calls nothing registered, nothing is recommended
cp -r "$tree" "$tmp/tree_off"
sed -i 's/auto_deploy::flashinfer_fused_add_rms_norm_inplace/auto_deploy::renamed_op/' \
	"$tmp/tree_off/tensorrt_llm/_torch/auto_deploy/custom_ops/normalization/flashinfer_fused_add_rms_norm.py"
check "unregistered op" 0 "$exe" discover --format json --kernels-from "$tmp/tree_off" -o "$tmp/o.json" "$run"
check "unregistered op: not recommended" 0 json "$tmp/o.json" "
k = next(k for k in a['candidates'] if k['name'] == 'add_rmsnorm')
assert k['recommendation'] != 'use_existing_kernel' and not k['existing_kernel']['found'], k['recommendation']
assert '- the indexed tree registers none of the catalog\'s kernels for it: a kernel is needed' in k['assessment']"

# SDPA written out by run_decompositions(): its guard is attention internals, not first
check "decomposed export" 0 "$exe" discover --format json -o "$tmp/d.json" "$tests/data/export_tiny_llama_2l/002_post_export_run_decompositions.txt"
check "attention internals after the fusions, one recommendation" 0 json "$tmp/d.json" "
c = a['candidates']
names = [k['name'] for k in c]
assert names[0] != 'attention_internals' and not any('eq-logical_not' in n for n in names), names
i = names.index('attention_internals')
assert c[i]['instances'] == 2 and c[i]['existing_kernel']['name'] == 'auto_deploy.torch_attention_sdpa', c[i]
assert all(k['existing_kernel']['name'] in ('auto_deploy.torch_attention_sdpa', 'auto_deploy.torch_attention') for k in c[i:]), names[i:]
assert not [k for k in c if k['kind'] == 'norm' and 'any' in k['ops']], names"
finish
