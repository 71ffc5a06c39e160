// median: the middle of a set of figures (the mean of the middle two when their count is even;
// none when there are none). One definition for the tools that summarize repeated measurements
// (tprop run WORLD's frames, tprop_bench --repeat), so that both mean the same by it.
#pragma once

#include <algorithm>
#include <optional>
#include <vector>

namespace tprop {

inline std::optional<double> median(std::vector<double> v) {
  if (v.empty()) return std::nullopt;
  std::sort(v.begin(), v.end());
  const size_t mid = v.size() / 2;
  return v.size() % 2 ? v[mid] : (v[mid - 1] + v[mid]) / 2;
}

}  // namespace tprop
