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

# tpkit_man_page(TOOL SECTION): TOOL's page, TOOL being an executable target.
function(tpkit_man_page tool section)
  set(page "${TPKIT_MAN_DIR}/${tool}.${section}")
  set(docs "${PROJECT_SOURCE_DIR}/docs/man")
  set(hand "")
  if(EXISTS "${docs}/${tool}.roff")
    set(hand "${docs}/${tool}.roff")
  endif()
  # page.gz for the packages (Debian's man pages are compressed)
  add_custom_command(OUTPUT "${page}" "${page}.gz"
    COMMAND "${CMAKE_COMMAND}" -DTOOL=${tool} -DBINARY=$<TARGET_FILE:${tool}>
            -DSECTION=${section} -DVERSION=${PROJECT_VERSION} -DDOCS=${docs} -DOUTPUT=${page}
            -P "${PROJECT_SOURCE_DIR}/cmake/gen-man.cmake"
    COMMAND gzip -9nfk "${page}"
    DEPENDS ${tool} ${hand} "${docs}/exit-status.roff" "${PROJECT_SOURCE_DIR}/cmake/gen-man.cmake"
    VERBATIM)
  add_custom_target(man-${tool} DEPENDS "${page}")
  add_dependencies(man-pages man-${tool})
  set_property(GLOBAL APPEND PROPERTY TPKIT_MAN_PAGES "${tool}.${section}")
endfunction()

# Section 8: the tools need root. tpgen runs at build time, as a user: section 1.
foreach(tool IN LISTS TPKIT_TOOLS)
  if(tool STREQUAL "tpgen")
    tpkit_man_page(${tool} 1)
  else()
    tpkit_man_page(${tool} 8)
  endif()
endforeach()
