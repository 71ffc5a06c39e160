// Adoption: the test plays an application that links the Vulkan loader directly (its own
// instance with validation, its own device, queue and command buffers), hands them to tprop and
// gets the reference results, through run() and through record() into its own command buffer.
// Linking the loader next to tprop also proves that tprop's private volk does not shadow the
// application's Vulkan symbols.
#include "gpu_test_support.h"

#include <atomic>
#include <cstring>

namespace tprop::test {
namespace {

std::atomic<uint32_t> g_app_messages{0};

VKAPI_ATTR VkBool32 VKAPI_CALL app_messenger(VkDebugUtilsMessageSeverityFlagBitsEXT severity,
                                             VkDebugUtilsMessageTypeFlagsEXT,
                                             const VkDebugUtilsMessengerCallbackDataEXT* data,
                                             void*) {
  if (severity & (VK_DEBUG_UTILS_MESSAGE_SEVERITY_WARNING_BIT_EXT |
                  VK_DEBUG_UTILS_MESSAGE_SEVERITY_ERROR_BIT_EXT)) {
    ++g_app_messages;
    std::fprintf(stderr, "application validation: %s\n", data->pMessage);
  }
  return VK_FALSE;
}

// The application's own Vulkan objects, created the way an application would.
struct App {
  VkInstance instance = VK_NULL_HANDLE;
  VkDebugUtilsMessengerEXT messenger = VK_NULL_HANDLE;
  VkPhysicalDevice physical = VK_NULL_HANDLE;
  VkDevice device = VK_NULL_HANDLE;
  VkQueue queue = VK_NULL_HANDLE;
  uint32_t family = 0;
  // What the device was created with, for AdoptInfo (the App is never moved: the chain points
  // into it).
  uint32_t api_version = 0;
  VkPhysicalDeviceVulkan13Features vk13{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_3_FEATURES};
  VkPhysicalDeviceVulkan12Features vk12{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES};
  VkPhysicalDeviceFeatures2 f2{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2};
  VkDeviceCreateInfo dci{VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO};

  App() = default;
  App(const App&) = delete;
  App& operator=(const App&) = delete;

  ~App() {
    if (device) vkDestroyDevice(device, nullptr);
    if (messenger) {
      auto destroy = reinterpret_cast<PFN_vkDestroyDebugUtilsMessengerEXT>(
          vkGetInstanceProcAddr(instance, "vkDestroyDebugUtilsMessengerEXT"));
      destroy(instance, messenger, nullptr);
    }
    if (instance) vkDestroyInstance(instance, nullptr);
  }

