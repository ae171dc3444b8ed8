#pragma once
// Which of `total` values a check or a comparison looks at when it cannot look at all of them.

#include <cstddef>
#include <vector>

namespace miniapp {

// `wanted` indices spread evenly over [0, total), the first and the last included; every index
// when total <= wanted.
inline std::vector<std::size_t> even_sample(std::size_t total, std::size_t wanted) {
  std::vector<std::size_t> picked;
  if (total <= wanted) {
    picked.reserve(total);
    for (std::size_t i = 0; i < total; ++i) picked.push_back(i);
  } else if (wanted == 1) {
    picked.push_back(0);
  } else if (wanted > 1) {
    picked.reserve(wanted);
    for (std::size_t s = 0; s < wanted; ++s) picked.push_back(s * (total - 1) / (wanted - 1));
  }
  return picked;
}

}  // namespace miniapp
