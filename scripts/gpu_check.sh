#!/usr/bin/env bash
# The GPU side of fusescan, end to end, on a GPU machine: every part spreads
# its independent runs over the GPUs it is given (GPUS, default every visible
# one), one run at a time on a GPU, and the parts run one after the other.
#
#   scripts/gpu_check.sh prepare   # here: Release build + its shared libraries
#                                  # + the dumps into gpu-carry/ (git-ignored)
#   scripts/gpu_check.sh run [OUT] # there (carry gpu-carry): the parts, each
#                                  # one's log and results under OUT
#   scripts/gpu_check.sh gpus      # the GPUs run spreads over (GPUS, else
#                                  # CUDA_VISIBLE_DEVICES, else every one listed)
#
# Parts (PARTS, default "tests gemm bench memcheck sweep plants"):
#   tests     every ctest labelled gpu or exhaustive: tests/scripts/gpu.sh (the kernels, tuning, the cache, --emit,
#             triage, Qwen3-Next's L2 norm at 2048 tokens), gemm_gpu.sh fixtures (matrix products) and
#             bench (each GEMM fixture as bench_gemm runs it), check_torch_op.py (the emitted ops at every token count),
#             model.sh (a 2-layer Llama with five fusions applied, QKV one of them); gemm.sh archs, compile_all.sh (CPU)
#   gemm      scripts/bench_gemm.py at GEMM_TOKENS (default 16,16384), a row per GPU, as one table
#   bench     scripts/bench_torch.py at TOKENS (default 1,16,256,4096,16384) against eager and
#             torch.compile, the chains dealt to the GPUs, then one table (scripts/bench_table.py)
#   memcheck  compute-sanitizer memcheck over each op family and each GEMM plan, every tactic, and an
#             eager attention softmax past 2^31 elements (its tuned tactic)
#   sweep     every candidate discovery finds on every fixture architecture at SWEEP_TOKENS (default
#             2048), SWEEP_JOBS at once (default 2 a GPU), classed (scripts/sweep_candidates.py): no
#             fail, crash or contradiction
#   plants    planted bugs (a wrong eps, a dropped cast) fail with exit 1 and triage calls them bugs
#   model     (not default) scripts/validate_in_model.py: a 4-layer Llama-3-8B-width model, the
#             elementwise and the GEMM fusions applied, with and without the causal mask's rewrite,
#             the runs dealt to the GPUs (MODEL_RUNS, default "300:causal 300:mask": training steps,
#             then causal or mask)
# ONLY: the chains the bench part times (default all).
set -euo pipefail
[ "${BASH_SOURCE[0]}" != "$0" ] || cd "$(dirname "$0")/.." # sourced (a test of spread): stays
carry=gpu-carry
exe=$PWD/$carry/fusescan

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

