#!/usr/bin/env bash
# fusescan --apply on the bundled 2-layer run: the add + RMSNorm candidate and a
# pattern applied to every site, one site only, an approvals file; every
# after-dump parses, has the fused nodes and getitems, keeps the graph
# outputs, and the input is never modified; bad ids are input errors; the
# progress lines on stderr.
# usage: apply.sh FUSESCAN TESTS_DIR
set -u
exe=$1 tests=$2
# shellcheck source=tests/scripts/lib.sh
. "$(dirname "$0")/lib.sh"
run=$tests/data/adrun_tiny_llama_2l
final=$run/035_compile_compile_model.txt
export_dump=$run/001_export_export_to_gm.txt

sum=$(cat "$run"/* | md5sum)
check "apply add_rmsnorm" 0 "$exe" --apply add_rmsnorm-407262a5 --out "$tmp/a" "$final"
contains "summary line" "$tmp/out" "[SUMMARY] matches=4 | 4 fused nodes, 0 sites skipped"
for f in 035_compile_compile_model.txt 035_compile_compile_model.txt.diff summary.txt before.svg before.dot after.svg after.dot; do
	[ -s "$tmp/a/$f" ] && pass=$((pass + 1)) || { fail=$((fail + 1)); echo "FAIL missing $f"; }
done
# AutoDeploy's own fuse_add_rms_norm leaves its Python wrapper over the registered
# in-place op, flashinfer_fused_add_rms_norm(x, residual, weight, eps) -> (norm, sum)
count "fused nodes" "$tmp/a/035_compile_compile_model.txt" "= <function flashinfer_fused_add_rms_norm at 0x0>(" 4
count "eps kept, last" "$tmp/a/035_compile_compile_model.txt" "torch.bfloat16, 1e-06) : (s72xs70x256, s72xs70x256)" 4
contains "the norm first" "$tmp/a/035_compile_compile_model.txt" "%torch_rmsnorm_default_1 = <built-in function getitem>(%add_rmsnorm_fused : ? : tuple, 0)"
contains "the sum second" "$tmp/a/035_compile_compile_model.txt" "%add_6 = <built-in function getitem>(%add_rmsnorm_fused : ? : tuple, 1)"
# two getitems each, but the last layer: nothing else reads its sum, so the norm's getitem alone
count "getitems" "$tmp/a/035_compile_compile_model.txt" "= <built-in function getitem>(%add_rmsnorm_fused" 7
count "no flashinfer_rms_norm left in the layers" "$tmp/a/035_compile_compile_model.txt" "auto_deploy.flashinfer_rms_norm.default(" 1
check "after-dump parses" 0 "$exe" scan "$tmp/a/035_compile_compile_model.txt"
contains "svg" "$tmp/a/after.svg" "<svg"
contains "diff header" "$tmp/a/035_compile_compile_model.txt.diff" "+++ b/035_compile_compile_model.txt"
check "same via fuse" 0 "$exe" fuse --apply add_rmsnorm-407262a5 --out "$tmp/b" "$run"
if cmp -s "$tmp/a/035_compile_compile_model.txt" "$tmp/b/035_compile_compile_model.txt"; then pass=$((pass + 1)); else fail=$((fail + 1)); echo "FAIL run dir and file differ"; fi

check "one site" 0 "$exe" --apply add_rmsnorm-407262a5 --site add_8 --out "$tmp/c" "$final"
contains "one site summary" "$tmp/out" "[SUMMARY] matches=1 | 1 fused nodes"
check "pattern on the export dump" 0 "$exe" --apply rmsnorm --out "$tmp/d" "$export_dump"
contains "pattern summary" "$tmp/out" "[SUMMARY] matches=5 | 5 fused nodes, 0 sites skipped"
count "rmsnorm ops, eps kept" "$tmp/d/001_export_export_to_gm.txt" "auto_deploy.flashinfer_rms_norm.default(" 5
count "rmsnorm ops, eps kept" "$tmp/d/001_export_export_to_gm.txt" "torch.bfloat16, 1e-06) : s72xs70x256 : torch.bfloat16" 5
check "after-dump of the pattern parses" 0 "$exe" scan "$tmp/d/001_export_export_to_gm.txt"
check "no rmsnorm chain left" 0 "$exe" match --pattern rmsnorm --expect /dev/stdin "$tmp/d/001_export_export_to_gm.txt" <<<'rmsnorm == 0'
# the pattern itself: AutoDeploy's match_rmsnorm_pattern op, torch_rmsnorm(input, weight, eps)
check "the rmsnorm pattern" 0 "$exe" --apply pattern:rmsnorm --out "$tmp/p" "$export_dump"
count "torch_rmsnorm, eps kept" "$tmp/p/001_export_export_to_gm.txt" "auto_deploy.torch_rmsnorm.default(" 5
count "torch_rmsnorm, eps kept" "$tmp/p/001_export_export_to_gm.txt" "torch.bfloat16, 1e-06) : s72xs70x256 : torch.bfloat16" 5
# a norm whose eps is no float added to the mean (here an integer) still matches a catalog
# chain (a multiset of ops), but the kernel's eps is nowhere in the site: that site is
# skipped, said, never given another float of the site or none
sed '/^%add_3 = /s/, 1e-06)/, 1)/' "$export_dump" > "$tmp/int_eps.txt"
id=$("$exe" discover "$tmp/int_eps.txt" 2>/dev/null | sed -n 's/^Candidate [0-9]*: unweighted_rmsnorm .*id \(unweighted_rmsnorm-[0-9a-f]*\)\]$/\1/p')
check "eps nowhere" 0 "$exe" --apply "$id" --cpu-only --no-render --out "$tmp/ie" "$tmp/int_eps.txt"
contains "eps nowhere: skipped" "$tmp/out" "[SUMMARY] matches=0 | 0 fused nodes, 1 sites skipped"
contains "eps nowhere: why" "$tmp/out" "skipped site at %to_7: no eps: no float is added to a mean or sum, and no norm op of the site takes one"

# parallel GEMMs: q's reshape reads q before the v GEMM, so the fused node takes the
# site's first line
check "parallel GEMMs" 0 "$exe" --apply parallel_gemm-0d3c7fd0 --cpu-only --no-render --out "$tmp/pg" "$export_dump"
contains "parallel GEMM summary" "$tmp/out" "[SUMMARY] matches=2 | 2 fused nodes, 0 sites skipped"
count "parallel GEMM nodes" "$tmp/pg/001_export_export_to_gm.txt" "= fusescan.parallel_gemm.default(" 2
count "15 - 2 x 3 linears left" "$tmp/pg/001_export_export_to_gm.txt" "= auto_deploy.torch_linear_simple.default(" 9
check "after-dump of the parallel GEMMs parses" 0 "$exe" scan "$tmp/pg/001_export_export_to_gm.txt"

printf '# approved for this run\nrope_rotate_half\nrepeat_kv   # the kv copies\n' > "$tmp/approvals.txt"
check "approvals" 0 "$exe" fuse --approvals "$tmp/approvals.txt" --out "$tmp/e" "$export_dump"
# the names are candidate names of this graph (4 RoPE chains, in 2 q / k pairs reading one cos
# and sin: one node each; 4 kv copies), not the patterns
contains "approvals summary" "$tmp/out" "[SUMMARY] matches=6 | 6 fused nodes"
contains "approvals resolve to candidates" "$tmp/err" "'rope_rotate_half' is candidate rope_rotate_half-56728da0 of this graph"

check "unknown id" 2 "$exe" --apply nothing-12345678 --out "$tmp/f" "$final"
contains "unknown id message" "$tmp/err" "'nothing-12345678' is neither a candidate of this graph nor a pattern"
check "two graphs" 2 "$exe" --apply rmsnorm --out "$tmp/g" "$export_dump" "$final"
check "no id" 2 "$exe" fuse "$final"
# other architectures: a catalog entry with no drop-in kernel gets a fusescan.<name> node
gemma=$tests/data/export_gemma2_2l/001_export_export_to_gm.txt
check "apply Gemma RMSNorm" 0 "$exe" --apply gemma_rmsnorm-af7cb93a --out "$tmp/h" "$gemma"
count "Gemma RMSNorm fused" "$tmp/h/001_export_export_to_gm.txt" "= fusescan.gemma_rmsnorm.default(" 9
check "apply soft-capped softmax" 0 "$exe" --apply eager_attention_softcap-d1ba0255 --out "$tmp/i" "$gemma"
count "softmax subsumed by attention: own node" "$tmp/i/001_export_export_to_gm.txt" "= fusescan.eager_attention_softcap.default(" 2
check "after-dump parses" 0 "$exe" scan "$tmp/i/001_export_export_to_gm.txt"

# sibling chains (cos and sin of one angle table): one node, one getitem per chain output
check "apply siblings" 0 "$exe" --apply horizontal_elementwise.cos-mul-sin-cast-f491874a --out "$tmp/j" "$export_dump"
count "sibling outputs" "$tmp/j/001_export_export_to_gm.txt" "= <built-in function getitem>(%horizontal_elementwise_cos_mul_sin_cast_fused" 2

# whole-graph renders: GPT-2's transformer_h_N weights fold like Llama's layers_N;
# a large graph with nothing to fold is refused with advice, a mid-sized one drawn
check "render GPT-2 folded" 0 "$exe" render -o "$tmp/gpt2.dot" "$tests/data/export_gpt2_2l/001_export_export_to_gm.txt"
contains "GPT-2 layers folded" "$tmp/gpt2.dot" 'label="layers 1..1\nas layer 0\nx1"'
chain() { # chain N: a graph of N negations in a row
	echo '%x : 4 : torch.float32'
	echo '%n0 = aten.neg.default(%x : 4 : torch.float32) : 4 : torch.float32'
	for ((i = 1; i < $1; i++)); do
		echo "%n$i = aten.neg.default(%n$((i - 1)) : 4 : torch.float32) : 4 : torch.float32"
	done
	echo "output %n$(($1 - 1))"
}
chain 600 > "$tmp/chain600.txt"
check "600 unfoldable nodes refused" 2 "$exe" render -o "$tmp/chain.svg" "$tmp/chain600.txt"
contains "refusal advice" "$tmp/err" "too many for a readable picture; render a neighbourhood"
chain 300 > "$tmp/chain300.txt"
check "300 nodes drawn (bounded layout)" 0 "$exe" render -o "$tmp/chain.svg" "$tmp/chain300.txt"
contains "bounded layout svg" "$tmp/chain.svg" "<svg"
# progress on stderr, a line per phase: with --progress, and by default where stderr is a
# terminal; never where it is not (a file here), so what tests capture stays as it was
check "progress" 0 "$exe" --apply add_rmsnorm-407262a5 --progress --cpu-only --emit "$tmp/pe" --out "$tmp/pr" "$final"
site="fusescan: add_rmsnorm site %torch_rmsnorm_default_1: "
contains "progress: the rewrite" "$tmp/err" "fusescan: add_rmsnorm: rewriting 4 sites, drawing the first..."
contains "progress: the CPU check" "$tmp/err" "${site}CPU check (float64 reference, 16 tokens, 16640 values)..."
contains "progress: the kernels" "$tmp/err" "${site}tokens<=16: "
contains "progress: --emit" "$tmp/err" "${site}--emit: compiling the op's kernels for 5 buckets..."
count "progress: a line per phase, per kernel emitted (the last layer's differs)" "$tmp/err" "CPU check" 2
cp "$tmp/err" "$tmp/progress.err"
check "no progress where stderr is a file" 0 "$exe" --apply add_rmsnorm-407262a5 --cpu-only --out "$tmp/pr" "$final"
count "no progress lines" "$tmp/err" "fusescan: add_rmsnorm" 0
check "tune takes --progress" 0 "$exe" tune --help
contains "tune's --progress" "$tmp/out" "--progress"
if command -v script >/dev/null; then # a terminal (a pseudo-terminal) for stderr
	script -qec "'$exe' --apply add_rmsnorm-407262a5 --cpu-only --out '$tmp/pt' '$final' >/dev/null" /dev/null >"$tmp/tty.txt"
	contains "progress where stderr is a terminal" "$tmp/tty.txt" "${site}CPU check"
fi

[ "$(cat "$run"/* | md5sum)" = "$sum" ] && pass=$((pass + 1)) || { fail=$((fail + 1)); echo "FAIL inputs modified"; }

finish
