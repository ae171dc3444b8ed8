// The job subcommands without a scheduler: every shipped site profile loads and yields its site's
// exact directives (seeds 000, 001, 004), profile mistakes are reported with file:line:column,
// merge names incomplete tasks and keeps every measurement, queue-wait reproduces the seed's
// tables from a recorded sacct output. tests/slurm/ runs the same against a real Slurm.

#include "miniapp/commands/merge/merge.hpp"
#include "miniapp/commands/submit/batch_script.hpp"
#include "miniapp/commands/queue_wait/queue_wait.hpp"
#include "miniapp/commands/submit/site_profile.hpp"
#include "miniapp/core/spaces.hpp"
#include "../common/scratch_dir.hpp"
#include "../common/shell_command.hpp"

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace fs = std::filesystem;
using namespace miniapp;
using namespace miniapp::submit;

namespace {

const std::string kSites = std::string(MINIAPP_SOURCE_DIR) + "/sites";

SiteProfile site(const std::string& name) {
  const ProfileResult r = load_site_profile_file(kSites + "/" + name + ".yaml");
  for (const Diagnostic& d : r.diagnostics.all()) ADD_FAILURE() << format(d);
  if (!r.profile) throw std::runtime_error("profile " + name + " did not load");
  return *r.profile;
}

JobPlan plan(JobKind kind) {
  JobPlan p;
  p.kind = kind;
  p.job_name = "miniapp-test";
  p.binary = "/opt/miniapp/bin/miniapp";
  p.deck = "/home/user/deck.yaml";
  p.results_root = "/home/user/results";
  p.results_name = "deck";
  return p;
}

bool has(const std::vector<std::string>& directives, const std::string& d) {
  return std::find(directives.begin(), directives.end(), d) != directives.end();
}

bool has_prefix(const std::vector<std::string>& directives, const std::string& prefix) {
  return std::any_of(directives.begin(), directives.end(),
                     [&](const std::string& d) { return d.rfind(prefix, 0) == 0; });
}

std::string messages(const Diagnostics& d) {
  std::string s;
  for (const Diagnostic& x : d.all()) s += format(x) + "\n";
  return s;
}

}  // namespace

TEST(SiteProfiles, EveryShippedProfileLoads) {
  const std::vector<std::string> names = known_sites({kSites});
  for (const char* expected : {"kestrel", "swift", "vermilion", "puhti", "mahti", "lumi", "alliance", "generic-cpu",
                               "generic-gpu", "local"})
    EXPECT_NE(std::find(names.begin(), names.end(), expected), names.end()) << expected;
  for (const std::string& n : names) EXPECT_EQ(site(n).name, n);
}

TEST(SiteProfiles, NrelScriptsCarryTheSeedsDirectives) {
  const auto kestrel = sbatch_directives(site("kestrel"), plan(JobKind::Gpu));
  for (const char* d : {"--account=<allocation>", "--time=01:00:00", "--mem=80G", "--gpus=1", "--nodes=1",
                        "--ntasks-per-node=32", "--output=/home/user/results/%j-%x.log"})
    EXPECT_TRUE(has(kestrel, d)) << d;
  EXPECT_FALSE(has_prefix(kestrel, "--partition")) << "Kestrel routes GPU jobs by --time";

  const auto swift = sbatch_directives(site("swift"), plan(JobKind::Gpu));
  for (const char* d : {"--partition=gpu", "--mem=250G", "--gpus=1", "--ntasks-per-node=24"})
    EXPECT_TRUE(has(swift, d)) << d;

  const auto vermilion = sbatch_directives(site("vermilion"), plan(JobKind::Gpu));
  for (const char* d : {"--partition=gpu", "--mem=0", "--ntasks-per-node=30", "--exclusive"})
    EXPECT_TRUE(has(vermilion, d)) << d;
  EXPECT_FALSE(has_prefix(vermilion, "--gpus") || has_prefix(vermilion, "--gres")) << "the seed requests no GPU";
}

