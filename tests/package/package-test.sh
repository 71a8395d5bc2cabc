#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
# package-test.sh install|use BUILD_DIR SOURCE_DIR WORK_DIR
# install: builds the .deb packages from BUILD_DIR (cpack), checks them with lintian (no error),
# then in a fresh minimal Debian 12 root with Debian's libbpf-tools installed: installs both (no
# file conflict), checks that `man` and bash's and zsh's completion describe the program a name
# runs (libbpf-tools' for the names it has) and builds examples/embed against the installed
# libtpkit-dev.
# use: runs forksnoop -d 1 by its short name there, purges both packages and finds no file left
# behind. Only this step loads BPF, so only it takes the live tests' lock (tests/package).
# Needs root, debootstrap, lintian and a Debian mirror (apt's own); exit 77 (skip) without
# them unless TPKIT_REQUIRE_BPF=1. The bare root is cached in TPKIT_DEBIAN_ROOT_CACHE.
set -euo pipefail
step=$1 build=$2 source_dir=$3 work=$4/work
case $step in install|use) ;; *) echo "package-test: unknown step $step" >&2; exit 2 ;; esac

fail() { echo "package-test: $*" >&2; exit 1; }
skip() {
  [ "${TPKIT_REQUIRE_BPF:-}" = 1 ] && fail "TPKIT_REQUIRE_BPF=1 but $*"
  echo "package-test: skipped: $*" >&2
  exit 77
}
[ "$(id -u)" = 0 ] || skip "needs root (debootstrap, chroot)"
for tool in debootstrap lintian cpack dpkg-shlibdeps; do
  command -v $tool >/dev/null || skip "needs $tool (cmake/install-deps.sh --tests)"
done

root=$work/root
cleanup() { umount -R "$root/proc" "$root/sys" "$root/dev" 2>/dev/null || true; }
trap cleanup EXIT
cleanup
in_root() { chroot "$root" /usr/bin/env -i HOME=/root PATH=/usr/sbin:/usr/bin:/sbin:/bin LC_ALL=C.UTF-8 /bin/bash -c "$1"; }
snapshot() {
  in_root "find / -xdev \\( -path /proc -o -path /sys -o -path /dev -o -path /tmp -o -path /root \
           -o -path /var/lib/dpkg -o -path /var/log -o -path /var/cache -o -path /var/lib/apt \\) -prune \
           -o -print" | sort
}

if [ "$step" = use ]; then
  [ -s "$work/before" ] || fail "nothing installed: the install step did not pass"
  mount --bind /proc "$root/proc"; mount --bind /sys "$root/sys"; mount --rbind /dev "$root/dev"
  echo "package-test: forksnoop -d 1" >&2
  in_root "(sleep 0.5; for i in 1 2 3; do /bin/true; done) & forksnoop -d 1; wait" >"$work/forksnoop.out" 2>"$work/forksnoop.err" ||
    { cat "$work/forksnoop.err" >&2; fail "forksnoop -d 1 failed"; }
  head -n1 "$work/forksnoop.out" | grep -q PCOMM || { cat "$work/forksnoop.out" >&2; fail "forksnoop printed no header"; }
  forks=$(grep -c ' process$' "$work/forksnoop.out" || true)
  [ "$forks" -ge 3 ] || { cat "$work/forksnoop.out" >&2; fail "forksnoop saw $forks forks, expected at least 3"; }
  echo "package-test: forksnoop saw $forks forks" >&2

  echo "package-test: dpkg --purge tpkit libtpkit-dev" >&2
  in_root "dpkg --purge tpkit libtpkit-dev" >"$work/dpkg-purge.log" 2>&1 ||
    { cat "$work/dpkg-purge.log" >&2; fail "dpkg --purge failed"; }
  snapshot >"$work/after"
  if ! diff "$work/before" "$work/after" >"$work/left-behind"; then
    cat "$work/left-behind" >&2
    fail "purging the packages left files behind (or removed others')"
  fi
  echo "package-test: installed, ran, built against, purged: nothing left behind"
  exit 0
fi

rm -rf "$work"
mkdir -p "$work/debs"

echo "package-test: cpack" >&2
cpack --config "$build/CPackConfig.cmake" -B "$work/debs" >"$work/cpack.log" 2>&1 ||
  { cat "$work/cpack.log" >&2; fail "cpack failed"; }
