# shellcheck shell=bash
# Shared by the shell tests: a temporary folder, pass / fail counters and the
# checks. Source it after setting exe and tests; end with `finish`.
pass=0 fail=0
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT

check() { # check NAME WANT_RC CMD...: the command's exit status; its output in $tmp/out, $tmp/err
	local name=$1 want=$2; shift 2
	"$@" >"$tmp/out" 2>"$tmp/err"; local rc=$?
	if [ "$rc" -eq "$want" ]; then pass=$((pass + 1)); else
		fail=$((fail + 1)); echo "FAIL $name: exit $rc, want $want"; tail -n 8 "$tmp/out" "$tmp/err"; fi
}
contains() { # contains NAME FILE TEXT (a miss also shows FILE's kernel-count lines, where it has any)
	if grep -qF -- "$3" "$2"; then pass=$((pass + 1)); else
		fail=$((fail + 1)); echo "FAIL $1: '$3' not in $2"
		grep -o "[0-9]* generated ([^)]*), [0-9]* compiled" "$2" | sort -u | sed "s|^|  has: |" || true
	fi
}
count() { # count NAME FILE TEXT N: TEXT on exactly N lines
	local n; n=$(grep -cF -- "$3" "$2")
	if [ "$n" -eq "$4" ]; then pass=$((pass + 1)); else fail=$((fail + 1)); echo "FAIL $1: $n x '$3' in $2, want $4"; fi
}
all_compiled() { # all_compiled NAME FILE: every kernel the report says it generated was compiled, with no error
	local k
	k=$(grep -o "kernels: [0-9]* generated ([^)]*), [0-9]* compiled" "$2")
	if [ -n "$k" ] && [ "$(echo "$k" | awk '{print $2}')" = "$(echo "$k" | awk '{print $(NF-1)}')" ] && ! grep -q "; error:" "$2"; then
		pass=$((pass + 1))
	else
		fail=$((fail + 1)); echo "FAIL $1: $k $(grep -o '; error: .*' "$2")"
	fi
}
cuda_or_skip() { # exit 77 (skipped), saying why, unless the CUDA driver loads and lists a device:
	# a look before a GPU test's own probe, which compiles and runs kernels
	local why
	why=$(python3 -c 'import ctypes, sys
try:
    c = ctypes.CDLL("libcuda.so.1")
except OSError:
    sys.exit("no CUDA driver (libcuda.so.1 not found)")
n = ctypes.c_int(0)
r = c.cuInit(0)
if r or c.cuDeviceGetCount(ctypes.byref(n)) or n.value < 1:
    sys.exit("no CUDA device (cuInit: %d, devices: %d)" % (r, n.value))' 2>&1) || { echo "skipped: $why"; exit 77; }
}
finish() {
	echo "$pass passed, $fail failed"
	[ "$fail" -eq 0 ]
}
