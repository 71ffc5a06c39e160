// `tprop run WORLD [--frames N]`: replays a Decentraland world (a folder with world.json, or a
// gen:dclworld spec) frame by frame into one DclWorld and one propagation a frame, and reports
// each frame's ingest, update and GPU times.
#pragma once

#include <string>

#include "cli_args.h"

namespace tprop::cli {

// Whether SCENE names a world: a gen:dclworld spec or a folder holding world.json.
bool is_world_input(const std::string& scene);

// Runs the world replay for `tprop run`. Returns the exit code.
int run_world(const RunOptions& options, const std::string& world);

}  // namespace tprop::cli
