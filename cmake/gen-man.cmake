# SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
# A tool's man page: NAME, SYNOPSIS, OPTIONS and --help's EXAMPLES from `TOOL --man-page` (the
# definitions --help prints), DESCRIPTION, example output and SEE ALSO from docs/man/TOOL.roff,
# EXIT STATUS from docs/man/exit-status.roff.
#   cmake -DTOOL=name -DBINARY=path -DSECTION=8 -DVERSION=x.y.z -DDOCS=docs/man -DOUTPUT=page
#         [-DCHECK=ON] -P gen-man.cmake
# With CHECK, OUTPUT is compared instead of written: the script fails when it is stale.
execute_process(COMMAND "${BINARY}" --man-page OUTPUT_VARIABLE generated RESULT_VARIABLE failed)
if(failed)
  message(FATAL_ERROR "${BINARY} --man-page failed: ${failed}")
endif()
set(hand_file "${DOCS}/${TOOL}.roff")
if(EXISTS "${hand_file}")
  file(READ "${hand_file}" hand)
else()
  set(hand ".SH DESCRIPTION\n(${hand_file} is missing.)\n.SH EXAMPLES\n.SH SEE ALSO\n")
endif()
file(READ "${DOCS}/exit-status.roff" exit_status)

# The text of SOURCE from heading FROM up to heading TO (or the end when TO is empty).
function(between out source from to)
  string(FIND "${source}" "${from}" start)
  if(start LESS 0)
    message(FATAL_ERROR "${TOOL}: no '${from}' in its man page parts")
  endif()
  string(SUBSTRING "${source}" ${start} -1 rest)
  if(to)
    string(FIND "${rest}" "${to}" end)
    if(end LESS 0)
      message(FATAL_ERROR "${TOOL}: no '${to}' after '${from}' in its man page parts")
    endif()
    string(SUBSTRING "${rest}" 0 ${end} rest)
  endif()
  set(${out} "${rest}" PARENT_SCOPE)
endfunction()

between(head "${generated}" ".SH NAME\n" ".SH OPTIONS\n")
between(options "${generated}" ".SH OPTIONS\n" ".SH EXAMPLES\n")
between(commands "${generated}" ".SH EXAMPLES\n" "")
between(description "${hand}" ".SH DESCRIPTION\n" ".SH EXAMPLES\n")
between(output "${hand}" ".SH EXAMPLES\n" ".SH SEE ALSO\n")
between(see_also "${hand}" ".SH SEE ALSO\n" "")
string(REPLACE ".SH EXAMPLES\n" "" output "${output}")
string(TOUPPER "${TOOL}" title)

set(page ".\\\" Generated from `${TOOL} --man-page` and docs/man/${TOOL}.roff: edit those.
.TH ${title} ${SECTION} \"\" \"tpkit ${VERSION}\" \"tpkit\"
${head}${description}${options}${commands}${output}${exit_status}${see_also}")

if(CHECK)
  file(READ "${OUTPUT}" built)
  if(NOT built STREQUAL page)
    message(FATAL_ERROR "${OUTPUT} is stale: rebuild (target man-pages)")
  endif()
else()
  file(WRITE "${OUTPUT}" "${page}")
endif()
