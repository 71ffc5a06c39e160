// What every fuzz harness does with a scene a loader accepted: the frame protocol on the CPU
// reference (take_changes, depth sort, evaluate, mark_statics_baked), so that whatever a
// loader lets through is also run through the hierarchy code, under the sanitizers.
#pragma once

#include <cstdio>
#include <cstdlib>
#include <vector>

#include "depth_order.h"
#include "reference.h"
#include "result.h"
#include "scene.h"

namespace tprop::fuzz {

// Bounded so one input stays fast; real scenes of this size are covered by the test suite.
inline constexpr size_t kMaxEvaluatedEntities = 20000;

// A broken invariant is a finding: libFuzzer saves the input that aborted.
inline void check(bool holds, const char* what) {
  if (holds) return;
  std::fprintf(stderr, "fuzz invariant broken: %s\n", what);
  std::abort();
}

inline void evaluate_scene(Result<Scene>& loaded) {
  if (!loaded) {
    check(!loaded.error().message.empty(), "a rejection without a message");
    return;
  }
  EntityStore& store = loaded->store;
  if (store.size() > kMaxEvaluatedEntities) return;
  store.take_changes();
  const DepthOrder order = sort_by_depth(store);
  CpuReference cpu;
  std::vector<float4x4> world;
  cpu.evaluate(store, order, world);
  check(world.size() == order.size(), "the reference skipped entities");
  store.mark_statics_baked();
}

}  // namespace tprop::fuzz
