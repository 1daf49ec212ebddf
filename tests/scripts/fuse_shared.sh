#!/usr/bin/env bash
# The rewrite issue's acceptance points on Llama-3-8B (../shared/dumps): the add +
# RMSNorm candidate applied to the final dump gives 64 fused nodes (AutoDeploy's
# wrapper, which discovery then counts as fused) and a valid graph; `fusescan diff` 014 -> 015 shows the 65 RMSNorm chains replaced by
# torch_rmsnorm; the 4000-node decomposed graph renders folded. Skipped (77)
# when the dumps are not there.
# usage: fuse_shared.sh FUSESCAN DUMPS_DIR
set -u
exe=$1 dumps=$2
[ -d "$dumps/adrun_llama3_8b" ] || { echo "skipped: $dumps not found"; exit 77; }
pass=0 fail=0
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
run=$dumps/adrun_llama3_8b
ok() { if "$@"; then pass=$((pass + 1)); else fail=$((fail + 1)); echo "FAIL: $*"; fi; }

"$exe" --apply add_rmsnorm-407262a5 --out "$tmp/a" "$run/035_compile_compile_model.txt" > "$tmp/out" 2>&1
ok grep -qF "[SUMMARY] matches=64 | 64 fused nodes, 0 sites skipped" "$tmp/out"
ok test "$(grep -c '= <function flashinfer_fused_add_rms_norm at 0x0>(' "$tmp/a/035_compile_compile_model.txt")" -eq 64
ok "$exe" scan "$tmp/a/035_compile_compile_model.txt" -o "$tmp/scan.txt"
# the after-dump as AutoDeploy's fuse_add_rms_norm leaves it (its wrapper): all 64 already fused
"$exe" discover --format json -o "$tmp/after.json" "$tmp/a/035_compile_compile_model.txt"
ok python3 -c "import json, sys; a = json.load(open(sys.argv[1]))['analyses'][0]
f = {x['name']: x['count'] for x in a['already_fused']}
sys.exit(f.get('add_rmsnorm') != 64)" "$tmp/after.json"
"$exe" diff "$run/014_pattern_matcher_match_rope_layout.txt" "$run/015_pattern_matcher_match_rmsnorm_pattern.txt" > "$tmp/diff" 2>&1
ok grep -qF "rmsnorm x65 replaced by auto_deploy.torch_rmsnorm.default" "$tmp/diff"
ok "$exe" render -o "$tmp/whole.svg" "$dumps"/export_llama3_8b/002_*
ok grep -qF "layers 1..31" "$tmp/whole.svg"
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
