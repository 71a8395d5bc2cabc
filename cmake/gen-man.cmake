# SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
# A tool's man page: NAME, SYNOPSIS, OPTIONS and --help's EXAMPLES from `TOOL --man-page` (the
# definitions --help prints), DESCRIPTION, example output and SEE ALSO from docs/man/TOOL.roff,
# EXIT STATUS from docs/man/exit-status.roff, and how the tool is run.
#   cmake -DTOOL=name -DPAGE=name -DMULTICALL=ON|OFF -DBINARY=path -DSECTION=8 -DVERSION=x.y.z
#         -DDOCS=docs/man -DOUTPUT=page [-DCHECK=ON] -P gen-man.cmake
# PAGE: the page's name, tpkit-TOOL for a name Debian's libbpf-tools has too (cmake/TpkitMan.cmake);
# MULTICALL: `tpkit TOOL` runs it. With CHECK, OUTPUT is compared instead of written: the script
# fails when it is stale.
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
string(TOUPPER "${PAGE}" title)

# How it is run, after the description's last sentence (README "Installing").
if(MULTICALL)
  string(REGEX REPLACE "\n$" "" description "${description}")
  if(PAGE STREQUAL TOOL)
    string(APPEND description " Also run as \\fBtpkit ${TOOL}\\fR.\n")
  else()
    # The name is libbpf-tools' program in /usr/sbin: the page, its synopsis and its examples
    # say `tpkit TOOL`.
    string(APPEND description "
.PP
Debian's libbpf\\-tools has its own \\fB${TOOL}\\fR, \\fI/usr/sbin/${TOOL}\\fR:
\\%tpkit's is run as \\fBtpkit ${TOOL}\\fR, as \\fI/usr/libexec/tpkit/${TOOL}\\fR, or as
\\fB${TOOL}\\fR with \\fI/usr/libexec/tpkit\\fR first in \\fBPATH\\fR.\n")
    string(REGEX REPLACE "^\\.SH NAME\n${TOOL} " ".SH NAME\ntpkit\\\\-${TOOL} " head "${head}")
    string(REPLACE "\n.B ${TOOL}\n" "\n.B tpkit ${TOOL}\n" head "${head}")
    foreach(part commands output)
      string(REGEX REPLACE "(^|\n)(#? *)${TOOL}( |\n)" "\\1\\2tpkit ${TOOL}\\3" ${part} "${${part}}")
    endforeach()
  endif()
endif()

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
