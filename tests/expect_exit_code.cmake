# cmake -DEXPECTED=<code> -DPROGRAM=<exe> -DARGS=<arg|arg|...> [-DPATTERN=<regex>] [-DABSENT=<path|path|...>]
#       -P expect_exit_code.cmake
# Runs PROGRAM with ARGS ('|'-separated) and fails unless it exits with EXPECTED, its stdout and
# stderr together match PATTERN (when given), and none of the ABSENT paths exists afterwards.
# ctest's PASS_REGULAR_EXPRESSION ignores the exit code and WILL_FAIL only knows "non-zero", while
# the CLI promises distinct codes and that a refused command writes nothing.
string(REPLACE "|" ";" arguments "${ARGS}")
execute_process(COMMAND ${PROGRAM} ${arguments} RESULT_VARIABLE code OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT code STREQUAL "${EXPECTED}")
  message(FATAL_ERROR "expected exit code ${EXPECTED}, got ${code}\nstdout: ${out}\nstderr: ${err}")
endif()
if(DEFINED PATTERN AND NOT "${out}${err}" MATCHES "${PATTERN}")
  message(FATAL_ERROR "exit code ${code} as expected, but the output does not match '${PATTERN}'\nstdout: ${out}\nstderr: ${err}")
endif()
string(REPLACE "|" ";" absent_paths "${ABSENT}")
foreach(path IN LISTS absent_paths)
  if(EXISTS "${path}")
    message(FATAL_ERROR "exit code ${code} as expected, but ${path} was written\nstderr: ${err}")
  endif()
endforeach()
message(STATUS "exit code ${code} as expected: ${out}${err}")
