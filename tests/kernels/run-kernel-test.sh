#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
# Runs tpkit's exactness tests on another kernel: fetches a Debian kernel package, boots it under
# qemu (TCG, no KVM) with an initramfs of busybox + the live test binary + the tools + their shared
# libraries, lets vm-init.sh run the binary's `*Exact.*` suites there, and asserts that every one
# of them passed, from what the serial console says.
#
#   run-kernel-test.sh KERNEL_PACKAGE_REGEX WORK_DIR TEST_BINARY TOOL...
#
# KERNEL_PACKAGE_REGEX  apt package names to choose from (extended regex); the newest version
#                       apt knows wins, e.g. '^linux-image-6\.1\.0-[0-9]+-cloud-amd64-unsigned$'
# WORK_DIR              scratch space (initramfs tree, console log)
# TEST_BINARY           tpkit_live_tests (googletest)
# TOOL...               the tools the tests run
#
# Environment: TPKIT_KERNEL_CACHE (default /var/cache/tpkit-kernels, else ~/.cache/tpkit-kernels
# when that is not writable) keeps the .deb so later runs need no network; TPKIT_VM_TIMEOUT
# (seconds, default 1200) bounds the VM; TPKIT_VM_TESTS (default '*Exact.*') is the googletest
# filter; TPKIT_VM_SLOWDOWN (default 10) multiplies the tests' waits, as emulated CPUs are slow;
# TPKIT_VM_REPEAT (default 1) runs the tests that many times (googletest's --gtest_repeat), to
# chase a failure that comes once in N runs.
# Exit 0: every test passed (or skipped saying why); 77: skipped (no qemu, no kernel to be had)
# unless TPKIT_REQUIRE_BPF=1, which turns a skip into a failure; else 1.
set -euo pipefail

[ $# -ge 4 ] || { echo "usage: $0 KERNEL_PACKAGE_REGEX WORK_DIR TEST_BINARY TOOL..." >&2; exit 2; }
regex=$1 work=$2 tests=$3
shift 3
filter=${TPKIT_VM_TESTS:-*Exact.*}
here=$(cd "$(dirname "$0")" && pwd)

skip() {
  if [ "${TPKIT_REQUIRE_BPF:-0}" = 1 ]; then
    echo "FAIL: TPKIT_REQUIRE_BPF=1 but the kernel test cannot run: $*"
    exit 1
  fi
  echo "SKIP: $*"
  exit 77
}
die() { echo "FAIL: $*"; exit 1; }

command -v qemu-system-x86_64 >/dev/null || skip "qemu-system-x86_64 not installed (package qemu-system-x86)"
[ -x /bin/busybox ] || skip "/bin/busybox not installed (package busybox-static)"
for f in "$tests" "$@"; do [ -x "$f" ] || die "$f is not built"; done
# The tests the VM must pass: "Suite.Name" each, from the binary's own list.
plan=$("$tests" --gtest_list_tests --gtest_filter="$filter" |
  awk '/^[^ ]/ { suite = $1 } /^  / { print suite $1 }')
[ -n "$plan" ] || die "no test matches '$filter'"

# ---- the kernel: newest matching package, downloaded once ------------------------------------
# shellcheck source=kernel-package.sh
. "$here/kernel-package.sh" # sets deb (the package) and vmlinuz
# The loop driver, for the block tools' tests (loop devices over files): a module in Debian's
# kernels, and the initramfs has no modules of its own. Unsigned packages: no signature needed.
loop_ko=${deb%.deb}.loop.ko
if [ ! -s "$loop_ko" ]; then
  dpkg-deb --fsys-tarfile "$deb" | tar -xO --wildcards './lib/modules/*/kernel/drivers/block/loop.ko*' > "$loop_ko.tmp" || true
  case $(head -c 6 "$loop_ko.tmp" | od -An -tx1 | tr -d ' ') in
    fd377a585a00) xz -dc "$loop_ko.tmp" > "$loop_ko.raw" && mv "$loop_ko.raw" "$loop_ko.tmp" ;;
    28b52ffd*) zstd -dqc "$loop_ko.tmp" > "$loop_ko.raw" && mv "$loop_ko.raw" "$loop_ko.tmp" ;;
  esac
  mv "$loop_ko.tmp" "$loop_ko"
fi

# ---- the initramfs ---------------------------------------------------------------------------
root=$work/initramfs
rm -rf "$root"
mkdir -p "$root"/{bin,sbin,tpkit/bin,proc,sys,dev,tmp}
cp /bin/busybox "$root/bin/busybox"
ln -s busybox "$root/bin/sh" # for /init's #!; vm-init.sh installs the other applets
# Without their debug info: the initramfs lives in the VM's memory.
for f in "$tests" "$@"; do
  strip --strip-debug -o "$root/tpkit/bin/$(basename "$f")" "$f"
done
[ -s "$loop_ko" ] && cp "$loop_ko" "$root/tpkit/loop.ko"
printf '%s' "$filter" >"$root/tpkit/filter"
echo "${TPKIT_VM_SLOWDOWN:-10}" >"$root/tpkit/slowdown"
echo "${TPKIT_VM_REPEAT:-1}" >"$root/tpkit/repeat"
install -m 755 "$here/vm-init.sh" "$root/init"
# Every shared library the binaries load, at the path ldd resolved, and the dynamic loader.
for f in /bin/busybox "$tests" "$@"; do
  ldd "$f" 2>/dev/null | awk '$2 == "=>" && $3 ~ /^\// { print $3 } $1 ~ /^\// { print $1 }' || true
done | sort -u | while read -r lib; do
  mkdir -p "$root$(dirname "$lib")"
  cp -L "$lib" "$root$lib"
done
# softlockup_panic ends the VM at once should a CPU hang.
vm_boot "$root" "$work" "softlockup_panic=1 panic=-1"

# ---- verdict ---------------------------------------------------------------------------------
log=$work/vm.log
grep -E '^(TPK-|\[ +(OK|FAILED|SKIPPED) +\] [A-Za-z])' "$log" | grep -v ' tests\?, listed below' || true
kernel=$(sed -n 's/^TPK-KERNEL //p' "$log")
failed="" skipped=0
for test in $plan; do
  if grep -q "^\[       OK \] $test (" "$log"; then :
  elif grep -q "^\[  SKIPPED \] $test (" "$log"; then skipped=$((skipped + 1))
  else failed="$failed $test"
  fi
done
done_status=$(sed -n 's/^TPK-DONE //p' "$log")
[ -n "$done_status" ] || failed="$failed (no TPK-DONE: the VM stopped early)"
[ "${done_status:-0}" = 0 ] || failed="$failed (the test binary exited $done_status)"
if [ -n "$failed" ]; then
  # Each failed test's own lines first (a log shortened in the middle keeps its head and tail),
  # then the end of the console, for a VM that stopped early.
  for test in $failed; do
    case $test in *.*) ;; *) continue ;; esac
    echo "---- $test ----"
    awk -v run="[ RUN      ] $test" -v end="[  FAILED  ] $test (" \
      '$0 == run { on = 1 } on { print } on && index($0, end) == 1 { exit }' "$log" | tail -n 60
  done
  echo "---- the end of the console ($log) ----"
  grep -vE '^TPK-' "$log" | tail -n 40
  die "on ${kernel:-the VM}:$failed"
fi
echo "PASS: $(echo $plan | wc -w) tests on $kernel ($skipped skipped)"
