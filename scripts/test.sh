#!/usr/bin/env bash
# Builds and runs the whole test suite twice: a normal build (warnings as
# errors) and an AddressSanitizer + UndefinedBehaviorSanitizer build.
# usage: scripts/test.sh   (run scripts/bootstrap.sh once first on a new machine)
set -euo pipefail
cd "$(dirname "$0")/.."
jobs=$(nproc)
for variant in "build -DFS_WERROR=ON" "build-asan -DFS_WERROR=ON -DFS_SANITIZE=ON"; do
	set -- $variant
	dir=$1; shift
	echo "== $dir"
	cmake -S . -B "$dir" "$@" >/dev/null
	cmake --build "$dir" -j"$jobs"
	ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 \
		LSAN_OPTIONS="suppressions=$PWD/tests/lsan.supp" \
		ctest --test-dir "$dir" --output-on-failure -j"$jobs"
done
