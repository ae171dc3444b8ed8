#include "miniapp/commands/submit/options.hpp"

#include "miniapp/core/options.hpp"

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
  --ranks N          run the deck as N MPI ranks on the node (srun --ntasks=N, or mpirun -np N
                     where there is no scheduler), each with its share of the CPUs; a GPU job
                     gets one GPU per rank (--gpus defaults to N, and must equal it). The deck is
                     refused (exit 2) where a measurement does not split across ranks
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

Options parse(int argc, char** argv) {
  Options o;
  int modes = 0;
  auto text = [](std::string& field) { return [&field](const std::string& v) { field = v; }; };
  auto optional_text = [](std::optional<std::string>& field) { return [&field](const std::string& v) { field = v; }; };
  auto count = [](const char* name, std::optional<int>& field) {
    return [name, &field](const std::string& v) { field = static_cast<int>(parse_whole_number(name, v, 1, 100000)); };
  };
  auto mode = [&](Mode m) { return [&o, &modes, m] { o.mode = m, ++modes; }; };
  OptionParser()
      .flag("-h,--help", [&] { o.help = true; })
      .value("--site", text(o.site))
      .value("--sites-dir", text(o.sites_dir))
      .value("--account", optional_text(o.account))
      .value("--time", optional_text(o.time))
      .value("--partition", optional_text(o.partition))
      .value("--cpus", count("--cpus", o.cpus))
      .value("--gpus", count("--gpus", o.gpus))
      .value("--throttle", count("--throttle", o.throttle))
      .value("--ranks", count("--ranks", o.ranks))
      .value("--results", text(o.results))
      .value("--script", text(o.script))
      .value("--binary", text(o.binary))
      .value("--gpu-binary", text(o.gpu_binary))
      .flag("--cpu", [&] { o.kind = JobKind::Cpu; })
      .flag("--gpu", [&] { o.kind = JobKind::Gpu; })
      .flag("--array", [&] { o.array = true; })
      .flag("--twin", [&] { o.twin = true; })
      .flag("--print", mode(Mode::Print))
      .flag("--test-only", mode(Mode::TestOnly))
      .flag("--submit", mode(Mode::Submit))
      .operands([&](const std::string& a) {
        if (!o.deck.empty()) throw UsageError("only one deck is accepted; got '" + o.deck + "' and '" + a + "'");
        o.deck = a;
      })
      .parse(argc, argv);
  if (o.help) return o;
  if (o.deck.empty()) throw UsageError("no deck given");
  if (o.site.empty()) throw UsageError("no --site given");
  if (modes > 1) throw UsageError("--print, --test-only and --submit exclude each other");
  if (o.twin && o.kind) throw UsageError("--twin makes both a CPU and a GPU job; leave out --cpu/--gpu");
  if (o.twin && !o.script.empty()) throw UsageError("--twin writes two scripts (into RESULTS/jobs/); leave out --script");
  if (o.throttle && !o.array) throw UsageError("--throttle limits the tasks of an --array");
  return o;
}

}  // namespace miniapp::submit
