#!/usr/bin/env bash
# The GPU side of fusescan --apply on the GPU machine: the GPU-labelled tests
# (tests/scripts/gpu.sh, then the emitted PyTorch ops at every token count,
# tests/scripts/check_torch_op.py), then the chains the GPU issues name,
# tuned per bucket, emitted as PyTorch ops and timed at every size against
# PyTorch eager and torch.compile, as one table; then the planted bugs.
#
#   scripts/gpu_check.sh prepare   # here: Release build + its shared libraries
#                                  # + the dumps into gpu-carry/ (git-ignored)
#   scripts/gpu_check.sh run [OUT] # there (carry gpu-carry): the GPU-labelled
#                                  # tests, then the tables; each chain's
#                                  # numerics.json / fused.cu under
#                                  # OUT/bench/gpu_K/CHAIN, each GPU's
#                                  # bench.json under OUT/bench/gpu_K
# Environment: TOKENS (the sizes, default 1,2,4,...,16384), PARTS (default "tests bench plants": what to
# run: "tests" is every ctest labelled gpu; "model" adds the in-model validation,
# scripts/validate_in_model.py; "gemm" scripts/bench_gemm.py at GEMM_TOKENS, default 16,16384), ONLY
# (the chains to bench, default all), GPUS (the GPUs the chains are spread over, default every
# visible one).
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
	cp tests/data/export_gemma2_l3w_2l/001_export_export_to_gm.txt "$carry/dumps/gemma2_l3w_001.txt"
	cp tests/data/export_gpt2_l3w_2l/001_export_export_to_gm.txt "$carry/dumps/gpt2_l3w_001.txt"
	cp tests/data/export_llama_eager_2l/001_export_export_to_gm.txt "$carry/dumps/llama_eager_001.txt"
	du -sh "$carry"
}

run() {
	local out=${1:-${OUT:-/tmp/fusescan-gpu}} tokens=${TOKENS:-1,2,4,8,16,32,64,128,256,512,1024,2048,4096,8192,16384}
	mkdir -p "$out"
	export LD_LIBRARY_PATH="$PWD/$carry/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" FUSESCAN_CACHE=${FUSESCAN_CACHE:-/tmp/fusescan-cache}
	local status=0
	local parts=" ${PARTS:-tests bench plants} "
	if [[ $parts == *" tests "* ]]; then
		bash tests/scripts/gpu.sh "$PWD/$carry/fusescan" tests | tail -n 3 | sed 's/^/tests (label gpu): /' || status=1
		# matrix products through cuBLASLt and the generated GEMM
		bash tests/scripts/gemm_gpu.sh "$PWD/$carry/fusescan" tests 2>&1 | grep -E "FAIL|passed|skipped|error" |
			sed 's/^/gemm tests (label gpu): /' || status=1
		python3 -u tests/scripts/check_torch_op.py "$PWD/$carry/fusescan" tests "$out/torch_op" | sed 's/^/torch op: /' || status=1
		bash tests/scripts/model.sh "$PWD/$carry/fusescan" "$out/model_2l" 2>&1 | grep -vE 'Warning|warn|^ +%|return cls' |
			tail -n 14 | sed 's/^/model (2 layers): /' || status=1
		rm -rf "$out/model_2l"
	fi
	if [[ $parts == *" gemm "* ]]; then
		# matrix products against PyTorch
		mkdir -p "$out/gemm"
		python3 -u scripts/bench_gemm.py --fusescan "$carry/fusescan" --tokens "${GEMM_TOKENS:-16,16384}" \
			--out "$out/gemm" 2>"$out/gemm/stderr.txt" || { status=1; tail -n 20 "$out/gemm/stderr.txt"; }
	fi
	if [[ $parts == *" bench "* ]]; then
		bench "$out" "$tokens" || status=1
	fi
	if [[ $parts == *" plants "* ]]; then
		plants "$out" || status=1
	fi
	if [[ $parts == *" model "* ]]; then
		model "$out" || status=1
	fi
	return $status
}

