// Private to host/: the state behind a Propagator, shared by the files that implement it by
// concept: propagator.cpp (create, update, output), propagator_staging.cpp (packing entities and
// the depth order into the staging mirrors, only what changed), propagator_plan.cpp (the frame's
// work list, level table and evaluation steps),
// propagator_pieces.cpp (arrays in pieces, each its own buffer, and their growth),
// propagator_bindings.cpp (descriptors, or device addresses through piece tables, for the
// passes), propagator_variants.cpp (which specialized pipeline each evaluate step runs, and the
// trimming of chain steps) and propagator_record.cpp (the recorded upload and passes, and the
// submits of run() and read_back()). The chain and bundle steps need no GPU array of their own:
// they walk the level table and the list like the other passes.
#pragma once

#include "vk_context_state.h"

#include <array>
#include <cassert>
#include <cstdint>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "buffer_reclaimer.h"
#include "buffer_prefaulter.h"
#include "gpu_pack.h"
#include "gpu_timer.h"
#include "propagator.h"
#include "scene_layout.h"
#include "slot_vector.h"
#include "vk_buffer.h"
#include "vk_pipeline.h"

namespace tprop {
namespace propagator_detail {

// The per-slot input arrays, each a device buffer. A full upload packs every slot into a
// persistently mapped staging mirror of the same layout and copies it whole; a frame after that
// uploads the changed entities as ValueDelta and EntityDelta records that scatter.comp writes to
// their slots,
// and growth copies the replaced device pieces on the GPU, so nothing reads the mirrors once the
// full upload's copies have completed: they are freed then (64 bytes a slot, 6.4 GB at 100
// million) and made again by the next full pack (Impl::make_mirrors, release_mirrors).
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
// walked by one workgroup (or invocation), a chain of one-entity levels walked by one subgroup,
// a bundle of parallel chains walked by one invocation each, a deep run of narrow levels by
// pointer jumping, or a deep run of aligned levels by a scan.
struct Step {
  enum Kind : uint8_t { Wide, Narrow, Jump, Chain, Bundle, Fused, Scan, Climb } kind;
  uint32_t first, count;  // wide: list entries; narrow, chain, bundle, scan: levels; jump: run
                          // table, levels; fused, climb: chunk table, its (non-empty) levels
  uint32_t entities = 0;  // jump: the run's entities; bundle, scan: entities per level; fused,
                          // climb: chunks
  uint32_t level = 0;     // the first level it evaluates
  uint32_t features = gpu::kFeatureAll;  // its pipeline variant (propagator_variants.cpp)
};

// An array in pieces (shaders/scene_layout.h): element i lives in piece i >> shift at index
// i & (2^shift - 1), each piece its own device buffer (and, when mirrored, a persistently mapped
// staging buffer of the same layout). Every piece holds 2^shift elements but the last, which may
// hold fewer; growth keeps the full pieces, replaces a shorter last piece and adds pieces.
struct Pieced {
  std::vector<Buffer> device;
  // Grows with `device` when mirrored; the per-slot inputs are not (see Array): theirs exist
  // only while a full upload needs them, for the slots it packs, in the same pieces.
  std::vector<Buffer> staging;
  BufferKind device_kind = BufferKind::DeviceStorage;  // DeviceMapped: written in place
  VkDeviceSize stride = 0;
  uint32_t shift = 31;
  uint32_t capacity = 0;  // elements, all pieces together
  bool mirrored = true;
  std::string name;       // of piece 0; piece p > 0 is name#p
  uint64_t table = 0;     // tagged address of its piece table on the GPU (propagator_bindings)