debs=("$work"/debs/*.deb)
[ ${#debs[@]} = 2 ] || fail "expected 2 packages, cpack made: ${debs[*]}"
for deb in "${debs[@]}"; do
  echo "package-test: $(basename "$deb"): $(($(stat -c %s "$deb") / 1024)) KiB," \
       "installed $(dpkg-deb -f "$deb" Installed-Size) KiB; Depends: $(dpkg-deb -f "$deb" Depends)" >&2
done
echo "package-test: lintian" >&2
lintian --fail-on error --suppress-tags-from-file /dev/null "${debs[@]}" >"$work/lintian.log" 2>&1 ||
  { cat "$work/lintian.log" >&2; fail "lintian reports errors"; }
sed 's/^/package-test: lintian: /' "$work/lintian.log" >&2

mirror() {  # the Debian mirror apt already uses here
  local u
  u=$(sed -n 's/^URIs:[[:space:]]*//p' /etc/apt/sources.list.d/*.sources 2>/dev/null | grep -v security | head -n1)
  [ -n "$u" ] || u=$(awk '$1=="deb" && $0 !~ /security/ {print $2; exit}' /etc/apt/sources.list 2>/dev/null)
  echo "$u"
}
cache=${TPKIT_DEBIAN_ROOT_CACHE:-/var/cache/tpkit-test}
mkdir -p "$root" "$cache"
if [ -s "$cache/bookworm-minbase.tar" ]; then
  tar -xf "$cache/bookworm-minbase.tar" -C "$root"
else
  m=$(mirror)
  [ -n "$m" ] || skip "no Debian mirror in apt's sources"
  echo "package-test: debootstrap of a minimal Debian 12" >&2
  debootstrap --variant=minbase bookworm "$root" "$m" >"$work/debootstrap.log" 2>&1 ||
    { tail -n 5 "$work/debootstrap.log" >&2; skip "debootstrap failed"; }
  tar -cf "$cache/bookworm-minbase.tar" -C "$root" .
fi
rm -f "$root/etc/apt/sources.list"; rm -rf "$root/etc/apt/sources.list.d"
cp -a /etc/apt/sources.list.d "$root/etc/apt/" 2>/dev/null || true
[ -f /etc/apt/sources.list ] && cp /etc/apt/sources.list "$root/etc/apt/"
find "$root/etc/apt/sources.list.d" -name '*.disabled*' -delete 2>/dev/null || true
cp /etc/resolv.conf "$root/etc/" 2>/dev/null || true
mount --bind /proc "$root/proc"; mount --bind /sys "$root/sys"; mount --rbind /dev "$root/dev"
mkdir -p "$root/tmp/debs" "$root/tmp/embed"
cp "${debs[@]}" "$root/tmp/debs/"
cp -a "$source_dir/examples/embed/." "$root/tmp/embed/"

# What the packages depend on, and what recommends and the example's build need, installed
# first: the snapshot below is taken with them, so that only tpkit's own files are compared.
deps=$(for deb in "${debs[@]}"; do dpkg-deb -f "$deb" Depends Recommends; done |
       sed 's/^[A-Za-z-]*: //; s/([^)]*)//g; s/|[^,]*//g; s/,/ /g' | tr ' ' '\n' | grep . | sort -u | tr '\n' ' ')
echo "package-test: apt-get install libbpf-tools g++ make man-db bash-completion zsh $deps" >&2
in_root "export DEBIAN_FRONTEND=noninteractive; apt-get update -qq &&
         apt-get install -y -qq --no-install-recommends libbpf-tools g++ make man-db bash-completion zsh $deps" \
  >"$work/apt.log" 2>&1 || { tail -n 20 "$work/apt.log" >&2; fail "installing the dependencies failed"; }
snapshot >"$work/before.tmp"

echo "package-test: dpkg -i $(cd "$work/debs" && echo *.deb)" >&2
in_root "dpkg -i /tmp/debs/*.deb" >"$work/dpkg-install.log" 2>&1 ||
  { cat "$work/dpkg-install.log" >&2; fail "dpkg -i failed (a file conflict with libbpf-tools?)"; }
owner() { in_root "dpkg -S $1" | cut -d: -f1; }
[ "$(owner /usr/sbin/execsnoop)" = libbpf-tools ] || fail "/usr/sbin/execsnoop is not libbpf-tools' any more"
[ "$(owner /usr/sbin/forksnoop)" = tpkit ] || fail "/usr/sbin/forksnoop is not tpkit's"
in_root "/usr/libexec/tpkit/execsnoop --version" | grep -q '^execsnoop (tpkit) ' ||
  fail "/usr/libexec/tpkit/execsnoop is not tpkit's execsnoop"
in_root "tpkit execsnoop --version" | grep -q '^execsnoop (tpkit) ' || fail "'tpkit execsnoop' does not run it"

echo "package-test: man pages and completions beside libbpf-tools" >&2
# man: a name libbpf-tools has is its program's; tpkit's page of it is tpkit-NAME.
if in_root "dpkg -L libbpf-tools" | grep -q '^/usr/share/man/'; then
  [ "$(owner "$(in_root "man -w runqlat")")" = libbpf-tools ] || fail "man runqlat is not libbpf-tools' page"
else
  page=$(in_root "man -w runqlat" 2>/dev/null) && fail "man runqlat finds $page, libbpf-tools has no page"