  // An empty string on success. `leave_out` names one of required_device_setup()'s features
  // that the device is created without (an application's mistake).
  std::string create(const std::string& leave_out = "") {
    const DeviceRequirements req = required_device_setup();
    VkApplicationInfo app{};
    app.sType = VK_STRUCTURE_TYPE_APPLICATION_INFO;
    app.pApplicationName = "tprop adoption test";
    app.apiVersion = api_version = req.api_version;
    const char* layers[] = {"VK_LAYER_KHRONOS_validation"};
    const char* extensions[] = {VK_EXT_DEBUG_UTILS_EXTENSION_NAME,
                                VK_EXT_VALIDATION_FEATURES_EXTENSION_NAME};
    const VkValidationFeatureEnableEXT sync = VK_VALIDATION_FEATURE_ENABLE_SYNCHRONIZATION_VALIDATION_EXT;
    VkValidationFeaturesEXT features{};
    features.sType = VK_STRUCTURE_TYPE_VALIDATION_FEATURES_EXT;
    features.enabledValidationFeatureCount = 1;
    features.pEnabledValidationFeatures = &sync;
    VkInstanceCreateInfo ici{};
    ici.sType = VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO;
    ici.pNext = &features;
    ici.pApplicationInfo = &app;
    ici.enabledLayerCount = 1;
    ici.ppEnabledLayerNames = layers;
    ici.enabledExtensionCount = 2;
    ici.ppEnabledExtensionNames = extensions;
    if (vkCreateInstance(&ici, nullptr, &instance) != VK_SUCCESS) return "vkCreateInstance failed";

    VkDebugUtilsMessengerCreateInfoEXT mci{};
    mci.sType = VK_STRUCTURE_TYPE_DEBUG_UTILS_MESSENGER_CREATE_INFO_EXT;
    mci.messageSeverity = VK_DEBUG_UTILS_MESSAGE_SEVERITY_WARNING_BIT_EXT |
                          VK_DEBUG_UTILS_MESSAGE_SEVERITY_ERROR_BIT_EXT;
    mci.messageType = VK_DEBUG_UTILS_MESSAGE_TYPE_GENERAL_BIT_EXT |
                      VK_DEBUG_UTILS_MESSAGE_TYPE_VALIDATION_BIT_EXT;
    mci.pfnUserCallback = app_messenger;
    auto create_messenger = reinterpret_cast<PFN_vkCreateDebugUtilsMessengerEXT>(
        vkGetInstanceProcAddr(instance, "vkCreateDebugUtilsMessengerEXT"));
    if (create_messenger(instance, &mci, nullptr, &messenger) != VK_SUCCESS)
      return "creating the messenger failed";

    uint32_t count = 0;
    vkEnumeratePhysicalDevices(instance, &count, nullptr);
    std::vector<VkPhysicalDevice> devices(count);
    vkEnumeratePhysicalDevices(instance, &count, devices.data());
    for (VkPhysicalDevice pd : devices) {
      VkPhysicalDeviceProperties p{};
      vkGetPhysicalDeviceProperties(pd, &p);
      if (p.apiVersion < req.api_version) continue;
      uint32_t nf = 0;
      vkGetPhysicalDeviceQueueFamilyProperties(pd, &nf, nullptr);
      std::vector<VkQueueFamilyProperties> families(nf);
      vkGetPhysicalDeviceQueueFamilyProperties(pd, &nf, families.data());
      for (uint32_t f = 0; f < nf; ++f)
        if (families[f].queueFlags & VK_QUEUE_COMPUTE_BIT) {
          physical = pd;
          family = f;
          break;
        }
      if (physical) break;
    }
    if (!physical) return "no Vulkan 1.3 device with a compute queue";

    vk12.pNext = &vk13;
    f2.pNext = &vk12;
    req.enable_in(f2, vk12, vk13);
    for (const RequiredFeature& f : req.features) {
      if (f.name != leave_out) continue;
      // Clear the bit where enable_in set it: the first location, in one of the three structs.
      for (auto* s = reinterpret_cast<VkBaseOutStructure*>(&f2); s; s = s->pNext)
        if (s->sType == f.where.front().s_type)
          std::memset(reinterpret_cast<char*>(s) + f.where.front().offset, 0, sizeof(VkBool32));
      if (feature_enabled(f, &f2)) return "could not leave out " + leave_out;
    }
    const float priority = 1.0f;
    VkDeviceQueueCreateInfo qci{};
    qci.sType = VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO;
    qci.queueFamilyIndex = family;
    qci.queueCount = 1;
    qci.pQueuePriorities = &priority;
    dci.pNext = &f2;
    dci.queueCreateInfoCount = 1;
    dci.pQueueCreateInfos = &qci;
    if (vkCreateDevice(physical, &dci, nullptr, &device) != VK_SUCCESS) return "vkCreateDevice failed";
    dci.queueCreateInfoCount = 0;  // qci is gone; adopt reads the chain
    dci.pQueueCreateInfos = nullptr;
    vkGetDeviceQueue(device, family, 0, &queue);
    return "";
  }

