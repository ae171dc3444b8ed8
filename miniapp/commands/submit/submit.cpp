// `miniapp submit DECK --site NAME`: the deck, validated as a run validates it, becomes a batch
// script for the site (written, printed or submitted); --array makes one task per measurement
// group, --twin a CPU job and a GPU job of the same deck and a job that sets them side by side.

#include "miniapp/commands/commands.hpp"

#include "miniapp/core/build_info.hpp"
#include "miniapp/core/deck.hpp"
#include "miniapp/core/exit_codes.hpp"
#include "miniapp/core/atomic_file.hpp"
#include "miniapp/core/clock.hpp"
#include "miniapp/core/spaces.hpp"
#include "miniapp/record/merged.hpp"
#include "miniapp/commands/submit/batch_script.hpp"
#include "miniapp/commands/submit/process.hpp"
#include "miniapp/commands/submit/site_profile.hpp"

#include <sys/stat.h>

#include <algorithm>
#include <filesystem>
#include <iostream>
#include <sstream>

#ifndef MINIAPP_VERSION
#define MINIAPP_VERSION "0.1.0"
#endif

namespace fs = std::filesystem;

namespace miniapp::submit {

namespace {

constexpr const char* kUsage = R"(usage: miniapp submit DECK --site NAME [options]

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

struct UsageError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

enum class Mode { Write, Print, TestOnly, Submit };

struct Options {
  std::string deck, site, sites_dir, results = "results", script, binary, gpu_binary;
  std::optional<std::string> account, time, partition;
  std::optional<int> cpus, gpus, throttle;
  std::optional<JobKind> kind;
  bool array = false, twin = false, help = false;
  Mode mode = Mode::Write;
};

int positive(const std::string& option, const std::string& value) {
  char* end = nullptr;
  const long v = std::strtol(value.c_str(), &end, 10);
  if (value.empty() || *end != '\0' || v < 1 || v > 100000)
    throw UsageError(option + ": '" + value + "' is not a positive whole number");
  return static_cast<int>(v);
}

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

std::string absolute(const std::string& p) { return fs::absolute(p).lexically_normal().string(); }

std::string self_binary() {
  std::error_code ec;
  const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  return ec ? std::string("miniapp") : exe.string();
}

// One array task per case and size: the unit the results compare within (every space and
// policy of a size runs in the same task, so its speedups and baseline differences hold).
std::vector<std::vector<std::string>> measurement_groups(const Deck& deck) {
  std::vector<std::vector<std::string>> groups;
  for (std::size_t c = 0; c < deck.cases.size(); ++c)
    for (std::size_t size : deck.cases[c].sizes)
      groups.push_back({"--case", std::to_string(c), "--sizes", std::to_string(size)});
  return groups;
}

bool uses_device_space(const Deck& deck) {
  for (const CaseSpec& c : deck.cases)
    for (const std::string& s : c.spaces)
      if (!is_host_space_name(s)) return true;
  return false;
}

// The CPU job of a twin runs the deck's host spaces (every compiled one when it names none).
std::string host_spaces(const Deck& deck) {
  std::vector<std::string> spaces;
  for (const CaseSpec& c : deck.cases)
    for (const std::string& s : c.spaces)
      if (is_host_space_name(s) && std::find(spaces.begin(), spaces.end(), s) == spaces.end()) spaces.push_back(s);
  if (spaces.empty())
    for (const std::string& s : compiled_space_names())
      if (is_host_space_name(s)) spaces.push_back(s);
  std::string out;
  for (const std::string& s : spaces) out += (out.empty() ? "" : ",") + s;
  return out;
}

struct Job {
  JobPlan plan;
  std::string script_path, text;
};

void write_script(const std::string& path, const std::string& text) {
  fs::create_directories(fs::path(path).parent_path());
  write_atomically(path, text);
  chmod(path.c_str(), 0755);
}

std::optional<std::string> sbatch(const std::vector<std::string>& extra, const std::string& script, int& code) {
  std::vector<std::string> argv = {"sbatch", "--parsable"};
  argv.insert(argv.end(), extra.begin(), extra.end());
  argv.push_back(script);
  const ProcessResult r = run_process(argv, true);
  if (r.exit_code == 127) {
    std::cerr << "miniapp submit: sbatch not found: this is not a Slurm login node (--print or the written "
                 "script can be taken to one)\n";
    code = exit_code::kRuntimeError;
    return std::nullopt;
  }
  if (r.exit_code != 0) {
    std::cerr << "miniapp submit: sbatch refused " << script << ":\n" << r.err << r.out;
    code = exit_code::kRuntimeError;
    return std::nullopt;
  }
  std::string id = r.out.substr(0, r.out.find_first_of(";\n"));
  return id;
}

}  // namespace

int run_submit(int argc, char** argv) {
  Options o;
  try {
    o = parse(argc, argv);
  } catch (const UsageError& e) {
    std::cerr << "miniapp submit: " << e.what() << "\n";
    return exit_code::kBadInput;
  }
  if (o.help) {
    std::cout << kUsage;
    return exit_code::kAllVerified;
  }

  // The deck, validated exactly as a run validates it.
  const DeckResult loaded = load_deck_file(o.deck);
  if (!loaded.deck) {
    for (const Diagnostic& d : loaded.diagnostics.all()) std::cerr << format(d) << "\n";
    std::cerr << loaded.diagnostics.all().size() << " problem(s) in " << o.deck << "; nothing was submitted\n";
    return exit_code::kBadInput;
  }
  const Deck& deck = *loaded.deck;

  const std::vector<std::string> dirs = site_directories(o.sites_dir);
  const std::optional<std::string> site_file = find_site(o.site, dirs);
  if (!site_file) {
    const std::vector<std::string> known = known_sites(dirs);
    std::cerr << "miniapp submit: unknown site '" << o.site << "'; known sites: "
              << (known.empty() ? std::string("none") : join(known));
    if (!known.empty()) {
      const std::string hint = nearest(o.site, known);
      if (!hint.empty()) std::cerr << " (did you mean '" << hint << "'?)";
    }
    std::cerr << "\n  looked in: " << (dirs.empty() ? std::string("(no sites directory found)") : join(dirs))
              << "; a profile file of your own: --site path/to/site.yaml\n";
    return exit_code::kBadInput;
  }
  const ProfileResult profile = load_site_profile_file(*site_file);
  if (!profile.profile) {
    for (const Diagnostic& d : profile.diagnostics.all()) std::cerr << format(d) << "\n";
    std::cerr << profile.diagnostics.all().size() << " problem(s) in the site profile " << *site_file
              << "; nothing was submitted\n";
    return exit_code::kBadInput;
  }
  const SiteProfile& site = *profile.profile;

  const std::optional<std::string> account = o.account ? o.account : site.account;
  if ((o.mode == Mode::Submit || o.mode == Mode::TestOnly) && site.slurm && account && is_placeholder(*account)) {
    std::cerr << "miniapp submit: the account in " << site.file << ":" << site.account_line << " is still the placeholder '"
              << *account << "': pass --account YOUR_ACCOUNT, or copy the profile, set `account:` and use "
              << "--site path/to/your-copy.yaml; nothing was submitted\n";
    return exit_code::kBadInput;
  }

  std::vector<JobKind> kinds;
  if (o.twin) kinds = {JobKind::Cpu, JobKind::Gpu};
  else if (o.kind) kinds = {*o.kind};
  else kinds = {uses_device_space(deck) && site.gpu ? JobKind::Gpu : site.cpu ? JobKind::Cpu : JobKind::Gpu};

  const std::string deck_name = fs::path(o.deck).stem().string();
  const std::string results_root = absolute(o.results);
  const std::string binary = absolute(o.binary.empty() ? self_binary() : o.binary);
  const std::string gpu_binary = o.gpu_binary.empty() ? binary : absolute(o.gpu_binary);
  const std::vector<MeasurementSpec> plan_of_deck = expand(deck);
  const auto groups = measurement_groups(deck);

  std::vector<Job> jobs;
  for (JobKind kind : kinds) {
    Job job;
    JobPlan& p = job.plan;
    p.kind = kind;
    p.job_name = "miniapp-" + deck_name + (o.twin ? std::string("-") + to_string(kind) : "");
    p.account = o.account;
    p.partition = o.partition;
    p.cpus = o.cpus;
    p.gpus = kind == JobKind::Gpu ? o.gpus : std::nullopt;
    p.time = o.time;
    p.binary = kind == JobKind::Gpu ? gpu_binary : binary;
    p.deck = absolute(o.deck);
    p.results_root = results_root;
    p.results_name = deck_name + (o.twin ? std::string("-") + to_string(kind) : "");
    if (o.twin && kind == JobKind::Cpu) p.miniapp_args = {"--spaces", host_spaces(deck)};
    if (o.array) p.array_groups = groups;
    p.throttle = o.throttle;
    job.script_path = !o.script.empty() ? absolute(o.script)
                                        : results_root + "/jobs/" + deck_name + "-" + site.name + "-" + to_string(kind) +
                                              (o.array ? "-array" : "") + ".sbatch";
    p.comment = {"Written by `miniapp submit` for site " + site.name + " (" + site.file + ") on " + now_iso8601() + ":",
                 "  deck " + p.deck + ": " + std::to_string(deck.cases.size()) + " case(s), " +
                     std::to_string(plan_of_deck.size()) + " measurement(s), validated by miniapp " + MINIAPP_VERSION +
                     " (git " + git_commit() + ")",
                 site.slurm ? "Submit with: sbatch " + job.script_path
                            : "Run with: bash " + job.script_path + " (no scheduler at this site)"};
    try {
      job.text = batch_script(site, p);
    } catch (const ResourceError& e) {
      std::cerr << "miniapp submit: " << e.what() << "; nothing was submitted\n";
      return exit_code::kBadInput;
    }
    jobs.push_back(std::move(job));
  }

  if (o.mode == Mode::Print) {
    for (std::size_t i = 0; i < jobs.size(); ++i) {
      if (jobs.size() > 1) std::cout << (i ? "\n" : "") << "# ===== " << jobs[i].script_path << " =====\n";
      std::cout << jobs[i].text;
    }
    return exit_code::kAllVerified;
  }

  try {
    fs::create_directories(results_root);  // Slurm writes the job logs there and creates no directory
    for (const Job& j : jobs) write_script(j.script_path, j.text);
  } catch (const std::exception& e) {
    std::cerr << "miniapp submit: " << e.what() << "\n";
    return exit_code::kRuntimeError;
  }

  if (o.mode == Mode::Write) {
    for (const Job& j : jobs)
      std::cout << "wrote " << j.script_path << " (" << to_string(j.plan.kind) << " job"
                << (o.array ? ", " + std::to_string(groups.size()) + " array tasks" : "") << ")\n"
                << "  " << (site.slurm ? "sbatch " : "bash ") << j.script_path << "\n";
    if (o.array || o.twin)
      std::cout << "afterwards: miniapp merge" << (o.twin ? " --side-by-side" : "") << " RESULTS_DIRS... "
                << "(or submit with --submit, which adds the merge job)\n";
    return exit_code::kAllVerified;
  }

  if (o.mode == Mode::TestOnly) {
    if (!site.slurm) {
      std::cerr << "miniapp submit: site " << site.name << " has no scheduler to ask (--test-only)\n";
      return exit_code::kBadInput;
    }
    int code = exit_code::kAllVerified;
    for (const Job& j : jobs) {
      const ProcessResult r = run_process({"sbatch", "--test-only", j.script_path}, true);
      std::cout << j.script_path << ": " << (r.exit_code == 0 ? "accepted" : "REFUSED") << "\n" << r.err << r.out;
      if (r.exit_code != 0) code = exit_code::kRuntimeError;
    }
    return code;
  }

  // --submit
  if (!site.slurm) {
    // No scheduler: the scripts run here, one after another, then the merge.
    const std::string job_id = "local-" + local_timestamp();
    int worst = exit_code::kAllVerified;
    std::vector<std::string> result_dirs;
    for (const Job& j : jobs) {
      const std::size_t tasks = std::max<std::size_t>(1, j.plan.array_groups.size());
      for (std::size_t t = 0; t < tasks; ++t) {
        std::vector<std::pair<std::string, std::string>> env = {{"MINIAPP_JOB_ID", job_id}};
        if (o.array) env.emplace_back("MINIAPP_TASK", std::to_string(t));
        const ProcessResult r = run_process({"bash", j.script_path}, false, env);
        worst = std::max(worst, r.exit_code);
        const std::string base = results_root + "/" + j.plan.results_name + "-" + job_id;
        result_dirs.push_back(o.array ? base + "/task-" + std::to_string(t) : base);
      }
    }
    if (o.array || o.twin) {
      std::vector<std::string> args = {"merge"};
      if (o.twin) args.push_back("--side-by-side");
      args.push_back("--output");
      args.push_back(o.twin ? results_root + "/" + deck_name + "-twin-" + job_id
                            : results_root + "/" + deck_name + "-" + job_id + "/merged");
      args.insert(args.end(), result_dirs.begin(), result_dirs.end());
      std::vector<char*> merge_argv;
      for (std::string& a : args) merge_argv.push_back(a.data());
      std::cout << "\n";
      worst = std::max(worst, run_merge(static_cast<int>(merge_argv.size()), merge_argv.data()));
    }
    return worst;
  }

  int code = exit_code::kAllVerified;
  std::vector<std::string> ids, result_dirs;
  for (const Job& j : jobs) {
    const std::optional<std::string> id = sbatch({}, j.script_path, code);
    if (!id) return code;
    ids.push_back(*id);
    const std::string base = results_root + "/" + j.plan.results_name + "-" + *id;
    std::cout << "submitted " << to_string(j.plan.kind) << " job " << *id << " (" << j.script_path << ")";
    if (o.array) {
      std::cout << ": " << groups.size() << " array tasks, results in " << base << "/task-<i>/\n";
      for (std::size_t t = 0; t < groups.size(); ++t) result_dirs.push_back(base + "/task-" + std::to_string(t));
    } else {
      std::cout << ": results in " << base << "/\n";
      result_dirs.push_back(base);
    }
  }
  if (o.array || o.twin) {
    MergePlan m;
    m.job_name = "miniapp-" + deck_name + "-merge";
    m.account = o.account;
    m.binary = binary;
    m.directories = result_dirs;
    m.side_by_side = o.twin;
    m.output = o.twin ? results_root + "/" + deck_name + "-twin-" + ids[0] + "-" + ids[1]
                      : results_root + "/" + deck_name + "-" + ids[0] + "/merged";
    m.results_root = results_root;
    std::string after;
    for (const std::string& id : ids) after += (after.empty() ? "" : ":") + id;
    const std::string dependency = "--dependency=afterany:" + after;
    const std::string path = results_root + "/jobs/" + deck_name + "-" + site.name + "-merge-" + ids[0] + ".sbatch";
    m.comment = {"Written by `miniapp submit` for site " + site.name + ": merges job(s) " + after +
                 " once they have ended"};
    try {
      write_script(path, merge_script(site, m));
    } catch (const std::exception& e) {
      std::cerr << "miniapp submit: " << e.what() << "\n";
      return exit_code::kRuntimeError;
    }
    const std::optional<std::string> id = sbatch({dependency}, path, code);
    if (!id) return code;
    std::cout << "submitted merge job " << *id << " (after " << after << "): merged results in "
              << m.output << "/\n";
  }
  return code;
}

}  // namespace miniapp::submit
