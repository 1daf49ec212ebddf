#!/usr/bin/env bash
# Misuse: every subcommand with each kind of bad argument (missing value,
# unknown option or id, out-of-range number, option given twice, wrong file
# kind), graphs that are not graphs (a node reading itself, an output line
# naming nothing or cut short, dump numbers out of range or twice), numbers
# past their range (--expect arithmetic and nesting, --baseline counts,
# --tokens, --dims, shapes nested or multiplied deep), files past their size
# bound (sparse, so no disk is used), every kind of output path (symbolic
# link, device, FIFO, missing directory, read-only directory, full device)
# and every output against every kind of input (the same file, through a
# link, inside an input directory, holding one), failing and concurrent
# --apply runs, --scaffold beside a default.yaml. Each case asserts the exit
# status and the first line of stderr, and that no input changed (each input
# file's and folder's size, mode and modification time, before and after each
# case; every input's content, before and after all of them). As root, devices are
# private nodes of the same devices (real ones are never written).
# usage: misuse.sh FUSESCAN TESTS_DIR
set -u
exe=$1 tests=$2
# shellcheck source=tests/scripts/lib.sh
. "$(dirname "$0")/lib.sh"

run=$tmp/in/run
mkdir -p "$tmp/in" && cp -r "$tests/data/adrun_tiny_llama_2l" "$run"
dump=$run/001_export_export_to_gm.txt
final=$run/035_compile_compile_model.txt
sums() { find "$tmp/in" -printf '%p %s %m %T@\n' | sort | md5sum; }
content() { find "$tmp/in" -type f -print0 | sort -z | xargs -0 md5sum | md5sum; }
before=$(sums)

# case NAME WANT_RC FIRST_LINE_TEXT CMD...: exit status, the first line of
# stderr (when the text is not empty), and the inputs left as they were
case_() {
	local name=$1 want=$2 first=$3; shift 3
	check "$name" "$want" timeout 60 "$@"
	if [ -n "$first" ]; then
		if head -n 1 "$tmp/err" | grep -qF -- "$first"; then pass=$((pass + 1)); else
			fail=$((fail + 1)); echo "FAIL $name: first line of stderr is '$(head -n 1 "$tmp/err")', want '$first'"; fi
	fi
	if [ "$(sums)" = "$before" ]; then pass=$((pass + 1)); else
		fail=$((fail + 1)); echo "FAIL $name: an input changed"; before=$(sums); fi
}

# ---- arguments, every subcommand ----
for cmd in scan discover match render diff fuse tune; do
	case_ "$cmd: unknown option" 2 "fusescan $cmd: unknown option '--bogus'" "$exe" $cmd --bogus "$run"
done
for cmd in scan discover match diff; do
	case_ "$cmd: missing value" 2 "fusescan $cmd: missing value for option '-o'" "$exe" $cmd "$run" -o
	case_ "$cmd: option given twice" 2 "fusescan $cmd: option given twice '-o'" "$exe" $cmd -o "$tmp/a" -o "$tmp/b" "$run"
done
case_ "render: option given twice" 2 "fusescan render: option given twice '--hops'" "$exe" render --hops 1 --hops 2 -o "$tmp/r.dot" "$dump"
case_ "fuse: option given twice" 2 "fusescan fuse: option given twice '--out'" "$exe" fuse --apply rmsnorm --out "$tmp/a" --out "$tmp/b" "$run"
case_ "scan: bad choice" 2 "fusescan scan: invalid value 'xml' for --format" "$exe" scan --format xml "$run"
case_ "fuse: option as the id" 2 "fusescan fuse: missing value for option '--apply'" "$exe" --apply --approvals "$tmp/none" "$run"
contains "fuse: usage line" "$tmp/err" "usage: fusescan fuse --apply ID [options] PATH"
case_ "discover: out-of-range top" 2 "fusescan discover: --top wants" "$exe" discover --top -1 "$run"
case_ "discover: zero tokens" 2 "fusescan discover: --tokens wants a positive integer" "$exe" discover --tokens 0 "$run"
case_ "discover: huge tokens" 2 "fusescan discover: --tokens wants a positive integer" "$exe" discover --tokens 99999999999999999999 "$run"
case_ "render: out-of-range hops" 2 "fusescan render: --hops wants an integer from 0 to 64, got '999'" "$exe" render --hops 999 -o "$tmp/r.dot" "$dump"
case_ "fuse: out-of-range reps" 2 "fusescan fuse: --reps wants an integer from 10" "$exe" fuse --apply rmsnorm --reps 5 "$run"
case_ "fuse: not a number" 2 "fusescan fuse: --tokens wants a positive integer" "$exe" fuse --apply rmsnorm --tokens 1x "$run"
case_ "fuse: unknown id" 2 "fusescan fuse: 'nothing-1' is neither a candidate of this graph nor a pattern" "$exe" --apply nothing-1 --out "$tmp/f" "$run"
case_ "fuse: pattern without a site" 2 "fusescan fuse: 'rmsnorm': no site in $final: nothing to apply" "$exe" --apply rmsnorm --out "$tmp/f" "$run"
case_ "fuse: no site contains the node" 2 "fusescan fuse: 'add_rmsnorm' is candidate add_rmsnorm-407262a5" "$exe" --apply add_rmsnorm --site nothing --out "$tmp/f" "$run"
contains "fuse: no site contains the node, said" "$tmp/err" "no site contains %nothing in"
case_ "fuse: ambiguous name" 2 "fusescan fuse: 'parallel_gemm' names 2 candidates of this graph; give one id: parallel_gemm-23fbb5d7 parallel_gemm-645a9908" \
	"$exe" --apply parallel_gemm --out "$tmp/f" "$tests/data/export_tiny_llama_2l/001_export_export_to_gm.txt"
