#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
# The sanitizer run of CI (label sanitize), kept small: a second build tree with ASan + UBSan
# (TPKIT_SANITIZE) of only libtpkit, the unit tests, the generic engines and forksnoop; then the
# unit suite there, and those tools' live tests run by the main build's live test binary against
# the sanitized tools (TPKIT_BIN_DIR). Any report fails (no recovery). Three steps, three ctest
# tests: the build and the unit suite may run beside other tests, the live tests alone.
#   run.sh build|unit|live SOURCE_DIR BUILD_DIR LIVE_TEST_BINARY
set -eu
step=$1 src=$2 build=$3 live_tests=$4
tools="forksnoop tplist tpsnoop tpcount tphist"
export ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1
case $step in
build)
  # -O1 -g1, as ASan's documentation suggests: the reports keep their lines, and the build takes
  # half the time of -O2 -g (the longest part of this run).
  cmake -S "$src" -B "$build" -DTPKIT_SANITIZE=ON -DTPKIT_FUZZ=OFF -DTPKIT_BUILD_BENCH=OFF \
    -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -g1" \
    -DCMAKE_C_FLAGS_RELWITHDEBINFO="-O1 -g1" >/dev/null
  cmake --build "$build" -j2 --target tpkit_unit_tests $tools >/dev/null ;;
unit)
  "$build/tests/tpkit_unit_tests" --gtest_brief=1 ;;
live)
  TPKIT_BIN_DIR="$build/bin" "$live_tests" --gtest_brief=1 \
    --gtest_filter='Forksnoop*:Tpsnoop*:Tpcount*:Tphist*:Tplist*:EngineTool*:LeastPrivilege.*:Coexistence.*' ;;
*)
  echo "run.sh: unknown step $step" >&2
  exit 2 ;;
esac
