#pragma once
// `miniapp queue-wait` (seed 003): how long jobs waited in each partition, by job size, from
// Slurm's accounting (`sacct --parsable2`, live or recorded): the median wait and the number of
// jobs per size bin, the size in CPU-hours or in GB-hours of memory.

#include <optional>
#include <string>
#include <vector>

namespace miniapp::submit {

struct AccountedJob {
  std::string job_id, partition, state;
  double wait_seconds = 0;  // Start - Submit
  double cpu_hours = 0;     // allocated CPUs x time limit (the request the scheduler weighed)
  double gb_hours = 0;      // requested memory x time limit
};

struct SacctParse {
  std::vector<AccountedJob> jobs;  // jobs that started
  std::size_t skipped = 0;         // never started, or without a usable time limit
  std::string error;               // a missing column, a malformed line
};

// Text as `sacct --parsable2` writes it: a header line of field names, then '|'-separated rows.
// Needs Partition, Submit, Start, AllocCPUS (or NCPUS), ReqMem and Timelimit (else Elapsed).
SacctParse parse_sacct(const std::string& text);

struct Bins {
  double first = 4, factor = 4;
  int count = 4;  // < first, first - first*factor, ..., > the last edge
};

// The seed's table: a header, then per partition "median (count)" per bin, NA when empty;
// tab-separated. An unknown partition gives the seed's error.
struct QueueWaitTable {
  std::string text;
  std::string error;
};
QueueWaitTable queue_wait_table(const std::vector<AccountedJob>& jobs, const std::vector<std::string>& partitions,
                                const Bins& bins, bool memory);

std::string format_wait(double seconds);  // 0.9 s, 8.2 m, 3.4 h

}  // namespace miniapp::submit
