// Runs the miniapp binary as a user would and checks its exit codes and result files.

#include "../common/scratch_dir.hpp"
#include "../common/shell_command.hpp"

#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>

#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdint>
#include <cstdlib>
#include <iostream>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>
#include <map>
#include <utility>
#include <random>
#include <utility>
#include <vector>
#include <set>
#include <sstream>
#include <string>
#include <thread>

namespace fs = std::filesystem;

namespace {

using Result = miniapp::testing::CommandResult;  // output: stdout and stderr

// The runs share one machine-wide calibration cache in this test's temporary directory: the first
// run probes, the others reuse it, as a user's short runs on one machine do; nothing lands in $HOME.
void use_a_private_calibration_cache() {
  static const bool done = [] {
    const fs::path dir = miniapp::testing::scratch_root("e2e") / "calibration-cache";
    setenv("MINIAPP_CALIBRATION_CACHE", dir.c_str(), 1);
    return true;
  }();
  (void)done;
}

Result run(const std::string& args) {
  use_a_private_calibration_cache();
  return miniapp::testing::run_shell_command(std::string(MINIAPP_BINARY) + " " + args + " 2>&1");
}

// Every results.json the runs of this test wrote (all under one directory) is checked against
// miniapp/record/results.schema.json once the tests have run. Then the directory goes, unless
// something failed: its path is printed and it is kept to look into.
class ResultsMatchTheSchema : public ::testing::Environment {
 public:
  void TearDown() override {
    const fs::path dir = miniapp::testing::scratch_root("e2e");
    bool any = false;
    std::error_code ec;
    for (auto it = fs::recursive_directory_iterator(dir, ec); !ec && it != fs::recursive_directory_iterator(); ++it)
      if (it->path().filename() == "results.json") any = true;
    if (any) {  // else a filtered run that wrote none
      const auto r = miniapp::testing::validate_results(dir.string());
      EXPECT_EQ(r.exit_code, 0) << r.output;
      std::cout << r.output;
    }
    miniapp::testing::remove_unless_failed(dir);
  }
};
const auto* const kResultsMatchTheSchema = ::testing::AddGlobalTestEnvironment(new ResultsMatchTheSchema);

fs::path fresh_dir(const std::string& name) { return miniapp::testing::fresh_scratch_dir("e2e", name); }

fs::path write_deck(const fs::path& dir, const std::string& text) {
  const fs::path deck = dir / "deck.yaml";
  std::ofstream(deck) << text;
  return deck;
}

// A deck written into a fresh directory and run quietly into DIR/out.
struct DeckRun {
  fs::path deck, out;
  Result result;
  YAML::Node results() const { return YAML::LoadFile((out / "results.json").string()); }
};
DeckRun run_deck(const std::string& name, const std::string& text) {
  const fs::path dir = fresh_dir(name);
  DeckRun r{write_deck(dir, text), dir / "out", {}};
  r.result = run(r.deck.string() + " --quiet --output " + r.out.string());
  return r;
}

// Starts the binary on a deck, quietly into `out`, without waiting; `in_child` runs in the child
// just before the binary replaces it (limits, redirections).
pid_t start(const fs::path& deck, const fs::path& out, const std::function<void()>& in_child = {}) {
  use_a_private_calibration_cache();
  const pid_t pid = fork();
  if (pid == 0) {
    if (in_child) in_child();
    const std::string d = deck.string(), o = out.string();
    execl(MINIAPP_BINARY, MINIAPP_BINARY, d.c_str(), "--quiet", "--output", o.c_str(), static_cast<char*>(nullptr));
    _exit(127);
  }
  return pid;
}

// Read once from `--list`: the binary does not change while the tests run.
const std::vector<std::string>& compiled_spaces() {
  static const std::vector<std::string> spaces = [] {
    const Result r = run("--list");
    std::vector<std::string> listed;
    std::istringstream in(r.output);
    std::string line;
    bool in_spaces = false;
    while (std::getline(in, line)) {
      if (line.rfind("execution spaces compiled in", 0) == 0) in_spaces = true;
      else if (!line.empty() && line[0] != ' ') in_spaces = false;
      else if (in_spaces) listed.push_back(line.substr(2, line.find(' ', 2) - 2));
    }
    return listed;
  }();
  return spaces;
}

// The first compiled space (Serial where it is compiled; OpenMP in Debian's Kokkos 5, which has no Serial).
std::string first_space() { return compiled_spaces().front(); }

bool has_threaded_host_space() {
  const std::vector<std::string>& spaces = compiled_spaces();
  return std::find(spaces.begin(), spaces.end(), "openmp") != spaces.end() ||
         std::find(spaces.begin(), spaces.end(), "threads") != spaces.end();
}

}  // namespace

