#!/usr/bin/env bash
# AutoDeploy logs of every generation (tests/data/adlog, written from the
# log format of each; docs/adlog.md): `match --log` and `diff --log` cross-check
# each exactly as they do the summary-only ad.log of the same run (exit 0, the
# same 35 gates, the same timeline), with no warning for the lines around the
# summaries (PRE/APPLY/POST-CLEANUP, CUDA MEM DIFF, elapsed time, Python
# warnings, progress bars). A count that disagrees fails; a summary that cannot
# be read is one warning at file:line:col; a log cut inside a transform fails
# its gate; only the lowest rank's lines (the rank that dumps) are checked.
# usage: adlog.sh FUSESCAN TESTS_DIR
set -u
exe=$1 tests=$2
# shellcheck source=tests/scripts/lib.sh
. "$(dirname "$0")/lib.sh"
run=$tests/data/adrun_tiny_llama_2l
logs=$tests/data/adlog

# g5_autodeploy has the head AutoDeploy logs with today ([AUTO-DEPLOY] [INFO] [RANK n]),
# g4_summary the TRT-LLM head before it.
# the gates and the timeline, less what differs by form: the log's name and
# line numbers, and "disabled" (the oldest form logs a disabled transform as skipped)
gates() { sed -n '/^gates:/,$p' "$1" | sed -E 's/^(  [a-z]+ +)[^ ]+:[0-9]+ /\1LOG /; s/ disabled;/ skipped;/'; }
timeline() { sed -E 's/, log .*$//; s/ad.log: disabled/ad.log: skipped/' "$1"; }

"$exe" match --log "$run/ad.log" "$run" >"$tmp/emulated.match" 2>/dev/null
"$exe" diff --log "$run/ad.log" "$run" >"$tmp/emulated.diff" 2>/dev/null
gates "$tmp/emulated.match" >"$tmp/emulated.gates"
timeline "$tmp/emulated.diff" >"$tmp/emulated.timeline"
for g in g5_autodeploy g4_summary g3_elapsed g2_enabled g1_bare; do
	check "$g: match --log" 0 "$exe" match --log "$logs/$g.log" "$run"
	contains "$g: every gate" "$tmp/out" "gates: 35 checks, 0 failed"
	count "$g: no warning" "$tmp/err" "warning:" 0
	contains "$g: lines around the summaries are counted" "$tmp/err" "lines without a transform summary ignored"
	gates "$tmp/out" >"$tmp/$g.gates"
	check "$g: the gates of the summary-only log" 0 diff "$tmp/emulated.gates" "$tmp/$g.gates"
	check "$g: diff --log" 0 "$exe" diff --log "$logs/$g.log" "$run"
	timeline "$tmp/out" >"$tmp/$g.timeline"
	check "$g: the timeline of the summary-only log" 0 diff "$tmp/emulated.timeline" "$tmp/$g.timeline"
done

# a count that disagrees with the dumps, in today's form and the oldest
sed '/RANK 0.*transform=match_rmsnorm_pattern\] \[SUMMARY\]/s/matches=5/matches=4/' "$logs/g4_summary.log" >"$tmp/tampered.log"
check "tampered count disagrees" 1 "$exe" match --log "$tmp/tampered.log" "$run"
contains "tampered: which" "$tmp/out" "match_rmsnorm_pattern: reported matches=4; DISAGREES with the dumps"
sed '/transform=fuse_rmsnorm,/s/num_matches=5/num_matches=3/' "$logs/g1_bare.log" >"$tmp/tampered1.log"
check "tampered oldest form disagrees" 1 "$exe" match --log "$tmp/tampered1.log" "$run"

# another rank's lines do not decide: only rank 0 writes the dumps
sed '/RANK 1.*transform=match_rmsnorm_pattern\] \[SUMMARY\]/s/matches=5/matches=4/' "$logs/g4_summary.log" >"$tmp/rank1.log"
check "rank 1 is not checked" 0 "$exe" match --log "$tmp/rank1.log" "$run"

# a summary that cannot be read: one warning at its column, the rest checked
sed '/RANK 0.*transform=fuse_swiglu\] \[SUMMARY\]/s/disabled/disabld/' "$logs/g4_summary.log" >"$tmp/bad.log"
check "unreadable summary: the rest passes" 0 "$exe" match --log "$tmp/bad.log" "$run"
count "unreadable summary: one warning" "$tmp/err" "warning:" 1
line=$(grep -n 'disabld' "$tmp/bad.log" | cut -d: -f1)
col=$(($(grep 'disabld' "$tmp/bad.log" | grep -bo 'disabld' | cut -d: -f1) + 1))
contains "unreadable summary: file:line:col" "$tmp/err" "bad.log:$line:$col: warning: unreadable [SUMMARY]"
sed 's/transform=fuse_rmsnorm, num_matches=5/transform=fuse_rmsnorm, num_matches=five/' "$logs/g1_bare.log" >"$tmp/bad1.log"
check "unreadable oldest summary" 1 "$exe" match --log "$tmp/bad1.log" "$run"
contains "unreadable oldest summary: said" "$tmp/err" "warning: num_matches is not a count"
contains "unreadable summary of a dump that changed the graph: no entry" "$tmp/out" "028_post_load_fusion_fuse_rmsnorm.txt: changed the graph (+5 auto_deploy.flashinfer_rms_norm.default) but the log has no entry for stage=post_load_fusion, transform=fuse_rmsnorm"

# a log cut inside a transform (AutoDeploy stopped in it): its gate fails
n=$(grep -n 'RANK 1.*transform=fuse_rmsnorm\] \[APPLY\]' "$logs/g4_summary.log" | cut -d: -f1)
head -n "$((n - 3))" "$logs/g4_summary.log" >"$tmp/cut.log"
check "cut log fails" 1 "$exe" match --log "$tmp/cut.log" "$run"
contains "cut log: said" "$tmp/err" "the log ends inside transform fuse_rmsnorm"
contains "cut log: its gate" "$tmp/out" "fuse_rmsnorm: ran (4 lines) but the log ends before its summary"

# not a log at all: an error, exit 2
check "not a log" 2 "$exe" match --log "$run/001_export_export_to_gm.txt" "$run"
contains "not a log: said" "$tmp/err" "no AutoDeploy transform lines found"
finish
