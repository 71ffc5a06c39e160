// How the passes reach the scene's arrays: one storage-buffer descriptor per array when every
// array is one piece whose part in use fits in one binding (faster on lavapipe), else buffer
// device addresses through the piece tables named in the push constants (no size limit per
// binding, any number of pieces; scene_access.glsl builds the passes both ways). With
// descriptors, the evaluate passes also see the arrays they only read as uniform texel buffers
// where those fit (scene_layout.h).
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
  // Both sets have the one layout, texel bindings included (only set 0's are written: the
  // scatter, set 1, has no texel variant).
  const VkDescriptorPoolSize sizes[2] = {
      {VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, 2 * gpu::kBindingCount},
      {VK_DESCRIPTOR_TYPE_UNIFORM_TEXEL_BUFFER, 2 * gpu::kTexelCount}};
  VkDescriptorPoolCreateInfo dpci{};
  dpci.sType = VK_STRUCTURE_TYPE_DESCRIPTOR_POOL_CREATE_INFO;
  dpci.maxSets = 2;
  dpci.poolSizeCount = 2;
  dpci.pPoolSizes = sizes;
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

// The array behind each binding of set `which`.
void Propagator::Impl::binding_arrays(const Pieced* out[gpu::kBindingCount], int which) const {
  out[gpu::kBindingFlags] = &arrays[kFlags];
  out[gpu::kBindingTranslation] = &arrays[kTranslation];
  out[gpu::kBindingRotation] = &arrays[kRotation];
  out[gpu::kBindingScale] = &arrays[kScale];
  out[gpu::kBindingParent] = &arrays[kParent];
  out[gpu::kBindingRareIndex] = &arrays[kRareIndex];
  out[gpu::kBindingStaticIndex] = &arrays[kStaticIndex];
  out[gpu::kBindingRare] = which == 1 ? &value_deltas : &rare;  // scene_layout.h
  out[gpu::kBindingFrozen] = &frozen;
  out[gpu::kBindingWorld] = &world;
  out[gpu::kBindingLevels] = &levels;
  out[gpu::kBindingDeltas] = &deltas;
  out[gpu::kBindingList] = &list_of(which);
  out[gpu::kBindingDirty] = &dirty;
}

// The buffer behind each binding (the first piece of each array); an absent optional table is
// stood in for by the flags buffer (never read: no flag points into it).
void Propagator::Impl::binding_buffers(const Buffer* out[gpu::kBindingCount], int which) const {
  const Pieced* a[gpu::kBindingCount];
  binding_arrays(a, which);
  for (uint32_t i = 0; i < gpu::kBindingCount; ++i)
    out[i] = *a[i] ? &a[i]->device[0] : &arrays[kFlags].device[0];
}

// The buffer and the texel format behind each texel binding of set 0 (scene_layout.h kTexel*).
void Propagator::Impl::texel_buffers(const Buffer* out[gpu::kTexelCount],
                                     VkFormat format[gpu::kTexelCount],
                                     uint32_t binding[gpu::kTexelCount]) const {
  const Buffer* b[gpu::kBindingCount];
  binding_buffers(b, 0);
  const std::pair<uint32_t, VkFormat> of[gpu::kTexelCount] = {
      {gpu::kBindingWorld, VK_FORMAT_R32G32B32A32_SFLOAT},  // columns, or Affine3x4 rows
      {gpu::kBindingTranslation, VK_FORMAT_R32G32B32A32_SFLOAT},
      {gpu::kBindingRotation, VK_FORMAT_R32G32B32A32_SFLOAT},
      {gpu::kBindingScale, VK_FORMAT_R32G32B32A32_SFLOAT},
      {gpu::kBindingList, VK_FORMAT_R32_UINT},
      {gpu::kBindingParent, VK_FORMAT_R32_UINT},
      {gpu::kBindingDirty, VK_FORMAT_R32_UINT}};
  static_assert(gpu::kTexelWorld == 0 && gpu::kTexelTranslation == 1 && gpu::kTexelRotation == 2 &&
                gpu::kTexelScale == 3 && gpu::kTexelList == 4 && gpu::kTexelParent == 5 &&
                gpu::kTexelDirty == 6);
  for (uint32_t t = 0; t < gpu::kTexelCount; ++t) {
    out[t] = b[of[t].first];
    format[t] = of[t].second;
    binding[t] = of[t].first;
  }
}