TEST(EndToEnd, EveryMeasurementVerifiesWithPhasesOnEverySpaceAndPolicy) {
  const fs::path dir = fresh_dir("full");
  const fs::path deck = write_deck(dir,
                                   "cases:\n"
                                   "  - workload: distance\n"
                                   "    sizes: [64, 96]\n"
                                   "    precision: all\n"
                                   "    spaces: all\n"
                                   "    policies: all\n"
                                   "    repetitions: 2\n");
  const Result r = run(deck.string() + " --output " + (dir / "out").string());
  ASSERT_EQ(r.exit_code, 0) << r.output;

  const YAML::Node json = YAML::LoadFile((dir / "out" / "results.json").string());
  EXPECT_EQ(json["status"].as<std::string>(), "complete");
  const YAML::Node ms = json["measurements"];
  ASSERT_TRUE(ms.IsSequence());
  EXPECT_EQ(ms.size(), json["planned_measurements"].as<std::size_t>());
  EXPECT_EQ(ms.size(), json["finished_measurements"].as<std::size_t>());

  std::set<std::string> combos;
  std::size_t samples = 0;
  for (const YAML::Node& m : ms) {
    EXPECT_TRUE(m["verification"]["checked"].as<bool>());
    EXPECT_TRUE(m["verification"]["passed"].as<bool>()) << m["verification"]["detail"].as<std::string>();
    for (const char* phase : {"to_device", "compute", "to_host", "total"}) {
      ASSERT_TRUE(m["seconds"][phase].IsMap()) << phase;
      EXPECT_EQ(m["seconds"][phase]["samples"].size(), 2u) << phase;
      EXPECT_GE(m["seconds"][phase]["median"].as<double>(), 0.0);
    }
    EXPECT_GT(m["seconds"]["compute"]["min"].as<double>(), 0.0);
    EXPECT_GT(m["work"]["GFLOPs"].as<double>(), 0.0);
    combos.insert(m["space"].as<std::string>() + "/" + m["policy"].as<std::string>());
    samples += 2;
  }
  for (const std::string& space : compiled_spaces())
    for (const char* policy : {"copy-every-iteration", "inputs-resident", "all-resident"})
      EXPECT_TRUE(combos.count(space + "/" + policy)) << space << "/" << policy;
  EXPECT_TRUE(combos.count(compiled_spaces().front() + "/host"));

  EXPECT_FALSE(json["provenance"]["kokkos_version"].as<std::string>().empty());
  EXPECT_TRUE(json["provenance"]["command_line"].IsSequence());

  std::ifstream csv(dir / "out" / "results.csv");
  std::size_t lines = 0;
  for (std::string line; std::getline(csv, line);) ++lines;
  EXPECT_EQ(lines, samples + 1);  // header + one row per repetition
  EXPECT_TRUE(fs::exists(dir / "out" / "benchmark.json"));
  EXPECT_FALSE(fs::exists(dir / "out" / "results.json.tmp"));
}

TEST(EndToEnd, BadDeckExitsWithTwoNamesTheLineAndRunsNothing) {
  const fs::path dir = fresh_dir("bad");
  const fs::path deck = write_deck(dir, "cases:\n  - workload: distance\n    sizes: 10\n    polices: all\n");
  const Result r = run(deck.string() + " --output " + (dir / "out").string());
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("deck.yaml:4:5: cases[0].polices: unknown key (did you mean 'policies'?)"),
            std::string::npos)
      << r.output;
  EXPECT_FALSE(fs::exists(dir / "out"));
}

TEST(EndToEnd, UsageErrorsExitWithTwo) {
  EXPECT_EQ(run("--no-such-option deck.yaml").exit_code, 2);
  EXPECT_EQ(run("").exit_code, 2);
  EXPECT_EQ(run("--spaces nonsense x.yaml").exit_code, 2);
  EXPECT_EQ(run("does-not-exist.yaml").exit_code, 2);
}

// Every command reads its options with the one parser (miniapp/core/options.hpp) and says what is
// wrong the same way, before doing anything.
TEST(EndToEnd, EveryCommandRefusesAnUnknownOptionAlike) {
  const std::pair<std::string, std::string> commands[] = {{"", "--output"},        {"submit", "--results"},
                                                          {"merge", "--output"},   {"queue-wait", "--since"},
                                                          {"report", "--output"},  {"advise", "--output"}};
  for (const auto& [command, valued] : commands) {
    const std::string name = command.empty() ? "miniapp" : "miniapp " + command;
    const Result r = run(command + " --no-such-option");
    EXPECT_EQ(r.exit_code, 2) << name << ": " << r.output;
    EXPECT_NE(r.output.find(name + ": unknown option '--no-such-option' (see " + name + " --help)"), std::string::npos)
        << r.output;
    const Result missing = run(command + " " + valued);
    EXPECT_EQ(missing.exit_code, 2) << name << ": " << missing.output;
    EXPECT_NE(missing.output.find(name + ": " + valued + " needs a value"), std::string::npos)
        << missing.output;
  }
}

TEST(EndToEnd, HelpVersionAndListDescribeTheBinary) {
  const Result help = run("--help");
  EXPECT_EQ(help.exit_code, 0);
  EXPECT_NE(help.output.find("exit codes"), std::string::npos);
  const Result version = run("--version");
  EXPECT_EQ(version.exit_code, 0);
  EXPECT_NE(version.output.find("Kokkos"), std::string::npos);
  const Result list = run("--list");
  EXPECT_EQ(list.exit_code, 0);
  EXPECT_NE(list.output.find("distance"), std::string::npos);
  EXPECT_NE(list.output.find("all-resident"), std::string::npos);
  // --list runs before Kokkos::initialize: a host space gives its team scratch limit all the same
  // (a device space says it is known once initialized: making a device instance earlier aborts).
  ASSERT_FALSE(compiled_spaces().empty());
  EXPECT_NE(list.output.find("scratch per team (float64): " + compiled_spaces().front() + ": level 0 "), std::string::npos)
      << list.output;
}

