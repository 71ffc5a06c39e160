#include "bench_edits.h"

#include <algorithm>
#include <cassert>
#include <random>

#include "depth_order.h"

namespace tprop::bench {

namespace {

constexpr uint64_t kSpawned = 1000;
constexpr uint64_t kReparented = 100;

// The generators' mapping of raw engine bits (hierarchy/scene_generators.cpp), so an edit does
// not depend on the standard library's distributions.
class EditRandom {
 public:
  explicit EditRandom(uint64_t seed) : engine_(seed) {}
  uint64_t below(uint64_t n) { return ((engine_() >> 32) * n) >> 32; }
  float unit() { return static_cast<float>(engine_() >> 40) * 0x1.0p-24f; }
  float3 offset(float half) {
    float3 v;
    v.x = (2 * unit() - 1) * half;
    v.y = (2 * unit() - 1) * half;
    v.z = (2 * unit() - 1) * half;
    return v;
  }
  // A live slot, or kNoSlot after a few misses (a store whose slots are mostly free).
  uint32_t live_slot(const EntityStore& store) {
    for (int attempt = 0; attempt < 64; ++attempt) {
      const uint32_t slot = static_cast<uint32_t>(below(store.slot_capacity()));
      if (store.alive_at(slot)) return slot;
    }
    return EntityStore::kNoSlot;
  }

