#!/usr/bin/env bash
# The numerics check of --apply on the CPU (float64 reference, unfused with
# eager rounding, fused with fp32 inside) for the chains the GPU issue names,
# on the bundled dumps (the *_l3w_2l ones are those the GPU benchmark runs):
# each passes and every generated kernel compiles with NVRTC; the planted
# bugs (a wrong eps, a dropped widening cast) fail with exit 1, and --triage
# calls them bugs. GPU execution is left to scripts/gpu_check.sh (the tests
# run --cpu-only where a GPU is present).
# usage: numerics.sh FUSESCAN TESTS_DIR
set -u
exe=$1 tests=$2
# shellcheck source=tests/scripts/lib.sh
. "$(dirname "$0")/lib.sh"
d=$tests/data
llama=$d/export_tiny_llama_2l/001_export_export_to_gm.txt

# name  candidate id or pattern  dump
while read -r name id dump; do
	check "$name" 0 "$exe" --apply "$id" --cpu-only --out "$tmp/$name" "$d/$dump"
	contains "$name verdict" "$tmp/out" "verdict: pass"
	# every generated kernel (the fused one under each tactic) compiles with
	# NVRTC where the toolkit is installed
	if [ -e /usr/local/cuda/lib64/libnvrtc.so ]; then
		n=$(sed -n 's/.*kernels: \([0-9]*\) generated.*/\1/p' "$tmp/out")
		contains "$name kernels compile" "$tmp/out" "), $n compiled for sm_90"
		contains "$name tactics" "$tmp/out" "(fused under "
		contains "$name float64 reference kernels" "$tmp/out" " unfused, 2 float64 reference), "
	fi
	[ -s "$tmp/$name/fused.cu" ] && pass=$((pass + 1)) || { fail=$((fail + 1)); echo "FAIL $name: no fused.cu"; }
	contains "$name json" "$tmp/$name/numerics.json" '"verdict":	"pass"'
done <<'LIST'
rmsnorm       rmsnorm-3feecfe3                  export_tiny_llama_2l/001_export_export_to_gm.txt
add_rmsnorm   add_rmsnorm-aeb77c08              export_tiny_llama_2l/001_export_export_to_gm.txt
swiglu        swiglu-b5058ea8                   export_tiny_llama_2l/001_export_export_to_gm.txt
rope          rope_rotate_half                  export_tiny_llama_2l/001_export_export_to_gm.txt
fused_norm    add_rmsnorm-407262a5              adrun_tiny_llama_2l/035_compile_compile_model.txt
geglu_tanh    geglu_tanh-38faf084               export_gemma2_2l/001_export_export_to_gm.txt
gemma_norm    gemma_rmsnorm-af7cb93a            export_gemma2_2l/001_export_export_to_gm.txt
softcap       eager_attention_softcap-71807e1d  export_gemma2_2l/001_export_export_to_gm.txt
layernorm     layernorm                         export_gpt2_2l/001_export_export_to_gm.txt
gelu_tanh     gelu_tanh-82011eea                export_gpt2_2l/001_export_export_to_gm.txt
softmax       eager_attention_softmax-661b75dd  export_llama_eager_2l/001_export_export_to_gm.txt
decomposed    rmsnorm-70a88bb3                  export_tiny_llama_2l/002_post_export_run_decompositions.txt
geglu_l3w     geglu_tanh-38faf084               export_gemma2_l3w_2l/001_export_export_to_gm.txt
layernorm_l3w layernorm                         export_gpt2_l3w_2l/001_export_export_to_gm.txt
gelu_l3w      gelu_tanh-82011eea                export_gpt2_l3w_2l/001_export_export_to_gm.txt
LIST

