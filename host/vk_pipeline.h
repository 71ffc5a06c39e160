// Private to host/: the compute pipelines, built from the SPIR-V that shaders/CMakeLists.txt
// embeds, in variants that share one pipeline layout (the ScenePush push constants plus one
// descriptor set of kBindingCount storage buffers): the passes reaching the arrays by buffer
// device address, the same passes reaching them through the descriptor set, and windowed compose
// and wide propagate (see Addressing).
#pragma once

#include "vk_context_state.h"

#include "scene_layout.h"

namespace tprop {

// DeviceAddress: every array through push-constant addresses. Descriptors: every array through
// one descriptor each (when each fits in one binding). Windowed: compose and wide propagate reach
// their own entities through descriptors over a window of positions and the rest by address;
// narrow propagate and scatter go by address.
enum class Addressing : uint8_t { DeviceAddress, Descriptors, Windowed };

struct PassPipelines {
  VkPipeline compose = VK_NULL_HANDLE;
  VkPipeline propagate_wide = VK_NULL_HANDLE;
  VkPipeline propagate_narrow = VK_NULL_HANDLE;
  VkPipeline scatter = VK_NULL_HANDLE;
};

class ComputePipelines {
 public:
  ComputePipelines() = default;
  static Result<ComputePipelines> create(const ContextState& state);

  ComputePipelines(ComputePipelines&& other) noexcept { *this = std::move(other); }
  ComputePipelines& operator=(ComputePipelines&& other) noexcept;
  ComputePipelines(const ComputePipelines&) = delete;
  ComputePipelines& operator=(const ComputePipelines&) = delete;
  ~ComputePipelines() { reset(); }
  void reset();

  VkPipelineLayout layout() const { return layout_; }
  VkDescriptorSetLayout set_layout() const { return set_layout_; }
  PassPipelines passes(Addressing a) const {
    if (a == Addressing::Descriptors) return descriptors_;
    PassPipelines p = addresses_;
    if (a == Addressing::Windowed) {
      p.compose = windowed_.compose;
      p.propagate_wide = windowed_.propagate_wide;
    }
    return p;
  }

  void push(VkCommandBuffer cmd, const gpu::ScenePush& push) const;

 private:
  const ContextState* state_ = nullptr;
  VkDescriptorSetLayout set_layout_ = VK_NULL_HANDLE;
  VkPipelineLayout layout_ = VK_NULL_HANDLE;
  PassPipelines addresses_;
  PassPipelines descriptors_;
  PassPipelines windowed_;  // compose and propagate_wide only
};

}  // namespace tprop