// The variants `--list` marks unavailable in this build (those that call Kokkos Kernels, in a
// build without it).
std::set<std::string> unavailable_variants() {
  std::set<std::string> out;
  std::istringstream in(run("--list").output);
  std::string line;
  while (std::getline(in, line))
    if (line.rfind("    - ", 0) == 0 && line.find("[unavailable") != std::string::npos)
      out.insert(line.substr(6, line.find(':') - 6));
  return out;
}

// --kernel-times: every phase's kernels in OUT/kernel-times.json under the measurement's and the
// phase's regions, vendor BLAS calls as regions inside the phase, the compute phases summarized on
// stderr, and results.json saying the run was fenced after every kernel. dense-blocked (Kokkos
// Kernels) where this build has it, else batched-thread, which launches no BLAS.
TEST(EndToEnd, KernelTimesPutEveryKernelUnderItsPhase) {
  const bool dense = unavailable_variants().count("dense-blocked") == 0;
  const std::string solver = dense ? "dense-blocked" : "batched-thread";
  const fs::path dir = fresh_dir("kernel-times");
  const fs::path deck = write_deck(dir,
                                   "cases:\n"
                                   "  - {name: solve, workload: solver, variant: " + solver + ", sizes: [96]}\n"
                                   "  - {name: fit, workload: regression, variant: fused, iterations: 5, sizes: [200]}\n"
                                   "defaults: {spaces: [" + first_space() + "], policies: [copy-every-iteration],"
                                   " warmup: 1, repetitions: 2, precision: float64}\n");
  const Result r = run(deck.string() + " --kernel-times --no-calibrate --output " + (dir / "out").string());
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(YAML::LoadFile((dir / "out" / "results.json").string())["kernels_fenced"].as<bool>(), true);
  EXPECT_NE(r.output.find("solver/" + solver + "/compute"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("outside every Kokkos kernel"), std::string::npos) << r.output;

  const YAML::Node times = YAML::LoadFile((dir / "out" / "kernel-times.json").string());
  EXPECT_EQ(times["schema"].as<std::string>(), "kokkos-miniapp-kernel-times/1");
  std::map<std::string, YAML::Node> phases;  // "<workload>/<variant>/<phase>" of each measurement
  std::map<std::string, double> inner;       // "<phase>|<name>" of the regions inside a phase
  for (const YAML::Node& region : times["regions"]) {
    const YAML::Node path = region["path"];
    ASSERT_GE(path.size(), 1u) << "kernels outside every measurement";
    if (path.size() == 2) phases[path[1].as<std::string>()] = region;
    if (path.size() == 3) inner[path[1].as<std::string>() + "|" + path[2].as<std::string>()] += region["seconds"].as<double>();
    double sum = 0;
    for (const YAML::Node& k : region["kernels"]) {
      EXPECT_GE(k["launches"].as<std::uint64_t>(), 1u);
      sum += k["seconds"].as<double>();
    }
    EXPECT_NEAR(sum, region["kernel_seconds"].as<double>(), 1e-9);
    EXPECT_LE(sum, region["seconds"].as<double>()) << path[path.size() - 1].as<std::string>();
  }
  for (const std::string& phase :
       std::vector<std::string>{"solver/" + solver + "/compute", "regression/fused/compute", "regression/fused/to_device"}) {
    ASSERT_EQ(phases.count(phase), 1u) << phase;
    ASSERT_GE(phases[phase]["kernels"].size(), 1u) << phase;
  }
  const YAML::Node compute = phases["solver/" + solver + "/compute"];
  EXPECT_EQ(compute["entries"].as<int>(), 3);  // one warm-up, two repetitions
  std::map<std::string, int> launches;
  for (const YAML::Node& k : compute["kernels"]) launches[k["name"].as<std::string>()] = k["launches"].as<int>();
  if (dense) {
    for (const char* kernel : {"solver::dense-panel", "solver::dense-swap", "solver::dense-solves"})
      EXPECT_EQ(launches.count(kernel), 1u) << kernel;
    // 96 columns in panels of at most 64, a leaf per 16 columns: 6 leaves per solve, 3 solves.
    EXPECT_EQ(launches["solver::dense-panel"], 18);
    // The trailing updates' gemms: a region inside the phase where Kokkos Kernels calls the vendor
    // BLAS (KokkosBlas::gemm[TPL_BLAS,double]), else its own kernels.
    bool gemm = false;
    for (const auto& [name, seconds] : inner)
      gemm = gemm || (name.rfind("solver/dense-blocked/compute|KokkosBlas::gemm", 0) == 0 && seconds > 0);
    for (const auto& [name, count] : launches)
      gemm = gemm || name.find("gemm") != std::string::npos || name.find("Gemm") != std::string::npos;
    EXPECT_TRUE(gemm) << "no gemm in dense-blocked's compute phase";
  }
  // The copy policy copies the inputs in every repetition: deep copies in to_device.
  bool copies = false;
  for (const YAML::Node& k : phases["regression/fused/to_device"]["kernels"])
    copies = copies || k["name"].as<std::string>().rfind("deep_copy ", 0) == 0;
  EXPECT_TRUE(copies);
}

// The unavailable variants a deck names outright (`all` means the available ones).
std::vector<std::string> unavailable_variants_named(const fs::path& deck, const std::set<std::string>& unavailable) {
  std::vector<std::string> named;
  for (const YAML::Node& c : YAML::LoadFile(deck.string())["cases"])
    for (const char* key : {"variant", "variants"}) {
      const YAML::Node v = c[key];
      if (!v) continue;
      std::vector<std::string> names;
      if (v.IsSequence())
        for (const YAML::Node& name : v) names.push_back(name.as<std::string>());
      else if (v.as<std::string>() != "all")
        names.push_back(v.as<std::string>());
      for (const std::string& name : names)
        if (unavailable.count(name)) named.push_back(name);
    }
  return named;
}

// The execution spaces a deck names outright that this build does not have (a Serial-only
// Kokkos has no `openmp`).
std::vector<std::string> spaces_not_compiled(const fs::path& deck) {
  const std::vector<std::string>& compiled = compiled_spaces();
  std::vector<std::string> missing;
  for (const YAML::Node& c : YAML::LoadFile(deck.string())["cases"])
    if (c["spaces"] && c["spaces"].IsSequence())
      for (const YAML::Node& space : c["spaces"])
        if (std::find(compiled.begin(), compiled.end(), space.as<std::string>()) == compiled.end())
          missing.push_back(space.as<std::string>());
  return missing;
}

// Every deck passes as written, except in a build that lacks a variant or an execution space it
// names: then it is refused (exit 2), the message naming what is missing.
TEST(EndToEnd, EveryInputDeckPassesDryRun) {
  const std::set<std::string> unavailable = unavailable_variants();
  std::size_t decks = 0;
  for (const auto& entry : fs::directory_iterator(fs::path(MINIAPP_SOURCE_DIR) / "input")) {
    if (entry.path().extension() != ".yaml") continue;
    ++decks;
    const Result r = run("--dry-run " + entry.path().string());
    const std::vector<std::string> missing = unavailable_variants_named(entry.path(), unavailable);
    const std::vector<std::string> missing_spaces = spaces_not_compiled(entry.path());
    if (!missing_spaces.empty()) {
      EXPECT_EQ(r.exit_code, 2) << entry.path() << "\n" << r.output;
      EXPECT_NE(r.output.find("execution space '" + missing_spaces.front() + "' is not compiled into this binary"),
                std::string::npos)
          << r.output;
      continue;
    }
    if (!missing.empty()) {
      EXPECT_EQ(r.exit_code, 2) << entry.path() << "\n" << r.output;
      EXPECT_NE(r.output.find("variant '" + missing.front() + "' is unavailable in this build"), std::string::npos)
          << r.output;
      continue;
    }
    EXPECT_EQ(r.exit_code, 0) << entry.path() << "\n" << r.output;
    EXPECT_NE(r.output.find("measurement(s)"), std::string::npos);
  }
  EXPECT_GE(decks, 1u);
}

// Each input deck's cases, shrunk to seconds: small sizes and counts, one repetition. Every
// other key (variants, spaces, policies, precisions, generation, outputs) stays as the deck has it.
// Variants and execution spaces this build lacks are left out, and a case left with no variant
// is dropped (one left with no space runs on every compiled one); "" when no case is left.
std::string shrunk_deck(const fs::path& deck, const std::set<std::string>& unavailable) {
  YAML::Node root = YAML::LoadFile(deck.string());
  root.remove("threads");
  root.remove("output");
  const std::vector<std::string>& compiled = compiled_spaces();
  YAML::Node kept(YAML::NodeType::Sequence);
  for (YAML::Node c : root["cases"]) {
    if (c["spaces"] && c["spaces"].IsSequence()) {
      YAML::Node spaces(YAML::NodeType::Sequence);
      for (const YAML::Node& space : c["spaces"])
        if (std::find(compiled.begin(), compiled.end(), space.as<std::string>()) != compiled.end())
          spaces.push_back(space);
      if (spaces.size() == 0) c["spaces"] = "all";
      else c["spaces"] = spaces;
    }
    if (c["variant"] && unavailable.count(c["variant"].as<std::string>())) continue;
    if (c["variants"] && c["variants"].IsSequence()) {
      YAML::Node variants(YAML::NodeType::Sequence);
      for (const YAML::Node& v : c["variants"])
        if (!unavailable.count(v.as<std::string>())) variants.push_back(v);
      if (variants.size() == 0) continue;
      c["variants"] = variants;
    }
    kept.push_back(c);
  }
  if (kept.size() == 0) return "";
  root["cases"] = kept;
  for (YAML::Node c : root["cases"]) {
    const bool regression = c["workload"].as<std::string>() == "regression";
    const int features = c["features"] ? std::min(c["features"].as<int>(), 12) : 0;
    c["sizes"] = regression ? std::max(64, 4 * (features + 1)) : 64;
    auto at_most = [&c](const char* key, int limit) {
      if (c[key]) c[key] = std::min(c[key].as<int>(), limit);
    };
    at_most("systems", 3);
    at_most("iterations", 20);
    at_most("features", 12);
    at_most("m", 48);
    at_most("k", 48);
    at_most("rows", 3);
    at_most("block_size", 16);
    // A budget that still splits the 64 x 64 matrix into row blocks.
    if (c["memory_budget"]) c["memory_budget"] = "6KiB";
    c["warmup"] = 0;
    c["repetitions"] = 1;
  }
  YAML::Emitter out;
  out << root;
  return out.c_str();
}

TEST(EndToEnd, EveryInputDeckRunsAndVerifiesAtSmallSizes) {
  const std::set<std::string> unavailable = unavailable_variants();
  std::size_t decks = 0;
  for (const auto& entry : fs::directory_iterator(fs::path(MINIAPP_SOURCE_DIR) / "input")) {
    if (entry.path().extension() != ".yaml") continue;
    ++decks;
    const std::string shrunk = shrunk_deck(entry.path(), unavailable);
    if (shrunk.empty()) continue;  // every case needs what this build lacks: the dry-run test sees it refused
    const DeckRun r = run_deck("deck-" + entry.path().stem().string(), shrunk);
    EXPECT_EQ(r.result.exit_code, 0) << entry.path() << "\n" << r.result.output;
    const YAML::Node json = r.results();
    EXPECT_EQ(json["status"].as<std::string>(), "complete") << entry.path();
    EXPECT_GT(json["finished_measurements"].as<std::size_t>(), 0u) << entry.path();
    EXPECT_EQ(json["finished_measurements"].as<std::size_t>(), json["planned_measurements"].as<std::size_t>());
    for (const YAML::Node& m : json["measurements"])
      EXPECT_TRUE(m["verification"]["passed"].as<bool>())
          << entry.path() << ": " << m["verification"]["detail"].as<std::string>();
  }
  EXPECT_GE(decks, 1u);
}

TEST(EndToEnd, AFailedVerificationExitsOneAndRunsTheRest) {
  // A tolerance below any float32 rounding error: the GEMM is right, the bound cannot be met.
  const DeckRun r = run_deck("verify-fail",
                             "cases:\n"
                             "  - workload: matrix\n    variants: [gemm-naive]\n    sizes: 32\n"
                             "    precision: float32\n    spaces: [" + first_space() + "]\n    policies: [host]\n"
                             "    tolerance: 1.0e-30\n    repetitions: 1\n"
                             "  - workload: distance\n    sizes: 32\n    spaces: [" + first_space() + "]\n"
                             "    policies: [host]\n    repetitions: 1\n");
  EXPECT_EQ(r.result.exit_code, 1) << r.result.output;
  EXPECT_NE(r.result.output.find("VERIFICATION FAILED"), std::string::npos) << r.result.output;
  const YAML::Node json = r.results();
  EXPECT_EQ(json["status"].as<std::string>(), "complete");
  ASSERT_EQ(json["measurements"].size(), 2u);
  EXPECT_FALSE(json["measurements"][0]["verification"]["passed"].as<bool>());
  EXPECT_TRUE(json["measurements"][1]["verification"]["passed"].as<bool>());
}

TEST(EndToEnd, AnUnwritableOutputExitsThree) {
  const fs::path dir = fresh_dir("unwritable");
  const fs::path deck = write_deck(dir, "cases:\n  - workload: distance\n    sizes: 32\n    spaces: [" + first_space() + "]\n");
  std::ofstream(dir / "a-file") << "not a directory";
  const Result r = run(deck.string() + " --quiet --output " + (dir / "a-file" / "out").string());
  EXPECT_EQ(r.exit_code, 3) << r.output;
  EXPECT_NE(r.output.find((dir / "a-file").string()), std::string::npos) << r.output;
}

TEST(EndToEnd, AWriteErrorMidRunExitsThreeAndKeepsThePreviousResults) {
  const fs::path dir = fresh_dir("file-size-limit");
  const fs::path deck = write_deck(dir,
                                   "cases:\n  - workload: distance\n    sizes: {from: 16, to: 4096, factor: 2}\n"
                                   "    spaces: [" + first_space() + "]\n    policies: [host]\n    repetitions: 40\n");
  const fs::path out = dir / "out";
  // The results grow with every measurement; a file size limit (ulimit -f) stops them part-way,
  // as a full disk or quota would.
  const std::string err_path = (dir / "stderr.txt").string();
  const pid_t pid = start(deck, out, [&err_path] {
    const rlimit limit{24 * 1024, 24 * 1024};
    setrlimit(RLIMIT_FSIZE, &limit);
    dup2(open(err_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644), STDERR_FILENO);
  });
  ASSERT_GE(pid, 0);
  int status = 0;
  waitpid(pid, &status, 0);
  std::ifstream err_in(err_path);
  const std::string err((std::istreambuf_iterator<char>(err_in)), std::istreambuf_iterator<char>());
  ASSERT_TRUE(WIFEXITED(status)) << "killed by signal " << WTERMSIG(status) << "\n" << err;
  EXPECT_EQ(WEXITSTATUS(status), 3) << err;
  EXPECT_NE(err.find((out / "results.json").string()), std::string::npos) << err;
  EXPECT_NE(err.find("File too large"), std::string::npos) << err;
  // The last complete file is still there and readable, with the measurements it had.
  const YAML::Node json = YAML::LoadFile((out / "results.json").string());
  EXPECT_EQ(json["status"].as<std::string>(), "running");
  EXPECT_GT(json["finished_measurements"].as<std::size_t>(), 0u);
  EXPECT_LT(json["finished_measurements"].as<std::size_t>(), json["planned_measurements"].as<std::size_t>());
  for (const auto& entry : fs::directory_iterator(out))
    EXPECT_EQ(entry.path().filename().string().find(".tmp"), std::string::npos) << "left behind: " << entry.path();
}

TEST(EndToEnd, ASpaceLimitIsRefusedBeforeAnythingRuns) {
  // Host team scratch stops at 20 MiB (Kokkos 3.4) or 80 MiB (Kokkos 5 OpenMP): a 4000 x 4000
  // float64 system needs 128 MB of it. The 8 x 8 case fits, but the plan must run whole or not at all.
  const std::string deck_text =
      "cases:\n  - workload: solver\n    variants: [batched-team]\n    sizes: [8, 4000]\n"
      "    systems: 1\n    precision: float64\n    spaces: [" + first_space() + "]\n    policies: [host]\n";
  const DeckRun r = run_deck("scratch-limit", deck_text);
  EXPECT_EQ(r.result.exit_code, 2) << r.result.output;
  EXPECT_NE(r.result.output.find("size 4000 on " + first_space() + " / host: solver: batched-team"), std::string::npos)
      << r.result.output;
  EXPECT_NE(r.result.output.find("team scratch"), std::string::npos) << r.result.output;
  EXPECT_NE(r.result.output.find("nothing was run"), std::string::npos) << r.result.output;
  EXPECT_FALSE(fs::exists(r.out / "results.json")) << "a refused plan writes no results";
  const Result dry = run("--dry-run " + r.deck.string());
  EXPECT_EQ(dry.exit_code, 2) << dry.output;
  EXPECT_NE(dry.output.find("team scratch"), std::string::npos) << dry.output;
}

// Every deck of tests/decks/bad states in its second line where the error is:
//   # expect: line 6 key cases[0].repetitons
TEST(EndToEnd, EveryBadDeckExitsWithTwoNamingItsLineAndKey) {
  std::size_t decks = 0;
  for (const auto& entry : fs::directory_iterator(fs::path(MINIAPP_SOURCE_DIR) / "tests" / "decks" / "bad")) {
    if (entry.path().extension() != ".yaml") continue;
    ++decks;
    std::ifstream in(entry.path());
    std::string why, expect;
    std::getline(in, why);
    std::getline(in, expect);
    int line = 0;
    char key[256] = {};
    ASSERT_EQ(std::sscanf(expect.c_str(), "# expect: line %d key %255s", &line, key), 2) << entry.path();
    const Result r = run("--dry-run " + entry.path().string());
    EXPECT_EQ(r.exit_code, 2) << entry.path() << " (" << why << ")\n" << r.output;
    // One diagnostic line must name both the place and the key.
    const std::string where = entry.path().string() + ":" + std::to_string(line) + ":";
    const std::string keyed = std::string(key) == "-" ? "" : ": " + std::string(key) + ": ";
    bool found = false;
    std::istringstream lines(r.output);
    for (std::string l; std::getline(lines, l);)
      found = found || (l.rfind(where, 0) == 0 && l.find(keyed) != std::string::npos);
    EXPECT_TRUE(found) << "expected a line starting " << where << " naming '" << key << "' in:\n" << r.output;
  }
  EXPECT_GE(decks, 25u);
}

TEST(EndToEnd, SigtermKeepsEveryFinishedMeasurement) {
  const fs::path dir = fresh_dir("sigterm");
  // Enough measurements that the run is still going when the signal arrives.
  const fs::path deck = write_deck(dir,
                                   "cases:\n  - workload: distance\n    sizes: {from: 200, to: 20000, step: 200}\n"
                                   "    spaces: all\n    policies: all\n    repetitions: 3\n");
  const fs::path out = dir / "out";
  const pid_t pid = start(deck, out);
  ASSERT_GE(pid, 0);
  // Wait until at least two measurements are on disk, then stop the job as Slurm would.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(120);
  std::size_t finished = 0;
  while (finished < 2 && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    try {
      finished = YAML::LoadFile((out / "results.json").string())["finished_measurements"].as<std::size_t>();
    } catch (const std::exception&) {
    }
  }
  kill(pid, SIGTERM);
  int status = 0;
  waitpid(pid, &status, 0);
  ASSERT_GE(finished, 2u);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 128 + SIGTERM);

  const YAML::Node json = YAML::LoadFile((out / "results.json").string());
  EXPECT_EQ(json["status"].as<std::string>(), "interrupted");
  const std::size_t kept = json["finished_measurements"].as<std::size_t>();
  EXPECT_GE(kept, finished);
  EXPECT_LT(kept, json["planned_measurements"].as<std::size_t>());
  ASSERT_EQ(json["measurements"].size(), kept);
  for (const YAML::Node& m : json["measurements"]) EXPECT_TRUE(m["verification"]["passed"].as<bool>());
}