check "wrong eps fails" 1 "$exe" --apply rmsnorm-3feecfe3 --plant-bug eps --triage --out "$tmp/p1" "$llama"
contains "wrong eps reported" "$tmp/out" "planted bug (debug): eps replaced by 0.1"
contains "wrong eps verdict" "$tmp/out" "verdict: fail"
contains "wrong eps is a bug" "$tmp/out" "triage (CPU): bug"
check "dropped cast fails" 1 "$exe" --apply rmsnorm-3feecfe3 --plant-bug cast --triage --out "$tmp/p2" "$llama"
contains "dropped cast reported" "$tmp/out" "planted bug (debug): dropped cast %to_6"
contains "dropped cast is a bug" "$tmp/out" "triage (CPU): bug"
contains "json triage" "$tmp/p2/numerics.json" '"triage":	"bug"'
check "same seed, same numbers" 0 "$exe" --apply swiglu-b5058ea8 --seed 7 --out "$tmp/s1" "$llama"
check "again" 0 "$exe" --apply swiglu-b5058ea8 --seed 7 --out "$tmp/s2" "$llama"
cmp -s "$tmp/s1/numerics.json" "$tmp/s2/numerics.json" && pass=$((pass + 1)) || { fail=$((fail + 1)); echo "FAIL seeds differ"; }
check "bad tokens" 2 "$exe" --apply swiglu-b5058ea8 --tokens 0 --out "$tmp/s3" "$llama"
# too large for the CPU executions, and no GPU run: an error that says so (exit 2)
check "too large for the CPU" 2 "$exe" --apply eager_attention_softmax-661b75dd --tokens 16384 --cpu-only --no-render \
	--out "$tmp/big" "$d/export_llama_eager_2l/001_export_export_to_gm.txt"
contains "too large: where and why" "$tmp/err" "001_export_export_to_gm.txt:117:1: error: numerics: the region holds 51808043008 elements"
contains "too large: what to do" "$tmp/err" "lower --tokens"
# the CPU executions' memory: checked in bytes before any value is allocated, and the peak
# resident size measured (ru_maxrss) stays within the budget over what a tiny run takes
peak() { # peak KiB of the command, its exit status and output in $tmp/rc, $tmp/out, $tmp/err
	python3 -c 'import resource, subprocess, sys
p = subprocess.run(sys.argv[2:], stdout=open(sys.argv[1] + "/out", "w"), stderr=open(sys.argv[1] + "/err", "w"))
open(sys.argv[1] + "/rc", "w").write(str(p.returncode))
print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)' "$tmp" "$@"
}
rms=("$exe" --apply rmsnorm --cpu-only --no-render --triage)
# the kernels compiled once first: NVRTC's own memory (a cold kernel cache) is not the executions'
"${rms[@]}" --tokens 5120 --cpu-memory 256M --out "$tmp/warm" "$llama" >/dev/null 2>&1
base=$(peak "${rms[@]}" --tokens 16 --out "$tmp/m0" "$llama")
# 5120 tokens: 210 MiB of values in four executions (--triage), within 256 MiB (with room for
# AddressSanitizer's shadow of them in the sanitizer build)
kib=$(peak "${rms[@]}" --tokens 5120 --cpu-memory 256M --out "$tmp/m1" "$llama")
[ "$(cat "$tmp/rc")" = 0 ] && grep -q "verdict: pass" "$tmp/out" && [ "$kib" -le $((base + 256 * 1024)) ] && pass=$((pass + 1)) ||
	{ fail=$((fail + 1)); echo "FAIL within 256 MiB: exit $(cat "$tmp/rc"), peak $kib KiB, $base KiB at 16 tokens"; }
kib=$(peak "${rms[@]}" --tokens 8192 --cpu-memory 256M --out "$tmp/m2" "$llama")
[ "$(cat "$tmp/rc")" = 2 ] && [ "$kib" -le $((base + 16 * 1024)) ] && [ ! -e "$tmp/m2" ] && pass=$((pass + 1)) ||
	{ fail=$((fail + 1)); echo "FAIL past 256 MiB: exit $(cat "$tmp/rc"), peak $kib KiB, $base KiB at 16 tokens"; }