  uint32_t pieces() const { return static_cast<uint32_t>(device.size()); }
  uint32_t first_of(uint32_t piece) const { return piece << shift; }
  uint32_t size_of(uint32_t piece) const {  // elements
    const uint64_t rest = uint64_t(capacity) - first_of(piece);
    return static_cast<uint32_t>(rest < (uint64_t(1) << shift) ? rest : uint64_t(1) << shift);
  }
  uint32_t index_in_piece(uint32_t i) const { return i & ((uint32_t(1) << shift) - 1u); }
  // Element i of the staging mirror.
  template <class T>
  T& staged(uint32_t i) const {
    assert((i >> shift) < staging.size() && "no mirror holds this element");
    return static_cast<T*>(staging[i >> shift].mapped())[index_in_piece(i)];
  }
  // Element i of the device pieces themselves, where they are host-visible (DeviceMapped).
  template <class T>
  T& in_device(uint32_t i) const {
    assert(device[i >> shift].mapped() && "only a DeviceMapped array is written by the host");
    return static_cast<T*>(device[i >> shift].mapped())[index_in_piece(i)];
  }
  // Copies `count` elements from `from` into the staging mirror at element `first`.
  void stage(uint32_t first, const void* from, uint32_t count) const;
  explicit operator bool() const { return !device.empty(); }
};

// The pieces an array needs to grow to `capacity` elements, made but not in use yet, so that a
// group of arrays grows all or nothing: pieces from `first` on replace or follow the present ones.
struct Growth {
  Pieced* array = nullptr;  // null: no growth needed
  uint32_t capacity = 0;
  uint32_t first = 0;
  std::vector<Buffer> device, staging;
};

// A piece's old device buffer whose contents the next record() copies into its replacement
// (piece `piece` of `to`, which only grows, so the copy always fits).
struct PieceCopy {
  Buffer from;
  const Pieced* to = nullptr;
  uint32_t piece = 0;
  VkDeviceSize bytes = 0;
};

}  // namespace propagator_detail

struct Propagator::Impl {
  using Array = propagator_detail::Array;
  using Range = propagator_detail::Range;
  using Step = propagator_detail::Step;
  using Pieced = propagator_detail::Pieced;
  using Growth = propagator_detail::Growth;
  using PieceCopy = propagator_detail::PieceCopy;
  static constexpr int kArrays = propagator_detail::kArrays;

  const ContextState* s = nullptr;
  PropagatorOptions options;
  ComputePipelines pipes;
  VkDescriptorPool descriptor_pool = VK_NULL_HANDLE;
  // Set 0 of the passes: [0] for evaluation (LIST: this frame's list), [1] for the scatter (LIST:
  // the order, whatever the passes follow).
  VkDescriptorSet descriptor_sets[2] = {};
  VkBuffer described[2][gpu::kBindingCount] = {};  // what each set points at now
  // The texel variant's views (scene_layout.h kTexel*) in set 0, of the buffers named here.
  VkBufferView texel_views[gpu::kTexelCount] = {};
  VkBuffer texel_viewed[gpu::kTexelCount] = {};
  Addressing addressing = Addressing::DeviceAddress;
  GpuTimer timer;
  VkCommandPool pool = VK_NULL_HANDLE;
  VkCommandBuffer cmd = VK_NULL_HANDLE;
  VkFence fence = VK_NULL_HANDLE;

  LevelOrder order;
  bool packed = false;    // the GPU holds every entity's current data and a valid LocalToWorld
  bool recorded = true;   // the last update() has been recorded
  uint64_t last_store = 0;  // the last store's identity(): another store packs everything
  uint32_t slots = 0;     // the store's slot_capacity() at the last update()

