// The application-facing GPU API: a Propagator keeps an EntityStore's scene on the GPU and
// computes every LocalToWorld there, the same results as CpuReference (hierarchy/reference.h).
//
// A frame:
//   propagator.update(store);      // takes store.take_changes(), updates the depth order where
//                                  // the hierarchy changed, stages only what changed
//   propagator.record(cmd);        // upload copies, then the passes: no submit, no wait
//   ... submit cmd, and before the next update() make sure it has completed ...
//   store.mark_statics_baked();
// or simply `propagator.run(store)`, which does all of it and waits.
//
// Data model: every entity's data lives on the GPU at its store slot, which never changes while
// the entity lives, so a frame uploads only the entities whose values changed (and a few bytes
// of the depth order where the hierarchy changed). The passes follow the depth order
// (hierarchy/level_order.h) level by level, composing each entity's local matrix and multiplying
// it by its parent's LocalToWorld in one step. Only the subtrees below what changed are
// recomputed, and nothing at all when nothing changed (the LocalToWorld buffer keeps its values):
// from a work list the host builds when they are small (PropagatorOptions::work_list_max), else
// by following the whole order and skipping, on the GPU, every entity whose chain did not change.
//
// Size: every array is split into pieces, each its own buffer (at most
// PropagatorOptions::max_buffer_bytes, by default the device's maxMemoryAllocationSize), so a
// scene is limited by device memory, not by one allocation: 100 million entities need about
// 15 GB of device memory (README, Performance), beyond an H100's 4 GiB allocations. A scene whose
// LocalToWorld fits one buffer (maxMemoryAllocationSize / 64 entities: 33 million on lavapipe,
// 67 million with 4 GiB) has one piece per per-slot array, as before.
//
// The context must outlive the Propagator. The pass pipelines belong to the context: the
// variants one Propagator compiles serve every later one of the same context (a scene reloaded
// compiles nothing), and they are destroyed with the context. update() rewrites (or frees) the staging memory that
// the previously recorded command buffer copies from, so the caller must have waited for that
// command buffer (fence, timeline semaphore or vkQueueWaitIdle) before calling update() again.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include <vulkan/vulkan.h>

#include "entity_store.h"
#include "gpu_timer.h"
#include "level_order.h"
#include "math.h"
#include "output_layout.h"  // shaders/output_layout.h: gpu::Affine3x4, shared with GLSL
#include "result.h"
#include "vk_context.h"

