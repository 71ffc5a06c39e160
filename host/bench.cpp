// tprop_bench: per-stage GPU times (upload, compose, propagate) for generated scenes, plus the
// wall time of Propagator::run and of the CPU reference. Not a test.
//   tprop_bench [SPEC...]   default: gen:flat:100000 gen:forest:1000000 gen:chain:100000
#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

#include "propagator.h"
#include "reference.h"
#include "scene_generators.h"

using namespace tprop;

namespace {

double ms_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

int bench(const VulkanContext& ctx, const std::string& spec) {
  auto scene = generate_scene(spec, 1);
  if (!scene) {
    std::fprintf(stderr, "%s: %s\n", spec.c_str(), scene.error().message.c_str());
    return 1;
  }
  EntityStore& store = scene->store;
  auto prop = Propagator::create(ctx);
  if (!prop) {
    std::fprintf(stderr, "%s\n", prop.error().message.c_str());
    return 1;
  }
  std::printf("%s: %zu entities\n", spec.c_str(), store.size());
  for (int frame = 0; frame < 4; ++frame) {
    // Frame 0 uploads everything; later frames change one value in every 100th entity.
    if (frame > 0)
      for (uint32_t slot = 0; slot < store.slot_capacity(); slot += 100)
        if (store.alive_at(slot))
          store.set_translation(store.id_at(slot), float3(float(frame), 0.0f, 1.0f));
    const auto t0 = std::chrono::steady_clock::now();
    if (Status st = prop->run(store); !st) {
      std::fprintf(stderr, "%s\n", st.error().message.c_str());
      return 1;
    }
    const double wall = ms_since(t0);
    const FrameStats& fs = prop->last_frame();
    auto times = prop->stage_times();
    const std::string passes = fs.descriptors ? "descriptors" : "addresses";
    std::printf("  frame %d: %u levels, %u dispatches (%s), %.1f MiB in %u regions; run %.2f ms",
                frame, fs.levels, fs.dispatches, passes.c_str(),
                double(fs.upload_bytes) / (1 << 20), fs.copy_regions, wall);
    if (times)
      std::printf("; GPU upload %.2f ms, evaluate %.2f ms\n", times->upload_ms,
                  times->evaluate_ms);
    else
      std::printf("; no GPU times (%s)\n", times.error().message.c_str());
  }
  DepthOrder order = sort_by_depth(store);
  std::vector<float4x4> world;
  CpuReference reference;
  const auto t0 = std::chrono::steady_clock::now();
  reference.evaluate(store, order, world);
  std::printf("  CPU reference: %.2f ms\n", ms_since(t0));
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string> specs(argv + 1, argv + argc);
  if (specs.empty()) specs = {"gen:flat:100000", "gen:forest:1000000", "gen:chain:100000"};
  auto ctx = VulkanContext::create_headless();
  if (!ctx) {
    std::fprintf(stderr, "tprop_bench: %s\n", ctx.error().message.c_str());
    return 1;
  }
  std::printf("device: %s\n", ctx->device_name().c_str());
  int rc = 0;
  for (const std::string& spec : specs) rc |= bench(*ctx, spec);
  return rc;
}
