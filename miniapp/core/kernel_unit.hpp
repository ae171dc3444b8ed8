#pragma once
// Every function template that holds a KOKKOS_LAMBDA ends its template parameters with
// MINIAPP_KERNEL_UNIT, a defaulted parameter whose type is different in every compile unit.
//
// Why: nvcc turns a __host__ __device__ lambda into a wrapper whose copy, call and destroy go
// through function pointers kept in per-unit (unnamed namespace) statics, which the wrapper's
// constructor sets. The wrapper's own functions are inline and shared between units, so when
// two units instantiate the same kernel template (a workload's generated unit and a unit test
// or benchmark that uses the same kernel) the linker keeps one unit's copy constructor and the
// other unit's constructor: the copy then calls a pointer that was never set. The first H100 run
// crashed that way on the host spaces too (unit tests: SolverTest/Serial, MatrixTest/Cuda; the
// matrix benchmark), while the mini-app, where each kernel lives in one unit, ran every deck.
// With a unit-local type among the template arguments, every unit has its own instantiation and
// nothing is shared. tests/device/check_device_build.sh fails when a lambda wrapper is defined
// in more than one object file of the CUDA build.
//
// Costs nothing where it is not needed (host compilers, HIP): the instantiations were per unit
// already, since each unit compiles the kernels it calls.

namespace miniapp::detail {
namespace {
struct ThisUnit {};
}  // namespace
}  // namespace miniapp::detail

#define MINIAPP_KERNEL_UNIT class KernelUnit = ::miniapp::detail::ThisUnit