namespace tprop {

// How LocalToWorld is laid out in the output buffers (shaders/output_layout.h, included above and
// by GLSL): Float4x4 is one float4x4 per slot, column-major, 64 bytes; Affine3x4 is the matrix's
// top three rows, each a float4 (gpu::Affine3x4), 48 bytes, the last row (0, 0, 0, 1) implied.
// Affine3x4 moves a quarter fewer bytes, but holds only affine matrices: with it, update()
// refuses a scene where an entity carries a matrix whose last row is not exactly (0, 0, 0, 1)
// (PropagatorOptions::output_layout says which).
enum class OutputLayout : uint8_t { Float4x4, Affine3x4 };

// One buffer holding part of the LocalToWorld results: slots [first_slot, first_slot + slots),
// slot first_slot + k at byte offset + k * stride of `buffer` (device address address + offset +
// k * stride), stride OutputBinding::stride (64, or 48 for OutputLayout::Affine3x4).
struct OutputPiece {
  VkBuffer buffer = VK_NULL_HANDLE;
  VkDeviceSize offset = 0;
  VkDeviceSize range = 0;  // slots * stride
  VkDeviceAddress address = 0;
  uint32_t first_slot = 0;
  uint32_t slots = 0;
};

// Where the LocalToWorld results live after the recorded commands: one element per store slot in
// `layout` (a float4x4, column-major, 64-byte stride; or with OutputLayout::Affine3x4 a
// gpu::Affine3x4 of three rows, 48-byte stride; `stride` is the element size): instance i is the
// entity store.id_at(i) while store.alive_at(i); a slot without a live entity holds all zeros (a
// degenerate matrix: an instance drawn from it collapses to a point). An entity keeps its slot
// for its whole life, so per-instance tables built from slots stay valid until entities are
// created or destroyed.
//
// One buffer or several. `buffer`, `offset`, `range` and `address` describe the first piece,
// which holds every slot (`range / stride` of them) whenever `pieces.size() <= 1`: a scene whose
// LocalToWorld fits one buffer (PropagatorOptions::max_buffer_bytes, by default the device's
// maxMemoryAllocationSize: 33 million entities on lavapipe, 67 million at 4 GiB). Beyond, the
// slots are split into `pieces`, each `slots_per_piece` slots (a power of two) but the last, so
// slot s is in pieces[s / slots_per_piece] at index s % slots_per_piece: draw each piece with its
// own binding (or address) and firstInstance = first_slot, or look the piece up in the shader
// (README, "Two-minute integration"). The span stays valid until the next update().
//
// The results were last written by `written_stage` with `written_access`: a renderer that reads
// them as instance data (vertex input or a storage buffer) records a barrier from (written_stage,
// written_access) to its own stage and access, e.g.
// VK_PIPELINE_STAGE_2_VERTEX_ATTRIBUTE_INPUT_BIT / VK_ACCESS_2_VERTEX_ATTRIBUTE_READ_BIT. The
// buffers have STORAGE_BUFFER, TRANSFER_SRC/DST and SHADER_DEVICE_ADDRESS usage (not
// VERTEX_BUFFER: bind them as storage buffers or read them through `address`; a range beyond the
// device's maxStorageBufferRange, 128 MiB or 2 million entities on lavapipe, must be bound in
// parts or read through `address`). They stay valid until the next update() that needs more
// slots. The next frame's record() writes them again from COMPUTE_SHADER: the renderer's reads
// must be ordered before that (same queue: a barrier from its read stage to
// VK_PIPELINE_STAGE_2_COMPUTE_SHADER_BIT; another queue: a semaphore).
struct OutputBinding {
  VkBuffer buffer = VK_NULL_HANDLE;
  VkDeviceSize offset = 0;
  VkDeviceSize range = 0;
  VkDeviceSize stride = sizeof(float4x4);  // bytes an element: 64, or 48 for Affine3x4
  OutputLayout layout = OutputLayout::Float4x4;
  VkDeviceAddress address = 0;
  VkPipelineStageFlags2 written_stage = VK_PIPELINE_STAGE_2_COMPUTE_SHADER_BIT;
  VkAccessFlags2 written_access = VK_ACCESS_2_SHADER_STORAGE_WRITE_BIT;
  std::span<const OutputPiece> pieces;  // every piece that holds slots, in slot order
  uint32_t slots_per_piece = 0;         // a power of two; every piece but the last holds this many
};

// What the last update() staged and the last record() recorded (for tests and tools).
struct FrameStats {
  bool hierarchy_changed = false;     // entities were created or destroyed, or Parents changed
  bool full_upload = false;           // everything was packed and uploaded (first frame, growth,
                                      // another store, or a frame after a failed one)
  bool full_pass = false;             // the passes followed the whole order, not a work list
  bool skip_unchanged = false;        // ... skipping on the GPU what did not change (else: all)
  uint32_t entities = 0;
  uint32_t levels = 0;
  uint32_t structural_changes = 0;    // slots the store listed as structurally changed
  uint32_t moved_entities = 0;        // entities whose level or parent changed by the edits
  uint32_t compacted_entities = 0;    // entities moved up toward their depth (compact_per_frame)
  uint32_t slack_entities = 0;        // ... queued for that still (an upper bound)
  uint32_t slot_ordered_entities = 0; // entries of a level put back in slot order (SlotOrder)
  uint32_t staged_entities = 0;       // entities whose bytes were staged (or written in place)
  uint32_t values_only_entities = 0;  // ... of which only the new values (EntityStore's
                                      // StoreChanges::values, when nothing else depends on them)
  uint32_t values_in_place = 0;       // ... of which written straight into device memory
                                      // (ValueWrites::InPlace; no upload, no scatter)
  uint32_t evaluated_entities = 0;    // entities the passes visit: the work list, or the order
  uint32_t work_list_walked = 0;      // entities the host's walk for a work list gathered
                                      // (work_list_max where it gave up: the whole order then)
  uint32_t dirty_entities = 0;        // entities the frame changed (its deltas): what a pass
                                      // skipping the unchanged recomputes from, with subtrees
  uint32_t order_entries_uploaded = 0;// depth-order entries sent to the GPU
  bool order_scattered = false;       // ... as (entry, slot) pairs, too scattered for copies
  uint32_t jump_runs = 0;             // deep runs of levels evaluated by pointer jumping
  uint32_t scan_runs = 0;             // deep runs of aligned levels evaluated by a scan
  bool plan_reused = false;           // the passes' plan of the last whole-order frame served
                                      // again (the order did not change since)
  uint64_t upload_bytes = 0;          // bytes the recorded copies move
  // Bytes update() wrote straight into device memory, which reach the GPU without a copy: a
  // full upload's inputs packed in place (in_place_arrays, in_place_inputs) and values written
  // in place with their dirty marks (values_in_place). Beside upload_bytes, what crossed to the
  // device.
  uint64_t in_place_bytes = 0;
  uint32_t copy_regions = 0;
  uint32_t dispatches = 0;            // scatter + evaluation dispatches recorded
  uint32_t grid_rows = 0;             // most workgroup rows (y) of one dispatch: > 1 is a 2D grid
  bool descriptors = false;           // the passes used descriptors (else device addresses)
  bool texel_reads = false;           // the evaluate passes read texel buffers beside either
  bool shared_wide_stores = false;    // the wide passes were built to store through shared
                                      // memory where slots allow (WideStores)
  bool word_stores = false;           // LocalToWorld was written as 64-bit words (WorldWrites)
  bool slot_order = false;            // scattered wide levels are put back in slot order
                                      // (SlotOrder resolved for the device)
  uint32_t pass_features = 0;         // the union of the evaluate passes' specializations: the
                                      // rules they were built with (shaders/pass_features.h)
  uint32_t chain_steps = 0;           // chains of one-entity levels walked by one subgroup
  uint32_t bundle_steps = 0;          // bundles of parallel chains, an invocation per chain
  uint32_t fused_levels = 0;          // levels evaluated by fused steps (LevelPasses::Fused)
  uint32_t climbed_levels = 0;        // top levels evaluated by one climb step (ClimbTop)
  uint32_t pipelines_created = 0;     // pass variants update() compiled, those the context
                                      // lacked (a driver's compile each: milliseconds on some;
                                      // a full frame makes those that later frames of the scene
                                      // reach for)
  uint32_t slot_pieces = 0;           // buffers each per-slot array spans (LocalToWorld's pieces)
  // The scene's buffers after update(): device-local (every array's pieces, the piece tables,
  // pointer jumping's scratch) and host-visible staging (the depth order's, the rare records', a
  // frame's deltas, work list and level table, the piece tables, and while a full upload needs
  // them the per-slot inputs' mirrors), and the largest of the arrays' pieces (at most
  // max_buffer_bytes; the piece tables, 8 bytes a piece, are apart). The mirrors (64 bytes a
  // slot, 16 with in_place_arrays, none with in_place_inputs) are made by an update() that
  // uploads everything and freed once its frame has completed: by run() after its wait (which
  // updates staging_bytes and mirror_bytes here), else by the next update(), which hands them to
  // a worker thread to free (no longer counted here).
  uint32_t device_buffers = 0;
  uint64_t device_bytes = 0;
  uint64_t staging_bytes = 0;
  uint64_t mirror_bytes = 0;          // ... of staging_bytes, the per-slot inputs' mirrors
  uint64_t largest_buffer_bytes = 0;
  // Bytes of freshly made device buffers that update() had zeroed by a helper thread while it
  // packed (on a CPU device, where device memory is host memory: host/buffer_prefaulter.h), so
  // that the frame's copies and clears on the device do not fault their pages in one by one.
  uint64_t zeroed_ahead_bytes = 0;
  // The translation, rotation and scale arrays live in host-visible device memory that update()
  // writes in place (ValueWrites: by default on integrated GPUs and CPU devices): a full upload
  // packs them there too, so they have no mirror and no copy (48 of the 64 bytes a slot).
  bool in_place_arrays = false;
  // ... and so do the flags, parent, rare and static index arrays, which the host writes only in
  // a full upload (integrated GPUs and CPU devices, with in_place_arrays): no mirror at all.
  bool in_place_inputs = false;
  // Where update()'s host time went, in milliseconds (a clock read around each stage; their sum
  // is update()'s time less a few microseconds of bookkeeping). A stage the frame did not run
  // reads 0: the order and compaction in a frame of values alone, compaction in a full upload.
  struct HostTimes {
    double take_changes_ms = 0;  // EntityStore::take_changes()
    double order_ms = 0;         // the depth order: rebuilt for a full upload, else brought up
                                 // to date by the frame's structural edits (LevelOrder::apply)
    double compact_ms = 0;       // LevelOrder::compact() and restore_slot_order(), after
                                 // structural edits
    double pack_ms = 0;          // entities packed and staged (every one in a full upload) and
                                 // the order's changes staged
    double plan_ms = 0;          // the passes planned: work list, level table, pipeline variants
                                 // (compiled where the context lacks them), piece tables
    struct Named {
      const char* name;  // "take_changes", "order", "compact", "pack", "plan"
      double ms;
    };
    // The stages in order with their names, for reports (tprop_bench, `tprop run WORLD --json`).
    std::array<Named, 5> named() const {
      return {{{"take_changes", take_changes_ms},
               {"order", order_ms},
               {"compact", compact_ms},
               {"pack", pack_ms},
               {"plan", plan_ms}}};
    }
  };
  HostTimes host;
};

// How runs of narrow levels (at most 64 entities each) are evaluated. Measured on lavapipe, a
// 100,000-deep chain, with the specialized passes: SingleInvocation 21 ms (4.7 ms with its
// subgroup chains), Workgroup 36 ms, Jump 390 ms (each round pays llvmpipe's per-invocation
// cost); with the general shader 106, 166 and 533 ms. On an NVIDIA H200 (tprop_bench
// --narrow-walk): Jump 0.11 ms, SingleInvocation 12.4 ms, Workgroup 79 ms; a 1M chain 0.78 ms
// (3.05 with the GPU's clocks down after idling), 185 ms and 874 ms.
enum class NarrowWalk : uint8_t {
  Auto,             // SingleInvocation on a CPU device (VK_PHYSICAL_DEVICE_TYPE_CPU), else Jump
  Workgroup,        // 8 invocations, a workgroup barrier between levels
  // One invocation, no barrier; but chains (at least kChainMinLevels consecutive levels of one
  // entity each, each the child of the one above) are walked by one subgroup of 8 invocations,
  // 8 levels at a time, and bundles of k parallel chains (as many consecutive levels of k
  // entities, the one at position p the child of the one at position p above) by k
  // invocations, one down each chain, with no barrier either (PropagatorOptions::
  // subgroup_chains).
  SingleInvocation,
  // Pointer jumping over runs of at least kJumpMinLevels levels, each at most kJumpLevelMax
  // entities wide: ceil(log2(levels)) + 3
  // dispatches whatever the depth, O(entities * log2(levels)) work, 140 bytes of scratch per
  // entity of the longest run; shorter runs as Workgroup. The products are reassociated (within
  // hierarchy/compare.h's tolerance, which tests check).
  Jump,
};
inline constexpr uint32_t kJumpMinLevels = 64;
// Pointer jumping takes runs of levels up to this many entities wide, not only narrow ones: on an
// NVIDIA H200 a level dispatch costs about 14 us however few entities it holds (a 10M mixed scene,
// 100 parallel chains 10,000 deep, took 145 ms walked level by level), while a round of jumping
// moves about 150 bytes an entity of the run, so a level of w entities in a run L deep is cheaper
// jumped while w * 150 B * log2(L) stays under what 14 us moves (about 30 MB): w up to about 10^4
// for L = 10^4. Runs stay at most what one scratch buffer holds (max_buffer_bytes / 140).
inline constexpr uint32_t kJumpLevelMax = 4096;
// LevelPasses::Fused takes consecutive levels of at most this many entities (16 chunks of 256)
// into one dispatch; wider levels keep a dispatch of their own.
inline constexpr uint32_t kFusedLevelMax = 4096;
inline constexpr uint32_t kChainMinLevels = 16;

// Whether deep runs of aligned levels are evaluated by a scan (PropagatorOptions::scan_runs).
// Aligned: consecutive levels of k entities each (1 <= k <= kJumpLevelMax), the one at position
// p the child of the one at position p above: a chain (k = 1) or k parallel chains, as deep
// hierarchies (skeletons' bone chains, a path of linked parts, a scene's deep runs) usually are.
// Position p down the run is one path, its LocalToWorlds the prefix products of its own
// matrices, computed as a reduce-then-scan (shaders/scan.comp) in three dispatches whatever the
// depth: each entity read twice and written once, O(entities) work, against pointer jumping's
// ceil(log2(levels)) rounds over its scratch. Products are reassociated as jumping's are (within
// hierarchy/compare.h's tolerance, which tests check). The levels around such runs go as before
// (NarrowWalk). Needs 17 KiB of workgroup shared memory (kScanSharedBytes); a device with less
// never scans.
enum class ScanRuns : uint8_t {
  Auto,    // where runs are jumped (NarrowWalk::Jump: every device but a CPU one). On lavapipe
           // a scan costs about 0.5 us an entity (a 1M chain: 515 ms scanned, 676 ms jumped,
           // 25 ms by the subgroup chain pass), so a CPU device keeps its walks. On an H100 a
           // 1M chain 0.24 ms scanned, 0.98 jumped; the 10M mixed scene 0.84 and 4.7 (PERFORMANCE.md).
  Always,  // wherever the device allows, whatever the narrow walk
  Never,   // the narrow walk takes aligned runs too
};
// Runs of at least this many aligned levels are scanned.
inline constexpr uint32_t kScanMinLevels = 64;
// The smallest PropagatorOptions::max_buffer_bytes: 256 slots of LocalToWorld in a piece, and
// room for pointer jumping's scratch of the widest narrow level (64 entities of 140 bytes).
inline constexpr uint64_t kMinBufferBytes = 16384;

// How the levels that are neither walked nor jumped are ordered. On an NVIDIA H200 a dispatch
// with the barrier before it costs several microseconds however few entities it holds (a 1M
// forest's 11 levels evaluate in about twice a flat scene's time), which Fused was built to save;
// measured there it is slower all the same (PERFORMANCE.md: a 10M forest's full frame 2.34
// against 1.93 ms, its 1% values frame 1.05 against 0.64 ms; a 1M forest 0.140 against 0.109
// ms): the workgroups that wait at each level's start hold the GPU while the level above ends,
// and their polls queue at the counter the level above raises. So Auto is Separate everywhere;
// on lavapipe Fused is slower still (a waiting workgroup holds one of the CPU's threads).
enum class LevelPasses : uint8_t {
  Auto,      // Separate (measured best on an H200 and on lavapipe)
  Separate,  // one dispatch per wide level (narrow runs walked), a barrier between them
  // One dispatch for consecutive levels of at most kFusedLevelMax entities: each workgroup takes
  // the next chunk of 256 entries in level order from a counter and, before it evaluates them,
  // waits until every chunk of the level above is done (counted in memory). Chunks are taken in
  // order, so a chunk only waits for chunks that running workgroups hold: it cannot wait for one
  // that never starts. (The H200's figures above fused every level, the widest included.)
  Fused,
};

// Whether the top levels of the order go into one climb step (PropagatorOptions::climb_top): from
// the roots down, at most climb_levels of them, each while its entities times its depth (the
// ancestor steps it adds to the climb) stay within climb_level_work, in a frame that follows the
// whole order. One invocation per entry composes its own chain of ancestors' matrices from its
// root down (shaders/propagate.comp climb()): the same products as the level passes, in their
// order, so the same results, for O(entities * levels) work that is mostly cache hits, where
// the level passes pay a dispatch, a barrier and a few dependent memory round trips a level
// however few entities it holds (a forest's top levels: a few of its dispatches, not of its
// bytes). Taken where it replaces two steps or more (not a deep run's scan or jump). A level
// joins while what it adds costs less than the dispatch it saves: measured on an H100
// (PERFORMANCE.md), climbing a level of w entities at depth d costs about 3 ps times w * d, a level
// dispatch about 3.5 us, so about a million steps break even (a 1M forest4's ninth level, 105k
// entities at depth 9, is about that; with it and the tenth climbed the frame was 6% slower).
// There a 1M forest4's full frame went from 0.110 to 0.082 ms, a 100k one's from 0.047 to 0.020.
enum class ClimbTop : uint8_t {
  // On GPUs. Not on a CPU device: llvmpipe pays for the extra arithmetic lane by lane, more than
  // for the dispatches it saves (a 100k forest4's all-values frame 5.0 -> 7.5 ms on lavapipe).
  Auto,
  Always,  // on every device
  Never,   // the top levels go as every other level
};
// The defaults of PropagatorOptions::climb_levels and climb_level_work.
inline constexpr uint32_t kClimbLevels = 16;
inline constexpr uint32_t kClimbLevelWork = 1u << 19;

// Whether the evaluate passes read through uniform texel buffers (PropagatorOptions::texel_reads).
enum class TexelReads : uint8_t {
  Auto,    // on a CPU device (VK_PHYSICAL_DEVICE_TYPE_CPU, where it was measured), else Never
  Always,  // wherever the arrays fit the device's texel views
  Never,
};

// How the wide level passes write LocalToWorld (PropagatorOptions::wide_stores) where the output
// is 4x4 (the Affine3x4 layout stores directly), in frames that evaluate their whole order (a
// frame that skips the unchanged writes few matrices and stores directly).
enum class WideStores : uint8_t {
  Auto,    // Shared on GPUs, Direct on a CPU device (on lavapipe the shared round trip made a
           // 100k flat scene's evaluation 2.7 times slower)
  // A workgroup whose 256 entries are consecutive slots (scenes packed in level order, the
  // wide levels of a generated or freshly loaded scene) gathers its matrices in shared memory
  // and writes them as consecutive 16-byte columns: on an H100 (tprop_bench --sizes 1M, two
  // alternating rounds, by descriptors) flat 0.072 -> 0.052 ms, forest4 0.126 -> 0.107,
  // forest32 0.093 -> 0.075. By device address the 256 slots must also lie in one piece (not
  // run on a GPU yet). Workgroups of scattered slots store directly, after two barriers.
  Shared,
  Direct,  // each invocation stores its matrix: 4 columns 64 bytes apart across the subgroup
};

// How every pass that writes LocalToWorld stores an entity's matrix (PropagatorOptions::
// world_writes); the bytes and the layout are the same either way.
enum class WorldWrites : uint8_t {
  Auto,  // Words on a CPU device, else Vectors
  // As 64-bit words, two floats each. llvmpipe (Mesa 22.3) stores a value one component at a
  // time, lane by lane, so a matrix stored as 8 words costs it about half of one stored as 16
  // floats: tprop_bench, lavapipe, 2M flat all-values frames (medians of 5, alternating with
  // the build before) 43 -> 37 ms through descriptors, 68 -> 54 ms through device addresses.
  Words,
  Vectors,  // as 4-float columns (rows in the Affine3x4 layout): one store each on a GPU
};

// Whether the wide levels of the depth order are put back in slot order once structural edits
// have scattered them (PropagatorOptions::slot_order; LevelOrder::restore_slot_order).
enum class SlotOrder : uint8_t {
  // Restore on a CPU device, Keep on GPUs. On lavapipe a 1M forest's evaluation after 60 frames
  // of 1,000 spawns, 1,000 despawns and 100 re-parents took 36 to 45 ms against 16 to 22 at the
  // start (PERFORMANCE.md); restored, it stays near the start's. Not measured on a GPU yet,
  // where the sort's host time (a few ms for a 1M scene's widest level, tens at 10M, once every
  // few dozen such frames) weighs against GPU time saved: tprop_bench --slot-order compares.
  Auto,
  // After the frame's structural edits, of the levels of at least slot_order_min_entries
  // entries, the one with the largest share out of slot order, once a thirty-second of it is,
  // is sorted in that frame (the order's upload then sends the whole level).
  Restore,
  Keep,  // levels stay in the order edits leave them
};

// How a frame's plain value changes (new Translation, Rotation or Scale values of entities that
// had them: most of a game's frame) reach the per-slot arrays (PropagatorOptions::value_writes).
enum class ValueWrites : uint8_t {
  // Where device memory is host memory (an integrated GPU, a CPU device), InPlace for a frame
  // whose values change at least a quarter of the slots, else Staged: written where they live,
  // scattered changes cost the host a cache miss each (on lavapipe a 1% frame of a 1M scene
  // took 0.7 ms of update() against 0.2 staged), dense ones about what staging them does, and
  // save the copy and the scatter (17 to 30 ms of lavapipe's time for all of a 1M scene).
  Auto,
  Staged,   // 48-byte records in host-visible staging memory, copied to the device and written
            // to their slots by a scatter pass
  // update() writes the values and the dirty marks straight into the arrays' device memory,
  // which is then allocated host-visible: no staging, no copy, no scatter. Where the device's
  // largest device-local heap has no host-visible coherent memory type (a discrete GPU without
  // resizable BAR), Staged. A frame whose growth replaced one of
  // those arrays' pieces (its contents copied over on the GPU by the record) stages its values.
  InPlace,
};

struct PropagatorOptions {
  // The passes reach the arrays through one descriptor per array whenever the part of every
  // array that the frame uses fits in one binding (maxStorageBufferRange; 128 MiB, about 2
  // million entities, on lavapipe) and the device allows 13 storage buffers per stage: measured
  // 3 to 4 times faster on lavapipe. Decided frame by frame: a buffer grown for one large frame
  // (the deltas of a frame that changed a million entities) does not hold the later ones back.
  // Larger scenes, or `false` here: buffer device addresses for everything, which have no size
  // limit (with texel reads beside them where texel_reads allows, below).
  bool prefer_descriptors = true;
  // The most bytes one storage-buffer descriptor or texel view binds: 0, the device's limits
  // (maxStorageBufferRange, maxTexelBufferElements); lower caps them. Tests set it low to reach
  // the limits on small scenes.
  uint64_t max_binding_bytes = 0;
  // The evaluate passes read the arrays they never write (translation, rotation, scale, parent
  // indices, the list), and a parent's LocalToWorld and the dirty marks where an earlier
  // dispatch wrote them, through uniform texel buffers, where each of those arrays is one piece
  // that fits the device's maxTexelBufferElements: beside descriptors, or beside device
  // addresses when the scene outgrew one storage binding (with prefer_descriptors = false, only
  // under Always). Measured on lavapipe, where a texel fetch serves 8 lanes at once and a
  // storage-buffer load goes lane by lane: a 1M forest's full evaluation about a third faster,
  // a 4M forest's 5.5 times beside device addresses (PERFORMANCE.md). On an H100 the 10M
  // frames varied by 3x whatever the mode, so nothing told them apart: Auto keeps storage
  // buffers on GPUs (tprop_bench --addressing texels compares); Never: storage buffers only.
  TexelReads texel_reads = TexelReads::Auto;
  ValueWrites value_writes = ValueWrites::Auto;
  // A frame whose changed subtrees hold at most this many entities evaluates them from a work
  // list the host builds (walking them costs host time in proportion, at random addresses);
  // beyond, the passes follow the whole order and the GPU skips every entity whose own or
  // parent's chain did not change (without the walk where the last one found the seeds'
  // subtrees too large for this many; FrameStats::work_list_walked). 0 forces the whole order
  // every frame, UINT32_MAX a work list whenever one is possible; tests use both.
  uint32_t work_list_max = 4096;
  // A structural edit leaves levels deeper than depths where that saves moving a subtree (a
  // despawned parent's children stay where they stand as roots; hierarchy/level_order.h). Each
  // frame with structural edits then moves at most this many entities back up toward their
  // depth, so that the levels (the passes' dispatches) do not drift while no frame pays for a
  // whole subtree; all of them in the rare frame where the levels stand more than twice as deep
  // (plus 64) as when they were last exact (LevelOrder::drifted). Frames of values alone or of
  // nothing move none: they stay as cheap. Measured on a 1M forest: ~0.1 ms a thousand.
  // 0: never (levels only deepen until the next full upload); UINT32_MAX: exact depths after
  // every frame, at the cost of the subtrees. Tests use all three.
  uint32_t compact_per_frame = 512;
  SlotOrder slot_order = SlotOrder::Auto;
  // The narrowest level SlotOrder sorts: narrower ones hold few of the bytes, and a 1M forest's
  // levels of 8,000 to 30,000 entities, sorted almost every frame of 2,000 spawns and despawns,
  // cost more host time than they saved. Tests set it low to sort small scenes' levels.
  uint32_t slot_order_min_entries = 65536;
  NarrowWalk narrow_walk = NarrowWalk::Auto;
  LevelPasses level_passes = LevelPasses::Auto;
  WideStores wide_stores = WideStores::Auto;
  WorldWrites world_writes = WorldWrites::Auto;
  ScanRuns scan_runs = ScanRuns::Auto;
  ClimbTop climb_top = ClimbTop::Auto;
  // The most top levels a climb step takes: 2 to gpu::kClimbLevelsMax (16); outside, the nearest.
  // And the most ancestor steps one of them may add: its entities times its depth (ClimbTop).
  uint32_t climb_levels = kClimbLevels;
  uint32_t climb_level_work = kClimbLevelWork;
  // Pointer jumping takes a run of at most this many entities at once (its scratch, 140 bytes an
  // entity, is one buffer); a longer run goes in consecutive pieces. 0: as many as one buffer
  // (max_buffer_bytes) allows. Tests set it low to run pieces on small scenes.
  uint32_t jump_run_max_entities = 0;
  // A scan takes at most this many tiles of a run's levels at once (a tile: 1,024 levels of a
  // chain, fewer of a wider run; scene_layout.h); a longer run goes in consecutive pieces, as
  // when its scratch (136 bytes a tile and position) would pass max_buffer_bytes. 0: as many as
  // one buffer allows. Tests set it low to run pieces on small scenes.
  uint32_t scan_tiles_max = 0;
  // The most bytes of one buffer: every array larger than this is split into pieces of a
  // power-of-two number of elements, each its own buffer (the per-slot arrays all at the slots
  // where LocalToWorld splits). 0: the device's limit (maxMemoryAllocationSize, and
  // maxBufferSize where the device reports it). Below kMinBufferBytes counts as kMinBufferBytes.
  // Tests set it low to run many pieces on small scenes; a renderer that wants LocalToWorld in
  // bindable parts can set it to maxStorageBufferRange.
  uint64_t max_buffer_bytes = 0;
  // A dispatch of more workgroups than this puts the rest in rows along y (a 2D grid the
  // shaders flatten). The default is the least maxComputeWorkGroupCount[0] Vulkan guarantees,
  // first exceeded by a pass over 16.7 million entities; tests lower it (at least 1) to run the
  // 2D grid on small scenes. The device's own limit caps it too.
  uint32_t max_groups_per_dimension = 65535;
  // Each evaluate dispatch runs a pipeline specialized to the rules its entities may need
  // (shaders/pass_features.h: composites, user matrices, Statics, overrides, parents, skipping,
  // non-affine matrices), as counted over the scene's live entities when they are packed; a
  // variant is made the first time a frame needs it. Measured on lavapipe, where every branch is
  // paid by every entity: see PERFORMANCE.md. `false`: the general shader every time (every
  // rule compiled in), for comparison.
  bool specialize = true;
  // With NarrowWalk::SingleInvocation, chains go to one subgroup of 8 and bundles of parallel
  // chains to an invocation per chain (see there), where the device's subgroups hold at least 8
  // invocations and shuffle in compute shaders. `false`: the single invocation walks them too.
  // Tests use both.
  bool subgroup_chains = true;
  // The layout of the LocalToWorld output (see OutputLayout). Affine3x4 writes 48 bytes an
  // entity instead of 64 and every pass reads parents as 3 rows; update() then returns an error
  // naming the first entity (lowest slot) that carries a matrix whose last row is not exactly
  // (0, 0, 0, 1): a user-written LocalToWorld, LocalToParent, ParentScaleInverse,
  // CompositeRotation or CompositeScale, used this frame or not. read_back() returns float4x4
  // either way.
  OutputLayout output_layout = OutputLayout::Float4x4;
};

class Propagator {
 public:
  static Result<Propagator> create(const VulkanContext& context,
                                   const PropagatorOptions& options = {});

