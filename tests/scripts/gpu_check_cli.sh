#!/usr/bin/env bash
# scripts/gpu_check.sh without a GPU: the GPUs its parts spread over (every
# one nvidia-smi lists, else GPUS or CUDA_VISIBLE_DEVICES, else 0), how it
# deals commands to them (a queue), an unknown part or command refused.
# usage: gpu_check_cli.sh SOURCE_DIR
set -u
src=$1
# shellcheck source=tests/scripts/lib.sh
. "$(dirname "$0")/lib.sh"
gc=$src/scripts/gpu_check.sh
mkdir -p "$tmp/bin" "$tmp/none"
# a machine of three GPUs, and one whose nvidia-smi fails
printf '#!/bin/sh\ncase "$*" in *query-gpu=index*) printf "0\\n1\\n2\\n" ;; *) printf "GPU 0: Fake\\nGPU 1: Fake\\nGPU 2: Fake\\n" ;; esac\n' >"$tmp/bin/nvidia-smi"
printf '#!/bin/sh\nexit 9\n' >"$tmp/none/nvidia-smi"
chmod +x "$tmp/bin/nvidia-smi" "$tmp/none/nvidia-smi"
same() { # same NAME GOT WANT
	if [ "$2" = "$3" ]; then pass=$((pass + 1)); else fail=$((fail + 1)); echo "FAIL $1: '$2', want '$3'"; fi
}
same "every GPU listed" "$(env -u GPUS -u CUDA_VISIBLE_DEVICES PATH="$tmp/bin:$PATH" bash "$gc" gpus)" "0,1,2"
same "GPUS first" "$(env GPUS=1,3 CUDA_VISIBLE_DEVICES=2 PATH="$tmp/bin:$PATH" bash "$gc" gpus)" "1,3"
same "CUDA_VISIBLE_DEVICES" "$(env -u GPUS CUDA_VISIBLE_DEVICES=2 PATH="$tmp/bin:$PATH" bash "$gc" gpus)" "2"
same "no GPU listed" "$(env -u GPUS -u CUDA_VISIBLE_DEVICES PATH="$tmp/none:$PATH" bash "$gc" gpus)" "0"
check "an unknown part" 1 env -u GPUS -u CUDA_VISIBLE_DEVICES PATH="$tmp/bin:$PATH" PARTS=bogus bash "$gc" run "$tmp/out_dir"
contains "the part named" "$tmp/out" "unknown part 'bogus'"
contains "spread over the listed GPUs" "$tmp/out" "gpu_check: GPU 0: Fake x3; parts: bogus"
# the queue: the long first command keeps one GPU; the short ones all go to the other as it
# frees, in order; a failing one fails the whole, every log printed in the commands' order
(
	cd "$src" && . scripts/gpu_check.sh && gpus=(a b)
	spread "$tmp/spread" 'sleep 5; echo "0 on $CUDA_VISIBLE_DEVICES"' 'echo "1 on $CUDA_VISIBLE_DEVICES"' \
		'echo "2 on $CUDA_VISIBLE_DEVICES"; exit 3' 'echo "3 on $CUDA_VISIBLE_DEVICES"'
) >"$tmp/spread.out" 2>&1
same "a failing command fails the spread" "$?" 1
# whichever GPU starts first takes the long one; the other takes every short one
got=$(tr '\n' ';' <"$tmp/spread.out")
case $got in "0 on a;"*) long=a short=b ;; *) long=b short=a ;; esac
same "a queue, printed in order" "$got" "0 on $long;1 on $short;2 on $short;exit 3;3 on $short;"
check "an unknown command" 2 bash "$gc" bogus
contains "usage" "$tmp/err" "usage:"
finish