contains "past 256 MiB: why" "$tmp/err" "numerics: the region holds 12607744 elements at these sizes, 336 MiB in the CPU executions, more than their 256 MiB (--cpu-memory)"
contains "past 256 MiB: what to do" "$tmp/err" "lower --tokens or raise --cpu-memory"
# the default budget, 4 GiB: 2^20 tokens would take 84 GiB (the budget counted elements: out of memory)
kib=$(peak "${rms[@]}" --tokens 1048576 --out "$tmp/m3" "$llama")
[ "$(cat "$tmp/rc")" = 2 ] && [ "$kib" -le $((base + 16 * 1024)) ] && pass=$((pass + 1)) ||
	{ fail=$((fail + 1)); echo "FAIL past 4 GiB: exit $(cat "$tmp/rc"), peak $kib KiB"; }
contains "past 4 GiB: why" "$tmp/err" "more than their 4096 MiB (--cpu-memory)"
check "bad cpu-memory" 2 "$exe" --apply swiglu-b5058ea8 --cpu-memory 4X --out "$tmp/s3" "$llama"
contains "bad cpu-memory message" "$tmp/err" "fusescan fuse: --cpu-memory wants a size from 1M to 16T (bytes, or with K, M, G, T), got '4X'"
check "bad reps" 2 "$exe" --apply swiglu-b5058ea8 --reps 3 --out "$tmp/s3" "$llama"
contains "bad reps message" "$tmp/err" "reps"

# tuning needs a GPU: without one, tune says so, fails (exit 2) and a corrupt cache is left as it is
if [ -e /usr/local/cuda/lib64/libnvrtc.so ] && ! grep -q "GPU check" "$tmp/s1/numerics.txt"; then
	printf '{ "format": "fusescan.tuning/1", "entries": [ {' >"$tmp/corrupt.json"
	check "tune without a GPU" 2 "$exe" tune --apply swiglu-b5058ea8 --apply rmsnorm-3feecfe3 --cache "$tmp/corrupt.json" "$llama"
	contains "tune: nothing tuned" "$tmp/err" "fusescan tune: nothing tuned"
	count "tune: both candidates reported" "$tmp/out" "numerics (CPU, float64 reference" 2
	if cmp -s "$tmp/corrupt.json" <(printf '{ "format": "fusescan.tuning/1", "entries": [ {'); then
		pass=$((pass + 1))
	else
		fail=$((fail + 1)) && echo "FAIL tune without a GPU touched the cache"
	fi
	# --emit without a GPU, for every chain of the benchmark (scripts/bench_torch.py):
	# every bucket's kernel and the fallback in one PTX (NVRTC), the descriptor, the module
	data=$(dirname "$llama")/..
	for chain in rmsnorm-3feecfe3:export_tiny_llama_2l add_rmsnorm-aeb77c08:export_tiny_llama_2l \
		swiglu-b5058ea8:export_tiny_llama_2l rope_rotate_half-3bc3ce9c:export_tiny_llama_2l \
		geglu_tanh-38faf084:export_gemma2_l3w_2l layernorm:export_gpt2_l3w_2l gelu_tanh-82011eea:export_gpt2_l3w_2l \
		eager_attention_softmax-661b75dd:export_llama_eager_2l; do
		id=${chain%%:*}
		check "emit $id on the CPU" 0 "$exe" --apply "$id" --cpu-only --no-render --tokens 64 --emit "$tmp/emit_$id" \
			--out "$tmp/e_$id" "$data/${chain#*:}/001_export_export_to_gm.txt"
		contains "emit $id reported" "$tmp/out" "emitted: $tmp/emit_$id/fs_"
		if python3 "$(dirname "$0")/check_emit.py" "$tmp/emit_$id" --buckets 1,2,4,8,16,32,64; then pass=$((pass + 1)); else
			fail=$((fail + 1)) && echo "FAIL emit $id: descriptor, PTX or module"; fi
	done
	python3 -c 'import glob, json, sys; (j,) = glob.glob(sys.argv[1] + "/*.json"); j = json.load(open(j))