TEST(EndToEnd, ThreadSweepRunsOneProcessPerCountAndCombinesTheResults) {
  if (!has_threaded_host_space())
    GTEST_SKIP() << "this build has no threaded host space (OpenMP or Threads; a Serial-only Kokkos such as "
                    "Debian's 4.5.1): every thread count would run the same one-thread code";
  const fs::path dir = fresh_dir("sweep");
  const fs::path deck = write_deck(dir,
                                   "threads: [1, 2]\n"
                                   "cases:\n"
                                   "  - workload: distance\n"
                                   "    sizes: 64\n"
                                   "    spaces: [" + first_space() + "]\n"
                                   "    policies: [host]\n"
                                   "    repetitions: 2\n");
  const Result r = run(deck.string() + " --output " + (dir / "out").string());
  ASSERT_EQ(r.exit_code, 0) << r.output;
  for (int threads : {1, 2}) {
    const YAML::Node j = YAML::LoadFile((dir / "out" / ("threads-" + std::to_string(threads)) / "results.json").string());
    EXPECT_EQ(j["status"].as<std::string>(), "complete");
    EXPECT_EQ(j["provenance"]["host_threads"].as<int>(), threads);
  }
  std::ifstream summary(dir / "out" / "threads-summary.csv");
  std::string line;
  std::getline(summary, line);
  EXPECT_EQ(line.rfind("host_threads,case,", 0), 0u) << line;
  std::set<std::string> counts;
  int rows = 0;
  while (std::getline(summary, line)) {
    counts.insert(line.substr(0, line.find(',')));
    ++rows;
  }
  EXPECT_EQ(counts, (std::set<std::string>{"1", "2"}));
  EXPECT_EQ(rows, 4);  // two repetitions per run
  EXPECT_NE(r.output.find("thread sweep: median total"), std::string::npos) << r.output;
}

