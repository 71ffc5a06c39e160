// Private to host/: THE barrier helper (synchronization2) and THE dispatch helper. Every
// dependency tprop records goes through barrier(); every dispatch through dispatch_1d().
#pragma once

#include "vk_context_state.h"

#include "scene_layout.h"

namespace tprop {

struct Access {
  VkPipelineStageFlags2 stage;
  VkAccessFlags2 access;
};

inline constexpr Access kComputeWrite{VK_PIPELINE_STAGE_2_COMPUTE_SHADER_BIT,
                                      VK_ACCESS_2_SHADER_STORAGE_WRITE_BIT};
// Sampled reads too: the texel variant of the evaluate passes reads arrays through uniform
// texel buffers (scene_layout.h).
inline constexpr Access kComputeReadWrite{
    VK_PIPELINE_STAGE_2_COMPUTE_SHADER_BIT, VK_ACCESS_2_SHADER_STORAGE_READ_BIT |
                                                VK_ACCESS_2_SHADER_SAMPLED_READ_BIT |
                                                VK_ACCESS_2_SHADER_STORAGE_WRITE_BIT};
// Copies and fills (vkCmdFillBuffer is a clear command).
inline constexpr Access kTransferWrite{VK_PIPELINE_STAGE_2_COPY_BIT | VK_PIPELINE_STAGE_2_CLEAR_BIT,
                                       VK_ACCESS_2_TRANSFER_WRITE_BIT};
inline constexpr Access kTransferRead{VK_PIPELINE_STAGE_2_COPY_BIT, VK_ACCESS_2_TRANSFER_READ_BIT};
inline constexpr Access kHostRead{VK_PIPELINE_STAGE_2_HOST_BIT, VK_ACCESS_2_HOST_READ_BIT};
inline constexpr Access kHostWrite{VK_PIPELINE_STAGE_2_HOST_BIT, VK_ACCESS_2_HOST_WRITE_BIT};

// A memory dependency from `src` to `dst`. The shaders reach every array through device
// addresses, which buffer-range barriers cannot name precisely, so tprop uses global memory
// barriers: they cover every buffer, and on every driver cost the same as a buffer barrier.
inline void barrier(const ContextState& s, VkCommandBuffer cmd, Access src, Access dst) {
  VkMemoryBarrier2 mb{};
  mb.sType = VK_STRUCTURE_TYPE_MEMORY_BARRIER_2;
  mb.srcStageMask = src.stage;
  mb.srcAccessMask = src.access;
  mb.dstStageMask = dst.stage;
  mb.dstAccessMask = dst.access;
  VkDependencyInfo dep{};
  dep.sType = VK_STRUCTURE_TYPE_DEPENDENCY_INFO;
  dep.memoryBarrierCount = 1;
  dep.pMemoryBarriers = &mb;
  s.vk.vkCmdPipelineBarrier2(cmd, &dep);
}

// The workgroup grid for `groups` workgroups: x capped at `max_x` (kMaxGroupsPerDimension, the
// least maxComputeWorkGroupCount Vulkan guarantees, unless a test lowers it), the rest in rows
// along y (the shaders flatten it back with flat_invocation()). Returns the number of rows.
inline uint32_t dispatch_1d(const ContextState& s, VkCommandBuffer cmd, uint32_t groups,
                            uint32_t max_x = gpu::kMaxGroupsPerDimension) {
  if (groups == 0) return 0;
  const uint32_t x = groups < max_x ? groups : max_x;
  const uint32_t y = (groups + x - 1) / x;
  s.vk.vkCmdDispatch(cmd, x, y, 1);
  return y;
}

}  // namespace tprop