case_ "tune: unknown id" 2 "fusescan fuse: 'nothing-1' is neither a candidate" "$exe" tune --apply nothing-1 "$run"
case_ "tune: --emit is fuse's" 2 "fusescan tune: unknown option '--emit'" \
	"$exe" tune --apply add_rmsnorm-407262a5 --emit "$tmp/never" "$run"
[ ! -e "$tmp/never" ] && pass=$((pass + 1)) || { fail=$((fail + 1)); echo "FAIL tune --emit wrote"; }
case_ "render: unknown candidate" 2 "fusescan render: no candidate nothing in this graph" "$exe" render --candidate nothing -o "$tmp/r.svg" "$run"
case_ "render: unknown node" 2 "fusescan render: no node nothing in this graph" "$exe" render --node nothing -o "$tmp/r.svg" "$run"
case_ "match: unknown pattern" 2 "nothing: error: unknown pattern 'nothing'" "$exe" match --pattern nothing "$run"
case_ "match: unknown explain" 2 "nothing: error: --explain: unknown pattern 'nothing'" "$exe" match --explain nothing "$run"
case_ "discover: missing dump" 2 "--dump 999: no such parsed dump" "$exe" discover --dump 999 "$run"
case_ "diff: one file" 2 "fusescan diff: give two dump files, or one run directory" "$exe" diff "$dump"

# names as `discover` prints them (issue: a candidate name crashed --apply)
case_ "fuse: a candidate name" 0 "fusescan fuse: 'add_rmsnorm' is candidate add_rmsnorm-407262a5 of this graph" \
	"$exe" --apply add_rmsnorm --cpu-only --no-render --out "$tmp/named" "$run"
contains "fuse: a candidate name, applied" "$tmp/out" "[SUMMARY] matches=4 | 4 fused nodes"

# ---- graphs that are not graphs ----
mkdir -p "$tmp/g/run"
printf '%%x : 4 : torch.float32\n%%neg = aten.neg.default(%%neg : 4 : torch.float32) : 4 : torch.float32\noutput %%neg\n' >"$tmp/g/self.txt"
case_ "scan: a node reading itself" 2 "$tmp/g/self.txt:2:25: error: '%neg' reads itself" "$exe" scan "$tmp/g/self.txt"
case_ "discover: a node reading itself" 2 "$tmp/g/self.txt:2:25: error: '%neg' reads itself" "$exe" discover "$tmp/g/self.txt"
case_ "match: a node reading itself" 2 "$tmp/g/self.txt:2:25: error: '%neg' reads itself" "$exe" match "$tmp/g/self.txt"
sed 's/^output .*/output %nonexistent_xyz/' "$dump" >"$tmp/g/001_export_typo.txt"
case_ "output naming nothing" 2 "$tmp/g/001_export_typo.txt:$(grep -n '^output' "$dump" | cut -d: -f1):8: error: output names 'nonexistent_xyz'" \
	"$exe" discover "$tmp/g/001_export_typo.txt"
sed 's/^output \(.\{5\}\).*/output \1/' "$dump" >"$tmp/g/001_export_cut.txt" # "%linear_14" cut to "%line"
case_ "output line cut short" 2 "$tmp/g/001_export_cut.txt:$(grep -n '^output' "$dump" | cut -d: -f1):8: error: output names 'line'" \
	"$exe" scan "$tmp/g/001_export_cut.txt"
cp "$dump" "$tmp/g/run/001_export_export_to_gm.txt" && cp "$dump" "$tmp/g/run/001_export_again.txt"
cp "$final" "$tmp/g/run/99999999999999999999_compile_compile_model.txt"
case_ "a dump number out of range" 2 "$tmp/g/run/99999999999999999999_compile_compile_model.txt: error: dump number 99999999999999999999 is out of range" \
	"$exe" scan "$tmp/g/run"
contains "two dumps numbered 001, both named" "$tmp/err" "$tmp/g/run/001_export_export_to_gm.txt: error: dump number 001 is also the number of $tmp/g/run/001_export_again.txt"
case_ "--dump of a number two dumps have" 2 "" "$exe" discover --dump 1 "$tmp/g/run"
contains "--dump of a number two dumps have: refused" "$tmp/err" "--dump 1: no such parsed dump in this run"
case_ "--dump with one file" 2 "$dump: error: --dump 999: this file is not that dump" "$exe" discover --dump 999 "$dump"
case_ "--dump with one file, its number" 0 "" "$exe" discover --dump 1 "$dump"
case_ "--apply with one file and another --dump" 2 "" "$exe" --apply add_rmsnorm --dump 2 --cpu-only --no-render --out "$tmp/g/a" "$dump"
python3 "$tests/../scripts/make_large.py" --shape chain --nodes 300 --out "$tmp/g/chain.txt"
case_ "--apply a site of 300 nodes" 2 "fusescan fuse: 'elementwise.mul-baae5dac': a site of 300 nodes, more than the 256 one fused kernel is made of" \
	"$exe" --apply elementwise.mul-baae5dac --cpu-only --no-render --out "$tmp/g/long" "$tmp/g/chain.txt"
case_ "--apply a name and its id" 0 "fusescan fuse: 'add_rmsnorm' is candidate add_rmsnorm-407262a5 of this graph" \
	"$exe" --apply add_rmsnorm --apply add_rmsnorm-407262a5 --cpu-only --no-render --out "$tmp/g/twice" "$run"