  // Per slot, in pieces of 2^slot_shift slots (LocalToWorld's 64 bytes decide): the inputs
  // (mirrored by full uploads only), and the device-only LocalToWorld and dirty marks.
  Pieced arrays[kArrays];
  Pieced world;        // LocalToWorld output by slot
  Pieced dirty;        // uint by slot: the last frame number that changed the entity
  uint32_t slot_shift = 31;
  uint32_t slot_capacity = 0;  // slots every per-slot array holds (they grow together)
  uint32_t cleared_slots = 0;  // slots of world and dirty holding defined values on the GPU
  Pieced rare;         // gpu::RareRecord
  Pieced value_deltas; // gpu::ValueDelta, the entities of a frame whose values alone changed
  Pieced deltas;       // gpu::EntityDelta, the other changed entities of a frame
  Pieced order_list;   // uint: LevelOrder::entries()
  Pieced work_list;    // uint: a frame's work list, level segment after segment
  Pieced levels;       // uvec2 per level: the segments of the list the passes follow this frame
  Pieced frozen;       // mat4 by static index; device only
  VkDeviceSize max_buffer_bytes = 0;  // the cap on every buffer's size (options or device)
  uint64_t buffers_generation = 0;  // bumped whenever a buffer a binding may name is replaced
  uint64_t described_generation[2] = {~uint64_t(0), ~uint64_t(0)};
  Buffer jump;         // scratch of pointer jumping (140 bytes per entity of the longest run) and
                       // of the scans (136 bytes per tile of the largest)
  VkDeviceSize jump_bytes = 0;
  // The fused steps' counters (LevelPasses::Fused): per step, the next chunk to take and the
  // chunks done per level; zeroed by each record().
  Buffer progress;
  // Replaced pieces whose contents the next record() copies over; once recorded, held until the
  // next update() (the frame that copies from them has completed by then).
  std::vector<PieceCopy> piece_copies;
  std::vector<Buffer> retired;
  // Frees the full upload's mirrors off the frame's path (buffer_reclaimer.h: on an NVIDIA GPU
  // freeing them cost each of the frames after it up to tens of milliseconds).
  BufferReclaimer reclaimer;
  // Brings a full upload's fresh per-slot pieces and mirrors in on a CPU device while it packs;
  // finished by the end of update() (finish_prefaulting), before anything else may touch them.
  BufferPrefaulter prefaulter;
  // The pieces this update() made that its full upload fills (array and piece index): the
  // per-slot ones of ensure_slot_capacity(), the order list's of full_pack().
  std::vector<std::pair<const Pieced*, uint32_t>> fresh_pieces;
  uint64_t zeroing_bytes = 0;    // the bytes the prefaulter's batch zeroes
  bool zeroing_clears = false;   // ... which holds every piece of world and dirty
  // This update()'s prefaulter left world and dirty all zeros: its full upload's record() need
  // not clear them.
  bool zeroed_clears = false;
  void start_prefaulting();
  void finish_prefaulting();
  // The piece tables of the device-address passes: every Pieced's table, rebuilt in update()
  // when buffers changed and copied to the GPU by the next record().
  Buffer tables;
  Buffer tables_staging;
  uint64_t tables_generation = ~uint64_t(0);
  VkDeviceSize tables_bytes = 0;  // used bytes of `tables`
  bool tables_pending = false;
  std::vector<OutputPiece> output_pieces;
  uint64_t described_buffers = ~uint64_t(0);  // buffers_generation of output_pieces ...
  uint32_t described_slots = 0;               // ... and the slots they cover
  FrameStats buffer_stats;                    // the buffer figures of FrameStats ...
  uint64_t counted_buffers = ~uint64_t(0);    // ... as of this buffers_generation ...
  uint64_t counted_mirrors = ~uint64_t(0);    // ... and this mirrors_generation
  uint64_t mirrors_generation = 0;            // bumped whenever the per-slot mirrors change
  Buffer readback;