// The bytes of each binding of set `which` that this frame's passes may reach: the elements in
// use, not the buffer, whose slack (or what an earlier frame needed: the deltas of a frame that
// changed every entity) may pass one binding's range while the frame's data fits. Each is an
// upper bound of the indices the passes use: slots below the store's slot capacity, the rare
// and frozen records handed out, the levels buffer's table, order changes and run tables, this
// frame's deltas of both kinds, the list's entries.
void Propagator::Impl::binding_extents(VkDeviceSize out[gpu::kBindingCount], int which) const {
  auto in_use = [](const Pieced& m, uint64_t elements) -> VkDeviceSize {
    return m ? std::min<uint64_t>(elements, m.capacity) * m.stride : 0;
  };
  const uint32_t per_slot[] = {gpu::kBindingFlags,     gpu::kBindingTranslation,
                               gpu::kBindingRotation,  gpu::kBindingScale,
                               gpu::kBindingParent,    gpu::kBindingRareIndex,
                               gpu::kBindingStaticIndex};
  static_assert(std::size(per_slot) == kArrays);
  for (int a = 0; a < kArrays; ++a) out[per_slot[a]] = in_use(arrays[a], slots);
  out[gpu::kBindingRare] = which == 1 ? in_use(value_deltas, value_count) : in_use(rare, rare_count);
  out[gpu::kBindingFrozen] = in_use(frozen, static_count);
  out[gpu::kBindingWorld] = in_use(world, slots);
  out[gpu::kBindingLevels] = in_use(levels, levels_used);
  out[gpu::kBindingDeltas] = in_use(deltas, delta_count);
  const Pieced& list = list_of(which);
  out[gpu::kBindingList] =
      in_use(list, &list == &work_list ? stats.evaluated_entities : order.entries().size());
  out[gpu::kBindingDirty] = in_use(dirty, slots);
}

// The most bytes one storage-buffer descriptor binds (PropagatorOptions::max_binding_bytes).
VkDeviceSize Propagator::Impl::binding_range() const {
  VkDeviceSize range = s->properties.limits.maxStorageBufferRange;
  if (options.max_binding_bytes) range = std::min<VkDeviceSize>(range, options.max_binding_bytes);
  return range;
}

// Views of set 0's texel bindings for the texel variants, remade where a buffer changed; false
// (and nothing written) if some array they show spans several pieces or its part in use holds
// more texels than one view may (both formats used are ones Vulkan requires for uniform texel
// buffers). A buffer larger than a view is seen through its first maxTexelBufferElements
// texels, which hold the part in use.
Result<bool> Propagator::Impl::describe_texels() {
  const Buffer* b[gpu::kTexelCount];
  VkFormat format[gpu::kTexelCount];
  uint32_t binding[gpu::kTexelCount];
  texel_buffers(b, format, binding);
  VkDeviceSize extent[gpu::kBindingCount];
  binding_extents(extent, 0);
  auto texel_bytes = [&](uint32_t t) -> VkDeviceSize {
    return format[t] == VK_FORMAT_R32_UINT ? 4 : 16;
  };
  // Texels one view may hold: the device's limit, or max_binding_bytes' share.
  auto view_texels = [&](uint32_t t) -> uint64_t {
    const uint64_t most = s->properties.limits.maxTexelBufferElements;
    return options.max_binding_bytes
               ? std::min<uint64_t>(most, options.max_binding_bytes / texel_bytes(t))
               : most;
  };
  const Pieced* arrays_of[gpu::kBindingCount];
  binding_arrays(arrays_of, 0);
  for (uint32_t t = 0; t < gpu::kTexelCount; ++t)  // (a view holds at least one texel)
    if (arrays_of[binding[t]]->pieces() > 1 || view_texels(t) == 0 ||
        extent[binding[t]] > view_texels(t) * texel_bytes(t))
      return false;
  for (uint32_t t = 0; t < gpu::kTexelCount; ++t) {
    if (texel_viewed[t] == b[t]->handle() && texel_views[t]) continue;
    const uint64_t texels = view_texels(t);
    VkBufferViewCreateInfo bvci{};
    bvci.sType = VK_STRUCTURE_TYPE_BUFFER_VIEW_CREATE_INFO;
    bvci.buffer = b[t]->handle();
    bvci.format = format[t];
    bvci.offset = 0;
    bvci.range = b[t]->size() / texel_bytes(t) <= texels ? VK_WHOLE_SIZE : texels * texel_bytes(t);
    VkBufferView view = VK_NULL_HANDLE;
    const VkResult r = s->vk.vkCreateBufferView(s->device, &bvci, nullptr, &view);
    if (r != VK_SUCCESS) return Error{"creating a texel buffer view failed: " + describe(r)};
    // The set no longer names the old view once this write is done, and no frame that used it
    // is pending (update() runs after the previous frame completed).
    VkWriteDescriptorSet w{};
    w.sType = VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET;
    w.dstSet = descriptor_sets[0];
    w.dstBinding = gpu::kBindingCount + t;
    w.descriptorCount = 1;
    w.descriptorType = VK_DESCRIPTOR_TYPE_UNIFORM_TEXEL_BUFFER;
    w.pTexelBufferView = &view;
    s->vk.vkUpdateDescriptorSets(s->device, 1, &w, 0, nullptr);
    if (texel_views[t]) s->vk.vkDestroyBufferView(s->device, texel_views[t], nullptr);
    texel_views[t] = view;
    texel_viewed[t] = b[t]->handle();
  }
  return true;
}

