#!/usr/bin/env bash
# Matrix products on the GPU (label gpu), at Llama-3-8B widths: QKV (three
# products on one input, run as one on the concatenated weight), gate / up +
# SwiGLU (one product on the concatenated weight, then the generated epilogue
# kernel reading its two halves; and the generated GEMM, its epilogue inside,
# on the weights interleaved), the SwiGLU MLP (the same, then the down
# projection reading what the kernel wrote), addmm + bias +
# GELU-tanh and o_proj + residual add (the generated kernel against
# cuBLASLt's own epilogue, side by side; o_proj also the generated GEMM); Qwen2's biased QKV (weights and
# biases concatenated), attention scores (a batched product on a transposed
# key) + softmax, and a decomposed linear (mm on a permuted weight, read in
# place) + relu. At 2 tokens the float64 reference
# kernels agree with the CPU's reference, where the region fits the CPU
# executions' default budget (gate / up, the MLP and addmm hold weights
# past it: the CPU skips them, saying a GPU checks them); at 100 and 1000
# tokens (no CPU reference) the GPU's reference alone checks. Every run:
# verdict pass or correct-not-profitable (numerics pass; the timing is the
# benchmark's), and no tactic, variant or plan leaves NaN or unwritten
# elements (a tactic may miss the tolerance under fast math; poison left is a
# harness or generator bug, always). Then as scripts/bench_gemm.py runs them
# (--tokens T --buckets T --emit, T = 16 and 4096: the bucket of the run's own
# size, its op written), and gate / up tuned at buckets 1, 16, 256 and 4096
# at once. A second run finds cuBLASLt's fastest algorithm, and the generated
# GEMM's fastest tactic, in the tuning cache.
# Skipped (exit 77) where no GPU or no cuBLASLt can be used.
# usage: gemm_gpu.sh FUSESCAN TESTS_DIR fixtures|bench
set -u
exe=$1 tests=$2 section=${3:-fixtures}
# shellcheck source=tests/scripts/lib.sh
. "$(dirname "$0")/lib.sh"
d=$tests/data/gemm
P="--patterns $d/patterns"
export FUSESCAN_CACHE=$tmp/cache
cuda_or_skip
"$exe" --apply parallel_gemm --tokens 2 --no-render --out "$tmp/probe" "$d/qkv.txt" >"$tmp/probe.out" 2>&1
if ! grep -q "GPU check" "$tmp/probe.out"; then
	echo "skipped: $(grep -h '^  GPU\|error' "$tmp/probe.out" | head -1 | sed 's/^  //')"
	exit 77
