// One entry point for every way a scene can be named on a command line or in a test:
// load_scene("assets/solar_system.json"). The spec is dispatched by its form (a generator spec
// such as "gen:..."), then by file extension, then by sniffing the file's first bytes.
#pragma once

#include <string>

#include "result.h"
#include "scene.h"

namespace tprop {

// Loads the scene a spec names. Today: a JSON scene file (".json", or any file whose first
// non-blank byte is '{'). Errors name the spec and what went wrong (for a file the OS reason,
// for malformed content the place). Never throws.
Result<Scene> load_scene(const std::string& spec);

// The whole content of a file, bytes as they are. The error names the path and the OS reason.
Result<std::string> read_file_bytes(const std::string& path);

}  // namespace tprop
