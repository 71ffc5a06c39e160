// Private to host/: everything a VulkanContext holds. It lives on the heap, so buffers,
// pipelines and propagators keep a stable pointer to it while the VulkanContext object moves.
#pragma once

#include "vk_volk_table.h"

#include <atomic>
#include <memory>
#include <mutex>
#include <string>

#include "vk_context.h"

namespace tprop {

class PipelineLibrary;  // vk_pipeline.h

// The instance-level functions tprop calls, loaded through the context's own
// vkGetInstanceProcAddr (never volk's globals).
struct InstanceFunctions {
  PFN_vkDestroyInstance vkDestroyInstance = nullptr;
  PFN_vkEnumeratePhysicalDevices vkEnumeratePhysicalDevices = nullptr;
  PFN_vkGetPhysicalDeviceProperties vkGetPhysicalDeviceProperties = nullptr;
  PFN_vkGetPhysicalDeviceProperties2 vkGetPhysicalDeviceProperties2 = nullptr;
  PFN_vkGetPhysicalDeviceFeatures2 vkGetPhysicalDeviceFeatures2 = nullptr;
  PFN_vkGetPhysicalDeviceQueueFamilyProperties vkGetPhysicalDeviceQueueFamilyProperties = nullptr;
  PFN_vkGetPhysicalDeviceMemoryProperties vkGetPhysicalDeviceMemoryProperties = nullptr;
  PFN_vkCreateDevice vkCreateDevice = nullptr;
  PFN_vkGetDeviceProcAddr vkGetDeviceProcAddr = nullptr;
  PFN_vkCreateDebugUtilsMessengerEXT vkCreateDebugUtilsMessengerEXT = nullptr;
  PFN_vkDestroyDebugUtilsMessengerEXT vkDestroyDebugUtilsMessengerEXT = nullptr;
  PFN_vkSetDebugUtilsObjectNameEXT vkSetDebugUtilsObjectNameEXT = nullptr;
  PFN_vkCmdBeginDebugUtilsLabelEXT vkCmdBeginDebugUtilsLabelEXT = nullptr;
  PFN_vkCmdEndDebugUtilsLabelEXT vkCmdEndDebugUtilsLabelEXT = nullptr;
};

struct ContextState {
  PFN_vkGetInstanceProcAddr get_instance_proc_addr = nullptr;
  InstanceFunctions in;
  VolkDeviceTable vk{};

  VkInstance instance = VK_NULL_HANDLE;
  VkPhysicalDevice physical_device = VK_NULL_HANDLE;
  VkDevice device = VK_NULL_HANDLE;
  VkQueue queue = VK_NULL_HANDLE;
  uint32_t queue_family = 0;
  bool owns_instance = false;
  bool owns_device = false;
  bool debug_utils = false;

  VkPhysicalDeviceProperties properties{};
  VkPhysicalDeviceMemoryProperties memory{};
  VkDeviceSize max_allocation_size = 0;
  VkDeviceSize max_buffer_size = 0;
  uint32_t timestamp_valid_bits = 0;

  VkDebugUtilsMessengerEXT messenger = VK_NULL_HANDLE;
  bool print_validation = true;
  std::atomic<uint32_t> validation_errors{0};
  std::atomic<uint32_t> validation_warnings{0};

  // The passes' pipelines, shared by every Propagator of this context: made by the first
  // (ComputePipelines::create), destroyed with the context, used under the mutex (Propagators
  // may be created and updated on different threads).
  mutable std::mutex pipelines_mutex;
  mutable std::unique_ptr<PipelineLibrary> pipelines;

  ~ContextState();
};

}  // namespace tprop
