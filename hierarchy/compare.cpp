#include "compare.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>

namespace tprop {

float max_abs_element(const float4x4& m) {
  float out = 0.0f;
  for (int c = 0; c < 4; ++c)
    for (int r = 0; r < 4; ++r) out = std::max(out, std::fabs(m[c][r]));
  return out;
}

float local_to_world_tolerance(const float4x4& reference, uint32_t level) {
  return kPerLevelUlps * std::numeric_limits<float>::epsilon() * float(level + 1) *
         std::max(1.0f, max_abs_element(reference));
}

std::vector<uint32_t> levels_of(const DepthOrder& order) {
  std::vector<uint32_t> level(order.size(), 0);
  for (uint32_t l = 0; l < order.level_count(); ++l)
    for (uint32_t p = order.level_offsets[l]; p < order.level_offsets[l + 1]; ++p) level[p] = l;
  return level;
}

Result<Comparison> compare_local_to_world(const DepthOrder& order,
                                          const std::vector<float4x4>& reference,
                                          const std::vector<float4x4>& got, size_t max_reported,
                                          void (*progress)(double, void*), void* progress_user) {
  if (reference.size() != order.size() || got.size() != order.size()) {
    return Error{"cannot compare LocalToWorld arrays of " + std::to_string(reference.size()) +
                 " and " + std::to_string(got.size()) + " matrices for " +
                 std::to_string(order.size()) + " entities"};
  }
  const std::vector<uint32_t> level = levels_of(order);
  const double infinity = std::numeric_limits<double>::infinity();
  Comparison out;
  out.compared = reference.size();
  constexpr size_t kProgressStride = 1u << 16;
  for (size_t pos = 0; pos < reference.size(); ++pos) {
    if (progress && pos % kProgressStride == 0) progress(double(pos) / reference.size(), progress_user);
    const float tol = local_to_world_tolerance(reference[pos], level[pos]);
    for (int c = 0; c < 4; ++c) {
      for (int r = 0; r < 4; ++r) {
        const float e = reference[pos][c][r], g = got[pos][c][r];
        double abs_error = 0.0;  // equal values (infinities too) and two NaNs agree
        if (std::isnan(e) != std::isnan(g)) abs_error = infinity;
        else if (!std::isnan(e) && e != g) abs_error = std::fabs(double(e) - double(g));
        const double ratio = abs_error / tol;
        if (abs_error > out.max_abs_error) {
          out.max_abs_error = abs_error;
          out.max_abs_position = uint32_t(pos);
        }
        if (ratio > out.worst_ratio) {
          out.worst_ratio = ratio;
          out.worst_position = uint32_t(pos);
        }
        if (ratio > 1.0) {
          ++out.mismatches;
          if (out.first.size() < max_reported)
            out.first.push_back(Mismatch{uint32_t(pos), level[pos], c, r, e, g, tol});
        }
      }
    }
  }
  if (progress) progress(1.0, progress_user);
  return out;
}

}  // namespace tprop
