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
#include "miniapp/core/workload.hpp"
#include "miniapp/record/merged.hpp"
#include "miniapp/commands/submit/batch_script.hpp"
#include "miniapp/commands/submit/options.hpp"
#include "miniapp/core/child_process.hpp"
#include "miniapp/commands/submit/site_profile.hpp"

#include <sys/stat.h>

#include <algorithm>
#include <filesystem>
#include <iostream>
#include <sstream>
#include <variant>

#ifndef MINIAPP_VERSION
#define MINIAPP_VERSION "0.1.0"
#endif

namespace fs = std::filesystem;

namespace miniapp::submit {

namespace {

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

// What every job of one submission shares.
struct Context {
  const Options& o;
  const Deck& deck;
  const SiteProfile& site;
  std::string deck_name, results_root, binary, gpu_binary;
  std::size_t measurements = 0;
  std::vector<std::vector<std::string>> groups;
};

// The site profile named by --site, or the exit code after saying why not.
std::variant<ProfileResult, int> load_site(const Options& o) {
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
  ProfileResult profile = load_site_profile_file(*site_file);
  if (!profile.profile) {
    for (const Diagnostic& d : profile.diagnostics.all()) std::cerr << format(d) << "\n";
    std::cerr << profile.diagnostics.all().size() << " problem(s) in the site profile " << *site_file
              << "; nothing was submitted\n";
    return exit_code::kBadInput;
  }
  return profile;
}

// --submit and --test-only refuse the profile's placeholder account.
bool placeholder_account(const Options& o, const SiteProfile& site) {
  const std::optional<std::string> account = o.account ? o.account : site.account;
  if ((o.mode != Mode::Submit && o.mode != Mode::TestOnly) || !site.slurm || !account || !is_placeholder(*account))
    return false;
  std::cerr << "miniapp submit: the account in " << site.file << ":" << site.account_line << " is still the placeholder '"
            << *account << "': pass --account YOUR_ACCOUNT, or copy the profile, set `account:` and use "
            << "--site path/to/your-copy.yaml; nothing was submitted\n";
  return true;
}

// Whether every measurement of the deck splits across `ranks` MPI ranks; says why not where one
// does not (what a run on that many ranks would refuse before it starts).
bool splits_across(const Deck& deck, int ranks) {
  std::size_t refused = 0;
  for (MeasurementSpec m : expand(deck)) {
    m.ranks = ranks;
    const CaseSpec& c = deck.cases[m.case_index];
    if (const std::optional<std::string> why = find_workload(m.workload)->refuse(m, c.params)) {
      std::cerr << deck.file << ":" << c.line << ":1: cases[" << m.case_index << "] (" << c.name << "): "
                << m.variant << " " << to_string(m.precision) << " size " << m.size << " on " << m.space << ": " << *why
                << "\n";
      ++refused;
    }
  }
  if (refused > 0)
    std::cerr << refused << " measurement(s) cannot run on " << ranks << " MPI ranks (--ranks); nothing was submitted\n";
  return refused == 0;
}

std::vector<JobKind> job_kinds(const Options& o, const Deck& deck, const SiteProfile& site) {
  if (o.twin) return {JobKind::Cpu, JobKind::Gpu};
  if (o.kind) return {*o.kind};
  return {uses_device_space(deck) && site.gpu ? JobKind::Gpu : site.cpu ? JobKind::Cpu : JobKind::Gpu};
}

// One job's plan and script; throws ResourceError when the site cannot satisfy it.
Job make_job(const Context& c, JobKind kind) {
  const Options& o = c.o;
  Job job;
  JobPlan& p = job.plan;
  const std::string suffix = o.twin ? std::string("-") + to_string(kind) : "";
  p.kind = kind;
  p.job_name = "miniapp-" + c.deck_name + suffix;
  p.account = o.account;
  p.partition = o.partition;
  p.cpus = o.cpus;
  p.gpus = kind == JobKind::Gpu ? o.gpus : std::nullopt;
  p.ranks = o.ranks.value_or(1);
  p.time = o.time;
  p.binary = kind == JobKind::Gpu ? c.gpu_binary : c.binary;
  p.deck = absolute(o.deck);
  p.results_root = c.results_root;
  p.results_name = c.deck_name + suffix;
  if (o.twin && kind == JobKind::Cpu) p.miniapp_args = {"--spaces", host_spaces(c.deck)};
  if (o.array) p.array_groups = c.groups;
  p.throttle = o.throttle;
  job.script_path = !o.script.empty() ? absolute(o.script)
                                      : c.results_root + "/jobs/" + c.deck_name + "-" + c.site.name + "-" +
                                            to_string(kind) + (o.array ? "-array" : "") + ".sbatch";
  p.comment = {"Written by `miniapp submit` for site " + c.site.name + " (" + c.site.file + ") on " + now_iso8601() + ":",
               "  deck " + p.deck + ": " + std::to_string(c.deck.cases.size()) + " case(s), " +
                   std::to_string(c.measurements) + " measurement(s), validated by miniapp " + MINIAPP_VERSION +
                   " (git " + git_commit() + ")",
               c.site.slurm ? "Submit with: sbatch " + job.script_path
                            : "Run with: bash " + job.script_path + " (no scheduler at this site)"};
  job.text = batch_script(c.site, p);
  return job;
}

int print_scripts(const std::vector<Job>& jobs) {
  for (std::size_t i = 0; i < jobs.size(); ++i) {
    if (jobs.size() > 1) std::cout << (i ? "\n" : "") << "# ===== " << jobs[i].script_path << " =====\n";
    std::cout << jobs[i].text;
  }
  return exit_code::kAllVerified;
}

int say_what_was_written(const Context& c, const std::vector<Job>& jobs) {
  for (const Job& j : jobs)
    std::cout << "wrote " << j.script_path << " (" << to_string(j.plan.kind) << " job"
              << (c.o.array ? ", " + std::to_string(c.groups.size()) + " array tasks" : "") << ")\n"
              << "  " << (c.site.slurm ? "sbatch " : "bash ") << j.script_path << "\n";
  if (c.o.array || c.o.twin)
    std::cout << "afterwards: miniapp merge" << (c.o.twin ? " --side-by-side" : "") << " RESULTS_DIRS... "
              << "(or submit with --submit, which adds the merge job)\n";
  return exit_code::kAllVerified;
}

int ask_the_scheduler(const Context& c, const std::vector<Job>& jobs) {
  if (!c.site.slurm) {
    std::cerr << "miniapp submit: site " << c.site.name << " has no scheduler to ask (--test-only)\n";
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

// No scheduler: the scripts run here, one after another, then the merge.
int run_here(const Context& c, const std::vector<Job>& jobs) {
  const Options& o = c.o;
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
      const std::string base = c.results_root + "/" + j.plan.results_name + "-" + job_id;
      result_dirs.push_back(o.array ? base + "/task-" + std::to_string(t) : base);
    }
  }
  if (!o.array && !o.twin) return worst;
  std::vector<std::string> args = {"merge"};
  if (o.twin) args.push_back("--side-by-side");
  args.push_back("--output");
  args.push_back(o.twin ? c.results_root + "/" + c.deck_name + "-twin-" + job_id
                        : c.results_root + "/" + c.deck_name + "-" + job_id + "/merged");
  args.insert(args.end(), result_dirs.begin(), result_dirs.end());
  std::vector<char*> merge_argv;
  for (std::string& a : args) merge_argv.push_back(a.data());
  std::cout << "\n";
  return std::max(worst, run_merge(static_cast<int>(merge_argv.size()), merge_argv.data()));
}

// The job that merges an array's tasks or a twin's jobs once they have ended.
int submit_merge_job(const Context& c, const std::vector<std::string>& ids, const std::vector<std::string>& result_dirs) {
  MergePlan m;
  m.job_name = "miniapp-" + c.deck_name + "-merge";
  m.account = c.o.account;
  m.binary = c.binary;
  m.directories = result_dirs;
  m.side_by_side = c.o.twin;
  m.output = c.o.twin ? c.results_root + "/" + c.deck_name + "-twin-" + ids[0] + "-" + ids[1]
                      : c.results_root + "/" + c.deck_name + "-" + ids[0] + "/merged";
  m.results_root = c.results_root;
  std::string after;
  for (const std::string& id : ids) after += (after.empty() ? "" : ":") + id;
  const std::string path = c.results_root + "/jobs/" + c.deck_name + "-" + c.site.name + "-merge-" + ids[0] + ".sbatch";
  m.comment = {"Written by `miniapp submit` for site " + c.site.name + ": merges job(s) " + after +
               " once they have ended"};
  try {
    write_script(path, merge_script(c.site, m));
  } catch (const std::exception& e) {
    std::cerr << "miniapp submit: " << e.what() << "\n";
    return exit_code::kRuntimeError;
  }
  int code = exit_code::kAllVerified;
  const std::optional<std::string> id = sbatch({"--dependency=afterany:" + after}, path, code);
  if (!id) return code;
  std::cout << "submitted merge job " << *id << " (after " << after << "): merged results in " << m.output << "/\n";
  return code;
}

int submit_to_slurm(const Context& c, const std::vector<Job>& jobs) {
  int code = exit_code::kAllVerified;
  std::vector<std::string> ids, result_dirs;
  for (const Job& j : jobs) {
    const std::optional<std::string> id = sbatch({}, j.script_path, code);
    if (!id) return code;
    ids.push_back(*id);
    const std::string base = c.results_root + "/" + j.plan.results_name + "-" + *id;
    std::cout << "submitted " << to_string(j.plan.kind) << " job " << *id << " (" << j.script_path << ")";
    if (c.o.array) {
      std::cout << ": " << c.groups.size() << " array tasks, results in " << base << "/task-<i>/\n";
      for (std::size_t t = 0; t < c.groups.size(); ++t) result_dirs.push_back(base + "/task-" + std::to_string(t));
    } else {
      std::cout << ": results in " << base << "/\n";
      result_dirs.push_back(base);
    }
  }
  return c.o.array || c.o.twin ? submit_merge_job(c, ids, result_dirs) : code;
}

// What was asked for, once the deck, the site and the scripts are known to be good.
int carry_out(const Context& c, const std::vector<Job>& jobs) {
  if (c.o.mode == Mode::Print) return print_scripts(jobs);
  try {
    fs::create_directories(c.results_root);  // Slurm writes the job logs there and creates no directory
    for (const Job& j : jobs) write_script(j.script_path, j.text);
  } catch (const std::exception& e) {
    std::cerr << "miniapp submit: " << e.what() << "\n";
    return exit_code::kRuntimeError;
  }
  if (c.o.mode == Mode::Write) return say_what_was_written(c, jobs);
  if (c.o.mode == Mode::TestOnly) return ask_the_scheduler(c, jobs);
  return c.site.slurm ? submit_to_slurm(c, jobs) : run_here(c, jobs);
}

}  // namespace

int run_submit(int argc, char** argv) {
  Options o;
  try {
    o = parse(argc, argv);
  } catch (const UsageError& e) {
    return usage_error("miniapp submit", e);
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
  auto site = load_site(o);
  if (const int* code = std::get_if<int>(&site)) return *code;
  const SiteProfile& profile = *std::get<ProfileResult>(site).profile;
  if (placeholder_account(o, profile)) return exit_code::kBadInput;
  if (o.ranks && *o.ranks > 1 && !splits_across(*loaded.deck, *o.ranks)) return exit_code::kBadInput;

  const std::string binary = absolute(o.binary.empty() ? self_binary() : o.binary);
  const Context c{o,
                  *loaded.deck,
                  profile,
                  fs::path(o.deck).stem().string(),
                  absolute(o.results),
                  binary,
                  o.gpu_binary.empty() ? binary : absolute(o.gpu_binary),
                  expand(*loaded.deck).size(),
                  measurement_groups(*loaded.deck)};
  std::vector<Job> jobs;
  try {
    for (JobKind kind : job_kinds(o, *loaded.deck, profile)) jobs.push_back(make_job(c, kind));
  } catch (const ResourceError& e) {
    std::cerr << "miniapp submit: " << e.what() << "; nothing was submitted\n";
    return exit_code::kBadInput;
  }
  return carry_out(c, jobs);
}

}  // namespace miniapp::submit
