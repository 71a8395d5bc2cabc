#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
# embed-test.sh BUILD_DIR EXAMPLE_DIR WORK_DIR
#
# Installs tpkit from BUILD_DIR into a temporary prefix, builds examples/embed against that
# prefix alone, then runs its two programs while this shell forks known children: forkwatch
# must report each child exactly once, switchhist a per-CPU histogram with every CPU in it (a
# child is pinned to each) and a non-empty on-CPU histogram.
# Exit 77 (skip) without root or kernel BTF, unless TPKIT_REQUIRE_BPF=1, where that fails.
set -eu

build=$1 example=$2 work=$3/work
source_dir=$(cd "$example/../.." && pwd)
forks=20

fail() { echo "embed-test: $*" >&2; exit 1; }
show() { for f in "$@"; do echo "--- $f" >&2; cat "$f" >&2 || true; done; }

rm -rf "$work"
mkdir -p "$work"
prefix=$work/prefix

cmake --install "$build" --prefix "$prefix" >"$work/install.log" 2>&1 ||
  { show "$work/install.log"; fail "cmake --install failed"; }
cmake -S "$example" -B "$work/build" -DCMAKE_PREFIX_PATH="$prefix" -DCMAKE_BUILD_TYPE=Release \
      >"$work/configure.log" 2>&1 || { show "$work/configure.log"; fail "configuring the example failed"; }
cmake --build "$work/build" -j2 >"$work/build.log" 2>&1 ||
  { show "$work/build.log"; fail "building the example failed"; }

# The BPF program saw tpkit's headers and vmlinux.h from the prefix, never from the source tree.
deps=$work/build/bpf/switchhist.bpf.d
grep -q "$prefix/include/tpkit/hist.h" "$deps" || { show "$deps"; fail "tpkit/hist.h not from the prefix"; }
grep -q "$prefix/include/tpkit/vmlinux/vmlinux.h" "$deps" || { show "$deps"; fail "vmlinux.h not from the prefix"; }
if grep -E "$source_dir/(include|bpf|vmlinux)/" "$deps" >&2; then
  fail "the example's BPF program used headers of tpkit's source tree"
fi

reason=
[ "$(id -u)" = 0 ] || reason="needs root"
[ -r /sys/kernel/btf/vmlinux ] || reason="needs kernel BTF"
if [ -n "$reason" ]; then
  [ "${TPKIT_REQUIRE_BPF:-}" = 1 ] && fail "TPKIT_REQUIRE_BPF=1 but live BPF is unavailable: $reason"
  echo "embed-test: built; the live run $reason" >&2
  exit 77
fi

run=$work/run
mkdir -p "$run"
"$work/build/forkwatch" >"$run/forkwatch.out" 2>"$run/forkwatch.err" &
forkwatch=$!
"$work/build/switchhist" >"$run/switchhist.out" 2>"$run/switchhist.err" &
switchhist=$!
trap 'kill $forkwatch $switchhist 2>/dev/null || true' EXIT

# Each program prints one line once attached.
wait_ready() { # FILE PID NAME
  i=0
  until [ -s "$1" ]; do
    kill -0 "$2" 2>/dev/null || { show "$run/$3.err"; fail "$3 exited before attaching"; }
    i=$((i + 1))
    [ $i -lt 600 ] || fail "$3 did not attach within 30 s"
    sleep 0.05
  done
}
wait_ready "$run/forkwatch.out" $forkwatch forkwatch
wait_ready "$run/switchhist.out" $switchhist switchhist

children=
cpus=$(nproc)
for i in $(seq $forks); do
  # Children 1..cpus run on CPU 0..cpus-1: each CPU switches to them and back.
  if [ "$i" -le "$cpus" ]; then taskset -c $((i - 1)) /bin/true & else /bin/true & fi
  children="$children $!"
  wait $!
done

kill -INT $forkwatch $switchhist
wait $forkwatch || { show "$run/forkwatch.err"; fail "forkwatch exited with $?"; }
wait $switchhist || { show "$run/switchhist.err"; fail "switchhist exited with $?"; }
trap - EXIT

for child in $children; do
  n=$(grep -c "^fork $$ -> $child " "$run/forkwatch.out" || true)
  [ "$n" = 1 ] || { show "$run/forkwatch.out"; fail "child $child of $$ seen $n times, not once"; }
done
# The runner reports lost events on stderr, and only when there were some.
! grep -q "lost" "$run/forkwatch.err" || { show "$run/forkwatch.err"; fail "forkwatch lost events"; }

# "N context switches", then the bars of the per-CPU histogram ("CPU : COUNT |***|").
total=$(sed -n 's/^\([0-9][0-9]*\) context switches$/\1/p' "$run/switchhist.out")
[ -n "$total" ] && [ "$total" -gt 0 ] || { show "$run/switchhist.out"; fail "no context switches counted"; }
for cpu in $(seq 0 $((cpus - 1))); do
  grep -Eq "^ +$cpu +: +[1-9][0-9]* +\|" "$run/switchhist.out" ||
    { show "$run/switchhist.out"; fail "no context switch counted on CPU $cpu"; }
done
grep -q "usecs" "$run/switchhist.out" && grep -Eq '^ *[0-9]+ -> [0-9]+ +: +[1-9][0-9]* +\|\*' "$run/switchhist.out" ||
  { show "$run/switchhist.out"; fail "no on-CPU time histogram"; }

echo "embed-test: $forks forks seen once each, $total context switches, each of $cpus CPUs in the histogram"
rm -rf "$work"
