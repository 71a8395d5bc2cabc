#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
# Runs a fuzz target: first every input of its regressions/ once (each was a crash or a
# disagreement), then SECONDS of fuzzing from its seeds into a scratch corpus in the build tree.
#   run-fuzzer.sh FUZZER REGRESSIONS_DIR SCRATCH_DIR SECONDS [SEED_DIR|-dict=FILE|-OPTION]...
set -eu
fuzzer=$1 regressions=$2 scratch=$3 seconds=$4
shift 4
mkdir -p "$scratch/corpus" "$scratch/artifacts"
if [ -d "$regressions" ] && [ -n "$(ls -A "$regressions")" ]; then
  "$fuzzer" -runs=1 "$regressions"/*
fi
exec "$fuzzer" -max_total_time="$seconds" -timeout=20 -rss_limit_mb=3072 -max_len=4096 \
  -print_final_stats=1 -artifact_prefix="$scratch/artifacts/" "$scratch/corpus" "$@"
