# Finds the dependencies the way HPC codes do (find_package, honouring Kokkos_ROOT,
# KokkosKernels_ROOT, CMAKE_PREFIX_PATH) and gives each one a single target name:
#   miniapp::kokkos, miniapp::kokkoskernels, miniapp::yaml-cpp

find_package(Kokkos REQUIRED)
add_library(miniapp_kokkos INTERFACE)
target_link_libraries(miniapp_kokkos INTERFACE Kokkos::kokkos)
add_library(miniapp::kokkos ALIAS miniapp_kokkos)

# Standalone Kokkos Kernels exports Kokkos::kokkoskernels; bundled with Trilinos it exports
# KokkosKernels::all_libs (newer) or KokkosKernels::kokkoskernels.
find_package(KokkosKernels REQUIRED)
add_library(miniapp_kokkoskernels INTERFACE)
foreach(candidate Kokkos::kokkoskernels KokkosKernels::all_libs KokkosKernels::kokkoskernels)
  if(TARGET ${candidate})
    target_link_libraries(miniapp_kokkoskernels INTERFACE ${candidate})
    set(MINIAPP_KOKKOSKERNELS_TARGET ${candidate})
    break()
  endif()
endforeach()
if(NOT MINIAPP_KOKKOSKERNELS_TARGET)
  message(FATAL_ERROR "KokkosKernels was found in ${KokkosKernels_DIR} but exports none of "
                      "Kokkos::kokkoskernels, KokkosKernels::all_libs, KokkosKernels::kokkoskernels")
endif()
add_library(miniapp::kokkoskernels ALIAS miniapp_kokkoskernels)

# yaml-cpp 0.7 exports `yaml-cpp`, 0.8 `yaml-cpp::yaml-cpp`.
find_package(yaml-cpp REQUIRED)
add_library(miniapp_yaml_cpp INTERFACE)
if(TARGET yaml-cpp::yaml-cpp)
  target_link_libraries(miniapp_yaml_cpp INTERFACE yaml-cpp::yaml-cpp)
elseif(TARGET yaml-cpp)
  target_link_libraries(miniapp_yaml_cpp INTERFACE yaml-cpp)
else()
  message(FATAL_ERROR "yaml-cpp was found but exports neither yaml-cpp::yaml-cpp nor yaml-cpp")
endif()
add_library(miniapp::yaml-cpp ALIAS miniapp_yaml_cpp)

message(STATUS "miniapp: Kokkos ${Kokkos_VERSION} (${Kokkos_DIR}), devices: ${Kokkos_DEVICES}")
message(STATUS "miniapp: Kokkos Kernels ${KokkosKernels_VERSION} via ${MINIAPP_KOKKOSKERNELS_TARGET}")