contains "--apply a name and its id: said" "$tmp/err" "fusescan fuse: 'add_rmsnorm-407262a5' is add_rmsnorm-407262a5 again: applied once"
contains "--apply a name and its id: counted once" "$tmp/out" "[SUMMARY] matches=4 | 4 fused nodes, 0 sites skipped"
count "--apply a name and its id: numerics once" "$tmp/out" "numerics (CPU, float64 reference" 1

# ---- numbers ----
gate() { printf '%s\n' "$2" >"$tmp/$1"; }
gate deep.txt "rmsnorm == $(printf '(%.0s' $(seq 100000))1$(printf ')%.0s' $(seq 100000))"
case_ "expect: 100000 parentheses" 2 "$tmp/deep.txt:1:76: error: bad expression: parentheses nested deeper than 64" "$exe" match --expect "$tmp/deep.txt" "$run"
gate mul.txt "rmsnorm == 9999999999*9999999999"
case_ "expect: a product past 64 bits" 2 "$tmp/mul.txt:1:22: error: bad expression: the value leaves the 64-bit range" "$exe" match --expect "$tmp/mul.txt" "$run"
gate wrap.txt "rmsnorm >= 4294967296*4294967296+5"
case_ "expect: a product that wrapped to 5" 2 "$tmp/wrap.txt:1:22: error: bad expression: the value leaves the 64-bit range" "$exe" match --expect "$tmp/wrap.txt" "$run"
gate big.txt "rmsnorm >= 99999999999999999999"
case_ "expect: an integer past 64 bits" 2 "$tmp/big.txt:1:12: error: bad expression: integer out of range" "$exe" match --expect "$tmp/big.txt" "$run"
gate sum.txt "rmsnorm >= 9223372036854775807+1"
case_ "expect: a sum past 64 bits" 2 "$tmp/sum.txt:1:31: error: bad expression: the value leaves the 64-bit range" "$exe" match --expect "$tmp/sum.txt" "$run"
gate zero.txt "rmsnorm >= 5/(layers-layers)"
case_ "expect: division by zero" 2 "$tmp/zero.txt:1:13: error: bad expression: division by zero" "$exe" match --expect "$tmp/zero.txt" "$run"
for v in 1e20 -1e300 9223372036854775808 4294967296 -5 1.5 '"99"' null '[99]'; do
	printf '{"results": [{"dump": "035_compile_compile_model.txt", "pattern": "rmsnorm", "matches": %s}]}\n' "$v" >"$tmp/base.json"
	case_ "baseline: matches $v" 2 "$tmp/base.json: error: results[0].matches: expected a count (an integer from 0 to 4294967295), got '" \
		"$exe" match --baseline "$tmp/base.json" "$run"
done
printf '{"results": [{"dump": 35, "pattern": "rmsnorm", "matches": 1}]}\n' >"$tmp/base.json"
case_ "baseline: a dump that is no name" 2 "$tmp/base.json: error: results[0].dump: expected a string" "$exe" match --baseline "$tmp/base.json" "$run"
case_ "discover: 2^31 tokens" 2 "fusescan discover: --tokens wants a positive integer up to 2147483647, got '2147483648'" \
	"$exe" discover --tokens 2147483648 "$run"
case_ "discover: the most tokens" 0 "" "$exe" discover --tokens 2147483647 "$run"
if grep -q -- "-[0-9][0-9]* B\|saves -" "$tmp/out"; then fail=$((fail + 1)); echo "FAIL discover: the most tokens: a negative saving"; else pass=$((pass + 1)); fi
# an export at the most tokens: its attention sites' savings summed without overflow (the sanitizers' build aborts on one)
case_ "discover: the most tokens, an export" 0 "" "$exe" discover --tokens 2147483647 "$tests/data/export_tiny_llama_2l"
if grep -q -- "-[0-9][0-9]* B\|saves -\|runtime error" "$tmp/out" "$tmp/err"; then fail=$((fail + 1)); echo "FAIL discover: the most tokens, an export"
else pass=$((pass + 1)); fi
case_ "fuse: 2^20 + 1 tokens" 2 "fusescan fuse: --tokens wants a positive integer up to 1048576, got '1048577'" \
	"$exe" --apply add_rmsnorm-407262a5 --tokens 1048577 --cpu-only --no-render --out "$tmp/tk" "$run"
case_ "fuse: a seed past 2^63 - 1" 2 "fusescan fuse: --seed wants an integer from 0 to 9223372036854775807, got '9223372036854775808'" \
	"$exe" --apply add_rmsnorm-407262a5 --seed 9223372036854775808 --cpu-only --no-render --out "$tmp/tk" "$run"
exp=$tests/data/export_tiny_llama_2l
case_ "discover: --dims, an unknown symbol" 2 "fusescan discover: --dims: no dump has a symbolic dim named 'bogus' (in 'bogus=5')" \
	"$exe" discover --dims bogus=5 "$exp"
case_ "discover: --dims, a symbol twice" 2 "fusescan discover: --dims: 's70' is bound twice (in 's70=5,s70=6')" "$exe" discover --dims s70=5,s70=6 "$exp"
case_ "discover: --dims, a size past 2^31" 2 "fusescan discover: --dims: s70=2147483648: a size is an integer from 1 to 2147483647" \
	"$exe" discover --dims s70=2147483648 "$exp"
