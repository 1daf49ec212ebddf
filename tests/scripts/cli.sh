#!/usr/bin/env bash
# CLI behaviour: help, usage errors and exit codes, the default command,
# mistyped commands, options and values (did you mean), each command's own
# options, atomic -o output, and refusing to write over an input.
# usage: cli.sh FUSESCAN TESTS_DIR
set -u
exe=$1 tests=$2
# shellcheck source=tests/scripts/lib.sh
. "$(dirname "$0")/lib.sh"

run=$tests/data/adrun_tiny_llama_2l
check "help" 0 "$exe" --help
contains "help lists scan" "$tmp/out" "scan"
check "scan help" 0 "$exe" scan --help
contains "scan help lists --format" "$tmp/out" "--format FMT"
check "version" 0 "$exe" --version
check "no arguments" 2 "$exe"
check "no input" 2 "$exe" scan
contains "no input message" "$tmp/err" "no input"
check "unknown option" 2 "$exe" scan --bogus "$run"
contains "unknown option message" "$tmp/err" "unknown option '--bogus'"
check "bad format" 2 "$exe" scan --format xml "$run"
contains "bad format message" "$tmp/err" "invalid value 'xml' for --format"
check "missing value" 2 "$exe" scan "$run" --format
check "plain path is discover" 0 "$exe" "$run"
cp "$tmp/out" "$tmp/plain"
check "discover command" 0 "$exe" discover "$run"
if cmp -s "$tmp/out" "$tmp/plain"; then pass=$((pass + 1)); else fail=$((fail + 1)); echo "FAIL plain != discover"; fi
check "scan command" 0 "$exe" scan "$run"
check "json to file" 0 "$exe" scan --format=json -o "$tmp/r.json" "$run"
if python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); assert r["schema"]=="fusescan.scan/1"' "$tmp/r.json"; then
	pass=$((pass + 1)); else fail=$((fail + 1)); echo "FAIL -o json not valid"; fi
