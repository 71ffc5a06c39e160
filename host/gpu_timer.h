// Per-stage GPU times from timestamp queries: upload (the staging copies and the scatter pass
// of the changed entities) and evaluate (composing and propagating every LocalToWorld the frame
// recomputes, one fused pass per level). Written into the recorded command
// buffer; read once the GPU has run it. lavapipe's timestamps (64 valid bits, 1 ns) agree with
// the wall-clock time around submit and wait.
#pragma once

#include <cstdint>

#include <vulkan/vulkan.h>

#include "result.h"

namespace tprop {

struct ContextState;

struct StageTimes {
  double upload_ms = 0;
  double evaluate_ms = 0;
  double total_ms() const { return upload_ms + evaluate_ms; }
};

class GpuTimer {
 public:
  static constexpr uint32_t kStamps = 3;  // start, after upload, after evaluation

  GpuTimer() = default;
  // available() is false when the queue family has no timestamps; then everything is a no-op.
  static Result<GpuTimer> create(const ContextState& state);
  GpuTimer(GpuTimer&& other) noexcept { *this = std::move(other); }
  GpuTimer& operator=(GpuTimer&& other) noexcept;
  GpuTimer(const GpuTimer&) = delete;
  GpuTimer& operator=(const GpuTimer&) = delete;
  ~GpuTimer() { reset(); }
  void reset();

  bool available() const { return pool_ != VK_NULL_HANDLE; }
  void record_reset(VkCommandBuffer cmd) const;
  // Stamp i (0..2) after all earlier commands complete.
  void stamp(VkCommandBuffer cmd, uint32_t i) const;
  // The times of the last recorded frame, once it has completed; an error if it has not run yet
  // or timestamps are unavailable.
  Result<StageTimes> read() const;

 private:
  const ContextState* state_ = nullptr;
  VkQueryPool pool_ = VK_NULL_HANDLE;
  double ns_per_tick_ = 1.0;
  uint64_t mask_ = ~uint64_t(0);
  bool recorded_ = false;
  friend class Propagator;
};

}  // namespace tprop
