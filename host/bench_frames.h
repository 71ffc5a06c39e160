// Running and measuring one tprop_bench frame: the edit, Propagator::update (timed on the
// host), record into the bench's own command buffer, submit, wait, the GPU's stage times, the
// single-thread loop on the same scene and, with --validate, both against the CPU reference.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "bench_edits.h"
#include "entity_store.h"
#include "propagator.h"
#include "result.h"
#include "vk_context.h"

namespace tprop::bench {

// The names of the GPU stages every FrameRecord lists, in order (what StageTimes measures).
const std::vector<std::string>& gpu_stage_names();

struct GpuStage {
  std::string name;  // as StageTimes names it: "upload", "evaluate"
  double ms = 0;
};

// --validate: the largest error in units of the hierarchy/compare.h tolerance (<= 1 passes).
struct FrameCheck {
  double gpu_worst = 0;       // the GPU against the CPU reference
  double gpu_max_abs = 0;
  double loop_worst = 0;      // the single-thread loop against the CPU reference
};

struct FrameRecord {
  FrameKind kind = FrameKind::Full;
  uint32_t run = 0;  // which of the --repeat runs of its kind, from 0
  EditSummary edit;
  // From the Propagator (read in one place, bench_frames.cpp, so that a change to FrameStats or
  // StageTimes is adapted there).
  uint32_t entities = 0;
  uint32_t levels = 0;
  bool hierarchy_changed = false;
  uint32_t evaluated_entities = 0;  // what the passes visited (FrameStats::evaluated_entities)
  uint32_t work_list_walked = 0;    // FrameStats::work_list_walked
  uint32_t staged_entities = 0;     // FrameStats: entities whose bytes were staged,
  uint32_t values_only_entities = 0;  // ... of which the values alone,
  uint32_t values_in_place = 0;     // ... written straight into device memory,
  uint32_t moved_entities = 0;      // entities the edits moved in the order,
  uint32_t compacted_entities = 0;  // and those compaction moved up toward their depth,
  uint32_t slot_ordered_entities = 0;  // the entries of a level put back in slot order
  uint64_t upload_bytes = 0;
  uint64_t in_place_bytes = 0;  // FrameStats::in_place_bytes: written by update() into the device
  uint32_t dispatches = 0;
  uint32_t jump_runs = 0;  // deep runs pointer-jumped (FrameStats)
  uint32_t scan_runs = 0;  // deep runs of aligned levels scanned
  uint32_t climbed_levels = 0;  // top levels in one climb step
  bool shared_wide_stores = false;  // FrameStats::shared_wide_stores
  bool word_stores = false;         // FrameStats::word_stores
  bool slot_order = false;          // FrameStats::slot_order
  uint64_t zeroed_ahead_bytes = 0;  // FrameStats::zeroed_ahead_bytes
  // How the passes reached the arrays, in --addressing's words: "descriptors", "texels",
  // "addresses" or "address-texels" (FrameStats::descriptors, texel_reads).
  const char* addressing = "";
  uint32_t pipelines_created = 0;  // pass variants update() compiled
  std::vector<GpuStage> gpu_stages;    // empty when the device gives no timestamps
  std::optional<double> gpu_total_ms;  // the sum of the stages
  std::string gpu_times_error;         // why there are no stage times
  // Host wall times.
  double host_update_ms = 0;  // Propagator::update
  double frame_wall_ms = 0;   // update + record + submit + wait
  // The frame's edits applied to the store (drawn from the seed, looked up by id, set): the
  // application's side of a frame, which a store that does more in its setters makes longer.
  double edit_ms = 0;
  FrameStats::HostTimes update_stages;  // where update's time went (FrameStats::host)
  // Page faults the update took on its thread (a fault costs far more on some virtual machines
  // than on others: a reason the same frame's host time differs between hosts).
  uint64_t update_page_faults = 0;
  // The byte model (bench_baseline.h) and the single-thread loop on the same scene.
  uint64_t model_bytes = 0;
  double loop_ms = 0;
  std::optional<FrameCheck> check;

  // model_bytes / GPU total, and the GPU total / loop: nullopt without GPU times.
  std::optional<double> gb_per_s() const;
  std::optional<double> gpu_over_loop() const;
};

// One scene's Propagator and the bench's command buffer and fence on the context's queue.
class SceneRunner {
 public:
  // warm_ms: how long the GPU is kept busy with fills before each frame, outside its times
  // (BenchOptions::warm_gpu_ms).
  static Result<SceneRunner> create(const VulkanContext& context,
                                    const PropagatorOptions& options = {}, uint32_t warm_ms = 0);
  SceneRunner(SceneRunner&&) noexcept;
  SceneRunner& operator=(SceneRunner&&) noexcept;
  ~SceneRunner();

  // Edits the store for `kind` (seeded), runs the frame and measures it. Errors: a Vulkan or
  // Propagator failure, or (with `validate`) a result outside the tolerance, naming the worst
  // entity.
  Result<FrameRecord> run_frame(FrameKind kind, EntityStore& store, uint64_t seed,
                                EntityId& next_id, bool validate);

 private:
  struct Impl;
  explicit SceneRunner(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace tprop::bench