bench() {
	local out=$1 tokens=$2 status=0 gpus chains g i c mine
	# the chains at Llama-3-8B widths, tuned per bucket and emitted as PyTorch ops, timed at
	# every size against PyTorch eager and torch.compile (scripts/bench_torch.py): the chains
	# dealt in turn to the GPUs (GPUS, default every visible one), one run per GPU holding
	# its chains (its fresh timing processes start once, about 20 s each, not once per
	# chain; a failed or stopped run loses that GPU's chains alone), the runs side by side;
	# then their rows as one table (scripts/bench_table.py)
	gpus=${GPUS:-${CUDA_VISIBLE_DEVICES:-$(nvidia-smi -L 2>/dev/null | awk '{printf "%s%d", NR > 1 ? "," : "", NR - 1}')}}
	chains=${ONLY:-$(cd scripts && python3 -c 'import torch_chains as tc; print(",".join(c[0] for c in tc.CHAINS))' 2>/dev/null)}
	IFS=, read -ra gpus <<<"${gpus:-0}"
	IFS=, read -ra chains <<<"$chains"
	[ ${#chains[@]} -gt 0 ] || { echo "bench: no chains (ONLY unset and scripts/torch_chains.py does not import)"; return 1; }
	mkdir -p "$out/bench"
	rm -rf "$out/bench/failed" "$out/bench"/gpu_* # no earlier run's rows in the table
	for i in "${!gpus[@]}"; do
		mine=
		for ((c = i; c < ${#chains[@]}; c += ${#gpus[@]})); do mine+=${mine:+,}${chains[c]}; done
		[ -n "$mine" ] || continue
		CUDA_VISIBLE_DEVICES=${gpus[i]} python3 -u scripts/bench_torch.py --fusescan "$carry/fusescan" \
			--dumps "$carry/dumps" --tokens "$tokens" --only "$mine" --out "$out/bench/gpu_$i" \
			>"$out/bench/gpu_$i.log" 2>&1 || echo "bench $mine (GPU ${gpus[i]}): exit $?" >>"$out/bench/failed" &
	done
	wait
	for g in "$out/bench"/gpu_*.log; do
		grep -v Warning "$g" || true
	done
	[ ! -s "$out/bench/failed" ] || { cat "$out/bench/failed"; status=1; }
	g=("$out/bench"/gpu_*/bench.json)
	[ ! -e "${g[0]}" ] || python3 scripts/bench_table.py "${g[@]}" || status=1
	return $status
}

model() {
	local out=$1 status=0 steps
	# add + RMSNorm, RMSNorm, RoPE and SwiGLU applied together inside a 4-layer Llama-3-8B-width
	# model, with their AutoDeploy scaffolds (scripts/validate_in_model.py): seeded random weights,
	# then the same trained 300 steps on a synthetic language (peaked logits)
	for steps in ${MODEL_STEPS:-0 300}; do
		python3 -u scripts/validate_in_model.py --fusescan "$carry/fusescan" --arch llama --layers 4 \
			--set hidden_size=4096 --set intermediate_size=14336 --set num_attention_heads=32 \
			--set num_key_value_heads=8 --set vocab_size=128256 --set max_position_embeddings=8192 \
			--train-steps "$steps" --tokens 4096 --apply add_rmsnorm --apply rmsnorm \
			--apply rope_rotate_half --apply swiglu --scaffold --work "$out/model_$steps" \
			--json "$out/model_$steps.json" 2>&1 | grep -vE 'Warning|warn|^ +%|return cls' || status=1
		rm -rf "$out/model_$steps"
	done
	return $status
}

plants() {
	local out=$1 status=0
	# a planted bug must fail (exit 1), and triage must call it a bug
	for bug in eps cast; do
		rc=0
		"$carry/fusescan" --apply rmsnorm-3feecfe3 --tokens 16384 --buckets 16384 --no-render --triage --plant-bug "$bug" \
			--out "$out/plant_$bug" "$carry/dumps/llama3_8b_001.txt" >"$out/plant_$bug.log" 2>&1 || rc=$?
		echo "planted $bug: exit $rc; $(grep -hE 'GPU verdict|triage' "$out/plant_$bug.log" | tr -s ' ' | tr '\n' ';')"
		[ "$rc" -eq 1 ] || status=1
	done
	return $status
}

case "${1:-}" in
prepare) prepare ;;
run) shift; run "$@" ;;
*) echo "usage: $0 prepare | run [OUT]" >&2; exit 2 ;;
esac
