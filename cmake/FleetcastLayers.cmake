# fleetcast_add_layer(<name> SOURCES <files...> [DEPENDS <layers...>] [PRIVATE_LIBS <targets...>])
#
# Declares one folder of the library as an object library `fleetcast_<name>`. DEPENDS names the
# layers whose headers it may use (documentation of the layering as much as a build rule);
# PRIVATE_LIBS are third-party targets it compiles and links against (SQLite, Eigen, ...). The
# third-party link requirements are collected in `fleetcast_layer_link_<name>` so the shared and
# static libraries, and test executables, link what the layer's objects need.
function(fleetcast_add_layer name)
  cmake_parse_arguments(ARG "" "" "SOURCES;DEPENDS;PRIVATE_LIBS" ${ARGN})
  add_library(fleetcast_${name} OBJECT ${ARG_SOURCES})
  target_include_directories(fleetcast_${name}
    PUBLIC  ${PROJECT_SOURCE_DIR}/include ${PROJECT_BINARY_DIR}/include
    PRIVATE ${PROJECT_SOURCE_DIR})
  target_link_libraries(fleetcast_${name} PRIVATE fleetcast_build_options ${ARG_PRIVATE_LIBS})
  foreach(dep IN LISTS ARG_DEPENDS)
    if(NOT TARGET fleetcast_${dep})
      message(FATAL_ERROR "layer ${name} depends on ${dep}, which is not declared before it")
    endif()
  endforeach()
  add_library(fleetcast_layer_link_${name} INTERFACE)
  target_link_libraries(fleetcast_layer_link_${name} INTERFACE Threads::Threads ${ARG_PRIVATE_LIBS})
  set_property(TARGET fleetcast_${name} PROPERTY FLEETCAST_DEPENDS ${ARG_DEPENDS})
  set_property(GLOBAL APPEND PROPERTY FLEETCAST_LAYERS ${name})
endfunction()

# fleetcast_link_layers(<target> <layers...>): links the objects of the named layers and of every
# layer they depend on (transitively) into an executable, with their third-party libraries.
function(fleetcast_link_layers target)
  set(pending ${ARGN})
  set(done)
  while(pending)
    list(POP_FRONT pending layer)
    if(layer IN_LIST done)
      continue()
    endif()
    list(APPEND done ${layer})
    get_property(deps TARGET fleetcast_${layer} PROPERTY FLEETCAST_DEPENDS)
    list(APPEND pending ${deps})
  endwhile()
  foreach(layer IN LISTS done)
    target_sources(${target} PRIVATE $<TARGET_OBJECTS:fleetcast_${layer}>)
    target_link_libraries(${target} PRIVATE fleetcast_layer_link_${layer})
  endforeach()
  target_include_directories(${target} PRIVATE
    ${PROJECT_SOURCE_DIR}/include ${PROJECT_BINARY_DIR}/include ${PROJECT_SOURCE_DIR})
endfunction()
