#include "vk_context_state.h"

#include "propagator.h"

#include <algorithm>
#include <cstring>

#include "gpu_pack.h"
#include "scene_layout.h"
#include "vk_barrier.h"
#include "vk_buffer.h"
#include "vk_debug.h"
#include "vk_pipeline.h"

namespace tprop {

namespace {

using gpu::kNoIndex;

// The per-position input arrays, each a device buffer fed from a persistently mapped staging
// mirror of the same layout: a changed entity's bytes are written into the mirror at its
// position and copied over as part of one coalesced region.
enum Array : int { kFlags, kTranslation, kRotation, kScale, kParent, kRareIndex, kStaticIndex, kArrays };
constexpr VkDeviceSize kStride[kArrays] = {4, 16, 16, 16, 4, 4, 4};
constexpr const char* kArrayName[kArrays] = {"tprop.flags",  "tprop.translation", "tprop.rotation",
                                             "tprop.scale",  "tprop.parent",      "tprop.rare_index",
                                             "tprop.static_index"};

struct Range {
  uint32_t begin, end;  // [begin, end) in elements
};

// At most this many copy regions per array and frame. Thousands of tiny regions cost more to
// record and execute than a few larger ones (measured: the synchronization validation layer
// takes 20 times longer on a frame of 4096 regions per array than on one of 256). Merging runs
// across gaps is harmless, since the staging mirror holds every entity's current bytes, and is
// what a full re-pack or a growing rare table does.
constexpr size_t kMaxRegions = 256;
// A value-only frame whose changed entities form more runs than this uploads them compactly
// (EntityDelta records, one copy) and scatters them with a shader, so only their bytes move.
constexpr size_t kScatterAboveRuns = 64;

// Sorted, unique indices -> runs of consecutive indices, runs closer than a gap merged: no gap
// at first (only changed bytes move), wider gaps until at most kMaxRegions remain.
std::vector<Range> coalesce(std::vector<uint32_t>& indices) {
  std::sort(indices.begin(), indices.end());
  indices.erase(std::unique(indices.begin(), indices.end()), indices.end());
  std::vector<Range> out;
  for (uint32_t gap = 0;; gap = gap ? gap * 2 : 1) {
    out.clear();
    for (uint32_t i : indices) {
      if (!out.empty() && i - out.back().end <= gap) {
        out.back().end = i + 1;
      } else {
        out.push_back({i, i + 1});
      }
    }
    if (out.size() <= kMaxRegions) return out;
  }
}

// Sorts and de-duplicates `indices`; returns how many runs of consecutive indices they form.
size_t count_runs(std::vector<uint32_t>& indices) {
  std::sort(indices.begin(), indices.end());
  indices.erase(std::unique(indices.begin(), indices.end()), indices.end());
  size_t runs = 0;
  for (size_t k = 0; k < indices.size(); ++k)
    if (k == 0 || indices[k] != indices[k - 1] + 1) ++runs;
  return runs;
}

// One propagate dispatch: a wide level (one invocation per entity), or a run of narrow levels
// walked by one workgroup.
struct Step {
  bool narrow;
  uint32_t first, count;             // wide
  uint32_t level_begin, level_end;   // narrow
};

// A device buffer with its staging mirror, grown by whole reallocation.
struct Mirrored {
  Buffer device;
  Buffer staging;
  uint32_t capacity = 0;  // elements
};

}  // namespace

struct Propagator::Impl {
  const ContextState* s = nullptr;
  PropagatorOptions options;
  ComputePipelines pipes;
  VkDescriptorPool descriptor_pool = VK_NULL_HANDLE;
  VkDescriptorSet descriptor_set = VK_NULL_HANDLE;
  VkBuffer described[gpu::kBindingCount] = {};  // what descriptor_set points at now
  Addressing addressing = Addressing::DeviceAddress;
  GpuTimer timer;
  VkCommandPool pool = VK_NULL_HANDLE;
  VkCommandBuffer cmd = VK_NULL_HANDLE;
  VkFence fence = VK_NULL_HANDLE;

  DepthOrder order;
  bool packed = false;    // the GPU mirrors hold a complete packing of `order`
  bool recorded = true;   // the last update() has been recorded
  const EntityStore* last_store = nullptr;  // another store (or a moved one) packs everything

