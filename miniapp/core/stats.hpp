#pragma once

#include <cstddef>
#include <vector>

namespace miniapp {

struct Summary {
  std::size_t count = 0;
  double min = 0, median = 0, mean = 0, stddev = 0;  // stddev: sample (n-1) standard deviation
};

Summary summarize(std::vector<double> samples);

}  // namespace miniapp
