#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
# bcc-short-flags.sh BCC_GIT_DIR > src/cli/bcc_short_flags.tsv   (a clone of iovisor/bcc; its HEAD is read)
# The short flags of libbpf-tools' programs that tpkit also has, read from their argp tables
# (`struct argp_option opts[]`): tool, letter, long name ("-" for none), argument ("-" for a
# flag), help. killsnoop is sigsnoop's (an alias in libbpf-tools' Makefile); -V (version) is
# argp's own, in every program.
set -euo pipefail
bcc=$1
tools=$(cd "$(dirname "$0")/../tools" && ls *.cpp | sed "s/\.cpp$//")
git -C "$bcc" log -1 --format='# bcc %H (%cs), libbpf-tools/*.c'
for tool in $tools; do
  source=$tool
  [ "$tool" = killsnoop ] && source=sigsnoop
  git -C "$bcc" cat-file -e "HEAD:libbpf-tools/$source.c" 2>/dev/null || continue
  git -C "$bcc" show "HEAD:libbpf-tools/$source.c" | sed -n '/argp_option opts\[\] *=/,/^};/p' | tr '\n\t' '  ' |
    grep -o "{ *\(\"[^\"]*\"\|NULL\) *, *'[^']' *, *\(\"[^\"]*\"\|NULL\) *, *[^,]* *, *\"[^\"]*\"" |
    sed "s/^{ *//; s/\"//g; s/ *, */\t/g; s/'//g" |
    awk -F'\t' -v tool="$tool" 'BEGIN { OFS = "\t" }
      { long = $1 == "NULL" ? "-" : $1; arg = $3 == "NULL" ? "-" : $3
        if ($2 != "h") print tool, $2, long, arg, $5 }
      END { print tool, "V", "version", "-", "Print program version" }'
done