TEST(SiteProfiles, CscScriptsCarryTheSeedsDirectives) {
  const auto puhti = sbatch_directives(site("puhti"), plan(JobKind::Gpu));
  for (const char* d : {"--account=<project>", "--partition=gpu", "--nodes=1", "--ntasks=1", "--cpus-per-task=10",
                        "--mem=64G", "--time=1:00:00", "--gres=gpu:v100:1"})
    EXPECT_TRUE(has(puhti, d)) << d;

  const auto mahti = sbatch_directives(site("mahti"), plan(JobKind::Gpu));
  for (const char* d : {"--partition=gpusmall", "--cpus-per-task=32", "--gres=gpu:a100:1"}) EXPECT_TRUE(has(mahti, d)) << d;
  EXPECT_FALSE(has_prefix(mahti, "--mem"));
  // gpusmall takes 1-2 GPUs; more go to gpumedium, with 32 CPUs per GPU.
  JobPlan three = plan(JobKind::Gpu);
  three.gpus = 3;
  const auto mahti3 = sbatch_directives(site("mahti"), three);
  for (const char* d : {"--partition=gpumedium", "--cpus-per-task=96", "--gres=gpu:a100:3"})
    EXPECT_TRUE(has(mahti3, d)) << d;

  const auto lumi = sbatch_directives(site("lumi"), plan(JobKind::Gpu));
  for (const char* d : {"--partition=small-g", "--ntasks=1", "--cpus-per-task=7", "--gpus-per-node=1", "--mem=60G"})
    EXPECT_TRUE(has(lumi, d)) << d;
  const std::string lumi_script = batch_script(site("lumi"), plan(JobKind::Gpu));
  EXPECT_NE(lumi_script.find("rocm-smi"), std::string::npos);
  EXPECT_NE(lumi_script.find("gpu-energy --diff"), std::string::npos);
  EXPECT_NE(lumi_script.find("no hip space"), std::string::npos);
}

TEST(SiteProfiles, AllianceGpuAndCpuJobsAreTheSeedsTwo) {
  const auto gpu = sbatch_directives(site("alliance"), plan(JobKind::Gpu));
  for (const char* d : {"--ntasks=1", "--gres=gpu:1", "--cpus-per-task=4", "--mem=8000M"}) EXPECT_TRUE(has(gpu, d)) << d;
  const auto cpu = sbatch_directives(site("alliance"), plan(JobKind::Cpu));
  for (const char* d : {"--ntasks=1", "--cpus-per-task=16", "--mem=32000M"}) EXPECT_TRUE(has(cpu, d)) << d;
  EXPECT_FALSE(has_prefix(cpu, "--gres"));
  EXPECT_TRUE(is_placeholder(*site("alliance").account));
}

TEST(SiteProfiles, CpusAndMemoryScaleWithTheGpusAndANodeIsTheLimit) {
  JobPlan two = plan(JobKind::Gpu);
  two.gpus = 2;
  const auto puhti = sbatch_directives(site("puhti"), two);
  for (const char* d : {"--cpus-per-task=20", "--mem=128G", "--gres=gpu:v100:2"}) EXPECT_TRUE(has(puhti, d)) << d;
  JobPlan five = plan(JobKind::Gpu);
  five.gpus = 5;
  EXPECT_THROW(sbatch_directives(site("puhti"), five), ResourceError);
  EXPECT_EQ(scale_memory("8000M", 3), "24000M");
  EXPECT_EQ(scale_memory("0", 4), "0");
  EXPECT_THROW(sbatch_directives(site("generic-cpu"), plan(JobKind::Gpu)), ResourceError) << "no gpu section";
}

TEST(BatchScript, TakesThreadsFromSlurmAndPassesSigtermOn) {
  const std::string s = batch_script(site("generic-cpu"), plan(JobKind::Cpu));
  EXPECT_NE(s.find("THREADS=${SLURM_CPUS_PER_TASK:-"), std::string::npos);
  EXPECT_NE(s.find("export OMP_NUM_THREADS=$THREADS"), std::string::npos);
  EXPECT_NE(s.find("OMP_PROC_BIND=${OMP_PROC_BIND:-spread} OMP_PLACES=${OMP_PLACES:-threads}"), std::string::npos);
  EXPECT_NE(s.find("LAUNCH+=(--ntasks=1 --cpus-per-task=\"$THREADS\")"), std::string::npos);
  EXPECT_NE(s.find("trap 'kill -TERM \"$RUN\""), std::string::npos);
  EXPECT_NE(s.find("RESULTS=/home/user/results/deck-$JOB\n"), std::string::npos);
  EXPECT_EQ(s.find("nvidia-smi"), std::string::npos) << "no GPU monitor in a CPU job";
  // No scheduler: no directives at all.
  const std::string local = batch_script(site("local"), plan(JobKind::Cpu));
  EXPECT_EQ(local.find("#SBATCH"), std::string::npos);
  EXPECT_NE(local.find("THREADS=${SLURM_CPUS_PER_TASK:-${SLURM_CPUS_ON_NODE:-$(nproc)}}"), std::string::npos);
}

