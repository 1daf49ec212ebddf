#!/usr/bin/env bash
# Golden test: runs `fusescan ARGS...` in TESTS_DIR (so paths in the output
# are relative and stable) and compares stdout with golden/NAME.
# UPDATE_GOLDEN=1 rewrites the golden file instead.
# usage: golden.sh FUSESCAN TESTS_DIR NAME [ARGS...]
set -u
exe=$1 tests=$2 name=$3; shift 3
cd "$tests" || exit 1
out=$(mktemp) || exit 1
trap 'rm -f "$out"' EXIT
"$exe" "$@" > "$out"
rc=$?
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
