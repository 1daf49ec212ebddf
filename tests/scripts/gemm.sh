#!/usr/bin/env bash
# Matrix products in the numerics check of --apply (CPU, float64 reference):
# every parallel-GEMM candidate of the bundled dumps that discovery finds (at
# 2 tokens: several dumps have full widths), linear + bias + GELU (gemm_bias_act,
# GPT-NeoX widths), the library's GEMM patterns where they match in three
# decomposed graphs, and the SwiGLU MLP (pattern:swiglu) pass; eager attention
# (its bmm reads the transposed key of a permuted view: no buffer's layout) is
# refused by name, exit 2, with no verdict; a region holding a GEMM runs its
# products through cuBLASLt (their float64 reference kernels compile), and too many multiply-adds
# for the CPU is an input error naming them. --emit writes every GEMM fixture's op (tests/data/gemm:
# its products through cuBLASLt, the kernel per bucket beside them; QKV the concatenated
# product alone, no kernel; the tiny Llama's two QKV sites sharing one op) and tests/scripts/check_emit.py accepts it.
# With `archs`, only the loops over every architecture: each parallel-GEMM candidate and each of
# the library's GEMM patterns in the decomposed graphs (label exhaustive: the ASan suite leaves
# them out; they run the same code as the rest on more graphs).
# usage: gemm.sh FUSESCAN TESTS_DIR [archs]
set -u
exe=$1 tests=$2 part=${3:-}
# shellcheck source=tests/scripts/lib.sh
. "$(dirname "$0")/lib.sh"
d=$tests/data

# passes_cpu ID FILE: --apply ID on the CPU at 2 tokens exits 0 with verdict pass; counts in n
passes_cpu() {
	local rc=0
	"$exe" --apply "$1" --cpu-only --no-render --tokens 2 --out "$tmp/pc" "$2" >"$tmp/out" 2>"$tmp/err" || rc=$?
	n=$((n + 1))
	if [ "$rc" -eq 0 ] && grep -qF "verdict: pass" "$tmp/out"; then pass=$((pass + 1)); else
		fail=$((fail + 1)) && echo "FAIL $1 on $2: exit $rc" && head -3 "$tmp/err"; fi
}

