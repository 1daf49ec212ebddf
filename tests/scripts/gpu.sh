#!/usr/bin/env bash
# The generated kernels on the GPU: RMSNorm, RoPE, add + RMSNorm and SwiGLU of
# the bundled 2-layer Llama, fused and unfused, verdict pass, every tactic
# passing the numerics check; a second run hits the tuning cache (no tactic
# profiled) and `fusescan tune` re-times; --emit writes source, PTX and the
# descriptor; a planted wrong eps fails and triage on the kernel (FMA off,
# eager rounding) calls it a bug. The float64 reference kernel agrees with
# the CPU's reference to float64 rounding (which also proves both drew the
# same inputs), and checks alone a softmax too large for the CPU.
# Skipped (exit 77) where no GPU can be used: the report says why.
# usage: gpu.sh FUSESCAN TESTS_DIR
set -u
exe=$1 tests=$2
# shellcheck source=tests/scripts/lib.sh
. "$(dirname "$0")/lib.sh"
llama=$tests/data/export_tiny_llama_2l/001_export_export_to_gm.txt
export FUSESCAN_CACHE=$tmp/cache
cuda_or_skip
"$exe" --apply rmsnorm-3feecfe3 --tokens 512 --buckets 512 --no-render --cache "$tmp/probe.json" --out "$tmp/probe" "$llama" >"$tmp/probe.out" 2>&1
if ! grep -q "GPU check" "$tmp/probe.out"; then
	echo "skipped: $(grep -h '^  GPU' "$tmp/probe.out" | head -1 | sed 's/^  //')"
	exit 77
fi
for id in rmsnorm-3feecfe3 rope_rotate_half-3bc3ce9c add_rmsnorm-aeb77c08 swiglu-b5058ea8; do
	check "$id on the GPU" 0 "$exe" --apply "$id" --tokens 512 --buckets 512 --no-render --out "$tmp/$id" "$llama"
	contains "$id GPU check" "$tmp/out" "GPU check: pass"
	contains "$id verdict" "$tmp/out" "  verdict: pass"
	contains "$id timed" "$tmp/out" "time (median of 50"
	contains "$id tuned, no tactic failing" "$tmp/out" "tactics timed, 0 failed, "
	# a call of a few MB: the finalists met three companies, each one's times reported
	contains "$id finalists' companies" "$tmp/out" "after the unfused chain, "
	check "$id again" 0 "$exe" --apply "$id" --tokens 512 --buckets 512 --no-render --out "$tmp/$id.2" "$llama"
	contains "$id cache hit" "$tmp/out" "tuning: cache hit"
	contains "$id cache stats" "$tmp/out" "1 hit, 0 misses"
	# the device reference against the CPU's: float64 rounding apart
	agree=$(sed -n "s/.*against the CPU's: max abs \([^,]*\), max rel \([^,]*\), 0 non-finite.*/\1 \2/p" "$tmp/$id/numerics.txt")
	if [ -n "$agree" ] && awk -v a="${agree% *}" -v r="${agree#* }" 'BEGIN { exit !(a < 1e-12 && r < 1e-9) }'; then
		pass=$((pass + 1))
	else
		fail=$((fail + 1)); echo "FAIL $id: GPU and CPU references disagree: '$agree'"
	fi
done
check "tune re-times" 0 "$exe" tune --apply rmsnorm-3feecfe3 --apply swiglu-b5058ea8 --tokens 512 --buckets 512 "$llama"
count "tune: two kernels timed" "$tmp/out" "tactics timed, 0 failed, " 2
contains "tune: cache stats" "$tmp/out" "0 hits, 2 misses, 2 recorded"
check "another bucket misses" 0 "$exe" --apply rmsnorm-3feecfe3 --tokens 600 --buckets 600 --no-render --out "$tmp/b" "$llama"
contains "tokens 600: bucket 1024" "$tmp/out" "0 hits, 1 miss, 1 recorded"
# a cache of its own: both buckets tuned here (a cache hit has one finalist, met in no company)
check "emit" 0 "$exe" --apply swiglu-b5058ea8 --tokens 512 --buckets 16,512 --no-render --emit "$tmp/emit" --out "$tmp/e" \
	--cache "$tmp/emit_cache.json" "$llama"
contains "emit: written" "$tmp/out" "emitted: $tmp/emit/fs_"
contains "emit: bucket 16 tuned in CUDA graphs" "$tmp/out" "timed as CUDA graphs of 20 calls"
if python3 "$(dirname "$0")/check_emit.py" "$tmp/emit" --tuned --buckets 16,512; then pass=$((pass + 1)); else
	fail=$((fail + 1)); echo "FAIL emit: descriptor"; fi
# every bucket's finalists in numerics.json, each with its times in the three companies
if python3 -c 'import json, sys
b = json.load(open(sys.argv[1]))["gpu"]["tuning"]["buckets"]
sys.exit(not all(x["finalists"] and all(len(f["companies_ms"]) == 3 and f["worst_ratio"] >= 1 for f in x["finalists"]) for x in b))' \
	"$tmp/e/numerics.json"; then pass=$((pass + 1)); else fail=$((fail + 1)); echo "FAIL emit: the buckets' finalists"; fi
