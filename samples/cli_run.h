// `tprop run [SCENE] [--backend cpu|gpu|auto] [--device D] [--validate] [--json] [--dump FILE]`:
// load a scene, compute every entity's LocalToWorld once, report, optionally dump the matrices.
#pragma once

#include <string>
#include <vector>

#include "cli_args.h"  // the exit codes

namespace tprop::cli {

// The scene `tprop run` and `tprop render` load when none is named.
std::string default_scene();

// The usage text of `tprop run`.
const char* run_usage();

// Runs `tprop run` with the arguments that follow "run". Returns the exit code; the summary (or
// the JSON object) goes to stdout, notices, warnings, progress and errors to stderr.
int run_command(const std::vector<std::string>& args);

}  // namespace tprop::cli
