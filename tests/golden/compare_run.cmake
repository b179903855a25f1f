# Runs `fleetcast run SCENARIO --json --trace` and compares what it wrote with the golden files:
# GOLDEN.report.json and GOLDEN.trace.txt for a scenario that runs, GOLDEN.error.txt for one that
# stops with an error.
execute_process(COMMAND ${FLEETCAST} run ${SCENARIO} --json --trace ${ACTUAL}.trace.txt
                OUTPUT_FILE ${ACTUAL}.report.json ERROR_FILE ${ACTUAL}.error.txt RESULT_VARIABLE result)
if(EXISTS ${GOLDEN}.error.txt)
  set(pairs error.txt)
  if(result EQUAL 0)
    message(FATAL_ERROR "${SCENARIO} ran, but ${GOLDEN}.error.txt says it stops with an error")
  endif()
else()
  set(pairs report.json trace.txt)
  if(NOT result EQUAL 0)
    file(READ ${ACTUAL}.error.txt error)
    message(FATAL_ERROR "${SCENARIO} failed (exit ${result}): ${error}")
  endif()
endif()
foreach(suffix IN LISTS pairs)
  execute_process(COMMAND ${CMAKE_COMMAND} -E compare_files ${GOLDEN}.${suffix} ${ACTUAL}.${suffix}
                  RESULT_VARIABLE differs)
  if(differs)
    message(FATAL_ERROR "${ACTUAL}.${suffix} differs from the golden ${GOLDEN}.${suffix}; "
                        "if the change is intended, run tools/regenerate_golden.sh and review the diff")
  endif()
endforeach()