  Mirrored arrays[kArrays];
  Mirrored rare;       // gpu::RareRecord
  Mirrored levels;     // uint level offsets
  Mirrored deltas;     // gpu::EntityDelta, compact changes of a scattered value-only frame
  uint32_t delta_count = 0;  // > 0: the next record() scatters instead of copying positions
  Buffer world;        // LocalToWorld output, capacity = arrays[*].capacity
  Buffer frozen;       // mat4 by static index; device only
  uint32_t frozen_capacity = 0;
  Buffer readback;

  // Host bookkeeping.
  std::vector<uint32_t> rare_of_pos;   // position -> rare index
  std::vector<uint32_t> rare_free;
  uint32_t rare_count = 0;             // high-water mark of rare indices in use
  std::vector<uint32_t> static_of_slot;  // store slot -> static index
  std::vector<uint8_t> static_valid;     // static index -> the frozen table holds its value
  std::vector<uint32_t> static_free;
  uint32_t static_count = 0;
  std::vector<uint32_t> pending_statics;  // slots staged with StoreFrozen: re-check next frame

  // What the next record() uploads.
  std::vector<Range> dirty_positions;
  std::vector<Range> dirty_rare;
  bool levels_dirty = false;
  Buffer frozen_old;              // copied into `frozen` by the next record(), then dropped
  VkDeviceSize frozen_old_bytes = 0;
  std::vector<Step> steps;
  FrameStats stats;

  ~Impl() {
    if (!s) return;
    if (fence) s->vk.vkDestroyFence(s->device, fence, nullptr);
    if (descriptor_pool) s->vk.vkDestroyDescriptorPool(s->device, descriptor_pool, nullptr);
    if (pool) s->vk.vkDestroyCommandPool(s->device, pool, nullptr);
  }

  template <class T>
  T* staged(Array a) const { return static_cast<T*>(arrays[a].staging.mapped()); }
  gpu::RareRecord* staged_rare() const { return static_cast<gpu::RareRecord*>(rare.staging.mapped()); }

  Status grow(Mirrored& m, uint32_t needed, VkDeviceSize stride, const char* name, bool keep) {
    if (needed <= m.capacity && m.device) return ok_status();
    const uint32_t cap = std::max<uint32_t>({needed + needed / 8, 64u});
    auto dev = Buffer::create(*s, VkDeviceSize(cap) * stride, BufferKind::DeviceStorage, name);
    if (!dev) return dev.error();
    auto stage = Buffer::create(*s, VkDeviceSize(cap) * stride, BufferKind::Upload,
                                std::string(name) + ".staging");
    if (!stage) return stage.error();
    if (keep && m.staging)
      std::memcpy(stage->mapped(), m.staging.mapped(), VkDeviceSize(m.capacity) * stride);
    m.device = std::move(*dev);
    m.staging = std::move(*stage);
    m.capacity = cap;
    return ok_status();
  }

  Status ensure_entity_capacity(uint32_t n) {
    if (n <= arrays[0].capacity && world) return ok_status();
    for (int a = 0; a < kArrays; ++a)
      if (Status st = grow(arrays[a], n, kStride[a], kArrayName[a], false); !st) return st;
    auto w = Buffer::create(*s, VkDeviceSize(arrays[0].capacity) * sizeof(float4x4),
                            BufferKind::DeviceStorage, "tprop.local_to_world");
    if (!w) return w.error();
    world = std::move(*w);
    return ok_status();
  }

  Result<uint32_t> allocate_rare() {
    if (!rare_free.empty()) {
      const uint32_t r = rare_free.back();
      rare_free.pop_back();
      return r;
    }
    if (rare_count >= rare.capacity || !rare.device) {
      const uint32_t old_count = rare_count;
      if (Status st = grow(rare, rare_count + 1, sizeof(gpu::RareRecord), "tprop.rare", true); !st)
        return st.error();
      // A new device buffer: everything staged so far moves again.
      if (old_count) dirty_rare.push_back({0, old_count});
    }
    return rare_count++;
  }

