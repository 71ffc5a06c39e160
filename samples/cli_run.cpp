#include "cli_run.h"

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "cli_args.h"
#include "cli_assets.h"
#include "cli_backend.h"
#include "cli_progress.h"
#include "cli_report.h"
#include "cli_world.h"
#include "compare.h"
#include "dump.h"
#include "result.h"
#include "scene.h"
#include "scene_input.h"

namespace tprop::cli {
namespace {

double ms_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
      .count();
}

uint64_t count_statics(const EntityStore& store, const DepthOrder& order) {
  uint64_t n = 0;
  for (uint32_t pos = 0; pos < order.size(); ++pos)
    n += store.has_at(order.slot[pos], Component::Static);
  return n;
}

void on_compare_progress(double fraction, void* user) {
  static_cast<Progress*>(user)->set_fraction(fraction);
}

int fail(Progress& progress, const std::string& message) {
  progress.done();
  std::fprintf(stderr, "tprop run: %s\n", message.c_str());
  return kExitFailure;
}

}  // namespace

std::string default_scene() { return bundled_asset("solar_system.json"); }

const char* run_usage() {
  return "usage: tprop run [SCENE] [--backend cpu|gpu|auto] [--seed N] [--dump FILE]\n"
         "                 [--device NAME|INDEX] [--max-buffer-bytes B] [--output-layout L]\n"
         "                 [--validate] [--json]\n"
         "       tprop run WORLD [--frames N] [--save-world DIR] [--dump FILE] [--backend ...]\n"
         "                 [--seed N] [--device ...] [--max-buffer-bytes B] [--output-layout L]\n"
         "                 [--slot-order S] [--validate] [--json]\n"
         "\n"
         "Loads SCENE (default: the bundled solar system), computes every entity's\n"
         "LocalToWorld once and prints a summary: entities, roots, levels, cycles broken,\n"
         "unknown parents, the backend and device, GPU stage times and ns per entity.\n"
         "\n"
         "  SCENE               a JSON scene (.json; format: README.md), a glTF file (.gltf,\n"
         "                      .glb), a Decentraland CRDT stream (.crdt), or a generator\n"
         "                      spec: gen:chain:N, gen:flat:N, gen:forest:N[:B],\n"
         "                      gen:dcl:SCENES:ENTITIES, or - for standard input; or a\n"
         "                      Decentraland WORLD: a folder with world.json, or\n"
         "                      gen:dclworld:SCENES[:PARCELS][:walk=VIEW][:edits=KINDS]\n"
         "                      (README.md); with walk=VIEW a player walks east from parcel\n"
         "                      -150,-150 one parcel a frame, and scenes load when they come\n"
         "                      within VIEW parcels of the player and unload when they fall\n"
         "                      behind; edits=all (default: moves, re-parents, deletions,\n"
         "                      creations, cycles), spawn (moves keeping their parents,\n"
         "                      deletions, creations) or move (moves alone)\n"
         "  --frames N          replay a WORLD for N frames (default: as many as its streams\n"
         "                      fill; a generated world: 1) and report each frame's times\n"
         "  --save-world DIR    write the WORLD's streams and world.json into DIR\n"
         "  --backend BACKEND   cpu: the CPU reference; gpu: Vulkan compute (exit 1 without a\n"
         "                      device); auto (default): gpu when a device is usable, else cpu\n"
         "                      with a one-line notice on stderr saying why\n"
         "  --device D          the Vulkan device by index or name part (`tprop devices`);\n"
         "                      default: the TPROP_DEVICE environment variable, else the best\n"
         "  --max-buffer-bytes B  the GPU path's largest buffer (K, M, G suffixes; at least\n"
         "                      16K): larger arrays are split into pieces (default: the\n"
         "                      device's maxMemoryAllocationSize)\n"
         "  --output-layout L   the GPU path's LocalToWorld buffer: 4x4 (default, a float4x4,\n"
         "                      64 bytes an entity) or 3x4 (its three affine rows, 48 bytes);\n"
         "                      3x4 fails (exit 1, naming the entity) on a scene with a matrix\n"
         "                      whose last row is not (0, 0, 0, 1); results, dumps and\n"
         "                      --validate are the same either way\n"
         "  --slot-order S      whether the GPU path sorts a wide level of its order back\n"
         "                      into slot order once edits scattered a thirty-second of it:\n"
         "                      auto (default: on a CPU device), restore or keep (README.md,\n"
         "                      PropagatorOptions::slot_order)\n"
         "  --validate          run both backends and print the largest difference of the GPU\n"
         "                      from the CPU reference, in units of the tolerance (16 float\n"
         "                      ulps per hierarchy level, relative to the matrix's magnitude;\n"
         "                      see hierarchy/compare.h) and absolute; exit 1 above it\n"
         "  --json              print the report as one JSON object on stdout instead\n"
         "  --seed N            the seed of a generator spec (default 1)\n"
         "  --dump FILE         write every entity's LocalToWorld to FILE as JSON, in id order,\n"
         "                      from the backend that ran:\n"
         "                      {\"entities\": [{\"id\": 1, \"name\": \"sun\",\n"
         "                                     \"localToWorld\": [16 numbers, column-major]}]}\n"
         "                      a WORLD's, after its last frame, by scene and entity id (id 0:\n"
         "                      the scene root; ids are the scene stream's own):\n"
         "                      {\"frames\": N, \"scenes\": [{\"name\": \"plaza\", \"slot\": 0,\n"
         "                        \"parcel\": [x, y], \"entities\": [{\"id\": 512,\n"
         "                        \"localToWorld\": [...]}]}]}\n"
         "  -h, --help          print this help\n"
         "\n"
         "Work longer than a second shows a progress line on stderr when it is a terminal.\n"
         "exit status: 0 ok, 1 bad input, runtime failure or --validate above the tolerance,\n"
         "2 usage error\n";
}

