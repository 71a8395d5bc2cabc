# SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
# The tools' install and the Debian packages (CPack DEB, `cpack --config build/CPackConfig.cmake`):
#   tpkit         component tools: the tools as one executable, sbin/tpkit, run as `tpkit TOOL`
#                 or by a tool's name (links: libexec/tpkit/NAME for every tool, sbin/NAME for
#                 those whose name Debian's libbpf-tools does not install, README "Installing");
#                 the man pages (tpkit-NAME(8) for those names), bash and zsh completions (not by
#                 those names: libexec/tpkit/NAME and `tpkit NAME`), the exporter's systemd unit
#                 (disabled)
#   libtpkit-dev  component dev (cmake/TpkitInstall.cmake): libtpkit, headers, the CMake
#                 package with tpkit_bpf_skeleton(), tpgen
include_guard(GLOBAL)

# The packages install into /usr (what the paths below and packaging/ say).
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(tpkit_links "${CMAKE_CURRENT_BINARY_DIR}/install-links")
file(REMOVE_RECURSE "${tpkit_links}")
file(MAKE_DIRECTORY "${tpkit_links}/libexec" "${tpkit_links}/sbin" "${tpkit_links}/bash")
file(RELATIVE_PATH tpkit_libexec_to_sbin "/${CMAKE_INSTALL_LIBEXECDIR}/tpkit"
     "/${CMAKE_INSTALL_SBINDIR}/tpkit")
set(tpkit_libexec "${CPACK_PACKAGING_INSTALL_PREFIX}/${CMAKE_INSTALL_LIBEXECDIR}/tpkit")
set(tpkit_libexec_paths "")
foreach(tool IN LISTS TPKIT_MULTICALL_TOOLS)
  file(CREATE_LINK "${tpkit_libexec_to_sbin}" "${tpkit_links}/libexec/${tool}" SYMBOLIC)
  string(APPEND tpkit_libexec_paths " ${tpkit_libexec}/${tool}")
  if(NOT tool IN_LIST TPKIT_LIBBPF_TOOLS_NAMES)
    file(CREATE_LINK tpkit "${tpkit_links}/sbin/${tool}" SYMBOLIC)
  endif()
  tpkit_man_page_name(${tool} page)
  install(FILES "${TPKIT_MAN_DIR}/${page}.8.gz" DESTINATION "${CMAKE_INSTALL_MANDIR}/man8"
          COMPONENT tools)
endforeach()
# bash-completion loads a command's completion from the file of its name: those of the commands
# completed by name are links to tpkit's.
foreach(command IN LISTS TPKIT_COMPLETION_COMMANDS)
  if(NOT command STREQUAL "tpkit")
    file(CREATE_LINK tpkit "${tpkit_links}/bash/${command}" SYMBOLIC)
  endif()
endforeach()
# The tools by their path in libexec/tpkit/ (completions/libexec.bash.in): read as bash starts,
# from /etc, so a conffile.
string(STRIP "${tpkit_libexec_paths}" TPKIT_LIBEXEC_PATHS)
set(TPKIT_LIBEXEC "${tpkit_libexec}")
set(TPKIT_BASH_COMPLETION
    "${CPACK_PACKAGING_INSTALL_PREFIX}/${CMAKE_INSTALL_DATADIR}/bash-completion/completions/tpkit")
configure_file(completions/libexec.bash.in "${CMAKE_CURRENT_BINARY_DIR}/packaging/bash_completion.d/tpkit"
               @ONLY)
install(FILES "${CMAKE_CURRENT_BINARY_DIR}/packaging/bash_completion.d/tpkit"
        DESTINATION /etc/bash_completion.d COMPONENT tools)
file(WRITE "${CMAKE_CURRENT_BINARY_DIR}/packaging/conffiles" "/etc/bash_completion.d/tpkit\n")
set(CPACK_DEBIAN_TOOLS_PACKAGE_CONTROL_EXTRA "${CMAKE_CURRENT_BINARY_DIR}/packaging/conffiles")
install(FILES packaging/tpkit.lintian-overrides DESTINATION "${CMAKE_INSTALL_DATADIR}/lintian/overrides"
        RENAME tpkit COMPONENT tools)
install(TARGETS tpkit_multicall RUNTIME DESTINATION "${CMAKE_INSTALL_SBINDIR}" COMPONENT tools)
# tpkit's own page is hand-written: it has no command line of its own to read.
add_custom_command(OUTPUT "${TPKIT_MAN_DIR}/tpkit.8.gz"
  COMMAND gzip -9nc "${PROJECT_SOURCE_DIR}/docs/man/tpkit.8" > "${TPKIT_MAN_DIR}/tpkit.8.gz"
  DEPENDS docs/man/tpkit.8)
add_custom_target(man-tpkit DEPENDS "${TPKIT_MAN_DIR}/tpkit.8.gz")
add_dependencies(man-pages man-tpkit)
install(FILES "${TPKIT_MAN_DIR}/tpkit.8.gz" DESTINATION "${CMAKE_INSTALL_MANDIR}/man8" COMPONENT tools)
install(DIRECTORY "${tpkit_links}/sbin/" DESTINATION "${CMAKE_INSTALL_SBINDIR}" COMPONENT tools)
install(DIRECTORY "${tpkit_links}/libexec/" DESTINATION "${CMAKE_INSTALL_LIBEXECDIR}/tpkit"
        COMPONENT tools)
