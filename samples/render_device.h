// The renderer sample's own Vulkan device, created the way an application creates it: plain
// Vulkan through the loader, with what tprop::required_device_setup() asks for enabled, and one
// queue family that does graphics and compute. tprop adopts it; it never owns it.
#pragma once

#include <memory>

#include <vulkan/vulkan.h>

#include "result.h"
#include "vk_context.h"

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

  // What the device was created with, kept for tprop's AdoptInfo (adopt checks it against
  // required_device_setup()): the instance's apiVersion and the VkDeviceCreateInfo's feature
  // chain and extensions. Heap-held, so the chain's pointers survive moves of AppDevice.
  struct CreatedWith {
    DeviceRequirements needs;
    uint32_t api_version = 0;
    VkPhysicalDeviceVulkan13Features vk13{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_3_FEATURES};
    VkPhysicalDeviceVulkan12Features vk12{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES};
    VkPhysicalDeviceFeatures2 features{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2};
    VkDeviceCreateInfo create_info{VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO};  // no queue infos kept
  };
  const CreatedWith& created_with() const { return *created_with_; }

 private:
  AppDevice() = default;
  void release();
  std::unique_ptr<CreatedWith> created_with_;
};

// Index of a memory type with the wanted properties among those `type_bits` allows, or an error.
Result<uint32_t> find_memory_type(VkPhysicalDevice physical_device, uint32_t type_bits,
                                  VkMemoryPropertyFlags wanted);

}  // namespace tprop::sample
