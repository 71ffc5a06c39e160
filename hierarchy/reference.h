// The CPU reference: every entity's LocalToWorld by the rules of compose.h, in single precision
// and plain loops, parents strictly before children. It is the oracle the GPU path is checked
// against, so it favours being obviously right over being fast. No recursion: the depth order
// already puts parents first, so a million-deep chain is one loop.
#pragma once

#include <cstdint>
#include <unordered_map>
#include <vector>

#include "depth_order.h"
#include "entity_store.h"
#include "math.h"

namespace tprop {

class CpuReference {
 public:
  // Computes every live entity's LocalToWorld, indexed by DepthOrder position (local_to_world is
  // resized to order.size()): LocalToWorld = LocalToWorld[parent] * local for attached entities,
  // local for roots (compose.h local_matrix).
  //  - WriteGroupOverride: the user-written LocalToWorld (identity if absent), never computed;
  //    children propagate from it.
  //  - Static: computed while !store.static_baked_at(slot), then the value this object computed
  //    for that slot earlier is kept, whatever its components or its parent do since. A baked
  //    Static this object has never seen (a CpuReference created mid-run) is computed once and
  //    kept from then on. Frozen wins over WriteGroupOverride: a Static override freezes the
  //    user value of its first frame.
  // `order` must be sort_by_depth(store) for the store's current hierarchy. Out of host memory
  // it throws std::bad_alloc (result.h), its earlier results kept.
  void evaluate(const EntityStore& store, const DepthOrder& order,
                std::vector<float4x4>& local_to_world);

  // Forgets every frozen Static value (the next evaluate computes them again if not baked, or
  // once if baked).
  void clear() {
    frozen_.clear();
    frozen_valid_.clear();
  }

 private:
  // Per store slot: the LocalToWorld a Static entity froze at, and whether it is set.
  std::vector<float4x4> frozen_;
  std::vector<uint8_t> frozen_valid_;
};

// Convenience for tools and tests: sort the store, evaluate once with a fresh CpuReference and
// return LocalToWorld by DepthOrder position. `order_out`, when given, receives the order used.
std::vector<float4x4> evaluate_once(const EntityStore& store, DepthOrder* order_out = nullptr);

// The same, keyed by entity id.
std::unordered_map<EntityId, float4x4> world_matrices_by_id(const EntityStore& store);

}  // namespace tprop
