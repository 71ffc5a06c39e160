#include "cli_run.h"

#include <charconv>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <optional>
#include <string>
#include <vector>

#include "depth_order.h"
#include "dump.h"
#include "reference.h"
#include "result.h"
#include "scene.h"
#include "scene_input.h"

#ifndef TPROP_ASSETS_DIR
#error "TPROP_ASSETS_DIR (the absolute path of assets/) must be defined by the build"
#endif

namespace tprop::cli {
namespace {

// The scene `tprop run` loads when none is named. The build bakes in the source tree's assets/
// folder, so the command works straight from the build tree.
const std::string kDefaultScene = std::string(TPROP_ASSETS_DIR) + "/solar_system.json";

enum class Backend { Cpu, Gpu, Auto };

struct RunOptions {
  std::string scene;  // empty: the default scene
  Backend backend = Backend::Auto;
  std::string dump;  // empty: no dump
  uint64_t seed = 1;  // for generator specs
  bool help = false;
};

// Parses the arguments after "run"; the error is a usage message (exit code 2).
Result<RunOptions> parse_run_args(const std::vector<std::string>& args) {
  RunOptions options;
  bool options_done = false;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    // "--name VALUE" or "--name=VALUE".
    auto value_of = [&](const std::string& name) -> std::optional<std::string> {
      if (a == name) {
        if (i + 1 == args.size()) return std::nullopt;
        return args[++i];
      }
      return a.substr(name.size() + 1);
    };
    auto is_option = [&](const std::string& name) {
      return a == name || a.rfind(name + "=", 0) == 0;
    };
    if (!options_done && (a == "-h" || a == "--help")) {
      options.help = true;
    } else if (!options_done && a == "--") {
      options_done = true;
    } else if (!options_done && is_option("--backend")) {
      const std::optional<std::string> v = value_of("--backend");
      if (!v) return Error{"--backend needs a value: cpu, gpu or auto"};
      if (*v == "cpu") options.backend = Backend::Cpu;
      else if (*v == "gpu") options.backend = Backend::Gpu;
      else if (*v == "auto") options.backend = Backend::Auto;
      else return Error{"unknown backend '" + *v + "' (expected cpu, gpu or auto)"};
    } else if (!options_done && is_option("--dump")) {
      const std::optional<std::string> v = value_of("--dump");
      if (!v || v->empty()) return Error{"--dump needs a file name"};
      options.dump = *v;
    } else if (!options_done && is_option("--seed")) {
      const std::optional<std::string> v = value_of("--seed");
      if (!v) return Error{"--seed needs a value"};
      const char* end = v->data() + v->size();
      const auto [ptr, ec] = std::from_chars(v->data(), end, options.seed);
      if (v->empty() || ec != std::errc() || ptr != end) {
        return Error{"--seed must be an integer from 0 to 18446744073709551615, got '" + *v + "'"};
      }
    } else if (!options_done && a.size() > 1 && a[0] == '-') {
      return Error{"unknown option '" + a + "'"};
    } else if (options.scene.empty()) {
      if (a.empty()) return Error{"the SCENE argument is empty"};
      options.scene = a;
    } else {
      return Error{"more than one SCENE given ('" + options.scene + "' and '" + a + "')"};
    }
  }
  return options;
}

double ms_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
      .count();
}

// One frame of the frame protocol on the chosen backend: LocalToWorld by DepthOrder position.
// The GPU path (host/) slots in here: Backend::Gpu, and Backend::Auto when a device is found.
Result<std::vector<float4x4>> evaluate_frame(Backend backend, const EntityStore& store,
                                             const DepthOrder& order, std::string& backend_used) {
  if (backend == Backend::Gpu) {
    std::fprintf(stderr,
                 "tprop: the GPU path is not built into this command yet; running the CPU "
                 "reference\n");
  }
  backend_used = "cpu (CPU reference)";
  CpuReference reference;
  std::vector<float4x4> local_to_world;
  reference.evaluate(store, order, local_to_world);
  return local_to_world;
}

size_t count_with(const EntityStore& store, const DepthOrder& order, Component c) {
  size_t n = 0;
  for (uint32_t pos = 0; pos < order.size(); ++pos) n += store.has_at(order.slot[pos], c);
  return n;
}

}  // namespace

