#include "vk_context_state.h"

#include <algorithm>
#include <cassert>
#include <cctype>
#include <cstddef>
#include <cstdlib>
#include <cstring>

#include "vk_debug.h"
#include "vk_pipeline.h"

namespace tprop {

namespace {

constexpr const char* kValidationLayer = "VK_LAYER_KHRONOS_validation";

template <class Fn>
void load(PFN_vkGetInstanceProcAddr gipa, VkInstance instance, Fn& fn, const char* name) {
  fn = reinterpret_cast<Fn>(gipa(instance, name));
}

void load_instance_functions(ContextState& s) {
  auto g = s.get_instance_proc_addr;
  auto& f = s.in;
  load(g, s.instance, f.vkDestroyInstance, "vkDestroyInstance");
  load(g, s.instance, f.vkEnumeratePhysicalDevices, "vkEnumeratePhysicalDevices");
  load(g, s.instance, f.vkGetPhysicalDeviceProperties, "vkGetPhysicalDeviceProperties");
  load(g, s.instance, f.vkGetPhysicalDeviceProperties2, "vkGetPhysicalDeviceProperties2");
  load(g, s.instance, f.vkGetPhysicalDeviceFeatures2, "vkGetPhysicalDeviceFeatures2");
  load(g, s.instance, f.vkGetPhysicalDeviceQueueFamilyProperties,
       "vkGetPhysicalDeviceQueueFamilyProperties");
  load(g, s.instance, f.vkGetPhysicalDeviceMemoryProperties, "vkGetPhysicalDeviceMemoryProperties");
  load(g, s.instance, f.vkCreateDevice, "vkCreateDevice");
  load(g, s.instance, f.vkGetDeviceProcAddr, "vkGetDeviceProcAddr");
  if (s.debug_utils) {
    load(g, s.instance, f.vkCreateDebugUtilsMessengerEXT, "vkCreateDebugUtilsMessengerEXT");
    load(g, s.instance, f.vkDestroyDebugUtilsMessengerEXT, "vkDestroyDebugUtilsMessengerEXT");
    load(g, s.instance, f.vkSetDebugUtilsObjectNameEXT, "vkSetDebugUtilsObjectNameEXT");
    load(g, s.instance, f.vkCmdBeginDebugUtilsLabelEXT, "vkCmdBeginDebugUtilsLabelEXT");
    load(g, s.instance, f.vkCmdEndDebugUtilsLabelEXT, "vkCmdEndDebugUtilsLabelEXT");
  }
}

constexpr const char* kNoLoader =
    "no Vulkan loader (libvulkan.so.1) could be loaded: install the Vulkan loader (Debian: "
    "libvulkan1) and a driver (mesa-vulkan-drivers for lavapipe)";

// The loader's vkGetInstanceProcAddr, loaded once per process (volk under tprop's own names);
// nullptr when there is no loader.
PFN_vkGetInstanceProcAddr loader_entry() {
  static const VkResult loaded = volkInitialize();
  if (loaded != VK_SUCCESS) return nullptr;
  return vkGetInstanceProcAddr;  // volk's private global after volkInitialize
}

// The feature structs tprop's requirements live in, chained features -> vk12 -> vk13: for
// vkGetPhysicalDeviceFeatures2 (what a device has) and VkDeviceCreateInfo::pNext (what to
// enable). Not copyable: the chain points into itself.
struct FeatureChain {
  VkPhysicalDeviceFeatures2 features{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2};
  VkPhysicalDeviceVulkan12Features vk12{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES};
  VkPhysicalDeviceVulkan13Features vk13{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_3_FEATURES};
  FeatureChain() {
    features.pNext = &vk12;
    vk12.pNext = &vk13;
  }
  FeatureChain(const FeatureChain&) = delete;
  FeatureChain& operator=(const FeatureChain&) = delete;
};

// The VkBool32 at a byte offset in a Vulkan feature struct (all of them are standard layout).
VkBool32& bool_at(void* s, size_t offset) {
  return *reinterpret_cast<VkBool32*>(static_cast<char*>(s) + offset);
}
VkBool32 bool_at(const void* s, size_t offset) {
  return *reinterpret_cast<const VkBool32*>(static_cast<const char*>(s) + offset);
}

std::string version_name(uint32_t v) {
  return std::to_string(VK_API_VERSION_MAJOR(v)) + "." + std::to_string(VK_API_VERSION_MINOR(v));
}

// What adopt can check of the application's own setup: the apiVersion its instance asked for,
// and what its VkDeviceCreateInfo enabled, against required_device_setup(). Every miss is named.
Status check_adopted_setup(const AdoptInfo& info) {
  const DeviceRequirements needs = required_device_setup();
  if (!info.device_create_info)
    return Error{"VulkanContext::adopt needs AdoptInfo::device_create_info, the "
                 "VkDeviceCreateInfo the device was created with (Vulkan cannot be asked what a "
                 "device enabled, so tprop checks it against required_device_setup())"};
  if (info.api_version == 0)
    return Error{"VulkanContext::adopt needs AdoptInfo::api_version, the apiVersion of the "
                 "instance's VkApplicationInfo (tprop needs Vulkan " +
                 version_name(needs.api_version) + ")"};
  std::string missing;
  auto miss = [&](const std::string& what) { missing += (missing.empty() ? "" : ", ") + what; };
  if (info.api_version < needs.api_version)
    miss("Vulkan " + version_name(needs.api_version) + " (the instance asked for " +
         version_name(info.api_version) + " in VkApplicationInfo::apiVersion)");
  const VkDeviceCreateInfo& dci = *info.device_create_info;
  for (const RequiredFeature& f : needs.features)
    if (!feature_enabled(f, dci.pNext, dci.pEnabledFeatures)) miss(f.name);
  for (const char* ext : needs.device_extensions) {
    bool on = false;
    for (uint32_t i = 0; i < dci.enabledExtensionCount; ++i)
      on = on || std::strcmp(dci.ppEnabledExtensionNames[i], ext) == 0;
    if (!on) miss(ext);
  }
  if (missing.empty()) return ok_status();
  return Error{"the adopted device was not created with what tprop needs: it lacks " + missing +
               " (enable required_device_setup() before vkCreateDevice: set "
               "VkApplicationInfo::apiVersion to its api_version and call its enable_in on the "
               "VkDeviceCreateInfo's feature chain)"};
}

struct Support {
  bool ok = false;
  std::string why;  // when not ok
  uint32_t queue_family = 0;
  uint32_t timestamp_bits = 0;
};

Support check_support(const ContextState& s, VkPhysicalDevice pd) {
  Support out;
  VkPhysicalDeviceProperties props{};
  s.in.vkGetPhysicalDeviceProperties(pd, &props);
  if (props.apiVersion < VK_API_VERSION_1_3) {
    out.why = "supports Vulkan " + std::to_string(VK_API_VERSION_MAJOR(props.apiVersion)) + "." +
              std::to_string(VK_API_VERSION_MINOR(props.apiVersion)) + ", tprop needs 1.3";
    return out;
  }
  FeatureChain has;
  s.in.vkGetPhysicalDeviceFeatures2(pd, &has.features);
  for (const RequiredFeature& f : required_device_setup().features)
    if (!feature_enabled(f, &has.features)) {
      out.why = std::string("lacks ") + f.name;
      return out;
    }

  uint32_t count = 0;
  s.in.vkGetPhysicalDeviceQueueFamilyProperties(pd, &count, nullptr);
  std::vector<VkQueueFamilyProperties> families(count);
  s.in.vkGetPhysicalDeviceQueueFamilyProperties(pd, &count, families.data());
  int best = -1;
  for (uint32_t i = 0; i < count; ++i) {
    if (!(families[i].queueFlags & VK_QUEUE_COMPUTE_BIT)) continue;
    // Prefer a family with timestamps (per-stage times).
    if (best < 0 || (families[i].timestampValidBits > 0 && families[best].timestampValidBits == 0))
      best = static_cast<int>(i);
  }
  if (best < 0) {
    out.why = "has no compute queue";
    return out;
  }
  out.ok = true;
  out.queue_family = static_cast<uint32_t>(best);
  out.timestamp_bits = families[best].timestampValidBits;
  return out;
}

int type_rank(VkPhysicalDeviceType t) {
  switch (t) {
    case VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU: return 0;
    case VK_PHYSICAL_DEVICE_TYPE_INTEGRATED_GPU: return 1;
    case VK_PHYSICAL_DEVICE_TYPE_VIRTUAL_GPU: return 2;
    case VK_PHYSICAL_DEVICE_TYPE_CPU: return 3;
    default: return 4;
  }
}

std::string lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

Status fill_device_info(ContextState& s) {
  s.in.vkGetPhysicalDeviceProperties(s.physical_device, &s.properties);
  s.in.vkGetPhysicalDeviceMemoryProperties(s.physical_device, &s.memory);
  VkPhysicalDeviceVulkan13Properties vk13{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_3_PROPERTIES};
  VkPhysicalDeviceVulkan11Properties vk11{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_1_PROPERTIES,
                                         &vk13};
  VkPhysicalDeviceProperties2 p2{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2, &vk11};
  s.in.vkGetPhysicalDeviceProperties2(s.physical_device, &p2);
  s.max_allocation_size = vk11.maxMemoryAllocationSize;
  s.max_buffer_size = vk13.maxBufferSize;
  const Support support = check_support(s, s.physical_device);
  if (!support.ok)
    return Error{std::string("Vulkan device '") + s.properties.deviceName + "' " + support.why};
  uint32_t count = 0;
  s.in.vkGetPhysicalDeviceQueueFamilyProperties(s.physical_device, &count, nullptr);
  std::vector<VkQueueFamilyProperties> families(count);
  s.in.vkGetPhysicalDeviceQueueFamilyProperties(s.physical_device, &count, families.data());
  if (s.queue_family >= count || !(families[s.queue_family].queueFlags & VK_QUEUE_COMPUTE_BIT))
    return Error{"queue family " + std::to_string(s.queue_family) + " of '" +
                 s.properties.deviceName + "' is not compute-capable"};
  s.timestamp_valid_bits = families[s.queue_family].timestampValidBits;
  return ok_status();
}

Result<VkPhysicalDevice> pick_device(ContextState& s, const std::string& wanted_option) {
  uint32_t count = 0;
  VkResult r = s.in.vkEnumeratePhysicalDevices(s.instance, &count, nullptr);
  std::vector<VkPhysicalDevice> devices(count);
  if (r == VK_SUCCESS && count > 0)
    r = s.in.vkEnumeratePhysicalDevices(s.instance, &count, devices.data());
  if (r < 0) return Error{"enumerating Vulkan devices failed: " + describe(r)};
  if (count == 0)
    return Error{"no Vulkan device found: install a driver (mesa-vulkan-drivers gives the "
                 "lavapipe CPU device)"};

  std::string wanted = wanted_option;
  std::string source = "the device option";  // names where the selector came from in errors
  if (wanted.empty()) {
    if (const char* env = std::getenv("TPROP_DEVICE")) wanted = env;
    source = "TPROP_DEVICE";
  }
  std::string rejected;
  auto name_of = [&](VkPhysicalDevice pd) {
    VkPhysicalDeviceProperties p{};
    s.in.vkGetPhysicalDeviceProperties(pd, &p);
    return std::string(p.deviceName);
  };
  if (!wanted.empty()) {
    for (uint32_t i = 0; i < count; ++i) {
      if (!device_selector_matches(wanted, i, name_of(devices[i]))) continue;
      const Support support = check_support(s, devices[i]);
      if (!support.ok)
        return Error{source + " '" + wanted + "' selects '" + name_of(devices[i]) + "', which " +
                     support.why + ": choose another device or update its driver"};
      return devices[i];
    }
    std::string names;
    for (uint32_t i = 0; i < count; ++i) names += " [" + std::to_string(i) + "] " + name_of(devices[i]);
    return Error{source + " '" + wanted + "' matches no Vulkan device; name one by index or by "
                 "part of its name, devices:" + names};
  }

  int best = -1;
  int best_rank = 1 << 30;
  for (uint32_t i = 0; i < count; ++i) {
    const Support support = check_support(s, devices[i]);
    if (!support.ok) {
      rejected += " '" + name_of(devices[i]) + "' " + support.why + ";";
      continue;
    }
    VkPhysicalDeviceProperties p{};
    s.in.vkGetPhysicalDeviceProperties(devices[i], &p);
    if (type_rank(p.deviceType) < best_rank) {
      best_rank = type_rank(p.deviceType);
      best = static_cast<int>(i);
    }
  }
  if (best < 0) return Error{"no usable Vulkan device:" + rejected};
  return devices[best];
}

bool has_layer(PFN_vkGetInstanceProcAddr gipa, const char* name) {
  auto enumerate = reinterpret_cast<PFN_vkEnumerateInstanceLayerProperties>(
      gipa(VK_NULL_HANDLE, "vkEnumerateInstanceLayerProperties"));
  uint32_t count = 0;
  if (!enumerate || enumerate(&count, nullptr) != VK_SUCCESS) return false;
  std::vector<VkLayerProperties> layers(count);
  if (enumerate(&count, layers.data()) < 0) return false;
  for (const auto& l : layers)
    if (std::strcmp(l.layerName, name) == 0) return true;
  return false;
}

bool has_instance_extension(PFN_vkGetInstanceProcAddr gipa, const char* layer, const char* name) {
  auto enumerate = reinterpret_cast<PFN_vkEnumerateInstanceExtensionProperties>(
      gipa(VK_NULL_HANDLE, "vkEnumerateInstanceExtensionProperties"));
  uint32_t count = 0;
  if (!enumerate || enumerate(layer, &count, nullptr) != VK_SUCCESS) return false;
  std::vector<VkExtensionProperties> exts(count);
  if (enumerate(layer, &count, exts.data()) < 0) return false;
  for (const auto& e : exts)
    if (std::strcmp(e.extensionName, name) == 0) return true;
  return false;
}

}  // namespace

void DeviceRequirements::enable_in(VkPhysicalDeviceFeatures2& features2,
                                   VkPhysicalDeviceVulkan12Features& vk12,
                                   VkPhysicalDeviceVulkan13Features& vk13) const {
  for (const RequiredFeature& f : features) {
    const FeatureLocation& at = f.where.front();
    // By the location's sType, not the caller's (which may not be filled in yet).
    void* target = nullptr;
    switch (at.s_type) {
      case VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2: target = &features2; break;
      case VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES: target = &vk12; break;
      case VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_3_FEATURES: target = &vk13; break;
      default: break;
    }
    // A requirement in another struct (say VkPhysicalDeviceVulkan11Features) needs a wider
    // enable_in.
    assert(target && "enable_in: a required feature lives in a struct it was not given");
    if (target) bool_at(target, at.offset) = VK_TRUE;
  }
}

DeviceRequirements required_device_setup() {
  DeviceRequirements r;
  r.features = {
      {"shaderInt64",
       {{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2,
         offsetof(VkPhysicalDeviceFeatures2, features) +
             offsetof(VkPhysicalDeviceFeatures, shaderInt64)}}},
      {"bufferDeviceAddress",
       {{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES,
         offsetof(VkPhysicalDeviceVulkan12Features, bufferDeviceAddress)},
        {VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_BUFFER_DEVICE_ADDRESS_FEATURES,
         offsetof(VkPhysicalDeviceBufferDeviceAddressFeatures, bufferDeviceAddress)}}},
      {"synchronization2",
       {{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_3_FEATURES,
         offsetof(VkPhysicalDeviceVulkan13Features, synchronization2)},
        {VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SYNCHRONIZATION_2_FEATURES,
         offsetof(VkPhysicalDeviceSynchronization2Features, synchronization2)}}},
  };
  return r;
}

bool feature_enabled(const RequiredFeature& feature, const void* chain,
                     const VkPhysicalDeviceFeatures* core) {
  for (const FeatureLocation& at : feature.where) {
    if (core && at.s_type == VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2 &&
        bool_at(core, at.offset - offsetof(VkPhysicalDeviceFeatures2, features)))
      return true;
    for (auto* s = static_cast<const VkBaseInStructure*>(chain); s; s = s->pNext)
      if (s->sType == at.s_type && bool_at(s, at.offset)) return true;
  }
  return false;
}

ContextState::~ContextState() {
  pipelines.reset();  // before the device they live on
  if (device != VK_NULL_HANDLE && owns_device && vk.vkDestroyDevice) {
    vk.vkDeviceWaitIdle(device);
    vk.vkDestroyDevice(device, nullptr);
  }
  if (messenger != VK_NULL_HANDLE && in.vkDestroyDebugUtilsMessengerEXT)
    in.vkDestroyDebugUtilsMessengerEXT(instance, messenger, nullptr);
  if (instance != VK_NULL_HANDLE && owns_instance && in.vkDestroyInstance)
    in.vkDestroyInstance(instance, nullptr);
}

VulkanContext::VulkanContext(std::unique_ptr<ContextState> state) : state_(std::move(state)) {}
VulkanContext::VulkanContext(VulkanContext&&) noexcept = default;
VulkanContext& VulkanContext::operator=(VulkanContext&&) noexcept = default;
VulkanContext::~VulkanContext() = default;

VkInstance VulkanContext::instance() const { return state_->instance; }
VkPhysicalDevice VulkanContext::physical_device() const { return state_->physical_device; }
VkDevice VulkanContext::device() const { return state_->device; }
VkQueue VulkanContext::queue() const { return state_->queue; }
uint32_t VulkanContext::queue_family() const { return state_->queue_family; }
std::string VulkanContext::device_name() const { return state_->properties.deviceName; }
bool VulkanContext::owns_device() const { return state_->owns_device; }
bool VulkanContext::debug_utils() const { return state_->debug_utils; }
ValidationCounts VulkanContext::validation_counts() const {
  return {state_->validation_errors.load(), state_->validation_warnings.load()};
}

Result<VulkanContext> VulkanContext::create_headless(const ContextOptions& options) {
  auto create = [&]() -> Result<VulkanContext> {
    const PFN_vkGetInstanceProcAddr gipa = loader_entry();
    if (!gipa) return Error{kNoLoader};
    auto s = std::make_unique<ContextState>();
    s->get_instance_proc_addr = gipa;
    s->print_validation = options.print_validation;

    auto create_instance = reinterpret_cast<PFN_vkCreateInstance>(
        s->get_instance_proc_addr(VK_NULL_HANDLE, "vkCreateInstance"));
    if (!create_instance) return Error{"the Vulkan loader has no vkCreateInstance"};

    std::vector<const char*> layers;
    std::vector<const char*> extensions;
    const bool debug_utils_available = has_instance_extension(
        s->get_instance_proc_addr, nullptr, VK_EXT_DEBUG_UTILS_EXTENSION_NAME);
    if (options.validation) {
      if (!has_layer(s->get_instance_proc_addr, kValidationLayer))
        return Error{"Vulkan validation was requested but VK_LAYER_KHRONOS_validation is not "
                     "installed (Debian: vulkan-validationlayers)"};
      if (!debug_utils_available)
        return Error{"Vulkan validation needs VK_EXT_debug_utils, which this loader lacks"};
      layers.push_back(kValidationLayer);
      extensions.push_back(VK_EXT_VALIDATION_FEATURES_EXTENSION_NAME);
    }
    s->debug_utils = debug_utils_available && (options.debug_utils || options.validation);
    if (s->debug_utils) extensions.push_back(VK_EXT_DEBUG_UTILS_EXTENSION_NAME);

    VkApplicationInfo app{};
    app.sType = VK_STRUCTURE_TYPE_APPLICATION_INFO;
    app.pApplicationName = "tprop";
    app.pEngineName = "tprop";
    app.apiVersion = VK_API_VERSION_1_3;

    // Synchronization validation on top of the default checks.
    const VkValidationFeatureEnableEXT enables[] = {
        VK_VALIDATION_FEATURE_ENABLE_SYNCHRONIZATION_VALIDATION_EXT};
    VkValidationFeaturesEXT features{};
    features.sType = VK_STRUCTURE_TYPE_VALIDATION_FEATURES_EXT;
    features.enabledValidationFeatureCount = 1;
    features.pEnabledValidationFeatures = enables;
    VkDebugUtilsMessengerCreateInfoEXT messenger_info = validation_messenger_info(*s);
    if (options.validation) features.pNext = &messenger_info;

    VkInstanceCreateInfo ici{};
    ici.sType = VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO;
    ici.pNext = options.validation ? &features : nullptr;
    ici.pApplicationInfo = &app;
    ici.enabledLayerCount = static_cast<uint32_t>(layers.size());
    ici.ppEnabledLayerNames = layers.data();
    ici.enabledExtensionCount = static_cast<uint32_t>(extensions.size());
    ici.ppEnabledExtensionNames = extensions.data();
    VkResult r = create_instance(&ici, nullptr, &s->instance);
    if (r != VK_SUCCESS) return Error{"creating the Vulkan instance failed: " + describe(r)};
    s->owns_instance = true;
    load_instance_functions(*s);

    if (options.validation) {
      r = s->in.vkCreateDebugUtilsMessengerEXT(s->instance, &messenger_info, nullptr,
                                               &s->messenger);
      if (r != VK_SUCCESS) return Error{"creating the validation messenger failed: " + describe(r)};
    }

    auto pd = pick_device(*s, options.device);
    if (!pd) return pd.error();
    s->physical_device = *pd;
    const Support support = check_support(*s, s->physical_device);
    s->queue_family = support.queue_family;

    const float priority = 1.0f;
    VkDeviceQueueCreateInfo qci{};
    qci.sType = VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO;
    qci.queueFamilyIndex = s->queue_family;
    qci.queueCount = 1;
    qci.pQueuePriorities = &priority;

    FeatureChain enable;
    required_device_setup().enable_in(enable.features, enable.vk12, enable.vk13);

    VkDeviceCreateInfo dci{};
    dci.sType = VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO;
    dci.pNext = &enable.features;
    dci.queueCreateInfoCount = 1;
    dci.pQueueCreateInfos = &qci;
    r = s->in.vkCreateDevice(s->physical_device, &dci, nullptr, &s->device);
    if (r != VK_SUCCESS) return Error{"creating the Vulkan device failed: " + describe(r)};
    s->owns_device = true;
    tprop_load_device_table(&s->vk, s->device, s->in.vkGetDeviceProcAddr);
    s->vk.vkGetDeviceQueue(s->device, s->queue_family, 0, &s->queue);
    if (Status st = fill_device_info(*s); !st) return st.error();
    return VulkanContext(std::move(s));
  };
  return guard_host_memory("out of host memory creating the Vulkan context", create);
}

Result<VulkanContext> VulkanContext::adopt(const AdoptInfo& info) {
  auto adopt_device = [&]() -> Result<VulkanContext> {
    if (!info.instance || !info.physical_device || !info.device || !info.queue ||
        !info.get_instance_proc_addr)
      return Error{"VulkanContext::adopt needs an instance, a physical device, a device, a queue "
                   "and vkGetInstanceProcAddr"};
    if (Status st = check_adopted_setup(info); !st) return st.error();
    auto s = std::make_unique<ContextState>();
    s->get_instance_proc_addr = info.get_instance_proc_addr;
    s->instance = info.instance;
    s->physical_device = info.physical_device;
    s->device = info.device;
    s->queue = info.queue;
    s->queue_family = info.queue_family;
    s->debug_utils = info.debug_utils_enabled;
    load_instance_functions(*s);
    if (!s->in.vkGetDeviceProcAddr || !s->in.vkGetPhysicalDeviceProperties2)
      return Error{"the adopted vkGetInstanceProcAddr does not return Vulkan 1.1 functions"};
    if (Status st = fill_device_info(*s); !st)
      return Error{st.error().message + " (enable required_device_setup() on the adopted device)"};
    tprop_load_device_table(&s->vk, s->device, s->in.vkGetDeviceProcAddr);
    if (!s->vk.vkCmdPipelineBarrier2 || !s->vk.vkGetBufferDeviceAddress)
      return Error{"the adopted device lacks Vulkan 1.3 entry points (create it with apiVersion "
                   "1.3 and required_device_setup())"};
    return VulkanContext(std::move(s));
  };
  return guard_host_memory("out of host memory adopting the Vulkan device", adopt_device);
}

bool device_selector_matches(const std::string& selector, uint32_t index, const std::string& name) {
  const bool is_index = std::all_of(selector.begin(), selector.end(), [](char c) {
    return std::isdigit(static_cast<unsigned char>(c));
  });
  return is_index ? std::to_string(index) == selector
                  : lower(name).find(lower(selector)) != std::string::npos;
}

Result<std::vector<std::string>> list_devices() {
  auto list = [&]() -> Result<std::vector<std::string>> {
    const PFN_vkGetInstanceProcAddr gipa = loader_entry();
    if (!gipa) return Error{kNoLoader};
    ContextState s;
    s.get_instance_proc_addr = gipa;
    auto create_instance = reinterpret_cast<PFN_vkCreateInstance>(
        s.get_instance_proc_addr(VK_NULL_HANDLE, "vkCreateInstance"));
    if (!create_instance) return Error{"the Vulkan loader has no vkCreateInstance"};
    VkApplicationInfo app{};
    app.sType = VK_STRUCTURE_TYPE_APPLICATION_INFO;
    app.apiVersion = VK_API_VERSION_1_3;
    VkInstanceCreateInfo ici{};
    ici.sType = VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO;
    ici.pApplicationInfo = &app;
    VkResult r = create_instance(&ici, nullptr, &s.instance);
    if (r != VK_SUCCESS) return Error{"creating the Vulkan instance failed: " + describe(r)};
    s.owns_instance = true;
    load_instance_functions(s);
    uint32_t count = 0;
    s.in.vkEnumeratePhysicalDevices(s.instance, &count, nullptr);
    std::vector<VkPhysicalDevice> devices(count);
    s.in.vkEnumeratePhysicalDevices(s.instance, &count, devices.data());
    std::vector<std::string> names;
    for (VkPhysicalDevice pd : devices) {
      VkPhysicalDeviceProperties p{};
      s.in.vkGetPhysicalDeviceProperties(pd, &p);
      names.emplace_back(p.deviceName);
    }
    if (names.empty()) return Error{"no Vulkan device found"};
    return names;
  };
  return guard_host_memory("out of host memory listing the Vulkan devices", list);
}

std::string describe(VkResult result) {
  switch (result) {
    case VK_SUCCESS: return "VK_SUCCESS";
    case VK_ERROR_OUT_OF_HOST_MEMORY: return "VK_ERROR_OUT_OF_HOST_MEMORY (free host memory or use a smaller scene)";
    case VK_ERROR_OUT_OF_DEVICE_MEMORY: return "VK_ERROR_OUT_OF_DEVICE_MEMORY (the scene does not fit in GPU memory: use a smaller scene or the CPU backend)";
    case VK_ERROR_INITIALIZATION_FAILED: return "VK_ERROR_INITIALIZATION_FAILED (check the Vulkan driver installation)";
    case VK_ERROR_DEVICE_LOST: return "VK_ERROR_DEVICE_LOST (the GPU reset or the driver crashed: recreate the context)";
    case VK_ERROR_LAYER_NOT_PRESENT: return "VK_ERROR_LAYER_NOT_PRESENT (install vulkan-validationlayers)";
    case VK_ERROR_EXTENSION_NOT_PRESENT: return "VK_ERROR_EXTENSION_NOT_PRESENT (the driver lacks a required extension)";
    case VK_ERROR_FEATURE_NOT_PRESENT: return "VK_ERROR_FEATURE_NOT_PRESENT (the device lacks a feature in required_device_setup())";
    case VK_ERROR_INCOMPATIBLE_DRIVER: return "VK_ERROR_INCOMPATIBLE_DRIVER (no installed Vulkan driver supports Vulkan 1.3, or none is installed: install or update one; mesa-vulkan-drivers gives the lavapipe CPU device)";
    case VK_ERROR_TOO_MANY_OBJECTS: return "VK_ERROR_TOO_MANY_OBJECTS";
    case VK_TIMEOUT: return "VK_TIMEOUT";
    case VK_NOT_READY: return "VK_NOT_READY";
    default: return "VkResult " + std::to_string(static_cast<int>(result));
  }
}

}  // namespace tprop
