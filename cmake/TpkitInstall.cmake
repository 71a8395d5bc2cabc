# SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
# `cmake --install`: the tools, libtpkit with its public headers, the BPF helper headers,
# vmlinux.h, the skeletons of tpkit's own BPF programs, and the CMake package that lets other
# projects write `find_package(tpkit 0.1 REQUIRED)` (see docs/embedding.md).
#
# Installed layout (below the prefix):
#   bin/tpgen                     (the other tools: sbin/tpkit and links, cmake/TpkitPackage.cmake)
#   lib/libtpkit.a
#   include/tpkit/                public C++/C headers and the BPF helpers (*.bpf.h, tp/*.h),
#                                 as one tree: a BPF source includes <tpkit/emit.bpf.h> and
#                                 <tpkit/hist.h> the same way inside and outside tpkit
#   include/tpkit/tools/          the tools' event structs (NAME.h), beside their skeletons
#   include/tpkit/vmlinux/        vmlinux.h and its per-arch headers (BPF sources only)
#   include/tpkit/skel/           NAME.skel.h of each tool with a BPF program
#   lib/cmake/tpkit/              tpkitConfig.cmake, its version file, targets, TpkitBpf.cmake
include_guard(GLOBAL)
include(CMakePackageConfigHelpers)

set(TPKIT_INSTALL_CMAKEDIR "${CMAKE_INSTALL_LIBDIR}/cmake/tpkit")
set(TPKIT_INSTALL_VMLINUXDIR "${CMAKE_INSTALL_INCLUDEDIR}/tpkit/vmlinux")
set(TPKIT_INSTALL_SKELDIR "${CMAKE_INSTALL_INCLUDEDIR}/tpkit/skel")

# Everything here is the component dev, the package libtpkit-dev.
# tpgen is exported too: embedders run it at build time to generate tracepoint contexts.
list(TRANSFORM TPKIT_PARTS PREPEND tpkit_ OUTPUT_VARIABLE tpkit_part_targets)
list(REMOVE_ITEM tpkit_part_targets tpkit_tpgen)
install(TARGETS tpkit ${tpkit_part_targets} tpgen EXPORT tpkitTargets
        ARCHIVE DESTINATION "${CMAKE_INSTALL_LIBDIR}" COMPONENT dev
        RUNTIME DESTINATION "${CMAKE_INSTALL_BINDIR}" COMPONENT dev)

install(DIRECTORY include/tpkit bpf/include/tpkit DESTINATION "${CMAKE_INSTALL_INCLUDEDIR}"
        COMPONENT dev FILES_MATCHING PATTERN "*.h" PATTERN "*.hpp")
install(DIRECTORY vmlinux/ DESTINATION "${TPKIT_INSTALL_VMLINUXDIR}" COMPONENT dev
        FILES_MATCHING PATTERN "*.h")

# Each tool's generated skeleton, as the imported target tpkit::NAME_skel: link it to
# `#include "NAME.skel.h"` exactly as the tool does.
foreach(tool IN LISTS TPKIT_TOOLS)
  if(TARGET ${tool}_skel)
    get_target_property(skel_dir ${tool}_skel INTERFACE_INCLUDE_DIRECTORIES)
    install(FILES "${skel_dir}/${tool}.skel.h" DESTINATION "${TPKIT_INSTALL_SKELDIR}" COMPONENT dev)
    add_library(tpkit_installed_${tool}_skel INTERFACE)
    set_target_properties(tpkit_installed_${tool}_skel PROPERTIES EXPORT_NAME ${tool}_skel)
    target_include_directories(tpkit_installed_${tool}_skel INTERFACE
      $<INSTALL_INTERFACE:${TPKIT_INSTALL_SKELDIR}>)
    target_link_libraries(tpkit_installed_${tool}_skel INTERFACE tpkit::libbpf)
    install(TARGETS tpkit_installed_${tool}_skel EXPORT tpkitTargets COMPONENT dev)
  endif()
endforeach()

install(EXPORT tpkitTargets NAMESPACE tpkit:: DESTINATION "${TPKIT_INSTALL_CMAKEDIR}" COMPONENT dev)
configure_package_config_file(cmake/tpkitConfig.cmake.in
  "${CMAKE_CURRENT_BINARY_DIR}/tpkitConfig.cmake"
  INSTALL_DESTINATION "${TPKIT_INSTALL_CMAKEDIR}"
  PATH_VARS CMAKE_INSTALL_INCLUDEDIR TPKIT_INSTALL_VMLINUXDIR)
# 0.x: a minor release may break the API, so 0.1 accepts 0.1.* only.
write_basic_package_version_file("${CMAKE_CURRENT_BINARY_DIR}/tpkitConfigVersion.cmake"
  COMPATIBILITY SameMinorVersion)
install(FILES "${CMAKE_CURRENT_BINARY_DIR}/tpkitConfig.cmake"
              "${CMAKE_CURRENT_BINARY_DIR}/tpkitConfigVersion.cmake"
              cmake/TpkitBpf.cmake
        DESTINATION "${TPKIT_INSTALL_CMAKEDIR}" COMPONENT dev)