  AdoptInfo adopt_info() const {
    AdoptInfo info;
    info.instance = instance;
    info.physical_device = physical;
    info.device = device;
    info.queue = queue;
    info.queue_family = family;
    info.get_instance_proc_addr = vkGetInstanceProcAddr;
    info.debug_utils_enabled = true;
    info.device_create_info = &dci;
    info.api_version = api_version;
    return info;
  }
};

class GpuAdoption : public GpuTest {};

void build_scene(EntityStore& store) {
  ValueSource v(99);
  for (EntityId id = 0; id < 3000; ++id) {
    store.create(id);
    add_features(store, id, (id * 2654435761u) & ((1u << kFeatureBits) - 1), v);
    if (id > 0 && id % 10) store.set_parent(id, (id * 7) / 10);
  }
}

TEST_F(GpuAdoption, AnApplicationsOwnDeviceGivesTheReferenceResults) {
  App app;
  const std::string failed = app.create();
  ASSERT_EQ(failed, "");
  g_app_messages = 0;
  {
    auto adopted = VulkanContext::adopt(app.adopt_info());
    ASSERT_TRUE(adopted.ok()) << adopted.error().message;
    EXPECT_FALSE(adopted->owns_device());
    EXPECT_EQ(adopted->device(), app.device);

    // The shared headless context keeps working beside the adopted one.
    EntityStore store;
    build_scene(store);
    Propagator gpu = make_propagator(*adopted);
    CpuReference cpu;
    EXPECT_LE(frame_and_compare(gpu, cpu, store, "adopted run()"), 1.0);
    Propagator headless = make_propagator(ctx());
    EntityStore store2;
    build_scene(store2);
    CpuReference cpu2;
    EXPECT_LE(frame_and_compare(headless, cpu2, store2, "headless beside adopted"), 1.0);

    // record() into the application's command buffer, submitted and waited on by the
    // application.
    VkCommandPoolCreateInfo cpci{};
    cpci.sType = VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO;
    cpci.queueFamilyIndex = app.family;
    VkCommandPool pool = VK_NULL_HANDLE;
    ASSERT_EQ(vkCreateCommandPool(app.device, &cpci, nullptr, &pool), VK_SUCCESS);
    VkCommandBufferAllocateInfo cbai{};
    cbai.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO;
    cbai.commandPool = pool;
    cbai.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
    cbai.commandBufferCount = 1;
    VkCommandBuffer cmd = VK_NULL_HANDLE;
    ASSERT_EQ(vkAllocateCommandBuffers(app.device, &cbai, &cmd), VK_SUCCESS);

    for (EntityId id = 0; id < 3000; id += 3) store.set_translation(id, float3(float(id), 1, 2));
    std::vector<float4x4> expected;
    const DepthOrder order = sort_by_depth(store);
    cpu.evaluate(store, order, expected);
    ASSERT_TRUE(gpu.update(store).ok());
    VkCommandBufferBeginInfo begin{};
    begin.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO;
    ASSERT_EQ(vkBeginCommandBuffer(cmd, &begin), VK_SUCCESS);
    gpu.record(cmd);
    ASSERT_EQ(vkEndCommandBuffer(cmd), VK_SUCCESS);
    VkSubmitInfo si{};
    si.sType = VK_STRUCTURE_TYPE_SUBMIT_INFO;
    si.commandBufferCount = 1;
    si.pCommandBuffers = &cmd;
    ASSERT_EQ(vkQueueSubmit(app.queue, 1, &si, VK_NULL_HANDLE), VK_SUCCESS);
    ASSERT_EQ(vkQueueWaitIdle(app.queue), VK_SUCCESS);
    store.mark_statics_baked();
    EXPECT_FALSE(gpu.last_frame().hierarchy_changed);
    auto got = gpu.read_back();  // by slot
    ASSERT_TRUE(got.ok());
    ASSERT_EQ(got->size(), store.slot_capacity());
    const std::vector<uint32_t> level = levels_of(order);
    for (size_t pos = 0; pos < expected.size(); ++pos)
      for (int c = 0; c < 4; ++c)
        for (int r = 0; r < 4; ++r)
          ASSERT_NEAR((*got)[order.slot[pos]][c][r], expected[pos][c][r],
                      tolerance(expected[pos], level[pos]))
              << "position " << pos;
    vkDestroyCommandPool(app.device, pool, nullptr);
  }
  // tprop is gone; the application's device is intact.
  EXPECT_EQ(vkDeviceWaitIdle(app.device), VK_SUCCESS);
  EXPECT_EQ(g_app_messages.load(), 0u) << "validation messages on the application's instance";
}

TEST_F(GpuAdoption, AdoptRejectsMissingHandles) {
  auto adopted = VulkanContext::adopt({});
  ASSERT_FALSE(adopted.ok());
  EXPECT_NE(adopted.error().message.find("adopt"), std::string::npos);
}

// Each requirement in turn: a device really created without it is refused, by name, and the
// message names no other requirement.
TEST_F(GpuAdoption, ADeviceCreatedWithoutARequiredFeatureIsRefusedNamingIt) {
  const DeviceRequirements req = required_device_setup();
  ASSERT_FALSE(req.features.empty());
  for (const RequiredFeature& missing : req.features) {
    App app;
    ASSERT_EQ(app.create(missing.name), "");
    auto adopted = VulkanContext::adopt(app.adopt_info());
    ASSERT_FALSE(adopted.ok()) << "a device without " << missing.name << " was adopted";
    const std::string& message = adopted.error().message;
    EXPECT_NE(message.find(std::string("lacks ") + missing.name), std::string::npos) << message;
    for (const RequiredFeature& other : req.features) {
      if (std::string(other.name) != missing.name) {
        EXPECT_EQ(message.find(other.name), std::string::npos) << message;
      }
    }
  }
}

// adopt's error message, or "adopted" when it succeeded.
std::string adopt_error(const AdoptInfo& info) {
  auto adopted = VulkanContext::adopt(info);
  return adopted.ok() ? "adopted" : adopted.error().message;
}

TEST_F(GpuAdoption, AnInstanceBelowTheRequiredVersionIsRefusedNamingBoth) {
  App app;
  ASSERT_EQ(app.create(), "");
  AdoptInfo info = app.adopt_info();
  info.api_version = VK_API_VERSION_1_2;
  const std::string message = adopt_error(info);
  EXPECT_NE(message.find("lacks Vulkan 1.3 (the instance asked for 1.2"), std::string::npos)
      << message;
}

TEST_F(GpuAdoption, AdoptWithoutWhatTheDeviceWasCreatedWithIsRefused) {
  App app;
  ASSERT_EQ(app.create(), "");
  AdoptInfo no_create_info = app.adopt_info();
  no_create_info.device_create_info = nullptr;
  const std::string without_info = adopt_error(no_create_info);
  EXPECT_NE(without_info.find("AdoptInfo::device_create_info"), std::string::npos) << without_info;
  AdoptInfo no_version = app.adopt_info();
  no_version.api_version = 0;
  const std::string without_version = adopt_error(no_version);
  EXPECT_NE(without_version.find("AdoptInfo::api_version"), std::string::npos) << without_version;
}

}  // namespace
}  // namespace tprop::test