const char* run_usage() {
  return "usage: tprop run [SCENE] [--backend cpu|gpu|auto] [--seed N] [--dump FILE]\n"
         "\n"
         "Loads SCENE (default: the bundled solar system), computes every entity's\n"
         "LocalToWorld once and prints a summary.\n"
         "\n"
         "  SCENE               a JSON scene (.json; format: README.md), a glTF file (.gltf,\n"
         "                      .glb), a Decentraland CRDT stream (.crdt), or a generator\n"
         "                      spec: gen:chain:N, gen:flat:N, gen:forest:N[:B],\n"
         "                      gen:dcl:SCENES:ENTITIES\n"
         "  --backend BACKEND   cpu: the CPU reference; gpu: the Vulkan path (not built into\n"
         "                      this command yet: runs cpu); auto (default): gpu when available\n"
         "  --seed N            the seed of a generator spec (default 1)\n"
         "  --dump FILE         write every entity's LocalToWorld to FILE as JSON, in id order:\n"
         "                      {\"entities\": [{\"id\": 1, \"name\": \"sun\",\n"
         "                                     \"localToWorld\": [16 numbers, column-major]}]}\n"
         "  -h, --help          print this help\n"
         "\n"
         "exit status: 0 ok, 1 bad input or runtime failure, 2 usage error\n";
}

int run_command(const std::vector<std::string>& args) {
  Result<RunOptions> parsed = parse_run_args(args);
  if (!parsed) {
    std::fprintf(stderr, "tprop run: %s\n\n%s", parsed.error().message.c_str(), run_usage());
    return kExitUsage;
  }
  const RunOptions& options = *parsed;
  if (options.help) {
    std::fputs(run_usage(), stdout);
    return kExitOk;
  }

  const std::string spec = options.scene.empty() ? kDefaultScene : options.scene;
  auto start = std::chrono::steady_clock::now();
  Result<Scene> loaded = load_scene(spec, options.seed);
  if (!loaded) {
    std::fprintf(stderr, "tprop run: %s\n", loaded.error().message.c_str());
    if (options.scene.empty()) {
      std::fprintf(stderr, "tprop run: the bundled default scene is missing; name a SCENE\n");
    }
    return kExitFailure;
  }
  const double load_ms = ms_since(start);
  Scene& scene = *loaded;
  for (const std::string& w : scene.warnings) std::fprintf(stderr, "warning: %s\n", w.c_str());

  // The frame protocol (README.md): take the changes, sort, evaluate, then bake the statics.
  start = std::chrono::steady_clock::now();
  (void)scene.store.take_changes();  // the first frame sorts unconditionally
  const DepthOrder order = sort_by_depth(scene.store);
  const double sort_ms = ms_since(start);

  start = std::chrono::steady_clock::now();
  std::string backend_used;
  Result<std::vector<float4x4>> evaluated =
      evaluate_frame(options.backend, scene.store, order, backend_used);
  if (!evaluated) {
    std::fprintf(stderr, "tprop run: %s\n", evaluated.error().message.c_str());
    return kExitFailure;
  }
  scene.store.mark_statics_baked();
  const double evaluate_ms = ms_since(start);

  std::printf("input            %s\n", scene.source.c_str());
  std::printf("entities         %u\n", order.size());
  std::printf("roots            %u\n", order.roots);
  std::printf("levels           %u\n", order.level_count());
  std::printf("cycles broken    %u (%u entities on cycles, standing at the root)\n",
              order.cycles_broken, order.entities_on_cycles);
  std::printf("unknown parents  %u (standing at the root)\n", order.unknown_parents);
  std::printf("static           %zu\n", count_with(scene.store, order, Component::Static));
  std::printf("backend          %s\n", backend_used.c_str());
  std::printf("time             load %.2f ms, depth sort %.2f ms, evaluate %.2f ms\n", load_ms,
              sort_ms, evaluate_ms);

  if (!options.dump.empty()) {
    start = std::chrono::steady_clock::now();
    Status written = write_dump(options.dump, scene, order, *evaluated);
    if (!written) {
      std::fprintf(stderr, "tprop run: %s\n", written.error().message.c_str());
      return kExitFailure;
    }
    std::printf("dump             %s (%.2f ms)\n", options.dump.c_str(), ms_since(start));
  }
  std::fflush(stdout);
  return kExitOk;
}

}  // namespace tprop::cli
