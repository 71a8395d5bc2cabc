# SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
# Names of kernel constants in libtpkit (include/tpkit/kernel/constants.hpp): capabilities and the flags
# of the mount and sync syscalls, generated at build time from the build's own headers by
# cmake/gen-constant-tables.cmake.
include_guard(GLOBAL)

set(TPKIT_CONSTANT_INCLUDE_DIRS "/usr/include;/usr/include/${CMAKE_LIBRARY_ARCHITECTURE}"
    CACHE STRING "Where the headers that name capabilities and mount flags are (linux-libc-dev, libc6-dev)")
string(REPLACE ";" "|" tpkit_constant_dirs "${TPKIT_CONSTANT_INCLUDE_DIRS}")
set(tpkit_constant_tables "${CMAKE_CURRENT_BINARY_DIR}/generated/constant_tables.cpp")
add_custom_command(
  OUTPUT "${tpkit_constant_tables}"
  COMMAND "${CMAKE_COMMAND}" "-DINCLUDE_DIRS=${tpkit_constant_dirs}" "-DOUTPUT=${tpkit_constant_tables}"
          -P "${CMAKE_CURRENT_LIST_DIR}/gen-constant-tables.cmake"
  DEPENDS "${CMAKE_CURRENT_LIST_DIR}/gen-constant-tables.cmake"
  DEPFILE "${tpkit_constant_tables}.d"
  COMMENT "Constant tables (capabilities, mount flags) from the build's headers"
  VERBATIM)
target_sources(tpkit_kernel PRIVATE "${tpkit_constant_tables}")