TEST(BatchScript, AnArrayRunsOneMeasurementGroupPerTask) {
  JobPlan p = plan(JobKind::Cpu);
  p.array_groups = {{"--case", "0", "--sizes", "32"}, {"--case", "0", "--sizes", "48"}, {"--case", "1", "--sizes", "64"}};
  p.throttle = 2;
  const auto d = sbatch_directives(site("generic-cpu"), p);
  EXPECT_TRUE(has(d, "--array=0-2%2"));
  EXPECT_TRUE(has(d, "--output=/home/user/results/%x-%A_%a.out"));
  const std::string s = batch_script(site("generic-cpu"), p);
  EXPECT_NE(s.find("  2) GROUP=(--case 1 --sizes 64) ;;"), std::string::npos);
  EXPECT_NE(s.find("RESULTS=/home/user/results/deck-$JOB/task-$TASK"), std::string::npos);
  EXPECT_EQ(shell_quote("a b'c"), "'a b'\\''c'");
}

TEST(BatchScript, MpiRanksAreTheTasksOfOneStepWithAGpuEach) {
  JobPlan cpu = plan(JobKind::Cpu);
  cpu.ranks = 4;
  cpu.cpus = 16;
  const std::string s = batch_script(site("generic-cpu"), cpu);
  EXPECT_NE(s.find("RANKS=4\nTHREADS=$(( THREADS / RANKS > 0 ? THREADS / RANKS : 1 ))\n"), std::string::npos) << s;
  EXPECT_NE(s.find("LAUNCH+=(--ntasks=\"$RANKS\" --cpus-per-task=\"$THREADS\")"), std::string::npos) << s;
  EXPECT_EQ(s.find("--ntasks=1 --cpus-per-task"), std::string::npos) << "one step of 4 tasks, not one task";
  EXPECT_NE(s.find("LAUNCH=(mpirun -np \"$RANKS\""), std::string::npos) << "outside Slurm: mpirun";
  EXPECT_NE(s.find("export OMP_PROC_BIND=${OMP_PROC_BIND:-false}\n"), std::string::npos)
      << "no thread pinning unless asked: without a task binding every rank would pin to the first CPU";
  // A GPU job: one GPU per rank, as many as ranks.
  JobPlan gpu = plan(JobKind::Gpu);
  gpu.ranks = 4;
  const auto kestrel = sbatch_directives(site("kestrel"), gpu);
  EXPECT_TRUE(has(kestrel, "--gpus=4")) << "--gpus follows --ranks";
  const std::string g = batch_script(site("kestrel"), gpu);
  EXPECT_NE(g.find("--cpus-per-task=\"$THREADS\" --gpus-per-task=1)"), std::string::npos) << g;
  gpu.gpus = 2;
  EXPECT_THROW(sbatch_directives(site("kestrel"), gpu), ResourceError) << "4 ranks on 2 GPUs";
  gpu.gpus.reset();
  gpu.ranks = 5;
  EXPECT_THROW(sbatch_directives(site("kestrel"), gpu), ResourceError) << "a Kestrel node has 4 GPUs";
  cpu.cpus = 2;
  EXPECT_THROW(sbatch_directives(site("generic-cpu"), cpu), ResourceError) << "4 ranks on 2 CPUs";
  // One rank: the script of a plain job.
  EXPECT_EQ(batch_script(site("generic-cpu"), plan(JobKind::Cpu)).find("RANKS="), std::string::npos);
}

