// How the passes reach the scene's arrays: one storage-buffer descriptor per array when every
// array is one piece that fits in one binding (faster on lavapipe), else buffer device addresses
// through the piece tables named in the push constants (no size limit per binding, any number of
// pieces; scene_access.glsl builds the passes both ways).
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
  const VkDescriptorPoolSize size{VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, 2 * gpu::kBindingCount};
  VkDescriptorPoolCreateInfo dpci{};
  dpci.sType = VK_STRUCTURE_TYPE_DESCRIPTOR_POOL_CREATE_INFO;
  dpci.maxSets = 2;
  dpci.poolSizeCount = 1;
  dpci.pPoolSizes = &size;
  VkResult r = s->vk.vkCreateDescriptorPool(s->device, &dpci, nullptr, &descriptor_pool);
  if (r != VK_SUCCESS) {
    descriptor_pool = VK_NULL_HANDLE;
    return Error{"creating a descriptor pool failed: " + describe(r)};
  }
  set_debug_name(*s, VK_OBJECT_TYPE_DESCRIPTOR_POOL, descriptor_pool, "tprop.scene");
  const VkDescriptorSetLayout layouts[2] = {pipes.set_layout(), pipes.set_layout()};
  VkDescriptorSetAllocateInfo dsai{};
  dsai.sType = VK_STRUCTURE_TYPE_DESCRIPTOR_SET_ALLOCATE_INFO;
  dsai.descriptorPool = descriptor_pool;
  dsai.descriptorSetCount = 2;
  dsai.pSetLayouts = layouts;
  r = s->vk.vkAllocateDescriptorSets(s->device, &dsai, descriptor_sets);
  if (r != VK_SUCCESS) return Error{"allocating descriptor sets failed: " + describe(r)};
  set_debug_name(*s, VK_OBJECT_TYPE_DESCRIPTOR_SET, descriptor_sets[0], "tprop.scene");
  set_debug_name(*s, VK_OBJECT_TYPE_DESCRIPTOR_SET, descriptor_sets[1], "tprop.scene_scatter");
  return ok_status();
}

// The buffer behind each binding (the first piece of each array); an absent optional table is
// stood in for by the flags buffer (never read: no flag points into it).
void Propagator::Impl::binding_buffers(const Buffer* out[gpu::kBindingCount], int which) const {
  const Buffer* fallback = &arrays[kFlags].device[0];
  auto first = [&](const Pieced& m) { return m ? &m.device[0] : fallback; };
  out[gpu::kBindingFlags] = first(arrays[kFlags]);
  out[gpu::kBindingTranslation] = first(arrays[kTranslation]);
  out[gpu::kBindingRotation] = first(arrays[kRotation]);
  out[gpu::kBindingScale] = first(arrays[kScale]);
  out[gpu::kBindingParent] = first(arrays[kParent]);
  out[gpu::kBindingRareIndex] = first(arrays[kRareIndex]);
  out[gpu::kBindingStaticIndex] = first(arrays[kStaticIndex]);
  out[gpu::kBindingRare] = first(rare);
  out[gpu::kBindingFrozen] = first(frozen);
  out[gpu::kBindingWorld] = first(world);
  out[gpu::kBindingLevels] = first(levels);
  out[gpu::kBindingDeltas] = first(deltas);
  out[gpu::kBindingList] = first(list_of(which));
  out[gpu::kBindingDirty] = first(dirty);
}

// Descriptors when allowed and every array is one piece that fits in one binding, else device
// addresses. Sets are rewritten only where a buffer behind them changed (growth, a new table,
// the other list), which update() may do because the previous frame has completed.
void Propagator::Impl::choose_addressing() {
  const VkPhysicalDeviceLimits& lim = s->properties.limits;
  const Buffer* b[gpu::kBindingCount];
  bool fits = options.prefer_descriptors && descriptor_sets[1] != VK_NULL_HANDLE &&
              lim.maxPerStageDescriptorStorageBuffers >= gpu::kBindingCount &&
              lim.maxDescriptorSetStorageBuffers >= gpu::kBindingCount;
  for (const Pieced* m : std::as_const(*this).all_pieced()) fits = fits && m->pieces() <= 1;
  for (int which = 0; which < 2 && fits; ++which) {  // both sets: the order may be the larger list
    binding_buffers(b, which);
    for (uint32_t i = 0; i < gpu::kBindingCount && fits; ++i)
      fits = b[i]->size() <= lim.maxStorageBufferRange;
  }
  if (!fits) {
    addressing = Addressing::DeviceAddress;
    return;
  }
  addressing = Addressing::Descriptors;
  for (int which = 0; which < 2; ++which) {
    binding_buffers(b, which);
    // A replaced buffer may come back with a freed handle's value: rewrite everything then.
    if (described_generation[which] != buffers_generation) {
      std::fill(std::begin(described[which]), std::end(described[which]), VkBuffer(VK_NULL_HANDLE));
      described_generation[which] = buffers_generation;
    }
    VkDescriptorBufferInfo infos[gpu::kBindingCount];
    VkWriteDescriptorSet writes[gpu::kBindingCount];
    uint32_t count = 0;
    for (uint32_t i = 0; i < gpu::kBindingCount; ++i) {
      if (described[which][i] == b[i]->handle()) continue;
      infos[count] = {b[i]->handle(), 0, VK_WHOLE_SIZE};
      writes[count] = storage_buffer_write(descriptor_sets[which], i, &infos[count]);
      described[which][i] = b[i]->handle();
      ++count;
    }
    if (count) s->vk.vkUpdateDescriptorSets(s->device, count, writes, 0, nullptr);
  }
}

gpu::ScenePush Propagator::Impl::push_constants(int which) const {
  gpu::ScenePush p{};
  p.flags = arrays[kFlags].table;
  p.translation = arrays[kTranslation].table;
  p.rotation = arrays[kRotation].table;
  p.scale = arrays[kScale].table;
  p.parent = arrays[kParent].table;
  p.rare_index = arrays[kRareIndex].table;
  p.static_index = arrays[kStaticIndex].table;
  p.rare = rare.table;
  p.frozen = frozen.table;
  p.local_to_world = world.table;
  p.levels = levels.table;
  p.deltas = deltas.table;
  p.list = list_of(which).table;
  p.dirty = dirty.table;
  return p;
}

}  // namespace tprop
