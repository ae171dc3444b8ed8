# The workloads' sources: each folder miniapp/workloads/<w>/ registers its workload in <w>.cpp
# (MINIAPP_REGISTER_WORKLOAD(Type)) and declares it in <w>.hpp. For every workload and every
# execution space Kokkos was built with, a compile unit is generated that instantiates the
# workload's kernels on that space (miniapp::Instances, miniapp/core/workload.hpp), as ArborX and
# Cabana generate their per-backend units.
#
#   miniapp_workload_sources(<out-var>)   registration sources and generated units

include(MiniappSpaces)

function(miniapp_workload_sources out)
  set(sources)
  file(GLOB registrations CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/miniapp/workloads/*/*.cpp)
  foreach(registration ${registrations})
    get_filename_component(dir ${registration} DIRECTORY)
    get_filename_component(workload ${dir} NAME)
    get_filename_component(stem ${registration} NAME_WE)
    if(NOT stem STREQUAL workload)
      message(FATAL_ERROR "${registration}: a workload folder holds one source, <folder>.cpp, its registration")
    endif()
    file(STRINGS ${registration} line REGEX "MINIAPP_REGISTER_WORKLOAD\\(")
    if(NOT line MATCHES "MINIAPP_REGISTER_WORKLOAD\\(([^)]+)\\)")
      message(FATAL_ERROR "${registration}: no MINIAPP_REGISTER_WORKLOAD(Type) line")
    endif()
    set(MINIAPP_WORKLOAD_TYPE ${CMAKE_MATCH_1})
    set(MINIAPP_WORKLOAD_HEADER miniapp/workloads/${workload}/${workload}.hpp)
    # The problem classes' kernels are defined apart (problem_timpl.hpp) and instantiated in these
    # units only (instances.hpp), not again in every test and benchmark that uses the classes.
    if(NOT EXISTS ${dir}/instances.hpp)
      message(FATAL_ERROR "${dir}: no instances.hpp (the explicit instantiations of the workload's problem classes)")
    endif()
    set(MINIAPP_WORKLOAD_INSTANCES miniapp/workloads/${workload}/instances.hpp)
    list(APPEND sources ${registration})
    miniapp_compiled_spaces(compiled)
    foreach(entry ${compiled})
      miniapp_space_fields("${entry}" space)
      set(MINIAPP_SPACE_TYPE ${space_TYPE})
      set(unit ${PROJECT_BINARY_DIR}/generated/workloads/${workload}_${space_NAME}.cpp)
      configure_file(${PROJECT_SOURCE_DIR}/cmake/workload_instance.cpp.in ${unit} @ONLY)
      # Each unit names its own space (miniapp::instance::Space): never merged with another in a
      # unity build (the device compile checks build so).
      set_source_files_properties(${unit} PROPERTIES SKIP_UNITY_BUILD_INCLUSION ON)
      list(APPEND sources ${unit})
    endforeach()
  endforeach()
  set(${out} ${sources} PARENT_SCOPE)
endfunction()
