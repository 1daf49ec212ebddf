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

printf 'rmsnorm == 0\n@001 rmsnrom >= 1\n' > "$tmp/unknown.txt"
check "unknown name in expectations is bad input" 2 "$exe" match --expect "$tmp/unknown.txt" "$run"
contains "unknown name: file:line:col and a guess" "$tmp/err" "unknown.txt:2:6: error: unknown name 'rmsnrom' (neither a pattern nor an AutoDeploy transform); did you mean 'rmsnorm'?"
printf 'fuse_rmsnrom >= 1\n' > "$tmp/unknown2.txt"
check "unknown transform name is bad input" 2 "$exe" match --expect "$tmp/unknown2.txt" "$run"
contains "unknown transform: a guess" "$tmp/err" "did you mean 'fuse_rmsnorm'?"
printf 'rmsnorm >= 1\n' > "$tmp/left.txt"
check "a pattern left out by --pattern" 2 "$exe" match -p swiglu --expect "$tmp/left.txt" "$run"
contains "left out: said" "$tmp/err" "pattern 'rmsnorm' is left out by --pattern"
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
contains "bad operator message" "$tmp/err" "bad2.txt:1:9: error: expected '[@DUMP] NAME OP EXPR'"
check "unknown --pattern" 2 "$exe" match --pattern nope "$run"
contains "unknown --pattern message" "$tmp/err" "unknown pattern 'nope'"

check "log agrees" 0 "$exe" match --log "$run/ad.log" "$run"
contains "log checks" "$tmp/out" "gates: 35 checks, 0 failed"
sed '/transform=match_rmsnorm_pattern/s/matches=5/matches=4/' "$run/ad.log" > "$tmp/ad.log"
check "tampered log disagrees" 1 "$exe" match --log "$tmp/ad.log" "$run"
contains "tampered log message" "$tmp/out" "reported matches=4; DISAGREES with the dumps: 5 of the ops match_rmsnorm_pattern inserts"
contains "gate labels name the log given" "$tmp/out" "FAIL $tmp/ad.log:15 match_rmsnorm_pattern"

# a log that holds one entry: every dump that changed the graph needs its own
head -n 1 "$run/ad.log" >"$tmp/one.log"
check "one-line log fails" 1 "$exe" match --log "$tmp/one.log" "$run"
contains "one-line log: 15 dumps changed the graph unlogged" "$tmp/out" "gates: 16 checks, 15 failed"
contains "one-line log: the dump and the transform" "$tmp/out" "FAIL $tmp/one.log: 015_pattern_matcher_match_rmsnorm_pattern.txt: changed the graph (+5 auto_deploy.torch_rmsnorm.default"
contains "one-line log: the missing entry" "$tmp/out" "the log has no entry for stage=pattern_matcher, transform=match_rmsnorm_pattern"
# a count met by some other op: the op the transform inserts (kernels/catalog.txt) must rise
sed '/transform=match_rope_pattern/s/matches=2/matches=4/' "$run/ad.log" >"$tmp/rope.log"
check "rope count through getitems fails" 1 "$exe" match --log "$tmp/rope.log" "$run"
contains "rope: what it inserts" "$tmp/out" "2 of the ops match_rope_pattern inserts (auto_deploy.flashinfer_rope, auto_deploy.triton_rope_with_input_pos, auto_deploy.torch_rope_with_explicit_cos_sin) appeared"
# an entry in the wrong stage: misplaced
sed 's/stage=pattern_matcher, transform=match_rmsnorm_pattern/stage=post_load_fusion, transform=match_rmsnorm_pattern/' "$run/ad.log" >"$tmp/stage.log"
check "entry of another stage fails" 1 "$exe" match --log "$tmp/stage.log" "$run"
contains "stage: misplaced" "$tmp/out" "stage=post_load_fusion: no dump of this stage and transform in order in $run (misplaced: the dumps have this transform at 015_pattern_matcher_match_rmsnorm_pattern.txt)"
# a repeated name: each entry is checked against its own dump, in order
cp -r "$run" "$tmp/twice"
sed 's/^# Transform: fuse_swiglu$/# Transform: fuse_rmsnorm/' "$run/029_post_load_fusion_fuse_swiglu.txt" >"$tmp/twice/029_post_load_fusion_fuse_rmsnorm.txt"
rm "$tmp/twice/029_post_load_fusion_fuse_swiglu.txt"
sed 's/transform=fuse_swiglu\] \[SUMMARY\] disabled/transform=fuse_rmsnorm] [SUMMARY] matches=5 | time: 0.001s/' "$run/ad.log" >"$tmp/twice/ad.log"
check "second entry of a name checks its own dump" 1 "$exe" match --log "$tmp/twice/ad.log" "$tmp/twice"
contains "repeated name: the second dump" "$tmp/out" "FAIL $tmp/twice/ad.log:29 fuse_rmsnorm: reported matches=5 but 029_post_load_fusion_fuse_rmsnorm.txt is identical"
sed 's/transform=fuse_swiglu\] \[SUMMARY\] disabled/transform=fuse_rmsnorm] [SUMMARY] skipped | time: 0.001s/' "$run/ad.log" >"$tmp/twice/ad.log"
check "repeated name, true log" 0 "$exe" match --log "$tmp/twice/ad.log" "$tmp/twice"

