#include "vk_pipeline.h"

#include "vk_debug.h"

#include <cassert>
#include <cstdio>
#include <mutex>
#include <string>

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
const uint32_t kScanReduceSpirv[] =
#include "scan_reduce.spv.inc"
    ;
const uint32_t kScanCarrySpirv[] =
#include "scan_carry.spv.inc"
    ;
const uint32_t kScanWriteSpirv[] =
#include "scan_write.spv.inc"
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
const uint32_t kScatterValuesSpirv[] =
#include "scatter_values.spv.inc"
    ;
const uint32_t kScatterValuesDescSpirv[] =
#include "scatter_values_desc.spv.inc"
    ;
const uint32_t kPropagateChainSpirv[] =
#include "propagate_chain.spv.inc"
    ;
const uint32_t kPropagateChainDescSpirv[] =
#include "propagate_chain_desc.spv.inc"
    ;
const uint32_t kPropagateBundleSpirv[] =
#include "propagate_bundle.spv.inc"
    ;
const uint32_t kPropagateBundleDescSpirv[] =
#include "propagate_bundle_desc.spv.inc"
    ;
const uint32_t kPropagateWideTexelSpirv[] =
#include "propagate_wide_texel.spv.inc"
    ;
const uint32_t kPropagateNarrowTexelSpirv[] =
#include "propagate_narrow_texel.spv.inc"
    ;
const uint32_t kPropagateSerialTexelSpirv[] =
#include "propagate_serial_texel.spv.inc"
    ;
const uint32_t kPropagateChainTexelSpirv[] =
#include "propagate_chain_texel.spv.inc"
    ;
const uint32_t kPropagateBundleTexelSpirv[] =
#include "propagate_bundle_texel.spv.inc"
    ;
const uint32_t kPropagateFusedSpirv[] =
#include "propagate_fused.spv.inc"
    ;
const uint32_t kPropagateFusedDescSpirv[] =
#include "propagate_fused_desc.spv.inc"
    ;
const uint32_t kPropagateFusedTexelSpirv[] =
#include "propagate_fused_texel.spv.inc"
    ;
const uint32_t kPropagateWideAddrTexelSpirv[] =
#include "propagate_wide_addr_texel.spv.inc"
    ;
const uint32_t kPropagateNarrowAddrTexelSpirv[] =
#include "propagate_narrow_addr_texel.spv.inc"
    ;
const uint32_t kPropagateSerialAddrTexelSpirv[] =
#include "propagate_serial_addr_texel.spv.inc"
    ;
const uint32_t kPropagateChainAddrTexelSpirv[] =
#include "propagate_chain_addr_texel.spv.inc"
    ;
const uint32_t kPropagateBundleAddrTexelSpirv[] =
#include "propagate_bundle_addr_texel.spv.inc"
    ;
const uint32_t kPropagateFusedAddrTexelSpirv[] =
#include "propagate_fused_addr_texel.spv.inc"
    ;
const uint32_t kPropagateClimbSpirv[] =
#include "propagate_climb.spv.inc"
    ;
const uint32_t kPropagateClimbDescSpirv[] =
#include "propagate_climb_desc.spv.inc"
    ;
const uint32_t kPropagateClimbTexelSpirv[] =
#include "propagate_climb_texel.spv.inc"
    ;
const uint32_t kPropagateClimbAddrTexelSpirv[] =
#include "propagate_climb_addr_texel.spv.inc"
    ;

struct PassSource {
  const uint32_t* code;
  size_t bytes;
  const char* name;
};
#define TPROP_SPIRV(array, name) PassSource{array, sizeof(array), name}
constexpr PassSource kNone{nullptr, 0, nullptr};

