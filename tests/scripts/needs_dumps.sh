#!/usr/bin/env bash
# Runs a test that reads the larger AutoDeploy dumps of ../shared/dumps, or
# says what it needs and how to get them and exits 77 (ctest: skipped) where
# any of the named runs is missing.
# usage: needs_dumps.sh DUMPS_DIR RUN... -- COMMAND [ARGS...]
set -u
dumps=$1; shift
missing=()
while [ "$#" -gt 0 ] && [ "$1" != -- ]; do
	[ -d "$dumps/$1" ] || missing+=("$1")
	shift
done
shift # the --
if [ ${#missing[@]} -gt 0 ]; then
	echo "skipped: needs the graph dumps ${missing[*]} in $dumps (not found): adrun_* holds an AutoDeploy run (its"
	echo "  NNN_<stage>_<transform>.txt dumps and ad.log: run AutoDeploy with AD_DUMP_GRAPHS_DIR=DIR), export_* a model's"
	echo "  plain torch.export graphs (scripts/export_dumps.py --arch llama --out DIR, on a machine with PyTorch); docs/testing.md"
	exit 77
fi
exec "$@"