TEST(SiteProfiles, MistakesAreReportedWithLineColumnAndKey) {
  const ProfileResult r = load_site_profile_text("description: mine\n"
                                                 "time: 1:00:00\n"
                                                 "acount: x\n"
                                                 "gpu:\n"
                                                 "  partition: gpu\n"
                                                 "  cpus_per_gpu: 8\n"
                                                 "  memory_per_gpu: 64 GB\n"
                                                 "  request: [\"--gres=gpu:{gpu}\"]\n",
                                                 "mine.yaml");
  EXPECT_FALSE(r.profile);
  const std::string m = messages(r.diagnostics);
  EXPECT_NE(m.find("mine.yaml:3:1: acount: unknown key (did you mean 'account'?)"), std::string::npos) << m;
  EXPECT_NE(m.find("mine.yaml:7:19: gpu.memory_per_gpu: found '64 GB'"), std::string::npos) << m;
  EXPECT_NE(m.find("gpu.request[0]: unknown placeholder {gpu}"), std::string::npos) << m;
}

TEST(QueueWait, ReproducesTheSeedsTablesFromARecordedSacctOutput) {
  std::ifstream in(std::string(MINIAPP_SOURCE_DIR) + "/tests/jobs/sacct-22.05.txt");
  std::stringstream text;
  text << in.rdbuf();
  const SacctParse parsed = parse_sacct(text.str());
  ASSERT_EQ(parsed.error, "");
  EXPECT_EQ(parsed.jobs.size(), 12u);
  EXPECT_EQ(parsed.skipped, 2u) << "a pending job and one without a time limit";
  const QueueWaitTable cpu = queue_wait_table(parsed.jobs, {"medium", "gpu", "int"}, Bins{}, false);
  EXPECT_EQ(cpu.text,
            "Partition\t< 4 CPUh\t4 CPUh - 16 CPUh\t16 CPUh - 64 CPUh\t> 64 CPUh\n"
            "medium\t7.0 m (4)\t3.4 h (1)\tNA\t8.0 h (2)\n"
            "gpu\t4.7 m (2)\tNA\t5.5 m (1)\tNA\n"
            "int\tNA\t1.5 s (2)\tNA\tNA\n");
  const QueueWaitTable mem = queue_wait_table(parsed.jobs, {"int"}, Bins{}, true);
  EXPECT_EQ(mem.text, "Partition\t< 4 GBh\t4 GBh - 16 GBh\t16 GBh - 64 GBh\t> 64 GBh\nint\tNA\t1.5 s (2)\tNA\tNA\n")
      << "2000Mc is per CPU";
  const QueueWaitTable unknown = queue_wait_table(parsed.jobs, {"somenonexistentpartition"}, Bins{}, false);
  EXPECT_EQ(unknown.error.rfind("error - please call sacct for existing partition(s)", 0), 0u) << unknown.error;
  EXPECT_NE(parse_sacct("JobID|State\n1|COMPLETED\n").error.find("Partition, Submit, Start"), std::string::npos);
}