  // Host bookkeeping, per store slot: what packing a changed slot looks up, in one place (one
  // cache miss a slot, not three, when a frame changes thousands of scattered slots).
  struct SlotSide {
    uint32_t seen = 0;                   // the frame mark that last listed the slot (dedup)
    uint32_t rare = gpu::kNoIndex;       // rare index
    uint32_t static_index = gpu::kNoIndex;
    uint8_t features = 0;                // the kFeature* bits its entity needs (pass_features.h;
                                         // propagator_variants.cpp); host only
  };
  static_assert(sizeof(SlotSide) == 16);
  SlotVector<SlotSide> side;
  std::vector<uint32_t> rare_free;
  uint32_t rare_count = 0;               // high-water mark of rare indices in use
  std::vector<uint8_t> static_valid;     // static index -> the frozen table holds its value
  std::vector<uint32_t> static_free;
  uint32_t static_count = 0;
  std::vector<uint32_t> pending_statics; // slots staged with StoreFrozen: re-check next frame
  uint32_t frame_mark = 0;
  // A fresh value for side[].seen marks (each walk of a frame takes its own).
  uint32_t next_frame_mark() {
    if (++frame_mark == 0) {
      for (SlotSide& e : side) e.seen = 0;
      frame_mark = 1;
    }
    return frame_mark;
  }

  // What the next record() uploads and runs.
  bool full_upload = false;              // copy the mirrors whole and clear LocalToWorld
  std::vector<Range> dirty_rare;
  std::vector<Range> dirty_order;        // entries of order_list copied whole
  std::vector<uint32_t> order_changes;   // else (entry, slot) pairs, scattered after the table
  uint32_t value_count = 0;              // value deltas staged
  uint32_t delta_count = 0;              // whole deltas staged
  bool use_work_list = false;            // else the whole order
  // Work-list entities a seed brought, as the last walk of at least kSeedsEstimated seeds'
  // subtrees found them (a lower bound where it gave up at work_list_max; 0: not known): a frame
  // whose seeds would bring more than a work list takes follows the whole order without walking,
  // at most kWalksSkipped frames in a row (plan_work()).
  static constexpr size_t kSeedsEstimated = 64;
  static constexpr uint32_t kWalksSkipped = 4;
  float work_per_seed = 0.0f;
  uint32_t walks_skipped = 0;
  bool skip_unchanged = false;           // the whole order, recomputing only dirty chains
  bool mostly_changed = false;           // ... of which at least a quarter changed (seeds)
  uint32_t frame_number = 0;             // of the last record(); 0 is never used
  uint32_t level_count = 0;              // levels of the list followed this frame
  uint32_t levels_used = 0;              // entries of `levels`: table, order changes, run tables
  bool levels_pending = false;           // staged there and not copied yet (a reused plan's
                                         // table is on the GPU already)
  // The last whole-order plan and the order version it was made from (plan_work).
  static constexpr uint64_t kNoPlan = ~uint64_t(0);
  struct WholePlan {
    uint64_t version = kNoPlan;
    uint32_t level_count = 0;
    uint32_t levels_used = 0;
    std::vector<Step> steps;
  } whole_plan;
  std::vector<Step> steps;
  FrameStats stats;

