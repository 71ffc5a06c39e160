// Staging: packs entities into the persistently mapped staging mirrors and notes what the next
// record() copies, so that a frame moves only the bytes that changed (a hierarchy change, or a
// store the Propagator has not seen, packs everything).
#include "propagator_state.h"

#include <algorithm>
#include <cstring>

#include "gpu_pack.h"

namespace tprop {

using namespace propagator_detail;
using gpu::kNoIndex;

namespace {

// At most this many copy regions per array and frame. Thousands of tiny regions cost more to
// record and execute than a few larger ones (measured: the synchronization validation layer
// takes 20 times longer on a frame of 4096 regions per array than on one of 256). Merging runs
// across gaps is harmless, since the staging mirror holds every entity's current bytes, and is
// what a full re-pack or a growing rare table does.
constexpr size_t kMaxRegions = 256;
// A value-only frame whose changed entities form more runs than this uploads them compactly
// (EntityDelta records, one copy) and scatters them with a shader, so only their bytes move.
constexpr size_t kScatterAboveRuns = 64;

// Sorted, unique indices -> runs of consecutive indices, runs closer than a gap merged: no gap
// at first (only changed bytes move), wider gaps until at most kMaxRegions remain.
std::vector<Range> coalesce(std::vector<uint32_t>& indices) {
  std::sort(indices.begin(), indices.end());
  indices.erase(std::unique(indices.begin(), indices.end()), indices.end());
  std::vector<Range> out;
  for (uint32_t gap = 0;; gap = gap ? gap * 2 : 1) {
    out.clear();
    for (uint32_t i : indices) {
      if (!out.empty() && i - out.back().end <= gap) {
        out.back().end = i + 1;
      } else {
        out.push_back({i, i + 1});
      }
    }
    if (out.size() <= kMaxRegions) return out;
  }
}

// Sorts and de-duplicates `indices`; returns how many runs of consecutive indices they form.
size_t count_runs(std::vector<uint32_t>& indices) {
  std::sort(indices.begin(), indices.end());
  indices.erase(std::unique(indices.begin(), indices.end()), indices.end());
  size_t runs = 0;
  for (size_t k = 0; k < indices.size(); ++k)
    if (k == 0 || indices[k] != indices[k - 1] + 1) ++runs;
  return runs;
}

}  // namespace

Status Propagator::Impl::grow(Mirrored& m, uint32_t needed, VkDeviceSize stride, const char* name,
                              bool keep, VkDeviceSize limit_stride) {
  if (needed <= m.capacity && m.device) return ok_status();
  // An eighth more than needed, for growth without reallocating every frame; but the slack only
  // as far as one allocation holds elements of limit_stride bytes, so that a scene right up to
  // the documented limit (maxMemoryAllocationSize / 64 entities) still fits.
  const uint64_t most = s->max_allocation_size / std::max(stride, limit_stride);
  const uint64_t wanted = std::max<uint64_t>(uint64_t(needed) + needed / 8, 64u);
  const uint32_t cap = static_cast<uint32_t>(
      std::min<uint64_t>(std::max<uint64_t>(std::min(wanted, most), needed), UINT32_MAX));
  auto dev = Buffer::create(*s, VkDeviceSize(cap) * stride, BufferKind::DeviceStorage, name);
  if (!dev) return dev.error();
  auto stage = Buffer::create(*s, VkDeviceSize(cap) * stride, BufferKind::Upload,
                              std::string(name) + ".staging");
  if (!stage) return stage.error();
  if (keep && m.staging)
    std::memcpy(stage->mapped(), m.staging.mapped(), VkDeviceSize(m.capacity) * stride);
  m.device = std::move(*dev);
  m.staging = std::move(*stage);
  m.capacity = cap;
  return ok_status();
}

Status Propagator::Impl::ensure_entity_capacity(uint32_t n) {
  if (n <= arrays[0].capacity && world) return ok_status();
  for (int a = 0; a < kArrays; ++a)
    if (Status st = grow(arrays[a], n, kStride[a], kArrayName[a], false, sizeof(float4x4)); !st)
      return st;
  auto w = Buffer::create(*s, VkDeviceSize(arrays[0].capacity) * sizeof(float4x4),
                          BufferKind::DeviceStorage, "tprop.local_to_world");
  if (!w) return w.error();
  world = std::move(*w);
  return ok_status();
}

Result<uint32_t> Propagator::Impl::allocate_rare() {
  if (!rare_free.empty()) {
    const uint32_t r = rare_free.back();
    rare_free.pop_back();
    return r;
  }
  if (rare_count >= rare.capacity || !rare.device) {
    const uint32_t old_count = rare_count;
    if (Status st = grow(rare, rare_count + 1, sizeof(gpu::RareRecord), "tprop.rare", true); !st)
      return st.error();
    // A new device buffer: everything staged so far moves again.
    if (old_count) dirty_rare.push_back({0, old_count});
  }
  return rare_count++;
}

Result<uint32_t> Propagator::Impl::static_index_for(uint32_t slot) {
  if (static_of_slot.size() <= slot) static_of_slot.resize(slot + 1, kNoIndex);
  if (static_of_slot[slot] != kNoIndex) return static_of_slot[slot];
  uint32_t idx;
  if (!static_free.empty()) {
    idx = static_free.back();
    static_free.pop_back();
  } else {
    idx = static_count++;
    if (idx >= frozen_capacity) {
      const uint32_t cap = std::max<uint32_t>(64u, frozen_capacity * 2);
      auto b = Buffer::create(*s, VkDeviceSize(cap) * sizeof(float4x4), BufferKind::DeviceStorage,
                              "tprop.frozen");
      if (!b) return b.error();
      if (frozen && !frozen_old) {  // keep the frozen values: copied over by record()
        frozen_old = std::move(frozen);
        frozen_old_bytes = VkDeviceSize(frozen_capacity) * sizeof(float4x4);
      }
      frozen = std::move(*b);
      frozen_capacity = cap;
      static_valid.resize(cap, 0);
    }
  }
  static_valid[idx] = 0;
  static_of_slot[slot] = idx;
  return idx;
}

void Propagator::Impl::release_static(uint32_t slot) {
  if (slot >= static_of_slot.size() || static_of_slot[slot] == kNoIndex) return;
  static_valid[static_of_slot[slot]] = 0;
  static_free.push_back(static_of_slot[slot]);
  static_of_slot[slot] = kNoIndex;
}

// Packs the entity at `pos` into the staging mirrors.
Status Propagator::Impl::pack(const EntityStore& store, uint32_t pos, gpu::EntityDelta* delta) {
  const uint32_t slot = order.slot[pos];
  const bool attached = order.attached(pos);

  StaticMode mode = StaticMode::NotStatic;
  uint32_t static_index = kNoIndex;
  if (store.has_at(slot, Component::Static)) {
    auto idx = static_index_for(slot);
    if (!idx) return idx.error();
    static_index = *idx;
    // As CpuReference: frozen once baked, unless this backend never computed it.
    if (store.static_baked_at(slot) && static_valid[static_index]) {
      mode = StaticMode::Frozen;
    } else {
      mode = StaticMode::Store;
      static_valid[static_index] = 1;  // the frame about to be recorded computes it
      pending_statics.push_back(slot);
    }
  } else {
    release_static(slot);
  }

  const PackedEntity e = pack_entity(store, slot, attached, mode);
  uint32_t rare_index = rare_of_pos[pos];
  if (e.needs_rare) {
    if (rare_index == kNoIndex) {
      auto r = allocate_rare();
      if (!r) return r.error();
      rare_index = *r;
    }
    staged_rare()[rare_index] = pack_rare(store, slot);
    dirty_rare.push_back({rare_index, rare_index + 1});
  } else if (rare_index != kNoIndex) {
    rare_free.push_back(rare_index);
    rare_index = kNoIndex;
  }
  rare_of_pos[pos] = rare_index;

  staged<uint32_t>(kFlags)[pos] = e.flags;
  staged<float4>(kTranslation)[pos] = e.translation;
  staged<float4>(kRotation)[pos] = e.rotation;
  staged<float4>(kScale)[pos] = e.scale;
  staged<uint32_t>(kParent)[pos] = order.parent[pos];
  staged<uint32_t>(kRareIndex)[pos] = rare_index;
  staged<uint32_t>(kStaticIndex)[pos] = static_index;
  if (delta) {
    *delta = gpu::EntityDelta{};
    delta->position = pos;
    delta->flags = e.flags;
    delta->parent = order.parent[pos];
    delta->rare_index = rare_index;
    delta->static_index = static_index;
    delta->translation = e.translation;
    delta->rotation = e.rotation;
    delta->scale = e.scale;
  }
  return ok_status();
}

void Propagator::Impl::plan_steps() {
  steps.clear();
  const uint32_t level_count = order.level_count();
  uint32_t run_begin = 0, run_end = 0;  // narrow run [run_begin, run_end), empty when equal
  auto flush = [&] {
    if (run_end > run_begin) steps.push_back({true, 0, 0, run_begin, run_end});
    run_begin = run_end = 0;
  };
  for (uint32_t l = 1; l < level_count; ++l) {
    const uint32_t first = order.level_offsets[l];
    const uint32_t count = order.level_offsets[l + 1] - first;
    if (count > gpu::kNarrowLevelMax) {
      flush();
      steps.push_back({false, first, count, 0, 0});
      continue;
    }
    if (run_end == run_begin) run_begin = run_end = l;
    run_end = l + 1;
    if (run_end - run_begin == gpu::kNarrowLevelsPerDispatch) flush();
  }
  flush();
}

Status Propagator::Impl::full_pack(const EntityStore& store) {
  const uint32_t n = order.size();
  if (Status st = ensure_entity_capacity(n); !st) return st;
  if (Status st = grow(levels, order.level_count() + 1, sizeof(uint32_t), "tprop.level_offsets",
                       false); !st)
    return st;
  std::copy(order.level_offsets.begin(), order.level_offsets.end(),
            static_cast<uint32_t*>(levels.staging.mapped()));
  levels_dirty = true;

  // Static indices of slots that are gone or no longer Static go back to the free list.
  for (uint32_t slot = 0; slot < static_of_slot.size(); ++slot)
    if (static_of_slot[slot] != kNoIndex &&
        (slot >= store.slot_capacity() || !store.alive_at(slot) ||
         !store.has_at(slot, Component::Static)))
      release_static(slot);

  rare_of_pos.assign(n, kNoIndex);
  rare_free.clear();
  rare_count = 0;
  dirty_rare.clear();
  pending_statics.clear();
  for (uint32_t pos = 0; pos < n; ++pos)
    if (Status st = pack(store, pos); !st) return st;
  dirty_positions.clear();
  delta_count = 0;
  if (n) dirty_positions.push_back({0, n});
  dirty_rare.clear();
  if (rare_count) dirty_rare.push_back({0, rare_count});
  plan_steps();
  stats.staged_entities = n;
  return ok_status();
}

Status Propagator::Impl::incremental_pack(const EntityStore& store,
                                          const std::vector<uint32_t>& slots) {
  std::vector<uint32_t> positions;
  positions.reserve(slots.size() + pending_statics.size());
  auto add = [&](uint32_t slot) {
    if (slot < store.slot_capacity() && store.alive_at(slot) && slot < order.position.size() &&
        order.position[slot] != DepthOrder::kNone)
      positions.push_back(order.position[slot]);
  };
  for (uint32_t slot : slots) add(slot);
  // Statics computed last frame are baked now: their flags switch to ReadFrozen.
  std::vector<uint32_t> was_pending = std::move(pending_statics);
  pending_statics.clear();
  for (uint32_t slot : was_pending) add(slot);

  std::vector<uint32_t> rare_indices;
  dirty_rare.clear();
  delta_count = 0;
  if (count_runs(positions) > kScatterAboveRuns) {
    // Scattered changes: compact records plus the scatter shader.
    dirty_positions.clear();
    if (Status st = grow(deltas, uint32_t(positions.size()), sizeof(gpu::EntityDelta),
                         "tprop.deltas", false); !st)
      return st;
    auto* out = static_cast<gpu::EntityDelta*>(deltas.staging.mapped());
    for (uint32_t k = 0; k < positions.size(); ++k)
      if (Status st = pack(store, positions[k], &out[k]); !st) return st;
    delta_count = uint32_t(positions.size());
  } else {
    dirty_positions = coalesce(positions);
    for (const Range& r : dirty_positions)
      for (uint32_t pos = r.begin; pos < r.end; ++pos)
        if (Status st = pack(store, pos); !st) return st;
  }
  for (const Range& r : dirty_rare)
    for (uint32_t i = r.begin; i < r.end; ++i) rare_indices.push_back(i);
  dirty_rare = coalesce(rare_indices);
  stats.staged_entities = static_cast<uint32_t>(positions.size());
  return ok_status();
}

}  // namespace tprop