fi
[ "$(in_root "man -w tpkit-runqlat")" = /usr/share/man/man8/tpkit-runqlat.8.gz ] || fail "no man tpkit-runqlat"
[ "$(in_root "man -w forksnoop")" = /usr/share/man/man8/forksnoop.8.gz ] || fail "no man forksnoop"
in_root "MANWIDTH=80 man tpkit-runqlat" 2>/dev/null | grep -q '^ *tpkit runqlat \[OPTIONS\]' ||
  fail "man tpkit-runqlat's synopsis is not 'tpkit runqlat [OPTIONS] ...'"
# Every page one of tpkit's pages refers to (SEE ALSO, NAME(8) in the text) is installed; only
# other programs' pages (prometheus(1)) may be missing here.
tools=" tpkit $(in_root "tpkit --help" | tail -n +3 | awk '{ print $1 }' | tr '\n' ' ') "
for page in $(in_root "dpkg -L tpkit libtpkit-dev" | grep '^/usr/share/man/.*\.gz$'); do
  refs=$(zcat "$root$page" | grep -oE '^\.BR [^ ]+ \([0-9]\)|\\fB[^\\ ]+\\f[RP]\([0-9]\)' |
         sed -E 's/^\.BR ([^ ]+) \(([0-9])\)$/\1 \2/; s/^\\fB(.*)\\f[RP]\(([0-9])\)$/\1 \2/; s/\\-/-/g')
  while read -r name section; do
    [ -n "$name" ] || continue
    in_root "man -w $section $name" >/dev/null 2>&1 && continue
    case $tools in *" ${name#tpkit-} "*) fail "$page refers to $name($section): no such page" ;; esac
  done <<<"$refs"
done
# bash: what bash completes, found as bash finds a command's completion: the compspec of its full
# path, else of its last name, else the default one (bash-completion's loader, which loads by the
# last name), again after a function returns 124. Prints the function, then COMPREPLY.
cat >"$root/tmp/complete.bash" <<'EOF'
. /usr/share/bash-completion/bash_completion
COMP_WORDS=("$@") COMP_CWORD=$(($# - 1)) COMP_LINE="$*"
COMP_POINT=${#COMP_LINE}
for try in 1 2 3; do
  spec=$(complete -p "$1" 2>/dev/null || complete -p "${1##*/}" 2>/dev/null || complete -p -D)
  function=$(sed -n 's/.* -F \([^ ]*\) .*/\1/p' <<<"$spec")
  COMPREPLY=()
  "$function" "$1" "${COMP_WORDS[-1]}" "${COMP_WORDS[-2]}"
  (($? == 124)) || break
done
echo "$function" "${COMPREPLY[@]}"
EOF
completes() { in_root "cd /tmp && bash /tmp/complete.bash $*"; }
expect_completion() { # WORDS... EXPECTED (the function, then the words completed)
  local got
  got=$(completes "${@:1:$#-1}")
  [ "$got" = "${*: -1}" ] || fail "bash: ${*:1:$#-1}<Tab>: expected '${*: -1}', got '$got'"
}
expect_completion tpkit runqlat --js "_tpkit_complete --json"
expect_completion /usr/libexec/tpkit/runqlat --js "_tpkit_libexec_complete --json"
expect_completion /usr/libexec/tpkit/forksnoop --ra "_tpkit_libexec_complete --raw"
expect_completion forksnoop --ra "_tpkit_complete --raw"
expect_completion tpkit-exporter --config.c "_tpkit_complete --config.check"
case $(completes runqlat --js) in
  _tpkit* | *--json*) fail "bash: runqlat --js<Tab> is tpkit's completion: $(completes runqlat --js)" ;;
esac
# zsh: the completion compinit gives each command (the #compdef lines).
zsh_comps=$(in_root "zsh -fc 'autoload -Uz compinit && compinit -u -D
  print -r -- \${_comps[runqlat]:-none} \${_comps[tpkit]} \${_comps[forksnoop]} \${(k)_patcomps[(r)_tpkit]}'")
[ "$zsh_comps" = "none _tpkit _tpkit */libexec/tpkit/*" ] ||
  fail "zsh: completions of runqlat, tpkit, forksnoop and the pattern of tpkit's: $zsh_comps"

echo "package-test: examples/embed against the installed libtpkit-dev" >&2
in_root "cmake -S /tmp/embed -B /tmp/embed-build -DCMAKE_BUILD_TYPE=Release && cmake --build /tmp/embed-build -j2" \
  >"$work/embed.log" 2>&1 || { tail -n 30 "$work/embed.log" >&2; fail "building examples/embed failed"; }
[ -x "$root/tmp/embed-build/forkwatch" ] && [ -x "$root/tmp/embed-build/switchhist" ] ||
  fail "examples/embed built no forkwatch and switchhist"

# The snapshot of before the install, kept only now that the install is complete: the use step
# runs only after a whole install.
mv "$work/before.tmp" "$work/before"
echo "package-test: installed, examples/embed built against them"
