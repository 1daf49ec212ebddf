#!/usr/bin/env bash
# One command for a fresh Debian/Ubuntu machine: installs what is missing
# (apt-get), builds fusescan in ./build and runs it on the bundled example
# dumps (a 2-layer Llama AutoDeploy run).
# usage: scripts/bootstrap.sh
set -euo pipefail
cd "$(dirname "$0")/.."

packages=(build-essential cmake pkg-config python3 libpcre2-dev libcjson-dev libgraphviz-dev)
missing=()
for p in "${packages[@]}"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
	echo "installing: ${missing[*]}"
	sudo=""
	[ "$(id -u)" -eq 0 ] || sudo=sudo
	$sudo apt-get update -qq
	DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${missing[@]}"
fi

# the flags scripts/test.sh builds build/ with, so that it reuses this build
cmake -S . -B build -DFS_WERROR=ON >/dev/null
cmake --build build -j"$(nproc)"
echo
./build/fusescan tests/data/adrun_tiny_llama_2l
