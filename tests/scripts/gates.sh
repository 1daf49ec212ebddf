#!/usr/bin/env bash
# CI gating of `fusescan match`: --expect and --baseline pass on the bundled
# 2-layer run and fail (exit 1) on a copy where one RMSNorm stopped matching
# (a cast planted inside it, as in a real regression); the ad.log
# cross-check agrees on the real log and fails on a tampered one; malformed
# expectations are input errors (exit 2); JUnit output is well-formed.
# usage: gates.sh FUSESCAN TESTS_DIR
set -u
exe=$1 tests=$2
# shellcheck source=tests/scripts/lib.sh
. "$(dirname "$0")/lib.sh"
run=$tests/data/adrun_tiny_llama_2l

# the regressed run: dump 001 with a cast inside its first RMSNorm
cp -r "$run" "$tmp/regressed"
python3 - "$tmp/regressed/001_export_export_to_gm.txt" <<'PY'
import sys
p = sys.argv[1]
lines = open(p).read().split('\n')
i = next(k for k, l in enumerate(lines) if l.startswith('%rsqrt = '))
lines.insert(i, '%planted = aten.to.dtype(%add_3 : s72xs70x1 : torch.float32, torch.float32) : s72xs70x1 : torch.float32')
lines[i + 1] = lines[i + 1].replace('(%add_3 :', '(%planted :')
open(p, 'w').write('\n'.join(lines))
PY

cat > "$tmp/expect.txt" <<'EOT'
# the graph as it runs: every chain the run fuses is gone
rmsnorm == 0
swiglu == 0
# before the pattern matchers ran
@001 rmsnorm == 2*layers+1
@001 add_rmsnorm >= 2*layers
@001 rope_rotate_half == layers
@001 repeat_kv == 2 * layers
@008 repeat_kv == 0
EOT
check "expect passes on the run" 0 "$exe" match --expect "$tmp/expect.txt" "$run"
contains "expect summary" "$tmp/out" "gates: 7 checks, 0 failed"
check "expect fails on the regressed run" 1 "$exe" match --expect "$tmp/expect.txt" "$tmp/regressed"
contains "expect names the drop" "$tmp/out" "001_export_export_to_gm.txt: matches=4, expected == 5"
contains "expect stderr" "$tmp/err" "gate checks failed"

check "baseline passes on the same run" 0 "$exe" match --baseline "$run" "$run"
check "baseline fails on the regressed run" 1 "$exe" match --baseline "$run" "$tmp/regressed"
contains "baseline names the drop" "$tmp/out" "rmsnorm: 1 count dropped: 001_export_export_to_gm.txt: 5 -> 4"
check "saved JSON baseline" 0 "$exe" match --format json -o "$tmp/base.json" "$run"
check "JSON baseline passes" 0 "$exe" match --baseline "$tmp/base.json" "$run"
check "JSON baseline fails" 1 "$exe" match --baseline "$tmp/base.json" "$tmp/regressed"
check "explain names the planted cast" 1 "$exe" match --explain rmsnorm --baseline "$tmp/base.json" "$tmp/regressed"
contains "explain cause" "$tmp/out" "met %planted = aten.to.dtype, a cast / view inside the chain: its input %add_3 would match"

printf 'rmsnrom >= 1\n' > "$tmp/unknown.txt"
check "unknown pattern in expectations" 1 "$exe" match --expect "$tmp/unknown.txt" "$run"
contains "unknown pattern message" "$tmp/out" "unknown pattern 'rmsnrom'"
printf '@001 noop_mul1 > 3\n' > "$tmp/zero.txt"
check "count below expectation" 1 "$exe" match --expect "$tmp/zero.txt" "$run"
printf '@001 rmsnorm >= 1\n@001 l2norm >= 1\n' > "$tmp/zero2.txt"
check "zero where positive expected" 1 "$exe" match --expect "$tmp/zero2.txt" "$run"
contains "zero message" "$tmp/out" "ZERO matches where a positive count is expected"
printf 'rmsnorm >=\n' > "$tmp/bad.txt"
check "malformed expectation" 2 "$exe" match --expect "$tmp/bad.txt" "$run"
contains "malformed message" "$tmp/err" "bad.txt:1:11: error: bad expression"
printf 'rmsnorm ~ 3\n' > "$tmp/bad2.txt"
check "bad operator" 2 "$exe" match --expect "$tmp/bad2.txt" "$run"
contains "bad operator message" "$tmp/err" "bad2.txt:1:9: error: expected '[@DUMP] PATTERN OP EXPR'"
check "unknown --pattern" 2 "$exe" match --pattern nope "$run"
contains "unknown --pattern message" "$tmp/err" "unknown pattern 'nope'"

check "log agrees" 0 "$exe" match --log "$run/ad.log" "$run"
contains "log checks" "$tmp/out" "gates: 35 checks, 0 failed"
sed '/transform=match_rmsnorm_pattern/s/matches=5/matches=4/' "$run/ad.log" > "$tmp/ad.log"
check "tampered log disagrees" 1 "$exe" match --log "$tmp/ad.log" "$run"
contains "tampered log message" "$tmp/out" "reported matches=4; DISAGREES with the dumps: +5 auto_deploy.torch_rmsnorm.default"

check "junit" 1 "$exe" match --format junit --expect "$tmp/expect.txt" "$tmp/regressed"
if python3 -c 'import sys, xml.etree.ElementTree as E; r=E.parse(sys.argv[1]).getroot(); assert int(r.get("failures")) >= 1' "$tmp/out"; then
	pass=$((pass + 1)); else fail=$((fail + 1)); echo "FAIL junit is not valid XML with failures"; fi

finish
