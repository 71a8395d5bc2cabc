# SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
# Writes the C++ table of the kernel's system calls from the build's <asm/unistd_64.h> (one
# `#define __NR_<name> <number>` per syscall), so that no name is ever typed by hand, plus the
# syscalls of later kernels that the header lacks (NEWER: "<number> <name>" lines, # comments).
# Run by cmake/TpkitSyscalls.cmake at build time:
#
#   cmake -DHEADER=.../asm/unistd_64.h [-DNEWER=syscalls-x86_64-newer.txt]
#         -DOUTPUT=syscall_table.cpp -P gen-syscall-table.cmake
if(NOT HEADER OR NOT OUTPUT)
  message(FATAL_ERROR "gen-syscall-table.cmake: pass -DHEADER=<asm/unistd_64.h> -DOUTPUT=<file.cpp>")
endif()
file(STRINGS "${HEADER}" defines REGEX "^#define __NR_[a-z0-9_]+ [0-9]+$")
set(entries "")
foreach(define IN LISTS defines)
  string(REGEX REPLACE "^#define __NR_([a-z0-9_]+) ([0-9]+)$" "\\2:\\1" entry "${define}")
  list(APPEND entries "${entry}")
endforeach()
list(LENGTH entries count)
if(count LESS 100)
  message(FATAL_ERROR "gen-syscall-table.cmake: ${HEADER} names only ${count} syscalls")
endif()
if(NEWER)
  file(STRINGS "${NEWER}" newer REGEX "^[0-9]+ [a-z0-9_]+$")
  foreach(line IN LISTS newer)
    string(REGEX REPLACE "^([0-9]+) (.*)$" "\\1:\\2" entry "${line}")
    string(REGEX REPLACE "^([0-9]+):.*$" "\\1" number "${entry}")
    set(known "${entries}")
    list(FILTER known INCLUDE REGEX "^${number}:")
    if(NOT known) # the header knows better
      list(APPEND entries "${entry}")
    endif()
  endforeach()
endif()
list(SORT entries COMPARE NATURAL) # by number

set(rows "")
foreach(entry IN LISTS entries)
  string(REGEX REPLACE "^([0-9]+):(.*)$" "    {\\1, \"\\2\"},\n" row "${entry}")
  string(APPEND rows "${row}")
endforeach()
file(WRITE "${OUTPUT}.tmp"
"// Generated from ${HEADER} by cmake/gen-syscall-table.cmake; do not edit.
#include \"tpkit/kernel/syscalls.hpp\"

namespace tpkit {
namespace {

constexpr Syscall table[] = {
${rows}};

} // namespace

std::span<const Syscall> syscalls() { return table; }

} // namespace tpkit
")
# Output that did not change keeps its time stamp: nothing is recompiled.
file(COPY_FILE "${OUTPUT}.tmp" "${OUTPUT}" ONLY_IF_DIFFERENT)
file(REMOVE "${OUTPUT}.tmp")
