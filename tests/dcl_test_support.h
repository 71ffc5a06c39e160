// Shared by the dcl_* tests: byte strings written as hex, Transform messages in one call, and an
// independent oracle for Decentraland world matrices that follows the spec text directly
// (recursion over parent ids, cycles found by walking), not the store or the depth sort.
#pragma once

#include <cmath>
#include <cstdint>
#include <map>
#include <optional>
#include <random>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "dcl_crdt.h"
#include "dcl_transform.h"
#include "math.h"

namespace tprop::dcl_test {

// "1a 00 ff" -> {0x1a, 0x00, 0xff}; blanks are ignored.
inline std::vector<uint8_t> hex(const std::string& text) {
  std::vector<uint8_t> out;
  std::istringstream in(text);
  std::string byte;
  while (in >> byte) out.push_back(uint8_t(std::stoul(byte, nullptr, 16)));
  return out;
}

inline DclTransform transform(float3 position, quat rotation = quat(1, 0, 0, 0),
                              float3 scale = float3(1), EntityId parent = 0) {
  DclTransform t;
  t.position = position;
  t.rotation = rotation;
  t.scale = scale;
  t.parent = parent;
  return t;
}

inline DclTransform at(float3 position, EntityId parent) {
  return transform(position, quat(1, 0, 0, 0), float3(1), parent);
}

inline CrdtMessage put_transform(EntityId e, uint32_t lamport, const DclTransform& t) {
  const auto bytes = encode_dcl_transform(t);
  return CrdtMessage::put(e, kDclTransformComponentId, lamport, {bytes.begin(), bytes.end()});
}

inline CrdtMessage delete_transform(EntityId e, uint32_t lamport) {
  return CrdtMessage::delete_component(e, kDclTransformComponentId, lamport);
}

// A random message set over `entities` entities, for convergence tests and for GPU-against-CPU
// runs: several puts per entity with lamports from a small range (so ties happen), random
// parents (the root, other entities, unknown ids, itself), component deletes, other components,
// entity deletes, and a tenth of the messages duplicated. Entity index i has number
// 1 + i % 60000 and version 2 * (i / 60000), or one more for one message in five, so any count
// fits the 16-bit numbers. The same seed gives the same messages on every platform.
inline std::vector<CrdtMessage> random_messages(uint32_t entities, uint32_t seed) {
  std::mt19937 rng(seed);
  auto uniform = [&rng](uint32_t n) { return uint32_t(rng() % n); };
  // Floats from raw bits, not std::uniform_real_distribution, whose output is not specified
  // exactly by the standard.
  auto real = [&rng](float lo, float hi) { return lo + (hi - lo) * float(rng() >> 8) * 0x1p-24f; };
  auto entity = [&](uint32_t index) {
    return dcl_entity_id(uint16_t(1 + index % 60000),
                         uint16_t(2 * (index / 60000) + (uniform(5) == 0 ? 1 : 0)));
  };
  std::vector<CrdtMessage> out;
  for (uint32_t i = 0; i < entities * 6; ++i) {
    const EntityId e = entity(uniform(entities));
    const uint32_t lamport = uniform(6);
    const uint32_t kind = uniform(20);
    if (kind < 14) {
      EntityId parent = 0;
      const uint32_t p = uniform(10);
      if (p < 6) parent = entity(uniform(entities));
      else if (p == 6) parent = e;
      else if (p == 7) parent = entity(entities + uniform(50));  // never has a Transform
      const float x = real(-1, 1), y = real(-1, 1), z = real(-1, 1), w = real(0.1f, 1);
      const quat q = glm::normalize(make_quat(x, y, z, w));
      float3 scale;
      if (uniform(2)) {
        scale = float3(real(0.5f, 2));
      } else {
        const float sx = real(0.5f, 2), sy = real(0.5f, 2), sz = real(0.5f, 2);
        scale = float3(sx, sy, sz);
      }
      const float px = real(-5, 5), py = real(-5, 5), pz = real(-5, 5);
      out.push_back(put_transform(e, lamport, transform({px, py, pz}, q, scale, parent)));
    } else if (kind < 17) {
      out.push_back(delete_transform(e, lamport));
    } else if (kind < 19) {
      const uint32_t component = 1000 + uniform(3);
      const uint32_t size = uniform(4);
      std::vector<uint8_t> data(size, uint8_t(rng()));
      out.push_back(CrdtMessage::put(e, component, lamport, std::move(data)));
    } else if (uniform(4) == 0) {
      out.push_back(CrdtMessage::delete_entity(e));
    }
  }
  const size_t n = out.size();
  for (size_t i = 0; i < n / 10; ++i) out.push_back(out[uniform(uint32_t(n))]);
  return out;
}

// The spec's rules, evaluated naively from the final Transforms. `transforms` holds the valid
// Transform of each entity that has one; entities without one are identity at the root (as are
// unknown ids). An entity is on a cycle when following Transform parents from it comes back to
// it: it then stands at the root with its local matrix.
class Oracle {
 public:
  explicit Oracle(std::map<EntityId, DclTransform> transforms) : t_(std::move(transforms)) {}

  float4x4 world(EntityId e) const {
    const auto it = t_.find(e);
    if (it == t_.end()) return float4x4(1.0f);
    const float4x4 local = translation_matrix(it->second.position) *
                           rotation_matrix(it->second.rotation) *
                           scale_matrix(it->second.scale);
    if (it->second.parent == 0 || on_cycle(e)) return local;
    return world(it->second.parent) * local;
  }

  bool on_cycle(EntityId e) const {
    std::set<EntityId> seen;
    for (EntityId cur = e;;) {
      const auto it = t_.find(cur);
      if (it == t_.end() || it->second.parent == 0) return false;
      cur = it->second.parent;
      if (cur == e) return true;
      if (!seen.insert(cur).second) return false;  // a cycle above e, not through it
    }
  }

 private:
  std::map<EntityId, DclTransform> t_;
};

}  // namespace tprop::dcl_test

// gtest helpers need gtest; kept below the oracle so the oracle stays plain C++.
#include <gtest/gtest.h>

namespace tprop::dcl_test {

inline ::testing::AssertionResult near(const float4x4& got, const float4x4& want,
                                       float tolerance = 1e-5f) {
  for (int c = 0; c < 4; ++c)
    for (int r = 0; r < 4; ++r)
      if (!(std::fabs(got[c][r] - want[c][r]) <= tolerance))
        return ::testing::AssertionFailure()
               << "column " << c << " row " << r << ": got " << got[c][r] << ", want "
               << want[c][r];
  return ::testing::AssertionSuccess();
}

}  // namespace tprop::dcl_test
