#!/usr/bin/env bash
# Golden test: runs `fusescan ARGS...` in TESTS_DIR (so paths in the output
# are relative and stable) and compares its stdout with golden/NAME; with
# --file REL, compares the file REL the command wrote instead (@TMP@ in the
# arguments is a fresh temporary directory). fusescan is called by its name,
# found on PATH, as an installed one is (the commands a report prints name it
# as it was called, and write under $TMPDIR: /tmp here). UPDATE_GOLDEN=1 rewrites the golden file instead.
# usage: golden.sh FUSESCAN TESTS_DIR NAME [--file REL] [ARGS...]
set -u
exe=$1 tests=$2 name=$3; shift 3
file=
if [ "${1:-}" = --file ]; then file=$2; shift 2; fi
cd "$tests" || exit 1
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
args=()
for a in "$@"; do args+=("${a//@TMP@/$tmp}"); done
TMPDIR=/tmp PATH="$(dirname "$exe"):$PATH" "$(basename "$exe")" "${args[@]}" > "$tmp/stdout"
rc=$?
out=$tmp/stdout
[ -n "$file" ] && out=$tmp/$file
if [ "${UPDATE_GOLDEN:-0}" = 1 ]; then
	cp "$out" "golden/$name"
	echo "updated golden/$name"
	exit 0
fi
if [ "$rc" -ne 0 ]; then
	echo "fusescan exited $rc"
	exit 1
fi
if ! diff -u "golden/$name" "$out"; then
	echo "golden/$name differs (UPDATE_GOLDEN=1 ctest -R golden to accept)"
	exit 1
fi
echo "golden/$name matches"
