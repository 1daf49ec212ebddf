#!/usr/bin/env bash
# The op table beyond the Llama family on the CPU, end to end through --apply:
# ops a region may hold (elementwise ops of every kind, repeat, repeat_interleave,
# stack, cat along a middle dim, pad, tril, bitwise_not, softplus, log1p, a
# literal of -inf), dims the export derived (a window of the sequence, Mamba 2's
# chunk count) and what is refused by name (an op without semantics, a rounding
# mode the dump drops, a repeat adding dims, a negative dim, contradictory
# shapes, a region whose expression would double at every level). Each passes
# and its kernels compile with NVRTC, or is refused with exit 2 and the reason.
# (tests/scripts/numerics.sh: the chains of the Llama family, planted bugs,
# the CPU executions' memory, the seed.)
# PART (default all) runs one half, each its own ctest so that they run side by side: ops (what
# is refused by name, the elementwise ops, repeat), dims (derived and negative dims, cat, stack,
# the fan-out, contradictory shapes, the literals and the rest of the table).
# usage: numerics_ops.sh FUSESCAN TESTS_DIR [ops|dims]
set -u
exe=$1 tests=$2 part=${3:-all}
# shellcheck source=tests/scripts/lib.sh
. "$(dirname "$0")/lib.sh"
d=$tests/data
in_part() { [ "$part" = all ] || [ "$part" = "$1" ]; }
case $part in all | ops | dims) ;; *) echo "numerics_ops.sh: no part '$part'" >&2; exit 2 ;; esac

# refused BASE OP MESSAGE: in a dump of %a = OP then a multiply, the candidate's --apply is refused
# (exit 2) at %a's line with MESSAGE
refused() {
	printf '%s\n' '%x : 4x8 : torch.float32' "%a = $2 : 4x8 : torch.float32" \
		'%b = aten.mul.Tensor(%a : 4x8 : torch.float32, 2.0) : 4x8 : torch.float32' 'output %b' >"$tmp/$1.txt"
	local id
	id=$("$exe" discover "$tmp/$1.txt" 2>/dev/null | sed -n 's/^Candidate 1: .*id \([^]]*\)\]$/\1/p')
	check "$1" 2 "$exe" --apply "$id" --out "$tmp/$1.out" "$tmp/$1.txt"
	contains "$1: why" "$tmp/err" "$1.txt:2:1: error: numerics: cannot execute %a $3"
}
if in_part ops; then
	# a region with an op outside the semantics table: a clear error, exit 2
	refused nosem "aten.addcmul.default(%x : 4x8 : torch.float32, %x : 4x8 : torch.float32, %x : 4x8 : torch.float32)" \
		"(aten.addcmul.default): no semantics for this op (fuse/sem.def)"
	# div with a rounding mode: the dump drops rounding_mode=, so it is refused, not guessed
	refused divmode "aten.div.Tensor_mode(%x : 4x8 : torch.float32, 3.0)" \
		"(aten.div.Tensor_mode): a division with a rounding mode the dump does not print"
	# the op table beyond the Llama family: square, exp2, expm1, log2, tan, atan, floor, ceil, trunc, sign,
	# relu6, hardsigmoid, hardswish, mish, true_divide, floor_divide, fmod, remainder, clamp_min / max,
	# leaky_relu (its default slope and a given one), hardtanh, lerp, isnan, isinf, logical and / or / xor
	check "more elementwise ops" 0 "$exe" --apply elementwise.square-exp2-expm1-add-log2-tan-4afc9e8b --cpu-only --no-render --tokens 5 \
		--out "$tmp/eo" "$d/ops/elementwise_ops.txt"
	contains "more elementwise ops: verdict" "$tmp/out" "verdict: pass"
	all_compiled "more elementwise ops: every kernel compiled" "$tmp/out"
	# xIELU's family: min / max of two tensors (aten.min.other, aten.max.other), minimum, maximum,
	# fmax, fmin; the dropout at inference in front of them a cleanup, not a member of the chain
	check "min / max of two tensors" 0 "$exe" --apply elementwise.softplus-minimum-expm1-maximum-fmax-fmin-1f28e91d --cpu-only --no-render \
		--tokens 5 --out "$tmp/mm" "$d/ops/xielu_minmax.txt"
	contains "min / max of two tensors: verdict" "$tmp/out" "verdict: pass"
	all_compiled "min / max of two tensors: every kernel compiled" "$tmp/out"
	check "no-op dropout" 0 "$exe" discover --format json -o "$tmp/mm.json" "$d/ops/xielu_minmax.txt"
	contains "no-op dropout: a cleanup" "$tmp/mm.json" '"kind":	"noop_dropout"'
	# repeat_interleave (Bamba's heads), stack (GPT-J's interleaved RoPE)
	check "repeat_interleave" 0 "$exe" --apply elementwise.cast-repeat_interleave-pad-c4297510 --cpu-only --no-render --tokens 3 --out "$tmp/ri" \
		"$d/export_bamba_2l/001_export_export_to_gm.txt"
	contains "repeat_interleave: verdict" "$tmp/out" "verdict: pass"
	# repeat (the tensor tiled): Llama 4's tokens copied to each expert; a middle and the last dim
	# tiled (the last as vectors, its size a multiple of theirs), every tactic compiled; a repeat that
	# adds leading dims is refused by name
	check "repeat (Llama 4 experts)" 0 "$exe" --apply elementwise.repeat-mul-e312cfb9 --cpu-only --no-render --tokens 3 --out "$tmp/rp" \
		"$d/export_llama4_2l/001_export_export_to_gm.txt"
	contains "repeat (Llama 4 experts): verdict" "$tmp/out" "verdict: pass"
	check "repeat of two dims" 0 "$exe" --apply elementwise.repeat-mul-cast-a4b52c57 --cpu-only --compile-all --no-render --tokens 3 --out "$tmp/rp2" \
		"$d/ops/repeat.txt"
	contains "repeat of two dims: verdict" "$tmp/out" "verdict: pass"
	all_compiled "repeat of two dims: every kernel compiled" "$tmp/out"
	contains "repeat of two dims: a dim read mod its size" "$tmp/rp2/fused.cu" "% (fs_ix)(S0)"
	check "repeat adding dims" 2 "$exe" --apply elementwise.repeat-mul-5a007cca --cpu-only --no-render --tokens 3 --out "$tmp/rp3" "$d/ops/repeat.txt"
	contains "repeat adding dims: why" "$tmp/err" "repeat.txt:6:1: error: numerics: cannot execute %a (aten.repeat.default): a repeat that adds leading dims"