case_ "discover: --dims, a size of 0" 2 "fusescan discover: --dims: s70=0: a size is an integer from 1 to 2147483647" "$exe" discover --dims s70=0 "$exp"
case_ "discover: --dims leaving a symbol unbound" 0 "$exp/002_post_export_run_decompositions.txt: warning: s72 unbound: the sizes that need it are not costed" \
	"$exe" discover --dims s70=8192 "$exp"
contains "discover: --dims leaving a symbol unbound: the ranking says so" "$tmp/out" "sizes: s70=8192; s72 unbound: sizes that need it are not costed"
printf '%%x : s70xs70x64 : torch.float32\n%%y = aten.neg.default(%%x) : s70xs70x64 : torch.float32\n%%z = aten.exp.default(%%y) : s70xs70x64 : torch.float32\noutput %%z\n' >"$tmp/square.txt"
case_ "discover: one symbol in two dims" 0 "" "$exe" discover --format json "$tmp/square.txt"
count "discover: one symbol in two dims, bound once" "$tmp/out" '"s70":' 1
contains "discover: one symbol in two dims, at the tokens" "$tmp/out" '"s70":	8192'
deep=$(printf '(%.0s' $(seq 100000))s70$(printf ')%.0s' $(seq 100000))
printf '%%x : %sx256 : torch.float32\n%%y = aten.neg.default(%%x) : %sx256 : torch.float32\noutput %%y\n' "$deep" "$deep" >"$tmp/deep_shape.txt"
case_ "a shape nested 100000 deep" 0 "" "$exe" discover --tokens 64 "$tmp/deep_shape.txt"
prod=s70$(printf '*s70%.0s' $(seq 100000))
printf '%%x : %sx256 : torch.float32\n%%y = aten.neg.default(%%x) : %sx256 : torch.float32\noutput %%y\n' "$prod" "$prod" >"$tmp/prod_shape.txt"
case_ "a shape of 100000 factors" 0 "" "$exe" discover --tokens 64 "$tmp/prod_shape.txt"
prod=s70$(printf '*s70%.0s' $(seq 100))
printf '%%x : %sx256 : torch.float32\n%%y = aten.neg.default(%%x) : %sx256 : torch.float32\noutput %%y\n' "$prod" "$prod" >"$tmp/prod_shape.txt"
case_ "a shape of 100 factors, each 2^31 - 1" 0 "" "$exe" discover --dims s70=2147483647 "$tmp/prod_shape.txt"

# ---- sizes: every file kind bounded, refused before it is read (sparse files: no disk used) ----
mkdir -p "$tmp/huge/pats" "$tmp/huge/src"
truncate -s 20G "$tmp/huge/001_export_big.txt" "$tmp/huge/side"
truncate -s 17M "$tmp/huge/src/big.py"
truncate -s 2M "$tmp/huge/pats/big.pat"
huge=$tmp/huge/side
case_ "a 20 GB dump" 2 "$tmp/huge/001_export_big.txt: error: cannot read: it holds 20.0 GiB, larger than 1 GiB, the most fusescan reads of a dump" \
	"$exe" scan "$tmp/huge/001_export_big.txt"
case_ "a 20 GB log" 2 "$huge: error: cannot read log: larger than 256 MiB, the most fusescan reads of a log" "$exe" match --log "$huge" "$run"
case_ "a 20 GB diff log" 2 "$huge: error: cannot read log: larger than 256 MiB" "$exe" diff --log "$huge" "$run"
case_ "a 20 GB expectations file" 2 "$huge: error: cannot read expectations: larger than 1 MiB" "$exe" match --expect "$huge" "$run"
case_ "a 20 GB baseline" 2 "$huge: error: cannot read baseline: larger than 64 MiB" "$exe" match --baseline "$huge" "$run"
case_ "a 20 GB catalog" 2 "$huge: error: cannot read kernel catalog: larger than 4 MiB" "$exe" discover --catalog "$huge" "$run"
case_ "a 20 GB approvals file" 2 "fusescan: cannot read approvals $huge: larger than 1 MiB" "$exe" fuse --approvals "$huge" "$run"
case_ "a 2 MB pattern file" 2 "$tmp/huge/pats/big.pat: error: cannot read: larger than 1 MiB" "$exe" match --patterns "$tmp/huge/pats" "$run"
case_ "a 17 MB source file" 0 "$tmp/huge/src/big.py: warning: not indexed: larger than 16 MiB" "$exe" discover --kernels-from "$tmp/huge/src" "$run"
case_ "a 20 GB tuning cache" 2 "fusescan fuse: tuning cache $huge: larger than 64 MiB" "$exe" --apply add_rmsnorm-407262a5 --cpu-only --no-render --cache "$huge" --out "$tmp/huge/a" "$run"
[ "$(stat -c %s "$huge")" = 21474836480 ] && pass=$((pass + 1)) || { fail=$((fail + 1)); echo "FAIL the 20 GB cache was replaced"; }

