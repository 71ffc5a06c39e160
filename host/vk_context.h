// The Vulkan context tprop runs on: created headless (tests, the CLI, tools) or adopted from an
// application that already has an instance, a device and a compute-capable queue.
//
// Device functions go through a table owned by this context (volk's VolkDeviceTable, loaded
// with the context's own vkGetDeviceProcAddr), never through global function pointers: tprop
// does not touch an application's globals, and two contexts can coexist in one process.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <vulkan/vulkan.h>

#include "result.h"

namespace tprop {

struct ContextState;  // host-private (vk_context_state.h)

// Where one device feature's VkBool32 lives: in the struct of this sType, at this byte offset.
// A core 1.0 feature is located in VkPhysicalDeviceFeatures2 (VkDeviceCreateInfo::
// pEnabledFeatures, a bare VkPhysicalDeviceFeatures, is read at the same place less the
// offset of VkPhysicalDeviceFeatures2::features).
struct FeatureLocation {
  VkStructureType s_type;
  size_t offset;
};

// One device feature tprop needs: its name in the Vulkan spec, and every struct that can enable
// it in a VkDeviceCreateInfo chain. The first is the VkPhysicalDeviceFeatures2 /
// VkPhysicalDeviceVulkan12Features / VkPhysicalDeviceVulkan13Features one, which enable_in sets
// and device selection checks; the others are the older extension structs the feature was
// promoted from (VkPhysicalDeviceSynchronization2Features, ...), which adopt accepts too.
struct RequiredFeature {
  const char* name;
  std::vector<FeatureLocation> where;
};

// What an application must enable on the instance and device it hands to
// VulkanContext::adopt: Vulkan 1.3, and the features listed (all core, no device extension).
// Device selection, enable_in and adopt's check all walk `features`, so a new requirement is one
// entry in required_device_setup().
struct DeviceRequirements {
  uint32_t api_version = VK_API_VERSION_1_3;
  std::vector<const char*> device_extensions;  // none today
  // Optional instance extension: debug names and labels in captures (RenderDoc) when enabled.
  std::vector<const char*> optional_instance_extensions{VK_EXT_DEBUG_UTILS_EXTENSION_NAME};
  // Today shaderInt64 (VkPhysicalDeviceFeatures), bufferDeviceAddress
  // (VkPhysicalDeviceVulkan12Features), synchronization2 (VkPhysicalDeviceVulkan13Features).
  std::vector<RequiredFeature> features;

  // Sets the required bits in the application's feature structs (leaves other bits alone).
  void enable_in(VkPhysicalDeviceFeatures2& features2, VkPhysicalDeviceVulkan12Features& vk12,
                 VkPhysicalDeviceVulkan13Features& vk13) const;
};
DeviceRequirements required_device_setup();

// Whether a feature is switched on in a chain of Vulkan feature structs that starts at `chain`
// (a VkDeviceCreateInfo's pNext, or a VkPhysicalDeviceFeatures2 and what it chains), or, for
// the core 1.0 features, in `core` (a VkDeviceCreateInfo's pEnabledFeatures; may be null).
bool feature_enabled(const RequiredFeature& feature, const void* chain,
                     const VkPhysicalDeviceFeatures* core = nullptr);

struct ContextOptions {
  // VK_LAYER_KHRONOS_validation with synchronization validation, and a messenger that counts
  // errors and warnings (validation_counts()). Fails if the layer is not installed.
  bool validation = false;
  // Prints validation messages to stderr as they come.
  bool print_validation = true;
  // Enable VK_EXT_debug_utils when the instance offers it (names and labels).
  bool debug_utils = true;
  // A device index or a case-insensitive name substring; empty: the TPROP_DEVICE environment
  // variable, else the first discrete GPU, then integrated, then virtual, then CPU (lavapipe).
  std::string device;
};

// What an application hands over. tprop never destroys these; they must outlive the context.
// The device must have been created with required_device_setup() enabled.
//
// Vulkan cannot be asked what a device was created with (a physical device only says what it
// could enable), and a feature tprop uses but the application forgot to enable is undefined
// behaviour that may work on one driver and fail on another. So adopt asks for the evidence:
// the VkDeviceCreateInfo the application gave vkCreateDevice and the apiVersion of its
// VkApplicationInfo, and returns an error naming each requirement missing from them
// ("... lacks synchronization2 ..."). Both are required: leaving them out is itself an error,
// so forgetting the check cannot pass silently. The create info (with its pNext chain and
// pEnabledFeatures) is read during adopt only; it need not outlive the call.
struct AdoptInfo {
  VkInstance instance = VK_NULL_HANDLE;
  VkPhysicalDevice physical_device = VK_NULL_HANDLE;
  VkDevice device = VK_NULL_HANDLE;
  VkQueue queue = VK_NULL_HANDLE;  // any queue of a compute-capable family
  uint32_t queue_family = 0;
  PFN_vkGetInstanceProcAddr get_instance_proc_addr = nullptr;
  bool debug_utils_enabled = false;  // the instance was created with VK_EXT_debug_utils
  const VkDeviceCreateInfo* device_create_info = nullptr;  // what vkCreateDevice was given
  uint32_t api_version = 0;  // the instance's VkApplicationInfo::apiVersion
};

struct ValidationCounts {
  uint32_t errors = 0;
  uint32_t warnings = 0;
};

// The context also keeps the compute pipelines its Propagators compile (shared by all of them),
// so the command buffers that recorded any Propagator's passes must have completed before the
// context is destroyed.
class VulkanContext {
 public:
  static Result<VulkanContext> create_headless(const ContextOptions& options = {});
  static Result<VulkanContext> adopt(const AdoptInfo& info);

  VulkanContext(VulkanContext&&) noexcept;
  VulkanContext& operator=(VulkanContext&&) noexcept;
  VulkanContext(const VulkanContext&) = delete;
  VulkanContext& operator=(const VulkanContext&) = delete;
  ~VulkanContext();

  VkInstance instance() const;
  VkPhysicalDevice physical_device() const;
  VkDevice device() const;
  VkQueue queue() const;
  uint32_t queue_family() const;
  std::string device_name() const;
  bool owns_device() const;
  bool debug_utils() const;
  // Errors and warnings reported by the validation layer so far (zero without validation).
  ValidationCounts validation_counts() const;

  const ContextState& state() const { return *state_; }

 private:
  explicit VulkanContext(std::unique_ptr<ContextState> state);
  std::unique_ptr<ContextState> state_;
};

// Names of the physical devices the loader reports, in enumeration order (TPROP_DEVICE indexes
// this list); an error when there is no loader or no device at all.
Result<std::vector<std::string>> list_devices();

// Whether a device selector (ContextOptions::device, TPROP_DEVICE) picks the device at `index`
// named `name`: all digits match the index, anything else a case-insensitive part of the name.
bool device_selector_matches(const std::string& selector, uint32_t index, const std::string& name);

// A message for a VkResult: the enum name and what to do.
std::string describe(VkResult result);

}  // namespace tprop
