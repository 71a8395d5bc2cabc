# SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
# shellcheck shell=bash
# Sourced (bash) by run-kernel-test.sh and capture-fixtures.sh: the newest Debian kernel package
# whose name matches $regex (an extended regex over package names), downloaded once.
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
