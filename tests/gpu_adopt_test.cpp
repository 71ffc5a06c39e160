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

  ~App() {
    if (device) vkDestroyDevice(device, nullptr);
    if (messenger) {
      auto destroy = reinterpret_cast<PFN_vkDestroyDebugUtilsMessengerEXT>(
          vkGetInstanceProcAddr(instance, "vkDestroyDebugUtilsMessengerEXT"));
      destroy(instance, messenger, nullptr);
    }
    if (instance) vkDestroyInstance(instance, nullptr);
  }

  // An empty string on success.
  std::string create() {
    const DeviceRequirements req = required_device_setup();
    VkApplicationInfo app{};
    app.sType = VK_STRUCTURE_TYPE_APPLICATION_INFO;
    app.pApplicationName = "tprop adoption test";
    app.apiVersion = req.api_version;
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

    VkPhysicalDeviceVulkan13Features vk13{};
    vk13.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_3_FEATURES;
    VkPhysicalDeviceVulkan12Features vk12{};
    vk12.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES;
    vk12.pNext = &vk13;
    VkPhysicalDeviceFeatures2 f2{};
    f2.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2;
    f2.pNext = &vk12;
    req.enable_in(f2, vk12, vk13);
    const float priority = 1.0f;
    VkDeviceQueueCreateInfo qci{};
    qci.sType = VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO;
    qci.queueFamilyIndex = family;
    qci.queueCount = 1;
    qci.pQueuePriorities = &priority;
    VkDeviceCreateInfo dci{};
    dci.sType = VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO;
    dci.pNext = &f2;
    dci.queueCreateInfoCount = 1;
    dci.pQueueCreateInfos = &qci;
    dci.enabledExtensionCount = static_cast<uint32_t>(req.device_extensions.size());
    dci.ppEnabledExtensionNames = req.device_extensions.data();
    if (vkCreateDevice(physical, &dci, nullptr, &device) != VK_SUCCESS) return "vkCreateDevice failed";
    vkGetDeviceQueue(device, family, 0, &queue);
    return "";
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
    auto adopted = VulkanContext::adopt({app.instance, app.physical, app.device, app.queue,
                                         app.family, vkGetInstanceProcAddr, true});
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

}  // namespace
}  // namespace tprop::test
