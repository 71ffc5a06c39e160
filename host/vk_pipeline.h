// Private to host/: the compute pipelines, built from the SPIR-V that shaders/CMakeLists.txt
// embeds, all on one pipeline layout (the ScenePush push constants plus one descriptor set of
// kBindingCount storage buffers and kTexelCount uniform texel buffers). Each pass comes in up to
// four addressings (buffer device addresses, the descriptor set, either with texel reads) and,
// for the evaluate passes, in variants specialized by the features their entities need
// (shaders/pass_features.h). A variant is compiled the first time any Propagator of a context
// asks for it and kept by the context (PipelineLibrary) until the context goes.
#pragma once

#include "vk_context_state.h"

#include <memory>
#include <unordered_map>
#include <vector>

#include "pass_features.h"
#include "scene_layout.h"

namespace tprop {

// DeviceAddress: every array through push-constant addresses. Descriptors: every array through
// one descriptor each (when each fits in one binding). Texels: Descriptors, with the evaluate
// passes reading what they never write through uniform texel buffers (scene_layout.h); the
// other passes run their Descriptors build then (storage_addressing()). AddressTexels:
// DeviceAddress, with the evaluate passes' texel reads (a scene past one storage binding whose
// arrays still fit texel views: lavapipe's 128 MiB binding against its 2 GiB views).
enum class Addressing : uint8_t { DeviceAddress, Descriptors, Texels, AddressTexels };
inline constexpr int kAddressingCount = 4;
inline Addressing storage_addressing(Addressing a) {
  if (a == Addressing::Texels) return Addressing::Descriptors;
  if (a == Addressing::AddressTexels) return Addressing::DeviceAddress;
  return a;
}
// Whether the evaluate passes read through set 0's texel views.
inline bool reads_texels(Addressing a) {
  return a == Addressing::Texels || a == Addressing::AddressTexels;
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
  Climb,      // the top levels in one dispatch, each entity composing its ancestors (ClimbTop)
};
inline constexpr int kPassCount = 16;

// Everything compiled for the passes, one per VulkanContext (ContextState::pipelines), made by
// its first Propagator: the layouts, the shader modules and every variant any Propagator of the
// context asked for. A later Propagator (a scene reloaded, a world rebuilt) compiles nothing an
// earlier one compiled: a variant costs 5 to 8 ms of LLVM on lavapipe. Used only under
// ContextState::pipelines_mutex (ComputePipelines takes it).
class PipelineLibrary {
 public:
  static Result<std::unique_ptr<PipelineLibrary>> create(const ContextState& state);
  PipelineLibrary(const PipelineLibrary&) = delete;
  PipelineLibrary& operator=(const PipelineLibrary&) = delete;
  ~PipelineLibrary();

  VkPipelineLayout layout() const { return layout_; }
  VkDescriptorSetLayout set_layout() const { return set_layout_; }
  bool chain_supported() const { return chain_supported_; }

  // The variant of `key` (ComputePipelines::key), compiled unless it exists; `compiled` tells
  // whether this call compiled it (errors: the driver's).
  Result<VkPipeline> variant(uint32_t key, Pass pass, Addressing a, uint32_t features,
                             bool& compiled);

 private:
  explicit PipelineLibrary(const ContextState& state) : state_(state) {}

  const ContextState& state_;
  VkDescriptorSetLayout set_layout_ = VK_NULL_HANDLE;
  VkPipelineLayout layout_ = VK_NULL_HANDLE;
  // By pass and addressing; VK_NULL_HANDLE where a pass has no such build.
  VkShaderModule modules_[kPassCount][kAddressingCount] = {};
  std::unordered_map<uint32_t, VkPipeline> variants_;
  bool chain_supported_ = false;
};

// One Propagator's view of its context's PipelineLibrary: the variants it prepared, looked up
// without the library's lock when record() binds them. The pipelines belong to the library.
class ComputePipelines {
 public:
  ComputePipelines() = default;
  // Makes the context's library unless it exists, and prepares the scatters (every frame with
  // changes runs them; they have no variants).
  static Result<ComputePipelines> create(const ContextState& state);

  VkPipelineLayout layout() const { return library_->layout(); }
  VkDescriptorSetLayout set_layout() const { return library_->set_layout(); }

  // The bits of `features` that `pass` is specialized on (the others would make equal
  // pipelines): what prepare() and get() key on.
  static uint32_t relevant_features(Pass pass, uint32_t features);
  // Makes the variant ready for get(), compiling it unless the context has it (errors: the
  // driver's).
  Status prepare(Pass pass, Addressing a, uint32_t features);
  // A variant prepare() made ready; VK_NULL_HANDLE otherwise (a programming error).
  VkPipeline get(Pass pass, Addressing a, uint32_t features) const;
  // Variants this Propagator's prepare() calls compiled (those the context lacked).
  uint32_t compiled() const { return compiled_; }

  // Whether Pass::Chain can run here: its workgroup of kNarrowGroupSize invocations must be one
  // subgroup with basic, shuffle and relative shuffle operations in compute shaders.
  bool chain_supported() const { return library_->chain_supported(); }

  void push(VkCommandBuffer cmd, const gpu::ScenePush& push) const;

 private:
  struct Variant {
    uint32_t key;
    VkPipeline pipeline;
  };
  static uint32_t key(Pass pass, Addressing a, uint32_t features);

  const ContextState* state_ = nullptr;
  PipelineLibrary* library_ = nullptr;  // the context's
  std::vector<Variant> variants_;
  uint32_t compiled_ = 0;
};

}  // namespace tprop
