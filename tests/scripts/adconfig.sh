#!/usr/bin/env bash
# adconfig.sh: AutoDeploy's effective config in discover's evidence. The
# fixture tree's registry model gets its yaml layers' defaults, each with the
# file:line that set it and the one it overrode; --ad-config layers merge in
# order over them (a mode file as nanojet.yaml); the log decides over any
# config and says so; a bad config is exit 2 with file:line:col; an alias
# transform is named as one; advice that cannot help is deferred with the
# precondition the chain fails; the catalog's defaults agree with the
# fixture's default.yaml.
set -u
exe=$1 tests=$2
. "$(dirname "$0")/lib.sh"
run=$tests/data/adrun_tiny_llama_2l
last=$run/035_compile_compile_model.txt
exp=$tests/data/export_tiny_llama_2l
tree=$tests/data/srctree
ad=$tree/tensorrt_llm/_torch/auto_deploy
reg=$ad/config/model_registry_internal

check "registry model" 0 "$exe" discover --kernels-from "$tree" --model nvidia/Llama-3.1-8B-Instruct-FP8 "$last"
contains "registry: the user-side file turns fuse_add_rms_norm on, over default.yaml" "$tmp/out" \
	"transform fuse_add_rms_norm (on for --model nvidia/Llama-3.1-8B-Instruct-FP8: $tree/examples/auto_deploy/model_registry/configs/llama3_1_8b.yaml:5; off by default at $ad/config/default.yaml:44)"
check "registry model, two entries" 2 "$exe" discover --kernels-from "$tree" --model org/two-entries "$last"
contains "two entries: choose" "$tmp/err" "2 entries for org/two-entries (config_id a, b): choose one with --config-id"
check "registry model, chosen entry" 0 "$exe" discover --kernels-from "$tree" --model org/two-entries --config-id b "$exp"
contains "chosen entry: its ad_defaults file" "$tmp/out" "on for --model org/two-entries: $reg/configs/llama3_1_8b_ad.yaml:"
check "unknown model" 2 "$exe" discover --kernels-from "$tree" --model org/nope "$last"
contains "unknown model: said" "$tmp/err" "org/nope: no entry for org/nope"
check "--model without a tree" 2 "$exe" discover --model org/nope "$last"
check "--config-id without --model" 2 "$exe" discover --config-id a "$last"

# --ad-config layers, in order, over the tree's default.yaml: the mode file, then the user's
printf 'transforms:\n  fuse_add_rms_norm:\n    enabled: true\n' >"$tmp/on.yaml"
printf 'transforms:\n  fuse_add_rms_norm:\n    enabled: false  # not this week\n' >"$tmp/off.yaml"
check "two --ad-config, later wins" 0 "$exe" discover --kernels-from "$tree" --ad-config "$tmp/on.yaml" --ad-config "$tmp/off.yaml" "$last"
contains "later wins, with its reason and the layer it overrode" "$tmp/out" \
	"transform fuse_add_rms_norm (off by --ad-config: $tmp/off.yaml:3, 'not this week'; on by --ad-config at $tmp/on.yaml:3)"
check "the mode file as --ad-config" 0 "$exe" discover --format json -o "$tmp/n.json" --kernels-from "$tree" --ad-config "$ad/config/nanojet.yaml" "$last"
check "without a tree: over the catalog's defaults" 0 "$exe" discover --ad-config "$tmp/on.yaml" "$last"
contains "no tree: the user's layer" "$tmp/out" "transform fuse_add_rms_norm (on by --ad-config: $tmp/on.yaml:3)"
printf 'transforms:\n  fuse_add_rms_norm:\n\tenabled: true\n  x: &a 1\n' >"$tmp/bad.yaml"
check "a bad config: exit 2, file:line:col" 2 "$exe" discover --ad-config "$tmp/bad.yaml" "$last"
contains "bad config: the tab" "$tmp/err" "$tmp/bad.yaml:3:1: error: a tab in indentation"
contains "bad config: the anchor" "$tmp/err" "$tmp/bad.yaml:4:6: error: anchors, aliases, tags"
check "a missing config" 2 "$exe" discover --ad-config "$tmp/none.yaml" "$last"

