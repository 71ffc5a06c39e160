#include "render_device.h"

#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "vk_context.h"

namespace tprop::sample {

namespace {
std::string vk_error(const char* what, VkResult r) { return std::string(what) + ": " + describe(r); }

bool has_extension(const std::vector<VkExtensionProperties>& list, const char* name) {
  for (const VkExtensionProperties& e : list)
    if (std::strcmp(e.extensionName, name) == 0) return true;
  return false;
}
}  // namespace

Result<AppDevice> AppDevice::create() {
  AppDevice app;
  app.created_with_ = std::make_unique<CreatedWith>();
  CreatedWith& with = *app.created_with_;
  with.needs = required_device_setup();
  const DeviceRequirements& needs = with.needs;
  with.api_version = needs.api_version;

  uint32_t count = 0;
  vkEnumerateInstanceExtensionProperties(nullptr, &count, nullptr);
  std::vector<VkExtensionProperties> instance_exts(count);
  vkEnumerateInstanceExtensionProperties(nullptr, &count, instance_exts.data());
  std::vector<const char*> enabled_instance_exts;
  for (const char* name : needs.optional_instance_extensions)
    if (has_extension(instance_exts, name)) enabled_instance_exts.push_back(name);
  app.debug_utils = has_extension(instance_exts, VK_EXT_DEBUG_UTILS_EXTENSION_NAME);

  VkApplicationInfo app_info{VK_STRUCTURE_TYPE_APPLICATION_INFO};
  app_info.pApplicationName = "tprop render sample";
  app_info.apiVersion = needs.api_version;
  VkInstanceCreateInfo ici{VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO};
  ici.pApplicationInfo = &app_info;
  ici.enabledExtensionCount = static_cast<uint32_t>(enabled_instance_exts.size());
  ici.ppEnabledExtensionNames = enabled_instance_exts.data();
  if (VkResult r = vkCreateInstance(&ici, nullptr, &app.instance); r != VK_SUCCESS)
    return Error{vk_error("vkCreateInstance failed (is a Vulkan driver installed? on Debian: "
                          "mesa-vulkan-drivers)", r)};

  count = 0;
  vkEnumeratePhysicalDevices(app.instance, &count, nullptr);
  std::vector<VkPhysicalDevice> devices(count);
  vkEnumeratePhysicalDevices(app.instance, &count, devices.data());
  // Prefer a discrete GPU, then any device, as long as one queue family does graphics + compute.
  int best_score = -1;
  for (VkPhysicalDevice pd : devices) {
    VkPhysicalDeviceProperties props;
    vkGetPhysicalDeviceProperties(pd, &props);
    if (props.apiVersion < needs.api_version) continue;
    uint32_t families = 0;
    vkGetPhysicalDeviceQueueFamilyProperties(pd, &families, nullptr);
    std::vector<VkQueueFamilyProperties> fprops(families);
    vkGetPhysicalDeviceQueueFamilyProperties(pd, &families, fprops.data());
    for (uint32_t f = 0; f < families; ++f) {
      const VkQueueFlags want = VK_QUEUE_GRAPHICS_BIT | VK_QUEUE_COMPUTE_BIT;
      if ((fprops[f].queueFlags & want) != want) continue;
      const int score = props.deviceType == VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU   ? 3
                        : props.deviceType == VK_PHYSICAL_DEVICE_TYPE_INTEGRATED_GPU ? 2
                                                                                     : 1;
      if (score > best_score) {
        best_score = score;
        app.physical_device = pd;
        app.queue_family = f;
      }
      break;
    }
  }
  if (app.physical_device == VK_NULL_HANDLE)
    return Error{"no Vulkan 1.3 device with a graphics+compute queue (on Debian, install "
                 "mesa-vulkan-drivers for lavapipe)"};

  // Whatever the application needs for itself, plus what tprop asks for.
  with.vk13.dynamicRendering = VK_TRUE;
  with.vk12.pNext = &with.vk13;
  with.features.pNext = &with.vk12;
  needs.enable_in(with.features, with.vk12, with.vk13);

  const float priority = 1.0f;
  VkDeviceQueueCreateInfo qci{VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO};
  qci.queueFamilyIndex = app.queue_family;
  qci.queueCount = 1;
  qci.pQueuePriorities = &priority;
  VkDeviceCreateInfo& dci = with.create_info;
  dci.pNext = &with.features;
  dci.queueCreateInfoCount = 1;
  dci.pQueueCreateInfos = &qci;
  dci.enabledExtensionCount = static_cast<uint32_t>(needs.device_extensions.size());
  dci.ppEnabledExtensionNames = needs.device_extensions.data();
  const VkResult created = vkCreateDevice(app.physical_device, &dci, nullptr, &app.device);
  dci.queueCreateInfoCount = 0;  // qci is local; what adopt reads is the chain and extensions
  dci.pQueueCreateInfos = nullptr;
  if (created != VK_SUCCESS) return Error{vk_error("vkCreateDevice failed", created)};
  vkGetDeviceQueue(app.device, app.queue_family, 0, &app.queue);
  return app;
}

Result<uint32_t> find_memory_type(VkPhysicalDevice physical_device, uint32_t type_bits,
                                  VkMemoryPropertyFlags wanted) {
  VkPhysicalDeviceMemoryProperties mp;
  vkGetPhysicalDeviceMemoryProperties(physical_device, &mp);
  for (uint32_t i = 0; i < mp.memoryTypeCount; ++i)
    if ((type_bits & (1u << i)) && (mp.memoryTypes[i].propertyFlags & wanted) == wanted) return i;
  return Error{"no memory type with the properties the renderer needs"};
}

AppDevice::AppDevice(AppDevice&& other) noexcept { *this = std::move(other); }

AppDevice& AppDevice::operator=(AppDevice&& other) noexcept {
  if (this != &other) {
    release();
    instance = std::exchange(other.instance, VK_NULL_HANDLE);
    physical_device = std::exchange(other.physical_device, VK_NULL_HANDLE);
    device = std::exchange(other.device, VK_NULL_HANDLE);
    queue = std::exchange(other.queue, VK_NULL_HANDLE);
    queue_family = other.queue_family;
    debug_utils = other.debug_utils;
    created_with_ = std::move(other.created_with_);
  }
  return *this;
}

AppDevice::~AppDevice() { release(); }

void AppDevice::release() {
  if (device != VK_NULL_HANDLE) {
    vkDeviceWaitIdle(device);
    vkDestroyDevice(device, nullptr);
    device = VK_NULL_HANDLE;
  }
  if (instance != VK_NULL_HANDLE) {
    vkDestroyInstance(instance, nullptr);
    instance = VK_NULL_HANDLE;
  }
}

}  // namespace tprop::sample