// By Pass, then Addressing (DeviceAddress, Descriptors, Texels, AddressTexels).
const PassSource kSources[kPassCount][kAddressingCount] = {
    {TPROP_SPIRV(kPropagateWideSpirv, "tprop.propagate_wide"),
     TPROP_SPIRV(kPropagateWideDescSpirv, "tprop.propagate_wide_desc"),
     TPROP_SPIRV(kPropagateWideTexelSpirv, "tprop.propagate_wide_texel"),
     TPROP_SPIRV(kPropagateWideAddrTexelSpirv, "tprop.propagate_wide_addr_texel")},
    {TPROP_SPIRV(kPropagateNarrowSpirv, "tprop.propagate_narrow"),
     TPROP_SPIRV(kPropagateNarrowDescSpirv, "tprop.propagate_narrow_desc"),
     TPROP_SPIRV(kPropagateNarrowTexelSpirv, "tprop.propagate_narrow_texel"),
     TPROP_SPIRV(kPropagateNarrowAddrTexelSpirv, "tprop.propagate_narrow_addr_texel")},
    {TPROP_SPIRV(kPropagateSerialSpirv, "tprop.propagate_serial"),
     TPROP_SPIRV(kPropagateSerialDescSpirv, "tprop.propagate_serial_desc"),
     TPROP_SPIRV(kPropagateSerialTexelSpirv, "tprop.propagate_serial_texel"),
     TPROP_SPIRV(kPropagateSerialAddrTexelSpirv, "tprop.propagate_serial_addr_texel")},
    {TPROP_SPIRV(kPropagateChainSpirv, "tprop.propagate_chain"),
     TPROP_SPIRV(kPropagateChainDescSpirv, "tprop.propagate_chain_desc"),
     TPROP_SPIRV(kPropagateChainTexelSpirv, "tprop.propagate_chain_texel"),
     TPROP_SPIRV(kPropagateChainAddrTexelSpirv, "tprop.propagate_chain_addr_texel")},
    {TPROP_SPIRV(kPropagateBundleSpirv, "tprop.propagate_bundle"),
     TPROP_SPIRV(kPropagateBundleDescSpirv, "tprop.propagate_bundle_desc"),
     TPROP_SPIRV(kPropagateBundleTexelSpirv, "tprop.propagate_bundle_texel"),
     TPROP_SPIRV(kPropagateBundleAddrTexelSpirv, "tprop.propagate_bundle_addr_texel")},
    {TPROP_SPIRV(kScatterSpirv, "tprop.scatter"), TPROP_SPIRV(kScatterDescSpirv, "tprop.scatter_desc"),
     kNone, kNone},
    {TPROP_SPIRV(kJumpIndexSpirv, "tprop.jump_index"), kNone, kNone, kNone},
    {TPROP_SPIRV(kJumpInitSpirv, "tprop.jump_init"), kNone, kNone, kNone},
    {TPROP_SPIRV(kJumpRoundSpirv, "tprop.jump_round"), kNone, kNone, kNone},
    {TPROP_SPIRV(kJumpWriteSpirv, "tprop.jump_write"), kNone, kNone, kNone},
    {TPROP_SPIRV(kPropagateFusedSpirv, "tprop.propagate_fused"),
     TPROP_SPIRV(kPropagateFusedDescSpirv, "tprop.propagate_fused_desc"),
     TPROP_SPIRV(kPropagateFusedTexelSpirv, "tprop.propagate_fused_texel"),
     TPROP_SPIRV(kPropagateFusedAddrTexelSpirv, "tprop.propagate_fused_addr_texel")},
    {TPROP_SPIRV(kScanReduceSpirv, "tprop.scan_reduce"), kNone, kNone, kNone},
    {TPROP_SPIRV(kScanCarrySpirv, "tprop.scan_carry"), kNone, kNone, kNone},
    {TPROP_SPIRV(kScanWriteSpirv, "tprop.scan_write"), kNone, kNone, kNone},
    {TPROP_SPIRV(kScatterValuesSpirv, "tprop.scatter_values"),
     TPROP_SPIRV(kScatterValuesDescSpirv, "tprop.scatter_values_desc"), kNone, kNone},
    {TPROP_SPIRV(kPropagateClimbSpirv, "tprop.propagate_climb"),
     TPROP_SPIRV(kPropagateClimbDescSpirv, "tprop.propagate_climb_desc"),
     TPROP_SPIRV(kPropagateClimbTexelSpirv, "tprop.propagate_climb_texel"),
     TPROP_SPIRV(kPropagateClimbAddrTexelSpirv, "tprop.propagate_climb_addr_texel")},
};
#undef TPROP_SPIRV

// The chain pass's workgroup must be one subgroup that can shuffle. A workgroup no larger than
// the subgroup size is one subgroup on every implementation we know of; Vulkan leaves the
// partition to the implementation.
bool query_chain_support(const ContextState& s) {
  if (!s.in.vkGetPhysicalDeviceProperties2) return false;
  VkPhysicalDeviceSubgroupProperties sg{};
  sg.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SUBGROUP_PROPERTIES;
  VkPhysicalDeviceProperties2 p{};
  p.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2;
  p.pNext = &sg;
  s.in.vkGetPhysicalDeviceProperties2(s.physical_device, &p);
  const VkSubgroupFeatureFlags needed = VK_SUBGROUP_FEATURE_BASIC_BIT |
                                        VK_SUBGROUP_FEATURE_SHUFFLE_BIT |
                                        VK_SUBGROUP_FEATURE_SHUFFLE_RELATIVE_BIT;
  return sg.subgroupSize >= gpu::kNarrowGroupSize &&
         (sg.supportedStages & VK_SHADER_STAGE_COMPUTE_BIT) != 0 &&
         (sg.supportedOperations & needed) == needed;
}

