// The renderer sample's own Vulkan device, created the way an application creates it: plain
// Vulkan through the loader, with what tprop::required_device_setup() asks for enabled, and one
// queue family that does graphics and compute. tprop adopts it; it never owns it.
#pragma once

#include <vulkan/vulkan.h>

#include "result.h"

namespace tprop::sample {

class AppDevice {
 public:
  static Result<AppDevice> create();

  AppDevice(AppDevice&& other) noexcept;
  AppDevice& operator=(AppDevice&& other) noexcept;
  AppDevice(const AppDevice&) = delete;
  AppDevice& operator=(const AppDevice&) = delete;
  ~AppDevice();

  VkInstance instance = VK_NULL_HANDLE;
  VkPhysicalDevice physical_device = VK_NULL_HANDLE;
  VkDevice device = VK_NULL_HANDLE;
  VkQueue queue = VK_NULL_HANDLE;
  uint32_t queue_family = 0;
  bool debug_utils = false;

 private:
  AppDevice() = default;
  void release();
};

// Index of a memory type with the wanted properties among those `type_bits` allows, or an error.
Result<uint32_t> find_memory_type(VkPhysicalDevice physical_device, uint32_t type_bits,
                                  VkMemoryPropertyFlags wanted);

}  // namespace tprop::sample
