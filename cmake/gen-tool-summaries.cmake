# SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
# The one-line summaries `tpkit` prints of its tools: from each tool's man page NAME line
# (`TOOL --man-page`, its description's first sentence), up to its first ": ".
#   cmake "-DTOOLS=name=binary|..." -DOUTPUT=file -P gen-tool-summaries.cmake
set(text "")
string(REPLACE "|" ";" TOOLS "${TOOLS}")
foreach(entry IN LISTS TOOLS)
  string(REGEX REPLACE "=.*" "" name "${entry}")
  string(REGEX REPLACE "^[^=]*=" "" binary "${entry}")
  execute_process(COMMAND "${binary}" --man-page OUTPUT_VARIABLE page RESULT_VARIABLE failed)
  if(failed OR NOT page MATCHES "\\.SH NAME\n[^\n]* \\\\- ([^\n]*)")
    message(FATAL_ERROR "${binary} --man-page has no NAME line (${failed})")
  endif()
  set(summary "${CMAKE_MATCH_1}")
  string(REGEX REPLACE ": .*" "" summary "${summary}")
  string(REPLACE "\\-" "-" summary "${summary}")
  string(REPLACE "\\(em" "—" summary "${summary}")
  string(REGEX REPLACE "\\\\f[BIRP]" "" summary "${summary}")
  string(REPLACE "\\" "\\\\" summary "${summary}")
  string(REPLACE "\"" "\\\"" summary "${summary}")
  string(APPEND text "{\"${name}\", \"${summary}\"},\n")
endforeach()
file(WRITE "${OUTPUT}.new" "${text}")
file(COPY_FILE "${OUTPUT}.new" "${OUTPUT}" ONLY_IF_DIFFERENT)
