# Finds the dependencies the way HPC codes do (find_package, honouring Kokkos_ROOT,
# KokkosKernels_ROOT, CMAKE_PREFIX_PATH) and gives each one a single target name:
#   miniapp::kokkos, miniapp::kokkoskernels, miniapp::vendor-solvers, miniapp::yaml-cpp, miniapp::mpi

find_package(Kokkos REQUIRED)
add_library(miniapp_kokkos INTERFACE)
target_link_libraries(miniapp_kokkos INTERFACE Kokkos::kokkos)
add_library(miniapp::kokkos ALIAS miniapp_kokkos)

# Kokkos Kernels is optional: without it (Debian's Kokkos 5 has none, nor do some sites) the
# variants that call it are absent, `--list` says why and a deck that asks for one is refused.
# MINIAPP_WITH_KOKKOS_KERNELS=AUTO (default) uses it where found, ON requires it, OFF leaves it out.
# Standalone Kokkos Kernels exports Kokkos::kokkoskernels; bundled with Trilinos it exports
# KokkosKernels::all_libs (newer) or KokkosKernels::kokkoskernels.
set(MINIAPP_WITH_KOKKOS_KERNELS AUTO CACHE STRING "Use Kokkos Kernels: AUTO (where found), ON (required), OFF")
set_property(CACHE MINIAPP_WITH_KOKKOS_KERNELS PROPERTY STRINGS AUTO ON OFF)
add_library(miniapp_kokkoskernels INTERFACE)
set(MINIAPP_HAVE_KOKKOS_KERNELS 0)
if(MINIAPP_WITH_KOKKOS_KERNELS STREQUAL "ON")
  find_package(KokkosKernels REQUIRED)
elseif(MINIAPP_WITH_KOKKOS_KERNELS STREQUAL "AUTO")
  find_package(KokkosKernels QUIET)
endif()
if(KokkosKernels_FOUND AND NOT MINIAPP_WITH_KOKKOS_KERNELS STREQUAL "OFF")
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
  set(MINIAPP_HAVE_KOKKOS_KERNELS 1)
  # Trilinos' bundled Kokkos Kernels sets no KokkosKernels_VERSION: read its config header.
  if(NOT KokkosKernels_VERSION)
    find_file(_miniapp_kk_config KokkosKernels_config.h
      HINTS ${KokkosKernels_DIR}/../../../include ${KokkosKernels_DIR}/../../../include/trilinos
      PATH_SUFFIXES trilinos NO_CACHE)
    if(_miniapp_kk_config)
      file(STRINGS ${_miniapp_kk_config} _kk_version REGEX "^#define KOKKOSKERNELS_VERSION [0-9]+")
      if(_kk_version MATCHES "([0-9]+)$")
        math(EXPR _kk_major "${CMAKE_MATCH_1} / 10000")
        math(EXPR _kk_minor "${CMAKE_MATCH_1} / 100 % 100")
        math(EXPR _kk_patch "${CMAKE_MATCH_1} % 100")
        set(KokkosKernels_VERSION "${_kk_major}.${_kk_minor}.${_kk_patch}")
      endif()
    endif()
  endif()
else()
  set(KokkosKernels_VERSION "none")
  set(MINIAPP_KOKKOSKERNELS_TARGET "nothing (not found or MINIAPP_WITH_KOKKOS_KERNELS=OFF: its variants are absent)")
endif()
target_compile_definitions(miniapp_kokkoskernels INTERFACE MINIAPP_HAVE_KOKKOS_KERNELS=${MINIAPP_HAVE_KOKKOS_KERNELS})
add_library(miniapp::kokkoskernels ALIAS miniapp_kokkoskernels)