fi
# clean NAME: no plan or tactic of the last run left NaN / Inf or unwritten elements
clean() {
	if grep -q "NaN / Inf or unwritten" "$tmp/out"; then
		fail=$((fail + 1)) && echo "FAIL $1: NaN / Inf or unwritten elements" && grep -m3 "NaN / Inf or unwritten" "$tmp/out"
	else pass=$((pass + 1)); fi
}
# run ID FILE TOKENS [--patterns DIR]: --apply on the GPU, verdict pass (or correct, not profitable), products by cuBLASLt
run() {
	check "$1 at $3 tokens" 0 "$exe" --apply "$1" --tokens "$3" --reps 20 --no-render --out "$tmp/$1.$3" "$d/$2.txt" "${@:4}"
	contains "$1 at $3: GPU check" "$tmp/out" "GPU check: pass"
	# numerics must pass; whether the plan beats the unfused chain is the benchmark's to say (a few
	# microseconds at 2 tokens, within noise)
	if grep -qE "^  verdict: (pass|correct, not profitable)" "$tmp/out"; then pass=$((pass + 1)); else
		fail=$((fail + 1)) && echo "FAIL $1 at $3: verdict" && grep "verdict:" "$tmp/out"; fi
	contains "$1 at $3: cuBLASLt" "$tmp/out" "matrix products: cuBLASLt "
	clean "$1 at $3"
	if [ "$3" = 2 ] && [[ " gate_up mlp addmm_gelu " == *" $2 "* ]]; then
		contains "$1 at 2: the CPU skips it, a GPU checks it" "$tmp/out" "where a GPU checks them"
	elif [ "$3" = 2 ]; then
		contains "$1 at 2: the GPU's reference is the CPU's" "$tmp/out" "float64 reference on the GPU (against the CPU's: max abs"
	fi
}
# generated NAME [cached]: the generated GEMM with the epilogue inside ran, a tactic of it passed the check,
# and it was timed beside the other variants; and its portable form (mma.sync) ran too; or (cached)
# the tactic came from the tuning cache (gate / up's, of the same shape, tuned just before)
generated() {
	if grep -oE "generated GEMM \([a-z0-9_.]*\) [^;]*" "$tmp/out" | grep -qv "failed"; then pass=$((pass + 1)); else
		fail=$((fail + 1)) && echo "FAIL $1: no generated GEMM passed" && grep -oE "(generated|no generated) GEMM[^;]*" "$tmp/out"; fi
	contains "$1: the generated GEMM beside the other variants" "$tmp/out" "against the generated GEMM "
	if [ "${2:-}" = cached ]; then
		contains "$1: the generated GEMM's tactic from the tuning cache" "$tmp/out" "ms) (tuning cache hit)"
	elif grep -qE "\(mma\.sync\) 128x128, 3 stages:? [0-9.]+ ms(,|;| \(|$)" "$tmp/out"; then pass=$((pass + 1)); else
		fail=$((fail + 1)) && echo "FAIL $1: the portable GEMM (mma.sync) did not pass" && grep -oE "\(mma\.sync\)[^,;]*[^;]{0,80}" "$tmp/out"; fi
}
if [ "$section" = fixtures ]; then
	for t in 2 100 1000; do
		run parallel_gemm qkv $t
		contains "QKV at $t: one product on the concatenated weight" "$tmp/out" "concatenated product: heuristic #"
		contains "QKV at $t: no kernel besides" "$tmp/out" "fused plan: 1 product "
		contains "QKV at $t: its rate" "$tmp/out" "TFLOP/s"
		run gate_up_swiglu gate_up $t $P
		contains "gate/up at $t: one product on the concatenated weight, then the kernel" "$tmp/out" "fused plan: 1 product + the fused kernel"
		contains "gate/up at $t: concatenated" "$tmp/out" "concatenated product: heuristic #"
		generated "gate/up at $t"
		run pattern:swiglu mlp $t
		contains "MLP at $t: gate / up, the kernel, then down" "$tmp/out" "fused plan: 2 products + the fused kernel"
		generated "MLP at $t" cached
		run gemm_bias_gelu_tanh addmm_gelu $t $P
		contains "addmm + GELU at $t: cuBLASLt's epilogue beside" "$tmp/out" "against cuBLASLt's epilogue (bias + gelu (tanh))"
		run gemm_residual oproj_residual $t $P
		contains "o_proj + residual at $t: cuBLASLt's epilogue beside" "$tmp/out" "against cuBLASLt's epilogue (residual add (C, beta 1))"
		generated "o_proj + residual at $t"
		run pattern:qkv_rope qkv_rope $t
		contains "QKV + RoPE at $t: one product, then RoPE on its q and k columns" "$tmp/out" "fused plan: 1 product + the fused kernel"
		run parallel_gemm qkv_bias $t
		contains "biased QKV at $t: weights and biases concatenated" "$tmp/out" "concatenated product: heuristic #"
		run bmm_softmax bmm_softmax $t $P
		contains "scores + softmax at $t: a batched product, then the kernel" "$tmp/out" "fused plan: 1 product + the fused kernel"
		run mm_relu mm_relu $t $P
		contains "mm on a permuted weight + relu at $t: cuBLASLt's epilogue beside" "$tmp/out" "against cuBLASLt's epilogue (relu)"
	done
	# the fastest of cuBLASLt's heuristic algorithms is kept in the tuning cache: a second run times none
	check "QKV, cache filled" 0 "$exe" --apply parallel_gemm --tokens 300 --reps 20 --no-render --cache "$tmp/c.json" --out "$tmp/c1" "$d/qkv.txt"
	contains "QKV: algorithms timed" "$tmp/out" " ms (#1 "
	check "QKV, cache hit" 0 "$exe" --apply parallel_gemm --tokens 300 --reps 20 --no-render --cache "$tmp/c.json" --out "$tmp/c2" "$d/qkv.txt"
	contains "QKV: cache hit" "$tmp/out" "(tuning cache hit)"
	contains "QKV: cache hit, verdict" "$tmp/out" "GPU check: pass"
	# so is the generated GEMM's fastest tactic: a second run times that one alone beside cuBLASLt's product
	check "gate/up, cache filled" 0 "$exe" --apply gate_up_swiglu --tokens 300 --reps 20 --no-render --cache "$tmp/c.json" --out "$tmp/c3" "$d/gate_up.txt" $P
	generated "gate/up, cache filled"
	check "gate/up, cache hit" 0 "$exe" --apply gate_up_swiglu --tokens 300 --reps 20 --no-render --cache "$tmp/c.json" --out "$tmp/c4" "$d/gate_up.txt" $P
	if grep -qE "generated GEMM \([a-z0-9_.]*\) [^;]* ms\) \(tuning cache hit\)" "$tmp/out"; then pass=$((pass + 1)); else
		fail=$((fail + 1)) && echo "FAIL gate/up: the generated GEMM's tactic not from the cache"; fi
	contains "gate/up: cache hit, verdict" "$tmp/out" "GPU check: pass"
	# fusescan tune re-times matrix products alone (no fused kernel): each a miss, recorded
	check "tune: QKV" 0 "$exe" tune --apply parallel_gemm --tokens 100 --buckets 100 --cache "$tmp/t.json" "$d/qkv.txt"
	contains "tune: QKV's product counted" "$tmp/out" "0 hits, 1 miss, 1 recorded"
