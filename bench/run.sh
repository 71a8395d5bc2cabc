#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
# Runs the benchmarks: builds what is missing, installs the comparators (bpftrace, libbpf-tools,
# perf) for a full run, then prints the tables and writes <build>/bench/results.json.
#
#   bench/run.sh [--smoke] [--build DIR] [tpbench options...]   (as root)
set -eu
here=$(cd "$(dirname "$0")" && pwd)
build="$here/../build"
smoke=""
while [ $# -gt 0 ]; do
  case "$1" in
    --build) build=$2; shift 2 ;;
    --smoke) smoke=--smoke; shift ;;
    *) break ;;
  esac
done
[ -n "$smoke" ] || "$here/../cmake/install-deps.sh" --comparators
if [ ! -x "$build/bench/tpbench" ]; then
  cmake -S "$here/.." -B "$build" >/dev/null
fi
cmake --build "$build" -j2 --target tpbench >/dev/null
exec "$build/bench/tpbench" $smoke "$@"
