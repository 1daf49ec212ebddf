#!/usr/bin/env bash
# Builds and runs the whole test suite twice: a normal build (warnings as
# errors) and an AddressSanitizer + UndefinedBehaviorSanitizer build (without
# the exhaustive compile check, label exhaustive: it exercises NVRTC, not our
# code). Each test's caches stay in its build tree. Prints each stage's time.
# usage: scripts/test.sh   (run scripts/bootstrap.sh once first on a new machine)
set -euo pipefail
cd "$(dirname "$0")/.."
jobs=$(nproc)
start=$SECONDS
for variant in "build -DFS_WERROR=ON" "build-asan -DFS_WERROR=ON -DFS_SANITIZE=ON"; do
	set -- $variant
	dir=$1; shift
	t0=$SECONDS
	echo "== $dir: building"
	cmake -S . -B "$dir" "$@" >/dev/null
	cmake --build "$dir" -j"$jobs" >"$dir/build.log" 2>&1 || { cat "$dir/build.log"; exit 1; }
	echo "== $dir: built in $((SECONDS - t0)) s; testing"
	t0=$SECONDS
	skip=()
	[ "$dir" = build ] || skip=(-LE exhaustive)
	ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 \
		LSAN_OPTIONS="suppressions=$PWD/tests/lsan.supp" \
		ctest --test-dir "$dir" --output-on-failure -j"$jobs" "${skip[@]}"
	echo "== $dir: tested in $((SECONDS - t0)) s"
done
echo "== all: $((SECONDS - start)) s"
