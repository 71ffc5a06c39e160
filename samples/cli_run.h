// `tprop run [SCENE] [--backend cpu|gpu|auto] [--device D] [--validate] [--json] [--dump FILE]`:
// load a scene, compute every entity's LocalToWorld once, report, optionally dump the matrices.
#pragma once

#include <string>
#include <vector>

namespace tprop::cli {

// Exit codes shared by every subcommand.
inline constexpr int kExitOk = 0;
inline constexpr int kExitFailure = 1;  // bad input, unwritable output, runtime failure, or
                                        // --validate above the tolerance
inline constexpr int kExitUsage = 2;    // the command line itself is wrong

// The scene `tprop run` and `tprop render` load when none is named.
std::string default_scene();

// The usage text of `tprop run`.
const char* run_usage();

// Runs `tprop run` with the arguments that follow "run". Returns the exit code; the summary (or
// the JSON object) goes to stdout, notices, warnings, progress and errors to stderr.
int run_command(const std::vector<std::string>& args);

}  // namespace tprop::cli
