# SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
# Writes the C++ tables of kernel constants' names (include/tpkit/kernel/constants.hpp) from the build's
# own headers, so that no name is ever typed by hand: the names are taken from the headers' text
# (`#define NAME` and enum members), the values from the compiler, which includes the same
# headers. Run by cmake/TpkitConstants.cmake at build time, with the headers read as a depfile:
#
#   cmake "-DINCLUDE_DIRS=/usr/include|/usr/include/x86_64-linux-gnu" -DOUTPUT=constant_tables.cpp \
#         -P gen-constant-tables.cmake
if(NOT INCLUDE_DIRS OR NOT OUTPUT)
  message(FATAL_ERROR "gen-constant-tables.cmake: pass -DINCLUDE_DIRS=<dir>|<dir> -DOUTPUT=<file.cpp>")
endif()
string(REPLACE "|" ";" include_dirs "${INCLUDE_DIRS}")

set(headers_read "")
# The path of `header` (linux/mount.h) in the first include directory that has it.
function(find_header header out)
  foreach(dir IN LISTS include_dirs)
    if(EXISTS "${dir}/${header}")
      set(${out} "${dir}/${header}" PARENT_SCOPE)
      set(headers_read ${headers_read} "${dir}/${header}" PARENT_SCOPE)
      return()
    endif()
  endforeach()
  message(FATAL_ERROR "gen-constant-tables.cmake: no ${header} in ${include_dirs}")
endfunction()

# The names beginning with `prefix` that `path` defines as object-like macros or enum members,
# less those matching `exclude` (masks, aliases, sizes: what is not one value of the family).
function(names_in path prefix exclude out)
  file(STRINGS "${path}" lines REGEX "^(#[ \t]*define[ \t]+|[ \t]*)${prefix}[A-Za-z0-9_]*([ \t]|=|,|$)")
  set(found "")
  foreach(line IN LISTS lines)
    # Two tests, not one OR: a failed MATCHES clears CMAKE_MATCH_1.
    set(name "")
    if(line MATCHES "^#[ \t]*define[ \t]+(${prefix}[A-Za-z0-9_]*)([ \t]|$)")
      set(name "${CMAKE_MATCH_1}")
    elseif(line MATCHES "^[ \t]*(${prefix}[A-Za-z0-9_]*)[ \t]*(=|,|$)")
      set(name "${CMAKE_MATCH_1}")
    endif()
    if(name AND NOT name MATCHES "^(${exclude})$")
      list(APPEND found "${name}")
    endif()
  endforeach()
  set(${out} ${${out}} ${found} PARENT_SCOPE)
endfunction()

set(tables "")
set(functions "")
# One table: the C++ function that returns it, its prefix, what to leave out, its headers.
function(table function prefix exclude)
  set(names "")
  foreach(header IN LISTS ARGN)
    find_header("${header}" path)
    names_in("${path}" "${prefix}" "${exclude}" names)
  endforeach()
  list(REMOVE_DUPLICATES names)
  if(NOT names)
    message(FATAL_ERROR "gen-constant-tables.cmake: no ${prefix}* names in ${ARGN}")
  endif()
  set(rows "")
  foreach(name IN LISTS names)
    string(APPEND rows "    {bits(${name}), \"${name}\"},\n")
  endforeach()
  string(APPEND tables "constexpr NamedConstant ${function}_table[] = {\n${rows}};\n\n")
  string(APPEND functions "std::span<const NamedConstant> ${function}() { return ${function}_table; }\n")
  set(tables "${tables}" PARENT_SCOPE)
  set(functions "${functions}" PARENT_SCOPE)
  set(headers_read ${headers_read} PARENT_SCOPE)
endfunction()

# Masks are named with a double underscore or _MASK; CAP_LAST_CAP and MS_VERBOSE (deprecated for
# MS_SILENT) are second names of other values; MS_MGC_* is the old magic in mount(2)'s flags.
# umount2's flags and the sync calls' are the C library's (the kernel's uapi has no MNT_*).
set(mount_headers linux/mount.h sys/mount.h)
table(capabilities "CAP_" "CAP_LAST_CAP" linux/capability.h)
table(mount_flags "MS_" "MS_RMT_MASK|MS_MGC_VAL|MS_MGC_MSK|MS_VERBOSE" ${mount_headers})
table(umount_flags "(MNT_|UMOUNT_)" "" sys/mount.h)
table(fsopen_flags "FSOPEN_" "" ${mount_headers})
table(fsconfig_commands "FSCONFIG_" "" ${mount_headers})
table(fsmount_flags "FSMOUNT_" "" ${mount_headers})
table(mount_attr_flags "MOUNT_ATTR_" "MOUNT_ATTR__.*|MOUNT_ATTR_SIZE_VER[0-9]+" ${mount_headers})
table(move_mount_flags "MOVE_MOUNT_" "MOVE_MOUNT__.*" ${mount_headers})
table(msync_flags "MS_" "" bits/mman-linux.h)
table(sync_file_range_flags "SYNC_FILE_RANGE_" "" bits/fcntl-linux.h)

list(REMOVE_DUPLICATES headers_read)
string(REPLACE ";" ", " sources "${headers_read}")
file(WRITE "${OUTPUT}.tmp"
"// Generated from ${sources}
// by cmake/gen-constant-tables.cmake; do not edit.
#include \"tpkit/kernel/constants.hpp\"

#include <fcntl.h>
#include <linux/capability.h>
#include <sys/mman.h>
#include <sys/mount.h>

#include <type_traits>

namespace tpkit {
namespace {

// A value as its bits: (1<<31) is a negative int, MS_NOUSER's bit all the same.
template <class T>
constexpr std::uint64_t bits(T value)
{
    return static_cast<std::make_unsigned_t<T>>(value);
}

${tables}} // namespace

${functions}
} // namespace tpkit
")
# Output that did not change keeps its time stamp: nothing is recompiled.
file(COPY_FILE "${OUTPUT}.tmp" "${OUTPUT}" ONLY_IF_DIFFERENT)
file(REMOVE "${OUTPUT}.tmp")
# The headers read, for the build to run this again when one changes.
string(REPLACE ";" " " depends "${headers_read}")
file(WRITE "${OUTPUT}.d" "${OUTPUT}: ${depends}\n")
