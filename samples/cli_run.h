// `tprop run [SCENE] [--backend cpu|gpu|auto] [--dump FILE]`: load a scene, compute every
// entity's LocalToWorld once, print a summary and optionally dump the matrices.
#pragma once

#include <string>
#include <vector>

namespace tprop::cli {

// Exit codes shared by every subcommand.
inline constexpr int kExitOk = 0;
inline constexpr int kExitFailure = 1;  // bad input, unwritable output, runtime failure
inline constexpr int kExitUsage = 2;    // the command line itself is wrong

// The usage text of `tprop run`.
const char* run_usage();

// Runs `tprop run` with the arguments that follow "run". Returns the exit code; the summary goes
// to stdout, errors and warnings to stderr.
int run_command(const std::vector<std::string>& args);

}  // namespace tprop::cli
