#!/usr/bin/env bash
# --emit of regions whose symbols are no input's dim: the op gets each from
# its inputs (a symbol no shape of the region reads: the RoPE tables of a
# batch of one; one read only through its product with the tokens: Qwen3-Next's
# flattened 32*s70*s72 rows), its module imports and solves the true sizes
# (check_op_symbols.py), and --scaffold writes the transform that calls it. An
# op that cannot be emitted never has `verdict: pass` beside it: refused, exit 2.
# usage: emit_symbols.sh FUSESCAN TESTS_DIR
set -u
exe=$1 tests=$2
# shellcheck source=tests/scripts/lib.sh
. "$(dirname "$0")/lib.sh"
here=$(dirname "$0")

# emitted ID DUMP NAME: the candidate's op and scaffold are written, import and solve s72=3 s70=5
emitted() {
	check "$3" 0 "$exe" --apply "$1" --cpu-only --no-render --out "$tmp/$3" --emit "$tmp/$3/emit" --scaffold "$tmp/$3/s" "$2"
	contains "$3: emitted" "$tmp/out" "  emitted: "
	count "$3: no emit failure" "$tmp/out" "emit failed" 0
	if python3 "$here/check_generated.py" "$tmp/$3/emit" "$tmp/$3/s" >/dev/null &&
		python3 "$here/check_op_symbols.py" "$tmp/$3/emit" s72=3 s70=5 >/dev/null; then
		pass=$((pass + 1))
	else
		fail=$((fail + 1)) && echo "FAIL $3: the op does not import or solve its symbols"
	fi
}
emitted horizontal_elementwise.cos-mul-sin-cast-3f5b27c4 "$tests/data/adrun_mlir_2l/002_post_load_fusion_mlir_elementwise_fusion.txt" rope_tables
contains "rope_tables: s72 a value" "$tmp/rope_tables/emit/"fs_*.json '"name":	"s72",'
emitted gated_rmsnorm-6758d04b "$tests/data/export_qwen3_next_2l/002_post_export_run_decompositions.txt" flattened
contains "flattened: s72 folded" "$tmp/flattened/emit/"fs_*.json '"folded_into":	"s70"'
contains "flattened: s70 solved" "$tmp/flattened/emit/"fs_*.json '"solve":	0'

# s70 read only as s70//2: no input gives it; the numerics pass, the verdict says the emit failed
printf '%s\n' '%ids : s70 : torch.int64' '%x : s70//2x8 : torch.float32' \
	'%a = aten.mul.Tensor(%x : s70//2x8 : torch.float32, 2.0) : s70//2x8 : torch.float32' \
	'%b = aten.add.Tensor(%a : s70//2x8 : torch.float32, 1.0) : s70//2x8 : torch.float32' 'output %b' >"$tmp/half.txt"
check "no symbol: refused" 2 "$exe" --apply elementwise.mul-add-35b029cc --cpu-only --no-render --out "$tmp/h" --emit "$tmp/h/emit" "$tmp/half.txt"
contains "no symbol: the reason" "$tmp/out" "  emit failed: symbol s70 cannot be had from the op's inputs"
contains "no symbol: the verdict" "$tmp/out" "  verdict: refused: the numerics pass, --emit failed: symbol s70"
count "no symbol: never pass" "$tmp/out" "verdict: pass" 0
finish