fi

# the rest: part dims
in_part dims || { finish; exit; }
# a dim the export derived (a window of the sequence: Min(8, s0) - 4) negative at this binding:
# the error names the input, the dim, its value and the binding; where it is not, the run passes
check "a negative dim" 2 "$exe" --apply elementwise.mul-exp-880be9e2 --cpu-only --no-render --tokens 2 --out "$tmp/nd" "$d/ops/window.txt"
contains "a negative dim: why" "$tmp/err" "window.txt:4:1: error: numerics: the shape of input %w cannot be bound to sizes: dim 1 (Min(8,s0)-4) is -2 at s0=2"
check "the window bound" 0 "$exe" --apply elementwise.mul-exp-880be9e2 --cpu-only --no-render --tokens 6 --out "$tmp/nd6" "$d/ops/window.txt"
# Mamba 2 traced past two chunks: its dims derived from s70 (the chunk count of the padded length,
# (s70 + Mod(256 - Mod(s70, 256), 256)) // 256, and sizes divided by it) each computed once at the
# kernel's start and named; the index arithmetic reads the names
check "derived dims" 0 "$exe" --apply elementwise.tril-bitwise_not-masked_fill-e95b589e --cpu-only --no-render --tokens 64 \
	--out "$tmp/dd" "$d/export_mamba2_chunks_2l/001_export_export_to_gm.txt"
contains "derived dims: verdict" "$tmp/out" "verdict: pass"
all_compiled "derived dims: every kernel compiled" "$tmp/out"
contains "derived dims: named once" "$tmp/dd/fused.cu" "const fs_ix SZ0 = (fs_ix)("
# a cat along a dim the lanes do not move (Mamba 2's chunk states: one chunk of zeros, then the
# rest): each part is read only where it is selected; the other part's offset there lies before its
# buffer (the GPU's illegal address on Mamba 2 and Bamba at 2048 tokens)
check "cat along a middle dim" 0 "$exe" --apply elementwise.exp-cat-mul-tanh-4a463fb9 --cpu-only --compile-all --no-render --tokens 5 \
	--out "$tmp/cc" "$d/ops/cat_chunks.txt"
contains "cat along a middle dim: verdict" "$tmp/out" "verdict: pass"
all_compiled "cat along a middle dim: every kernel compiled" "$tmp/out"
contains "cat along a middle dim: the second part read only where selected" "$tmp/cc/fused.cu" \
	"((1 && (fs_ix)(d1) >= (0 + 1) && (fs_ix)(d1) < ((0 + 1) + S0)) ? ld_f32(p1, "
# views after such a cat make its index long: where the guard would pass an index's length, the
# parts are read element by element inside the select instead (the region is not refused)
check "cat, then views" 0 "$exe" --apply elementwise.exp-neg-cat-tanh-39e5b889 --cpu-only --compile-all --no-render \
	--out "$tmp/cv" "$d/ops/cat_views.txt"
