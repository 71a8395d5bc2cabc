# SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
# shellcheck shell=bash
# Sourced (bash) by run-kernel-test.sh and capture-fixtures.sh: the newest Debian kernel package
# whose name matches $regex (an extended regex over package names), downloaded once; and
# vm_boot, which boots its kernel.
#
# Needs: regex, and skip MESSAGE (the caller's way to give up when no kernel can be had).
# Sets:  cache (where packages are kept: TPKIT_KERNEL_CACHE, default /var/cache/tpkit-kernels,
#        else ~/.cache/tpkit-kernels when that is not writable), deb (the package), vmlinuz (its
#        kernel image, taken out once, next to it).
# When apt has no matching package or the download fails, the newest cached .deb whose package
# name matches is used: a kernel apt does not know can be put there by hand.

: "${regex:?the caller sets regex}"
cache=${TPKIT_KERNEL_CACHE:-/var/cache/tpkit-kernels}
if ! mkdir -p "$cache" 2>/dev/null || [ ! -w "$cache" ]; then
  cache=${XDG_CACHE_HOME:-$HOME/.cache}/tpkit-kernels
  mkdir -p "$cache"
fi
newest_cached() {
  local deb
  for deb in "$cache"/*.deb; do
    [ -e "$deb" ] || continue
    basename "$deb" | cut -d_ -f1 | grep -qE "$regex" && echo "$deb"
  done | sort -V | tail -n 1
}
package=$(apt-cache pkgnames 2>/dev/null | grep -E "$regex" | sort -V | tail -n 1 || true)
deb=""
if [ -n "$package" ]; then
  version=$(apt-cache policy "$package" | sed -n 's/^ *Candidate: //p')
  deb=$(ls "$cache/${package}_${version/*:/}_"*.deb 2>/dev/null | head -n 1 || true)
  if [ -z "$deb" ]; then
    echo "fetching $package $version into $cache"
    (cd "$cache" && apt-get download -q "$package" 2>&1 | grep -v '^W: Download is performed unsandboxed') ||
      echo "apt-get download $package failed"
    deb=$(ls "$cache/${package}_"*.deb 2>/dev/null | sort -V | tail -n 1 || true)
  fi
fi
[ -n "$deb" ] || deb=$(newest_cached)
if [ -z "$deb" ]; then
  [ -n "$package" ] && skip "could not download $package (no network?) and $cache has no kernel matching '$regex'"
  skip "apt knows no package matching '$regex' (apt-get update?) and $cache has none"
fi
vmlinuz=${deb%.deb}.vmlinuz
if [ ! -s "$vmlinuz" ]; then
  dpkg-deb --fsys-tarfile "$deb" | tar -xO --wildcards './boot/vmlinuz-*' > "$vmlinuz.tmp"
  mv "$vmlinuz.tmp" "$vmlinuz"
fi
echo "kernel: $(basename "$deb")"

# vm_boot ROOT WORK APPEND: packs ROOT (its /init first to run) into WORK/initramfs.cpio.gz, boots
# $vmlinuz with it under qemu with the kernel command line "console=ttyS0 quiet APPEND", and
# writes what the VM printed as lines to WORK/vm.log: no carriage returns, nothing of the
# console's escape codes before a TPK- marker. The VM is bounded by TPKIT_VM_TIMEOUT (1200 s).
vm_boot() {
  local root=$1 work=$2 append=$3 initrd=$2/initramfs.cpio.gz console=$2/console.log
  local start status=0
  (cd "$root" && find . | /bin/busybox cpio -o -H newc 2>/dev/null) | gzip -1 >"$initrd"
  echo "initramfs: $(du -h "$initrd" | cut -f1)"
  start=$(date +%s)
  # One host thread for both vCPUs (thread=single): with a thread per vCPU, TCG can miss the
  # kernel patching a static branch (int3, then the new jump; tracepoints switching on and off)
  # that the other vCPU is executing, and both spin there for ever (soft lockups at
  # syscall_trace_enter).
  timeout -k 5 "${TPKIT_VM_TIMEOUT:-1200}" qemu-system-x86_64 -accel tcg,thread=single -m 512 -smp 2 \
    -nographic -no-reboot -nic none -kernel "$vmlinuz" -initrd "$initrd" \
    -append "console=ttyS0 quiet $append" </dev/null >"$console" 2>&1 || status=$?
  echo "VM ran $(($(date +%s) - start)) s (qemu status $status)"
  tr -d '\r' <"$console" | sed 's/^.*\(TPK-\)/\1/' >"$work/vm.log"
}
