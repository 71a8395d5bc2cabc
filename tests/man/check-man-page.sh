#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
# One man page: its hand-written part exists, the built page is what the tool and docs/man/
# make now (not stale), and groff renders it without a warning.
#   check-man-page.sh DOCS_DIR PAGE -DTOOL=... (gen-man.cmake's arguments but OUTPUT)
set -eu
docs=$1 page=$2
shift 2
tool=
for arg; do
  case $arg in -DTOOL=*) tool=${arg#-DTOOL=} ;; esac
done
[ -f "$docs/$tool.roff" ] || { echo "no $docs/$tool.roff: write its DESCRIPTION, EXAMPLES and SEE ALSO" >&2; exit 1; }
# The example output is a real run's: no placeholder (a line of capitals and underscores) for it.
placeholder=$(grep -n '^[A-Z][A-Z0-9]*_[A-Z0-9_]*$' "$docs/$tool.roff" || true)
[ -z "$placeholder" ] || { echo "$docs/$tool.roff: a placeholder, not a run's output: $placeholder" >&2; exit 1; }
cmake "$@" -DOUTPUT="$page" -DCHECK=ON -P "$docs/../../cmake/gen-man.cmake"
warnings=$(LC_ALL=C.UTF-8 MANWIDTH=80 groff -ww -man -Tutf8 -z "$page" 2>&1)
[ -z "$warnings" ] || { echo "groff warns about $page:" >&2; echo "$warnings" >&2; exit 1; }