# ---- wrong kinds of file ----
mkfifo "$tmp/fifo"
case_ "scan: a FIFO" 2 "$tmp/fifo: error: cannot open: not a regular file" "$exe" scan "$tmp/fifo"
case_ "scan: a device" 2 "/dev/zero: error: cannot open: not a regular file" "$exe" scan /dev/zero
case_ "scan: a missing file" 2 "$tmp/none.txt: error: cannot open: No such file or directory" "$exe" scan "$tmp/none.txt"
# a FIFO in the file system is never opened (opening it waits for a writer): as a run's log, a pattern file, every option's file
mkdir -p "$tmp/fiforun" "$tmp/fifopats" && cp "$dump" "$tmp/fiforun/" && mkfifo "$tmp/fiforun/ad.log" "$tmp/fifopats/x.pat"
case_ "discover: a FIFO as the run's ad.log" 2 "$tmp/fiforun/ad.log: error: cannot read log: not a regular file" "$exe" discover "$tmp/fiforun"
case_ "match: a FIFO as a .pat file" 2 "$tmp/fifopats/x.pat: error: cannot read: not a regular file" "$exe" match --patterns "$tmp/fifopats" "$run"
case_ "match: a FIFO as --log" 2 "$tmp/fifo: error: cannot read log: not a regular file" "$exe" match --log "$tmp/fifo" "$run"
case_ "match: a FIFO as --expect" 2 "$tmp/fifo: error: cannot read expectations: not a regular file" "$exe" match --expect "$tmp/fifo" "$run"
case_ "match: a FIFO as --baseline" 2 "$tmp/fifo: error: cannot read baseline: not a regular file" "$exe" match --baseline "$tmp/fifo" "$run"
case_ "discover: a FIFO as --catalog" 2 "$tmp/fifo: error: cannot read kernel catalog: not a regular file" "$exe" discover --catalog "$tmp/fifo" "$run"
case_ "match: --expect through a descriptor's pipe" 0 "" bash -c '"$0" match --pattern rmsnorm --expect <(echo "rmsnorm >= 0") "$1"' "$exe" "$run"
case_ "match: log is a directory" 2 "$tmp: error: cannot read log: Is a directory" "$exe" match --log "$tmp" "$run"
case_ "match: log is a device" 2 "/dev/zero: error: cannot read log: not a regular file" "$exe" match --log /dev/zero "$run"
head -c 4096 /dev/urandom > "$tmp/random.log"
case_ "match: log of random bytes" 2 "$tmp/random.log:1: error: no AutoDeploy transform lines found" "$exe" match --log "$tmp/random.log" "$run"
cp "$run/ad.log" "$tmp/in/noisy.log" && printf 'a line of something else\n\nand another\n' >> "$tmp/in/noisy.log"
before=$(sums)
case_ "match: a log with other lines" 0 "$tmp/in/noisy.log: note: 2 lines without a transform summary ignored" "$exe" match --log "$tmp/in/noisy.log" "$run"
count "match: other lines said once" "$tmp/err" "without a transform summary" 1
case_ "match: expect is a directory" 2 "$tmp: error: cannot read expectations: Is a directory" "$exe" match --expect "$tmp" "$run"
case_ "discover: catalog is a directory" 2 "$tmp: error: cannot read kernel catalog: Is a directory" "$exe" discover --catalog "$tmp" "$run"
case_ "fuse: approvals is a device" 2 "fusescan: cannot read approvals /dev/zero: not a regular file" "$exe" fuse --approvals /dev/zero "$run"
case_ "match: patterns is a file" 2 "$dump: error: cannot open pattern directory: Not a directory" "$exe" match --patterns "$dump" "$run"

ln -s .. "$run/up" && ln -s "$dump" "$run/999_compile_again.txt"
before=$(sums)
case_ "scan: a link back up and a second name" 0 "" "$exe" scan "$tmp/in"
contains "scan: each file read once" "$tmp/out" "fusescan $("$exe" --version | cut -d' ' -f2): 35 files, 35 graphs"
rm "$run/up" "$run/999_compile_again.txt"
before=$(sums)

# ---- output paths ----
# Devices: as root, private nodes of the same devices, so that a binary that
# renames over its output (the defect this guards against) destroys only them;
# an ordinary user cannot replace /dev's nodes, so they are safe to use.
null=/dev/null full=/dev/full
if [ "$(id -u)" -eq 0 ] && mknod "$tmp/null" c 1 3 2>/dev/null && mknod "$tmp/full" c 1 7 2>/dev/null &&
	echo probe > "$tmp/null" 2>/dev/null; then null=$tmp/null full=$tmp/full; fi
echo old > "$tmp/target.txt"
ln -s target.txt "$tmp/link.txt"
case_ "-o a symbolic link" 0 "" "$exe" scan -o "$tmp/link.txt" "$run"
[ -L "$tmp/link.txt" ] && grep -q "fusescan" "$tmp/target.txt" && pass=$((pass + 1)) ||
	{ fail=$((fail + 1)); echo "FAIL -o a symbolic link: the link was replaced or its target not written"; }
ln -s nowhere/x.txt "$tmp/dangling.txt"
case_ "-o a link into a missing directory" 2 "fusescan: cannot write $tmp/dangling.txt: directory" "$exe" scan -o "$tmp/dangling.txt" "$run"
case_ "-o a device" 0 "" "$exe" discover -o "$null" "$run"
[ -c "$null" ] && pass=$((pass + 1)) || { fail=$((fail + 1)); echo "FAIL $null is no longer a device"; }
timeout 60 cat "$tmp/fifo" > "$tmp/from_fifo" &
reader=$!
case_ "-o a FIFO" 0 "" "$exe" scan -o "$tmp/fifo" "$run"
wait "$reader"
[ -p "$tmp/fifo" ] && grep -q "fusescan" "$tmp/from_fifo" && pass=$((pass + 1)) ||
	{ fail=$((fail + 1)); echo "FAIL -o a FIFO: replaced, or nothing came through"; }
