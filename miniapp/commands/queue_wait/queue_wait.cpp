#include "miniapp/commands/queue_wait/queue_wait.hpp"

#include "miniapp/core/diagnostics.hpp"
#include "miniapp/core/exit_codes.hpp"
#include "miniapp/commands/commands.hpp"
#include "miniapp/core/child_process.hpp"
#include "miniapp/core/options.hpp"

#include <algorithm>
#include <cmath>
#include <ctime>
#include <fstream>
#include <iomanip>
#include <iostream>
#include <map>
#include <sstream>
#include <stdexcept>

namespace miniapp::submit {

namespace {

constexpr const char* kQueueWaitUsage = R"(usage: miniapp queue-wait [options]

How long jobs waited in each partition, by job size (seed 003): the median wait between
submission and start, and the number of jobs, per size bin. Size: allocated CPUs x time limit in
CPU-hours, or with --memory requested memory x time limit in GB-hours. Reads Slurm's accounting:
live (sacct --parsable2 --allusers --allocations over --since) or a recorded `sacct --parsable2`
output (--from), which needs the fields Partition, Submit, Start, AllocCPUS, ReqMem, Timelimit.

  -p, --partitions LIST  comma-separated partitions (default: every partition in the data);
                         one without jobs in the data is an error
  -m, --memory           bins in GB-hours of requested memory instead of CPU-hours
      --bins F,X[,N]     N bins (default 4): below F, then F..F*X, ... and above (default 4,4)
      --from FILE        read recorded sacct output ('-': stdin) instead of calling sacct
      --since TIME       live: jobs submitted since TIME (sacct -S; default now-30days; sacct
                         alone shows only jobs since midnight)
  -h, --help             show this help and exit

Record the input for --from with:
  sacct --parsable2 --allusers --allocations -S now-30days \
        --format=JobID,Partition,State,Submit,Start,AllocCPUS,ReqMem,Timelimit > jobs.txt

exit codes: 0 table printed; 2 bad command line, unknown partition, unreadable input;
3 sacct failed or is not available
)";

constexpr const char* kFields = "JobID,Partition,State,Submit,Start,AllocCPUS,ReqMem,Timelimit";

std::vector<std::string> split(const std::string& s, char sep) {
  std::vector<std::string> out;
  std::string item;
  std::istringstream in(s);
  while (std::getline(in, item, sep)) out.push_back(item);
  if (!s.empty() && s.back() == sep) out.emplace_back();
  return out;
}

// sacct's times: 2024-09-25T21:15:03 (local time); Unknown / None for jobs that never started.
std::optional<std::time_t> parse_time(const std::string& s) {
  std::tm tm{};
  std::istringstream in(s);
  in >> std::get_time(&tm, "%Y-%m-%dT%H:%M:%S");
  if (in.fail()) return std::nullopt;
  tm.tm_isdst = -1;
  return std::mktime(&tm);
}

// [days-]hours:minutes:seconds, minutes:seconds; UNLIMITED, Partition_Limit: nothing.
std::optional<double> parse_duration_hours(const std::string& s) {
  if (s.empty() || !std::isdigit(static_cast<unsigned char>(s[0]))) return std::nullopt;
  double days = 0;
  std::string rest = s;
  if (const auto dash = s.find('-'); dash != std::string::npos) {
    days = std::stod(s.substr(0, dash));
    rest = s.substr(dash + 1);
  }
  const std::vector<std::string> parts = split(rest, ':');
  double h = 0, m = 0, sec = 0;
  try {
    if (parts.size() == 3) h = std::stod(parts[0]), m = std::stod(parts[1]), sec = std::stod(parts[2]);
    else if (parts.size() == 2) m = std::stod(parts[0]), sec = std::stod(parts[1]);
    else if (parts.size() == 1) m = std::stod(parts[0]);
    else return std::nullopt;
  } catch (const std::exception&) {
    return std::nullopt;
  }
  return days * 24 + h + m / 60 + sec / 3600;
}

// 4000M, 4G, 16000Mn (per node), 2000Mc (per CPU): GB.
std::optional<double> parse_memory_gb(const std::string& s, double cpus) {
  if (s.empty() || !std::isdigit(static_cast<unsigned char>(s[0]))) return std::nullopt;
  std::size_t used = 0;
  double v = std::stod(s, &used);
  std::string unit = s.substr(used);
  bool per_cpu = false;
  if (!unit.empty() && (unit.back() == 'c' || unit.back() == 'n')) {
    per_cpu = unit.back() == 'c';
    unit.pop_back();
  }
  const std::map<std::string, double> scale = {{"", 1.0 / 1024}, {"K", 1.0 / (1024 * 1024)}, {"M", 1.0 / 1024},
                                               {"G", 1}, {"T", 1024}};
  const auto it = scale.find(unit);
  if (it == scale.end()) return std::nullopt;
  v *= it->second;
  return per_cpu ? v * cpus : v;
}

}  // namespace

