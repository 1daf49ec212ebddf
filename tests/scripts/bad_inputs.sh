#!/usr/bin/env bash
# Runs the bad-input corpus (tests/bad/expected.txt) and the cases made at
# test time. Every case must exit 2 (never crash, never hang: 20 s limit)
# and print the expected file:line:col diagnostic.
# usage: bad_inputs.sh FUSESCAN TESTS_DIR
set -u
exe=$1 tests=$2
pass=0 fail=0
tmp=$(mktemp -d) || exit 1
trap 'chmod -R u+rwx "$tmp"; rm -rf "$tmp"' EXIT

# expect NAME WANTED_STDERR_TEXT -- ARGS...: run fusescan, check exit 2 and text
expect() {
	local name=$1 want=$2; shift 3
	local err rc
	err=$(timeout 20 "$exe" "$@" 2>&1 >/dev/null); rc=$?
	if [ "$rc" -eq 2 ] && grep -qF -- "$want" <<<"$err"; then
		pass=$((pass + 1))
	else
		fail=$((fail + 1))
		echo "FAIL $name: exit $rc (want 2), want '$want' in:"; echo "$err" | head -20
	fi
}

cd "$tests/bad" || exit 1
before=$(cat -- * | md5sum)
while IFS=$'\t' read -r file want; do
	case $file in ''|'#'*) continue ;; esac
	expect "$file" "$want" -- "$file"
done < expected.txt

mkdir "$tmp/emptydir"
expect "empty directory" "emptydir: error: no dump files" -- "$tmp/emptydir"

mkdir "$tmp/run"
cp "$tests/data/adrun_tiny_llama_2l/001_export_export_to_gm.txt" "$tmp/run/"
ln -s /nonexistent/fusescan "$tmp/run/002_post_export_cleanup_noop_slice.txt"
expect "unreadable file (dangling link)" "002_post_export_cleanup_noop_slice.txt: error: cannot open: No such file or directory" -- "$tmp/run"
if [ "$(id -u)" -ne 0 ]; then
	cp "$tests/bad/duplicate.txt" "$tmp/noperm.txt"; chmod 000 "$tmp/noperm.txt"
	expect "unreadable file (mode 000)" "noperm.txt: error: cannot open: Permission denied" -- "$tmp/noperm.txt"
fi

head -c 10485760 /dev/zero | tr '\0' 'a' > "$tmp/longline.txt"
expect "10 MB single line" "longline.txt:1:1: error: unexpected line" -- "$tmp/longline.txt"

{ printf '%%x : 4 : torch.float32\n%%c = aten.cat.default(['; head -c 10485760 /dev/zero | tr '\0' '['; printf '\n'; } > "$tmp/deep.txt"
expect "10 MB of nested brackets" "deep.txt:2:86: error: brackets nested deeper than 64" -- "$tmp/deep.txt"

expect "missing path" "nothere.txt: error: cannot open: No such file or directory" -- "$tmp/nothere.txt"

# other inputs are still processed and reported
out=$(timeout 20 "$exe" scan --format json "$tests/bad/duplicate.txt" "$tests/data/export_tiny_llama_2l" 2>/dev/null); rc=$?
if [ "$rc" -eq 2 ] && grep -q '"file":.*002_post_export_run_decompositions.txt' <<<"$out"; then
	pass=$((pass + 1))
else
	fail=$((fail + 1)); echo "FAIL good input beside a bad one was not reported (exit $rc)"
fi

# inputs are never modified
after=$(cd "$tests/bad" && cat -- * | md5sum)
[ "$before" = "$after" ] && pass=$((pass + 1)) || { fail=$((fail + 1)); echo "FAIL inputs changed"; }

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
