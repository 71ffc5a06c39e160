// Private to host/: the compute pipelines, built from the SPIR-V that shaders/CMakeLists.txt
// embeds, in two variants that share one pipeline layout (the ScenePush push constants plus one
// descriptor set of kBindingCount storage buffers): the passes reaching the arrays by buffer
// device address, and the same passes reaching them through the descriptor set.
#pragma once

#include "vk_context_state.h"

#include "scene_layout.h"

namespace tprop {

// DeviceAddress: every array through push-constant addresses. Descriptors: every array through
// one descriptor each (when each fits in one binding).
enum class Addressing : uint8_t { DeviceAddress, Descriptors };

struct PassPipelines {
  VkPipeline propagate_wide = VK_NULL_HANDLE;
  VkPipeline propagate_narrow = VK_NULL_HANDLE;
  VkPipeline propagate_serial = VK_NULL_HANDLE;
  VkPipeline scatter = VK_NULL_HANDLE;
};

// Pointer jumping over a deep run of narrow levels (shaders/jump.comp), by device address only.
struct JumpPipelines {
  VkPipeline index = VK_NULL_HANDLE;
  VkPipeline init = VK_NULL_HANDLE;
  VkPipeline round = VK_NULL_HANDLE;
  VkPipeline write = VK_NULL_HANDLE;
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
    return a == Addressing::Descriptors ? descriptors_ : addresses_;
  }

  const JumpPipelines& jump() const { return jump_; }

  void push(VkCommandBuffer cmd, const gpu::ScenePush& push) const;

 private:
  const ContextState* state_ = nullptr;
  VkDescriptorSetLayout set_layout_ = VK_NULL_HANDLE;
  VkPipelineLayout layout_ = VK_NULL_HANDLE;
  PassPipelines addresses_;
  PassPipelines descriptors_;
  JumpPipelines jump_;
};

}  // namespace tprop
