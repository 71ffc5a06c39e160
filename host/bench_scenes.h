// The scenes tprop_bench measures: the scene kinds (each a generator spec for a size) and the
// plan of scenes a command line asks for.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace tprop::bench {

struct BenchOptions;

struct SceneKind {
  const char* name;                  // "forest4": what --scenes and the report call it
  std::string (*spec)(uint64_t n);   // the generator spec of n entities
  bool structural;                   // the structural frames (bench_edits.h) run on it
};

// flat, forest4, forest32, chain, mixed, in report order.
const std::vector<SceneKind>& scene_kinds();
// nullptr when no kind has that name.
const SceneKind* find_scene_kind(const std::string& name);
// "flat, forest4, forest32, chain, mixed", for messages.
std::string scene_kind_names();

struct PlannedScene {
  std::string kind;   // a scene kind's name, or "spec" for a SPEC from the command line
  std::string spec;   // the generator spec
  uint64_t size = 0;  // the requested entity count (0 for a SPEC)
  // Structural frames: the kind's choice; for a SPEC, decided by its levels once generated.
  bool structural = false;
};

// The SPECs in order, or every size of every kind (sizes outer, kinds inner, so the small
// sizes report first).
std::vector<PlannedScene> plan_scenes(const BenchOptions& options);

}  // namespace tprop::bench