# the log decides over the config, and says so
check "the log decides" 0 "$exe" discover --kernels-from "$tree" --ad-config "$tmp/on.yaml" "$run"
contains "log wins" "$tmp/out" "transform fuse_add_rms_norm (on by --ad-config: $tmp/on.yaml:3; off by default at $ad/config/default.yaml:44): exists but is disabled ($run/ad.log:30; the log decides)"
# advice that cannot help: a transform that ran and matched nothing (a backend that wants bnsd:
# match_attention_layout leaves the graph as it was), the run cut after it
bnsd=$tmp/bnsd
mkdir "$bnsd" && cp "$run"/0[01]*.txt "$bnsd"/ && rm -f "$bnsd"/01[2-9]_*.txt
sed 's/^# Transform: .*/# Transform: match_attention_layout/' "$run"/011_*.txt >"$bnsd/012_pattern_matcher_match_attention_layout.txt"
{ head -n 11 "$run/ad.log"; sed -n '12s/matches=2/matches=0/p' "$run/ad.log"; } >"$bnsd/ad.log"
check "a run whose layout transform matched nothing" 0 "$exe" discover --kernels-from "$tree" "$bnsd"
contains "no use_existing_kernel for a transform that matched nothing" "$tmp/out" \
	"Recommendation: defer (AutoDeploy's match_attention_layout ran and matched nothing here ($bnsd/ad.log:12))"
# why AD did not fire: the precondition, from the catalog's wants
printf 'transforms:\n  fuse_add_rms_norm:\n    enabled: false\n' >"$tmp/off2.yaml"
check "why not: off" 0 "$exe" discover --kernels-from "$tree" --ad-config "$tmp/off2.yaml" "$exp"
contains "why not: the chain's cast is read by the decomposed norm" "$tmp/out" \
	"why AD did not fire: fuse_add_rms_norm wants add -> cast -> auto_deploy.flashinfer_rms_norm"
contains "why not: where the chain departs" "$tmp/out" "here cast is read by pow, mul, not auto_deploy.flashinfer_rms_norm"
# an alias transform, recognised from the tree
contains "alias" "$tmp/out" "alias of mlir_elementwise_fusion in this tree ($ad/transform/library/fuse_silu_mul.py:6)"

# the catalog's defaults agree with the fixture tree's default.yaml for every transform it lists
check "catalog matches the fixture tree" 0 python3 - "$tests/../kernels/catalog.txt" "$ad/config/default.yaml" <<'PY'
import re, sys
cat = {}
for line in open(sys.argv[1]):
    if line.startswith('transforms ='):
        for w in line.split('=', 1)[1].split():
            n, _, d = w.partition(':')
            cat[n] = d or 'on'
tree, name = {}, None
for line in open(sys.argv[2]):
    m = re.match(r'^  (\w+):\s*$', line)
    if m:
        name = m.group(1); tree[name] = 'on'
    m = re.match(r'^    enabled:\s*(\w+)', line)
    if m and name:
        tree[name] = 'on' if m.group(1).lower() == 'true' else 'off'
bad = [(n, cat[n], tree[n]) for n in tree if n in cat and cat[n] != tree[n]]
assert not bad, bad
PY
# the catalog lists (or names) every op and transform the fixture tree (the real layout) registers
check "catalog covers the fixture tree" 0 python3 - "$tests/../kernels/catalog.txt" "$tree" <<'PY'
import os, re, sys
ops, transforms, cur = set(), set(), None
for line in open(sys.argv[1]):
    if line.startswith('['):
        cur = True
    key, _, val = line.partition('=')
    key = key.strip()
    if cur is not None and key in ('kernels', 'wrappers', 'reference', 'subsumed_by'):
        ops.update(val.split())
    if cur is not None and key == 'transforms':
        transforms.update(w.partition(':')[0] for w in val.split())
reg_ops, reg_transforms = {}, set()
for d, _, fs in os.walk(sys.argv[2]):
    for f in fs:
        if f.endswith('.py'):
            text = open(os.path.join(d, f)).read()
            for ns, op in re.findall(r'torch\.library\.custom_op\(\s*["\']([\w.]+)::(\w+)', text):
                reg_ops[f'{ns}.{op}'] = f
            reg_transforms.update(re.findall(r'TransformRegistry\.register\(\s*["\'](\w+)', text))
text = open(sys.argv[1]).read()  # an op the catalog names only in words (not to recommend) counts
missing = sorted(o for o in reg_ops if o not in ops and not re.search(r'\b' + o.split('.')[-1] + r'\b', text)) + sorted(reg_transforms - transforms)
assert not missing, f'registered in the tree, not in the catalog: {missing}'
PY
finish
