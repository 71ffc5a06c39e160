// tprop_bench --memory: what one entity costs in memory, scene by scene. The host side is
// measured as the growth of the process's resident set (RSS) while the store, a depth order and
// a Propagator with its first frame come into being; the Propagator's buffers are also counted
// (FrameStats). On a CPU device (lavapipe) device memory is host memory and shows in the RSS.
#pragma once

#include <cstdint>
#include <cstdio>
#include <string>

#include "bench_scenes.h"
#include "propagator.h"
#include "result.h"
#include "vk_context.h"

namespace tprop::bench {

struct MemoryRecord {
  PlannedScene plan;
  uint32_t entities = 0;
  uint32_t slots = 0;
  uint64_t store_rss = 0;        // generating the scene into an EntityStore
  uint64_t order_rss = 0;        // a LevelOrder of it (the Propagator keeps one too)
  uint64_t propagator_rss = 0;   // a Propagator after its first frame (its own LevelOrder, the
                                 // host bookkeeping, the staging that stays; device memory too
                                 // on a CPU device)
  uint64_t device_bytes = 0;     // counted: every device buffer of the scene
  uint32_t device_buffers = 0;
  uint64_t largest_buffer_bytes = 0;
  uint32_t slot_pieces = 0;
  uint64_t staging_bytes = 0;    // counted: the host-visible staging once the first frame
                                 // has completed (its per-slot mirrors freed)
  uint64_t first_frame_staging_bytes = 0;  // ... and while the first frame needed them
  uint64_t first_frame_mirror_bytes = 0;   // ... of which the per-slot mirrors
  bool in_place_arrays = false;  // FrameStats: translation, rotation, scale packed in place
  bool in_place_inputs = false;  // FrameStats: every per-slot input packed in place
  uint64_t peak_rss = 0;         // of the process so far, before any --validate
  double validate_worst = -1;    // --validate: the largest error in tolerances (< 0: not run)
};

// With `validate`, the first frame is then compared with the CPU reference (an error when it is
// outside the tolerance).
Result<MemoryRecord> measure_memory(const VulkanContext& context, const PlannedScene& plan,
                                    uint64_t seed, const PropagatorOptions& options,
                                    bool validate);
// `first`: the process's first scene, whose RSS figures are not blurred by memory the scenes
// before it freed (measure one scene per run for those).
void print_memory(std::FILE* out, const MemoryRecord& m, bool first);
std::string memory_json(const std::string& device, const std::vector<MemoryRecord>& records);

}  // namespace tprop::bench