std::string variant_name(const char* base, uint32_t features) {
  char suffix[16];
  std::snprintf(suffix, sizeof(suffix), ".f%02x", features);
  return std::string(base) + suffix;
}

}  // namespace

uint32_t ComputePipelines::relevant_features(Pass pass, uint32_t features) {
  using namespace gpu;
  switch (pass) {
    case Pass::Wide:
      return features & (kFeatureAll | kFeatureOutput | kFeatureSharedStores);
    case Pass::Narrow:
    case Pass::Serial:
    case Pass::Chain:
    case Pass::Bundle:
    case Pass::Climb:
      return features & (kFeatureAll | kFeatureOutput);
    case Pass::Fused:
      return features & (kFeatureAll | kFeatureOutput | kFeaturePollEach);
    // Each entity's own matrix and, at the run's top, its parent's LocalToWorld (the output's
    // layout); skipping comes from the frame number's top bit, not kFeatureSkip.
    case Pass::JumpInit:
    case Pass::ScanReduce:
    case Pass::ScanWrite:
      return features & (kFeatureComposite | kFeatureUser | kFeatureStatic | kFeatureFinalTest |
                         kFeatureProjective | kFeatureOutput);
    case Pass::JumpRound:
    case Pass::ScanCarry:
      return features & kFeatureProjective;
    case Pass::JumpWrite:
      return features & (kFeatureStatic | kFeatureProjective | kFeatureOutput);
    case Pass::Scatter:
      return features & kFeatureOutput;  // its dead-slot clear
    case Pass::JumpIndex:
    case Pass::ScatterValues:
      return 0;
  }
  return features;
}

static_assert(kPassCount <= 16, "a pass fits the key's low 4 bits");
uint32_t ComputePipelines::key(Pass pass, Addressing a, uint32_t features) {
  return uint32_t(pass) | uint32_t(a) << 4 | relevant_features(pass, features) << 8;
}

Result<VkPipeline> PipelineLibrary::variant(uint32_t k, Pass pass, Addressing a,
                                            uint32_t features, bool& compiled) {
  compiled = false;
  if (const auto it = variants_.find(k); it != variants_.end()) return it->second;
  const ContextState& s = state_;
  const VkShaderModule module = modules_[int(pass)][int(a)];
  assert(module && "no such build of this pass");
  if (!module) return Error{"internal: a pass without that addressing was asked for"};
  const VkSpecializationMapEntry entry{gpu::kSpecPassFeatures, 0, sizeof(uint32_t)};
  VkSpecializationInfo spec{};
  spec.mapEntryCount = 1;
  spec.pMapEntries = &entry;
  spec.dataSize = sizeof(uint32_t);
  spec.pData = &features;
  VkComputePipelineCreateInfo cpci{};
  cpci.sType = VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO;
  cpci.stage.sType = VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO;
  cpci.stage.stage = VK_SHADER_STAGE_COMPUTE_BIT;
  cpci.stage.module = module;
  cpci.stage.pName = "main";
  cpci.stage.pSpecializationInfo = &spec;
  cpci.layout = layout_;
  VkPipeline pipeline = VK_NULL_HANDLE;
  const std::string name = variant_name(kSources[int(pass)][int(a)].name, features);
  VkResult r = s.vk.vkCreateComputePipelines(s.device, VK_NULL_HANDLE, 1, &cpci, nullptr, &pipeline);
  if (r != VK_SUCCESS) return Error{"creating pipeline " + name + " failed: " + describe(r)};
  set_debug_name(s, VK_OBJECT_TYPE_PIPELINE, pipeline, name.c_str());
  variants_.emplace(k, pipeline);
  compiled = true;
  return pipeline;
}

