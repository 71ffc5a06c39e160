// How the passes reach the scene's arrays: one storage-buffer descriptor per array when every
// array fits in one binding (faster on lavapipe), else descriptor windows for each entity's own
// arrays and buffer device addresses in the push constants for the rest (no size limit per
// binding; scene_access.glsl builds the passes each way).
#include "propagator_state.h"

#include <algorithm>

#include "vk_debug.h"

namespace tprop {

using namespace propagator_detail;

namespace {

VkWriteDescriptorSet storage_buffer_write(VkDescriptorSet set, uint32_t binding,
                                          const VkDescriptorBufferInfo* info) {
  VkWriteDescriptorSet w{};
  w.sType = VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET;
  w.dstSet = set;
  w.dstBinding = binding;
  w.descriptorCount = 1;
  w.descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER;
  w.pBufferInfo = info;
  return w;
}

}  // namespace

// A pool of `count` sets of the passes' layout, and the sets, named `name` for captures.
Status Propagator::Impl::create_sets(uint32_t count, const char* name, VkDescriptorPool& pool_out,
                                     std::vector<VkDescriptorSet>& sets_out) {
  const VkDescriptorPoolSize size{VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, count * gpu::kBindingCount};
  VkDescriptorPoolCreateInfo dpci{};
  dpci.sType = VK_STRUCTURE_TYPE_DESCRIPTOR_POOL_CREATE_INFO;
  dpci.maxSets = count;
  dpci.poolSizeCount = 1;
  dpci.pPoolSizes = &size;
  VkResult r = s->vk.vkCreateDescriptorPool(s->device, &dpci, nullptr, &pool_out);
  if (r != VK_SUCCESS) {
    pool_out = VK_NULL_HANDLE;
    return Error{"creating a descriptor pool failed: " + describe(r)};
  }
  set_debug_name(*s, VK_OBJECT_TYPE_DESCRIPTOR_POOL, pool_out, name);
  const std::vector<VkDescriptorSetLayout> layouts(count, pipes.set_layout());
  VkDescriptorSetAllocateInfo dsai{};
  dsai.sType = VK_STRUCTURE_TYPE_DESCRIPTOR_SET_ALLOCATE_INFO;
  dsai.descriptorPool = pool_out;
  dsai.descriptorSetCount = count;
  dsai.pSetLayouts = layouts.data();
  std::vector<VkDescriptorSet> sets(count);
  r = s->vk.vkAllocateDescriptorSets(s->device, &dsai, sets.data());
  if (r != VK_SUCCESS) return Error{"allocating descriptor sets failed: " + describe(r)};
  for (VkDescriptorSet set : sets) set_debug_name(*s, VK_OBJECT_TYPE_DESCRIPTOR_SET, set, name);
  sets_out = std::move(sets);
  return ok_status();
}

Status Propagator::Impl::create_descriptor_set() {
  std::vector<VkDescriptorSet> sets;
  if (Status st = create_sets(1, "tprop.scene", descriptor_pool, sets); !st) return st;
  descriptor_set = sets[0];
  return ok_status();
}

// The buffer behind each binding; an absent optional table is stood in for by the flags
// buffer (never read: no flag points into it).
void Propagator::Impl::binding_buffers(const Buffer* out[gpu::kBindingCount]) const {
  const Buffer* fallback = &arrays[kFlags].device;
  out[gpu::kBindingFlags] = &arrays[kFlags].device;
  out[gpu::kBindingTranslation] = &arrays[kTranslation].device;
  out[gpu::kBindingRotation] = &arrays[kRotation].device;
  out[gpu::kBindingScale] = &arrays[kScale].device;
  out[gpu::kBindingParent] = &arrays[kParent].device;
  out[gpu::kBindingRareIndex] = &arrays[kRareIndex].device;
  out[gpu::kBindingStaticIndex] = &arrays[kStaticIndex].device;
  out[gpu::kBindingRare] = rare.device ? &rare.device : fallback;
  out[gpu::kBindingFrozen] = frozen ? &frozen : fallback;
  out[gpu::kBindingWorld] = &world;
  out[gpu::kBindingLevelOffsets] = &levels.device;
  out[gpu::kBindingDeltas] = deltas.device ? &deltas.device : fallback;
}

// Descriptors when allowed and every array fits in one binding, else windows when allowed, else
// device addresses. Sets are rewritten only when a buffer behind them changed (growth, a new
// table), which update() may do because the previous frame has completed.
void Propagator::Impl::choose_addressing() {
  const VkPhysicalDeviceLimits& lim = s->properties.limits;
  const Buffer* b[gpu::kBindingCount];
  binding_buffers(b);
  bool fits = options.prefer_descriptors && descriptor_set != VK_NULL_HANDLE &&
              lim.maxPerStageDescriptorStorageBuffers >= gpu::kBindingCount &&
              lim.maxDescriptorSetStorageBuffers >= gpu::kBindingCount;
  const bool descriptors_allowed = fits;
  for (uint32_t i = 0; i < gpu::kBindingCount && fits; ++i)
    fits = b[i]->size() <= lim.maxStorageBufferRange;
  const uint32_t window = window_positions();
  if (options.window_entities != 0 && order.size() > window) fits = false;  // tests
  if (!fits) {
    const bool windowed = descriptors_allowed && order.size() > 0 && prepare_windows(window);
    addressing = windowed ? Addressing::Windowed : Addressing::DeviceAddress;
    return;
  }
  addressing = Addressing::Descriptors;
  bool changed = false;
  for (uint32_t i = 0; i < gpu::kBindingCount; ++i) changed |= described[i] != b[i]->handle();
  if (!changed) return;
  VkDescriptorBufferInfo infos[gpu::kBindingCount];
  VkWriteDescriptorSet writes[gpu::kBindingCount];
  for (uint32_t i = 0; i < gpu::kBindingCount; ++i) {
    infos[i] = {b[i]->handle(), 0, VK_WHOLE_SIZE};
    writes[i] = storage_buffer_write(descriptor_set, i, &infos[i]);
    described[i] = b[i]->handle();
  }
  s->vk.vkUpdateDescriptorSets(s->device, gpu::kBindingCount, writes, 0, nullptr);
}

namespace {

// Window starts are multiples of this many positions: every binding offset is then a multiple of
// 16 KiB, above any minStorageBufferOffsetAlignment (at most 256 bytes).
constexpr uint32_t kWindowAlign = 4096;

// The own arrays a windowed pass binds: the per-position inputs and the output.
constexpr uint32_t kWindowBindings = 8;
constexpr uint32_t kWindowBinding[kWindowBindings] = {
    gpu::kBindingFlags,  gpu::kBindingTranslation, gpu::kBindingRotation,    gpu::kBindingScale,
    gpu::kBindingParent, gpu::kBindingRareIndex,   gpu::kBindingStaticIndex, gpu::kBindingWorld};

}  // namespace

uint32_t Propagator::Impl::window_positions() const {
  // The widest element of a window is the float4x4 output.
  uint64_t w = s->properties.limits.maxStorageBufferRange / sizeof(float4x4);
  if (options.window_entities != 0) w = std::min<uint64_t>(w, options.window_entities);
  w = w / kWindowAlign * kWindowAlign;
  return static_cast<uint32_t>(std::max<uint64_t>(w, kWindowAlign));
}

bool Propagator::Impl::prepare_windows(uint32_t window) {
  const uint32_t n = order.size();
  const uint32_t count = (n + window - 1) / window;
  if (count > window_sets.size()) {
    // More windows than sets: a new pool for all of them (the previous frame has completed).
    if (window_pool) s->vk.vkDestroyDescriptorPool(s->device, window_pool, nullptr);
    window_pool = VK_NULL_HANDLE;
    window_sets.clear();
    window_described.clear();
    if (!create_sets(count, "tprop.window", window_pool, window_sets)) return false;
  }
  window_size = window;
  window_count = count;

  const Buffer* all[gpu::kBindingCount];
  binding_buffers(all);
  std::vector<VkBuffer> handles(kWindowBindings);
  for (uint32_t i = 0; i < kWindowBindings; ++i) handles[i] = all[kWindowBinding[i]]->handle();
  if (handles == window_described && window == window_described_size &&
      count <= window_described_count)
    return true;

  const uint32_t capacity = arrays[kFlags].capacity;  // world has the same, at 64 bytes each
  std::vector<VkDescriptorBufferInfo> infos(size_t(count) * kWindowBindings);
  std::vector<VkWriteDescriptorSet> writes(infos.size());
  for (uint32_t w = 0; w < count; ++w) {
    const uint32_t first = w * window;
    const uint32_t length = std::min(window, capacity - first);
    for (uint32_t i = 0; i < kWindowBindings; ++i) {
      const uint32_t binding = kWindowBinding[i];
      const VkDeviceSize stride =
          binding == gpu::kBindingWorld ? sizeof(float4x4) : kStride[binding];
      const size_t k = size_t(w) * kWindowBindings + i;
      infos[k] = {handles[i], VkDeviceSize(first) * stride, VkDeviceSize(length) * stride};
      writes[k] = storage_buffer_write(window_sets[w], binding, &infos[k]);
    }
  }
  s->vk.vkUpdateDescriptorSets(s->device, static_cast<uint32_t>(writes.size()), writes.data(), 0,
                               nullptr);
  window_described = std::move(handles);
  window_described_size = window;
  window_described_count = count;
  return true;
}

gpu::ScenePush Propagator::Impl::push_constants() const {
  gpu::ScenePush p{};
  p.flags = arrays[kFlags].device.address();
  p.translation = arrays[kTranslation].device.address();
  p.rotation = arrays[kRotation].device.address();
  p.scale = arrays[kScale].device.address();
  p.parent = arrays[kParent].device.address();
  p.rare_index = arrays[kRareIndex].device.address();
  p.static_index = arrays[kStaticIndex].device.address();
  p.rare = rare.device ? rare.device.address() : arrays[kFlags].device.address();
  p.frozen = frozen ? frozen.address() : arrays[kFlags].device.address();
  p.local_to_world = world.address();
  p.level_offsets = levels.device.address();
  p.deltas = deltas.device ? deltas.device.address() : arrays[kFlags].device.address();
  return p;
}

}  // namespace tprop
