#!/usr/bin/env bash
# Every tactic a GPU would time compiles with NVRTC (--compile-all, where no
# GPU runs them; without it a run compiles one tactic of each kind): a row
# reduction, RoPE's strided layout, a masked softmax, an elementwise chain
# with a transcendental, the epilogue of a product, a reduction across the
# experts, a softmax with sinks. Skipped (77) without NVRTC. Label exhaustive.
# usage: compile_all.sh FUSESCAN TESTS_DIR
set -u
exe=$1 tests=$2
# shellcheck source=tests/scripts/lib.sh
. "$(dirname "$0")/lib.sh"
llama=$tests/data/export_tiny_llama_2l/001_export_export_to_gm.txt
"$exe" --apply rmsnorm-3feecfe3 --tokens 16 --cpu-only --no-render --out "$tmp/probe" "$llama" >"$tmp/probe.out" 2>&1
grep -q "compiled for sm_" "$tmp/probe.out" || { echo "skipped: $(grep -h 'kernels:' "$tmp/probe.out")"; exit 77; }
all() { # all NAME ID DUMP [--patterns DIR]: every tactic compiled, no error
	check "$1" 0 "$exe" --apply "$2" --tokens 2 --cpu-only --compile-all --no-render --out "$tmp/$1" "$3" "${@:4}"
	all_compiled "$1" "$tmp/out"
}
all rmsnorm rmsnorm-3feecfe3 "$llama"
all rope rope_rotate_half-3bc3ce9c "$llama"
all swiglu swiglu-b5058ea8 "$llama"
all softmax eager_attention_softmax-104f9fe6 "$tests/data/export_llama_eager_2l/001_export_export_to_gm.txt"
all gate_up gate_up_swiglu "$tests/data/gemm/gate_up.txt" --patterns "$tests/data/gemm/patterns"
contains "gate_up: the generated GEMM under its six tactics" "$tmp/out" "the GEMM with its epilogue under 6,"
all experts reduction.sum-cast-add-b4620dd5 "$tests/data/export_deepseek_v3_2l/001_export_export_to_gm.txt"
all sinks softmax_sinks "$tests/data/export_gpt_oss_2l/001_export_export_to_gm.txt"
# at 3 tokens the sinks' row (4) takes vectors of 4, its output (3) none: every tactic within both
check "sinks at 3 tokens" 0 "$exe" --apply softmax_sinks --tokens 3 --cpu-only --compile-all --no-render --out "$tmp/sinks3" \
	"$tests/data/export_gpt_oss_2l/001_export_export_to_gm.txt"
all_compiled "sinks at 3 tokens" "$tmp/out"
if grep -q "tactic: vec [248]" "$tmp/sinks3/fused.cu"; then fail=$((fail + 1)); echo "FAIL sinks at 3 tokens: a vector wider than the output's row"; else pass=$((pass + 1)); fi
finish