# AD's own counts: transform names read from the log's [SUMMARY] matches=N
cat > "$tmp/ad_expect.txt" <<'EOT'
fuse_rmsnorm >= 2*layers+1
@028 fuse_rmsnorm == 5
match_rope_pattern == layers
rmsnorm == 0
EOT
check "expect on AD transform counts (the log beside the run)" 0 "$exe" match --expect "$tmp/ad_expect.txt" "$run"
contains "transform count: from the log" "$tmp/out" "ok   fuse_rmsnorm >= 2*layers+1 ($tmp/ad_expect.txt:1): $run/ad.log:28: matches=5"
check "expect on AD transform counts (--log)" 0 "$exe" match --expect "$tmp/ad_expect.txt" --log "$run/ad.log" "$run"
printf '@030 fuse_add_rms_norm > 0\n@028 fuse_add_rms_norm > 0\nfuse_rmsnorm_quant_fp8 >= 1\n' > "$tmp/ad_fail.txt"
check "a disabled transform fails a positive count" 1 "$exe" match --expect "$tmp/ad_fail.txt" "$run"
contains "disabled: said" "$tmp/out" "ad.log:30: matches=0, expected > 0 (disabled)"
contains "selector on another transform's dump" "$tmp/out" "028_post_load_fusion_fuse_rmsnorm.txt is the dump of fuse_rmsnorm, not of fuse_add_rms_norm"
contains "a transform the log lacks" "$tmp/out" "has no entry for fuse_rmsnorm_quant_fp8: it did not run"
cp -r "$run" "$tmp/nolog" && rm "$tmp/nolog/ad.log"
check "transform count without a log" 2 "$exe" match --expect "$tmp/ad_expect.txt" "$tmp/nolog"
contains "without a log: said" "$tmp/err" "ad_expect.txt:1:1: error: 'fuse_rmsnorm' is an AutoDeploy transform: its count is in the run's log, and $tmp/nolog has none"

# a GraphModule nothing calls is not what runs: its matches are said, not counted
printf 'rmsnorm == 1\n' > "$tmp/called.txt"
check "expect counts what runs" 0 "$exe" match -p rmsnorm --expect "$tmp/called.txt" "$tests/data/gates/uncalled.txt"
contains "uncalled module named" "$tmp/out" "matches=1 (and 1 in GraphModule 'unused_graph', which nothing calls: not counted)"

# --apply: an id that does not exist gets a guess
id=$("$exe" discover "$run/001_export_export_to_gm.txt" 2>/dev/null | grep -o 'rmsnorm-[0-9a-f]\{8\}' | head -n 1)
check "apply: unknown id" 2 "$exe" fuse --apply "${id%?}x" --out "$tmp/apply" "$run/001_export_export_to_gm.txt"
contains "apply: a guess" "$tmp/err" "did you mean '$id'?"
check "apply: unknown pattern" 2 "$exe" fuse --apply pattern:rmsnrom --out "$tmp/apply" "$run/001_export_export_to_gm.txt"
contains "apply: pattern guess" "$tmp/err" "did you mean 'pattern:rmsnorm'?"

check "junit" 1 "$exe" match --format junit --expect "$tmp/expect.txt" "$tmp/regressed"
if python3 -c 'import sys, xml.etree.ElementTree as E; r=E.parse(sys.argv[1]).getroot(); assert int(r.get("failures")) >= 1' "$tmp/out"; then
	pass=$((pass + 1)); else fail=$((fail + 1)); echo "FAIL junit is not valid XML with failures"; fi

finish
