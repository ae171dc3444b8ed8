#include "miniapp/commands/submit/options.hpp"

#include <cstdlib>

namespace miniapp::submit {

const char* const kUsage = R"(usage: miniapp submit DECK --site NAME [options]

Turns a deck into a ready batch script for a site's Slurm. The deck is validated first, by the
same code as a run (a bad deck: exit 2 and every problem as file:line:column). The job runs this
mini-app with one host thread per CPU of the task (SLURM_CPUS_PER_TASK), OMP_PROC_BIND/OMP_PLACES
set, through the site's launcher, into RESULTS/<deck>-<job id>/ (the results' provenance records
the job id, array task, node list and GPU variables); a GPU job samples the GPU with the site's
monitor into gpu-monitor.txt.

  --site NAME|FILE   a site profile: a name from the sites directory (an unknown name lists the
                     known ones) or a profile file of your own (copy one and edit it)
  --sites-dir DIR    where names are looked up (default: $MINIAPP_SITES_DIR, else the sites/
                     folder shipped with the mini-app)
  --account A        the account (project, allocation) to charge; replaces the profile's
  --cpu | --gpu      the kind of job (default: gpu when a case asks for a device space)
  --gpus N           GPUs of a GPU job (CPUs and memory follow the profile's per-GPU share)
  --cpus N           CPUs of the job (replaces the profile's, or its per-GPU share)
  --time T           the time limit (Slurm's format, e.g. 1:00:00); replaces the profile's
  --partition P      replaces the profile's partition
  --array            a job array, one task per measurement group (case x size), each task
                     writing RESULTS/<deck>-<array job>/task-<i>/
  --throttle N       with --array: at most N tasks at once (--array=0-K%N)
  --twin             the same deck as a CPU job (host spaces) and as a GPU job (seed 001: "dry
                     run it with multiple CPUs too"); --submit adds a job, run after both, that
                     prints them side by side (miniapp merge --side-by-side)
  --results DIR      the results root (default: results); job logs go there too
  --script FILE      where the script is written (default: RESULTS/jobs/<deck>-<site>-<kind>.sbatch)
  --binary PATH      the mini-app the job runs (default: this one)
  --gpu-binary PATH  the mini-app GPU jobs run (default: --binary), e.g. a CUDA build's
  --print            print the script(s) on stdout; write and submit nothing
  --test-only        write the script(s) and ask the scheduler whether and when it would run
                     them (sbatch --test-only); nothing is submitted
  --submit           write the script(s) and submit them with sbatch (site `local`: run them
                     here, one after another); an array or a twin also gets a merge job that
                     waits for its jobs (--dependency=afterany)
  -h, --help         show this help and exit

Without --print, --test-only or --submit the script is written and the sbatch command printed.

exit codes:
  0  written / printed / accepted by sbatch (site local: every run complete and verified)
  2  bad deck, command line or site profile; unknown site; a request the site cannot satisfy;
     an account placeholder (<project>) left for --submit or --test-only; nothing was submitted
  3  sbatch refused the job or is not available, or a file could not be written
  local runs: the mini-app's exit code (1: a verification failed; 128+N: stopped by signal N)
)";

namespace {

int positive(const std::string& option, const std::string& value) {
  char* end = nullptr;
  const long v = std::strtol(value.c_str(), &end, 10);
  if (value.empty() || *end != '\0' || v < 1 || v > 100000)
    throw UsageError(option + ": '" + value + "' is not a positive whole number");
  return static_cast<int>(v);
}

}  // namespace

Options parse(int argc, char** argv) {
  Options o;
  int modes = 0;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto is = [&](const char* name) { return a == name || a.rfind(std::string(name) + "=", 0) == 0; };
    auto value = [&](const std::string& name) -> std::string {
      const auto eq = a.find('=');
      if (eq != std::string::npos) return a.substr(eq + 1);
      if (i + 1 >= argc) throw UsageError(name + " needs a value");
      return argv[++i];
    };
    if (a == "-h" || a == "--help") o.help = true;
    else if (is("--site")) o.site = value("--site");
    else if (is("--sites-dir")) o.sites_dir = value("--sites-dir");
    else if (is("--account")) o.account = value("--account");
    else if (is("--time")) o.time = value("--time");
    else if (is("--partition")) o.partition = value("--partition");
    else if (is("--cpus")) o.cpus = positive("--cpus", value("--cpus"));
    else if (is("--gpus")) o.gpus = positive("--gpus", value("--gpus"));
    else if (is("--throttle")) o.throttle = positive("--throttle", value("--throttle"));
    else if (is("--results")) o.results = value("--results");
    else if (is("--script")) o.script = value("--script");
    else if (is("--binary")) o.binary = value("--binary");
    else if (is("--gpu-binary")) o.gpu_binary = value("--gpu-binary");
    else if (a == "--cpu") o.kind = JobKind::Cpu;
    else if (a == "--gpu") o.kind = JobKind::Gpu;
    else if (a == "--array") o.array = true;
    else if (a == "--twin") o.twin = true;
    else if (a == "--print") o.mode = Mode::Print, ++modes;
    else if (a == "--test-only") o.mode = Mode::TestOnly, ++modes;
    else if (a == "--submit") o.mode = Mode::Submit, ++modes;
    else if (!a.empty() && a[0] == '-') throw UsageError("unknown option '" + a + "' (see miniapp submit --help)");
    else if (o.deck.empty()) o.deck = a;
    else throw UsageError("only one deck is accepted; got '" + o.deck + "' and '" + a + "'");
  }
  if (o.help) return o;
  if (o.deck.empty()) throw UsageError("no deck given (see miniapp submit --help)");
  if (o.site.empty()) throw UsageError("no --site given (see miniapp submit --help)");
  if (modes > 1) throw UsageError("--print, --test-only and --submit exclude each other");
  if (o.twin && o.kind) throw UsageError("--twin makes both a CPU and a GPU job; leave out --cpu/--gpu");
  if (o.twin && !o.script.empty()) throw UsageError("--twin writes two scripts (into RESULTS/jobs/); leave out --script");
  if (o.throttle && !o.array) throw UsageError("--throttle limits the tasks of an --array");
  return o;
}

}  // namespace miniapp::submit
