#include "vk_pipeline.h"

#include "vk_debug.h"

namespace tprop {

namespace {

// glslc -mfmt=c output: a braced list of SPIR-V words.
const uint32_t kComposeSpirv[] =
#include "compose.spv.inc"
    ;
const uint32_t kPropagateWideSpirv[] =
#include "propagate_wide.spv.inc"
    ;
const uint32_t kPropagateNarrowSpirv[] =
#include "propagate_narrow.spv.inc"
    ;
const uint32_t kScatterSpirv[] =
#include "scatter.spv.inc"
    ;

Result<VkPipeline> make_pipeline(const ContextState& s, VkPipelineLayout layout,
                                 const uint32_t* code, size_t bytes, const char* name) {
  VkShaderModuleCreateInfo smci{};
  smci.sType = VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO;
  smci.codeSize = bytes;
  smci.pCode = code;
  VkShaderModule module = VK_NULL_HANDLE;
  VkResult r = s.vk.vkCreateShaderModule(s.device, &smci, nullptr, &module);
  if (r != VK_SUCCESS) return Error{std::string("creating shader module ") + name + " failed: " + describe(r)};

  VkComputePipelineCreateInfo cpci{};
  cpci.sType = VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO;
  cpci.stage.sType = VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO;
  cpci.stage.stage = VK_SHADER_STAGE_COMPUTE_BIT;
  cpci.stage.module = module;
  cpci.stage.pName = "main";
  cpci.layout = layout;
  VkPipeline pipeline = VK_NULL_HANDLE;
  r = s.vk.vkCreateComputePipelines(s.device, VK_NULL_HANDLE, 1, &cpci, nullptr, &pipeline);
  s.vk.vkDestroyShaderModule(s.device, module, nullptr);
  if (r != VK_SUCCESS) return Error{std::string("creating pipeline ") + name + " failed: " + describe(r)};
  set_debug_name(s, VK_OBJECT_TYPE_PIPELINE, pipeline, name);
  return pipeline;
}

}  // namespace

Result<ComputePipelines> ComputePipelines::create(const ContextState& s) {
  ComputePipelines out;
  out.state_ = &s;
  VkPushConstantRange range{};
  range.stageFlags = VK_SHADER_STAGE_COMPUTE_BIT;
  range.offset = 0;
  range.size = sizeof(gpu::ScenePush);
  VkPipelineLayoutCreateInfo plci{};
  plci.sType = VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO;
  plci.pushConstantRangeCount = 1;
  plci.pPushConstantRanges = &range;
  VkResult r = s.vk.vkCreatePipelineLayout(s.device, &plci, nullptr, &out.layout_);
  if (r != VK_SUCCESS) return Error{"creating the pipeline layout failed: " + describe(r)};
  set_debug_name(s, VK_OBJECT_TYPE_PIPELINE_LAYOUT, out.layout_, "tprop.layout");

  auto compose = make_pipeline(s, out.layout_, kComposeSpirv, sizeof(kComposeSpirv), "tprop.compose");
  if (!compose) return compose.error();
  out.compose_ = *compose;
  auto wide = make_pipeline(s, out.layout_, kPropagateWideSpirv, sizeof(kPropagateWideSpirv),
                            "tprop.propagate_wide");
  if (!wide) return wide.error();
  out.wide_ = *wide;
  auto narrow = make_pipeline(s, out.layout_, kPropagateNarrowSpirv, sizeof(kPropagateNarrowSpirv),
                              "tprop.propagate_narrow");
  if (!narrow) return narrow.error();
  out.narrow_ = *narrow;
  auto scatter = make_pipeline(s, out.layout_, kScatterSpirv, sizeof(kScatterSpirv), "tprop.scatter");
  if (!scatter) return scatter.error();
  out.scatter_ = *scatter;
  return out;
}

ComputePipelines& ComputePipelines::operator=(ComputePipelines&& other) noexcept {
  if (this == &other) return *this;
  reset();
  state_ = other.state_;
  layout_ = other.layout_;
  compose_ = other.compose_;
  wide_ = other.wide_;
  narrow_ = other.narrow_;
  scatter_ = other.scatter_;
  other.layout_ = VK_NULL_HANDLE;
  other.compose_ = other.wide_ = other.narrow_ = other.scatter_ = VK_NULL_HANDLE;
  return *this;
}

void ComputePipelines::reset() {
  if (!state_) return;
  for (VkPipeline p : {compose_, wide_, narrow_, scatter_})
    if (p) state_->vk.vkDestroyPipeline(state_->device, p, nullptr);
  if (layout_) state_->vk.vkDestroyPipelineLayout(state_->device, layout_, nullptr);
  compose_ = wide_ = narrow_ = scatter_ = VK_NULL_HANDLE;
  layout_ = VK_NULL_HANDLE;
}

void ComputePipelines::push(VkCommandBuffer cmd, const gpu::ScenePush& push) const {
  state_->vk.vkCmdPushConstants(cmd, layout_, VK_SHADER_STAGE_COMPUTE_BIT, 0, sizeof(push), &push);
}

}  // namespace tprop
