#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
# The sanitizer run of CI (label sanitize), kept small: a second build tree, Release, with ASan +
# UBSan (TPKIT_SANITIZE) of only libtpkit, the unit tests, the generic engines and forksnoop; then the
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
  # Release, what packagers build (-O3, NDEBUG), where the main tree is RelWithDebInfo: code or
  # tests that depend on the optimiser fail here. No -g: the build takes half the time of -O2 -g
  # (the longest part of this run); the reports name functions still.
  cmake -S "$src" -B "$build" -DTPKIT_SANITIZE=ON -DTPKIT_FUZZ=OFF -DTPKIT_BUILD_BENCH=OFF \
    -DCMAKE_BUILD_TYPE=Release >/dev/null
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
