// A downstream program built against the installed tprop package: it includes the public
// headers, links tprop::tprop, and checks a two-entity hierarchy on the CPU reference and, when a
// Vulkan device is there, on the GPU.
#include <cmath>
#include <cstdio>

#include <tprop/propagator.h>
#include <tprop/reference.h>

extern "C" double consumer_hypot3(double x, double y, double z);  // c_math.c

int main() {
  tprop::EntityStore store;
  store.create(1);
  store.create(2);
  store.set_translation(1, tprop::float3(1, 2, 3));
  store.set_translation(2, tprop::float3(1, 0, 0));
  store.set_parent(2, 1);

  // Child world translation = parent (1, 2, 3) + child (1, 0, 0).
  const tprop::float3 expected(2, 2, 3);
  auto near = [&](const tprop::float4x4& m) {
    return std::fabs(m[3].x - expected.x) + std::fabs(m[3].y - expected.y) +
               std::fabs(m[3].z - expected.z) < 1e-5f;
  };

  const auto cpu = tprop::world_matrices_by_id(store);
  if (!near(cpu.at(2))) {
    std::fprintf(stderr, "CPU reference: wrong child translation\n");
    return 1;
  }
  std::printf("cpu: child at (%g, %g, %g)\n", cpu.at(2)[3].x, cpu.at(2)[3].y, cpu.at(2)[3].z);
  if (std::fabs(consumer_hypot3(2, 3, 6) - 7.0) > 1e-12) {
    std::fprintf(stderr, "the C file's <math.h> is not the C library's\n");
    return 1;
  }

  // The application calls the Vulkan loader itself, as one that adopts its own device does;
  // tprop::tprop alone links it.
  uint32_t loader_version = 0;
  if (vkEnumerateInstanceVersion(&loader_version) == VK_SUCCESS)
    std::printf("loader: Vulkan %u.%u\n", VK_API_VERSION_MAJOR(loader_version),
                VK_API_VERSION_MINOR(loader_version));

  auto context = tprop::VulkanContext::create_headless();
  if (!context) {
    std::printf("gpu: skipped (%s)\n", context.error().message.c_str());
    return 0;
  }
  auto propagator = tprop::Propagator::create(*context);
  if (!propagator || !propagator->run(store)) {
    std::fprintf(stderr, "gpu: propagation failed\n");
    return 1;
  }
  auto matrices = propagator->read_back();
  if (!matrices) {
    std::fprintf(stderr, "gpu: %s\n", matrices.error().message.c_str());
    return 1;
  }
  // One LocalToWorld per store slot.
  const auto& child = (*matrices)[store.slot_of(2)];
  if (!near(child)) {
    std::fprintf(stderr, "gpu: wrong child translation\n");
    return 1;
  }
  std::printf("gpu (%s): child at (%g, %g, %g)\n", context->device_name().c_str(), child[3].x,
              child[3].y, child[3].z);
  return 0;
}
