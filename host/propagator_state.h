// Private to host/: the state behind a Propagator, shared by the files that implement it by
// concept: propagator.cpp (create, update, output), propagator_staging.cpp (packing entities and
// the depth order into the staging mirrors, only what changed, and the frame's work list),
// propagator_bindings.cpp (descriptors or device addresses for the passes) and
// propagator_record.cpp (the recorded upload and passes, and the submits of run() and
// read_back()).
#pragma once

#include "vk_context_state.h"

#include <cstdint>
#include <vector>

#include "gpu_timer.h"
#include "propagator.h"
#include "scene_layout.h"
#include "slot_vector.h"
#include "vk_buffer.h"
#include "vk_pipeline.h"

namespace tprop {
namespace propagator_detail {

// The per-slot input arrays, each a device buffer fed from a persistently mapped staging mirror
// of the same layout. A full upload copies the mirrors whole; a frame after that uploads the
// changed entities as EntityDelta records that scatter.comp writes to their slots.
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

// One evaluation step: a wide level (one invocation per list entry), a run of narrow levels
// walked by one workgroup (or invocation), or a deep run of narrow levels by pointer jumping.
struct Step {
  enum Kind : uint8_t { Wide, Narrow, Jump } kind;
  uint32_t first, count;  // wide: list entries; narrow: levels; jump: run table, levels
  uint32_t entities = 0;  // jump: the run's entities
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
  // Set 0 of the passes: [0] for evaluation (LIST: this frame's list), [1] for the scatter (LIST:
  // the order, whatever the passes follow).
  VkDescriptorSet descriptor_sets[2] = {};
  VkBuffer described[2][gpu::kBindingCount] = {};  // what each set points at now
  Addressing addressing = Addressing::DeviceAddress;
  GpuTimer timer;
  VkCommandPool pool = VK_NULL_HANDLE;
  VkCommandBuffer cmd = VK_NULL_HANDLE;
  VkFence fence = VK_NULL_HANDLE;

  LevelOrder order;
  bool packed = false;    // the GPU holds every entity's current data and a valid LocalToWorld
  bool recorded = true;   // the last update() has been recorded
  const EntityStore* last_store = nullptr;  // another store (or a moved one) packs everything
  uint32_t slots = 0;     // the store's slot_capacity() at the last update()

  Mirrored arrays[kArrays];
  Mirrored rare;       // gpu::RareRecord
  Mirrored deltas;     // gpu::EntityDelta, the changed entities of a frame
  Mirrored order_list; // uint: LevelOrder::entries()
  Mirrored work_list;  // uint: a frame's work list, level segment after segment
  Mirrored levels;     // uvec2 per level: the segments of the list the passes follow this frame
  Buffer world;        // LocalToWorld output by slot, capacity = slot_capacity
  uint32_t slot_capacity = 0;  // slots every per-slot buffer holds (they grow together)
  uint64_t buffers_generation = 0;  // bumped whenever a buffer a binding may name is replaced
  uint64_t described_generation[2] = {~uint64_t(0), ~uint64_t(0)};
  Buffer dirty;        // uint by slot: the last frame number that changed the entity
  Buffer jump;         // scratch of pointer jumping: 140 bytes per entity of the longest run
  VkDeviceSize jump_bytes = 0;
  Buffer frozen;       // mat4 by static index; device only
  uint32_t frozen_capacity = 0;
  Buffer readback;

  // Host bookkeeping, per store slot: what packing a changed slot looks up, in one place (one
  // cache miss a slot, not three, when a frame changes thousands of scattered slots).
  struct SlotSide {
    uint32_t seen = 0;                   // the frame mark that last listed the slot (dedup)
    uint32_t rare = gpu::kNoIndex;       // rare index
    uint32_t static_index = gpu::kNoIndex;
  };
  SlotVector<SlotSide> side;
  std::vector<uint32_t> rare_free;
  uint32_t rare_count = 0;               // high-water mark of rare indices in use
  std::vector<uint8_t> static_valid;     // static index -> the frozen table holds its value
  std::vector<uint32_t> static_free;
  uint32_t static_count = 0;
  std::vector<uint32_t> pending_statics; // slots staged with StoreFrozen: re-check next frame
  uint32_t frame_mark = 0;

