#include "cli_backend.h"

#include <chrono>
#include <cstdio>

#include "cli_run.h"
#include "propagator.h"
#include "reference.h"
#include "vk_context.h"

namespace tprop::cli {
namespace {

double ms_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
      .count();
}

}  // namespace

struct GpuBackend::Impl {
  // The Propagator keeps a pointer into the context: the context is heap-held and outlives it.
  std::unique_ptr<VulkanContext> context;
  std::optional<Propagator> propagator;
};

GpuBackend::GpuBackend(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
GpuBackend::~GpuBackend() {
  if (impl_) impl_->propagator.reset();  // before the context it runs on
}

Result<std::unique_ptr<GpuBackend>> GpuBackend::open(const std::string& device,
                                                     const PropagatorOptions& propagator_options) {
  ContextOptions options;
  options.device = device;
  Result<VulkanContext> context = VulkanContext::create_headless(options);
  if (!context) return context.error();
  auto impl = std::make_unique<Impl>();
  impl->context = std::make_unique<VulkanContext>(std::move(*context));
  Result<Propagator> propagator = Propagator::create(*impl->context, propagator_options);
  if (!propagator) {
    return Error{"setting up the GPU path on '" + impl->context->device_name() +
                 "' failed: " + propagator.error().message};
  }
  impl->propagator.emplace(std::move(*propagator));
  return std::unique_ptr<GpuBackend>(new GpuBackend(std::move(impl)));
}

const char* output_layout_name(OutputLayout layout) {
  return layout == OutputLayout::Affine3x4 ? "3x4" : "4x4";
}

std::string GpuBackend::device_name() const { return impl_->context->device_name(); }

Result<Evaluation> GpuBackend::frame(EntityStore& store, bool read_back) {
  Propagator& gpu = *impl_->propagator;
  const auto start = std::chrono::steady_clock::now();
  Evaluation e;
  if (Status st = gpu.update(store); !st)
    return Error{"the GPU frame failed: " + st.error().message};
  e.update_ms = ms_since(start);
  if (Status st = gpu.run_staged(store); !st)
    return Error{"the GPU frame failed: " + st.error().message};
  e.stats = gpu.last_frame();  // complete once recorded (upload bytes, dispatches)
  std::vector<float4x4> by_slot;
  if (read_back) {
    Result<std::vector<float4x4>> matrices = gpu.read_back();
    if (!matrices)
      return Error{"reading the GPU results back failed: " + matrices.error().message};
    by_slot = std::move(*matrices);
  }
  e.evaluate_ms = ms_since(start);
  if (read_back) {
    // The GPU keeps LocalToWorld by store slot; reports and dumps read it in depth order.
    e.order = sort_by_depth(store);
    e.local_to_world.resize(e.order.size());
    for (uint32_t pos = 0; pos < e.order.size(); ++pos)
      e.local_to_world[pos] = by_slot[e.order.slot[pos]];
  }
  if (Result<StageTimes> times = gpu.stage_times()) e.gpu_times = *times;
  return e;
}

Result<std::unique_ptr<GpuBackend>> open_gpu_for_run(const RunOptions& run,
                                                     std::string& fallback) {
  const Backend backend = run.backend;
  const bool validate = run.validate;
  const std::string& device = run.device;
  // A --device the user named is binding: never a silent fallback, and checked even when no
  // device is opened.
  if (backend == Backend::Cpu && !validate) {
    if (!device.empty())
      if (Status named = check_device_option(device); !named) return named.error();
    return std::unique_ptr<GpuBackend>();
  }
  Result<std::unique_ptr<GpuBackend>> opened =
      GpuBackend::open(device, {.slot_order = run.slot_order,
                                .max_buffer_bytes = run.max_buffer_bytes,
                                .output_layout = run.output_layout});
  if (opened) return opened;
  if (backend == Backend::Gpu)
    return Error{"--backend gpu: no usable Vulkan device: " + opened.error().message};
  if (validate) return Error{"--validate needs a Vulkan device: " + opened.error().message};
  if (!device.empty()) return opened.error();  // names the device option and why
  fallback = opened.error().message;
  std::fprintf(stderr, "tprop run: no usable Vulkan device (%s); running the CPU reference\n",
               fallback.c_str());
  return std::unique_ptr<GpuBackend>();
}

std::vector<float4x4> in_reference_order(const DepthOrder& reference, const Evaluation& e) {
  if (e.order.slot == reference.slot) return e.local_to_world;
  std::vector<float4x4> out(reference.size(), float4x4(0.0f));
  for (uint32_t pos = 0; pos < e.order.size() && pos < e.local_to_world.size(); ++pos) {
    const uint32_t slot = e.order.slot[pos];
    if (slot < reference.position.size() && reference.position[slot] != DepthOrder::kNone)
      out[reference.position[slot]] = e.local_to_world[pos];
  }
  return out;
}

Evaluation evaluate_cpu(EntityStore& store, bool bake) {
  Evaluation e;
  auto start = std::chrono::steady_clock::now();
  if (bake) (void)store.take_changes();  // the first frame sorts unconditionally
  e.order = sort_by_depth(store);
  e.sort_ms = ms_since(start);
  start = std::chrono::steady_clock::now();
  CpuReference reference;
  reference.evaluate(store, e.order, e.local_to_world);
  if (bake) store.mark_statics_baked();
  e.evaluate_ms = ms_since(start);
  return e;
}

Status check_device_option(const std::string& device) {
  Result<std::vector<std::string>> devices = list_devices();
  if (!devices) return Error{"--device '" + device + "': " + devices.error().message};
  std::string names;
  for (uint32_t i = 0; i < devices->size(); ++i) {
    if (device_selector_matches(device, i, (*devices)[i])) return ok_status();
    names += " [" + std::to_string(i) + "] " + (*devices)[i];
  }
  return Error{"--device '" + device + "' matches no Vulkan device; devices:" + names};
}

int devices_command(const std::vector<std::string>& args) {
  for (const std::string& a : args) {
    if (a == "-h" || a == "--help") {
      std::printf(
          "usage: tprop devices\n"
          "\n"
          "Lists the Vulkan devices with their index. `tprop run --device NAME|INDEX` (or the\n"
          "TPROP_DEVICE environment variable) picks one by index or by a case-insensitive part\n"
          "of its name; without either, tprop takes a discrete GPU, then an integrated one,\n"
          "then a virtual one, then a CPU device (lavapipe).\n");
      return kExitOk;
    }
    std::fprintf(stderr, "tprop devices: unexpected argument '%s'\n", a.c_str());
    return kExitUsage;
  }
  Result<std::vector<std::string>> devices = list_devices();
  if (!devices) {
    std::fprintf(stderr, "tprop devices: %s\n", devices.error().message.c_str());
    return kExitFailure;
  }
  for (size_t i = 0; i < devices->size(); ++i) std::printf("[%zu] %s\n", i, (*devices)[i].c_str());
  return kExitOk;
}

}  // namespace tprop::cli
