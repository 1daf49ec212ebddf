#!/usr/bin/env bash
# The generated kernels on the GPU: RMSNorm, RoPE, add + RMSNorm and SwiGLU of
# the bundled 2-layer Llama, fused and unfused, verdict pass; a planted wrong
# eps fails and triage on the kernel (FMA off, eager rounding) calls it a bug.
# Skipped (exit 77) where no GPU can be used: the report says why.
# usage: gpu.sh FUSESCAN TESTS_DIR
set -u
exe=$1 tests=$2
# shellcheck source=tests/scripts/lib.sh
. "$(dirname "$0")/lib.sh"
llama=$tests/data/export_tiny_llama_2l/001_export_export_to_gm.txt
"$exe" --apply rmsnorm-3feecfe3 --tokens 512 --no-render --out "$tmp/probe" "$llama" >"$tmp/probe.out" 2>&1
if ! grep -q "GPU verdict" "$tmp/probe.out"; then
	echo "skipped: $(grep -h '^  GPU' "$tmp/probe.out" | head -1 | sed 's/^  //')"
	exit 77
fi
for id in rmsnorm-3feecfe3 rope_rotate_half-3bc3ce9c add_rmsnorm-aeb77c08 swiglu-b5058ea8; do
	check "$id on the GPU" 0 "$exe" --apply "$id" --tokens 512 --no-render --out "$tmp/$id" "$llama"
	contains "$id GPU verdict" "$tmp/out" "GPU verdict: pass"
	contains "$id timed" "$tmp/out" "time (median of 50"
done
check "planted eps on the GPU" 1 "$exe" --apply rmsnorm-3feecfe3 --tokens 512 --no-render --plant-bug eps --triage \
	--out "$tmp/plant" "$llama"
contains "planted eps fails on the GPU" "$tmp/out" "GPU verdict: fail"
contains "triage on the kernel: a bug" "$tmp/out" "triage (GPU): bug"
check "triage of a passing kernel" 0 "$exe" --apply swiglu-b5058ea8 --tokens 512 --no-render --triage --out "$tmp/t" "$llama"
contains "FMA-off run" "$tmp/out" "fused, FMA contraction off"
finish
