#include "bench_scenes.h"

#include <cassert>

#include "bench_options.h"

namespace tprop::bench {

namespace {

std::string flat_spec(uint64_t n) { return "gen:flat:" + std::to_string(n); }
std::string forest4_spec(uint64_t n) { return "gen:forest:" + std::to_string(n) + ":4"; }
std::string forest32_spec(uint64_t n) { return "gen:forest:" + std::to_string(n) + ":32"; }
std::string chain_spec(uint64_t n) { return "gen:chain:" + std::to_string(n); }
std::string mixed_spec(uint64_t n) { return "gen:mixed:" + std::to_string(n); }

}  // namespace

const std::vector<SceneKind>& scene_kinds() {
  // Structural frames on the hierarchies where they mean something: a flat scene has no
  // subtree to move, and a chain's every edit re-sorts one long line (the chain kind already
  // measures that depth).
  static const std::vector<SceneKind> kinds = {
      {"flat", flat_spec, false},
      {"forest4", forest4_spec, true},
      {"forest32", forest32_spec, true},
      {"chain", chain_spec, false},
      {"mixed", mixed_spec, true},
  };
  return kinds;
}

const SceneKind* find_scene_kind(const std::string& name) {
  for (const SceneKind& kind : scene_kinds())
    if (name == kind.name) return &kind;
  return nullptr;
}

std::string scene_kind_names() {
  std::string out;
  for (const SceneKind& kind : scene_kinds()) out += (out.empty() ? "" : ", ") + std::string(kind.name);
  return out;
}

std::vector<PlannedScene> plan_scenes(const BenchOptions& options) {
  std::vector<PlannedScene> plan;
  for (const std::string& spec : options.specs) plan.push_back({"spec", spec, 0, false});
  if (!plan.empty()) return plan;
  for (uint64_t size : options.sizes) {
    for (const std::string& name : options.scenes) {
      const SceneKind* kind = find_scene_kind(name);
      assert(kind && "parse_bench_args accepts only known kinds");
      plan.push_back({kind->name, kind->spec(size), size, kind->structural});
    }
  }
  return plan;
}

}  // namespace tprop::bench
