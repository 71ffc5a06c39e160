// The Vulkan context and resources: device choice by TPROP_DEVICE-style selectors, errors from
// the environment as values with a message that says what to do, and Static values this
// backend never computed (a Propagator created mid-run).
#include "gpu_test_support.h"

#include <cctype>
#include <cstddef>
#include <cstring>

#include "vk_buffer.h"

namespace tprop::test {
namespace {

class GpuContext : public GpuTest {};

TEST_F(GpuContext, ADeviceIsPickedByIndexOrByNameSubstring) {
  const std::string name = ctx().device_name();
  auto by_index = VulkanContext::create_headless({.device = "0"});
  ASSERT_TRUE(by_index.ok()) << by_index.error().message;
  // The first word of the shared context's device name, in another case.
  std::string word = name.substr(0, name.find(' '));
  for (char& c : word) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  auto by_name = VulkanContext::create_headless({.device = word});
  ASSERT_TRUE(by_name.ok()) << by_name.error().message;
  EXPECT_EQ(by_name->device_name(), name);
  EXPECT_TRUE(by_name->owns_device());
}

TEST_F(GpuContext, AnUnknownDeviceIsAnErrorListingTheDevices) {
  auto none = VulkanContext::create_headless({.device = "no such gpu"});
  ASSERT_FALSE(none.ok());
  EXPECT_NE(none.error().message.find("matches no Vulkan device"), std::string::npos)
      << none.error().message;
  EXPECT_NE(none.error().message.find(ctx().device_name()), std::string::npos);
  auto out_of_range = VulkanContext::create_headless({.device = "99"});
  ASSERT_FALSE(out_of_range.ok());
}

TEST_F(GpuContext, ABufferBeyondTheDeviceLimitIsAnErrorNamingIt) {
  auto huge = Buffer::create(ctx(), VkDeviceSize(1) << 50, BufferKind::DeviceStorage, "tprop.huge");
  ASSERT_FALSE(huge.ok());
  EXPECT_NE(huge.error().message.find("tprop.huge"), std::string::npos) << huge.error().message;
  auto fine = Buffer::create(ctx(), 1024, BufferKind::Upload, "tprop.small");
  ASSERT_TRUE(fine.ok()) << fine.error().message;
  EXPECT_NE(fine->mapped(), nullptr);
  Buffer moved = std::move(*fine);
  EXPECT_TRUE(moved);
  EXPECT_FALSE(*fine);
}

TEST_F(GpuContext, RequiredDeviceSetupAsksForVulkan13AndTheThreeFeatures) {
  const DeviceRequirements req = required_device_setup();
  EXPECT_EQ(req.api_version, VK_API_VERSION_1_3);
  VkPhysicalDeviceVulkan13Features vk13{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_3_FEATURES};
  VkPhysicalDeviceVulkan12Features vk12{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES,
                                        &vk13};
  VkPhysicalDeviceFeatures2 f2{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2, &vk12};
  req.enable_in(f2, vk12, vk13);
  EXPECT_TRUE(f2.features.shaderInt64);
  EXPECT_TRUE(vk12.bufferDeviceAddress);
  EXPECT_TRUE(vk13.synchronization2);
  EXPECT_FALSE(vk13.dynamicRendering);  // nothing else is switched on
  std::vector<std::string> names;
  for (const RequiredFeature& f : req.features) {
    names.emplace_back(f.name);
    EXPECT_TRUE(feature_enabled(f, &f2)) << f.name << " not found where enable_in set it";
  }
  EXPECT_EQ(names, (std::vector<std::string>{"shaderInt64", "bufferDeviceAddress",
                                             "synchronization2"}));
}

// adopt reads the application's VkDeviceCreateInfo: the features may sit in the Vulkan 1.x
// structs, in the extension structs they were promoted from, or (core 1.0) in pEnabledFeatures.
TEST(DeviceRequirements, FeaturesAreFoundInEveryStructThatCanEnableThem) {
  const DeviceRequirements req = required_device_setup();
  auto enabled = [&](const void* chain, const VkPhysicalDeviceFeatures* core) {
    std::string on;
    for (const RequiredFeature& f : req.features)
      if (feature_enabled(f, chain, core)) on += std::string(on.empty() ? "" : " ") + f.name;
    return on;
  };
  VkPhysicalDeviceSynchronization2Features sync2{
      VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SYNCHRONIZATION_2_FEATURES};
  VkPhysicalDeviceBufferDeviceAddressFeatures bda{
      VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_BUFFER_DEVICE_ADDRESS_FEATURES};
  bda.pNext = &sync2;
  VkPhysicalDeviceFeatures core{};
  EXPECT_EQ(enabled(&bda, &core), "");
  sync2.synchronization2 = VK_TRUE;
  EXPECT_EQ(enabled(&bda, &core), "synchronization2");
  bda.bufferDeviceAddress = VK_TRUE;
  core.shaderInt64 = VK_TRUE;
  EXPECT_EQ(enabled(&bda, &core), "shaderInt64 bufferDeviceAddress synchronization2");
  EXPECT_EQ(enabled(&bda, nullptr), "bufferDeviceAddress synchronization2");

  // A bit set in a struct of another type at the same offset does not count.
  VkPhysicalDeviceVulkan11Features vk11{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_1_FEATURES};
  const size_t first_bool = offsetof(VkPhysicalDeviceVulkan11Features, storageBuffer16BitAccess);
  std::memset(reinterpret_cast<char*>(&vk11) + first_bool, 1, sizeof(vk11) - first_bool);
  EXPECT_EQ(enabled(&vk11, nullptr), "");
}

// A Static baked before this Propagator existed: like CpuReference, computed once, then kept.
TEST_F(GpuContext, AStaticBakedBeforeThePropagatorExistedIsComputedOnceThenKept) {
  EntityStore store;
  store.create(1);
  store.set_translation(1, float3(2, 0, 0));
  store.add(1, Component::Static);
  store.take_changes();
  store.mark_statics_baked();  // an earlier frame on another backend
  Propagator gpu = make_propagator(ctx());
  ASSERT_TRUE(gpu.run(store).ok());
  auto w = gpu.read_back();
  ASSERT_TRUE(w.ok());
  EXPECT_EQ((*w)[0][3], float4(2, 0, 0, 1));
  store.set_translation(1, float3(5, 0, 0));
  ASSERT_TRUE(gpu.run(store).ok());
  w = gpu.read_back();
  ASSERT_TRUE(w.ok());
  EXPECT_EQ((*w)[0][3], float4(2, 0, 0, 1));
}

}  // namespace
}  // namespace tprop::test
