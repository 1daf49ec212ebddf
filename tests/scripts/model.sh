#!/usr/bin/env bash
# The fusion inside a whole model, on a GPU: add + RMSNorm, RMSNorm, RoPE,
# SwiGLU and QKV as one product (parallel_gemm: its op's q and k column views
# of one output, made contiguous for RoPE's op) applied together inside a
# 2-layer Llama trained 300 steps on a synthetic language
# (scripts/validate_in_model.py: sites replaced = matches, top-1 and logits
# against the original and float32, each scaffold's search functions and
# tests). Skipped (77) without PyTorch and a GPU.
# usage: model.sh FUSESCAN WORK_DIR
set -u
exe=$1 work=$2
python3 -c 'import sys, torch; sys.exit(0 if torch.cuda.is_available() else 77)' 2>/dev/null || {
	echo "skipped: no PyTorch with a GPU"
	exit 77
}
exec python3 "$(dirname "$0")/../../scripts/validate_in_model.py" --fusescan "$exe" --arch llama --layers 2 \
	--set hidden_size=256 --set intermediate_size=688 --set num_attention_heads=4 --set num_key_value_heads=2 \
	--set vocab_size=1000 --train-steps 300 --tokens 256 --apply add_rmsnorm --apply rmsnorm --apply rope_rotate_half \
	--apply swiglu --apply parallel_gemm-23fbb5d7 --causal-mask --scaffold --no-compile --work "$work"