# spread LOGDIR CMD...: the commands (shell strings) over the GPUs as a queue, in the order given
# (put the longest first): each GPU runs one at a time and takes the next one not yet taken as soon
# as it is free; each one's output in LOGDIR/i.log, printed in order once all are done; status 1 if
# any fails
spread() {
	local logs=$1 status=0 g
	shift
	local -a cmds=("$@") pids=()
	rm -rf "$logs" && mkdir -p "$logs"
	for ((g = 0; g < ${#gpus[@]} && g < ${#cmds[@]}; g++)); do
		(
			s=0
			for ((c = 0; c < ${#cmds[@]}; c++)); do
				mkdir "$logs/taken.$c" 2>/dev/null || continue # atomic: one GPU takes command c
				CUDA_VISIBLE_DEVICES=${gpus[g]} bash -c "${cmds[c]}" >"$logs/$c.log" 2>&1 || { echo "exit $?" >>"$logs/$c.log"; s=1; }
			done
			exit $s
		) &
		pids+=($!)
	done
	for g in "${pids[@]}"; do wait "$g" || status=1; done
	for ((c = 0; c < ${#cmds[@]}; c++)); do cat "$logs/$c.log"; done
	return $status
}

# the GPUs the parts spread over, comma-separated: GPUS, else CUDA_VISIBLE_DEVICES, else every one
# nvidia-smi lists, else 0
list_gpus() {
	local l=${GPUS:-${CUDA_VISIBLE_DEVICES:-$(nvidia-smi --query-gpu=index --format=csv,noheader 2>/dev/null | tr -d ' ' | paste -sd, -)}}
	echo "${l:-0}"
}

run() {
	local out=${1:-${OUT:-/tmp/fusescan-gpu}} status=0 part
	mkdir -p "$out"
	export LD_LIBRARY_PATH="$PWD/$carry/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" FUSESCAN_CACHE=${FUSESCAN_CACHE:-/tmp/fusescan-cache}
	IFS=, read -ra gpus <<<"$(list_gpus)"
	echo "gpu_check: $(nvidia-smi -L 2>/dev/null | head -1 | sed 's/ (UUID.*//') x${#gpus[@]}; parts: ${PARTS:-tests gemm bench memcheck sweep plants}"
	for part in ${PARTS:-tests gemm bench memcheck sweep plants}; do
		local t0=$SECONDS
		echo "== $part"
		case $part in
		tests | gemm | bench | memcheck | sweep | plants | model) "part_$part" "$out" || { status=1; echo "$part: FAILED"; } ;;
		*) echo "unknown part '$part'"; status=1 ;;
		esac
		echo "== $part: $((SECONDS - t0)) s"
	done
	return $status
}

part_tests() {
	local out=$1
	# the longest first, so the shorter ones share a GPU after them
	spread "$out/tests" \
		"bash tests/scripts/gemm_gpu.sh '$exe' tests fixtures 2>&1 | grep -E 'FAIL|passed|skipped|error' | sed 's/^/gemm tests (label gpu): /'; exit \${PIPESTATUS[0]}" \
		"bash tests/scripts/gemm_gpu.sh '$exe' tests bench 2>&1 | grep -E 'FAIL|passed|skipped|error' | sed 's/^/gemm as bench_gemm runs them (label gpu): /'; exit \${PIPESTATUS[0]}" \
		"bash tests/scripts/gpu.sh '$exe' tests | tail -n 3 | sed 's/^/tests (label gpu): /'; exit \${PIPESTATUS[0]}" \
		"python3 -u tests/scripts/check_torch_op.py '$exe' tests '$out/torch_op' | tail -n 3 | sed 's/^/torch op: /'; exit \${PIPESTATUS[0]}" \
		"bash tests/scripts/model.sh '$exe' '$out/model_2l' 2>&1 | grep -vE 'Warning|warn|^ +%|return cls' | tail -n 14 | sed 's/^/model (2 layers): /'; exit \${PIPESTATUS[0]}" \
		"bash tests/scripts/gemm.sh '$exe' tests archs | tail -n 3 | sed 's/^/the GEMM candidates of every architecture (label exhaustive): /'; exit \${PIPESTATUS[0]}" \
		"bash tests/scripts/compile_all.sh '$exe' tests | tail -n 3 | sed 's/^/every tactic compiled (label exhaustive): /'; exit \${PIPESTATUS[0]}"
}

part_gemm() {
	local out=$1 r t
	local -a cmds=()
	mkdir -p "$out/gemm"
	# a run per row and size (the largest first: they take longest), dealt to the GPUs
	for t in $(tr , '\n' <<<"${GEMM_TOKENS:-16,16384}" | sort -rn); do
		for r in $(python3 scripts/bench_gemm.py --list); do
			cmds+=("python3 -u scripts/bench_gemm.py --fusescan '$exe' --tokens $t --only $r --out '$out/gemm/${r}_$t' 2>'$out/gemm/${r}_$t.stderr' || { tail -n 20 '$out/gemm/${r}_$t.stderr'; exit 1; }")
		done
	done
	spread "$out/gemm/logs" "${cmds[@]}" | awk '!/^(row |NVIDIA)/ || !seen[$1]++' # one header
	return "${PIPESTATUS[0]}"
}

part_bench() {
	local out=$1 status=0 chains c i mine
	# the chains at Llama-3-8B widths, tuned per bucket and emitted as PyTorch ops, timed at every
	# size against PyTorch eager and torch.compile: one bench_torch.py run per GPU holding its chains
	# (its fresh timing processes start once for all of them), then their rows as one table
	chains=${ONLY:-$(cd scripts && python3 -c 'import torch_chains as tc; print(",".join(c[0] for c in tc.CHAINS))' 2>/dev/null)}
	IFS=, read -ra chains <<<"$chains"
	[ ${#chains[@]} -gt 0 ] || { echo "bench: no chains (ONLY unset and scripts/torch_chains.py does not import)"; return 1; }
	rm -rf "$out/bench" && mkdir -p "$out/bench"
	local -a cmds=()
	for i in "${!gpus[@]}"; do
		mine=
		for ((c = i; c < ${#chains[@]}; c += ${#gpus[@]})); do mine+=${mine:+,}${chains[c]}; done
		[ -n "$mine" ] || continue
		cmds+=("python3 -u scripts/bench_torch.py --fusescan '$exe' --dumps '$carry/dumps' --tokens '${TOKENS:-1,16,256,4096,16384}' --only $mine --out '$out/bench/gpu_$i' 2>&1 | grep -v Warning; exit \${PIPESTATUS[0]}")
	done
	spread "$out/bench/logs" "${cmds[@]}" || status=1
	local -a runs=("$out/bench"/gpu_*/bench.json)
	[ ! -e "${runs[0]}" ] || python3 scripts/bench_table.py "${runs[@]}" || status=1
	return $status
}

part_memcheck() {
	local out=$1 llama=tests/data/export_tiny_llama_2l/001_export_export_to_gm.txt d=tests/data/gemm
	local eager=tests/data/export_llama_eager_2l/001_export_export_to_gm.txt
	local next=tests/data/export_qwen3_next_2l/002_post_export_run_decompositions.txt
	local ms="$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer) --tool memcheck --error-exitcode 99 --print-limit 10 '$exe'" a="--reps 10 --no-render"
	mkdir -p "$out/memcheck"
	# the two largest, tuned first without the sanitizer (every tactic under it would take ten minutes
	# and more), then every kernel the tuned run launches under it: Mamba 2's chunk mask summed over
	# its chunks (dims derived from the length, 85M-element products over 8 + 1 chunks), and a
	# softmax past 2^31 elements (32 x 8200 x 8200 scores)
	local -a tuned=(
		"ssd_mask --apply reduction.cat-tril-bitwise_not-masked_fill-exp-mul-8abdc5c6 --tokens 2048 --buckets 2048 tests/data/export_mamba2_chunks_2l/001_export_export_to_gm.txt"
		"big --apply eager_attention_softmax-104f9fe6 --tokens 8200 --buckets 8200 $eager"
	)
	# then every tactic of each op family under it (an output of part of each row, the longest, first;
	# row reductions, elementwise, strided RoPE, two outputs, a masked softmax, a row's tail past its
	# end, a reduction across a middle dim, a cat along a middle dim) and of each GEMM plan
	# (concatenated products alone, products + kernel + the generated GEMM, cuBLASLt's epilogue, a
	# product after the kernel)
	local -a runs=(
		"sinks --apply softmax_sinks --tokens 511 --buckets 511 tests/data/export_gpt_oss_2l/001_export_export_to_gm.txt"
		"cat --apply elementwise.exp-cat-mul-tanh-4a463fb9 --tokens 2048 --buckets 2048 tests/data/ops/cat_chunks.txt"
		"rmsnorm --apply rmsnorm-3feecfe3 --tokens 512 --buckets 512 $llama"
		"rope --apply rope_rotate_half-3bc3ce9c --tokens 512 --buckets 512 $llama"
		"add_rmsnorm --apply add_rmsnorm-aeb77c08 --tokens 512 --buckets 512 $llama"
		"swiglu --apply swiglu-b5058ea8 --tokens 16 --buckets 16 --emit $out/memcheck/emit $llama"
		"softmax --apply eager_attention_softmax-104f9fe6 --tokens 512 --buckets 512 $eager"
		"l2norm --apply l2norm --tokens 2048 --buckets 2048 $next"
		"experts --apply reduction.sum-cast-add-b4620dd5 --tokens 2048 --buckets 2048 tests/data/export_deepseek_v3_2l/001_export_export_to_gm.txt"
		"qkv --apply parallel_gemm --tokens 100 --buckets 100 $d/qkv.txt"
		"gate_up --apply gate_up_swiglu --tokens 100 --buckets 100 $d/gate_up.txt --patterns $d/patterns"
		"oproj --apply gemm_residual --tokens 100 --buckets 100 $d/oproj_residual.txt --patterns $d/patterns"
		"mlp --apply pattern:swiglu --tokens 16 --buckets 16 $d/mlp.txt"
	)
	local -a cmds=()
	local r name m
	for r in "${tuned[@]}"; do
		name=${r%% *} m=$out/memcheck/${r%% *}
		cmds+=("'$exe' ${r#* } $a --cache '$m.json' --out '${m}0' >'${m}0.log' 2>&1 && $ms ${r#* } $a --cache '$m.json' --out '$m' >'$m.log' 2>&1; rc=\$?; echo \"memcheck $name (its tuned tactic): exit \$rc, \$(grep -h 'ERROR SUMMARY' '$m.log' | tail -n 1)\"; [ \$rc -eq 0 ]")
	done
	for r in "${runs[@]}"; do
		name=${r%% *} m=$out/memcheck/${r%% *}
		cmds+=("$ms ${r#* } $a --cache '$m.json' --out '$m' >'$m.log' 2>&1; rc=\$?; echo \"memcheck $name: exit \$rc, \$(grep -h 'ERROR SUMMARY' '$m.log' | tail -n 1)\"; [ \$rc -eq 0 ]")
	done
	spread "$out/memcheck/logs" "${cmds[@]}"
}

part_sweep() {
	local out=$1
	python3 -u scripts/sweep_candidates.py --fusescan "$exe" --tokens "${SWEEP_TOKENS:-2048}" --gpus "$(
		IFS=,
		echo "${gpus[*]}"
	)" --jobs "${SWEEP_JOBS:-$((2 * ${#gpus[@]}))}" --out "$out/sweep"
}

part_plants() {
	local out=$1 bug
	local -a cmds=()
	# a planted bug must fail (exit 1), and triage must call it a bug
	for bug in eps cast; do
		cmds+=("rc=0; '$exe' --apply rmsnorm-3feecfe3 --tokens 16384 --buckets 16384 --no-render --triage --plant-bug $bug \
			--out '$out/plant_$bug' '$carry/dumps/llama3_8b_001.txt' >'$out/plant_$bug.log' 2>&1 || rc=\$?
			echo \"planted $bug: exit \$rc; \$(grep -hE 'GPU check|triage|  verdict' '$out/plant_$bug.log' | tr -s ' ' | tr '\n' ';')\"
			[ \$rc -eq 1 ]")
	done
	spread "$out/plants" "${cmds[@]}"
}

part_model() {
	local out=$1 run steps mask
	local -a cmds=()
	# add + RMSNorm, RMSNorm, RoPE, QKV as one product and the SwiGLU MLP (gate / up as one product,
	# SwiGLU, down) applied together inside a 4-layer Llama-3-8B-width model, with the AutoDeploy
	# scaffolds of the elementwise ones, and the attention's mask dropped where fusescan proves it
	# causal, trained 300 steps (peaked logits: the top-1 check means something); and without the
	# mask's rewrite, for the table.
	# MODEL_RUNS: the runs, each STEPS:causal (with --causal-mask) or STEPS:mask (without it),
	# dealt to the GPUs
	local -A seen=()
	for run in ${MODEL_RUNS:-300:causal 300:mask}; do
		if ! [[ $run =~ ^[0-9]+:(causal|mask)$ ]] || [ -n "${seen[$run]:-}" ]; then
			echo "MODEL_RUNS: '$run' is no STEPS:causal or STEPS:mask, or is given twice"
			return 1
		fi
		seen[$run]=1 steps=${run%%:*} mask=
		[ "${run#*:}" = causal ] && mask=--causal-mask
		cmds+=("set -o pipefail; python3 -u scripts/validate_in_model.py --fusescan '$exe' --arch llama --layers 4 \
			--set hidden_size=4096 --set intermediate_size=14336 --set num_attention_heads=32 \
			--set num_key_value_heads=8 --set vocab_size=128256 --set max_position_embeddings=8192 \
			--train-steps $steps --tokens 4096 --apply add_rmsnorm --apply rmsnorm $mask \
			--apply rope_rotate_half --apply parallel_gemm-23fbb5d7 --apply pattern:swiglu --scaffold \
			--work '$out/model_$steps${mask:+_causal}' --json '$out/model_$steps${mask:+_causal}.json' 2>&1 |
			grep -vE 'Warning|warn|^ +%|return cls' | sed 's/^/model $run: /'; s=\$?; rm -rf '$out/model_$steps${mask:+_causal}'; exit \$s")
	done
	spread "$out/model" "${cmds[@]}"
}

[ "${BASH_SOURCE[0]}" = "$0" ] || return 0 # sourced: the functions alone
case "${1:-}" in
prepare) prepare ;;
run) shift; run "$@" ;;
gpus) list_gpus ;;
*) echo "usage: $0 prepare | run [OUT] | gpus" >&2; exit 2 ;;
esac
