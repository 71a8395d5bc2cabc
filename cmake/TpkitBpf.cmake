# SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
# tpkit_bpf_skeleton(<name> SOURCE <file.bpf.c> [INCLUDES dir...] [DEPENDS file...])
#
# Compiles one BPF C file with clang for the BPF target and turns the object into a libbpf
# skeleton with `bpftool gen skeleton`. Creates the INTERFACE target <name>_skel: link it to get
# <name>.skel.h on the include path and libbpf (tpkit::libbpf) on the link line. Header
# dependencies of the BPF source are tracked through a depfile, so editing a shared BPF header
# rebuilds the skeleton.
#
# Used by tpkit's own build and, from the installed package, by embedders.
include_guard(GLOBAL)

find_program(TPKIT_BPF_CLANG NAMES clang clang-14 clang-16 clang-19 REQUIRED)
find_program(TPKIT_LLVM_STRIP NAMES llvm-strip llvm-strip-14 llvm-strip-16 llvm-strip-19 REQUIRED)
find_program(TPKIT_BPFTOOL NAMES bpftool PATHS /usr/sbin /usr/local/sbin REQUIRED)
find_package(PkgConfig REQUIRED)
pkg_check_modules(TPKIT_LIBBPF REQUIRED IMPORTED_TARGET libbpf)
# libtpkit's symbolizer reads ELF symbol tables (symbols.hpp).
pkg_check_modules(TPKIT_LIBELF REQUIRED IMPORTED_TARGET libelf)
pkg_check_modules(TPKIT_ZLIB REQUIRED IMPORTED_TARGET zlib)
# tpkit::libbpf: libbpf linked statically, as libbpf-tools link it (libelf and zlib stay
# shared): only the parts a tool calls are in its binary, where libbpf.so kept 300 kB of its own
# pages resident in every tool (bench/BENCHMARKS.md, "Where the peak RSS goes").
find_library(TPKIT_LIBBPF_ARCHIVE NAMES libbpf.a PATHS "${TPKIT_LIBBPF_LIBDIR}" NO_DEFAULT_PATH
             REQUIRED)
if(NOT TARGET tpkit::libbpf)
  add_library(tpkit::libbpf INTERFACE IMPORTED)
  target_include_directories(tpkit::libbpf INTERFACE ${TPKIT_LIBBPF_INCLUDE_DIRS})
  target_link_libraries(tpkit::libbpf INTERFACE "${TPKIT_LIBBPF_ARCHIVE}" PkgConfig::TPKIT_LIBELF
                        PkgConfig::TPKIT_ZLIB)
endif()
# tpsnoop prints events as the kernel does through libtraceevent (kernel_text.hpp).
pkg_check_modules(TPKIT_LIBTRACEEVENT REQUIRED IMPORTED_TARGET libtraceevent)
# libtpkit drops capabilities once attached (privileges.hpp).
pkg_check_modules(TPKIT_LIBCAP REQUIRED IMPORTED_TARGET libcap)

if(CMAKE_SYSTEM_PROCESSOR MATCHES "x86_64|AMD64|amd64")
  set(TPKIT_BPF_ARCH x86)
elseif(CMAKE_SYSTEM_PROCESSOR MATCHES "aarch64|arm64")
  set(TPKIT_BPF_ARCH arm64)
else()
  message(FATAL_ERROR "tpkit: no BPF target arch for ${CMAKE_SYSTEM_PROCESSOR}")
endif()

# Where tpkit's BPF headers (bpf/include) and vmlinux.h live; the installed package config
# overrides these before including this file.
if(NOT DEFINED TPKIT_BPF_INCLUDE_DIRS)
  set(TPKIT_BPF_INCLUDE_DIRS
      "${CMAKE_CURRENT_LIST_DIR}/../bpf/include"
      "${CMAKE_CURRENT_LIST_DIR}/../vmlinux"
      "${CMAKE_CURRENT_LIST_DIR}/../include")
endif()

function(tpkit_bpf_skeleton name)
  cmake_parse_arguments(PARSE_ARGV 1 arg "" "SOURCE" "INCLUDES;DEPENDS")
  if(NOT arg_SOURCE)
    message(FATAL_ERROR "tpkit_bpf_skeleton(${name}): SOURCE is required")
  endif()
  get_filename_component(src "${arg_SOURCE}" ABSOLUTE)
  set(out_dir "${CMAKE_CURRENT_BINARY_DIR}/bpf")
  set(obj "${out_dir}/${name}.bpf.o")
  set(skel "${out_dir}/${name}.skel.h")
  set(dep "${out_dir}/${name}.bpf.d")

  set(include_flags "")
  foreach(dir IN LISTS arg_INCLUDES TPKIT_BPF_INCLUDE_DIRS)
    get_filename_component(dir "${dir}" ABSOLUTE)
    list(APPEND include_flags "-I${dir}")
  endforeach()

  add_custom_command(
    OUTPUT "${obj}"
    COMMAND "${CMAKE_COMMAND}" -E make_directory "${out_dir}"
    COMMAND "${TPKIT_BPF_CLANG}" -g -O2 -target bpf -D__TARGET_ARCH_${TPKIT_BPF_ARCH}
            -Wall -Werror=undef ${include_flags} -MD -MF "${dep}" -c "${src}" -o "${obj}"
    # DWARF is only for the compiler's BTF generation; the skeleton embeds the object.
    COMMAND "${TPKIT_LLVM_STRIP}" -g "${obj}"
    MAIN_DEPENDENCY "${src}"
    DEPENDS ${arg_DEPENDS}
    DEPFILE "${dep}"
    COMMENT "BPF ${name}.bpf.c"
    VERBATIM COMMAND_EXPAND_LISTS)
  add_custom_command(
    OUTPUT "${skel}"
    COMMAND "${TPKIT_BPFTOOL}" gen skeleton "${obj}" name "${name}_bpf" > "${skel}"
    DEPENDS "${obj}"
    COMMENT "skeleton ${name}.skel.h"
    VERBATIM)
  # One custom target owns the outputs so that several consumers never race to build them.
  add_custom_target(${name}_skel_gen DEPENDS "${skel}")
  add_library(${name}_skel INTERFACE)
  add_dependencies(${name}_skel ${name}_skel_gen)
  target_include_directories(${name}_skel INTERFACE "${out_dir}")
  target_link_libraries(${name}_skel INTERFACE tpkit::libbpf)
endfunction()
