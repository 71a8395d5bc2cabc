#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
# Installs what building, testing and benchmarking tpkit needs on Debian 12.
# Does nothing (and needs no network) when every package is already present.
#   cmake/install-deps.sh                 build and test
#   cmake/install-deps.sh --comparators   also what the full benchmark compares with:
#                                         bpftrace, libbpf-tools (bcc's tools), perf
set -eu
packages="build-essential cmake pkg-config clang llvm libbpf-dev bpftool libelf-dev zlib1g-dev
  libcli11-dev libfmt-dev googletest libgtest-dev nlohmann-json3-dev iproute2 procps kmod util-linux busybox-static qemu-system-x86 groff-base
  debootstrap lintian"
case "${1:-}" in
  "") ;;
  --comparators) packages="$packages bpftrace libbpf-tools linux-perf" ;;
  *) echo "install-deps: unknown argument '$1' (only --comparators)" >&2; exit 2 ;;
esac
missing=""
for p in $packages; do
  dpkg-query -W -f='${Status}\n' "$p" 2>/dev/null | grep -q '^install ok installed$' || missing="$missing $p"
done
[ -z "$missing" ] && exit 0
if [ "$(id -u)" != 0 ]; then
  echo "install-deps: missing packages:$missing (run as root to install them)" >&2
  exit 1
fi
echo "install-deps: installing$missing" >&2
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
# shellcheck disable=SC2086
apt-get install -y -qq --no-install-recommends $missing >/dev/null
