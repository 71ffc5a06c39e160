// Private to host/: the compute pipelines, built from the SPIR-V that shaders/CMakeLists.txt
// embeds, with one pipeline layout: no descriptor sets, only the ScenePush push constants
// (every array is reached by buffer device address).
#pragma once

#include "vk_context_state.h"

#include "scene_layout.h"

namespace tprop {

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
  VkPipeline compose() const { return compose_; }
  VkPipeline propagate_wide() const { return wide_; }
  VkPipeline propagate_narrow() const { return narrow_; }
  VkPipeline scatter() const { return scatter_; }

  void push(VkCommandBuffer cmd, const gpu::ScenePush& push) const;

 private:
  const ContextState* state_ = nullptr;
  VkPipelineLayout layout_ = VK_NULL_HANDLE;
  VkPipeline compose_ = VK_NULL_HANDLE;
  VkPipeline wide_ = VK_NULL_HANDLE;
  VkPipeline narrow_ = VK_NULL_HANDLE;
  VkPipeline scatter_ = VK_NULL_HANDLE;
};

}  // namespace tprop
