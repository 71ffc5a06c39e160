#include "vk_context_state.h"

#include "vk_buffer.h"
#include "vk_debug.h"

#include <algorithm>
#include <cstring>

namespace tprop {

namespace {

// The first memory type allowed by `bits` that has all of `want`, preferring one that also has
// `prefer`; -1 when none.
int find_memory_type(const VkPhysicalDeviceMemoryProperties& mem, uint32_t bits,
                     VkMemoryPropertyFlags want, VkMemoryPropertyFlags prefer) {
  int fallback = -1;
  for (uint32_t i = 0; i < mem.memoryTypeCount; ++i) {
    if (!(bits & (1u << i))) continue;
    const VkMemoryPropertyFlags f = mem.memoryTypes[i].propertyFlags;
    if ((f & want) != want) continue;
    if ((f & prefer) == prefer) return static_cast<int>(i);
    if (fallback < 0) fallback = static_cast<int>(i);
  }
  return fallback;
}

std::string mib(VkDeviceSize bytes) { return std::to_string(bytes >> 20) + " MiB"; }

VkMappedMemoryRange whole_memory(VkDeviceMemory memory) {
  VkMappedMemoryRange range{};
  range.sType = VK_STRUCTURE_TYPE_MAPPED_MEMORY_RANGE;
  range.memory = memory;
  range.offset = 0;
  range.size = VK_WHOLE_SIZE;
  return range;
}

}  // namespace

uint32_t device_mapped_types(const VkPhysicalDeviceMemoryProperties& mem) {
  constexpr VkMemoryPropertyFlags kShared = VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT |
                                            VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT |
                                            VK_MEMORY_PROPERTY_HOST_COHERENT_BIT;
  VkDeviceSize largest = 0;
  for (uint32_t h = 0; h < mem.memoryHeapCount; ++h)
    if (mem.memoryHeaps[h].flags & VK_MEMORY_HEAP_DEVICE_LOCAL_BIT)
      largest = std::max(largest, mem.memoryHeaps[h].size);
  uint32_t types = 0;
  for (uint32_t i = 0; i < mem.memoryTypeCount; ++i)
    if ((mem.memoryTypes[i].propertyFlags & kShared) == kShared &&
        mem.memoryHeaps[mem.memoryTypes[i].heapIndex].size == largest)
      types |= 1u << i;
  return types;
}

bool device_mapped_memory(const ContextState& s) { return device_mapped_types(s.memory) != 0; }

Result<Buffer> Buffer::create(const VulkanContext& context, VkDeviceSize size, BufferKind kind,
                              const std::string& name) {
  return create(context.state(), size, kind, name);
}

Result<Buffer> Buffer::create(const ContextState& s, VkDeviceSize size, BufferKind kind,
                              const std::string& name) {
  const VkDeviceSize bytes = size == 0 ? 256 : size;
  if (bytes > s.max_allocation_size || (s.max_buffer_size && bytes > s.max_buffer_size))
    return Error{"buffer '" + name + "' needs " + mib(bytes) + ", more than the device allows in "
                 "one allocation (" + mib(s.max_allocation_size) + "): use a smaller scene"};

  VkBufferCreateInfo bci{};
  bci.sType = VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO;
  bci.size = bytes;
  bci.sharingMode = VK_SHARING_MODE_EXCLUSIVE;
  VkMemoryPropertyFlags want = 0, prefer = 0;
  const bool device = kind == BufferKind::DeviceStorage || kind == BufferKind::DeviceMapped;
  switch (kind) {
    case BufferKind::DeviceStorage:
    case BufferKind::DeviceMapped:
      // Uniform texel buffer too: the texel variant of the evaluate passes views the arrays it
      // only reads as such (shaders/scene_layout.h).
      bci.usage = VK_BUFFER_USAGE_STORAGE_BUFFER_BIT | VK_BUFFER_USAGE_TRANSFER_SRC_BIT |
                  VK_BUFFER_USAGE_TRANSFER_DST_BIT | VK_BUFFER_USAGE_SHADER_DEVICE_ADDRESS_BIT |
                  VK_BUFFER_USAGE_UNIFORM_TEXEL_BUFFER_BIT;
      prefer = VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT;
      if (kind == BufferKind::DeviceMapped) {
        want = VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT | VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT |
               VK_MEMORY_PROPERTY_HOST_COHERENT_BIT;
        prefer = VK_MEMORY_PROPERTY_HOST_CACHED_BIT;  // scattered host stores
      }
      break;
    case BufferKind::Upload:
      bci.usage = VK_BUFFER_USAGE_TRANSFER_SRC_BIT;
      want = VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT;
      break;
    case BufferKind::Readback:
      bci.usage = VK_BUFFER_USAGE_TRANSFER_DST_BIT;
      want = VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT;
      prefer = VK_MEMORY_PROPERTY_HOST_CACHED_BIT;
      break;
  }

  Buffer out;
  out.state_ = &s;
  out.size_ = bytes;
  VkResult r = s.vk.vkCreateBuffer(s.device, &bci, nullptr, &out.buffer_);
  if (r != VK_SUCCESS) return Error{"creating buffer '" + name + "' (" + mib(bytes) + ") failed: " + describe(r)};

  VkMemoryRequirements req{};
  s.vk.vkGetBufferMemoryRequirements(s.device, out.buffer_, &req);
  const uint32_t allowed = kind == BufferKind::DeviceMapped
                              ? req.memoryTypeBits & device_mapped_types(s.memory)
                              : req.memoryTypeBits;
  const int type = find_memory_type(s.memory, allowed, want, prefer);
  if (type < 0)
    return Error{"no suitable memory type for buffer '" + name + "' on this device (it needs " +
                 std::string(kind == BufferKind::DeviceStorage ? "device"
                             : kind == BufferKind::DeviceMapped ? "host-visible device"
                                                                : "host-visible") +
                 " memory): choose another device with TPROP_DEVICE"};
  const VkMemoryPropertyFlags type_flags = s.memory.memoryTypes[type].propertyFlags;
  out.coherent_ = (type_flags & VK_MEMORY_PROPERTY_HOST_COHERENT_BIT) != 0;
  out.host_visible_ = (type_flags & VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT) != 0;

  VkMemoryAllocateFlagsInfo flags{};
  flags.sType = VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_FLAGS_INFO;
  flags.flags = VK_MEMORY_ALLOCATE_DEVICE_ADDRESS_BIT;
  VkMemoryAllocateInfo mai{};
  mai.sType = VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO;
  mai.pNext = device ? &flags : nullptr;
  mai.allocationSize = req.size;
  mai.memoryTypeIndex = static_cast<uint32_t>(type);
  r = s.vk.vkAllocateMemory(s.device, &mai, nullptr, &out.memory_);
  if (r != VK_SUCCESS)
    return Error{"allocating " + mib(req.size) + " for buffer '" + name + "' failed: " + describe(r)};
  r = s.vk.vkBindBufferMemory(s.device, out.buffer_, out.memory_, 0);
  if (r != VK_SUCCESS) return Error{"binding memory of buffer '" + name + "' failed: " + describe(r)};
  if (kind != BufferKind::DeviceStorage) {
    r = s.vk.vkMapMemory(s.device, out.memory_, 0, VK_WHOLE_SIZE, 0, &out.mapped_);
    if (r != VK_SUCCESS) return Error{"mapping buffer '" + name + "' failed: " + describe(r)};
  }
  if (device) {
    VkBufferDeviceAddressInfo info{};
    info.sType = VK_STRUCTURE_TYPE_BUFFER_DEVICE_ADDRESS_INFO;
    info.buffer = out.buffer_;
    out.address_ = s.vk.vkGetBufferDeviceAddress(s.device, &info);
  }
  set_debug_name(s, VK_OBJECT_TYPE_BUFFER, out.buffer_, name.c_str());
  set_debug_name(s, VK_OBJECT_TYPE_DEVICE_MEMORY, out.memory_, name.c_str());
  return out;
}

Buffer& Buffer::operator=(Buffer&& other) noexcept {
  if (this == &other) return *this;
  reset();
  state_ = other.state_;
  buffer_ = other.buffer_;
  memory_ = other.memory_;
  size_ = other.size_;
  address_ = other.address_;
  mapped_ = other.mapped_;
  coherent_ = other.coherent_;
  host_visible_ = other.host_visible_;
  other.buffer_ = VK_NULL_HANDLE;
  other.memory_ = VK_NULL_HANDLE;
  other.mapped_ = nullptr;
  other.size_ = 0;
  other.address_ = 0;
  return *this;
}

void Buffer::reset() {
  if (!state_) return;
  if (buffer_) state_->vk.vkDestroyBuffer(state_->device, buffer_, nullptr);
  if (memory_) state_->vk.vkFreeMemory(state_->device, memory_, nullptr);  // unmaps too
  buffer_ = VK_NULL_HANDLE;
  memory_ = VK_NULL_HANDLE;
  mapped_ = nullptr;
  size_ = 0;
  address_ = 0;
}

bool Buffer::zero_from_host() const {
  if (!memory_ || !host_visible_) return false;
  void* at = mapped_;
  if (!at && state_->vk.vkMapMemory(state_->device, memory_, 0, VK_WHOLE_SIZE, 0, &at) != VK_SUCCESS)
    return false;
  std::memset(at, 0, size_);
  if (!coherent_) {
    const VkMappedMemoryRange range = whole_memory(memory_);
    state_->vk.vkFlushMappedMemoryRanges(state_->device, 1, &range);
  }
  if (!mapped_) state_->vk.vkUnmapMemory(state_->device, memory_);
  return true;
}

void Buffer::invalidate() const {
  if (coherent_ || !memory_) return;
  const VkMappedMemoryRange range = whole_memory(memory_);
  state_->vk.vkInvalidateMappedMemoryRanges(state_->device, 1, &range);
}

}  // namespace tprop
