#!/usr/bin/env bash
# Bounds an input or a user pushes against: a run diff's change list longer
# than its line, cut at whole items and saying how many more; every number
# option at its largest value (runs, no signed overflow: the sanitizers'
# build aborts on one) and past it (exit 2, the range said); names holding
# invalid UTF-8 (a dump's file name, a node's name) through every JSON output
# (scan, discover, match, numerics.json, --emit's descriptor): valid UTF-8
# JSON, the bad bytes as U+FFFD.
# usage: limits.sh FUSESCAN TESTS_DIR
set -u
exe=$1 tests=$2
# shellcheck source=tests/scripts/lib.sh
. "$(dirname "$0")/lib.sh"
run=$tests/data/adrun_tiny_llama_2l
no_ub() { # no_ub NAME: no sanitizer report in the last command's stderr
	if grep -q "runtime error:\|ERROR: AddressSanitizer" "$tmp/err"; then fail=$((fail + 1)); echo "FAIL $1: $(grep -m1 'runtime error:\|ERROR:' "$tmp/err")"
	else pass=$((pass + 1)); fi
}

# ---- a run diff's change list past its line: whole items, then "and N more" ----
mkdir -p "$tmp/diffrun"
python3 - "$tmp/diffrun" <<'PY'
import sys
ops = ["neg", "exp", "sin", "cos", "tanh", "sigmoid", "relu", "abs", "sqrt", "log"]
pairs = [(a, b) for a in ops for b in ops if a != b][:30]
t = ": 4x64 : torch.float32"
pre, post, outs = ["%x " + t], ["%x " + t], []
for i, (a, b) in enumerate(pairs):  # 30 chains of two ops, each replaced by one op of its own
    pre += ["%%a%d = aten.%s.default(%%x %s) %s" % (i, a, t, t), "%%b%d = aten.%s.default(%%a%d %s) %s" % (i, b, i, t, t)]
    post.append("%%b%d = fusedns.fused_%s_%s_kernel.default(%%x %s) %s" % (i, a, b, t, t))
    outs.append("%%b%d" % i)
for lines, name in ((pre, "001_export_export_to_gm.txt"), (post, "002_pattern_matcher_fuse_many.txt")):
    open(sys.argv[1] + "/" + name, "w").write("\n".join(lines + ["output (%s,)" % ", ".join(outs)]) + "\n")
PY
check "diff: a long change list" 0 "$exe" diff "$tmp/diffrun"
python3 - "$tmp/out" <<'PY' && pass=$((pass + 1)) || { fail=$((fail + 1)); echo "FAIL diff: the change list is cut inside an item"; }
import re, sys
line = [l for l in open(sys.argv[1]) if "fuse_many" in l][0]
what = line.split("fuse_many", 1)[1].strip()
whole = [r"\d+ -> \d+ nodes", r"and \d+ more", r"ops [+-]\d+ \S+(, [+-]\d+ \S+)?",
         r"\S+ x\d+ (replaced by \S+( \(one op a pair\))?|gone \(no op appeared as often\)|changed form \(its ops were rewritten\))"]
items = what.split("; ")
bad = [i for i in items if not any(re.fullmatch(w, i) for w in whole)]
assert not bad, bad
assert any(re.fullmatch(r"and \d+ more", i) for i in items), items
PY

# ---- numbers at their largest and past it ----
case_num() { # case_num NAME WANT_RC TEXT CMD...: exit status, stderr holding TEXT (when given), no sanitizer report
	local name=$1 want=$2 text=$3; shift 3
	check "$name" "$want" "$@"
	[ -n "$text" ] && contains "$name: said" "$tmp/err" "$text"
	no_ub "$name"
}
for d in export_tiny_llama_2l export_llama_eager_2l export_gpt2_2l export_gemma2_2l; do
	case_num "discover --tokens 2147483647 ($d)" 0 "" "$exe" discover --tokens 2147483647 "$tests/data/$d"
	if grep -q -- "saves -\| -[0-9][0-9.]* [KMGT]*B" "$tmp/out"; then fail=$((fail + 1)); echo "FAIL $d at 2^31 - 1 tokens: a negative saving"
	else pass=$((pass + 1)); fi
