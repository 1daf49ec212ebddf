#!/usr/bin/env bash
# patterns.fragility on a library whose pattern lacks its sites: a pattern
# without tests/patterns/NAME.match.txt, and one whose file matches nothing,
# each fail in one line (exit 1), with no traceback, and the others still run.
# usage: fragility_missing.sh FUSESCAN TESTS_DIR
set -u
exe=$1 tests=$2
# shellcheck source=tests/scripts/lib.sh
. "$(dirname "$0")/lib.sh"
mkdir -p "$tmp/patterns" "$tmp/tests/patterns"
for p in add_rmsnorm noop_add rmsnorm; do cp "$tests/../patterns/$p.pat" "$tmp/patterns/"; done
cp "$tests/patterns/rmsnorm.match.txt" "$tmp/tests/patterns/"
cp "$tests/patterns/add_rmsnorm.miss.txt" "$tmp/tests/patterns/add_rmsnorm.match.txt"
check "missing and unmatched sites fail" 1 python3 "$(dirname "$0")/fragility.py" "$exe" "$tmp/tests"
count "no traceback" "$tmp/err" "Traceback" 0
count "the missing file, in one line" "$tmp/out" "FAIL noop_add: no $tmp/tests/patterns/noop_add.match.txt: each library pattern needs" 1
count "the file that matches nothing, in one line" "$tmp/out" "FAIL add_rmsnorm: $tmp/tests/patterns/add_rmsnorm.match.txt: nothing in it matches" 1
contains "the others still run" "$tmp/out" "ok   rmsnorm "
contains "the tally" "$tmp/out" ", 2 failed"
finish