case_ "-o /dev/stdout, a pipe" 0 "" bash -c '"$0" scan -o /dev/stdout "$1" | cat > "$2"' "$exe" "$run" "$tmp/piped"
contains "-o /dev/stdout, a pipe: the report came through" "$tmp/piped" "fusescan"
case_ "-o /dev/stdout, a file" 0 "" bash -c '"$0" scan -o /dev/stdout "$1" > "$2"' "$exe" "$run" "$tmp/redirected"
contains "-o /dev/stdout, a file: the report is there" "$tmp/redirected" "fusescan"
case_ "-o in a missing directory" 2 "fusescan: cannot write $tmp/no/such/r.txt: directory $tmp/no/such does not exist" "$exe" scan -o "$tmp/no/such/r.txt" "$run"
case_ "-o a directory" 2 "fusescan: cannot write $tmp: Is a directory" "$exe" match -o "$tmp" "$run"
if [ "$(id -u)" -ne 0 ]; then ro=$tmp/ro; mkdir "$ro"; chmod 555 "$ro"; else ro=/sys; fi # root ignores modes
case_ "-o in a read-only directory" 2 "fusescan: cannot write $ro/r.txt: " "$exe" scan -o "$ro/r.txt" "$run"
case_ "-o a full device" 2 "fusescan: $full: write failed: No space left on device" "$exe" scan -o "$full" "$run"
case_ "stdout a full device" 2 "fusescan: $full: write failed: No space left on device" bash -c '"$0" discover "$1" > "$2"' "$exe" "$run" "$full"
case_ "render to a full device" 2 "$full: error: render to .dot, .svg or .png" "$exe" render -o "$full" "$dump"
case_ "diff to a full device" 2 "fusescan: $full: write failed: No space left on device" "$exe" diff -o "$full" "$dump" "$final"
[ -c "$null" ] && [ -c "$full" ] && pass=$((pass + 1)) || { fail=$((fail + 1)); echo "FAIL a device was replaced"; }
case_ "fuse --out a file" 2 "fusescan fuse: cannot create --out $tmp/target.txt: Not a directory" "$exe" --apply add_rmsnorm-407262a5 --cpu-only --no-render --out "$tmp/target.txt" "$run"

# ---- inputs are never written: outputs checked by device and inode before any write ----
apply=("$exe" --apply add_rmsnorm-407262a5 --cpu-only --no-render)
refused="fusescan fuse: refusing to write"
case_ "--out the run" 2 "$refused --out $run: it is the dump directory $run" "${apply[@]}" --out "$run" "$run"
case_ "--out inside the run" 2 "$refused --out $run/sub: it lies inside the dump directory $run" "${apply[@]}" --out "$run/sub" "$run"
[ ! -e "$run/sub" ] && pass=$((pass + 1)) || { fail=$((fail + 1)); echo "FAIL --out inside the run: a nested run planted"; }
case_ "--out holding the run" 2 "$refused --out $tmp/in: it holds the dump directory $run" "${apply[@]}" --out "$tmp/in" "$run"
case_ "--emit and --scaffold the run" 2 "$refused --emit $run: it is the dump directory $run" "${apply[@]}" --out "$tmp/o1" --emit "$run" --scaffold "$run" "$run"
case_ "--scaffold the run" 2 "$refused --scaffold $run: it is the dump directory $run" "${apply[@]}" --out "$tmp/o1" --emit "$tmp/o1e" --scaffold "$run" "$run"
[ ! -e "$tmp/o1" ] && [ ! -e "$tmp/o1e" ] && pass=$((pass + 1)) || { fail=$((fail + 1)); echo "FAIL a refused --apply wrote its other outputs"; }
case_ "--out a dump's own directory" 2 "$refused --out $run: it holds the dump $final" "${apply[@]}" --out "$run" "$final"
ln -s "$run" "$tmp/run_link"
case_ "--out a link to the run" 2 "$refused --out $tmp/run_link: it is the dump directory $run" "${apply[@]}" --out "$tmp/run_link" "$run"
case_ "--out through a link, inside the run" 2 "$refused --out $tmp/run_link/sub: it lies inside the dump directory $run" \
	"${apply[@]}" --out "$tmp/run_link/sub" "$run"
rm "$tmp/run_link"
side=$tmp/in/side && mkdir -p "$side"
cp "$run/ad.log" "$side/ad.log" && printf 'rmsnorm >= 0\n' >"$side/expect.txt" && printf 'add_rmsnorm-407262a5\n' >"$side/approvals.txt"
"$exe" match --format json -o "$side/base.json" "$run" && cp "$tests/../kernels/catalog.txt" "$side/catalog.txt"
before=$(sums)
settled=$(content) # the inputs from here on
refused="refusing to write"
case_ "match -o the --log" 2 "fusescan match: $refused -o $side/ad.log: it is the --log file $side/ad.log" \
	"$exe" match --log "$side/ad.log" -o "$side/ad.log" "$run"
case_ "match -o the run's log" 2 "fusescan match: $refused -o $run/ad.log: it is the run's log $run/ad.log" "$exe" match -o "$run/ad.log" "$run"
case_ "match -o the --expect file" 2 "fusescan match: $refused -o $side/expect.txt: it is the --expect file" \
	"$exe" match --expect "$side/expect.txt" -o "$side/expect.txt" "$run"
case_ "match -o the --baseline" 2 "fusescan match: $refused -o $side/base.json: it is the --baseline" \
	"$exe" match --baseline "$side/base.json" -o "$side/base.json" "$run"
case_ "discover -o the --catalog" 2 "fusescan discover: $refused -o $side/catalog.txt: it is the --catalog file" \
	"$exe" discover --catalog "$side/catalog.txt" -o "$side/catalog.txt" "$run"
