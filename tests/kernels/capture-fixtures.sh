#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
# Makes a reference kernel's fixtures from a Debian kernel package:
#   tests/data/btf/NAME.btf.gz       the raw BTF the kernel exposes as /sys/kernel/btf/vmlinux: the
#                                    .BTF section of the package's vmlinux, taken out of the vmlinuz
#                                    as the kernel's scripts/extract-vmlinux does
#   tests/data/formats/NAME.tar.gz   tracefs' events/header_* and events/SYSTEM/EVENT/format, as
#                                    the kernel writes them: only a running kernel has them, so it
#                                    boots under qemu (TCG, as run-kernel-test.sh) with
#                                    capture-init.sh as /init, which prints a base64 tar on the
#                                    serial console
# The VM also prints the sha256 of its /sys/kernel/btf/vmlinux: the BTF taken out of the image
# must be those very bytes, or nothing is written.
#
#   capture-fixtures.sh KERNEL_PACKAGE_REGEX NAME [WORK_DIR]
#   e.g. capture-fixtures.sh '^linux-image-6\.12\.[0-9]+\+deb12-cloud-amd64-unsigned$' linux-6.12
#
# The package is chosen and cached as for the kernel tests (kernel-package.sh). The tarball is
# made in the VM by busybox tar from a copy of the files: ./, then each directory before its
# entries, in the kernel's readdir order, mode 644 and 755, numeric owner 0/0, the capture's time;
# both files are gzip'ed without a name or time (gzip -n).
set -euo pipefail

[ $# -ge 2 ] || { echo "usage: $0 KERNEL_PACKAGE_REGEX NAME [WORK_DIR]" >&2; exit 2; }
regex=$1 name=$2 work=${3:-$(mktemp -d)}
here=$(cd "$(dirname "$0")" && pwd)
data=$(cd "$here/../data" && pwd)
die() { echo "FAIL: $*" >&2; exit 1; }
skip() { die "$*"; }
for tool in qemu-system-x86_64 objcopy readelf base64; do
  command -v "$tool" >/dev/null || die "$tool not installed"
done
[ -x /bin/busybox ] || die "/bin/busybox not installed (package busybox-static)"
mkdir -p "$work"

# shellcheck source=kernel-package.sh
. "$here/kernel-package.sh" # sets deb (the package) and vmlinuz

# ---- BTF: the .BTF section of the vmlinux inside the bzImage ---------------------------------
# As scripts/extract-vmlinux: at each place the compressor's magic appears, try to decompress from
# there; the first ELF file that comes out is the kernel.
vmlinux=$work/vmlinux
try_decompress() { # MAGIC (grep -P) COMMAND...
  local magic=$1 pos
  shift
  command -v "$1" >/dev/null || return 1
  for pos in $(LC_ALL=C grep -aboP "$magic" "$vmlinuz" | cut -d: -f1); do
    tail -c "+$((pos + 1))" "$vmlinuz" | "$@" >"$vmlinux" 2>/dev/null || true
    readelf -h "$vmlinux" >/dev/null 2>&1 && return 0
  done
  return 1
}
try_decompress '\x1f\x8b\x08' gzip -dc ||
  try_decompress '\xfd7zXZ\x00' xz -dc ||
  try_decompress 'BZh' bzip2 -dc ||
  try_decompress '\x5d\x00\x00\x00' xz -dc --format=lzma ||
  try_decompress '\x89LZO' lzop -dc ||
  try_decompress '\x02\x21\x4c\x18' lz4 -dc ||
  try_decompress '\x28\xb5\x2f\xfd' zstd -dc ||
  die "no vmlinux found in $vmlinuz"
btf=$work/vmlinux.btf
objcopy -O binary --only-section=.BTF "$vmlinux" "$btf"
[ -s "$btf" ] || die "$vmlinux has no .BTF section (CONFIG_DEBUG_INFO_BTF)"
if command -v bpftool >/dev/null; then
  types=$(bpftool btf dump file "$btf" | grep -c '^\[') || die "bpftool cannot read $btf"
  echo "BTF: $(stat -c %s "$btf") bytes, $types types"
fi

# ---- formats: from the kernel running ---------------------------------------------------------
root=$work/initramfs
rm -rf "$root"
mkdir -p "$root"/{bin,proc,sys,dev,tmp}
cp /bin/busybox "$root/bin/busybox"
ln -s busybox "$root/bin/sh"
install -m 755 "$here/capture-init.sh" "$root/init"
vm_boot "$root" "$work" "panic=-1"
log=$work/vm.log
grep -E '^TPK-(KERNEL|INFO|DONE)' "$log" || true
[ "$(sed -n 's/^TPK-DONE //p' "$log")" = 0 ] || die "the VM did not capture the formats (see $log)"
kernel_btf=$(sed -n 's/^TPK-BTF-SHA256 //p' "$log")
[ "$(sha256sum <"$btf" | cut -d' ' -f1)" = "$kernel_btf" ] ||
  die "the BTF taken out of $vmlinuz is not the kernel's /sys/kernel/btf/vmlinux (sha256 $kernel_btf)"
tarball=$work/formats.tar
sed -n '/^TPK-FORMATS-BEGIN$/,/^TPK-FORMATS-END$/p' "$log" | sed '1d;$d' | base64 -d | gzip -dc >"$tarball"
events=$(tar tf "$tarball" | grep -c '/format$') || die "the tarball from the VM holds no format file"
empty=$(tar tvf "$tarball" | awk '$1 ~ /^-/ && $3 == 0 { print $NF }' | head -n 3)
[ -z "$empty" ] || die "empty files in the tarball from the VM: $empty"
echo "formats: $events events"

gzip -9n <"$btf" >"$data/btf/$name.btf.gz"
gzip -n <"$tarball" >"$data/formats/$name.tar.gz"
echo "wrote $data/btf/$name.btf.gz and $data/formats/$name.tar.gz from $(basename "$deb")"