  // propagator_variants.cpp: what the scene's entities need of the evaluate passes
  // (shaders/pass_features.h), counted over the live slots as they are packed, so that each
  // dispatch runs the variant without the rules no entity uses.
  // The bits each slot's entity needs are side[slot].features.
  static constexpr uint32_t kFeatureBits = 8;
  uint32_t feature_entities[kFeatureBits] = {};  // per feature bit: live entities that need it
  bool frozen_projective = false;          // a Static may have frozen a non-affine matrix
  void reset_features();
  void note_features(uint32_t slot, const PackedEntity& e, bool attached,
                     const gpu::RareRecord* record);
  uint32_t scene_features() const;
  // With LevelPasses::Fused: each sequence of narrow-walk steps and wide steps of at most
  // kFusedLevelMax entries, with at least two levels of entries, becomes one fused step, its
  // chunk table appended to run_table.
  void fuse_levels(const std::vector<uint32_t>& counts, uint32_t table_base,
                   std::vector<uint32_t>& run_table);
  // With climb_top(), in a frame that follows the whole order: the leading steps (walks and wide
  // levels, from level 0) that fit ClimbTop's limits become one climb step when they are two or
  // more, its chunk table appended to run_table.
  void climb_top_levels(const std::vector<uint32_t>& counts, uint32_t table_base,
                        std::vector<uint32_t>& run_table);
  // The fused steps' counters: per fused step, 1 + its levels.
  uint32_t progress_words() const {
    uint32_t words = 0;
    for (const Step& step : steps)
      if (step.kind == Step::Fused) words += 1 + step.count;
    return words;
  }
  // Each step's variant, and its pipeline made if missing (counted in FrameStats). After
  // plan_work().
  Status prepare_passes();
  Status prepare_variants();
  // In a frame that skips the unchanged, each chain step starts at its first changed level
  // (chain clean prefixes are not walked; the pass recomputes everything it walks).
  void trim_chains();
  // Whether deep runs of aligned levels are scanned (ScanRuns, Auto resolved for this device).
  bool scan_runs() const {
    if (options.scan_runs == ScanRuns::Never ||
        s->properties.limits.maxComputeSharedMemorySize < gpu::kScanSharedBytes)
      return false;
    return options.scan_runs == ScanRuns::Always || narrow_walk() == NarrowWalk::Jump;
  }
  // Whether the top levels go into a climb step (ClimbTop, Auto resolved for this device).
  bool climb_top() const {
    if (options.climb_top != ClimbTop::Auto) return options.climb_top == ClimbTop::Always;
    return s->properties.deviceType != VK_PHYSICAL_DEVICE_TYPE_CPU;
  }
  // Whether chains and bundles of parallel chains go to their passes (plan_steps).
  bool chain_walk() const {
    return options.subgroup_chains && narrow_walk() == NarrowWalk::SingleInvocation &&
           pipes.chain_supported();
  }

  ~Impl();

  // Every array in pieces, in the order of the piece tables.
  static constexpr int kPiecedArrays = kArrays + 9;
  std::array<const Pieced*, kPiecedArrays> all_pieced() const {
    return {&arrays[0], &arrays[1], &arrays[2], &arrays[3], &arrays[4], &arrays[5], &arrays[6],
            &world, &dirty, &rare, &frozen, &levels, &value_deltas, &deltas, &order_list,
            &work_list};
  }
  std::array<Pieced*, kPiecedArrays> all_pieced() {
    std::array<Pieced*, kPiecedArrays> out;
    const auto all = std::as_const(*this).all_pieced();
    for (int i = 0; i < kPiecedArrays; ++i) out[i] = const_cast<Pieced*>(all[i]);
    return out;
  }

  // Where a full pack writes element `slot` of per-slot array `a`: its staging mirror, or where
  // the host writes the array in place (DeviceMapped: translation, rotation and scale where
  // values are written in place, every input on an integrated GPU or a CPU device), the device
  // memory itself, which then needs no mirror and no copy (update() runs after the previous
  // frame completed).
  template <class T>
  T& packed_at(Array a, uint32_t slot) const {
    const Pieced& m = arrays[a];
    return mirrors(a) ? m.staged<T>(slot) : m.in_device<T>(slot);
  }
  // Whether a full upload stages array `a` (else the full pack writes it in place).
  bool mirrors(Array a) const { return arrays[a].device_kind != BufferKind::DeviceMapped; }
  gpu::RareRecord& staged_rare(uint32_t rare_index) const {
    return rare.staged<gpu::RareRecord>(rare_index);
  }

  // The output's element size and the pass-feature bit that selects its layout.
  bool affine_output() const { return options.output_layout == OutputLayout::Affine3x4; }
  VkDeviceSize output_stride() const {
    return affine_output() ? gpu::kAffine3x4Bytes : gpu::kFloat4x4Bytes;
  }
  // The output's features: its layout, and how the passes store it (WorldWrites).
  uint32_t output_features() const {
    return (affine_output() ? gpu::kFeatureAffineOutput : 0u) |
           (word_stores() ? gpu::kFeatureWordStores : 0u);
  }
  // The divisor LevelOrder::restore_slot_order() takes (0: never), SlotOrder resolved.
  uint32_t slot_order_divisor() const {
    const bool restore = options.slot_order == SlotOrder::Auto
                             ? s->properties.deviceType == VK_PHYSICAL_DEVICE_TYPE_CPU
                             : options.slot_order == SlotOrder::Restore;
    return restore ? kSlotOrderDivisor : 0;
  }
  static constexpr uint32_t kSlotOrderDivisor = 32;
  bool word_stores() const {
    if (options.world_writes != WorldWrites::Auto) return options.world_writes == WorldWrites::Words;
    return s->properties.deviceType == VK_PHYSICAL_DEVICE_TYPE_CPU;
  }
  // propagator_variants.cpp: with the Affine3x4 output, the error naming the first live entity
  // that carries a matrix that is not affine (whose LocalToWorld the layout could not hold).
  Status check_affine_output(const EntityStore& store) const;