case_ "diff -o the --log" 2 "fusescan diff: $refused -o $side/ad.log: it is the --log file" "$exe" diff --log "$side/ad.log" -o "$side/ad.log" "$run"
case_ "render -o inside the run" 2 "fusescan render: $refused -o $run/site.svg: it lies inside the dump directory $run" \
	"$exe" render -o "$run/site.svg" "$run"
case_ "discover -o inside --kernels-from" 2 "fusescan discover: $refused -o $tests/data/srctree/r.txt: it lies inside the --kernels-from directory" \
	"$exe" discover --kernels-from "$tests/data/srctree" -o "$tests/data/srctree/r.txt" "$run"
ln -s "$side/ad.log" "$tmp/log_link"
case_ "-o a link to the --log" 2 "fusescan match: $refused -o $tmp/log_link: it is the --log file" "$exe" match --log "$side/ad.log" -o "$tmp/log_link" "$run"
rm "$tmp/log_link"
case_ "--cache the run's log" 2 "fusescan fuse: $refused --cache $run/ad.log: it is the run's log $run/ad.log" \
	"${apply[@]}" --cache "$run/ad.log" --out "$tmp/o2" "$run"
case_ "--cache the --approvals file" 2 "fusescan fuse: $refused --cache $side/approvals.txt: it is the --approvals file" \
	"$exe" fuse --approvals "$side/approvals.txt" --cpu-only --no-render --cache "$side/approvals.txt" --out "$tmp/o2" "$run"
case_ "tune --cache inside the run" 2 "fusescan tune: $refused --cache $run/tuning.json: it lies inside the dump directory" \
	"$exe" tune --apply add_rmsnorm-407262a5 --cache "$run/tuning.json" "$run"
case_ "--out holding the cache" 2 "fusescan fuse: $refused --out $side: it holds the tuning cache $side/base.json" \
	"${apply[@]}" --cache "$side/base.json" --out "$side" "$run"

# the caches: FUSESCAN_CACHE is an output directory (never in an input); the folder is made only when something is stored;
# a file that is not a cache this fusescan wrote is refused, never replaced
case_ "FUSESCAN_CACHE inside the run" 2 "fusescan fuse: $refused FUSESCAN_CACHE $run/kc: it lies inside the dump directory $run" \
	env FUSESCAN_CACHE="$run/kc" "${apply[@]}" --cache "$tmp/kc.json" --out "$tmp/kc1" "$run"
case_ "FUSESCAN_CACHE the run" 2 "fusescan fuse: $refused FUSESCAN_CACHE $run: it is the dump directory $run" \
	env FUSESCAN_CACHE="$run" "${apply[@]}" --cache "$tmp/kc.json" --out "$tmp/kc1" "$run"
case_ "tune: FUSESCAN_CACHE the run" 2 "fusescan tune: $refused FUSESCAN_CACHE $run: it is the dump directory $run" \
	env FUSESCAN_CACHE="$run" "$exe" tune --apply add_rmsnorm-407262a5 "$run"
[ ! -e "$run/kc" ] && [ -z "$(find "$run" -name '*.cubin' -o -name 'tuning.json*')" ] && [ ! -e "$tmp/kc1" ] && pass=$((pass + 1)) ||
	{ fail=$((fail + 1)); echo "FAIL FUSESCAN_CACHE in the run: something written"; }
case_ "--help makes no cache folder" 0 "" env FUSESCAN_CACHE="$tmp/kc_help" "$exe" fuse --help
case_ "a refused run makes no cache folder" 2 "" env FUSESCAN_CACHE="$tmp/kc_help" "$exe" fuse --apply nothing-1 --out "$tmp/kc2" "$run"
[ ! -e "$tmp/kc_help" ] && pass=$((pass + 1)) || { fail=$((fail + 1)); echo "FAIL the cache folder made before anything was stored"; }
printf 'my notes: the "fusescan.tuning/1" format\n' >"$tmp/notes.txt"
case_ "--cache a text naming the format" 2 "fusescan fuse: $tmp/notes.txt:1:1: not a tuning cache this fusescan wrote" \
	"${apply[@]}" --cache "$tmp/notes.txt" --out "$tmp/kc3" "$run"
grep -qx 'my notes: the "fusescan.tuning/1" format' "$tmp/notes.txt" && [ ! -e "$tmp/kc3" ] && pass=$((pass + 1)) ||
	{ fail=$((fail + 1)); echo "FAIL a foreign --cache was replaced, or the refused run wrote"; }

# a failing command writes nothing: a new --out is not made, an old one keeps its files
case_ "a failing --apply, a new --out" 2 "" "${apply[@]}" --tokens 1048576 --out "$tmp/o3" "$run"
contains "a failing --apply: why" "$tmp/err" "more than their 4096 MiB (--cpu-memory)"
[ ! -e "$tmp/o3" ] && pass=$((pass + 1)) || { fail=$((fail + 1)); echo "FAIL a failing --apply made its --out"; }
mkdir "$tmp/o4" && echo mine >"$tmp/o4/summary.txt"
case_ "a failing --apply, an old --out" 2 "" "${apply[@]}" --tokens 1048576 --out "$tmp/o4" "$run"
[ "$(ls "$tmp/o4")" = summary.txt ] && grep -qx mine "$tmp/o4/summary.txt" && pass=$((pass + 1)) ||
	{ fail=$((fail + 1)); echo "FAIL a failing --apply changed its --out"; }

