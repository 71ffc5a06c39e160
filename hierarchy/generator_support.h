// What the seeded generators (scene_generators.h, dcl_world_gen.h) share: a random source whose
// numbers are the same on every platform, and the parsing of "gen:KIND:N:..." specs.
#pragma once

#include <cmath>
#include <cstdint>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include "math.h"
#include "result.h"

namespace tprop {

// Scenes must not depend on the standard library's distributions (their algorithms are
// implementation-defined), so every number is mapped from the engine's raw bits here, and
// rotations come from rejection sampling plus a correctly rounded sqrt instead of sin/cos.
class SeededRandom {
 public:
  explicit SeededRandom(uint64_t seed) : engine_(seed) {}

  // Uniform in [0, 1), 53 bits.
  double unit() { return static_cast<double>(engine_() >> 11) * 0x1.0p-53; }
  float range(double lo, double hi) { return static_cast<float>(lo + (hi - lo) * unit()); }
  // Uniform in [0, n) for n <= 2^32 by a multiply-shift; the bias (below n / 2^32) is
  // irrelevant for scene generation.
  uint64_t below(uint64_t n) { return ((engine_() >> 32) * n) >> 32; }
  // A point uniform in the box [lo, hi), drawn x, then y, then z: one statement per draw, since
  // the order in which a constructor's arguments are evaluated is unspecified and compilers
  // differ, which would give another scene for the same seed.
  float3 point(float3 lo, float3 hi) {
    float3 p;
    p.x = range(lo.x, hi.x);
    p.y = range(lo.y, hi.y);
    p.z = range(lo.z, hi.z);
    return p;
  }
  float3 point(float lo, float hi) { return point(float3(lo), float3(hi)); }

  // Uniform over all rotations: a point uniform in the 4-ball, projected on the sphere.
  quat rotation() {
    for (;;) {
      const double x = 2 * unit() - 1, y = 2 * unit() - 1, z = 2 * unit() - 1, w = 2 * unit() - 1;
      const double s = x * x + y * y + z * z + w * w;
      if (s > 1.0 || s < 1e-6) continue;
      const double n = std::sqrt(s);
      return make_quat(float(x / n), float(y / n), float(z / n), float(w / n));
    }
  }
  // A small rotation: normalize(v, 1) with v uniform in [-a, a]^3 turns by at most about 2a.
  quat small_rotation(double a) {
    const double x = a * (2 * unit() - 1), y = a * (2 * unit() - 1), z = a * (2 * unit() - 1);
    const double n = std::sqrt(x * x + y * y + z * z + 1.0);
    return make_quat(float(x / n), float(y / n), float(z / n), float(1.0 / n));
  }
  // A uniform rotation about +Y (a yaw), as most Decentraland scene objects have.
  quat yaw() {
    for (;;) {
      const double c = 2 * unit() - 1, s = 2 * unit() - 1;
      const double r = c * c + s * s;
      if (r > 1.0 || r < 1e-6) continue;
      const double n = std::sqrt(r);
      return make_quat(0.0f, float(s / n), 0.0f, float(c / n));
    }
  }

 private:
  std::mt19937_64 engine_;
};

// "a:b:c" -> {"a", "b", "c"}.
std::vector<std::string_view> split_spec(std::string_view s, char sep = ':');
// "scene generator 'SPEC': WHAT".
Error spec_error(std::string_view spec, const std::string& what);
// A plain decimal in [lo, hi]: no sign, no spaces, no exponent. The error names the field.
Result<uint64_t> parse_spec_number(std::string_view spec, std::string_view field,
                                   std::string_view name, uint64_t lo, uint64_t hi);

}  // namespace tprop
