// The two ways `tprop run` computes a frame: the CPU reference and the GPU path (a headless
// Vulkan context and a Propagator), each following the frame protocol of README.md.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "cli_args.h"
#include "depth_order.h"
#include "entity_store.h"
#include "gpu_timer.h"
#include "math.h"
#include "propagator.h"
#include "result.h"

namespace tprop::cli {

// One evaluated frame: LocalToWorld by position in `order`.
struct Evaluation {
  DepthOrder order;
  std::vector<float4x4> local_to_world;
  std::optional<StageTimes> gpu_times;  // GPU path: timestamp queries, when the queue has them
  double sort_ms = 0;                   // depth sort (CPU path; the GPU path sorts in update)
  double evaluate_ms = 0;               // wall clock: evaluate, or upload + submit + wait + read
  double update_ms = 0;                 // GPU path: Propagator::update, the host's share of it
  std::optional<FrameStats> stats;      // GPU path: what the update staged and recomputed
};

// How --output-layout is spelled in reports: "4x4" or "3x4".
const char* output_layout_name(OutputLayout layout);

// A headless Vulkan context with a Propagator on it.
class GpuBackend {
 public:
  // `device`: an index or a name substring; empty: TPROP_DEVICE, else the best device. The error
  // says why no device could be used.
  // `options`: the Propagator's (read-back gives float4x4 whatever the output layout).
  static Result<std::unique_ptr<GpuBackend>> open(const std::string& device,
                                                  const PropagatorOptions& options = {});
  ~GpuBackend();
  std::string device_name() const;

  // One frame: update, record, submit, wait, store.mark_statics_baked(), read back.
  Result<Evaluation> evaluate(EntityStore& store) { return frame(store, true); }
  // The same; without `read_back` the results stay on the GPU (order and local_to_world stay
  // empty), as when replaying many frames.
  Result<Evaluation> frame(EntityStore& store, bool read_back);

 private:
  struct Impl;
  explicit GpuBackend(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

// The GPU as `tprop run` wants it, opened when `backend` is not cpu or `validate` is set (else
// nullptr). An error, the message to fail with, when --backend gpu or --validate needs a device
// that is not usable; with auto, no usable device gives nullptr, `fallback` says why and a
// one-line notice goes to stderr.
Result<std::unique_ptr<GpuBackend>> open_gpu_for_run(const RunOptions& options,
                                                     std::string& fallback);

// One frame on the CPU reference. With `bake` the whole frame protocol runs (take the changes,
// sort, evaluate, mark the statics baked); without, the store is left untouched, so that the GPU
// can run the same frame afterwards (--validate).
Evaluation evaluate_cpu(EntityStore& store, bool bake);

// An evaluation's LocalToWorld by position in `reference` (another order of the same store; the
// evaluation's own order when they are the same, as after a GPU frame, which reports in
// sort_by_depth's order). Positions the evaluation lacks are zero.
std::vector<float4x4> in_reference_order(const DepthOrder& reference, const Evaluation& e);

// Whether an explicit --device names one of the Vulkan devices (for a run that opens none, such
// as --backend cpu): the error says what it matched against.
Status check_device_option(const std::string& device);

// `tprop devices`: the Vulkan devices, one a line with its index. Returns the exit code.
int devices_command(const std::vector<std::string>& args);

}  // namespace tprop::cli
