# SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
# Man pages, made at build time into build/man/ by cmake/gen-man.cmake from the tool itself
# (`TOOL --man-page`: the definitions --help prints) and the hand-written docs/man/TOOL.roff.
# tests/man checks that each is current and renders without groff warnings.
include_guard(GLOBAL)
set(TPKIT_MAN_DIR "${CMAKE_BINARY_DIR}/man")
file(MAKE_DIRECTORY "${TPKIT_MAN_DIR}")
add_custom_target(man-pages ALL)
# A new docs/man/TOOL.roff re-configures, so that its page depends on it.
file(GLOB tpkit_man_sources CONFIGURE_DEPENDS "${PROJECT_SOURCE_DIR}/docs/man/*.roff")

# tpkit_man_page_name(TOOL OUT): the name of TOOL's page. A name Debian's libbpf-tools has too
# is that program's (`man runqlat` must not describe another program): the page is tpkit-TOOL.
function(tpkit_man_page_name tool out)
  if(tool IN_LIST TPKIT_LIBBPF_TOOLS_NAMES)
    set(${out} "tpkit-${tool}" PARENT_SCOPE)
  else()
    set(${out} "${tool}" PARENT_SCOPE)
  endif()
endfunction()

# tpkit_man_page(TOOL SECTION): TOOL's page, TOOL being an executable target.
function(tpkit_man_page tool section)
  tpkit_man_page_name(${tool} name)
  set(page "${TPKIT_MAN_DIR}/${name}.${section}")
  set(docs "${PROJECT_SOURCE_DIR}/docs/man")
  set(hand "")
  if(EXISTS "${docs}/${tool}.roff")
    set(hand "${docs}/${tool}.roff")
  endif()
  set(multicall OFF)
  if(tool IN_LIST TPKIT_MULTICALL_TOOLS)
    set(multicall ON)
  endif()
  set(args -DTOOL=${tool} -DPAGE=${name} -DMULTICALL=${multicall} -DSECTION=${section}
           -DVERSION=${PROJECT_VERSION} -DDOCS=${docs})
  # page.gz for the packages (Debian's man pages are compressed)
  add_custom_command(OUTPUT "${page}" "${page}.gz"
    COMMAND "${CMAKE_COMMAND}" ${args} -DBINARY=$<TARGET_FILE:${tool}> -DOUTPUT=${page}
            -P "${PROJECT_SOURCE_DIR}/cmake/gen-man.cmake"
    COMMAND gzip -9nfk "${page}"
    DEPENDS ${tool} ${hand} "${docs}/exit-status.roff" "${PROJECT_SOURCE_DIR}/cmake/gen-man.cmake"
    VERBATIM)
  add_custom_target(man-${tool} DEPENDS "${page}")
  add_dependencies(man-pages man-${tool})
  set_property(GLOBAL APPEND PROPERTY TPKIT_MAN_PAGES ${tool})
  # what tests/man gives gen-man.cmake to check the page
  set_property(GLOBAL PROPERTY TPKIT_MAN_ARGS_${tool} ${args})
  set_property(GLOBAL PROPERTY TPKIT_MAN_PAGE_${tool} "${page}")
endfunction()

# Section 8: the tools need root. tpgen runs at build time, as a user: section 1.
foreach(tool IN LISTS TPKIT_TOOLS)
  if(tool STREQUAL "tpgen")
    tpkit_man_page(${tool} 1)
  else()
    tpkit_man_page(${tool} 8)
  endif()
endforeach()
