#!/usr/bin/env bash
# scripts/sweep_candidates.py on runs that crash, with a stand-in fusescan:
# discovery names two candidates; applying one faults (a CUDA error in its
# output), the other dies of a signal. Both are classed crash, the sweep
# exits 1, and sweep.json keeps each one's last lines for the triage.
# usage: sweep_crash.sh SOURCE_DIR
set -u
src=$1
# shellcheck source=tests/scripts/lib.sh
. "$(dirname "$0")/lib.sh"
mkdir -p "$tmp/export_fake_2l"
: >"$tmp/export_fake_2l/001_export_export_to_gm.txt"
cat >"$tmp/fusescan" <<'SH'
#!/bin/sh
case "$1" in
discover) echo '{"analyses": [{"candidates": [{"id": "fault-1", "name": "fault", "sites": []}, {"id": "signal-2", "name": "signal", "sites": []}]}]}' ;;
*)	echo "GPU: launching the fused kernel"
	case "$2" in
	fault-1) echo "R->c.cuCtxSynchronize(): CUDA_ERROR_ILLEGAL_ADDRESS (700)"; exit 2 ;;
	*) kill -SEGV $$ ;;
	esac ;;
esac
SH
chmod +x "$tmp/fusescan"
check "a sweep with crashes" 1 python3 "$src/scripts/sweep_candidates.py" --fusescan "$tmp/fusescan" --cpu-only --tokens 16 --jobs 2 \
	--out "$tmp/sw" "$tmp/export_fake_2l/001_export_export_to_gm.txt"
contains "the tally" "$tmp/out" "tally: pass 0, correct, not profitable 0, refused 0, fail 0, crash 2, contradiction 0 (of 2)"
contains "a fault named" "$tmp/out" "CRASH fake fault-1: a CUDA fault: CUDA_ERROR_ILLEGAL_ADDRESS"
contains "a signal named" "$tmp/out" "CRASH fake signal-2: signal SIGSEGV"
python3 - "$tmp/sw/sweep.json" >"$tmp/json" 2>&1 <<'PY'
import json, sys
for r in json.load(open(sys.argv[1]))["results"]:
    print(r["id"], r["class"], repr(r.get("output", "")))
PY
contains "the fault's last lines kept" "$tmp/json" "fault-1 crash 'GPU: launching the fused kernel\\nR->c.cuCtxSynchronize(): CUDA_ERROR_ILLEGAL_ADDRESS (700)'"
contains "the signal's last lines kept" "$tmp/json" "signal-2 crash 'GPU: launching the fused kernel'"
finish
