// How the passes reach the scene's arrays: one storage-buffer descriptor per array when every
// array fits in one binding (faster on lavapipe), else buffer device addresses in the push
// constants (no size limit per binding; scene_access.glsl builds the passes both ways).
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

Status Propagator::Impl::create_descriptor_set() {
  const VkDescriptorPoolSize size{VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, gpu::kBindingCount};
  VkDescriptorPoolCreateInfo dpci{};
  dpci.sType = VK_STRUCTURE_TYPE_DESCRIPTOR_POOL_CREATE_INFO;
  dpci.maxSets = 1;
  dpci.poolSizeCount = 1;
  dpci.pPoolSizes = &size;
  VkResult r = s->vk.vkCreateDescriptorPool(s->device, &dpci, nullptr, &descriptor_pool);
  if (r != VK_SUCCESS) {
    descriptor_pool = VK_NULL_HANDLE;
    return Error{"creating a descriptor pool failed: " + describe(r)};
  }
  set_debug_name(*s, VK_OBJECT_TYPE_DESCRIPTOR_POOL, descriptor_pool, "tprop.scene");
  const VkDescriptorSetLayout layout = pipes.set_layout();
  VkDescriptorSetAllocateInfo dsai{};
  dsai.sType = VK_STRUCTURE_TYPE_DESCRIPTOR_SET_ALLOCATE_INFO;
  dsai.descriptorPool = descriptor_pool;
  dsai.descriptorSetCount = 1;
  dsai.pSetLayouts = &layout;
  r = s->vk.vkAllocateDescriptorSets(s->device, &dsai, &descriptor_set);
  if (r != VK_SUCCESS) return Error{"allocating a descriptor set failed: " + describe(r)};
  set_debug_name(*s, VK_OBJECT_TYPE_DESCRIPTOR_SET, descriptor_set, "tprop.scene");
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
  out[gpu::kBindingLevels] = levels.device ? &levels.device : fallback;
  out[gpu::kBindingDeltas] = deltas.device ? &deltas.device : fallback;
  const Buffer& list = use_work_list ? work_list.device : order_list.device;
  out[gpu::kBindingList] = list ? &list : fallback;
  out[gpu::kBindingDirty] = &dirty;
}

// Descriptors when allowed and every array fits in one binding, else device addresses. Sets are rewritten only when a buffer behind them changed (growth, a new
// table), which update() may do because the previous frame has completed.
void Propagator::Impl::choose_addressing() {
  const VkPhysicalDeviceLimits& lim = s->properties.limits;
  const Buffer* b[gpu::kBindingCount];
  binding_buffers(b);
  bool fits = options.prefer_descriptors && descriptor_set != VK_NULL_HANDLE &&
              lim.maxPerStageDescriptorStorageBuffers >= gpu::kBindingCount &&
              lim.maxDescriptorSetStorageBuffers >= gpu::kBindingCount;
  for (uint32_t i = 0; i < gpu::kBindingCount && fits; ++i)
    fits = b[i]->size() <= lim.maxStorageBufferRange;
  if (!fits) {
    addressing = Addressing::DeviceAddress;
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
  const Buffer* b[gpu::kBindingCount];
  binding_buffers(b);
  p.levels = b[gpu::kBindingLevels]->address();
  p.deltas = b[gpu::kBindingDeltas]->address();
  p.list = b[gpu::kBindingList]->address();
  p.dirty = dirty.address();
  return p;
}

}  // namespace tprop