// Random valid decks (property-based): every deck the generator writes is valid, so it must run
// with exit 0 and every measurement verified (a deck of singular systems must instead fail its
// verification, naming them). The variants come from `miniapp --list`, so a new variant is
// covered without touching this test; the keys and their edge values are the deck reference's.
// Reproducible: MINIAPP_RANDOM_SEED (printed) and MINIAPP_RANDOM_DECKS (how many; CI runs the
// default), e.g. a longer run:
//   MINIAPP_RANDOM_DECKS=300 MINIAPP_RANDOM_SEED=$RANDOM build/tests/miniapp_e2e_tests --gtest_filter='RandomValidDecks.*'
// A failing deck is kept, with its path printed.
namespace {

std::map<std::string, std::vector<std::string>> listed_variants() {
  const Result r = run("--list");
  std::map<std::string, std::vector<std::string>> out;
  std::istringstream in(r.output);
  std::string line, workload;
  bool in_workloads = false;
  while (std::getline(in, line)) {
    if (line.rfind("workloads", 0) == 0) in_workloads = true;
    else if (!line.empty() && line[0] != ' ') in_workloads = false;
    else if (in_workloads && line.rfind("  ", 0) == 0 && line[2] != ' ') workload = line.substr(2, line.find(':') - 2);
    else if (in_workloads && line.rfind("    - ", 0) == 0 && line.find("[unavailable") == std::string::npos)
      out[workload].push_back(line.substr(6, line.find(':') - 6));
  }
  return out;
}

class DeckGenerator {
 public:
  DeckGenerator(std::uint64_t seed, std::map<std::string, std::vector<std::string>> variants,
                std::vector<std::string> spaces)
      : rng_(seed), variants_(std::move(variants)), spaces_(std::move(spaces)) {}

