#!/usr/bin/env bash
# What an input says never becomes code: a dump whose file and node names
# are hostile (quotes, "$(id)", backticks; inputs %x.y and %x_y, nodes named
# tuple, _symbols, lambda, DESC, inputs, s; a dim symbol (lambda); a hex-float
# eps), a catalog whose kernels value is a Python payload, applied with
# --emit and --scaffold: check_generated.py imports every module written
# (a stub torch) and asserts no payload ran; a pattern name outside
# [A-Za-z_][A-Za-z0-9_]* is refused (exit 2, file:line:col, nothing written);
# JUnit with hostile pattern names parses as XML with no extra test case.
# usage: hostile.sh FUSESCAN TESTS_DIR
set -u
exe=$(realpath "$1") tests=$(realpath "$2") here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=tests/scripts/lib.sh
. "$(dirname "$0")/lib.sh"
dump=$(ls "$tests"/data/hostile/dump_*.txt)
payload='x""" + str(open("PAYLOAD_RAN", "w")) + """ \" '"'"' `id` ${HOME} </testcase><testcase name="fake">'
sed "s|^kernels = auto_deploy.flashinfer_rms_norm .*|kernels = $payload|" "$tests/../kernels/catalog.txt" >"$tmp/catalog.txt"
cd "$tmp" || exit 1
check "hostile names, emitted and scaffolded" 0 "$exe" --apply rmsnorm --catalog "$tmp/catalog.txt" --cpu-only --no-render \
	--out "$tmp/a" --emit "$tmp/ops" --scaffold "$tmp/s" "$dump"
if python3 "$here/check_generated.py" "$tmp/ops" "$tmp/s"; then pass=$((pass + 1)); else fail=$((fail + 1)) && echo "FAIL generated modules"; fi
[ ! -e "$tmp/PAYLOAD_RAN" ] && pass=$((pass + 1)) || { fail=$((fail + 1)); echo "FAIL a payload ran"; }
mkdir -p "$tmp/pat"
printf 'pattern x"+str(open("PAYLOAD_RAN","w"))+"\ninput x\nnode a aten\\.neg\\.default (x)\noutput a\n' >"$tmp/pat/bad.pat"
check "a pattern name outside the grammar" 2 "$exe" --apply 'x"+str(open("PAYLOAD_RAN","w"))+"' --patterns "$tmp/pat" --cpu-only \
	--no-render --out "$tmp/b" --emit "$tmp/ops2" --scaffold "$tmp/s2" "$dump"
contains "the refusal says where" "$tmp/err" "bad.pat:1:10: error: a pattern name is [A-Za-z_][A-Za-z0-9_]*"
[ ! -e "$tmp/b" ] && [ ! -e "$tmp/s2" ] && pass=$((pass + 1)) || { fail=$((fail + 1)); echo "FAIL a refused run wrote"; }
# JUnit: a dump whose name carries markup, a control and an invalid byte; a
# pattern whose name would close the test case (refused, or escaped)
cp "$dump" "$tmp/"$'bad\x01\xff"<&>'"'.txt"
printf 'pattern a"><testcase name="fake"></testcase><testcase name="b\ninput x\nnode a aten\\.neg\\.default (x)\noutput a\n' >"$tmp/pat/bad.pat"
check "junit with hostile names" 0 "$exe" match --format junit "$tmp/bad"*.txt
"$exe" match --format junit --patterns "$tmp/pat" "$tmp/bad"*.txt >"$tmp/out2" 2>/dev/null
python3 - "$tmp/out" "$tmp/out2" <<'PY' && pass=$((pass + 1)) || { fail=$((fail + 1)); echo "FAIL junit is not well-formed"; }
import sys, xml.etree.ElementTree as ET
for path in sys.argv[1:]:
    if open(path, "rb").read().strip() == b"":
        continue  # refused: nothing written
    root = ET.parse(path).getroot()
    cases = root.findall(".//testcase")
    assert int(root.get("tests")) == len(cases), (root.get("tests"), len(cases))
    assert not any(c.get("name") == "fake" for c in cases), path
PY
# a dump named as a file fusescan writes in --out: the after-dump beside it as after_<name>, nothing replaced
for n in summary.txt numerics.txt fused.cu; do
	mkdir -p "$tmp/in11"
	cp "$tests/data/export_tiny_llama_2l/001_export_export_to_gm.txt" "$tmp/in11/$n"
	check "a dump named $n" 0 "$exe" --apply rmsnorm --cpu-only --no-render --out "$tmp/o11_$n" "$tmp/in11/$n"
	grep -q "^%" "$tmp/o11_$n/after_$n" && grep -q "SUMMARY" "$tmp/o11_$n/summary.txt" && [ -f "$tmp/o11_$n/after_$n.diff" ] &&
		! grep -q "^%" "$tmp/o11_$n/$n" && cmp -s "$tmp/in11/$n" "$tests/data/export_tiny_llama_2l/001_export_export_to_gm.txt" &&
		pass=$((pass + 1)) || { fail=$((fail + 1)); echo "FAIL a dump named $n: an output replaced another"; }
done
finish