contains "cat, then views: verdict" "$tmp/out" "verdict: pass"
all_compiled "cat, then views: every kernel compiled" "$tmp/out"
check "stack (GPT-J RoPE)" 0 "$exe" --apply rope_interleaved --cpu-only --no-render --tokens 3 --out "$tmp/gj" "$d/export_gptj_2l/001_export_export_to_gm.txt"
contains "stack (GPT-J RoPE): verdict" "$tmp/out" "verdict: pass"

# a region whose values fan out at every level (x squared, forty times): the expression doubles
# at each, so the generator stops at its bound and says so, at once; discover defers it
{
	echo "%x0 : 4096x4096 : torch.float32"
	for i in $(seq 1 40); do
		echo "%x$i = aten.mul.Tensor(%x$((i - 1)) : 4096x4096 : torch.float32, %x$((i - 1)) : 4096x4096 : torch.float32) : 4096x4096 : torch.float32"
	done
	echo "output (%x40,)"
} >"$tmp/fan.txt"
check "fan-out: refused at once" 2 timeout 60 "$exe" --apply elementwise.mul-25cee7e5 --cpu-only --no-render --out "$tmp/fan" "$tmp/fan.txt"
contains "fan-out: why" "$tmp/err" "fan.txt:2:1: error: numerics: the generator does not take this region: fused kernel: an expression past 1 MiB of source"
check "fan-out: discover" 0 timeout 60 "$exe" discover "$tmp/fan.txt"
contains "fan-out: deferred" "$tmp/out" "fusescan's generator does not take it: fused kernel: an expression past 1 MiB"

# a dump whose shapes contradict each other: refused, no out-of-bounds read
cat > "$tmp/bad.txt" <<'DUMP'
%x : 4x8 : torch.float32
%y : 3x8 : torch.float32
%w : 8x8 : torch.float32
%a = aten.exp.default(%x : 4x8 : torch.float32) : 4x8 : torch.float32
%b = aten.mul.Tensor(%a : 4x8 : torch.float32, %y : 3x8 : torch.float32) : 4x8 : torch.float32
%m = aten.mm.default(%b : 4x8 : torch.float32, %w : 8x8 : torch.float32) : 4x8 : torch.float32
output %m
DUMP
id=$("$exe" discover --format json "$tmp/bad.txt" | python3 -c 'import json,sys; print(json.load(sys.stdin)["analyses"][0]["candidates"][0]["id"])')
check "contradictory shapes" 2 "$exe" --apply "$id" --out "$tmp/bad" "$tmp/bad.txt"
contains "contradictory shapes message" "$tmp/err" "bad.txt:5:1: error: numerics: cannot execute %b (aten.mul.Tensor): an operand does not broadcast to the output shape"
# a literal of -inf (gpt-oss's clamp(x, -inf, 7)) compiles: the float's bits, not "inf"
check "clamp to -inf" 0 "$exe" --apply clamped_swiglu-fc878b9c --cpu-only --no-render --tokens 2 --out "$tmp/inf" \
	"$tests/data/export_gpt_oss_2l/001_export_export_to_gm.txt"
all_compiled "clamp to -inf: every kernel compiled" "$tmp/out"
# log1p (Bamba's decomposed softplus after its dt projection)
check "log1p" 0 "$exe" --apply gemm_epilogue.add-cast-exp-log1p-gt-where-7fcfb601 --cpu-only --no-render --tokens 2 --out "$tmp/l1p" \
	"$tests/data/export_bamba_2l/002_post_export_run_decompositions.txt"
contains "log1p: verdict" "$tmp/out" "verdict: pass"
all_compiled "log1p: every kernel compiled" "$tmp/out"
# constant padding (a symbolic pad after the sequence: Bamba's chunks), tril and bitwise_not of booleans
for id in elementwise.cast-mul-pad-953b68df elementwise.pad-tril-bitwise_not-masked_fill-1c58f95c; do
	check "pad / tril: $id" 0 "$exe" --apply "$id" --cpu-only --no-render --tokens 3 --out "$tmp/pd_$id" "$d/export_bamba_2l/001_export_export_to_gm.txt"
	contains "pad / tril: $id: verdict" "$tmp/out" "verdict: pass"
done
all_compiled "pad / tril: every kernel compiled" "$tmp/out"
# softplus with the schema's defaults (beta 1, threshold 20: the dump leaves them out), Bamba's and Mamba2's
for m in bamba mamba2; do
	check "softplus ($m)" 0 "$exe" --apply gemm_epilogue.cast-add-softplus-clamp-1a9d262c --cpu-only --no-render --tokens 2 \
		--out "$tmp/sp_$m" "$tests/data/export_${m}_2l/001_export_export_to_gm.txt"
	contains "softplus ($m): verdict" "$tmp/out" "verdict: pass"
done

finish
