#include "miniapp/core/ranks.hpp"

#include "miniapp/core/kokkos_compat.hpp"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <stdexcept>

#if MINIAPP_HAVE_MPI
#include <mpi.h>
#endif

namespace miniapp::ranks {

namespace {
bool g_started = false;  // MPI_Init_thread called by this process's Session
int g_rank = 0;
int g_count = 1;

const char* env(const char* name) {
  const char* v = std::getenv(name);
  return v && *v ? v : nullptr;
}

// The launcher that started this process as one rank of a job, from what it puts in the
// environment; empty when none did.
std::string detect_launcher() {
  const bool slurm_step = env("SLURM_STEP_ID") != nullptr;
  if (slurm_step && (env("PMIX_RANK") || env("PMI_RANK"))) return "srun";
  if (env("OMPI_COMM_WORLD_SIZE")) return "mpirun";
  if (env("PMIX_RANK") || env("PMI_RANK") || env("MV2_COMM_WORLD_SIZE")) return "mpiexec";
  return "";
}
}  // namespace

std::pair<std::size_t, std::size_t> Slice::range(std::size_t items) const {
  const auto n = static_cast<std::size_t>(count), r = static_cast<std::size_t>(rank);
  const std::size_t base = items / n, extra = items % n;
  const std::size_t begin = r * base + std::min(r, extra);
  return {begin, begin + base + (r < extra ? 1 : 0)};
}

bool compiled() { return MINIAPP_HAVE_MPI != 0; }

bool chooses_device(const std::vector<std::string>& kokkos_args) {
  for (const char* variable : {"KOKKOS_DEVICE_ID", "KOKKOS_NUM_DEVICES", "KOKKOS_MAP_DEVICE_ID_BY"})
    if (env(variable)) return true;
  for (const std::string& a : kokkos_args)
    for (const char* flag : {"--kokkos-device", "--kokkos-ndevices", "--kokkos-num-devices", "--kokkos-map-device-id-by"})
      if (a.compare(0, std::strlen(flag), flag) == 0) return true;
  return false;
}

std::vector<std::string> kokkos_arguments(std::vector<std::string> kokkos_args) {
  if (count() > 1 && !chooses_device(kokkos_args))
    if (std::string a = compat::device_by_local_rank_argument(local_rank()); !a.empty()) kokkos_args.push_back(std::move(a));
  return kokkos_args;
}

Session::Session([[maybe_unused]] int* argc, [[maybe_unused]] char*** argv) {
  // srun started several tasks without connecting them (no MPI plugin: no PMIx/PMI variables):
  // each would run the whole deck alone and all would write the same results.
  const char* tasks = env("SLURM_STEP_NUM_TASKS");
  if (tasks && std::atoi(tasks) > 1 && env("SLURM_STEP_ID") && !env("PMIX_RANK") && !env("PMI_RANK")) {
    if (!compiled())
      throw std::runtime_error("srun started " + std::string(tasks) +
                               " tasks, but this mini-app was built without MPI (MINIAPP_WITH_MPI): run one task, or "
                               "build it with MPI");
    throw std::runtime_error("srun started " + std::string(tasks) +
                             " tasks without an MPI plugin (no PMIx or PMI in their environment), so they cannot "
                             "form one job: run them with srun --mpi=pmix (srun --mpi=list shows what the cluster "
                             "has), or as one task");
  }
#if MINIAPP_HAVE_MPI
  if (detect_launcher().empty()) return;
  int provided = 0;
  if (MPI_Init_thread(argc, argv, MPI_THREAD_FUNNELED, &provided) != MPI_SUCCESS)
    throw std::runtime_error("MPI_Init_thread failed");
  g_started = true;
  // A failed MPI call returns an error code instead of aborting, so it can be reported.
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  MPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
  MPI_Comm_size(MPI_COMM_WORLD, &g_count);
#endif
}

Session::~Session() {
#if MINIAPP_HAVE_MPI
  if (g_started) MPI_Finalize();
  g_started = false;
  g_rank = 0;
  g_count = 1;
#endif
}

std::string launcher() { return g_started ? detect_launcher() : ""; }

int rank() { return g_rank; }
int count() { return g_count; }

int local_rank() {
  if (!g_started) return 0;
  for (const char* name : {"OMPI_COMM_WORLD_LOCAL_RANK", "MV2_COMM_WORLD_LOCAL_RANK", "MPI_LOCALRANKID", "SLURM_LOCALID"})
    if (const char* v = env(name)) return std::atoi(v);
  return 0;
}

#if MINIAPP_HAVE_MPI
namespace {
void check(int status, const char* call) {
  if (status != MPI_SUCCESS) {
    char text[MPI_MAX_ERROR_STRING];
    int length = 0;
    MPI_Error_string(status, text, &length);
    throw std::runtime_error(std::string(call) + " failed: " + std::string(text, static_cast<std::size_t>(length)));
  }
}

void reduce_in_place(std::vector<double>& values, MPI_Op op) {
  if (g_count == 1 || values.empty()) return;
  check(MPI_Allreduce(MPI_IN_PLACE, values.data(), static_cast<int>(values.size()), MPI_DOUBLE, op, MPI_COMM_WORLD),
        "MPI_Allreduce");
}
}  // namespace

bool any(bool value) {
  if (g_count == 1) return value;
  int v = value ? 1 : 0;
  check(MPI_Allreduce(MPI_IN_PLACE, &v, 1, MPI_INT, MPI_LOR, MPI_COMM_WORLD), "MPI_Allreduce");
  return v != 0;
}

int max(int value) {
  if (g_count == 1) return value;
  check(MPI_Allreduce(MPI_IN_PLACE, &value, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD), "MPI_Allreduce");
  return value;
}

void max_in_place(std::vector<double>& values) { reduce_in_place(values, MPI_MAX); }
void min_in_place(std::vector<double>& values) { reduce_in_place(values, MPI_MIN); }
void sum_in_place(std::vector<double>& values) { reduce_in_place(values, MPI_SUM); }

namespace {
template <class T>
void sum_values(T* values, std::size_t count, MPI_Datatype type) {
  if (g_count == 1 || count == 0) return;
  check(MPI_Allreduce(MPI_IN_PLACE, values, static_cast<int>(count), type, MPI_SUM, MPI_COMM_WORLD), "MPI_Allreduce");
}
}  // namespace

void sum_in_place(float* values, std::size_t count) { sum_values(values, count, MPI_FLOAT); }
void sum_in_place(double* values, std::size_t count) { sum_values(values, count, MPI_DOUBLE); }

std::vector<std::string> gather(const std::string& text) {
  if (g_count == 1) return {text};
  int length = static_cast<int>(text.size());
  std::vector<int> lengths(g_rank == 0 ? g_count : 0), offsets(lengths.size());
  check(MPI_Gather(&length, 1, MPI_INT, lengths.data(), 1, MPI_INT, 0, MPI_COMM_WORLD), "MPI_Gather");
  std::string all;
  if (g_rank == 0) {
    for (int r = 1; r < g_count; ++r) offsets[r] = offsets[r - 1] + lengths[r - 1];
    all.resize(static_cast<std::size_t>(offsets.back() + lengths.back()));
  }
  check(MPI_Gatherv(text.data(), length, MPI_CHAR, all.data(), lengths.data(), offsets.data(), MPI_CHAR, 0,
                    MPI_COMM_WORLD),
        "MPI_Gatherv");
  std::vector<std::string> texts;
  for (std::size_t r = 0; r < lengths.size(); ++r)
    texts.push_back(all.substr(static_cast<std::size_t>(offsets[r]), static_cast<std::size_t>(lengths[r])));
  return texts;
}

std::string broadcast(const std::string& text, int root) {
  if (g_count == 1) return text;
  int length = static_cast<int>(text.size());
  check(MPI_Bcast(&length, 1, MPI_INT, root, MPI_COMM_WORLD), "MPI_Bcast");
  std::string out = g_rank == root ? text : std::string(static_cast<std::size_t>(length), '\0');
  check(MPI_Bcast(out.data(), length, MPI_CHAR, root, MPI_COMM_WORLD), "MPI_Bcast");
  return out;
}

void abort(int code) {
  if (g_started) MPI_Abort(MPI_COMM_WORLD, code);
  std::_Exit(code);
}
#else
bool any(bool value) { return value; }
int max(int value) { return value; }
void max_in_place(std::vector<double>&) {}
void min_in_place(std::vector<double>&) {}
void sum_in_place(std::vector<double>&) {}
void sum_in_place(float*, std::size_t) {}
void sum_in_place(double*, std::size_t) {}
std::vector<std::string> gather(const std::string& text) { return {text}; }
std::string broadcast(const std::string& text, int) { return text; }
void abort(int code) { std::_Exit(code); }
#endif

}  // namespace miniapp::ranks