namespace {
const auto* const kRemoveScratch = ::testing::AddGlobalTestEnvironment(
    new miniapp::testing::RemoveScratchUnlessFailed(miniapp::testing::scratch_root("jobs")));

fs::path scratch(const std::string& name) { return miniapp::testing::fresh_scratch_dir("jobs", name); }

// The statistics of a phase of two repetitions, `a` and `b` seconds, as results.json holds them.
std::string phase(double a, double b) {
  std::ostringstream o;
  o << "{\"min\": " << std::min(a, b) << ", \"median\": " << (a + b) / 2 << ", \"mean\": " << (a + b) / 2
    << ", \"stddev\": " << std::abs(a - b) / std::sqrt(2.0) << ", \"samples\": [" << a << ", " << b << "]}";
  return o.str();
}

// A task's results.json as the run command writes it, with `measurements` of the 2 its deck plans.
void write_results(const fs::path& dir, const std::string& status, const std::string& task, int measurements) {
  std::ostringstream j;
  j << "{\"schema\": \"kokkos-miniapp-results/1\", \"status\": \"" << status << "\",";
  if (status == "interrupted") j << "\"error\": \"stopped by signal 15\",";
  j << "\"planned_measurements\": 2, \"finished_measurements\": " << measurements << ","
    << "\"provenance\": {\"command_line\": [\"miniapp\", \"d.yaml\"], \"miniapp_version\": \"1\", "
    << "\"git_commit\": \"abc\", \"compiler\": \"g++\", \"kokkos_version\": \"3.4.01\", "
    << "\"spaces_compiled\": [\"serial\", \"openmp\"], \"started\": \"2026-01-01T00:00:0" << task << "Z\", "
    << "\"hostname\": \"node1\", \"host_threads\": 2, \"gpu\": null, \"environment\": "
    << "{\"SLURM_JOB_ID\": \"4" << task << "\", \"SLURM_ARRAY_JOB_ID\": \"40\", \"SLURM_ARRAY_TASK_ID\": \"" << task
    << "\", \"SLURM_JOB_NODELIST\": \"node1\"}},"
    << "\"deck\": {\"file\": \"d.yaml\", \"title\": \"t \\\"quoted\\\"\\nline\", \"cases\": [{\"name\": \"c" << task
    << "\", \"workload\": \"distance\", \"sizes\": [" << 32 + std::stoi(task)
    << "], \"precisions\": [\"float32\"], \"spaces\": [\"serial\", \"openmp\"], \"policies\": [\"host\"]}]},"
    << "\"calibration\": {\"spaces\": {\"serial\": {\"bandwidth_GBps\": {\"triad\": " << 1 + std::stoi(task) << "}}"
    << (task == "1" ? ", \"cuda\": {\"bandwidth_GBps\": {\"triad\": 2000}}" : "") << "}},"
    << "\"measurements\": [";
  for (int m = 0; m < measurements; ++m)
    j << (m ? "," : "") << "{\"case\": \"c" << task << "\", \"case_index\": 0, \"workload\": \"distance\", "
      << "\"variant\": \"direct\", \"size\": " << 32 + std::stoi(task) << ", \"precision\": \"float32\", "
      << "\"space\": \"" << (m ? "openmp" : "serial") << "\", \"policy\": \"host\", \"generate\": \"host\", "
      << "\"seconds\": {\"to_device\": " << phase(0, 0) << ", \"compute\": " << phase(1e-06, 2e-06)
      << ", \"to_host\": " << phase(0, 0) << ", \"total\": " << phase(1.5e-06, 2.5e-06) << "}, "
      << "\"verification\": {\"checked\": true, \"passed\": true}, \"speedup\": null}";
  j << "]}\n";
  std::ofstream(dir / "results.json") << j.str();
}
}  // namespace

