#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
# The sanitizer run of CI (label sanitize), kept small: a second build tree with ASan + UBSan
# (TPKIT_SANITIZE) of only libtpkit, the unit tests, the generic engines and forksnoop; then the
# unit suite there, and those tools' live tests run by the main build's live test binary against
# the sanitized tools (TPKIT_BIN_DIR). Any report fails (no recovery).
#   run.sh SOURCE_DIR BUILD_DIR LIVE_TEST_BINARY
set -eu
src=$1 build=$2 live_tests=$3
tools="forksnoop tplist tpsnoop tpcount tphist"
start=$(date +%s)
phase() { echo "sanitize: $1 at $(( $(date +%s) - start )) s"; }
cmake -S "$src" -B "$build" -DTPKIT_SANITIZE=ON -DTPKIT_FUZZ=OFF -DTPKIT_BUILD_BENCH=OFF >/dev/null
phase configured
cmake --build "$build" -j2 --target tpkit_unit_tests $tools >/dev/null
phase built
export ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1
"$build/tests/tpkit_unit_tests" --gtest_brief=1
phase "unit suite passed"
TPKIT_BIN_DIR="$build/bin" "$live_tests" --gtest_brief=1 \
  --gtest_filter='Forksnoop*:Tpsnoop*:Tpcount*:Tphist*:Tplist*:EngineTool*:LeastPrivilege.*:Coexistence.*'
phase "live tests passed"
