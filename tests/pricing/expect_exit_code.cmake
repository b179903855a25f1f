# cmake -DEXPECTED=<code> -DPROGRAM=<exe> -DARGS=<arg|arg|...> -P expect_exit_code.cmake
# Runs PROGRAM with ARGS ('|'-separated) and fails unless it exits with EXPECTED; ctest's
# WILL_FAIL only knows "non-zero", and the CLI promises distinct codes.
string(REPLACE "|" ";" arguments "${ARGS}")
execute_process(COMMAND ${PROGRAM} ${arguments} RESULT_VARIABLE code OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT code EQUAL EXPECTED)
  message(FATAL_ERROR "expected exit code ${EXPECTED}, got ${code}\nstdout: ${out}\nstderr: ${err}")
endif()
message(STATUS "exit code ${code} as expected: ${err}")
