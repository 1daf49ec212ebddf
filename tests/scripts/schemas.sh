#!/usr/bin/env bash
# Every call of an op the op table has a schema for (scan/opsig.def: the
# AutoDeploy attention, cached attention and RoPE ops, as TensorRT-LLM
# registers them) has that schema's arity and argument kinds in every fixture
# under tests/data; a call in an older, hand-made form is said in scan's notes.
# usage: schemas.sh FUSESCAN TESTS_DIR
set -u
exe=$1 tests=$2
# shellcheck source=tests/scripts/lib.sh
. "$(dirname "$0")/lib.sh"

# every dump-like file, the bad-input fixtures too (their exit status is not this test's)
find "$tests/data" -name '*.txt' -not -path '*/srctree/*' | sort >"$tmp/files"
xargs -d '\n' "$exe" scan <"$tmp/files" >"$tmp/all" 2>/dev/null
check "a graph or more a file" 0 test "$(grep -c '^  nodes ' "$tmp/all")" -ge "$(grep -c . "$tmp/files")"
count "every call fits its op's schema" "$tmp/all" "unlike their op's schema" 0

# the forms the bundled run once had: a mask as the cached attention's 4th argument, RoPE on cos and sin
cat >"$tmp/old.txt" <<'DUMP'
%q : 2x8x4x64 : torch.bfloat16
%k : 2x8x2x64 : torch.bfloat16
%cos : 1x8x64 : torch.bfloat16
%mask : 2x1x8x8 : torch.bool
%r = auto_deploy.flashinfer_rope.default(%q : 2x8x4x64 : torch.bfloat16, %k : 2x8x2x64 : torch.bfloat16, %cos : 1x8x64 : torch.bfloat16, %cos : 1x8x64 : torch.bfloat16, 1) : (2x8x4x64, 2x8x2x64) : (torch.bfloat16, torch.bfloat16)
%a = auto_deploy.trtllm_attention_mha_with_cache.default(%q : 2x8x4x64 : torch.bfloat16, %k : 2x8x2x64 : torch.bfloat16, %k : 2x8x2x64 : torch.bfloat16, %mask : 2x1x8x8 : torch.bool) : 2x8x4x64 : torch.bfloat16
output %a
DUMP
check "old forms" 0 "$exe" scan "$tmp/old.txt"
contains "old forms: both calls named" "$tmp/out" "2 calls unlike their op's schema"
contains "old forms: the first misfit" "$tmp/out" "%r (auto_deploy.flashinfer_rope.default): argument 4 (is_neox) is 1, the schema's is bool"
sed -i '/flashinfer_rope/d' "$tmp/old.txt"
check "old attention" 0 "$exe" scan "$tmp/old.txt"
contains "old attention: arity" "$tmp/out" "4 arguments, the schema has 14 (9 without defaults)"
finish
