// tprop_bench: the scoreboard of tprop's GPU path (README, Performance). Scenes and sizes from
// the command line (bench_options.h, bench_scenes.h), frames and their edits (bench_edits.h),
// the measurements (bench_frames.h) against a single-thread loop (bench_baseline.h), and the
// report (bench_report.h).
#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

#include "bench_memory.h"
#include "bench_options.h"
#include "bench_report.h"
#include "bench_scenes.h"
#include "depth_order.h"
#include "scene_generators.h"

using namespace tprop;
using namespace tprop::bench;

namespace {

int fail(const std::string& message) {
  std::fprintf(stderr, "tprop_bench: %s\n", message.c_str());
  return kExitFailure;
}

// The largest id plus one: where the spawn frames take new ids.
EntityId next_free_id(const EntityStore& store) {
  EntityId next = 0;
  for (uint32_t slot = 0; slot < store.slot_capacity(); ++slot)
    if (store.alive_at(slot) && store.id_at(slot) >= next) next = store.id_at(slot) + 1;
  return next;
}

}  // namespace

int main(int argc, char** argv) {
  const Result<BenchOptions> parsed =
      parse_bench_args(std::vector<std::string>(argv + 1, argv + argc));
  if (!parsed) {
    std::fprintf(stderr, "tprop_bench: %s\n\n%s", parsed.error().message.c_str(), kUsage);
    return kExitUsage;
  }
  const BenchOptions& options = parsed.value();
  if (options.help) {
    std::fputs(kUsage, stdout);
    return kExitOk;
  }
  // Every spec judged before the device starts and the first scene runs.
  for (const std::string& spec : options.specs) {
    if (!is_generator_spec(spec))
      return fail("'" + spec + "' is not a generator spec (gen:KIND:...; see README, generators)");
    if (Status st = check_generator_spec(spec); !st) return fail(st.error().message);
  }

  Result<VulkanContext> context = VulkanContext::create_headless({.device = options.device});
  if (!context) return fail(context.error().message);
  const std::string device = context->device_name();
  if (options.memory) {
    std::vector<MemoryRecord> records;
    if (!options.json) std::printf("device      %s\n", device.c_str());
    for (const PlannedScene& plan : plan_scenes(options)) {
      Result<MemoryRecord> m =
          measure_memory(*context, plan, options.seed, options.propagator, options.validate);
      if (!m) return fail(plan.spec + ": " + m.error().message);
      if (!options.json) print_memory(stdout, *m, records.empty());
      records.push_back(std::move(*m));
    }
    if (options.json) std::fputs(memory_json(device, records).c_str(), stdout);
    return kExitOk;
  }
  // The device's own copy rate, in this run: what the frames' GB/s are a share of.
  const Result<CopyCeiling> ceiling =
      measure_copy_ceiling(*context, options.warm_gpu_ms, options.ceiling_bytes);
  // The host's: what the update times (mostly scattered lines) are a number of.
  const Result<HostMemoryFloor> host_floor = measure_host_memory_floor(options.host_floor_bytes);
  if (!options.json)
    print_text_header(stdout, device, options.propagator.output_layout, ceiling, host_floor);

  std::vector<SceneRecord> records;
  for (const PlannedScene& plan : plan_scenes(options)) {
    SceneRecord record;
    record.plan = plan;
    const auto t0 = std::chrono::steady_clock::now();
    Result<Scene> scene = generate_scene(plan.spec, options.seed);
    if (!scene) return fail(scene.error().message);
    record.generate_ms =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    EntityStore& store = scene->store;
    const DepthOrder order = sort_by_depth(store);
    record.entities = order.size();
    record.levels = order.level_count();
    if (plan.kind == "spec") record.plan.structural = record.levels > 1;
    if (!options.json) print_text_scene(stdout, record);

    Result<SceneRunner> runner = SceneRunner::create(*context, options.propagator, options.warm_gpu_ms);
    if (!runner) return fail(runner.error().message);
    EntityId next_id = next_free_id(store);
    for (FrameKind kind : frames_for(record.plan.structural, options.frames)) {
      // The values frames are ones a scene repeats every frame: measured the second time in a
      // row, after the first has grown the deltas to the frame's changes (everything moving at
      // 1M: 96 MB of new buffers, most of the first one's host time on lavapipe; 1% at 10M:
      // 4.6 MB of fresh staging).
      if (kind == FrameKind::ValuesAll || kind == FrameKind::Values)
        if (Result<FrameRecord> first =
                runner->run_frame(kind, store, options.seed + 1, next_id, options.validate);
            !first)
          return fail(plan.spec + ", frame " + frame_kind_name(kind) + ": " +
                      first.error().message);
      // Each run its own edit: run 0 the seed's (as without --repeat), the warm-up seed + 1,
      // later runs the seeds after that.
      const uint32_t runs = kind == FrameKind::Full ? 1 : options.repeat;
      for (uint32_t run = 0; run < runs; ++run) {
        const uint64_t seed = run == 0 ? options.seed : options.seed + 1 + run;
        Result<FrameRecord> frame = runner->run_frame(kind, store, seed, next_id, options.validate);
        if (!frame) {
          return fail(plan.spec + ", frame " + frame_kind_name(kind) + ": " +
                      frame.error().message);
        }
        frame->run = run;
        if (!options.json) print_text_frame(stdout, *frame);
        record.frames.push_back(std::move(*frame));
      }
    }
    if (!options.json) print_text_summary(stdout, record);
    records.push_back(std::move(record));
  }
  if (options.json)
    std::fputs(json_report(device, options, ceiling, host_floor, records).c_str(), stdout);
  return kExitOk;
}