  Result<uint32_t> static_index_for(uint32_t slot) {
    if (static_of_slot.size() <= slot) static_of_slot.resize(slot + 1, kNoIndex);
    if (static_of_slot[slot] != kNoIndex) return static_of_slot[slot];
    uint32_t idx;
    if (!static_free.empty()) {
      idx = static_free.back();
      static_free.pop_back();
    } else {
      idx = static_count++;
      if (idx >= frozen_capacity) {
        const uint32_t cap = std::max<uint32_t>(64u, frozen_capacity * 2);
        auto b = Buffer::create(*s, VkDeviceSize(cap) * sizeof(float4x4), BufferKind::DeviceStorage,
                                "tprop.frozen");
        if (!b) return b.error();
        if (frozen && !frozen_old) {  // keep the frozen values: copied over by record()
          frozen_old = std::move(frozen);
          frozen_old_bytes = VkDeviceSize(frozen_capacity) * sizeof(float4x4);
        }
        frozen = std::move(*b);
        frozen_capacity = cap;
        static_valid.resize(cap, 0);
      }
    }
    static_valid[idx] = 0;
    static_of_slot[slot] = idx;
    return idx;
  }

  void release_static(uint32_t slot) {
    if (slot >= static_of_slot.size() || static_of_slot[slot] == kNoIndex) return;
    static_valid[static_of_slot[slot]] = 0;
    static_free.push_back(static_of_slot[slot]);
    static_of_slot[slot] = kNoIndex;
  }

  // Packs the entity at `pos` into the staging mirrors.
  Status pack(const EntityStore& store, uint32_t pos, gpu::EntityDelta* delta = nullptr) {
    const uint32_t slot = order.slot[pos];
    const bool attached = order.attached(pos);

    StaticMode mode = StaticMode::NotStatic;
    uint32_t static_index = kNoIndex;
    if (store.has_at(slot, Component::Static)) {
      auto idx = static_index_for(slot);
      if (!idx) return idx.error();
      static_index = *idx;
      // As CpuReference: frozen once baked, unless this backend never computed it.
      if (store.static_baked_at(slot) && static_valid[static_index]) {
        mode = StaticMode::Frozen;
      } else {
        mode = StaticMode::Store;
        static_valid[static_index] = 1;  // the frame about to be recorded computes it
        pending_statics.push_back(slot);
      }
    } else {
      release_static(slot);
    }

    const PackedEntity e = pack_entity(store, slot, attached, mode);
    uint32_t rare_index = rare_of_pos[pos];
    if (e.needs_rare) {
      if (rare_index == kNoIndex) {
        auto r = allocate_rare();
        if (!r) return r.error();
        rare_index = *r;
      }
      staged_rare()[rare_index] = pack_rare(store, slot);
      dirty_rare.push_back({rare_index, rare_index + 1});
    } else if (rare_index != kNoIndex) {
      rare_free.push_back(rare_index);
      rare_index = kNoIndex;
    }
    rare_of_pos[pos] = rare_index;

    staged<uint32_t>(kFlags)[pos] = e.flags;
    staged<float4>(kTranslation)[pos] = e.translation;
    staged<float4>(kRotation)[pos] = e.rotation;
    staged<float4>(kScale)[pos] = e.scale;
    staged<uint32_t>(kParent)[pos] = order.parent[pos];
    staged<uint32_t>(kRareIndex)[pos] = rare_index;
    staged<uint32_t>(kStaticIndex)[pos] = static_index;
    if (delta) {
      *delta = gpu::EntityDelta{};
      delta->position = pos;
      delta->flags = e.flags;
      delta->parent = order.parent[pos];
      delta->rare_index = rare_index;
      delta->static_index = static_index;
      delta->translation = e.translation;
      delta->rotation = e.rotation;
      delta->scale = e.scale;
    }
    return ok_status();
  }

  void plan_steps() {
    steps.clear();
    const uint32_t level_count = order.level_count();
    uint32_t run_begin = 0, run_end = 0;  // narrow run [run_begin, run_end), empty when equal
    auto flush = [&] {
      if (run_end > run_begin) steps.push_back({true, 0, 0, run_begin, run_end});
      run_begin = run_end = 0;
    };
    for (uint32_t l = 1; l < level_count; ++l) {
      const uint32_t first = order.level_offsets[l];
      const uint32_t count = order.level_offsets[l + 1] - first;
      if (count > gpu::kNarrowLevelMax) {
        flush();
        steps.push_back({false, first, count, 0, 0});
        continue;
      }
      if (run_end == run_begin) run_begin = run_end = l;
      run_end = l + 1;
      if (run_end - run_begin == gpu::kNarrowLevelsPerDispatch) flush();
    }
    flush();
  }

