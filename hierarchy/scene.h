// A loaded scene: the entity store every input (JSON scene, glTF, Decentraland CRDT stream,
// generator) fills, plus what the CLI reports and dumps about it.
#pragma once

#include <string>
#include <unordered_map>
#include <vector>

#include "entity_store.h"

namespace tprop {

struct Scene {
  EntityStore store;
  // Optional display names, keyed by entity id; dumps include a name only where one is here.
  std::unordered_map<EntityId, std::string> names;
  // Where the scene came from, for reports ("assets/solar_system.json", "gen:chain:1000").
  std::string source;
  // Repairs and oddities a loader accepted but the user should hear about (one line each).
  std::vector<std::string> warnings;
  // What a loader sums up when nothing was wrong (one line each; not warnings).
  std::vector<std::string> notes;
};

}  // namespace tprop
