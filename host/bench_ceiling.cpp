#include "bench_ceiling.h"

#include <algorithm>
#include <cassert>
#include <chrono>
#include <string>
#include <vector>

#include "bench_copy.h"
#include "vk_buffer.h"

namespace tprop::bench {

namespace {

// glslc -mfmt=c output: a braced list of SPIR-V words.
const uint32_t kCopySpirv[] =
#include "bench_copy.spv.inc"
    ;

Error vulkan_error(const char* what, VkResult r) {
  return Error{std::string(what) + ": " + describe(r)};
}

// The Vulkan objects of the measurement, freed on every path.
struct CopyRig {
  VkDevice device = VK_NULL_HANDLE;
  VkCommandPool pool = VK_NULL_HANDLE;
  VkQueryPool queries = VK_NULL_HANDLE;
  VkFence fence = VK_NULL_HANDLE;
  VkShaderModule module = VK_NULL_HANDLE;
  VkPipelineLayout layout = VK_NULL_HANDLE;
  VkPipeline pipeline = VK_NULL_HANDLE;
  ~CopyRig() {
    if (pipeline) vkDestroyPipeline(device, pipeline, nullptr);
    if (layout) vkDestroyPipelineLayout(device, layout, nullptr);
    if (module) vkDestroyShaderModule(device, module, nullptr);
    if (fence) vkDestroyFence(device, fence, nullptr);
    if (queries) vkDestroyQueryPool(device, queries, nullptr);
    if (pool) vkDestroyCommandPool(device, pool, nullptr);
  }
};

Status make_pipeline(CopyRig& rig) {
  VkShaderModuleCreateInfo smci{VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO};
  smci.codeSize = sizeof(kCopySpirv);
  smci.pCode = kCopySpirv;
  if (VkResult r = vkCreateShaderModule(rig.device, &smci, nullptr, &rig.module); r != VK_SUCCESS)
    return vulkan_error("vkCreateShaderModule (bench_copy)", r);
  const VkPushConstantRange range{VK_SHADER_STAGE_COMPUTE_BIT, 0, sizeof(gpu::CopyPush)};
  VkPipelineLayoutCreateInfo plci{VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO};
  plci.pushConstantRangeCount = 1;
  plci.pPushConstantRanges = &range;
  if (VkResult r = vkCreatePipelineLayout(rig.device, &plci, nullptr, &rig.layout); r != VK_SUCCESS)
    return vulkan_error("vkCreatePipelineLayout (bench_copy)", r);
  VkComputePipelineCreateInfo cpci{VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO};
  cpci.stage = {VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO};
  cpci.stage.stage = VK_SHADER_STAGE_COMPUTE_BIT;
  cpci.stage.module = rig.module;
  cpci.stage.pName = "main";
  cpci.layout = rig.layout;
  if (VkResult r = vkCreateComputePipelines(rig.device, VK_NULL_HANDLE, 1, &cpci, nullptr,
                                            &rig.pipeline);
      r != VK_SUCCESS)
    return vulkan_error("vkCreateComputePipelines (bench_copy)", r);
  return ok_status();
}

// Each copy waits for the one before: both write `to`, one way or the other. (The bench records
// through the Vulkan loader, as an application would, not through tprop's own helpers.)
void after_previous_copy(VkCommandBuffer cmd) {
  VkMemoryBarrier2 mb{VK_STRUCTURE_TYPE_MEMORY_BARRIER_2};
  mb.srcStageMask = VK_PIPELINE_STAGE_2_ALL_COMMANDS_BIT;
  mb.srcAccessMask = VK_ACCESS_2_MEMORY_WRITE_BIT;
  mb.dstStageMask = VK_PIPELINE_STAGE_2_ALL_COMMANDS_BIT;
  mb.dstAccessMask = VK_ACCESS_2_MEMORY_READ_BIT | VK_ACCESS_2_MEMORY_WRITE_BIT;
  VkDependencyInfo dep{VK_STRUCTURE_TYPE_DEPENDENCY_INFO};
  dep.memoryBarrierCount = 1;
  dep.pMemoryBarriers = &mb;
  vkCmdPipelineBarrier2(cmd, &dep);
}

// The least maxComputeWorkGroupCount[0] Vulkan guarantees; the shader's loop covers the rest.
constexpr uint32_t kMaxGroups = 65535;

struct Copier {
  const CopyRig& rig;
  const Buffer& from;
  const Buffer& to;
  VkDeviceSize bytes;