  Status full_pack(const EntityStore& store) {
    const uint32_t n = order.size();
    if (Status st = ensure_entity_capacity(n); !st) return st;
    if (Status st = grow(levels, order.level_count() + 1, sizeof(uint32_t), "tprop.level_offsets",
                         false); !st)
      return st;
    std::copy(order.level_offsets.begin(), order.level_offsets.end(),
              static_cast<uint32_t*>(levels.staging.mapped()));
    levels_dirty = true;

    // Static indices of slots that are gone or no longer Static go back to the free list.
    for (uint32_t slot = 0; slot < static_of_slot.size(); ++slot)
      if (static_of_slot[slot] != kNoIndex &&
          (slot >= store.slot_capacity() || !store.alive_at(slot) ||
           !store.has_at(slot, Component::Static)))
        release_static(slot);

    rare_of_pos.assign(n, kNoIndex);
    rare_free.clear();
    rare_count = 0;
    dirty_rare.clear();
    pending_statics.clear();
    for (uint32_t pos = 0; pos < n; ++pos)
      if (Status st = pack(store, pos); !st) return st;
    dirty_positions.clear();
    delta_count = 0;
    if (n) dirty_positions.push_back({0, n});
    dirty_rare.clear();
    if (rare_count) dirty_rare.push_back({0, rare_count});
    plan_steps();
    stats.staged_entities = n;
    return ok_status();
  }

  Status incremental_pack(const EntityStore& store, const std::vector<uint32_t>& slots) {
    std::vector<uint32_t> positions;
    positions.reserve(slots.size() + pending_statics.size());
    auto add = [&](uint32_t slot) {
      if (slot < store.slot_capacity() && store.alive_at(slot) && slot < order.position.size() &&
          order.position[slot] != DepthOrder::kNone)
        positions.push_back(order.position[slot]);
    };
    for (uint32_t slot : slots) add(slot);
    // Statics computed last frame are baked now: their flags switch to ReadFrozen.
    std::vector<uint32_t> was_pending = std::move(pending_statics);
    pending_statics.clear();
    for (uint32_t slot : was_pending) add(slot);

    std::vector<uint32_t> rare_indices;
    dirty_rare.clear();
    delta_count = 0;
    if (count_runs(positions) > kScatterAboveRuns) {
      // Scattered changes: compact records plus the scatter shader.
      dirty_positions.clear();
      if (Status st = grow(deltas, uint32_t(positions.size()), sizeof(gpu::EntityDelta),
                           "tprop.deltas", false); !st)
        return st;
      auto* out = static_cast<gpu::EntityDelta*>(deltas.staging.mapped());
      for (uint32_t k = 0; k < positions.size(); ++k)
        if (Status st = pack(store, positions[k], &out[k]); !st) return st;
      delta_count = uint32_t(positions.size());
    } else {
      dirty_positions = coalesce(positions);
      for (const Range& r : dirty_positions)
        for (uint32_t pos = r.begin; pos < r.end; ++pos)
          if (Status st = pack(store, pos); !st) return st;
    }
    for (const Range& r : dirty_rare)
      for (uint32_t i = r.begin; i < r.end; ++i) rare_indices.push_back(i);
    dirty_rare = coalesce(rare_indices);
    stats.staged_entities = static_cast<uint32_t>(positions.size());
    return ok_status();
  }

