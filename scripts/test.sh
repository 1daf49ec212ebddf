#!/usr/bin/env bash
# Builds and runs the whole test suite twice: a normal build (warnings as
# errors) and an AddressSanitizer + UndefinedBehaviorSanitizer build, both
# without the tests labelled exhaustive (every tactic compiled, which exercises
# NVRTC, and every architecture's GEMM candidates: the same code on more
# graphs), which scripts/gpu_check.sh's tests part runs, and
# `ctest --test-dir build -L exhaustive` here; the ASan build also leaves out
# the test labelled timing (its ratios would time the sanitizers).
# The tests' caches stay in the build trees, the ASan build reading the normal
# build's compiled kernels. Prints each stage's time, a line per object built
# and per test run, the tests still running after 10 s without one, and each
# skipped test's reason.
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
# a build's progress: a line per object compiled and per target built
build_lines() {
	sed -un -e 's/^\[ *\([0-9]*%\)\] Building C object .*\.dir\/\(.*\)\.o$/  [\1] \2/p' \
		-e 's/^\[ *\([0-9]*%\)\] Built target \(.*\)/  [\1] built \2/p'
}
# ctest's lines as they come; after 10 s without one, the tests still running and for how long
test_lines() {
	local line name rc t0=$SECONDS
	local -A running=()
	while :; do
		IFS= read -r -t 10 line && rc=0 || rc=$? # (a timeout's status, over 128, is no error)
		if [ "$rc" -eq 0 ]; then
			echo "$line"
			case $line in
			*" Start "*) running[${line##*: }]=1 ;;
			*" Test "*"#"*) name=${line#*: }; unset "running[${name%% *}]" ;;
			esac
		elif [ "$rc" -gt 128 ]; then
			echo "  ... $((SECONDS - t0)) s: ${!running[*]} still running"
		else
			break
		fi
	done
}
# the tests ctest skipped, each with the first line of its reason
skipped() {
	awk '/^[0-9]+\/[0-9]+ Testing: /{name = $3} tolower($0) ~ /^skipped/ && !said[name]++ {print "  " name ": " $0}' \
		"$1/Testing/Temporary/LastTest.log"
}
# build/ with the flags scripts/bootstrap.sh gives it, so that its build is reused; the ASan
# build's tests read the kernels the normal build's compiled (the same NVRTC output)
for variant in "build -DFS_WERROR=ON" "build-asan -DFS_WERROR=ON -DFS_SANITIZE=ON -DFS_TEST_CACHE=$PWD/build/tests/cache"; do
	set -- $variant
	dir=$1; shift
	t0=$SECONDS
	echo "== $dir: building"
	cmake -S . -B "$dir" "$@" >/dev/null
	cmake --build "$dir" -j"$jobs" 2>&1 | tee "$dir/build.log" | build_lines || { cat "$dir/build.log"; exit 1; }
	echo "== $dir: built in $((SECONDS - t0)) s; testing"
	t0=$SECONDS
	skip=exhaustive
	[ "$dir" = build ] || skip='exhaustive|timing'
	ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 \
		LSAN_OPTIONS="suppressions=$PWD/tests/lsan.supp" \
		ctest --test-dir "$dir" --output-on-failure -j"$jobs" -LE "$skip" | test_lines
	echo "== $dir: tested in $((SECONDS - t0)) s; skipped, and why:"
	skipped "$dir"
done
echo "== all: $((SECONDS - start)) s"
