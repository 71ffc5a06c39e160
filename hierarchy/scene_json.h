// The JSON scene format: {"entities": [{"id": 1, "name": "sun", "Translation": [0, 0, 0]}, ...]}.
// The full format is documented in README.md ("The JSON scene format"). Every component is
// spelled exactly as component_name() spells it; "parent", "static" and "writeGroupOverride"
// are the hierarchy and tag keys.
//
// Parsing is strict: anything the loader would otherwise have to guess about (an unknown key,
// a duplicate key or id, an array of the wrong length, a number a float cannot hold) is an
// Error whose message names the document, the entity (id and index) and the key, or for
// malformed JSON the line and column. A Parent naming no entity is not an error: the entity
// stands at the root, and the depth sort counts it as an unknown parent.
#pragma once

#include <string>
#include <string_view>

#include "result.h"
#include "scene.h"

namespace tprop {

// Parses a whole JSON scene document. `source` names the document in messages (usually its
// path) and becomes Scene::source. Never throws.
Result<Scene> parse_scene_json(std::string_view text, std::string source);

}  // namespace tprop