if [ "$part" = archs ]; then
	n=0
	for f in "$d"/export_*_2l/001_export_export_to_gm.txt "$d"/adrun_tiny_llama_2l/001_export_export_to_gm.txt; do
		case $f in */export_cohere_2l/*) continue ;; esac # its five fused projections hold 4 GB of weights in double
		for id in $("$exe" discover "$f" 2>/dev/null | sed -n 's/^Candidate [0-9]*: parallel_gemm .*id \(parallel_gemm-[0-9a-f]*\)\]$/\1/p'); do
			passes_cpu "$id" "$f"
		done
	done
	[ "$n" -ge 30 ] && pass=$((pass + 1)) || { fail=$((fail + 1)); echo "FAIL only $n parallel-GEMM candidates"; }

	# the library's GEMM patterns where they match in decomposed graphs (mm / bmm / addmm on
	# permuted weights): GPT-2's addmm + bias + GELU, eager attention's bmm, Qwen2's biased QKV, the MLP
	n=0
	for a in gpt2 llama_eager qwen2; do
		f=$d/export_${a}_2l/002_post_export_run_decompositions.txt
		for p in parallel_gemm gemm_bias_act swiglu eager_attention; do
			"$exe" match -p "$p" "$f" | grep -q "pattern=$p\] \[SUMMARY\] matches=0" && continue
			if [ "$p" = eager_attention ]; then # the transposed key's bmm: refused, as in the fixtures' part
				check "pattern:$p on $f" 2 "$exe" --apply "pattern:$p" --cpu-only --no-render --tokens 2 --out "$tmp/pc" "$f"
				contains "pattern:$p on $f: why" "$tmp/err" "an operand that is no buffer's layout"
				n=$((n + 1))
				continue
			fi
			passes_cpu "pattern:$p" "$f"
		done
	done
	[ "$n" -ge 6 ] && pass=$((pass + 1)) || { fail=$((fail + 1)); echo "FAIL only $n GEMM patterns matched in decomposed graphs"; }
	finish
	exit
fi

tiny=$d/adrun_tiny_llama_2l/001_export_export_to_gm.txt
check "QKV of the tiny Llama" 0 "$exe" --apply parallel_gemm-0d3c7fd0 --cpu-only --no-render --out "$tmp/q" "$tiny"
contains "QKV: three outputs" "$tmp/out" "-> %linear 1x16x256 bfloat16, %linear_1 1x16x128 bfloat16, %linear_2 1x16x128 bfloat16"
contains "QKV: verdict" "$tmp/out" "verdict: pass"
contains "QKV: products by cuBLASLt, their float64 reference compiled" "$tmp/out" "kernels: 6 generated (fused under 0 tactics, 0 unfused, 6 float64 reference), 6 compiled"
contains "QKV: json" "$tmp/q/numerics.json" '"verdict":	"pass"'
check "QKV: --emit" 0 "$exe" --apply parallel_gemm-0d3c7fd0 --cpu-only --no-render --out "$tmp/q" --emit "$tmp/qe" "$tiny"
contains "QKV: the products alone, no kernel" "$tmp/out" ".json: 0 kernels for 5 buckets, its products through cuBLASLt"
# every layer's QKV generates one op: one run, one descriptor naming both layers' sites
contains "QKV: the layers' sites share one op" "$tmp/out" "parallel_gemm (site %linear_2, and the sites of its kernel)"
check "QKV: one descriptor, both sites" 0 python3 -c 'import glob, json, sys
d = [json.load(open(f)) for f in glob.glob(sys.argv[1] + "/*.json")]
sys.exit(not (len(d) == 1 and len(d[0]["sites"]) == 2))' "$tmp/qe"

# the GPU plan's kernels compile: the SwiGLU epilogue reading the concatenated product's halves at
# a pitch, the MLP's reference storing the down projection's operand, a batched product's softmax;
# the generated GEMM with the epilogue inside under one tactic of each kind (TMA + wgmma for
# sm_90a; the portable mma.sync: compile_all.sh compiles all six), where the product is a linear
# without bias. The fixtures hold
# Llama-3-8B's widths, which the GPU tests time; here they run at an eighth of each width (the
# same plans and tiles, a 64th of the float64 weights the CPU executions hold), but QKV + RoPE,
# whose views into heads fix its widths
g=$tmp/gemm
mkdir -p "$g" && cp -r "$d/gemm/patterns" "$g/"
for f in "$d"/gemm/*.txt; do sed 's/14336/1792/g; s/4096/512/g; s/1024/128/g' "$f" >"$g/${f##*/}"; done
cp "$d/gemm/qkv_rope.txt" "$g/" # its heads (32 and 8 of 128) stay whole: the full widths, at a few tokens
check "gate / up + SwiGLU" 0 "$exe" --apply gate_up_swiglu --patterns "$g/patterns" --cpu-only --no-render --tokens 2 --out "$tmp/gu" "$g/gate_up.txt"
all_compiled "gate / up + SwiGLU: compiled" "$tmp/out"
contains "gate / up + SwiGLU: the generated GEMM" "$tmp/out" "the GEMM with its epilogue under 2,"
check "SwiGLU MLP" 0 "$exe" --apply pattern:swiglu --cpu-only --no-render --tokens 2 --out "$tmp/mlp" "$g/mlp.txt"
all_compiled "SwiGLU MLP: compiled" "$tmp/out"
contains "SwiGLU MLP: the generated GEMM" "$tmp/out" "the GEMM with its epilogue under 2,"
check "o_proj + residual" 0 "$exe" --apply gemm_residual --patterns "$g/patterns" --cpu-only --no-render --tokens 2 --out "$tmp/or" "$g/oproj_residual.txt"
all_compiled "o_proj + residual: compiled" "$tmp/out"
contains "o_proj + residual: the generated GEMM" "$tmp/out" "the GEMM with its epilogue under 2,"
check "addmm + bias + GELU" 0 "$exe" --apply gemm_bias_gelu_tanh --patterns "$g/patterns" --cpu-only --no-render --tokens 2 --out "$tmp/ag" "$g/addmm_gelu.txt"
all_compiled "addmm + bias + GELU: compiled" "$tmp/out"
if grep -q "the GEMM with its epilogue" "$tmp/out"; then fail=$((fail + 1)); echo "FAIL addmm + bias + GELU: a generated GEMM (it has a bias)"; else pass=$((pass + 1)); fi
check "bmm + softmax" 0 "$exe" --apply bmm_softmax --patterns "$g/patterns" --cpu-only --no-render --tokens 2 --out "$tmp/bs" "$g/bmm_softmax.txt"
all_compiled "bmm + softmax: compiled" "$tmp/out"

