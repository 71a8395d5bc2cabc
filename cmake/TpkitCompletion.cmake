# SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
# bash and zsh completions into build/completions/: the tools' options and what completes their
# values from each tool's --completion-options (cmake/gen-completion.cmake), the logic of
# completions/tpkit.bash. tests/completion drives them.
include_guard(GLOBAL)
set(TPKIT_COMPLETION_DIR "${CMAKE_BINARY_DIR}/completions")
# The commands whose options are completed (tests/completion too)
set(TPKIT_COMPLETED ${TPKIT_TOOLS})
if(TARGET tpkit-exporter)
  list(APPEND TPKIT_COMPLETED tpkit-exporter)
endif()
# Completed by their name: tpkit and the commands but those whose name Debian's libbpf-tools
# has too, which are its programs (README "Installing"); tpkit's are completed as `tpkit TOOL`
# and by their path in libexec/tpkit/.
set(TPKIT_COMPLETION_COMMANDS tpkit ${TPKIT_COMPLETED})
list(REMOVE_ITEM TPKIT_COMPLETION_COMMANDS ${TPKIT_LIBBPF_TOOLS_NAMES})
set(tpkit_completion_tools "")
foreach(tool IN LISTS TPKIT_COMPLETED)
  list(APPEND tpkit_completion_tools "${tool}=$<TARGET_FILE:${tool}>")
endforeach()
# '|' between the tools: a ';' would split the argument.
list(JOIN tpkit_completion_tools "|" tpkit_completion_tools)
string(JOIN " " tpkit_multicall ${TPKIT_MULTICALL_TOOLS})
string(JOIN " " TPKIT_COMPLETION_NAMES ${TPKIT_COMPLETION_COMMANDS})
add_custom_command(OUTPUT "${TPKIT_COMPLETION_DIR}/tpkit"
  COMMAND "${CMAKE_COMMAND}" "-DTOOLS=${tpkit_completion_tools}" "-DMULTICALL=${tpkit_multicall}"
          "-DCOMMANDS=${TPKIT_COMPLETION_NAMES}"
          "-DLOGIC=${PROJECT_SOURCE_DIR}/completions/tpkit.bash"
          "-DOUTPUT=${TPKIT_COMPLETION_DIR}/tpkit" -P "${PROJECT_SOURCE_DIR}/cmake/gen-completion.cmake"
  DEPENDS ${TPKIT_COMPLETED} "${PROJECT_SOURCE_DIR}/completions/tpkit.bash"
          "${PROJECT_SOURCE_DIR}/cmake/gen-completion.cmake"
  VERBATIM)
configure_file(completions/_tpkit.in "${TPKIT_COMPLETION_DIR}/_tpkit" @ONLY)
add_custom_target(completions ALL DEPENDS "${TPKIT_COMPLETION_DIR}/tpkit")
