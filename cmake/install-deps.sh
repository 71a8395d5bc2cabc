#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
# Installs what building, testing and benchmarking tpkit needs on Debian 12.
# Does nothing (and needs no network) when every package is already present.
#   cmake/install-deps.sh                 build tpkit and run its tools
#   cmake/install-deps.sh --tests         also what the tests use: googletest, nlohmann-json,
#                                         cpp-httplib (the exporter test's HTTP client),
#                                         qemu and busybox (other kernels), groff (man pages),
#                                         debootstrap and lintian (the .deb packages),
#                                         prometheus (the exporter's), clang's fuzzer runtime
#   cmake/install-deps.sh --comparators   also what the full benchmark compares with:
#                                         bpftrace, libbpf-tools (bcc's tools), perf
set -eu
packages="build-essential cmake pkg-config clang llvm libbpf-dev bpftool libelf-dev zlib1g-dev
  libcli11-dev libfmt-dev libyaml-cpp-dev libmicrohttpd-dev libcap-dev
  libtraceevent-dev"
test_packages="googletest libgtest-dev nlohmann-json3-dev libcpp-httplib-dev iproute2 procps kmod
  util-linux busybox-static qemu-system-x86 groff-base debootstrap lintian prometheus
  libclang-rt-14-dev"
for arg in "$@"; do
  case "$arg" in
    --tests) packages="$packages $test_packages" ;;
    --comparators) packages="$packages bpftrace libbpf-tools linux-perf" ;;
    *) echo "install-deps: unknown argument '$arg' (--tests, --comparators)" >&2; exit 2 ;;
  esac
done
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