done
case_num "discover --top 4294967295" 0 "" "$exe" discover --top 4294967295 "$run"
for v in 4294967296 9223372036854775807 9223372036854775808 -9223372036854775809 1e3 5x; do
	case_num "discover --top '$v'" 2 "fusescan discover: --top wants an integer from 0 to 4294967295, got '$v'" "$exe" discover --top "$v" "$run"
	case_num "discover --tokens '$v'" 2 "fusescan discover: --tokens wants a positive integer up to 2147483647, got '$v'" \
		"$exe" discover --tokens "$v" "$run"
	case_num "render --hops '$v'" 2 "fusescan render: --hops wants an integer from 0 to 64, got '$v'" \
		"$exe" render --hops "$v" -o "$tmp/r.dot" "$run/001_export_export_to_gm.txt"
	apply=("$exe" --apply add_rmsnorm-407262a5 --cpu-only --no-render --out "$tmp/o")
	case_num "fuse --tokens '$v'" 2 "fusescan fuse: --tokens wants a positive integer up to 1048576, got '$v'" "${apply[@]}" --tokens "$v" "$run"
	case_num "fuse --reps '$v'" 2 "fusescan fuse: --reps wants an integer from 10 to 10000, got '$v'" "${apply[@]}" --reps "$v" "$run"
	case_num "fuse --buckets '$v'" 2 "fusescan fuse: --buckets wants up to" "${apply[@]}" --buckets "$v" "$run"
	case_num "discover --dims s70='$v'" 2 "fusescan discover: --dims: " "$exe" discover --dims "s70=$v" \
		"$tests/data/export_tiny_llama_2l"
done
case_num "fuse --seed 2^63 - 1" 0 "" "$exe" --apply add_rmsnorm-407262a5 --cpu-only --no-render --seed 9223372036854775807 --out "$tmp/o1" "$run"
case_num "fuse --seed 2^63" 2 "fusescan fuse: --seed wants an integer from 0 to 9223372036854775807, got '9223372036854775808'" \
	"$exe" --apply add_rmsnorm-407262a5 --cpu-only --no-render --seed 9223372036854775808 --out "$tmp/o2" "$run"
for v in 9223372036854775807T 9223372036854775808 -1 1e3; do
	case_num "fuse --cpu-memory '$v'" 2 "fusescan fuse: --cpu-memory wants a size" \
		"$exe" --apply add_rmsnorm-407262a5 --cpu-only --no-render --cpu-memory "$v" --out "$tmp/o2" "$run"
done

# ---- invalid UTF-8 in names: every JSON output valid UTF-8 ----
mkdir -p "$tmp/u8"
bad=$tmp/u8/$'bad\xff\xfe.txt'
printf '%%x : 4x64 : torch.float32\n%%d\xff\xc3x = aten.sin.default(%%x : 4x64 : torch.float32) : 4x64 : torch.float32\n%%a = aten.neg.default(%%x : 4x64 : torch.float32) : 4x64 : torch.float32\n%%c = aten.exp.default(%%a : 4x64 : torch.float32) : 4x64 : torch.float32\noutput (%%c,)\n' >"$bad"
json_ok() { # json_ok NAME FILE...: each file valid UTF-8 JSON, one at least holding U+FFFD (a bad byte replaced, not dropped)
	local name=$1; shift
	if python3 -c '
import json, sys
texts = [open(p, "rb").read().decode("utf-8") for p in sys.argv[1:]]
for t in texts:
    json.loads(t)
assert any("\ufffd" in t for t in texts)' "$@"; then pass=$((pass + 1)); else fail=$((fail + 1)); echo "FAIL $name: not valid UTF-8 JSON"; fi
}
for c in scan discover match; do
	check "$c --format json, invalid UTF-8 in names" 0 "$exe" $c --format json -o "$tmp/u8_$c.json" "$bad"
	json_ok "$c --format json, invalid UTF-8 in names" "$tmp/u8_$c.json"
done
check "--apply --emit, invalid UTF-8 in names" 0 "$exe" --apply elementwise.neg-exp-2df2413c --cpu-only --no-render \
	--out "$tmp/u8o" --emit "$tmp/u8e" "$bad"
json_ok "--apply --emit, invalid UTF-8 in names" "$tmp/u8o/numerics.json" "$tmp/u8e/"*.json
finish