  void by_command(VkCommandBuffer cmd) const {
    const VkBufferCopy region{0, 0, bytes};
    vkCmdCopyBuffer(cmd, from.handle(), to.handle(), 1, &region);
  }
  void by_shader(VkCommandBuffer cmd) const {
    const uint32_t elements = static_cast<uint32_t>(bytes / 16);
    const uint32_t groups =
        std::min((elements + gpu::kCopyGroupSize - 1) / gpu::kCopyGroupSize, kMaxGroups);
    const gpu::CopyPush push{from.address(), to.address(), elements, groups * gpu::kCopyGroupSize};
    vkCmdBindPipeline(cmd, VK_PIPELINE_BIND_POINT_COMPUTE, rig.pipeline);
    vkCmdPushConstants(cmd, rig.layout, VK_SHADER_STAGE_COMPUTE_BIT, 0, sizeof(push), &push);
    vkCmdDispatch(cmd, groups, 1, 1);
  }
};

Status submit_and_wait(const VulkanContext& context, const CopyRig& rig, VkCommandBuffer cmd) {
  if (VkResult r = vkResetFences(rig.device, 1, &rig.fence); r != VK_SUCCESS)
    return vulkan_error("vkResetFences", r);
  VkSubmitInfo submit{VK_STRUCTURE_TYPE_SUBMIT_INFO};
  submit.commandBufferCount = 1;
  submit.pCommandBuffers = &cmd;
  if (VkResult r = vkQueueSubmit(context.queue(), 1, &submit, rig.fence); r != VK_SUCCESS)
    return vulkan_error("vkQueueSubmit", r);
  if (VkResult r = vkWaitForFences(rig.device, 1, &rig.fence, VK_TRUE, UINT64_MAX);
      r != VK_SUCCESS)
    return vulkan_error("vkWaitForFences", r);
  return ok_status();
}

}  // namespace

Result<CopyCeiling> measure_copy_ceiling(const VulkanContext& context, uint32_t warm_ms,
                                         uint64_t asked_bytes) {
  constexpr uint32_t kTimed = 4;
  constexpr uint32_t kStamps = 2 * (kTimed + 1);  // each way: before each copy and after the last
  VkPhysicalDeviceProperties props{};
  vkGetPhysicalDeviceProperties(context.physical_device(), &props);
  uint32_t families = 0;
  vkGetPhysicalDeviceQueueFamilyProperties(context.physical_device(), &families, nullptr);
  std::vector<VkQueueFamilyProperties> family(families);
  vkGetPhysicalDeviceQueueFamilyProperties(context.physical_device(), &families, family.data());
  const uint32_t valid_bits = family.at(context.queue_family()).timestampValidBits;
  if (valid_bits == 0) return Error{"the queue has no timestamps"};
  const uint64_t mask = valid_bits >= 64 ? ~uint64_t(0) : (uint64_t(1) << valid_bits) - 1;

  const VkDeviceSize bytes =
      asked_bytes != 0
          ? asked_bytes
          : VkDeviceSize(props.deviceType == VK_PHYSICAL_DEVICE_TYPE_CPU ? 32 : 256) << 20;
  assert(bytes % 65536 == 0 && "the samples and the halves' border fall on whole pages");
  Result<Buffer> from = Buffer::create(context, bytes, BufferKind::DeviceStorage, "bench.copy.from");
  if (!from) return from.error();
  Result<Buffer> to = Buffer::create(context, bytes, BufferKind::DeviceStorage, "bench.copy.to");
  if (!to) return to.error();

  CopyRig rig;
  rig.device = context.device();
  if (Status st = make_pipeline(rig); !st) return st.error();
  VkCommandPoolCreateInfo pool_info{VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO};
  pool_info.queueFamilyIndex = context.queue_family();
  if (VkResult r = vkCreateCommandPool(rig.device, &pool_info, nullptr, &rig.pool); r != VK_SUCCESS)
    return vulkan_error("vkCreateCommandPool", r);
  VkQueryPoolCreateInfo query_info{VK_STRUCTURE_TYPE_QUERY_POOL_CREATE_INFO};
  query_info.queryType = VK_QUERY_TYPE_TIMESTAMP;
  query_info.queryCount = kStamps;
  if (VkResult r = vkCreateQueryPool(rig.device, &query_info, nullptr, &rig.queries);
      r != VK_SUCCESS)
    return vulkan_error("vkCreateQueryPool", r);
  VkFenceCreateInfo fence_info{VK_STRUCTURE_TYPE_FENCE_CREATE_INFO};
  if (VkResult r = vkCreateFence(rig.device, &fence_info, nullptr, &rig.fence); r != VK_SUCCESS)
    return vulkan_error("vkCreateFence", r);
  VkCommandBufferAllocateInfo alloc{VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO};
  alloc.commandPool = rig.pool;
  alloc.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
  alloc.commandBufferCount = 2;
  VkCommandBuffer cmds[2] = {};
  if (VkResult r = vkAllocateCommandBuffers(rig.device, &alloc, cmds); r != VK_SUCCESS)
    return vulkan_error("vkAllocateCommandBuffers", r);
  const VkCommandBuffer heat = cmds[0], timed = cmds[1];
  const Copier copier{rig, *from, *to, bytes};

  // What the copies must carry: two halves of different words, so that a shader copying the
  // wrong elements (or none) is caught by the samples read back at the end.
  constexpr uint32_t kLow = 0x5eed0001u, kHigh = 0xc0ffee02u;
  constexpr VkDeviceSize kSample = 4096;
  const VkDeviceSize half = bytes / 2;
  Result<Buffer> samples =
      Buffer::create(context, 4 * kSample, BufferKind::Readback, "bench.copy.samples");
  if (!samples) return samples.error();

  // The heat: a copy each way (the first touches the memory), repeated for warm_ms when asked.
  VkCommandBufferBeginInfo begin{VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
  if (VkResult r = vkBeginCommandBuffer(heat, &begin); r != VK_SUCCESS)
    return vulkan_error("vkBeginCommandBuffer", r);
  vkCmdFillBuffer(heat, from->handle(), 0, half, kLow);
  vkCmdFillBuffer(heat, from->handle(), half, bytes - half, kHigh);
  after_previous_copy(heat);
  copier.by_command(heat);
  after_previous_copy(heat);
  copier.by_shader(heat);
  after_previous_copy(heat);
  if (VkResult r = vkEndCommandBuffer(heat); r != VK_SUCCESS)
    return vulkan_error("vkEndCommandBuffer", r);
  const auto t0 = std::chrono::steady_clock::now();
  do {
    if (Status st = submit_and_wait(context, rig, heat); !st) return st.error();
  } while (std::chrono::steady_clock::now() - t0 < std::chrono::milliseconds(warm_ms));

  begin.flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT;
  if (VkResult r = vkBeginCommandBuffer(timed, &begin); r != VK_SUCCESS)
    return vulkan_error("vkBeginCommandBuffer", r);
  vkCmdResetQueryPool(timed, rig.queries, 0, kStamps);
  for (uint32_t way = 0; way < 2; ++way)
    for (uint32_t i = 0; i <= kTimed; ++i) {
      after_previous_copy(timed);
      if (way == 1 && i == 0) {  // the shader's copies alone leave `to` holding `from`
        vkCmdFillBuffer(timed, to->handle(), 0, VK_WHOLE_SIZE, 0);
        after_previous_copy(timed);
      }
      vkCmdWriteTimestamp2(timed, VK_PIPELINE_STAGE_2_ALL_COMMANDS_BIT, rig.queries,
                           way * (kTimed + 1) + i);
      if (i == kTimed) continue;
      way == 0 ? copier.by_command(timed) : copier.by_shader(timed);
    }
  after_previous_copy(timed);
  // Samples: the first and last words, and both sides of the halves' border.
  const VkBufferCopy regions[3] = {{0, 0, kSample},
                                   {half - kSample, kSample, 2 * kSample},
                                   {bytes - kSample, 3 * kSample, kSample}};
  vkCmdCopyBuffer(timed, to->handle(), samples->handle(), 3, regions);
  if (VkResult r = vkEndCommandBuffer(timed); r != VK_SUCCESS)
    return vulkan_error("vkEndCommandBuffer", r);
  if (Status st = submit_and_wait(context, rig, timed); !st) return st.error();
  samples->invalidate();
  const uint32_t* words = static_cast<const uint32_t*>(samples->mapped());
  for (uint32_t w = 0; w < 4 * kSample / 4; ++w)
    if (words[w] != (w < 2 * kSample / 4 ? kLow : kHigh))
      return Error{"the ceiling's copy shader wrote word " + std::to_string(w) +
                   " of its samples wrong: the ceiling would not be a copy's"};
  uint64_t stamps[kStamps] = {};
  if (VkResult r = vkGetQueryPoolResults(rig.device, rig.queries, 0, kStamps, sizeof(stamps),
                                         stamps, sizeof(uint64_t),
                                         VK_QUERY_RESULT_64_BIT | VK_QUERY_RESULT_WAIT_BIT);
      r != VK_SUCCESS)
    return vulkan_error("vkGetQueryPoolResults", r);
  double best_ns[2] = {0, 0};
  for (uint32_t way = 0; way < 2; ++way)
    for (uint32_t i = 0; i < kTimed; ++i) {
      const uint64_t* at = stamps + way * (kTimed + 1) + i;
      const double ns = double((at[1] - at[0]) & mask) * props.limits.timestampPeriod;
      if (ns > 0 && (best_ns[way] == 0 || ns < best_ns[way])) best_ns[way] = ns;
    }
  if (best_ns[0] <= 0 || best_ns[1] <= 0) return Error{"the copies' timestamps did not advance"};
  CopyCeiling c;
  c.bytes = bytes;
  c.command_gb_per_s = 2.0 * double(bytes) / best_ns[0];  // bytes per ns = GB/s
  c.shader_gb_per_s = 2.0 * double(bytes) / best_ns[1];
  c.by_shader = best_ns[1] < best_ns[0];
  c.ms = std::min(best_ns[0], best_ns[1]) * 1e-6;
  c.gb_per_s = std::max(c.command_gb_per_s, c.shader_gb_per_s);
  return c;
}

}  // namespace tprop::bench
