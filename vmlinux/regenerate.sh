#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
# Regenerates vmlinux/<arch>/vmlinux.h from a kernel's BTF.
#   vmlinux/regenerate.sh [BTF_FILE] [ARCH]
# BTF_FILE defaults to the running kernel's /sys/kernel/btf/vmlinux (a .gz file is accepted);
# the committed x86 header comes from ../shared/fixtures/btf/linux-6.18.btf.gz. CO-RE relocates
# against the running kernel, so the header only needs to be a superset of the types used.
set -eu
btf=${1:-/sys/kernel/btf/vmlinux}
arch=${2:-x86}
here=$(cd "$(dirname "$0")" && pwd)
tmp=$(mktemp)
trap 'rm -f "$tmp"' EXIT
case "$btf" in
  *.gz) gzip -dc "$btf" > "$tmp" ;;
  *) cat "$btf" > "$tmp" ;;
esac
mkdir -p "$here/$arch"
bpftool btf dump file "$tmp" format c > "$here/$arch/vmlinux.h"
echo "wrote $here/$arch/vmlinux.h"