install(FILES "${TPKIT_COMPLETION_DIR}/tpkit"
        DESTINATION "${CMAKE_INSTALL_DATADIR}/bash-completion/completions" COMPONENT tools)
install(DIRECTORY "${tpkit_links}/bash/"
        DESTINATION "${CMAKE_INSTALL_DATADIR}/bash-completion/completions" COMPONENT tools)
install(FILES "${TPKIT_COMPLETION_DIR}/_tpkit"
        DESTINATION "${CMAKE_INSTALL_DATADIR}/zsh/vendor-completions" COMPONENT tools)
if(TARGET tpkit-exporter)
  install(TARGETS tpkit-exporter DESTINATION "${CMAKE_INSTALL_SBINDIR}" COMPONENT tools)
  install(FILES "${TPKIT_MAN_DIR}/tpkit-exporter.8.gz" DESTINATION "${CMAKE_INSTALL_MANDIR}/man8"
          COMPONENT tools)
  install(FILES packaging/tpkit-exporter.service DESTINATION lib/systemd/system COMPONENT tools)
endif()
install(FILES "${TPKIT_MAN_DIR}/tpgen.1.gz" DESTINATION "${CMAKE_INSTALL_MANDIR}/man1"
        COMPONENT dev)

# Debian's changelog and copyright in each package's doc directory.
set(TPKIT_DEB_MAINTAINER "tpkit maintainers <maintainers@tpkit.example>" CACHE STRING
    "Maintainer of the .deb packages")
set(TPKIT_DEB_VERSION "${PROJECT_VERSION}-1")
configure_file(packaging/changelog.in "${CMAKE_CURRENT_BINARY_DIR}/packaging/changelog.Debian" @ONLY)
add_custom_command(OUTPUT "${CMAKE_CURRENT_BINARY_DIR}/packaging/changelog.Debian.gz"
  COMMAND gzip -9nf -k "${CMAKE_CURRENT_BINARY_DIR}/packaging/changelog.Debian"
  DEPENDS "${CMAKE_CURRENT_BINARY_DIR}/packaging/changelog.Debian" VERBATIM)
add_custom_target(tpkit_deb_changelog ALL DEPENDS "${CMAKE_CURRENT_BINARY_DIR}/packaging/changelog.Debian.gz")
foreach(pair tools:tpkit dev:libtpkit-dev)
  string(REPLACE ":" ";" pair "${pair}")
  list(GET pair 0 component)
  list(GET pair 1 package)
  install(FILES packaging/copyright "${CMAKE_CURRENT_BINARY_DIR}/packaging/changelog.Debian.gz"
          DESTINATION "${CMAKE_INSTALL_DATADIR}/doc/${package}" COMPONENT ${component})
endforeach()

set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME tpkit)
set(CPACK_PACKAGE_VERSION "${PROJECT_VERSION}")
set(CPACK_PACKAGE_CONTACT "${TPKIT_DEB_MAINTAINER}")
set(CPACK_STRIP_FILES ON)
set(CPACK_DEB_COMPONENT_INSTALL ON)
set(CPACK_COMPONENTS_ALL tools dev)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_RELEASE 1)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
set(CPACK_DEBIAN_PACKAGE_PRIORITY optional)
set(CPACK_POST_BUILD_SCRIPTS "${PROJECT_SOURCE_DIR}/cmake/deb-post-build.cmake")
set(CPACK_DEBIAN_TOOLS_PACKAGE_NAME tpkit)
set(CPACK_DEBIAN_TOOLS_PACKAGE_SECTION admin)
set(CPACK_DEBIAN_TOOLS_DESCRIPTION "tracing tools on kernel tracepoints, built on eBPF
tpkit's tools attach BPF programs to the kernel's tracepoints (classic and
raw, CO-RE) and show what they see: forks, execs, exits, signals, file
opens, block I/O and scheduler latency, TCP connections, drops and
retransmits, and more, in the style of bcc's tools, with JSON output.
tplist, tpsnoop, tpcount and tphist work on any tracepoint.
.
All tools are one executable, tpkit, run as 'tpkit TOOL' or by the
tool's name.")
set(CPACK_DEBIAN_DEV_PACKAGE_NAME libtpkit-dev)
set(CPACK_DEBIAN_DEV_PACKAGE_SECTION libdevel)
# One line: a Depends field may not span lines (lintian: multiline-field).
set(CPACK_DEBIAN_DEV_PACKAGE_DEPENDS
    "libbpf-dev, libelf-dev, libcap-dev, zlib1g-dev, libfmt-dev, libcli11-dev, pkg-config, libtraceevent-dev")
set(CPACK_DEBIAN_DEV_PACKAGE_RECOMMENDS "clang, llvm, bpftool, cmake")
set(CPACK_DEBIAN_DEV_DESCRIPTION "library and CMake package to write tracepoint tools with eBPF
libtpkit is the library tpkit's tools are made of: loading BPF skeletons,
reading ring and perf buffers, decoding tracepoint events, histograms,
tables and JSON output. The package has its headers, the BPF helper
headers and vmlinux.h, the CMake package (find_package(tpkit),
tpkit_bpf_skeleton()) and tpgen, which generates tracepoint context
headers.")
include(CPack)