  // What the next record() uploads and runs.
  bool full_upload = false;              // copy the mirrors whole and clear LocalToWorld
  std::vector<Range> dirty_rare;
  std::vector<Range> dirty_order;        // entries of order_list copied whole
  std::vector<uint32_t> order_changes;   // else (entry, slot) pairs, scattered after the table
  uint32_t delta_count = 0;
  bool use_work_list = false;            // else the whole order
  bool skip_unchanged = false;           // the whole order, recomputing only dirty chains
  uint32_t frame_number = 0;             // of the last record(); 0 is never used
  uint32_t level_count = 0;              // levels of the list followed this frame
  uint32_t levels_used = 0;              // entries of `levels`: table, order changes, run tables
  Buffer frozen_old;              // copied into `frozen` by the next record(), then dropped
  VkDeviceSize frozen_old_bytes = 0;
  bool frozen_copy_pending = false;  // frozen_old's copy is not recorded yet
  std::vector<Step> steps;
  FrameStats stats;

  ~Impl();

  template <class T>
  T* staged(Array a) const { return static_cast<T*>(arrays[a].staging.mapped()); }
  gpu::RareRecord* staged_rare() const {
    return static_cast<gpu::RareRecord*>(rare.staging.mapped());
  }

  // The walk options.narrow_walk names, Auto resolved for this device.
  NarrowWalk narrow_walk() const {
    if (options.narrow_walk != NarrowWalk::Auto) return options.narrow_walk;
    return s->properties.deviceType == VK_PHYSICAL_DEVICE_TYPE_CPU ? NarrowWalk::SingleInvocation
                                                                    : NarrowWalk::Jump;
  }

  // propagator_staging.cpp: the staging mirrors, the order and the work list.
  // Room for `needed` elements; `limit_stride`: the widest element sharing this capacity.
  Status grow(Mirrored& m, uint32_t needed, VkDeviceSize stride, const char* name, bool keep,
              VkDeviceSize limit_stride = 0);
  Status ensure_slot_capacity(uint32_t n);
  Result<uint32_t> allocate_rare();
  Result<uint32_t> static_index_for(uint32_t slot);
  void release_static(uint32_t slot);
  void release_rare(uint32_t slot);
  // Packs the entity at `slot` (alive or not) into the staging mirrors, or into `delta`.
  Status pack(const EntityStore& store, uint32_t slot, gpu::EntityDelta* delta = nullptr);
  Status full_pack(const EntityStore& store);
  Status incremental_pack(const EntityStore& store, const StoreChanges& changes);
  Status stage_order();
  // Chooses the list the passes follow (the order, or the subtrees below `seeds`), stages its
  // level table and plans the dispatches.
  Status plan_work(const std::vector<uint32_t>& seeds, bool everything);
  // The subtrees below `seeds` into `work`, each entity once; false (and `work` incomplete) as
  // soon as they hold more than `most` entities.
  bool collect_subtrees(const std::vector<uint32_t>& seeds, uint32_t most,
                        std::vector<uint32_t>& work);
  // The dispatches over levels of `counts` entities starting at list entries `firsts`; deep
  // runs of narrow levels, with NarrowWalk::Jump, get their run table in `run_table` ((first run
  // index, level) pairs, each run's table at the index its step names, plus `table_base`).
  Status plan_steps(const std::vector<uint32_t>& counts, const std::vector<uint32_t>& firsts,
                    uint32_t table_base, std::vector<uint32_t>& run_table);

  // propagator_bindings.cpp: how the passes reach the arrays.
  Status create_descriptor_set();
  // The buffers behind set `which` (0: evaluation, 1: scatter).
  void binding_buffers(const Buffer* out[gpu::kBindingCount], int which) const;
  void choose_addressing();
  gpu::ScenePush push_constants(int which) const;

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
