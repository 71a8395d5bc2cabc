#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
# bcc-short-flags.sh BCC_GIT_DIR > src/cli/bcc_short_flags.tsv   (a clone of iovisor/bcc; its HEAD is read)
# The short flags of libbpf-tools' programs that tpkit also has, read from their argp tables
# (`struct argp_option opts[]`): tool, letter, long name ("-" for none), argument ("-" for a
# flag), help. killsnoop is sigsnoop's (an alias in libbpf-tools' Makefile); -V (version) is
# argp's own, in every program. The tools of python_tools, which libbpf-tools lacks, have bcc's
# Python tool's flags instead, from its argparse calls (tools/NAME.py; argparse has no -V); other
# tools of tpkit's whose Python version differs from libbpf-tools' are not listed.
set -euo pipefail
bcc=$1
python_tools="compactsnoop sofdsnoop"
tools=$(cd "$(dirname "$0")/../tools" && ls *.cpp | sed "s/\.cpp$//")
git -C "$bcc" log -1 --format='# bcc %H (%cs), libbpf-tools/*.c (tools/*.py where libbpf-tools lacks the tool)'
for tool in $tools; do
  source=$tool
  [ "$tool" = killsnoop ] && source=sigsnoop
  if ! git -C "$bcc" cat-file -e "HEAD:libbpf-tools/$source.c" 2>/dev/null; then
    case " $python_tools " in *" $tool "*) ;; *) continue ;; esac
    git -C "$bcc" cat-file -e "HEAD:tools/$source.py" 2>/dev/null || continue
    git -C "$bcc" show "HEAD:tools/$source.py" | python3 -c '
import re, sys
tool = sys.argv[1]
for call in re.findall(r"add_argument\((.*?)\)\s*\n", sys.stdin.read(), re.S):
    names = re.findall(r"\"(--?[A-Za-z][\w-]*)\"", call.split("help=")[0])
    short = [n[1:] for n in names if not n.startswith("--") and len(n) == 2]
    long = [n[2:] for n in names if n.startswith("--")]
    help = re.search(r"help=\s*\"([^\"]*)\"", call)
    if not short or short[0] == "h" or "SUPPRESS" in call:
        continue
    flag = re.search(r"action=\"(store_true|store_false|count)\"", call)
    arg = "-" if flag else (long[0].upper() if long else short[0].upper())
    print("\t".join([tool, short[0], long[0] if long else "-", arg, help.group(1) if help else ""]))
' "$tool"
    continue
  fi
  git -C "$bcc" show "HEAD:libbpf-tools/$source.c" | sed -n '/argp_option opts\[\] *=/,/^};/p' | tr '\n\t' '  ' |
    grep -o "{ *\(\"[^\"]*\"\|NULL\) *, *'[^']' *, *\(\"[^\"]*\"\|NULL\) *, *[^,]* *, *\"[^\"]*\"" |
    sed "s/^{ *//; s/\"//g; s/ *, */\t/g; s/'//g" |
    awk -F'\t' -v tool="$tool" 'BEGIN { OFS = "\t" }
      { long = $1 == "NULL" ? "-" : $1; arg = $3 == "NULL" ? "-" : $3
        if ($2 != "h") print tool, $2, long, arg, $5 }
      END { print tool, "V", "version", "-", "Print program version" }'
done
