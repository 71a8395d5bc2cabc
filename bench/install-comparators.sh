#!/bin/sh
# Installs what the full benchmark compares tpkit with: bpftrace, libbpf-tools (bcc's tools in
# libbpf form) and perf. The smoke run does without them and says which it skipped.
set -eu
packages="bpftrace libbpf-tools linux-perf"
missing=""
for p in $packages; do
  dpkg-query -W -f='${Status}\n' "$p" 2>/dev/null | grep -q '^install ok installed$' || missing="$missing $p"
done
[ -z "$missing" ] && exit 0
if [ "$(id -u)" != 0 ]; then
  echo "install-comparators: missing packages:$missing (run as root to install them)" >&2
  exit 1
fi
echo "install-comparators: installing$missing" >&2
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
# shellcheck disable=SC2086
apt-get install -y -qq --no-install-recommends $missing >/dev/null