  // The buffer behind each binding; an absent optional table is stood in for by the flags
  // buffer (never read: no flag points into it).
  void binding_buffers(const Buffer* out[gpu::kBindingCount]) const {
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

  // Descriptors when allowed and every array fits in one binding; the set is rewritten only
  // when a buffer behind it changed (growth, a new table), which update() may do because the
  // previous frame has completed.
  void choose_addressing() {
    const VkPhysicalDeviceLimits& lim = s->properties.limits;
    const Buffer* b[gpu::kBindingCount];
    binding_buffers(b);
    bool fits = options.prefer_descriptors && descriptor_set != VK_NULL_HANDLE &&
                lim.maxPerStageDescriptorStorageBuffers >= gpu::kBindingCount &&
                lim.maxDescriptorSetStorageBuffers >= gpu::kBindingCount;
    for (uint32_t i = 0; i < gpu::kBindingCount && fits; ++i)
      fits = b[i]->size() <= lim.maxStorageBufferRange;
    addressing = fits ? Addressing::Descriptors : Addressing::DeviceAddress;
    if (!fits) return;
    bool changed = false;
    for (uint32_t i = 0; i < gpu::kBindingCount; ++i) changed |= described[i] != b[i]->handle();
    if (!changed) return;
    VkDescriptorBufferInfo infos[gpu::kBindingCount];
    VkWriteDescriptorSet writes[gpu::kBindingCount];
    for (uint32_t i = 0; i < gpu::kBindingCount; ++i) {
      infos[i] = {b[i]->handle(), 0, VK_WHOLE_SIZE};
      writes[i] = VkWriteDescriptorSet{};
      writes[i].sType = VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET;
      writes[i].dstSet = descriptor_set;
      writes[i].dstBinding = i;
      writes[i].descriptorCount = 1;
      writes[i].descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER;
      writes[i].pBufferInfo = &infos[i];
      described[i] = b[i]->handle();
    }
    s->vk.vkUpdateDescriptorSets(s->device, gpu::kBindingCount, writes, 0, nullptr);
  }

  gpu::ScenePush push_constants() const {
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

  void copy(VkCommandBuffer c, const Mirrored& m, VkDeviceSize stride, const std::vector<Range>& ranges) {
    if (ranges.empty()) return;
    std::vector<VkBufferCopy> regions;
    regions.reserve(ranges.size());
    for (const Range& r : ranges) {
      const VkDeviceSize off = VkDeviceSize(r.begin) * stride;
      regions.push_back({off, off, VkDeviceSize(r.end - r.begin) * stride});
      stats.upload_bytes += regions.back().size;
    }
    s->vk.vkCmdCopyBuffer(c, m.staging.handle(), m.device.handle(),
                          static_cast<uint32_t>(regions.size()), regions.data());
    stats.copy_regions += static_cast<uint32_t>(regions.size());
  }
};

Propagator::Propagator(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Propagator::Propagator(Propagator&&) noexcept = default;
Propagator& Propagator::operator=(Propagator&&) noexcept = default;
Propagator::~Propagator() = default;

Result<Propagator> Propagator::create(const VulkanContext& context,
                                      const PropagatorOptions& options) {
  auto impl = std::make_unique<Impl>();
  const ContextState& s = context.state();
  impl->s = &s;
  impl->options = options;
  auto pipes = ComputePipelines::create(s);
  if (!pipes) return pipes.error();
  impl->pipes = std::move(*pipes);

  const VkDescriptorPoolSize pool_size{VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, gpu::kBindingCount};
  VkDescriptorPoolCreateInfo dpci{};
  dpci.sType = VK_STRUCTURE_TYPE_DESCRIPTOR_POOL_CREATE_INFO;
  dpci.maxSets = 1;
  dpci.poolSizeCount = 1;
  dpci.pPoolSizes = &pool_size;
  VkResult pr = s.vk.vkCreateDescriptorPool(s.device, &dpci, nullptr, &impl->descriptor_pool);
  if (pr != VK_SUCCESS) return Error{"creating a descriptor pool failed: " + describe(pr)};
  const VkDescriptorSetLayout set_layout = impl->pipes.set_layout();
  VkDescriptorSetAllocateInfo dsai{};
  dsai.sType = VK_STRUCTURE_TYPE_DESCRIPTOR_SET_ALLOCATE_INFO;
  dsai.descriptorPool = impl->descriptor_pool;
  dsai.descriptorSetCount = 1;
  dsai.pSetLayouts = &set_layout;
  pr = s.vk.vkAllocateDescriptorSets(s.device, &dsai, &impl->descriptor_set);
  if (pr != VK_SUCCESS) return Error{"allocating a descriptor set failed: " + describe(pr)};
  set_debug_name(s, VK_OBJECT_TYPE_DESCRIPTOR_SET, impl->descriptor_set, "tprop.scene");
  auto timer = GpuTimer::create(s);
  if (!timer) return timer.error();
  impl->timer = std::move(*timer);

  VkCommandPoolCreateInfo cpci{};
  cpci.sType = VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO;
  cpci.flags = VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT;
  cpci.queueFamilyIndex = s.queue_family;
  VkResult r = s.vk.vkCreateCommandPool(s.device, &cpci, nullptr, &impl->pool);
  if (r != VK_SUCCESS) return Error{"creating a command pool failed: " + describe(r)};
  VkCommandBufferAllocateInfo cbai{};
  cbai.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO;
  cbai.commandPool = impl->pool;
  cbai.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
  cbai.commandBufferCount = 1;
  r = s.vk.vkAllocateCommandBuffers(s.device, &cbai, &impl->cmd);
  if (r != VK_SUCCESS) return Error{"allocating a command buffer failed: " + describe(r)};
  set_debug_name(s, VK_OBJECT_TYPE_COMMAND_BUFFER, impl->cmd, "tprop.commands");
  VkFenceCreateInfo fci{};
  fci.sType = VK_STRUCTURE_TYPE_FENCE_CREATE_INFO;
  r = s.vk.vkCreateFence(s.device, &fci, nullptr, &impl->fence);
  if (r != VK_SUCCESS) return Error{"creating a fence failed: " + describe(r)};
  return Propagator(std::move(impl));
}

Status Propagator::update(EntityStore& store) {
  Impl& m = *impl_;
  StoreChanges changes = store.take_changes();
  m.stats = FrameStats{};
  if (m.packed && !m.recorded) {
    // The previous update() was never recorded: its staged changes and its Statics' first values
    // never reached the GPU. Pack everything again, computing those Statics anew.
    for (uint32_t slot : m.pending_statics)
      if (slot < m.static_of_slot.size() && m.static_of_slot[slot] != kNoIndex)
        m.static_valid[m.static_of_slot[slot]] = 0;
    m.packed = false;
  }
  m.recorded = false;
  if (&store != m.last_store) m.packed = false;
  m.last_store = &store;
  m.frozen_old.reset();  // the frame that copied it has completed (update() contract)
  Status st = ok_status();
  if (changes.hierarchy || !m.packed) {
    m.order = sort_by_depth(store);
    m.packed = false;
    m.stats.resorted = true;
    st = m.full_pack(store);
  } else {
    st = m.incremental_pack(store, changes.slots);
  }
  if (!st) {
    m.packed = false;  // pack everything again next time
    // Statics marked as computed by this failed frame were not: compute every Static once more.
    std::fill(m.static_valid.begin(), m.static_valid.end(), 0);
    m.dirty_positions.clear();
    m.dirty_rare.clear();
    m.delta_count = 0;
    m.steps.clear();
    return st;
  }
  m.packed = true;
  m.choose_addressing();
  m.stats.descriptors = m.addressing == Addressing::Descriptors;
  m.stats.entities = m.order.size();
  m.stats.levels = m.order.level_count();
  return ok_status();
}

void Propagator::record(VkCommandBuffer cmd) {
  Impl& m = *impl_;
  const ContextState& s = *m.s;
  assert(m.packed && "record() needs a successful update() first");
  if (!m.packed) return;
  const uint32_t n = m.order.size();
  m.stats.upload_bytes = 0;
  m.stats.copy_regions = 0;
  m.stats.dispatches = 0;

  begin_label(s, cmd, "tprop");
  m.timer.record_reset(cmd);
  m.timer.stamp(cmd, 0);

  // Upload. The previous frame's shaders may still read (WAR) or have written (WAW) these
  // buffers: order the copies after them.
  begin_label(s, cmd, "tprop.upload");
  barrier(s, cmd,
          {VK_PIPELINE_STAGE_2_COMPUTE_SHADER_BIT | VK_PIPELINE_STAGE_2_COPY_BIT,
           VK_ACCESS_2_SHADER_STORAGE_WRITE_BIT | VK_ACCESS_2_TRANSFER_WRITE_BIT},
          {VK_PIPELINE_STAGE_2_COPY_BIT | VK_PIPELINE_STAGE_2_COMPUTE_SHADER_BIT,
           VK_ACCESS_2_TRANSFER_WRITE_BIT | VK_ACCESS_2_TRANSFER_READ_BIT |
               VK_ACCESS_2_SHADER_STORAGE_READ_BIT | VK_ACCESS_2_SHADER_STORAGE_WRITE_BIT});
  for (int a = 0; a < kArrays; ++a) m.copy(cmd, m.arrays[a], kStride[a], m.dirty_positions);
  m.copy(cmd, m.rare, sizeof(gpu::RareRecord), m.dirty_rare);
  if (m.levels_dirty)
    m.copy(cmd, m.levels, sizeof(uint32_t), {{0, m.order.level_count() + 1}});
  if (m.frozen_old) {
    const VkBufferCopy region{0, 0, m.frozen_old_bytes};
    s.vk.vkCmdCopyBuffer(cmd, m.frozen_old.handle(), m.frozen.handle(), 1, &region);
    ++m.stats.copy_regions;
  }
  if (m.delta_count) {
    m.copy(cmd, m.deltas, sizeof(gpu::EntityDelta), {{0, m.delta_count}});
  }
  barrier(s, cmd, kTransferWrite, kComputeReadWrite);
  gpu::ScenePush push = m.push_constants();
  const PassPipelines& passes = m.pipes.passes(m.addressing);
  if (m.addressing == Addressing::Descriptors)
    s.vk.vkCmdBindDescriptorSets(cmd, VK_PIPELINE_BIND_POINT_COMPUTE, m.pipes.layout(), 0, 1,
                                 &m.descriptor_set, 0, nullptr);
  if (m.delta_count) {
    s.vk.vkCmdBindPipeline(cmd, VK_PIPELINE_BIND_POINT_COMPUTE, passes.scatter);
    push.first = 0;
    push.count = m.delta_count;
    m.pipes.push(cmd, push);
    dispatch_1d(s, cmd, (m.delta_count + gpu::kComposeGroupSize - 1) / gpu::kComposeGroupSize);
    ++m.stats.dispatches;
    barrier(s, cmd, kComputeWrite, kComputeReadWrite);
  }
  end_label(s, cmd);
  m.timer.stamp(cmd, 1);

  begin_label(s, cmd, "tprop.compose");
  if (n > 0) {
    s.vk.vkCmdBindPipeline(cmd, VK_PIPELINE_BIND_POINT_COMPUTE, passes.compose);
    push.first = 0;
    push.count = n;
    m.pipes.push(cmd, push);
    dispatch_1d(s, cmd, (n + gpu::kComposeGroupSize - 1) / gpu::kComposeGroupSize);
    ++m.stats.dispatches;
  }
  end_label(s, cmd);
  m.timer.stamp(cmd, 2);

  begin_label(s, cmd, "tprop.propagate");
  VkPipeline bound = VK_NULL_HANDLE;
  for (const Step& step : m.steps) {
    // Each level reads what the previous dispatch (or compose) wrote.
    barrier(s, cmd, kComputeWrite, kComputeReadWrite);
    const VkPipeline p = step.narrow ? passes.propagate_narrow : passes.propagate_wide;
    if (p != bound) {
      s.vk.vkCmdBindPipeline(cmd, VK_PIPELINE_BIND_POINT_COMPUTE, p);
      bound = p;
    }
    push.first = step.first;
    push.count = step.count;
    push.level_begin = step.level_begin;
    push.level_end = step.level_end;
    m.pipes.push(cmd, push);
    if (step.narrow) {
      s.vk.vkCmdDispatch(cmd, 1, 1, 1);
    } else {
      dispatch_1d(s, cmd, (step.count + gpu::kWideGroupSize - 1) / gpu::kWideGroupSize);
    }
    ++m.stats.dispatches;
  }
  end_label(s, cmd);
  m.timer.stamp(cmd, 3);
  end_label(s, cmd);
  m.timer.recorded_ = true;

  // Uploaded: a second record() of the same update() recomputes without copying again.
  m.dirty_positions.clear();
  m.dirty_rare.clear();
  m.levels_dirty = false;
  m.delta_count = 0;
  m.recorded = true;
}

Status Propagator::run(EntityStore& store) {
  Impl& m = *impl_;
  const ContextState& s = *m.s;
  if (Status st = update(store); !st) return st;
  VkResult r = s.vk.vkResetCommandBuffer(m.cmd, 0);
  VkCommandBufferBeginInfo begin{};
  begin.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO;
  begin.flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT;
  if (r == VK_SUCCESS) r = s.vk.vkBeginCommandBuffer(m.cmd, &begin);
  if (r != VK_SUCCESS) return Error{"beginning the command buffer failed: " + describe(r)};
  record(m.cmd);
  r = s.vk.vkEndCommandBuffer(m.cmd);
  if (r != VK_SUCCESS) return Error{"recording the command buffer failed: " + describe(r)};
  VkCommandBufferSubmitInfo cbsi{};
  cbsi.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_SUBMIT_INFO;
  cbsi.commandBuffer = m.cmd;
  VkSubmitInfo2 si{};
  si.sType = VK_STRUCTURE_TYPE_SUBMIT_INFO_2;
  si.commandBufferInfoCount = 1;
  si.pCommandBufferInfos = &cbsi;
  r = s.vk.vkQueueSubmit2(s.queue, 1, &si, m.fence);
  if (r != VK_SUCCESS) return Error{"submitting to the Vulkan queue failed: " + describe(r)};
  r = s.vk.vkWaitForFences(s.device, 1, &m.fence, VK_TRUE, UINT64_MAX);
  s.vk.vkResetFences(s.device, 1, &m.fence);
  if (r != VK_SUCCESS) return Error{"waiting for the GPU failed: " + describe(r)};
  store.mark_statics_baked();
  return ok_status();
}

OutputBinding Propagator::output() const {
  const Impl& m = *impl_;
  OutputBinding out;
  out.buffer = m.world.handle();
  out.range = VkDeviceSize(m.order.size()) * sizeof(float4x4);
  out.address = m.world.address();
  return out;
}

const DepthOrder& Propagator::order() const { return impl_->order; }
const FrameStats& Propagator::last_frame() const { return impl_->stats; }
Result<StageTimes> Propagator::stage_times() const { return impl_->timer.read(); }

Result<std::vector<float4x4>> Propagator::read_back() {
  Impl& m = *impl_;
  const ContextState& s = *m.s;
  const uint32_t n = m.order.size();
  std::vector<float4x4> out(n);
  if (n == 0 || !m.world) return out;
  const VkDeviceSize bytes = VkDeviceSize(n) * sizeof(float4x4);
  if (m.readback.size() < bytes) {
    auto b = Buffer::create(s, bytes, BufferKind::Readback, "tprop.readback");
    if (!b) return b.error();
    m.readback = std::move(*b);
  }
  VkResult r = s.vk.vkResetCommandBuffer(m.cmd, 0);
  VkCommandBufferBeginInfo begin{};
  begin.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO;
  begin.flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT;
  if (r == VK_SUCCESS) r = s.vk.vkBeginCommandBuffer(m.cmd, &begin);
  if (r != VK_SUCCESS) return Error{"beginning the command buffer failed: " + describe(r)};
  begin_label(s, m.cmd, "tprop.read_back");
  barrier(s, m.cmd, kComputeWrite, kTransferRead);
  const VkBufferCopy region{0, 0, bytes};
  s.vk.vkCmdCopyBuffer(m.cmd, m.world.handle(), m.readback.handle(), 1, &region);
  barrier(s, m.cmd, kTransferWrite, kHostRead);
  end_label(s, m.cmd);
  r = s.vk.vkEndCommandBuffer(m.cmd);
  if (r != VK_SUCCESS) return Error{"recording the read-back failed: " + describe(r)};
  VkCommandBufferSubmitInfo cbsi{};
  cbsi.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_SUBMIT_INFO;
  cbsi.commandBuffer = m.cmd;
  VkSubmitInfo2 si{};
  si.sType = VK_STRUCTURE_TYPE_SUBMIT_INFO_2;
  si.commandBufferInfoCount = 1;
  si.pCommandBufferInfos = &cbsi;
  r = s.vk.vkQueueSubmit2(s.queue, 1, &si, m.fence);
  if (r != VK_SUCCESS) return Error{"submitting the read-back failed: " + describe(r)};
  r = s.vk.vkWaitForFences(s.device, 1, &m.fence, VK_TRUE, UINT64_MAX);
  s.vk.vkResetFences(s.device, 1, &m.fence);
  if (r != VK_SUCCESS) return Error{"waiting for the read-back failed: " + describe(r)};
  m.readback.invalidate();
  std::memcpy(out.data(), m.readback.mapped(), bytes);
  return out;
}

}  // namespace tprop
