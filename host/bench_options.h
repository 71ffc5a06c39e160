// tprop_bench's command line, parsed into a plain struct. A parse error is a usage error (exit
// code 2); whether a generator spec is well formed is judged when it is generated (exit code 1).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "bench_edits.h"
#include "propagator.h"
#include "result.h"

namespace tprop::bench {

inline constexpr int kExitOk = 0;
inline constexpr int kExitFailure = 1;  // a bad spec, no device, a runtime failure, a mismatch
inline constexpr int kExitUsage = 2;    // the command line itself is wrong

struct BenchOptions {
  std::vector<uint64_t> sizes;        // entities per scene; default 100k and 1M
  std::vector<std::string> scenes;    // scene kind names (bench_scenes.h); default all
  std::vector<std::string> specs;     // generator specs run instead of kinds x sizes
  uint64_t seed = 1;
  std::string device;                 // --device NAME|INDEX; empty: TPROP_DEVICE, else the best
  PropagatorOptions propagator;       // --narrow-walk, --addressing, --max-buffer-bytes,
                                      // --general-shaders, --no-subgroup-chains,
                                      // --output-layout
  // --warm-gpu MS: the GPU kept busy with fills for MS milliseconds before each frame (not in
  // its times), so that the frame runs at the clocks of a busy GPU (an idle one lowers them: on
  // an H200 frames that followed the bench's CPU work ran up to 4 times slower at 1M entities).
  uint32_t warm_gpu_ms = 0;
  // --ceiling-bytes B: the size of the copy ceiling's buffers; 0, the default: 256 MiB, 32 MiB
  // on a CPU device (bench_ceiling.h).
  uint64_t ceiling_bytes = 0;
  // --host-floor-bytes B: the memory the host floor's lines are spread over; 0, the default:
  // 256 MiB (bench_host_memory.h).
  uint64_t host_floor_bytes = 0;
  // --repeat N: every frame kind but the full frame measured N times in a row, each a fresh
  // edit, with the median, least and most of each figure per kind (frame times on a shared
  // machine vary from run to run by more than the differences they are read for).
  uint32_t repeat = 1;
  // --frames LIST: only these frame kinds after the full frame (empty: all of the scene's), so a
  // profile or a timing loop sees one kind of frame.
  std::vector<FrameKind> frames;
  bool validate = false;
  bool memory = false;                // --memory: what an entity costs, instead of frames
  bool json = false;
  bool help = false;
};

extern const char* const kUsage;

// The arguments after the program name. The error message is for the usage text.
Result<BenchOptions> parse_bench_args(const std::vector<std::string>& args);

// "100k", "1M", "2500": a count with an optional k (thousand) or M (million) suffix, at least 1.
Result<uint64_t> parse_count(const std::string& text);

}  // namespace tprop::bench