// Descriptors when allowed and every array is one piece whose part in use fits in one binding,
// else device addresses; with texel reads where allowed and every array the texel views show is
// one piece whose part in use fits a view (AddressTexels beside device addresses: lavapipe's
// scenes past 2 million entities, 3 to 7 times slower there through addresses alone). The
// decision is the frame's own: a buffer that grew for one large frame (the deltas of a frame
// that changed every entity of a 1M scene, with their slack, need more than lavapipe's 128 MiB
// binding) does not keep the frames after it on device addresses. A buffer larger than a
// binding is bound through its first bytes.
// Sets are rewritten only where a buffer behind them changed (growth, a new table, the other
// list), which update() may do because the previous frame has completed.
Status Propagator::Impl::choose_addressing() {
  const VkPhysicalDeviceLimits& lim = s->properties.limits;
  const VkDeviceSize range = binding_range();
  const Buffer* b[gpu::kBindingCount];
  const bool sets = descriptor_sets[1] != VK_NULL_HANDLE;
  bool fits = options.prefer_descriptors && sets &&
              lim.maxPerStageDescriptorStorageBuffers >= gpu::kBindingCount &&
              lim.maxDescriptorSetStorageBuffers >= gpu::kBindingCount;
  for (const Pieced* m : std::as_const(*this).all_pieced()) fits = fits && m->pieces() <= 1;
  for (int which = 0; which < 2 && fits; ++which) {  // both sets: the order may be the larger list
    VkDeviceSize extent[gpu::kBindingCount];
    binding_extents(extent, which);
    for (uint32_t i = 0; i < gpu::kBindingCount && fits; ++i) fits = extent[i] <= range;
  }
  // A replaced buffer may come back with a freed handle's value: rewrite everything then.
  for (int which = 0; which < 2; ++which) {
    if (described_generation[which] == buffers_generation) continue;
    std::fill(std::begin(described[which]), std::end(described[which]), VkBuffer(VK_NULL_HANDLE));
    if (which == 0)
      std::fill(std::begin(texel_viewed), std::end(texel_viewed), VkBuffer(VK_NULL_HANDLE));
    described_generation[which] = buffers_generation;
  }
  addressing = fits ? Addressing::Descriptors : Addressing::DeviceAddress;
  for (int which = 0; which < 2 && fits; ++which) {
    binding_buffers(b, which);
    VkDescriptorBufferInfo infos[gpu::kBindingCount];
    VkWriteDescriptorSet writes[gpu::kBindingCount];
    uint32_t count = 0;
    for (uint32_t i = 0; i < gpu::kBindingCount; ++i) {
      if (described[which][i] == b[i]->handle()) continue;
      // Constant for a buffer, so a set naming this handle already binds the same range.
      infos[count] = {b[i]->handle(), 0, b[i]->size() <= range ? VK_WHOLE_SIZE : range};
      writes[count] = storage_buffer_write(descriptor_sets[which], i, &infos[count]);
      described[which][i] = b[i]->handle();
      ++count;
    }
    if (count) s->vk.vkUpdateDescriptorSets(s->device, count, writes, 0, nullptr);
  }
  // Beside device addresses, texel reads only where the options ask for descriptors (the
  // scene outgrew them) or for texel reads outright: prefer_descriptors = false alone keeps
  // every array on its address.
  const bool texels_wanted = (fits || options.prefer_descriptors)
                                 ? texel_reads()
                                 : options.texel_reads == TexelReads::Always;
  if (!texels_wanted || !sets) return ok_status();
  Result<bool> texels = describe_texels();
  if (!texels) return texels.error();
  if (*texels) addressing = fits ? Addressing::Texels : Addressing::AddressTexels;
  return ok_status();
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
  p.rare = which == 1 ? value_deltas.table : rare.table;  // the scatters read no rare record
  p.frozen = frozen.table;
  p.local_to_world = world.table;
  p.levels = levels.table;
  p.deltas = deltas.table;
  p.list = list_of(which).table;
  p.dirty = dirty.table;
  return p;
}

}  // namespace tprop
