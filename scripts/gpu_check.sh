#!/usr/bin/env bash
# The GPU side of fusescan --apply on the GPU machine: the generated kernels of
# the chains the GPU issue names, run against their unfused baselines, with
# the numerics verdict and timing, as one table.
#
#   scripts/gpu_check.sh prepare   # here: Release build + its shared libraries
#                                  # + the dumps into gpu-carry/ (git-ignored)
#   scripts/gpu_check.sh run [OUT] # there (carry gpu-carry): the GPU-labelled
#                                  # tests, then the table; each chain's
#                                  # numerics.json / fused.cu under OUT
# Environment: TOKENS (default 16384), SOFTMAX_TOKENS (default 1024: the
# float64 reference of a 32-head s x s score matrix is checked on the CPU).
set -euo pipefail
cd "$(dirname "$0")/.."
carry=gpu-carry

prepare() {
	cmake -S . -B build-gpu -DCMAKE_BUILD_TYPE=Release >/dev/null
	cmake --build build-gpu -j"$(nproc)" --target fusescan
	rm -rf "$carry" && mkdir -p "$carry/lib" "$carry/dumps"
	cp build-gpu/fusescan "$carry/"
	# every shared library but the C runtime, so the binary runs where the
	# -dev packages are not installed (CUDA itself is loaded at run time)
	ldd build-gpu/fusescan | awk '/=> \// {print $3}' |
		grep -vE '/(libc|libm|libdl|libpthread|librt|ld-linux[^/]*)\.so' | xargs -r cp -L -t "$carry/lib"
	cp ../shared/dumps/adrun_llama3_8b/001_export_export_to_gm.txt "$carry/dumps/llama3_8b_001.txt"
	cp tests/data/export_gemma2_2l/001_export_export_to_gm.txt "$carry/dumps/gemma2_001.txt"
	cp tests/data/export_gpt2_2l/001_export_export_to_gm.txt "$carry/dumps/gpt2_001.txt"
	cp tests/data/export_llama_eager_2l/001_export_export_to_gm.txt "$carry/dumps/llama_eager_001.txt"
	du -sh "$carry"
}

run() {
	local out=${1:-${OUT:-/tmp/fusescan-gpu}} tokens=${TOKENS:-16384} sm_tokens=${SOFTMAX_TOKENS:-1024}
	mkdir -p "$out"
	export LD_LIBRARY_PATH="$PWD/$carry/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" FUSESCAN_CACHE="$out/cache"
	local status=0
	bash tests/scripts/gpu.sh "$PWD/$carry/fusescan" tests | tail -n 3 | sed 's/^/tests (label gpu): /' || status=1
	printf '%-12s %-6s %-9s %-9s %-9s %-5s %-10s %-10s %-7s %-8s %-6s\n' chain tokens "unf.err" "fused.err" verdict ok \
		"fused.ms" "unf.ms" speedup "GB/s" "%copy"
	while read -r name id dump tok; do
		[ "$tok" = softmax ] && tok=$sm_tokens || tok=$tokens
		rc=0
		"$carry/fusescan" --apply "$id" --tokens "$tok" --no-render --out "$out/$name" "$carry/dumps/$dump" \
			>"$out/$name.log" 2>&1 || rc=$?
		[ "$rc" -eq 0 ] || status=1
		python3 - "$out/$name/numerics.json" "$name" "$tok" "$rc" <<'PY' || { echo "$name: no result (exit $rc)"; tail -n 5 "$out/$name.log"; status=1; }
import json, sys
j = json.load(open(sys.argv[1]))
g = j['gpu']
if not g['ran']:
    print(f"{sys.argv[2]:<12} {sys.argv[3]:<6} GPU skipped: {g.get('skipped', '')} {j['kernels']['error']}")
    sys.exit(0)
gbs = g['fused_bytes'] / (g['fused_ms'] * 1e-3) / 1e9
print(f"{sys.argv[2]:<12} {sys.argv[3]:<6} {g['unfused']['max_abs']:<9.2e} {g['fused']['max_abs']:<9.2e} {j['verdict']:<9} "
      f"{'yes' if sys.argv[4] == '0' else 'NO':<5} {g['fused_ms']:<10.4f} {g['unfused_ms']:<10.4f} "
      f"{g['unfused_ms'] / g['fused_ms']:<7.2f} {gbs:<8.0f} {100 * gbs / g['copy_gbs']:<6.0f}")
PY
	done <<'LIST'
rmsnorm      rmsnorm-3feecfe3                  llama3_8b_001.txt    -
add_rmsnorm  add_rmsnorm-aeb77c08              llama3_8b_001.txt    -
swiglu       swiglu-b5058ea8                   llama3_8b_001.txt    -
rope         rope_rotate_half-3bc3ce9c         llama3_8b_001.txt    -
geglu_tanh   geglu_tanh-38faf084               gemma2_001.txt       -
layernorm    layernorm                         gpt2_001.txt         -
bias_gelu    gelu_tanh-82011eea                gpt2_001.txt         -
softmax      eager_attention_softmax-661b75dd  llama_eager_001.txt  softmax
LIST
	# a planted bug must fail (exit 1), and triage must call it a bug
	for bug in eps cast; do
		rc=0
		"$carry/fusescan" --apply rmsnorm-3feecfe3 --tokens "$tokens" --no-render --triage --plant-bug "$bug" \
			--out "$out/plant_$bug" "$carry/dumps/llama3_8b_001.txt" >"$out/plant_$bug.log" 2>&1 || rc=$?
		echo "planted $bug: exit $rc; $(grep -hE 'GPU verdict|triage' "$out/plant_$bug.log" | tr -s ' ' | tr '\n' ';')"
		[ "$rc" -eq 1 ] || status=1
	done
	grep -h "^  GPU " "$out/rmsnorm.log" | head -1
	return $status
}

case "${1:-}" in
prepare) prepare ;;
run) shift; run "$@" ;;
*) echo "usage: $0 prepare | run [OUT]" >&2; exit 2 ;;
esac