# --emit of every GEMM fixture: the descriptor, the PTX of every bucket's kernel, the module
for a in "parallel_gemm qkv" "parallel_gemm qkv_bias" "gate_up_swiglu gate_up -p" "pattern:swiglu mlp" \
	"gemm_residual oproj_residual -p" "gemm_bias_gelu_tanh addmm_gelu -p" "bmm_softmax bmm_softmax -p" "mm_relu mm_relu -p" \
	"pattern:qkv_rope qkv_rope"; do
	set -- $a
	check "$2: --emit" 0 "$exe" --apply "$1" ${3:+--patterns "$g/patterns"} --cpu-only --no-render --tokens 4 \
		--buckets 1,4,300 --out "$tmp/e_$2" --emit "$tmp/emit_$2" "$g/$2.txt"
	if python3 "$(dirname "$0")/check_emit.py" "$tmp/emit_$2" --buckets 1,4,300; then pass=$((pass + 1)); else fail=$((fail + 1)) && echo "FAIL $2: descriptor"; fi
done
contains "o_proj + residual: cuBLASLt's epilogue described" "$(ls "$tmp"/emit_oproj_residual/*.json)" '"c":	"r"'
contains "MLP: the down projection after the kernel" "$(ls "$tmp"/emit_mlp/*.json)" '"after_kernel":	true'
contains "QKV + RoPE: RoPE reads k's columns of the product" "$(ls "$tmp"/emit_qkv_rope/*.json)" '"offset":	4096'
ls "$tmp"/emit_qkv >"$tmp/qkv_files"
count "QKV: no PTX" "$tmp/qkv_files" ".ptx" 0

# --with-gemm: the SwiGLU candidate (a GEMM epilogue) takes in the two products it reads
check "swiglu --with-gemm" 0 "$exe" --apply swiglu --with-gemm --cpu-only --no-render --tokens 2 --out "$tmp/wg" "$tiny"
contains "swiglu --with-gemm: the products inside" "$tmp/out" "%mul_15 1x2x256 bfloat16, %m_model_layers_0_mlp_gate_proj_weight 688x256 bfloat16, %m_model_layers_0_mlp_up_proj_weight 688x256 bfloat16 -> %mul_16 1x2x688 bfloat16"
contains "swiglu --with-gemm: verdict" "$tmp/out" "verdict: pass"
contains "swiglu --with-gemm: the generated GEMM compiled" "$tmp/out" "the GEMM with its epilogue under 2"
check "swiglu without --with-gemm" 0 "$exe" --apply swiglu --cpu-only --no-render --tokens 2 --out "$tmp/wo" "$tiny"
contains "swiglu without --with-gemm: the epilogue alone" "$tmp/out" "-> %mul_16 1x2x688 bfloat16"
count "swiglu without --with-gemm: no weight read" "$tmp/out" "gate_proj_weight" 0

neox=$d/export_gpt_neox_2l/001_export_export_to_gm.txt
check "linear + bias + GELU" 0 "$exe" --apply pattern:gemm_bias_act --cpu-only --no-render --tokens 2 --out "$tmp/g" "$neox"
contains "linear + bias + GELU: operands" "$tmp/out" "%gpt_neox_layers_0_mlp_dense_h_to_4h_weight 24576x6144 bfloat16, %gpt_neox_layers_0_mlp_dense_h_to_4h_bias 24576 bfloat16 -> %gelu 1x2x24576 bfloat16"
contains "linear + bias + GELU: verdict" "$tmp/out" "verdict: pass"

