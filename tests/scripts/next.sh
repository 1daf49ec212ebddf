#!/usr/bin/env bash
# discover's summary table and its "Next" commands: the table opens each
# graph's report (bounded, the rest counted), Markdown has the same one, and
# every command the report prints runs as pasted (fusescan as it was
# called, its outputs under $TMPDIR), from a path that needs quoting too, repeating --catalog and --gelu; a file of several
# GraphModules (which --apply refuses) gets no command, said once; a
# candidate the generator does not take is deferred and gets none.
# usage: next.sh FUSESCAN TESTS_DIR
set -u
exe=$1 tests=$2
# shellcheck source=tests/scripts/lib.sh
. "$(dirname "$0")/lib.sh"
run=$tests/data/adrun_tiny_llama_2l
final=$run/035_compile_compile_model.txt

# the table: after the graph's header, before the first candidate, a row per candidate
check "discover" 0 "$exe" discover "$run"
contains "table header" "$tmp/out" "  #  candidate                           kind             sites  bytes saved  launches saved  kernel"
contains "a row: kernel and id" "$tmp/out" \
	"   2  add_rmsnorm                         multi_output         4      16.8 MB               4  auto_deploy.flashinfer_fused_add_rms_norm_inplace  add_rmsnorm-407262a5"
contains "no kernel: generate" "$tmp/out" "  generate  "
contains "deferred: defer" "$tmp/out" "  defer  "
opens=$(awk '/^== /{h=NR} /^ *#  candidate/{t=NR} /^Candidate 1:/{c=NR; exit} END{print (h && h < t && t < c) ? "yes" : "no"}' "$tmp/out")
[ "$opens" = yes ] && pass=$((pass + 1)) || { fail=$((fail + 1)); echo "FAIL the table is not between the header and the details"; }
table_rows() { awk '/^ *#  candidate/{on=1; next} on && /^$/{exit} on' "$1" | grep -c '^ *[0-9]'; }
[ "$(table_rows "$tmp/out")" -eq 3 ] && pass=$((pass + 1)) || { fail=$((fail + 1)); echo "FAIL not a row per candidate"; }
check "top 2" 0 "$exe" discover --top 2 "$final"
count "--top bounds the table" "$tmp/out" "parallel_gemm-0d3c7fd0" 0
check "33 candidates" 0 "$exe" discover "$tests/data/export_qwen3_next_2l/001_export_export_to_gm.txt"
contains "the table bounded" "$tmp/out" "  (13 more below)"
rows=$(table_rows "$tmp/out")
[ "$rows" -eq 20 ] && pass=$((pass + 1)) || { fail=$((fail + 1)); echo "FAIL $rows rows, want 20"; }
check "markdown" 0 "$exe" discover --format markdown "$run"
contains "markdown: the same columns" "$tmp/out" "| # | candidate | kind | sites | bytes saved | launches saved | kernel | id |"
contains "markdown: a row" "$tmp/out" \
	'| 2 | `add_rmsnorm` | multi_output | 4 | 16.8 MB | 4 | `auto_deploy.flashinfer_fused_add_rms_norm_inplace` | `add_rmsnorm-407262a5` |'
contains "markdown: next" "$tmp/out" '```sh'

# the commands, run as printed: each line of a Next section (its comments aside) in a shell from
# a directory of its own, within NEXT_TIMEOUT seconds, exits 0 or 1 (a verdict), never 2 (a
# command that does not run) nor a timeout; they call fusescan as discover was called, write
# under $TMPDIR and leave the directory they run from empty
NEXT_TIMEOUT=300
run_next() { # run_next NAME REPORT
	local line n=0 rc
	while IFS= read -r line; do
		n=$((n + 1))
		(cd "$tmp/cwd" && timeout "$NEXT_TIMEOUT" bash -c "$line") >"$tmp/cmd.out" 2>&1
		rc=$?
		[ "$rc" -le 1 ] && pass=$((pass + 1)) || { fail=$((fail + 1)); echo "FAIL $1: exit $rc: $line"; tail -n 4 "$tmp/cmd.out"; }
	done < <(sed -n '/^Next (/,/^$/p' "$2" | grep '^  [^ #]')
	[ "$n" -gt 0 ] && pass=$((pass + 1)) || { fail=$((fail + 1)); echo "FAIL $1: no command in $2"; }
	[ -z "$(ls -A "$tmp/cwd")" ] && pass=$((pass + 1)) || { fail=$((fail + 1)); echo "FAIL $1: wrote into the directory it ran from"; }
}
mkdir -p "$tmp/cwd" "$tmp/t"
check "discover the run" 0 env TMPDIR="$tmp/t" "$exe" discover "$run"
cp "$tmp/out" "$tmp/run.txt"
contains "apply the top candidate" "$tmp/run.txt" \
	"  $exe --apply gemm_epilogue.cat-cos-mul-sin-cast-0ffaa69d --out $tmp/t/fusescan-apply-gemm_epilogue.cat-cos-mul-sin-cast-0ffaa69d $final"