  // The deck's text, and whether it must fail verification (singular systems).
  std::pair<std::string, bool> deck() {
    std::ostringstream d;
    bool must_fail = false;
    d << "cases:\n";
    const int cases = pick(1, 2);
    for (int c = 0; c < cases; ++c) {
      auto it = variants_.begin();
      std::advance(it, pick(0, static_cast<int>(variants_.size()) - 1));
      const std::string& workload = it->first;
      const std::size_t size = one_of<std::size_t>({1, 2, 3, 15, 16, 17, 63, 64, 65, 127, 128, 129});
      const std::string matrix = one_of<std::string>({"random", "diagonally-dominant", "random", "singular"});
      const bool singular = workload == "solver" && matrix == "singular";
      must_fail = must_fail || singular;
      d << "  - name: case-" << c << (singular ? "-singular" : "") << "\n    workload: " << workload << "\n"
        << "    variants: " << subset(it->second) << "\n"
        << "    sizes: " << size << "\n"
        << "    precision: " << subset({"float32", "float64"}) << "\n"
        << "    spaces: " << subset(spaces_) << "\n"
        << "    policies: " << subset({"host", "copy-every-iteration", "inputs-resident", "all-resident"}) << "\n"
        << "    generate: " << subset({"host", "device"}) << "\n"
        << "    warmup: " << pick(0, 1) << "\n    repetitions: " << pick(1, 2) << "\n"
        << "    seed: " << pick(1, 1000000) << "\n";
      if (workload == "distance") {
        d << "    dim: " << one_of<int>({1, 2, 3, 4, 7, 8, 17}) << "\n    squared: " << (pick(0, 1) ? "true" : "false")
          << "\n    output: " << one_of<std::string>({"matrix", "row-min", "row-sum"}) << "\n";
        if (pick(0, 2) == 0) d << "    chunk_rows: " << pick(1, static_cast<int>(size)) << "\n";
        if (pick(0, 3) == 0) d << "    memory_budget: " << one_of<std::string>({"2KiB", "16KiB", "1MiB"}) << "\n";
      } else if (workload == "matrix") {
        d << "    op: " << one_of<std::string>({"power", "multiply"}) << "\n    rows: " << pick(1, 4) << "\n";
        for (const char* extent : {"m", "n", "k"})
          if (pick(0, 2) == 0) d << "    " << extent << ": " << one_of<int>({1, 2, 17, 31, 33, 64, 65}) << "\n";
        if (pick(0, 1)) d << "    alpha: " << one_of<std::string>({"0", "1", "-2.5", "0.125"}) << "\n";
        if (pick(0, 1)) d << "    beta: " << one_of<std::string>({"0", "1", "-1", "0.5"}) << "\n";
        if (pick(0, 2) == 0) d << "    tile_m: " << one_of<int>({32, 64, 96}) << "\n";
        if (pick(0, 2) == 0) d << "    tile_n: " << one_of<int>({32, 64}) << "\n";
        if (pick(0, 2) == 0) d << "    tile_k: " << one_of<int>({1, 7, 32, 128}) << "\n";
      } else if (workload == "solver") {
        d << "    systems: " << pick(1, 5) << "\n    matrix: " << matrix << "\n";
        if (pick(0, 1)) d << "    block_size: " << one_of<int>({1, 2, 16, 17, 64}) << "\n";
      } else if (workload == "regression") {
        const int features = one_of<int>({0, 1, 2, 3, 15, 16, 17, 63, 64, 65, 127, 128, 129, 130});
        // Below 1/(P+1), under 2/L for any data of the generator's scale: the fit cannot diverge.
        const double rate = (0.05 + 0.85 * std::uniform_real_distribution<double>(0, 1)(rng_)) / (features + 1);
        d << "    features: " << features << "\n    iterations: " << pick(1, 40) << "\n    learning_rate: " << rate
          << "\n";
      }
    }
    return {d.str(), must_fail};
  }

