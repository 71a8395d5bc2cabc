# SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
# The kernel's syscall names in libtpkit (include/tpkit/kernel/syscalls.hpp), generated at build time
# from the build's own <asm/unistd_64.h> by cmake/gen-syscall-table.cmake.
include_guard(GLOBAL)

set(TPKIT_SYSCALL_HEADER "/usr/include/${CMAKE_LIBRARY_ARCHITECTURE}/asm/unistd_64.h"
    CACHE FILEPATH "The header whose __NR_* numbers name the syscalls")
if(NOT EXISTS "${TPKIT_SYSCALL_HEADER}")
  message(FATAL_ERROR "No ${TPKIT_SYSCALL_HEADER} (linux-libc-dev): set TPKIT_SYSCALL_HEADER to "
                      "the architecture's asm/unistd_64.h")
endif()
set(tpkit_syscall_table "${CMAKE_CURRENT_BINARY_DIR}/generated/syscall_table.cpp")
add_custom_command(
  OUTPUT "${tpkit_syscall_table}"
  COMMAND "${CMAKE_COMMAND}" -DHEADER=${TPKIT_SYSCALL_HEADER}
          -DNEWER=${CMAKE_CURRENT_LIST_DIR}/syscalls-x86_64-newer.txt
          -DOUTPUT=${tpkit_syscall_table} -P "${CMAKE_CURRENT_LIST_DIR}/gen-syscall-table.cmake"
  DEPENDS "${TPKIT_SYSCALL_HEADER}" "${CMAKE_CURRENT_LIST_DIR}/gen-syscall-table.cmake"
          "${CMAKE_CURRENT_LIST_DIR}/syscalls-x86_64-newer.txt"
  COMMENT "Syscall table from ${TPKIT_SYSCALL_HEADER}"
  VERBATIM)
target_sources(tpkit_kernel PRIVATE "${tpkit_syscall_table}")
