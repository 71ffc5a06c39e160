#include "cli_world.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <system_error>
#include <vector>

#include <nlohmann/json.hpp>

#include "cli_backend.h"
#include "cli_report.h"
#include "compare.h"
#include "dcl_world.h"
#include "dcl_world_dump.h"
#include "dcl_world_gen.h"
#include "depth_order.h"
#include "median.h"
#include "reference.h"

namespace tprop::cli {
namespace {

using Clock = std::chrono::steady_clock;

double ms_since(Clock::time_point start) {
  return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

struct WorldFrame {
  uint32_t scenes = 0;  // loaded after the frame's loads and unloads
  uint32_t loaded = 0, unloaded = 0;
  uint64_t entities = 0;
  uint64_t bytes = 0;      // stream bytes fed
  double ingest_ms = 0;    // loads, unloads, feeding: the DclWorld's share
  double unload_ms = 0;    // of which the unloads
  double update_ms = 0;    // cpu: take changes + depth sort; gpu: Propagator::update (host)
  double evaluate_ms = 0;  // cpu: the reference's evaluate; gpu: record + submit + wait, wall
  bool on_gpu = false;
  std::optional<StageTimes> gpu_times;
  std::optional<FrameStats> stats;  // GPU path
};

struct WorldReport {
  std::string input;
  std::string backend, device, fallback;
  double load_ms = 0;
  std::vector<WorldFrame> frames;
  uint64_t shadowed = 0;
  std::optional<ValidationReport> validation;  // the worst frame's
  uint32_t validation_frame = 0;
  std::string dump;  // the file written, if any
  std::string output_layout;  // GPU path: "4x4" or "3x4"
};

// The frames after the first (which loads everything), or the first alone.
std::vector<WorldFrame> steady_frames(const WorldReport& r) {
  if (r.frames.size() <= 1) return r.frames;
  return {r.frames.begin() + 1, r.frames.end()};
}

// The field of each frame.
template <class Field>
std::vector<double> values_of(const std::vector<WorldFrame>& frames, Field field) {
  std::vector<double> v;
  for (const WorldFrame& f : frames) v.push_back(field(f));
  return v;
}

template <class Field>
double median_of(const std::vector<WorldFrame>& frames, Field field) {
  return median(values_of(frames, field)).value_or(0);
}

// The 90th percentile (nearest rank) of the field over the frames: what all but one frame in
// ten stay within, where a hitch shows that the median hides.
template <class Field>
double p90_of(const std::vector<WorldFrame>& frames, Field field) {
  std::vector<double> v = values_of(frames, field);
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v[(v.size() * 9 + 9) / 10 - 1];
}

double gpu_ms(const WorldFrame& f) { return f.gpu_times ? f.gpu_times->total_ms() : 0.0; }
double frame_ms(const WorldFrame& f) { return f.ingest_ms + f.update_ms + f.evaluate_ms; }
// The host's work: on the GPU backend ingest + Propagator::update (recording and submitting,
// which are not timed apart from the wait, left out); on the CPU backend all of the frame.
double host_ms(const WorldFrame& f) {
  return f.on_gpu ? f.ingest_ms + f.update_ms : frame_ms(f);
}
double ingest_of(const WorldFrame& f) { return f.ingest_ms; }
double update_of(const WorldFrame& f) { return f.update_ms; }
double evaluate_of(const WorldFrame& f) { return f.evaluate_ms; }

// The steady frame with the most host time (the hitch a player would see), numbered as the
// report numbers frames; zero when there is none.
struct SlowestFrame {
  double host_ms = 0;
  size_t frame = 0;
};
SlowestFrame slowest_host_frame(const WorldReport& r) {
  SlowestFrame slowest;
  for (size_t k = r.frames.size() > 1 ? 1 : 0; k < r.frames.size(); ++k)
    if (host_ms(r.frames[k]) > slowest.host_ms) slowest = {host_ms(r.frames[k]), k};
  return slowest;
}

void print_world_summary(std::FILE* out, const WorldReport& r) {
  const WorldFrame& last = r.frames.back();
  std::fprintf(out, "input            %s\n", r.input.c_str());
  std::fprintf(out, "scenes           %u at the end\n", last.scenes);
  std::fprintf(out, "entities         %llu at the end (scene roots included)\n",
               static_cast<unsigned long long>(last.entities));
  if (r.shadowed)
    std::fprintf(out, "shadowed         %llu (a second live version of a held number)\n",
                 static_cast<unsigned long long>(r.shadowed));
  if (r.backend == "gpu") {
    std::fprintf(out, "backend          gpu (%s)\n", r.device.c_str());
  } else {
    std::fprintf(out, "backend          cpu (CPU reference)\n");
  }
  std::fprintf(out, "load             %.2f ms (reading or generating the streams)\n", r.load_ms);
  std::fprintf(out, "frames           %zu; per frame, ms (%s)\n", r.frames.size(),
               r.backend == "gpu"
                   ? "update: Propagator::update on the host; evaluate: record, submit, wait; "
                     "host: ingest + update"
                   : "update: take changes + depth sort; evaluate: the reference");
  std::fprintf(out, "  frame  scenes  +/-      entities       bytes    ingest    update  evaluate"
                    "       gpu      host     total\n");
  for (size_t i = 0; i < r.frames.size(); ++i) {
    const WorldFrame& f = r.frames[i];
    char loads[16];
    std::snprintf(loads, sizeof loads, "+%u/-%u", f.loaded, f.unloaded);
    std::fprintf(out, "  %5zu  %6u  %-7s %9llu %11llu %9.3f %9.3f %9.3f %9.3f %9.3f %9.3f\n", i,
                 f.scenes, loads, static_cast<unsigned long long>(f.entities),
                 static_cast<unsigned long long>(f.bytes), f.ingest_ms, f.update_ms,
                 f.evaluate_ms, gpu_ms(f), host_ms(f), frame_ms(f));
  }
  const std::vector<WorldFrame> steady = steady_frames(r);
  std::fprintf(out,
               "median           ingest %.3f ms, update %.3f ms, evaluate %.3f ms, gpu %.3f ms, "
               "host %.3f ms, frame %.3f ms (%s)\n",
               median_of(steady, ingest_of), median_of(steady, update_of),
               median_of(steady, evaluate_of), median_of(steady, gpu_ms),
               median_of(steady, host_ms), median_of(steady, frame_ms),
               r.frames.size() > 1 ? "frames 1 on; frame 0 loads the world" : "frame 0");
  const SlowestFrame slowest = slowest_host_frame(r);
  std::fprintf(out,
               "p90              ingest %.3f ms, update %.3f ms, host %.3f ms; "
               "slowest host %.3f ms (frame %zu)\n",
               p90_of(steady, ingest_of), p90_of(steady, update_of), p90_of(steady, host_ms),
               slowest.host_ms, slowest.frame);
  if (!r.dump.empty())
    std::fprintf(out, "dump             %s (after frame %zu)\n", r.dump.c_str(),
                 r.frames.size() - 1);
  if (r.validation)
    std::fprintf(out, "validate         %s (worst frame %u; store entity %u is scene slot %u, "
                      "entity number %u)\n",
                 validation_line(*r.validation).c_str(), r.validation_frame,
                 r.validation->worst_entity, r.validation->worst_entity >> 16,
                 r.validation->worst_entity & 0xffff);
}

std::string world_json(const WorldReport& r) {
  using nlohmann::json;
  json j;
  j["input"] = r.input;
  j["backend"] = r.backend;
  j["device"] = r.device;
  j["fallback"] = r.fallback.empty() ? json(nullptr) : json(r.fallback);
  j["output_layout"] = r.output_layout.empty() ? json(nullptr) : json(r.output_layout);
  j["load_ms"] = r.load_ms;
  j["scenes"] = r.frames.back().scenes;
  j["entities"] = r.frames.back().entities;
  j["shadowed"] = r.shadowed;
  json frames = json::array();
  for (const WorldFrame& f : r.frames) {
    json gpu = nullptr;
    if (f.gpu_times)
      gpu = {{"upload", f.gpu_times->upload_ms},
             {"evaluate", f.gpu_times->evaluate_ms},
             {"total", f.gpu_times->total_ms()}};
    // What the Propagator's update did (FrameStats), on the GPU path.
    json staged = nullptr;
    if (f.stats) {
      json stages = json::object();  // where update()'s time went
      for (const auto& [name, ms] : f.stats->host.named()) stages[name] = ms;
      staged = {{"entities", f.stats->staged_entities},
                {"values_only", f.stats->values_only_entities},
                {"values_in_place", f.stats->values_in_place},
                {"moved", f.stats->moved_entities},
                {"compacted", f.stats->compacted_entities},
                {"slot_ordered", f.stats->slot_ordered_entities},
                {"slot_order", f.stats->slot_order},
                {"structural_changes", f.stats->structural_changes},
                {"upload_bytes", f.stats->upload_bytes},
                {"evaluated", f.stats->evaluated_entities},
                {"full_pass", f.stats->full_pass},
                {"pipelines_created", f.stats->pipelines_created},
                {"update_stages_ms", stages}};
    }
    frames.push_back({{"scenes", f.scenes},       {"loaded", f.loaded},
                      {"unloaded", f.unloaded},   {"entities", f.entities},
                      {"bytes", f.bytes},         {"ingest_ms", f.ingest_ms},
                      {"unload_ms", f.unload_ms}, {"update_ms", f.update_ms},
                      {"evaluate_ms", f.evaluate_ms}, {"gpu_time_ms", gpu},
                      {"host_ms", host_ms(f)},    {"frame_ms", frame_ms(f)},
                      {"staged", staged}});
  }
  j["frames"] = std::move(frames);
  const std::vector<WorldFrame> steady = steady_frames(r);
  j["median_ms"] = {{"ingest", median_of(steady, ingest_of)},
                    {"update", median_of(steady, update_of)},
                    {"evaluate", median_of(steady, evaluate_of)},
                    {"gpu", median_of(steady, gpu_ms)},
                    {"host", median_of(steady, host_ms)},
                    {"frame", median_of(steady, frame_ms)}};
  j["p90_ms"] = {{"ingest", p90_of(steady, ingest_of)},
                 {"update", p90_of(steady, update_of)},
                 {"host", p90_of(steady, host_ms)},
                 {"frame", p90_of(steady, frame_ms)}};
  j["max_host_ms"] = slowest_host_frame(r).host_ms;
  if (r.validation) {
    const Comparison& c = r.validation->comparison;
    j["validate"] = {{"max_error_in_tolerances", c.worst_ratio},
                     {"max_abs_error", c.max_abs_error},
                     {"worst_frame", r.validation_frame},
                     {"worst_entity", r.validation->worst_entity},
                     {"elements_outside", c.mismatches},
                     {"within_tolerance", c.within_tolerance()}};
  } else {
    j["validate"] = nullptr;
  }
  j["dump"] = r.dump.empty() ? json(nullptr) : json(r.dump);
  return j.dump();
}

int fail(const std::string& message) {
  std::fprintf(stderr, "tprop run: %s\n", message.c_str());
  return kExitFailure;
}

// The world's scenes as the replay drives them: loads, unloads and each frame's chunk.
class Replay {
 public:
  explicit Replay(const DclWorldStreams& streams)
      : streams_(streams), ids_(streams.scenes.size()) {}

  // The frame's unloads and loads, then every loaded scene's chunk in one feed (which overlaps
  // the scenes' cache misses), then the ends of the streams that the frame completes.
  Status ingest(uint32_t f, WorldFrame& frame) {
    chunks_.clear();
    ending_.clear();
    for (size_t i = 0; i < streams_.scenes.size(); ++i) {
      const DclWorldScene& sc = streams_.scenes[i];
      if (ids_[i] && sc.unload_frame == f) {
        const auto start = Clock::now();
        if (Status st = world_.remove_scene(*ids_[i]); !st)
          return Error{"frame " + std::to_string(f) + ": " + st.error().message};
        frame.unload_ms += ms_since(start);
        ids_[i].reset();
        ++frame.unloaded;
      }
      if (f == sc.load_frame) {
        Result<DclWorld::SceneId> id = world_.add_scene(sc.name, sc.parcel);
        if (!id) return id.error();
        ids_[i] = *id;
        ++frame.loaded;
      }
      if (!ids_[i] || f - sc.load_frame >= sc.chunk_count()) continue;
      chunks_.push_back({*ids_[i], sc.chunk(f - sc.load_frame)});
      frame.bytes += chunks_.back().bytes.size();
      if (f - sc.load_frame + 1 == sc.chunk_count()) ending_.push_back(*ids_[i]);
    }
    for (const Status& s : world_.feed(chunks_))
      if (!s) return Error{"frame " + std::to_string(f) + ": " + s.error().message};
    for (DclWorld::SceneId id : ending_)
      if (Status s = world_.finish(id); !s) return s.error();
    frame.scenes = uint32_t(world_.scene_count());
    frame.entities = world_.store().size();
    return ok_status();
  }

  DclWorld& world() { return world_; }
  // The loaded scenes in the streams' (the manifest's) order.
  std::vector<DclWorld::SceneId> loaded() const {
    std::vector<DclWorld::SceneId> out;
    for (const std::optional<DclWorld::SceneId>& id : ids_)
      if (id) out.push_back(*id);
    return out;
  }
  uint64_t shadowed() const {
    uint64_t n = 0;
    for (DclWorld::SceneId s : world_.scenes()) n += world_.shadowed(s);
    return n;
  }

 private:
  const DclWorldStreams& streams_;
  DclWorld world_;
  std::vector<std::optional<DclWorld::SceneId>> ids_;
  std::vector<DclWorld::Chunk> chunks_;    // this frame's
  std::vector<DclWorld::SceneId> ending_;  // the scenes whose stream this frame completes
};

}  // namespace

bool is_world_input(const std::string& scene) {
  return is_dcl_world_spec(scene) || is_dcl_world_folder(scene);
}

int run_world(const RunOptions& options, const std::string& input) {
  WorldReport report;
  report.input = input;
  auto start = Clock::now();
  Result<DclWorldStreams> streams =
      is_dcl_world_spec(input)
          ? generate_dcl_world(input, options.frames ? options.frames : 1, options.seed)
          : read_dcl_world(input);
  if (!streams) return fail(streams.error().message);
  report.load_ms = ms_since(start);
  if (!options.save_world.empty()) {
    std::error_code ec;
    std::filesystem::create_directories(options.save_world, ec);
    if (ec) return fail("--save-world: cannot create " + options.save_world + ": " + ec.message());
    if (Status s = write_dcl_world(options.save_world, *streams); !s)
      return fail("--save-world: " + s.error().message);
  }
  const uint32_t frames = options.frames ? options.frames : std::max(1u, streams->frame_count());

  Result<std::unique_ptr<GpuBackend>> opened =
      open_gpu_for_run(options, report.fallback);
  if (!opened) return fail(opened.error().message);
  std::unique_ptr<GpuBackend> gpu = std::move(*opened);
  const bool on_gpu = options.backend != Backend::Cpu && gpu;
  report.backend = on_gpu ? "gpu" : "cpu";
  report.device = on_gpu ? gpu->device_name() : "CPU reference";
  if (on_gpu) report.output_layout = output_layout_name(options.output_layout);

  Replay replay(*streams);
  EntityStore& store = replay.world().store();
  CpuReference reference;
  DepthOrder order;
  std::vector<float4x4> local_to_world;
  for (uint32_t f = 0; f < frames; ++f) {
    WorldFrame frame;
    start = Clock::now();
    if (Status s = replay.ingest(f, frame); !s) return fail(input + ": " + s.error().message);
    frame.ingest_ms = ms_since(start);

    // The frame protocol (README.md): the CPU re-sorts only when the hierarchy changed; with
    // --validate it sorts without taking the changes, which the GPU's update() then takes.
    if (!on_gpu || options.validate) {
      start = Clock::now();
      if (options.validate) {
        order = sort_by_depth(store);
      } else if (store.take_changes().hierarchy || f == 0) {
        order = sort_by_depth(store);
      }
      const double sort_ms = ms_since(start);
      start = Clock::now();
      reference.evaluate(store, order, local_to_world);
      if (!gpu) store.mark_statics_baked();
      if (!on_gpu) {
        frame.update_ms = sort_ms;
        frame.evaluate_ms = ms_since(start);
      }
    }
    const bool dump_now = !options.dump.empty() && f + 1 == frames;
    if (gpu) {
      Result<Evaluation> evaluated = gpu->frame(store, options.validate || (on_gpu && dump_now));
      if (!evaluated) return fail("frame " + std::to_string(f) + ": " + evaluated.error().message);
      if (on_gpu) {
        frame.on_gpu = true;
        frame.update_ms = evaluated->update_ms;
        frame.evaluate_ms = evaluated->evaluate_ms - evaluated->update_ms;
        frame.gpu_times = evaluated->gpu_times;
        frame.stats = evaluated->stats;
      }
      if (options.validate) {
        Result<Comparison> compared = compare_local_to_world(
            order, local_to_world, in_reference_order(order, *evaluated));
        if (!compared) return fail(compared.error().message);
        if (!report.validation || compared->worst_ratio > report.validation->comparison.worst_ratio) {
          ValidationReport v;
          v.comparison = std::move(*compared);
          if (v.comparison.compared > 0)
            v.worst_entity = store.id_at(order.slot[v.comparison.worst_position]);
          report.validation = std::move(v);
          report.validation_frame = f;
        }
      }
      // The dump shows what the backend that ran computed.
      if (on_gpu && dump_now) {
        order = std::move(evaluated->order);
        local_to_world = std::move(evaluated->local_to_world);
      }
    }
    report.frames.push_back(frame);
  }
  if (!options.dump.empty()) {
    const std::vector<DclWorld::SceneId> scenes = replay.loaded();
    if (Status s = write_world_dump(options.dump, replay.world(), scenes, frames, order,
                                    local_to_world);
        !s)
      return fail(s.error().message);
    report.dump = options.dump;
  }
  report.shadowed = replay.shadowed();

  if (options.json) {
    std::printf("%s\n", world_json(report).c_str());
  } else {
    print_world_summary(stdout, report);
  }
  std::fflush(stdout);
  if (report.validation && !report.validation->comparison.within_tolerance()) {
    std::fprintf(stderr,
                 "tprop run: --validate: frame %u: the GPU differs from the CPU reference beyond "
                 "the tolerance (worst at store entity %u: scene slot %u, entity number %u)\n",
                 report.validation_frame, report.validation->worst_entity,
                 report.validation->worst_entity >> 16, report.validation->worst_entity & 0xffff);
    return kExitFailure;
  }
  return kExitOk;
}

}  // namespace tprop::cli
