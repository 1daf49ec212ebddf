#!/usr/bin/env bash
# The numerics check of --apply on the CPU (float64 reference, unfused with
# eager rounding, fused with fp32 inside) for the chains of the Llama family and
# the benchmark's, on the bundled dumps (the *_l3w_2l ones are those the GPU
# benchmark runs; tests/scripts/numerics_ops.sh: the op table beyond them):
# each passes and every generated kernel compiles with NVRTC; the planted
# bugs (a wrong eps, a dropped widening cast) fail with exit 1, and --triage
# calls them bugs. GPU execution is left to scripts/gpu_check.sh (the tests
# run --cpu-only where a GPU is present).
# PART (default all) runs one third, each its own ctest so that they run side by side:
# llama (the chains of the Llama dumps), others (Gemma 2's, GPT-2's and the benchmark's),
# checks (planted bugs, the seed, the CPU executions' memory, tune and --emit without a GPU).
# usage: numerics.sh FUSESCAN TESTS_DIR [llama|others|checks]
set -u
exe=$1 tests=$2 part=${3:-all}
# shellcheck source=tests/scripts/lib.sh
. "$(dirname "$0")/lib.sh"
d=$tests/data
llama=$d/export_tiny_llama_2l/001_export_export_to_gm.txt

in_part() { [ "$part" = all ] || [ "$part" = "$1" ]; }
case $part in all | llama | others | checks) ;; *) echo "numerics.sh: no part '$part'" >&2; exit 2 ;; esac

# part  name  candidate id or pattern  dump
while read -r rows name id dump; do
	in_part "$rows" || continue
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
llama  rmsnorm       rmsnorm-3feecfe3                  export_tiny_llama_2l/001_export_export_to_gm.txt
llama  add_rmsnorm   add_rmsnorm-aeb77c08              export_tiny_llama_2l/001_export_export_to_gm.txt
llama  swiglu        swiglu-b5058ea8                   export_tiny_llama_2l/001_export_export_to_gm.txt
llama  rope          rope_rotate_half                  export_tiny_llama_2l/001_export_export_to_gm.txt
llama  fused_norm    add_rmsnorm-407262a5              adrun_tiny_llama_2l/035_compile_compile_model.txt
others geglu_tanh    geglu_tanh-38faf084               export_gemma2_2l/001_export_export_to_gm.txt
others gemma_norm    gemma_rmsnorm-af7cb93a            export_gemma2_2l/001_export_export_to_gm.txt
others softcap       eager_attention_softcap-d1ba0255  export_gemma2_2l/001_export_export_to_gm.txt
others layernorm     layernorm                         export_gpt2_2l/001_export_export_to_gm.txt
others gelu_tanh     gelu_tanh-82011eea                export_gpt2_2l/001_export_export_to_gm.txt
llama  softmax       eager_attention_softmax-104f9fe6  export_llama_eager_2l/001_export_export_to_gm.txt
llama  decomposed    rmsnorm-70a88bb3                  export_tiny_llama_2l/002_post_export_run_decompositions.txt
others geglu_l3w     geglu_tanh-38faf084               export_gemma2_l3w_2l/001_export_export_to_gm.txt
others layernorm_l3w layernorm                         export_gpt2_l3w_2l/001_export_export_to_gm.txt
others gelu_l3w      gelu_tanh-82011eea                export_gpt2_l3w_2l/001_export_export_to_gm.txt
LIST

# the rest: part checks
in_part checks || { finish; exit; }
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
check "too large for the CPU" 2 "$exe" --apply eager_attention_softmax-104f9fe6 --tokens 16384 --cpu-only --no-render \
	--out "$tmp/big" "$d/export_llama_eager_2l/001_export_export_to_gm.txt"
contains "too large: where and why" "$tmp/err" "001_export_export_to_gm.txt:117:1: error: numerics: the region holds 43218108416 elements"
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

# tuning needs a GPU: without one, tune says so, fails (exit 2) and a corrupt cache (of fusescan's own) is left as it is
if [ -e /usr/local/cuda/lib64/libnvrtc.so ] && ! grep -q "GPU check" "$tmp/s1/numerics.txt"; then
	printf '{\n\t"format":\t"fusescan.tuning/1",\n\t"entries": [ {' >"$tmp/corrupt.json"
	check "tune without a GPU" 2 "$exe" tune --apply swiglu-b5058ea8 --apply rmsnorm-3feecfe3 --cache "$tmp/corrupt.json" "$llama"
	contains "tune: nothing tuned" "$tmp/err" "fusescan tune: nothing tuned"
	count "tune: both candidates reported" "$tmp/out" "numerics (CPU, float64 reference" 2
	if cmp -s "$tmp/corrupt.json" <(printf '{\n\t"format":\t"fusescan.tuning/1",\n\t"entries": [ {'); then
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
		eager_attention_softmax-104f9fe6:export_llama_eager_2l; do
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
		"$tmp/emit_eager_attention_softmax-104f9fe6" && pass=$((pass + 1)) || { fail=$((fail + 1)); echo "FAIL emit softmax: at_most"; }
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

finish
