// The one command-line parser (miniapp/core/options.hpp) every command uses.
#include "miniapp/core/kokkos_compat.hpp"
#include "miniapp/core/options.hpp"
#include "miniapp/core/ranks.hpp"

#include <gtest/gtest.h>

#include <cstdlib>
#include <string>
#include <vector>

using namespace miniapp;

namespace {

// Runs `parser` over `args` as a command line (args[0] being the program).
void parse_line(const OptionParser& parser, std::vector<std::string> args) {
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  parser.parse(static_cast<int>(argv.size()), argv.data());
}

struct Parsed {
  bool quiet = false;
  std::string output;
  std::vector<std::string> operands, kokkos;
};

// Parses `args` (argv[0] added) with a parser shaped like the run's: -q, -o, --kokkos-*, operands.
Parsed parse(std::vector<std::string> args, bool operands = true) {
  Parsed p;
  args.insert(args.begin(), "miniapp");
  OptionParser parser;
  parser.flag("-q,--quiet", [&] { p.quiet = true; })
      .value("-o,--output", [&](const std::string& v) { p.output = v; })
      .prefixed("--kokkos-", [&](const std::string& a) { p.kokkos.push_back(a); });
  if (operands) parser.operands([&](const std::string& a) { p.operands.push_back(a); });
  parse_line(parser, args);
  return p;
}

std::string error_of(const std::vector<std::string>& args, bool operands = true) {
  try {
    parse(args, operands);
  } catch (const UsageError& e) {
    return e.what();
  }
  return "(no error)";
}

}  // namespace

TEST(OptionParser, ReadsValuesInEveryFormAndKeepsOperandsInOrder) {
  for (const std::vector<std::string>& args : {std::vector<std::string>{"a.yaml", "-o", "out", "-q", "b"},
                                               {"a.yaml", "--output", "out", "--quiet", "b"},
                                               {"--output=out", "a.yaml", "-q", "b"}}) {
    const Parsed p = parse(args);
    EXPECT_TRUE(p.quiet);
    EXPECT_EQ(p.output, "out");
    EXPECT_EQ(p.operands, (std::vector<std::string>{"a.yaml", "b"}));
  }
}

TEST(OptionParser, AValueMayLookLikeAnOptionAndADashIsAnOperand) {
  EXPECT_EQ(parse({"-o", "-q"}).output, "-q");
  EXPECT_FALSE(parse({"-o", "-q"}).quiet);
  EXPECT_EQ(parse({"--output=a=b"}).output, "a=b");
  EXPECT_EQ(parse({"-"}).operands, (std::vector<std::string>{"-"}));
}

TEST(OptionParser, PrefixedArgumentsAreHandedOverWhole) {
  const Parsed p = parse({"--kokkos-num-threads=2", "--kokkos-help", "x"});
  EXPECT_EQ(p.kokkos, (std::vector<std::string>{"--kokkos-num-threads=2", "--kokkos-help"}));
  EXPECT_EQ(p.operands, (std::vector<std::string>{"x"}));
}

TEST(OptionParser, RefusesWhatItCannotRead) {
  EXPECT_EQ(error_of({"--colour"}), "unknown option '--colour'");
  EXPECT_EQ(error_of({"--outputs=x"}), "unknown option '--outputs=x'");
  EXPECT_EQ(error_of({"-x"}), "unknown option '-x'");
  EXPECT_EQ(error_of({"-o"}), "--output needs a value");
  EXPECT_EQ(error_of({"--output="}), "--output needs a value");
  EXPECT_EQ(error_of({"--quiet=yes"}), "--quiet takes no value");
  EXPECT_EQ(error_of({"deck.yaml"}, false), "unexpected argument 'deck.yaml'");
  EXPECT_EQ(error_of({"-o", "out"}, false), "(no error)");
}

TEST(OptionParser, AHandlersUsageErrorEndsTheParse) {
  int seen = 0;
  OptionParser parser;
  parser.value("--n", [&](const std::string& v) { seen = static_cast<int>(parse_whole_number("--n", v, 1, 10)); });
  try {
    parse_line(parser, {"miniapp", "--n", "0", "--n", "3"});
    ADD_FAILURE() << "--n 0 was accepted";
  } catch (const UsageError& e) {
    EXPECT_EQ(std::string(e.what()), "--n: '0' is not a whole number from 1 to 10");
  }
  EXPECT_EQ(seen, 0);
}

TEST(ParseWholeNumber, AcceptsTheRangeAndNothingElse) {
  EXPECT_EQ(parse_whole_number("--n", "1", 1, 10), 1);
  EXPECT_EQ(parse_whole_number("--n", "10", 1, 10), 10);
  for (const char* bad : {"", "11", "0", "-1", "3x", "2.5", "99999999999999999999999"})
    EXPECT_THROW(parse_whole_number("--n", bad, 1, 10), UsageError) << bad;
}

TEST(SplitList, DropsEmptyItems) {
  EXPECT_EQ(split_list("a,,b,"), (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(split_list("x:y", ':'), (std::vector<std::string>{"x", "y"}));
  EXPECT_TRUE(split_list(",").empty());
}

TEST(RunCommandLine, TheUsersOwnDeviceChoiceIsKeptUnderMpi) {
  for (const char* variable : {"KOKKOS_DEVICE_ID", "KOKKOS_NUM_DEVICES", "KOKKOS_MAP_DEVICE_ID_BY"})
    ASSERT_EQ(std::getenv(variable), nullptr) << variable << " is set in the test's environment";
  EXPECT_FALSE(miniapp::ranks::chooses_device({}));
  EXPECT_FALSE(miniapp::ranks::chooses_device({"--kokkos-num-threads=2", "--kokkos-tools-libs=x.so"}));
  for (const char* a : {"--kokkos-device=1", "--kokkos-device-id=1", "--kokkos-ndevices=2", "--kokkos-num-devices=2",
                        "--kokkos-map-device-id-by=random"})
    EXPECT_TRUE(miniapp::ranks::chooses_device({"--kokkos-num-threads=2", a})) << a;
  ::setenv("KOKKOS_DEVICE_ID", "1", 1);
  EXPECT_TRUE(miniapp::ranks::chooses_device({}));
  ::unsetenv("KOKKOS_DEVICE_ID");
  // One rank (no launcher here): the user's arguments alone.
  EXPECT_EQ(miniapp::ranks::kokkos_arguments({"--kokkos-num-threads=2"}), std::vector<std::string>{"--kokkos-num-threads=2"});
#if !defined(KOKKOS_ENABLE_CUDA) && !defined(KOKKOS_ENABLE_HIP)
  // A host build has no device to map: no argument is added.
  EXPECT_EQ(miniapp::compat::device_by_local_rank_argument(1), "");
#elif KOKKOS_VERSION >= 30700
  EXPECT_EQ(miniapp::compat::device_by_local_rank_argument(1), "--kokkos-map-device-id-by=mpi_rank");
#endif
}
