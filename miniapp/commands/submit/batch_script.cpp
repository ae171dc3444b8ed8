#include "miniapp/commands/submit/batch_script.hpp"

#include <sstream>

namespace miniapp::submit {

std::string shell_quote(const std::string& s) {
  if (!s.empty() && s.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-./=:,+%@") ==
                        std::string::npos)
    return s;
  std::string out = "'";
  for (char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

std::string scale_memory(const std::string& memory, int factor) {
  std::size_t digits = 0;
  while (digits < memory.size() && memory[digits] >= '0' && memory[digits] <= '9') ++digits;
  if (digits == 0) return memory;
  const unsigned long long amount = std::stoull(memory.substr(0, digits));
  return std::to_string(amount * static_cast<unsigned long long>(factor)) + memory.substr(digits);
}

namespace {

std::string replace_all(std::string s, const std::string& from, const std::string& to) {
  for (std::size_t pos = s.find(from); pos != std::string::npos; pos = s.find(from, pos + to.size()))
    s.replace(pos, from.size(), to);
  return s;
}

std::string fill(const std::string& directive, const Resources& r) {
  std::string d = replace_all(directive, "{cpus}", std::to_string(r.cpus));
  d = replace_all(d, "{gpus}", std::to_string(r.gpus));
  return replace_all(d, "{memory}", r.memory.value_or(""));
}

const JobShape& shape_for(const SiteProfile& site, JobKind kind) {
  const std::optional<JobShape>& s = site.shape(kind);
  if (!s)
    throw ResourceError("site " + site.name + " (" + site.file + ") has no " + to_string(kind) +
                        " section: it cannot make a " + to_string(kind) + " job");
  return *s;
}

void write_comment(std::ostream& os, const std::vector<std::string>& lines) {
  for (const std::string& l : lines) os << "# " << l << "\n";
}

void write_directives(std::ostream& os, const SiteProfile& site, const std::vector<std::string>& directives) {
  if (!site.slurm) return;
  for (const std::string& d : directives) os << "#SBATCH " << d << "\n";
}

std::string words(const std::vector<std::string>& list) {
  std::string out;
  for (const std::string& w : list) out += (out.empty() ? "" : " ") + shell_quote(w);
  return out;
}

}  // namespace

Resources resolve_resources(const SiteProfile& site, const JobPlan& plan) {
  const JobShape& shape = shape_for(site, plan.kind);
  Resources r;
  r.time = plan.time.value_or(site.time);
  r.partition = plan.partition ? plan.partition : shape.partition;
  if (plan.ranks < 1) throw ResourceError("--ranks needs at least one rank");
  if (plan.kind == JobKind::Gpu) {
    r.gpus = plan.gpus.value_or(plan.ranks > 1 ? plan.ranks : shape.gpus);
    if (plan.ranks > 1 && r.gpus != plan.ranks)
      throw ResourceError(std::to_string(plan.ranks) + " ranks with " + std::to_string(r.gpus) +
                          " GPUs: a GPU job runs one rank per GPU (leave out --gpus, or make it equal --ranks)");
    if (r.gpus < 1) throw ResourceError("a GPU job needs at least one GPU");
    if (r.gpus > shape.gpus_per_node)
      throw ResourceError("site " + site.name + ": " + std::to_string(r.gpus) + " GPUs asked for, but a node has " +
                          std::to_string(shape.gpus_per_node) + " (gpu.gpus_per_node); the mini-app runs on one node");
    if (!plan.partition && shape.more_gpus_above && r.gpus > *shape.more_gpus_above)
      r.partition = shape.more_gpus_partition;
    r.cpus = plan.cpus.value_or(shape.cpus * r.gpus);
    if (shape.memory) r.memory = scale_memory(*shape.memory, r.gpus);
  } else {
    if (plan.gpus) throw ResourceError("--gpus is for GPU jobs (--gpu or --twin)");
    r.cpus = plan.cpus.value_or(shape.cpus);
    r.memory = shape.memory;
  }
  if (plan.ranks > 1 && r.cpus > 0 && r.cpus < plan.ranks)
    throw ResourceError(std::to_string(plan.ranks) + " ranks on " + std::to_string(r.cpus) +
                        " CPUs: each rank needs a CPU at least (--cpus)");
  return r;
}

std::vector<std::string> sbatch_directives(const SiteProfile& site, const JobPlan& plan) {
  const JobShape& shape = shape_for(site, plan.kind);
  const Resources r = resolve_resources(site, plan);
  std::vector<std::string> d;
  d.push_back("--job-name=" + plan.job_name);
  const std::optional<std::string> account = plan.account ? plan.account : site.account;
  if (account) d.push_back("--account=" + *account);
  if (r.partition) d.push_back("--partition=" + *r.partition);
  for (const std::string& t : shape.request) d.push_back(fill(t, r));
  if (!r.time.empty()) d.push_back("--time=" + r.time);
  for (const std::string& t : site.directives) d.push_back(fill(t, r));
  const bool array = !plan.array_groups.empty();
  if (array) {
    std::string spec = "--array=0-" + std::to_string(plan.array_groups.size() - 1);
    if (plan.throttle) spec += "%" + std::to_string(*plan.throttle);
    d.push_back(spec);
  }
  // Array tasks each get their own log: %A (array job) and %a (task) instead of %j.
  std::string output = site.output;
  if (array) output = replace_all(output, "%j", "%A_%a");
  d.push_back("--output=" + plan.results_root + "/" + output);
  return d;
}

namespace {

// A GPU job: a warning when the binary lacks the site's GPU backend, the site's monitor sampling
// the GPU while the job runs, and its energy counter read before (and after) the run.
void write_gpu_watch(std::ostream& s, const JobShape& shape) {
  if (shape.backend)
    s << "if ! \"$MINIAPP\" --version | grep -q '^execution spaces:.* " << *shape.backend << "'; then\n"
      << "  echo \"[miniapp] warning: $MINIAPP has no " << *shape.backend
      << " space: the GPU stays idle (build it with scripts/bootstrap-debian.sh --backend " << *shape.backend
      << ", or pass --gpu-binary to miniapp submit)\" >&2\n"
      << "fi\n";
  s << "MONITOR_PID=\n";
  if (shape.monitor) {
    const std::string command = shape.monitor->substr(0, shape.monitor->find(' '));
    s << "# GPU utilisation and memory while the job runs (seed 004), every " << shape.monitor_interval << " s.\n";
    s << "if command -v " << shell_quote(command) << " >/dev/null 2>&1; then\n"
      << "  ( while :; do " << *shape.monitor << "; sleep " << shape.monitor_interval << "; done ) >\"$RESULTS/gpu-monitor.txt\" 2>&1 &\n"
      << "  MONITOR_PID=$!\n"
      << "fi\n";
  }
  if (shape.energy_before) {
    const std::string command = shape.energy_before->substr(0, shape.energy_before->find(' '));
    s << "ENERGY=\n";
    s << "if command -v " << shell_quote(command) << " >/dev/null 2>&1; then\n"
      << "  ENERGY=1; " << *shape.energy_before << " >>\"$RESULTS/gpu-energy.txt\" 2>&1\n"
      << "fi\n";
  }
}

// The measurement group of this array task (none for a plain job) and the results directory.
void write_groups(std::ostream& s, const JobPlan& plan, const std::string& root) {
  const bool array = !plan.array_groups.empty();
  if (array) {
    s << "# One measurement group (case x size) per array task; each task writes its own results.\n";
    s << "TASK=${SLURM_ARRAY_TASK_ID:-${MINIAPP_TASK:-0}}\n";
    s << "case $TASK in\n";
    for (std::size_t i = 0; i < plan.array_groups.size(); ++i)
      s << "  " << i << ") GROUP=(" << words(plan.array_groups[i]) << ") ;;\n";
    s << "  *) echo \"[miniapp] no measurement group for array task $TASK (0-" << plan.array_groups.size() - 1
      << ")\" >&2; exit 2 ;;\n";
    s << "esac\n";
    s << "RESULTS=" << root << "-$JOB/task-$TASK\n";
  } else {
    s << "GROUP=()\n";
    s << "RESULTS=" << root << "-$JOB\n";
  }
}

// The threads of each process (one per CPU of the task, or of each rank's share), their binding,
// and the launcher that starts the mini-app (one task, or the ranks of one step).
void write_threads_and_launcher(std::ostream& s, const SiteProfile& site, const JobPlan& plan, const Resources& r) {
  const bool gpu = plan.kind == JobKind::Gpu;
  s << "# One host thread per CPU of the task, from Slurm (seed 001: SLURM_CPUS_PER_TASK, never a\n"
       "# hard-coded count; a site that asks for --ntasks-per-node gives SLURM_CPUS_ON_NODE).\n";
  const bool mpi = plan.ranks > 1;
  const std::string fallback = r.cpus > 0 ? std::to_string(r.cpus) : "$(nproc)";
  s << "THREADS=${SLURM_CPUS_PER_TASK:-${SLURM_CPUS_ON_NODE:-" << fallback << "}}\n";
  if (mpi) {
    s << "# " << plan.ranks << " MPI ranks, each with its share of the CPUs"
      << (gpu ? " and one GPU (srun --gpus-per-task=1 makes it each rank's only visible device)" : "") << ".\n";
    s << "RANKS=" << plan.ranks << "\n";
    s << "THREADS=$(( THREADS / RANKS > 0 ? THREADS / RANKS : 1 ))\n";
  }
  s << "export OMP_NUM_THREADS=$THREADS\n";
  if (mpi)
    s << "# Each rank's threads stay on the CPUs Slurm gives its task. Pinning them as well (OMP_PROC_BIND)\n"
         "# needs a task binding: where a cluster binds no task, every rank would pin its threads from\n"
         "# the node's first CPU, all ranks on one core.\n"
         "export OMP_PROC_BIND=${OMP_PROC_BIND:-false}\n\n";
  else
    s << "export OMP_PROC_BIND=${OMP_PROC_BIND:-spread} OMP_PLACES=${OMP_PLACES:-threads}\n\n";

  s << "LAUNCH=(" << words(site.launcher) << ")\n";
  if (!site.launcher.empty() && site.launcher.front() == "srun") {
    if (mpi) {
      s << "# The ranks as the tasks of one step (the site's MpiDefault, or --mpi=... in the profile's\n"
           "# launcher, connects them).\n"
           "LAUNCH+=(--ntasks=\"$RANKS\" --cpus-per-task=\"$THREADS\""
        << (gpu ? " --gpus-per-task=1" : "") << ")\n";
    } else {
      s << "# One process with every CPU of the task: srun >= 22.05 does not take --cpus-per-task from the\n"
           "# allocation, and --ntasks-per-node allocations would otherwise start one copy per task.\n"
           "LAUNCH+=(--ntasks=1 --cpus-per-task=\"$THREADS\")\n";
    }
  }
  if (mpi)
    s << "# Outside Slurm: Open MPI's launcher, each rank on its own cores.\n"
         "[ -n \"${SLURM_JOB_ID:-}\" ] || LAUNCH=(mpirun -np \"$RANKS\" --map-by \"slot:PE=$THREADS\")\n\n";
  else
    s << "[ -n \"${SLURM_JOB_ID:-}\" ] || LAUNCH=()  # outside Slurm: run the binary directly\n\n";
}

}  // namespace

std::string batch_script(const SiteProfile& site, const JobPlan& plan) {
  const JobShape& shape = shape_for(site, plan.kind);
  const Resources r = resolve_resources(site, plan);
  const bool array = !plan.array_groups.empty();
  const bool gpu = plan.kind == JobKind::Gpu;
  std::ostringstream s;
  s << "#!/bin/bash\n";
  write_directives(s, site, sbatch_directives(site, plan));
  s << "#\n";
  write_comment(s, plan.comment);
  s << "set -uo pipefail\n\n";
  s << "MINIAPP=" << shell_quote(plan.binary) << "\n";
  s << "DECK=" << shell_quote(plan.deck) << "\n";
  s << "JOB=${SLURM_ARRAY_JOB_ID:-${SLURM_JOB_ID:-${MINIAPP_JOB_ID:-local-$(date +%Y%m%d-%H%M%S)}}}\n";
  const std::string root = shell_quote(plan.results_root + "/" + plan.results_name);
  write_groups(s, plan, root);
  s << "mkdir -p \"$RESULTS\" || exit 3\n\n";

  const bool mpi = plan.ranks > 1;
  write_threads_and_launcher(s, site, plan, r);

  s << "echo \"[miniapp] job $JOB" << (array ? " task $TASK" : "")
    << " on ${SLURM_JOB_NODELIST:-$(hostname)}: " << (mpi ? "$RANKS ranks of " : "")
    << "$THREADS threads, GPUs ${SLURM_JOB_GPUS:-none}"
       " (CUDA_VISIBLE_DEVICES=${CUDA_VISIBLE_DEVICES:-unset}, ROCR_VISIBLE_DEVICES=${ROCR_VISIBLE_DEVICES:-unset});"
       " results in $RESULTS\"\n";

  if (gpu) write_gpu_watch(s, shape);
  s << "\n";

  s << "# scancel and the time limit send SIGTERM: it is passed on, and the mini-app stops between\n"
       "# iterations with every finished measurement saved (exit code 143).\n";
  s << "${LAUNCH[@]+\"${LAUNCH[@]}\"} \"$MINIAPP\" \"$DECK\" --output \"$RESULTS\" ${GROUP[@]+\"${GROUP[@]}\"}";
  for (const std::string& a : plan.miniapp_args) s << " " << shell_quote(a);
  s << " &\n";
  s << "RUN=$!\n";
  s << "trap 'kill -TERM \"$RUN\" 2>/dev/null' TERM INT\n";
  s << "status=0\n";
  s << "wait \"$RUN\" || status=$?\n";
  s << "while kill -0 \"$RUN\" 2>/dev/null; do status=0; wait \"$RUN\" || status=$?; done\n";
  if (gpu) {
    s << "[ -z \"$MONITOR_PID\" ] || kill \"$MONITOR_PID\" 2>/dev/null\n";
    if (shape.energy_after && shape.energy_before)
      s << "[ -z \"$ENERGY\" ] || " << *shape.energy_after << " >>\"$RESULTS/gpu-energy.txt\" 2>&1\n";
  }
  s << "echo \"[miniapp] exit code $status; results: $RESULTS/results.json\"\n";
  s << "exit \"$status\"\n";
  return s.str();
}

std::string merge_script(const SiteProfile& site, const MergePlan& plan) {
  std::vector<std::string> d;
  d.push_back("--job-name=" + plan.job_name);
  const std::optional<std::string> account = plan.account ? plan.account : site.account;
  if (account) d.push_back("--account=" + *account);
  // A small CPU job: the site's CPU shape (else its GPU shape without the GPU) with one CPU.
  const JobShape* shape = site.cpu ? &*site.cpu : site.gpu ? &*site.gpu : nullptr;
  if (shape) {
    Resources r;
    r.cpus = 1;
    r.memory = "1G";
    if (shape->partition) d.push_back("--partition=" + *shape->partition);
    for (const std::string& t : shape->request)
      if (t.find("{gpus}") == std::string::npos && t != "--exclusive") d.push_back(fill(t, r));
  }
  d.push_back("--time=00:10:00");
  d.push_back("--output=" + plan.results_root + "/" + site.output);
  std::ostringstream s;
  s << "#!/bin/bash\n";
  write_directives(s, site, d);
  s << "#\n";
  write_comment(s, plan.comment);
  s << "set -uo pipefail\n";
  s << "exec " << shell_quote(plan.binary) << " merge" << (plan.side_by_side ? " --side-by-side" : "")
    << " --output " << shell_quote(plan.output);
  for (const std::string& dir : plan.directories) s << " " << shell_quote(dir);
  s << "\n";
  return s.str();
}

}  // namespace miniapp::submit