  // Whether plain value changes are written straight into device memory (ValueWrites), decided
  // at create(): the translation, rotation, scale and dirty arrays are then DeviceMapped.
  bool in_place = false;
  // Whether a full upload packs every per-slot input into device memory, flags, parents, rare
  // and static indices too (with in_place, where device memory is host memory): no mirrors.
  bool packs_in_place = false;
  // The slots written in place this frame (the chain trimming reads what a frame changed).
  std::vector<uint32_t> in_place_slots;
  // ValueWrites::Auto writes a frame's values in place when they change at least a quarter of
  // the slots: a host that writes the values where they live pays a cache miss for each line it
  // touches, which scattered changes make one per array and entity (1% of a 1M scene: 0.7 ms of
  // host update on lavapipe against 0.2 staged, whose scatter then costs lavapipe's threads 1
  // to 2 ms), dense ones share (all of it: 13 to 14 ms of host update either way, and the
  // staged frame's 17 to 30 ms of copy and scatter saved).
  bool dense_values(size_t changed) const { return changed * 4 >= slots; }
  // The frame number the next record() gives its frame (never 0, below 2^31: the run marks of
  // pointer jumping use the top bit).
  uint32_t next_frame_number() const {
    return frame_number + 1 >= 0x80000000u ? 1u : frame_number + 1;
  }

  // The walk options.narrow_walk names, Auto resolved for this device.
  bool texel_reads() const {
    if (options.texel_reads != TexelReads::Auto) return options.texel_reads == TexelReads::Always;
    return s->properties.deviceType == VK_PHYSICAL_DEVICE_TYPE_CPU;
  }
  // Whether the wide passes may write through shared memory (WideStores; where the device's
  // workgroups hold the 16.5 KiB it takes).
  bool shared_wide_stores() const {
    if (s->properties.limits.maxComputeSharedMemorySize < gpu::kWideSharedStoreBytes) return false;
    if (options.wide_stores != WideStores::Auto) return options.wide_stores == WideStores::Shared;
    return s->properties.deviceType != VK_PHYSICAL_DEVICE_TYPE_CPU;
  }
  // Whether consecutive levels go into fused steps (LevelPasses; Auto is Separate).
  bool fused_levels() const { return options.level_passes == LevelPasses::Fused; }
  // The pass that walks runs of narrow levels.
  Pass narrow_pass() const {
    return narrow_walk() == NarrowWalk::SingleInvocation ? Pass::Serial : Pass::Narrow;
  }
  NarrowWalk narrow_walk() const {
    if (options.narrow_walk != NarrowWalk::Auto) return options.narrow_walk;
    return s->properties.deviceType == VK_PHYSICAL_DEVICE_TYPE_CPU ? NarrowWalk::SingleInvocation
                                                                    : NarrowWalk::Jump;
  }

