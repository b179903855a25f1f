# Compiles each installed public header on its own and fails if it pulls in Eigen, Boost, SQLite,
# nlohmann/json or CUDA headers: the public API must not expose the library's dependencies.
# Usage: cmake -DCXX=<compiler> -DPREFIX=<install prefix> -P check_public_headers.cmake
file(GLOB headers ${PREFIX}/include/fleetcast/*.h)
list(LENGTH headers count)
if(count EQUAL 0)
  message(FATAL_ERROR "no public headers under ${PREFIX}/include/fleetcast")
endif()
foreach(header IN LISTS headers)
  execute_process(
    COMMAND ${CXX} -std=c++20 -fsyntax-only -H -x c++ -I${PREFIX}/include ${header}
    RESULT_VARIABLE result ERROR_VARIABLE included OUTPUT_QUIET)
  if(NOT result EQUAL 0)
    message(FATAL_ERROR "${header} does not compile on its own:\n${included}")
  endif()
  if(included MATCHES "(eigen3|boost/|nlohmann|sqlite3\\.h|cuda|CLI/)")
    message(FATAL_ERROR "${header} includes a third-party header (${CMAKE_MATCH_1}):\n${included}")
  endif()
endforeach()
message(STATUS "${count} public headers compile alone without third-party headers")
