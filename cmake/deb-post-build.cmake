# SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
# CPack post-build script (CPACK_POST_BUILD_SCRIPTS), what dh_strip and dpkg-gencontrol would do:
# - static libraries lose their debug information (CPACK_STRIP_FILES strips executables only),
#   most of libtpkit.a's size;
# - Installed-Size is recomputed as dpkg-gencontrol does (each file's size in KiB, rounded up;
#   links and directories 1): CPack counts a symlink as the file it points to, which made each
#   of the tools' links to sbin/tpkit count as the whole executable, the package's size many
#   times over.
# The sizes: bench/BENCHMARKS.md, "Figures the comments point to".
# The package is then rebuilt (md5sums are recomputed for the stripped files).
foreach(deb IN LISTS CPACK_PACKAGE_FILES)
  if(NOT deb MATCHES "\\.deb$")
    continue()
  endif()
  set(tree "${deb}.tree")
  file(REMOVE_RECURSE "${tree}")
  execute_process(COMMAND dpkg-deb -R "${deb}" "${tree}" COMMAND_ERROR_IS_FATAL ANY)
  file(GLOB_RECURSE archives "${tree}/*.a")
  foreach(archive IN LISTS archives)
    execute_process(COMMAND strip --strip-debug --enable-deterministic-archives "${archive}"
                    COMMAND_ERROR_IS_FATAL ANY)
  endforeach()
  if(archives)
    execute_process(COMMAND sh -c "find . -type f ! -path './DEBIAN/*' -printf '%P\\n' | sort | xargs md5sum > DEBIAN/md5sums"
                    WORKING_DIRECTORY "${tree}" COMMAND_ERROR_IS_FATAL ANY)
  endif()
  file(GLOB_RECURSE entries LIST_DIRECTORIES true RELATIVE "${tree}" "${tree}/*")
  set(kib 0)
  foreach(entry IN LISTS entries)
    if(entry MATCHES "^DEBIAN(/|$)")
      continue()
    endif()
    if(IS_SYMLINK "${tree}/${entry}" OR IS_DIRECTORY "${tree}/${entry}")
      math(EXPR kib "${kib} + 1")
    else()
      file(SIZE "${tree}/${entry}" bytes)
      math(EXPR kib "${kib} + (${bytes} + 1023) / 1024")
    endif()
  endforeach()
  file(READ "${tree}/DEBIAN/control" control)
  string(REGEX REPLACE "Installed-Size: [0-9]+" "Installed-Size: ${kib}" control "${control}")
  file(WRITE "${tree}/DEBIAN/control" "${control}")
  execute_process(COMMAND dpkg-deb --root-owner-group -Zxz -b "${tree}" "${deb}"
                  OUTPUT_QUIET COMMAND_ERROR_IS_FATAL ANY)
  file(REMOVE_RECURSE "${tree}")
endforeach()
