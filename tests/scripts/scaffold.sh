#!/usr/bin/env bash
# fusescan --apply ... --emit OPS --scaffold DIR on the bundled 2-layer Llama
# (export flavour), without a GPU: add + RMSNorm, RMSNorm, RoPE and SwiGLU
# applied together; every descriptor names the sites its op replaces (no node
# twice, as many as the summary's matches); per candidate the transform
# module, its test, its iteration note and its sites (every site of the
# candidate, overlaps included), and default.yaml; all Python compiles;
# --scaffold without --emit is a usage error. The scaffolds run on the GPU
# machine (scripts/validate_in_model.py --scaffold).
# usage: scaffold.sh FUSESCAN TESTS_DIR
set -u
exe=$1 tests=$2
# shellcheck source=tests/scripts/lib.sh
. "$(dirname "$0")/lib.sh"
dump=$tests/data/export_tiny_llama_2l/001_export_export_to_gm.txt

check "four candidates, emitted and scaffolded" 0 "$exe" --apply add_rmsnorm --apply rmsnorm --apply rope_rotate_half \
	--apply swiglu --cpu-only --no-render --out "$tmp/a" --emit "$tmp/ops" --scaffold "$tmp/s" "$dump"
# 4 add + RMSNorm, the first layer's RMSNorm (the other 4 are inside the adds' sites), 2 RoPE q / k pairs, 2 SwiGLU
contains "summary" "$tmp/out" "[SUMMARY] matches=9 | 9 fused nodes, 4 sites skipped"
contains "scaffold reported" "$tmp/out" "scaffold: $tmp/s/fuse_<name>.py, test_fuse_<name>.py, fuse_<name>.md for 4 transforms"
if python3 "$(dirname "$0")/check_emit.py" "$tmp/ops"; then pass=$((pass + 1)); else fail=$((fail + 1)) && echo "FAIL descriptors"; fi
python3 - "$tmp/ops" "$tmp/s" <<'EOF' && pass=$((pass + 1)) || { fail=$((fail + 1)); echo "FAIL sites, scaffold files"; }
import glob, json, os, py_compile, re, sys
ops, s = sys.argv[1:]
by = {}
for p in glob.glob(ops + "/*.json"):
    j = json.load(open(p))
    assert j["graph"] == {"dump": "001_export_export_to_gm.txt", "stage": "export", "transform": "export_to_gm"}, j["graph"]
    by[j["candidate"]] = by.get(j["candidate"], 0) + len(j["sites"])
assert by == {"add_rmsnorm": 4, "rmsnorm": 1, "rope_rotate_half": 2, "swiglu": 2}, by
kernels = {"add_rmsnorm": 2, "rmsnorm": 1, "rope_rotate_half": 1, "swiglu": 1}  # the final norm keeps no sum
found = {"add_rmsnorm": 4, "rmsnorm": 5, "rope_rotate_half": 2, "swiglu": 2}
yaml = open(s + "/default.yaml").read()
for name, k in kernels.items():
    key = "fuse_" + name
    for f in (key + ".py", "test_" + key + ".py"):
        py_compile.compile(os.path.join(s, f), cfile=os.path.join(s, "__c.pyc"), doraise=True)
    mod = open(os.path.join(s, key + ".py")).read()
    assert f'@TransformRegistry.register("{key}")' in mod and "def find_sites(gm, kernels=None):" in mod, key
    assert len(re.findall(r"^def _search_\d+\(", mod, re.M)) == k, (key, k)
    assert f"  {key}:\n    stage: post_load_fusion\n    enabled: false\n" in yaml, yaml
    sites = json.load(open(os.path.join(s, key + ".sites.json")))["sites"]
    assert len(sites) == found[name], (name, len(sites))
    note = open(os.path.join(s, key + ".md")).read()
    for field in ("Candidate", "Path", "Rationale", "Graph validation", "Summary logs", "Numerics", "Tests", "Open risks"):
        assert f"- **{field}**" in note, (key, field)
assert "**Path**: existing_kernel_path" in open(s + "/fuse_add_rmsnorm.md").read()
assert "**Path**: triton_fallback_path" in open(s + "/fuse_swiglu.md").read() or \
    "**Path**: existing_kernel_path" in open(s + "/fuse_swiglu.md").read()
rope = open(s + "/fuse_rope_rotate_half.py").read()  # q and k in one search, the slices' literals as dumped
assert "torch.ops.aten.slice.Tensor(v0, 3, 32, 9223372036854775807)" in rope and "torch.ops.aten.cat.default([v5, v3], -1)" in rope, rope
EOF
# two candidates of one name (gpt-oss's two RMSNorms): each its own transform, default.yaml's keys unique
oss=$tests/data/export_gpt_oss_2l/002_post_export_run_decompositions.txt
check "two rmsnorm candidates" 0 "$exe" --apply rmsnorm-84e06465 --apply rmsnorm-a83755cf --cpu-only --no-render \
	--out "$tmp/o" --emit "$tmp/oops" --scaffold "$tmp/os" "$oss"
contains "two transforms reported" "$tmp/out" "for 2 transforms"
[ -f "$tmp/os/fuse_rmsnorm.py" ] && [ -f "$tmp/os/fuse_rmsnorm_2.py" ] && [ -f "$tmp/os/test_fuse_rmsnorm_2.py" ] &&
	[ "$(grep -c '^  fuse_rmsnorm' "$tmp/os/default.yaml")" = 2 ] && [ "$(grep '^  fuse_' "$tmp/os/default.yaml" | sort -u | wc -l)" = 2 ] &&
	pass=$((pass + 1)) || { fail=$((fail + 1)); echo "FAIL two candidates of one name share a transform"; }
check "scaffold without emit" 2 "$exe" --apply rmsnorm --cpu-only --no-render --out "$tmp/b" --scaffold "$tmp/s2" "$dump"
contains "scaffold without emit: why" "$tmp/err" "--scaffold needs --emit DIR"
[ ! -e "$tmp/s2" ] && pass=$((pass + 1)) || { fail=$((fail + 1)); echo "FAIL scaffold without emit wrote $tmp/s2"; }
finish