TEST(Merge, NamesMissingAndInterruptedTasksAndKeepsEveryMeasurement) {
  const fs::path root = scratch("merge");
  fs::create_directories(root / "task-0");
  fs::create_directories(root / "task-1");
  fs::create_directories(root / "task-2");
  write_results(root / "task-0", "complete", "0", 2);
  write_results(root / "task-1", "interrupted", "1", 1);
  const MergedResults m = merge_directories(
      {(root / "task-0").string(), (root / "task-1").string(), (root / "task-2").string(), (root / "task-3").string()});
  ASSERT_EQ(m.tasks.size(), 4u);
  EXPECT_EQ(m.tasks[0].status, "complete");
  EXPECT_EQ(m.tasks[1].status, "interrupted");
  EXPECT_NE(m.tasks[1].error.find("stopped by signal 15; 1 of 2 measurements kept"), std::string::npos);
  EXPECT_EQ(m.tasks[2].status, "missing") << "a directory without results.json";
  EXPECT_EQ(m.tasks[3].status, "missing") << "no directory at all";
  EXPECT_EQ(m.status, "failed");
  EXPECT_EQ(m.tasks[1].array_task_id, "1");

  const std::string merged = merged_json(m, {"miniapp", "merge"});
  std::ofstream(root / "merged.json") << merged;
  const miniapp::testing::CommandResult valid = miniapp::testing::validate_results((root / "merged.json").string());
  EXPECT_EQ(valid.exit_code, 0) << "the merged record matches the results schema: " << valid.output;
  const YAML::Node json = YAML::Load(merged);
  EXPECT_EQ(json["schema"].as<std::string>(), "kokkos-miniapp-results/1");
  EXPECT_EQ(json["finished_measurements"].as<int>(), 3);
  ASSERT_EQ(json["measurements"].size(), 3u);
  EXPECT_EQ(json["measurements"][2]["case_index"].as<int>(), 1) << "cases renumbered across tasks";
  EXPECT_EQ(json["measurements"][2]["task"].as<int>(), 1);
  EXPECT_DOUBLE_EQ(json["measurements"][0]["seconds"]["total"]["samples"][1].as<double>(), 2.5e-06);
  EXPECT_TRUE(json["measurements"][0]["speedup"].IsNull());
  EXPECT_EQ(json["deck"]["title"].as<std::string>(), "t \"quoted\"\nline");
  EXPECT_EQ(json["deck"]["cases"].size(), 2u);
  EXPECT_EQ(json["tasks"][3]["status"].as<std::string>(), "missing");
  // Calibration: each task's own block, and the union of spaces, each from the first task that has it.
  EXPECT_EQ(json["tasks"][1]["calibration"]["spaces"]["serial"]["bandwidth_GBps"]["triad"].as<int>(), 2);
  EXPECT_TRUE(json["tasks"][3]["calibration"].IsNull());
  EXPECT_EQ(json["calibration"]["spaces"]["serial"]["bandwidth_GBps"]["triad"].as<int>(), 1);
  EXPECT_EQ(json["calibration"]["spaces"]["cuda"]["bandwidth_GBps"]["triad"].as<int>(), 2000);
  EXPECT_EQ(json["calibration"]["from_task"]["serial"].as<int>(), 0);
  EXPECT_EQ(json["calibration"]["from_task"]["cuda"].as<int>(), 1);
  const std::string csv = merged_csv(m);
  EXPECT_EQ(std::count(csv.begin(), csv.end(), '\n'), 1 + 3 * 2) << csv;  // header + a row per repetition
  EXPECT_EQ(csv.rfind("task,case,workload,", 0), 0u) << csv;
  EXPECT_NE(csv.find("\n0,c0,distance,direct,float32,32,serial,"), std::string::npos) << csv;
  EXPECT_NE(csv.find("\n1,c1,distance,direct,float32,33,serial,"), std::string::npos) << "rows name their task: " << csv;
  std::ostringstream table;
  print_task_summary(table, m);
  EXPECT_NE(table.str().find("4 task(s): 1 complete, 1 interrupted, 2 missing"), std::string::npos) << table.str();
  fs::remove_all(root.parent_path());
}

// The subcommands as a user runs them, without a scheduler (site `local` runs the script here).
namespace {
using miniapp::testing::CommandResult;

CommandResult run_in(const fs::path& dir, const std::string& args) {
  // The runs (and the jobs the local site starts) share a calibration cache here, not in $HOME.
  const std::string command = "cd '" + dir.string() + "' && MINIAPP_CALIBRATION_CACHE='" +
                              (miniapp::testing::scratch_root("jobs") /
                               "calibration-cache").string() +
                              "' " + MINIAPP_BINARY + " " + args + " 2>&1";
  return miniapp::testing::run_shell_command(command);
}

// On the first compiled space (a host space wherever one is: a build may leave Serial out).
std::string small_deck() {
  return "cases:\n"
         "  - name: distance-small\n"
         "    workload: distance\n"
         "    sizes: [32, 48]\n"
         "    spaces: [" + miniapp::space_name<miniapp::FirstCompiledSpace>() + "]\n"
         "    policies: [host]\n"
         "    repetitions: 2\n";
}
}  // namespace