std::string format_wait(double seconds) {
  std::ostringstream s;
  s << std::fixed << std::setprecision(1);
  if (seconds < 60) s << seconds << " s";
  else if (seconds < 3600) s << seconds / 60 << " m";
  else s << seconds / 3600 << " h";
  return s.str();
}

SacctParse parse_sacct(const std::string& text) {
  SacctParse r;
  std::istringstream in(text);
  std::string line;
  std::vector<std::string> header;
  while (header.empty() && std::getline(in, line))
    if (!line.empty()) header = split(line, '|');
  auto column = [&](std::initializer_list<const char*> names) -> int {
    for (const char* n : names)
      for (std::size_t i = 0; i < header.size(); ++i)
        if (header[i] == n) return static_cast<int>(i);
    return -1;
  };
  const int partition = column({"Partition"}), submit = column({"Submit"}), start = column({"Start"}),
            cpus = column({"AllocCPUS", "NCPUS"}), mem = column({"ReqMem"}),
            limit = column({"Timelimit", "TimelimitRaw", "Elapsed"}), id = column({"JobID"}), state = column({"State"});
  std::vector<std::string> missing;
  if (partition < 0) missing.push_back("Partition");
  if (submit < 0) missing.push_back("Submit");
  if (start < 0) missing.push_back("Start");
  if (cpus < 0) missing.push_back("AllocCPUS");
  if (mem < 0) missing.push_back("ReqMem");
  if (limit < 0) missing.push_back("Timelimit");
  if (!missing.empty()) {
    r.error = header.empty() ? "no header line: expected sacct --parsable2 output"
                             : "the sacct output lacks the field(s) " + join(missing) + " (sacct --format=" + kFields + ")";
    return r;
  }
  int line_number = 1;
  while (std::getline(in, line)) {
    ++line_number;
    if (line.empty()) continue;
    const std::vector<std::string> f = split(line, '|');
    if (f.size() < header.size()) {
      r.error = "line " + std::to_string(line_number) + " has " + std::to_string(f.size()) + " fields, the header " +
                std::to_string(header.size());
      return r;
    }
    // Job steps (123.batch, 123.0) when sacct was run without --allocations.
    if (id >= 0 && f[id].find('.') != std::string::npos) continue;
    const auto submitted = parse_time(f[submit]);
    const auto started = parse_time(f[start]);
    std::optional<double> hours = parse_duration_hours(f[limit]);
    if (!submitted || !started || *started < *submitted || !hours || f[partition].empty()) {
      ++r.skipped;
      continue;
    }
    AccountedJob j;
    j.job_id = id >= 0 ? f[id] : "";
    j.state = state >= 0 ? f[state] : "";
    // A job submitted to several partitions lists them all; it ran in the first.
    j.partition = f[partition].substr(0, f[partition].find(','));
    j.wait_seconds = std::difftime(*started, *submitted);
    const double ncpus = std::atof(f[cpus].c_str());
    j.cpu_hours = ncpus * *hours;
    j.gb_hours = parse_memory_gb(f[mem], ncpus).value_or(0) * *hours;
    r.jobs.push_back(j);
  }
  return r;
}

QueueWaitTable queue_wait_table(const std::vector<AccountedJob>& jobs, const std::vector<std::string>& partitions,
                                const Bins& bins, bool memory) {
  QueueWaitTable t;
  std::vector<std::string> present;
  for (const AccountedJob& j : jobs)
    if (std::find(present.begin(), present.end(), j.partition) == present.end()) present.push_back(j.partition);
  std::vector<std::string> rows = partitions.empty() ? present : partitions;
  std::vector<std::string> unknown;
  for (const std::string& p : rows)
    if (std::find(present.begin(), present.end(), p) == present.end()) unknown.push_back(p);
  if (!unknown.empty()) {
    t.error = "error - please call sacct for existing partition(s): no jobs in partition(s) " + join(unknown) +
              "; partitions with jobs: " + (present.empty() ? std::string("none") : join(present));
    return t;
  }
  const std::string unit = memory ? "GBh" : "CPUh";
  std::vector<double> edges;
  for (int i = 0; i + 1 < bins.count; ++i) edges.push_back(bins.first * std::pow(bins.factor, i));
  auto edge = [](double v) {
    std::ostringstream s;
    s << v;
    return s.str();
  };
  std::ostringstream os;
  os << "Partition";
  for (std::size_t b = 0; b <= edges.size(); ++b) {
    if (b == 0) os << "\t< " << edge(edges[0]) << " " << unit;
    else if (b == edges.size()) os << "\t> " << edge(edges.back()) << " " << unit;
    else os << "\t" << edge(edges[b - 1]) << " " << unit << " - " << edge(edges[b]) << " " << unit;
  }
  os << "\n";
  for (const std::string& p : rows) {
    std::vector<std::vector<double>> waits(edges.size() + 1);
    for (const AccountedJob& j : jobs) {
      if (j.partition != p) continue;
      const double size = memory ? j.gb_hours : j.cpu_hours;
      const std::size_t b = static_cast<std::size_t>(std::upper_bound(edges.begin(), edges.end(), size) - edges.begin());
      waits[b].push_back(j.wait_seconds);
    }
    os << p;
    for (std::vector<double>& w : waits) {
      if (w.empty()) {
        os << "\tNA";
        continue;
      }
      std::sort(w.begin(), w.end());
      const double median = w.size() % 2 ? w[w.size() / 2] : (w[w.size() / 2 - 1] + w[w.size() / 2]) / 2;
      os << "\t" << format_wait(median) << " (" << w.size() << ")";
    }
    os << "\n";
  }
  t.text = os.str();
  return t;
}

