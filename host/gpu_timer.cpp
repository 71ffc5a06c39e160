#include "vk_context_state.h"

#include "gpu_timer.h"
#include "vk_debug.h"

namespace tprop {

Result<GpuTimer> GpuTimer::create(const ContextState& s) {
  GpuTimer out;
  out.state_ = &s;
  if (s.timestamp_valid_bits == 0 || s.properties.limits.timestampPeriod <= 0) return out;
  VkQueryPoolCreateInfo qpci{};
  qpci.sType = VK_STRUCTURE_TYPE_QUERY_POOL_CREATE_INFO;
  qpci.queryType = VK_QUERY_TYPE_TIMESTAMP;
  qpci.queryCount = kStamps;
  VkResult r = s.vk.vkCreateQueryPool(s.device, &qpci, nullptr, &out.pool_);
  if (r != VK_SUCCESS) return Error{"creating the timestamp query pool failed: " + describe(r)};
  set_debug_name(s, VK_OBJECT_TYPE_QUERY_POOL, out.pool_, "tprop.timestamps");
  out.ns_per_tick_ = s.properties.limits.timestampPeriod;
  out.mask_ = s.timestamp_valid_bits >= 64 ? ~uint64_t(0) : ((uint64_t(1) << s.timestamp_valid_bits) - 1);
  return out;
}

GpuTimer& GpuTimer::operator=(GpuTimer&& other) noexcept {
  if (this == &other) return *this;
  reset();
  state_ = other.state_;
  pool_ = other.pool_;
  ns_per_tick_ = other.ns_per_tick_;
  mask_ = other.mask_;
  recorded_ = other.recorded_;
  other.pool_ = VK_NULL_HANDLE;
  return *this;
}

void GpuTimer::reset() {
  if (state_ && pool_) state_->vk.vkDestroyQueryPool(state_->device, pool_, nullptr);
  pool_ = VK_NULL_HANDLE;
}

void GpuTimer::record_reset(VkCommandBuffer cmd) const {
  if (pool_) state_->vk.vkCmdResetQueryPool(cmd, pool_, 0, kStamps);
}

void GpuTimer::stamp(VkCommandBuffer cmd, uint32_t i) const {
  if (pool_)
    state_->vk.vkCmdWriteTimestamp2(cmd, VK_PIPELINE_STAGE_2_ALL_COMMANDS_BIT, pool_, i);
}

Result<StageTimes> GpuTimer::read() const {
  if (!pool_) return Error{"this queue has no timestamps"};
  if (!recorded_) return Error{"no frame has been recorded yet"};
  uint64_t t[kStamps] = {};
  const VkResult r = state_->vk.vkGetQueryPoolResults(state_->device, pool_, 0, kStamps, sizeof(t), t,
                                                      sizeof(uint64_t), VK_QUERY_RESULT_64_BIT);
  if (r == VK_NOT_READY) return Error{"the last recorded frame has not completed on the GPU yet"};
  if (r != VK_SUCCESS) return Error{"reading timestamps failed: " + describe(r)};
  auto ms = [&](uint32_t a, uint32_t b) {
    return static_cast<double>((t[b] - t[a]) & mask_) * ns_per_tick_ * 1e-6;
  };
  StageTimes out;
  out.upload_ms = ms(0, 1);
  out.evaluate_ms = ms(1, 2);
  return out;
}

}  // namespace tprop
