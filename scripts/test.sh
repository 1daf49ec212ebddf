#!/usr/bin/env bash
# Builds and runs the whole test suite twice: a normal build (warnings as
# errors) and an AddressSanitizer + UndefinedBehaviorSanitizer build, both
# without the tests labelled exhaustive (every tactic compiled, which exercises
# NVRTC, and every architecture's GEMM candidates: the same code on more
# graphs), which scripts/gpu_check.sh's tests part runs, and
# `ctest --test-dir build -L exhaustive` here; the ASan build also leaves out
# the test labelled timing (its ratios would time the sanitizers).
# The tests' caches stay in the build trees, the ASan build reading the normal
# build's compiled kernels. Prints each stage's time.
# usage: scripts/test.sh   (run scripts/bootstrap.sh once first on a new machine)
set -euo pipefail
cd "$(dirname "$0")/.."
jobs=$(nproc)
start=$SECONDS
# the tests start python3 hundreds of times: the interpreter itself, first on PATH, not a version
# manager's shim in front of it (pyenv's costs about 0.3 s a call)
py=$(python3 -c 'import sys; print(sys.executable)')
mkdir -p build/python && ln -sf "$py" build/python/python3
export PATH=$PWD/build/python:$PATH
# the ASan build's tests read the kernels the normal build's compiled (the same NVRTC output)
for variant in "build -DFS_WERROR=ON" "build-asan -DFS_WERROR=ON -DFS_SANITIZE=ON -DFS_TEST_CACHE=$PWD/build/tests/cache"; do
	set -- $variant
	dir=$1; shift
	t0=$SECONDS
	echo "== $dir: building"
	cmake -S . -B "$dir" "$@" >/dev/null
	cmake --build "$dir" -j"$jobs" >"$dir/build.log" 2>&1 || { cat "$dir/build.log"; exit 1; }
	echo "== $dir: built in $((SECONDS - t0)) s; testing"
	t0=$SECONDS
	skip=exhaustive
	[ "$dir" = build ] || skip='exhaustive|timing'
	ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 \
		LSAN_OPTIONS="suppressions=$PWD/tests/lsan.supp" \
		ctest --test-dir "$dir" --output-on-failure -j"$jobs" -LE "$skip"
	echo "== $dir: tested in $((SECONDS - t0)) s"
done
echo "== all: $((SECONDS - start)) s"