contains "emit the generated kernel" "$tmp/run.txt" "--emit $tmp/t/fusescan-emit-gemm_epilogue.cat-cos-mul-sin-cast-0ffaa69d $final"
contains "count the patterns over the run" "$tmp/run.txt" "  $exe match -p add_rmsnorm -p parallel_gemm $run"
run_next "the run's commands" "$tmp/run.txt"
[ -s "$tmp/t/fusescan-apply-add_rmsnorm-407262a5/035_compile_compile_model.txt" ] && pass=$((pass + 1)) ||
	{ fail=$((fail + 1)); echo "FAIL the apply command wrote no after-dump"; }
ls "$tmp"/t/fusescan-emit-*/*.ptx >/dev/null 2>&1 && pass=$((pass + 1)) || { fail=$((fail + 1)); echo "FAIL the --emit command wrote no kernel"; }
# fusescan as it was called: by a relative path, by its name on PATH; /tmp without $TMPDIR
(unset TMPDIR; cd "$(dirname "$exe")" && ./"$(basename "$exe")" discover "$final") >"$tmp/rel.txt" 2>&1
contains "called by a relative path" "$tmp/rel.txt" "  ./$(basename "$exe") --apply add_rmsnorm-407262a5 --out /tmp/fusescan-apply-add_rmsnorm-407262a5 "
(unset TMPDIR; PATH="$(dirname "$exe"):$PATH" "$(basename "$exe")" discover "$final") >"$tmp/name.txt" 2>&1
contains "called by its name" "$tmp/name.txt" "  $(basename "$exe") --apply add_rmsnorm-407262a5 --out /tmp/fusescan-apply-add_rmsnorm-407262a5 "
check "a relative TMPDIR: /tmp" 0 env TMPDIR=tmp "$exe" discover "$final"
contains "a relative TMPDIR: /tmp" "$tmp/out" " --out /tmp/fusescan-apply-add_rmsnorm-407262a5 "

# a candidate the generator does not take (Mamba 2's chunked scan, its einsums as sums over rows
# of different shapes): deferred with the generator's reason, and no command applies it
m2=$tests/data/export_mamba2_chunks_2l/001_export_export_to_gm.txt
check "discover Mamba 2" 0 "$exe" discover "$m2"
contains "refused: deferred in the table" "$tmp/out" "  defer  "
contains "refused: the reason" "$tmp/out" \
	"Recommendation: defer (no existing kernel, and fusescan's generator does not take it: fused kernel: reductions over rows of different shapes)"
sed -n '/^Next (/,$p' "$tmp/out" >"$tmp/m2next.txt"
count "refused: not applied" "$tmp/m2next.txt" "norm.cast-repeat_interleave-pad-mul-tril-bitwise_not-e8e26875" 0
count "refused: three others applied" "$tmp/m2next.txt" "  $exe --apply" 4
contains "refused: the applied ones' patterns counted" "$tmp/m2next.txt" "  $exe match -p gated_rmsnorm $m2"
check "discover Mamba 2, JSON" 0 "$exe" discover --format json "$m2"
contains "refused: in JSON" "$tmp/out" '"generator_refuses":	"fused kernel: reductions over rows of different shapes"'

# a path that needs quoting, a catalog and a GELU repeated
mkdir -p "$tmp/it's here"
cp "$final" "$tmp/it's here/final dump.txt"
cp "$tests/../kernels/catalog.txt" "$tmp/my catalog.txt"
check "discover, quoted" 0 env TMPDIR="$tmp/t" "$exe" discover --catalog "$tmp/my catalog.txt" --gelu erf "$tmp/it's here/final dump.txt"
cp "$tmp/out" "$tmp/quoted.txt"
contains "quoted" "$tmp/quoted.txt" "--catalog '$tmp/my catalog.txt' --gelu erf '$tmp/it'\\''s here/final dump.txt'"
rm -rf "$tmp/t"/*
run_next "quoted commands" "$tmp/quoted.txt"

# several GraphModules in one file: said once, no command
{
	printf '# Transform: t\n# Stage: compile\n# GraphModules found: 2\n\n'
	for m in first second; do
		printf '%s\n# GraphModule: %s\n%s\n' "$(printf '=%.0s' {1..80})" "$m" "$(printf '=%.0s' {1..80})"
		sed -n '/^# GraphModule: (root)/,$p' "$final" | tail -n +3
	done
} > "$tmp/two.txt"
check "two modules" 0 "$exe" discover "$tmp/two.txt"
count "two modules: one note" "$tmp/out" "# --apply rewrites a file of one GraphModule, and this one holds 2: $tmp/two.txt" 1
count "two modules: no command" "$tmp/out" "  $exe --apply" 0
finish