# qwen3-next's gated delta rule: two batched matmuls over chunks padded to 64 (sympy's Mod in the shapes)
check "gated delta (qwen3-next)" 0 "$exe" --apply parallel_gemm-7e17ddb3 --cpu-only --no-render --out "$tmp/qn" "$d/export_qwen3_next_2l/001_export_export_to_gm.txt"
contains "gated delta: padded shapes bound" "$tmp/out" "%add_72 1x32x1x64x64 float32"
contains "gated delta: verdict" "$tmp/out" "verdict: pass"

# eager attention multiplies by the transposed key of a permuted view: no buffer's layout, so
# no plan of the products runs and the region is refused (exit 2), never passed beside that
check "eager attention (GPT-2)" 2 "$exe" --apply eager_attention --cpu-only --no-render --out "$tmp/a" "$d/export_gpt2_2l/001_export_export_to_gm.txt"
contains "eager attention: the permuted key is no dense layout" "$tmp/err" "001_export_export_to_gm.txt:75:1: error: numerics: the generator does not take this region: matrix product %matmul: an operand that is no buffer's layout"
check "eager attention (Llama)" 2 "$exe" --apply eager_attention --cpu-only --no-render --out "$tmp/a2" "$d/export_llama_eager_2l/001_export_export_to_gm.txt"
contains "eager attention (Llama): refused" "$tmp/err" "the generator does not take this region: matrix product %matmul_2: an operand that is no buffer's layout"
count "eager attention (Llama): no verdict beside the refusal" "$tmp/out" "verdict:" 0

check "too many multiply-adds for the CPU" 2 "$exe" --apply pattern:gemm_bias_act --cpu-only --no-render --tokens 64 --out "$tmp/big" "$neox"
contains "too many: where and what" "$tmp/err" "001_export_export_to_gm.txt:126:1: error: numerics: the region's matrix products take 9663676416 multiply-adds"
contains "too many: what to do" "$tmp/err" "lower --tokens"
# a dump whose shapes contradict each other: refused, no out-of-bounds read
cat > "$tmp/bad.txt" <<'DUMP'
%x : 4x8 : torch.float32
%w1 : 16x8 : torch.float32
%w2 : 16x6 : torch.float32
%a = aten.linear.default(%x : 4x8 : torch.float32, %w1 : 16x8 : torch.float32) : 4x16 : torch.float32
%b = aten.linear.default(%x : 4x8 : torch.float32, %w2 : 16x6 : torch.float32) : 4x16 : torch.float32
%c = aten.add.Tensor(%a : 4x16 : torch.float32, %b : 4x16 : torch.float32) : 4x16 : torch.float32
output %c
DUMP
check "contradictory GEMM shapes" 2 "$exe" --apply parallel_gemm --cpu-only --no-render --out "$tmp/bad" "$tmp/bad.txt"
contains "contradictory GEMM shapes message" "$tmp/err" "bad.txt:5:1: error: numerics: cannot execute %b (aten.linear.default): a linear's shapes do not match (x [.., K], weight [N, K], output [.., N])"
# the SwiGLU MLP pattern (gate, up, silu * up, down: three linears), named past the candidate 'swiglu'
check "pattern:swiglu" 0 "$exe" --apply pattern:swiglu --cpu-only --no-render --tokens 2 --out "$tmp/sw" "$d/export_tiny_llama_2l/001_export_export_to_gm.txt"
contains "pattern:swiglu: the MLP" "$tmp/out" "%m_model_layers_0_mlp_down_proj_weight 256x688 bfloat16 -> %linear_6 1x2x256 bfloat16"
contains "pattern:swiglu: verdict" "$tmp/out" "verdict: pass"
check "pattern:nope" 2 "$exe" --apply pattern:nope --cpu-only --no-render --out "$tmp/sw" "$d/export_tiny_llama_2l/001_export_export_to_gm.txt"
contains "pattern:nope: why" "$tmp/err" "the library has no pattern 'nope'"
finish
