// One entry point for every way a scene can be named on a command line or in a test:
// load_scene("assets/solar_system.json"). The spec is dispatched by its form (a generator spec
// such as "gen:..."), then by file extension, then by sniffing the file's first bytes.
#pragma once

#include <cstdint>
#include <string>

#include "result.h"
#include "scene.h"

namespace tprop {

// Loads the scene a spec names. Today: a generator spec ("gen:chain:1000", see
// scene_generators.h; `seed` picks the random scene, and only generators use it), a glTF 2.0
// file (".gltf"/".glb", or any file that starts with the .glb magic; see gltf_scene.h), a JSON
// scene file (".json", or any file whose first non-blank byte is '{'), a Decentraland CRDT
// stream (".crdt", or a file whose first bytes are a plausible message header; see dcl_scene.h),
// or "-": standard input, named "<stdin>" in messages and Scene::source, told by its first bytes
// (a JSON scene, a .glb, a CRDT stream; glTF text is known only by a .gltf name).
// Errors name the spec and what went wrong (for a file the OS reason, for malformed content the
// place). Never throws.
Result<Scene> load_scene(const std::string& spec, uint64_t seed = 1);

// The spec that names standard input.
inline constexpr const char* kStdinSpec = "-";

// The whole content of a file, bytes as they are. The error names the path and the OS reason.
Result<std::string> read_file_bytes(const std::string& path);

}  // namespace tprop