 private:
  std::mt19937_64 engine_;
};

// A small turn, so that values frames keep the scene's shape.
quat nudged(quat q, float3 v) {
  const quat turn = glm::normalize(make_quat(v.x, v.y, v.z, 1.0f));
  return glm::normalize(turn * q);
}

// Every `stride`th slot from a random start: exactly 1% of a dense store for 100, all for 1.
EditSummary change_values(EntityStore& store, EditRandom& rng, uint32_t stride) {
  EditSummary s;
  for (uint32_t slot = static_cast<uint32_t>(rng.below(stride)); slot < store.slot_capacity();
       slot += stride) {
    if (!store.alive_at(slot)) continue;
    const EntityId id = store.id_at(slot);
    store.set_translation(id, store.translation_at(slot) + rng.offset(0.1f));
    store.set_rotation(id, nudged(store.rotation_at(slot), rng.offset(0.05f)));
    ++s.entities;
  }
  s.what = std::to_string(s.entities) + " values";
  return s;
}

struct SpawnCounts {
  uint64_t created = 0;
  uint64_t destroyed = 0;
};

SpawnCounts spawn_and_despawn(EntityStore& store, EditRandom& rng, EntityId& next_id) {
  const uint64_t count = std::min<uint64_t>(kSpawned, store.size() / 10);
  SpawnCounts n;
  for (uint64_t i = 0; i < count; ++i) {
    const uint32_t slot = rng.live_slot(store);
    if (slot != EntityStore::kNoSlot && store.destroy(store.id_at(slot))) ++n.destroyed;
  }
  for (uint64_t i = 0; i < count; ++i) {
    const uint32_t parent_slot = rng.live_slot(store);
    const EntityId id = next_id++;
    store.create(id);
    store.set_translation(id, rng.offset(2.0f));
    store.set_rotation(id, nudged(make_quat(0, 0, 0, 1), rng.offset(1.0f)));
    store.set_scale(id, 0.8f + 0.45f * rng.unit());
    if (parent_slot != EntityStore::kNoSlot) store.set_parent(id, store.id_at(parent_slot));
    ++n.created;
  }
  return n;
}

EditSummary spawn_despawn(EntityStore& store, EditRandom& rng, EntityId& next_id) {
  const SpawnCounts n = spawn_and_despawn(store, rng, next_id);
  EditSummary s;
  s.entities = n.destroyed + n.created;
  s.what = std::to_string(n.created) + " spawned, " + std::to_string(n.destroyed) + " despawned";
  return s;
}

EditSummary reparent(EntityStore& store, EditRandom& rng) {
  const uint64_t count = std::min<uint64_t>(kReparented, store.size() / 10);
  EditSummary s;
  for (uint64_t attempt = 0; s.entities < count && attempt < 4 * count; ++attempt) {
    const uint32_t a = rng.live_slot(store), b = rng.live_slot(store);
    if (a == EntityStore::kNoSlot || b == EntityStore::kNoSlot || a == b) continue;
    // The lower id becomes the parent, so no cycle forms.
    const EntityId child = std::max(store.id_at(a), store.id_at(b));
    const EntityId parent = std::min(store.id_at(a), store.id_at(b));
    store.set_parent(child, parent);
    ++s.entities;
  }
  s.what = std::to_string(s.entities) + " re-parented";
  return s;
}

// Issue 9's mixed frame: the spawns and despawns, then the re-parents, in one frame.
EditSummary churn(EntityStore& store, EditRandom& rng, EntityId& next_id) {
  const SpawnCounts n = spawn_and_despawn(store, rng, next_id);
  const EditSummary moved = reparent(store, rng);
  EditSummary s;
  s.entities = n.created + n.destroyed + moved.entities;
  s.what = "+" + std::to_string(n.created) + " -" + std::to_string(n.destroyed) + ", " +
           moved.what;  // "+1000 -1000, 100 re-parented"
  return s;
}

EditSummary move_subtree(EntityStore& store, EditRandom& rng) {
  const DepthOrder order = sort_by_depth(store);
  // Subtree sizes, children before parents (the reverse of the depth order).
  std::vector<uint64_t> size(order.size(), 1);
  for (uint32_t pos = order.size(); pos-- > 0;)
    if (order.attached(pos)) size[order.parent[pos]] += size[pos];
  const uint64_t target = std::max<uint64_t>(1, order.size() / 10);
  uint32_t best = 0;
  auto distance = [&](uint32_t pos) {
    return size[pos] > target ? size[pos] - target : target - size[pos];
  };
  for (uint32_t pos = 1; pos < order.size(); ++pos)
    if (distance(pos) < distance(best)) best = pos;
  // A new parent outside the subtree (walking up from it never meets the subtree's root).
  auto inside = [&](uint32_t pos) {
    for (; pos != DepthOrder::kNone; pos = order.parent[pos])
      if (pos == best) return true;
    return false;
  };
  EditSummary s;
  for (int attempt = 0; attempt < 64; ++attempt) {
    const uint32_t pos = static_cast<uint32_t>(rng.below(order.size()));
    if (inside(pos)) continue;
    store.set_parent(store.id_at(order.slot[best]), store.id_at(order.slot[pos]));
    s.entities = size[best];
    break;
  }
  s.what = "subtree of " + std::to_string(s.entities);
  return s;
}

}  // namespace

const char* frame_kind_name(FrameKind kind) {
  switch (kind) {
    case FrameKind::Full: return "full";
    case FrameKind::Steady: return "steady";
    case FrameKind::Values: return "values_1pct";
    case FrameKind::ValuesAll: return "values_all";
    case FrameKind::SpawnDespawn: return "spawn_despawn";
    case FrameKind::Reparent: return "reparent";
    case FrameKind::Churn: return "churn";
    case FrameKind::SubtreeMove: return "subtree_move";
  }
  return "?";
}

std::optional<FrameKind> frame_kind_named(const std::string& name) {
  for (FrameKind kind : frames_for(true))
    if (name == frame_kind_name(kind)) return kind;
  return std::nullopt;
}

std::vector<FrameKind> frames_for(bool structural, const std::vector<FrameKind>& only) {
  std::vector<FrameKind> frames = {FrameKind::Full, FrameKind::Steady, FrameKind::Values,
                                   FrameKind::ValuesAll};
  if (structural)
    frames.insert(frames.end(),
                  {FrameKind::SpawnDespawn, FrameKind::Reparent, FrameKind::Churn,
                   FrameKind::SubtreeMove});
  if (!only.empty())
    std::erase_if(frames, [&](FrameKind kind) {
      return kind != FrameKind::Full && std::find(only.begin(), only.end(), kind) == only.end();
    });
  return frames;
}

EditSummary apply_edit(FrameKind kind, EntityStore& store, uint64_t seed, EntityId& next_id) {
  // One stream per frame kind, so adding or dropping a frame leaves the others' edits alone.
  EditRandom rng(seed * 0x9E3779B97F4A7C15ull + static_cast<uint64_t>(kind));
  switch (kind) {
    case FrameKind::Full:
    case FrameKind::Steady: return {0, "-"};
    case FrameKind::Values: return change_values(store, rng, 100);
    case FrameKind::ValuesAll: return change_values(store, rng, 1);
    case FrameKind::SpawnDespawn: return spawn_despawn(store, rng, next_id);
    case FrameKind::Reparent: return reparent(store, rng);
    case FrameKind::Churn: return churn(store, rng, next_id);
    case FrameKind::SubtreeMove: return move_subtree(store, rng);
  }
  assert(false && "every frame kind has an edit");
  return {};
}

}  // namespace tprop::bench
