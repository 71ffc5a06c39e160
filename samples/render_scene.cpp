#include "render_scene.h"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>

// The one translation unit that holds stb_image_write.
#define STB_IMAGE_WRITE_IMPLEMENTATION
#include <stb/stb_image_write.h>

#include "propagator.h"
#include "reference.h"
#include "render_device.h"
#include "render_layout.h"
#include "vk_context.h"

namespace tprop::sample {

namespace {

// glslc -mfmt=c writes the braces of the initializer itself.
const uint32_t kVertexSpirv[] =
#include "render_instances_vert.spv.inc"
    ;
const uint32_t kFragmentSpirv[] =
#include "render_instances_frag.spv.inc"
    ;

constexpr VkFormat kColorFormat = VK_FORMAT_R8G8B8A8_UNORM;
constexpr VkFormat kDepthFormat = VK_FORMAT_D32_SFLOAT;

Error vk_error(const char* what, VkResult r) { return Error{std::string(what) + ": " + describe(r)}; }

// Every object one render creates, destroyed together: one owner, no flags.
struct Frame {
  VkDevice device = VK_NULL_HANDLE;
  VkImage images[2]{};  // color, depth
  VkDeviceMemory image_memory[2]{};
  VkImageView views[2]{};
  VkBuffer readback = VK_NULL_HANDLE;
  VkDeviceMemory readback_memory = VK_NULL_HANDLE;
  VkShaderModule modules[2]{};
  VkPipelineLayout layout = VK_NULL_HANDLE;
  VkPipeline pipeline = VK_NULL_HANDLE;
  VkCommandPool pool = VK_NULL_HANDLE;
  VkFence fence = VK_NULL_HANDLE;

