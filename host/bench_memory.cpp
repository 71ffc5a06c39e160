#include "bench_memory.h"

#include <cstring>
#include <fstream>
#include <vector>

#include <nlohmann/json.hpp>

#include "compare.h"
#include "depth_order.h"
#include "level_order.h"
#include "reference.h"
#include "scene_generators.h"

namespace tprop::bench {
namespace {

// A field of /proc/self/status in bytes ("VmRSS", "VmHWM"); 0 where there is none.
uint64_t status_bytes(const char* field) {
  std::ifstream in("/proc/self/status");
  std::string line;
  const std::string key = std::string(field) + ":";
  while (std::getline(in, line))
    if (line.rfind(key, 0) == 0) return std::stoull(line.substr(key.size())) * 1024;
  return 0;
}

uint64_t grown(uint64_t before, uint64_t after) { return after > before ? after - before : 0; }

}  // namespace

Result<MemoryRecord> measure_memory(const VulkanContext& context, const PlannedScene& plan,
                                    uint64_t seed, const PropagatorOptions& options,
                                    bool validate) {
  MemoryRecord m;
  m.plan = plan;
  const uint64_t rss0 = status_bytes("VmRSS");
  Result<Scene> scene = generate_scene(plan.spec, seed);
  if (!scene) return scene.error();
  EntityStore& store = scene->store;
  const uint64_t rss1 = status_bytes("VmRSS");
  LevelOrder order;
  order.rebuild(store);
  const uint64_t rss2 = status_bytes("VmRSS");
  m.entities = order.size();
  m.slots = store.slot_capacity();
  {
    Result<Propagator> gpu = Propagator::create(context, options);
    if (!gpu) return gpu.error();
    // update() and run_staged() apart (run() in two steps), for the staging its first frame
    // needs (its mirrors) beside what stays once the frame has completed.
    if (Status st = gpu->update(store); !st) return st.error();
    m.first_frame_staging_bytes = gpu->last_frame().staging_bytes;
    m.first_frame_mirror_bytes = gpu->last_frame().mirror_bytes;
    m.in_place_arrays = gpu->last_frame().in_place_arrays;
    m.in_place_inputs = gpu->last_frame().in_place_inputs;
    if (Status st = gpu->run_staged(store); !st) return st.error();
    const uint64_t rss3 = status_bytes("VmRSS");
    const FrameStats& fs = gpu->last_frame();
    m.device_bytes = fs.device_bytes;
    m.device_buffers = fs.device_buffers;
    m.largest_buffer_bytes = fs.largest_buffer_bytes;
    m.slot_pieces = fs.slot_pieces;
    m.staging_bytes = fs.staging_bytes;
    m.propagator_rss = grown(rss2, rss3);
    m.peak_rss = status_bytes("VmHWM");
    if (validate) {
      // The reference of the same frame: no Static was baked before it (generated scenes).
      const DepthOrder sorted = sort_by_depth(store);
      std::vector<float4x4> reference;
      CpuReference().evaluate(store, sorted, reference);
      Result<std::vector<float4x4>> back = gpu->read_back();
      if (!back) return back.error();
      std::vector<float4x4> got(sorted.size());
      for (uint32_t pos = 0; pos < sorted.size(); ++pos) got[pos] = (*back)[sorted.slot[pos]];
      Result<Comparison> c = compare_local_to_world(sorted, reference, got);
      if (!c) return c.error();
      if (!c->within_tolerance())
        return Error{"the GPU differs from the CPU reference: " + std::to_string(c->mismatches) +
                     " elements outside the tolerance"};
      m.validate_worst = c->worst_ratio;
    }
  }
  m.store_rss = grown(rss0, rss1);
  m.order_rss = grown(rss1, rss2);
  return m;
}

void print_memory(std::FILE* out, const MemoryRecord& m, bool first) {
  const double n = m.entities ? double(m.entities) : 1.0;
  auto line = [&](const char* what, const char* how, uint64_t bytes, const std::string& more) {
    std::fprintf(out, "  %-30s %-8s %10.1f MB %8.1f B/entity%s\n", what, how, bytes / 1e6,
                 bytes / n, more.c_str());
  };
  std::fprintf(out, "%s: %u entities, %u slots%s\n", m.plan.spec.c_str(), m.entities, m.slots,
               first ? "" : " (RSS figures blurred by the scenes before: run it alone)");
  line("store (EntityStore)", "RSS", m.store_rss, "");
  line("depth order (LevelOrder)", "RSS", m.order_rss, "");
  line("propagator device buffers", "counted", m.device_bytes,
       "  (" + std::to_string(m.device_buffers) + " buffers, " +
           std::to_string(m.slot_pieces) + " piece(s) per per-slot array, largest " +
           std::to_string(m.largest_buffer_bytes >> 20) + " MiB)");
  line("propagator staging, 1st frame", "counted", m.first_frame_staging_bytes,
       "  (of which the per-slot mirrors " + std::to_string(m.first_frame_mirror_bytes / 1000000) +
           " MB, freed once the frame completed" +
           (m.in_place_inputs   ? "; every per-slot input packed in place"
            : m.in_place_arrays ? "; translation, rotation, scale packed in place"
                                : "") +
           ")");
  line("propagator staging after it", "counted", m.staging_bytes, "");
  line("propagator + first frame", "RSS", m.propagator_rss,
       "  (after it: its own depth order, bookkeeping, staging; device memory on a CPU device)");
  line("peak of the process", "RSS", m.peak_rss, "");
  if (m.validate_worst >= 0)
    std::fprintf(out, "  validate: max error %.4g of tolerance, within tolerance\n",
                 m.validate_worst);
}

std::string memory_json(const std::string& device, const std::vector<MemoryRecord>& records) {
  nlohmann::json doc;
  doc["tool"] = "tprop_bench --memory";
  doc["device"] = device;
  doc["scenes"] = nlohmann::json::array();
  for (const MemoryRecord& m : records)
    doc["scenes"].push_back({{"spec", m.plan.spec},
                             {"entities", m.entities},
                             {"slots", m.slots},
                             {"store_rss_bytes", m.store_rss},
                             {"order_rss_bytes", m.order_rss},
                             {"propagator_rss_bytes", m.propagator_rss},
                             {"device_bytes", m.device_bytes},
                             {"device_buffers", m.device_buffers},
                             {"largest_buffer_bytes", m.largest_buffer_bytes},
                             {"slot_pieces", m.slot_pieces},
                             {"staging_bytes", m.staging_bytes},
                             {"first_frame_staging_bytes", m.first_frame_staging_bytes},
                             {"first_frame_mirror_bytes", m.first_frame_mirror_bytes},
                             {"in_place_arrays", m.in_place_arrays},
                             {"in_place_inputs", m.in_place_inputs},
                             {"peak_rss_bytes", m.peak_rss},
                             {"validate_max_error_in_tolerances",
                              m.validate_worst >= 0 ? nlohmann::json(m.validate_worst)
                                                    : nlohmann::json(nullptr)}});
  return doc.dump(2) + "\n";
}

}  // namespace tprop::bench
