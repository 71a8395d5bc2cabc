# SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
# The bash completion file: each tool's options from `TOOL --completion-options` (the
# definitions --help prints; after " =", what completes an option's value), then the logic of
# completions/tpkit.bash.
#   cmake "-DTOOLS=name=binary|..." "-DMULTICALL=name ..." "-DCOMMANDS=name ..."
#         -DLOGIC=completions/tpkit.bash -DOUTPUT=file -P gen-completion.cmake
# MULTICALL: the tools `tpkit TOOL` runs; COMMANDS: the commands completed by their name.
set(tables "")
string(REPLACE "|" ";" TOOLS "${TOOLS}")
foreach(entry IN LISTS TOOLS)
  string(REGEX REPLACE "=.*" "" name "${entry}")
  string(REGEX REPLACE "^[^=]*=" "" binary "${entry}")
  execute_process(COMMAND "${binary}" --completion-options OUTPUT_VARIABLE lines
                  RESULT_VARIABLE failed)
  if(failed)
    message(FATAL_ERROR "${binary} --completion-options failed: ${failed}")
  endif()
  string(REGEX REPLACE "\n$" "" lines "${lines}")
  string(REPLACE "\n" ";" lines "${lines}")
  set(all "")
  set(with_value "")
  set(values "")
  foreach(line IN LISTS lines)
    string(REGEX REPLACE " =.*" "" option_names "${line}")
    string(APPEND all " ${option_names}")
    if(line MATCHES " =")
      string(APPEND with_value " ${option_names}")
    endif()
    if(line MATCHES " = (.+)$")
      set(words "${CMAKE_MATCH_1}")
      string(REPLACE " " ";" option_names "${option_names}")
      foreach(option IN LISTS option_names)
        string(APPEND values "_tpkit_values[${name}:${option}]='${words}'\n")
      endforeach()
    endif()
  endforeach()
  string(STRIP "${all}" all)
  string(STRIP "${with_value}" with_value)
  string(APPEND tables "_tpkit_opts[${name}]='${all}'\n_tpkit_value_opts[${name}]='${with_value}'\n${values}")
endforeach()
file(READ "${LOGIC}" logic)
# The licence line first, as in every source file.
string(REGEX MATCH "^[^\n]*\n" licence "${logic}")
string(LENGTH "${licence}" skip)
string(SUBSTRING "${logic}" ${skip} -1 logic)
set(text "${licence}# Generated from completions/tpkit.bash and each tool's --completion-options.
_tpkit_tools='${MULTICALL}'
_tpkit_commands='${COMMANDS}'
declare -gA _tpkit_opts _tpkit_value_opts _tpkit_values
${tables}${logic}")
file(WRITE "${OUTPUT}" "${text}")
