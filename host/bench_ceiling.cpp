#include "bench_ceiling.h"

#include <vector>
#include <string>

#include "vk_buffer.h"

namespace tprop::bench {

namespace {

Error vulkan_error(const char* what, VkResult r) {
  return Error{std::string(what) + ": " + describe(r)};
}

// The Vulkan objects of the measurement, freed on every path.
struct CopyRig {
  VkDevice device = VK_NULL_HANDLE;
  VkCommandPool pool = VK_NULL_HANDLE;
  VkQueryPool queries = VK_NULL_HANDLE;
  VkFence fence = VK_NULL_HANDLE;
  ~CopyRig() {
    if (fence) vkDestroyFence(device, fence, nullptr);
    if (queries) vkDestroyQueryPool(device, queries, nullptr);
    if (pool) vkDestroyCommandPool(device, pool, nullptr);
  }
};

}  // namespace

Result<CopyCeiling> measure_copy_ceiling(const VulkanContext& context) {
  constexpr uint32_t kTimed = 4;
  VkPhysicalDeviceProperties props{};
  vkGetPhysicalDeviceProperties(context.physical_device(), &props);
  uint32_t families = 0;
  vkGetPhysicalDeviceQueueFamilyProperties(context.physical_device(), &families, nullptr);
  std::vector<VkQueueFamilyProperties> family(families);
  vkGetPhysicalDeviceQueueFamilyProperties(context.physical_device(), &families, family.data());
  const uint32_t valid_bits = family.at(context.queue_family()).timestampValidBits;
  if (valid_bits == 0) return Error{"the queue has no timestamps"};
  const uint64_t mask = valid_bits >= 64 ? ~uint64_t(0) : (uint64_t(1) << valid_bits) - 1;

  const VkDeviceSize bytes = VkDeviceSize(props.deviceType == VK_PHYSICAL_DEVICE_TYPE_CPU ? 32 : 256)
                             << 20;
  Result<Buffer> from = Buffer::create(context, bytes, BufferKind::DeviceStorage, "bench.copy.from");
  if (!from) return from.error();
  Result<Buffer> to = Buffer::create(context, bytes, BufferKind::DeviceStorage, "bench.copy.to");
  if (!to) return to.error();

  CopyRig rig;
  rig.device = context.device();
  VkCommandPoolCreateInfo pool_info{VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO};
  pool_info.queueFamilyIndex = context.queue_family();
  if (VkResult r = vkCreateCommandPool(rig.device, &pool_info, nullptr, &rig.pool); r != VK_SUCCESS)
    return vulkan_error("vkCreateCommandPool", r);
  VkQueryPoolCreateInfo query_info{VK_STRUCTURE_TYPE_QUERY_POOL_CREATE_INFO};
  query_info.queryType = VK_QUERY_TYPE_TIMESTAMP;
  query_info.queryCount = kTimed + 1;
  if (VkResult r = vkCreateQueryPool(rig.device, &query_info, nullptr, &rig.queries);
      r != VK_SUCCESS)
    return vulkan_error("vkCreateQueryPool", r);
  VkFenceCreateInfo fence_info{VK_STRUCTURE_TYPE_FENCE_CREATE_INFO};
  if (VkResult r = vkCreateFence(rig.device, &fence_info, nullptr, &rig.fence); r != VK_SUCCESS)
    return vulkan_error("vkCreateFence", r);
  VkCommandBufferAllocateInfo alloc{VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO};
  alloc.commandPool = rig.pool;
  alloc.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
  alloc.commandBufferCount = 1;
  VkCommandBuffer cmd = VK_NULL_HANDLE;
  if (VkResult r = vkAllocateCommandBuffers(rig.device, &alloc, &cmd); r != VK_SUCCESS)
    return vulkan_error("vkAllocateCommandBuffers", r);

  VkCommandBufferBeginInfo begin{VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
  begin.flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT;
  if (VkResult r = vkBeginCommandBuffer(cmd, &begin); r != VK_SUCCESS)
    return vulkan_error("vkBeginCommandBuffer", r);
  vkCmdResetQueryPool(cmd, rig.queries, 0, kTimed + 1);
  const VkBufferCopy region{0, 0, bytes};
  // Each copy after the one before (a write-after-write on `to`), each stamped when done.
  VkMemoryBarrier2 mb{VK_STRUCTURE_TYPE_MEMORY_BARRIER_2};
  mb.srcStageMask = VK_PIPELINE_STAGE_2_COPY_BIT;
  mb.srcAccessMask = VK_ACCESS_2_TRANSFER_WRITE_BIT;
  mb.dstStageMask = VK_PIPELINE_STAGE_2_COPY_BIT;
  mb.dstAccessMask = VK_ACCESS_2_TRANSFER_WRITE_BIT;
  VkDependencyInfo dep{VK_STRUCTURE_TYPE_DEPENDENCY_INFO};
  dep.memoryBarrierCount = 1;
  dep.pMemoryBarriers = &mb;
  vkCmdCopyBuffer(cmd, from->handle(), to->handle(), 1, &region);  // untimed: first touch
  for (uint32_t i = 0; i <= kTimed; ++i) {
    vkCmdPipelineBarrier2(cmd, &dep);
    vkCmdWriteTimestamp2(cmd, VK_PIPELINE_STAGE_2_ALL_COMMANDS_BIT, rig.queries, i);
    if (i < kTimed) vkCmdCopyBuffer(cmd, from->handle(), to->handle(), 1, &region);
  }
  if (VkResult r = vkEndCommandBuffer(cmd); r != VK_SUCCESS)
    return vulkan_error("vkEndCommandBuffer", r);
  VkSubmitInfo submit{VK_STRUCTURE_TYPE_SUBMIT_INFO};
  submit.commandBufferCount = 1;
  submit.pCommandBuffers = &cmd;
  if (VkResult r = vkQueueSubmit(context.queue(), 1, &submit, rig.fence); r != VK_SUCCESS)
    return vulkan_error("vkQueueSubmit", r);
  if (VkResult r = vkWaitForFences(rig.device, 1, &rig.fence, VK_TRUE, UINT64_MAX);
      r != VK_SUCCESS)
    return vulkan_error("vkWaitForFences", r);
  uint64_t stamps[kTimed + 1] = {};
  if (VkResult r = vkGetQueryPoolResults(rig.device, rig.queries, 0, kTimed + 1, sizeof(stamps),
                                         stamps, sizeof(uint64_t),
                                         VK_QUERY_RESULT_64_BIT | VK_QUERY_RESULT_WAIT_BIT);
      r != VK_SUCCESS)
    return vulkan_error("vkGetQueryPoolResults", r);
  double best_ns = 0;
  for (uint32_t i = 0; i < kTimed; ++i) {
    const double ns = double((stamps[i + 1] - stamps[i]) & mask) * props.limits.timestampPeriod;
    if (ns > 0 && (best_ns == 0 || ns < best_ns)) best_ns = ns;
  }
  if (best_ns <= 0) return Error{"the copy's timestamps did not advance"};
  CopyCeiling c;
  c.bytes = bytes;
  c.ms = best_ns * 1e-6;
  c.gb_per_s = 2.0 * double(bytes) / best_ns;  // bytes per ns = GB/s
  return c;
}

}  // namespace tprop::bench