  // propagator_pieces.cpp: arrays in pieces.
  // Every array empty, with its element size and piece size (from max_buffer_bytes).
  void init_pieced_arrays();
  // Sets up an empty array of `stride`-byte elements in pieces of at most max_buffer_bytes (or
  // of 2^shift elements when `shift` is given: the per-slot arrays).
  void init_array(Pieced& m, VkDeviceSize stride, const char* name, bool mirrored,
                  uint32_t shift = UINT32_MAX);
  // The pieces `m` needs for `needed` elements (`wanted` with slack; no slack crosses into a piece
  // `needed` does not reach), made but not in use; no growth when it has room already.
  Result<Growth> prepare_growth(Pieced& m, uint32_t needed, uint32_t wanted) const;
  // Puts the pieces in use. A replaced piece's device contents are copied over by the next
  // record() when `keep_device`, its mirror's contents at once when `keep_staging`.
  void apply_growth(Growth&& g, bool keep_device, bool keep_staging);
  // prepare_growth + apply_growth, with an eighth of slack (at least 64 elements); or, for the
  // arrays whose size follows each frame's work (deltas, work list, level table), twice what is
  // needed and at least 4,096: on an NVIDIA H200 each growth (a device and a host-visible
  // allocation) put a millisecond or more into the structural frames that grew them by a few.
  enum class Slack : uint8_t { Eighth, PerFrame };
  static uint32_t wanted_with_slack(uint32_t needed, Slack slack);
  Status grow(Pieced& m, uint32_t needed, bool keep_device, bool keep_staging,
              Slack slack = Slack::Eighth);
  // grow() for a full upload (an eighth of slack, nothing kept), its new pieces listed in
  // fresh_pieces for the prefaulter.
  Status grow_fresh(Pieced& m, uint32_t needed);
  // Room for n slots in every per-slot array, all or nothing; what the GPU holds stays (a
  // replaced last piece is copied over by the next record(), new slots read as zeros).
  Status ensure_slot_capacity(uint32_t n);
  // The per-slot inputs' staging mirrors for slots [0, n), for a full pack: in the arrays'
  // pieces, without their slack (a full upload copies the packed slots only). Pieces made
  // earlier that are large enough stay (a full pack after one never recorded, or after a failed
  // update()); all or nothing, so a failure leaves what was there.
  Status make_mirrors(uint32_t n);
  // Frees the per-slot mirrors' buffers, if any, here and now or on the reclaimer's thread: only
  // when no recorded frame that copies from them can still run (update() once the last frame
  // has completed, run() after its wait). Whether there were any.
  bool release_mirrors(bool now);
  // Copies element ranges (sorted, apart) from the staging mirror to the device, split at piece
  // boundaries. Allocates nothing: record() calls it.
  void copy(VkCommandBuffer c, const Pieced& m, std::span<const Range> ranges);
  void copy(VkCommandBuffer c, const Pieced& m, Range one) { copy(c, m, {&one, 1}); }
  // Zeros elements [first, end) on the device (4-byte multiples), split at piece boundaries.
  void fill_zero(VkCommandBuffer c, const Pieced& m, uint32_t first, uint32_t end);

  // propagator_staging.cpp: the staging mirrors and the order.
  Result<uint32_t> allocate_rare();
  // A plain value change straight into the device arrays (ValueWrites::InPlace): translation,
  // rotation, scale and the dirty mark `frame`.
  void write_values_in_place(uint32_t slot, const PackedValues& e, uint32_t frame);
  // Each slot of changes.values gets a value delta staged or its values written in place,
  // from changes.value_records where the store kept them, unless more of it than its values
  // must go (`not_alone`).
  void stage_values(const EntityStore& store, const StoreChanges& changes,
                    bool write_in_place, uint32_t frame, std::vector<uint32_t>& not_alone);
  Result<uint32_t> static_index_for(uint32_t slot);
  void release_static(uint32_t slot);
  void release_rare(uint32_t slot);
  // Packs the entity at `slot` (alive or not) into the staging mirrors, or into `delta`.
  Status pack(const EntityStore& store, uint32_t slot, gpu::EntityDelta* delta = nullptr);
  Status full_pack(const EntityStore& store);
  // What changed since the last frame; `computed_statics`, the Statics the last frame
  // computed, baked now, are packed again.
  Status incremental_pack(const EntityStore& store, const StoreChanges& changes,
                          const std::vector<uint32_t>& computed_statics);
  Status stage_order();