check "planted eps on the GPU" 1 "$exe" --apply rmsnorm-3feecfe3 --tokens 512 --buckets 512 --no-render --plant-bug eps --triage \
	--out "$tmp/plant" "$llama"
contains "planted eps fails on the GPU" "$tmp/out" "GPU check: fail"
contains "triage on the kernel: a bug" "$tmp/out" "triage (GPU): bug"
check "triage of a passing kernel" 0 "$exe" --apply swiglu-b5058ea8 --tokens 512 --buckets 512 --no-render --triage --out "$tmp/t" "$llama"
contains "FMA-off run" "$tmp/out" "fused, FMA contraction off"
# 32 x 8192 x 8192 scores: beyond the CPU executions, checked on the GPU alone
eager=$tests/data/export_llama_eager_2l/001_export_export_to_gm.txt
# at 16384 tokens: its unfused chain (103 GB in five buffers) runs in 52 GB planned by lifetime, so
# it fits an 80 GB card; the fused kernel's output goes where the chain's buffers were
check "softmax at 16384 tokens" 0 "$exe" --apply eager_attention_softmax-104f9fe6 --tokens 16384 --buckets 16384 --no-render \
	--out "$tmp/sm16k" "$eager"
contains "softmax at 16384: GPU check" "$tmp/out" "GPU check: pass"
check "softmax at 8192 tokens" 0 "$exe" --apply eager_attention_softmax-104f9fe6 --tokens 8192 --buckets 8192 --no-render --out "$tmp/sm" "$eager"
contains "softmax: CPU skipped" "$tmp/out" "CPU executions skipped: the region holds"
contains "softmax: GPU reference alone" "$tmp/out" "(no CPU reference at these sizes)"
contains "softmax: GPU check" "$tmp/out" "GPU check: pass"
contains "softmax: json" "$tmp/sm/numerics.json" '"cpu_ran":	false'
# Qwen3-Next's L2 norm of q / k at 2048 tokens: rows of 128 and a tactic of 256 threads a row (its
# scalar loads past the row's end read past the buffer at the last row: an illegal address)
next=$tests/data/export_qwen3_next_2l/002_post_export_run_decompositions.txt
check "l2norm at 2048 tokens" 0 "$exe" --apply l2norm --tokens 2048 --buckets 2048 --no-render --out "$tmp/l2" "$next"
contains "l2norm at 2048: verdict" "$tmp/out" "  verdict: pass"
if python3 -c 'import json, sys
t = json.load(open(sys.argv[1]))["gpu"]["tuning"]["tactics"]
sys.exit(not any(x["name"] == "v1 t256 r1" and "failed" not in x for x in t))' "$tmp/l2/numerics.json"; then
	pass=$((pass + 1)); else fail=$((fail + 1)); echo "FAIL l2norm at 2048: the tactic of 256 threads a row did not run and pass"; fi
# kernels the generator took on for held-out architectures: DeepSeek-V3's sum over its 8 experts (a
# reduction across a middle dim, in the thread), gpt-oss's softmax with sinks (the output is each
# row but the sink's column), repeat (the tensor tiled: Llama 4's expert copies, and a middle and
# the last dim of a hand-written dump); at 16 tokens the GPU's float64 reference agrees with the
# CPU's (the reference kernel is generated like the fused one: the CPU's is the independent check),
# at 511 and 2048 the GPU's alone
for c in "reduction.sum-cast-add-b4620dd5 export_deepseek_v3_2l/001_export_export_to_gm.txt" \
	"softmax_sinks export_gpt_oss_2l/001_export_export_to_gm.txt" \
	"elementwise.repeat-mul-e312cfb9 export_llama4_2l/001_export_export_to_gm.txt" \
	"elementwise.repeat-mul-cast-a4b52c57 ops/repeat.txt"; do
	set -- $c
	for t in 16 511 2048; do # 511: the sinks' row even, its output odd (vectors must divide both)
		check "$1 at $t" 0 "$exe" --apply "$1" --tokens $t --buckets $t --no-render --out "$tmp/$1.$t" "$tests/data/$2"
		if grep -qE "^  verdict: (pass|correct, not profitable)" "$tmp/out"; then pass=$((pass + 1)); else
			fail=$((fail + 1)) && echo "FAIL $1 at $t: verdict" && grep "verdict:" "$tmp/out"; fi
	done
	agree=$(sed -n "s/.*against the CPU's: max abs \([^,]*\), max rel \([^,]*\), 0 non-finite.*/\1 \2/p" "$tmp/$1.16/numerics.txt")
	if [ -n "$agree" ] && awk -v a="${agree% *}" -v r="${agree#* }" 'BEGIN { exit !(a < 1e-9 && r < 1e-6) }'; then
		pass=$((pass + 1))
	else
		fail=$((fail + 1)); echo "FAIL $1: GPU and CPU references disagree at 16 tokens: '$agree'"
	fi
done
finish