 private:
  int pick(int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng_); }
  template <class T>
  T one_of(std::vector<T> values) {
    return values[static_cast<std::size_t>(pick(0, static_cast<int>(values.size()) - 1))];
  }
  // A non-empty random subset as a YAML flow list.
  std::string subset(const std::vector<std::string>& values) {
    std::string out;
    while (out.empty())
      for (const std::string& v : values)
        if (pick(0, 1)) out += (out.empty() ? "" : ", ") + v;
    return "[" + out + "]";
  }

  std::mt19937_64 rng_;
  std::map<std::string, std::vector<std::string>> variants_;
  std::vector<std::string> spaces_;
};

std::uint64_t env_or(const char* name, std::uint64_t fallback) {
  const char* v = std::getenv(name);
  return v && *v ? std::strtoull(v, nullptr, 10) : fallback;
}

}  // namespace

TEST(RandomValidDecks, RunWithEveryMeasurementVerified) {
  const std::uint64_t seed = env_or("MINIAPP_RANDOM_SEED", 20261122);
  const std::uint64_t count = env_or("MINIAPP_RANDOM_DECKS", 24);
  std::cout << "random decks: MINIAPP_RANDOM_SEED=" << seed << " MINIAPP_RANDOM_DECKS=" << count << "\n";
  const auto variants = listed_variants();
  ASSERT_EQ(variants.size(), 4u) << "expected the four workloads in --list";
  DeckGenerator generator(seed, variants, compiled_spaces());
  std::size_t measurements = 0;
  for (std::uint64_t k = 0; k < count; ++k) {
    const auto [text, must_fail] = generator.deck();
    const DeckRun r = run_deck("random-" + std::to_string(k), text);
    const std::string context = "deck " + std::to_string(k) + " of seed " + std::to_string(seed) + ", kept in " +
                                r.deck.string() + ":\n" + text + "\n" + r.result.output;
    ASSERT_EQ(r.result.exit_code, must_fail ? 1 : 0) << context;
    const YAML::Node json = r.results();
    ASSERT_EQ(json["status"].as<std::string>(), "complete") << context;
    ASSERT_EQ(json["finished_measurements"].as<std::size_t>(), json["planned_measurements"].as<std::size_t>());
    for (const YAML::Node& m : json["measurements"]) {
      ++measurements;
      const std::string detail = m["verification"]["detail"].as<std::string>();
      const std::string case_name = m["case"].as<std::string>();
      if (case_name.size() > 9 && case_name.compare(case_name.size() - 9, 9, "-singular") == 0) {
        EXPECT_FALSE(m["verification"]["passed"].as<bool>()) << context;
        EXPECT_NE(detail.find("singular"), std::string::npos) << context << "\n" << detail;
        continue;
      }
      ASSERT_TRUE(m["verification"]["passed"].as<bool>()) << context << "\n" << detail;
    }
    fs::remove_all(r.deck.parent_path());
  }
  std::cout << "random decks: " << count << " decks, " << measurements << " measurements, all as expected\n";
}

