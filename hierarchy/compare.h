// Comparing two LocalToWorld arrays (a backend under test against the CPU reference), position
// by position in a DepthOrder, with a tolerance that grows with the entity's depth.
//
// The tolerance of one LocalToWorld at `level` (0 for roots) is kPerLevelUlps float epsilons per
// level, relative to the magnitude of the reference matrix (at least 1, so that translations near
// zero are judged against the unit of the scene):
//     tolerance = 16 * 2^-23 * (level + 1) * max(1, max |reference element|)
// Why: the GPU computes the same products as the reference, in the same order, but the compiler
// may fuse a multiply and an add (one rounding instead of two) and GLSL's `/` (for 1/Scale) is
// only guaranteed to 2.5 ulp. Each level's 4x4 product sums four terms, adding at most ~4 ulps of
// its operands' magnitude; the error then carries down the chain through rotations (norm 1) and
// the scene's bounded scales, so it grows linearly with depth. 16 ulps a level leaves a 4x
// margin. Larger than that is a wrong rule, not rounding. (Scenes with large scales deep in a
// chain amplify rounding beyond this model; the comparison then reports it, as it should.)
//
// Reassociated products (pointer jumping over deep runs, host/propagator.h NarrowWalk::Jump; the
// scans of aligned runs, ScanRuns, grouped by tiles and by a scan of the tiles' products; the
// subgroup chain pass, by blocks of 8) compute the same product of the chain's matrices, parent
// before child, grouped in a tree instead of left to right. A first-order error bound does not depend on the grouping: a
// product of d + 1 factors takes d multiplications whichever way it is grouped, each adding its
// few ulps relative to the magnitude of what it multiplies, so the bound above (linear in the
// level) holds for them too. The GPU tests check it on chains (100,000 deep, scanned and jumped)
// and on 400-level and 3,000-level scenes of every component mix.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "depth_order.h"
#include "math.h"
#include "result.h"

namespace tprop {

inline constexpr float kPerLevelUlps = 16.0f;

// The largest |element| of m.
float max_abs_element(const float4x4& m);
// The tolerance of one LocalToWorld element at `level` whose reference matrix is `reference`.
float local_to_world_tolerance(const float4x4& reference, uint32_t level);
// The level of every position of `order` (0 for roots).
std::vector<uint32_t> levels_of(const DepthOrder& order);

// One element outside its tolerance.
struct Mismatch {
  uint32_t position = 0;  // in the DepthOrder
  uint32_t level = 0;
  int column = 0, row = 0;
  float expected = 0, got = 0, tolerance = 0;
};

struct Comparison {
  size_t compared = 0;          // matrices compared
  double worst_ratio = 0;       // the largest |error| / tolerance (<= 1 passes); inf for NaN
  double max_abs_error = 0;     // the largest |error| of any element
  uint32_t worst_position = 0;  // where worst_ratio was found
  uint32_t max_abs_position = 0;  // where max_abs_error was found (may differ: no tolerance)
  size_t mismatches = 0;        // elements outside their tolerance
  std::vector<Mismatch> first;  // the first few of them, in position order
  bool within_tolerance() const { return worst_ratio <= 1.0; }
};

// Compares `got` against `reference`, both indexed by position in `order`. Two NaNs agree; a NaN
// against a number is an infinite error. `progress`, when given, is called now and then with the
// fraction done (for a progress bar). Error: the sizes differ from the order's.
Result<Comparison> compare_local_to_world(const DepthOrder& order,
                                          const std::vector<float4x4>& reference,
                                          const std::vector<float4x4>& got,
                                          size_t max_reported = 8,
                                          void (*progress)(double, void*) = nullptr,
                                          void* progress_user = nullptr);

}  // namespace tprop