left=("$tmp"/*.tmp.*)
if [ -e "${left[0]}" ]; then fail=$((fail + 1)); echo "FAIL temp file left behind"; else pass=$((pass + 1)); fi
check "unwritable output" 2 "$exe" scan -o "$tmp/no/such/dir/r.json" "$run"
cp "$tests/bad/duplicate.txt" "$tmp/in.txt"
sum=$(md5sum < "$tmp/in.txt")
check "output over input" 2 "$exe" scan -o "$tmp/in.txt" "$tmp/in.txt"
contains "output over input message" "$tmp/err" "fusescan scan: refusing to write -o $tmp/in.txt: it is the dump $tmp/in.txt"
[ "$(md5sum < "$tmp/in.txt")" = "$sum" ] && pass=$((pass + 1)) || { fail=$((fail + 1)); echo "FAIL input modified"; }

# discovery options and their errors
check "discover bad tokens" 2 "$exe" discover --tokens 0 "$run"
contains "bad tokens message" "$tmp/err" "--tokens wants a positive integer"
check "discover bad dims" 2 "$exe" discover --dims s72=1,s70 "$run"
contains "bad dims message" "$tmp/err" "--dims: expected NAME=N"
check "discover bad top" 2 "$exe" discover --top x "$run"
check "discover missing dump" 2 "$exe" discover --dump 999 "$run"
contains "missing dump message" "$tmp/err" "--dump 999: no such parsed dump"
check "discover picks a dump" 0 "$exe" discover --dump 001 --format json "$run"
contains "picked dump 001" "$tmp/out" '"file":	"'"$run"'/001_export_export_to_gm.txt"'
check "discover missing catalog" 2 "$exe" discover --catalog "$tmp/none.txt" "$run"
contains "missing catalog message" "$tmp/err" "cannot read kernel catalog"
printf '[x]\nkind = sideways\n' > "$tmp/cat.txt"
check "discover bad catalog" 2 "$exe" discover --catalog "$tmp/cat.txt" "$run"
contains "bad catalog message" "$tmp/err" "cat.txt:2:8: error: unknown kind"
check "discover bad kernels-from" 2 "$exe" discover --kernels-from "$tmp/nodir" "$run"
check "discover top 2" 0 "$exe" discover --top 2 "$run"
contains "top 2 note" "$tmp/out" "more candidates; --top 0 shows all"
check "discover markdown to file" 0 "$exe" discover --format markdown -o "$tmp/r.md" "$run"
contains "markdown file" "$tmp/r.md" "## fusescan"
check "discover on a bad file still reports the good one" 2 "$exe" discover --format json "$tests/bad/duplicate.txt" "$tests/data/export_tiny_llama_2l"
contains "good one reported" "$tmp/out" "002_post_export_run_decompositions.txt"

# a mistyped command: said, with the command meant, and no report
check "mistyped command" 2 "$exe" discvoer "$run"
contains "mistyped command message" "$tmp/err" "fusescan: unknown command 'discvoer' (and no such file); did you mean 'discover'?"
[ ! -s "$tmp/out" ] && pass=$((pass + 1)) || { fail=$((fail + 1)); echo "FAIL mistyped command: a report ran"; }
check "mistyped command, swapped letters" 2 "$exe" tnue --apply x "$run"
contains "swapped letters message" "$tmp/err" "did you mean 'tune'?"
check "a word far from every command" 2 "$exe" frobnicate "$run"
contains "far word message" "$tmp/err" "fusescan: unknown command 'frobnicate' (and no such file); see 'fusescan --help'"
mkdir "$tmp/words" && cp "$run/001_export_export_to_gm.txt" "$tmp/words/discvoer"
check "a word that is a file is discover's" 0 bash -c "cd '$tmp/words' && '$exe' discvoer"
contains "word file analysed" "$tmp/out" "== discvoer"
check "a missing path is still an input error" 2 "$exe" --format json "$tmp/nosuch.txt" "$run"
contains "missing path: the other input reported" "$tmp/out" "035_compile_compile_model.txt"
contains "missing path: said" "$tmp/err" "nosuch.txt: error: cannot open"

# mistyped options and values
check "mistyped option" 2 "$exe" discover --tokenz 5 "$run"
contains "mistyped option message" "$tmp/err" "fusescan discover: unknown option '--tokenz'; did you mean '--tokens'?"
check "mistyped option with a value" 2 "$exe" scan --fromat=json "$run"
contains "mistyped option= message" "$tmp/err" "fusescan scan: unknown option '--fromat=json'; did you mean '--format'?"
check "mistyped option of the default command" 2 "$exe" --toP 3 "$run"
contains "default command's option message" "$tmp/err" "fusescan discover: unknown option '--toP'; did you mean '--top'?"
check "mistyped value" 2 "$exe" scan --format jsno "$run"
contains "mistyped value message" "$tmp/err" "fusescan scan: invalid value 'jsno' for --format; did you mean 'json'?"
check "option near nothing" 2 "$exe" scan --bogus "$run"
count "no guess when nothing is near" "$tmp/err" "did you mean" 0

# each command's help lists its own options
check "tune help" 0 "$exe" tune --help
contains "tune help: --buckets" "$tmp/out" "--buckets LIST"
for opt in --out --emit --scaffold --hops --no-render --cpu-only --compile-all --triage --plant-bug; do
	count "tune help: no $opt" "$tmp/out" "$opt " 0
done
check "fuse help" 0 "$exe" fuse --help
contains "fuse help: --emit" "$tmp/out" "--emit DIR"
check "tune refuses fuse's options" 2 "$exe" tune --apply add_rmsnorm-407262a5 --out "$tmp/never" "$run"
contains "tune: --out unknown" "$tmp/err" "fusescan tune: unknown option '--out'"

# tune that tuned nothing (no GPU ran the kernels) failed: exit 2, and the cache is not written
"$exe" tune --apply add_rmsnorm-407262a5 --cache "$tmp/tuning.json" "$run" >"$tmp/out" 2>"$tmp/err"
rc=$?
if grep -q "GPU: execution skipped" "$tmp/out"; then
	[ "$rc" = 2 ] && pass=$((pass + 1)) || { fail=$((fail + 1)); echo "FAIL tune without a GPU: exit $rc, want 2"; }
	contains "tune without a GPU: said" "$tmp/err" "fusescan tune: nothing tuned: the kernels did not run on a GPU"
	[ ! -e "$tmp/tuning.json" ] && pass=$((pass + 1)) || { fail=$((fail + 1)); echo "FAIL tune without a GPU wrote the cache"; }
else
	[ "$rc" = 0 ] && pass=$((pass + 1)) || { fail=$((fail + 1)); echo "FAIL tune on a GPU: exit $rc, want 0"; }
fi

# a pattern of two outputs: the second reached through an optional node's first argument only (its
# other argument, in no tree when it is absent, must not narrow the second output's search)
check "match --patterns: an optional node's other argument" 0 "$exe" match --patterns "$tests/data/optional_pin/patterns" \
	"$tests/data/optional_pin/graph.txt"
contains "match: optpin found" "$tmp/out" "optpin                  1"

finish
