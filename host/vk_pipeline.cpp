#include "vk_pipeline.h"

#include "vk_debug.h"

namespace tprop {

namespace {

// glslc -mfmt=c output: a braced list of SPIR-V words.
const uint32_t kPropagateWideSpirv[] =
#include "propagate_wide.spv.inc"
    ;
const uint32_t kPropagateNarrowSpirv[] =
#include "propagate_narrow.spv.inc"
    ;
const uint32_t kPropagateSerialSpirv[] =
#include "propagate_serial.spv.inc"
    ;
const uint32_t kPropagateSerialDescSpirv[] =
#include "propagate_serial_desc.spv.inc"
    ;
const uint32_t kJumpIndexSpirv[] =
#include "jump_index.spv.inc"
    ;
const uint32_t kJumpInitSpirv[] =
#include "jump_init.spv.inc"
    ;
const uint32_t kJumpRoundSpirv[] =
#include "jump_round.spv.inc"
    ;
const uint32_t kJumpWriteSpirv[] =
#include "jump_write.spv.inc"
    ;
const uint32_t kScatterSpirv[] =
#include "scatter.spv.inc"
    ;
const uint32_t kPropagateWideDescSpirv[] =
#include "propagate_wide_desc.spv.inc"
    ;
const uint32_t kPropagateNarrowDescSpirv[] =
#include "propagate_narrow_desc.spv.inc"
    ;
const uint32_t kScatterDescSpirv[] =
#include "scatter_desc.spv.inc"
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

constexpr int kPasses = 4;
struct PassSources {
  const uint32_t* code[kPasses];
  size_t bytes[kPasses];
  const char* name[kPasses];
};

Status make_passes(const ContextState& s, VkPipelineLayout layout, const PassSources& src,
                   PassPipelines& out) {
  VkPipeline* slots[kPasses] = {&out.propagate_wide, &out.propagate_narrow,
                                &out.propagate_serial, &out.scatter};
  for (int i = 0; i < kPasses; ++i) {
    auto p = make_pipeline(s, layout, src.code[i], src.bytes[i], src.name[i]);
    if (!p) return p.error();
    *slots[i] = *p;
  }
  return ok_status();
}

void destroy_passes(const ContextState& s, PassPipelines& p) {
  for (VkPipeline* x : {&p.propagate_wide, &p.propagate_narrow, &p.propagate_serial, &p.scatter}) {
    if (*x) s.vk.vkDestroyPipeline(s.device, *x, nullptr);
    *x = VK_NULL_HANDLE;
  }
}

}  // namespace

Result<ComputePipelines> ComputePipelines::create(const ContextState& s) {
  ComputePipelines out;
  out.state_ = &s;

  VkDescriptorSetLayoutBinding bindings[gpu::kBindingCount]{};
  for (uint32_t b = 0; b < gpu::kBindingCount; ++b) {
    bindings[b].binding = b;
    bindings[b].descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER;
    bindings[b].descriptorCount = 1;
    bindings[b].stageFlags = VK_SHADER_STAGE_COMPUTE_BIT;
  }
  VkDescriptorSetLayoutCreateInfo dslci{};
  dslci.sType = VK_STRUCTURE_TYPE_DESCRIPTOR_SET_LAYOUT_CREATE_INFO;
  dslci.bindingCount = gpu::kBindingCount;
  dslci.pBindings = bindings;
  VkResult r = s.vk.vkCreateDescriptorSetLayout(s.device, &dslci, nullptr, &out.set_layout_);
  if (r != VK_SUCCESS) return Error{"creating the descriptor set layout failed: " + describe(r)};
  set_debug_name(s, VK_OBJECT_TYPE_DESCRIPTOR_SET_LAYOUT, out.set_layout_, "tprop.scene_layout");

  VkPushConstantRange range{};
  range.stageFlags = VK_SHADER_STAGE_COMPUTE_BIT;
  range.offset = 0;
  range.size = sizeof(gpu::ScenePush);
  VkPipelineLayoutCreateInfo plci{};
  plci.sType = VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO;
  plci.setLayoutCount = 1;
  plci.pSetLayouts = &out.set_layout_;
  plci.pushConstantRangeCount = 1;
  plci.pPushConstantRanges = &range;
  r = s.vk.vkCreatePipelineLayout(s.device, &plci, nullptr, &out.layout_);
  if (r != VK_SUCCESS) return Error{"creating the pipeline layout failed: " + describe(r)};
  set_debug_name(s, VK_OBJECT_TYPE_PIPELINE_LAYOUT, out.layout_, "tprop.layout");

  const PassSources addresses{
      {kPropagateWideSpirv, kPropagateNarrowSpirv, kPropagateSerialSpirv, kScatterSpirv},
      {sizeof(kPropagateWideSpirv), sizeof(kPropagateNarrowSpirv), sizeof(kPropagateSerialSpirv),
       sizeof(kScatterSpirv)},
      {"tprop.propagate_wide", "tprop.propagate_narrow", "tprop.propagate_serial",
       "tprop.scatter"}};
  const PassSources descriptors{
      {kPropagateWideDescSpirv, kPropagateNarrowDescSpirv, kPropagateSerialDescSpirv,
       kScatterDescSpirv},
      {sizeof(kPropagateWideDescSpirv), sizeof(kPropagateNarrowDescSpirv),
       sizeof(kPropagateSerialDescSpirv), sizeof(kScatterDescSpirv)},
      {"tprop.propagate_wide_desc", "tprop.propagate_narrow_desc", "tprop.propagate_serial_desc",
       "tprop.scatter_desc"}};
  if (Status st = make_passes(s, out.layout_, addresses, out.addresses_); !st) return st.error();
  if (Status st = make_passes(s, out.layout_, descriptors, out.descriptors_); !st)
    return st.error();
  const struct {
    VkPipeline* out;
    const uint32_t* code;
    size_t bytes;
    const char* name;
  } jumps[] = {{&out.jump_.index, kJumpIndexSpirv, sizeof(kJumpIndexSpirv), "tprop.jump_index"},
               {&out.jump_.init, kJumpInitSpirv, sizeof(kJumpInitSpirv), "tprop.jump_init"},
               {&out.jump_.round, kJumpRoundSpirv, sizeof(kJumpRoundSpirv), "tprop.jump_round"},
               {&out.jump_.write, kJumpWriteSpirv, sizeof(kJumpWriteSpirv), "tprop.jump_write"}};
  for (const auto& j : jumps) {
    auto p = make_pipeline(s, out.layout_, j.code, j.bytes, j.name);
    if (!p) return p.error();
    *j.out = *p;
  }
  return out;
}

ComputePipelines& ComputePipelines::operator=(ComputePipelines&& other) noexcept {
  if (this == &other) return *this;
  reset();
  state_ = other.state_;
  set_layout_ = other.set_layout_;
  layout_ = other.layout_;
  addresses_ = other.addresses_;
  descriptors_ = other.descriptors_;
  jump_ = other.jump_;
  other.set_layout_ = VK_NULL_HANDLE;
  other.layout_ = VK_NULL_HANDLE;
  other.addresses_ = PassPipelines{};
  other.descriptors_ = PassPipelines{};
  other.jump_ = JumpPipelines{};
  return *this;
}

void ComputePipelines::reset() {
  if (!state_) return;
  destroy_passes(*state_, addresses_);
  destroy_passes(*state_, descriptors_);
  for (VkPipeline* x : {&jump_.index, &jump_.init, &jump_.round, &jump_.write}) {
    if (*x) state_->vk.vkDestroyPipeline(state_->device, *x, nullptr);
    *x = VK_NULL_HANDLE;
  }
  if (layout_) state_->vk.vkDestroyPipelineLayout(state_->device, layout_, nullptr);
  if (set_layout_) state_->vk.vkDestroyDescriptorSetLayout(state_->device, set_layout_, nullptr);
  layout_ = VK_NULL_HANDLE;
  set_layout_ = VK_NULL_HANDLE;
}

void ComputePipelines::push(VkCommandBuffer cmd, const gpu::ScenePush& push) const {
  state_->vk.vkCmdPushConstants(cmd, layout_, VK_SHADER_STAGE_COMPUTE_BIT, 0, sizeof(push), &push);
}

}  // namespace tprop