ins, outs = [(t["shape"], t["dtype"]) for t in j["inputs"]], [(t["shape"], t["dtype"]) for t in j["outputs"]]
assert ins == [([256], "torch.bfloat16"), (["s72", "s70", 256], "torch.bfloat16")] and outs == [(["s72", "s70", 256], "torch.bfloat16")], j
assert [s["name"] for s in j["symbols"]] == ["s72", "s70"] and j["kernels"][1]["launch"]["grid"]["work"] == "(s72 * s70)", j' \
		"$tmp/emit_rmsnorm-3feecfe3" && pass=$((pass + 1)) || { fail=$((fail + 1)); echo "FAIL emit parameters"; }
	# RoPE's outputs as eager lays them out: [b, h, s, d] views of [b, s, h, d] memory (q's projection)
	python3 -c 'import glob, json, sys; (j,) = glob.glob(sys.argv[1] + "/*.json"); j = json.load(open(j))
assert [t.get("order") for t in j["outputs"]] == [[0, 2, 1, 3]] * 2 and all("order" not in t for t in j["inputs"]), j["outputs"]' \
		"$tmp/emit_rope_rotate_half-3bc3ce9c" && pass=$((pass + 1)) || { fail=$((fail + 1)); echo "FAIL emit rope: output order"; }
	# softmax over s70 keys: each bucket's kernel keeps the row in registers, at least its bucket's length
	python3 -c 'import glob, json, sys; (j,) = glob.glob(sys.argv[1] + "/*.json"); j = json.load(open(j))
for b in j["buckets"]:
    r = j["kernels"][b["kernel"]]["requires"]
    assert any(x["dim"] == "s70" and x.get("at_most", 0) >= b["tokens"] for x in r), (b, r)' \
		"$tmp/emit_eager_attention_softmax-661b75dd" && pass=$((pass + 1)) || { fail=$((fail + 1)); echo "FAIL emit softmax: at_most"; }
	check "buckets given" 0 "$exe" --apply rmsnorm-3feecfe3 --cpu-only --no-render --buckets 3,17,100 --emit "$tmp/emit3" --out "$tmp/e3" "$llama"
	if python3 "$(dirname "$0")/check_emit.py" "$tmp/emit3" --buckets 3,17,100; then pass=$((pass + 1)); else
		fail=$((fail + 1)) && echo "FAIL emit --buckets 3,17,100"; fi
	# a padded size (Qwen3-Next traced past two chunks: s70 + Mod(64 - Mod(s70, 64), 64)) in the op's
	# formulas: the module reads them (its grammar takes %, and max and min)
	check "emit padded dims" 0 "$exe" --apply elementwise.cast-pad-mul-4d6567e7 --cpu-only --no-render --tokens 64 --buckets 64,2048 \
		--emit "$tmp/emit_pad" --out "$tmp/e_pad" "$d/export_qwen3_next_chunks_2l/001_export_export_to_gm.txt"
	contains "emit padded dims: a Mod in a formula" "$(ls "$tmp"/emit_pad/*.json)" "% (64)"
	if python3 "$(dirname "$0")/check_emit.py" "$tmp/emit_pad" --buckets 64,2048; then pass=$((pass + 1)); else
		fail=$((fail + 1)) && echo "FAIL emit padded dims"; fi
	check "buckets out of order" 2 "$exe" --apply rmsnorm-3feecfe3 --cpu-only --no-render --buckets 4,2 --out "$tmp/e4" "$llama"
	contains "buckets error" "$tmp/err" "--buckets wants up to 24 increasing integers"
	check "emit into a file" 2 "$exe" --apply rmsnorm-3feecfe3 --cpu-only --no-render --emit "$tmp/corrupt.json" --out "$tmp/e2" "$llama"
	contains "emit error" "$tmp/err" "fusescan fuse: cannot create --emit $tmp/corrupt.json: Not a directory"
	[ ! -e "$tmp/e2" ] && pass=$((pass + 1)) || { fail=$((fail + 1)); echo "FAIL emit into a file: --out written"; }
fi
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