  Propagator(Propagator&&) noexcept;
  Propagator& operator=(Propagator&&) noexcept;
  Propagator(const Propagator&) = delete;
  Propagator& operator=(const Propagator&) = delete;
  ~Propagator();

  // Takes the store's changes and stages them. Errors: out of host or device memory, a scene
  // beyond the device's limits; the Propagator then packs everything again on the next
  // update() (out of host memory, Statics frozen before keep their values). Never throws. Each
  // update() is meant to be followed by one record() (an update() whose frame was never
  // recorded makes the next one pack everything again).
  Status update(EntityStore& store);
  // Records the upload copies and the passes of the last update() into `cmd` (a
  // primary command buffer in the recording state, for a queue of the context's family). It
  // binds its own compute pipelines, descriptor set 0 and push constants: the caller's compute
  // bindings are not preserved. The recorded commands are meant for one submission before the
  // next update(), which may rewrite the descriptor set they use. Allocates no host memory
  // (update() makes any room it needs), so it cannot fail for want of it.
  void record(VkCommandBuffer cmd);
  // update + record into an internal command buffer + submit + wait + store.mark_statics_baked().
  // Once the frame has completed it also frees a full upload's staging mirrors (FrameStats::
  // mirror_bytes), which a caller's own record() frees only at the next update(). Past its
  // update(), it allocates no host memory where it succeeds.
  Status run(EntityStore& store);
  // run() after its update(): records the frame the last update() staged into the internal
  // command buffer, submits it, waits and calls store.mark_statics_baked(). update() then
  // run_staged() is run() in two steps, for a caller that times the host's part apart.
  Status run_staged(EntityStore& store);

  OutputBinding output() const;
  // The depth order of the last update(): levels, attached parents and level segments by slot.
  const LevelOrder& order() const;
  // Copies LocalToWorld back, one float4x4 per store slot (slot_capacity() of the last update()'s
  // store; zeros where no entity lives; with OutputLayout::Affine3x4 the stored rows and a last
  // row of (0, 0, 0, 1) for every slot the depth order holds), submitting and waiting on the
  // context's queue once per piece (through one host-visible buffer of at most a piece's size).
  // Call after the recorded frame has completed (run() guarantees it).
  Result<std::vector<float4x4>> read_back();
  // GPU times of the last recorded frame, once it has completed; an error before that (or where
  // the queue keeps no timestamps). Never throws: out of host memory, the error says so.
  Result<StageTimes> stage_times() const;
  const FrameStats& last_frame() const;

 private:
  struct Impl;
  explicit Propagator(std::unique_ptr<Impl> impl);
  // create() without its guard against std::bad_alloc.
  static Result<Propagator> create_unguarded(const VulkanContext& context,
                                             const PropagatorOptions& options);
  std::unique_ptr<Impl> impl_;
};

}  // namespace tprop
