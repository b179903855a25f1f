# Decides whether `fleetcast batch --mpi` is built: FLEETCAST_MPI=AUTO builds it when an MPI C
# library is found (Open MPI from Debian: libopenmpi-dev), ON requires it, OFF skips it. Sets
# FLEETCAST_HAVE_MPI. MPI is used by the CLI's batch runner only, never by the library.
set(FLEETCAST_HAVE_MPI OFF)
if(NOT FLEETCAST_MPI STREQUAL "OFF")
  enable_language(C)  # FindMPI checks the C library with the C compiler
  find_package(MPI COMPONENTS C)
  if(MPI_C_FOUND)
    set(FLEETCAST_HAVE_MPI ON)
    message(STATUS "fleetcast: MPI batch runner ON (MPI ${MPI_C_VERSION}, launcher ${MPIEXEC_EXECUTABLE})")
  elseif(FLEETCAST_MPI STREQUAL "ON")
    message(FATAL_ERROR "FLEETCAST_MPI=ON but no MPI C library was found (install libopenmpi-dev)")
  else()
    message(STATUS "fleetcast: MPI batch runner OFF (no MPI C library found)")
  endif()
else()
  message(STATUS "fleetcast: MPI batch runner OFF (FLEETCAST_MPI=OFF)")
endif()