  explicit Frame(VkDevice d) : device(d) {}
  Frame(const Frame&) = delete;
  Frame& operator=(const Frame&) = delete;
  ~Frame() {
    vkDestroyFence(device, fence, nullptr);
    vkDestroyCommandPool(device, pool, nullptr);
    vkDestroyPipeline(device, pipeline, nullptr);
    vkDestroyPipelineLayout(device, layout, nullptr);
    for (VkShaderModule m : modules) vkDestroyShaderModule(device, m, nullptr);
    vkDestroyBuffer(device, readback, nullptr);
    vkFreeMemory(device, readback_memory, nullptr);
    for (int i = 0; i < 2; ++i) {
      vkDestroyImageView(device, views[i], nullptr);
      vkDestroyImage(device, images[i], nullptr);
      vkFreeMemory(device, image_memory[i], nullptr);
    }
  }
};

Status create_target(const AppDevice& app, Frame& f, int which, VkFormat format,
                     VkImageUsageFlags usage, VkImageAspectFlags aspect, uint32_t w, uint32_t h) {
  VkImageCreateInfo ici{VK_STRUCTURE_TYPE_IMAGE_CREATE_INFO};
  ici.imageType = VK_IMAGE_TYPE_2D;
  ici.format = format;
  ici.extent = {w, h, 1};
  ici.mipLevels = 1;
  ici.arrayLayers = 1;
  ici.samples = VK_SAMPLE_COUNT_1_BIT;
  ici.tiling = VK_IMAGE_TILING_OPTIMAL;
  ici.usage = usage;
  ici.initialLayout = VK_IMAGE_LAYOUT_UNDEFINED;
  if (VkResult r = vkCreateImage(app.device, &ici, nullptr, &f.images[which]); r != VK_SUCCESS)
    return vk_error("vkCreateImage", r);
  VkMemoryRequirements req;
  vkGetImageMemoryRequirements(app.device, f.images[which], &req);
  Result<uint32_t> type = find_memory_type(app.physical_device, req.memoryTypeBits,
                                           VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT);
  if (!type) return type.error();
  VkMemoryAllocateInfo mai{VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO};
  mai.allocationSize = req.size;
  mai.memoryTypeIndex = *type;
  if (VkResult r = vkAllocateMemory(app.device, &mai, nullptr, &f.image_memory[which]); r != VK_SUCCESS)
    return vk_error("vkAllocateMemory (render target)", r);
  vkBindImageMemory(app.device, f.images[which], f.image_memory[which], 0);
  VkImageViewCreateInfo vci{VK_STRUCTURE_TYPE_IMAGE_VIEW_CREATE_INFO};
  vci.image = f.images[which];
  vci.viewType = VK_IMAGE_VIEW_TYPE_2D;
  vci.format = format;
  vci.subresourceRange = {aspect, 0, 1, 0, 1};
  if (VkResult r = vkCreateImageView(app.device, &vci, nullptr, &f.views[which]); r != VK_SUCCESS)
    return vk_error("vkCreateImageView", r);
  return ok_status();
}

Status create_readback(const AppDevice& app, Frame& f, VkDeviceSize size) {
  VkBufferCreateInfo bci{VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO};
  bci.size = size;
  bci.usage = VK_BUFFER_USAGE_TRANSFER_DST_BIT;
  if (VkResult r = vkCreateBuffer(app.device, &bci, nullptr, &f.readback); r != VK_SUCCESS)
    return vk_error("vkCreateBuffer (readback)", r);
  VkMemoryRequirements req;
  vkGetBufferMemoryRequirements(app.device, f.readback, &req);
  Result<uint32_t> type = find_memory_type(
      app.physical_device, req.memoryTypeBits,
      VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT);
  if (!type) return type.error();
  VkMemoryAllocateInfo mai{VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO};
  mai.allocationSize = req.size;
  mai.memoryTypeIndex = *type;
  if (VkResult r = vkAllocateMemory(app.device, &mai, nullptr, &f.readback_memory); r != VK_SUCCESS)
    return vk_error("vkAllocateMemory (readback)", r);
  vkBindBufferMemory(app.device, f.readback, f.readback_memory, 0);
  return ok_status();
}

Status create_pipeline(const AppDevice& app, Frame& f) {
  const std::pair<const uint32_t*, size_t> code[2] = {{kVertexSpirv, sizeof(kVertexSpirv)},
                                                      {kFragmentSpirv, sizeof(kFragmentSpirv)}};
  for (int i = 0; i < 2; ++i) {
    VkShaderModuleCreateInfo smci{VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO};
    smci.codeSize = code[i].second;
    smci.pCode = code[i].first;
    if (VkResult r = vkCreateShaderModule(app.device, &smci, nullptr, &f.modules[i]); r != VK_SUCCESS)
      return vk_error("vkCreateShaderModule", r);
  }
  VkPushConstantRange range{VK_SHADER_STAGE_VERTEX_BIT, 0, sizeof(render::RenderPush)};
  VkPipelineLayoutCreateInfo plci{VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO};
  plci.pushConstantRangeCount = 1;
  plci.pPushConstantRanges = &range;
  if (VkResult r = vkCreatePipelineLayout(app.device, &plci, nullptr, &f.layout); r != VK_SUCCESS)
    return vk_error("vkCreatePipelineLayout", r);

  VkPipelineShaderStageCreateInfo stages[2]{};
  for (int i = 0; i < 2; ++i) {
    stages[i].sType = VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO;
    stages[i].stage = i == 0 ? VK_SHADER_STAGE_VERTEX_BIT : VK_SHADER_STAGE_FRAGMENT_BIT;
    stages[i].module = f.modules[i];
    stages[i].pName = "main";
  }
  VkPipelineVertexInputStateCreateInfo vertex_input{VK_STRUCTURE_TYPE_PIPELINE_VERTEX_INPUT_STATE_CREATE_INFO};
  VkPipelineInputAssemblyStateCreateInfo assembly{VK_STRUCTURE_TYPE_PIPELINE_INPUT_ASSEMBLY_STATE_CREATE_INFO};
  assembly.topology = VK_PRIMITIVE_TOPOLOGY_TRIANGLE_LIST;
  VkPipelineViewportStateCreateInfo viewport{VK_STRUCTURE_TYPE_PIPELINE_VIEWPORT_STATE_CREATE_INFO};
  viewport.viewportCount = 1;
  viewport.scissorCount = 1;
  VkPipelineRasterizationStateCreateInfo raster{VK_STRUCTURE_TYPE_PIPELINE_RASTERIZATION_STATE_CREATE_INFO};
  raster.polygonMode = VK_POLYGON_MODE_FILL;
  raster.cullMode = VK_CULL_MODE_NONE;  // a negative scale mirrors a cube; the depth test copes
  raster.lineWidth = 1.0f;
  VkPipelineMultisampleStateCreateInfo multisample{VK_STRUCTURE_TYPE_PIPELINE_MULTISAMPLE_STATE_CREATE_INFO};
  multisample.rasterizationSamples = VK_SAMPLE_COUNT_1_BIT;
  VkPipelineDepthStencilStateCreateInfo depth{VK_STRUCTURE_TYPE_PIPELINE_DEPTH_STENCIL_STATE_CREATE_INFO};
  depth.depthTestEnable = VK_TRUE;
  depth.depthWriteEnable = VK_TRUE;
  depth.depthCompareOp = VK_COMPARE_OP_LESS;
  VkPipelineColorBlendAttachmentState blend_attachment{};
  blend_attachment.colorWriteMask = VK_COLOR_COMPONENT_R_BIT | VK_COLOR_COMPONENT_G_BIT |
                                    VK_COLOR_COMPONENT_B_BIT | VK_COLOR_COMPONENT_A_BIT;
  VkPipelineColorBlendStateCreateInfo blend{VK_STRUCTURE_TYPE_PIPELINE_COLOR_BLEND_STATE_CREATE_INFO};
  blend.attachmentCount = 1;
  blend.pAttachments = &blend_attachment;
  const VkDynamicState dynamic_states[2] = {VK_DYNAMIC_STATE_VIEWPORT, VK_DYNAMIC_STATE_SCISSOR};
  VkPipelineDynamicStateCreateInfo dynamic{VK_STRUCTURE_TYPE_PIPELINE_DYNAMIC_STATE_CREATE_INFO};
  dynamic.dynamicStateCount = 2;
  dynamic.pDynamicStates = dynamic_states;
  VkPipelineRenderingCreateInfo rendering{VK_STRUCTURE_TYPE_PIPELINE_RENDERING_CREATE_INFO};
  rendering.colorAttachmentCount = 1;
  rendering.pColorAttachmentFormats = &kColorFormat;
  rendering.depthAttachmentFormat = kDepthFormat;

  VkGraphicsPipelineCreateInfo gpci{VK_STRUCTURE_TYPE_GRAPHICS_PIPELINE_CREATE_INFO};
  gpci.pNext = &rendering;
  gpci.stageCount = 2;
  gpci.pStages = stages;
  gpci.pVertexInputState = &vertex_input;
  gpci.pInputAssemblyState = &assembly;
  gpci.pViewportState = &viewport;
  gpci.pRasterizationState = &raster;
  gpci.pMultisampleState = &multisample;
  gpci.pDepthStencilState = &depth;
  gpci.pColorBlendState = &blend;
  gpci.pDynamicState = &dynamic;
  gpci.layout = f.layout;
  if (VkResult r = vkCreateGraphicsPipelines(app.device, VK_NULL_HANDLE, 1, &gpci, nullptr, &f.pipeline);
      r != VK_SUCCESS)
    return vk_error("vkCreateGraphicsPipelines", r);
  return ok_status();
}

void image_barrier(VkCommandBuffer cmd, VkImage image, VkImageAspectFlags aspect,
                   VkPipelineStageFlags2 src_stage, VkAccessFlags2 src_access,
                   VkPipelineStageFlags2 dst_stage, VkAccessFlags2 dst_access,
                   VkImageLayout from, VkImageLayout to) {
  VkImageMemoryBarrier2 b{VK_STRUCTURE_TYPE_IMAGE_MEMORY_BARRIER_2};
  b.srcStageMask = src_stage;
  b.srcAccessMask = src_access;
  b.dstStageMask = dst_stage;
  b.dstAccessMask = dst_access;
  b.oldLayout = from;
  b.newLayout = to;
  b.srcQueueFamilyIndex = b.dstQueueFamilyIndex = VK_QUEUE_FAMILY_IGNORED;
  b.image = image;
  b.subresourceRange = {aspect, 0, 1, 0, 1};
  VkDependencyInfo dep{VK_STRUCTURE_TYPE_DEPENDENCY_INFO};
  dep.imageMemoryBarrierCount = 1;
  dep.pImageMemoryBarriers = &b;
  vkCmdPipelineBarrier2(cmd, &dep);
}

}  // namespace

Framing frame_points(const std::vector<float3>& all_points, float aspect) {
  // Frame the bulk of the scene: points further from the median centre than three times the
  // median distance (a star field around a solar system, a far-away camera rig) stay out of
  // the bounds, so a few outliers do not shrink the scene to a dot.
  std::vector<float3> points;
  for (const float3& p : all_points)
    if (std::isfinite(p.x) && std::isfinite(p.y) && std::isfinite(p.z)) points.push_back(p);
  if (points.size() >= 8) {
    float3 median;
    std::vector<float> axis(points.size());
    for (int a = 0; a < 3; ++a) {
      for (size_t i = 0; i < points.size(); ++i) axis[i] = points[i][a];
      std::nth_element(axis.begin(), axis.begin() + axis.size() / 2, axis.end());
      median[a] = axis[axis.size() / 2];
    }
    for (size_t i = 0; i < points.size(); ++i) axis[i] = glm::length(points[i] - median);
    std::vector<float> sorted = axis;
    std::nth_element(sorted.begin(), sorted.begin() + sorted.size() / 2, sorted.end());
    const float limit = 3.0f * std::max(sorted[sorted.size() / 2], 1e-6f);
    std::vector<float3> kept;
    for (size_t i = 0; i < points.size(); ++i)
      if (axis[i] <= limit) kept.push_back(points[i]);
    points.swap(kept);
  }
  float3 lo(0.0f), hi(0.0f);
  if (!points.empty()) lo = hi = points[0];
  for (const float3& p : points) {
    lo = glm::min(lo, p);
    hi = glm::max(hi, p);
  }
  const float3 center = 0.5f * (lo + hi);
  const float radius = std::max(0.5f * glm::length(hi - lo), 1.0f);
  const float fov_y = 0.8f;  // radians
  // Fit the points' projection, not their bounding sphere: step back along the view direction
  // just far enough that every kept point lies inside both halves of the frustum (plus 8%).
  const float3 dir = glm::normalize(float3(0.35f, 0.55f, 1.0f));  // centre -> eye
  const float3 fwd0 = -dir;
  const float3 right0 = glm::normalize(glm::cross(fwd0, float3(0, 1, 0)));
  const float3 up0 = glm::cross(right0, fwd0);
  const float ty = std::tan(0.5f * fov_y), tx = ty * aspect;
  float distance = radius * 1e-3f;
  for (const float3& p : points) {
    const float3 v = p - center;
    const float toward_eye = glm::dot(v, dir);
    distance = std::max(distance, toward_eye + std::fabs(glm::dot(v, right0)) / tx);
    distance = std::max(distance, toward_eye + std::fabs(glm::dot(v, up0)) / ty);
  }
  distance = std::max(distance * 1.08f, 1.0f);
  const float3 eye = center + distance * dir;
  // Right-handed look-at, then a Vulkan projection: y down in clip space, depth 0..1.
  const float3 fwd = glm::normalize(center - eye);
  const float3 right = glm::normalize(glm::cross(fwd, float3(0, 1, 0)));
  const float3 up = glm::cross(right, fwd);
  float4x4 view(1.0f);
  view[0] = float4(right.x, up.x, -fwd.x, 0);
  view[1] = float4(right.y, up.y, -fwd.y, 0);
  view[2] = float4(right.z, up.z, -fwd.z, 0);
  view[3] = float4(-glm::dot(right, eye), -glm::dot(up, eye), glm::dot(fwd, eye), 1);
  const float near_plane = std::max(distance - 2.0f * radius, distance * 1e-3f);
  const float far_plane = distance + 2.0f * radius;
  const float t = 1.0f / std::tan(0.5f * fov_y);
  float4x4 proj(0.0f);
  proj[0][0] = t / aspect;
  proj[1][1] = -t;
  proj[2][2] = far_plane / (near_plane - far_plane);
  proj[2][3] = -1.0f;
  proj[3][2] = near_plane * far_plane / (near_plane - far_plane);
  return {proj * view, center, radius};
}

Result<RenderedImage> render_scene(Scene& scene, const RenderOptions& options) {
  const uint32_t w = options.width, h = options.height;
  if (w == 0 || h == 0 || w > 16384 || h > 16384)
    return Error{"image size " + std::to_string(w) + "x" + std::to_string(h) +
                 " is out of range (1 to 16384 on each side)"};

  // The camera frames the entities' world positions. The sample takes them from the CPU
  // reference so that the GPU output is only ever read by the vertex shader.
  std::vector<float3> positions;
  for (const float4x4& m : evaluate_once(scene.store)) positions.emplace_back(m[3]);

  // 1. The application's own device, then tprop on top of it.
  Result<AppDevice> app = AppDevice::create();
  if (!app) return app.error();
  AdoptInfo adopt;
  adopt.instance = app->instance;
  adopt.physical_device = app->physical_device;
  adopt.device = app->device;
  adopt.queue = app->queue;
  adopt.queue_family = app->queue_family;
  adopt.get_instance_proc_addr = vkGetInstanceProcAddr;
  adopt.debug_utils_enabled = app->debug_utils;
  adopt.device_create_info = &app->created_with().create_info;  // adopt checks what it enabled
  adopt.api_version = app->created_with().api_version;
  Result<VulkanContext> context = VulkanContext::adopt(adopt);
  if (!context) return context.error();
  Result<Propagator> propagator =
      Propagator::create(*context, {.max_buffer_bytes = options.max_buffer_bytes,
                                    .output_layout = options.output_layout});
  if (!propagator) return propagator.error();
  if (Status s = propagator->update(scene.store); !s) return s.error();

  // 2. The application's render resources.
  Frame f(app->device);
  if (Status s = create_target(*app, f, 0, kColorFormat,
                               VK_IMAGE_USAGE_COLOR_ATTACHMENT_BIT | VK_IMAGE_USAGE_TRANSFER_SRC_BIT,
                               VK_IMAGE_ASPECT_COLOR_BIT, w, h); !s)
    return s.error();
  if (Status s = create_target(*app, f, 1, kDepthFormat, VK_IMAGE_USAGE_DEPTH_STENCIL_ATTACHMENT_BIT,
                               VK_IMAGE_ASPECT_DEPTH_BIT, w, h); !s)
    return s.error();
  if (Status s = create_readback(*app, f, VkDeviceSize(w) * h * 4); !s) return s.error();
  if (Status s = create_pipeline(*app, f); !s) return s.error();
  VkCommandPoolCreateInfo cpci{VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO};
  cpci.queueFamilyIndex = app->queue_family;
  if (VkResult r = vkCreateCommandPool(app->device, &cpci, nullptr, &f.pool); r != VK_SUCCESS)
    return vk_error("vkCreateCommandPool", r);
  VkCommandBufferAllocateInfo cbai{VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO};
  cbai.commandPool = f.pool;
  cbai.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
  cbai.commandBufferCount = 1;
  VkCommandBuffer cmd;
  if (VkResult r = vkAllocateCommandBuffers(app->device, &cbai, &cmd); r != VK_SUCCESS)
    return vk_error("vkAllocateCommandBuffers", r);
  VkFenceCreateInfo fci{VK_STRUCTURE_TYPE_FENCE_CREATE_INFO};
  if (VkResult r = vkCreateFence(app->device, &fci, nullptr, &f.fence); r != VK_SUCCESS)
    return vk_error("vkCreateFence", r);

  // 3. One command buffer: tprop's work, the barrier, the draw, the copy out.
  VkCommandBufferBeginInfo begin{VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
  begin.flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT;
  vkBeginCommandBuffer(cmd, &begin);
  propagator->record(cmd);

  // THE barrier: tprop's last compute write of LocalToWorld before the vertex shader reads it.
  const OutputBinding out = propagator->output();
  VkMemoryBarrier2 mb{VK_STRUCTURE_TYPE_MEMORY_BARRIER_2};
  mb.srcStageMask = out.written_stage;
  mb.srcAccessMask = out.written_access;
  mb.dstStageMask = VK_PIPELINE_STAGE_2_VERTEX_SHADER_BIT;
  mb.dstAccessMask = VK_ACCESS_2_SHADER_STORAGE_READ_BIT;
  VkDependencyInfo dep{VK_STRUCTURE_TYPE_DEPENDENCY_INFO};
  dep.memoryBarrierCount = 1;
  dep.pMemoryBarriers = &mb;
  vkCmdPipelineBarrier2(cmd, &dep);

  image_barrier(cmd, f.images[0], VK_IMAGE_ASPECT_COLOR_BIT, VK_PIPELINE_STAGE_2_NONE, 0,
                VK_PIPELINE_STAGE_2_COLOR_ATTACHMENT_OUTPUT_BIT,
                VK_ACCESS_2_COLOR_ATTACHMENT_WRITE_BIT, VK_IMAGE_LAYOUT_UNDEFINED,
                VK_IMAGE_LAYOUT_COLOR_ATTACHMENT_OPTIMAL);
  image_barrier(cmd, f.images[1], VK_IMAGE_ASPECT_DEPTH_BIT, VK_PIPELINE_STAGE_2_NONE, 0,
                VK_PIPELINE_STAGE_2_EARLY_FRAGMENT_TESTS_BIT | VK_PIPELINE_STAGE_2_LATE_FRAGMENT_TESTS_BIT,
                VK_ACCESS_2_DEPTH_STENCIL_ATTACHMENT_WRITE_BIT, VK_IMAGE_LAYOUT_UNDEFINED,
                VK_IMAGE_LAYOUT_DEPTH_ATTACHMENT_OPTIMAL);

  VkRenderingAttachmentInfo color{VK_STRUCTURE_TYPE_RENDERING_ATTACHMENT_INFO};
  color.imageView = f.views[0];
  color.imageLayout = VK_IMAGE_LAYOUT_COLOR_ATTACHMENT_OPTIMAL;
  color.loadOp = VK_ATTACHMENT_LOAD_OP_CLEAR;
  color.storeOp = VK_ATTACHMENT_STORE_OP_STORE;
  for (int i = 0; i < 4; ++i) color.clearValue.color.float32[i] = kBackground[i] / 255.0f;
  VkRenderingAttachmentInfo depth{VK_STRUCTURE_TYPE_RENDERING_ATTACHMENT_INFO};
  depth.imageView = f.views[1];
  depth.imageLayout = VK_IMAGE_LAYOUT_DEPTH_ATTACHMENT_OPTIMAL;
  depth.loadOp = VK_ATTACHMENT_LOAD_OP_CLEAR;
  depth.storeOp = VK_ATTACHMENT_STORE_OP_DONT_CARE;
  depth.clearValue.depthStencil = {1.0f, 0};
  VkRenderingInfo rendering{VK_STRUCTURE_TYPE_RENDERING_INFO};
  rendering.renderArea = {{0, 0}, {w, h}};
  rendering.layerCount = 1;
  rendering.colorAttachmentCount = 1;
  rendering.pColorAttachments = &color;
  rendering.pDepthAttachment = &depth;
  vkCmdBeginRendering(cmd, &rendering);
  const VkViewport viewport{0.0f, 0.0f, float(w), float(h), 0.0f, 1.0f};
  const VkRect2D scissor{{0, 0}, {w, h}};
  vkCmdSetViewport(cmd, 0, 1, &viewport);
  vkCmdSetScissor(cmd, 0, 1, &scissor);
  vkCmdBindPipeline(cmd, VK_PIPELINE_BIND_POINT_GRAPHICS, f.pipeline);
  render::RenderPush push{};
  const Framing framing = frame_points(positions, float(w) / float(h));
  push.view_proj = framing.view_proj;
  push.half_size = options.half_size;
  push.affine = out.layout == OutputLayout::Affine3x4 ? 1u : 0u;
  // One draw per piece of the output (one piece unless the scene outgrew a buffer), each
  // "binding" its piece by address; firstInstance = the piece's first slot keeps
  // gl_InstanceIndex the store slot, so colours follow slots whatever the pieces.
  for (const OutputPiece& piece : out.pieces) {
    push.local_to_world = piece.address + piece.offset;
    push.first_slot = piece.first_slot;
    vkCmdPushConstants(cmd, f.layout, VK_SHADER_STAGE_VERTEX_BIT, 0, sizeof(push), &push);
    vkCmdDraw(cmd, 36, piece.slots, 0, piece.first_slot);
  }
  vkCmdEndRendering(cmd);

  image_barrier(cmd, f.images[0], VK_IMAGE_ASPECT_COLOR_BIT,
                VK_PIPELINE_STAGE_2_COLOR_ATTACHMENT_OUTPUT_BIT,
                VK_ACCESS_2_COLOR_ATTACHMENT_WRITE_BIT, VK_PIPELINE_STAGE_2_COPY_BIT,
                VK_ACCESS_2_TRANSFER_READ_BIT, VK_IMAGE_LAYOUT_COLOR_ATTACHMENT_OPTIMAL,
                VK_IMAGE_LAYOUT_TRANSFER_SRC_OPTIMAL);
  VkBufferImageCopy region{};
  region.imageSubresource = {VK_IMAGE_ASPECT_COLOR_BIT, 0, 0, 1};
  region.imageExtent = {w, h, 1};
  vkCmdCopyImageToBuffer(cmd, f.images[0], VK_IMAGE_LAYOUT_TRANSFER_SRC_OPTIMAL, f.readback, 1,
                         &region);
  VkMemoryBarrier2 to_host{VK_STRUCTURE_TYPE_MEMORY_BARRIER_2};
  to_host.srcStageMask = VK_PIPELINE_STAGE_2_COPY_BIT;
  to_host.srcAccessMask = VK_ACCESS_2_TRANSFER_WRITE_BIT;
  to_host.dstStageMask = VK_PIPELINE_STAGE_2_HOST_BIT;
  to_host.dstAccessMask = VK_ACCESS_2_HOST_READ_BIT;
  dep.pMemoryBarriers = &to_host;
  vkCmdPipelineBarrier2(cmd, &dep);
  vkEndCommandBuffer(cmd);

  VkSubmitInfo submit{VK_STRUCTURE_TYPE_SUBMIT_INFO};
  submit.commandBufferCount = 1;
  submit.pCommandBuffers = &cmd;
  if (VkResult r = vkQueueSubmit(app->queue, 1, &submit, f.fence); r != VK_SUCCESS)
    return vk_error("vkQueueSubmit", r);
  if (VkResult r = vkWaitForFences(app->device, 1, &f.fence, VK_TRUE, UINT64_MAX); r != VK_SUCCESS)
    return vk_error("vkWaitForFences", r);
  scene.store.mark_statics_baked();

  RenderedImage image;
  image.width = w;
  image.height = h;
  image.view_proj = push.view_proj;
  image.device_name = context->device_name();
  image.rgba.resize(size_t(w) * h * 4);
  void* mapped = nullptr;
  if (VkResult r = vkMapMemory(app->device, f.readback_memory, 0, VK_WHOLE_SIZE, 0, &mapped);
      r != VK_SUCCESS)
    return vk_error("vkMapMemory (readback)", r);
  std::memcpy(image.rgba.data(), mapped, image.rgba.size());
  vkUnmapMemory(app->device, f.readback_memory);
  return image;
}

Status write_png(const std::string& path, const RenderedImage& image) {
  // stbi_write_png ignores fwrite's and fclose's failures (a full disk, /dev/full, a file size
  // limit): encode through a callback and check every write, the flush and the close.
  struct Sink {
    std::FILE* file;
    int error;
  };
  Sink sink{std::fopen(path.c_str(), "wb"), 0};
  if (!sink.file) return Error{"cannot write PNG '" + path + "': " + std::strerror(errno)};
  const auto put = [](void* user, void* data, int size) {
    Sink* s = static_cast<Sink*>(user);
    if (s->error == 0 && std::fwrite(data, 1, size_t(size), s->file) != size_t(size))
      s->error = errno != 0 ? errno : EIO;
  };
  errno = 0;
  const int encoded = stbi_write_png_to_func(put, &sink, int(image.width), int(image.height), 4,
                                             image.rgba.data(), int(image.width * 4));
  if (sink.error == 0 && std::fflush(sink.file) != 0) sink.error = errno != 0 ? errno : EIO;
  if (std::fclose(sink.file) != 0 && sink.error == 0) sink.error = errno != 0 ? errno : EIO;
  if (!encoded) return Error{"cannot encode the PNG for '" + path + "'"};
  if (sink.error != 0)
    return Error{"cannot write PNG '" + path + "': " + std::strerror(sink.error)};
  return ok_status();
}

}  // namespace tprop::sample
