// Private to host/: the state behind a Propagator, shared by the files that implement it by
// concept: propagator.cpp (create, update, output), propagator_staging.cpp (packing entities
// into the staging mirrors, only what changed), propagator_bindings.cpp (descriptors or device
// addresses for the passes) and propagator_record.cpp (the recorded upload, compose and
// propagate commands, and the submits of run() and read_back()).
#pragma once

#include "vk_context_state.h"

#include <cstdint>
#include <vector>

#include "gpu_timer.h"
#include "propagator.h"
#include "scene_layout.h"
#include "vk_buffer.h"
#include "vk_pipeline.h"

namespace tprop {
namespace propagator_detail {

// The per-position input arrays, each a device buffer fed from a persistently mapped staging
// mirror of the same layout: a changed entity's bytes are written into the mirror at its
// position and copied over as part of one coalesced region.
enum Array : int {
  kFlags, kTranslation, kRotation, kScale, kParent, kRareIndex, kStaticIndex, kArrays
};
constexpr VkDeviceSize kStride[kArrays] = {4, 16, 16, 16, 4, 4, 4};
constexpr const char* kArrayName[kArrays] = {
    "tprop.flags", "tprop.translation", "tprop.rotation",     "tprop.scale",
    "tprop.parent", "tprop.rare_index", "tprop.static_index"};

struct Range {
  uint32_t begin, end;  // [begin, end) in elements
};

// One propagate dispatch: a wide level (one invocation per entity), or a run of narrow levels
// walked by one workgroup.
struct Step {
  bool narrow;
  uint32_t first, count;             // wide
  uint32_t level_begin, level_end;   // narrow
};

// A device buffer with its staging mirror, grown by whole reallocation.
struct Mirrored {
  Buffer device;
  Buffer staging;
  uint32_t capacity = 0;  // elements
};

}  // namespace propagator_detail

struct Propagator::Impl {
  using Array = propagator_detail::Array;
  using Range = propagator_detail::Range;
  using Step = propagator_detail::Step;
  using Mirrored = propagator_detail::Mirrored;
  static constexpr int kArrays = propagator_detail::kArrays;

  const ContextState* s = nullptr;
  PropagatorOptions options;
  ComputePipelines pipes;
  VkDescriptorPool descriptor_pool = VK_NULL_HANDLE;
  VkDescriptorSet descriptor_set = VK_NULL_HANDLE;
  VkBuffer described[gpu::kBindingCount] = {};  // what descriptor_set points at now
  // Windowed passes (scenes beyond one binding per array): one set per window of positions.
  VkDescriptorPool window_pool = VK_NULL_HANDLE;
  std::vector<VkDescriptorSet> window_sets;
  uint32_t window_size = 0;                        // positions per window
  uint32_t window_count = 0;                       // windows the last update() needs
  std::vector<VkBuffer> window_described;          // what the window sets point at now
  uint32_t window_described_size = 0;
  uint32_t window_described_count = 0;
  Addressing addressing = Addressing::DeviceAddress;
  GpuTimer timer;
  VkCommandPool pool = VK_NULL_HANDLE;
  VkCommandBuffer cmd = VK_NULL_HANDLE;
  VkFence fence = VK_NULL_HANDLE;

  DepthOrder order;
  bool packed = false;    // the GPU mirrors hold a complete packing of `order`
  bool recorded = true;   // the last update() has been recorded
  const EntityStore* last_store = nullptr;  // another store (or a moved one) packs everything

  Mirrored arrays[kArrays];
  Mirrored rare;       // gpu::RareRecord
  Mirrored levels;     // uint level offsets
  Mirrored deltas;     // gpu::EntityDelta, compact changes of a scattered value-only frame
  uint32_t delta_count = 0;  // > 0: the next record() scatters instead of copying positions
  Buffer world;        // LocalToWorld output, capacity = arrays[*].capacity
  Buffer frozen;       // mat4 by static index; device only
  uint32_t frozen_capacity = 0;
  Buffer readback;

  // Host bookkeeping.
  std::vector<uint32_t> rare_of_pos;   // position -> rare index
  std::vector<uint32_t> rare_free;
  uint32_t rare_count = 0;             // high-water mark of rare indices in use
  std::vector<uint32_t> static_of_slot;  // store slot -> static index
  std::vector<uint8_t> static_valid;     // static index -> the frozen table holds its value
  std::vector<uint32_t> static_free;
  uint32_t static_count = 0;
  std::vector<uint32_t> pending_statics;  // slots staged with StoreFrozen: re-check next frame

  // What the next record() uploads.
  std::vector<Range> dirty_positions;
  std::vector<Range> dirty_rare;
  bool levels_dirty = false;
  Buffer frozen_old;              // copied into `frozen` by the next record(), then dropped
  VkDeviceSize frozen_old_bytes = 0;
  std::vector<Step> steps;
  FrameStats stats;

  ~Impl();

  template <class T>
  T* staged(Array a) const { return static_cast<T*>(arrays[a].staging.mapped()); }
  gpu::RareRecord* staged_rare() const {
    return static_cast<gpu::RareRecord*>(rare.staging.mapped());
  }

  // propagator_staging.cpp: the staging mirrors and what the next record() uploads.
  // Room for `needed` elements; `limit_stride`: the widest element sharing this capacity.
  Status grow(Mirrored& m, uint32_t needed, VkDeviceSize stride, const char* name, bool keep,
              VkDeviceSize limit_stride = 0);
  Status ensure_entity_capacity(uint32_t n);
  Result<uint32_t> allocate_rare();
  Result<uint32_t> static_index_for(uint32_t slot);
  void release_static(uint32_t slot);
  // Packs the entity at `pos` into the staging mirrors (and into `delta` when given).
  Status pack(const EntityStore& store, uint32_t pos, gpu::EntityDelta* delta = nullptr);
  void plan_steps();
  Status full_pack(const EntityStore& store);
  Status incremental_pack(const EntityStore& store, const std::vector<uint32_t>& slots);

  // propagator_bindings.cpp: how the passes reach the arrays.
  Status create_sets(uint32_t count, const char* name, VkDescriptorPool& pool_out,
                     std::vector<VkDescriptorSet>& sets_out);
  Status create_descriptor_set();
  void binding_buffers(const Buffer* out[gpu::kBindingCount]) const;
  void choose_addressing();
  // Positions per window: the device limit, or options.window_entities, aligned.
  uint32_t window_positions() const;
  // Points one descriptor set per window at the own arrays; false if the pool could not be had
  // (the passes then go by device address, which always works).
  bool prepare_windows(uint32_t window);
  gpu::ScenePush push_constants() const;

  // propagator_record.cpp: commands.
  Status create_commands();
  void copy(VkCommandBuffer c, const Mirrored& m, VkDeviceSize stride,
            const std::vector<Range>& ranges);
  // Begins the internal command buffer (one-time submit), for run() and read_back().
  Status begin_internal(const char* what);
  // Ends the internal command buffer, submits it on the context's queue and waits for it.
  Status submit_internal_and_wait(const char* what);
};

}  // namespace tprop