TEST(EndToEnd, ThreadSweepRunsGetEveryCpuOfTheJobUnderProcBind) {
  if (!has_threaded_host_space())
    GTEST_SKIP() << "this build has no threaded host space (OpenMP or Threads; a Serial-only Kokkos such as "
                    "Debian's 4.5.1): every thread count would run the same one-thread code";
  // With OMP_PROC_BIND set the OpenMP runtime pins the sweep's own thread to one CPU; a run it
  // starts must still get all of the job's CPUs, or its threads share one core.
  cpu_set_t mine;
  ASSERT_EQ(sched_getaffinity(0, sizeof mine, &mine), 0);
  const int cpus = CPU_COUNT(&mine);
  if (cpus < 2) GTEST_SKIP() << "skipped: this machine lets the test use " << cpus << " CPU, the check needs 2";
  const fs::path dir = fresh_dir("sweep-bind");
  const fs::path deck = write_deck(dir,
                                   "threads: [1, 2]\ncases:\n  - workload: distance\n    sizes: 32\n"
                                   "    spaces: [openmp]\n    policies: [host]\n    repetitions: 1\n");
  setenv("OMP_PROC_BIND", "spread", 1);
  setenv("OMP_PLACES", "threads", 1);
  const Result r = run(deck.string() + " --quiet --output " + (dir / "out").string());
  unsetenv("OMP_PROC_BIND");
  unsetenv("OMP_PLACES");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  for (int threads : {1, 2}) {
    const YAML::Node p =
        YAML::LoadFile((dir / "out" / ("threads-" + std::to_string(threads)) / "results.json").string())["provenance"];
    EXPECT_EQ(p["cpus_allowed"].as<int>(), cpus) << "the run with " << threads << " thread(s)";
    EXPECT_EQ(p["host_threads"].as<int>(), threads);
  }
  EXPECT_EQ(r.output.find("oversubscribed"), std::string::npos) << r.output;
}
