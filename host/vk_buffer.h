// A move-only Vulkan buffer with its own memory: device-local storage (with a device address
// for the shaders), the same in memory the host can also write (persistently mapped, where the
// device has such memory: integrated GPUs and CPU devices, whose device memory is host memory),
// host-visible upload staging (persistently mapped) or host-visible readback.
#pragma once

#include <cstdint>
#include <string>

#include <vulkan/vulkan.h>

#include "result.h"

namespace tprop {

struct ContextState;
class VulkanContext;

enum class BufferKind {
  DeviceStorage,  // device-local, storage + transfer src/dst, device address
  DeviceMapped,   // DeviceStorage in device-local, host-visible, coherent memory of the largest
                  // device-local heap, mapped (where device_mapped_memory())
  Upload,         // host-visible coherent, mapped, transfer src
  Readback,       // host-visible (cached when offered), mapped, transfer dst
};

// The memory types BufferKind::DeviceMapped may use (a bit per type): device-local, host-visible
// and coherent, in the largest device-local heap (a discrete GPU's host-visible window without
// resizable BAR, 256 MiB, would run out at a few million slots).
uint32_t device_mapped_types(const VkPhysicalDeviceMemoryProperties& memory);
// Whether the device has memory for BufferKind::DeviceMapped.
bool device_mapped_memory(const ContextState& context);

class Buffer {
 public:
  Buffer() = default;
  // Fails with a message naming `name` when the size exceeds the device's limits or memory
  // runs out. A zero size makes a minimal buffer (Vulkan forbids empty ones).
  static Result<Buffer> create(const ContextState& context, VkDeviceSize size, BufferKind kind,
                               const std::string& name);
  static Result<Buffer> create(const VulkanContext& context, VkDeviceSize size, BufferKind kind,
                               const std::string& name);

  Buffer(Buffer&& other) noexcept { *this = std::move(other); }
  Buffer& operator=(Buffer&& other) noexcept;
  Buffer(const Buffer&) = delete;
  Buffer& operator=(const Buffer&) = delete;
  ~Buffer() { reset(); }

  void reset();
  explicit operator bool() const { return buffer_ != VK_NULL_HANDLE; }
  VkBuffer handle() const { return buffer_; }
  VkDeviceSize size() const { return size_; }
  VkDeviceAddress address() const { return address_; }  // 0 unless DeviceStorage or Mapped
  void* mapped() const { return mapped_; }               // nullptr for DeviceStorage
  // For Readback buffers on non-coherent memory: makes device writes visible to the host.
  void invalidate() const;
  // Writes zeros over the whole buffer from the host, mapping its memory for the time it takes
  // unless it is mapped already; false (nothing written) where the memory is not host-visible
  // or cannot be mapped. Not while the device or another thread uses the buffer.
  bool zero_from_host() const;

 private:
  const ContextState* state_ = nullptr;
  VkBuffer buffer_ = VK_NULL_HANDLE;
  VkDeviceMemory memory_ = VK_NULL_HANDLE;
  VkDeviceSize size_ = 0;
  VkDeviceAddress address_ = 0;
  void* mapped_ = nullptr;
  bool coherent_ = true;
  bool host_visible_ = false;
};

}  // namespace tprop