  // propagator.cpp: update()'s work, which may throw std::bad_alloc (update() turns it into an
  // error), and what a failed frame leaves: nothing packed, the order cleared, the Statics
  // computed again (all of them, or, where the frozen table on the GPU is as the last recorded
  // frame left it, those this frame marked).
  Status update_frame(EntityStore& store);
  void abandon_frame(bool frozen_intact);

  // propagator_plan.cpp: what the passes evaluate.
  // Chooses the list the passes follow (the order, or the subtrees below `seeds`), stages its
  // level table and plans the dispatches. `seed_count` slots changed; `seeds` lists them when
  // there are at most PropagatorOptions::work_list_max (more never make a work list).
  Status plan_work(const EntityStore& store, const std::vector<uint32_t>& seeds,
                   size_t seed_count, bool everything);
  // The subtrees below `seeds` into `work`, each entity once (the order's children: the store's
  // child lists); false (and `work` incomplete) as soon as they hold more than `most` entities.
  // Updates work_per_seed.
  bool collect_subtrees(const EntityStore& store, const std::vector<uint32_t>& seeds,
                        uint32_t most, std::vector<uint32_t>& work);
  // The dispatches over levels of `counts` entities starting at list entries `firsts`; deep
  // runs of narrow levels, with NarrowWalk::Jump, get their run table in `run_table` ((first run
  // index, level) pairs, each run's table at the index its step names, plus `table_base`);
  // deep runs of aligned levels are scanned where scan_runs() (they need no table).
  // `list`: the slots the passes follow (by list entry), to find chains of levels.
  // The steps and the levels buffer of this frame's counts and firsts by level.
  Status plan_levels(const std::vector<uint32_t>& counts, const std::vector<uint32_t>& firsts,
                     const uint32_t* list, uint32_t pairs);
  Status plan_steps(const std::vector<uint32_t>& counts, const std::vector<uint32_t>& firsts,
                    const uint32_t* list, uint32_t table_base, std::vector<uint32_t>& run_table);

  // propagator_bindings.cpp: how the passes reach the arrays.
  Status create_descriptor_set();
  // The list set `which` follows: this frame's for evaluation (0), the order for the scatter (1).
  const Pieced& list_of(int which) const {
    return use_work_list && which == 0 && work_list ? work_list : order_list;
  }
  // The arrays, and their first pieces' buffers, behind set `which` (0: evaluation, 1: scatter).
  void binding_arrays(const Pieced* out[gpu::kBindingCount], int which) const;
  void binding_buffers(const Buffer* out[gpu::kBindingCount], int which) const;
  // The buffers and texel formats behind set 0's texel bindings.
  void texel_buffers(const Buffer* out[gpu::kTexelCount], VkFormat format[gpu::kTexelCount],
                     uint32_t binding[gpu::kTexelCount]) const;
  // The bytes of each binding of set `which` this frame's passes may reach.
  void binding_extents(VkDeviceSize out[gpu::kBindingCount], int which) const;
  VkDeviceSize binding_range() const;
  Result<bool> describe_texels();
  Status choose_addressing();
  gpu::ScenePush push_constants(int which) const;

  // The piece tables for the arrays' present buffers, staged for the next record().
  Status build_piece_tables();
  // LocalToWorld's pieces as OutputPieces, for output(), and FrameStats' buffer figures: redone
  // only when a buffer or the slot count changed since the last time.
  void describe_buffers();
  // FrameStats' buffer figures alone (into buffer_stats), redone only when a buffer changed.
  void count_buffers();

  // propagator_record.cpp: commands.
  Status create_commands();
  // Begins the internal command buffer (one-time submit), for run() and read_back().
  Status begin_internal(const char* what);
  // Ends the internal command buffer, submits it on the context's queue and waits for it.
  Status submit_internal_and_wait(const char* what);
};

}  // namespace tprop
