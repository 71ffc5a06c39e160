// The frames tprop_bench measures and the edit each one makes to the scene before it runs.
// Every edit is a function of the store and a seed (std::mt19937_64 mapped by hand, as the
// generators do), so the same command line edits the same entities on every run.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "entity_store.h"

namespace tprop::bench {

enum class FrameKind {
  Full,          // the first frame: everything packed and uploaded
  Steady,        // nothing changed
  Values,        // translation and rotation of 1% of the entities changed
  ValuesAll,     // translation and rotation of every entity changed (everything moves): the
                 // whole scene sent and evaluated, its buffers and pipelines warm
  SpawnDespawn,  // 1,000 entities destroyed, then 1,000 created under random parents
  Reparent,      // 100 entities take another parent
  Churn,         // both at once, issue 9's mixed frame: 1,000 destroyed, 1,000 created, then
                 // 100 re-parented
  SubtreeMove,   // the subtree closest to 10% of the scene moves under another parent
};

// "full", "steady", "values_1pct", "values_all", "spawn_despawn", "reparent", "churn",
// "subtree_move".
const char* frame_kind_name(FrameKind kind);

// The frame kind named `name` (frame_kind_name's words), if any.
std::optional<FrameKind> frame_kind_named(const std::string& name);

// Every scene runs full, steady and the two values frames; structural scenes then the four
// structural frames. A non-empty `only` keeps the full frame (every other frame edits the scene
// it packed) and, of the rest, the kinds it names, in the order above.
std::vector<FrameKind> frames_for(bool structural, const std::vector<FrameKind>& only = {});

struct EditSummary {
  uint64_t entities = 0;  // entities the edit touched (created + destroyed for spawn_despawn)
  std::string what;       // a few words for the report: "1000 values", "subtree of 10923"
};

// Applies `kind`'s edit. Small scenes get proportionally smaller edits (at most a tenth of the
// live entities are spawned, despawned or re-parented). New entities take ids from `next_id`
// up. Edits keep every Parent pointing to a lower id except the subtree move, so the re-parents
// never close a cycle (the generators' ids all follow that rule).
EditSummary apply_edit(FrameKind kind, EntityStore& store, uint64_t seed, EntityId& next_id);

}  // namespace tprop::bench
