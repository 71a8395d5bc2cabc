#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
# Everything a tool loads, its programs and its maps, is in its own bpf/NAME.bpf.c, so that
# `grep SEC bpf/NAME.bpf.c` lists it all: kit headers (bpf/include/tpkit/) and headers the tools
# share (bpf/*.bpf.h) give map types and functions, never a SEC(). Fails listing each SEC( in
# the code, not the comments, of any file under BPF_DIR other than BPF_DIR/*.bpf.c.
#   bpf-sec-test.sh BPF_DIR
set -eu
dir=${1%/}
found=$(find "$dir" -type f | LC_ALL=C sort | while read -r file; do
  [ "$(dirname "$file")" = "$dir" ] && case $file in *.bpf.c) continue ;; esac
  # C without its comments, string and character literals, line by line.
  awk '
    FNR == 1 { in_comment = 0 }
    {
      code = ""; in_literal = 0
      for (i = 1; i <= length($0); i++) {
        c = substr($0, i, 1); pair = substr($0, i, 2)
        if (in_comment) {
          if (pair == "*/") { in_comment = 0; i++ }
        } else if (in_literal) {
          if (c == "\\") i++
          else if (c == quote) in_literal = 0
        } else if (pair == "/*") {
          in_comment = 1; i++
        } else if (pair == "//") {
          break
        } else if (c == "\"" || c == "'\''") {
          in_literal = 1; quote = c
        } else {
          code = code c
        }
      }
      if (code ~ /(^|[^A-Za-z0-9_])SEC[ \t]*\(/)
        print FILENAME ":" FNR ": " $0
    }' "$file"
done)
if [ -n "$found" ]; then
  echo "SEC() outside $dir/*.bpf.c: a tool's programs and maps belong in its own .bpf.c, which" \
       "calls the functions and uses the map types of the headers:" >&2
  echo "$found" >&2
  exit 1
fi