int run_command(const std::vector<std::string>& args) {
  Result<RunOptions> parsed = parse_run_args(args);
  if (std::optional<int> exit = usage_or_help("run", parsed, run_usage())) return *exit;
  const RunOptions& options = *parsed;
  // A world replays frame by frame (cli_world.h); --frames and --save-world are for worlds.
  if (is_world_input(options.scene)) return run_world(options, options.scene);
  if (options.frames || !options.save_world.empty()) {
    const Error e{"--frames and --save-world replay a world (a folder with world.json, or "
                  "gen:dclworld:SCENES[:PARCELS][:walk=VIEW][:edits=KINDS]), not '" +
                  (options.scene.empty() ? default_scene() : options.scene) + "'"};
    return *usage_or_help("run", &e, false, run_usage());
  }

  Progress progress = Progress::for_stderr();
  RunReport report;
  const std::string spec = options.scene.empty() ? default_scene() : options.scene;
  progress.phase("loading " + spec);
  auto start = std::chrono::steady_clock::now();
  Result<Scene> loaded = load_scene(spec, options.seed);
  progress.done();
  if (!loaded) {
    std::fprintf(stderr, "tprop run: %s\n", loaded.error().message.c_str());
    if (options.scene.empty())
      std::fprintf(stderr, "tprop run: the bundled default scene is missing; name a SCENE\n");
    return kExitFailure;
  }
  report.load_ms = ms_since(start);
  Scene& scene = *loaded;
  for (const std::string& n : scene.notes) std::fprintf(stderr, "note: %s\n", n.c_str());
  for (const std::string& w : scene.warnings) std::fprintf(stderr, "warning: %s\n", w.c_str());
  report.input = scene.source;
  report.warnings = scene.warnings.size();

  // The GPU, when the backend or --validate asks for it.
  progress.phase("opening the Vulkan device");
  Result<std::unique_ptr<GpuBackend>> opened =
      open_gpu_for_run(options, report.fallback);
  progress.done();
  if (!opened) return fail(progress, opened.error().message);
  std::unique_ptr<GpuBackend> gpu = std::move(*opened);
  const bool on_gpu = options.backend != Backend::Cpu && gpu;
  report.backend = on_gpu ? "gpu" : "cpu";
  report.device = on_gpu ? gpu->device_name() : "CPU reference";
  if (on_gpu) report.output_layout = output_layout_name(options.output_layout);

  // The frame protocol (README.md). With --validate the CPU reference evaluates first without
  // baking, then the GPU runs the same frame (and bakes), as the GPU tests do.
  std::optional<Evaluation> cpu_frame, gpu_frame;
  if (!on_gpu || options.validate) {
    progress.phase("evaluating on the CPU reference");
    cpu_frame = evaluate_cpu(scene.store, /*bake=*/!gpu);
    progress.done();
  }
  if (gpu) {
    progress.phase("evaluating on the GPU");
    Result<Evaluation> evaluated = gpu->evaluate(scene.store);
    progress.done();
    if (!evaluated) return fail(progress, evaluated.error().message);
    gpu_frame = std::move(*evaluated);
  }
  const Evaluation& frame = on_gpu ? *gpu_frame : *cpu_frame;
  report.sort_ms = frame.sort_ms;
  report.evaluate_ms = frame.evaluate_ms;
  report.gpu_times = frame.gpu_times;
  report.entities = frame.order.size();
  report.roots = frame.order.roots;
  report.levels = frame.order.level_count();
  report.cycles_broken = frame.order.cycles_broken;
  report.entities_on_cycles = frame.order.entities_on_cycles;
  report.unknown_parents = frame.order.unknown_parents;
  report.statics = count_statics(scene.store, frame.order);

  if (options.validate) {
    progress.phase("validating against the CPU reference");
    const std::vector<float4x4> got =
        in_reference_order(cpu_frame->order, *gpu_frame);
    Result<Comparison> compared =
        compare_local_to_world(cpu_frame->order, cpu_frame->local_to_world, got, 8,
                               on_compare_progress, &progress);
    progress.done();
    if (!compared) return fail(progress, compared.error().message);
    ValidationReport v;
    v.comparison = std::move(*compared);
    if (v.comparison.compared > 0) {
      const std::vector<uint32_t>& slot = cpu_frame->order.slot;
      v.worst_entity = scene.store.id_at(slot[v.comparison.worst_position]);
      v.max_abs_entity = scene.store.id_at(slot[v.comparison.max_abs_position]);
    }
    report.validation = std::move(v);
  }

  if (!options.dump.empty()) {
    progress.phase("writing " + options.dump);
    start = std::chrono::steady_clock::now();
    Status written = write_dump(options.dump, scene, frame.order, frame.local_to_world);
    progress.done();
    if (!written) return fail(progress, written.error().message);
    report.dump = options.dump;
    report.dump_ms = ms_since(start);
  }

  if (options.json) {
    std::printf("%s\n", report_json(report).c_str());
  } else {
    print_summary(stdout, report);
  }
  std::fflush(stdout);
  if (report.validation && !report.validation->comparison.within_tolerance()) {
    const Comparison& c = report.validation->comparison;
    std::fprintf(stderr, "tprop run: --validate: the GPU differs from the CPU reference beyond "
                         "the tolerance:\n");
    for (const Mismatch& m : c.first) {
      std::fprintf(stderr,
                   "  entity %u (level %u) element [%d][%d]: GPU %.9g, reference %.9g, "
                   "tolerance %.3g\n",
                   scene.store.id_at(cpu_frame->order.slot[m.position]), m.level, m.column, m.row,
                   m.got, m.expected, m.tolerance);
    }
    return kExitFailure;
  }
  return kExitOk;
}

}  // namespace tprop::cli