Result<std::unique_ptr<PipelineLibrary>> PipelineLibrary::create(const ContextState& s) {
  std::unique_ptr<PipelineLibrary> out(new PipelineLibrary(s));

  // The storage buffers, then the texel views of the texel variant (scene_layout.h).
  constexpr uint32_t kAllBindings = gpu::kBindingCount + gpu::kTexelCount;
  VkDescriptorSetLayoutBinding bindings[kAllBindings]{};
  for (uint32_t b = 0; b < kAllBindings; ++b) {
    bindings[b].binding = b;
    bindings[b].descriptorType = b < gpu::kBindingCount ? VK_DESCRIPTOR_TYPE_STORAGE_BUFFER
                                                        : VK_DESCRIPTOR_TYPE_UNIFORM_TEXEL_BUFFER;
    bindings[b].descriptorCount = 1;
    bindings[b].stageFlags = VK_SHADER_STAGE_COMPUTE_BIT;
  }
  VkDescriptorSetLayoutCreateInfo dslci{};
  dslci.sType = VK_STRUCTURE_TYPE_DESCRIPTOR_SET_LAYOUT_CREATE_INFO;
  dslci.bindingCount = kAllBindings;
  dslci.pBindings = bindings;
  VkResult r = s.vk.vkCreateDescriptorSetLayout(s.device, &dslci, nullptr, &out->set_layout_);
  if (r != VK_SUCCESS) return Error{"creating the descriptor set layout failed: " + describe(r)};
  set_debug_name(s, VK_OBJECT_TYPE_DESCRIPTOR_SET_LAYOUT, out->set_layout_, "tprop.scene_layout");

  VkPushConstantRange range{};
  range.stageFlags = VK_SHADER_STAGE_COMPUTE_BIT;
  range.offset = 0;
  range.size = sizeof(gpu::ScenePush);
  VkPipelineLayoutCreateInfo plci{};
  plci.sType = VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO;
  plci.setLayoutCount = 1;
  plci.pSetLayouts = &out->set_layout_;
  plci.pushConstantRangeCount = 1;
  plci.pPushConstantRanges = &range;
  r = s.vk.vkCreatePipelineLayout(s.device, &plci, nullptr, &out->layout_);
  if (r != VK_SUCCESS) return Error{"creating the pipeline layout failed: " + describe(r)};
  set_debug_name(s, VK_OBJECT_TYPE_PIPELINE_LAYOUT, out->layout_, "tprop.layout");

  // Every module now; pipelines as frames need them.
  for (int p = 0; p < kPassCount; ++p)
    for (int a = 0; a < kAddressingCount; ++a) {
      const PassSource& src = kSources[p][a];
      if (!src.code) continue;
      VkShaderModuleCreateInfo smci{};
      smci.sType = VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO;
      smci.codeSize = src.bytes;
      smci.pCode = src.code;
      r = s.vk.vkCreateShaderModule(s.device, &smci, nullptr, &out->modules_[p][a]);
      if (r != VK_SUCCESS)
        return Error{std::string("creating shader module ") + src.name + " failed: " + describe(r)};
      set_debug_name(s, VK_OBJECT_TYPE_SHADER_MODULE, out->modules_[p][a], src.name);
    }
  out->chain_supported_ = query_chain_support(s);
  return out;
}

PipelineLibrary::~PipelineLibrary() {
  const ContextState& s = state_;
  for (const auto& [k, pipeline] : variants_) s.vk.vkDestroyPipeline(s.device, pipeline, nullptr);
  for (auto& m : modules_)
    for (VkShaderModule x : m)
      if (x) s.vk.vkDestroyShaderModule(s.device, x, nullptr);
  if (layout_) s.vk.vkDestroyPipelineLayout(s.device, layout_, nullptr);
  if (set_layout_) s.vk.vkDestroyDescriptorSetLayout(s.device, set_layout_, nullptr);
}

Status ComputePipelines::prepare(Pass pass, Addressing a, uint32_t features) {
  features = relevant_features(pass, features);
  const uint32_t k = key(pass, a, features);
  for (const Variant& v : variants_)
    if (v.key == k) return ok_status();
  bool compiled = false;
  Result<VkPipeline> pipeline = [&] {
    const std::lock_guard<std::mutex> lock(state_->pipelines_mutex);
    return library_->variant(k, pass, a, features, compiled);
  }();
  if (!pipeline) return pipeline.error();
  variants_.push_back({k, *pipeline});
  compiled_ += compiled;
  return ok_status();
}

VkPipeline ComputePipelines::get(Pass pass, Addressing a, uint32_t features) const {
  const uint32_t k = key(pass, a, features);
  for (const Variant& v : variants_)
    if (v.key == k) return v.pipeline;
  assert(false && "a pipeline variant was not prepared");
  return VK_NULL_HANDLE;
}

Result<ComputePipelines> ComputePipelines::create(const ContextState& s) {
  ComputePipelines out;
  out.state_ = &s;
  {
    const std::lock_guard<std::mutex> lock(s.pipelines_mutex);
    if (!s.pipelines) {
      auto library = PipelineLibrary::create(s);
      if (!library) return library.error();
      s.pipelines = std::move(*library);
    }
    out.library_ = s.pipelines.get();
  }
  for (Addressing a : {Addressing::DeviceAddress, Addressing::Descriptors})
    for (Pass p : {Pass::Scatter, Pass::ScatterValues})
      if (Status st = out.prepare(p, a, 0); !st) return st.error();
  return out;
}

void ComputePipelines::push(VkCommandBuffer cmd, const gpu::ScenePush& push) const {
  state_->vk.vkCmdPushConstants(cmd, layout(), VK_SHADER_STAGE_COMPUTE_BIT, 0, sizeof(push),
                                &push);
}

}  // namespace tprop