TEST(SubmitCommand, RefusesABadDeckAnUnknownSiteAndAPlaceholderAccount) {
  const fs::path dir = scratch("submit-errors");
  std::ofstream(dir / "bad.yaml") << "cases:\n  - workload: distance\n    sizes: [32]\n    repetitons: 2\n";
  std::ofstream(dir / "deck.yaml") << small_deck();
  CommandResult r = run_in(dir, "submit bad.yaml --site puhti --print");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("bad.yaml:4:5: cases[0].repetitons: unknown key (did you mean 'repetitions'?)"),
            std::string::npos)
      << r.output;
  r = run_in(dir, "submit deck.yaml --site nowhere");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.output.find("unknown site 'nowhere'; known sites: alliance, generic-cpu, generic-gpu, kestrel, local, "
                          "lumi, mahti, puhti, swift, vermilion"),
            std::string::npos)
      << r.output;
  r = run_in(dir, "submit deck.yaml --site lumi --submit");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.output.find("still the placeholder '<project>'"), std::string::npos) << r.output;
  EXPECT_FALSE(fs::exists(dir / "results")) << "nothing written for a refused submission";
  r = run_in(dir, "submit deck.yaml --site puhti --gpu --account project_2001234 --print");
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("#SBATCH --account=project_2001234\n"), std::string::npos);
  EXPECT_NE(r.output.find("#SBATCH --gres=gpu:v100:1\n"), std::string::npos);
  r = run_in(dir, "submit deck.yaml --site puhti --throttle 2");
  EXPECT_EQ(r.exit_code, 2) << "--throttle without --array";
  // A deck with a measurement that does not split across ranks: refused before any script.
  std::ofstream(dir / "dense.yaml") << "cases:\n  - workload: solver\n    variant: dense-blocked\n    sizes: [32]\n";
  r = run_in(dir, "submit dense.yaml --site generic-cpu --ranks 2 --print");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("dense.yaml:2:1: cases[0] ("), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("): dense-blocked "), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("cannot run on 2 MPI ranks (--ranks); nothing was submitted"), std::string::npos) << r.output;
  r = run_in(dir, "submit deck.yaml --site generic-cpu --ranks 2 --print");
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("RANKS=2\n"), std::string::npos) << r.output;
  r = run_in(dir, "deck.yaml --case 5 --dry-run");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.output.find("--case '5': the deck has no such case (its cases: 0 distance-small)"), std::string::npos)
      << r.output;
}

TEST(SubmitCommand, LocalSiteRunsAnArrayHereAndMergesIt) {
  const fs::path dir = scratch("submit-local");
  std::ofstream(dir / "deck.yaml") << small_deck();
  const CommandResult r = run_in(dir, "submit deck.yaml --site local --array --submit");
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("2 task(s): 2 complete"), std::string::npos) << r.output;
  std::vector<fs::path> merged;
  for (const auto& e : fs::directory_iterator(dir / "results"))
    if (fs::exists(e.path() / "merged" / "results.json")) merged.push_back(e.path() / "merged" / "results.json");
  ASSERT_EQ(merged.size(), 1u) << r.output;
  const CommandResult valid = miniapp::testing::validate_results((dir / "results").string());
  EXPECT_EQ(valid.exit_code, 0) << "every task's record and the merged one match the results schema: "
                                << valid.output;
  const YAML::Node json = YAML::LoadFile(merged[0].string());
  EXPECT_EQ(json["status"].as<std::string>(), "complete");
  EXPECT_EQ(json["measurements"].size(), 2u);
  EXPECT_EQ(json["measurements"][1]["size"].as<int>(), 48);
  EXPECT_EQ(json["measurements"][1]["task"].as<int>(), 1);
  const CommandResult bad_merge = run_in(dir, "merge " + (dir / "results" / "nothing-here").string());
  EXPECT_EQ(bad_merge.exit_code, 3) << bad_merge.output;
  EXPECT_NE(bad_merge.output.find("missing: no such directory"), std::string::npos) << bad_merge.output;
  EXPECT_EQ(run_in(dir, "merge").exit_code, 2);
  fs::remove_all(dir.parent_path());
}

TEST(BatchScript, EveryProfilesScriptsAreValidBash) {
  const fs::path dir = scratch("bash-n");
  for (const std::string& name : known_sites({kSites})) {
    const SiteProfile s = site(name);
    for (JobKind kind : {JobKind::Cpu, JobKind::Gpu}) {
      if (!s.shape(kind)) continue;
      for (bool array : {false, true}) {
        JobPlan p = plan(kind);
        if (array) p.array_groups = {{"--case", "0", "--sizes", "32"}, {"--case", "1", "--sizes", "64"}};
        const fs::path file = dir / (name + "-" + to_string(kind) + (array ? "-array" : "") + ".sbatch");
        std::ofstream(file) << batch_script(s, p);
        const std::string command = "bash -n '" + file.string() + "' 2>&1";
        EXPECT_EQ(std::system(command.c_str()), 0) << file;
      }
    }
  }
  fs::remove_all(dir.parent_path());
}