namespace {

struct QueueWaitOptions {
  std::vector<std::string> partitions;
  bool memory = false, help = false;
  Bins bins;
  std::string from, since = "now-30days";
};

Bins parse_bins(const std::string& v) {
  Bins bins;
  const std::vector<std::string> f = split(v, ',');
  char* e1 = nullptr;
  char* e2 = nullptr;
  bins.first = f.size() >= 2 ? std::strtod(f[0].c_str(), &e1) : 0;
  bins.factor = f.size() >= 2 ? std::strtod(f[1].c_str(), &e2) : 0;
  bins.count = f.size() == 3 ? std::atoi(f[2].c_str()) : 4;
  if (f.size() < 2 || f.size() > 3 || *e1 != '\0' || *e2 != '\0' || !(bins.first > 0) || !(bins.factor > 1) ||
      bins.count < 2 || bins.count > 20)
    throw UsageError("--bins '" + v + "': expected FIRST,FACTOR[,COUNT] with FIRST > 0, FACTOR > 1, COUNT 2-20 (e.g. 4,4)");
  return bins;
}

QueueWaitOptions parse_queue_wait(int argc, char** argv) {
  QueueWaitOptions o;
  OptionParser()
      .flag("-h,--help", [&] { o.help = true; })
      .flag("-m,--memory", [&] { o.memory = true; })
      .value("-p,--partitions",
             [&](const std::string& v) {
               for (const std::string& p : split_list(v)) o.partitions.push_back(p);
             })
      .value("--bins", [&](const std::string& v) { o.bins = parse_bins(v); })
      .value("--from", [&](const std::string& v) { o.from = v; })
      .value("--since", [&](const std::string& v) { o.since = v; })
      .parse(argc, argv);
  return o;
}

// sacct's output: from --from FILE (- for stdin), else sacct itself; nothing after saying why not.
std::optional<std::string> accounting(const QueueWaitOptions& o, int& code) {
  if (!o.from.empty()) {
    std::ifstream file;
    if (o.from != "-") {
      file.open(o.from);
      if (!file) {
        std::cerr << "miniapp queue-wait: cannot read " << o.from << "\n";
        code = exit_code::kBadInput;
        return std::nullopt;
      }
    }
    std::ostringstream s;
    s << (o.from == "-" ? std::cin.rdbuf() : file.rdbuf());
    return s.str();
  }
  const ProcessResult r = run_process({"sacct", "--parsable2", "--allusers", "--allocations", "--starttime", o.since,
                                       "--endtime", "now", std::string("--format=") + kFields},
                                      true);
  code = exit_code::kRuntimeError;
  if (r.exit_code == 127) {
    std::cerr << "miniapp queue-wait: sacct not found: run it where Slurm's accounting answers, or record its "
                 "output elsewhere and pass --from FILE\n";
    return std::nullopt;
  }
  if (r.exit_code != 0) {
    std::cerr << "miniapp queue-wait: sacct failed (exit code " << r.exit_code << "):\n" << r.err;
    return std::nullopt;
  }
  return r.out;
}

}  // namespace

int run_queue_wait(int argc, char** argv) {
  QueueWaitOptions o;
  try {
    o = parse_queue_wait(argc, argv);
  } catch (const UsageError& e) {
    return usage_error("miniapp queue-wait", e);
  }
  if (o.help) {
    std::cout << kQueueWaitUsage;
    return exit_code::kAllVerified;
  }
  int code = exit_code::kAllVerified;
  const std::optional<std::string> text = accounting(o, code);
  if (!text) return code;
  const SacctParse parsed = parse_sacct(*text);
  if (!parsed.error.empty()) {
    std::cerr << "miniapp queue-wait: " << (o.from.empty() ? std::string("sacct") : o.from) << ": " << parsed.error
              << "\n";
    return exit_code::kBadInput;
  }
  const QueueWaitTable table = queue_wait_table(parsed.jobs, o.partitions, o.bins, o.memory);
  if (!table.error.empty()) {
    std::cerr << table.error << "\n";
    return exit_code::kBadInput;
  }
  std::cout << table.text;
  std::cerr << parsed.jobs.size() << " started job(s)";
  if (parsed.skipped) std::cerr << ", " << parsed.skipped << " skipped (never started, or no time limit)";
  std::cerr << "\n";
  return exit_code::kAllVerified;
}

}  // namespace miniapp::submit