# a publish that cannot place one file places none; a stop signal removes the stage; a scan never takes a stage for a run
mkdir -p "$tmp/o8/numerics.txt" && echo mine >"$tmp/o8/summary.txt"
case_ "a publish blocked by a directory" 2 "fusescan fuse: $tmp/o8/numerics.txt is not a regular file: not replaced" "${apply[@]}" --out "$tmp/o8" "$run"
[ "$(ls "$tmp/o8" | tr '\n' ' ')" = "numerics.txt summary.txt " ] && grep -qx mine "$tmp/o8/summary.txt" && pass=$((pass + 1)) ||
	{ fail=$((fail + 1)); echo "FAIL a failing publish moved files: $(ls "$tmp/o8")"; }
for sig in TERM HUP; do # (a background job of a script ignores SIGINT: the handler is the same)
	rm -rf "$tmp/o9"
	"${apply[@]}" --tokens 65536 --out "$tmp/o9" "$run" >/dev/null 2>&1 &
	a=$!
	for _ in $(seq 200); do [ -n "$(find "$tmp" -maxdepth 1 -name 'o9.tmp.*')" ] && break; sleep 0.05; done
	kill -$sig "$a"; wait "$a"; rc=$?
	left=$(find "$tmp" -maxdepth 1 -name 'o9*')
	[ "$rc" -gt 128 ] && [ -z "$left" ] && pass=$((pass + 1)) || { fail=$((fail + 1)); echo "FAIL SIG$sig during --apply: exit $rc, left $left"; }
done
mkdir -p "$tmp/sk/run" "$tmp/sk/out.stopped" && cp "$dump" "$tmp/sk/run/" && cp "$dump" "$tmp/sk/out.stopped/" && : >"$tmp/sk/out.stopped/.fusescan-stage"
case_ "scan: a stopped --apply's stage is no run" 0 "" "$exe" scan "$tmp/sk"
contains "scan: a stopped --apply's stage is no run: one file" "$tmp/out" ": 1 file"

# --scaffold never replaces a default.yaml it did not write
mkdir "$tmp/s1" && echo "transforms: {}  # AutoDeploy's" >"$tmp/s1/default.yaml"
case_ "--scaffold beside an AutoDeploy default.yaml" 0 "" "${apply[@]}" --out "$tmp/o5" --emit "$tmp/o5e" --scaffold "$tmp/s1" "$run"
contains "--scaffold beside a default.yaml: said" "$tmp/out" "scaffold: $tmp/s1/default.yaml is not one fusescan wrote: left as it is, the entries are in $tmp/s1/fusescan.default.yaml"
grep -qx "transforms: {}  # AutoDeploy's" "$tmp/s1/default.yaml" && grep -q "enabled: false" "$tmp/s1/fusescan.default.yaml" &&
	pass=$((pass + 1)) || { fail=$((fail + 1)); echo "FAIL --scaffold replaced a default.yaml"; }
case_ "--scaffold over its own default.yaml" 0 "" "${apply[@]}" --out "$tmp/o5" --emit "$tmp/o5e" --scaffold "$tmp/o5s" "$run"
case_ "--scaffold over its own default.yaml, again" 0 "" "${apply[@]}" --out "$tmp/o5" --emit "$tmp/o5e" --scaffold "$tmp/o5s" "$run"
contains "--scaffold over its own default.yaml: replaced" "$tmp/out" "fuse_<name>.md for 1 transform, and default.yaml"

# two runs into one --out: a second one is refused while the first holds it; runs at once never mix
mkdir "$tmp/o6"
exec 9<"$tmp/o6" && flock 9 # this shell holds it
case_ "--out held by another fusescan" 2 "fusescan fuse: --out $tmp/o6 is being written by another fusescan; run again once it is done" \
	"${apply[@]}" --out "$tmp/o6" "$run"
exec 9<&-
[ -z "$(ls "$tmp/o6")" ] && pass=$((pass + 1)) || { fail=$((fail + 1)); echo "FAIL a refused run wrote into the held --out"; }
cos=gemm_epilogue.cat-cos-mul-sin-cast-0ffaa69d
"${apply[@]}" --out "$tmp/refa" "$run" >/dev/null 2>&1
"$exe" --apply $cos --cpu-only --no-render --out "$tmp/refb" "$run" >/dev/null 2>&1
setsum() { (cd "$1" && md5sum -- * | md5sum); }
for trial in 1 2 3; do
	rm -rf "$tmp/o7"
	"${apply[@]}" --out "$tmp/o7" "$run" >/dev/null 2>"$tmp/err_a" &
	a=$!
	"$exe" --apply $cos --cpu-only --no-render --out "$tmp/o7" "$run" >/dev/null 2>"$tmp/err_b"
	wait "$a"
	now=$(setsum "$tmp/o7")
	if [ "$now" = "$(setsum "$tmp/refa")" ] || [ "$now" = "$(setsum "$tmp/refb")" ]; then pass=$((pass + 1)); else
		fail=$((fail + 1)); echo "FAIL two runs into one --out, trial $trial: its files are neither run's"; fi
done
if [ "$(sums)" = "$before" ] && [ "$(content)" = "$settled" ]; then pass=$((pass + 1)); else fail=$((fail + 1)); echo "FAIL an input changed"; fi
left=$(find "$tmp" -name '*.tmp.*' | head -n 1)
[ -z "$left" ] && pass=$((pass + 1)) || { fail=$((fail + 1)); echo "FAIL temporary file left behind: $left"; }

finish
