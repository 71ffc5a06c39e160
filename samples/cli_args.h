// The command lines of `tprop run` and `tprop render`, parsed into plain structs. A parse error
// is a usage error (exit code 2); whether the values make sense (a size the renderer can draw, a
// device that exists) is judged later, with exit code 1.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "propagator.h"
#include "result.h"

namespace tprop::cli {

// Exit codes shared by every subcommand.
inline constexpr int kExitOk = 0;
inline constexpr int kExitFailure = 1;  // bad input, unwritable output, runtime failure, or
                                        // --validate above the tolerance
inline constexpr int kExitUsage = 2;    // the command line itself is wrong

enum class Backend { Cpu, Gpu, Auto };

struct RunOptions {
  std::string scene;   // empty: the default scene
  Backend backend = Backend::Auto;
  std::string device;  // --device NAME|INDEX; empty: TPROP_DEVICE, else the best device
  std::string dump;    // empty: no dump
  uint64_t seed = 1;   // for generator specs
  uint32_t frames = 0;     // --frames N: replay a world for N frames; 0: not given
  std::string save_world;  // --save-world DIR: write the world's streams and manifest there
  uint64_t max_buffer_bytes = 0;  // --max-buffer-bytes: PropagatorOptions' cap; 0: the device's
  OutputLayout output_layout = OutputLayout::Float4x4;  // --output-layout 4x4|3x4 (GPU path)
  SlotOrder slot_order = SlotOrder::Auto;  // --slot-order auto|restore|keep (GPU path)
  bool validate = false;
  bool json = false;
  bool help = false;
};

struct RenderCommandOptions {
  std::string scene;   // empty: the default scene
  std::string output;  // -o FILE (required)
  uint32_t width = 960;
  uint32_t height = 540;
  uint64_t seed = 1;
  std::optional<float> cube_size;  // --cube-size: each cube's half edge; unset: the sample's
  uint64_t max_buffer_bytes = 0;   // --max-buffer-bytes, as for run
  OutputLayout output_layout = OutputLayout::Float4x4;  // --output-layout, as for run
  bool help = false;
};

// The arguments after "run" / "render". The error message is for the usage text.
Result<RunOptions> parse_run_args(const std::vector<std::string>& args);
Result<RenderCommandOptions> parse_render_args(const std::vector<std::string>& args);

// What every subcommand does with its parsed command line before it runs: a usage error prints
// "tprop COMMAND: MESSAGE" and the usage text on stderr (kExitUsage), --help prints the usage
// text on stdout (kExitOk). nullopt: go on and run.
std::optional<int> usage_or_help(const char* command, const Error* usage_error, bool help,
                                 const char* usage);
template <class Options>
std::optional<int> usage_or_help(const char* command, const Result<Options>& parsed,
                                 const char* usage) {
  return usage_or_help(command, parsed ? nullptr : &parsed.error(), parsed && parsed->help, usage);
}


// "WxH" with two decimal integers (each below 2^32): the syntax only, 0 is accepted here.
Result<std::pair<uint32_t, uint32_t>> parse_size(const std::string& text);

}  // namespace tprop::cli
