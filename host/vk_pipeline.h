// Private to host/: the compute pipelines, built from the SPIR-V that shaders/CMakeLists.txt
// embeds, all on one pipeline layout (the ScenePush push constants plus one descriptor set of
// kBindingCount storage buffers and kTexelCount uniform texel buffers). Each pass comes in up to
// three addressings (buffer device addresses, the descriptor set, the set with texel reads) and, for the evaluate passes, in variants specialized by the features
// their entities need (shaders/pass_features.h): a pipeline is made the first time an update()
// asks for it, and kept.
#pragma once

#include "vk_context_state.h"

#include <vector>

#include "pass_features.h"
#include "scene_layout.h"

namespace tprop {

// DeviceAddress: every array through push-constant addresses. Descriptors: every array through
// one descriptor each (when each fits in one binding). Texels: Descriptors, with the evaluate
// passes reading what they never write through uniform texel buffers (scene_layout.h); the
// other passes run their Descriptors build then (storage_addressing()).
enum class Addressing : uint8_t { DeviceAddress, Descriptors, Texels };
inline constexpr int kAddressingCount = 3;
inline Addressing storage_addressing(Addressing a) {
  return a == Addressing::Texels ? Addressing::Descriptors : a;
}

// The passes (shaders/propagate.comp, scatter.comp, jump.comp, scan.comp). Pointer jumping and
// the scans exist by device address only.
enum class Pass : uint8_t {
  Wide,       // one invocation per entry of a level
  Narrow,     // a workgroup walks a run of narrow levels, a barrier between levels
  Serial,     // one invocation walks a run of narrow levels
  Chain,      // one subgroup walks a chain of one-entity levels, 8 at a time
  Bundle,     // one invocation per chain walks a bundle of parallel chains
  Scatter,    // a frame's other changed entities, and the order's changes, to their places
  JumpIndex,  // pointer jumping: index, init, one round, write
  JumpInit,
  JumpRound,
  JumpWrite,
  Fused,      // workgroups take chunks of consecutive levels in order (LevelPasses::Fused)
  ScanReduce, // the scan of aligned levels: each tile's product, the tiles' prefixes, the write
  ScanCarry,
  ScanWrite,
  ScatterValues,  // a frame's value changes to their slots (before Scatter)
};
inline constexpr int kPassCount = 15;

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

  // The bits of `features` that `pass` is specialized on (the others would make equal
  // pipelines): what prepare() and get() key on.
  static uint32_t relevant_features(Pass pass, uint32_t features);
  // Makes the variant unless it exists (errors: the driver's).
  Status prepare(Pass pass, Addressing a, uint32_t features);
  // A variant prepare() made; VK_NULL_HANDLE otherwise (a programming error).
  VkPipeline get(Pass pass, Addressing a, uint32_t features) const;
  size_t variant_count() const { return variants_.size(); }

  // Whether Pass::Chain can run here: its workgroup of kNarrowGroupSize invocations must be one
  // subgroup with basic, shuffle and relative shuffle operations in compute shaders.
  bool chain_supported() const { return chain_supported_; }

  void push(VkCommandBuffer cmd, const gpu::ScenePush& push) const;

 private:
  struct Variant {
    uint32_t key;
    VkPipeline pipeline;
  };
  static uint32_t key(Pass pass, Addressing a, uint32_t features);

  const ContextState* state_ = nullptr;
  VkDescriptorSetLayout set_layout_ = VK_NULL_HANDLE;
  VkPipelineLayout layout_ = VK_NULL_HANDLE;
  // By pass and addressing; VK_NULL_HANDLE where a pass has no such build.
  VkShaderModule modules_[kPassCount][kAddressingCount] = {};
  std::vector<Variant> variants_;
  bool chain_supported_ = false;
};

}  // namespace tprop
