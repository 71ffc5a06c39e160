#include "reference.h"

#include <cassert>

#include "compose.h"

namespace tprop {

namespace {

float4x4 user_local_to_world(const EntityStore& store, uint32_t slot) {
  if (!store.has_at(slot, Component::LocalToWorld)) return float4x4(1.0f);
  return store.rare_at(slot)->matrix[static_cast<int>(MatrixComponent::LocalToWorld)];
}

}  // namespace

void CpuReference::evaluate(const EntityStore& store, const DepthOrder& order,
                            std::vector<float4x4>& local_to_world) {
  const uint32_t n = order.size();
  local_to_world.resize(n);
  if (frozen_.size() < store.slot_capacity()) {
    frozen_.resize(store.slot_capacity(), float4x4(1.0f));
    frozen_valid_.resize(store.slot_capacity(), 0);
  }

  // Positions are in level order, so a parent's LocalToWorld is final before any child reads it.
  for (uint32_t pos = 0; pos < n; ++pos) {
    const uint32_t slot = order.slot[pos];
    const uint32_t parent_pos = order.parent[pos];
    assert(parent_pos == DepthOrder::kNone || parent_pos < pos);
    const bool is_static = store.has_at(slot, Component::Static);

    if (is_static && store.static_baked_at(slot) && frozen_valid_[slot]) {
      local_to_world[pos] = frozen_[slot];
      continue;
    }

    float4x4 world;
    if (store.has_at(slot, Component::WriteGroupOverride)) {
      world = user_local_to_world(store, slot);
    } else if (parent_pos == DepthOrder::kNone) {
      world = local_matrix(store, slot, EntityStore::kNoSlot);
    } else {
      world = local_to_world[parent_pos] * local_matrix(store, slot, order.slot[parent_pos]);
    }
    local_to_world[pos] = world;

    if (is_static) {
      frozen_[slot] = world;
      frozen_valid_[slot] = 1;
    } else {
      // A later Static in this slot (a new entity, or Static added again) must compute anew.
      frozen_valid_[slot] = 0;
    }
  }
}

std::vector<float4x4> evaluate_once(const EntityStore& store, DepthOrder* order_out) {
  DepthOrder order = sort_by_depth(store);
  std::vector<float4x4> out;
  CpuReference reference;
  reference.evaluate(store, order, out);
  if (order_out) *order_out = std::move(order);
  return out;
}

std::unordered_map<EntityId, float4x4> world_matrices_by_id(const EntityStore& store) {
  DepthOrder order;
  const std::vector<float4x4> world = evaluate_once(store, &order);
  std::unordered_map<EntityId, float4x4> out;
  out.reserve(world.size());
  for (uint32_t pos = 0; pos < order.size(); ++pos)
    out.emplace(store.id_at(order.slot[pos]), world[pos]);
  return out;
}

}  // namespace tprop