# The vendor libraries: LAPACK on the host (the solver's dense-vendor variant on host spaces, and
# the benchmarks' BLAS/LAPACK references), cuSOLVER on CUDA, rocSOLVER on HIP (dense-vendor on the
# device). MINIAPP_WITH_VENDOR_SOLVERS=AUTO (default) uses those found, ON requires one for every
# compiled space, OFF leaves them out (dense-vendor is then listed unavailable, with the reason).
# Debian's OpenMP build of OpenBLAS first: its threads are OpenMP's, as Kokkos' are, so the two do
# not fight over the cores (the pthread build does). MINIAPP_HOST_BLAS_LIBRARY names another.
set(MINIAPP_WITH_VENDOR_SOLVERS AUTO CACHE STRING "Use LAPACK / cuSOLVER / rocSOLVER: AUTO (where found), ON (required), OFF")
set_property(CACHE MINIAPP_WITH_VENDOR_SOLVERS PROPERTY STRINGS AUTO ON OFF)
add_library(miniapp_vendor_solvers INTERFACE)
set(MINIAPP_HAVE_HOST_LAPACK 0)
set(MINIAPP_HAVE_CUSOLVER 0)
set(MINIAPP_HAVE_ROCSOLVER 0)
if(NOT MINIAPP_WITH_VENDOR_SOLVERS STREQUAL "OFF")
  find_library(MINIAPP_HOST_BLAS_LIBRARY NAMES openblas
    HINTS /usr/lib/x86_64-linux-gnu/openblas-openmp /usr/lib/aarch64-linux-gnu/openblas-openmp)
  if(NOT MINIAPP_HOST_BLAS_LIBRARY)
    find_package(LAPACK QUIET)
    if(LAPACK_FOUND)
      set(MINIAPP_HOST_BLAS_LIBRARY ${LAPACK_LIBRARIES})
    endif()
  endif()
  if(MINIAPP_HOST_BLAS_LIBRARY)
    target_link_libraries(miniapp_vendor_solvers INTERFACE ${MINIAPP_HOST_BLAS_LIBRARY})
    set(MINIAPP_HAVE_HOST_LAPACK 1)
  endif()
  if("CUDA" IN_LIST Kokkos_DEVICES)
    find_package(CUDAToolkit QUIET)
    if(TARGET CUDA::cusolver)
      target_link_libraries(miniapp_vendor_solvers INTERFACE CUDA::cusolver)
      set(MINIAPP_HAVE_CUSOLVER 1)
    endif()
  endif()
  if("HIP" IN_LIST Kokkos_DEVICES)
    find_package(rocsolver QUIET)
    if(TARGET roc::rocsolver)
      target_link_libraries(miniapp_vendor_solvers INTERFACE roc::rocsolver)
      set(MINIAPP_HAVE_ROCSOLVER 1)
    endif()
  endif()
  if(MINIAPP_WITH_VENDOR_SOLVERS STREQUAL "ON")
    if(NOT MINIAPP_HAVE_HOST_LAPACK)
      message(FATAL_ERROR "MINIAPP_WITH_VENDOR_SOLVERS=ON: no LAPACK found (libopenblas-openmp-dev, or set MINIAPP_HOST_BLAS_LIBRARY)")
    endif()
    if("CUDA" IN_LIST Kokkos_DEVICES AND NOT MINIAPP_HAVE_CUSOLVER)
      message(FATAL_ERROR "MINIAPP_WITH_VENDOR_SOLVERS=ON: CUDA is compiled in but cuSOLVER was not found (CUDAToolkit_ROOT)")
    endif()
    if("HIP" IN_LIST Kokkos_DEVICES AND NOT MINIAPP_HAVE_ROCSOLVER)
      message(FATAL_ERROR "MINIAPP_WITH_VENDOR_SOLVERS=ON: HIP is compiled in but rocSOLVER was not found (rocsolver_ROOT)")
    endif()
  endif()
endif()
target_compile_definitions(miniapp_vendor_solvers INTERFACE MINIAPP_HAVE_HOST_LAPACK=${MINIAPP_HAVE_HOST_LAPACK}
  MINIAPP_HAVE_CUSOLVER=${MINIAPP_HAVE_CUSOLVER} MINIAPP_HAVE_ROCSOLVER=${MINIAPP_HAVE_ROCSOLVER})
add_library(miniapp::vendor-solvers ALIAS miniapp_vendor_solvers)

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

# MPI, for runs split across ranks (miniapp/core/ranks.*): MINIAPP_WITH_MPI=AUTO (default) uses it
# where found, ON requires it, OFF leaves it out (the mini-app then runs as one process, exactly as
# it does under MPI without a launcher). Only MPI's C interface is used.
set(MINIAPP_WITH_MPI AUTO CACHE STRING "Use MPI: AUTO (where found), ON (required), OFF")
set_property(CACHE MINIAPP_WITH_MPI PROPERTY STRINGS AUTO ON OFF)
add_library(miniapp_mpi INTERFACE)
set(MINIAPP_HAVE_MPI 0)
set(MPI_CXX_SKIP_MPICXX ON CACHE BOOL "The C++ bindings of MPI-2 are not used")
if(MINIAPP_WITH_MPI STREQUAL "ON")
  find_package(MPI REQUIRED COMPONENTS CXX)
elseif(MINIAPP_WITH_MPI STREQUAL "AUTO")
  find_package(MPI QUIET COMPONENTS CXX)
endif()
if(MPI_CXX_FOUND AND NOT MINIAPP_WITH_MPI STREQUAL "OFF")
  target_link_libraries(miniapp_mpi INTERFACE MPI::MPI_CXX)
  set(MINIAPP_HAVE_MPI 1)
endif()
target_compile_definitions(miniapp_mpi INTERFACE MINIAPP_HAVE_MPI=${MINIAPP_HAVE_MPI})
add_library(miniapp::mpi ALIAS miniapp_mpi)

message(STATUS "miniapp: Kokkos ${Kokkos_VERSION} (${Kokkos_DIR}), devices: ${Kokkos_DEVICES}")
message(STATUS "miniapp: Kokkos Kernels ${KokkosKernels_VERSION} via ${MINIAPP_KOKKOSKERNELS_TARGET}")
message(STATUS "miniapp: vendor solvers: LAPACK ${MINIAPP_HAVE_HOST_LAPACK} (${MINIAPP_HOST_BLAS_LIBRARY}), "
               "cuSOLVER ${MINIAPP_HAVE_CUSOLVER}, rocSOLVER ${MINIAPP_HAVE_ROCSOLVER}")
message(STATUS "miniapp: MPI ${MINIAPP_HAVE_MPI} (${MPI_CXX_LIBRARIES}; ${MPIEXEC_EXECUTABLE})")