else
	# as bench_gemm.py runs them: the bucket of the run's own size, emitted; the verdict pass (or the
	# fusion correct but slower than the unfused products: exit 0 too, and said)
	bench() { # bench NAME ID FILE TOKENS BUCKETS [--patterns DIR]
		check "$1 at $4 (buckets $5)" 0 "$exe" --apply "$2" --tokens "$4" --buckets "$5" --no-render --out "$tmp/b.$1.$4" \
			--emit "$tmp/b.$1.$4/emit" "$d/$3.txt" "${@:6}"
		if grep -qE "^  verdict: (pass|correct, not profitable)" "$tmp/out"; then pass=$((pass + 1)); else
			fail=$((fail + 1)) && echo "FAIL $1 at $4: verdict" && grep "verdict:" "$tmp/out"; fi
		contains "$1 at $4: emitted" "$tmp/out" "emitted: $tmp/b.$1.$4/emit/fs_"
		clean "$1 at $4"
		if grep -q "FAILS" "$tmp/out"; then fail=$((fail + 1)) && echo "FAIL $1 at $4: a bucket fails"; else pass=$((pass + 1)); fi
	}
	for t in 16 4096; do
		bench qkv parallel_gemm qkv $t $t
		bench gate_up gate_up_swiglu gate_up $t $t $P
		bench mlp pattern:swiglu mlp $t $t
		bench addmm_gelu gemm_bias_gelu_tanh addmm_gelu $t $t $P
		bench oproj gemm_residual oproj_residual $t $t $P
	done
	bench gate_up_buckets gate_up_swiglu gate_up 16 1,16,256,4096 $P
	if python3 -c 'import json, sys
b = json.load(open(sys.argv[1]))["gpu"]["tuning"]["buckets"]
sys.exit(not (len(b) == 4 and all(x["tuned"] and x["passed"] for x in b)))' "$tmp/b.gate_up_buckets.16/numerics.json"; then
		pass=$((pass + 1)); else fail=$((fail + 1)); echo "FAIL gate / up at four buckets: each tuned and passing"; fi
fi
finish
